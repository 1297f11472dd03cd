"""The Loader's feeder thread (streampipe.torch): submits the batches and takes their outputs
off the training thread.

Why a thread: a training loop in Python is bound by its own host time (autograd, the
optimizer's launches) as much as by the GPU's. On the H200 a step of the benchmark's MLP
took 1.45 ms of host time and as long on the GPU; the Loader's work per batch (the submit, a
pool lease, the DLPack export, the labels' copy) took 0.5 ms more of that thread, and the GPU
waited for it: 20% of the time (bench/PERF.md, eleventh session). Here that work runs on a
thread of its own, mostly while the training thread is inside calls that let go of the GIL
(the backward pass, the copy engines' waits); the training thread only takes a ready batch
from a queue and makes its current stream wait for it.

The order of the batches, their errors (a failed batch raises where it would have been
yielded, with its cause) and the source's exceptions are kept; leaving the loop early stops
the thread, cancels what it had submitted and closes nothing it does not own (the caller
closes the stream after `stop`).
"""

from __future__ import annotations

import collections
import queue
import threading
from typing import Any, Callable, Iterator, Optional

READY_AHEAD = 2  # batches taken off the stream and waiting for the training thread


class _End:
    """The feeder has handed over every batch."""


class _Raised:
    """Something the feeder hit, raised in the training thread at this batch's turn."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Feeder:
    """Runs `submit` for each batch of `batches` (after `first`), keeping at most
    `max_in_flight` submitted and not yet taken, and `take_output` on each in order, whose
    results `take` returns in the training thread (None at the end)."""

    def __init__(self, first: Any, batches: Iterator[Any], max_in_flight: int,
                 submit: Callable[[Any], Any], take_output: Callable[[Any], Any],
                 cancel: Callable[[Any], None]) -> None:
        self._first, self._batches = first, batches
        self._max_in_flight = max_in_flight
        self._submit, self._take_output, self._cancel = submit, take_output, cancel
        self._pending: collections.deque[Any] = collections.deque()
        self._ready: queue.Queue[Any] = queue.Queue(maxsize=READY_AHEAD)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streampipe-loader",
                                        daemon=True)
        self._thread.start()

    # ---- the feeder's thread ------------------------------------------------------------------

    def _put(self, item: Any) -> bool:
        """Hands `item` over; False once the training thread has stopped taking."""
        while not self._stopping.is_set():
            try:
                self._ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _hand_over_oldest(self) -> bool:
        return self._put(self._take_output(self._pending.popleft()))

    def _run(self) -> None:
        try:
            self._pending.append(self._submit(self._first))
            for batch in self._batches:
                if self._stopping.is_set():
                    return
                while len(self._pending) >= self._max_in_flight:
                    if not self._hand_over_oldest():
                        return
                self._pending.append(self._submit(batch))
            while self._pending:
                if not self._hand_over_oldest():
                    return
            self._put(_End())
        except BaseException as exc:  # noqa: B036 - raised in the training thread instead
            self._put(_Raised(exc))
        finally:
            for item in self._pending:  # stopped early or failed: what was not handed over
                self._cancel(item)
            self._pending.clear()

    # ---- the training thread ------------------------------------------------------------------

    def take(self) -> Optional[Any]:
        """The next batch's output; None after the last; raises what the feeder hit."""
        while True:
            try:
                item = self._ready.get(timeout=0.5)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._ready.empty():
                    raise RuntimeError("the loader's feeder thread ended without its last "
                                       "batch (a bug of streampipe's)") from None
        if isinstance(item, _End):
            return None
        if isinstance(item, _Raised):
            raise item.exc
        return item

    def stop(self) -> None:
        """The training thread is done taking (the end, a break, an error): the feeder stops
        at its next step and cancels what it submitted; returns once it has ended."""
        self._stopping.set()
        while self._thread.is_alive():
            try:  # a feeder waiting to put must see the stop
                self._ready.get(timeout=0.05)
            except queue.Empty:
                pass
        while not self._ready.empty():
            self._ready.get_nowait()
