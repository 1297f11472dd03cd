"""Streams (Pipeline.stream): batches of every size through one ring, every element checked
against the reference; futures and imap in order; a failing Python stage fails its batch and
the stream goes on; max_in_flight held to; bad input refused at submit; closing drains."""

from __future__ import annotations

import gc
import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_close, assert_sinmix, import_or_skip, poisoned, sinmix_reference

MARK = np.float32(-7777.0)  # an input value the fragile stage raises on


class Boom(Exception):
    pass


def fragile_copy(inp: np.ndarray, out: np.ndarray) -> None:
    """Copies its input, and raises Boom on a chunk holding MARK."""
    if np.any(inp == MARK):
        raise Boom("the marked batch")
    out[:] = inp


def random_batch(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.uniform(-100.0, 100.0, n).astype(np.float32)


def batch_sizes(rng: np.random.Generator, count: int, chunk: int) -> list[int]:
    """Random sizes from 0 to several chunks, with 0, 1 and the chunk's edges among them."""
    sizes = [int(n) for n in rng.integers(0, 4 * chunk, count)]
    sizes[:: max(1, count // 8)] = [0] * len(sizes[:: max(1, count // 8)])
    sizes[1:6] = [1, chunk - 1, chunk, chunk + 1, 0]
    return sizes


@pytest.mark.parametrize("max_in_flight", [1, 4, 16])
def test_many_batches_of_random_sizes(ctx: sp.Context, rng: np.random.Generator,
                                      max_in_flight: int) -> None:
    iters, chunk = 5, 500
    p = ctx.pipeline(sp.sinmix(iters), np.float32, chunk_records=chunk, depth=4)
    sizes = batch_sizes(rng, 120, chunk)
    xs = [random_batch(rng, n) for n in sizes]
    outs = [poisoned((n,), np.float32) if i % 3 else None for i, n in enumerate(sizes)]
    resolved: list[int] = []
    with p.stream(max_in_flight=max_in_flight) as s:
        futures = []
        for i, (x, out) in enumerate(zip(xs, outs)):
            f = s.submit(x, out=out)
            assert isinstance(f, Future) and f.index == i and f.records == sizes[i]
            # (no bound on s.in_flight here: room is the library's, and a batch complete
            # there whose future the event thread has not resolved yet takes none)
            f.add_done_callback(lambda f: resolved.append(f.index))
            futures.append(f)
        for i, f in enumerate(futures):
            y = f.result(timeout=60)
            if outs[i] is not None:
                assert y is outs[i]
            assert_sinmix(y, xs[i], iters)
    assert resolved == list(range(len(sizes)))  # DONE in submission order
    assert [f.first_record for f in futures] == list(np.cumsum([0] + sizes[:-1]))
    report = s.report
    assert report is not None and report.batches == len(sizes) and report.records == sum(sizes)
    assert s.closed and s.in_flight == 0


def test_graph_mode_stream(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=256, depth=8, graph="on")
    with p.stream(max_in_flight=6) as s:
        xs = [random_batch(rng, int(n)) for n in rng.integers(0, 256 * 20, 30)]
        futures = [s.submit(x, out=poisoned(x.shape, np.float32)) for x in xs]
        for x, f in zip(xs, futures):
            assert_sinmix(f.result(timeout=60), x, 2)


def test_pinned_batches(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline(sp.sinmix(3), np.float32, chunk_records=1000)
    n = 10_000
    pins = [ctx.pinned_empty((n,), np.float32) for _ in range(3)]
    outs = [ctx.pinned_empty((n,), np.float32) for _ in range(3)]
    with p.stream(max_in_flight=3) as s:
        for round_ in range(4):
            futures = []
            for x, out in zip(pins, outs):
                x[:] = random_batch(rng, n)
                out[:] = np.nan
                futures.append(s.submit(x, out=out))
            for x, out, f in zip(pins, outs, futures):
                assert f.result(timeout=60) is out
                assert_sinmix(out, x, 3)


def test_in_place_and_python_stages(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline([sp.Stage("copy", np.float32, host=fragile_copy), sp.sinmix(4)],
                          np.float32, chunk_records=64)
    with p.stream() as s:
        xs = [random_batch(rng, int(n)) for n in rng.integers(0, 1000, 40)]
        wants = [x.copy() for x in xs]
        futures = [s.submit(x, out=x) for x in xs]  # in place
        for x, want, f in zip(xs, wants, futures):
            assert f.result(timeout=60) is x
            assert_sinmix(x, want, 4)


def test_imap_with_a_generator(ctx: sp.Context, rng: np.random.Generator) -> None:
    max_in_flight, iters = 3, 2
    p = ctx.pipeline(sp.sinmix(iters), np.float32, chunk_records=300)
    kept: list[np.ndarray] = []
    pulled = [0]

    def batches():
        for n in rng.integers(0, 2000, 50):
            x = random_batch(rng, int(n))
            kept.append(x)
            pulled[0] += 1
            yield x

    with p.stream(max_in_flight=max_in_flight) as s:
        consumed = 0
        for y in s.imap(batches()):
            assert s.in_flight <= max_in_flight
            # the generator runs ahead of the consumer by the batches in flight and the one
            # taken while they run
            assert pulled[0] - consumed <= max_in_flight + 1
            assert_sinmix(y, kept[consumed], iters)
            consumed += 1
    assert consumed == pulled[0] == 50


def test_imap_of_nothing(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with p.stream() as s:
        assert list(s.imap([])) == []
        assert [y.shape for y in s.imap(iter([np.zeros(0, np.float32)]))] == [(0,)]


def test_max_in_flight_is_held_to(host_ctx: sp.Context) -> None:
    gate = threading.Event()
    calls = [0]

    def gated(inp: np.ndarray, out: np.ndarray) -> None:
        calls[0] += 1
        gate.wait(30)
        out[:] = inp

    p = host_ctx.pipeline(sp.Stage("gated", np.float32, host=gated), np.float32,
                          chunk_records=10)
    with p.stream(max_in_flight=2) as s:
        futures = [s.submit(np.full(10, i, np.float32)) for i in range(2)]
        assert s.in_flight == 2
        with pytest.raises(sp.WouldBlock, match="max_in_flight"):
            s.submit(np.ones(10, np.float32), block=False)
        started = time.monotonic()
        with pytest.raises(sp.Timeout):
            s.submit(np.ones(10, np.float32), timeout=0.05)
        assert time.monotonic() - started >= 0.05
        third: list[Future] = []
        submitter = threading.Thread(target=lambda: third.append(s.submit(np.full(10, 2, np.float32))))
        submitter.start()
        submitter.join(0.3)
        assert submitter.is_alive() and not third  # waiting for room
        assert s.in_flight == 2
        gate.set()
        submitter.join(30)
        assert not submitter.is_alive()
        futures += third
        for i, f in enumerate(futures):
            np.testing.assert_array_equal(f.result(timeout=30), np.full(10, i, np.float32))


def test_room_is_made_by_the_library_not_by_resolving(host_ctx: sp.Context) -> None:
    """max_in_flight is the library's rule: a batch is held from its submit until it is
    complete there, whether or not its DONE has been taken. With the event thread kept in a
    done callback, two batches complete in the library but are not resolved: a third submit
    finds room at once, and with it three futures are unresolved."""
    gate, in_callback, last_done = threading.Event(), threading.Event(), threading.Event()

    def copy(inp: np.ndarray, out: np.ndarray) -> None:
        out[:] = inp
        if inp.size and inp[0] == 2:
            last_done.set()

    def wait_at_gate(_: Future) -> None:
        in_callback.set()
        gate.wait(30)

    p = host_ctx.pipeline(sp.Stage("copy", np.float32, host=copy), np.float32,
                          chunk_records=10)
    with p.stream(max_in_flight=2) as s:
        first = s.submit(np.zeros(10, np.float32))
        first.add_done_callback(wait_at_gate)
        assert in_callback.wait(30)
        futures = [s.submit(np.full(10, i, np.float32)) for i in (1, 2)]
        assert last_done.wait(30)
        # the batches' copies out complete; their DONE waits to be taken, and the library
        # no longer holds them: no WouldBlock
        futures.append(s.submit(np.full(10, 3, np.float32), timeout=30))
        assert not any(f.done() for f in futures)
        gate.set()
        for i, f in enumerate(futures, 1):
            np.testing.assert_array_equal(f.result(timeout=30), np.full(10, i, np.float32))
        np.testing.assert_array_equal(first.result(), np.zeros(10, np.float32))


def test_failing_stage_fails_its_batch_only(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline([sp.Stage("fragile", np.float32, host=fragile_copy), sp.sinmix(3)],
                          np.float32, chunk_records=100, depth=4)
    xs = [random_batch(rng, int(n)) for n in rng.integers(1, 500, 12)]
    xs[5][len(xs[5]) // 2] = MARK
    # One batch in flight at a time: exactly the marked one fails.
    with p.stream(max_in_flight=1) as s:
        futures = [s.submit(x, out=poisoned(x.shape, np.float32)) for x in xs]
        for i, (x, f) in enumerate(zip(xs, futures)):
            if i != 5:
                assert_sinmix(f.result(timeout=60), x, 3)
                continue
            with pytest.raises(sp.StageError) as info:
                f.result(timeout=60)
            err = info.value
            assert err.status == -5 and isinstance(err.__cause__, Boom)
            text = str(err)
            assert "batch 5" in text and "'fragile'" in text and "Boom: the marked batch" in text
            assert isinstance(f.exception(), sp.StageError)
            assert f.input_released.done()


def test_failing_stage_with_batches_in_flight(host_ctx: sp.Context,
                                             rng: np.random.Generator) -> None:
    p = host_ctx.pipeline([sp.Stage("fragile", np.float32, host=fragile_copy), sp.sinmix(3)],
                          np.float32, chunk_records=100, depth=4)
    for _ in range(3):
        xs = [random_batch(rng, int(n)) for n in rng.integers(1, 500, 8)]
        xs[2][0] = MARK
        with p.stream(max_in_flight=8) as s:
            futures = [s.submit(x) for x in xs]
            for i, (x, f) in enumerate(zip(xs, futures)):
                if i < 2:
                    assert_sinmix(f.result(timeout=60), x, 3)
                elif i == 2:
                    with pytest.raises(sp.StageError, match="batch 2") as info:
                        f.result(timeout=60)
                    assert isinstance(info.value.__cause__, Boom)
                else:  # in flight behind it: cancelled, or finished before the failure
                    exc = f.exception(timeout=60)
                    if exc is None:
                        assert_sinmix(f.result(), x, 3)
                    else:
                        assert isinstance(exc, sp.Cancelled) and exc.status == -8, exc
                        assert f"batch {i} " in str(exc) and "batch 2" in str(exc), exc
            # the stream goes on
            later = [random_batch(rng, 333) for _ in range(5)]
            for x, f in zip(later, [s.submit(x) for x in later]):
                assert_sinmix(f.result(timeout=60), x, 3)
        assert s.report is not None and s.report.batches == 13


def test_imap_raises_at_the_failed_batch(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(sp.Stage("fragile", np.float32, host=fragile_copy), np.float32,
                          chunk_records=50)
    xs = [random_batch(rng, 120) for _ in range(6)]
    xs[3][7] = MARK
    got = []
    with p.stream(max_in_flight=1) as s:
        with pytest.raises(sp.StageError) as info:
            for y in s.imap(xs):
                got.append(y)
        assert isinstance(info.value.__cause__, Boom)
        assert len(got) == 3
        for x, y in zip(xs, got):
            np.testing.assert_array_equal(x, y)
        # the stream is still usable
        np.testing.assert_array_equal(s.submit(xs[0]).result(timeout=30), xs[0])


def test_keyboard_interrupt_in_a_stage(host_ctx: sp.Context) -> None:
    def interrupted(inp: np.ndarray, out: np.ndarray) -> None:
        raise KeyboardInterrupt

    p = host_ctx.pipeline(sp.Stage("ctrl-c", np.float32, host=interrupted), np.float32)
    with p.stream() as s:
        f = s.submit(np.ones(5, np.float32))
        with pytest.raises(KeyboardInterrupt):
            f.result(timeout=30)


def test_bad_input_raises_at_submit(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=64)
    x = random_batch(rng, 100)
    with p.stream(max_in_flight=2) as s:
        out = poisoned((100,), np.float32)
        bad = [
            (x.astype(np.float64), None, "float64"),
            (x.reshape(10, 10), None, "shape"),
            (x, poisoned((99,), np.float32), "shape"),
            (x, poisoned((100,), np.float64), "float64"),
            (x, out[::-1], "C-contiguous"),
            (x, np.frombuffer(bytes(400), np.float32), "read-only"),
            ("not an array", None, "must be an array"),
        ]
        for xi, oi, match in bad:
            with pytest.raises(sp.InvalidArgument, match=match):
                s.submit(xi, out=oi)
            assert s.in_flight == 0
        overlap = np.arange(200, dtype=np.float32)
        with pytest.raises(sp.InvalidArgument, match="overlap"):  # the library's words
            s.submit(overlap[:100], out=overlap[50:150])
        assert np.isnan(out).all()  # untouched
        assert s.in_flight == 0
        assert_sinmix(s.submit(x, out=out).result(timeout=30), x, 2)
    assert s.report is not None and s.report.batches == 1


def test_close_with_pending_work(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    def slow(inp: np.ndarray, out: np.ndarray) -> None:
        time.sleep(0.01)
        out[:] = inp

    p = host_ctx.pipeline([sp.Stage("slow", np.float32, host=slow), sp.sinmix(2)], np.float32,
                          chunk_records=50)
    s = p.stream(max_in_flight=6)
    xs = [random_batch(rng, 170) for _ in range(6)]
    futures = [s.submit(x) for x in xs]
    assert not all(f.done() for f in futures)
    report = s.close()
    assert all(f.done() for f in futures)
    for x, f in zip(xs, futures):
        assert_sinmix(f.result(), x, 2)
    assert report.batches == 6 and report.records == 6 * 170
    assert s.close() is report  # a second close: the same report
    assert "no per-operation timings" in report.notes


def test_use_after_close(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with p.stream() as s:
        pass
    assert s.closed
    with pytest.raises(sp.InvalidArgument, match="closed"):
        s.submit(np.ones(3, np.float32))
    with pytest.raises(sp.InvalidArgument, match="closed"):
        next(s.imap([np.ones(3, np.float32)]))
    with pytest.raises(sp.InvalidArgument, match="no timeline"):
        assert s.report is not None
        s.report.save_trace("never.json")
    assert_sinmix(p.run(np.ones(3, np.float32)), np.ones(3, np.float32), 1)


def test_one_stream_and_no_runs_while_open(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with p.stream() as s:
        with pytest.raises(sp.InvalidArgument, match="open stream"):
            p.run(np.ones(3, np.float32))
        with pytest.raises(sp.InvalidArgument, match="open stream"):
            p.stream()
        s.submit(np.ones(3, np.float32)).result(timeout=30)
    p.run(np.ones(3, np.float32))
    with p.stream() as s2:  # and another stream after
        assert_sinmix(s2.submit(np.ones(3, np.float32)).result(timeout=30),
                      np.ones(3, np.float32), 1)


def test_bad_stream_arguments(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(sp.InvalidArgument, match="max_in_flight"):
            p.stream(max_in_flight=bad)  # type: ignore[arg-type]
    with pytest.raises(sp.InvalidArgument, match="max_in_flight"):
        p.stream(max_in_flight=100_000)  # the library's limit
    with pytest.raises(sp.InvalidArgument, match="input_released"):
        p.stream(input_released="yes")  # type: ignore[arg-type]
    p.run(np.ones(3, np.float32))  # nothing was left claimed


def test_input_released(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(sp.sinmix(20), np.float32, chunk_records=200)
    for early in (True, False):
        order: list[tuple[str, int]] = []
        lock = threading.Lock()

        def note(what: str, i: int):
            def callback(_f: Future) -> None:
                with lock:
                    order.append((what, i))
            return callback

        with p.stream(max_in_flight=4, input_released=early) as s:
            xs = [random_batch(rng, 1000) for _ in range(10)]
            futures = []
            for i, x in enumerate(xs):
                f = s.submit(x)
                f.input_released.add_done_callback(note("in", i))
                f.add_done_callback(note("done", i))
                futures.append(f)
            for x, f in zip(xs, futures):
                assert_sinmix(f.result(timeout=60), x, 20)
                assert f.input_released.done() and f.input_released.result() is None
        for i in range(10):
            assert order.index(("in", i)) < order.index(("done", i))


def test_submit_from_a_done_callback(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=100)
    chained: list[Future] = []
    errors: list[BaseException] = []
    xs = [random_batch(rng, 300) for _ in range(4)]

    def resubmit(f: Future) -> None:
        try:
            chained.append(s.submit(f.result()))  # room: the batch done has left the stream
        except BaseException as exc:  # checked below
            errors.append(exc)
        try:
            s.close()
        except sp.InvalidArgument as exc:
            errors.append(exc)

    with p.stream(max_in_flight=1) as s:
        first = s.submit(xs[0])
        first.add_done_callback(resubmit)
        first.result(timeout=30)
        deadline = time.monotonic() + 30
        while not chained and time.monotonic() < deadline:
            time.sleep(0.001)
    assert len(errors) == 1 and "done callback" in str(errors[0]), errors
    assert_sinmix(chained[0].result(timeout=30), sinmix_reference(xs[0], 2), 2)


def test_threads_submitting_at_once(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(sp.sinmix(3), np.float32, chunk_records=128)
    results: dict[tuple[int, int], tuple[np.ndarray, Future]] = {}
    errors: list[BaseException] = []
    inputs = {(t, i): random_batch(rng, int(n))
              for t in range(4) for i, n in enumerate(rng.integers(0, 700, 25))}

    with p.stream(max_in_flight=5) as s:
        def work(t: int) -> None:
            try:
                for i in range(25):
                    results[(t, i)] = (inputs[(t, i)], s.submit(inputs[(t, i)]))
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not errors
    indices = sorted(f.index for _, f in results.values())
    assert indices == list(range(100))
    for x, f in results.values():
        assert_sinmix(f.result(), x, 3)


def test_a_dropped_stream_is_closed(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    s = p.stream()
    f = s.submit(np.ones(1000, np.float32))
    del s
    gc.collect()
    assert_sinmix(f.result(timeout=30), np.ones(1000, np.float32), 1)
    deadline = time.monotonic() + 30
    while True:  # the event thread closes it and gives the pipeline back
        try:
            p.run(np.ones(3, np.float32))
            break
        except sp.InvalidArgument:
            assert time.monotonic() < deadline
            time.sleep(0.01)


def test_other_threads_run_while_waiting(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    x = rng.uniform(-1, 1, 1 << 15).astype(np.float32)
    p = host_ctx.pipeline(sp.sinmix(1500), np.float32, chunk_records=1 << 12)
    ticks = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        with p.stream() as s:
            time.sleep(0.01)
            before = ticks[0]
            started = time.perf_counter()
            y = s.submit(x).result(timeout=60)
            took = time.perf_counter() - started
            during = ticks[0] - before
    finally:
        stop.set()
        counter.join()
    assert_sinmix(y, x, 1500)
    assert took > 0.05, f"the batch took {took:.3f} s: too short to tell"
    assert during > 1000, f"the counter ticked {during} times in {took:.3f} s"


def test_torch_cpu_tensors(ctx: sp.Context, rng: np.random.Generator) -> None:
    torch = import_or_skip("torch")
    p = ctx.pipeline(sp.sinmix(3), np.float32, chunk_records=333)
    xs = [torch.from_numpy(random_batch(rng, int(n))) for n in rng.integers(0, 3000, 10)]
    outs = [torch.full(x.shape, float("nan")) for x in xs]
    with p.stream() as s:
        futures = [s.submit(x, out=o) for x, o in zip(xs, outs)]
        for x, o, f in zip(xs, outs, futures):
            assert f.result(timeout=60) is o
            assert_sinmix(o.numpy(), x.numpy(), 3)


def test_torch_cuda_stage_in_a_stream(cuda_ctx: sp.Context, rng: np.random.Generator) -> None:
    torch = import_or_skip("torch")
    seen: list[tuple[int, int, int]] = []

    def affine(chunk: sp.Chunk) -> None:
        seen.append((chunk.index, chunk.first_record, chunk.records))
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            x = torch.from_dlpack(chunk.input)
            torch.add(x * 3.0, 1.0, out=torch.from_dlpack(chunk.output))

    p = cuda_ctx.pipeline([sp.sinmix(2), sp.Stage("affine", np.float32, cuda=affine)],
                          np.float32, chunk_records=1000)
    xs = [random_batch(rng, int(n)) for n in rng.integers(0, 5000, 20)]
    with p.stream(max_in_flight=4) as s:
        futures = [s.submit(x, out=poisoned(x.shape, np.float32)) for x in xs]
        for x, f in zip(xs, futures):
            want = sinmix_reference(x, 2) * np.float32(3) + np.float32(1)
            assert_close(f.result(timeout=60), want, 2)
    # chunks are numbered from the stream's start and never straddle two batches
    assert [c[0] for c in seen] == list(range(len(seen)))
    bounds = {f.first_record: f.first_record + f.records for f in futures}
    for _, first, records in seen:
        start = max(b for b in bounds if b <= first)
        assert first + records <= bounds[start]
