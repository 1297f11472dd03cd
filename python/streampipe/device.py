"""Device memory at either end of a run or a stream batch (issue 25).

Inputs: ``Pipeline.run``, ``PipelineStream.submit`` and ``imap`` take device arrays as well as
host ones: a :class:`DeviceBuffer`, or any object exporting ``__dlpack__`` /
``__dlpack_device__`` on a CUDA device (torch CUDA tensors, CuPy) or
``__cuda_array_interface__`` (CuPy, Numba). The array must be C-contiguous, of the pipeline's
input dtype and record shape, and on the pipeline's device; it is read in place (the library
skips its host to device copy). Anything else is refused with InvalidArgument before the
library is called.

Outputs: ``out="device"`` gives a :class:`DeviceBuffer` from the pipeline's pool, and a device
array passed as ``out`` is written in place (the library skips its device to host copy).

The pool's safety rule (python/README.md states it once for users): a buffer the pipeline
allocated is handed out again only once its batch is DONE *and* nothing refers to its
:class:`DeviceBuffer` any more, a DLPack capsule or a tensor made from one included (the
capsule holds the DeviceBuffer until the consumer's deleter runs). On CUDA, a buffer that was
used on a consumer stream (``consumer_stream``, or the stream a DLPack consumer named) is
reused only after an event recorded on that stream when the last reference went (torch's
events; without torch the block is freed, which waits for the device). A DLPack export with
no stream named (``stream=None``) is read on the legacy default stream, as the array API says;
one that asks for no synchronization (``stream=-1``) or a ``__cuda_array_interface__`` export
names no stream at all, so such a buffer's block is freed rather than reused (``cudaFree``
waits for the device), never handed out while an unknown stream may still read it.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

import numpy as np

from . import _streampipe as _c
from ._dtypes import ShapeLike, array_bytes, as_dtype, as_shape, dlpack_code
from .errors import InvalidArgument, Unsupported, _from_status

if TYPE_CHECKING:
    from .context import Context

__all__ = ["DeviceBuffer"]

# DLPack device types (dlpack.h)
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_DLPACK_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
_NO_SYNC = -1  # the DLPack stream value that asks for no synchronization
LEGACY_STREAM = 1  # cudaStreamLegacy: what a stream handle of 0 (the default stream) means


def _torch() -> Any:
    """torch when the program has imported it (never imported here just to look)."""
    return sys.modules.get("torch")


def is_torch_cuda(obj: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(obj, torch.Tensor) and bool(obj.is_cuda)


def stream_handle(stream: Any, what: str = "consumer_stream") -> int:
    """A cudaStream_t as an int from an int, a torch.cuda.Stream (or anything with
    ``cuda_stream``) or an object with ``__cuda_stream__``; a stream object whose handle is 0
    (the default stream) gives cudaStreamLegacy (1), which the library can wait on."""
    if isinstance(stream, bool):
        raise InvalidArgument(f"{what} must be a CUDA stream, not bool")
    if isinstance(stream, (int, np.integer)):
        if stream < 0:
            raise InvalidArgument(f"{what} is {stream}; a stream handle is not negative")
        return int(stream)
    handle: Any = None
    if hasattr(stream, "__cuda_stream__"):
        proto = stream.__cuda_stream__()
        handle = proto[1] if isinstance(proto, tuple) else proto
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream, torch.cuda.ExternalStream
        handle = stream.cuda_stream
    elif hasattr(stream, "ptr"):  # cupy.cuda.Stream
        handle = stream.ptr
    if not isinstance(handle, (int, np.integer)) or isinstance(handle, bool):
        raise InvalidArgument(
            f"{what} must be a CUDA stream: an int handle, a torch.cuda.Stream or an object "
            f"with __cuda_stream__, not {type(stream).__name__}"
        )
    return int(handle) or LEGACY_STREAM


def _norm_stream(a: Optional[int]) -> int:
    """A DLPack stream value as a handle: None, 0 and 1 all name the legacy default stream."""
    return LEGACY_STREAM if a in (None, 0) else int(a)


def sync_stream(handle: int, device: int) -> None:
    """Waits on the host for a producer's stream: through torch, CuPy or Numba, whichever the
    program has imported; Unsupported when none has."""
    torch = _torch()
    if torch is not None and torch.cuda.is_available():
        torch.cuda.ExternalStream(handle, device=device).synchronize()
        return
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.cuda.ExternalStream(handle).synchronize()
        return
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.cuda.external_stream(handle).synchronize()
        return
    raise Unsupported(
        f"the array's producer stream {handle:#x} cannot be waited for (neither torch, CuPy nor "
        "Numba is imported): synchronize it before passing the array"
    )


class DeviceBuffer:
    """Device memory a streampipe call allocated (``out="device"``, ``Context.device_empty``,
    ``Context.to_device``): a C-contiguous array of ``shape`` and ``dtype`` in memory from
    ``sp_device_alloc`` on the context's device (on HOST, host memory the backend keeps as
    device memory, so the same code runs in CI).

    It exports DLPack (``torch.from_dlpack``, ``cupy.from_dlpack``, ``numpy.from_dlpack`` on
    HOST) without a copy, as ``kDLCUDA`` with the device's index on CUDA and ``kDLCPU`` on
    HOST, and ``__cuda_array_interface__`` on CUDA. The memory stays alive while anything
    refers to the buffer, a DLPack capsule and the tensors made from it included. ``numpy()``
    and ``to_host()`` copy it to host memory (``sp_memcpy``). It can be the input of another
    run or batch, read in place.

    A stream batch's buffer is returned (by ``future.result()``, ``imap``,
    ``future.handed_off``) possibly before its batch is complete on the device: host reads
    (``numpy()``) wait for the batch, and so does a DLPack export to any stream but the one the
    batch was handed off to (``consumer_stream``), on which the data is ready once the hand-off
    came.
    """

    __slots__ = {
        "_block": "The DeviceBlock that owns the memory.",
        "_context": "The Context the memory belongs to.",
        "ptr": "The device address of the first element, as an int.",
        "shape": "The array's shape, ``(records, *record_shape)`` for a batch's output.",
        "dtype": "The numpy dtype of the elements.",
        "_done": "Set when the batch that writes the buffer is DONE (or at once).",
        "_handed": "Set when the buffer may be read on `_handed_to` (hand-off, or DONE).",
        "_handed_to": "The consumer stream the batch was handed off to, or None.",
        "_failure": "(status, message) of the batch that failed to write it, or None.",
        "_streams": "Consumer streams that may read it (the pool waits for them).",
        "_ready_on": "Streams made to wait for the batch on the device (reads there need no "
                     "host wait once `_handed` is set).",
        "_unknown_reader": "Exported to a reader whose stream is unknown (CUDA array "
                           "interface, DLPack stream=-1): the pool frees the block.",
        "__weakref__": "The pool's finalizer.",
    }

    def __init__(self) -> None:
        raise TypeError("DeviceBuffer is made by out='device', Context.device_empty or "
                        "Context.to_device")

    @classmethod
    def _make(cls, context: "Context", block: Any, shape: tuple[int, ...],
              dtype: np.dtype) -> "DeviceBuffer":
        self = object.__new__(cls)
        self._block = block
        self._context = context
        self.ptr = int(block.ptr)
        self.shape = tuple(shape)
        self.dtype = dtype
        self._done = threading.Event()
        self._done.set()
        self._handed = self._done
        self._handed_to = None
        self._failure = None
        self._streams = set()
        self._ready_on = set()
        self._unknown_reader = [False]  # a list: the pool's finalizer holds it, not the buffer
        return self

    # ---- a stream batch's output: pending until its DONE ------------------------------------

    def _pending(self, consumer: Optional[int]) -> None:
        self._done = threading.Event()
        self._handed = threading.Event()
        self._handed_to = consumer
        if consumer is not None:
            self._streams.add(consumer)
            self._ready_on.add(_norm_stream(consumer))

    def _also_ready_on(self, stream: int) -> None:
        """`stream` was made to wait (on the device) for a stream this buffer was handed off
        to, after the hand-off: it may read the buffer without a host wait too."""
        self._streams.add(stream)
        self._ready_on.add(_norm_stream(stream))

    def _mark_handed_off(self) -> None:
        self._handed.set()

    def _mark_done(self, status: int, message: str) -> None:
        if status != _c.OK:
            self._failure = (status, message)
        self._handed.set()
        self._done.set()

    def _wait(self, event: threading.Event) -> None:
        event.wait()
        if self._failure is not None:
            status, message = self._failure
            raise _from_status(status, f"the batch that writes this DeviceBuffer failed, so "
                                       f"its contents are undefined: {message}")

    def wait(self) -> "DeviceBuffer":
        """Waits until the batch that writes the buffer is complete (at once for a run's),
        raising that batch's error if it failed; returns the buffer."""
        self._wait(self._done)
        return self

    # ---- facts ------------------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        """Bytes the array covers."""
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def context(self) -> "Context":
        """The context whose device memory this is."""
        return self._context

    @property
    def backend(self) -> str:
        """"host" or "cuda"."""
        return self._context.backend

    @property
    def device_id(self) -> int:
        """The device index (0 on HOST)."""
        return self._context.device if self.backend == "cuda" else 0

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    def __repr__(self) -> str:
        where = f"cuda:{self.device_id}" if self.backend == "cuda" else "host"
        return f"DeviceBuffer(shape={self.shape}, dtype={self.dtype}, {where}, ptr={self.ptr:#x})"

    # ---- to the host ------------------------------------------------------------------------

    def to_host(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The data copied to host memory (sp_memcpy, after the batch is complete): into `out`
        (a writable C-contiguous numpy array of the same dtype and shape) or a new array."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        elif not isinstance(out, np.ndarray):
            raise InvalidArgument(f"out must be a numpy array, not {type(out).__name__}")
        elif out.dtype != self.dtype or tuple(out.shape) != self.shape:
            raise InvalidArgument(f"out is {out.dtype} {tuple(out.shape)}; the buffer is "
                                  f"{self.dtype} {self.shape}")
        elif not out.flags.c_contiguous or not out.flags.writeable:
            raise InvalidArgument("out must be C-contiguous and writable")
        self.wait()
        if self.nbytes:
            _c.memcpy(self._context._c, out.ctypes.data, self.ptr, self.nbytes)
        return out

    def numpy(self) -> np.ndarray:
        """A new numpy array holding a copy of the data (``to_host()``)."""
        return self.to_host()

    # ---- DLPack and the CUDA array interface -------------------------------------------------

    def __dlpack_device__(self) -> tuple[int, int]:
        if self.backend == "cuda":
            return (KDL_CUDA, self.device_id)
        return (KDL_CPU, 0)

    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[tuple[int, int]] = None,
        dl_device: Optional[tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError(f"this DeviceBuffer is on DLPack device {device}, not "
                              f"{tuple(dl_device)}; copy it with numpy() first")
        if copy:
            raise BufferError("DeviceBuffer exports its memory without copying (copy=True "
                              "asked); use numpy() for a host copy")
        if self.backend == "cuda" and stream != _NO_SYNC:
            # None is the legacy default stream (the array API's rule): the pool must wait for
            # it as for any stream named
            self._streams.add(_norm_stream(stream))
            # Ready on the consumer stream once handed off to it; on any other, once DONE.
            handed_here = _norm_stream(stream) in self._ready_on
            self._wait(self._handed if handed_here else self._done)
        else:
            if self.backend == "cuda":  # the consumer reads on a stream it does not name
                self._unknown_reader[0] = True
            self._wait(self._done)
        code, bits = dlpack_code(self.dtype)
        view = _c.dlpack_view(self.ptr, list(self.shape), code, bits, device[0], device[1], self)
        if max_version is None:
            return view.__dlpack__()
        return view.__dlpack__(max_version=max_version)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self.backend != "cuda":
            raise AttributeError("a HOST DeviceBuffer is host memory: it exports DLPack "
                                 "(kDLCPU) and numpy(), not __cuda_array_interface__")
        self._unknown_reader[0] = True  # the reader's stream is not ours to know
        ready_on: Optional[int] = None
        if not self._done.is_set():
            if self._handed_to is not None:
                self._wait(self._handed)
                ready_on = self._handed_to
            else:
                self._wait(self._done)
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            "stream": ready_on,
        }


class DevicePool:
    """Output buffers a pipeline allocates for ``out="device"``, reused by the module
    docstring's rule. At most `capacity` idle blocks are kept; the rest are freed."""

    def __init__(self, context: "Context", capacity: int = 8) -> None:
        self._context = context
        self._lock = threading.RLock()  # a finalizer may run on this thread inside lease()
        self._free: list[tuple[Any, list[Any]]] = []  # (block, events to wait for), oldest first
        self.capacity = capacity
        self.blocks_made = 0  # for tests: how many blocks were allocated
        self.live = 0  # blocks made and not freed: leased out or idle

    def _take(self, want: int) -> Optional[tuple[Any, list[Any]]]:
        """An idle block that fits: one whose consumers are done with it if there is one;
        else, while fewer than 2 x capacity blocks live, none (a new one is cheaper than a
        host wait for a consumer's step); else the oldest, whose events are then waited for."""
        with self._lock:
            fits = [i for i, (block, _) in enumerate(self._free)
                    if want <= block.bytes <= 2 * want]
            for i in fits:
                if all(event.query() for event in self._free[i][1]):
                    return self._free.pop(i)
            if fits and self.live >= 2 * self.capacity:
                return self._free.pop(fits[0])
            return None

    def lease(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceBuffer:
        nbytes = array_bytes(dtype, shape, "out='device'")
        want = max(1, nbytes)
        found = self._take(want)
        if found is not None:
            block, events = found
            for event in events:  # the consumer stream's work that read it last
                event.synchronize()
        else:
            block = _c.DeviceBlock(self._context._c, want)
            with self._lock:
                self.blocks_made += 1
                self.live += 1
        buf = DeviceBuffer._make(self._context, block, shape, dtype)
        finalizer = weakref.finalize(buf, self._release, block, buf._streams,
                                     buf._unknown_reader)
        finalizer.atexit = False  # at exit the blocks are freed with their references
        return buf

    def _events_for(self, streams: set[int]) -> Optional[list[Any]]:
        """An event recorded now on each consumer stream, or None when that cannot be done
        (no torch, a stream gone): the block is freed then."""
        torch = _torch()
        if torch is None:
            return None  # freed: sp_device_free (cudaFree) waits for the device
        device = self._context.device
        events: list[Any] = []
        try:
            for handle in streams:
                stream = (torch.cuda.default_stream(device) if handle == LEGACY_STREAM
                          else torch.cuda.ExternalStream(handle, device=device))
                event = torch.cuda.Event()
                event.record(stream)
                events.append(event)
        except Exception:  # noqa: BLE001 - a stream gone: free the block instead
            return None
        return events

    def _release(self, block: Any, streams: set[int], unknown_reader: list[bool]) -> None:
        """The last reference to a leased buffer went: back to the idle list (after an event on
        each consumer stream that may still read it), or freed."""
        events: Optional[list[Any]] = []
        if self._context.backend == "cuda":
            events = None if unknown_reader[0] else self._events_for(streams) if streams else []
        with self._lock:
            if events is not None and len(self._free) < self.capacity:
                self._free.append((block, events))
            else:
                self.live -= 1  # freed when `block` goes, below

    @property
    def idle(self) -> int:
        """Blocks ready to be handed out again."""
        with self._lock:
            return len(self._free)


def device_empty(context: "Context", shape: ShapeLike, dtype: Any) -> DeviceBuffer:
    """Context.device_empty: an uninitialized DeviceBuffer of its own block."""
    dt = as_dtype(dtype, "dtype")
    dims = as_shape(shape, "shape")
    nbytes = array_bytes(dt, dims, "device_empty")
    block = _c.DeviceBlock(context._c, max(1, nbytes))
    return DeviceBuffer._make(context, block, dims, dt)


def to_device(context: "Context", array: Any) -> DeviceBuffer:
    """Context.to_device: a copy of a host array in a new DeviceBuffer."""
    from .pipeline import _host_array

    host = _host_array(array, "array", writable=False)
    dt = as_dtype(host.dtype, "array's dtype")
    src = np.ascontiguousarray(host)
    buf = device_empty(context, src.shape, dt)
    if buf.nbytes:
        _c.memcpy(context._c, buf.ptr, src.ctypes.data, buf.nbytes)
    return buf


# ---- device arrays the caller passes --------------------------------------------------------


class DeviceEnd(NamedTuple):
    """A device array given as `x` or `out`, as read without copying."""

    ptr: int
    shape: tuple[int, ...]
    dtype: Optional[np.dtype]  # None: a dtype numpy has no name for (its text in dtype_text)
    dtype_text: str
    contiguous: bool
    readonly: bool
    cuda: bool  # CUDA memory (False: a DeviceBuffer of a HOST context)
    device_id: Optional[int]  # None when the object does not say
    obj: Any


def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], unit: int) -> bool:
    """Whether `strides` (in units of `unit` bytes or elements) are C order for `shape`;
    dimensions of one element, and empty arrays, place no constraint."""
    if any(d == 0 for d in shape):
        return True
    expect = unit
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expect:
            return False
        expect *= d
    return True


def _dtype_of(code: int, bits: int) -> tuple[Optional[np.dtype], str]:
    kind = _DLPACK_KINDS.get(code)
    if kind is None or bits % 8:
        return None, f"DLPack type (code {code}, {bits} bits)"
    try:
        dt = np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(np.bool_)
    except TypeError:
        return None, f"DLPack type (code {code}, {bits} bits)"
    return dt, str(dt)


def device_end(obj: Any, what: str, backend: str = "cuda") -> Optional[DeviceEnd]:
    """The device array `obj` is, or None for host memory (numpy, CPU tensors, pinned). A
    DLPack producer on a CUDA device is refused unexported for a pipeline of `backend` HOST."""
    if isinstance(obj, DeviceBuffer):
        return DeviceEnd(obj.ptr, obj.shape, obj.dtype, str(obj.dtype), True, False,
                         obj.backend == "cuda", obj.device_id, obj)
    if isinstance(obj, (np.ndarray, bytes, bytearray, memoryview, str)):
        return None
    if hasattr(obj, "__dlpack_device__"):
        try:
            dev_type, dev_id = (int(v) for v in obj.__dlpack_device__())
        except Exception:  # noqa: BLE001 - not DLPack after all: the host path says so
            return None
        if dev_type not in (KDL_CUDA, KDL_CUDA_MANAGED):
            return None
        if backend != "cuda":
            raise InvalidArgument(f"{what} is CUDA device memory (DLPack device "
                                  f"{(dev_type, dev_id)}), but the pipeline's context is HOST: "
                                  "give it host memory (or a DeviceBuffer of this context)")
        try:
            ptr, shape, strides, code, bits, _t, _d = _c.array_info(obj)
        except (TypeError, ValueError, BufferError, RuntimeError) as exc:
            raise InvalidArgument(f"{what}: the DLPack export of {type(obj).__name__} failed: "
                                  f"{exc}") from exc
        dt, text = _dtype_of(code, bits)
        return DeviceEnd(int(ptr), tuple(shape), dt, text,
                         _c_contiguous(tuple(shape), tuple(strides), 1), False, True, dev_id, obj)
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        return None
    if not isinstance(cai, dict) or "data" not in cai or "shape" not in cai:
        raise InvalidArgument(f"{what}: __cuda_array_interface__ of {type(obj).__name__} is not "
                              "a dict with 'data' and 'shape'")
    if cai.get("mask") is not None:
        raise InvalidArgument(f"{what}: masked CUDA arrays are not supported")
    shape = tuple(int(d) for d in cai["shape"])
    try:
        dt: Optional[np.dtype] = np.dtype(cai.get("typestr", ""))
        text = str(dt)
    except TypeError:
        dt, text = None, repr(cai.get("typestr"))
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    contiguous = strides is None or (
        dt is not None and _c_contiguous(shape, tuple(int(s) for s in strides), dt.itemsize))
    return DeviceEnd(int(ptr or 0), shape, dt, text, contiguous, bool(readonly), True, None, obj)


def wait_for_producer(end: DeviceEnd, device: int) -> None:
    """Before a device input is read: its producer's work must be complete, as the library
    reads it on its own streams. A DeviceBuffer waits for its batch; a torch tensor for
    torch's current stream, a CuPy array for CuPy's; a __cuda_array_interface__ array for the
    stream it names. Another DLPack producer names no stream: its caller synchronizes it."""
    obj = end.obj
    cupy = sys.modules.get("cupy")
    if isinstance(obj, DeviceBuffer):
        obj.wait()
    elif is_torch_cuda(obj):
        _torch().cuda.current_stream(obj.device).synchronize()
    elif cupy is not None and isinstance(obj, cupy.ndarray):
        # CuPy's producer is its current stream, as torch's is; its DLPack export (which
        # array_info read) made no stream of ours wait for it
        with cupy.cuda.Device(obj.device.id):
            cupy.cuda.get_current_stream().synchronize()
    elif hasattr(obj, "__cuda_array_interface__"):
        stream = obj.__cuda_array_interface__.get("stream")
        if stream:
            sync_stream(int(stream), device)


def check_end(end: DeviceEnd, what: str, context: "Context", dtype: np.dtype,
              shape: Optional[tuple[int, ...]], record_shape: tuple[int, ...],
              writable: bool) -> None:
    """A device array against what the pipeline reads or writes: dtype, shape (`shape` for an
    output, any record count for an input), C order, writability, and memory the pipeline's
    context can use. Raises InvalidArgument with what is wrong; touches nothing."""
    if end.dtype != dtype:
        raise InvalidArgument(f"{what} is {end.dtype_text}, but the pipeline's "
                              f"{'output' if writable else 'input'} is {dtype}")
    if shape is not None:
        if end.shape != shape:
            raise InvalidArgument(f"{what} has shape {end.shape}; this run's output has shape "
                                  f"{shape}")
    elif len(end.shape) != 1 + len(record_shape) or end.shape[1:] != record_shape:
        want = ", ".join(["n", *map(str, record_shape)])
        raise InvalidArgument(f"{what} has shape {end.shape}; the pipeline takes ({want}"
                              f"{',' if not record_shape else ''}): {dtype} records of shape "
                              f"{record_shape}")
    if not end.contiguous:
        raise InvalidArgument(f"{what} is a device array that is not C-contiguous; device "
                              "memory is read and written in place, so make it contiguous "
                              "first (tensor.contiguous(), cupy.ascontiguousarray)")
    if writable and end.readonly:
        raise InvalidArgument(f"{what} is read-only")
    if isinstance(end.obj, DeviceBuffer):
        other = end.obj.context
        if other is not context and (other.backend != context.backend
                                     or end.obj.device_id != (context.device
                                                              if context.backend == "cuda"
                                                              else 0)):
            raise InvalidArgument(f"{what} is device memory of another context ({other!r}); "
                                  f"the pipeline's is {context!r}")
        return
    if context.backend != "cuda":
        raise InvalidArgument(f"{what} is CUDA device memory, but the pipeline's context is "
                              "HOST: give it host memory (or a DeviceBuffer of this context)")
    if end.device_id is not None and end.device_id != context.device:
        raise InvalidArgument(f"{what} is on CUDA device {end.device_id}, but the pipeline "
                              f"runs on device {context.device}")

