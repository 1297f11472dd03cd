"""Sources and sinks in Python (Pipeline.run_io): sequential sources with short reads and no
known length, positional ones over arrays and files, every element checked; a source or sink
that raises fails the run with StageError chained to it, and the pipeline runs again."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix


class Boom(Exception):
    pass


class Sequential:
    """A source over x that gives short reads at random; it can be told to raise."""

    def __init__(self, x: np.ndarray, rng: np.random.Generator, raise_at: int = -1) -> None:
        self.x, self.rng, self.raise_at = x, rng, raise_at
        self.next = 0
        self.threads: set[int] = set()

    def __call__(self, dst: np.ndarray, first: int, max_records: int) -> int:
        self.threads.add(threading.get_ident())
        assert first == self.next, (first, self.next)  # in record order
        assert dst.shape[0] == max_records and dst.flags.writeable
        if self.raise_at >= 0 and first <= self.raise_at < first + max_records:
            raise Boom(f"source at {first}")
        n = min(max_records, len(self.x) - first)
        if n > 1 and self.rng.random() < 0.3:
            n = int(self.rng.integers(1, n))  # a short read
        dst[:n] = self.x[first:first + n]
        self.next += n
        return n


class Collect:
    """A sink writing into out, checking the order."""

    def __init__(self, out: np.ndarray, sequential: bool = True) -> None:
        self.out, self.sequential = out, sequential
        self.next = 0

    def __call__(self, src: np.ndarray, first: int) -> None:
        assert not src.flags.writeable
        if self.sequential:
            assert first == self.next
            self.next += src.shape[0]
        self.out[first:first + src.shape[0]] = src


@pytest.mark.parametrize("known", [True, False])
def test_sequential_source_and_sink(ctx: sp.Context, rng: np.random.Generator, known: bool) -> None:
    p = ctx.pipeline(sp.sinmix(4), np.float32, chunk_records=256, depth=4)
    for n in (0, 1, 255, 256, 257, 256 * 13 + 5):
        x = rng.uniform(-50, 50, n).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        source = Sequential(x, rng)
        written = p.run_io(source, Collect(out), n_records=n if known else 0)
        assert written == n
        assert_sinmix(out, x, 4)
        assert source.threads == {threading.get_ident()}  # on the calling thread


def test_positional_over_arrays(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline(sp.sinmix(3), np.float32, chunk_records=1000, depth=4, staging_threads=3)
    n = 1000 * 17 + 3
    x = rng.uniform(-50, 50, n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def read(dst: np.ndarray, first: int, max_records: int) -> int:
        with lock:
            seen.append((first, max_records))
        dst[:] = x[first:first + max_records]
        return max_records

    def write(src: np.ndarray, first: int) -> None:
        out[first:first + src.shape[0]] = src

    written, report = p.run_io(read, write, n_records=n, positional=True, report=True)
    assert written == n and report.records == n
    assert_sinmix(out, x, 3)
    covered = np.zeros(n, np.int32)
    for first, count in seen:
        covered[first:first + count] += 1
    assert (covered == 1).all()  # every record read exactly once


def test_positional_files(host_ctx: sp.Context, rng: np.random.Generator, tmp_path) -> None:
    # os.preadv and os.pwritev release the GIL: the staging threads read and write at once
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=4096, staging_threads=2)
    n = 4096 * 9 + 100
    x = rng.uniform(-50, 50, n).astype(np.float32)
    src, dst = tmp_path / "in.f32", tmp_path / "out.f32"
    x.tofile(src)
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        fout.truncate(n * 4)

        def read(buf: np.ndarray, first: int, max_records: int) -> int:
            got = os.preadv(fin.fileno(), [buf], first * 4)
            return got // 4

        def write(buf: np.ndarray, first: int) -> None:
            os.pwritev(fout.fileno(), [buf], first * 4)

        assert p.run_io(read, write, n_records=n, positional=True) == n
    assert_sinmix(np.fromfile(dst, np.float32), x, 2)


def test_records_of_a_shape(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    def pairs(inp: np.ndarray, out: np.ndarray) -> None:
        out[:, 0] = inp.sum(axis=1)
        out[:, 1] = inp.prod(axis=1)

    p = host_ctx.pipeline(sp.Stage("pairs", np.int64, (2,), host=pairs), np.int16,
                          in_shape=(3,), chunk_records=50)
    x = rng.integers(-100, 100, (777, 3)).astype(np.int16)
    out = np.zeros((777, 2), np.int64)

    def read(dst: np.ndarray, first: int, max_records: int) -> int:
        assert dst.dtype == np.int16 and dst.shape == (max_records, 3)
        n = min(max_records, len(x) - first)
        dst[:n] = x[first:first + n]
        return n

    def write(src: np.ndarray, first: int) -> None:
        assert src.dtype == np.int64 and src.shape[1:] == (2,)
        out[first:first + len(src)] = src

    assert p.run_io(read, write) == 777
    np.testing.assert_array_equal(out[:, 0], x.astype(np.int64).sum(axis=1))
    np.testing.assert_array_equal(out[:, 1], x.astype(np.int64).prod(axis=1))


@pytest.mark.parametrize("positional", [False, True])
def test_a_raising_source_or_sink(host_ctx: sp.Context, rng: np.random.Generator,
                                  positional: bool) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32, chunk_records=100)
    x = rng.uniform(-5, 5, 1000).astype(np.float32)
    out = np.zeros(1000, np.float32)

    def read(dst: np.ndarray, first: int, max_records: int) -> int:
        if first <= 450 < first + max_records:
            raise Boom("the source broke")
        dst[:] = x[first:first + max_records]
        return max_records

    with pytest.raises(sp.StageError) as info:
        p.run_io(read, Collect(out, sequential=not positional), n_records=1000,
                 positional=positional)
    assert isinstance(info.value.__cause__, Boom)
    assert "the source (read) raised Boom: the source broke" in str(info.value)

    def bad_sink(src: np.ndarray, first: int) -> None:
        raise Boom("the sink broke")

    with pytest.raises(sp.StageError, match="the sink") as info:
        p.run_io(Sequential(x, rng), bad_sink, n_records=1000, positional=False)
    assert isinstance(info.value.__cause__, Boom)
    # the pipeline runs again
    assert p.run_io(Sequential(x, rng), Collect(out), n_records=1000) == 1000
    assert_sinmix(out, x, 1)


def test_bad_sources(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32, chunk_records=10)
    sink = Collect(np.zeros(100, np.float32))
    with pytest.raises(sp.StageError) as info:
        p.run_io(lambda dst, first, n: None, sink)
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(sp.StageError) as info:
        p.run_io(lambda dst, first, n: n + 1, sink)
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(sp.StageError, match="ended at record"):
        p.run_io(lambda dst, first, n: 0, sink, n_records=5)  # fewer than promised
    with pytest.raises(sp.StageError, match="positional source gave"):
        p.run_io(lambda dst, first, n: n - 1, sink, n_records=50, positional=True)
    with pytest.raises(sp.InvalidArgument, match="n_records"):
        p.run_io(lambda dst, first, n: n, sink, positional=True)  # needs a length
    with pytest.raises(sp.InvalidArgument, match="callable"):
        p.run_io(None, sink)  # type: ignore[arg-type]
    with pytest.raises(sp.InvalidArgument, match="positional"):
        p.run_io(lambda dst, first, n: n, sink, n_records=5, positional=1)  # type: ignore[arg-type]
    with p.stream() as s:
        with pytest.raises(sp.InvalidArgument, match="open stream"):
            p.run_io(lambda dst, first, n: 0, sink)
        s.submit(np.ones(3, np.float32)).result(timeout=30)


def test_copy_nontemporal_in_a_source_and_sink(ctx: sp.Context, rng: np.random.Generator) -> None:
    p = ctx.pipeline(sp.sinmix(3), np.float32, chunk_records=40000, depth=4, staging_threads=2)
    n = 40000 * 5 + 77  # pieces of every size: over and under the 64 KiB plain-memcpy limit
    x = rng.uniform(-50, 50, n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)

    def read(dst: np.ndarray, first: int, max_records: int) -> int:
        sp.copy_nontemporal(dst, x[first:first + max_records])
        return max_records

    def write(src: np.ndarray, first: int) -> None:
        sp.copy_nontemporal(out[first:first + src.shape[0]], src)

    assert p.run_io(read, write, n_records=n, positional=True) == n
    assert_sinmix(out, x, 3)


@pytest.mark.parametrize("shift", range(0, 17, 3))
def test_copy_nontemporal_bytes(rng: np.random.Generator, shift: int) -> None:
    # every alignment of dst, other dtypes and shapes: the bytes copied as they are
    src = rng.integers(0, 256, 300_001, dtype=np.uint8)
    room = np.full(300_001 + 32, 0xA5, np.uint8)
    dst = room[shift:shift + 300_001]
    sp.copy_nontemporal(dst, src)
    np.testing.assert_array_equal(dst, src)
    assert (room[:shift] == 0xA5).all() and (room[shift + 300_001:] == 0xA5).all()
    words = np.zeros((25, 4), np.int32)
    sp.copy_nontemporal(words, src[:400])
    assert words.tobytes() == src[:400].tobytes()


def test_copy_nontemporal_refuses(rng: np.random.Generator) -> None:
    a = rng.uniform(size=1000).astype(np.float32)
    b = np.zeros(1000, np.float32)
    cases = [
        ((b[:999], a), "3996 bytes and src 4000"),   # sizes differ: nothing copied
        ((b, a.astype(np.float64)[:1000]), "bytes"),
        ((b[::2], a[:500]), "C-contiguous"),
        ((b, a[::-1]), "C-contiguous"),
        ((a[1:], a[:-1]), "overlap"),
        ((np.frombuffer(bytes(4000), np.float32), a), "read-only"),
        (([0.0] * 1000, a), "numpy array"),
    ]
    for (dst, src), why in cases:
        with pytest.raises(sp.InvalidArgument, match=why):
            sp.copy_nontemporal(dst, src)  # type: ignore[arg-type]
    assert (b == 0).all()
    sp.copy_nontemporal(b[:0], a[:0])  # zero bytes: nothing to do
