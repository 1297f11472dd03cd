"""The C API of streampipe, converted and nothing more (python/src); use the streampipe package.

Failures raise what streampipe.errors._from_status makes of the status and the library's message.
Dtypes cross as (DLPack type code, bits); shapes of records as lists of ints.
"""

from typing import Any, Callable, Optional, Sequence

import numpy as np

def version() -> str: ...
def status_name(status: int, /) -> str: ...
def status_message(status: int, /) -> str: ...
def backend_name(kind: int, /) -> str: ...
def pipeline_stats(pipeline: Pipeline) -> dict[str, Any]: ...
def built_with_cuda() -> bool: ...
def nvcomp_load(path: Optional[str]) -> tuple[int, str]: ...
def nvcomp_status() -> tuple[bool, int, str]: ...
def copy_nontemporal(dst: np.ndarray, src: np.ndarray, bytes: int) -> None: ...
def exiting(timeout_s: float, daemons: bool) -> bool: ...  # streampipe._exit's atexit hook

OK: int
ERR_INVALID_ARGUMENT: int
ERR_OUT_OF_MEMORY: int
ERR_OUT_OF_DEVICE_MEMORY: int
ERR_UNSUPPORTED: int
ERR_STAGE_FAILED: int
ERR_BACKEND: int
ERR_DEVICE_LOST: int
ERR_CANCELLED: int
ERR_WOULD_BLOCK: int
ERR_TIMEOUT: int
EVENT_INPUT_RELEASED: int
EVENT_DONE: int
EVENT_HANDED_OFF: int
BACKEND_AUTO: int
BACKEND_HOST: int
BACKEND_CUDA: int
GRAPH_OFF: int
GRAPH_ON: int
GRAPH_AUTO: int
TIMELINE_SAMPLED: int
TIMELINE_EVENTS: int
TIMELINE_CUPTI: int
TIMELINE_OFF: int
MAX_STAGES: int
MAX_DEPTH: int
MAX_STAGE_STREAMS: int
SIZE_MAX: int
MLP_INPUTS: int
MLP_HIDDEN: int
MLP_CLASSES: int
MLP_LAYERS: int
MLP_MAX_PIXEL: int
MLP_FP32: int
MLP_TF32: int

class Context:
    """sp_context; destroyed when its last owner (pipelines, pinned arrays) lets go."""

    def __init__(self, kind: int, device: int) -> None: ...
    @property
    def backend(self) -> int: ...
    @property
    def device(self) -> int: ...
    def last_error(self) -> str: ...
    def pinned_array(self, bytes: int, shape: Sequence[int], code: int, bits: int) -> np.ndarray: ...

class Report:
    """One run's sp_report, owning the timeline it kept (keep_timeline): freed with it."""

    def to_dict(self) -> dict[str, Any]: ...
    @property
    def has_timeline(self) -> bool: ...
    def write_trace(self, path: str, /) -> None: ...
    def write_svg(self, path: str, /) -> None: ...

class Pipeline:
    """sp_pipeline. Each stage dict has name, streams, builtin (a BuiltinStage or None) and,
    for Python stages, host and cuda (adapters or None), in_dtype, out_dtype, in_shape,
    out_shape, out_record_bytes, scratch_bytes. A host adapter is called as
    host(index, first_record, records, inp, out, scratch) with numpy views (scratch None
    without scratch_bytes); a cuda adapter as
    cuda(index, first_record, records, inp, out, in_ptr, out_ptr, stream, scratch,
    scratch_ptr) with array-API objects over device memory. Each returns None, or (cause,
    message) to fail the chunk with sp_chunk_fail_cause."""

    def __init__(
        self,
        ctx: Context,
        stages: Sequence[dict[str, Any]],
        in_record_bytes: int,
        chunk_records: int,
        depth: int,
        staging_threads: int,
        priority: int,
        copy_piece_bytes: int,
        graph: int,
        copy_by_kernel: bool,
        timeline: int,
        max_pinned_bytes: int,
        max_device_bytes: int,
        keep_timeline: bool,
        devices: Sequence[int],
    ) -> None:
        """devices: empty for one pipeline on ctx, else an sp_group over them ([-1]: all)."""
    def tune_changes(self) -> list[dict[str, Any]]:
        """The library's changes of chunk size and depth: at_s, from_chunk, to_chunk,
        from_depth, to_depth, reason."""
    def group_members(self) -> list[dict[str, Any]]:
        """A group's members after its last run: device, units, records, busy_s, status,
        report (a Report); [] for a single pipeline."""
    def run(
        self, x: np.ndarray, n_records: int, out: np.ndarray, report: bool, serial: bool
    ) -> Optional[Report]: ...
    def run_io(
        self,
        read: Any,
        write: Any,
        n_records: int,
        positional: bool,
        in_dtype: tuple[int, int],
        in_shape: Sequence[int],
        out_dtype: tuple[int, int],
        out_shape: Sequence[int],
        report: bool,
    ) -> Optional[Report]:
        """sp_pipeline_run_io with read(dst, first_record, max_records) -> records (< 0: it
        failed) and write(src, first_record) -> bool over views of the staging memory."""
    def run_file(
        self,
        input: str,
        output: str,
        in_record_bytes: int,
        out_record_bytes: int,
        report: bool,
        input_format: int,
        decompress: int,
        output_format: int,
    ) -> Any:
        """sp_file_io_open, sp_pipeline_run_io (sp_group_run_io), commit, close: the records
        run, or (records, Report, input figures, output figures), each figures
        (format, compressed bytes, uncompressed bytes) or None for a raw end; the input's
        followed by (ring chunks, staging chunks, ring blocks, ring bytes in, ring bytes out,
        ring busy s, note)."""
    def run_file_into(
        self,
        input: str,
        in_record_bytes: int,
        out_record_bytes: int,
        report: bool,
        input_format: int,
        decompress: int,
        make_out: Callable[[int], int],
    ) -> Any:
        """sp_file_io_open with no output, make_out(records) -> the address of memory for
        the outputs, sp_pipeline_run_io with sp_io.out there, commit, close; with report,
        (Report, input figures as run_file gives them)."""
    @property
    def out_record_bytes(self) -> int: ...
    @property
    def depth(self) -> int: ...
    def chunk_records(self, n_records: int, /) -> int: ...
    def last_error(self) -> str: ...
    @property
    def last_cause(self) -> int:
        """sp_pipeline_last_cause (a group's: its failing member's); 0: none."""
    def check_buffers(self, in_ptr: int, n_records: int, out_ptr: int) -> tuple[int, str]:
        """sp_pipeline_check_buffers: (status, why), touching nothing."""
    @property
    def last_submit_s(self) -> float: ...
    @property
    def last_wait_s(self) -> float: ...
    @property
    def last_makespan_s(self) -> float: ...

