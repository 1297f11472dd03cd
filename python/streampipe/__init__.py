"""streampipe: stream host data through GPU work with copy/compute overlap.

The C library cuts the data into chunks of whole records; each chunk is copied to the device,
run through the stages and copied back, and different chunks are in different stages at once
(a K-slot ring of buffers, pinned staging, events). This package runs it from Python::

    import numpy as np, streampipe as sp

    ctx = sp.Context()                                   # CUDA with a GPU, else the CPU
    p = ctx.pipeline([sp.sinmix(20)], np.float32)
    y, report = p.run(np.random.rand(1 << 20).astype(np.float32), report=True)
    print(report.makespan_s, report.efficiency, report.bottleneck)

Stages are the built-in ones (:func:`sinmix`, the digits MLP's :meth:`Context.mlp_stages`)
or :class:`Stage` with Python functions (numpy on HOST, PyTorch or CuPy on CUDA). Errors are
:class:`Error` subclasses carrying the library's message.
"""

from . import _streampipe
from .context import Context
from .device import DeviceBuffer
from .copy import copy_nontemporal
from . import errors
from .errors import (
    BackendError,
    Cancelled,
    DeviceLost,
    Error,
    InvalidArgument,
    OutOfDeviceMemory,
    OutOfMemory,
    StageError,
    Timeout,
    Unsupported,
    WouldBlock,
)
from .group import Group
from .mlp import MLPModel
from .pipeline import Pipeline
from .report import Compression, EngineReport, Report
from .stats import EngineStats, Stats
from . import metrics  # serve(): prometheus-client is imported only when it is called
from .stage import Chunk, DeviceArray, Stage, CudaStream, normalize_u8, sinmix
from .nvcomp import load_nvcomp, nvcomp_status

__version__: str = _streampipe.version()


def built_with_cuda() -> bool:
    """True when the library was built with the CUDA backend (a GPU is another matter:
    ``Context("cuda")`` raises Unsupported without one)."""
    return _streampipe.built_with_cuda()


__all__ = [
    "__version__",
    "built_with_cuda",
    "Context",
    "Pipeline",
    "Group",
    "Stage",
    "Chunk",
    "DeviceArray",
    "DeviceBuffer",
    "CudaStream",
    "sinmix",
    "normalize_u8",
    "copy_nontemporal",
    "load_nvcomp",
    "nvcomp_status",
    "MLPModel",
    "Report",
    "EngineReport",
    "Compression",
    "Stats",
    "EngineStats",
    *errors.__all__,  # the exception classes, listed once, in errors.py
]
