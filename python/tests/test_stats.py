"""Live counters (Pipeline.stats, Stream.stats): read from another thread while runs and a
stream go, they only grow within a run, and the final counts are the records and bytes run;
a new run starts from zero."""

from __future__ import annotations

import threading

import numpy as np

import streampipe as sp


def read_while(target, read) -> list[sp.Stats]:
    """Calls read() in a tight loop on another thread while target() runs."""
    seen: list[sp.Stats] = []
    done = threading.Event()

    def loop() -> None:
        while not done.is_set():
            seen.append(read())

    t = threading.Thread(target=loop)
    t.start()
    try:
        target()
    finally:
        done.set()
        t.join()
    return seen


def assert_grows(seen: list[sp.Stats]) -> None:
    for was, now in zip(seen, seen[1:]):
        if now.run != was.run:
            continue
        assert now.records_done >= was.records_done
        assert now.elapsed_s >= was.elapsed_s
        for a, b in zip(was.engines, now.engines):
            assert b.records >= a.records and b.bytes >= a.bytes


def test_pipeline_stats_during_and_after_runs(ctx: sp.Context) -> None:
    n, chunk = 1 << 16, 1 << 10
    p = ctx.pipeline(sp.sinmix(50), np.float32, chunk_records=chunk, depth=4)
    assert p.stats().run == 0
    x = np.arange(n, dtype=np.float32)
    seen = read_while(lambda: [p.run(x) for _ in range(2)], p.stats)
    assert len(seen) > 1
    assert_grows(seen)
    s = p.stats()
    assert isinstance(s, sp.Stats) and s.run == 2 and not s.active
    assert s.records_total == n and s.records_done == n and s.progress == 1.0
    assert s.bytes_done == 4 * n and s.errors == 0 and s.chunks_in_flight == 0
    names = [e.name for e in s.engines]
    assert names[0] == "stage-in" and names[1] == "h2d" and names[-1] == "stage-out"
    assert all(e.records == n for e in s.engines)  # pageable: both staging engines work
    h2d = s.engines[1]
    assert not h2d.busy_measured and h2d.busy_s == 0.0  # no report: nothing timed
    assert s.hidden_transfer is None and s.timed_chunks == 0
    assert s.engines[0].busy_measured and s.engines[0].busy_s > 0.0
    assert s.pinned_bytes > 0


def test_run_with_report_shows_the_gpu_engines(ctx: sp.Context) -> None:
    """A sampled run with a report: the GPU engines' busy time and hidden transfer are seen
    while it goes and equal the report's once it has ended (same estimator and sums)."""
    n, chunk = 640 * 256, 256
    p = ctx.pipeline(sp.sinmix(20), np.float32, chunk_records=chunk, depth=4)
    x = np.arange(n, dtype=np.float32)
    got: list = []
    seen = read_while(lambda: got.append(p.run(x, report=True)), p.stats)
    assert_grows(seen)
    assert any(s.active and s.hidden_transfer is not None for s in seen)
    _, report = got[0]
    s = p.stats()
    assert 0 < s.timed_chunks == report.timed_chunks < n // chunk  # sampled
    assert s.hidden_transfer is not None
    assert abs(s.hidden_transfer - report.hidden_transfer) <= 1e-12
    by_name = {e.name: e for e in report.engines}
    for e in s.engines[1:-1]:  # h2d, sinmix, d2h
        assert e.busy_measured
        assert abs(e.busy_s - by_name[e.name].busy_s) <= 1e-9 * by_name[e.name].busy_s


def test_stream_stats(ctx: sp.Context) -> None:
    p = ctx.pipeline(sp.sinmix(20), np.float32, chunk_records=512, depth=4)
    x = np.ones(10_000, dtype=np.float32)
    with p.stream(max_in_flight=3) as s:
        seen = read_while(lambda: [f.result() for f in [s.submit(x) for _ in range(6)]],
                          s.stats)
        assert_grows(seen)
        now = s.stats()
        assert now.active and now.records_total == 6 * x.size
        assert now.records_done == 6 * x.size and now.batches_in_flight == 0
    assert p.stats().records_done == 6 * x.size and not p.stats().active
