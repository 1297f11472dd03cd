#!/usr/bin/env python3
"""The Python front end on the GPU machine, in one process, medians of --repeat runs after a
warm-up, every element of every timed output checked:

  frontend  streampipe from Python (Pipeline.run) on the CLI's workloads: seed (2^27 float32
            records through sinmix(100)) and transfer (2^28 records, sinmix(0)), from pinned
            memory (Context.pinned_empty) and from pageable numpy arrays; with --cli, the C
            CLI's medians for the same workload and memory, and Python's time over them;
  torch     the strongest hand-written PyTorch peer: a K-slot ring (K = 4 and 8) on three
            torch.cuda streams (h2d, compute, d2h) with events for every RAW and WAR, pinned
            tensors, and the stage written as a PyTorch function
                v = x*0.5 + x*x*0.1; for _ in range(iters): v = v + torch.sin(v*0.01)
            against the same function run through streampipe as Stage(cuda=...) on
            chunk.stream (torch.cuda.ExternalStream), for transfer and seed on pinned memory;
            the function and the copies are also timed alone on one chunk, to say where the
            time goes;
  mlp       the digits MLP: streampipe's built-in stages against the careful PyTorch MLP of
            bench/torch_mlp_baseline.py (its ring and model, imported), fp32 and tf32.

Install streampipe first (no internet needed when scikit-build-core and nanobind are there):

    python3 -m pip install --no-build-isolation --no-deps .        # from the repository root

then, with the CLI's results for the ratio (one `streampipe bench --json` object per line):

    for w in seed transfer; do for m in pinned pageable; do
        build/streampipe bench --workload $w --memory $m --json; done; done > cli.jsonl
    python3 bench/python_bench.py --cli cli.jsonl

Prints one JSON line per row as it is measured, then a short table. Exit status: 0 when every
element of every output was right, 1 when any was wrong, 2 when a section failed to run (and
none was wrong). --backend host --quick runs a small smoke test anywhere.

The reference of each sinmix workload is streampipe's serial run (the textbook path: a
synchronous copy, the kernel and a copy back per chunk) of the built-in stage, itself checked
against numpy (every element at iters 0; 2^20 sampled elements otherwise) within the bench's
tolerance |got - want| <= 1e-5 * (1 + iters) * max(1, |want|). Every timed output is compared
with it: bit for bit, and, where bits differ (PyTorch's sin is not the kernel's), within the
tolerance.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
MODELS = HERE.parent / "models"
WORKLOADS = {"seed": (1 << 27, 100), "transfer": (1 << 28, 0)}
SAMPLES = 1 << 20
F32 = np.float32

ROWS: list[dict[str, Any]] = []
STATUS = {"wrong": 0, "failed": 0}


def log(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


def emit(row: dict[str, Any]) -> None:
    """One JSON line per row on stdout, as it is measured."""
    ROWS.append(row)
    if row.get("bad_elements"):
        STATUS["wrong"] += 1
    print(json.dumps(row), flush=True)


def section(name: str, fn: Callable[[], None]) -> None:
    """Runs one part; a part that fails is reported and the others still run."""
    log(f"== {name}")
    try:
        fn()
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: B036 - reported, and the exit status says so
        STATUS["failed"] += 1
        traceback.print_exc()
        emit({"section": name, "error": f"{type(exc).__name__}: {exc}"})


# ---- references and checks -------------------------------------------------------------------


def sinmix_np(x: np.ndarray, iters: int) -> np.ndarray:
    """v = x*0.5 + x*x*0.1, then iters times v += sin(v*0.01); float32, each op rounded."""
    x = np.asarray(x, F32)
    v = (x * F32(0.5)) + ((x * x) * F32(0.1))
    for _ in range(iters):
        v = v + np.sin(v * F32(0.01))
    return v


def out_of_tolerance(got: np.ndarray, want: np.ndarray, iters: int) -> np.ndarray:
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bound = 1e-5 * (1 + iters) * np.maximum(1.0, np.abs(want.astype(np.float64)))
    return ~(err <= bound)  # NaN (a poisoned element left) counts as wrong


def count_bad(got: Any, want: np.ndarray, iters: int, block: int = 1 << 22) -> tuple[int, Any]:
    """Elements of `got` (numpy or a CPU tensor) that are neither bit-equal to `want` nor within
    the tolerance of it; and the index of the first such, or None."""
    g = np.asarray(got).reshape(-1)
    w = want.reshape(-1)
    if g.shape != w.shape:
        return w.size, f"shape {g.shape} != {w.shape}"
    bad, first = 0, None
    for lo in range(0, w.size, block):
        a, b = g[lo:lo + block], w[lo:lo + block]
        if np.array_equal(a.view(np.uint32), b.view(np.uint32)):
            continue
        wrong = out_of_tolerance(a, b, iters)
        n = int(wrong.sum())
        if n and first is None:
            first = lo + int(np.flatnonzero(wrong)[0])
        bad += n
    return bad, first


def sample_indices(n: int) -> np.ndarray:
    k = min(n, SAMPLES)
    return ((np.arange(k, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(n)).astype(np.int64)


def random_input(rng: np.random.Generator, out: np.ndarray) -> None:
    """Uniform in [-4, 4), written in place (the array may be pinned)."""
    step = 1 << 24
    flat = out.reshape(-1)
    for lo in range(0, flat.size, step):
        part = flat[lo:lo + step]
        rng.random(part.shape, dtype=F32, out=part)
        part *= F32(8)
        part -= F32(4)


class Workload:
    """One sinmix workload's data: the input (pinned, and a pageable copy) and its checked
    reference output, made once and shared by the sections."""

    def __init__(self, sp: Any, ctx: Any, name: str, n: int, iters: int, seed: int) -> None:
        self.name, self.n, self.iters = name, n, iters
        log(f"{name}: {n} records, sinmix({iters}): making the input and the reference")
        self.x_pinned = ctx.pinned_empty((n,), F32)
        random_input(np.random.default_rng(seed), self.x_pinned)
        self.x_pageable = np.array(self.x_pinned)  # an ordinary (pageable) copy
        serial = ctx.pipeline(sp.sinmix(iters), F32)
        self.want = np.full(n, np.nan, F32)
        serial.run_serial(self.x_pageable, out=self.want)
        if iters == 0:
            bad = 0
            for lo in range(0, n, 1 << 24):
                ref = sinmix_np(self.x_pageable[lo:lo + (1 << 24)], 0)
                bad += int(out_of_tolerance(self.want[lo:lo + (1 << 24)], ref, 0).sum())
            checked = n
        else:
            idx = sample_indices(n)
            bad = int(out_of_tolerance(self.want[idx], sinmix_np(self.x_pageable[idx], iters),
                                       iters).sum())
            checked = idx.size
        self.reference_bad = bad
        emit({"section": "reference", "workload": name, "records": n, "iters": iters,
              "method": "streampipe run_serial of the built-in stage, checked against numpy",
              "elements_checked_against_numpy": checked, "bad_elements": bad})


def timed(run: Callable[[], Any], poison: Callable[[], None], check: Callable[[], int],
          repeat: int, makespan: Optional[Callable[[], float]] = None) -> dict[str, Any]:
    """A warm-up, then `repeat` timed runs; every run's output poisoned first and checked after."""
    seconds: list[float] = []
    makespans: list[float] = []
    bad = 0
    for i in range(repeat + 1):
        poison()
        t = time.perf_counter()
        run()
        dt = time.perf_counter() - t
        bad += check()
        if i == 0:
            continue  # the warm-up
        seconds.append(dt)
        if makespan is not None:
            makespans.append(makespan())
    result: dict[str, Any] = {"seconds": seconds, "median_s": statistics.median(seconds),
                              "bad_elements": bad}
    if makespans:
        result["median_makespan_s"] = statistics.median(makespans)
    return result