class Stream:
    """sp_stream: holds the pipeline while open. An event is (kind, tag, status, records,
    first_record, cause, message): cause the sp_chunk_fail_cause of a failed batch's DONE (0:
    none), message the failed batch's text (sp_stream_last_error after its DONE) when status
    is a failure, else ""."""

    def __init__(
        self, pipeline: Pipeline, max_in_flight: int, nonblocking: bool, input_released_events: bool
    ) -> None: ...
    def submit(
        self, x: np.ndarray, n_records: int, out: np.ndarray, tag: int, timeout_s: float
    ) -> None: ...
    def submit_ptr(
        self, in_ptr: int, n_records: int, out_ptr: int, tag: int, timeout_s: float,
        consumer: Optional[int],
    ) -> None:
        """By address (a device end); consumer: sp_stream_submit_to's stream (None: not)."""
    def next(self, timeout_s: float) -> tuple[int, int, int, int, int, int, str]: ...
    def cancel(self, tag: int, all: bool) -> int: ...
    def close(self) -> tuple[int, Report, str]: ...
    @property
    def closed(self) -> bool: ...

class Feed:
    """streampipe.torch.Loader's stream (feed.cpp): batches cut from spans of records (or
    pushed one at a time) are submitted, and their events taken, by two threads of its own
    that never take the GIL; each batch's output goes to a block of `blocks`, written again
    only once given back there. lanes: consumer streams (sp_stream_submit_to, batch i to lane
    i % len), empty on HOST; ahead: batches submitted and not taken, at most."""

    def __init__(self, pipeline: Pipeline, max_in_flight: int, lanes: list[int],
                 ahead: int, blocks: FeedBlocks) -> None: ...
    def push_span(self, ptr: int, records: int, record_bytes: int, batch: int,
                  drop_last: bool) -> bool:
        """Queues records cut into batches of `batch` (0: one batch); waits while `ahead`
        batches are queued; False once stopping."""
    def end_input(self) -> None: ...
    def take(self) -> Optional[tuple[int, int, int, int, int, str, int]]:
        """(index, block, records, status, cause, message, batches DONE so far) of the next
        batch once ready (handed off on CUDA, DONE on HOST); None after the last."""
    def stop(self) -> None:
        """Cancels what is in flight and closes the stream (waits for the ring's chunks)."""

class FeedBlocks:
    """The output blocks of a Loader's feeds (sp_device_alloc on the context), kept across
    epochs and freed with this object; one is handed to a batch again only after give()."""

    def __init__(self, ctx: Context) -> None: ...
    def give(self, block: int) -> None:
        """The block may be written again."""
    @property
    def blocks(self) -> int:
        """Blocks allocated so far."""
    @property
    def idle(self) -> int:
        """Blocks given back and not handed out again."""

class BuiltinStage:
    """An sp_stage of the library's own, with what its user pointer needs kept alive."""

    @property
    def name(self) -> str: ...
    @property
    def out_record_bytes(self) -> int: ...
    @property
    def streams(self) -> int: ...
    @property
    def scratch_bytes(self) -> int: ...

def sinmix_stage(iters: int) -> BuiltinStage: ...
def normalize_u8_stage(elements: int, scale: float, shift: float) -> BuiltinStage: ...

class MlpModel:
    @staticmethod
    def load_file(path: str) -> MlpModel: ...
    @staticmethod
    def load_bytes(data: bytes) -> MlpModel: ...
    def layer(self, index: int) -> tuple[np.ndarray, np.ndarray]: ...
    def reference_logits(self, pixels: np.ndarray, logits: np.ndarray) -> None: ...

class MlpStages:
    def __init__(self, ctx: Context, model: MlpModel, precision: int) -> None: ...
    def stages(self) -> list[BuiltinStage]: ...
    def last_error(self) -> str: ...

# ---- device memory (device.cpp, issue 25) ----

class DeviceBlock:
    """sp_device_alloc'd memory, freed (sp_device_free) with its last reference."""

    def __init__(self, ctx: Context, bytes: int) -> None: ...
    @property
    def ptr(self) -> int: ...
    @property
    def bytes(self) -> int: ...

def memcpy(ctx: Context, dst: int, src: int, bytes: int) -> None: ...  # sp_memcpy
def dlpack_view(
    ptr: int, shape: Sequence[int], code: int, bits: int, device_type: int, device_id: int,
    owner: Any,
) -> Any: ...  # an array-API object over ptr that holds owner
def array_info(array: Any) -> tuple[int, list[int], list[int], int, int, int, int]: ...
def run_ptr(
    pipeline: Pipeline, in_ptr: int, n_records: int, out_ptr: int, report: bool, serial: bool
) -> Optional[Report]: ...
