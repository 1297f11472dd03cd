#!/usr/bin/env python3
"""The PyTorch baseline for `streampipe infer`: the same digits MLP, the same weights, the
same stream, run the way a careful PyTorch user would.

  * the whole stream sits in pinned host memory (and the labels come back into pinned memory);
  * chunks of the stream are copied in on a side stream (non_blocking) into a ring of device
    buffers, while the model runs on a compute stream; the labels go back with non_blocking
    copies on the compute stream (4 bytes per sample: tiny next to the 64 coming in);
  * events order the two streams (a buffer is refilled only after the model has read it);
  * timed with CUDA events around the whole stream, median of --repeat runs after a warm-up,
    at fp32 (allow_tf32 off) and at tf32 (allow_tf32 on), the same precisions as ours.

Prints one JSON object: samples/s per precision, accuracy against the labels, and agreement
with streampipe's predicted labels when --ours-fp32/--ours-tf32 name the files written by
`streampipe infer --save-predictions` (one byte per record, same stream order).

    python3 bench/torch_mlp_baseline.py --replicate 27778 --ours-fp32 fp32.u8 --ours-tf32 tf32.u8
"""
import argparse
import json
import os
import statistics
import struct
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
PIXEL_SCALE = 16.0  # the model's input is pixel / 16, as in training and in streampipe
RING = 3  # device input buffers: the copy stream may run this many chunks ahead


def read_safetensors(path):
    """Our own reader (the `safetensors` package may be absent): u64 header length, JSON
    header, raw little-endian data."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = bytearray(raw[8 + length:])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", f"{name}: dtype {info['dtype']}"
        begin, end = info["data_offsets"]
        t = torch.frombuffer(data, dtype=torch.float32, offset=begin, count=(end - begin) // 4)
        tensors[name] = t.reshape(info["shape"]).clone()
    return tensors


class DigitsMLP:
    def __init__(self, tensors, device):
        self.layers = [(tensors[f"fc{i}.weight"].to(device), tensors[f"fc{i}.bias"].to(device))
                       for i in (1, 2, 3)]

    def labels(self, pixels_u8):
        x = pixels_u8.to(torch.float32).mul_(1.0 / PIXEL_SCALE)
        (w1, b1), (w2, b2), (w3, b3) = self.layers
        h = F.relu(F.linear(x, w1, b1))
        h = F.relu(F.linear(h, w2, b2))
        return F.linear(h, w3, b3).argmax(dim=1).to(torch.int32)


def stream_once(model, pixels, out, chunk, device):
    """One pass over the stream; returns the elapsed seconds between two CUDA events."""
    copy_stream = torch.cuda.Stream(device)
    compute_stream = torch.cuda.Stream(device)
    ring = [torch.empty((chunk, 64), dtype=torch.uint8, device=device) for _ in range(RING)]
    copied = [torch.cuda.Event() for _ in range(RING)]
    consumed = [torch.cuda.Event() for _ in range(RING)]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    main = torch.cuda.current_stream(device)
    start.record(main)
    copy_stream.wait_stream(main)
    compute_stream.wait_stream(main)
    for i, first in enumerate(range(0, pixels.shape[0], chunk)):
        n = min(chunk, pixels.shape[0] - first)
        slot = i % RING
        with torch.cuda.stream(copy_stream):
            if i >= RING:
                copy_stream.wait_event(consumed[slot])  # the model has read this buffer
            ring[slot][:n].copy_(pixels[first:first + n], non_blocking=True)
            copied[slot].record(copy_stream)
        with torch.cuda.stream(compute_stream):
            compute_stream.wait_event(copied[slot])
            labels = model.labels(ring[slot][:n])
            consumed[slot].record(compute_stream)
            out[first:first + n].copy_(labels, non_blocking=True)
    main.wait_stream(copy_stream)
    main.wait_stream(compute_stream)
    end.record(main)
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def agreement(ours_path, predictions):
    if not ours_path or not os.path.exists(ours_path):
        return None
    with open(ours_path, "rb") as f:
        ours = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
    if ours.numel() != predictions.numel():
        return f"length differs: {ours.numel()} vs {predictions.numel()}"
    return float((ours.to(torch.int32) == predictions).to(torch.float64).mean())


def run_precision(precision, model, pixels, labels, args, device, ours_path):
    set_precision(precision)
    out = torch.empty(pixels.shape[0], dtype=torch.int32, pin_memory=True)
    stream_once(model, pixels, out, args.chunk, device)  # warm-up: cuBLAS handles, allocator
    seconds = []
    for _ in range(args.repeat):
        out.fill_(-1)  # poisoned: a run that writes nothing cannot pass
        seconds.append(stream_once(model, pixels, out, args.chunk, device))
    median = statistics.median(seconds)
    return {
        "seconds": seconds,
        "median_s": median,
        "samples_per_s": pixels.shape[0] / median,
        "accuracy": float((out == labels).to(torch.float64).mean()),
        "unwritten": int((out < 0).sum()),
        "agreement_with_streampipe": agreement(ours_path, out),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.path.join(MODELS, "digits_mlp.safetensors"))
    p.add_argument("--input", default=os.path.join(MODELS, "digits_test_images.u8"))
    p.add_argument("--labels", default=os.path.join(MODELS, "digits_test_labels.u8"))
    p.add_argument("--replicate", type=int, default=27778)  # 360 x 27778 = 10,000,080
    p.add_argument("--chunk", type=int, default=256 * 1024)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--precisions", default="fp32,tf32")
    p.add_argument("--ours-fp32", default=None)
    p.add_argument("--ours-tf32", default=None)
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_mlp_baseline: no CUDA device")
    device = torch.device("cuda", 0)

    model = DigitsMLP(read_safetensors(args.model), device)
    with open(args.input, "rb") as f:
        images = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).reshape(-1, 64)
    with open(args.labels, "rb") as f:
        base_labels = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).to(torch.int32)
    pixels = images.repeat(args.replicate, 1).pin_memory()
    labels = base_labels.repeat(args.replicate)

    result = {"tool": "torch_mlp_baseline", "torch": torch.__version__,
              "cuda": torch.version.cuda, "device_name": torch.cuda.get_device_name(device),
              "records": pixels.shape[0], "chunk": args.chunk, "repeat": args.repeat,
              "ring": RING}
    ours = {"fp32": args.ours_fp32, "tf32": args.ours_tf32}
    for precision in args.precisions.split(","):
        result[precision] = run_precision(precision, model, pixels, labels, args, device,
                                          ours.get(precision))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
