"""The hand-written PyTorch ring streampipe is compared with (issue 17), for the GPU machine.

What a careful PyTorch user writes: the user's tensors in pinned memory, K device buffer
pairs, three non-blocking streams (h2d, compute, d2h), events for every RAW and WAR, and the
plain sinmix kernel (bench/peers/plain_sinmix.cu's source) launched through CuPy on PyTorch's
tensors (their device pointers) on the compute stream.

Usage: python3 torch_ring.py WORKLOAD [--repeat 5] [--depth 4] [--chunk-records 2097152]
Prints one JSON line. Every timed run's output is poisoned with NaN first and compared bit for
bit with the same kernel run over the whole input at once; 2^16 sampled elements are checked
against a float32 reference within the bench's tolerance. Exit 1 on any mismatch.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import cupy
import numpy as np
import torch

from ring import TorchRing  # beside this file: the one ring, shared with python_bench

WORKLOADS = {"seed": (1 << 27, 100), "transfer": (1 << 28, 0), "compute": (1 << 27, 1000)}


def plain_kernel():
    source = (Path(__file__).with_name("plain_sinmix.cu")).read_text()
    body = source[source.index("static __global__"):source.index('extern "C"')]
    body = body.replace("static __global__", 'extern "C" __global__')
    return cupy.RawKernel(body.replace("cuda_runtime.h", ""), "plain_sinmix")


def plain_stage(kernel, iters):
    """The plain kernel as the ring's stage, launched on the current (compute) stream."""
    def launch(src, dst):
        n = src.numel()
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            kernel(((n + 255) // 256,), (256,),
                   (cupy.uint64(src.data_ptr()), cupy.uint64(dst.data_ptr()),
                    cupy.uint64(n), cupy.uint32(iters)))
    return launch


def reference(x, iters):
    v = x * np.float32(0.5) + x * x * np.float32(0.1)
    for _ in range(iters):
        v = v + np.sin(v * np.float32(0.01), dtype=np.float32)
    return v


def count_bad(host_in, host_out, want, iters):
    bad = int((host_out.view(torch.int32) != want.view(torch.int32)).sum())
    idx = (np.arange(1 << 16, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(host_in.numel())
    x = host_in.numpy()[idx.astype(np.int64)]
    got = host_out.numpy()[idx.astype(np.int64)].astype(np.float64)
    ref = reference(x, iters).astype(np.float64)
    tol = 1e-5 * (1 + iters) * np.maximum(1.0, np.abs(ref))
    return bad + int((~(np.abs(got - ref) <= tol)).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--chunk-records", type=int, default=1 << 21)
    a = ap.parse_args()
    n, iters = WORKLOADS[a.workload]
    kernel = plain_kernel()
    gen = torch.Generator().manual_seed(time.time_ns())
    host_in = (torch.rand(n, generator=gen) * 8 - 4).pin_memory()
    host_out = torch.empty(n, dtype=torch.float32).pin_memory()
    stage = plain_stage(kernel, iters)
    ring = TorchRing(torch, stage, a.chunk_records, a.depth)
    d_all = host_in.cuda()
    d_want = torch.empty_like(d_all)
    with torch.cuda.stream(ring.comp):
        stage(d_all, d_want)
    ring.comp.synchronize()
    want = d_want.cpu()
    del d_all, d_want
    secs, bad = [], 0
    for rep in range(a.repeat + 1):  # the first warms up
        host_out.fill_(float("nan"))
        torch.cuda.synchronize()
        t = time.perf_counter()
        ring.run(host_in, host_out)
        dt = time.perf_counter() - t
        bad += count_bad(host_in, host_out, want, iters)
        if rep:
            secs.append(dt)
    med = statistics.median(secs)
    print(json.dumps({"peer": "torch_ring", "workload": a.workload, "memory": "pinned",
                      "records": n, "chunk_records": a.chunk_records, "depth": a.depth,
                      "repeat": a.repeat, "median_s": med, "gbps": 8 * n / med / 1e9,
                      "bad_elements": bad, "verified": bad == 0}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
