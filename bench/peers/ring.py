"""The hand-written PyTorch ring, the peer that bench/peers/torch_ring.py and
bench/python_bench.py compare streampipe with: K device buffer pairs, three non-blocking streams
(h2d, compute, d2h), an event for every RAW and WAR, the user's tensors in pinned memory. The
host enqueues the whole run without waiting. No imports: the caller hands in torch, so that
importing this costs nothing where torch is absent."""

from __future__ import annotations

from typing import Any, Callable


class TorchRing:
    """fn(d_in, d_out) is the stage, enqueued with the compute stream current."""

    def __init__(self, torch: Any, fn: Callable[[Any, Any], None], chunk: int, depth: int) -> None:
        self.torch, self.fn, self.chunk, self.depth = torch, fn, chunk, depth
        dev = torch.device("cuda")
        self.d_in = [torch.empty(chunk, dtype=torch.float32, device=dev) for _ in range(depth)]
        self.d_out = [torch.empty(chunk, dtype=torch.float32, device=dev) for _ in range(depth)]
        self.h2d, self.comp, self.d2h = (torch.cuda.Stream() for _ in range(3))
        self.h2d_done = [torch.cuda.Event() for _ in range(depth)]
        self.comp_done = [torch.cuda.Event() for _ in range(depth)]
        self.d2h_done = [torch.cuda.Event() for _ in range(depth)]

    def run(self, host_in: Any, host_out: Any) -> None:
        torch = self.torch
        n = host_in.numel()
        torch.cuda.current_stream().synchronize()
        for i, lo in enumerate(range(0, n, self.chunk)):
            b, hi = i % self.depth, min(n, lo + self.chunk)
            d_in, d_out = self.d_in[b][: hi - lo], self.d_out[b][: hi - lo]
            if i >= self.depth:  # WAR: chunk i-K's compute read d_in[b]
                self.h2d.wait_event(self.comp_done[b])
            with torch.cuda.stream(self.h2d):
                d_in.copy_(host_in[lo:hi], non_blocking=True)
                self.h2d_done[b].record(self.h2d)
            self.comp.wait_event(self.h2d_done[b])  # RAW: the input is in
            if i >= self.depth:  # WAR: chunk i-K's d2h read d_out[b]
                self.comp.wait_event(self.d2h_done[b])
            with torch.cuda.stream(self.comp):
                self.fn(d_in, d_out)
                self.comp_done[b].record(self.comp)
            self.d2h.wait_event(self.comp_done[b])  # RAW: the output is there
            with torch.cuda.stream(self.d2h):
                host_out[lo:hi].copy_(d_out, non_blocking=True)
                self.d2h_done[b].record(self.d2h)
        self.d2h.synchronize()
