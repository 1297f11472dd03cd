"""CUDA stages written in Python: what a stage is handed (DLPack, __cuda_array_interface__,
the stream), and PyTorch and CuPy stages checked element by element. Skipped without a GPU
(and without torch or cupy for their tests)."""

from __future__ import annotations

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix, import_or_skip, poisoned, sinmix_reference


def test_chunk_protocols(cuda_ctx: sp.Context) -> None:
    seen: list[dict] = []

    def look(chunk: sp.Chunk) -> None:
        cai = chunk.input.__cuda_array_interface__
        seen.append(
            {
                "index": chunk.index,
                "first": chunk.first_record,
                "records": chunk.records,
                "shape": chunk.output.shape,
                "cai_shape": cai["shape"],
                "typestr": cai["typestr"],
                "stream": cai["stream"],
                "handle": chunk.stream.handle,
                "protocol": chunk.stream.__cuda_stream__(),
                "device": chunk.input.__dlpack_device__(),
                "scratch": chunk.scratch,
            }
        )
        with pytest.raises(BufferError, match="run the stage's work on chunk.stream"):
            chunk.input.__dlpack__(stream=1)
        chunk.output.__dlpack__(stream=chunk.stream.handle)  # its own stream is fine

    p = cuda_ctx.pipeline(sp.Stage("look", np.int32, (2,), cuda=look), np.float32, (3,),
                          chunk_records=10)
    p.run(np.zeros((25, 3), np.float32))
    assert [s["index"] for s in seen] == [0, 1, 2]
    assert [s["first"] for s in seen] == [0, 10, 20]
    assert [s["records"] for s in seen] == [10, 10, 5]
    assert seen[2]["shape"] == (5, 2) and seen[2]["cai_shape"] == (5, 3)
    assert seen[0]["typestr"] == "<f4"
    assert all(s["stream"] == s["handle"] != 0 for s in seen)
    assert all(s["protocol"] == (0, s["handle"]) for s in seen)
    assert all(s["device"] == (2, cuda_ctx.device) and s["scratch"] is None for s in seen)


def test_torch_stage(cuda_ctx: sp.Context, rng: np.random.Generator) -> None:
    torch = import_or_skip("torch")

    def affine(chunk: sp.Chunk) -> None:
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            x = torch.from_dlpack(chunk.input)
            torch.add(x * 3.0, 1.0, out=torch.from_dlpack(chunk.output))

    p = cuda_ctx.pipeline([sp.sinmix(2), sp.Stage("affine", np.float32, cuda=affine)],
                          np.float32, chunk_records=4096)
    x = rng.uniform(-5, 5, 4096 * 9 + 11).astype(np.float32)
    out = p.run(x, out=poisoned(x.shape, np.float32))
    want = sinmix_reference(x, 2) * np.float32(3) + np.float32(1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_torch_stage_exception(cuda_ctx: sp.Context) -> None:
    torch = import_or_skip("torch")

    def wrong_stream(chunk: sp.Chunk) -> None:
        torch.from_dlpack(chunk.input)  # outside the chunk's stream: refused

    p = cuda_ctx.pipeline(sp.Stage("wrong", np.float32, cuda=wrong_stream), np.float32)
    with pytest.raises(sp.StageError, match="'wrong'") as info:
        p.run(np.ones(100, np.float32))
    assert isinstance(info.value.__cause__, BufferError)
    assert_sinmix(cuda_ctx.pipeline(sp.sinmix(1), np.float32).run(np.ones(9, np.float32)),
                  np.ones(9, np.float32), 1)


def test_cupy_stage(cuda_ctx: sp.Context, rng: np.random.Generator) -> None:
    cupy = import_or_skip("cupy")

    def square(chunk: sp.Chunk) -> None:
        with cupy.cuda.ExternalStream(chunk.stream.handle):
            x = cupy.asarray(chunk.input)
            cupy.multiply(x, x, out=cupy.asarray(chunk.output))

    p = cuda_ctx.pipeline(sp.Stage("square", np.float32, cuda=square), np.float32,
                          chunk_records=1000)
    x = rng.uniform(-5, 5, 12_345).astype(np.float32)
    np.testing.assert_array_equal(p.run(x, out=poisoned(x.shape, np.float32)), x * x)
