"""Device memory at either end of runs and stream batches (issue 25): DeviceBuffer, out="device",
device arrays as inputs, the checks made before anything runs, the pool's reuse rule, the
report's pcie_bytes and the consumer-stream hand-off. On HOST, device memory is host memory
the backend keeps as device blocks, so these run in CI; the CUDA ones with torch and CuPy are
test_device_ends_cuda.py."""

from __future__ import annotations

import gc
import os
from typing import Any

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix, need_cuda

ITERS = 4


def _pipe(ctx: sp.Context, chunk: int = 1000) -> sp.Pipeline:
    return ctx.pipeline([sp.sinmix(ITERS)], np.float32, chunk_records=chunk, depth=3)


def _x(rng: np.random.Generator, n: int = 5003) -> np.ndarray:
    return rng.random(n, dtype=np.float32)


class FakeCudaArray:
    """An object with only __cuda_array_interface__ (as Numba's), for the checks."""

    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str,
                 strides: Any = None) -> None:
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": strides, "stream": None}


def _double4() -> sp.Stage:
    return sp.Stage("double", np.float32, (4,), host=lambda i, o: np.multiply(i, 2, out=o))


# ---- DeviceBuffer ---------------------------------------------------------------------------


def test_device_output_round_trips_through_numpy_from_dlpack(ctx: sp.Context,
                                                              rng: np.random.Generator) -> None:
    p = _pipe(ctx)
    x = _x(rng)
    y = p.run(x, out="device")
    assert isinstance(y, sp.DeviceBuffer)
    assert y.shape == (x.size,) and y.dtype == np.float32 and y.nbytes == 4 * x.size
    assert_sinmix(y.numpy(), x, ITERS)
    if ctx.backend == "host":
        assert y.__dlpack_device__() == (1, 0)  # kDLCPU
        view = np.from_dlpack(y)  # no copy: numpy's array is the buffer's memory
        assert view.ctypes.data == y.ptr
        assert_sinmix(view, x, ITERS)
        assert not hasattr(y, "__cuda_array_interface__")
    else:
        assert y.__dlpack_device__() == (2, ctx.device)  # kDLCUDA
        assert y.__cuda_array_interface__["data"][0] == y.ptr


def test_device_buffer_as_the_input_of_a_second_run(ctx: sp.Context,
                                                     rng: np.random.Generator) -> None:
    p = _pipe(ctx)
    x = _x(rng)
    y, r1 = p.run(x, out="device", report=True)
    z, r2 = p.run(y, out="device", report=True)  # device in, device out: nothing crosses
    w, r3 = p.run(y, report=True)  # device in, host out
    want = p.run(p.run(x))
    np.testing.assert_array_equal(z.numpy(), want)
    np.testing.assert_array_equal(w, want)
    assert r1.pcie_bytes == 4 * x.size  # the input only
    assert r2.pcie_bytes == 0
    assert r3.pcie_bytes == 4 * x.size  # the output only
    assert p.run(x, report=True)[1].pcie_bytes == 8 * x.size  # host at both ends


def test_to_device_and_device_empty(ctx: sp.Context, rng: np.random.Generator) -> None:
    x = _x(rng, 777)
    d = ctx.to_device(x)
    np.testing.assert_array_equal(d.numpy(), x)
    p = _pipe(ctx, chunk=100)
    out = ctx.device_empty(x.shape, np.float32)
    assert p.run(d, out=out) is out  # a device array as out: written in place
    assert_sinmix(out.numpy(), x, ITERS)
    host = np.empty_like(x)
    assert out.to_host(host) is host
    with pytest.raises(sp.InvalidArgument, match="float64"):
        out.to_host(np.empty(x.shape, np.float64))


def test_in_place_on_the_device(ctx: sp.Context, rng: np.random.Generator) -> None:
    x = _x(rng, 3001)
    d = ctx.to_device(x)
    p = _pipe(ctx, chunk=128)
    assert p.run(d, out=d) is d
    assert_sinmix(d.numpy(), x, ITERS)


def test_device_buffer_cannot_be_made_directly() -> None:
    with pytest.raises(TypeError, match="device_empty"):
        sp.DeviceBuffer()


# ---- a file straight into memory (run_file with out=) ------------------------------------------


def _file(tmp_path: Any, x: np.ndarray) -> Any:
    path = tmp_path / "in.f32"
    x.tofile(path)
    return path


def test_a_file_into_device_memory(ctx: sp.Context, rng: np.random.Generator, tmp_path) -> None:
    """The file source with no sink: every record read from the file, its result left in
    device memory; only the input crossed PCIe, and no output file appeared."""
    x = _x(rng, int(rng.integers(20_000, 30_000)))
    src = _file(tmp_path, x)
    p = _pipe(ctx, chunk=4096)
    y, rep = p.run_file(src, out="device", report=True)
    assert isinstance(y, sp.DeviceBuffer) and y.shape == x.shape
    assert_sinmix(y.numpy(), x, ITERS)
    assert rep.records == x.size and rep.pcie_bytes == 4 * x.size
    z = p.run_file(src, out="device")  # without a report: the buffer alone
    assert isinstance(z, sp.DeviceBuffer) and z.ptr != y.ptr
    assert_sinmix(z.numpy(), x, ITERS)
    assert sorted(os.listdir(tmp_path)) == ["in.f32"]


