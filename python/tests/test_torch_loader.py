"""streampipe.torch.Loader (issue 25): host batches through a pipeline, yielded as tensors
(CUDA tensors ready on the current stream on a GPU, CPU tensors on HOST). The module imports
without torch; the rest skips without torch. The CUDA tests are test_device_ends_cuda.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import streampipe as sp
from helpers import import_or_skip

RECORD = 16


def _normalize() -> sp.Stage:
    def on_host(inp: np.ndarray, out: np.ndarray) -> None:
        np.multiply(inp, np.float32(1 / 255), out=out)

    return sp.Stage("normalize", np.float32, (RECORD,), host=on_host)


def _images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, RECORD), dtype=np.uint8)


def _want(images: np.ndarray) -> np.ndarray:
    return images * np.float32(1 / 255)


# ---- without torch ----------------------------------------------------------------------------


def test_module_imports_without_torch_and_says_what_to_install() -> None:
    code = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None  # import torch raises ImportError, as without torch
        import streampipe.torch as spt
        try:
            spt.Loader([], [])
        except ImportError as exc:
            print("ImportError:", exc)
        else:
            raise SystemExit("no ImportError")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert "pip install torch" in result.stdout


def test_local_rank_from_the_launchers(monkeypatch: pytest.MonkeyPatch) -> None:
    from streampipe.torch import local_rank

    for name in ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert local_rank() is None
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3")
    assert local_rank() == 3
    monkeypatch.setenv("SLURM_LOCALID", "2")
    assert local_rank() == 2
    monkeypatch.setenv("LOCAL_RANK", "1")  # torchrun's first
    assert local_rank() == 1
    monkeypatch.setenv("LOCAL_RANK", "x")
    with pytest.raises(sp.InvalidArgument, match="LOCAL_RANK"):
        local_rank()


# ---- with torch -------------------------------------------------------------------------------


@pytest.fixture
def torch() -> Any:
    return import_or_skip("torch")


def test_array_source_batches_epochs_and_len(torch: Any) -> None:
    from streampipe.torch import Loader

    images = _images(1000)
    labels = np.arange(1000)
    loader = Loader((images, labels), _normalize(), batch_size=128, backend="host")
    assert len(loader) == 8
    assert loader.device == torch.device("cpu")
    for _epoch in range(2):
        seen = 0
        held = []  # every batch kept: the pool must not reuse a buffer a tensor holds
        for x, y in loader:
            assert isinstance(x, torch.Tensor) and x.dtype == torch.float32
            assert x.device.type == "cpu" and x.shape == (len(y), RECORD)
            held.append((x, y))
            seen += len(y)
        assert seen == 1000
        for x, y in held:
            np.testing.assert_array_equal(x.numpy(), _want(images[y.numpy()]))
    dropped = Loader(images, _normalize(), batch_size=128, backend="host", drop_last=True)
    assert len(dropped) == 7
    assert sum(len(x) for x in dropped) == 7 * 128  # one array: tensors, not tuples


def test_the_loaders_pipeline_stages_on_few_threads(torch: Any) -> None:
    """The Loader's own pipeline leaves the training process's CPUs to its loop: a few staging
    threads unless told (the library's default is one per CPU, up to 16)."""
    from streampipe.torch import LOADER_STAGING_THREADS, Loader

    images = _images(256)
    for given, want in ((0, LOADER_STAGING_THREADS), (3, 3)):
        loader = Loader(images, _normalize(), batch_size=64, backend="host",
                        staging_threads=given)
        assert sum(len(x) for x in loader) == 256
        _, rep = loader.pipeline.run(images[:64], report=True)
        assert rep.staging_threads == want


def test_dataloader_source_with_workers_and_set_epoch(torch: Any) -> None:
    from streampipe.torch import Loader

    images = _images(640, seed=1)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.arange(640))
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=1, rank=0)
    batches = torch.utils.data.DataLoader(dataset, batch_size=64, sampler=sampler,
                                          num_workers=2, pin_memory=False)
    loader = Loader(batches, [_normalize()], batch_size=64, backend="host")
    assert len(loader) == 10
    orders = []
    for epoch in range(2):
        loader.set_epoch(epoch)
        assert sampler.epoch == epoch
        order = []
        for x, idx in loader:
            np.testing.assert_array_equal(x.numpy(), _want(images[idx.numpy()]))
            order.extend(idx.tolist())
        assert sorted(order) == list(range(640))
        orders.append(order)
    assert orders[0] != orders[1]  # the sampler reshuffled per epoch
    with pytest.raises(sp.InvalidArgument, match="batch_size"):
        Loader(batches, [_normalize()], batch_size=32, backend="host")


def test_breaking_early_cancels_and_the_loader_runs_again(torch: Any) -> None:
    from streampipe.torch import Loader

    taken = []

    def source() -> Any:
        for i in range(100):
            taken.append(i)
            yield _images(50, seed=i)

    class Source:
        def __iter__(self) -> Any:
            return source()

    loader = Loader(Source(), _normalize(), backend="host", max_in_flight=3)
    for i, _x in enumerate(loader):
        if i == 2:
            break
    assert len(taken) < 10  # no more inputs were taken after the break
    assert loader.pipeline is not None and loader.pipeline._stream is None  # closed
    with pytest.raises(TypeError, match="no len"):
        len(loader)
    taken.clear()
    assert sum(len(x) for x in loader) == 100 * 50  # another epoch, whole


def test_errors_raise_in_the_loop_with_their_cause(torch: Any) -> None:
    from streampipe.torch import Loader

    def picky(inp: np.ndarray, out: np.ndarray) -> None:
        if inp[0, 0] == 255:
            raise ValueError("a white pixel")
        out[...] = inp

    stage = sp.Stage("picky", np.float32, (RECORD,), host=picky)
    good = np.zeros((10, RECORD), np.uint8)
    bad = np.full((10, RECORD), 255, np.uint8)
    loader = Loader([good, good, bad, good], stage, backend="host")
    got = []
    with pytest.raises(sp.StageError) as info:
        for x in loader:
            got.append(x)
    assert isinstance(info.value.__cause__, ValueError)
    assert len(got) == 2

    def broken() -> Any:
        yield good
        raise KeyError("the source broke")

    class Source:
        def __iter__(self) -> Any:
            return broken()

    with pytest.raises(KeyError, match="the source broke"):
        list(Loader(Source(), stage, backend="host"))
    with pytest.raises(sp.InvalidArgument, match="CPU tensors"):
        list(Loader([[1, 2, 3]], stage, backend="host"))


def test_a_pipeline_given_as_stages(torch: Any) -> None:
    from streampipe.torch import Loader

    pipe = sp.Context("host").pipeline(_normalize(), np.uint8, (RECORD,))
    images = _images(300)
    loader = Loader(torch.from_numpy(images), pipe, batch_size=100)
    assert loader.pipeline is pipe
    out = torch.cat(list(loader))
    np.testing.assert_array_equal(out.numpy(), _want(images))
