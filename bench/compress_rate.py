#!/usr/bin/env python3
"""Issue 26's ring rate: compressed files decompressed inside the ring with the output kept on
the device, so that the figure is the ring's and not the disk's (a file-to-file run is bound by
writing its output: bench/PERF.md, ninth session call 4). One process:

  1. the data (``--dir``, kept between calls when its size matches): ``--gib`` GiB of float32
     "sensor" records, a random walk quantized to 1/8 whose steps are mostly 0 (structured
     floats that LZ4 compresses about 3.5:1), and two compressed copies made by the real
     commands: ``in.lz4`` (``lz4 -B4``: one frame of 64 KiB blocks) and ``in-FRAME.zst``
     (the file cut into ``--zstd-frame`` pieces, each compressed by ``zstd -1`` on its own and
     concatenated, as the seekable format lays them out; nvCOMP's headers recommend 64 KiB
     units, and a 64 MiB chunk of 1 MiB frames gave it 64);
  2. the pinned H2D ceiling, measured now by the library itself: a pipeline of no stages
     moving a pinned array into device memory (``out="device"``), the best of ``--repeat``
     runs at 16 and 64 MiB chunks;
  3. the raw file through ``sinmix(1)`` into device memory: the reference (its sampled
     elements checked against numpy within the bench's tolerance);
  4. for each compressed file and each setting of ``--chunk-mib`` x ``--streams`` (stage 1's
     queues: with 2, two chunks' decompressions run at once), ``Pipeline.run_file(path,
     out="device", report=True, decompress="ring")`` ``--repeat`` times after a warm-up; every
     output compared with the reference element by element (on the device with torch when it
     is there, else copied back), and the medians of the makespan (the library's) and of the
     decompression's busy time; the staging-thread decode once, for comparison.

Figures per row: compressed bytes and ratio, chunks through the ring, blocks per chunk (what
one nvCOMP batch gets), decompression busy time and its rate, the effective input rate
(uncompressed bytes into stage 1 over the makespan) and its ratio to the ceiling, the report's
bottleneck and whether the decompression was hidden. Target (CUDA): effective >= 1.5x the
ceiling for the best setting of each format.

    python3 bench/compress_rate.py --gib 8                    # on the H200 (CUDA, nvCOMP)
    python3 bench/compress_rate.py --backend host --quick     # anywhere: the logic, small

``--make-only --data digits`` makes the 64-byte images of compress_check.sh's MLP end-to-end
chain instead (``in-digits.u8`` and its compressed copies), measuring nothing.

nvCOMP is found as the CLI finds it (``SP_NVCOMP_LIBRARY``: bench/nvcomp_env.sh sets it).
Prints one JSON line per row, then a table and the PASS/FAIL lines; ``--json FILE`` writes the
rows there too. Exit 0: every output right and (CUDA) every target met; 1: a target missed or an
output wrong; 2: it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from python_bench import out_of_tolerance, sinmix_np  # noqa: E402  (one tolerance, one formula)

F32 = np.float32
ITERS = 1  # sinmix:iters=1, the stage chain of compress_check.sh
TARGET = 1.5  # effective input rate over the pinned H2D ceiling (issue 26)
ROWS: list[dict[str, Any]] = []
JSON_FILE: list[Any] = []  # --json's file, written as the rows come (a call cut short keeps them)


def emit(row: dict[str, Any]) -> None:
    ROWS.append(row)
    print(json.dumps(row), flush=True)
    for f in JSON_FILE:
        f.write(json.dumps(row) + "\n")
        f.flush()


# ---- the data -----------------------------------------------------------------------------------


def make_walk(path: Path, nbytes: int, seed: int = 26) -> None:
    """A random walk quantized to 1/8 whose steps are -1, 0 (6 in 8) or +1 eighths, float32."""
    rng = np.random.default_rng(seed)
    moves = np.array([-1, 0, 0, 0, 0, 0, 0, 1], F32) / F32(8)
    step, x = 1 << 24, F32(0)
    with open(path, "wb") as f:
        for at in range(0, nbytes // 4, step):
            k = min(step, nbytes // 4 - at)
            walk = x + np.cumsum(moves[rng.integers(0, 8, k)], dtype=F32)
            x = walk[-1]
            walk.tofile(f)


DIGITS = HERE.parent / "models" / "digits_test_images.u8"  # 8x8 images, pixels 0..16


def make_digits(path: Path, nbytes: int, seed: int = 26) -> None:
    """64-byte images for the digits MLP (compress_check.sh's E2E_CHAIN=mlp): 16 variants of
    each of the repository's 360 test digits, one pixel in 32 moved by 1 (kept in 0..16),
    drawn at random."""
    rng = np.random.default_rng(seed)
    base = np.fromfile(DIGITS, np.uint8).reshape(-1, 64).astype(np.int16)
    variants = np.repeat(base, 16, axis=0)
    moved = rng.integers(0, 32, variants.shape) == 0
    variants[moved] += rng.choice(np.array([-1, 1], np.int16), int(moved.sum()))
    variants = np.clip(variants, 0, 16).astype(np.uint8)
    step = 1 << 20
    with open(path, "wb") as f:
        for at in range(0, nbytes // 64, step):
            variants[rng.integers(0, len(variants), min(step, nbytes // 64 - at))].tofile(f)


MAKERS = {"walk": ("in", ".f32", make_walk), "digits": ("in-digits", ".u8", make_digits)}


def run(cmd: str) -> None:
    subprocess.run(cmd, shell=True, check=True)


def make_lz4(raw: Path, lz4: Path, level: int) -> None:
    """`lz4 -B4` at level 1 in one frame; at a higher level (lz4 1.9 runs one thread, at tens
    of MB/s there) 256 MiB pieces compressed a process per CPU and concatenated: frames of
    whole 64 KiB blocks, which `lz4 -d` reads as one stream."""
    if level <= 1:
        run(f"lz4 -q -f -B4 '{raw}' '{lz4}.part' && mv '{lz4}.part' '{lz4}'")
        return
    parts = Path(tempfile.mkdtemp(prefix="lz4-", dir=lz4.parent))
    try:
        run(f"cd '{parts}' && split -b {256 << 20} -d -a 6 '{raw}' p && "
            f"ls | xargs -n 1 -P {os.cpu_count() or 4} lz4 -q -m -{level} -B4 --rm && "
            f"ls | sort | xargs cat > '{lz4}.part' && mv '{lz4}.part' '{lz4}'")
    finally:
        shutil.rmtree(parts, ignore_errors=True)


def make_inputs(folder: Path, nbytes: int, frame: int, data: str = "walk",
                lz4_level: int = 1) -> dict[str, Path]:
    """in.f32 (in-digits.u8), .lz4 (-lLEVEL.lz4 above level 1) and -FRAME.zst beside it in
    folder, each made again only when missing or when the raw file's size changed (then all
    are)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem, ext, make = MAKERS[data]
    raw, zst = folder / f"{stem}{ext}", folder / f"{stem}-{frame}.zst"
    lz4 = folder / (f"{stem}.lz4" if lz4_level <= 1 else f"{stem}-l{lz4_level}.lz4")
    if not raw.exists() or raw.stat().st_size != nbytes:
        for old in (raw, *folder.glob(f"{stem}*.lz4"), *folder.glob(f"{stem}-*.zst")):
            old.unlink(missing_ok=True)
        make(raw, nbytes)
    if not lz4.exists():
        make_lz4(raw, lz4, lz4_level)
    if not zst.exists():
        parts = Path(tempfile.mkdtemp(prefix="frames-", dir=folder))
        try:  # frames compressed 256 files to a zstd process, a process per CPU
            run(f"cd '{parts}' && split -b {frame} -d -a 8 '{raw}' p && "
                f"ls | xargs -n 256 -P {os.cpu_count() or 4} zstd -q -1 --rm && "
                f"ls | sort | xargs cat > '{zst}.part' && mv '{zst}.part' '{zst}'")
        finally:
            shutil.rmtree(parts, ignore_errors=True)
    for path in (raw, lz4, zst):  # the page cache warm
        with open(path, "rb") as f:
            while f.read(1 << 26):
                pass
    return {"raw": raw, "lz4": lz4, "zstd": zst}


