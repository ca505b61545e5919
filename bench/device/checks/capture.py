"""CUDA graphs under the preload library: torch.compile(mode="reduce-overhead") (graphs captured by
Inductor's cudagraph trees) and a graph captured by hand, each replayed and compared with eager.
usage: capture.py SECONDS OUT"""
import sys
import time

import torch

from kitio import write_json

seconds, out = float(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 2048)).cuda().eval()
x = torch.randn(256, 2048, device="cuda")
result = {}
with torch.no_grad():
    eager = model(x)
    t0 = time.time()
    compiled = torch.compile(model, mode="reduce-overhead")
    for _ in range(3):  # warm-up, then recording, then replay
        y = compiled(x)
    torch.cuda.synchronize()
    result["compileSeconds"] = time.time() - t0
    replays, end = 0, time.time() + seconds
    while time.time() < end:
        y = compiled(x)
        replays += 1
    torch.cuda.synchronize()
    result["compiledCalls"] = replays
    result["compiledMatchesEager"] = bool(torch.allclose(y, eager, rtol=1e-3, atol=1e-3))
    try:
        from torch._dynamo.utils import counters
        result["inductorCounters"] = {k: v for k, v in counters["inductor"].items() if "cudagraph" in k}
    except Exception as e:  # counters moved: say so, the comparison still stands
        result["inductorCounters"] = f"unavailable: {e}"

    static_in = x.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(static_in)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_in)
    ok = True
    for i in range(50):
        static_in.copy_(x * (1 + i / 100))
        graph.replay()
        if i % 10 == 0:
            ok = ok and bool(torch.allclose(static_out, model(static_in), rtol=1e-3, atol=1e-3))
    torch.cuda.synchronize()
    result["manualGraphReplays"] = 50
    result["manualGraphMatchesEager"] = ok
write_json(out, result)
