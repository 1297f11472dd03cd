"""Streams: batches submitted as they arrive, through one ring kept running between them.

:meth:`Pipeline.stream` opens one (the C library's ``sp_stream_*``)::

    with pipe.stream(max_in_flight=4) as s:
        futures = [s.submit(x) for x in batches]       # each a concurrent.futures.Future
        outputs = [f.result() for f in futures]
        for y in s.imap(generate_batches()):           # or outputs in order, as they come
            ...

The library's engine thread cuts each batch into chunks (a chunk never holds records of two
batches) and feeds them to the ring behind the chunks already in flight, so the copies and the
compute of consecutive batches overlap as those of one run do; ``Pipeline.run`` drains the
ring at the end of every call.

Design. The stream's events (each batch's DONE, in submission order, and INPUT_RELEASED when
asked for) are taken by one Python thread per stream, the *event thread*, which waits in
``sp_stream_next`` with the GIL released and resolves the batch's future. A thread of its own,
rather than the caller's, because a ``concurrent.futures.Future`` has to be resolved by
someone while the caller is elsewhere: blocked in ``result()`` of a later batch, producing the
next batch, or not looking at all (done callbacks then still run promptly). Its cost is a
wake-up and the GIL for a few microseconds per event. Futures' done callbacks run on it: they
may submit, but must not close the stream.

What the library decides stays the library's: room (``max_in_flight`` batches held, a batch
held from its submit until it is complete: ``sp_stream_submit_wait`` waits for room with the
GIL released, at most the submit's timeout), the records' numbering (a DONE event's
``first_record``), which failure a batch keeps (the event's cause names the Python stage's
exception, kept under that id by :class:`streampipe.stage._Causes`) and cancels
(``sp_stream_cancel``). A batch complete in the library but whose DONE the event thread has
not taken yet no longer takes room there; its arrays are kept alive here until its future is
resolved. Each batch's input is converted or copied by the same checks as ``Pipeline.run``
(which raise at submit and touch nothing).
"""

from __future__ import annotations

import collections
import threading
import time
import weakref
from concurrent.futures import CancelledError, Future
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional

from . import _exit
from . import _streampipe as _c
from .device import DeviceBuffer, is_torch_cuda, stream_handle
from .errors import InvalidArgument, StageError, Timeout, WouldBlock, _from_status
from .stats import Stats, _stats_of
from .report import Report

if TYPE_CHECKING:
    from .pipeline import Pipeline, _Batch

__all__ = ["PipelineStream", "BatchFuture"]


def batch_error(pipeline: Any, index: int, records: int, status: int, message: str,
                exc: Optional[BaseException]) -> BaseException:
    """What a failed batch raises (a stream's and the Loader's feed): a StageError with the
    Python stage's exception as its cause (or a built-in stage's detail), the exception itself
    when it was no Exception (KeyboardInterrupt, SystemExit: not the stage's), else the
    status's own class (Cancelled: the library says why)."""
    where = f"batch {index} ({records} records)"
    if status == _c.ERR_STAGE_FAILED:
        if exc is None:
            detail = pipeline._builtin_detail()
            return StageError(f"{where}: {message}" + (f": {detail}" if detail else ""),
                              status)
        if not isinstance(exc, Exception):
            return exc
        err = StageError(f"{where}: {message}", status)
        err.__cause__ = exc
        return err
    return _from_status(status, f"{where}: {message}")


