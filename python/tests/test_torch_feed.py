"""The Loader's feed (streampipe._torch_feed over the binding's Feed), without torch, on HOST:
every batch in order with every element checked, an output block written again only after it
was given back, no Python thread per batch for an array source, the bound on an iterable read
ahead, a failed batch raising at its turn with its cause, the source's exception after the
batches before it, and an early stop that cancels, reads no more and gives the pipeline back.
Delays are injected in the stage and the consumer, so each interleaving is forced."""

from __future__ import annotations

import gc
import threading
import time
from typing import Any, Iterator, Optional

import numpy as np
import pytest

import streampipe as sp
from streampipe import _streampipe as _c
from streampipe._dtypes import dlpack_code
from streampipe._torch_feed import READY_AHEAD, Blocks, FeedEpoch, Taken
from streampipe.device import KDL_CPU

RECORD = 8
POISON = np.float32(-7.0)


def _images(n: int, seed: int = 0) -> np.ndarray:
    """Random records, none of them all 255 (what _pipeline's stage fails on)."""
    return np.random.default_rng(seed).integers(0, 255, (n, RECORD), dtype=np.uint8)


def _pipeline(delay: float = 0.0) -> sp.Pipeline:
    """uint8 -> float32 x / 2 + 1 on HOST; a record of all 255 (BAD) makes the stage raise;
    each chunk sleeps `delay` first."""

    def on_host(inp: np.ndarray, out: np.ndarray) -> None:
        if delay:
            time.sleep(delay)
        if (inp == 255).all(axis=1).any():
            raise KeyError("a bad record")
        np.add(inp * np.float32(0.5), np.float32(1.0), out=out)

    ctx = sp.Context("host")
    return ctx.pipeline([sp.Stage("half", np.float32, (RECORD,), host=on_host)], np.uint8,
                        (RECORD,), chunk_records=16)


def _want(images: np.ndarray) -> np.ndarray:
    return images * np.float32(0.5) + np.float32(1.0)


def _array(pipe: sp.Pipeline, taken: Taken) -> np.ndarray:
    """The batch's output as numpy over its block (the lease held by the array)."""
    code, bits = dlpack_code(pipe.out_dtype)
    view = _c.dlpack_view(taken.ptr, [taken.records, *pipe.out_shape], code, bits, KDL_CPU, 0,
                          taken.lease)
    return np.from_dlpack(view)


def _drain(epoch: FeedEpoch, pipe: sp.Pipeline, consume_delay: float = 0.0,
           hold: bool = False) -> list[np.ndarray]:
    """Every batch's output checked later (copied now unless `hold`: then the arrays over the
    blocks themselves are kept, so their blocks are never given back)."""
    got = []
    try:
        while (taken := epoch.take()) is not None:
            time.sleep(consume_delay)
            arr = _array(pipe, taken)
            del taken
            got.append(arr if hold else arr.copy())
            if not hold:
                arr[...] = POISON  # the consumer wrote it: a block reused unwritten shows it
            del arr
    finally:
        epoch.stop()
    return got


@pytest.mark.parametrize("delay,consume_delay", [(0.0, 0.0), (0.002, 0.0), (0.0, 0.002)])
def test_an_array_in_order_every_element_and_blocks_reused(delay: float,
                                                          consume_delay: float) -> None:
    images = _images(64 * 30 + 5, seed=1)
    pipe = _pipeline(delay)
    epoch = FeedEpoch(pipe, 3, [], Blocks(pipe.context))
    epoch.feed_array(images, 64, drop_last=False)
    got = _drain(epoch, pipe, consume_delay)
    assert [len(g) for g in got] == [64] * 30 + [5]
    np.testing.assert_array_equal(np.concatenate(got), _want(images))
    # each block given back when its array went: a few in circulation, not one per batch
    assert epoch.blocks.c.blocks <= 3 + READY_AHEAD + 2


def test_blocks_kept_across_epochs() -> None:
    """Each epoch's stream is closed at its end, its blocks are kept: the next epoch writes
    the same ones."""
    images = _images(64 * 12, seed=7)
    pipe = _pipeline()
    blocks = Blocks(pipe.context)
    counts = []
    for _ in range(3):
        epoch = FeedEpoch(pipe, 2, [], blocks)
        epoch.feed_array(images, 64, drop_last=False)
        np.testing.assert_array_equal(np.concatenate(_drain(epoch, pipe)), _want(images))
        counts.append(blocks.c.blocks)
    # one epoch's worth in all (a few more may be needed when the consumer is late), where
    # blocks not kept would make it three
    assert counts[0] <= counts[2] <= 2 + READY_AHEAD + 2, counts
    assert blocks.c.idle == counts[2]