def test_a_file_into_given_memory(ctx: sp.Context, rng: np.random.Generator, tmp_path) -> None:
    """A device array, or a host array, as out: written in place, poisoned beforehand."""
    x = _x(rng, 9001)
    src = _file(tmp_path, x)
    p = _pipe(ctx, chunk=1000)
    dev = ctx.to_device(np.full(x.shape, np.nan, np.float32))
    assert p.run_file(src, out=dev) is dev
    assert_sinmix(dev.numpy(), x, ITERS)
    host = np.full(x.shape, np.nan, np.float32)
    records, rep = p.run_file(src, out=host, report=True)
    assert records is host and rep.pcie_bytes == 8 * x.size  # both ends on the host
    assert_sinmix(host, x, ITERS)


def test_a_file_into_memory_refusals(host_ctx: sp.Context, tmp_path) -> None:
    """Bad requests raise before anything runs, and leave the memory as it was."""
    x = np.arange(1000, dtype=np.float32)
    src = _file(tmp_path, x)
    p = _pipe(host_ctx, chunk=100)
    poison = np.full(999, 7.0, np.float32)
    out = host_ctx.to_device(poison)
    with pytest.raises(sp.InvalidArgument, match="shape"):  # 999 records for 1000
        p.run_file(src, out=out)
    np.testing.assert_array_equal(out.numpy(), poison)
    with pytest.raises(sp.InvalidArgument, match="not both"):
        p.run_file(src, tmp_path / "out.f32", out="device")
    with pytest.raises(sp.InvalidArgument, match="give output"):
        p.run_file(src)
    with pytest.raises(sp.InvalidArgument, match="'device'"):
        p.run_file(src, out="cuda")
    with pytest.raises(sp.BackendError, match="cannot open the input"):
        p.run_file(tmp_path / "missing.f32", out="device")
    assert sorted(os.listdir(tmp_path)) == ["in.f32"]
    y = p.run_file(src, out="device")  # the pipeline runs again afterwards
    assert_sinmix(y.numpy(), x, ITERS)


# ---- checks before anything runs --------------------------------------------------------------


def test_wrong_dtype_or_shape_refused_and_nothing_written(host_ctx: sp.Context,
                                                           rng: np.random.Generator) -> None:
    p = host_ctx.pipeline(_double4(), np.float32, in_shape=(4,))
    x = rng.random((10, 4), dtype=np.float32)
    poison = np.full((10, 4), 7.0, np.float32)
    out = host_ctx.to_device(poison)
    with pytest.raises(sp.InvalidArgument, match="float64"):
        p.run(host_ctx.to_device(x.astype(np.float64)), out=out)
    with pytest.raises(sp.InvalidArgument, match="shape"):
        p.run(host_ctx.to_device(x.reshape(20, 2)), out=out)
    with pytest.raises(sp.InvalidArgument, match="shape"):  # out of the wrong shape
        p.run(x, out=host_ctx.device_empty((9, 4), np.float32))
    with pytest.raises(sp.InvalidArgument, match="float64"):  # out of the wrong dtype
        p.run(x, out=host_ctx.device_empty((10, 4), np.float64))
    with pytest.raises(sp.InvalidArgument, match="'device'"):
        p.run(x, out="cuda")
    np.testing.assert_array_equal(out.numpy(), poison)  # nothing was written
    with p.stream() as s:
        with pytest.raises(sp.InvalidArgument, match="float64"):
            s.submit(host_ctx.to_device(x.astype(np.float64)), out=out)
    np.testing.assert_array_equal(out.numpy(), poison)


def test_non_contiguous_device_array_refused(host_ctx: sp.Context) -> None:
    """A device array whose strides are not C order is refused (device memory is read in
    place, never copied to make it contiguous), before its memory is looked at."""
    p = host_ctx.pipeline(_double4(), np.float32, in_shape=(4,))
    block = host_ctx.device_empty((8, 8), np.float32)
    strided = FakeCudaArray(block.ptr, (8, 4), "<f4", strides=(32, 4))  # every other column
    with pytest.raises(sp.InvalidArgument, match="not C-contiguous"):
        p.run(strided)
    contiguous = FakeCudaArray(block.ptr, (8, 4), "<f4", strides=(16, 4))
    with pytest.raises(sp.InvalidArgument, match="context is HOST"):  # CUDA memory on HOST
        p.run(contiguous)
    with pytest.raises(sp.InvalidArgument, match="float64"):
        p.run(FakeCudaArray(block.ptr, (8, 4), "<f8"))


def test_device_buffer_of_another_backend_refused(host_ctx: sp.Context) -> None:
    need_cuda()
    cuda_buf = sp.Context("cuda").device_empty(16, np.float32)
    with pytest.raises(sp.InvalidArgument, match="another context"):
        host_ctx.pipeline([sp.sinmix(1)], np.float32).run(cuda_buf)


# ---- the pool ---------------------------------------------------------------------------------