class BatchFuture(Future):  # type: ignore[type-arg]
    """The future of one batch: it resolves to the output array (``out`` as given, or a new
    one), or raises the :class:`Error` of the batch's status.

    A stage failing in the batch gives :class:`StageError` (a Python stage's exception as its
    ``__cause__``); the batches after it that were already in flight may give
    :class:`Cancelled`; a lost device :class:`DeviceLost`.

    :meth:`cancel` takes the batch back (``sp_stream_cancel``). It returns False when the
    future is done already (True if it was cancelled) or the library no longer holds the
    batch, and True when the library took the cancel: a batch not started yet is then
    certainly cancelled, one being cut into chunks stops at its next chunk boundary (the
    records already in the ring are written, the rest of ``out`` is left as it was). Only a
    batch whose chunks were all in the ring when the cancel came (running, in
    ``concurrent.futures``' words) finishes anyway: the library does not say at once which
    case it was, so its future then completes as usual although ``cancel()`` returned True.
    The future is resolved when the batch's DONE comes (in submission order): cancelled
    (``cancelled()`` True, ``result()`` raising ``concurrent.futures.CancelledError``, done
    callbacks run), or as the batch completed. Until then ``running()`` is False.

    ``index``: the batch's number in the stream, from 0; ``first_record``: its first record's
    number (records are numbered from the stream's start, as ``chunk.first_record`` is; the
    library's number, that of the batch's DONE event, once the future is done); ``records``:
    its records. ``input_released``: a future that resolves (to None) once the batch's input
    has been read and may be overwritten (or the batch is done); with
    ``input_released=False`` on the stream it resolves together with the batch.

    ``handed_off``: a future that resolves to the output once it may be used on the batch's
    consumer stream (``submit(..., consumer_stream=...)``: at the library's HANDED_OFF event,
    before the batch is DONE; work queued on that stream from then on reads the output
    whole); for a batch without one, when the batch is done. It raises the batch's error for
    a failed batch (``concurrent.futures.CancelledError`` for a cancelled one).
    ``consumer_stream``: the stream handle the batch was handed to, or None.
    """

    def __init__(self, core: "_Core", index: int, first_record: int, records: int,
                 consumer_stream: Optional[int] = None) -> None:
        super().__init__()
        self._core = core
        self.index: int = index
        self.first_record: int = first_record
        self.records: int = records
        self.consumer_stream: Optional[int] = consumer_stream
        self.input_released: Future[None] = Future()
        self.input_released.set_running_or_notify_cancel()
        self.handed_off: Future[Any] = Future()
        self.handed_off.set_running_or_notify_cancel()

    def cancel(self) -> bool:
        """Asks the library to take the batch back; the class docstring says what it returns."""
        if self.done():
            return self.cancelled()
        return self._core.cancel(self)

    # ---- resolved by the event thread, once the batch's DONE has come -------------------

    def _finish(self, result: Any) -> None:
        self.set_running_or_notify_cancel()
        self.set_result(result)

    def _fail(self, exc: BaseException) -> None:
        if self.set_running_or_notify_cancel():
            self.set_exception(exc)

    def _cancelled_by_library(self) -> None:
        Future.cancel(self)  # PENDING -> CANCELLED: wakes result() and runs done callbacks
        self.set_running_or_notify_cancel()  # and tells concurrent.futures.wait's waiters

    def __repr__(self) -> str:
        return f"<BatchFuture index={self.index} records={self.records} {self._state.lower()}>"


class _Held:
    """What a held batch keeps alive until its DONE: its arrays and its future, and whether
    the library took a cancel of it."""

    __slots__ = ("batch", "future", "cancel_requested")

    def __init__(self, batch: "_Batch", future: BatchFuture) -> None:
        self.batch: Optional["_Batch"] = batch
        self.future = future
        self.cancel_requested = False


def _resolve_released(future: Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _resolve(future: Future[Any], result: Any = None,
             exc: Optional[BaseException] = None) -> None:
    if not future.done():
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)


def _device_outputs(batch: "_Batch") -> list[DeviceBuffer]:
    """The DeviceBuffers a batch writes (out="device", or one passed as out)."""
    return [batch.out] if isinstance(batch.out, DeviceBuffer) else []


