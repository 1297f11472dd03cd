#!/usr/bin/env python3
"""Replays the sampled timeline's hidden-transfer estimator on full timelines (issue 27).

Reads Chrome traces written with the full timeline (`streampipe bench --timeline events
--trace FILE.json`), takes the ring's depth from the trace's process name, and prints for
each: the exact hidden transfer of the full timeline; what the library's windows (first
depth + 2, one of MIDDLE every STRIDE, last TAIL: src/core/timing.c) give when only their
chunks are kept; and, for K middle windows spread evenly at every offset, the error's median
and rms with middle windows measured from cut copies (the estimator before the eleventh
session) and from whole copies (src/core/timeline_windows.c), and what the library reports
now: the untimed chunks' GPU operations replayed from every chunk's stage-in end at the
rates the windows measured, the hidden transfer then taken from the completed timeline
(src/core/timeline_replay.c; traces without stage-in lanes, pinned input, print no replay:
the library keeps the windows' estimate there). A model of both in Python, to try window
layouts on real traces without a GPU:

    python3 bench/sampled_replay.py transfer-1.json seed-1.json [--stride 64]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics

COPIES = ("h2d", "d2h")


def load(path: str) -> tuple[dict[str, dict[int, tuple[float, float]]], int, int]:
    trace = json.load(open(path))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    meta = [e for e in events if e.get("ph") == "M"]
    lanes = {e["tid"]: e["args"]["name"] for e in meta if e.get("name") == "thread_name"}
    depth = next(int(m.group(1)) for e in meta if e.get("name") == "process_name"
                 for m in [re.search(r"depth (\d+)", e["args"]["name"])] if m)
    spans: dict[str, dict[int, tuple[float, float]]] = {"h2d": {}, "compute": {}, "d2h": {}}
    for e in events:
        lane = lanes.get(e.get("tid"))
        if e.get("ph") != "X" or lane in (None, "stage-in", "stage-out"):
            continue
        kind = lane if lane in COPIES else "compute"
        spans[kind][e["args"]["chunk"]] = (e["ts"], e["ts"] + e["dur"])
    return spans, max(spans["h2d"]) + 1, depth


def merged(spans: list[tuple[float, float]]) -> list[list[float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def covered(a: float, b: float, m: list[list[float]]) -> float:
    return sum(max(0.0, min(b, y) - max(a, x)) for x, y in m)


def exact(spans: dict, n: int) -> float:
    m = merged(list(spans["compute"].values()))
    copy = sum(b - a for k in COPIES for a, b in spans[k].values())
    return sum(covered(a, b, m) for k in COPIES for a, b in spans[k].values()) / copy


def estimate(spans: dict, n: int, windows: list[tuple[int, int]], whole: bool) -> float:
    """timeline_windows.c's direction() for each copy direction, over the kept windows."""
    m = merged([spans["compute"][c] for a, b in windows for c in range(a, b + 1)])
    total_copy = total_hidden = 0.0
    for kind in COPIES:
        part = {p: [0.0, 0.0, 0.0, 0] for p in ("first", "middle", "last")}
        for a, b in windows:
            lo = spans["compute"][a][0] if a > 0 else -math.inf
            hi = spans["compute"][b][1] if b + 1 < n else math.inf
            p = "first" if a == 0 else "last" if b + 1 == n else "middle"
            cut = [0.0, 0.0]
            inside = [0.0, 0.0]
            for c in range(a, b + 1):
                s, e = spans[kind][c]
                part[p][2] += e - s
                part[p][3] += 1
                if s >= lo and e <= hi:
                    inside[0] += e - s
                    inside[1] += covered(s, e, m)
                x, y = max(s, lo), min(e, hi)
                if y > x:
                    cut[0] += y - x
                    cut[1] += covered(x, y, m)
            use = inside if whole and p == "middle" and inside[0] > 0 else cut
            part[p][0] += use[0]
            part[p][1] += use[1]
        f, mid, last = part["first"], part["middle"], part["last"]
        weight = (n - f[3] - last[3]) / mid[3] if mid[3] else 1.0
        frac = mid[1] / mid[0] if mid[0] else (f[1] + last[1]) / max(f[0] + last[0], 1e-12)
        copy = f[2] + last[2] + weight * mid[2]
        total_copy += copy
        total_hidden += f[1] + last[1] + frac * max(0.0, copy - f[0] - last[0])
    return total_hidden / total_copy


