"""gpushare's Jupyter kernel launcher (the kernelspec `gpushare jupyter install-kernel` writes runs it).

It asks the engine to keep the kernelspec's options for this process (enrol.register: priority, memory
quota, whether the kernel may be parked while idle), then becomes the kernel: exec keeps the pid and the
start time, so the registration is the kernel's, and the kernel enrols with those options at its first
CUDA call (the preload library, added to LD_PRELOAD here). The engine reads who asks from the socket's
kernel credentials: nothing said here can name another process or user. Settings not kept (no engine
answering, or the lab policy refusing one): this says why once in the kernel's log, and the kernel runs
on (enrolled with the lab's defaults where an engine answers at its first CUDA call, else unmanaged).

    gpushare-kernel.py --library LIB [--priority P] [--mem BYTES] [--auto-park] -- KERNEL ARGV...
"""
import json
import os
import socket
import sys

WAIT_S = 2.0


def engine_sockets():
    """Where the CLI looks, in its order: $GPUSHARE_SOCKET alone; else the box daemon, then your own engine."""
    only = os.environ.get("GPUSHARE_SOCKET")
    if only:
        return [only]
    daemon = os.environ.get("GPUSHARE_DAEMON_SOCKET") or "/run/gpushare/engine.sock"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    personal = os.path.join(runtime, "gpushare") if runtime else "/tmp/gpushare-%d" % os.getuid()
    return [daemon, os.path.join(personal, "engine.sock")]


def register(params):
    """None when an engine kept the options, else why not (one line)."""
    tried = []
    for path in engine_sockets():
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(WAIT_S)
                s.connect(path)
                s.sendall((json.dumps({"kind": "request", "id": 1, "method": "enrol.register", "params": params}) + "\n").encode())
                buf = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        raise OSError("the engine closed the connection")
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        message = json.loads(line)
                        if message.get("kind") == "response" and message.get("id") == 1:
                            if message.get("ok"):
                                return None
                            return "the engine at %s refused: %s" % (path, message.get("error", {}).get("message", "no reason given"))
        except (OSError, ValueError) as error:
            tried.append("%s: %s" % (path, error))
    return "no engine answered (%s)" % "; ".join(tried)


def main(argv):
    if "--" not in argv:
        sys.exit("gpushare-kernel.py: no kernel command after --")
    own, kernel = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    library, params, i = None, {"keepResident": True}, 0
    while i < len(own):
        flag = own[i]
        if flag == "--library":
            library, i = own[i + 1], i + 2
        elif flag == "--priority":
            params["priority"], i = own[i + 1], i + 2
        elif flag == "--mem":
            params["memoryQuotaBytes"], i = int(own[i + 1]), i + 2
        elif flag == "--auto-park":
            params.pop("keepResident")
            i += 1
        else:
            sys.exit("gpushare-kernel.py: unknown option %s" % flag)
    if not kernel or not library:
        sys.exit("gpushare-kernel.py: needs --library LIB and a kernel command after --")
    why = register(params)
    if why:
        sys.stderr.write("gpushare: this kernel's settings were not applied (%s); where an engine answers at its first CUDA call, it enrols with the lab's defaults\n" % why)
    env = dict(os.environ)
    loaded = [p for p in env.get("LD_PRELOAD", "").replace(":", " ").split() if p]
    if library not in loaded:
        env["LD_PRELOAD"] = " ".join([library] + loaded)
    os.execve(kernel[0], kernel, env)


if __name__ == "__main__":
    main(sys.argv[1:])
