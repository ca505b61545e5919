"""The memory quota under PyTorch. usage: quota.py single OUT | quota.py multi PROCS OUT
single: allocates 128 MiB blocks until the allocation fails; OUT says whether torch.cuda.OutOfMemoryError was
raised and how much was held then. multi: PROCS processes of one job (torch.multiprocessing) allocate together;
each holds what it got until all have been refused, so the sum of what they hold at the end is the job's whole."""
import os
import sys
import time

import torch
import torch.multiprocessing as mp

from kitio import write_json

BLOCK = 128 * 2**20


def fill(limit_blocks=10_000):
    blocks, error = [], None
    for _ in range(limit_blocks):
        try:
            blocks.append(torch.empty(BLOCK, dtype=torch.uint8, device="cuda"))
        except torch.cuda.OutOfMemoryError as e:
            error = "OutOfMemoryError: " + str(e).split("\n")[0][:300]
            break
        except Exception as e:  # another error is a finding too
            error = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            break
    return blocks, error


def single(out):
    free, total = torch.cuda.mem_get_info()
    blocks, error = fill()
    write_json(out, {
        "oomRaised": error is not None and error.startswith("OutOfMemoryError"),
        "error": error,
        "heldBytes": len(blocks) * BLOCK,
        "reservedBytes": torch.cuda.memory_reserved(),
        "memGetInfo": {"free": free, "total": total},
    })


def worker(rank, held, refused, barrier):
    blocks, error = [], None
    while error is None:
        got, error = fill(1)
        blocks += got
        held[rank] = len(blocks) * BLOCK
        time.sleep(0.01)  # let the others allocate between our blocks
    refused[rank] = 1 if error.startswith("OutOfMemoryError") else 2
    barrier.wait()  # everyone holds what they got until all are refused
    time.sleep(1.0)  # the orchestrator samples nvidia-smi meanwhile
    barrier.wait()


def multi(procs, out):
    ctx = mp.get_context("spawn")
    held = ctx.Array("d", procs)
    refused = ctx.Array("i", procs)
    barrier = ctx.Barrier(procs + 1)
    children = [ctx.Process(target=worker, args=(r, held, refused, barrier)) for r in range(procs)]
    for c in children:
        c.start()
    barrier.wait(timeout=90)
    at_refusal = list(held)
    write_json(out + ".holding", {"pids": [c.pid for c in children]})
    barrier.wait(timeout=30)
    for c in children:
        c.join(timeout=30)
    write_json(out, {
        "processes": procs,
        "heldBytesEach": at_refusal,
        "heldBytesTogether": sum(at_refusal),
        "allRefusedWithOom": all(r == 1 for r in refused),
        "pids": [c.pid for c in children],
    })


if __name__ == "__main__":
    if sys.argv[1] == "single":
        single(sys.argv[2])
    else:
        multi(int(sys.argv[2]), sys.argv[3])