def test_drop_last_and_an_empty_tail() -> None:
    images = _images(64 * 3 + 10, seed=2)
    pipe = _pipeline()
    epoch = FeedEpoch(pipe, 2, [], Blocks(pipe.context))
    epoch.feed_array(images, 64, drop_last=True)
    got = _drain(epoch, pipe)
    np.testing.assert_array_equal(np.concatenate(got), _want(images[:192]))


def test_a_block_held_is_never_written_again() -> None:
    """Every output kept (its block never given back) stays as it was written, while later
    batches are written: each into a block of its own."""
    images = _images(32 * 20, seed=3)
    pipe = _pipeline(0.001)
    epoch = FeedEpoch(pipe, 2, [], Blocks(pipe.context))
    epoch.feed_array(images, 32, drop_last=False)
    held = _drain(epoch, pipe, hold=True)
    np.testing.assert_array_equal(np.concatenate(held), _want(images))
    assert epoch.blocks.c.blocks == 20 and epoch.blocks.c.idle == 0
    del held
    gc.collect()
    assert epoch.blocks.c.idle == 20  # each given back when its array went


def test_an_array_runs_no_python_thread_per_batch() -> None:
    """The whole array is cut into batches in C: no thread of the feed's is a Python one
    (the old feeder and the stream's event thread took the GIL several times a batch)."""
    images = _images(64 * 20, seed=4)
    pipe = _pipeline(0.001)
    before = {t.ident for t in threading.enumerate()}
    epoch = FeedEpoch(pipe, 4, [], Blocks(pipe.context))
    epoch.feed_array(images, 64, drop_last=False)
    seen: set[str] = set()
    got = []
    try:
        while (taken := epoch.take()) is not None:
            seen |= {t.name for t in threading.enumerate() if t.ident not in before}
            got.append(_array(pipe, taken).copy())
    finally:
        epoch.stop()
    assert seen == set()
    np.testing.assert_array_equal(np.concatenate(got), _want(images))


def _source(n: int, read: list[int], fail_at: int = -1) -> Iterator[tuple[np.ndarray, Any]]:
    images = _images(16 * n, seed=5)
    for i in range(n):
        if i == fail_at:
            raise OSError("the source broke")
        read.append(i)
        yield images[16 * i: 16 * (i + 1)], (np.full(16, i),)


def test_an_iterable_pushed_in_order_with_its_rest_and_a_bounded_lead() -> None:
    read: list[int] = []
    pipe = _pipeline()
    epoch = FeedEpoch(pipe, 2, [], Blocks(pipe.context))
    batches = _source(40, read)
    epoch.feed_batches(next(batches), batches, lambda i, rest: rest)
    first = epoch.take()
    assert first is not None
    time.sleep(0.2)  # the consumer takes nothing more: the pusher waits
    ahead = len(read)
    assert ahead <= 1 + 2 + READY_AHEAD + 2, read
    rests = [int(first.rest[0][0])]
    got = [_array(pipe, first).copy()]
    del first
    while (taken := epoch.take()) is not None:
        rests.append(int(taken.rest[0][0]))
        got.append(_array(pipe, taken).copy())
    epoch.stop()
    assert rests == list(range(40))
    np.testing.assert_array_equal(np.concatenate(got), _want(_images(16 * 40, seed=5)))


def test_an_empty_batch_of_an_iterable_keeps_its_place() -> None:
    images = _images(16 * 3, seed=10)
    sizes = [16, 0, 16, 0, 16]
    starts = [0, 16, 16, 32, 32]
    src = ((images[a: a + n], (np.full(n, i),)) for i, (a, n) in enumerate(zip(starts, sizes)))
    pipe = _pipeline()
    epoch = FeedEpoch(pipe, 2, [], Blocks(pipe.context))
    epoch.feed_batches(next(src), src, lambda i, rest: rest)
    got = []
    try:
        while (taken := epoch.take()) is not None:
            assert taken.rest is not None and list(taken.rest[0]) == [taken.index] * taken.records
            got.append((taken.index, _array(pipe, taken).copy()))
    finally:
        epoch.stop()
    assert [(i, len(a)) for i, a in got] == list(enumerate(sizes))
    np.testing.assert_array_equal(np.concatenate([a for _, a in got]), _want(images))


