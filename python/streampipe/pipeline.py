"""Pipelines: a chain of stages with its buffers, run over host arrays (:meth:`Pipeline.run`),
over batches as they come (:meth:`Pipeline.stream`, :mod:`streampipe.stream`), or from a
source into a sink (:meth:`Pipeline.run_io`).

:meth:`Pipeline._prepare` checks and converts one batch, for a run or a stream's submit (the
dtypes and shapes here, the buffers' addresses, sizes and overlap by the library's own check);
``_causes`` keeps what Python stages raised under the ids their chunks failed with, and a
failed run raises the one the library kept (``last_cause``); ``_running`` serializes use of
the handle (a run holds it for the call, a stream while open).
"""

from __future__ import annotations

import contextlib
import operator
import os
import threading
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Iterator,
    NamedTuple,
    NoReturn,
    Optional,
    Sequence,
    Union,
)

import numpy as np

from . import _streampipe as _c
from ._dtypes import as_count, as_dtype, as_shape, describe, dlpack_code, record_bytes
from .device import DeviceBuffer, DeviceEnd, DevicePool, check_end, device_end, wait_for_producer
from .errors import InvalidArgument, StageError, Unsupported, _from_status
from .nvcomp import load_nvcomp
from .stats import Stats, _stats_of
from .report import Compression, Report
from .stage import Stage, _Causes, _cuda_adapter, _host_adapter
from .stream import PipelineStream

if TYPE_CHECKING:
    from .context import Context

__all__ = ["Pipeline"]


def _auto_is_0(value: Any) -> Any:
    """chunk_records and depth: "auto" is 0, the library's choice (the chunk re-chosen while
    runs go); anything else is checked as a count."""
    return 0 if isinstance(value, str) and value == "auto" else value


_GRAPH_MODES = {"off": _c.GRAPH_OFF, "on": _c.GRAPH_ON, "auto": _c.GRAPH_AUTO}
_TIMELINE_MODES = {
    "sampled": _c.TIMELINE_SAMPLED,
    "events": _c.TIMELINE_EVENTS,
    "cupti": _c.TIMELINE_CUPTI,
    "off": _c.TIMELINE_OFF,
}
_DLPACK_CPU, _DLPACK_CUDA_HOST = 1, 3


class _Batch(NamedTuple):
    """One batch, checked and ready for the C call."""

    x: Any  # C-contiguous, of the pipeline's input dtype: a numpy array, or the device array
    n: int
    out: Any  # C-contiguous and writable, of the output dtype: numpy, or the device array
    result: Any  # what run() returns: `out` as the caller gave it, or the new array
    in_ptr: int = 0  # the ends' addresses, for a batch with a device end (run by address)
    out_ptr: int = 0
    in_device: bool = False  # x is device memory
    out_device: bool = False  # out is device memory (out="device" included)


def _host_array(obj: Any, what: str, writable: bool) -> np.ndarray:
    """A numpy array over obj's memory, without copying: numpy arrays, DLPack producers on the
    CPU (CPU and pinned torch tensors), the buffer protocol, the array interface."""
    if isinstance(obj, np.ndarray):
        return obj
    exported: Optional[np.ndarray] = None
    if hasattr(obj, "__dlpack_device__"):
        device = tuple(obj.__dlpack_device__())
        if device[0] not in (_DLPACK_CPU, _DLPACK_CUDA_HOST):
            raise InvalidArgument(
                f"{what} is in device memory (DLPack device {device}); pipelines read and "
                "write host memory"
            )
        try:
            exported = np.from_dlpack(obj)
        except Exception:  # pinned (CUDA host) tensors: numpy takes them through __array__
            exported = None
        if exported is not None and (not writable or exported.flags.writeable):
            return exported
    if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        return np.asarray(obj)
    if exported is not None:
        return exported  # read-only: the caller says so
    try:
        view = memoryview(obj)
    except TypeError:
        raise InvalidArgument(
            f"{what} must be an array (numpy, the buffer protocol or DLPack), "
            f"not {type(obj).__name__}"
        ) from None
    return np.asarray(view)


class _IoFailure:
    """What a Python source or sink raised, for the run's StageError."""

    __slots__ = ("what", "first_record", "records", "exc")

    def __init__(self, what: str, first: int, records: int, exc: BaseException) -> None:
        self.what = what
        self.first_record = first
        self.records = records
        self.exc = exc

    def __str__(self) -> str:
        span = f"records {self.first_record}..{self.first_record + self.records - 1}"
        return f"{self.what} raised {type(self.exc).__name__}: {self.exc} ({span})"


