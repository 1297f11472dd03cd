"""Checks and conversions of dtypes, shapes and sizes shared by the package's modules."""

from __future__ import annotations

import operator
from typing import Any, Iterable, Union

import numpy as np

from . import _streampipe as _c
from .errors import InvalidArgument

ShapeLike = Union[int, Iterable[int]]

# DLPack type codes (dlpack.h): what the binding needs to describe an array it makes.
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}

# The most elements along a dimension, and bytes in all, of any array: numpy's limit (intp),
# which is within the size_t the binding converts sizes to.
MAX_ARRAY = min(int(np.iinfo(np.intp).max), _c.SIZE_MAX)


def as_dtype(dtype: Any, what: str) -> np.dtype:
    """A numeric numpy dtype in native byte order, or InvalidArgument naming `what`."""
    try:
        dt: np.dtype = np.dtype(dtype)
    except TypeError as exc:
        raise InvalidArgument(f"{what}: {dtype!r} is not a dtype") from exc
    if dt.kind not in _DLPACK_CODES or dt.fields is not None or dt.subdtype is not None:
        raise InvalidArgument(
            f"{what}: {dt} is not supported (bool, integer, float or complex only)"
        )
    if not dt.isnative:
        raise InvalidArgument(f"{what}: {dt} is not in the machine's byte order")
    return dt


def dlpack_code(dt: np.dtype) -> tuple[int, int]:
    """(DLPack type code, bits) of a dtype that as_dtype accepted."""
    return _DLPACK_CODES[dt.kind], dt.itemsize * 8


def as_count(value: Any, what: str, low: int = 0, high: int | None = None) -> int:
    """An int in [low, high], or InvalidArgument naming `what`."""
    if isinstance(value, bool):
        raise InvalidArgument(f"{what} must be an integer, not bool")
    try:
        n = operator.index(value)
    except TypeError as exc:
        raise InvalidArgument(
            f"{what} must be an integer, not {type(value).__name__}"
        ) from exc
    if n < low or (high is not None and n > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise InvalidArgument(f"{what} is {n}, out of range ({bound})")
    return n


def as_shape(shape: ShapeLike, what: str) -> tuple[int, ...]:
    """A shape: an int or a sequence of ints in 0..MAX_ARRAY."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (as_count(shape, what, 0, MAX_ARRAY),)
    try:
        items = tuple(shape)  # type: ignore[arg-type]  # a bool: TypeError, handled below
    except TypeError as exc:
        raise InvalidArgument(
            f"{what} must be an int or a tuple of ints, not {type(shape).__name__}"
        ) from exc
    return tuple(as_count(n, f"{what}[{i}]", 0, MAX_ARRAY) for i, n in enumerate(items))


def array_bytes(dt: np.dtype, shape: tuple[int, ...], what: str, noun: str = "an array") -> int:
    """Bytes of `noun` of `shape` (from as_shape), or InvalidArgument when that is more than an
    array can hold (MAX_ARRAY, which size_t holds)."""
    n = dt.itemsize
    for d in shape:
        n *= d
    if n > MAX_ARRAY:
        raise InvalidArgument(
            f"{what}: {noun} of shape {shape} of {dt} is more bytes ({n}) than an array can "
            f"hold ({MAX_ARRAY})"
        )
    return n


def record_bytes(dt: np.dtype, shape: tuple[int, ...], what: str) -> int:
    """Bytes of one record of `shape` (from as_shape); records must not be empty, nor larger
    than an array can hold."""
    n = array_bytes(dt, shape, what, "a record")
    if n == 0:
        raise InvalidArgument(f"{what}: a record of shape {shape} holds no bytes")
    return n


def describe(dt: np.dtype, shape: tuple[int, ...]) -> str:
    """How a record type reads in messages: "float32 records of shape (3,)"."""
    return f"{dt} records of shape {shape}"