def test_a_bad_batch_of_an_iterable_raises_at_its_turn() -> None:
    def source() -> Iterator[tuple[np.ndarray, Optional[Any]]]:
        yield _images(16), None
        yield _images(16).astype(np.int16), None

    pipe = _pipeline()
    epoch = FeedEpoch(pipe, 2, [], Blocks(pipe.context))
    batches = source()
    epoch.feed_batches(next(batches), batches, lambda i, rest: rest)
    assert epoch.take() is not None
    with pytest.raises(sp.InvalidArgument, match="int16"):
        try:
            epoch.take()
        finally:
            epoch.stop()


def test_a_failed_batch_raises_at_its_turn_with_its_cause() -> None:
    images = _images(64 * 20, seed=6)
    images[64 * 5 + 3] = 255
    pipe = _pipeline(0.001)
    epoch = FeedEpoch(pipe, 3, [], Blocks(pipe.context))
    epoch.feed_array(images, 64, drop_last=False)
    got = []
    with pytest.raises(sp.StageError, match="batch 5") as info:
        try:
            while (taken := epoch.take()) is not None:
                got.append(_array(pipe, taken).copy())
        finally:
            epoch.stop()
    assert isinstance(info.value.__cause__, KeyError)
    np.testing.assert_array_equal(np.concatenate(got), _want(images[:320]))
    np.testing.assert_array_equal(pipe.run(images[:64]), _want(images[:64]))  # given back


def test_the_sources_exception_comes_after_the_batches_before_it() -> None:
    read: list[int] = []
    pipe = _pipeline()
    epoch = FeedEpoch(pipe, 2, [], Blocks(pipe.context))
    batches = _source(10, read, fail_at=4)
    epoch.feed_batches(next(batches), batches, lambda i, rest: rest)
    got = []
    with pytest.raises(OSError, match="the source broke"):
        try:
            while (taken := epoch.take()) is not None:
                got.append(taken.index)
        finally:
            epoch.stop()
    assert got == [0, 1, 2, 3]


def test_stopping_early_cancels_reads_no_more_and_gives_the_pipeline_back() -> None:
    read: list[int] = []
    pipe = _pipeline(0.002)
    epoch = FeedEpoch(pipe, 3, [], Blocks(pipe.context))
    batches = _source(1000, read)
    epoch.feed_batches(next(batches), batches, lambda i, rest: rest)
    with pytest.raises(sp.InvalidArgument, match="open stream"):
        pipe.run(_images(16))
    taken = epoch.take()
    assert taken is not None and taken.index == 0
    t0 = time.monotonic()
    epoch.stop()
    assert time.monotonic() - t0 < 5
    n = len(read)
    time.sleep(0.05)
    assert len(read) == n < 20
    np.testing.assert_array_equal(pipe.run(_images(16)), _want(_images(16)))
    del taken


def test_many_epochs_stopped_anywhere() -> None:
    """Start and stop at random points, arrays and iterables, with the stage and the consumer
    at random speeds: every batch taken is right, every stop returns, and the pipeline is
    given back each time (a race or a lost wake-up in the Feed hangs or fails here)."""
    rng = np.random.default_rng(8)
    images = _images(16 * 24, seed=9)
    want = _want(images)
    pipe = _pipeline()
    blocks = Blocks(pipe.context)
    for trial in range(40):
        epoch = FeedEpoch(pipe, int(rng.integers(1, 5)), [], blocks)
        if trial % 2:
            epoch.feed_array(images, 16, drop_last=False)
        else:
            src = ((images[16 * i: 16 * (i + 1)], None) for i in range(24))
            epoch.feed_batches(next(src), src, lambda i, rest: rest)
        stop_at = int(rng.integers(0, 26))
        delay = float(rng.choice([0.0, 0.0005]))
        try:
            while stop_at > 0 and (taken := epoch.take()) is not None:
                k = taken.index
                np.testing.assert_array_equal(_array(pipe, taken), want[16 * k: 16 * (k + 1)])
                del taken
                time.sleep(delay)
                stop_at -= 1
        finally:
            epoch.stop()
        np.testing.assert_array_equal(pipe.run(images[:16]), want[:16])
    assert blocks.c.blocks <= 4 + READY_AHEAD + 2
