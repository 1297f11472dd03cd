"""bench/python_bench.py and bench/torch_loader_bench.py (run on the GPU machine) kept from
rotting: a small HOST run of each, whose every output is checked, must pass and print its
table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import import_or_skip, models_dir

BENCH = Path(__file__).resolve().parents[2] / "bench" / "python_bench.py"
LOADER_BENCH = BENCH.with_name("torch_loader_bench.py")


def test_python_bench_smoke(tmp_path: Path) -> None:
    if not BENCH.exists():
        pytest.skip(f"no {BENCH}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(BENCH), "--backend", "host", "--quick", "--workloads", "transfer",
         "--sections", "frontend,torch,mlp"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    sections = {r["section"] for r in rows}
    assert {"setup", "reference", "frontend", "torch"} <= sections, sections
    assert all(not r.get("bad_elements") for r in rows)
    assert sum(r["section"] == "frontend" for r in rows) == 2  # pinned and pageable
    if (models_dir() / "digits_mlp.safetensors").exists():
        assert any(r.get("row", "").startswith("streampipe MLP fp32") for r in rows)
    assert "median s" in done.stdout  # the table, last


def test_torch_loader_bench_smoke(tmp_path: Path) -> None:
    """--tiny: every feed on CPU torch and the HOST backend, each batch's checksum and the
    loss curves compared, the ratios printed."""
    if not LOADER_BENCH.exists():
        pytest.skip(f"no {LOADER_BENCH}")
    import_or_skip("torch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(LOADER_BENCH), "--tiny",
                           "--data", str(tmp_path / "images.u8")],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    feeds = {r["feed"]: r for r in rows if "feed" in r}
    # every feed the bench knows (its FEEDS), each run: the Loader with a torch-ops stage and
    # with the built-in normalize_u8, the two ways users write it, and the resident floor
    assert set(feeds) == {"streampipe", "streampipe-builtin", "dataloader", "prefetcher",
                          "resident"}
    assert all(r["checksums_ok"] and len(r["samples_per_s"]) == 2 for r in feeds.values())
    assert len({r["loss_last"] for r in feeds.values()}) == 1  # one curve, fed five ways
    assert {r["ratio"] for r in rows if "ratio" in r} == {
        f"{ours}/{base}" for ours in ("streampipe", "streampipe-builtin")
        for base in ("dataloader", "prefetcher")}
    assert (tmp_path / "images.u8").stat().st_size == 600 * 48  # the file source was used


def test_loader_gil_probe_smoke() -> None:
    """bench/loader_gil_probe.py, small: each feed's row with the threads' CPU per batch; the
    Loader's (array source) shows no Python thread of its own."""
    probe = BENCH.with_name("loader_gil_probe.py")
    if not probe.exists():
        pytest.skip(f"no {probe}")
    import_or_skip("torch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(probe), "--samples", "8192", "--repeat", "2",
                           "--step-ms", "0.2"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    rows = {r["feed"]: r for r in (json.loads(line) for line in done.stdout.splitlines()
                                   if line.startswith("{"))}
    assert set(rows) == {"resident", "prefetcher", "streampipe-builtin"}
    assert all(r["batches"] == 8 and r["ms_per_batch"] > 0 for r in rows.values())
    assert rows["streampipe-builtin"]["cpu_ms_per_batch"].get("MainThread", 0) > 0
    assert not {"streampipe-loader", "streampipe-events"} & set(
        rows["streampipe-builtin"]["cpu_ms_per_batch"])
