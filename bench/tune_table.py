#!/usr/bin/env python3
"""The table of bench/tune_auto.sh: each of issue 28's targets, measured, and met or missed.

usage: tune_table.py tune_auto.jsonl QUARTER_BYTES [SECTIONS]

Columns: target; auto (the library's own settings; in a sweep the better of its runs first
and last); best fixed (the best of the sweep in the same call, and which); ratio (auto /
best, higher is better, or what the row measures); goal; met (met / MISSED; an error row,
i.e. a run that failed or whose output was wrong, is missed). Exits 1 when any run failed or
was wrong, whatever was met."""
import json
import sys


def load(path):
    rows = {}
    for line in open(path):
        o = json.loads(line)
        rows.setdefault(o["row"], []).append(o)
    return rows


def rate(o):
    """Higher is better: GB/s for bench, samples/s for infer, GB/s for the mixed stream."""
    if o.get("error"):
        return 0.0
    if "pipelined" in o:
        return o["pipelined"]["gbps"]
    return o.get("samples_per_s", 0.0)


LINES = []
ERRORS = []  # runs that failed or computed a wrong element: the script's exit status


def kib(records):
    b = records * 4
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def line(target, auto, best, ratio, goal, met):
    LINES.append((target, auto, best, ratio, goal, "met" if met else "MISSED"))


def sweep_rows(rows, unit):
    for row, runs in rows.items():
        if not (row.startswith("mlp") or row in ("seed-pageable", "compute", "transfer-pinned",
                                                  "transfer-pageable", "tiny-graph")):
            continue
        auto = [o for o in runs if o["label"] == "auto"]
        fixed = [o for o in runs if o["label"] != "auto" and not o.get("error")]
        errors = [o["label"] for o in runs if o.get("error")]
        if errors:
            ERRORS.append(row)
        if len(runs) == 1 and not errors:
            continue  # the quarter's reference run alone (SECTIONS without bulk)
        if not auto or any(o.get("error") for o in auto) or not fixed:
            line(row, "FAILED", "", "", ">= 0.95", False)
            continue
        best = max(fixed, key=rate)
        mine = max(auto, key=rate)  # run first and last (tune_auto.sh's sweep): the better
        u = unit(row)
        chunk = mine["report"]["chunk_records"]
        r = rate(mine) / rate(best)
        line(f"{row} (auto chunk {chunk})", f"{rate(mine) / u[0]:.2f} {u[1]}",
             f"{rate(best) / u[0]:.2f} {best['label']}", f"{r:.3f}", ">= 0.95",
             r >= 0.95 and not errors)
        if errors:
            line(f"{row}: failed runs", ", ".join(errors), "", "", "none", False)


def mixed_row(rows):
    for o in rows.get("mixed", []):
        if o.get("error") or o["bad"]:
            ERRORS.append("mixed")
            line("mixed batches", "FAILED", "", "", ">= 0.95", False)
            continue
        auto = [r for r in o["rows"] if r["label"] == "auto"][0]
        best = max((r for r in o["rows"] if r["label"] != "auto"), key=lambda r: r["gbps"])
        ratio = auto["gbps"] / best["gbps"]
        waited = max(r["check_wait_s"] / r["seconds"] for r in o["rows"])
        line("mixed: the checks kept up (submitter's wait for a checked slot)",
             f"{waited * 100:.1f}% at most", "", "", "< 2%", waited < 0.02)
        line(f"mixed batches ({o['batches']} of {kib(o['min_batch'])}..{kib(o['max_batch'])})", f"{auto['gbps']:.2f} GB/s",
             f"{best['gbps']:.2f} {best['label']}", f"{ratio:.3f}", ">= 0.95",
             ratio >= 0.95 and o["bad"] == 0)


