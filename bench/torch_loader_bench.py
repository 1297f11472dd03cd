#!/usr/bin/env python3
"""A training loop fed three ways, in one process (issue 25): the same uint8 images, the same
model step, the same GPU preprocessing (uint8 -> float32, x / 255 - 0.5):

  streampipe  streampipe.torch.Loader: the host batches staged by the library's threads into
              its pinned slots, copied in and normalized by a stage (torch ops on the chunk's
              stream) in the ring, handed to the step's stream on the device;
  streampipe-builtin  the same Loader with the library's normalize_u8 stage instead of the
              torch-ops one: no Python in the data path, so its chunks never wait for the
              interpreter's lock that the training loop holds;
  dataloader  torch.utils.data.DataLoader(pin_memory=True, num_workers=K) over batches of the
              array, `.to(device, non_blocking=True)` and the normalization on the current
              stream: the way most training loops are written;
  prefetcher  a careful hand-written prefetcher: two pinned buffers, each refilled only after
              the copy that read it is done, the copy and normalization on a side CUDA stream,
              the current stream made to wait for it, `record_stream` on the tensors it
              hands over;
  resident    no loading at all: every batch normalized on the device before the epoch, the
              loop handed slices of it. Not a feed anyone could use for data larger than the
              GPU, but the floor: its idle fraction is what the loop's own host side (Python,
              autograd, the optimizer's launches) leaves the GPU waiting, which no feed can
              remove.

The step: an MLP (pixels -> hidden -> hidden -> 10, ReLU) trained with SGD and momentum on
cross-entropy against fixed random labels, restarted from the same weights for every epoch,
so the loss curves must match. Every batch the model consumed is checked: a checksum of
it (torch.mv with a fixed random vector, summed in float64, on the device inside the loop)
against that of the same batch copied plainly and normalized the same way, exact.

Prints one JSON line per feed (samples/s per epoch and their median over --repeat epochs after
a warm-up epoch, the compute stream's idle fraction, the loss curve's ends, checksums right,
and the rate of one more epoch of the feed alone, with no training step),
then the ratios of streampipe to each baseline. The idle fraction is 1 - (time between each
step's first and last kernel, summed) / (first step's start to last step's end), from CUDA
events on the step's stream: the time the GPU's compute waited for data (or for the host to
queue work); the dataloader's copy and normalization on that stream count as waiting. A
feed's "waiting for data" is its idle fraction less the resident feed's, per round (the same
loop without any loading): the part of the idle time the feed causes.

On the GPU machine (about 30 s):
    python3 bench/torch_loader_bench.py --repeat 5
Anywhere (CPU torch, streampipe's HOST backend), the smoke test python/tests runs:
    python3 bench/torch_loader_bench.py --tiny
Exit status: 0 when every checksum and the loss curves agree, 1 when any does not, 77 without
torch (or with --backend cuda where there is no GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import numpy as np

CLASSES = 10
FEEDS = ("streampipe", "streampipe-builtin", "dataloader", "prefetcher", "resident")


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1 << 17)
    ap.add_argument("--pixels", type=int, default=3 * 64 * 64, help="uint8 bytes per sample")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=5, help="timed epochs per feed")
    ap.add_argument("--workers", type=int, default=4, help="the DataLoader's num_workers")
    ap.add_argument("--max-in-flight", type=int, default=4, help="the Loader's")
    ap.add_argument("--staging-threads", type=int, default=0,
                    help="the Loader's host staging threads (0: its default)")
    ap.add_argument("--data", type=Path, help="a file of samples x pixels uint8 (made when "
                    "missing), read through numpy.memmap; default: an array in memory")
    ap.add_argument("--backend", default="auto", choices=["auto", "host", "cuda"])
    ap.add_argument("--feeds", default=",".join(FEEDS))
    ap.add_argument("--tiny", action="store_true", help="a small CPU-sized run (smoke test)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.samples, args.pixels, args.batch_size, args.hidden = 600, 48, 64, 32
        args.repeat, args.workers = 2, 1
    args.feeds = [f for f in args.feeds.split(",") if f]
    bad = [f for f in args.feeds if f not in FEEDS]
    if bad:
        ap.error(f"unknown feeds {bad}; choose from {','.join(FEEDS)}")
    return args


# ---- the data, the preprocessing, the model ---------------------------------------------------


def make_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    labels = rng.integers(0, CLASSES, args.samples).astype(np.int64)
    shape = (args.samples, args.pixels)
    if args.data is None:
        return rng.integers(0, 256, shape, dtype=np.uint8), labels
    if not args.data.exists() or args.data.stat().st_size != args.samples * args.pixels:
        rng.integers(0, 256, shape, dtype=np.uint8).tofile(args.data)
    return np.memmap(args.data, np.uint8, "r", shape=shape), labels


def normalize(torch: Any, x: Any, out: Any = None) -> Any:
    """uint8 -> float32 x / 255 - 0.5: the one preprocessing every feed runs (torch ops)."""
    return torch.sub(torch.mul(x.to(torch.float32), 1.0 / 255.0), 0.5, out=out)


class Trainer:
    """The model, its optimizer, and what each step leaves on the device: the loss and the
    checksum of the batch it consumed (no host sync inside the loop), and timing events."""

    def __init__(self, torch: Any, args: argparse.Namespace, device: Any) -> None:
        self.torch, self.device = torch, device
        torch.manual_seed(0)
        h = args.hidden
        self.model = torch.nn.Sequential(
            torch.nn.Linear(args.pixels, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
            torch.nn.ReLU(), torch.nn.Linear(h, CLASSES)).to(device)
        self.initial = {k: v.clone() for k, v in self.model.state_dict().items()}
        self.weights = torch.rand(args.pixels, generator=torch.Generator().manual_seed(2)).to(
            device)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.cuda = device.type == "cuda"

    def start_epoch(self, n_batches: int) -> None:
        torch = self.torch
        self.model.load_state_dict(self.initial)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.losses = torch.zeros(n_batches, dtype=torch.float64, device=self.device)
        self.sums = torch.zeros(n_batches, dtype=torch.float64, device=self.device)
        self.events: list[tuple[Any, Any]] = []
        self.k = 0

    def step(self, x: Any, y: Any) -> None:
        torch = self.torch
        begin = end = None
        if self.cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
        self.sums[self.k] = torch.mv(x, self.weights).to(torch.float64).sum()
        loss = self.loss_fn(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.losses[self.k] = loss.detach()
        if self.cuda:
            end.record()
            self.events.append((begin, end))
        self.k += 1

    def idle_fraction(self) -> Optional[float]:
        if not self.events:
            return None
        busy = sum(b.elapsed_time(e) for b, e in self.events)
        total = self.events[0][0].elapsed_time(self.events[-1][1])
        return max(0.0, 1.0 - busy / total) if total > 0 else None


# ---- the feeds --------------------------------------------------------------------------------


class Batches:
    """The array as a map-style dataset of whole batches (a DataLoader with batch_size=None):
    a slice per item, so the workers do no per-sample collation."""

    def __init__(self, data: np.ndarray, labels: np.ndarray, batch: int) -> None:
        self.data, self.labels, self.batch = data, labels, batch

    def __len__(self) -> int:
        return -(-len(self.data) // self.batch)

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        import torch

        s = slice(i * self.batch, (i + 1) * self.batch)
        return torch.from_numpy(np.ascontiguousarray(self.data[s])), torch.from_numpy(
            self.labels[s])


def streampipe_feed(torch: Any, args: argparse.Namespace, data: np.ndarray,
                    labels: np.ndarray, device: Any,
                    builtin: bool = False) -> Callable[[], Iterator[Any]]:
    import streampipe as sp
    from streampipe.torch import Loader

    def on_cuda(chunk: Any) -> None:
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            normalize(torch, torch.from_dlpack(chunk.input), out=torch.from_dlpack(chunk.output))

    def on_host(inp: np.ndarray, out: np.ndarray) -> None:
        with warnings.catch_warnings():  # the input is a read-only view: read, never written
            warnings.simplefilter("ignore", UserWarning)
            x = torch.from_numpy(inp)
        normalize(torch, x, out=torch.from_numpy(out))

    stage = sp.Stage("normalize", np.float32, (args.pixels,), host=on_host, cuda=on_cuda)
    if builtin:  # normalize()'s arithmetic: x * (1 / 255) - 0.5, each step rounded alike
        stage = sp.normalize_u8((args.pixels,), 1.0 / 255.0, -0.5)
    backend = "cuda" if device.type == "cuda" else "host"
    loader = Loader((data, labels), stage, batch_size=args.batch_size,
                    device=device if backend == "cuda" else None, backend=backend,
                    max_in_flight=args.max_in_flight, staging_threads=args.staging_threads)
    return lambda: iter(loader)


def dataloader_feed(torch: Any, args: argparse.Namespace, data: np.ndarray,
                    labels: np.ndarray, device: Any) -> Callable[[], Iterator[Any]]:
    cuda = device.type == "cuda"
    dl = torch.utils.data.DataLoader(Batches(data, labels, args.batch_size), batch_size=None,
                                     shuffle=False, num_workers=args.workers, pin_memory=cuda,
                                     persistent_workers=args.workers > 0)

    def epoch() -> Iterator[Any]:
        for xb, yb in dl:
            x = xb.to(device, non_blocking=True)
            yield normalize(torch, x), yb.to(device, non_blocking=True)

    return epoch


def prefetcher_feed(torch: Any, args: argparse.Namespace, data: np.ndarray,
                    labels: np.ndarray, device: Any) -> Callable[[], Iterator[Any]]:
    """Two pinned buffers; batch k+1 is staged and copied on a side stream while step k runs."""
    cuda = device.type == "cuda"
    b = args.batch_size
    pin = dict(pin_memory=True) if cuda else {}
    bufs = [(torch.empty((b, args.pixels), dtype=torch.uint8, **pin),
             torch.empty(b, dtype=torch.int64, **pin)) for _ in range(2)]
    copied: list[Optional[Any]] = [None, None]  # the event after the copy that read buffer i
    side = torch.cuda.Stream(device) if cuda else None

    def load(k: int) -> tuple[Any, Any]:
        i = k % 2
        if copied[i] is not None:
            copied[i].synchronize()  # the copy that read this buffer is done
        s = slice(k * b, (k + 1) * b)
        n = len(labels[s])
        xh, yh = bufs[i][0][:n], bufs[i][1][:n]
        xh.copy_(torch.from_numpy(np.asarray(data[s])))
        yh.copy_(torch.from_numpy(labels[s]))
        if not cuda:
            return normalize(torch, xh), yh.clone()
        with torch.cuda.stream(side):
            x = normalize(torch, xh.to(device, non_blocking=True))
            y = yh.to(device, non_blocking=True)
            event = torch.cuda.Event()
            event.record(side)
            copied[i] = event
        return x, y

    def epoch() -> Iterator[Any]:
        n_batches = -(-len(labels) // b)
        nxt = load(0)
        for k in range(n_batches):
            x, y = nxt
            if cuda:
                current = torch.cuda.current_stream(device)
                current.wait_stream(side)
                x.record_stream(current)  # made on `side`: not reused before the step is done
                y.record_stream(current)
            if k + 1 < n_batches:
                nxt = load(k + 1)
            yield x, y

    return epoch


def resident_feed(torch: Any, args: argparse.Namespace, data: np.ndarray,
                  labels: np.ndarray, device: Any) -> Callable[[], Iterator[Any]]:
    """Every batch already normalized on the device: the loop with nothing to wait for."""
    b = args.batch_size
    xs = [normalize(torch, torch.from_numpy(np.asarray(data[s:s + b])).to(device))
          for s in range(0, len(labels), b)]
    ys = [torch.from_numpy(labels[s:s + b]).to(device) for s in range(0, len(labels), b)]

    def epoch() -> Iterator[Any]:
        yield from zip(xs, ys)

    return epoch


def streampipe_builtin_feed(torch: Any, args: argparse.Namespace, data: np.ndarray,
                            labels: np.ndarray, device: Any) -> Callable[[], Iterator[Any]]:
    return streampipe_feed(torch, args, data, labels, device, builtin=True)


MAKERS = {"streampipe": streampipe_feed, "streampipe-builtin": streampipe_builtin_feed,
          "dataloader": dataloader_feed, "prefetcher": prefetcher_feed,
          "resident": resident_feed}


# ---- runs -------------------------------------------------------------------------------------


def reference_sums(torch: Any, trainer: Trainer, data: np.ndarray, batch: int) -> Any:
    """The checksum of every batch copied plainly and normalized by the same function."""
    sums = []
    for start in range(0, len(data), batch):
        x = normalize(torch, torch.from_numpy(np.asarray(data[start:start + batch])).to(
            trainer.device))
        sums.append(torch.mv(x, trainer.weights).to(torch.float64).sum())
    return torch.stack(sums).cpu().numpy()


def one_epoch(torch: Any, trainer: Trainer, epoch: Callable[[], Iterator[Any]],
              n_batches: int) -> tuple[float, Optional[float]]:
    sync = torch.cuda.synchronize if trainer.cuda else (lambda: None)
    sync()
    trainer.start_epoch(n_batches)
    t0 = time.perf_counter()
    for x, y in epoch():
        trainer.step(x, y)
    sync()
    wall = time.perf_counter() - t0
    if trainer.k != n_batches:
        raise RuntimeError(f"the feed gave {trainer.k} batches of {n_batches}")
    return wall, trainer.idle_fraction()


def feed_only_epoch(torch: Any, trainer: Trainer, epoch: Callable[[], Iterator[Any]],
                    n_batches: int) -> float:
    """One epoch of the feed with no training step, each batch only checksummed as the step
    does: what the feed can deliver. The data keeps up with the loop (issue 25's condition
    for its < 5% waiting) where this is at least the resident feed's training rate."""
    sync = torch.cuda.synchronize if trainer.cuda else (lambda: None)
    sync()
    trainer.start_epoch(n_batches)
    t0 = time.perf_counter()
    for x, _ in epoch():
        trainer.sums[trainer.k] = torch.mv(x, trainer.weights).to(torch.float64).sum()
        trainer.k += 1
    sync()
    wall = time.perf_counter() - t0
    if trainer.k != n_batches:
        raise RuntimeError(f"the feed gave {trainer.k} batches of {n_batches}")
    return wall


