"""One epoch of the Loader's feed (streampipe.torch): the batches submitted and their outputs
taken with no Python thread but the training thread's running per batch.

Why: a training loop in Python is bound by its own host time (autograd, the optimizer's
launches) as much as by the GPU's. On the H200 a step of the benchmark's MLP took 1.45 ms of
host time and as long on the GPU; the Loader's Python work per batch (the submit's checks, a
future and a pool lease, the DLPack export, the stream's event thread resolving two events)
first ran on the training thread (0.5 ms a batch), then on a feeder thread of its own, which
still held the interpreter's lock (GIL) for it, several times a batch, between the step's
torch calls: the loop ran at 0.55-0.83x a hand-written prefetcher that does its work inline
(bench/PERF.md, eleventh session). On HOST (bench/loader_gil_probe.py, 2 cores) that feeder
took 0.30-0.35 ms of CPU a batch and the event thread 0.07, against 0.10 ms a batch now, all
of it on the training thread (the prefetcher's: 0.30-0.39 ms). So the binding's Feed (python/src/feed.cpp) submits and
takes the events on two threads of its own that never take the GIL: an array source is cut
into batches there (no Python per batch at all); an iterable's batches are pushed by a Python
thread (``streampipe-loader``), one call each, which waits without the GIL. The training
thread takes each batch (one call, waiting without the GIL if it is not ready), wraps the
output block (DLPack) and hands the block back when the wrapper is gone.

The safety rule (python/README.md): a block is written again only after it was given back to
the pool (:class:`Blocks`), once the tensor over it is gone and an event recorded on the
stream that used it then has completed. The order of the batches, their errors (a failed
batch raises where it would have been yielded, with its cause) and the source's exceptions
are kept; leaving the loop early cancels what was submitted.
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Iterator, Optional

import numpy as np

from . import _streampipe as _c
from .errors import InvalidArgument
from .stream import batch_error

READY_AHEAD = 2  # batches ready (handed off) and waiting for the training thread, beyond
#                  max_in_flight in the library

# A batch of an iterable source as the pusher thread gets it: (records for the stages, the
# rest of the batch or None)
Batch = tuple[np.ndarray, Optional[tuple[Any, ...]]]


class Blocks:
    """The output blocks of a Loader's feeds (the binding's FeedBlocks), kept across epochs,
    and the rule for handing one out again: once the array over it is gone (its Lease
    released) and, when it was used on a stream, an event recorded then on that stream has
    completed. `record(stream)`: that event (None: a block goes back at release)."""

    def __init__(self, context: Any, record: Optional[Callable[[Any], Any]] = None) -> None:
        self.c = _c.FeedBlocks(context._c)
        self._record = record
        self._returning: collections.deque[tuple[int, Any]] = collections.deque()

    def released(self, ptr: int, stream: Any) -> None:
        """A Lease's last reference went (on any thread)."""
        if stream is None or self._record is None:
            self.c.give(ptr)
        else:
            self._returning.append((ptr, self._record(stream)))

    def reclaim(self) -> None:
        """Gives back the released blocks whose events have completed (in release order: the
        steps run in order on one stream)."""
        while self._returning and self._returning[0][1].query():
            self.c.give(self._returning.popleft()[0])


class Lease:
    """The owner of one batch's output block while something refers to the array over it (a
    DLPack capsule, the tensor made from it and its views): when the last reference goes,
    ``release(ptr, stream)`` says so (stream: where the batch was used, or None). `release`
    is a Blocks', so the pool, which frees the blocks, outlives every Lease."""

    __slots__ = ("release", "ptr", "stream")

    def __init__(self, release: Callable[[int, Any], None], ptr: int) -> None:
        self.release, self.ptr, self.stream = release, ptr, None

    def __del__(self) -> None:
        self.release(self.ptr, self.stream)


class Taken:
    """A batch as the training thread takes it: its number, records, output block, the Lease
    to make the array over it with, and the rest of the batch (labels) when pushed."""

    __slots__ = ("index", "records", "ptr", "lease", "rest")

    def __init__(self, index: int, records: int, ptr: int, lease: Lease,
                 rest: Optional[tuple[Any, ...]]) -> None:
        self.index, self.records, self.ptr, self.lease, self.rest = (
            index, records, ptr, lease, rest)


