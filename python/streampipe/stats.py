"""The live counters of a pipeline or stream (the C library's sp_pipeline_stats): what the
current (or last) run or stream has done so far, readable from any thread at any moment
without waiting on the run. ``Pipeline.stats()`` and ``Stream.stats()`` return them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _streampipe as _c

__all__ = ["Stats", "EngineStats"]


@dataclass(frozen=True)
class EngineStats:
    """One engine: stage-in, h2d, a compute stage, d2h or stage-out."""

    name: str
    kind: str  # "stage-in", "h2d", "compute", "d2h", "stage-out"
    busy_measured: bool  # GPU engines: only in a run with a report (timed chunks)
    records: int  # staged (host engines), or of chunks that left the ring (the others)
    bytes: int  # moved (copies) or read (compute)
    busy_s: float  # 0.0 where busy_measured is False; a GPU engine's: see Stats


@dataclass(frozen=True)
class Stats:
    """The counters of the current (or last) run or stream; they only grow within one.

    A GPU engine's (h2d, a stage, d2h) busy time is measured only in a run with a report
    (``run(..., report=True)`` with the pipeline's timeline not ``'off'``): with the default
    ``'sampled'`` timeline it is estimated from the timed chunks, extrapolated by records to
    those done so far (it may step down a little as chunks are timed), exact with
    ``'events'``; once the run has ended it is the report's. ``hidden_transfer`` is the
    fraction of copy time hidden under compute so far, by the report's estimator over the
    windows timed so far (the report's once the run has ended); None when unknown (a run
    without a report, a stream, or before the first window is timed)."""

    run: int  # runs and streams begun on the pipeline; 0: none yet
    active: bool
    elapsed_s: float
    records_total: int  # a run's planned records (0: a source of unknown length); a stream's submitted
    bytes_total: int
    records_done: int  # records whose chunks left the ring, output handed on
    bytes_done: int
    chunks_in_flight: int
    batches_in_flight: int  # a stream's held batches
    wait_s: float  # the host waited for a slot: the device was the limit
    errors: int  # a failed run, or a stream's failed batches
    pinned_bytes: int
    device_bytes: int
    engines: tuple[EngineStats, ...]
    hidden_transfer: float | None  # None: unknown (see above)
    timed_chunks: int  # chunks whose GPU operations were timed and read so far

    @property
    def progress(self) -> float:
        """records_done / records_total (0.0 when the total is not known)."""
        return self.records_done / self.records_total if self.records_total else 0.0


def _stats_of(native_pipeline: Any) -> Stats:
    d = _c.pipeline_stats(native_pipeline)
    engines = tuple(EngineStats(**e) for e in d.pop("engines"))
    if d["hidden_transfer"] < 0.0:  # the library's -1: unknown
        d["hidden_transfer"] = None
    return Stats(engines=engines, **d)
