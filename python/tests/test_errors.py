"""Bad input raises a clear exception and touches nothing: no stage is called, the output
keeps its poison, the input is unchanged; errors carry the library's message and status."""

from __future__ import annotations

import numpy as np
import pytest

import streampipe as sp
from helpers import poisoned


class Counting:
    """A host stage that counts its calls (none may happen after a refused run)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, inp: np.ndarray, out: np.ndarray) -> None:
        self.calls += 1
        out[...] = inp


@pytest.fixture
def counted(host_ctx: sp.Context):
    stage = Counting()
    p = host_ctx.pipeline(sp.Stage("copy", np.float32, (2,), host=stage), np.float32, (2,),
                          chunk_records=16)
    return p, stage


def refused(p: sp.Pipeline, stage: Counting, x, out, match: str) -> None:
    x_before = None if not isinstance(x, np.ndarray) else x.copy()
    out_before = None if not isinstance(out, np.ndarray) else out.copy()
    with pytest.raises(sp.InvalidArgument, match=match) as info:
        p.run(x, out=out)
    assert info.value.status == -1 and info.value.status_name == "SP_ERR_INVALID_ARGUMENT"
    assert isinstance(info.value, ValueError)
    assert stage.calls == 0
    if x_before is not None:
        np.testing.assert_array_equal(x, x_before)
    if out_before is not None:
        assert out.tobytes() == out_before.tobytes()


def test_wrong_dtype(counted) -> None:
    p, stage = counted
    refused(p, stage, np.zeros((8, 2), np.float64), None, "x is float64.*float32")
    refused(p, stage, np.zeros((8, 2), np.float32), poisoned((8, 2), np.float64), "out is float64")


def test_wrong_shape(counted) -> None:
    p, stage = counted
    refused(p, stage, np.zeros((8, 3), np.float32), None, r"shape \(8, 3\).*\(n, 2\)")
    refused(p, stage, np.zeros(16, np.float32), None, r"shape \(16,\)")
    refused(p, stage, np.float32(1.0), None, r"shape \(\)")
    refused(p, stage, np.zeros((8, 2), np.float32), poisoned((9, 2), np.float32), r"out has shape \(9, 2\)")
    refused(p, stage, np.zeros((8, 2), np.float32), poisoned((16,), np.float32), r"out has shape \(16,\)")


def test_out_not_usable(counted) -> None:
    p, stage = counted
    x = np.ones((8, 2), np.float32)
    ro = poisoned((8, 2), np.float32)
    ro.flags.writeable = False
    refused(p, stage, x, ro, "read-only")
    strided = poisoned((8, 4), np.float32)[:, ::2]
    refused(p, stage, x, strided, "C-contiguous")
    refused(p, stage, x, [0.0] * 16, "must be an array")


def test_partial_overlap(counted) -> None:
    p, stage = counted
    buf = np.arange(40, dtype=np.float32).reshape(20, 2)
    refused(p, stage, buf[:10], buf[5:15], "overlap; only exact in-place")  # the library's
    refused(p, stage, buf[:10], buf[1:11], "overlap; only exact in-place")
    refused(p, stage, buf[::2], buf[:10], "overlaps")  # x would be copied, but out is on it


def test_in_place_needs_equal_records(host_ctx: sp.Context) -> None:
    stage = Counting()
    grow = sp.Stage("grow", np.float32, (4,), host=stage)
    p = host_ctx.pipeline(grow, np.float32, (2,), chunk_records=4)
    buf = np.zeros(32, np.float32)
    with pytest.raises(sp.InvalidArgument, match="overlap; only exact in-place"):
        p.run(buf[:16].reshape(8, 2), out=buf[:32].reshape(8, 4))
    assert stage.calls == 0


def test_not_an_array(counted) -> None:
    p, stage = counted
    refused(p, stage, [[1.0, 2.0]], None, "must be an array")
    refused(p, stage, object(), None, "must be an array")

    class OnDevice:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be exported")

        def __dlpack_device__(self):
            return (2, 0)

    refused(p, stage, OnDevice(), None, "device memory")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"depth": 65}, "depth is 65"),
        ({"depth": -1}, "depth is -1"),
        ({"depth": 2.5}, "depth must be an integer"),
        ({"chunk_records": -5}, "chunk_records is -5"),
        ({"chunk_records": 2**64}, "chunk_records is"),
        ({"graph": "sometimes"}, "graph is 'sometimes'"),
        ({"graph": True}, "graph is True"),
        ({"in_dtype": "object"}, "not supported"),
        ({"in_dtype": ">f4"}, "byte order"),
        ({"in_dtype": "no-such-type"}, "not a dtype"),
        ({"in_shape": (0,)}, "holds no bytes"),
        ({"in_shape": (-1,)}, r"in_shape\[0\] is -1"),
        ({"staging_threads": -1}, "staging_threads"),
        ({"copy_piece_bytes": -1}, "copy_piece_bytes"),
        ({"copy_by_kernel": "yes"}, "copy_by_kernel"),
    ],
)
def test_bad_pipeline_options(host_ctx: sp.Context, kwargs, match: str) -> None:
    args = {"in_dtype": np.float32, **kwargs}
    with pytest.raises(sp.InvalidArgument, match=match):
        host_ctx.pipeline(sp.sinmix(1), **args)


def test_chunk_too_large_for_memory(host_ctx: sp.Context) -> None:
    with pytest.raises((sp.OutOfMemory, sp.InvalidArgument)) as info:
        host_ctx.pipeline(sp.sinmix(1), np.float32, chunk_records=2**62)
    assert str(info.value)  # the library's message


def test_bad_stages(host_ctx: sp.Context) -> None:
    with pytest.raises(sp.InvalidArgument, match="stages\\[1\\] is a str"):
        host_ctx.pipeline([sp.sinmix(1), "sinmix"], np.float32)
    with pytest.raises(sp.InvalidArgument, match="more than"):
        host_ctx.pipeline([sp.sinmix(1)] * 17, np.float32)
    with pytest.raises(sp.InvalidArgument, match="reads float32 records of shape \\(\\).*int32"):
        host_ctx.pipeline([sp.sinmix(1)], np.int32)
    with pytest.raises(sp.InvalidArgument, match="reads float32.*shape \\(3,\\)"):
        host_ctx.pipeline([sp.sinmix(1)], np.float32, (3,))
    with pytest.raises(sp.InvalidArgument, match="neither a host nor a cuda"):
        sp.Stage("nothing", np.float32)
    with pytest.raises(sp.InvalidArgument, match="callable"):
        sp.Stage("x", np.float32, host=3)
    with pytest.raises(sp.InvalidArgument, match="name"):
        sp.Stage("", np.float32, host=print)
    with pytest.raises(sp.InvalidArgument, match="streams is 9"):
        sp.Stage("x", np.float32, host=print, streams=9)
    with pytest.raises(sp.InvalidArgument, match="holds no bytes"):
        sp.Stage("x", np.float32, (4, 0), host=print)


SIZE_MAX = 2**64 - 1
TOO_MANY = r"out of range \(0\.\.\d+\)"  # a dimension beyond what an array can hold
TOO_BIG = "than an array can hold"


@pytest.mark.parametrize(
    "shape, match",
    [
        ((2**62, 8), TOO_BIG),  # each dimension fits, the record's bytes overflow size_t
        ((2**61, 2**61), TOO_BIG),
        ((2**32,) * 3, TOO_BIG),
        ((2**64,), TOO_MANY),  # beyond size_t itself
        ((SIZE_MAX,), TOO_MANY),
        ((2**63,), TOO_MANY),
        ((3, 2**70), r"\[1\] is " + str(2**70)),
        ((-1,), r"\[0\] is -1"),
        ((4, -2), r"\[1\] is -2"),
        (-3, "is -3"),
    ],
)
def test_record_sizes_beyond_size_t(host_ctx: sp.Context, shape, match: str) -> None:
    """Every size the binding converts is checked first: records larger than size_t (or than
    an array) and negative dimensions raise InvalidArgument, never TypeError or
    RuntimeError(std::bad_cast) from the conversion."""
    with pytest.raises(sp.InvalidArgument, match=match):
        host_ctx.pipeline([], np.float32, in_shape=shape)
    with pytest.raises(sp.InvalidArgument, match=match):
        sp.Stage("wide", np.float32, shape, host=print)
    with pytest.raises(sp.InvalidArgument, match=match):
        host_ctx.pinned_empty(shape, np.float32)


def test_huge_counts_raise_invalid_argument(host_ctx: sp.Context) -> None:
    for kwargs in ({"chunk_records": SIZE_MAX}, {"chunk_records": 2**63},
                   {"chunk_records": 2**50, "in_shape": (2**20,)}, {"chunk_records": 2**64},
                   {"copy_piece_bytes": 2**64}, {"staging_threads": 2**32},
                   {"priority": 2**31}, {"depth": 2**64}):
        args = {"in_dtype": np.float32, **kwargs}
        with pytest.raises(sp.InvalidArgument):
            host_ctx.pipeline([], **args)
    with pytest.raises(sp.InvalidArgument, match="scratch_bytes"):
        host_ctx.pipeline(sp.Stage("x", np.float32, host=print, scratch_bytes=SIZE_MAX),
                          np.float32)
    with pytest.raises(sp.InvalidArgument, match="scratch_bytes"):
        sp.Stage("x", np.float32, host=print, scratch_bytes=2**64)
    with pytest.raises(sp.InvalidArgument, match="pinned_empty"):
        host_ctx.pinned_empty((2**40, 2**40), np.uint8)
    # Zero bytes, but a dimension numpy cannot hold: refused as well, not numpy's ValueError.
    with pytest.raises(sp.InvalidArgument, match=TOO_MANY):
        host_ctx.pinned_empty((0, 2**64), np.float32)
    p = host_ctx.pipeline([], np.float32)
    with pytest.raises(sp.InvalidArgument, match="n_records"):
        p.chunk_records(2**64)
    with pytest.raises(sp.InvalidArgument, match="n_records"):
        p.run_io(lambda dst, first, n: 0, lambda src, first: None, n_records=SIZE_MAX)
    with pytest.raises(sp.InvalidArgument, match="max_in_flight"):
        p.stream(max_in_flight=2**32)
    with pytest.raises(sp.InvalidArgument, match="iters"):
        sp.sinmix(2**32)


def test_bad_scratch_bytes() -> None:
    assert sp.Stage("x", np.float32, host=print, scratch_bytes=1 << 20).scratch_bytes == 1 << 20
    assert sp.Stage("x", np.float32, host=print).scratch_bytes == 0
    with pytest.raises(sp.InvalidArgument, match="scratch_bytes"):
        sp.Stage("x", np.float32, host=print, scratch_bytes=-1)
    with pytest.raises(sp.InvalidArgument, match="scratch_bytes"):
        sp.Stage("x", np.float32, host=print, scratch_bytes=1.5)  # type: ignore[arg-type]


def test_missing_backend_function(host_ctx: sp.Context) -> None:
    cuda_only = sp.Stage("gpu-only", np.float32, cuda=lambda chunk: None)
    with pytest.raises(sp.Unsupported, match="gpu-only.*no host function") as info:
        host_ctx.pipeline(cuda_only, np.float32)
    assert info.value.status == -4


def test_unknown_backend() -> None:
    for name in ("gpu", "CUDA", "", None, 1):
        with pytest.raises(sp.InvalidArgument, match="unknown backend"):
            sp.Context(name)  # type: ignore[arg-type]
    with pytest.raises(sp.InvalidArgument, match="device is -1"):
        sp.Context("host", -1)


def test_cuda_absent_says_why() -> None:
    if sp.built_with_cuda():
        pytest.skip("the library has CUDA (whether a GPU is present is not this test's)")
    with pytest.raises(sp.Unsupported, match="no CUDA support") as info:
        sp.Context("cuda")
    assert info.value.status_name == "SP_ERR_UNSUPPORTED"
    assert sp.Context("auto").backend == "host"


def test_bad_pinned_requests(host_ctx: sp.Context) -> None:
    with pytest.raises(sp.InvalidArgument, match="not supported"):
        host_ctx.pinned_empty(10, object)
    with pytest.raises(sp.InvalidArgument, match="shape"):
        host_ctx.pinned_empty((-3,), np.float32)
    with pytest.raises(sp.InvalidArgument, match="more bytes"):
        host_ctx.pinned_empty((2**40, 2**40), np.float32)
    with pytest.raises(sp.OutOfMemory):
        host_ctx.pinned_empty(2**62, np.uint8)


def test_error_classes() -> None:
    from streampipe.errors import _from_status

    names = {
        -1: sp.InvalidArgument, -2: sp.OutOfMemory, -3: sp.OutOfDeviceMemory,
        -4: sp.Unsupported, -5: sp.StageError, -6: sp.BackendError, -7: sp.DeviceLost,
        -8: sp.Cancelled,
    }
    for status, cls in names.items():
        err = _from_status(status, "why")
        assert type(err) is cls and isinstance(err, sp.Error)
        assert err.status == status and str(err) == "why"
        assert err.status_name.startswith("SP_ERR_")
    assert type(_from_status(-99, "")) is sp.Error
    assert str(_from_status(-99, "")) == "unknown status"