class FeedEpoch:
    """The Feed of one pass over the source: claims `pipeline` (no other run or stream while
    it is open) until :meth:`stop`. `lanes`: CUDA stream handles the library hands the
    batches to (batch i to lanes[i % len]), at least max_in_flight + READY_AHEAD + 1 of them
    so that a lane is used again only for a batch submitted after its last one was taken;
    empty on HOST (a batch is then taken once DONE). `blocks`: where the outputs go."""

    def __init__(self, pipeline: Any, max_in_flight: int, lanes: list[int],
                 blocks: Blocks) -> None:
        self.ahead = max_in_flight + READY_AHEAD
        if lanes and len(lanes) <= self.ahead:
            raise InvalidArgument(f"{len(lanes)} lanes for {self.ahead} batches ahead")
        self.pipeline = pipeline
        self.blocks = blocks
        self._rests: dict[int, Optional[tuple[Any, ...]]] = {}  # pushed batches' rest
        self._inputs: dict[int, Any] = {}  # pushed inputs, alive until their DONE
        self._failure: Optional[BaseException] = None  # the source's (or a bad batch's)
        self._pusher: Optional[threading.Thread] = None
        taken = pipeline._claim()
        pipeline._stream = taken  # Pipeline.run says "the pipeline has an open stream"
        try:
            pipeline._causes.clear()
            self.feed = _c.Feed(pipeline._c, max_in_flight, lanes, self.ahead, blocks.c)
        except BaseException:
            pipeline._stream_closed()
            raise

    # ---- the input --------------------------------------------------------------------------

    def feed_array(self, x: np.ndarray, batch_size: int, drop_last: bool) -> None:
        """A whole C-contiguous array of the pipeline's input, cut into batches in C."""
        record_bytes = x.itemsize * int(np.prod(x.shape[1:], dtype=np.int64))
        self.feed.push_span(x.ctypes.data, int(x.shape[0]), record_bytes, batch_size, drop_last)
        self._inputs[-1] = x  # alive until the epoch stops
        self.feed.end_input()

    def feed_batches(self, first: Batch, batches: Iterator[Batch],
                     on_rest: Callable[[int, tuple[Any, ...]], tuple[Any, ...]]) -> None:
        """Batches from an iterable, pushed by a thread of their own; `on_rest(index, rest)`
        runs there for each batch's rest (the labels' copy to the device)."""
        self._pusher = threading.Thread(target=self._push, args=(first, batches, on_rest),
                                        name="streampipe-loader", daemon=True)
        self._pusher.start()

    def _checked(self, x: np.ndarray) -> np.ndarray:
        p = self.pipeline
        if x.dtype != p.in_dtype:
            raise InvalidArgument(f"a batch is {x.dtype}, but the pipeline's input is "
                                  f"{p.in_dtype}")
        if x.ndim != 1 + len(p.in_shape) or tuple(x.shape[1:]) != p.in_shape:
            raise InvalidArgument(f"a batch has shape {tuple(x.shape)}; the pipeline takes "
                                  f"records of shape {p.in_shape}")
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)

    def _push(self, first: Batch, batches: Iterator[Batch],
              on_rest: Callable[[int, tuple[Any, ...]], tuple[Any, ...]]) -> None:
        index = 0
        try:
            batch: Optional[Batch] = first
            while batch is not None:
                x = self._checked(batch[0])
                if batch[1] is not None:
                    self._rests[index] = on_rest(index, batch[1])
                self._inputs[index] = x
                if not self.feed.push_span(x.ctypes.data, int(x.shape[0]),
                                           x.itemsize * int(np.prod(x.shape[1:], dtype=np.int64)),
                                           0, False):
                    return  # stopped
                index += 1
                batch = next(batches, None)
        except BaseException as exc:  # noqa: B036 - raised in the training thread instead
            self._failure = exc
        finally:
            self.feed.end_input()

    # ---- the training thread ----------------------------------------------------------------

    def take(self) -> Optional[Taken]:
        """The next batch, once its output may be read (on its lane, on CUDA); None after the
        last; raises the batch's error, or what the source raised after the last batch."""
        self.blocks.reclaim()
        got = self.feed.take()
        if got is None:
            if self._pusher is not None:
                self._pusher.join()
            if self._failure is not None:
                raise self._failure
            return None
        index, ptr, records, status, cause, message, done_through = got
        # a snapshot: the pusher thread inserts into the dict meanwhile
        for old in [k for k in list(self._inputs) if 0 <= k < done_through]:
            del self._inputs[old]
        rest = self._rests.pop(index, None)
        if status != _c.OK:
            self.blocks.c.give(ptr)  # nobody saw it
            raise self._error(index, records, status, cause, message)
        return Taken(index, records, ptr, Lease(self.blocks.released, ptr), rest)

    def _error(self, index: int, records: int, status: int, cause: int,
               message: str) -> BaseException:
        exc = self.pipeline._causes.take(cause)
        return batch_error(self.pipeline, index, records, status, message, exc)

    def stop(self) -> None:
        """The training thread is done taking (the end, a break, an error): cancels what is in
        flight, closes the stream and gives the pipeline back. The blocks leased out stay
        valid (each Lease holds the pool)."""
        try:
            self.feed.stop()  # the pusher, if waiting to push, sees the stop
            if self._pusher is not None:
                self._pusher.join()
        finally:
            self._inputs.clear()
            self._rests.clear()
            self.pipeline._causes.clear()
            self.pipeline._stream_closed()
