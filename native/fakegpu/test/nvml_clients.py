#!/usr/bin/env python3
"""The NVML calls gpustat and nvitop make at start, through ctypes as pynvml makes
them, against whatever libnvidia-ml.so.1 the loader finds (LD_LIBRARY_PATH=native/fakegpu/build
and GPUSHARE_FAKEGPU_STATE for the simulated one), or the path given as the argument.

Prints one line per call: its name, then the value or the NVML error string.
Exit status: the number of calls that are missing or answer an error a real
client does not expect there (NOT_SUPPORTED is the expected "N/A")."""
import ctypes as C
import sys

NVML_SUCCESS, NOT_SUPPORTED, NOT_FOUND, INSUFFICIENT_SIZE = 0, 3, 6, 7

lib = C.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libnvidia-ml.so.1")
lib.nvmlErrorString.restype = C.c_char_p
problems = 0


class Memory(C.Structure):
    _fields_ = [("total", C.c_ulonglong), ("free", C.c_ulonglong), ("used", C.c_ulonglong)]


class MemoryV2(C.Structure):
    _fields_ = [("version", C.c_uint), ("total", C.c_ulonglong), ("reserved", C.c_ulonglong),
                ("free", C.c_ulonglong), ("used", C.c_ulonglong)]


class Utilization(C.Structure):
    _fields_ = [("gpu", C.c_uint), ("memory", C.c_uint)]


class PciInfo(C.Structure):
    _fields_ = [("busIdLegacy", C.c_char * 16), ("domain", C.c_uint), ("bus", C.c_uint), ("device", C.c_uint),
                ("pciDeviceId", C.c_uint), ("pciSubSystemId", C.c_uint), ("busId", C.c_char * 32)]


class ProcessInfo(C.Structure):  # nvmlProcessInfo_v2_t: what the _v2/_v3 calls fill
    _fields_ = [("pid", C.c_uint), ("usedGpuMemory", C.c_ulonglong),
                ("gpuInstanceId", C.c_uint), ("computeInstanceId", C.c_uint)]


class ProcessUtilizationSample(C.Structure):
    _fields_ = [("pid", C.c_uint), ("timeStamp", C.c_ulonglong), ("smUtil", C.c_uint),
                ("memUtil", C.c_uint), ("encUtil", C.c_uint), ("decUtil", C.c_uint)]


def call(name, *args, ok=(NVML_SUCCESS,), show=None):
    """Calls `name`; prints show() on success, else the error. Returns the code."""
    global problems
    fn = getattr(lib, name, None)
    if fn is None:
        print(f"{name}: MISSING SYMBOL")
        problems += 1
        return None
    rc = fn(*args)
    if rc == NVML_SUCCESS:
        print(f"{name}: {show() if show else 'ok'}")
    else:
        print(f"{name}: {lib.nvmlErrorString(rc).decode()} ({rc})")
        if rc not in ok and rc != NOT_SUPPORTED:
            problems += 1
    return rc


def text(buf):
    return lambda: buf.value.decode()


def uint(v):
    return lambda: v.value


call("nvmlInit_v2")
buf = C.create_string_buffer(96)
call("nvmlSystemGetDriverVersion", buf, 96, show=text(buf))
cuda = C.c_int()
call("nvmlSystemGetCudaDriverVersion", C.byref(cuda), show=uint(cuda))
call("nvmlSystemGetCudaDriverVersion_v2", C.byref(cuda), show=uint(cuda))
count = C.c_uint()
call("nvmlDeviceGetCount_v2", C.byref(count), show=uint(count))

for i in range(count.value):
    print(f"-- device {i}")
    h = C.c_void_p()
    call("nvmlDeviceGetHandleByIndex_v2", i, C.byref(h), show=lambda: "handle")
    dev = h
    call("nvmlDeviceGetName", dev, buf, 96, show=text(buf))
    call("nvmlDeviceGetUUID", dev, buf, 96, show=text(buf))
    v, w = C.c_uint(), C.c_uint()
    call("nvmlDeviceGetIndex", dev, C.byref(v), show=uint(v))
    pci = PciInfo()
    call("nvmlDeviceGetPciInfo_v3", dev, C.byref(pci), show=lambda: pci.busId.decode())
    m = Memory()
    call("nvmlDeviceGetMemoryInfo", dev, C.byref(m), show=lambda: f"total={m.total} used={m.used} free={m.free}")
    m2 = MemoryV2(version=C.sizeof(MemoryV2) | (2 << 24))
    call("nvmlDeviceGetMemoryInfo_v2", dev, C.byref(m2),
         show=lambda: f"total={m2.total} reserved={m2.reserved} used={m2.used} free={m2.free}")
    call("nvmlDeviceGetBAR1MemoryInfo", dev, C.byref(Memory()))
    u = Utilization()
    call("nvmlDeviceGetUtilizationRates", dev, C.byref(u), show=lambda: f"gpu={u.gpu}% memory={u.memory}%")
    call("nvmlDeviceGetTemperature", dev, 0, C.byref(v), show=uint(v))
    call("nvmlDeviceGetTemperatureThreshold", dev, 1, C.byref(v), show=uint(v))
    call("nvmlDeviceGetFanSpeed", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetPowerUsage", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetEnforcedPowerLimit", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetPowerManagementLimit", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetPerformanceState", dev, C.byref(v), show=lambda: f"P{v.value}")
    call("nvmlDeviceGetPersistenceMode", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetDisplayActive", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetComputeMode", dev, C.byref(v), show=uint(v))
    ecc = C.c_ulonglong()
    call("nvmlDeviceGetTotalEccErrors", dev, 1, 0, C.byref(ecc), show=uint(ecc))
    call("nvmlDeviceGetClockInfo", dev, 1, C.byref(v), show=uint(v))
    call("nvmlDeviceGetMaxClockInfo", dev, 1, C.byref(v), show=uint(v))
    call("nvmlDeviceGetEncoderUtilization", dev, C.byref(v), C.byref(w), show=uint(v))
    call("nvmlDeviceGetDecoderUtilization", dev, C.byref(v), C.byref(w), show=uint(v))
    call("nvmlDeviceGetCurrPcieLinkGeneration", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetCurrPcieLinkWidth", dev, C.byref(v), show=uint(v))
    call("nvmlDeviceGetPcieThroughput", dev, 1, C.byref(v), show=uint(v))
    call("nvmlDeviceGetMigMode", dev, C.byref(v), C.byref(w), show=uint(v))
    procs = (ProcessInfo * 64)()
    n = C.c_uint(64)
    if call("nvmlDeviceGetComputeRunningProcesses_v3", dev, C.byref(n), procs,
            show=lambda: [(p.pid, p.usedGpuMemory) for p in procs[: n.value]]) == NVML_SUCCESS:
        for p in procs[: n.value]:
            call("nvmlSystemGetProcessName", p.pid, buf, 96, show=text(buf))
    n = C.c_uint(64)
    call("nvmlDeviceGetGraphicsRunningProcesses_v3", dev, C.byref(n), procs, show=lambda: n.value)
    samples = (ProcessUtilizationSample * 64)()
    n = C.c_uint(64)
    call("nvmlDeviceGetProcessUtilization", dev, samples, C.byref(n), C.c_ulonglong(0), ok=(NVML_SUCCESS, NOT_FOUND),
         show=lambda: [(s.pid, s.smUtil) for s in samples[: n.value]])

call("nvmlShutdown")
print(f"{problems} problem(s)")
sys.exit(problems)
