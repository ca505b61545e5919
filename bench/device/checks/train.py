"""A best-effort training loop: forward and backward through 2 bf16 layers of 8192 on a batch of 4096, a
loss read back every 4 steps as a logging loop does. usage: train.py SECONDS READY GO OUT
OUT: steps completed within SECONDS of the go time."""
import os
import sys
import time

import torch

from kitio import wait_for_go, write_json

seconds, ready, go, out = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
w1 = (torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90).requires_grad_()
w2 = (torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90).requires_grad_()
x = torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16)


def step():
    loss = torch.relu(x @ w1) @ w2
    loss = loss.float().square().mean()
    loss.backward()
    return loss


for _ in range(8):
    step()
torch.cuda.synchronize()
write_json(ready, {"pid": os.getpid()})
start = wait_for_go(go)
end = start + seconds
steps = 0
while True:
    for _ in range(4):
        loss = step()
    loss.item()  # the logging loop's sync
    if time.time() > end:
        break
    steps += 4
write_json(out, {"steps": steps, "stepsPerS": steps / seconds})