def test_pool_never_hands_out_a_buffer_a_consumer_holds(host_ctx: sp.Context,
                                                         rng: np.random.Generator) -> None:
    p = _pipe(host_ctx)
    x = _x(rng, 4000)
    first = p.run(x, out="device")
    ptr = first.ptr
    capsule = first.__dlpack__()  # a consumer's hold, as torch.from_dlpack keeps it
    held = np.from_dlpack(p.run(x, out="device"))  # numpy holds this one
    del first
    gc.collect()
    seen = {p.run(x, out="device").ptr for _ in range(4)}
    assert ptr not in seen and held.ctypes.data not in seen
    assert_sinmix(held, x, ITERS)  # never overwritten meanwhile
    del capsule  # released: the block may be handed out again
    gc.collect()
    again = [p.run(x, out="device") for _ in range(3)]
    assert ptr in {b.ptr for b in again}
    made = p._pool.blocks_made  # type: ignore[union-attr]
    del again
    for _ in range(10):  # steady state: no new blocks
        p.run(x, out="device")
    assert p._pool.blocks_made == made  # type: ignore[union-attr]


def test_stream_outputs_are_distinct_while_held(host_ctx: sp.Context,
                                                rng: np.random.Generator) -> None:
    p = _pipe(host_ctx, chunk=256)
    xs = [_x(rng, 1000 + 17 * i) for i in range(12)]
    with p.stream(max_in_flight=3) as s:
        outs = list(s.imap(xs, out="device"))
    assert len({o.ptr for o in outs}) == len(outs)
    for o, x in zip(outs, xs):
        assert_sinmix(o.numpy(), x, ITERS)


# ---- streams ----------------------------------------------------------------------------------


def test_stream_submit_with_device_in_and_out(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = _pipe(ctx, chunk=300)
    xs = [_x(rng, n) for n in (1, 299, 300, 301, 2000)]
    devs = [ctx.to_device(x) for x in xs]
    outs = [ctx.device_empty(x.shape, np.float32) for x in xs]
    with p.stream(max_in_flight=2) as s:
        fs = [s.submit(d, out=o) for d, o in zip(devs, outs)]  # device -> device
        gs = [s.submit(d) for d in devs]  # device -> host
        hs = [s.submit(x, out="device") for x in xs]  # host -> device
        for f, o in zip(fs, outs):
            assert f.result() is o and f.handed_off.result() is o
        results = [g.result() for g in gs] + [h.result().numpy() for h in hs]
    report = s.report
    assert report is not None and report.pcie_bytes == 2 * sum(4 * x.size for x in xs)
    for o, x in zip(outs, xs):
        assert_sinmix(o.numpy(), x, ITERS)
    for r, x in zip(results, xs + xs):
        assert_sinmix(r, x, ITERS)


def test_a_pending_output_waits_for_its_batch(host_ctx: sp.Context,
                                              rng: np.random.Generator) -> None:
    """A stream's DeviceBuffer read on the host (numpy(), DLPack) waits for its batch."""
    import time

    def slow(inp: np.ndarray, out: np.ndarray) -> None:
        time.sleep(0.05)
        out[...] = inp * 2

    p = host_ctx.pipeline(sp.Stage("slow", np.float32, host=slow), np.float32)
    x = _x(rng, 100)
    with p.stream() as s:
        f = s.submit(x, out="device")
        buf = f._core.held[f.index].batch.result  # type: ignore[union-attr]
        np.testing.assert_array_equal(np.from_dlpack(buf), x * 2)
        assert f.done()


def test_failed_batch_buffer_says_so(host_ctx: sp.Context) -> None:
    def bad(inp: np.ndarray, out: np.ndarray) -> None:
        raise RuntimeError("boom")

    p = host_ctx.pipeline(sp.Stage("bad", np.float32, host=bad), np.float32)
    with p.stream() as s:
        f = s.submit(np.ones(10, np.float32), out="device")
        with pytest.raises(sp.StageError) as info:
            f.handed_off.result()
        assert isinstance(info.value.__cause__, RuntimeError)
        with pytest.raises(sp.StageError):
            f.result()


def test_consumer_stream_refused_on_host(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    p = _pipe(host_ctx)
    x = _x(rng, 100)
    with p.stream() as s:
        with pytest.raises(sp.Unsupported, match="consumer stream is a CUDA stream") as info:
            s.submit(x, out="device", consumer_stream=0x1234)
        assert info.value.status_name == "SP_ERR_UNSUPPORTED"
        with pytest.raises(sp.InvalidArgument, match="block=False"):
            s.submit(x, out="device", consumer_stream=0x1234, block=False)
        with pytest.raises(sp.InvalidArgument, match="CUDA stream"):
            s.submit(x, out="device", consumer_stream="default")
        assert_sinmix(s.submit(x, out="device").result().numpy(), x, ITERS)  # still usable


def test_groups_refuse_device_ends(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    g = host_ctx.group(2)
    p = g.pipeline([sp.sinmix(1)], np.float32)
    with pytest.raises(sp.Unsupported, match="group"):
        p.run(_x(rng, 100), out="device")

