"""The Python examples' own behaviour where ctest's example_* entries cannot see it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_torch_stage_skips_cuda_without_a_gpu(tmp_path: Path) -> None:
    """``--backend cuda`` where CUDA cannot open says why and exits 77, as a missing torch
    does, rather than a traceback. A stand-in torch gets the example past its torch check
    (without a GPU the context fails; with one, the stand-in has no CUDA)."""
    script = EXAMPLES / "torch_stage.py"
    if not script.exists():
        pytest.skip(f"{EXAMPLES} is not here (an installed package's tests)")
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n"
    )
    path = os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])
    result = subprocess.run([sys.executable, str(script), "--backend", "cuda"],
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=path))
    assert result.returncode == 77, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("torch_stage: skipped"), result.stderr
