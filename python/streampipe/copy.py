"""copy_nontemporal: the library's staging copy, for Python sources and sinks (run_io)."""

from __future__ import annotations

import numpy as np

from . import _streampipe as _c
from .errors import InvalidArgument


def copy_nontemporal(dst: np.ndarray, src: np.ndarray) -> None:
    """Copies ``src`` into ``dst`` as the library's own staging copies do, with non-temporal
    stores, the GIL released: for a source filling its pinned staging view from an array of
    its own, or a sink copying results out into a large array. ``dst[...] = src`` stores
    plainly, which first reads every line it writes, a third more host memory traffic; on
    the H200 host a C source ran at 1.03x a pageable array with memcpy and 1.42x with this
    (medians of seven processes, bench/PERF.md). Both must be C-contiguous host arrays of the
    same number of bytes (any dtypes: the bytes are copied as they are), ``dst`` writable, and
    they must not overlap.
    """
    for name, a in (("dst", dst), ("src", src)):
        if not isinstance(a, np.ndarray):
            raise InvalidArgument(f"copy_nontemporal: {name} must be a numpy array, "
                                  f"not {type(a).__name__}")
        if not a.flags.c_contiguous:
            raise InvalidArgument(f"copy_nontemporal: {name} must be C-contiguous")
    if not dst.flags.writeable:
        raise InvalidArgument("copy_nontemporal: dst is read-only")
    if dst.nbytes != src.nbytes:
        raise InvalidArgument(f"copy_nontemporal: dst holds {dst.nbytes} bytes and src "
                              f"{src.nbytes}")
    if dst.nbytes == 0:
        return
    if np.may_share_memory(dst, src):  # bounds only: exact for contiguous arrays
        raise InvalidArgument("copy_nontemporal: dst and src overlap")
    _c.copy_nontemporal(dst.reshape(-1).view(np.uint8), src.reshape(-1).view(np.uint8),
                        dst.nbytes)
