"""Context.group: one run over several devices (on HOST several host backends; on CUDA the
one GPU listed several times), checked element by element, with each member's figures."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import streampipe as sp
from helpers import assert_sinmix, poisoned


def members(ctx: sp.Context, n: int) -> list[int]:
    """n members: host backends on HOST, that many pipelines on the context's GPU on CUDA."""
    return [ctx.device] * n


@pytest.mark.parametrize("n_members", [1, 2, 3])
def test_group_runs_every_record(ctx: sp.Context, rng: np.random.Generator,
                                 n_members: int) -> None:
    g = ctx.group(members(ctx, n_members))
    p = g.pipeline([sp.sinmix(5)], np.float32, chunk_records=257, depth=3)
    for n in (0, 1, 256, 257, 10007, 100003):
        x = rng.uniform(-10, 10, n).astype(np.float32)
        out, report = p.run(x, out=poisoned((n,), np.float32), report=True)
        assert_sinmix(out, x, 5)
        assert report.records == n
        per = p.device_reports()
        assert len(per) == n_members
        assert sum(m["records"] for m in per) == n
        assert sum(m["units"] for m in per) == report.batches
        assert all(m["report"].records == m["records"] for m in per)


def test_python_stages_from_several_members_at_once(host_ctx: sp.Context) -> None:
    """A Python stage of a group is called from several members' threads; each call is a
    chunk of one member, and every record goes through it exactly once."""
    calls: list[int] = []
    lock = threading.Lock()

    def square(inp: np.ndarray, out: np.ndarray) -> None:
        out[:] = inp.astype(np.int64) ** 2
        with lock:
            calls.append(len(inp))

    stage = sp.Stage("square", np.int64, host=square)
    p = host_ctx.group(3).pipeline([stage], np.int32, chunk_records=100)
    n = 54321
    x = np.arange(n, dtype=np.int32)
    out = p.run(x, out=poisoned((n,), np.int64))
    np.testing.assert_array_equal(out, np.arange(n, dtype=np.int64) ** 2)
    assert sum(calls) == n


def test_positional_source_through_a_group(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    n = 30011
    x = rng.uniform(-3, 3, n).astype(np.float32)
    got = poisoned((n,), np.float32)

    def read(dst: np.ndarray, first: int, count: int) -> int:
        dst[:] = x[first:first + count]
        return count

    def write(src: np.ndarray, first: int) -> None:
        got[first:first + len(src)] = src

    p = host_ctx.group(2).pipeline([sp.sinmix(3)], np.float32, chunk_records=1000)
    assert p.run_io(read, write, n_records=n, positional=True) == n
    assert_sinmix(got, x, 3)


def test_a_failing_stage_fails_the_group_run_and_it_runs_again(host_ctx: sp.Context) -> None:
    fail_at = {"record": 5000}

    def maybe_fail(inp: np.ndarray, out: np.ndarray) -> None:
        if (inp == fail_at["record"]).any():
            raise ValueError("record 5000 is cursed")
        out[:] = inp

    stage = sp.Stage("cursed", np.float32, host=maybe_fail)
    p = host_ctx.group(2).pipeline([stage], np.float32, chunk_records=128)
    x = np.arange(20000, dtype=np.float32)
    with pytest.raises(sp.StageError, match="device"):
        p.run(x)
    fail_at["record"] = -1
    np.testing.assert_array_equal(p.run(x), x)


def test_what_a_group_does_not_do(host_ctx: sp.Context) -> None:
    p = host_ctx.group(2).pipeline([sp.sinmix(1)], np.float32)
    x = np.ones(10, np.float32)
    with pytest.raises(sp.Unsupported):
        p.run_serial(x)
    with pytest.raises(sp.Unsupported):
        p.stream()
    _, report = p.run(x, report=True)
    with pytest.raises(sp.InvalidArgument, match="no timeline"):
        report.save_trace("/dev/null")
    with pytest.raises(sp.InvalidArgument):
        host_ctx.pipeline([sp.sinmix(1)], np.float32).device_reports()


@pytest.mark.parametrize("devices", [0, 65, [], [-2], "0,1", True, [0.5]])
def test_bad_device_lists(host_ctx: sp.Context, devices: object) -> None:
    with pytest.raises(sp.InvalidArgument):
        host_ctx.group(devices)  # type: ignore[arg-type]


def test_an_mlp_stage_set_is_not_shared_by_a_group(ctx: sp.Context) -> None:
    """The MLP's stages keep per-call state for one pipeline at a time; two members running
    at once would share it."""
    from helpers import models_dir

    model = models_dir() / "digits_mlp.safetensors"
    if not model.exists():
        pytest.skip(f"no model at {model}")
    try:
        stages = ctx.mlp_stages(model)
    except sp.Unsupported as exc:
        pytest.skip(f"no MLP here: {exc}")
    with pytest.raises(sp.Unsupported, match="one pipeline at a time"):
        ctx.group(members(ctx, 2)).pipeline(stages, np.uint8, (64,))
    p = ctx.group(members(ctx, 1)).pipeline(stages, np.uint8, (64,))  # one member: fine
    assert p.run(np.zeros((10, 64), np.uint8)).shape == (10,)
