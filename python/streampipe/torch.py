"""streampipe.torch: a PyTorch loader whose batches are preprocessed in a pipeline and arrive as
CUDA tensors, ready on the current stream (issue 25).

::

    from streampipe.torch import Loader

    loader = Loader(dataloader, [normalize], device=None)   # a DataLoader, pin_memory=False
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for images, labels in loader:                       # CUDA tensors
            loss = loss_fn(model(images), labels)

Each host batch is submitted to a stream of the pipeline with ``out="device"`` and a CUDA
stream of the loader's own as the consumer (``sp_stream_submit_to``): the library copies it in
(through its pinned staging), runs the stages on the device, and makes that stream wait for the
output on the device; when the batch is yielded, torch's current stream waits for it there
(an event on that stream), with no host wait; the batches behind it are already being copied
and preprocessed while the step runs. The submits and the stream's events are taken by
threads of the binding's that never take the interpreter's lock (streampipe._torch_feed says
why), an array source is cut into batches there, so the training thread's host time goes to
the training; an array source's labels are on the device for the whole epoch. The tensor is
``torch.from_dlpack`` of the output's block, no copy; the block is written again only once
the tensor (and everything made from it by view) is gone and an event recorded then on the
stream it was used on has completed (python/README.md states the rule). Use it on the
current stream of the iteration that yielded it, as torch's own allocator expects.

On a machine without CUDA (or ``backend="host"``) the same loader runs the stages on the HOST
backend and yields CPU tensors over the output buffers, so code and tests run anywhere.

This module imports torch only when a Loader is made: without torch it imports, and
``Loader(...)`` raises ImportError saying what to install.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from . import _streampipe as _c
from ._dtypes import dlpack_code
from ._torch_feed import READY_AHEAD, Blocks, FeedEpoch
from .device import KDL_CPU, KDL_CUDA, stream_handle
from .errors import InvalidArgument, Unsupported

__all__ = ["Loader", "local_rank"]

# An array source's labels up to this size live on the device for the epoch (_rest_on_device).
REST_ON_DEVICE_MAX_BYTES = 64 << 20

_RANK_VARIABLES = ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK")

# Host staging threads of the pipeline a Loader makes (staging_threads=0). A training process's
# CPUs belong to its loop: with the library's default (one per CPU, up to 16, each spinning a
# while between copies) the loop's own thread slowed and the GPU waited for data 6.0% of the
# time; with 4 it waited 0.6% and the Loader ran 1.16x a hand-written prefetcher (2: 1.2%,
# 1.08x; 8: 0.6%, 1.03x; batches of 12 MiB, bench/PERF.md, thirteenth session, calls 3-4).
LOADER_STAGING_THREADS = 4


def _require_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "streampipe.torch.Loader needs PyTorch, which is not installed "
            "(pip install torch)"
        ) from exc
    return torch


def local_rank() -> Optional[int]:
    """This process's local rank under torchrun (LOCAL_RANK), Slurm (SLURM_LOCALID) or Open
    MPI (OMPI_COMM_WORLD_LOCAL_RANK), the first of them set; None when none is."""
    for name in _RANK_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            try:
                rank = int(value)
            except ValueError:
                raise InvalidArgument(f"{name}={value!r} is not a local rank") from None
            if rank < 0:
                raise InvalidArgument(f"{name}={value!r} is not a local rank")
            return rank
    return None


def _device_index(device: Any, torch: Any) -> Optional[int]:
    """The CUDA device index `device` names (an int, "cuda:1", "cuda", a torch.device), or
    None for "cpu"."""
    if isinstance(device, bool):
        raise InvalidArgument("device must be an int, a string or a torch.device, not bool")
    if isinstance(device, (int, np.integer)):
        if device < 0:
            raise InvalidArgument(f"device is {device}; a CUDA device index is not negative")
        return int(device)
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InvalidArgument(f"device {device!r} is not a device: {exc}") from None
    if dev.type == "cpu":
        return None
    if dev.type != "cuda":
        raise InvalidArgument(f"device {device!r}: the loader yields CUDA (or CPU) tensors")
    return dev.index if dev.index is not None else torch.cuda.current_device()


def _is_array(obj: Any, torch: Any) -> bool:
    return isinstance(obj, (np.ndarray, torch.Tensor))


def _host(obj: Any, torch: Any, what: str) -> np.ndarray:
    """A host batch as a numpy array (CPU tensors without a copy)."""
    if isinstance(obj, torch.Tensor):
        if obj.is_cuda:
            raise InvalidArgument(f"{what} is a CUDA tensor; the loader takes host batches")
        return obj.detach().numpy()
    if isinstance(obj, np.ndarray):
        return obj
    raise InvalidArgument(f"{what} is a {type(obj).__name__}; the loader takes numpy arrays or "
                          "CPU tensors (or tuples of them: the first goes through the stages)")


class Loader:
    """Batches of `source` through `stages`, yielded as CUDA tensors (CPU tensors on HOST).

    ``source``: an iterable of host batches, iterated once per epoch: numpy arrays or CPU
    tensors of shape ``(records, *record_shape)``, or tuples/lists of them (a DataLoader over a
    TensorDataset: ``(images, labels)``), whose first element goes through the stages and the
    others (labels) are moved to the loader's device as they are; a ``torch.utils.data
    .DataLoader`` with its workers and ``pin_memory=False`` (the library stages through its
    own pinned memory). Or one array (or a tuple of arrays of equal length), cut into batches
    of ``batch_size`` records in order (the last one short unless ``drop_last``).

    ``stages``: a :class:`streampipe.Stage` or a list of them (the pipeline is made at the
    first batch, for its dtype and record shape, on the loader's context), or a
    :class:`streampipe.Pipeline` made by the caller. ``batch_size``: for an array source; for
    an iterable it must be None or the source's own ``batch_size``. ``device``: the CUDA
    device (an int, "cuda:N", a torch.device); None picks the local rank's (LOCAL_RANK,
    SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, modulo the GPUs visible; 0 without one).
    ``backend``: "auto" (CUDA when streampipe and torch both have it, else HOST), "cuda" or
    "host". ``max_in_flight``: batches queued ahead of the consumer. ``chunk_records``,
    ``depth``, ``staging_threads``: the pipeline's, when the loader makes it (0 staging
    threads: LOADER_STAGING_THREADS, fewer than a pipeline's own default).

    ``len(loader)`` is the number of batches when the source says (``len(source)``, or the
    array's length over ``batch_size``). Iterating again starts another epoch;
    :meth:`set_epoch` is forwarded to the source's sampler. Leaving the loop early (``break``,
    an exception) cancels the batches queued behind it and closes the pipeline's stream; a
    failed batch raises its error in the loop (a Python stage's exception as ``__cause__``),
    and so does whatever the source raises.
    """

    def __init__(
        self,
        source: Any,
        stages: Any,
        batch_size: Optional[int] = None,
        device: Any = None,
        *,
        backend: str = "auto",
        drop_last: bool = False,
        max_in_flight: int = 4,
        chunk_records: int = 0,
        depth: int = 0,
        staging_threads: int = 0,
    ) -> None:
        torch = _require_torch()
        import streampipe as sp

        self._torch = torch
        if backend not in ("auto", "host", "cuda"):
            raise InvalidArgument(f"backend is {backend!r}; use 'auto', 'host' or 'cuda'")
        if not isinstance(max_in_flight, int) or isinstance(max_in_flight, bool) \
                or max_in_flight < 1:
            raise InvalidArgument(f"max_in_flight is {max_in_flight!r}; it is an int >= 1")
        self.max_in_flight: int = max_in_flight
        self.drop_last: bool = bool(drop_last)
        self._array_source = _is_array(source, torch) or (
            isinstance(source, tuple) and len(source) > 0
            and all(_is_array(a, torch) for a in source))
        if self._array_source:
            if batch_size is None or isinstance(batch_size, bool) \
                    or not isinstance(batch_size, int) or batch_size < 1:
                raise InvalidArgument("an array source needs batch_size, an int >= 1")
            arrays = source if isinstance(source, tuple) else (source,)
            lengths = {int(a.shape[0]) for a in arrays}
            if len(lengths) != 1:
                raise InvalidArgument(f"the source's arrays differ in length: {sorted(lengths)}")
        else:
            if not hasattr(source, "__iter__"):
                raise InvalidArgument(f"source is a {type(source).__name__}: give an iterable "
                                      "of batches or an array")
            own = getattr(source, "batch_size", None)
            if batch_size is not None and own is not None and own != batch_size:
                raise InvalidArgument(f"batch_size is {batch_size}, but the source makes "
                                      f"batches of {own}")
            if batch_size is not None and own is None:
                raise InvalidArgument("batch_size is for an array source; an iterable's "
                                      "batches are taken as they come")
        self.source: Any = source
        self.batch_size: Optional[int] = batch_size if batch_size is not None else getattr(
            source, "batch_size", None)
        if isinstance(stages, sp.Pipeline):
            self._pipeline: Optional[Any] = stages
            self.context: Any = stages.context
            self._stages: Sequence[Any] = stages.stages
        else:
            self._pipeline = None
            self._stages = [stages] if isinstance(stages, sp.Stage) else list(stages)
            self.context = self._open_context(sp, backend, device)
        self._options = dict(chunk_records=chunk_records, depth=depth,
                             staging_threads=staging_threads or LOADER_STAGING_THREADS)
        self._lanes: Optional[list[Any]] = None  # _hand_off_lanes
        self._blocks: Optional[Blocks] = None  # the outputs' blocks, kept across epochs
        if self.context.backend == "cuda":
            if not torch.cuda.is_available():
                raise Unsupported("the pipeline runs on CUDA, but this torch has no CUDA")
            self.device: Any = torch.device("cuda", self.context.device)
        else:
            self.device = torch.device("cpu")

    def _open_context(self, sp: Any, backend: str, device: Any) -> Any:
        torch = self._torch
        if backend == "host":
            return sp.Context("host")
        cuda_here = sp.built_with_cuda() and torch.cuda.is_available()
        if backend == "auto" and not cuda_here:
            return sp.Context("host")
        if device is None:
            rank = local_rank()
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            index: Optional[int] = 0 if rank is None or count == 0 else rank % count
        else:
            index = _device_index(device, torch)
            if index is None:
                return sp.Context("host")
        return sp.Context("cuda", index)

    # ---- facts ------------------------------------------------------------------------------

    @property
    def pipeline(self) -> Any:
        """The :class:`streampipe.Pipeline` the batches go through (None until the first batch
        when the loader makes it)."""
        return self._pipeline

    def __len__(self) -> int:
        if self._array_source:
            arrays = self.source if isinstance(self.source, tuple) else (self.source,)
            n = int(arrays[0].shape[0])
            assert self.batch_size is not None
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        try:
            return len(self.source)
        except TypeError:
            raise TypeError(f"the source ({type(self.source).__name__}) has no len()") from None

    def set_epoch(self, epoch: int) -> None:
        """Forwards ``set_epoch(epoch)`` to the source's sampler (``source.sampler``, its
        ``batch_sampler.sampler``, or the source itself), where one has it: a
        DistributedSampler reshuffles per epoch so."""
        candidates = [
            getattr(self.source, "sampler", None),
            getattr(getattr(self.source, "batch_sampler", None), "sampler", None),
            self.source,
        ]
        for c in candidates:
            if c is not None and callable(getattr(c, "set_epoch", None)):
                c.set_epoch(epoch)
                return

    def __repr__(self) -> str:
        return (f"Loader({type(self.source).__name__}, stages="
                f"{[s.name for s in self._stages]}, device={self.device})")

    # ---- iteration --------------------------------------------------------------------------

    def _batches(self) -> Iterator[tuple[np.ndarray, Optional[tuple[Any, ...]]]]:
        """(the array for the stages, the rest of the batch: None when the batch is one
        array) for each batch of an epoch."""
        torch = self._torch
        if self._array_source:
            arrays = self.source if isinstance(self.source, tuple) else (self.source,)
            n = int(arrays[0].shape[0])
            assert self.batch_size is not None
            whole = self._rest_on_device(arrays[1:]) if isinstance(self.source, tuple) else None
            for start in range(0, n, self.batch_size):
                stop = min(n, start + self.batch_size)
                if self.drop_last and stop - start < self.batch_size:
                    break
                rest = None
                if isinstance(self.source, tuple):
                    rest = tuple(a[start:stop] for a in (whole or arrays[1:]))
                yield _host(arrays[0][start:stop], torch, "the source"), rest
            return
        for i, batch in enumerate(self.source):
            if isinstance(batch, (tuple, list)):
                if not batch:
                    raise InvalidArgument(f"batch {i} of the source is empty")
                yield _host(batch[0], torch, f"batch {i}[0]"), tuple(batch[1:])
            else:
                yield _host(batch, torch, f"batch {i}"), None

    def _rest_on_device(self, rest: Sequence[Any]) -> Optional[list[Any]]:
        """An array source's other arrays (labels) copied to the device whole, once per epoch
        (so a change to them between epochs is seen), when they are small: each batch's are
        then views, with no copy and no host work of their own (each batch's own pinned copy
        took 0.2 ms of the training thread on the H200). None on HOST or when they are large."""
        torch = self._torch
        if self.device.type != "cuda":
            return None
        tensors = [r if isinstance(r, torch.Tensor) else torch.as_tensor(r) for r in rest]
        if sum(t.numel() * t.element_size() for t in tensors) > REST_ON_DEVICE_MAX_BYTES:
            return None
        return [t if t.device == self.device else
                (t if t.is_pinned() else t.pin_memory()).to(self.device, non_blocking=True)
                for t in tensors]  # on the current stream, which the steps run on after it

    def _pipeline_for(self, x: np.ndarray) -> Any:
        if self._pipeline is None:
            self._pipeline = self.context.pipeline(self._stages, x.dtype, x.shape[1:],
                                                   **self._options)
        return self._pipeline

    def _rest(self, rest: tuple[Any, ...], lane: Any) -> tuple[Any, ...]:
        """The rest of a batch (labels) on the loader's device, as tensors: on CUDA copied
        from pinned memory on the batch's lane, so that no copy runs on the current stream.
        A plain ``.to(device)`` of pageable memory there blocked this thread until the
        stream had run the step queued before it, so the next step's kernels were queued
        only once the GPU was idle (the GPU waited 20% of the time in bench/PERF.md's
        loader rows)."""
        torch = self._torch
        out = []
        for r in rest:
            t = r if isinstance(r, torch.Tensor) else torch.as_tensor(r)
            if lane is not None and t.device.type == "cpu":
                t = t if t.is_pinned() else t.pin_memory()
                with torch.cuda.stream(lane):  # ready when the current stream waits on it
                    t = t.to(self.device, non_blocking=True)
            elif self.device.type == "cuda":
                t = t.to(self.device)
            out.append(t)
        return tuple(out)

    def _hand_off_lanes(self) -> list[Any]:
        """CUDA streams of the loader's own, one per batch that can be ahead of the consumer
        (in flight, or handed off and waiting to be taken) and one more, that the library's
        hand-off makes wait for each batch.

        Why not torch's current stream itself: the library makes its consumer stream wait as
        soon as a batch is enqueued, max_in_flight batches ahead of the step, and every kernel
        queued on that stream after such a wait would then wait for that later batch too,
        turning the loader's lead into the step's latency. A lane holds the wait for its
        batch alone (the Feed submits a batch on a lane only after the lane's last batch was
        taken), and the current stream waits for it (``wait_stream``) only when the batch is
        yielded."""
        if self._lanes is None:
            torch = self._torch
            self._lanes = [torch.cuda.Stream(device=self.device)
                           for _ in range(self.max_in_flight + READY_AHEAD + 1)]
        return self._lanes

    def _whole_array(self, pipeline: Any) -> Optional[np.ndarray]:
        """An array source's records for the stages as one C-contiguous array of the
        pipeline's input, which the Feed cuts into batches with no Python per batch; None
        when it is not one (its batches then go one by one, each checked and copied)."""
        if not self._array_source:
            return None
        arrays = self.source if isinstance(self.source, tuple) else (self.source,)
        x = _host(arrays[0], self._torch, "the source")
        if x.dtype != pipeline.in_dtype or tuple(x.shape[1:]) != pipeline.in_shape \
                or not x.flags.c_contiguous:
            return None
        return x

    def __iter__(self) -> Iterator[Any]:
        torch = self._torch
        batches = self._batches()
        first = next(batches, None)
        if first is None:
            return
        pipeline = self._pipeline_for(first[0])
        cuda = self.context.backend == "cuda"
        lanes = self._hand_off_lanes() if cuda else []
        if self._blocks is None:
            self._blocks = Blocks(self.context, _record_event(torch) if cuda else None)
        epoch = FeedEpoch(pipeline, self.max_in_flight, [stream_handle(s) for s in lanes],
                          self._blocks)
        labels = None
        try:
            whole = self._whole_array(pipeline)
            if whole is not None:
                labels = self._array_rest()
                epoch.feed_array(whole, self.batch_size or 1, self.drop_last)
                batches.close()
            else:
                epoch.feed_batches(first, batches, lambda i, rest: self._rest(
                    rest, lanes[i % len(lanes)] if cuda else None))
            shape = pipeline.out_shape
            while (taken := epoch.take()) is not None:
                lane = lanes[taken.index % len(lanes)] if cuda else None
                rest = taken.rest
                if labels is not None:
                    start = taken.index * (self.batch_size or 1)
                    rest = labels(start, start + taken.records, lane)
                yield self._yielded(taken, shape, pipeline.out_dtype, lane, rest)
        finally:
            epoch.stop()

    def _array_rest(self) -> Callable[[int, int, Any], Optional[tuple[Any, ...]]]:
        """An array source's rest (labels) for records [start, stop) of a batch on `lane`:
        views of the arrays on the device (_rest_on_device), or slices moved there on the
        lane (_rest); None when the source is one array."""
        if not isinstance(self.source, tuple) or len(self.source) < 2:
            return lambda start, stop, lane: None
        rest = self.source[1:]
        whole = self._rest_on_device(rest)
        if whole is not None:
            return lambda start, stop, lane: tuple(t[start:stop] for t in whole)
        return lambda start, stop, lane: self._rest(tuple(a[start:stop] for a in rest), lane)

    def _yielded(self, taken: Any, shape: tuple[int, ...], dtype: np.dtype, lane: Any,
                 rest: Optional[tuple[Any, ...]]) -> Any:
        """A batch as the loop gets it: a tensor over its output block (DLPack, no copy), on
        CUDA with torch's current stream made to wait for the batch's lane now, not at the
        hand-off (see _hand_off_lanes); the stream is noted in the block's Lease, whose
        release gives the block back after an event there."""
        torch = self._torch
        code, bits = dlpack_code(dtype)
        where = (KDL_CPU, 0) if lane is None else (KDL_CUDA, self.device.index)
        view = _c.dlpack_view(taken.ptr, [taken.records, *shape], code, bits, *where,
                              taken.lease)
        tensor = torch.from_dlpack(view.__dlpack__())  # a capsule: torch syncs no stream
        if lane is not None:
            current = torch.cuda.current_stream(self.device)
            taken.lease.stream = current
            current.wait_stream(lane)  # after the lane's wait for the batch (and its labels)
            for t in rest or ():  # made on the lane, used on the current stream
                if t.device.type == "cuda":
                    t.record_stream(current)
        return tensor if rest is None else (tensor, *rest)


def _record_event(torch: Any) -> Callable[[Any], Any]:
    def record(stream: Any) -> Any:
        event = torch.cuda.Event()
        event.record(stream)
        return event

    return record
