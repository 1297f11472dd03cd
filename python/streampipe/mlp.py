"""The digits MLP (include/streampipe_mlp.h): a 64-256-256-10 perceptron with ReLU that
classifies 8x8 handwritten digits, loaded from safetensors and run as four built-in stages:

    preprocess  64 uint8 pixels (0..16) -> 64 float32, pixel / 16
    fc1         relu(W1 x + b1) -> 256 float32
    fc2         relu(W2 x + b2) -> 256 float32
    head        W3 x + b3, then the argmax -> one int32 label (ties to the lowest class)

Usage::

    model = streampipe.MLPModel.load("models/digits_mlp.safetensors")
    ctx = streampipe.Context()
    p = ctx.pipeline(ctx.mlp_stages(model), np.uint8, (64,))
    labels = p.run(images)            # images: uint8 (n, 64) -> int32 (n,)

The stages of one set keep per-call host state (on CUDA a cuBLASLt handle, layouts and chosen
algorithms): several pipelines may be built from them, but only one of them runs at a time (a
second one meanwhile raises InvalidArgument). Each GEMM chunk in flight has a workspace of its
own (the stage's scratch, 32 MiB per slot on CUDA), so the pipeline may use graph mode and
several streams per stage (``streams``). On HOST both precisions compute float32.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import _streampipe as _c
from ._dtypes import as_count
from .errors import InvalidArgument
from .stage import Stage

if TYPE_CHECKING:
    from .context import Context

__all__ = ["MLPModel", "mlp_stages", "INPUTS", "CLASSES"]

INPUTS: int = _c.MLP_INPUTS
HIDDEN: int = _c.MLP_HIDDEN
CLASSES: int = _c.MLP_CLASSES
MAX_PIXEL: int = _c.MLP_MAX_PIXEL
_PRECISIONS = {"fp32": _c.MLP_FP32, "tf32": _c.MLP_TF32}


class MLPModel:
    """A checked model: every tensor present, of the right shape, every value finite."""

    def __init__(self, c_model: Any) -> None:
        self._c = c_model

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "MLPModel":
        """Reads a safetensors file (InvalidArgument with the reason when it is not a valid
        model; Unsupported when the library was built without cJSON)."""
        return cls(_c.MlpModel.load_file(os.fsdecode(path)))

    @classmethod
    def from_bytes(cls, data: bytes) -> "MLPModel":
        """The same from a file's bytes."""
        return cls(_c.MlpModel.load_bytes(bytes(data)))

    @property
    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(weight [outputs, inputs], bias [outputs]) of fc1, fc2, fc3: read-only float32
        views of the model's own memory."""
        return [self._c.layer(i) for i in range(_c.MLP_LAYERS)]

    def reference_logits(self, pixels: Any) -> np.ndarray:
        """The model in float64, written plainly: logits (n, 10) of uint8 images (n, 64)."""
        arr = np.ascontiguousarray(pixels)
        if arr.dtype != np.uint8 or arr.ndim != 2 or arr.shape[1] != INPUTS:
            raise InvalidArgument(
                f"pixels must be uint8 of shape (n, {INPUTS}), not {arr.dtype} {arr.shape}"
            )
        logits = np.empty((arr.shape[0], CLASSES), np.float64)
        if arr.shape[0]:
            self._c.reference_logits(arr, logits)
        return logits


class _MLPStageSet:
    """One sp_mlp_stages: what its four Stage objects share."""

    def __init__(self, ctx: "Context", model: MLPModel, precision: str) -> None:
        self._c = _c.MlpStages(ctx._c, model._c, _PRECISIONS[precision])
        self.model = model
        self.precision = precision
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"the MLP stages ({self.precision})"


_RECORDS = [  # (in dtype, in shape, out dtype, out shape) of each stage
    (np.uint8, (INPUTS,), np.float32, (INPUTS,)),
    (np.float32, (INPUTS,), np.float32, (HIDDEN,)),
    (np.float32, (HIDDEN,), np.float32, (HIDDEN,)),
    (np.float32, (HIDDEN,), np.int32, ()),
]


def mlp_stages(ctx: "Context", model: Union[MLPModel, str, "os.PathLike[str]"],
               precision: str = "fp32", streams: int = 1) -> list[Stage]:
    """The four stages for pipelines on `ctx` (also ``Context.mlp_stages``). On CUDA this
    uploads the weights and makes a cuBLASLt GEMM per hidden layer. ``streams`` (1..8): the
    queues each stage's chunks take turns on."""
    if not isinstance(precision, str) or precision not in _PRECISIONS:
        raise InvalidArgument(f"precision is {precision!r}; use 'fp32' or 'tf32'")
    streams = as_count(streams, "mlp_stages: streams", 0, _c.MAX_STAGE_STREAMS)
    if not isinstance(model, MLPModel):
        model = MLPModel.load(model)
    stage_set = _MLPStageSet(ctx, model, precision)
    stages = []
    for builtin, (in_dt, in_shape, out_dt, out_shape) in zip(stage_set._c.stages(), _RECORDS):
        stage = Stage._from_builtin(builtin, out_dt, out_shape, in_dt, in_shape, streams)
        stage._context = ctx
        stage._exclusive = stage_set.lock
        stage._exclusive_owner = stage_set
        stages.append(stage)
    return stages
