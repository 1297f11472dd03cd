#!/usr/bin/python3
"""Train the digits MLP (64-256-256-10, ReLU) and write the files the C side reads.

Writes, next to this script:
  digits_mlp.safetensors    fc1.weight [256,64], fc1.bias [256], fc2.weight [256,256],
                            fc2.bias [256], fc3.weight [10,256], fc3.bias [10]; all F32,
                            weights [out, in] row-major (y = W x + b, as torch.nn.Linear)
  digits_test_images.u8     the held-out images: N x 64 bytes, row-major 8x8, grey levels 0..16
  digits_test_labels.u8     their labels: N bytes, one uint8 0..9 per image, same order

The model's input is pixel / 16 (so 0..1); the C preprocess stage divides by 16 the same way.

Data: the handwritten digits that scikit-learn ships (1797 images, 8x8, 17 grey levels). The
split is stratified, 20% held out, with a fixed seed; training is scikit-learn's MLPClassifier
(Adam) with a fixed seed. Run with Debian's python (apt-get install python3-sklearn):
    /usr/bin/python3 models/train_digits.py
Rerunning on the same library versions reproduces the files byte for byte; other numpy/BLAS
builds may change the last bits of the weights (never the file layout).

The script checks its own output: it reads the safetensors back with a separate reader, runs
the network in float64 numpy on the test images and prints the accuracy.
"""
import json
import os
import struct
import sys

import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

SEED = 20240611
HIDDEN = (256, 256)
PIXEL_SCALE = 16.0  # the C preprocess stage uses the same divisor
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_PATH = os.path.join(HERE, "digits_mlp.safetensors")
IMAGES_PATH = os.path.join(HERE, "digits_test_images.u8")
LABELS_PATH = os.path.join(HERE, "digits_test_labels.u8")
MIN_ACCURACY = 0.95


def load_split():
    digits = load_digits()
    pixels = digits.data.astype(np.uint8)  # exact: the grey levels are the integers 0..16
    assert pixels.shape[1] == 64 and pixels.max() <= 16
    return train_test_split(pixels, digits.target.astype(np.uint8), test_size=0.2,
                            random_state=SEED, stratify=digits.target)


def train(train_pixels, train_labels):
    model = MLPClassifier(hidden_layer_sizes=HIDDEN, activation="relu", solver="adam",
                          alpha=1e-4, batch_size=64, learning_rate_init=1e-3, max_iter=200,
                          random_state=SEED, tol=1e-6, n_iter_no_change=20)
    # A fixed epoch budget, not convergence, ends training (the training loss is near 0 by
    # then), so sklearn's "not converged" warning says nothing useful here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(train_pixels.astype(np.float64) / PIXEL_SCALE, train_labels)
    return model


def tensors_of(model):
    """sklearn keeps coefs_ as [in, out]; the file stores [out, in] like torch.nn.Linear."""
    tensors = {}
    for i, (coef, bias) in enumerate(zip(model.coefs_, model.intercepts_), start=1):
        tensors[f"fc{i}.weight"] = np.ascontiguousarray(coef.T, dtype="<f4")
        tensors[f"fc{i}.bias"] = np.ascontiguousarray(bias, dtype="<f4")
    return tensors


def write_safetensors(path, tensors):
    """The format: u64 little-endian header length, a JSON header, then the raw data. The
    header is padded with spaces to a multiple of 8 so the data starts aligned."""
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        data = array.tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", "source": "models/train_digits.py",
                              "input": "pixel/16, 8x8 row-major", "seed": str(SEED)}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def read_safetensors(path):
    """An independent reader, used only to check what was written."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        assert info["dtype"] == "F32"
        out[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"])
    return out


def logits_float64(tensors, pixels):
    h = pixels.astype(np.float64) / PIXEL_SCALE
    for i in (1, 2, 3):
        h = h @ tensors[f"fc{i}.weight"].astype(np.float64).T + tensors[f"fc{i}.bias"]
        if i < 3:
            h = np.maximum(h, 0.0)
    return h


def main():
    train_pixels, test_pixels, train_labels, test_labels = load_split()
    model = train(train_pixels, train_labels)
    write_safetensors(MODEL_PATH, tensors_of(model))
    test_pixels.tofile(IMAGES_PATH)
    test_labels.tofile(LABELS_PATH)

    logits = logits_float64(read_safetensors(MODEL_PATH), test_pixels)
    predicted = logits.argmax(axis=1)
    accuracy = float((predicted == test_labels).mean())
    sklearn_accuracy = float(model.score(test_pixels / PIXEL_SCALE, test_labels))
    top2 = np.sort(logits, axis=1)[:, -2:]
    closest = float(((top2[:, 1] - top2[:, 0]) / np.maximum(1.0, np.abs(logits).max(axis=1))).min())
    print(json.dumps({"train": len(train_labels), "test": len(test_labels),
                      "epochs": model.n_iter_, "accuracy_float64": accuracy,
                      "accuracy_sklearn": sklearn_accuracy,
                      "smallest_relative_top2_gap": closest}))
    if accuracy < MIN_ACCURACY:
        sys.exit(f"accuracy {accuracy:.4f} is below {MIN_ACCURACY}")


if __name__ == "__main__":
    main()
