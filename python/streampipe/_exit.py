"""Interpreter exit: the package's threads are out of the interpreter before it finalizes.

Once finalization has begun, Python ends any other thread that takes the GIL, which aborts the
process when that thread is a stream's event thread or one of the library's own (a Python
stage's worker). So the atexit hook registered here, which runs before finalization:

1. closes every stream still open (left open, or dropped and closing in the background) as
   :meth:`PipelineStream.close` does, and joins its event thread: the batches in flight
   complete, their stages and done callbacks run, as ``concurrent.futures`` executors finish
   their work at exit;
2. then tells the binding (``_streampipe.exiting``): from there on a Python stage, source or
   sink called on another thread fails its chunk without calling Python (a ``run`` left
   going in a daemon thread fails; the library's threads finish it on their own), and a
   thread coming back from the library waits for the process to end instead of taking the
   GIL. It waits up to ``EXIT_WAIT_S`` for the calls already inside Python to return. With
   daemon threads left, nanobind's report of objects still alive at exit (which they keep)
   is turned off.

Atexit hooks run last-registered first, so hooks registered after ``import streampipe`` may
still use pipelines; a hook registered before it runs after this one and finds Python stages
on other threads failing.
"""

from __future__ import annotations

import atexit
import threading
from typing import Protocol

from . import _streampipe as _c

__all__: list[str] = []

EXIT_WAIT_S = 10.0  # for Python calls already running on other threads (a daemon's stage)


class _Closable(Protocol):
    thread: threading.Thread

    def request_close(self) -> None: ...


_lock = threading.Lock()
_open: set[_Closable] = set()  # streams' cores from open until their event thread ends


def opened(core: _Closable) -> None:
    with _lock:
        _open.add(core)


def closed(core: _Closable) -> None:
    with _lock:
        _open.discard(core)


def _at_exit() -> None:
    try:
        with _lock:
            cores = list(_open)
        for core in cores:
            core.request_close()
        for core in cores:
            core.thread.join()
    finally:
        # Threads still alive now are daemons (the interpreter joined the others before its
        # atexit hooks), which finalization stops where they are, keeping what they use.
        me = threading.current_thread()
        daemons = any(t is not me and t.is_alive() for t in threading.enumerate())
        _c.exiting(EXIT_WAIT_S, daemons)


atexit.register(_at_exit)
