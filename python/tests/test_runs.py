"""Runs checked element by element: sinmix and Python stages over the sizes that cut chunks
unevenly, every depth, given and new outputs, in place, pinned and non-contiguous input."""

from __future__ import annotations

import numpy as np
import pytest

import streampipe as sp
from helpers import (assert_close, assert_sinmix, import_or_skip, poisoned, sinmix_reference,
                     sizes_around)


def random_floats(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.uniform(-100.0, 100.0, shape).astype(np.float32)


@pytest.mark.parametrize("chunk", [1, 64, 1000])
def test_sinmix_every_size(ctx: sp.Context, rng: np.random.Generator, chunk: int) -> None:
    iters = 7
    p = ctx.pipeline([sp.sinmix(iters)], np.float32, chunk_records=chunk, depth=3)
    for n in sizes_around(chunk, rng):
        if chunk == 1 and n > 2000:
            continue  # a chunk per record: keep it short
        x = random_floats(rng, n)
        out = poisoned((n,), np.float32)
        assert p.run(x, out=out) is out
        assert_sinmix(out, x, iters)
        assert_sinmix(p.run(x), x, iters)  # a new array


@pytest.mark.parametrize("shape", [(3, 8, 8), (15,)])
def test_normalize_u8_bit_for_bit(ctx: sp.Context, rng: np.random.Generator, shape) -> None:
    """The built-in uint8 -> float32 stage against numpy's float32 arithmetic, exactly, over
    sizes that leave a short last chunk, into a poisoned output and into device memory."""
    p = ctx.pipeline(sp.normalize_u8(shape, 2.0 / 255.0, -1.0), np.uint8, in_shape=shape,
                     chunk_records=37, depth=3)
    for n in (1, 36, 37, 1000):
        x = rng.integers(0, 256, (n, *shape), dtype=np.uint8)
        want = x.astype(np.float32) * np.float32(2.0 / 255.0) + np.float32(-1.0)
        out = poisoned((n, *shape), np.float32)
        assert p.run(x, out=out) is out
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(p.run(x, out="device").numpy(), want)
    with pytest.raises(sp.InvalidArgument, match="finite"):
        sp.normalize_u8(shape, shift=float("nan"))
    with pytest.raises(sp.InvalidArgument, match="uint8"):  # a float input refused
        p.run(np.zeros((2, *shape), np.float32))


@pytest.mark.parametrize("depth", range(1, 9))
def test_every_depth(ctx: sp.Context, rng: np.random.Generator, depth: int) -> None:
    p = ctx.pipeline([sp.sinmix(3), sp.sinmix(2)], np.float32, chunk_records=97, depth=depth)
    assert p.depth == depth
    x = random_floats(rng, 97 * 11 + 5)
    got = p.run(x, out=poisoned(x.shape, np.float32))
    assert_close(got, sinmix_reference(sinmix_reference(x, 3), 2), 3 + 2)


def test_library_chooses_chunk_and_depth(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline(sp.sinmix(1), np.float32)
    x = random_floats(rng, 300_001)
    y, report = p.run(x, report=True)
    assert_sinmix(y, x, 1)
    assert report.chunks > 1 and p.depth >= 1
    assert report.chunk_records == p.chunk_records(x.shape[0])


def test_in_place(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline([sp.sinmix(4)], np.float32, chunk_records=100)
    x = random_floats(rng, 1234)
    want = x.copy()
    assert p.run(x, out=x) is x
    assert_sinmix(x, want, 4)


def test_no_stages_copies_through(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline([], np.int16, in_shape=(3, 5), chunk_records=7)
    x = rng.integers(-30000, 30000, (50, 3, 5)).astype(np.int16)
    out = poisoned(x.shape, np.int16)
    p.run(x, out=out)
    np.testing.assert_array_equal(out, x)


def test_pinned_input_and_output_skip_staging(ctx: sp.Context, rng: np.random.Generator) -> None:
    n = 5000
    p = ctx.pipeline([sp.sinmix(2)], np.float32, chunk_records=512)
    x = ctx.pinned_empty(n, np.float32)
    x[:] = random_floats(rng, n)
    out = ctx.pinned_empty((n,), np.float32)
    out[:] = np.nan
    got, report = p.run(x, out=out, report=True)
    assert got is out
    assert_sinmix(out, x, 2)
    assert not report.staged_in and not report.staged_out
    _, report = p.run(random_floats(rng, n), report=True)
    assert report.staged_in and report.staged_out


def test_pinned_array_outlives_its_context(rng: np.random.Generator) -> None:
    ctx = sp.Context("host")
    arr = ctx.pinned_empty((4, 1000), np.float64)
    view = arr[1:3]
    del ctx, arr
    view[:] = 2.5  # the memory is still there: the array holds the context
    assert float(view.sum()) == 2.5 * 2000
    assert sp.Context("host").pinned_empty((0, 3)).shape == (0, 3)


def test_non_contiguous_input_is_copied_once(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline([sp.sinmix(1)], np.float32, chunk_records=64)
    base = random_floats(rng, 2001)
    x = base[::2]
    assert not x.flags.c_contiguous
    before = base.copy()
    assert_sinmix(p.run(x), x, 1)
    np.testing.assert_array_equal(base, before)  # the input is read, never written


def test_buffer_protocol_and_dlpack_inputs(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = host_ctx.pipeline([], np.uint8, chunk_records=10)
    data = bytes(rng.integers(0, 256, 77, dtype=np.uint8))
    np.testing.assert_array_equal(p.run(data), np.frombuffer(data, np.uint8))
    np.testing.assert_array_equal(p.run(bytearray(data)), np.frombuffer(data, np.uint8))
    np.testing.assert_array_equal(p.run(memoryview(data)), np.frombuffer(data, np.uint8))

    class Producer:  # only DLPack, as a framework's CPU tensor offers it
        def __init__(self, a: np.ndarray) -> None:
            self.a = a

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    arr = np.frombuffer(data, np.uint8)
    np.testing.assert_array_equal(p.run(Producer(arr)), arr)


def test_torch_cpu_tensors(ctx: sp.Context, rng: np.random.Generator) -> None:
    torch = import_or_skip("torch")
    p = ctx.pipeline([sp.sinmix(3)], np.float32, chunk_records=333)
    x = torch.from_numpy(random_floats(rng, 4000))
    out = torch.full((4000,), float("nan"))
    assert p.run(x, out=out) is out
    assert_sinmix(out.numpy(), x.numpy(), 3)
    if ctx.backend == "cuda":  # pinned tensors go straight to the copy engines
        xp = x.pin_memory()
        y, report = p.run(xp, report=True)
        assert_sinmix(y, x.numpy(), 3)
        assert not report.staged_in


def test_python_host_stages_change_record_shape(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    seen = []

    def pairs(inp: np.ndarray, out: np.ndarray) -> None:
        assert inp.shape[1:] == (4,) and out.shape[1:] == (2,) and inp.shape[0] == out.shape[0]
        assert not inp.flags.writeable
        seen.append(inp.shape[0])
        out[:, 0] = inp[:, 0] + inp[:, 1]
        out[:, 1] = inp[:, 2] * inp[:, 3]

    def total(inp: np.ndarray, out: np.ndarray) -> None:
        out[:] = inp.sum(axis=1, dtype=np.float64)

    p = host_ctx.pipeline(
        [sp.Stage("pairs", np.float32, (2,), host=pairs), sp.Stage("total", np.float64, host=total)],
        np.float32,
        in_shape=(4,),
        chunk_records=50,
    )
    assert p.out_dtype == np.float64 and p.out_shape == ()
    for n in (0, 1, 49, 50, 51, 1003):
        seen.clear()
        x = random_floats(rng, (n, 4))
        out = poisoned((n,), np.float64)
        p.run(x, out=out)
        want = (x[:, 0] + x[:, 1]).astype(np.float64) + (x[:, 2] * x[:, 3]).astype(np.float64)
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-3)
        assert sum(seen) == n and all(1 <= r <= 50 for r in seen)


def test_python_stage_on_several_streams(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    def negate(inp: np.ndarray, out: np.ndarray) -> None:
        np.negative(inp, out=out)

    p = host_ctx.pipeline(
        [sp.sinmix(2), sp.Stage("negate", np.float32, host=negate, streams=4)],
        np.float32,
        chunk_records=100,
        depth=8,
    )
    x = random_floats(rng, 100 * 40 + 7)
    got = p.run(x, out=poisoned(x.shape, np.float32))
    assert_sinmix(-got, x, 2)


@pytest.mark.parametrize("graph", ["on", "auto"])
def test_graph_mode(ctx: sp.Context, rng: np.random.Generator, graph: str) -> None:
    p = ctx.pipeline([sp.sinmix(2)], np.float32, chunk_records=256, depth=8, graph=graph)
    x = random_floats(rng, 256 * 40 + 3)
    got, report = p.run(x, out=poisoned(x.shape, np.float32), report=True)
    assert_sinmix(got, x, 2)
    if graph == "on":
        assert report.graph, report.notes


def test_python_stage_in_graph_mode(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    # HOST replays the recorded launches on its workers: the stage runs from replays too.
    def negate(inp: np.ndarray, out: np.ndarray) -> None:
        np.negative(inp, out=out)

    p = host_ctx.pipeline([sp.sinmix(1), sp.Stage("negate", np.float32, host=negate)],
                          np.float32, chunk_records=128, depth=8, graph="on")
    x = random_floats(rng, 128 * 50 + 9)
    got, report = p.run(x, out=poisoned(x.shape, np.float32), report=True)
    assert report.graph, report.notes
    assert_sinmix(-got, x, 1)


def test_serial_baseline(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline([sp.sinmix(5)], np.float32, chunk_records=300)
    x = random_floats(rng, 1999)
    got, report = p.run_serial(x, out=poisoned(x.shape, np.float32), report=True)
    assert_sinmix(got, x, 5)
    assert report.chunks == 7
