"""bench/python_bench.py (run on the GPU machine) kept from rotting: a small HOST run of its
front-end and MLP parts, whose every output is checked, must pass and print its table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import models_dir

BENCH = Path(__file__).resolve().parents[2] / "bench" / "python_bench.py"


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