# ---- the checks ---------------------------------------------------------------------------------


class Checker:
    """Every element of an output against the reference: on the device with torch (CUDA and a
    torch that sees it), else copied back and compared on the host."""

    def __init__(self, ref: Any, backend: str) -> None:
        self.torch = None
        if backend == "cuda":
            try:
                import torch

                if torch.cuda.is_available():
                    self.torch = torch
            except ImportError:
                pass
        self.host = ref.to_host()
        self.ref = self.torch.from_dlpack(ref).clone() if self.torch else None
        self.how = "on the device (torch.equal)" if self.torch else "copied back (numpy)"

    def same(self, out: Any) -> bool:
        if self.torch is not None:
            return bool(self.torch.equal(self.torch.from_dlpack(out), self.ref))
        return bool(np.array_equal(out.to_host().view(np.uint32), self.host.view(np.uint32)))


def check_reference(ref: np.ndarray, raw: Path) -> int:
    """Elements of the reference (the raw file's run) off numpy's sinmix at 2^20 sampled places
    (all of them when fewer), within the bench's tolerance."""
    x = np.memmap(raw, F32, "r")
    rng = np.random.default_rng(1)
    idx = np.arange(x.size) if x.size <= 1 << 20 else np.sort(rng.choice(x.size, 1 << 20, False))
    return int(out_of_tolerance(ref[idx], sinmix_np(np.asarray(x[idx]), ITERS), ITERS).sum())


