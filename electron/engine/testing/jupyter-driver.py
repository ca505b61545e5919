"""Drives real Jupyter kernels for the tests, with jupyter_client's KernelManager (Debian's
python3-jupyter-client): one JSON command a line on stdin, one JSON answer a line on stdout.
  {"op": "start", "name": N, "kernel": KERNELSPEC}  -> {"op": "started", "name": N, "pid": PID}
  {"op": "exec", "name": N, "code": CODE}           -> {"op": "done", "name": N, "status": "ok"|"error", "stdout": TEXT, "error": TEXT}
  {"op": "stop", "name": N}                         -> {"op": "stopped", "name": N}
Kernelspecs are found where JUPYTER_PATH / JUPYTER_DATA_DIR say; connection files go to JUPYTER_RUNTIME_DIR."""
import json
import sys

from jupyter_client import KernelManager

kernels = {}


def answer(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def run_cell(client, code, timeout=120):
    msg_id = client.execute(code)
    out, error, status = [], "", "ok"
    while True:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            status, error = "error", "%s: %s" % (content["ename"], content["evalue"])
        elif kind == "status" and content["execution_state"] == "idle":
            break
    reply = client.get_shell_msg(timeout=timeout)
    if reply["content"]["status"] != "ok":
        status = "error"
    return status, "".join(out), error


for line in sys.stdin:
    command = json.loads(line)
    op, name = command["op"], command.get("name")
    try:
        if op == "start":
            km = KernelManager(kernel_name=command["kernel"])
            km.start_kernel()
            client = km.client()
            client.start_channels()
            client.wait_for_ready(timeout=60)
            kernels[name] = (km, client)
            answer({"op": "started", "name": name, "pid": km.provisioner.pid if km.provisioner else km.kernel.pid})
        elif op == "exec":
            status, out, error = run_cell(kernels[name][1], command["code"])
            answer({"op": "done", "name": name, "status": status, "stdout": out, "error": error})
        elif op == "stop":
            km, client = kernels.pop(name)
            client.stop_channels()
            km.shutdown_kernel(now=True)
            answer({"op": "stopped", "name": name})
        elif op == "quit":
            break
    except Exception as error:  # the test reads it as an answer, not a hang
        answer({"op": "failed", "name": name, "error": "%s: %s" % (type(error).__name__, error)})
for km, client in kernels.values():
    client.stop_channels()
    km.shutdown_kernel(now=True)
