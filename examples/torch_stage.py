"""torch_stage.py: a PyTorch function as a pipeline stage over a large CPU tensor.

On the GPU machine (a CUDA build of streampipe, a GPU, torch with CUDA) the function runs on
the GPU: each chunk is copied in while the previous one computes and the one before is
copied back, and the stage enqueues its torch work on the chunk's own stream. On a machine
without a GPU the same function runs on the HOST backend, on torch's CPU kernels. Without
torch, or with --backend cuda and no GPU, it says so and exits 77 (skipped).

    python examples/torch_stage.py [--records N] [--backend auto|host|cuda]
"""

import argparse
import sys
import warnings

import numpy as np

import streampipe as sp

WIDTH = 64  # floats per record


def transform(x):
    """Any torch function of a batch of records, shape (records, WIDTH) -> same shape."""
    import torch

    return torch.nn.functional.gelu(x) * 0.5 + torch.sin(x)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1 << 20, help="records of 64 floats")
    parser.add_argument("--backend", default="auto", choices=["auto", "host", "cuda"])
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_stage: skipped, torch is not installed (pip install torch)", file=sys.stderr)
        return 77

    try:
        ctx = sp.Context(args.backend)
    except sp.Unsupported as exc:  # --backend cuda without a CUDA build or a GPU
        print(f"torch_stage: skipped, no {args.backend} backend here: {exc}", file=sys.stderr)
        return 77
    if ctx.backend == "cuda" and not torch.cuda.is_available():
        print("torch_stage: skipped, this torch has no CUDA", file=sys.stderr)
        return 77

    def on_cuda(chunk: sp.Chunk) -> None:
        # The chunk's data is ready on chunk.stream: enqueue there, never synchronize.
        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            x = torch.from_dlpack(chunk.input)
            torch.from_dlpack(chunk.output).copy_(transform(x))

    def on_host(inp: np.ndarray, out: np.ndarray) -> None:
        torch.from_numpy(out).copy_(transform(torch.from_numpy(inp)))

    # torch warns that a read-only numpy view is not writable; the stage only reads inp.
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")

    stage = sp.Stage("torch", np.float32, (WIDTH,), host=on_host, cuda=on_cuda)
    pipeline = ctx.pipeline(stage, np.float32, (WIDTH,))
    x = torch.randn(args.records, WIDTH, generator=torch.Generator().manual_seed(0))
    out = torch.empty_like(x)
    _, report = pipeline.run(x, out=out, report=True)  # CPU tensors in and out, no copies

    want = transform(x)  # the same function on the CPU, checked element by element
    if not torch.allclose(out, want, rtol=1e-4, atol=1e-5):
        worst = (out - want).abs().max().item()
        print(f"torch_stage: wrong output (largest error {worst})", file=sys.stderr)
        return 1
    mib = x.numel() * 4 / 2**20
    print(
        f"{args.records} records ({mib:.0f} MiB) through torch on {ctx.backend} in "
        f"{report.makespan_s * 1e3:.1f} ms, {report.chunks} chunks: efficiency "
        f"{report.efficiency:.0%}, transfer hidden {report.hidden_transfer:.0%}, bottleneck "
        f"{report.bottleneck}; every output checked"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