def bench_feeds(torch: Any, args: argparse.Namespace, data: np.ndarray, labels: np.ndarray,
                trainer: Trainer, ref: np.ndarray) -> list[dict[str, Any]]:
    """A warm-up epoch of each feed (allocator, cuBLAS, workers), then --repeat rounds of one
    timed epoch of each, interleaved; every epoch's checksums compared with the reference."""
    epochs = {name: MAKERS[name](torch, args, data, labels, trainer.device)
              for name in args.feeds}
    n_batches = len(ref)
    for epoch in epochs.values():
        one_epoch(torch, trainer, epoch, n_batches)
    rows = {name: {"feed": name, "samples_per_s": [], "_idle": [], "_waiting": [],
                   "checksums_ok": True, "_losses": None} for name in args.feeds}
    for _ in range(args.repeat):
        idle_now: dict[str, float] = {}
        for name, epoch in epochs.items():
            wall, idle = one_epoch(torch, trainer, epoch, n_batches)
            row = rows[name]
            row["samples_per_s"].append(args.samples / wall)
            if idle is not None:
                row["_idle"].append(idle)
                idle_now[name] = idle
            row["checksums_ok"] &= bool(np.array_equal(trainer.sums.cpu().numpy(), ref))
            if row["_losses"] is None:
                row["_losses"] = trainer.losses.cpu().numpy()
        for name, idle in idle_now.items():  # less the loop's own floor, this round's
            if "resident" in idle_now:
                rows[name]["_waiting"].append(max(0.0, idle - idle_now["resident"]))
    for name, epoch in epochs.items():  # what each feed delivers with no step to feed
        wall = feed_only_epoch(torch, trainer, epoch, n_batches)
        rows[name]["feed_only_samples_per_s"] = args.samples / wall
        rows[name]["checksums_ok"] &= bool(np.array_equal(trainer.sums.cpu().numpy(), ref))
    for row in rows.values():
        idles, waiting = row.pop("_idle"), row.pop("_waiting")
        row["median_samples_per_s"] = statistics.median(row["samples_per_s"])
        row["gpu_idle_fraction"] = statistics.median(idles) if idles else None
        row["gpu_waiting_for_data"] = statistics.median(waiting) if waiting else None
        row["loss_first"] = float(row["_losses"][0])
        row["loss_last"] = float(row["_losses"][-1])
    return list(rows.values())