class _Core:
    """The stream's state, shared by the user's threads and the event thread (which holds
    this, not the :class:`PipelineStream`, so that a stream nobody refers to any more is
    closed by the finalizer rather than kept open by its own thread)."""

    def __init__(self, pipeline: "Pipeline", max_in_flight: int, input_released: bool) -> None:
        self.pipeline = pipeline
        self.max_in_flight = max_in_flight
        self.cond = threading.Condition()
        self.submit_lock = threading.Lock()  # the C API: one submitting thread at a time
        self.held: dict[int, _Held] = {}  # by tag: submitted (or being submitted), not DONE
        self.submitted = 0  # of those held, accepted by sp_stream_submit_wait
        self.submitting = 0  # submits inside sp_stream_submit_wait
        self.next_tag = 0
        self.next_record = 0  # the number the library gives the next batch (its DONE says)
        self.closing = False
        self.closed = False
        self.report: Optional[Report] = None
        self.close_error: Optional[BaseException] = None  # the event thread's own failure
        self.c = _c.Stream(pipeline._c, max_in_flight, False, input_released)
        # A daemon, so that the interpreter's wait for its threads at exit (before atexit
        # hooks) does not wait on a stream nobody closes; streampipe._exit's atexit hook
        # closes it and joins this thread before the interpreter finalizes.
        self.thread = threading.Thread(
            target=self._events, name=f"streampipe-events-{id(self):x}", daemon=True
        )
        try:
            self.thread.start()
        except BaseException:
            self.c.close()
            raise
        _exit.opened(self)

    # ---- the user's side ----------------------------------------------------------------

    def check_open(self) -> None:
        if self.closing:
            raise InvalidArgument("the stream is closed (or closing); open another with "
                                  "Pipeline.stream()")

    def consumer(self, consumer_stream: Any, x: Any, out: Any, batch: "_Batch") -> Optional[int]:
        """The stream handle for sp_stream_submit_to, or None: the one given, else torch's
        current stream when a torch CUDA tensor is at either end of a device output."""
        if consumer_stream is not None:
            return stream_handle(consumer_stream)
        if batch.out_device and (is_torch_cuda(x) or is_torch_cuda(out)):
            import torch

            return stream_handle(torch.cuda.current_stream(self.pipeline.context.device))
        return None

    def submit(self, x: Any, out: Any, block: bool, timeout: Optional[float],
               consumer_stream: Any = None) -> BatchFuture:
        with self.cond:
            self.check_open()
        if consumer_stream is not None and (not block or timeout is not None):
            raise InvalidArgument("a submit with a consumer stream waits for room as long as "
                                  "it takes (sp_stream_submit_to): block=False and timeout "
                                  "are not for it")
        batch = self.pipeline._prepare(x, out)  # bad input raises here, touching nothing
        consumer = self.consumer(consumer_stream, x, out, batch)
        deadline = None if timeout is None or not block else time.monotonic() + max(0.0, timeout)
        # One submit at a time goes to the library, in the order that numbers batches and
        # records; one waiting for room there holds the lock, so the others wait here.
        if not block:
            if not self.submit_lock.acquire(blocking=False):
                raise WouldBlock("another submit is waiting for room in the stream (it holds "
                                 f"max_in_flight = {self.max_in_flight} batches)")
        elif not self.submit_lock.acquire(timeout=-1 if deadline is None
                                          else max(0.0, deadline - time.monotonic())):
            raise Timeout(f"no room in the stream within {timeout} s: another submit is "
                          f"waiting for room (it holds max_in_flight = {self.max_in_flight} "
                          "batches)")
        try:
            with self.cond:
                self.check_open()
                tag = self.next_tag
                future = BatchFuture(self, tag, self.next_record, batch.n, consumer)
                self.held[tag] = _Held(batch, future)  # before the C call: events may come
                self.submitting += 1
                for buf in _device_outputs(batch):
                    buf._pending(consumer)
            wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                if batch.in_device or batch.out_device or consumer is not None:
                    self.c.submit_ptr(batch.in_ptr, batch.n, batch.out_ptr, tag,
                                      0.0 if not block else wait, consumer)
                else:
                    self.c.submit(batch.x, batch.n, batch.out, tag, 0.0 if not block else wait)
            except BaseException as exc:
                with self.cond:
                    del self.held[tag]
                    self.submitting -= 1
                    self.cond.notify_all()
                for buf in _device_outputs(batch):
                    buf._mark_done(_c.OK, "")  # never written: as it was
                if not block and isinstance(exc, Timeout):
                    raise WouldBlock(str(exc)) from None
                raise
            with self.cond:
                self.submitting -= 1
                self.submitted += 1
                self.next_tag += 1
                self.next_record += batch.n
                self.cond.notify_all()
            return future
        finally:
            self.submit_lock.release()

    def cancel(self, future: BatchFuture) -> bool:
        """BatchFuture.cancel: whether the library took the cancel of the held batch."""
        with self.cond:  # held across the C call, so that its DONE is resolved after this
            held = self.held.get(future.index)
            if held is None or held.future is not future or self.closed:
                return future.cancelled()
            if held.cancel_requested:
                return True
            if self.c.cancel(future.index, False) != _c.OK:
                return False  # complete in the library already: its DONE is on its way
            held.cancel_requested = True
            return True

    def cancel_all(self) -> int:
        """Cancels every batch the library holds (sp_stream_cancel_all); returns how many
        unresolved futures that asked (a submit still inside the library is not among them)."""
        with self.cond:
            if self.closed or self.c.cancel(0, True) != _c.OK:
                return 0
            asked = [h for tag, h in self.held.items() if tag < self.next_tag]
            for h in asked:
                h.cancel_requested = True
            return len(asked)

    def close(self) -> Report:
        if threading.current_thread() is self.thread:
            raise InvalidArgument(
                "a stream cannot be closed from a done callback of its own futures (closing "
                "waits for the batches that the callback's thread resolves)"
            )
        self.request_close()
        self.thread.join()
        if self.close_error is not None:
            raise self.close_error
        assert self.report is not None
        return self.report

    def request_close(self) -> None:
        """No more submits; the event thread drains, closes the C stream and ends. Safe from
        any thread (the finalizer's included) and more than once."""
        with self.cond:
            self.closing = True
            self.cond.notify_all()

    @property
    def in_flight(self) -> int:
        with self.cond:
            return len(self.held) - self.submitting

    # ---- the event thread -----------------------------------------------------------------

    def _events(self) -> None:
        failed: list = []  # batches failed by a bug of ours, kept until the C stream drains
        try:
            while True:
                with self.cond:
                    while self.submitted == 0 and not (self.closing and self.submitting == 0):
                        self.cond.wait()
                    if self.submitted == 0:
                        break  # closing, and nothing in flight
                kind, tag, status, _records, first, cause, message = self.c.next(-1.0)
                if kind == _c.EVENT_DONE:
                    self._done(tag, status, first, cause, message)
                elif kind == _c.EVENT_HANDED_OFF:
                    with self.cond:
                        held = self.held.get(tag)
                        batch = None if held is None else held.batch
                    if held is not None and batch is not None:
                        for buf in _device_outputs(batch):
                            buf._mark_handed_off()
                        _resolve(held.future.handed_off, batch.result)
                else:
                    with self.cond:
                        held = self.held.get(tag)
                    if held is not None:
                        _resolve_released(held.future.input_released)
        except BaseException as exc:  # noqa: B036 - a bug of ours: fail what is held, not hang
            failed = self._fail_all(exc)
        finally:
            self._close_c()
            failed.clear()  # only now: the drain may have written into their arrays

    def _done(self, tag: int, status: int, first: int, cause: int, message: str) -> None:
        causes = self.pipeline._causes
        with self.cond:
            held = self.held.pop(tag)
            self.submitted -= 1
            exc = causes.take(cause)  # the Python exception of the failure the library kept
            causes.forget_through(cause)
            if not self.held:  # nothing in the library: no chunk can still fail
                causes.clear()
            self.cond.notify_all()
        future = held.future
        future.first_record = first
        batch, held.batch = held.batch, None
        assert batch is not None
        _resolve_released(future.input_released)
        for buf in _device_outputs(batch):
            buf._mark_done(status, message)
        if status == _c.OK:
            _resolve(future.handed_off, batch.result)
            future._finish(batch.result)
        elif status == _c.ERR_CANCELLED and held.cancel_requested:
            _resolve(future.handed_off, exc=CancelledError())
            future._cancelled_by_library()
        else:
            error = self._error(future, status, message, exc)
            _resolve(future.handed_off, exc=error)
            future._fail(error)

    def _error(
        self, future: BatchFuture, status: int, message: str, exc: Optional[BaseException]
    ) -> BaseException:
        return batch_error(self.pipeline, future.index, future.records, status, message, exc)

    def _fail_all(self, exc: BaseException) -> list:
        """Fails every held batch; returns them, to be kept until the C stream is drained."""
        with self.cond:
            held = list(self.held.values())
            self.held.clear()
            self.submitted = 0
            self.closing = True
            self.close_error = exc
            self.cond.notify_all()
        for h in held:
            _resolve_released(h.future.input_released)
            _resolve(h.future.handed_off, exc=exc)
            if h.batch is not None:
                for buf in _device_outputs(h.batch):
                    buf._mark_done(_c.ERR_CANCELLED, f"the stream's event thread failed: {exc}")
            if not h.future.done():
                h.future._fail(exc)
        return held

    def _close_c(self) -> None:
        """Drains (nothing is held here but after a failure of the event thread itself),
        closes the C stream and gives the pipeline back."""
        try:
            _status, c_report, _message = self.c.close()
            self.report = Report._make(self.pipeline, c_report, kind="stream")
        except BaseException as exc:  # noqa: B036 - handed to close()
            if self.close_error is None:
                self.close_error = exc
        finally:
            with self.cond:
                self.closing = True
                self.closed = True
                self.cond.notify_all()
            self.pipeline._stream_closed()
            _exit.closed(self)


