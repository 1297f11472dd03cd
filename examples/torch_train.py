"""torch_train.py: a small training loop fed by streampipe.torch.Loader.

Synthetic 8x8 uint8 "images" of four classes (each class a different bright quadrant, plus
noise) go through a pipeline stage that normalizes them to float32 in [-1, 1]; the Loader
yields the normalized batches as tensors ready on torch's current stream (CUDA tensors on a
GPU machine with a CUDA build of streampipe, CPU tensors on the HOST backend), and a tiny MLP
learns to tell the classes apart. It checks that the loss fell and that the model classifies
a held-out set well, and exits 1 otherwise; without torch it says so and exits 77 (skipped).

    python examples/torch_train.py [--epochs N] [--samples N] [--batch-size N]
                                   [--backend auto|host|cuda]
"""

import argparse
import sys

import numpy as np

import streampipe as sp

SIDE = 8
PIXELS = SIDE * SIDE
CLASSES = 4


def make_images(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n images (uint8, n x 64) and their labels (int64): class k lights up quadrant k."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    images = rng.integers(0, 96, (n, SIDE, SIDE)).astype(np.uint8)
    half = SIDE // 2
    for k in range(CLASSES):
        rows = slice(0, half) if k < 2 else slice(half, SIDE)
        cols = slice(0, half) if k % 2 == 0 else slice(half, SIDE)
        sel = labels == k
        images[sel, rows, cols] += np.uint8(128)
    return images.reshape(n, PIXELS), labels.astype(np.int64)


def normalize_stage() -> sp.Stage:
    """uint8 pixels -> float32 in [-1, 1], on the device (torch, the chunk's stream) or on
    the host (numpy)."""

    def on_host(inp: np.ndarray, out: np.ndarray) -> None:
        np.multiply(inp, np.float32(2.0 / 255.0), out=out)
        out -= np.float32(1.0)

    def on_cuda(chunk: sp.Chunk) -> None:
        import torch

        with torch.cuda.stream(torch.cuda.ExternalStream(chunk.stream.handle)):
            x = torch.from_dlpack(chunk.input)
            out = torch.from_dlpack(chunk.output)
            torch.mul(x.to(torch.float32), 2.0 / 255.0, out=out)
            out.sub_(1.0)

    return sp.Stage("normalize", np.float32, (PIXELS,), host=on_host, cuda=on_cuda)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--backend", default="auto", choices=["auto", "host", "cuda"])
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_train: skipped, torch is not installed (pip install torch)", file=sys.stderr)
        return 77
    from streampipe.torch import Loader

    if args.backend == "cuda" and not (sp.built_with_cuda() and torch.cuda.is_available()):
        print("torch_train: skipped, no CUDA here (streampipe or torch without it, or no GPU)",
              file=sys.stderr)
        return 77

    torch.manual_seed(0)
    images, labels = make_images(args.samples, seed=1)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    # The DataLoader shuffles and batches on the host; the pipeline normalizes on the device.
    batches = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                          pin_memory=False)
    loader = Loader(batches, normalize_stage(), backend=args.backend)
    device = loader.device

    model = torch.nn.Sequential(
        torch.nn.Linear(PIXELS, 64), torch.nn.ReLU(), torch.nn.Linear(64, CLASSES)
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    epoch_losses = []
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        total, seen = 0.0, 0
        for x, y in loader:  # x: normalized float32 on `device`, ready on the current stream
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            seen += len(y)
        epoch_losses.append(total / seen)
        print(f"epoch {epoch}: loss {epoch_losses[-1]:.4f} over {seen} samples "
              f"({len(loader)} batches on {device})")

    # Held out: the same stage through a plain run, the reference normalization beside it.
    test_images, test_labels = make_images(1024, seed=2)
    x_test = torch.from_dlpack(loader.pipeline.run(test_images, out="device"))
    want = torch.from_numpy(test_images.astype(np.float32) * np.float32(2.0 / 255.0) - 1.0)
    if not torch.allclose(x_test.cpu(), want, atol=1e-6):
        print("torch_train: the stage's normalization is wrong", file=sys.stderr)
        return 1
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1).cpu() == torch.from_numpy(test_labels)).float().mean()
    print(f"held-out accuracy {accuracy.item():.1%}")
    if not epoch_losses[-1] < epoch_losses[0] or accuracy.item() < 0.9:
        print(f"torch_train: did not learn (losses {epoch_losses}, accuracy {accuracy.item()})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