def load_engines(path: str) -> tuple[list, dict, dict]:
    """The GPU engines in pipeline order as (name, queues, {chunk: (start, end)}), the
    stage-in spans, and each chunk's records (src/trace/trace_json.c's tracks)."""
    trace = json.load(open(path))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    lanes = {e["tid"]: re.sub(r" q\d+$", "", e["args"]["name"]) for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    order: list[str] = []
    for tid in sorted(lanes):
        if lanes[tid] not in order:
            order.append(lanes[tid])
    spans: dict[str, dict[int, tuple[float, float]]] = {name: {} for name in order}
    queues = {name: sum(1 for n in lanes.values() if n == name) for name in order}
    records: dict[int, int] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("tid") in lanes:
            c = e["args"]["chunk"]
            spans[lanes[e["tid"]]][c] = (e["ts"], e["ts"] + e["dur"])
            records[c] = e["args"].get("records", 1)
    gpu = [(n, queues[n], spans[n]) for n in order if n not in ("stage-in", "stage-out")]
    return gpu, spans.get("stage-in", {}), records


def replay(gpu: list, stage_in: dict, records: dict, n: int, depth: int,
           windows: list[tuple[int, int]]) -> float | None:
    """timeline_replay.c on the windows' chunks, then the exact hidden transfer; None where
    the library keeps the windows' estimate (no stage-in spans)."""
    timed = {c for a, b in windows for c in range(a, b + 1)}
    if not stage_in or any(c not in stage_in for c in range(n) if c not in timed):
        return None
    first_end, last_start = windows[0][1] + 1, windows[-1][0]
    middle = [c for c in timed if first_end <= c < last_start]
    rates = []
    for _, _, sp in gpu:  # the ratio of sums over the middle windows, else every timed chunk
        for chunks in (middle, sorted(timed)):
            recs = sum(records[c] for c in chunks)
            if recs:
                rates.append(sum(sp[c][1] - sp[c][0] for c in chunks) / recs)
                break
        else:
            return None
    done = [dict() for _ in gpu]
    for c in range(n):
        for g, (_, q, sp) in enumerate(gpu):
            if c in timed:
                done[g][c] = sp[c]
                continue
            at = stage_in[c][1] if g == 0 else done[g - 1][c][1]
            if c >= q:
                at = max(at, done[g][c - q][1])
            if g + 1 < len(gpu) and c >= depth:
                at = max(at, done[g + 1][c - depth][1])
            done[g][c] = (at, at + records[c] * rates[g])
    m = merged([s for g in range(1, len(gpu) - 1) for s in done[g].values()])
    copies = [s for g in (0, len(gpu) - 1) for s in done[g].values()]
    return sum(covered(a, b, m) for a, b in copies) / sum(b - a for a, b in copies)


def library_windows(n: int, depth: int, stride: int, middle: int, tail: int) -> list:
    first = max(depth + 2, middle)
    if n <= first + tail + 2 * middle:
        return [(0, n - 1)]
    windows, span, stride = [(0, first - 1)], n - first - tail, max(stride, 2 * middle)
    if span <= stride:
        a = first + (span - middle) // 2
        windows.append((a, a + middle - 1))
    else:
        k = 0
        while (a := first + k * stride + (stride - middle) // 2) + middle <= n - tail:
            windows.append((a, a + middle - 1))
            k += 1
    return windows + [(n - tail, n - 1)]


def layout_errors(spans: dict, n: int, first: int, tail: int, full: float) -> list[str]:
    """K middle windows of M chunks, each at the centre of its K-th of the middle: a fixed
    layout's error on this trace, for K x M near the library's 5 middle chunks."""
    span, out = n - first - tail, []
    for k in (1, 2, 3, 4):
        for m in (2, 3, 5):
            if k * m > span:
                continue
            ws = [(0, first - 1)] + [(first + (2 * i + 1) * span // (2 * k) - m // 2,
                                      first + (2 * i + 1) * span // (2 * k) - m // 2 + m - 1)
                                     for i in range(k)] + [(n - tail, n - 1)]
            out.append(f"{k}x{m}:{100 * (estimate(spans, n, ws, True) - full):+.2f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--stride", type=int, default=64)
    ap.add_argument("--middle", type=int, default=5)
    ap.add_argument("--tail", type=int, default=3)
    ap.add_argument("--layouts", action="store_true",
                    help="also K evenly spaced middle windows of M chunks (K 1-4, M 2, 3, 5)")
    args = ap.parse_args()
    for path in args.traces:
        spans, n, depth = load(path)
        full = exact(spans, n)
        ws = library_windows(n, depth, args.stride, args.middle, args.tail)
        timed = sum(b - a + 1 for a, b in ws)
        line = [f"{path}: {n} chunks, depth {depth}, hidden {100 * full:.2f}%;",
                f"library windows ({timed} timed): cut {100 * (estimate(spans, n, ws, False) - full):+.2f}",
                f"whole {100 * (estimate(spans, n, ws, True) - full):+.2f} pt;"]
        replayed = replay(*load_engines(path), n, depth, ws)
        if replayed is not None:
            line.append(f"replayed {100 * (replayed - full):+.2f} pt;")
        first = max(depth + 2, args.middle)
        span = n - first - args.tail
        for k in (1, 2):
            step = span // k
            for whole in (False, True):
                errs = [100 * (estimate(spans, n, [(0, first - 1)] + [
                    (first + i * step + o, first + i * step + o + args.middle - 1)
                    for i in range(k)] + [(n - args.tail, n - 1)], whole) - full)
                    for o in range(step - args.middle + 1)]
                if errs:
                    rms = math.sqrt(sum(e * e for e in errs) / len(errs))
                    line.append(f"{k} middle, {'whole' if whole else 'cut'}: median "
                                f"{statistics.median(errs):+.2f} rms {rms:.2f};")
        print(" ".join(line))
        if args.layouts:
            print("  " + " ".join(layout_errors(spans, n, first, args.tail, full)))


if __name__ == "__main__":
    main()
