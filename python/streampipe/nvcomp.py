"""nvCOMP for decompressing compressed inputs inside the ring on CUDA (issue 26).

NVIDIA's library is not shipped with streampipe: install the wheel ``nvidia-libnvcomp-cu13``.
The C library reads no environment, so it is found here, in this order: the ``path`` given,
``$SP_NVCOMP_LIBRARY``, the ``nvidia.libnvcomp`` package's ``lib64/libnvcomp.so.6``, then the
dynamic linker's search for ``libnvcomp.so.6``. Without it a CUDA run decompresses on the
staging threads.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Optional

from . import _streampipe

__all__ = ["load_nvcomp", "nvcomp_status"]


def _candidates(path: Optional[str]) -> list[Optional[str]]:
    found: list[Optional[str]] = []
    if path:
        return [os.fspath(path)]
    env = os.environ.get("SP_NVCOMP_LIBRARY")
    if env:
        found.append(env)
    try:
        spec = importlib.util.find_spec("nvidia.libnvcomp")
    except (ImportError, ValueError):
        spec = None
    for where in (spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(where, "lib64", "libnvcomp.so.6")
        if os.path.exists(lib):
            found.append(lib)
    found.append(None)  # the library path
    return found


def load_nvcomp(path: Optional[str] = None) -> tuple[bool, str]:
    """Loads nvCOMP (see the module's text); returns (loaded, why not). Once one load has
    succeeded the library keeps it."""
    why = ""
    for candidate in _candidates(path):
        status, text = _streampipe.nvcomp_load(candidate)
        if status == _streampipe.OK:
            return True, ""
        why = why or text  # the first place's reason says most
    return False, why


def nvcomp_status() -> tuple[bool, int, str]:
    """(loaded, version as major*1000 + minor*100 + patch, why not)."""
    loaded, version, why = _streampipe.nvcomp_status()
    return bool(loaded), int(version), str(why)
