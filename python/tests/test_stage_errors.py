"""A Python stage that raises fails the run with StageError naming the stage and the chunk,
chained to what it raised; nothing runs after, and the pipeline runs correctly again."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix, poisoned


class Boom(Exception):
    pass


class Fragile:
    """Copies its input, and raises Boom at call bad_chunk + 1 while armed."""

    def __init__(self, bad_chunk: int) -> None:
        self.bad_chunk = bad_chunk
        self.armed = True
        self.calls: list[int] = []

    def __call__(self, inp: np.ndarray, out: np.ndarray) -> None:
        self.calls.append(inp.shape[0])
        if self.armed and len(self.calls) == self.bad_chunk + 1:
            raise Boom(f"boom at call {len(self.calls)}")
        out[:] = inp


@pytest.mark.parametrize("bad_chunk", [0, 3, 9])
def test_stage_exception(host_ctx: sp.Context, rng: np.random.Generator, bad_chunk: int) -> None:
    stage = Fragile(bad_chunk)
    p = host_ctx.pipeline([sp.sinmix(2), sp.Stage("fragile", np.float32, host=stage)],
                          np.float32, chunk_records=10, depth=2)
    x = rng.uniform(-10, 10, 100).astype(np.float32)
    out = poisoned((100,), np.float32)
    with pytest.raises(sp.StageError) as info:
        p.run(x, out=out)
    err = info.value
    assert err.status == -5 and err.status_name == "SP_ERR_STAGE_FAILED"
    assert isinstance(err.__cause__, Boom)
    text = str(err)
    assert "'fragile'" in text and f"chunk {bad_chunk}" in text, text
    assert "Boom: boom at call" in text
    assert len(stage.calls) <= 10
    # The pipeline is fine afterwards, and the same stage object works.
    stage.armed = False
    stage.calls.clear()
    out = poisoned((100,), np.float32)
    p.run(x, out=out)
    assert_sinmix(out, x, 2)
    assert stage.calls == [10] * 10


def test_stage_returning_a_value_is_an_error(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.Stage("returns", np.float32, host=lambda i, o: i * 2), np.float32)
    with pytest.raises(sp.StageError, match="returned a ndarray") as info:
        p.run(np.ones(5, np.float32))
    assert isinstance(info.value.__cause__, TypeError)
    # numpy's out= functions return out itself: that is fine
    ok = host_ctx.pipeline(sp.Stage("ufunc", np.float32, host=lambda i, o: np.multiply(i, 2, out=o)),
                           np.float32)
    np.testing.assert_array_equal(ok.run(np.ones(5, np.float32)), np.full(5, 2, np.float32))


def test_keyboard_interrupt_is_not_wrapped(host_ctx: sp.Context) -> None:
    def interrupted(inp: np.ndarray, out: np.ndarray) -> None:
        raise KeyboardInterrupt

    p = host_ctx.pipeline(sp.Stage("ctrl-c", np.float32, host=interrupted), np.float32)
    with pytest.raises(KeyboardInterrupt):
        p.run(np.ones(5, np.float32))
    p2 = host_ctx.pipeline(sp.sinmix(1), np.float32)
    p2.run(np.ones(5, np.float32))


def test_exception_on_several_streams(host_ctx: sp.Context) -> None:
    def sometimes(inp: np.ndarray, out: np.ndarray) -> None:
        if inp[0] >= 500:
            raise Boom("late chunk")
        out[:] = inp

    p = host_ctx.pipeline(sp.Stage("multi", np.float32, host=sometimes, streams=4), np.float32,
                          chunk_records=50, depth=8)
    x = np.arange(1000, dtype=np.float32)
    with pytest.raises(sp.StageError, match="'multi'") as info:
        p.run(x)
    assert isinstance(info.value.__cause__, Boom)
    np.testing.assert_array_equal(p.run(x[:500]), x[:500])


def test_a_pipeline_runs_on_one_thread_at_a_time(host_ctx: sp.Context) -> None:
    started, release = threading.Event(), threading.Event()

    def slow(inp: np.ndarray, out: np.ndarray) -> None:
        started.set()
        release.wait(10)
        out[:] = inp

    p = host_ctx.pipeline(sp.Stage("slow", np.float32, host=slow), np.float32, chunk_records=4)
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(p.run(np.ones(4, np.float32))))
    worker.start()
    try:
        assert started.wait(10)
        with pytest.raises(sp.InvalidArgument, match="is running"):
            p.run(np.ones(4, np.float32))
    finally:
        release.set()
        worker.join(10)
    np.testing.assert_array_equal(result[0], np.ones(4, np.float32))


def test_calling_its_own_pipeline_from_a_stage(host_ctx: sp.Context) -> None:
    holder: list[sp.Pipeline] = []

    def recursive(inp: np.ndarray, out: np.ndarray) -> None:
        holder[0].run(inp)

    holder.append(host_ctx.pipeline(sp.Stage("recursive", np.float32, host=recursive), np.float32))
    with pytest.raises(sp.StageError) as info:
        holder[0].run(np.ones(3, np.float32))
    assert isinstance(info.value.__cause__, sp.InvalidArgument)
