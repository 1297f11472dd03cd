"""The memory budget from Python (max_pinned_bytes, max_device_bytes): a pipeline fitted to a
quarter of what the default holds computes every element as an unbounded one does, in runs
and streams; the change is counted in the report and listed; an impossible budget raises
InvalidArgument saying why; settings given by the user are refused, not changed."""

from __future__ import annotations

import numpy as np
import pytest

import streampipe as sp


def test_quarter_budget_runs_and_streams_right(ctx: sp.Context) -> None:
    rng = np.random.default_rng()
    full = ctx.pipeline(sp.sinmix(5), np.float32)
    held = full.stats().pinned_bytes
    p = ctx.pipeline(sp.sinmix(5), np.float32, max_pinned_bytes=held // 4,
                     max_device_bytes=held // 4)
    assert p.stats().pinned_bytes <= held // 4
    x = rng.standard_normal(300_001).astype(np.float32)
    want = full.run(x)
    got, report = p.run(x, report=True)
    assert np.array_equal(got, want)
    assert report.tune_changes == 1 and report.pinned_bytes <= held // 4
    changes = p.tune_changes()
    assert len(changes) == 1
    c = changes[0]
    assert "the budget" in c["reason"]
    assert (c["to_depth"], c["to_chunk"]) != (c["from_depth"], c["from_chunk"])
    assert c["to_depth"] == p.depth
    with p.stream(max_in_flight=3) as s:
        batches = [rng.standard_normal(n).astype(np.float32) for n in (1, 70_000, 5, 200_000)]
        outs = [f.result() for f in [s.submit(b) for b in batches]]
    for b, o in zip(batches, outs):
        assert np.array_equal(o, full.run(b))


def test_impossible_budget_raises(ctx: sp.Context) -> None:
    with pytest.raises(sp.InvalidArgument, match="cannot hold any ring"):
        ctx.pipeline(sp.sinmix(5), np.float32, max_pinned_bytes=100)
    with pytest.raises(sp.InvalidArgument, match="leave chunk_records or depth at 0"):
        ctx.pipeline(sp.sinmix(5), np.float32, chunk_records=1 << 20, depth=4,
                     max_device_bytes=1 << 20)
    with pytest.raises(sp.InvalidArgument):
        ctx.pipeline(sp.sinmix(5), np.float32, max_pinned_bytes=-1)


def test_no_budget_changes_nothing(ctx: sp.Context) -> None:
    p = ctx.pipeline(sp.sinmix(5), np.float32, chunk_records=4096, depth=3)
    _, report = p.run(np.zeros(10_000, dtype=np.float32), report=True)
    assert report.tune_changes == 0 and p.tune_changes() == []
    assert report.slot_records == 4096 and report.depth == 3


def test_auto_is_the_default_and_the_chunk_follows_the_work(ctx: sp.Context) -> None:
    """chunk_records="auto" and depth="auto" are 0; under a budget that makes many chunks, a
    run without a timed report re-picks the chunk (listed with a reason) and every element
    is right; a fixed chunk is never changed; other words are refused."""
    rng = np.random.default_rng()
    held = ctx.pipeline(sp.sinmix(5), np.float32).stats().pinned_bytes
    p = ctx.pipeline(sp.sinmix(5), np.float32, chunk_records="auto", depth="auto",
                     max_pinned_bytes=held // 64)
    x = rng.standard_normal(4_000_000).astype(np.float32)
    want = ctx.pipeline(sp.sinmix(5), np.float32).run(x)
    assert np.array_equal(p.run(x), want)
    assert np.array_equal(p.run(x), want)
    changes = p.tune_changes()
    assert "at create" in changes[0]["reason"]
    later = [c for c in changes[1:] if c["from_chunk"] != c["to_chunk"]]
    assert later and all(c["reason"] for c in later)
    fixed = ctx.pipeline(sp.sinmix(5), np.float32, chunk_records=4096, depth="auto")
    assert np.array_equal(fixed.run(x), want)
    assert all(c["from_chunk"] == c["to_chunk"] for c in fixed.tune_changes())
    with pytest.raises(sp.InvalidArgument, match="chunk_records"):
        ctx.pipeline(sp.sinmix(5), np.float32, chunk_records="often")
