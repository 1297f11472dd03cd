#!/usr/bin/env python3
"""How much of the training thread's time each feed of bench/torch_loader_bench.py takes per
batch, with a stand-in for the training step whose cost is host time only (issue 25).

The bench's loop is bound by the training thread's host time (PyTorch's dispatch of the step:
about 1.45 ms per batch on the H200, as long as the step's GPU time), so any work a feed does
per batch that holds the interpreter's lock (GIL), on any Python thread, lengthens the loop.
Here the step is either

  ops     a chain of small torch CPU ops (each releases the GIL while it runs, as the real
          step's launches do, so other Python threads get in between them), or
  python  pure-Python work (holds the GIL but for the interpreter's forced switches),

calibrated to --step-ms. For each feed: the loop's wall time per batch, the same less the
resident feed's (what the feed costs the loop), the training thread's CPU time per batch in
the feed ("in feed": next() and letting the previous batch go), and the CPU time per batch of every thread of
the process by name: the training thread `MainThread`, Python threads by their names (a
Loader over an iterable pushes from `streampipe-loader`; before the binding's Feed, every
Loader had that feeder and a stream's event thread `streampipe-events-*`, 0.34 and 0.08 ms a
batch here), and `native` for the rest, the library's and the Feed's threads, which never
take the GIL for the built-in stage. Medians over --repeat epochs. The wall times are only
worth reading on a quiet machine; the CPU times are the figure here.

Here (2 cores, no GPU):   python3 bench/loader_gil_probe.py                (HOST backend)
On the GPU machine:       BACKEND=cuda python3 bench/loader_gil_probe.py --pixels 12288
                          (the bench's samples, a real device feed; the ops step's launches
                          go to the current stream and read the batch)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

HERE = Path(__file__).resolve().parent


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("torch_loader_bench",
                                                  HERE / "torch_loader_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1 << 18)
    ap.add_argument("--pixels", type=int, default=64, help="bytes per sample: small, so that "
                    "the data's own work (a CPU normalize here) does not hide the per-batch "
                    "overhead")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--step-ms", type=float, default=1.5)
    ap.add_argument("--step", default="ops", choices=["ops", "python"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-in-flight", type=int, default=4)
    ap.add_argument("--staging-threads", type=int, default=0, help="the Loader's (0: its own)")
    ap.add_argument("--backend", default=os.environ.get("BACKEND", "host"),
                    choices=["host", "cuda"])
    ap.add_argument("--feeds", default="resident,prefetcher,streampipe-builtin")
    return ap.parse_args()


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process so far (schedstat: nanoseconds), by name
    (threads Python does not know, the library's and torch's, summed as `native`)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            ns = int(Path(f"/proc/self/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        name = names.get(int(tid), "native")
        if name.startswith("streampipe-events"):
            name = "streampipe-events"
        out[name] = out.get(name, 0.0) + ns / 1e9
    return out


def make_step(torch: Any, kind: str, ms: float, device: Any) -> Callable[[Any], None]:
    """A step of about `ms` ms of host time that takes the batch (on CUDA its ops are
    launches on the current stream, reading the batch; the python step never syncs)."""
    small = torch.ones(64, device=device)

    def ops(n: int) -> Callable[[Any], None]:
        def step(x: Any) -> None:
            acc = x[0, :64].float()
            for _ in range(n):
                acc = torch.add(acc, small)
        return step

    def python(n: int) -> Callable[[Any], None]:
        def step(x: Any) -> None:
            s = len(x)
            for i in range(n):
                s += i * i
        return step

    maker = ops if kind == "ops" else python
    n = 1000
    probe = torch.zeros(2, 64, dtype=torch.float32, device=device)
    for _ in range(3):  # calibrate on this machine: the fastest of a few runs
        step = maker(n)
        took = 1e3 * min(_timed(step, probe) for _ in range(20))
        n = max(1, int(n * ms / took))
    return maker(n)


def _timed(step: Callable[[Any], None], x: Any) -> float:
    t0 = time.perf_counter()
    step(x)
    return time.perf_counter() - t0


def epoch_cost(epoch: Callable[[], Iterator[Any]], batches: int, step: Callable[[Any], None],
               sync: Callable[[], None]) -> tuple[float, int, dict[str, float], float]:
    """Wall time and batches of one epoch, the threads' CPU time per batch over its first
    batches less 4 (read while the feed's threads are still alive: they end with the epoch,
    the Loader's pusher up to 3 batches before the loop does), and the training thread's CPU
    time per batch in the feed: in next() and in letting the previous batch go."""
    sync()
    before = thread_cpu()
    after: dict[str, float] = {}
    in_feed = 0.0
    t0 = time.perf_counter()
    n = 0
    it = iter(epoch())
    while True:
        c0 = time.thread_time()
        x = y = None  # the previous batch let go here (a Loader's block goes back)
        try:
            x, y = next(it)
        except StopIteration:
            break
        in_feed += time.thread_time() - c0
        step(x)
        n += 1
        if n == batches - 4:
            after = thread_cpu()
    del x, y
    sync()
    wall = time.perf_counter() - t0
    cpu = {k: (after.get(k, 0.0) - before.get(k, 0.0)) / (batches - 4) for k in after}
    return wall, n, cpu, in_feed / max(1, n)


def main() -> int:
    args = parse_args()
    try:
        import torch
    except ImportError:
        print("loader_gil_probe: skipped, torch is not installed", file=sys.stderr)
        return 77
    bench = _bench()
    if args.backend == "host":
        torch.set_num_threads(1)  # no intra-op threads spinning on this machine's few cores
    device = torch.device("cuda", 0) if args.backend == "cuda" else torch.device("cpu")
    if device.type == "cuda" and not torch.cuda.is_available():
        print("loader_gil_probe: skipped, no CUDA here", file=sys.stderr)
        return 77
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    ns = argparse.Namespace(samples=args.samples, pixels=args.pixels,
                            batch_size=args.batch_size, hidden=32, workers=2,
                            max_in_flight=args.max_in_flight, data=None,
                            staging_threads=args.staging_threads)
    data, labels = bench.make_data(ns)
    step = make_step(torch, args.step, args.step_ms, device)
    feeds = {name: bench.MAKERS[name](torch, ns, data, labels, device)
             for name in args.feeds.split(",")}
    rows: dict[str, dict[str, Any]] = {}
    for name, epoch in feeds.items():
        batches = -(-args.samples // args.batch_size)
        epoch_cost(epoch, batches, step, sync)  # warm-up
        walls, cpus, in_feed = [], [], []
        for _ in range(args.repeat):
            wall, n, cpu, feed_s = epoch_cost(epoch, batches, step, sync)
            walls.append(wall / n)
            cpus.append(cpu)
            in_feed.append(feed_s)
        names = sorted({k for c in cpus for k in c})
        rows[name] = {
            "feed": name, "batches": n,
            "ms_per_batch": 1e3 * statistics.median(walls),
            "training_thread_ms_in_feed": 1e3 * statistics.median(in_feed),
            "cpu_ms_per_batch": {k: round(1e3 * statistics.median(c.get(k, 0.0) for c in cpus),
                                          4) for k in names},
        }
    floor = rows.get("resident", {}).get("ms_per_batch")
    print(f"step: {args.step}, {args.step_ms} ms; backend {args.backend}; "
          f"batch {args.batch_size} x {args.pixels} B; {os.cpu_count()} CPUs")
    for row in rows.values():
        if floor is not None:
            row["added_ms_per_batch"] = row["ms_per_batch"] - floor
        row.update(probe="loader_gil", step=args.step, step_ms=args.step_ms,
                   backend=args.backend)
        print(json.dumps(row))
    print(f"{'feed':20s} {'ms/batch':>9s} {'added':>8s} {'in feed':>8s}  "
          "CPU ms per batch by thread")
    for row in rows.values():
        added = row.get("added_ms_per_batch")
        cpu = ", ".join(f"{k} {v:.3f}" for k, v in row["cpu_ms_per_batch"].items() if v > 0)
        print(f"{row['feed']:20s} {row['ms_per_batch']:9.3f} "
              f"{'-' if added is None else f'{added:8.3f}'} "
              f"{row['training_thread_ms_in_feed']:8.3f}  {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
