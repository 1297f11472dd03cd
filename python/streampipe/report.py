"""The report of one run (or stream): the C library's sp_report, and a run's timeline as a file."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Optional, Union

from .errors import InvalidArgument

if TYPE_CHECKING:
    from .pipeline import Pipeline

__all__ = ["Report", "EngineReport", "Compression"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class EngineReport:
    """One queue of the pipeline: stage-in, h2d, a compute stage, d2h or stage-out."""

    name: str
    kind: str  # "stage-in", "h2d", "compute", "d2h", "stage-out"
    busy_s: float  # time it worked (the sum over chunks; the union over a stage's streams)
    max_chunk_s: float  # the longest single chunk
    bytes: int  # bytes moved (copies) or read (compute)


@dataclass(frozen=True)
class Compression:
    """A compressed file's sizes (a run_file's input or output, ``Report.input_compression``
    and ``output_compression``): the bytes in the file and the records' bytes they hold.

    An input's also say where its blocks were decompressed (``include/streampipe_io.h``,
    sp_file_io_input): ``ring_chunks`` went through the ring as their compressed blocks
    (``ring_bytes_in`` over the h2d, ``ring_bytes_out`` decompressed, in ``ring_busy_s`` of
    the decompression's time on its queue: a run with a report), ``staging_chunks`` were
    decompressed on the staging threads, and ``note`` says why, in words. An output's are 0.
    """

    format: str  # "lz4" or "zstd"
    compressed_bytes: int  # the file's (framing included)
    uncompressed_bytes: int  # the records' bytes before compression / after decompression
    ring_chunks: int = 0
    staging_chunks: int = 0
    ring_blocks: int = 0  # units (LZ4 blocks, Zstandard frames) decompressed in the ring
    ring_bytes_in: int = 0
    ring_bytes_out: int = 0
    ring_busy_s: float = 0.0  # summed over chunks: several streams' spans can overlap
    note: str = ""

    @property
    def ratio(self) -> float:
        """uncompressed / compressed bytes (0.0 for an empty file)."""
        return self.uncompressed_bytes / self.compressed_bytes if self.compressed_bytes else 0.0

    @property
    def ring_gbps(self) -> float:
        """The decompression's rate while busy: ring_bytes_out / ring_busy_s, in GB/s (0.0
        when nothing was timed)."""
        return self.ring_bytes_out / self.ring_busy_s / 1e9 if self.ring_busy_s > 0 else 0.0

    @classmethod
    def _make(cls, figures: Optional[tuple[Any, ...]]) -> Optional["Compression"]:
        if figures is None:
            return None
        format, compressed, uncompressed, *ring = figures
        name = {2: "lz4", 3: "zstd"}[format]
        if not ring:  # an output's
            return cls(name, int(compressed), int(uncompressed))
        chunks, staging, blocks, bytes_in, bytes_out, busy_s, note = ring
        return cls(name, int(compressed), int(uncompressed), int(chunks), int(staging),
                   int(blocks), int(bytes_in), int(bytes_out), float(busy_s), str(note))


@dataclass(frozen=True)
class Report:
    """What one run measured (``include/streampipe.h``, ``sp_report``, has each field's meaning).

    ``efficiency`` is ``bound_s / makespan_s``; ``hidden_transfer`` the fraction of copy time
    that overlapped compute; ``bottleneck`` the engine with the largest total (or "host
    staging"). In graph mode (``graph`` True) the engine figures are not measured.
    ``pinned_bytes``: the pinned staging memory the pipeline holds, ``depth`` slots of
    ``slot_records`` records in and out and a compressed input's buffers while it is
    decompressed in the ring (``chunk_records`` is the run's cut, which can be
    smaller for a short run on a chunk the library chose); ``batches``: 1 for a run,
    the batches of a stream for :meth:`PipelineStream.close`'s report (a stream records no
    per-operation timings: its report has the counts and the makespan, and no trace).
    ``pcie_bytes``: bytes the run's copies moved between host and device memory (records x
    (in + out record bytes), less a device-resident end's: a ``out="device"`` run counts no
    output bytes). ``tune_changes``: the library's changes of chunk size or depth for the
    pipeline so far (:meth:`Pipeline.tune_changes` lists them).

    A pipeline made with ``keep_timeline=True`` gives each run's report its own copy of the
    run's timeline, for :meth:`save_trace` and :meth:`save_svg` at any time later (the
    pipeline may be gone); the copy is freed with the report.
    """

    records: int
    chunks: int
    chunk_records: int
    depth: int
    staging_threads: int
    staged_in: bool
    staged_out: bool
    makespan_s: float
    engines: tuple[EngineReport, ...]
    bound_s: float
    efficiency: float
    serial_s: float
    model_s: float
    hidden_transfer: float
    h2d_gbps: float
    d2h_gbps: float
    bottleneck: str
    notes: str
    graph: bool
    submit_s: float
    wait_s: float
    pinned_bytes: int
    batches: int
    slot_records: int
    pcie_bytes: int
    tune_changes: int
    timed_chunks: int  # chunks whose GPU operations were timed (sampled: the windows')
    _c: Any = field(repr=False, compare=False)  # the C report, which owns the timeline
    _kind: str = field(repr=False, compare=False)  # "run", or "stream"/"group": no timeline
    input_compression: Optional[Compression]  # a run_file's compressed input (None: raw)
    output_compression: Optional[Compression]  # ... and output (None: raw, or not a file run)

    @classmethod
    def _make(cls, pipeline: "Pipeline", c_report: Any,
              input_compression: Optional[Compression] = None,
              output_compression: Optional[Compression] = None,
              kind: Optional[str] = None) -> "Report":
        d = c_report.to_dict()
        d["engines"] = tuple(EngineReport(**e) for e in d["engines"])
        # the pipeline is not kept: the report and its timeline may outlive it
        if kind is None:  # a pipeline's run: a group's sums its devices' and keeps none
            kind = "group" if pipeline.devices is not None else "run"
        return cls(**d, _c=c_report, _kind=kind,
                   input_compression=input_compression, output_compression=output_compression)

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain Python values (engines as a list of dicts), e.g. for JSON."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        d["engines"] = [asdict(e) for e in self.engines]
        return d

    @property
    def has_timeline(self) -> bool:
        """Whether this report holds its run's timeline (:meth:`save_trace`, :meth:`save_svg`)."""
        return bool(self._c.has_timeline)

    def _check_timeline(self) -> None:
        if self._kind != "run":
            raise InvalidArgument(
                f"this {self._kind}'s report has no timeline (streams and groups record no "
                "per-operation timings); a pipeline's run with report=True has one when the "
                "pipeline was made with keep_timeline=True"
            )
        if not self._c.has_timeline:
            raise InvalidArgument(
                "this report has no timeline: make the pipeline with keep_timeline=True "
                "(Context.pipeline(..., keep_timeline=True)) and run it with report=True; the "
                "run must have records and a timeline other than 'off'"
            )

    def save_trace(self, path: PathLike) -> None:
        """Writes the run's timeline as Chrome trace JSON (Perfetto, chrome://tracing).

        Needs the report's own timeline (``keep_timeline=True``); InvalidArgument otherwise.
        """
        self._check_timeline()
        self._c.write_trace(os.fsdecode(path))

    def save_svg(self, path: PathLike) -> None:
        """Writes the run's timeline as an SVG picture, with this report's figures beside it.

        Needs the report's own timeline (``keep_timeline=True``); InvalidArgument otherwise.
        """
        self._check_timeline()
        self._c.write_svg(os.fsdecode(path))
