"""A high-priority inference service: fixed-size requests (a batch of 512 through 8 bf16 layers of 8192)
arriving as a Poisson process. usage: infer.py RATE|calibrate LOAD SECONDS READY GO OUT
calibrate: measures the service time alone first and takes RATE = LOAD / service time.
OUT: latency percentiles (arrival to result), requests served, the rate."""
import os
import random
import sys
import time

import torch

from kitio import wait_for_go, write_json

rate_arg, load, seconds, ready, go, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
torch.backends.cuda.matmul.allow_tf32 = True
layers = [torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90 for _ in range(8)]
x = torch.randn(512, 8192, device="cuda", dtype=torch.bfloat16)


def request():
    y = x
    for w in layers:
        y = torch.relu(y @ w)
    torch.cuda.synchronize()


for _ in range(30):
    request()
t0 = time.perf_counter()
for _ in range(100):
    request()
service_s = (time.perf_counter() - t0) / 100
rate = load / service_s if rate_arg == "calibrate" else float(rate_arg)
write_json(ready, {"pid": os.getpid(), "serviceMs": service_s * 1e3, "rate": rate})
start = wait_for_go(go)

rng = random.Random(20261128)
arrivals, t = [], 0.0
while t < seconds:
    t += rng.expovariate(rate)
    arrivals.append(start + t)
latencies = []
for arrival in arrivals[:-1]:
    now = time.time()
    if now < arrival:
        time.sleep(max(0.0, arrival - now - 0.0002))
        while time.time() < arrival:
            pass
    request()
    latencies.append(time.time() - arrival)
latencies.sort()
pick = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1e3
write_json(out, {
    "requests": len(latencies),
    "rate": rate,
    "serviceMs": service_s * 1e3,
    "p50Ms": pick(0.50),
    "p99Ms": pick(0.99),
    "maxMs": latencies[-1] * 1e3,
    "lateByS": time.time() - (start + seconds),
})
