"""Helpers shared by the tests: which backends are present, references, poisoned buffers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pytest

import streampipe as sp

_CUDA: dict[str, str] = {}


def cuda_missing() -> str:
    """Why CUDA tests cannot run here, or "" when they can (checked once)."""
    if "why" not in _CUDA:
        if not sp.built_with_cuda():
            _CUDA["why"] = "the library was built without CUDA"
        else:
            try:
                sp.Context("cuda")
                _CUDA["why"] = ""
            except sp.Unsupported as exc:
                _CUDA["why"] = f"no GPU: {exc}"
    return _CUDA["why"]


def required() -> bool:
    """SP_REQUIRE_CUDA=1 (bench/gpu_check.sh sets it on the GPU machine): the CUDA tests, with
    torch (CUDA) and CuPy, must run there, so what would skip them fails instead."""
    return os.environ.get("SP_REQUIRE_CUDA") == "1"


def skip_or_fail(reason: str) -> NoReturn:
    """Skips the test saying why (no GPU, no torch with CUDA, no CuPy), or fails it under
    SP_REQUIRE_CUDA=1."""
    if required():
        pytest.fail(f"SP_REQUIRE_CUDA=1, but {reason}")
    pytest.skip(reason)


def need_cuda() -> None:
    """Skips (or, under SP_REQUIRE_CUDA=1, fails) a test that needs a GPU."""
    if cuda_missing():
        skip_or_fail(cuda_missing())


def import_or_skip(name: str) -> Any:
    """pytest.importorskip for torch and CuPy, but failing under SP_REQUIRE_CUDA=1."""
    try:
        return __import__(name)
    except ImportError as exc:
        skip_or_fail(f"could not import {name}: {exc}")


def need_torch_cuda() -> Any:
    """torch with CUDA and a GPU for the library, or a skip (a failure under
    SP_REQUIRE_CUDA=1)."""
    need_cuda()
    torch = import_or_skip("torch")
    if not torch.cuda.is_available():
        skip_or_fail("this torch has no CUDA")
    return torch


def sinmix_reference(x: np.ndarray, iters: int) -> np.ndarray:
    """v = x*0.5 + x*x*0.1, then iters times v += sin(v*0.01), float32, each op rounded."""
    x = np.asarray(x, np.float32)
    v = (x * np.float32(0.5)) + ((x * x) * np.float32(0.1))
    for _ in range(iters):
        v = v + np.sin(v * np.float32(0.01))
    return v


def assert_sinmix(got: np.ndarray, x: np.ndarray, iters: int) -> None:
    """Every element of got is sinmix(x, iters) within |got-want| <= 1e-5*(1+iters)*max(1,|want|)."""
    assert_close(got, sinmix_reference(x, iters), iters)


def assert_close(got: np.ndarray, want: np.ndarray, iters: int) -> None:
    assert got.shape == want.shape and got.dtype == np.float32
    err = np.abs(got.astype(np.float64) - want)
    bound = 1e-5 * (1 + iters) * np.maximum(1.0, np.abs(want.astype(np.float64)))
    bad = np.flatnonzero(~(err <= bound))  # NaN (poison left) counts as bad
    assert bad.size == 0, (
        f"{bad.size} of {got.size} elements wrong, first at {bad[0]}: "
        f"got {got.flat[bad[0]]}, want {want.flat[bad[0]]}"
    )


def poisoned(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An output buffer every element of which must be overwritten: NaN, or 0x5A bytes."""
    dt = np.dtype(dtype)
    if dt.kind in "fc":
        return np.full(shape, np.nan, dt)
    out = np.empty(shape, dt)
    out.view(np.uint8)[...] = 0x5A
    return out


def sizes_around(chunk: int, rng: np.random.Generator) -> list[int]:
    """0, 1, primes, chunk-1, chunk, chunk+1, many chunks and a random size."""
    sizes = {0, 1, 2, 7, 97, 1009, chunk - 1, chunk, chunk + 1, 5 * chunk + 3}
    sizes.add(int(rng.integers(1, 20 * chunk)))
    return sorted(s for s in sizes if s >= 0)


def models_dir() -> Path:
    return Path(os.environ.get("SP_TEST_MODELS", Path(__file__).resolve().parents[2] / "models"))
