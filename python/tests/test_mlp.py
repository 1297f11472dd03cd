"""The digits MLP's built-in stages: every label checked against the float64 reference over
chunk sizes that cut the images unevenly; the model loader's errors; sharing rules."""

from __future__ import annotations

import numpy as np
import pytest

import streampipe as sp
from helpers import models_dir, poisoned

FP32_TOLERANCE = 1e-4  # a near tie may go either way (tests/infer/test_infer.c)


@pytest.fixture(scope="module")
def model() -> sp.MLPModel:
    path = models_dir() / "digits_mlp.safetensors"
    if not path.exists():
        pytest.skip(f"no model at {path} (set SP_TEST_MODELS to the models/ folder)")
    try:
        return sp.MLPModel.load(path)
    except sp.Unsupported as exc:
        pytest.skip(f"the library cannot load models: {exc}")


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    data = np.fromfile(models_dir() / "digits_test_images.u8", np.uint8)
    return data.reshape(-1, 64)


def acceptable(labels: np.ndarray, logits: np.ndarray, tolerance: float) -> np.ndarray:
    top = logits.argmax(axis=1)
    scale = np.maximum(1.0, np.abs(logits).max(axis=1))
    picked = logits[np.arange(len(labels)), np.clip(labels, 0, 9)]
    close = (logits[np.arange(len(labels)), top] - picked) / scale <= tolerance
    return (labels >= 0) & (labels < 10) & ((labels == top) | close)


@pytest.mark.parametrize("chunk", [1, 97, 1000])
def test_labels_match_reference(ctx: sp.Context, model: sp.MLPModel, images: np.ndarray,
                                chunk: int) -> None:
    stages = ctx.mlp_stages(model)
    assert [s.name for s in stages] == ["preprocess", "fc1", "fc2", "head"]
    p = ctx.pipeline(stages, np.uint8, (64,), chunk_records=chunk, depth=3)
    assert p.out_dtype == np.int32 and p.out_shape == ()
    pixels = np.tile(images, (3, 1))[: 3 * len(images) - 5]
    logits = model.reference_logits(pixels)
    out = poisoned((len(pixels),), np.int32)
    p.run(pixels, out=out)
    ok = acceptable(out, logits, FP32_TOLERANCE)
    assert ok.all(), f"{(~ok).sum()} labels wrong, first at {np.flatnonzero(~ok)[0]}"


def test_accuracy(host_ctx: sp.Context, model: sp.MLPModel, images: np.ndarray) -> None:
    labels = np.fromfile(models_dir() / "digits_test_labels.u8", np.uint8)
    p = host_ctx.pipeline(host_ctx.mlp_stages(model), np.uint8, (64,))
    assert (p.run(images) == labels).mean() >= 0.95


def test_model_layers(model: sp.MLPModel, images: np.ndarray) -> None:
    (w1, b1), (w2, b2), (w3, b3) = model.layers
    assert w1.shape == (256, 64) and b3.shape == (10,) and w1.dtype == np.float32
    assert not w1.flags.writeable
    h = np.maximum(w1.astype(np.float64) @ (images[:50].T / 16.0) + b1[:, None], 0)
    h = np.maximum(w2.astype(np.float64) @ h + b2[:, None], 0)
    logits = (w3.astype(np.float64) @ h + b3[:, None]).T
    np.testing.assert_allclose(logits, model.reference_logits(images[:50]), rtol=1e-9, atol=1e-9)


def test_bad_models(tmp_path) -> None:
    with pytest.raises((sp.InvalidArgument, sp.Unsupported)):
        sp.MLPModel.from_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises((sp.InvalidArgument, sp.Unsupported), match="."):
        sp.MLPModel.load(tmp_path / "missing.safetensors")


def test_sharing_rules(host_ctx: sp.Context, model: sp.MLPModel, images: np.ndarray) -> None:
    stages = host_ctx.mlp_stages(model)
    with pytest.raises(sp.InvalidArgument, match="reads uint8"):
        host_ctx.pipeline(stages, np.float32, (64,))
    with pytest.raises(sp.InvalidArgument, match="another context"):
        sp.Context("host").pipeline(stages, np.uint8, (64,))
    with pytest.raises(sp.InvalidArgument, match="precision"):
        host_ctx.mlp_stages(model, precision="fp16")
    a = host_ctx.pipeline(stages, np.uint8, (64,))
    b = host_ctx.pipeline(stages, np.uint8, (64,))
    np.testing.assert_array_equal(a.run(images), b.run(images))
    # The model path works too, and tf32 computes float32 on HOST.
    path = models_dir() / "digits_mlp.safetensors"
    tf32 = host_ctx.pipeline(host_ctx.mlp_stages(path, "tf32"), np.uint8, (64,))
    np.testing.assert_array_equal(tf32.run(images), a.run(images))


def test_graph_mode_and_streams(ctx: sp.Context, model: sp.MLPModel, images: np.ndarray) -> None:
    # each GEMM chunk in flight has its own workspace (the stage's scratch)
    pixels = np.tile(images, (20, 1))
    logits = model.reference_logits(pixels)
    for graph, streams in (("on", 1), ("off", 3), ("on", 2)):
        stages = ctx.mlp_stages(model, streams=streams)
        assert all(s.streams == streams for s in stages)
        p = ctx.pipeline(stages, np.uint8, (64,), chunk_records=512, depth=8, graph=graph)
        got, report = p.run(pixels, out=poisoned((len(pixels),), np.int32), report=True)
        ok = acceptable(got, logits, FP32_TOLERANCE)
        assert ok.all(), f"{(~ok).sum()} labels wrong ({graph=}, {streams=})"
        if graph == "on":
            assert report.graph, report.notes
    with pytest.raises(sp.InvalidArgument, match="streams"):
        ctx.mlp_stages(model, streams=9)
