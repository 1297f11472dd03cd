"""Fixtures shared by the suite: each backend present, contexts, a seeded generator."""

from __future__ import annotations

import os

import numpy as np
import pytest

import streampipe as sp
from helpers import cuda_missing, skip_or_fail


@pytest.fixture(params=["host", "cuda"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each test taking it runs on HOST and, where there is a GPU, on CUDA."""
    if request.param == "cuda" and cuda_missing():
        skip_or_fail(cuda_missing())
    return request.param


@pytest.fixture
def ctx(backend: str) -> sp.Context:
    return sp.Context(backend)


@pytest.fixture
def host_ctx() -> sp.Context:
    return sp.Context("host")


@pytest.fixture
def cuda_ctx() -> sp.Context:
    if cuda_missing():
        skip_or_fail(cuda_missing())
    return sp.Context("cuda")


@pytest.fixture
def rng() -> np.random.Generator:
    """Seeded from SP_TEST_SEED or at random; the seed is printed (shown when a test fails)."""
    seed = int(os.environ.get("SP_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
    print(f"SP_TEST_SEED={seed}")
    return np.random.default_rng(seed)
