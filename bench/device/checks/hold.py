"""Holds GIB GiB of GPU memory and computes for SECONDS: the process the seeing check looks for.
usage: hold.py GIB SECONDS READY_FILE"""
import os
import sys
import time

import torch

from kitio import write_json

gib, seconds, ready = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
held = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
write_json(ready, {"pid": os.getpid(), "heldBytes": held.numel(), "reservedBytes": torch.cuda.memory_reserved()})
end = time.time() + seconds
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
