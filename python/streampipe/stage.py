"""Stages: user stages written in Python, the built-in ones, and what a CUDA stage is handed.

A HOST stage is ``host(inp, out)``: numpy views of one chunk, ``inp`` read-only with shape
``(records, *in_record_shape)`` and ``out`` with shape ``(records, *out_shape)``. Write the
results into ``out`` and return None (or ``out``; returning another array is an error, since
``out`` would be left unwritten). It runs on the stage's worker thread with the GIL taken.
A stage made with ``scratch_bytes=N`` is called ``host(inp, out, scratch)``, ``scratch`` a
writable uint8 array of N bytes that is the chunk's own while the call runs.

A CUDA stage is ``cuda(chunk)`` with a :class:`Chunk`: enqueue the work on ``chunk.stream`` and
return without synchronizing. It runs on the thread that called ``Pipeline.run`` (in a stream,
the stream's engine thread), with the GIL taken. With PyTorch::

    def double(chunk):
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            torch.mul(torch.from_dlpack(chunk.input), 2, out=torch.from_dlpack(chunk.output))

and with CuPy, ``with cupy.cuda.ExternalStream(chunk.stream.handle): ...`` around
``cupy.asarray(chunk.input)`` (which reads ``__cuda_array_interface__``; CuPy synchronizes on
the stream it names unless ``CUPY_CUDA_ARRAY_INTERFACE_SYNC=0``). With ``scratch_bytes=N``,
``chunk.scratch`` is N bytes of device memory (a uint8 :class:`DeviceArray`) for that chunk
alone: a workspace (cuBLASLt, cuDNN, temporaries) that needs no allocation in the stage, so
the stage also works in graph mode and on several streams.

The arrays a stage is handed are valid only during the call: the memory is the pipeline's
slot buffer, which the next chunk of that slot overwrites. Scratch is per slot of the ring,
allocated once with the pipeline: two chunks in flight never share it, and what a chunk left
there is undefined for the next.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import numpy as np

from . import _streampipe as _c
from ._dtypes import as_count, as_dtype, as_shape, describe, record_bytes, ShapeLike
from .errors import InvalidArgument

__all__ = ["Stage", "Chunk", "DeviceArray", "CudaStream", "sinmix", "normalize_u8"]

HostFn = Callable[..., None]  # host(inp, out), or host(inp, out, scratch) with scratch_bytes
CudaFn = Callable[["Chunk"], None]


class CudaStream:
    """The CUDA stream a chunk's work goes on.

    ``handle`` is the ``cudaStream_t`` as an int (``torch.cuda.ExternalStream(handle)``,
    ``cupy.cuda.ExternalStream(handle)``); ``__cuda_stream__`` is the CUDA stream protocol.
    """

    __slots__ = {
        "handle": "The ``cudaStream_t`` as an int.",
        "device": "The CUDA device index the stream belongs to.",
    }

    def __init__(self, handle: int, device: int) -> None:
        self.handle: int = handle
        self.device: int = device

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def __int__(self) -> int:
        return self.handle

    def __repr__(self) -> str:
        return f"CudaStream(handle={self.handle:#x}, device={self.device})"


_DLPACK_NO_SYNC = -1
_U8 = np.dtype(np.uint8)


class DeviceArray:
    """One chunk's buffer in device memory, valid during the stage call only.

    It is exported through DLPack (``torch.from_dlpack``, ``cupy.from_dlpack``) and
    ``__cuda_array_interface__`` version 3 (``cupy.asarray``, numba), zero-copy. Its data is
    ready on the chunk's stream, and must be used there: ``__dlpack__`` refuses a consumer that
    asks for another stream (it would have to make that stream wait, and work enqueued there
    would not be waited for by the pipeline), so enqueue inside
    ``torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle))``. ``chunk.input`` is
    exported writable for consumers that cannot import read-only tensors; do not write it.
    """

    __slots__ = {
        "_array": "The array-API view the DLPack export is delegated to.",
        "ptr": "The device address of the first element, as an int.",
        "shape": "``(records, *record_shape)``, or ``(scratch_bytes,)`` for scratch.",
        "dtype": "The numpy dtype of the elements.",
        "stream": "The :class:`CudaStream` the data is ready on.",
        "_readonly": "Exported read-only in ``__cuda_array_interface__``.",
    }

    def __init__(
        self,
        array: Any,
        ptr: int,
        shape: tuple[int, ...],
        dtype: np.dtype,
        stream: CudaStream,
        readonly: bool,
    ) -> None:
        self._array = array
        self.ptr: int = ptr
        self.shape: tuple[int, ...] = shape
        self.dtype: np.dtype = dtype
        self.stream: CudaStream = stream
        self._readonly = readonly

    @property
    def nbytes(self) -> int:
        """Bytes of device memory the array covers."""
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[tuple[int, int]] = None,
        dl_device: Optional[tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        if stream != _DLPACK_NO_SYNC and stream != self.stream.handle:
            asked = "no stream (the legacy default stream)" if stream is None else f"stream {stream:#x}"
            raise BufferError(
                f"this chunk's data is on stream {self.stream.handle:#x}, and the consumer asked "
                f"for {asked}; run the stage's work on chunk.stream, e.g. inside "
                "`with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):`"
            )
        return self._array.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        device: tuple[int, int] = self._array.__dlpack_device__()
        return device

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, self._readonly),
            "version": 3,
            "strides": None,
            "stream": self.stream.handle,
        }

    def __repr__(self) -> str:
        return f"DeviceArray(ptr={self.ptr:#x}, shape={self.shape}, dtype={self.dtype})"


class Chunk:
    """What a CUDA stage is handed for one chunk.

    ``index``: the chunk's number in the run, from 0; ``first_record``: its first record's
    index in the run (in a stream, both count from the stream's start); ``records``: records in it (the last chunk may be short); ``input`` and
    ``output``: :class:`DeviceArray` of shape ``(records, *record_shape)``; ``stream``: the
    :class:`CudaStream` to enqueue on; ``scratch``: the stage's ``scratch_bytes`` of device memory
    for this chunk alone (a uint8 :class:`DeviceArray` of shape ``(scratch_bytes,)``), or None
    when the stage asked for none.
    In graph mode a stage must not depend on ``index`` or ``first_record`` (its work is
    captured once per slot and replayed), and must not allocate device memory while it is
    captured: keep graph="off" for PyTorch or CuPy stages that allocate temporaries.
    """

    __slots__ = {
        "index": "The chunk's number in the run (in a stream, from the stream's start), from 0.",
        "first_record": "The index of the chunk's first record in the run (or stream).",
        "records": "Records in the chunk (the last one of a run may be short).",
        "input": "The chunk's input, a :class:`DeviceArray` of ``(records, *in_shape)``.",
        "output": "Where the stage writes, a :class:`DeviceArray` of ``(records, *out_shape)``.",
        "stream": "The :class:`CudaStream` to enqueue the chunk's work on.",
        "scratch": "The stage's ``scratch_bytes`` for this chunk (a uint8 :class:`DeviceArray`), "
                   "or None.",
    }

    def __init__(
        self,
        index: int,
        first_record: int,
        records: int,
        input: DeviceArray,
        output: DeviceArray,
        stream: CudaStream,
        scratch: Optional[DeviceArray] = None,
    ) -> None:
        self.index: int = index
        self.first_record: int = first_record
        self.records: int = records
        self.input: DeviceArray = input
        self.output: DeviceArray = output
        self.stream: CudaStream = stream
        self.scratch: Optional[DeviceArray] = scratch

    def __repr__(self) -> str:
        return (
            f"Chunk(index={self.index}, first_record={self.first_record}, "
            f"records={self.records}, stream={self.stream!r})"
        )


class Stage:
    """One compute stage of a pipeline.

    ``name`` shows in errors and reports. Each output record is ``out_shape`` of ``out_dtype``;
    the input record is whatever the stage before produces (the pipeline's input for the
    first). ``host`` runs on the HOST backend and ``cuda`` on the CUDA backend (module
    docstring); give at least one, and the one for the backend the pipeline runs on.
    ``streams`` (1..8): queues the stage's chunks take turns on, so that small kernels run side
    by side; with more than one, the function runs for several chunks at once (on several
    worker threads on HOST), so it must keep no per-chunk state of its own.

    ``scratch_bytes``: a workspace of this many bytes for each chunk in flight (device memory
    on CUDA, host memory on HOST), allocated once per slot of the ring with the pipeline:
    ``chunk.scratch`` for a CUDA stage, a third argument ``host(inp, out, scratch)`` for a HOST
    one. Two chunks in flight never share it, with several streams and in graph mode too.
    """

    def __init__(
        self,
        name: str,
        out_dtype: Any,
        out_shape: ShapeLike = (),
        host: Optional[HostFn] = None,
        cuda: Optional[CudaFn] = None,
        scratch_bytes: int = 0,
        streams: int = 1,
    ) -> None:
        if not isinstance(name, str) or not name or "\0" in name:
            raise InvalidArgument(f"stage name must be a non-empty string, not {name!r}")
        if host is None and cuda is None:
            raise InvalidArgument(f"stage '{name}' has neither a host nor a cuda function")
        for label, fn in (("host", host), ("cuda", cuda)):
            if fn is not None and not callable(fn):
                raise InvalidArgument(f"stage '{name}': {label} must be callable")
        self.name: str = name
        self.out_dtype: np.dtype = as_dtype(out_dtype, f"stage '{name}': out_dtype")
        self.out_shape: tuple[int, ...] = as_shape(out_shape, f"stage '{name}': out_shape")
        self.out_record_bytes: int = record_bytes(
            self.out_dtype, self.out_shape, f"stage '{name}'"
        )
        self.host: Optional[HostFn] = host
        self.cuda: Optional[CudaFn] = cuda
        self.scratch_bytes: int = as_count(
            scratch_bytes, f"stage '{name}': scratch_bytes", 0, _c.SIZE_MAX
        )
        self.streams: int = as_count(streams, f"stage '{name}': streams", 0, _c.MAX_STAGE_STREAMS)
        # Built-in stages: the C stage, the record they read (None: any), the context they were
        # made for (None: any), and a lock when their stage set may run one pipeline at a time.
        self._builtin: Any = None
        self.in_dtype: Optional[np.dtype] = None
        self.in_shape: Optional[tuple[int, ...]] = None
        self._context: Any = None
        self._exclusive: Optional[threading.Lock] = None
        self._exclusive_owner: Any = None

    @classmethod
    def _from_builtin(
        cls,
        builtin: Any,
        out_dtype: Any,
        out_shape: tuple[int, ...],
        in_dtype: Any,
        in_shape: tuple[int, ...],
        streams: int = 1,
    ) -> "Stage":
        stage = cls.__new__(cls)
        stage.name = builtin.name
        stage.out_dtype = np.dtype(out_dtype)
        stage.out_shape = out_shape
        stage.out_record_bytes = builtin.out_record_bytes
        assert record_bytes(stage.out_dtype, out_shape, stage.name) == stage.out_record_bytes
        stage.host = None
        stage.cuda = None
        stage.scratch_bytes = builtin.scratch_bytes
        stage.streams = as_count(streams, f"stage '{stage.name}': streams", 0, _c.MAX_STAGE_STREAMS)
        stage._builtin = builtin
        stage.in_dtype = np.dtype(in_dtype)
        stage.in_shape = in_shape
        stage._context = None
        stage._exclusive = None
        stage._exclusive_owner = None
        return stage

    @property
    def builtin(self) -> bool:
        """True for the library's own stages (sinmix, the MLP's)."""
        return self._builtin is not None

    def __repr__(self) -> str:
        kind = "built-in" if self.builtin else "python"
        return f"Stage({self.name!r}, {kind}, out={describe(self.out_dtype, self.out_shape)})"


def sinmix(iters: int, streams: int = 1) -> Stage:
    """The built-in sinmix stage: float32 records of shape () in and out.

    ``v = x*0.5 + x*x*0.1``, then ``iters`` times ``v += sin(v*0.01)``, in float32 with each
    operation rounded on its own (a CUDA kernel and a C reference). Cheap at ``iters=0``
    (copy-bound) and as heavy as wanted as ``iters`` grows.
    """
    iters = as_count(iters, "sinmix: iters", 0, 2**32 - 1)
    f32 = np.dtype(np.float32)
    return Stage._from_builtin(_c.sinmix_stage(iters), f32, (), f32, (), streams)


def normalize_u8(shape: ShapeLike, scale: float = 1.0 / 255.0, shift: float = -0.5,
                 streams: int = 1) -> Stage:
    """The built-in normalize_u8 stage: uint8 records of `shape` (an image's, say) in, float32
    records of the same shape out, ``x * scale + shift`` in float32 with the multiply and the
    add each rounded on its own (a CUDA kernel and a C reference, bit for bit alike). The
    defaults map 0..255 to [-0.5, 0.5]. A built-in stage runs with no Python in the data path:
    a Python stage doing the same with torch ops waits for the interpreter's lock while the
    training loop holds it (streampipe.torch.Loader, bench/PERF.md)."""
    record = as_shape(shape, "normalize_u8: shape")
    elements = record_bytes(np.dtype(np.uint8), record, "normalize_u8")
    for label, value in (("scale", scale), ("shift", shift)):
        if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
            raise InvalidArgument(f"normalize_u8: {label} must be a finite number, not {value!r}")
    return Stage._from_builtin(_c.normalize_u8_stage(elements, float(scale), float(shift)),
                               np.float32, record, np.uint8, record, streams)


# ---- the adapters the binding calls (one per Python stage and pipeline) ---------------------


class _Causes:
    """The exceptions a pipeline's Python stages raised, each under a fresh non-zero id: the
    cause the adapter fails its chunk with (sp_chunk_fail_cause). Which failure a run or a
    stream's batch keeps is the library's rule alone; it hands back the kept one's id
    (``Pipeline.last_cause``, a DONE event's cause), and the layer takes that exception here.
    The others were dropped by the library; the layer forgets them once their run or batch
    is done (:meth:`forget_through`, :meth:`clear`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # adapters run on several worker threads at once
        self._next = 1
        self._by_id: dict[int, BaseException] = {}

    def add(self, exc: BaseException) -> int:
        with self._lock:
            cause = self._next
            self._next += 1
            self._by_id[cause] = exc
            return cause

    def take(self, cause: int) -> Optional[BaseException]:
        """The exception of `cause` (0: none), forgotten."""
        with self._lock:
            return self._by_id.pop(cause, None) if cause else None

    def forget_through(self, cause: int) -> None:
        """Forgets every id up to `cause`: registered before the kept failure's, they belong
        to its failure or an earlier one, whose batches are all done."""
        with self._lock:
            for old in [k for k in self._by_id if k <= cause]:
                del self._by_id[old]

    def clear(self) -> None:
        with self._lock:
            self._by_id.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_id)


def _failed(causes: _Causes, exc: BaseException) -> tuple[int, str]:
    """What an adapter hands the binding for a stage that raised: (cause, message)."""
    return causes.add(exc), f"raised {type(exc).__name__}: {exc}"


def _check_host_result(name: str, result: Any, out: np.ndarray) -> None:
    """A host function that returns a new array instead of writing `out` left the output
    unwritten: say so rather than pass on whatever the slot held (returning `out` itself, as
    numpy's out= functions do, is fine)."""
    if result is None or result is out:
        return
    if isinstance(result, np.ndarray) and np.may_share_memory(result, out):
        return
    raise TypeError(
        f"stage '{name}' returned a {type(result).__name__}; a host stage writes its results "
        "into `out` (and returns None or `out`)"
    )


def _host_adapter(stage: Stage, causes: _Causes) -> Callable[..., Optional[tuple[int, str]]]:
    fn = stage.host
    name = stage.name
    with_scratch = stage.scratch_bytes > 0
    assert fn is not None

    def call(
        index: int,
        first: int,
        records: int,
        inp: np.ndarray,
        out: np.ndarray,
        scratch: Optional[np.ndarray],
    ) -> Optional[tuple[int, str]]:
        try:
            result = fn(inp, out, scratch) if with_scratch else fn(inp, out)
            _check_host_result(name, result, out)
            return None
        except BaseException as exc:  # noqa: B036 - handed back to the caller of run()
            return _failed(causes, exc)

    return call


def _cuda_adapter(
    stage: Stage,
    causes: _Causes,
    device: int,
    in_dtype: np.dtype,
    in_shape: tuple[int, ...],
) -> Callable[..., Optional[tuple[int, str]]]:
    fn = stage.cuda
    out_dtype, out_shape = stage.out_dtype, stage.out_shape
    scratch_bytes = stage.scratch_bytes
    assert fn is not None

    def call(
        index: int,
        first: int,
        records: int,
        inp: Any,
        out: Any,
        in_ptr: int,
        out_ptr: int,
        stream_handle: int,
        scratch: Any,
        scratch_ptr: int,
    ) -> Optional[tuple[int, str]]:
        try:
            stream = CudaStream(stream_handle, device)
            chunk = Chunk(
                index,
                first,
                records,
                DeviceArray(inp, in_ptr, (records, *in_shape), in_dtype, stream, False),
                DeviceArray(out, out_ptr, (records, *out_shape), out_dtype, stream, False),
                stream,
                None
                if scratch is None
                else DeviceArray(scratch, scratch_ptr, (scratch_bytes,), _U8, stream, False),
            )
            fn(chunk)  # its value is ignored: torch's out= functions return a new tensor
            return None
        except BaseException as exc:  # noqa: B036 - handed back to the caller of run()
            return _failed(causes, exc)

    return call
