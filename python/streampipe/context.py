"""Contexts: an open backend (HOST or CUDA), its pinned memory and its pipelines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np

from . import _streampipe as _c
from ._dtypes import ShapeLike, array_bytes, as_count, as_dtype, as_shape, dlpack_code
from .errors import InvalidArgument
from .pipeline import Pipeline
from .stage import Stage

if TYPE_CHECKING:
    from .device import DeviceBuffer
    from .group import Group

__all__ = ["Context"]

_BACKENDS = {"auto": _c.BACKEND_AUTO, "host": _c.BACKEND_HOST, "cuda": _c.BACKEND_CUDA}


class Context:
    """An open backend.

    ``backend``: "auto" (CUDA when the library was built with it and a GPU is present, else
    HOST), "host" (CPU threads, the same semantics) or "cuda"; asking for "cuda" where it is
    not built or there is no GPU raises Unsupported with the reason. ``device``: the GPU index
    (HOST ignores it). The context lives as long as anything made from it: its pipelines,
    pinned arrays and MLP stages keep it open.
    """

    def __init__(self, backend: str = "auto", device: int = 0) -> None:
        if not isinstance(backend, str) or backend not in _BACKENDS:
            raise InvalidArgument(f"unknown backend {backend!r}; use 'auto', 'host' or 'cuda'")
        device = as_count(device, "device", 0, 2**31 - 1)
        self._c = _c.Context(_BACKENDS[backend], device)

    @property
    def backend(self) -> str:
        """"host" or "cuda": what the context runs on ("auto" resolved)."""
        return _c.backend_name(self._c.backend)

    @property
    def device(self) -> int:
        """The GPU index the context was opened with (CUDA); HOST keeps the number it was
        given and ignores it."""
        return self._c.device

    def __repr__(self) -> str:
        return f"Context(backend={self.backend!r}, device={self.device})"

    def pinned_empty(self, shape: ShapeLike, dtype: Any = np.float32) -> np.ndarray:
        """An uninitialized numpy array in pinned memory (sp_host_alloc), which pipelines of
        any context read and write with the copy engines directly, without staging.

        The array keeps the context alive and its memory is freed (sp_host_free) when the
        array and every view of it are gone. An empty shape (no bytes) gives an ordinary
        empty array. On HOST the memory is ordinary memory the backend treats as pinned.
        """
        dt = as_dtype(dtype, "dtype")
        dims = as_shape(shape, "shape")
        nbytes = array_bytes(dt, dims, "pinned_empty")
        if nbytes == 0:
            return np.empty(dims, dt)
        code, bits = dlpack_code(dt)
        return self._c.pinned_array(nbytes, list(dims), code, bits)

    def device_empty(self, shape: ShapeLike, dtype: Any = np.float32) -> "DeviceBuffer":
        """An uninitialized :class:`DeviceBuffer` of this context's device memory
        (sp_device_alloc; on HOST, host memory the backend keeps as device memory): an input
        or output of runs and stream batches that crosses no PCIe. Freed with its last
        reference."""
        from .device import device_empty

        return device_empty(self, shape, dtype)

    def to_device(self, array: Any) -> "DeviceBuffer":
        """A copy of a host array (numpy, CPU tensors) in a new :class:`DeviceBuffer`
        (sp_memcpy)."""
        from .device import to_device

        return to_device(self, array)

    def pipeline(
        self,
        stages: Union[Stage, Sequence[Stage]],
        in_dtype: Any,
        in_shape: ShapeLike = (),
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
    ) -> Pipeline:
        """A pipeline of `stages` (a list, possibly empty: then it copies to the device and
        back) over records of `in_shape` and `in_dtype`. Every buffer is allocated here once.

        ``chunk_records``: records per chunk (0 or "auto": the library chooses, about 8 MiB a
        chunk, and re-chooses it while runs without a timed report go, never above that;
        ``tune_changes()`` lists each change); ``depth``: slots in the ring, 1..64 (0 or
        "auto": chosen); ``graph``: "off", "on" or "auto"
        (replay groups of chunks from CUDA graphs; stages must then not depend on
        ``chunk.index``); ``staging_threads``: host threads copying pageable memory (0:
        chosen); ``priority``: stream priority (negative is higher, CUDA);
        ``copy_piece_bytes``: enqueue copies in pieces of at most this size (0: whole);
        ``copy_by_kernel``: copies by a kernel rather than the copy engines; ``timeline``:
        how a run with a report times its operations: "sampled" (the default: a few windows
        of chunks timed, the figures extrapolated), "events" (every operation: the full
        timeline), "cupti" or "off";
        ``max_pinned_bytes``, ``max_device_bytes``: a memory budget (0: none) that a chunk
        and depth left at 0 are fitted to, and that refuses (InvalidArgument) settings it
        cannot hold; ``keep_timeline``: each run with a report keeps its timeline in the
        report, for :meth:`Report.save_trace` and :meth:`Report.save_svg` (memory: a span per
        engine per chunk, freed with the report). The C header
        ``include/streampipe.h`` (sp_pipeline_config) says more about each.
        """
        return Pipeline(
            self,
            stages,
            in_dtype,
            in_shape,
            chunk_records=chunk_records,
            depth=depth,
            graph=graph,
            staging_threads=staging_threads,
            priority=priority,
            copy_piece_bytes=copy_piece_bytes,
            copy_by_kernel=copy_by_kernel,
            timeline=timeline,
            max_pinned_bytes=max_pinned_bytes,
            max_device_bytes=max_device_bytes,
            keep_timeline=keep_timeline,
        )

    def group(self, devices: Union[None, int, Sequence[int]] = None) -> "Group":
        """Devices of this context's backend for pipelines that run over all of them
        (:class:`streampipe.group.Group`): None for every visible GPU, a count N, or a list
        of device indices; on HOST, N host backends."""
        from .group import Group

        return Group(self, devices)

    def mlp_stages(self, model: Any, precision: str = "fp32", streams: int = 1) -> list[Stage]:
        """The digits MLP's four stages (preprocess, fc1, fc2, head) for pipelines on this
        context: 64 uint8 pixels a record in, one int32 label out. `model` is an
        :class:`MLPModel` or the path of a safetensors file; ``streams``: queues per stage.
        See :mod:`streampipe.mlp`."""
        from .mlp import mlp_stages

        return mlp_stages(self, model, precision, streams)

