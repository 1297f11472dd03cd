"""Stage scratch (Stage(scratch_bytes=N)): N bytes per chunk in flight, never shared by two
chunks at once (several streams, graph mode, streams of batches), writable, of N bytes;
host(inp, out, scratch) on HOST and chunk.scratch (DLPack, __cuda_array_interface__) on CUDA."""

from __future__ import annotations

import threading
import time

import numpy as np

import streampipe as sp
from helpers import assert_close, assert_sinmix, import_or_skip, poisoned, sinmix_reference

SCRATCH = 4096 + 13  # not a multiple of the slot alignment


class Privacy:
    """A host stage that stamps its scratch with the chunk (its first input value), sleeps
    with the GIL released so that other chunks run meanwhile, and checks the stamp is still
    there; it notes each call's interval and scratch address."""

    def __init__(self, pause_s: float = 0.005) -> None:
        self.pause_s = pause_s
        self.lock = threading.Lock()
        self.running = 0
        self.most_at_once = 0
        self.calls: list[tuple[float, float, int, int]] = []  # start, end, address, stamp
        self.clobbered: list[str] = []

    def __call__(self, inp: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
        assert scratch.dtype == np.uint8 and scratch.shape == (SCRATCH,)
        assert scratch.flags.writeable and scratch.flags.c_contiguous
        stamp = int(inp[0]) if inp.shape[0] else -1
        pattern = np.uint8(stamp % 251)
        with self.lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        start = time.perf_counter()
        scratch[:] = pattern
        scratch[:8].view(np.int64)[0] = stamp
        time.sleep(self.pause_s)
        if scratch[:8].view(np.int64)[0] != stamp or np.any(scratch[8:] != pattern):
            self.clobbered.append(f"chunk stamped {stamp}")
        np.copyto(out, inp)
        end = time.perf_counter()
        with self.lock:
            self.running -= 1
            self.calls.append((start, end, scratch.ctypes.data, stamp))

    def check(self, depth: int) -> None:
        assert not self.clobbered, self.clobbered
        addresses = {c[2] for c in self.calls}
        assert 1 <= len(addresses) <= depth
        # two calls that overlapped in time never had the same scratch
        calls = sorted(self.calls)
        for i, (start, end, address, stamp) in enumerate(calls):
            for other in calls[i + 1:]:
                if other[0] >= end:
                    break
                assert other[2] != address, f"chunks {stamp} and {other[3]} shared scratch"


def test_each_chunk_in_flight_has_its_own_scratch(host_ctx: sp.Context) -> None:
    stage = Privacy()
    depth = 6
    p = host_ctx.pipeline(sp.Stage("private", np.float32, host=stage, scratch_bytes=SCRATCH,
                                   streams=3), np.float32, chunk_records=10, depth=depth)
    x = np.arange(10 * 60, dtype=np.float32)  # chunk k starts with 10k: its stamp
    got = p.run(x, out=poisoned(x.shape, np.float32))
    np.testing.assert_array_equal(got, x)
    assert len(stage.calls) == 60
    assert stage.most_at_once >= 2, "the three streams never ran two chunks at once"
    stage.check(depth)


def test_scratch_in_a_stream(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    stage = Privacy(pause_s=0.002)
    depth = 5
    p = host_ctx.pipeline([sp.Stage("private", np.float32, host=stage, scratch_bytes=SCRATCH,
                                    streams=3), sp.sinmix(2)],
                          np.float32, chunk_records=16, depth=depth)
    base = 0
    xs = []
    for n in rng.integers(0, 80, 25):
        xs.append(np.arange(base, base + n, dtype=np.float32))
        base += int(n)
    with p.stream(max_in_flight=4) as s:
        futures = [s.submit(x) for x in xs]
        for x, f in zip(xs, futures):
            assert_sinmix(f.result(timeout=60), x, 2)
    stage.check(depth)


def test_scratch_in_graph_mode(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    # HOST replays each slot's recorded calls with that slot's scratch
    def scaled(inp: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
        tmp = scratch[: inp.nbytes].view(np.float32)
        np.multiply(inp, np.float32(2), out=tmp)
        np.add(tmp, np.float32(1), out=out)

    p = host_ctx.pipeline([sp.sinmix(1),
                           sp.Stage("scaled", np.float32, host=scaled, scratch_bytes=128 * 4)],
                          np.float32, chunk_records=128, depth=8, graph="on")
    x = rng.uniform(-5, 5, 128 * 40 + 3).astype(np.float32)
    got, report = p.run(x, out=poisoned(x.shape, np.float32), report=True)
    assert report.graph, report.notes
    want = sinmix_reference(x, 1) * np.float32(2) + np.float32(1)
    assert_close(got, want, 1)  # the C sin and numpy's may differ by an ulp


def test_without_scratch_the_host_function_takes_two_arguments(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.Stage("two", np.float32, host=lambda i, o: np.copyto(o, i)),
                          np.float32)
    np.testing.assert_array_equal(p.run(np.ones(7, np.float32)), np.ones(7, np.float32))
    assert sp.sinmix(1).scratch_bytes == 0


def test_cuda_scratch_with_torch(cuda_ctx: sp.Context, rng: np.random.Generator) -> None:
    torch = import_or_skip("torch")
    chunk_records = 4096
    seen: list[tuple[int, tuple[int, ...], str, int]] = []

    def through_scratch(chunk: sp.Chunk) -> None:
        assert chunk.scratch is not None
        cai = chunk.scratch.__cuda_array_interface__
        seen.append((chunk.scratch.ptr, cai["shape"], cai["typestr"], cai["stream"]))
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            x = torch.from_dlpack(chunk.input)
            tmp = torch.from_dlpack(chunk.scratch)[: x.numel() * 4].view(torch.float32)
            torch.mul(x, 2.0, out=tmp)
            for _ in range(20):  # keep the scratch busy while other chunks run
                torch.add(tmp, 0.0, out=tmp)
            torch.add(tmp, 1.0, out=torch.from_dlpack(chunk.output))

    depth = 6
    p = cuda_ctx.pipeline([sp.sinmix(1),
                           sp.Stage("scratchy", np.float32, cuda=through_scratch,
                                    scratch_bytes=chunk_records * 4, streams=3)],
                          np.float32, chunk_records=chunk_records, depth=depth)
    x = rng.uniform(-5, 5, chunk_records * 30 + 17).astype(np.float32)
    got = p.run(x, out=poisoned(x.shape, np.float32))
    want = sinmix_reference(x, 1) * np.float32(2) + np.float32(1)
    assert_close(got, want, 1)
    assert all(s[1] == (chunk_records * 4,) and s[2] == "|u1" for s in seen)
    assert all(s[3] != 0 for s in seen)
    assert 1 < len({s[0] for s in seen}) <= depth


def test_cuda_scratch_with_cupy(cuda_ctx: sp.Context, rng: np.random.Generator) -> None:
    cupy = import_or_skip("cupy")

    def through_scratch(chunk: sp.Chunk) -> None:
        with cupy.cuda.ExternalStream(chunk.stream.handle):
            x = cupy.asarray(chunk.input)
            tmp = cupy.asarray(chunk.scratch)[: x.size * 4].view(cupy.float32)
            cupy.multiply(x, x, out=tmp)
            cupy.subtract(tmp, x, out=cupy.asarray(chunk.output))

    p = cuda_ctx.pipeline(sp.Stage("scratchy", np.float32, cuda=through_scratch,
                                   scratch_bytes=1000 * 4, streams=2),
                          np.float32, chunk_records=1000)
    x = rng.uniform(-5, 5, 12_345).astype(np.float32)
    np.testing.assert_array_equal(p.run(x, out=poisoned(x.shape, np.float32)), x * x - x)
