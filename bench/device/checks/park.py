"""A process holding GIB GiB of known contents on the GPU, for the park check: it says it is ready, waits
until the orchestrator has checkpointed and restored it, then compares its memory with the contents
made again. usage: park.py GIB READY GO OUT"""
import os
import sys

import torch

from kitio import wait_for_go, write_json

gib, ready, go, out = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
n = int(gib * 2**30) // 4


def contents():
    return (torch.arange(n, device="cuda", dtype=torch.int64) * 2654435761 % 1000003).to(torch.int32)


held = contents()
torch.cuda.synchronize()
torch.cuda.empty_cache()  # give back what making the contents took: the process holds GIB GiB and its context
write_json(ready, {"pid": os.getpid(), "heldBytes": held.numel() * 4})
wait_for_go(go, bound_s=240)
again = contents()
write_json(out, {"contentsEqual": bool(torch.equal(held, again)), "heldBytes": held.numel() * 4})
