"""What the kit's Python programs share: JSON results written whole, and waiting for the orchestrator."""
import json
import os
import time


def write_json(path, obj):
    """Written to a temporary name and renamed, ending in a newline: the orchestrator reads it whole or not at all."""
    partial = f"{path}.partial"
    with open(partial, "w") as f:
        f.write(json.dumps(obj) + "\n")
    os.replace(partial, path)


def wait_for_go(path, bound_s=120.0):
    """Waits for the orchestrator's go file, then until the start time it holds (seconds since the epoch)."""
    until = time.time() + bound_s
    while not os.path.exists(path):
        if time.time() > until:
            raise SystemExit(f"no go file {path} within {bound_s} s")
        time.sleep(0.005)
    with open(path) as f:
        start = float(f.read().strip() or "0")
    while time.time() < start:
        time.sleep(0.0005)
    return start