class _IoAdapters:
    """The source and sink of one run_io as the binding calls them: read -> records (-1 when
    it raised), write -> bool; the first exception is kept, the records written counted."""

    def __init__(self, read: Callable[..., Any], write: Callable[..., Any]) -> None:
        self._read, self._write = read, write
        self._lock = threading.Lock()  # positional ones run on several staging threads
        self.failure: Optional[_IoFailure] = None
        self.written = 0

    def _fail(self, failure: _IoFailure) -> None:
        with self._lock:
            if self.failure is None:
                self.failure = failure

    def read(self, dst: np.ndarray, first: int, max_records: int) -> int:
        try:
            got = self._read(dst, first, max_records)
            if isinstance(got, (bool, np.bool_)) or got is None:
                raise TypeError(f"read returned {got!r}; it returns the number of records it "
                                "put in dst")
            n = operator.index(got)
            if not 0 <= n <= max_records:
                raise ValueError(f"read returned {n} records; it was asked for at most "
                                 f"{max_records}")
            return n
        except BaseException as exc:  # noqa: B036 - handed back to the caller of run_io()
            self._fail(_IoFailure("the source (read)", first, max_records, exc))
            return -1

    def write(self, src: np.ndarray, first: int) -> bool:
        try:
            self._write(src, first)
            with self._lock:
                self.written += int(src.shape[0])
            return True
        except BaseException as exc:  # noqa: B036 - handed back to the caller of run_io()
            self._fail(_IoFailure("the sink (write)", first, int(src.shape[0]), exc))
            return False


def _file_path(path: Any, label: str) -> str:
    """run_file's `label` as a str path, or InvalidArgument."""
    try:
        return os.fsdecode(os.fspath(path))
    except TypeError:
        raise InvalidArgument(f"run_file: {label} must be a path (str or os.PathLike), "
                              f"not {type(path).__name__}") from None


