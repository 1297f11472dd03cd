"""What the library decides and Python only reports: which failure a run or a batch keeps
(the earliest failed chunk's, by the cause its Python stage's exception is kept under), the
records a batch starts at, a submit's wait for room, and cancels (BatchFuture.cancel, imap
stopping early, cancel_all). Stages behind a threading.Event make every race certain."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError, Future, wait

import numpy as np
import pytest

import streampipe as sp
from helpers import poisoned


class Boom(Exception):
    pass


def racing_failures(first_fails_last: bool = True):
    """A stage (run it with streams=2, chunks of 10 records) that fails its chunks 0 and 1:
    chunk 1 at once, chunk 0 only after chunk 1 has raised, so the later chunk's exception
    is the older one."""
    raised_late = threading.Event()

    def stage(inp: np.ndarray, out: np.ndarray) -> None:
        first = int(inp[0]) // 10  # records hold their numbers: the chunk's index
        if first == 1:
            raised_late.set()
            raise Boom("chunk 1")
        if first == 0:
            assert raised_late.wait(10), "chunks 0 and 1 did not run at once"
            time.sleep(0.02)  # chunk 1's failure is recorded first
            raise Boom("chunk 0")
        out[:] = inp

    return stage, raised_late


def test_run_keeps_the_earliest_chunks_exception(host_ctx: sp.Context) -> None:
    stage, raised_late = racing_failures()
    p = host_ctx.pipeline(sp.Stage("racing", np.float32, host=stage, streams=2), np.float32,
                          chunk_records=10, depth=4)
    x = np.arange(40, dtype=np.float32)
    for _ in range(3):
        raised_late.clear()
        with pytest.raises(sp.StageError) as info:
            p.run(x)
        assert raised_late.is_set()
        assert isinstance(info.value.__cause__, Boom)
        assert str(info.value.__cause__) == "chunk 0", str(info.value)
        assert "chunk 0" in str(info.value) and "raised Boom: chunk 0" in str(info.value)
        assert len(p._causes) == 0  # every id of the run dropped


def test_stream_batch_keeps_the_earliest_chunks_exception(host_ctx: sp.Context) -> None:
    stage, raised_late = racing_failures()
    p = host_ctx.pipeline(sp.Stage("racing", np.float32, host=stage, streams=2), np.float32,
                          chunk_records=10, depth=4)
    with p.stream(max_in_flight=4) as s:
        f = s.submit(np.arange(40, dtype=np.float32))
        with pytest.raises(sp.StageError, match="batch 0") as info:
            f.result(timeout=30)
        assert raised_late.is_set()
        assert str(info.value.__cause__) == "chunk 0", str(info.value)
        ok = s.submit(np.arange(40, 80, dtype=np.float32))  # chunks 4.. of the stream
        np.testing.assert_array_equal(ok.result(timeout=30), np.arange(40, 80, dtype=np.float32))
        assert len(p._causes) == 0
    assert len(p._causes) == 0


def test_failures_in_many_batches_leave_nothing_behind(host_ctx: sp.Context) -> None:
    def odd_batches_fail(inp: np.ndarray, out: np.ndarray) -> None:
        if inp.size and int(inp[0]) % 2:
            raise Boom(f"batch of {int(inp[0])}")
        out[:] = inp

    p = host_ctx.pipeline(sp.Stage("odd", np.float32, host=odd_batches_fail, streams=3),
                          np.float32, chunk_records=4, depth=6)
    with p.stream(max_in_flight=8) as s:
        futures = [s.submit(np.full(20, i, np.float32)) for i in range(40)]
        for i, f in enumerate(futures):
            exc = f.exception(timeout=30)
            if exc is not None and isinstance(exc, sp.StageError):
                assert str(exc.__cause__) == f"batch of {i}"
    assert len(p._causes) == 0
    for _ in range(5):
        with pytest.raises(sp.StageError):
            p.run(np.ones(64, np.float32))
        assert len(p._causes) == 0


def test_first_record_is_the_librarys(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32, chunk_records=64)
    sizes = [int(n) for n in rng.integers(0, 300, 30)]
    with p.stream(max_in_flight=5) as s:
        futures = [s.submit(np.ones(n, np.float32)) for n in sizes]
        wait(futures, timeout=60)
    assert [f.first_record for f in futures] == [sum(sizes[:i]) for i in range(len(sizes))]


def gated_pipeline(host_ctx: sp.Context, seen: list[int], gate: threading.Event,
                   entered: threading.Event) -> sp.Pipeline:
    """One chunk per batch of 10 records, each record its batch's number; the stage waits at
    the gate for every batch but 0, in a ring of two slots."""

    def gated(inp: np.ndarray, out: np.ndarray) -> None:
        seen.append(int(inp[0]))
        if inp[0] != 0:
            entered.set()
            assert gate.wait(30)
        out[:] = inp

    p = host_ctx.pipeline(sp.Stage("gated", np.float32, host=gated), np.float32,
                          chunk_records=10, depth=2)
    assert p.depth == 2
    return p


def test_cancel_queued_batches(host_ctx: sp.Context) -> None:
    seen: list[int] = []
    gate, entered = threading.Event(), threading.Event()
    p = gated_pipeline(host_ctx, seen, gate, entered)
    called: list[int] = []
    with p.stream(max_in_flight=8) as s:
        outs = [poisoned((10,), np.float32) for _ in range(7)]
        futures = [s.submit(np.full(10, i, np.float32), out=outs[i]) for i in range(7)]
        for f in futures:
            f.add_done_callback(lambda f: called.append(f.index))
        np.testing.assert_array_equal(futures[0].result(timeout=30), outs[0])
        assert entered.wait(30)  # batch 1 in the stage, 2 in the other slot, 3 being fed
        assert futures[0].cancel() is False  # done
        # Batches 4.. have not started: certainly cancelled.
        for f in futures[4:]:
            assert f.cancel() is True
            assert f.cancel() is True  # asked again: still True
        assert not any(f.done() for f in futures[1:])
        gate.set()
        for i in (1, 2):
            np.testing.assert_array_equal(futures[i].result(timeout=30), np.full(10, i))
        for i in (4, 5, 6):
            f = futures[i]
            with pytest.raises(CancelledError):
                f.result(timeout=30)
            assert f.cancelled() and f.done() and not f.running()
            assert f.input_released.done()
            assert np.isnan(outs[i]).all()  # left as it was
        done, not_done = wait(futures, timeout=30)
        assert not not_done
        # the stream goes on
        np.testing.assert_array_equal(s.submit(np.full(10, 9, np.float32)).result(timeout=30),
                                      np.full(10, 9))
    assert not {4, 5, 6} & set(seen)
    assert sorted(called) == list(range(7))
    assert s.report is not None


def test_cancel_all(host_ctx: sp.Context) -> None:
    seen: list[int] = []
    gate, entered = threading.Event(), threading.Event()
    p = gated_pipeline(host_ctx, seen, gate, entered)
    with p.stream(max_in_flight=8) as s:
        futures = [s.submit(np.full(10, i, np.float32)) for i in range(1, 7)]
        assert entered.wait(30)
        assert s.cancel_all() == 6
        gate.set()
        wait(futures, timeout=30)
        assert all(f.cancelled() for f in futures[3:])  # never started
        for f in futures[:3]:  # in the ring, or being fed: finished or cancelled
            assert f.cancelled() or f.result() is not None
    assert not {4, 5, 6} & set(seen)


def test_submit_times_out_in_the_library(host_ctx: sp.Context) -> None:
    seen: list[int] = []
    gate, entered = threading.Event(), threading.Event()
    p = gated_pipeline(host_ctx, seen, gate, entered)
    with p.stream(max_in_flight=1) as s:
        held = s.submit(np.full(10, 1, np.float32))
        assert entered.wait(30)
        started = time.monotonic()
        with pytest.raises(sp.Timeout, match="no room within"):
            s.submit(np.ones(10, np.float32), timeout=0.1)
        assert time.monotonic() - started >= 0.1
        with pytest.raises(sp.WouldBlock, match="max_in_flight"):
            s.submit(np.ones(10, np.float32), block=False)
        assert s.in_flight == 1
        gate.set()
        np.testing.assert_array_equal(held.result(timeout=30), np.full(10, 1))


def test_imap_stopping_early_cancels_the_rest(host_ctx: sp.Context) -> None:
    seen: list[int] = []
    gate, entered = threading.Event(), threading.Event()
    p = gated_pipeline(host_ctx, seen, gate, entered)
    pulled: list[int] = []

    def batches():
        for i in range(20):
            pulled.append(i)
            yield np.full(10, i, np.float32)

    with p.stream(max_in_flight=6) as s:
        outputs = s.imap(batches())
        np.testing.assert_array_equal(next(outputs), np.zeros(10))
        assert entered.wait(30)
        outputs.close()  # GeneratorExit: batches 1..5 are cancelled
        gate.set()
    assert len(pulled) <= 7
    assert not {4, 5} & set(seen), seen  # never started
    assert max(seen) <= 3


def test_imap_error_cancels_the_rest(host_ctx: sp.Context) -> None:
    calls: list[int] = []

    def fails_first(inp: np.ndarray, out: np.ndarray) -> None:
        calls.append(int(inp[0]))
        if inp[0] == 0:
            time.sleep(0.05)
            raise Boom("first")
        out[:] = inp

    p = host_ctx.pipeline(sp.Stage("f", np.float32, host=fails_first), np.float32,
                          chunk_records=10, depth=2)
    with p.stream(max_in_flight=8) as s:
        with pytest.raises(sp.StageError) as info:
            list(s.imap(np.full(10, i, np.float32) for i in range(8)))
        assert isinstance(info.value.__cause__, Boom)
    assert s.report is not None
    assert len(p._causes) == 0


def test_cancel_after_close(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with p.stream() as s:
        f = s.submit(np.ones(8, np.float32))
    assert f.done() and f.cancel() is False and not f.cancelled()
    assert isinstance(f, Future)