def report(rows: list[dict[str, Any]], args: argparse.Namespace, device: Any) -> bool:
    curves = [r.pop("_losses") for r in rows]
    loss_diff = max((float(np.max(np.abs(c - curves[0]))) for c in curves), default=0.0)
    # the same inputs and ops on the same stream: the curves agree to rounding (cuBLAS may
    # pick its kernels per call), far closer than a batch fed wrong would leave them
    ok = all(r["checksums_ok"] for r in rows) and loss_diff <= 1e-4
    for r in rows:
        r.update(bench="torch_loader", device=str(device), samples=args.samples,
                 pixels=args.pixels, batch_size=args.batch_size, hidden=args.hidden,
                 workers=args.workers, loss_curves_max_diff=loss_diff)
        print(json.dumps(r))
    by = {r["feed"]: r for r in rows}
    print(f"{'feed':18s} {'samples/s':>12s} {'gpu idle':>9s} {'for data':>9s} "
          f"{'feed alone':>11s} checksums  loss first -> last")

    def percent(x: Optional[float]) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    for r in rows:
        print(f"{r['feed']:18s} {r['median_samples_per_s']:12.0f} "
              f"{percent(r['gpu_idle_fraction']):>9s} {percent(r['gpu_waiting_for_data']):>9s} "
              f"{r['feed_only_samples_per_s']:11.0f} "
              f"{'ok' if r['checksums_ok'] else 'WRONG':9s}  {r['loss_first']:.4f} -> "
              f"{r['loss_last']:.4f}")
    for ours in ("streampipe", "streampipe-builtin"):
        for base in ("dataloader", "prefetcher"):
            if ours in by and base in by:
                ratio = by[ours]["median_samples_per_s"] / by[base]["median_samples_per_s"]
                print(f"{ours} / {base}: {ratio:.3f}x")
                print(json.dumps({"bench": "torch_loader", "ratio": f"{ours}/{base}",
                                  "value": ratio}))
    if "resident" in by:
        print(f"the data keeps up with the loop where a feed alone delivers the resident "
              f"feed's training rate, {by['resident']['median_samples_per_s']:.0f} samples/s")
    print(f"loss curves agree within {loss_diff:.3g}; "
          f"{'every batch verified' if ok else 'VERIFICATION FAILED'}")
    return ok


def pick_device(torch: Any, args: argparse.Namespace) -> Any:
    import streampipe as sp

    cuda = sp.built_with_cuda() and torch.cuda.is_available()
    if args.backend == "cuda" and not cuda:
        return None
    if args.backend == "host" or not cuda or args.tiny and args.backend == "auto":
        return torch.device("cpu")
    return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("torch_loader_bench: skipped, torch is not installed", file=sys.stderr)
        return 77
    device = pick_device(torch, args)
    if device is None:
        print("torch_loader_bench: skipped, no CUDA here", file=sys.stderr)
        return 77
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    data, labels = make_data(args)
    trainer = Trainer(torch, args, device)
    ref = reference_sums(torch, trainer, data, args.batch_size)
    rows = bench_feeds(torch, args, data, labels, trainer, ref)
    return 0 if report(rows, args, device) else 1


if __name__ == "__main__":
    sys.exit(main())