class Pipeline:
    """A chain of stages with every buffer it needs, made by :meth:`Context.pipeline`.

    One pipeline runs on one thread at a time (a second run meanwhile raises
    InvalidArgument); different pipelines of a context may run on different threads at once.
    The GIL is released while it runs and taken only to call a Python stage.
    """

    def __init__(
        self,
        context: "Context",
        stages: Union[Stage, Sequence[Stage]],
        in_dtype: Any,
        in_shape: Any = (),
        chunk_records: Union[int, str] = 0,
        depth: Union[int, str] = 0,
        graph: str = "off",
        staging_threads: int = 0,
        priority: int = 0,
        copy_piece_bytes: int = 0,
        copy_by_kernel: bool = False,
        timeline: str = "sampled",
        max_pinned_bytes: int = 0,
        max_device_bytes: int = 0,
        keep_timeline: bool = False,
        _devices: Optional[list[int]] = None,
    ) -> None:
        stage_list = [stages] if isinstance(stages, Stage) else list(stages)
        if len(stage_list) > _c.MAX_STAGES:
            raise InvalidArgument(
                f"{len(stage_list)} stages, more than the library's {_c.MAX_STAGES}"
            )
        for i, s in enumerate(stage_list):
            if not isinstance(s, Stage):
                raise InvalidArgument(f"stages[{i}] is a {type(s).__name__}, not a Stage")
        self.context: "Context" = context
        self.stages: tuple[Stage, ...] = tuple(stage_list)
        self.in_dtype: np.dtype = as_dtype(in_dtype, "in_dtype")
        self.in_shape: tuple[int, ...] = as_shape(in_shape, "in_shape")
        self.in_record_bytes: int = record_bytes(self.in_dtype, self.in_shape, "in_shape")
        if not isinstance(graph, str) or graph not in _GRAPH_MODES:
            raise InvalidArgument(f"graph is {graph!r}; use 'off', 'on' or 'auto'")
        self.graph: str = graph
        if not isinstance(timeline, str) or timeline not in _TIMELINE_MODES:
            raise InvalidArgument(f"timeline is {timeline!r}; use 'sampled', 'events', 'cupti' or 'off'")
        chunk_records = as_count(_auto_is_0(chunk_records), "chunk_records", 0, _c.SIZE_MAX)
        depth = as_count(_auto_is_0(depth), "depth", 0, _c.MAX_DEPTH)
        staging_threads = as_count(staging_threads, "staging_threads", 0, 2**32 - 1)
        priority = as_count(priority, "priority", -(2**31), 2**31 - 1)
        copy_piece_bytes = as_count(copy_piece_bytes, "copy_piece_bytes", 0, _c.SIZE_MAX)
        max_pinned_bytes = as_count(max_pinned_bytes, "max_pinned_bytes", 0, _c.SIZE_MAX)
        max_device_bytes = as_count(max_device_bytes, "max_device_bytes", 0, _c.SIZE_MAX)
        if not isinstance(copy_by_kernel, (bool, np.bool_)):
            raise InvalidArgument("copy_by_kernel must be True or False")
        if not isinstance(keep_timeline, (bool, np.bool_)):
            raise InvalidArgument("keep_timeline must be True or False")
        if keep_timeline and _devices:
            raise InvalidArgument("keep_timeline is for one pipeline: a group's reports sum "
                                  "its devices' and keep no timeline")
        self.keep_timeline: bool = bool(keep_timeline)

        self._causes = _Causes()
        self._running = threading.Lock()
        self._stream: Optional[list[threading.Lock]] = None  # an open stream's claim
        self._pool: Optional[DevicePool] = None  # out="device" buffers, made at the first
        self._exclusive = self._check_chain(graph)
        dicts = self._stage_dicts()
        self.out_dtype: np.dtype = self.stages[-1].out_dtype if self.stages else self.in_dtype
        self.out_shape: tuple[int, ...] = (
            self.stages[-1].out_shape if self.stages else self.in_shape
        )
        self._c = _c.Pipeline(
            context._c,
            dicts,
            self.in_record_bytes,
            chunk_records,
            depth,
            staging_threads,
            priority,
            copy_piece_bytes,
            _GRAPH_MODES[graph],
            bool(copy_by_kernel),
            _TIMELINE_MODES[timeline],
            max_pinned_bytes,
            max_device_bytes,
            bool(keep_timeline),
            list(_devices or []),
        )
        self.out_record_bytes: int = self._c.out_record_bytes
        self.devices: Optional[tuple[int, ...]] = None  # a group's members' devices
        if _devices:
            self.devices = tuple(m["device"] for m in self._c.group_members())
            self._check_group_devices()

    # ---- creation -----------------------------------------------------------------------

    def _check_chain(self, graph: str) -> list[tuple[threading.Lock, Any]]:
        """Each stage's input is the record the stage before writes; built-in stages say what
        they read and which context they belong to."""
        dtype, shape, source = self.in_dtype, self.in_shape, "the pipeline's input"
        locks: list[tuple[threading.Lock, Any]] = []
        for s in self.stages:
            if s.in_dtype is not None and (s.in_dtype != dtype or s.in_shape != shape):
                raise InvalidArgument(
                    f"stage '{s.name}' reads {describe(s.in_dtype, s.in_shape or ())}, but "
                    f"{source} gives {describe(dtype, shape)}"
                )
            if s._context is not None and s._context is not self.context:
                raise InvalidArgument(f"stage '{s.name}' was made for another context")
            if s._exclusive is not None:  # per-call host state: one pipeline at a time
                if all(lock is not s._exclusive for lock, _ in locks):
                    locks.append((s._exclusive, s._exclusive_owner))
            dtype, shape, source = s.out_dtype, s.out_shape, f"stage '{s.name}'"
        return locks

    def _stage_dicts(self) -> list[dict[str, Any]]:
        dicts = []
        dtype, shape = self.in_dtype, self.in_shape
        device = self.context.device
        for s in self.stages:
            d: dict[str, Any] = {
                "name": s.name,
                "streams": s.streams,
                "builtin": s._builtin,
                "scratch_bytes": s.scratch_bytes,
            }
            if s._builtin is None:
                d.update(
                    host=None if s.host is None else _host_adapter(s, self._causes),
                    cuda=None
                    if s.cuda is None
                    else _cuda_adapter(s, self._causes, device, dtype, shape),
                    in_dtype=dlpack_code(dtype),
                    out_dtype=dlpack_code(s.out_dtype),
                    in_shape=list(shape),
                    out_shape=list(s.out_shape),
                    out_record_bytes=s.out_record_bytes,
                )
            dicts.append(d)
            dtype, shape = s.out_dtype, s.out_shape
        return dicts

    def _check_group_devices(self) -> None:
        """Stage sets that serve one pipeline at a time (the MLP's) cannot be shared by the
        members of a group, which run at once; Python CUDA stages get views on the context's
        device, and built-in stages made for a context live on its device: a group may spread
        them over that device only."""
        assert self.devices is not None
        shared = [s.name for s in self.stages if s._exclusive is not None]
        if shared and len(self.devices) > 1:
            self._c = None  # frees the group
            raise Unsupported(
                f"stages {shared} serve one pipeline at a time (their state is per call), and "
                f"a group of {len(self.devices)} runs its members at once: make a set per "
                "member, or use a single pipeline"
            )
        bound = [s.name for s in self.stages
                 if s._context is not None or (s._builtin is None and s.cuda is not None)]
        others = sorted({d for d in self.devices if d != self.context.device})
        if self.context.backend == "cuda" and bound and others:
            self._c = None  # frees the group
            raise Unsupported(
                f"stages {bound} run on the context's device {self.context.device}, but the "
                f"group also has devices {others}: make such stages per device, or give the "
                "group only that device"
            )

    def device_reports(self) -> list[dict[str, Any]]:
        """For a pipeline of :meth:`Context.group`: what each member did in the last run, a
        dict per member with ``device``, ``units`` (work units it took), ``records``,
        ``busy_s`` and ``report`` (its :class:`Report`). Raises InvalidArgument otherwise."""
        if self.devices is None:
            raise InvalidArgument("device_reports() is for pipelines of Context.group")
        with self._idle():  # not while a run on another thread rewrites them
            members = self._c.group_members()
        return [dict(m, report=Report._make(self, m["report"], kind="group")) for m in members]

    # ---- facts ----------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Slots in the ring (the one asked for, or the one the library chose)."""
        return self._c.depth

    def tune_changes(self) -> list[dict[str, Any]]:
        """The library's changes of chunk size or depth (only of a chunk_records or depth
        left at 0), oldest first: at_s, from_chunk, to_chunk, from_depth, to_depth, reason.
        Any thread: the list is kept under its own lock."""
        return self._c.tune_changes()

    def chunk_records(self, n_records: int) -> int:
        """Records per chunk a run of `n_records` would use."""
        return self._c.chunk_records(as_count(n_records, "n_records", 0, _c.SIZE_MAX))

    @property
    def last_makespan_s(self) -> float:
        """Seconds from the last run's first enqueue until every queue drained (0 before)."""
        return self._c.last_makespan_s

    @property
    def last_submit_s(self) -> float:
        """Host seconds the last run spent submitting work."""
        return self._c.last_submit_s

    @property
    def last_wait_s(self) -> float:
        """Of that, the seconds the host waited for a slot to come free."""
        return self._c.last_wait_s

    def stats(self) -> "Stats":
        """The live counters (streampipe.stats): any thread, during a run or after it."""
        return _stats_of(self._c)

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.stages) or "no stages"
        return (
            f"Pipeline([{names}], {describe(self.in_dtype, self.in_shape)} -> "
            f"{describe(self.out_dtype, self.out_shape)}, backend={self.context.backend!r})"
        )

    # ---- runs -----------------------------------------------------------------------------

    def run(self, x: Any, out: Any = None, report: bool = False) -> Any:
        """Runs every record of `x` through the stages and returns the output.

        `x` is any host array (numpy, the buffer protocol, DLPack: CPU torch tensors) of the
        pipeline's input dtype with shape ``(n, *in_shape)``. It is used in place when it is
        C-contiguous, and copied once otherwise. Pinned memory (``Context.pinned_empty``,
        pinned torch tensors) is read by the copy engines directly; other memory goes through
        the pipeline's pinned staging buffers.

        `out` (optional) receives the output: C-contiguous, writable, of the output dtype and
        shape ``(n, *out_shape)``; ``out`` may be ``x`` itself when the records are the same
        size, and must not overlap it otherwise. Returns `out`, or a new numpy array; with
        ``report=True``, ``(output, Report)``.

        Device memory at either end (:mod:`streampipe.device`): `x` may be a device array (a
        :class:`DeviceBuffer`, a torch CUDA tensor, a CuPy or Numba array: DLPack or
        ``__cuda_array_interface__``), C-contiguous and on the pipeline's device, read in
        place; ``out="device"`` returns a :class:`DeviceBuffer` from the pipeline's pool, and
        a device array as `out` is written in place. The report's ``pcie_bytes`` then counts
        only the host end.

        Raises InvalidArgument for bad input (nothing runs, nothing is written), StageError
        when a stage fails (a Python stage's exception is its ``__cause__``; the pipeline can
        run again), and the other :class:`Error` classes for what the library reports.
        """
        return self._run(x, out, report, serial=False)

    def run_serial(self, x: Any, out: Any = None, report: bool = False) -> Any:
        """The textbook way, for baselines: each chunk copied, computed and copied back with
        nothing overlapping. Same arguments and results as :meth:`run`."""
        return self._run(x, out, report, serial=True)

    def _prepare(self, x: Any, out: Any) -> _Batch:
        """Checks a batch against the pipeline and makes it ready for the C call; bad input
        raises InvalidArgument here and touches nothing."""
        ctx = self.context
        in_end = device_end(x, "x", ctx.backend)
        arr: Optional[np.ndarray] = None
        if in_end is not None:
            check_end(in_end, "x", ctx, self.in_dtype, None, self.in_shape, writable=False)
            n, src, in_ptr = int(in_end.shape[0]), x, in_end.ptr
        else:
            arr = _host_array(x, "x", writable=False)
            if arr.dtype != self.in_dtype:
                raise InvalidArgument(
                    f"x is {arr.dtype}, but the pipeline's input is {self.in_dtype} "
                    f"(convert it with .astype(np.{self.in_dtype}))"
                )
            if arr.ndim != 1 + len(self.in_shape) or tuple(arr.shape[1:]) != self.in_shape:
                want = ", ".join(["n", *map(str, self.in_shape)])
                raise InvalidArgument(
                    f"x has shape {tuple(arr.shape)}; the pipeline takes ({want}"
                    f"{',' if not self.in_shape else ''}): "
                    f"{describe(self.in_dtype, self.in_shape)}"
                )
            n = int(arr.shape[0])
            src = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)
            in_ptr = src.ctypes.data
        dst, result, out_ptr, out_end = self._destination(out, n, arr, src)
        out_device = out_end is not None or isinstance(dst, DeviceBuffer)
        if in_end is not None or out_device:
            self._refuse_group_device()
        self._check_buffers(in_ptr, n, out_ptr)
        # Checked: now the producers' work on the device ends must be complete (a pending
        # DeviceBuffer's batch, torch's current stream), since the library's streams read
        # them. An output too: its memory may still be read by the work that used it last.
        for end in (in_end, out_end):
            if end is not None:
                wait_for_producer(end, ctx.device)
        return _Batch(src, n, dst, result, in_ptr, out_ptr, in_end is not None, out_device)

    def _destination(self, out: Any, n: int, arr: Optional[np.ndarray] = None,
                     src: Any = None) -> tuple[Any, Any, int, Optional[DeviceEnd]]:
        """`out` of a run of n records checked and made ready: (what the library writes,
        what the call returns, its address, its DeviceEnd or None). `arr` and `src`: the
        host input as given and as passed on, for the overlap check."""
        ctx = self.context
        out_shape = (n, *self.out_shape)
        out_end: Optional[DeviceEnd] = None
        if out is None:
            dst = result = np.empty(out_shape, self.out_dtype)
            out_ptr = dst.ctypes.data
        elif isinstance(out, str):
            if out != "device":
                raise InvalidArgument(f"out is {out!r}; give an array, 'device' or None")
            self._refuse_group_device()
            dst = result = self._device_pool().lease(out_shape, self.out_dtype)
            out_ptr = dst.ptr
        elif (out_end := device_end(out, "out", ctx.backend)) is not None:
            check_end(out_end, "out", ctx, self.out_dtype, out_shape, self.out_shape,
                      writable=True)
            dst, result, out_ptr = out, out, out_end.ptr
        else:
            dst = _host_array(out, "out", writable=True)
            result = out
            if dst.dtype != self.out_dtype:
                raise InvalidArgument(f"out is {dst.dtype}, but the output is {self.out_dtype}")
            if tuple(dst.shape) != out_shape:
                raise InvalidArgument(
                    f"out has shape {tuple(dst.shape)}; this run's output has shape {out_shape}"
                )
            if not dst.flags.c_contiguous:
                raise InvalidArgument("out must be C-contiguous (the output is written in place)")
            if not dst.flags.writeable:
                raise InvalidArgument("out is read-only")
            if arr is not None and src is not arr and n > 0 and np.may_share_memory(arr, dst):
                # the copy made here would not overlap out, but x itself does (and it is read
                # while out is written): refused before the library is asked about the copy
                raise InvalidArgument("out overlaps x (which is not C-contiguous, so it would "
                                      "be copied); only exact in-place (out is x) is allowed")
            out_ptr = dst.ctypes.data
        return dst, result, out_ptr, out_end

    def _refuse_group_device(self) -> None:
        if self.devices is not None:
            raise Unsupported("device memory ends are for one pipeline, not a group (its "
                              "members' devices differ); give a group host arrays")

    def _device_pool(self) -> DevicePool:
        """The pipeline's pool of out="device" buffers (:mod:`streampipe.device` has the rule
        for reuse)."""
        if self._pool is None:
            self._pool = DevicePool(self.context)
        return self._pool

    def _check_buffers(self, in_ptr: int, n: int, out_ptr: int) -> None:
        """The library's checks of the buffers (sizes, overlap, device memory), in its own
        words."""
        status, why = self._c.check_buffers(in_ptr, n, out_ptr)
        if status != _c.OK:
            raise _from_status(status, why)

    def _claim(self) -> list[threading.Lock]:
        """Takes the pipeline (and its exclusive stage sets) or raises InvalidArgument; returns
        the stage-set locks taken, for _unclaim."""
        if not self._running.acquire(blocking=False):
            if self._stream is not None:
                raise InvalidArgument(
                    "the pipeline has an open stream; close it (or leave its `with` block) "
                    "before running the pipeline otherwise"
                )
            raise InvalidArgument(
                "the pipeline is running (on another thread, or this is called from one of "
                "its own stages); one pipeline runs on one thread at a time"
            )
        taken: list[threading.Lock] = []
        try:
            for lock, owner in self._exclusive:
                if not lock.acquire(blocking=False):
                    raise InvalidArgument(
                        f"{owner!r} is in use by another pipeline; its stages run one "
                        "pipeline at a time"
                    )
                taken.append(lock)
        except BaseException:
            self._unclaim(taken)
            raise
        return taken

    def _unclaim(self, taken: list[threading.Lock]) -> None:
        for lock in reversed(taken):
            lock.release()
        self._running.release()

    @contextlib.contextmanager
    def _idle(self) -> Iterator[None]:
        """Holds the pipeline (and its exclusive stage sets) for one call."""
        taken = self._claim()
        try:
            yield
        finally:
            self._unclaim(taken)

    def _run(self, x: Any, out: Any, report: bool, serial: bool) -> Any:
        if serial and self.devices is not None:
            raise Unsupported("run_serial() is for one pipeline, not a group")
        batch = self._prepare(x, out)
        with self._idle():
            try:
                if batch.in_device or batch.out_device:
                    c_report = _c.run_ptr(self._c, batch.in_ptr, batch.n, batch.out_ptr,
                                          bool(report), serial)
                else:
                    c_report = self._c.run(batch.x, batch.n, batch.out, bool(report), serial)
            except StageError as exc:
                self._raise_stage_error(exc, self._kept_cause())
            finally:
                self._causes.clear()  # the run is over: no id of it is asked for again
            if not report:
                return batch.result
            return batch.result, Report._make(self, c_report)

    # ---- sources and sinks ----------------------------------------------------------------

    def run_io(
        self,
        read: Callable[[np.ndarray, int, int], int],
        write: Callable[[np.ndarray, int], Any],
        n_records: int = 0,
        positional: bool = False,
        report: bool = False,
    ) -> Any:
        """Streams records from a source through the stages into a sink, with no array of the
        whole data anywhere: ``read`` fills a slot's pinned staging buffer directly and
        ``write`` consumes results straight from pinned memory (sp_pipeline_run_io).

        ``read(dst, first_record, max_records) -> records``: fill ``dst`` (a writable numpy
        array of shape ``(max_records, *in_shape)``, of the input dtype) from record
        `first_record` on and return how many records it holds. A sequential source
        (``positional=False``) may return fewer (it is called again for the rest of the chunk)
        and 0 at its end; ``n_records`` (0: until read returns 0) is then what it must give.
        ``write(src, first_record)``: consume ``src`` (a read-only array of shape
        ``(records, *out_shape)``). Both arrays are valid during the call only.

        Sequential sources and sinks are called on this thread, one at a time, in record
        order. With ``positional=True`` (``n_records`` required), they are called on the
        staging threads, several at once, for pieces of whole records in any order, and read
        must return exactly ``max_records``: for files read with ``os.preadv`` /
        ``readinto`` and written with ``os.pwritev``, which release the GIL. Returns the
        records written to the sink, or ``(records, Report)`` with ``report=True``. A source
        or sink that raises fails the run with StageError naming it and the records, its
        exception as ``__cause__``; the pipeline runs again afterwards.
        """
        for label, fn in (("read", read), ("write", write)):
            if not callable(fn):
                raise InvalidArgument(f"run_io: {label} must be callable")
        n_records = as_count(n_records, "n_records", 0, _c.SIZE_MAX)
        if not isinstance(positional, (bool, np.bool_)):
            raise InvalidArgument("positional must be True or False")
        io = _IoAdapters(read, write)
        with self._idle():
            try:
                c_report = self._c.run_io(
                    io.read, io.write, n_records, bool(positional),
                    dlpack_code(self.in_dtype), list(self.in_shape),
                    dlpack_code(self.out_dtype), list(self.out_shape), bool(report),
                )
            except StageError as exc:
                # the library kept a stage's failure (its cause), or one without a cause:
                # the source's or sink's, when one raised
                kept = self._kept_cause()
                if kept is not None:
                    self._raise_stage_error(exc, kept)
                self._raise_stage_error(exc, None if io.failure is None else io.failure.exc,
                                        None if io.failure is None else str(io.failure))
            finally:
                self._causes.clear()
            if not report:
                return io.written
            return io.written, Report._make(self, c_report)

    def run_file(
        self,
        input: str | os.PathLike[str],
        output: Optional[str | os.PathLike[str]] = None,
        report: bool = False,
        input_format: str = "auto",
        decompress: str = "auto",
        out: Any = None,
        output_format: str = "raw",
    ) -> Any:
        """Streams a file of raw records (the input dtype and record shape, nothing else in
        it) through the stages into another file, with the library's file source and sink
        (streampipe_io.h): the staging threads ``pread`` and ``pwrite`` straight into and out
        of pinned memory, so no array of the data exists and the memory held is the ring's.

        The output is written under a temporary name beside it (``.NAME.partial-XXXXXX``) and
        moved into place only once the whole run has succeeded; an existing device or FIFO is
        written in place. Returns the records run, or ``(records, Report)`` with
        ``report=True``. Raises InvalidArgument for an output that is the input (nothing is
        written), Unsupported for an input that is not a regular file of whole records or an
        output that is a directory or a socket, BackendError when the system refuses a file
        (missing, no room: the message says which and why), StageError when a stage or a read
        or write fails mid-run; a failed call leaves no output and no temporary file.

        ``input_format`` ("auto", "raw", "lz4", "zstd"): what the input holds, by default told
        by its magic number (LZ4 frames of independent blocks, Zstandard frames: the records
        are the decompressed stream's). ``decompress`` ("auto", "staging", "ring"): where its
        blocks are decompressed (streampipe_io.h, sp_decompress_where): in the ring when the
        chunks can be whole blocks (on CUDA with nvCOMP, loaded by
        :func:`streampipe.load_nvcomp` on the first such run), else on the staging threads;
        "ring" raises Unsupported where it cannot.

        ``output_format`` ("raw", "lz4", "zstd"; never told by the name): the results
        compressed on the host's staging threads as they are written (streampipe_io.h,
        "Compressed outputs"): an LZ4 frame (independent blocks, content checksum) or a
        Zstandard frame per piece, which ``lz4 -d`` / ``zstd -d`` read back, and so does
        ``input_format``. With ``report=True`` the Report's
        ``input_compression`` and ``output_compression`` (:class:`Compression`: format,
        compressed and uncompressed bytes, ratio) describe the compressed ends (None: raw).

        ``out`` instead of ``output``: the results go to memory, not a file (the library's
        file source with no sink, sp_io.out). ``out="device"`` returns a
        :class:`DeviceBuffer` from the pipeline's pool holding every output record (a file
        straight into device memory: no device-to-host copy, ``pcie_bytes`` counts the input
        alone); a device array or a host array of the output dtype and shape
        ``(records, *out_shape)`` is written in place, as :meth:`run`'s `out`. Returns it, or
        ``(it, Report)`` with ``report=True`` (its ``input_compression`` as above; no
        ``output_compression``). For one pipeline, not a group.
        """
        if (output is None) == (out is None):
            raise InvalidArgument("run_file: give output (a path) or out (memory: 'device', "
                                  "a device array or a host array)" +
                                  (", not both" if out is not None else ""))
        formats = {"auto": 0, "raw": 1, "lz4": 2, "zstd": 3}
        wheres = {"auto": 0, "staging": 1, "ring": 2}
        if input_format not in formats:
            raise InvalidArgument(f"run_file: input_format must be one of {list(formats)}, "
                                  f"not {input_format!r}")
        if decompress not in wheres:
            raise InvalidArgument(f"run_file: decompress must be one of {list(wheres)}, "
                                  f"not {decompress!r}")
        out_formats = {k: formats[k] for k in ("raw", "lz4", "zstd")}
        if output_format not in out_formats:
            raise InvalidArgument(f"run_file: output_format must be one of "
                                  f"{list(out_formats)}, not {output_format!r}")
        if out is not None and output_format != "raw":
            raise InvalidArgument("run_file: output_format is for an output file, not out=")
        if decompress != "staging" and self.context.backend == "cuda":
            load_nvcomp()  # without it the run says why it decompressed on the staging threads
        if out is not None:
            return self._run_file_into(input, out, report, formats[input_format],
                                       wheres[decompress])
        paths = [_file_path(input, "input"), _file_path(output, "output")]
        with self._idle():
            try:
                result = self._c.run_file(paths[0], paths[1], self.in_record_bytes,
                                          self.out_record_bytes, bool(report),
                                          formats[input_format], wheres[decompress],
                                          out_formats[output_format])
            except StageError as exc:
                self._raise_stage_error(exc, self._kept_cause())
            finally:
                self._causes.clear()
            if not report:
                return int(result)
            records, c_report, in_fig, out_fig = result
            return int(records), Report._make(self, c_report,
                                              Compression._make(in_fig),
                                              Compression._make(out_fig))

    def _run_file_into(self, input: Any, out: Any, report: bool, input_format: int,
                       decompress: int) -> Any:
        """run_file with `out`: the file opened as a source, `out` made or checked for its
        records (nothing runs when it is refused), then the run."""
        if self.devices is not None:
            raise Unsupported("run_file into memory (out=) is for one pipeline, not a group")
        path = _file_path(input, "input")
        made: list[Any] = []

        def make_out(n: int) -> int:
            dst, result, ptr, end = self._destination(out, n)
            if end is not None:
                wait_for_producer(end, self.context.device)
            made.append(result)
            return ptr

        with self._idle():
            try:
                c_report = self._c.run_file_into(path, self.in_record_bytes,
                                                 self.out_record_bytes, bool(report),
                                                 input_format, decompress, make_out)
            except StageError as exc:
                self._raise_stage_error(exc, self._kept_cause())
            finally:
                self._causes.clear()
            if not report:
                return made[0]
            c_report, in_fig = c_report
            return made[0], Report._make(self, c_report,
                                         Compression._make(in_fig))

    def _kept_cause(self) -> Optional[BaseException]:
        """What the Python stage raised whose failure the library kept for the last run (its
        sp_pipeline_last_cause), or None: a built-in stage's, a source's or sink's."""
        return self._causes.take(self._c.last_cause)

    def _raise_stage_error(
        self, exc: StageError, cause: Optional[BaseException], detail: Optional[str] = None
    ) -> NoReturn:
        """A run's StageError, with what the Python stage, source or sink raised as its
        ``__cause__`` (the library's text names the stage, the chunk and the exception; a
        source's or sink's `detail` says what raised)."""
        if cause is None:
            detail = self._builtin_detail()
            raise StageError(f"{exc}: {detail}" if detail else str(exc), exc.status) from None
        if not isinstance(cause, Exception):
            raise cause from None  # KeyboardInterrupt, SystemExit: not the stage's
        raise StageError(f"{exc}: {detail}" if detail else str(exc), exc.status) from cause

    def _builtin_detail(self) -> str:
        for _, owner in self._exclusive:
            why: str = owner._c.last_error()
            if why:
                return why
        return ""

    # ---- streams ----------------------------------------------------------------------------

    def stream(self, max_in_flight: int = 4, input_released: bool = False) -> PipelineStream:
        """Opens a stream: batches submitted one by one (``submit(x, out=None)`` returns a
        future, ``imap(batches)`` yields the outputs in order) that go through one ring kept
        running between them, so consecutive batches overlap as the chunks of one run do.

        ``max_in_flight``: batches held at once (submitted and not yet done), 1..4096; a
        submit beyond waits for room. ``input_released``: resolve each batch's
        ``future.input_released`` as soon as its input has been read (one more event per
        batch); otherwise it resolves with the batch. Use it as ``with pipe.stream() as s:``;
        the pipeline runs nothing else until it is closed. :mod:`streampipe.stream` has the
        details.
        """
        if self.devices is not None:
            raise Unsupported("streams are for one pipeline; a group runs whole arrays and "
                              "positional sources (run, run_io)")
        max_in_flight = as_count(max_in_flight, "max_in_flight", 1, 2**32 - 1)
        if not isinstance(input_released, (bool, np.bool_)):
            raise InvalidArgument("input_released must be True or False")
        taken = self._claim()
        self._stream = taken  # before the stream's thread starts: it gives them back
        try:
            self._causes.clear()
            return PipelineStream(self, max_in_flight, bool(input_released))
        except BaseException:
            self._stream = None
            self._unclaim(taken)
            raise

    def _stream_closed(self) -> None:
        """The stream's event thread, once the stream is closed: gives the pipeline back (one
        stream is open at a time: it holds the claim)."""
        taken, self._stream = self._stream, None
        if taken is not None:
            self._unclaim(taken)
