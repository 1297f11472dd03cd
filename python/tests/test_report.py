"""Reports: the C report's figures, to_dict, and the Chrome trace and SVG written from them."""

from __future__ import annotations

import gc
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import streampipe as sp


def test_report_fields(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline([sp.sinmix(3)], np.float32, chunk_records=1000, depth=4)
    x = rng.uniform(-1, 1, 10_500).astype(np.float32)
    y, r = p.run(x, report=True)
    assert isinstance(r, sp.Report)
    assert r.records == 10_500 and r.chunks == 11 and r.chunk_records == 1000 and r.depth == 4
    assert r.staged_in and r.staged_out and not r.graph
    assert r.makespan_s > 0 and r.makespan_s == pytest.approx(p.last_makespan_s)
    assert 0 < r.efficiency <= 1.0 + 1e-9
    assert 0 <= r.hidden_transfer <= 1
    assert r.bound_s > 0 and r.serial_s >= r.bound_s and r.model_s > 0
    names = [e.name for e in r.engines]
    assert names == ["stage-in", "h2d", "sinmix", "d2h", "stage-out"]
    assert [e.kind for e in r.engines] == ["stage-in", "h2d", "compute", "d2h", "stage-out"]
    by_name = {e.name: e for e in r.engines}
    assert by_name["h2d"].bytes == x.nbytes and by_name["d2h"].bytes == y.nbytes
    assert all(e.busy_s >= e.max_chunk_s >= 0 for e in r.engines)
    assert r.bottleneck in names or r.bottleneck == "host staging"
    assert r.submit_s >= r.wait_s >= 0
    assert isinstance(r.notes, str)
    assert r.slot_records == 1000  # a fixed chunk: the slots hold what the run was cut into
    slot_bytes = -(-1000 * 4 // 256) * 256  # float32 each way, slots 256-byte aligned
    assert r.pinned_bytes == 4 * 2 * slot_bytes

    d = r.to_dict()
    assert d["chunks"] == 11 and d["engines"][2]["name"] == "sinmix"
    assert not any(k.startswith("_") for k in d)
    json.dumps(d)  # plain values only


def test_trace_and_svg(ctx: sp.Context, rng: np.random.Generator, tmp_path: Path) -> None:
    p = ctx.pipeline([sp.sinmix(1)], np.float32, chunk_records=500, keep_timeline=True)
    _, r = p.run(rng.uniform(-1, 1, 2600).astype(np.float32), report=True)
    assert r.has_timeline
    # A later run with a report has its own timeline; the first report keeps its run's,
    # also once the pipeline is gone.
    _, r2 = p.run(np.ones(10, np.float32), report=True)
    p.run(np.ones(10, np.float32))  # a run without a report changes neither
    del p
    gc.collect()
    trace = tmp_path / "run.json"
    r.save_trace(trace)
    doc = json.loads(trace.read_text())
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    assert len(events) == 6 * 5  # one per chunk per engine
    assert any(e["name"] == "sinmix c5" for e in events)
    svg = tmp_path / "run.svg"
    r.save_svg(str(svg))
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    r2.save_svg(tmp_path / "new.svg")
    r2.save_trace(tmp_path / "new.json")
    assert json.loads((tmp_path / "new.json").read_text())["otherData"]["records"] == 10


def test_no_timeline_without_keep_timeline(host_ctx: sp.Context, tmp_path: Path) -> None:
    """The default keeps no timeline: the report says so, and saving one says what to set."""
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    _, r = p.run(np.ones(100, np.float32), report=True)
    assert not r.has_timeline and r.timed_chunks > 0  # timed all the same
    for save in (r.save_trace, r.save_svg):
        with pytest.raises(sp.InvalidArgument, match="keep_timeline=True"):
            save(tmp_path / "none")
    assert not (tmp_path / "none").exists()
    with pytest.raises(sp.InvalidArgument, match="keep_timeline"):
        host_ctx.pipeline(sp.sinmix(1), np.float32, keep_timeline=1)  # type: ignore[arg-type]
    with pytest.raises(sp.InvalidArgument, match="keep_timeline is for one pipeline"):
        host_ctx.group(2).pipeline(sp.sinmix(1), np.float32, keep_timeline=True)


def test_trace_failures(host_ctx: sp.Context, tmp_path: Path) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32, keep_timeline=True)
    _, r = p.run(np.zeros(0, np.float32), report=True)
    assert r.records == 0 and r.chunks == 0 and not r.has_timeline
    with pytest.raises(sp.InvalidArgument, match="no timeline"):
        r.save_trace(tmp_path / "empty.json")  # no records: nothing to draw
    _, r = p.run(np.ones(100, np.float32), report=True)
    with pytest.raises(OSError):
        r.save_trace(tmp_path / "no-such-dir" / "t.json")
    if Path("/dev/full").exists():
        with pytest.raises((sp.BackendError, OSError)):
            r.save_svg("/dev/full")


def test_report_false_returns_the_array(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(0), np.float32)
    y = p.run(np.ones(3, np.float32))
    assert isinstance(y, np.ndarray) and y.shape == (3,)


def test_timeline_is_the_configs(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    """timeline="off": a report without per-engine figures, which its notes say; a mode that
    does not exist is refused before anything is made."""
    p = host_ctx.pipeline([sp.sinmix(2)], np.float32, chunk_records=1000, timeline="off")
    x = rng.uniform(-1, 1, 5_000).astype(np.float32)
    y, r = p.run(x, report=True)
    np.testing.assert_array_equal(y, host_ctx.pipeline([sp.sinmix(2)], np.float32).run(x))
    assert r.engines == [] or len(r.engines) == 0
    assert "timeline is off" in r.notes and r.records == 5_000
    _, timed = host_ctx.pipeline([sp.sinmix(2)], np.float32, chunk_records=1000).run(x, report=True)
    assert [e.name for e in timed.engines][1] == "h2d"
    with pytest.raises(sp.InvalidArgument, match="timeline"):
        host_ctx.pipeline([sp.sinmix(2)], np.float32, timeline="sometimes")
