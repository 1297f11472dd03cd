"""numpy_stage.py: the smallest streampipe program in Python.

A million floats go through the built-in sinmix stage and a stage of our own written with
numpy; every result is checked against numpy, and the run's report says how much overlapped.
It runs on the HOST backend (CPU threads) because its own stage is a host function; see
torch_stage.py for a stage that runs on the GPU.

    pip install .            # from the repository root
    python examples/numpy_stage.py
"""

import sys

import numpy as np

import streampipe as sp

RECORDS = 1 << 20  # one float32 per record
CHUNK = 1 << 16  # 16 chunks, so there is something to overlap
ITERS = 20


def affine(inp: np.ndarray, out: np.ndarray) -> None:
    """Our stage: called once per chunk on the stage's worker thread, with numpy views."""
    np.multiply(inp, 0.5, out=out)
    out += 1.0


def main() -> int:
    ctx = sp.Context("host")
    pipeline = ctx.pipeline(
        [sp.sinmix(ITERS), sp.Stage("affine", np.float32, host=affine)],
        in_dtype=np.float32,
        chunk_records=CHUNK,
    )
    x = np.random.default_rng(1).uniform(-10, 10, RECORDS).astype(np.float32)
    y, report = pipeline.run(x, report=True)

    v = (x * np.float32(0.5)) + ((x * x) * np.float32(0.1))  # sinmix, rounded as the kernel
    for _ in range(ITERS):
        v = v + np.sin(v * np.float32(0.01))
    want = v * np.float32(0.5) + np.float32(1.0)
    if not np.allclose(y, want, rtol=1e-5 * (1 + ITERS), atol=1e-5 * (1 + ITERS)):
        print("numpy_stage: wrong output", file=sys.stderr)
        return 1
    print(
        f"{RECORDS} records on {ctx.backend} in {report.makespan_s * 1e3:.1f} ms: efficiency "
        f"{report.efficiency:.0%}, transfer hidden {report.hidden_transfer:.0%}, bottleneck "
        f"{report.bottleneck}; every output checked"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