# ---- the runs -----------------------------------------------------------------------------------


def h2d_ceiling(sp: Any, ctx: Any, nbytes: int, repeat: int) -> float:
    """GB/s of the best run of a pinned array into device memory through no stages."""
    x = ctx.pinned_empty(nbytes // 4, F32)
    x[:] = 1.0
    best = 0.0
    for chunk in (16 << 20, 64 << 20):
        p = ctx.pipeline([], F32, chunk_records=min(chunk, nbytes) // 4, depth=4)
        for _ in range(repeat + 1):
            y, rep = p.run(x, out="device", report=True)
            best = max(best, nbytes / rep.makespan_s / 1e9)
            del y
        del p  # its memory back before the next
    return best


def ring_hidden(rep: Any, ring_s: float) -> str:
    """As the CLI says it (tools/streampipe/run_cmd.c): hidden behind the busiest other engine
    (stage 1's busy time less the decompression, which ran on its queue), or the bottleneck."""
    most, behind, prev = 0.0, "", ""
    for e in rep.engines:
        busy = e.busy_s - (ring_s if prev == "h2d" else 0.0)
        if busy > most:
            most, behind = busy, e.name
        prev = e.name
    return f"hidden behind {behind}" if most > ring_s else "the bottleneck"


def measure(ctx: Any, sp: Any, name: str, path: Path, decompress: str, chunk_mib: int,
            streams: int, depth: int, repeat: int, checker: Optional[Checker],
            nbytes: int) -> tuple[dict[str, Any], Any]:
    """One setting: a warm-up run, then `repeat` timed ones, each output checked; the row and
    the last output (the reference, when checker is None)."""
    p = ctx.pipeline([sp.sinmix(ITERS, streams=streams)], F32,
                     chunk_records=min(chunk_mib << 20, nbytes) // 4, depth=depth)
    makespans, busy, bad, out, rep = [], [], 0, None, None
    for k in range(repeat + 1):
        out = None  # the last output back to the pool before the next run
        out, rep = p.run_file(path, out="device", report=True, decompress=decompress)
        if checker is not None and not checker.same(out):
            bad += 1
        if k:
            makespans.append(rep.makespan_s)
            c = rep.input_compression
            busy.append(c.ring_busy_s if c else 0.0)
    c = rep.input_compression
    span, ring_s = statistics.median(makespans), statistics.median(busy)
    row: dict[str, Any] = {
        "row": name, "decompress": decompress, "chunk_mib": chunk_mib, "streams": streams,
        "depth": p.depth, "repeat": repeat, "makespan_s": round(span, 6),
        "makespans_s": [round(m, 6) for m in makespans],
        "effective_gbps": round(nbytes / span / 1e9, 3), "bottleneck": rep.bottleneck,
        "bad_outputs": bad if checker is not None else None,
        "engines": {e.name: round(e.busy_s, 6) for e in rep.engines},
    }
    if c is not None:
        row.update({
            "compressed_bytes": c.compressed_bytes, "ratio": round(c.ratio, 3),
            "ring_chunks": c.ring_chunks, "staging_chunks": c.staging_chunks,
            "blocks_per_chunk": round(c.ring_blocks / c.ring_chunks, 1) if c.ring_chunks else 0,
            "ring_busy_s": round(ring_s, 6),
            "ring_gbps": round(c.ring_bytes_out / ring_s / 1e9, 3) if ring_s > 0 else 0.0,
            "ring_overlap": ring_hidden(rep, ring_s) if ring_s > 0 else "",
            "note": c.note})
    return row, out


def table(ceiling: float) -> None:
    print(f"\npinned H2D ceiling {ceiling:.2f} GB/s; target effective >= {TARGET}x = "
          f"{TARGET * ceiling:.2f} GB/s")
    print("busy s: the decompression's spans summed over the chunks, dec GB/s its bytes over "
          "that (with 2 streams two spans can overlap: a rate per stream); eff GB/s: the "
          "uncompressed bytes over the median makespan")
    print(f"{'row':<14} {'chunk':>6} {'str':>3} {'ratio':>6} {'blk/chunk':>9} {'busy s':>8} "
          f"{'dec GB/s':>8} {'eff GB/s':>8} {'x ceil':>6}  bottleneck / decompression")
    for r in ROWS:
        if "makespan_s" not in r:
            continue
        print(f"{r['row']:<14} {r['chunk_mib']:>5}M {r['streams']:>3} {r.get('ratio', 1.0):>6} "
              f"{r.get('blocks_per_chunk', 0):>9} {r.get('ring_busy_s', 0):>8} "
              f"{r.get('ring_gbps', 0):>8} {r['effective_gbps']:>8} "
              f"{r['effective_gbps'] / ceiling if ceiling else 0:>6.2f}  {r['bottleneck']}"
              f"{' / ' + r['ring_overlap'] if r.get('ring_overlap') else ''}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cuda", choices=["cuda", "host"])
    ap.add_argument("--gib", type=float, help="GiB of records (default 8; --quick 1/32)")
    ap.add_argument("--dir", default="/tmp/sp-compress")
    ap.add_argument("--zstd-frame", type=int, default=64 << 10, help="bytes per zstd frame")
    ap.add_argument("--lz4-level", type=int, default=1,
                    help="lz4's compression level (above 1: in-lLEVEL.lz4, 256 MiB frames)")
    ap.add_argument("--chunk-mib", help="chunk sizes to try (default 64,256,512; --quick 1,4)")
    ap.add_argument("--streams", default="1,2")
    ap.add_argument("--depth", type=int, default=0, help="0: the library's choice")
    ap.add_argument("--repeat", type=int, help="timed runs per setting (default 5; --quick 2)")
    ap.add_argument("--quick", action="store_true", help="small defaults, for HOST and CI")
    ap.add_argument("--json", help="write the rows here too, one JSON object a line")
    ap.add_argument("--make-only", action="store_true",
                    help="make the data (its row says where), measure nothing")
    ap.add_argument("--data", default="walk", choices=list(MAKERS),
                    help="digits: the MLP's 64-byte images (with --make-only)")
    a = ap.parse_args()
    for name, full, quick in (("gib", 8.0, 1 / 32), ("chunk_mib", "64,256,512", "1,4"),
                              ("repeat", 5, 2)):
        if getattr(a, name) is None:
            setattr(a, name, quick if a.quick else full)
    nbytes = int(a.gib * (1 << 30)) // (1 << 20) * (1 << 20)  # whole MiB: whole blocks
    chunks = [int(c) for c in a.chunk_mib.split(",")]
    streams = [int(s) for s in a.streams.split(",")]
    for tool in ("lz4", "zstd", "split", "xargs"):
        if shutil.which(tool) is None:
            print(f"compress_rate: no `{tool}` command", file=sys.stderr)
            return 2
    if a.json:
        JSON_FILE.append(open(a.json, "w"))  # noqa: SIM115 - open for the whole run
    if a.data != "walk" and not a.make_only:
        print("compress_rate: --data digits is for --make-only (the rate runs sinmix on the "
              "walk)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    files = make_inputs(Path(a.dir), nbytes, a.zstd_frame, a.data, a.lz4_level)
    emit({"row": "data", "data": a.data, "bytes": nbytes,
          "seconds": round(time.perf_counter() - t0, 1),
          **{k: str(v) for k, v in files.items()},
          **{f"{k}_bytes": v.stat().st_size for k, v in files.items()},
          "zstd_frame": a.zstd_frame, "lz4_level": a.lz4_level,
          "what": {"walk": "float32 random walk quantized to 1/8",
                   "digits": "8x8 digits (uint8 0..16): 16 variants of each of 360, 1 pixel "
                             "in 32 moved by 1"}[a.data]})
    if a.make_only:
        return 0
    import streampipe as sp

    if not hasattr(sp.Compression, "ring_busy_s"):
        print("compress_rate: this streampipe package is older than the bench (no "
              "Compression.ring_busy_s): install this tree's (pip install .)", file=sys.stderr)
        return 2
    ctx = sp.Context(a.backend)
    if a.backend == "cuda":
        ok, why = sp.load_nvcomp(os.environ.get("SP_NVCOMP_LIBRARY") or None)
        emit({"row": "nvcomp", "loaded": ok, "why": why, "status": list(sp.nvcomp_status())})
        if not ok:
            print(f"compress_rate: nvCOMP did not load: {why}", file=sys.stderr)
            return 2
    ceiling = h2d_ceiling(sp, ctx, min(nbytes, 1 << 30), a.repeat)
    emit({"row": "h2d-ceiling", "gbps": round(ceiling, 3)})

    row, ref = measure(ctx, sp, "raw", files["raw"], "auto", chunks[0], streams[0], a.depth,
                       a.repeat, None, nbytes)
    checker = Checker(ref, a.backend)
    wrong = check_reference(checker.host, files["raw"])
    row["reference_bad_elements"] = wrong
    row["verify"] = checker.how
    emit(row)
    del ref
    failed = wrong > 0
    best: dict[str, float] = {}
    for fmt in ("lz4", "zstd"):
        settings = [(chunk, s, "ring") for chunk in chunks for s in streams]
        for chunk, s, where in settings + [(chunks[0], streams[0], "staging")]:
            try:
                row, _ = measure(ctx, sp, f"{fmt}-{where}", files[fmt], where, chunk, s,
                                 a.depth, a.repeat, checker, nbytes)
            except sp.Error as exc:  # one setting refused (memory, nvCOMP): the others run
                emit({"row": f"{fmt}-{where}", "chunk_mib": chunk, "streams": s,
                      "error": f"{type(exc).__name__}: {exc}"})
                failed = True
                continue
            emit(row)
            failed |= row["bad_outputs"] > 0
            if where == "ring":
                failed |= row["staging_chunks"] > 0
                best[fmt] = max(best.get(fmt, 0.0), row["effective_gbps"])
    table(ceiling)
    for fmt in ("lz4", "zstd"):
        eff = best.get(fmt, 0.0)
        ok = ceiling > 0 and eff >= TARGET * ceiling
        verdict = ("PASS" if ok else "FAIL") if a.backend == "cuda" else "n/a (host)"
        print(f"{verdict}: {fmt} in the ring, best effective input rate {eff:.2f} GB/s = "
              f"{eff / ceiling if ceiling else 0:.2f}x the pinned H2D ceiling (target {TARGET}x)")
        emit({"row": f"{fmt}-target", "effective_gbps": eff, "ceiling_gbps": round(ceiling, 3),
              "times": round(eff / ceiling, 3) if ceiling else 0, "verdict": verdict})
        failed |= a.backend == "cuda" and not ok
    print(f"outputs: {'all right' if not any(r.get('bad_outputs') for r in ROWS) else 'WRONG'}"
          f" ({checker.how}); reference: {wrong} sampled elements off numpy")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
