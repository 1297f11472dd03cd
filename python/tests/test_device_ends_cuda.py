"""Device-resident ends on a GPU with torch and CuPy (issue 25): out="device" into torch tensors,
device inputs made by torch and CuPy kernels still running when they are submitted, the
consumer-stream hand-off (a reader on another torch stream right after HANDED_OFF sees every
record, while a reader that does not wait sees the poison), the torch Loader with every
element checked, its early stop, and the pool's rule for exports whose reader names no
stream.

Each skips without a GPU, torch with CUDA, or CuPy, saying so; under SP_REQUIRE_CUDA=1
(bench/gpu_check.sh on the GPU machine) each of those fails instead. Races are made certain
with torch.cuda._sleep, a kernel that spins on the GPU: the producer's or the stage's work is
still running when the host goes on, so a missing wait reads poison."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix, import_or_skip, need_torch_cuda

ITERS = 4
SPIN = 20_000_000  # GPU clock cycles torch.cuda._sleep spins: about 10 ms at 2 GHz
RECORD = 16


@pytest.fixture
def torch() -> Any:
    return need_torch_cuda()


@pytest.fixture
def cupy(torch: Any) -> Any:
    return import_or_skip("cupy")


def _x(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.random(n, dtype=np.float32)


def _slow_double(torch: Any, spin: int = SPIN) -> sp.Stage:
    """out = 2 * in, on the chunk's stream, after the GPU spins for `spin` cycles: a chunk's
    output is written well after the host enqueued it."""

    def on_cuda(chunk: sp.Chunk) -> None:
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            torch.cuda._sleep(spin)
            torch.mul(torch.from_dlpack(chunk.input), 2.0, out=torch.from_dlpack(chunk.output))

    return sp.Stage("slow_double", np.float32, cuda=on_cuda)


def _nan_count(t: Any) -> int:
    return int(t.isnan().sum().item())


# ---- out="device" and device arrays as out ---------------------------------------------------


def test_device_outputs_into_torch_tensors(torch: Any, rng: np.random.Generator) -> None:
    ctx = sp.Context("cuda")
    p = ctx.pipeline([sp.sinmix(ITERS)], np.float32, chunk_records=1000, depth=3)
    xs = [_x(rng, n) for n in (1, 999, 1000, 1001, 7777)]
    outs = [torch.full((x.size,), float("nan"), device="cuda") for x in xs]  # poisoned
    with p.stream(max_in_flight=2) as s:
        fs = [s.submit(x, out=o) for x, o in zip(xs, outs)]  # host in, torch tensor out
        bufs = list(s.imap(xs, out="device"))  # host in, pool out
        for f, o in zip(fs, outs):
            assert f.result() is o
    assert s.report is not None and s.report.pcie_bytes == 2 * sum(4 * x.size for x in xs)
    for o, b, x in zip(outs, bufs, xs):
        assert_sinmix(o.cpu().numpy(), x, ITERS)
        t = torch.from_dlpack(b)
        assert t.data_ptr() == b.ptr and t.device == torch.device("cuda", ctx.device)
        assert_sinmix(t.cpu().numpy(), x, ITERS)
    y = p.run(xs[-1], out="device")
    assert_sinmix(torch.from_dlpack(y).cpu().numpy(), xs[-1], ITERS)


# ---- device inputs whose producer is still running --------------------------------------------


def test_torch_input_made_on_a_busy_stream(torch: Any, rng: np.random.Generator) -> None:
    """The input is written by a torch kernel queued behind a spin on the current (side)
    stream: the package waits for that stream before the library reads it."""
    ctx = sp.Context("cuda")
    p = ctx.pipeline([sp.sinmix(ITERS)], np.float32, chunk_records=2048, depth=4)
    x = _x(rng, 10_000)
    host = torch.from_numpy(x).cuda()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        xt = torch.full_like(host, float("nan"))
        torch.cuda._sleep(5 * SPIN)
        xt.copy_(host)  # the producer: done some 50 ms from now
        out = torch.full_like(host, float("nan"))
        p.run(xt, out=out)
        assert_sinmix(out.cpu().numpy(), x, ITERS)
        torch.cuda._sleep(5 * SPIN)
        xt.mul_(3.0)  # again, for a stream batch
        with p.stream() as s:
            y = s.submit(xt, out="device").result()
    assert_sinmix(torch.from_dlpack(y).cpu().numpy(), x * np.float32(3), ITERS)


def test_cupy_arrays_in_and_out(torch: Any, cupy: Any, rng: np.random.Generator) -> None:
    """A CuPy input written on CuPy's current stream behind a spin (torch's kernel on the same
    stream), read after the package waited for it; a CuPy array as out written in place."""
    ctx = sp.Context("cuda")
    p = ctx.pipeline([sp.sinmix(ITERS)], np.float32, chunk_records=4096, depth=3)
    x = _x(rng, 20_011)
    side = torch.cuda.Stream()
    with cupy.cuda.ExternalStream(side.cuda_stream):
        src = cupy.asarray(x)
        xc = cupy.full(x.shape, cupy.nan, cupy.float32)
        with torch.cuda.stream(side):
            torch.cuda._sleep(5 * SPIN)
        xc[...] = src  # queued behind the spin, on CuPy's current stream
        out = cupy.full(x.shape, cupy.nan, cupy.float32)
        _, report = p.run(xc, out=out, report=True)
        assert report.pcie_bytes == 0
        assert_sinmix(cupy.asnumpy(out), x, ITERS)
        y = p.run(xc, out="device")
        assert_sinmix(cupy.asnumpy(cupy.from_dlpack(y)), x, ITERS)
    with pytest.raises(sp.InvalidArgument, match="not C-contiguous"):
        p.run(cupy.zeros((100, 2), cupy.float32)[:, 0])


# ---- the hand-off -----------------------------------------------------------------------------


def test_hand_off_reader_on_another_stream_sees_every_record(
        torch: Any, rng: np.random.Generator) -> None:
    """A consumer on its own torch stream clones the output right after HANDED_OFF, with no
    host wait: it sees every record. The control: a clone queued at the same moment on a
    stream that was not handed the batch sees the poison, so the test can fail."""
    ctx = sp.Context("cuda")
    p = ctx.pipeline(_slow_double(torch), np.float32, chunk_records=4096, depth=4)
    consumer, bystander = torch.cuda.Stream(), torch.cuda.Stream()
    with p.stream(max_in_flight=4) as s:
        for k in range(3):
            x = _x(rng, 4 * 4096 - 7 * k)  # at most `depth` chunks: all enqueued at once
            out = torch.full((x.size,), float("nan"), device="cuda")
            torch.cuda.synchronize()
            f = s.submit(x, out=out, consumer_stream=consumer)
            assert f.handed_off.result(timeout=30) is out  # before the stage's spin ends
            with torch.cuda.stream(bystander):
                early = out.clone()  # not made to wait: reads too soon
            with torch.cuda.stream(consumer):
                seen = out.clone()  # queued after the hand-off: made to wait on the device
            f.result(timeout=30)
            torch.cuda.synchronize()
            assert _nan_count(early) > 0, "the stage's spin did not outlast the hand-off"
            np.testing.assert_array_equal(seen.cpu().numpy(), x * np.float32(2))


def test_hand_off_to_the_default_stream(torch: Any, rng: np.random.Generator) -> None:
    """consumer_stream defaults to torch's current stream for a torch tensor end; the legacy
    default stream (handle 0, passed on as 1) works as any other."""
    ctx = sp.Context("cuda")
    p = ctx.pipeline(_slow_double(torch), np.float32, chunk_records=4096, depth=4)
    x = _x(rng, 3 * 4096)
    xt = torch.from_numpy(x).cuda()
    with p.stream() as s:
        f = s.submit(xt, out="device")
        assert f.consumer_stream == 1
        t = torch.from_dlpack(f.handed_off.result(timeout=30))
        got = (t * 1).cpu().numpy()  # queued on the default stream after the hand-off
    np.testing.assert_array_equal(got, x * np.float32(2))


# ---- the pool ---------------------------------------------------------------------------------


def test_exports_to_an_unknown_stream_free_the_block(torch: Any, rng: np.random.Generator) -> None:
    """A buffer read through __cuda_array_interface__ or DLPack stream=-1 (no stream named) is
    freed when let go, never handed out again; one read on a named stream returns to the
    pool."""
    ctx = sp.Context("cuda")
    p = ctx.pipeline([sp.sinmix(1)], np.float32, chunk_records=1000)
    x = _x(rng, 3000)
    pool = None
    for export in ("cai", "no_sync", "stream"):
        y = p.run(x, out="device")
        pool = p._pool  # type: ignore[attr-defined]
        live = pool.live
        if export == "cai":
            y.__cuda_array_interface__
        elif export == "no_sync":
            y.__dlpack__(stream=-1)
        else:
            torch.from_dlpack(y).sum().item()
        idle = pool.idle
        del y
        gc.collect()
        if export == "stream":
            assert pool.idle == idle + 1 and pool.live == live
        else:
            assert pool.idle == idle and pool.live == live - 1


# ---- the torch Loader -------------------------------------------------------------------------


def _normalize(torch: Any, spin: int = 0) -> sp.Stage:
    """uint8 records to float32 / 255, in torch on the chunk's stream (after a spin)."""

    def on_cuda(chunk: sp.Chunk) -> None:
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            if spin:
                torch.cuda._sleep(spin)
            torch.mul(torch.from_dlpack(chunk.input).float(), 1 / 255,
                      out=torch.from_dlpack(chunk.output))

    def on_host(inp: np.ndarray, out: np.ndarray) -> None:
        np.multiply(inp, np.float32(1 / 255), out=out)

    return sp.Stage("normalize", np.float32, (RECORD,), host=on_host, cuda=on_cuda)