class PipelineStream:
    """An open stream of a :class:`Pipeline` (made by :meth:`Pipeline.stream`); the module
    docstring has the design.

    Use it as a context manager, or call :meth:`close`: leaving the ``with`` block waits for
    every batch submitted (whether or not the block raised). A stream dropped without being
    closed is closed in the background; one still open (or closing) at interpreter exit is
    closed then, its batches completed, before the interpreter finalizes
    (:mod:`streampipe._exit`). While it is open the pipeline runs nothing else
    (``Pipeline.run`` raises InvalidArgument).
    """

    def __init__(self, pipeline: "Pipeline", max_in_flight: int, input_released: bool) -> None:
        self._core = _Core(pipeline, max_in_flight, input_released)
        self._finalizer = weakref.finalize(self, self._core.request_close)
        self.pipeline: "Pipeline" = pipeline
        self.max_in_flight: int = max_in_flight

    def submit(
        self,
        x: Any,
        out: Any = None,
        block: bool = True,
        timeout: Optional[float] = None,
        consumer_stream: Any = None,
    ) -> BatchFuture:
        """Queues a batch: `x` and `out` as for :meth:`Pipeline.run` (any number of records, 0
        included; device arrays and ``out="device"`` too), and returns its
        :class:`BatchFuture` at once.

        ``consumer_stream`` (CUDA, a device output): a CUDA stream (an int handle, a
        ``torch.cuda.Stream``, an object with ``__cuda_stream__``; a stream object of handle 0,
        the default stream, means cudaStreamLegacy) that the library makes wait, on the
        device, for the batch's output (``sp_stream_submit_to``): ``future.handed_off``
        resolves to the output once work queued there reads it whole, before the batch is
        DONE, with no host wait. Default: torch's current stream when `x` or `out` is a torch
        CUDA tensor and the output is device memory; else none. The HOST backend refuses a
        consumer stream (Unsupported, the library's message); a submit with one waits for
        room for ever (no ``block=False`` or ``timeout``).

        Bad input raises InvalidArgument here and touches nothing. `x` (unless it was copied
        to make it contiguous) must not be written until ``future.input_released`` and `out`
        must not be touched until the future is done; the stream keeps both alive until then.
        With ``max_in_flight`` batches held by the library (submitted and not complete),
        waits for room there (``sp_stream_submit_wait``, the GIL released): for ever, up to
        `timeout` seconds (then :class:`Timeout`), or not at all with ``block=False``
        (:class:`WouldBlock`, also when another thread's submit is waiting for room). Raises
        InvalidArgument once the stream is closed.
        """
        return self._core.submit(x, out, block, timeout, consumer_stream)

    def cancel_all(self) -> int:
        """Cancels every batch submitted whose future is not done (``sp_stream_cancel_all``),
        as :meth:`BatchFuture.cancel` does each; returns how many futures it asked for."""
        return self._core.cancel_all()

    def imap(self, batches: Iterable[Any], out: Optional[str] = None,
             consumer_stream: Any = None) -> Iterator[Any]:
        """The outputs of `batches` (any iterable of inputs, a generator included), in order.

        ``out="device"``: each output a :class:`DeviceBuffer` (None: numpy arrays);
        ``consumer_stream`` as for :meth:`submit`, and then each output is yielded once it is
        handed off to that stream (``future.handed_off``) rather than once its batch is done.

        At most ``max_in_flight`` batches are in flight: the next input is taken from the
        iterable while the earlier ones run, and submitted once the oldest has been yielded
        (so the iterable runs up to ``max_in_flight + 1`` inputs ahead of the consumer).
        A failed batch raises its error at its place. When the consumer stops early (the
        generator closed, ``break`` out of the loop, or that error), the batches it submitted
        and has not had are cancelled (:meth:`BatchFuture.cancel`: those not started are not
        run) and no more inputs are taken; closing the stream waits for the cancels.
        """
        if out is not None and not (isinstance(out, str) and out == "device"):
            raise InvalidArgument(f"imap: out is {out!r}; use None or 'device'")

        def output(future: BatchFuture) -> Any:
            if future.consumer_stream is not None:
                return future.handed_off.result()
            return future.result()

        pending: collections.deque[BatchFuture] = collections.deque()
        try:
            for x in batches:
                while len(pending) >= self.max_in_flight:
                    yield output(pending.popleft())
                pending.append(self.submit(x, out=out, consumer_stream=consumer_stream))
            while pending:
                yield output(pending.popleft())
        finally:
            for future in pending:  # empty unless the consumer stopped early
                future.cancel()

    def close(self) -> Report:
        """Waits for every batch submitted, closes the stream and returns its :class:`Report`
        (counts, makespan and what the library chose; a stream records no per-chunk timings,
        so the report has no trace). Failures went to their batches' futures and are not
        raised again here. A second close returns the same report."""
        report = self._core.close()
        self._finalizer.detach()
        return report

    def stats(self) -> "Stats":
        """The live counters since the stream opened (its pipeline's: sp_stream_stats)."""
        return _stats_of(self.pipeline._c)

    @property
    def closed(self) -> bool:
        """True once close() has begun (no more submits)."""
        return self._core.closing

    @property
    def in_flight(self) -> int:
        """Batches submitted whose futures are not resolved yet: at most max_in_flight held by
        the library, and those complete there whose DONE the event thread has not taken."""
        return self._core.in_flight

    @property
    def report(self) -> Optional[Report]:
        """The stream's report once it is closed, else None."""
        return self._core.report

    def __enter__(self) -> "PipelineStream":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.in_flight} in flight"
        return f"<PipelineStream max_in_flight={self.max_in_flight} {state}>"