# ---- the front end against the CLI -----------------------------------------------------------


def read_cli(path: Optional[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """The CLI's results by (workload, memory): one `streampipe bench --json` object a line."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    if not path:
        return rows
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
                key = (obj["workload"], obj["memory"])
                obj["pipelined"]["median_s"]  # noqa: B018 - must be there
            except (ValueError, KeyError, TypeError) as exc:
                log(f"--cli {path}:{number}: not a `streampipe bench --json` object ({exc!r})")
                STATUS["failed"] += 1
                continue
            rows[key] = obj
    return rows


def frontend(sp: Any, ctx: Any, work: Workload, cli: dict[tuple[str, str], dict[str, Any]],
             repeat: int) -> dict[str, float]:
    medians: dict[str, float] = {}
    for memory in ("pinned", "pageable"):
        x = work.x_pinned if memory == "pinned" else work.x_pageable
        out = ctx.pinned_empty((work.n,), F32) if memory == "pinned" else np.empty(work.n, F32)
        theirs = cli.get((work.name, memory))
        shape = {"chunk_records": 0, "depth": 0}  # the library's choice, as the CLI's default
        if theirs is not None:
            shape = {"chunk_records": int(theirs["pipelined"].get("chunk_records", 0)),
                     "depth": int(theirs["pipelined"].get("depth", 0))}
        p = ctx.pipeline(sp.sinmix(work.iters), F32, **shape)
        log(f"frontend {work.name} {memory}: {p!r}, depth {p.depth}, "
            f"chunk {p.chunk_records(work.n)} records")
        r = timed(lambda: p.run(x, out=out), lambda: out.fill(np.nan),
                  lambda: count_bad(out, work.want, work.iters)[0], repeat,
                  lambda: p.last_makespan_s)
        _, report = p.run(x, out=out, report=True)  # what the library chose and saw
        bad, first = count_bad(out, work.want, work.iters)
        row: dict[str, Any] = {
            "section": "frontend", "workload": work.name, "memory": memory,
            "records": work.n, "iters": work.iters, "repeat": repeat,
            "python_seconds": r["seconds"], "python_median_s": r["median_s"],
            "python_median_makespan_s": r["median_makespan_s"],
            "gbps": 8 * work.n / r["median_s"] / 1e9,
            "chunk_records": report.chunk_records, "chunks": report.chunks,
            "depth": report.depth, "staged_in": report.staged_in,
            "staged_out": report.staged_out, "efficiency": report.efficiency,
            "bottleneck": report.bottleneck,
            "bad_elements": r["bad_elements"] + bad, "first_bad": first,
        }
        if theirs is not None:
            cli_median = float(theirs["pipelined"]["median_s"])
            row["cli_median_s"] = cli_median
            row["cli_records"] = theirs.get("records")
            row["ratio_python_over_cli"] = r["median_s"] / cli_median
            if "median_makespan_s" in theirs["pipelined"]:
                row["cli_median_makespan_s"] = float(theirs["pipelined"]["median_makespan_s"])
                row["makespan_ratio_python_over_cli"] = (
                    r["median_makespan_s"] / row["cli_median_makespan_s"])
            if theirs.get("records") != work.n:
                row["note"] = "the CLI's run had another record count: the ratio compares unlike runs"
        emit(row)
        medians[memory] = r["median_s"]
    return medians


# ---- PyTorch --------------------------------------------------------------------------------


def torch_sinmix(torch: Any, x: Any, out: Any, iters: int) -> None:
    """The stage as a PyTorch user writes it, into `out` (float32, each op rounded)."""
    if iters == 0:
        torch.add(x * 0.5, x * x * 0.1, out=out)
        return
    v = x * 0.5 + x * x * 0.1
    for _ in range(iters - 1):
        v = v + torch.sin(v * 0.01)
    torch.add(v, torch.sin(v * 0.01), out=out)


def median_event_s(torch: Any, fn: Callable[[], None], times: int = 10) -> float:
    """Device time of fn (enqueued on the current stream), median of `times` after a warm-up."""
    fn()
    out = []
    for _ in range(times):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return statistics.median(out)


def where_the_time_goes(torch: Any, iters: int, chunk: int, chunks: int) -> dict[str, Any]:
    """The stage function and the copies alone on one chunk, scaled to the run's chunks: the
    host's time to enqueue the function (Python dispatch, one launch per op), its device time
    (replayed from a CUDA graph, so that no launch gap is counted) and each copy's."""
    dev = torch.device("cuda")
    x = torch.rand(chunk, device=dev) * 8 - 4
    out = torch.empty_like(x)
    host_x = torch.empty(chunk, dtype=torch.float32, pin_memory=True)
    host_out = torch.empty(chunk, dtype=torch.float32, pin_memory=True)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch_sinmix(torch, x, out, iters)  # warm-up: the allocator, the kernels
        side.synchronize()
        enqueue = []
        for _ in range(5):
            t = time.perf_counter()
            torch_sinmix(torch, x, out, iters)
            enqueue.append(time.perf_counter() - t)
            side.synchronize()
        host_s = statistics.median(enqueue)
        device_s: Optional[float]
        how = "cuda graph replay"
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=side):
                torch_sinmix(torch, x, out, iters)
            device_s = median_event_s(torch, graph.replay)
        except Exception as exc:  # noqa: BLE001 - fall back to plain events
            how = f"events around the enqueue (graph capture failed: {exc})"
            device_s = median_event_s(torch, lambda: torch_sinmix(torch, x, out, iters))
        h2d_s = median_event_s(torch, lambda: x.copy_(host_x, non_blocking=True))
        d2h_s = median_event_s(torch, lambda: host_out.copy_(out, non_blocking=True))
    parts = {"enqueue the function (host)": host_s * chunks,
             "the function (device)": device_s * chunks,
             "h2d copies": h2d_s * chunks, "d2h copies": d2h_s * chunks}
    limit = max(parts, key=lambda k: parts[k])
    return {"chunk_records": chunk, "chunks": chunks, "per_chunk_enqueue_s": host_s,
            "per_chunk_device_s": device_s, "device_timing": how, "per_chunk_h2d_s": h2d_s,
            "per_chunk_d2h_s": d2h_s, "totals_s": parts, "bound_s": parts[limit],
            "limit": limit}


def torch_on_cuda(ctx: Any, section: str) -> Any:
    """torch, when it imports and has the context's CUDA device; else None, the section's skip
    emitted with the reason."""
    try:
        import torch
    except ImportError as exc:
        emit({"section": section, "skipped": f"no torch: {exc}"})
        return None
    if not torch.cuda.is_available() or ctx.backend != "cuda":
        emit({"section": section, "skipped": "torch has no CUDA device, or the context is not CUDA"})
        return None
    return torch


def torch_section(sp: Any, ctx: Any, works: dict[str, Workload], repeat: int, chunk: int,
                  depths: list[int], builtin_pinned: dict[str, float]) -> None:
    torch = torch_on_cuda(ctx, "torch")
    if torch is None:
        return
    torch.cuda.set_device(ctx.device)
    sys.path.insert(0, str(HERE / "peers"))
    from ring import TorchRing  # the hand-written ring, the same as bench/peers/torch_ring.py's

    for name, work in works.items():
        iters = work.iters
        fn = lambda a, b, iters=iters: torch_sinmix(torch, a, b, iters)  # noqa: E731
        host_in = torch.empty(work.n, dtype=torch.float32, pin_memory=True)
        host_in.numpy()[:] = work.x_pageable
        host_out = torch.empty(work.n, dtype=torch.float32, pin_memory=True)
        out_np = host_out.numpy()
        chunks = -(-work.n // chunk)
        story = where_the_time_goes(torch, iters, chunk, chunks)
        emit({"section": "torch", "row": "where the time goes", "workload": name, **story})

        def check() -> int:
            return count_bad(out_np, work.want, iters)[0]

        def poison() -> None:
            host_out.fill_(float("nan"))

        for depth in depths:
            ring = TorchRing(torch, fn, chunk, depth)
            r = timed(lambda: ring.run(host_in, host_out), poison, check, repeat)
            emit({"section": "torch", "row": f"torch ring K={depth}", "workload": name,
                  "memory": "pinned", "records": work.n, "iters": iters, "chunk_records": chunk,
                  "depth": depth, "seconds": r["seconds"], "median_s": r["median_s"],
                  "gbps": 8 * work.n / r["median_s"] / 1e9, "bound_s": story["bound_s"],
                  "bad_elements": r["bad_elements"]})

            def stage_fn(c: Any) -> None:
                with torch.cuda.stream(torch.cuda.ExternalStream(c.stream.handle)):
                    fn(torch.from_dlpack(c.input), torch.from_dlpack(c.output))

            p = ctx.pipeline(sp.Stage("torch_sinmix", np.float32, cuda=stage_fn), F32,
                             chunk_records=chunk, depth=depth)
            r = timed(lambda: p.run(host_in, out=host_out), poison, check, repeat,
                      lambda: p.last_makespan_s)
            _, report = p.run(host_in, out=host_out, report=True)
            bad = check()
            emit({"section": "torch", "row": f"streampipe torch stage depth={depth}",
                  "workload": name, "memory": "pinned", "records": work.n, "iters": iters,
                  "chunk_records": chunk, "depth": depth, "seconds": r["seconds"],
                  "median_s": r["median_s"], "median_makespan_s": r["median_makespan_s"],
                  "gbps": 8 * work.n / r["median_s"] / 1e9, "bound_s": story["bound_s"],
                  "staged_in": report.staged_in, "bottleneck": report.bottleneck,
                  "bad_elements": r["bad_elements"] + bad})
        if name in builtin_pinned:
            emit({"section": "torch", "row": "streampipe built-in sinmix (C kernel)",
                  "workload": name, "memory": "pinned", "records": work.n, "iters": iters,
                  "median_s": builtin_pinned[name], "note": "the frontend row's run",
                  "bad_elements": 0})


# ---- the MLP ---------------------------------------------------------------------------------


def acceptable(labels: np.ndarray, logits: np.ndarray, tolerance: float) -> np.ndarray:
    """A label is right when it is the top logit, or within `tolerance` (relative to
    max(1, |logits|)) of it: a near tie may go either way."""
    labels = np.asarray(labels)
    top = logits.argmax(axis=1)
    scale = np.maximum(1.0, np.abs(logits).max(axis=1))
    picked = logits[np.arange(len(labels)), np.clip(labels, 0, 9)]
    close = (logits[np.arange(len(labels)), top] - picked) / scale <= tolerance
    return (labels >= 0) & (labels < 10) & ((labels == top) | close)


def mlp_section(sp: Any, ctx: Any, repeat: int, replicate: int) -> None:
    model_path = MODELS / "digits_mlp.safetensors"
    images_path = MODELS / "digits_test_images.u8"
    labels_path = MODELS / "digits_test_labels.u8"
    if not (model_path.exists() and images_path.exists() and labels_path.exists()):
        emit({"section": "mlp", "skipped": f"no model files in {MODELS}"})
        return
    model = sp.MLPModel.load(model_path)
    base = np.fromfile(images_path, np.uint8).reshape(-1, 64)
    base_labels = np.fromfile(labels_path, np.uint8).astype(np.int32)
    logits = model.reference_logits(base)  # float64; record i is base image i % len(base)
    n = len(base) * replicate
    pixels = ctx.pinned_empty((n, 64), np.uint8)
    pixels.reshape(replicate, len(base), 64)[:] = base
    tolerance = {"fp32": 1e-4, "tf32": 1e-2 if ctx.backend == "cuda" else 1e-4}
    # whether label c is acceptable for base image j: every record checked by a lookup
    right = {prec: np.stack([acceptable(np.full(len(base), c), logits, tol)
                             for c in range(10)], axis=1)
             for prec, tol in tolerance.items()}
    columns = np.arange(len(base))[None, :]

    def check(out: np.ndarray, precision: str) -> int:
        labels = np.asarray(out).reshape(replicate, len(base))
        valid = (labels >= 0) & (labels < 10)
        ok = valid & right[precision][columns, np.clip(labels, 0, 9)]
        return int(labels.size - ok.sum())

    def accuracy(out: np.ndarray) -> float:
        return float((np.asarray(out).reshape(replicate, len(base)) == base_labels).mean())

    ours: dict[str, np.ndarray] = {}
    # the library's default chunk (8 MiB of the widest record: 8192 records of fc1's 1 KiB),
    # and the torch baseline's chunk with graph mode, as `streampipe infer` runs best
    configs = {"default": {}, "chunk 262144 depth 8 graph": {
        "chunk_records": 262144, "depth": 8, "graph": "on"}}
    for precision in ("fp32", "tf32"):
        for label, kw in configs.items():
            out = ctx.pinned_empty((n,), np.int32)
            p = ctx.pipeline(ctx.mlp_stages(model, precision), np.uint8, (64,), **kw)
            r = timed(lambda: p.run(pixels, out=out), lambda: out.fill(-1),
                      lambda: check(out, precision), repeat, lambda: p.last_makespan_s)
            ours[precision] = np.array(out)
            emit({"section": "mlp", "row": f"streampipe MLP {precision} ({label})",
                  "records": n, "median_s": r["median_s"],
                  "median_makespan_s": r["median_makespan_s"],
                  "samples_per_s": n / r["median_s"], "accuracy": accuracy(out),
                  "depth": p.depth, "chunk_records": p.chunk_records(n),
                  "bad_elements": r["bad_elements"]})
    torch = torch_on_cuda(ctx, "mlp")
    if torch is None:
        return
    sys.path.insert(0, str(HERE))
    import torch_mlp_baseline as baseline  # the careful PyTorch MLP: its model and ring

    device = torch.device("cuda", ctx.device)
    tmodel = baseline.DigitsMLP(baseline.read_safetensors(str(model_path)), device)
    tpixels = torch.from_numpy(np.array(pixels)).pin_memory()
    chunk = 256 * 1024
    for precision in ("fp32", "tf32"):
        baseline.set_precision(precision)
        tout = torch.empty(n, dtype=torch.int32, pin_memory=True)
        seconds = []
        bad = 0
        for i in range(repeat + 1):
            tout.fill_(-1)
            seconds.append(baseline.stream_once(tmodel, tpixels, tout, chunk, device))
            bad += check(tout.numpy(), precision)
        seconds = seconds[1:]
        median = statistics.median(seconds)
        agree = float((tout.numpy() == ours[precision]).mean())
        emit({"section": "mlp", "row": f"torch MLP {precision}", "records": n,
              "median_s": median, "samples_per_s": n / median, "accuracy": accuracy(tout.numpy()),
              "chunk_records": chunk, "ring": baseline.RING,
              "agreement_with_streampipe": agree, "bad_elements": bad})
    baseline.set_precision("fp32")


# ---- the table ---------------------------------------------------------------------------------


def table() -> str:
    lines = [f"{'section':9} {'row':40} {'workload':9} {'memory':9} {'median s':>10} "
             f"{'GB/s':>7} {'vs CLI':>7} {'bad':>5}"]
    for r in ROWS:
        if r["section"] in ("setup", "reference") and "error" not in r:
            continue
        if "error" in r or "skipped" in r:
            lines.append(f"{r['section']:9} {('ERROR: ' + r['error']) if 'error' in r else ('skipped: ' + r['skipped'])}")
            continue
        if r.get("row") == "where the time goes":
            t = r["totals_s"]
            lines.append(f"{'torch':9} {'where the time goes':40} {r['workload']:9} "
                         f"{'':9} bound {r['bound_s']:.4f} s: {r['limit']} "
                         f"(enqueue {t['enqueue the function (host)']:.4f}, device "
                         f"{t['the function (device)']:.4f}, h2d {t['h2d copies']:.4f}, "
                         f"d2h {t['d2h copies']:.4f})")
            continue
        name = r.get("row") or "python Pipeline.run"
        median = r.get("median_s", r.get("python_median_s"))
        gbps = r.get("gbps")
        ratio = r.get("ratio_python_over_cli")
        lines.append(
            f"{r['section']:9} {name:40} {r.get('workload', ''):9} {r.get('memory', ''):9} "
            f"{median:10.4f} {'' if gbps is None else f'{gbps:7.1f}':>7} "
            f"{'' if ratio is None else f'{ratio:7.3f}':>7} {r.get('bad_elements', 0):5d}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", help="the CLI's results: one `streampipe bench --json` object a line")
    ap.add_argument("--backend", default="cuda", choices=["cuda", "host", "auto"])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workloads", default="seed,transfer")
    ap.add_argument("--sections", default="frontend,torch,mlp")
    ap.add_argument("--chunk-records", type=int, default=1 << 21,
                    help="the torch ring's chunk (and the torch stage's); default 2^21")
    ap.add_argument("--depths", default="4,8", help="the torch ring's K values")
    ap.add_argument("--replicate", type=int, default=27778,
                    help="MLP: copies of the 360 test images (27778: 10,000,080 records)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: 1/256 of the records, 2 repeats, a small MLP stream")
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()

    import streampipe as sp

    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    repeat = 2 if a.quick else a.repeat
    if repeat < 1:
        ap.error("--repeat must be at least 1")
    try:
        ctx = sp.Context(a.backend, a.device)
    except sp.Error as exc:
        log(f"python_bench: no {a.backend} context: {exc}")
        return 2
    sections = set(a.sections.split(","))
    emit({"section": "setup", "streampipe": sp.__version__, "backend": ctx.backend,
          "device": ctx.device, "built_with_cuda": sp.built_with_cuda(), "seed": seed,
          "repeat": repeat, "quick": a.quick, "python": sys.version.split()[0],
          "numpy": np.__version__, "cli_file": a.cli})
    cli = read_cli(a.cli)
    works: dict[str, Workload] = {}

    def make_works() -> None:
        for i, name in enumerate(a.workloads.split(",")):
            n, iters = WORKLOADS[name]
            if a.quick:
                n //= 256
            works[name] = Workload(sp, ctx, name, n, iters, seed + i)

    section("reference", make_works)
    builtin_pinned: dict[str, float] = {}
    if "frontend" in sections:
        for name, work in works.items():
            section(f"frontend {name}",
                    lambda work=work: builtin_pinned.update(
                        {work.name: frontend(sp, ctx, work, cli, repeat)["pinned"]}))
    if "torch" in sections:
        depths = [int(d) for d in a.depths.split(",")]
        chunk = a.chunk_records // 16 if a.quick else a.chunk_records
        section("torch", lambda: torch_section(sp, ctx, works, repeat, chunk, depths,
                                               builtin_pinned))
    if "mlp" in sections:
        section("mlp", lambda: mlp_section(sp, ctx, repeat, 20 if a.quick else a.replicate))
    print(table(), flush=True)
    wrong = sum(int(r.get("bad_elements") or 0) for r in ROWS)
    if wrong:
        print(f"python_bench: {wrong} wrong elements", flush=True)
        return 1
    if STATUS["failed"]:
        print(f"python_bench: {STATUS['failed']} sections failed to run", flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