def _images(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, RECORD), dtype=np.uint8)


def test_loader_every_element_on_the_current_stream(torch: Any) -> None:
    """Every batch, read at once on the current (side) stream, holds exactly its images'
    values; the stage spins, so a batch yielded before it was ready would show stale data
    of an earlier batch (every batch's images differ) or uninitialized memory."""
    from streampipe.torch import Loader

    images = _images(4096, seed=3)
    labels = np.arange(4096)
    loader = Loader((images, labels), _normalize(torch, spin=SPIN // 4), batch_size=512,
                    device=0, max_in_flight=3)
    assert loader.device == torch.device("cuda", 0) and len(loader) == 8
    side = torch.cuda.Stream()
    for epoch in range(2):
        with torch.cuda.stream(side):
            held = [(x * 1, y) for x, y in loader]  # consumed at once, on `side`
        torch.cuda.synchronize()
        assert len(held) == 8
        for k, (x, y) in enumerate(held):
            assert x.is_cuda and y.is_cuda and x.dtype == torch.float32
            idx = y.cpu().numpy()
            np.testing.assert_array_equal(idx, labels[512 * k: 512 * (k + 1)])
            np.testing.assert_array_equal(x.cpu().numpy(), images[idx] * np.float32(1 / 255))


def test_loader_early_stop_then_a_whole_epoch(torch: Any) -> None:
    from streampipe.torch import Loader

    images = _images(64 * 40, seed=5)
    loader = Loader(images, _normalize(torch, spin=SPIN // 2), batch_size=64, device=0,
                    max_in_flight=4)
    taken = []
    for k, x in enumerate(loader):
        taken.append(x * 1)
        if k == 1:
            break  # with 4 batches queued behind it, spinning
    torch.cuda.synchronize()
    assert len(taken) == 2
    for k, x in enumerate(taken):
        np.testing.assert_array_equal(x.cpu().numpy(),
                                      images[64 * k: 64 * (k + 1)] * np.float32(1 / 255))
    pipe = loader.pipeline
    assert pipe is not None
    pipe.run(images[:64])  # the stream is closed: the pipeline runs again
    whole = torch.cat([x * 1 for x in loader])
    np.testing.assert_array_equal(whole.cpu().numpy(), images * np.float32(1 / 255))


def test_loader_block_reused_only_after_the_step_that_read_it(torch: Any) -> None:
    """Each batch is read late on the current stream (a spin queued before its checksum) and
    let go at once: its block must not be written by a later batch before that read ran. A
    block given back at release, without the event on the current stream, shows a later
    batch's checksum. Then with every batch held: each in a block of its own."""
    from streampipe.torch import Loader

    images = _images(128 * 24, seed=7)
    want = [float((images[128 * k: 128 * (k + 1)] * np.float32(1 / 255)).astype(np.float64)
                  .sum()) for k in range(24)]
    loader = Loader(images, _normalize(torch), batch_size=128, device=0, max_in_flight=2)
    sums = []
    for x in loader:
        torch.cuda._sleep(SPIN // 4)  # the step: the read comes late on the device
        sums.append(x.double().sum())
        del x  # released now, its read still queued
    assert [round(float(s), 3) for s in sums] == [round(w, 3) for w in want]
    held = list(loader)
    torch.cuda.synchronize()
    assert [round(float(x.double().sum()), 3) for x in held] == [round(w, 3) for w in want]