def shift_rows(rows):
    for o in rows.get("shift", []):
        if o.get("error") or o["bad"]:
            ERRORS.append("shift")
            line("10x shift", "FAILED", "", "", "", False)
            continue
        a, fixed = o["auto"], o["fixed"]
        after = [c for c in a["changes"] if c["at_s"] >= 0]
        best_a = max(fixed, key=lambda f: f["a_rate"])
        best_b = max(fixed, key=lambda f: f["b_rate"])
        ratio_b = a["b_rate"] / best_b["b_rate"] if best_b["b_rate"] else 0
        # the first change after the shift is the tuner's reaction (often a probe of a second
        # size); the re-pick is the first decision after it: a new size, or back to the old
        # one once the probe is over
        settled = [c for c in after if not c["reason"].startswith("probing")]
        if after:
            first = after[0]
            c = settled[0] if settled else after[-1]
            chunks = c["at_s"] * a["b_rate_all"] / max(first["from_chunk"], 1)
            ok = bool(settled) and (c["at_s"] <= 1.0 or chunks <= 50)
            line("shift: re-pick after it (reaction; decision)",
                 f"{first['at_s']:.3f} s; {c['at_s']:.3f} s" if settled else
                 f"{first['at_s']:.3f} s; none", f"~{chunks:.0f} chunks",
                 f"{first['from_chunk']}->{c['to_chunk']}", "<= 1 s or 50 chunks", ok)
            line("  its reason", c["reason"][:70], "", "", "", True)
        else:
            # no change: the pick made before stood; that answers the target only if it was
            # as good as the best fixed setting for the new phase (the phase B row says)
            line("shift: re-pick after it (reaction; decision)", "none", "", "kept",
                 "<= 1 s or 50 chunks", False)
        for name, key, best in (("A", "a_rate", best_a), ("B", "b_rate", best_b)):
            r = a[key] / best[key] if best[key] else 0
            line(f"shift: phase {name} ({o['iters_' + name.lower()]} iters), its 2nd half",
                 f"{a[key] / 1e6:.0f} M rec/s", f"{best[key] / 1e6:.0f} chunk{best['chunk']}",
                 f"{r:.3f}", ">= 0.90", r >= 0.90 and o["bad"] == 0)
        s = o["steady"]
        late = [c for c in s["changes"] if c["at_s"] > 1.0]
        allowed = 1 + int(max(s["seconds"] - 1.0, 0) // 60)
        line(f"steady: changes after 1 s ({s['seconds']:.1f} s)", str(len(late)),
             "", "; ".join(c["reason"][:40] for c in late[:2]), f"<= {allowed}",
             len(late) <= allowed)
        line("shift budget: pinned (sp_stats)", str(a["pinned_bytes"]), str(o["max_pinned"]),
             f"{a['pinned_bytes'] / max(o['max_pinned'], 1):.3f}", "<= 1",
             a["pinned_bytes"] <= o["max_pinned"])
        line("shift budget: device (sp_stats)", str(a["device_bytes"]), str(o["max_device"]),
             f"{a['device_bytes'] / max(o['max_device'], 1):.3f}", "<= 1",
             a["device_bytes"] <= o["max_device"])
        total_s = a["a_s"] + a["b_s"] + s["seconds"] + sum(f.get("s", 0) for f in fixed)
        line("shift: the checks kept up (submitter's wait for a checked slot)",
             f"{o['check_wait_s']:.3f} s", "", "", "< 2% of the streams",
             o["check_wait_s"] < 0.02 * max(total_s, 1e-9))
        line("stream outputs checked", f"{o['checked']} elements", "", f"{o['bad']} wrong",
             "0", o["bad"] == 0)


def quarter_row(rows, q):
    for o in rows.get("quarter", []):
        if o.get("error"):
            ERRORS.append("quarter")
            line("quarter budget (bench)", "FAILED", "", "", "", False)
            continue
        r = o["report"]
        line(f"quarter budget, seed pinned (chunk {o['pipelined']['chunk_records']} depth "
             f"{o['pipelined']['depth']}, {r.get('tune_changes')} changes)",
             f"{r['pinned_bytes']} B", f"{q} B", f"{r['pinned_bytes'] / max(q, 1):.3f}",
             "<= 1, verified", r["pinned_bytes"] <= q)


def main():
    rows = load(sys.argv[1])
    q = int(sys.argv[2])
    sweep_rows(rows, lambda row: (1e6, "M/s") if row.startswith("mlp") else (1.0, "GB/s"))
    mixed_row(rows)
    shift_rows(rows)
    quarter_row(rows, q)
    head = ("target", "auto", "best fixed", "ratio", "goal", "met")
    widths = [max(len(str(r[i])) for r in LINES + [head]) for i in range(6)]
    for r in [head] + LINES:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip())
    missed = sum(1 for r in LINES if r[5] != "met")
    print(f"{len(LINES) - missed} of {len(LINES)} targets met")
    if ERRORS:
        print("runs that failed or were wrong (tune_auto.log says why): " + ", ".join(ERRORS))
    sections = sys.argv[3].split() if len(sys.argv) > 3 else ["bulk", "stream", "quarter"]
    expected = {"bulk": ["seed-pageable"], "mlp": [], "stream": ["mixed", "shift"],
                "quarter": ["quarter"]}
    for want in [r for sec in sections for r in expected.get(sec, [])]:
        if want not in rows:
            print(f"no {want} row at all")
            ERRORS.append(want)
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())
