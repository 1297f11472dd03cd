"""Pipeline.run_file: a file of records through the stages into another file with the library's
file source and sink (streampipe_io.h), every element checked against the reference over an
output poisoned beforehand; bad files and failing stages raise, leave the old output as it was
and no temporary file."""

from __future__ import annotations

import os

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix


def leftovers(folder, *keep: str) -> list[str]:
    return sorted(set(os.listdir(folder)) - set(keep))


@pytest.mark.parametrize("report", [False, True])
def test_a_file_through_sinmix(host_ctx: sp.Context, rng: np.random.Generator, tmp_path,
                               report: bool) -> None:
    n = int(rng.integers(50_000, 80_000))
    x = rng.uniform(-4, 4, n).astype(np.float32)
    src, dst = tmp_path / "in.f32", tmp_path / "out.f32"
    x.tofile(src)
    np.full(n, np.nan, np.float32).tofile(dst)  # poison: replaced only once the run succeeded
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=4096, staging_threads=3)
    result = p.run_file(src, str(dst), report=report)
    if report:
        records, rep = result
        assert records == n and rep.records == n
    else:
        assert result == n
    assert_sinmix(np.fromfile(dst, np.float32), x, 2)
    assert leftovers(tmp_path, "in.f32", "out.f32") == []
    # an empty input gives an empty output
    (tmp_path / "empty.f32").write_bytes(b"")
    assert p.run_file(tmp_path / "empty.f32", tmp_path / "e.out") == 0
    assert (tmp_path / "e.out").stat().st_size == 0


def test_bad_files_and_failing_stages_leave_nothing(host_ctx: sp.Context, tmp_path) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32, chunk_records=100)
    src, dst = tmp_path / "in.f32", tmp_path / "out.f32"
    np.arange(1000, dtype=np.float32).tofile(src)
    dst.write_bytes(b"OLD")
    (tmp_path / "odd.f32").write_bytes(b"1234567")
    cases = [
        (tmp_path / "missing.f32", dst, sp.BackendError, "cannot open the input"),
        (tmp_path / "odd.f32", dst, sp.Unsupported, "not a whole number of 4-byte records"),
        (src, src, sp.InvalidArgument, "is the input file"),
        (src, tmp_path / "no-such-folder" / "out.f32", sp.BackendError,
         "cannot create the output beside"),
        (src, tmp_path, sp.Unsupported, "is a directory"),
    ]
    for i, o, error, says in cases:
        with pytest.raises(error, match=says):
            p.run_file(i, o)
        assert dst.read_bytes() == b"OLD"
        assert leftovers(tmp_path, "in.f32", "out.f32", "odd.f32") == []
    with pytest.raises(sp.InvalidArgument, match="must be a path"):
        p.run_file(3, dst)

    calls = []

    def broken(x: np.ndarray, y: np.ndarray) -> None:
        calls.append(len(x))
        if len(calls) == 5:
            raise RuntimeError("the stage broke")
        y[:] = x

    q = host_ctx.pipeline(sp.Stage("broken", np.float32, host=broken), np.float32,
                          chunk_records=100)
    with pytest.raises(sp.StageError, match="the stage broke"):
        q.run_file(src, dst)
    assert dst.read_bytes() == b"OLD"
    assert leftovers(tmp_path, "in.f32", "out.f32", "odd.f32") == []


@pytest.mark.skipif(os.system("command -v lz4 >/dev/null") != 0, reason="no lz4 command")
@pytest.mark.parametrize("decompress", ["auto", "staging", "ring"])
def test_an_lz4_file_through_the_ring(host_ctx: sp.Context, rng: np.random.Generator, tmp_path,
                                      decompress: str) -> None:
    """A file `lz4` wrote (64 KiB blocks) read as the raw records, its blocks decompressed
    where asked (issue 26): the output is the raw file's, element by element."""
    n = 16384 * int(rng.integers(4, 9))
    x = (np.round(rng.standard_normal(n) * 4) / 4).astype(np.float32)  # compresses
    raw, packed, dst = tmp_path / "in.f32", tmp_path / "in.lz4", tmp_path / "out.f32"
    x.tofile(raw)
    assert os.system(f"lz4 -q -f -B4 '{raw}' '{packed}'") == 0
    np.full(n, np.nan, np.float32).tofile(dst)
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=32768, staging_threads=2)
    assert p.run_file(packed, dst, decompress=decompress) == n
    assert_sinmix(np.fromfile(dst, np.float32), x, 2)
    with pytest.raises(sp.InvalidArgument, match="decompress must be one of"):
        p.run_file(packed, dst, decompress="gpu")
    with pytest.raises(sp.Unsupported, match="magic"):  # an LZ4 file read as Zstandard
        p.run_file(packed, dst, input_format="zstd")


@pytest.mark.skipif(os.system("command -v lz4 >/dev/null && command -v zstd >/dev/null") != 0,
                    reason="no lz4 or zstd command")
@pytest.mark.parametrize("fmt", ["lz4", "zstd"])
def test_a_compressed_file_into_device_memory_reports_the_ring(
        host_ctx: sp.Context, rng: np.random.Generator, tmp_path, fmt: str) -> None:
    """run_file(out="device", report=True) on a compressed input (issue 26's rate bench): the
    output is the raw file's run, element by element, and input_compression says how many
    chunks and bytes went through the ring, their decompression time and the note."""
    frames = int(rng.integers(5, 9))
    n = 16384 * frames
    x = (np.round(rng.standard_normal(n) * 4) / 4).astype(np.float32)  # compresses
    raw, packed = tmp_path / "in.f32", tmp_path / f"in.{fmt}"
    x.tofile(raw)
    if fmt == "lz4":
        assert os.system(f"lz4 -q -f -B4 '{raw}' '{packed}'") == 0
    else:  # one frame per 64 KiB, as the seekable format lays them out
        with open(packed, "wb") as f:
            for k in range(frames):
                part = tmp_path / f"p{k}"
                x[k * 16384:(k + 1) * 16384].tofile(part)
                assert os.system(f"zstd -q -f --rm '{part}' -o '{part}.zst'") == 0
                f.write((tmp_path / f"p{k}.zst").read_bytes())
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=32768, staging_threads=3)
    ref = p.run_file(raw, out="device").to_host()
    assert_sinmix(ref, x, 2)
    y, rep = p.run_file(packed, out="device", report=True, decompress="ring")
    assert np.array_equal(y.to_host(), ref)
    c = rep.input_compression
    assert c is not None and c.format == fmt and rep.output_compression is None
    assert c.compressed_bytes == packed.stat().st_size and c.uncompressed_bytes == n * 4
    assert c.ring_chunks == rep.chunks and c.staging_chunks == 0
    assert c.ring_bytes_out == n * 4 and 0 < c.ring_bytes_in < n * 4
    assert c.ring_blocks == (n * 4 + 65535) // 65536 and c.ring_busy_s > 0
    assert c.ring_gbps == pytest.approx(n * 4 / c.ring_busy_s / 1e9)
    assert "in the ring" in c.note
    # the staging threads: no ring figures, and the note says it was asked for
    y, rep = p.run_file(packed, out="device", report=True, decompress="staging")
    assert np.array_equal(y.to_host(), ref)
    c = rep.input_compression
    assert c is not None and c.ring_chunks == 0 and c.staging_chunks == rep.chunks
    assert c.ring_busy_s == 0 and c.ring_gbps == 0 and "staging" in c.note


def test_nvcomp_loader_names_why() -> None:
    loaded, version, why = sp.nvcomp_status()
    if loaded:
        assert version // 1000 in (5, 6)
        return
    ok, why = sp.load_nvcomp("/nonexistent/libnvcomp.so.6")
    assert not ok and "nvCOMP not found" in why


@pytest.mark.skipif(os.system("command -v lz4 >/dev/null") != 0, reason="no lz4 command")
def test_an_lz4_file_through_a_group_in_the_ring(host_ctx: sp.Context, rng: np.random.Generator,
                                                 tmp_path) -> None:
    """A device group's members run units of one compressed input at once, each through its
    own ring (issue 26): the output is the raw file's."""
    n = 16384 * int(rng.integers(8, 13))
    x = (np.round(rng.standard_normal(n) * 4) / 4).astype(np.float32)
    raw, packed, dst = tmp_path / "in.f32", tmp_path / "in.lz4", tmp_path / "out.f32"
    x.tofile(raw)
    assert os.system(f"lz4 -q -f -B4 '{raw}' '{packed}'") == 0
    p = host_ctx.group(3).pipeline([sp.sinmix(2)], np.float32, chunk_records=16384)
    assert p.run_file(packed, dst, decompress="ring") == n
    assert_sinmix(np.fromfile(dst, np.float32), x, 2)


@pytest.mark.skipif(os.system("command -v lz4 >/dev/null && command -v zstd >/dev/null") != 0,
                    reason="no lz4 or zstd command")
@pytest.mark.parametrize("output_format", ["lz4", "zstd"])
def test_a_compressed_output_read_back_by_the_real_command(
        host_ctx: sp.Context, rng: np.random.Generator, tmp_path, output_format: str) -> None:
    """run_file(output_format=...) writes what `lz4 -d` / `zstd -d` read back as the raw run's
    bytes; the Report gives both compressed ends' sizes and ratios (issue 26)."""
    n = int(rng.integers(200_000, 300_000))  # not a multiple of the chunk
    x = (np.round(rng.standard_normal(n) * 4) / 4).astype(np.float32)  # compresses
    raw, packed = tmp_path / "in.f32", tmp_path / "in.zst"
    x.tofile(raw)
    assert os.system(f"zstd -q -f '{raw}' -o '{packed}'") == 0
    p = host_ctx.pipeline(sp.sinmix(2), np.float32, chunk_records=16384, staging_threads=3)
    assert p.run_file(raw, tmp_path / "ref.f32") == n
    out = tmp_path / f"out.{output_format}"
    records, rep = p.run_file(packed, out, report=True, output_format=output_format)
    assert records == n
    back = tmp_path / "back.f32"
    assert os.system(f"{output_format} -q -d -c '{out}' > '{back}'") == 0
    assert back.read_bytes() == (tmp_path / "ref.f32").read_bytes()
    o, i = rep.output_compression, rep.input_compression
    assert o is not None and o.format == output_format
    assert o.uncompressed_bytes == n * 4 and o.compressed_bytes == out.stat().st_size
    assert o.ratio == pytest.approx(n * 4 / out.stat().st_size)
    assert i is not None and i.format == "zstd" and i.uncompressed_bytes == n * 4
    assert i.compressed_bytes == packed.stat().st_size
    # raw ends have none; a wrong name is refused before anything is written
    _, plain = p.run_file(raw, tmp_path / "plain.f32", report=True)
    assert plain.input_compression is None and plain.output_compression is None
    with pytest.raises(sp.InvalidArgument, match="output_format must be one of"):
        p.run_file(raw, tmp_path / "x.f32", output_format="gzip")
    assert not (tmp_path / "x.f32").exists()
