"""Exceptions: one class per status of the C library, each carrying the library's message.

Every error the package raises is a :class:`Error`; ``error.status`` is the library's
``sp_status`` (a negative int) and ``error.status_name`` its name (``"SP_ERR_STAGE_FAILED"``).
Bad arguments found by the Python layer before anything runs are :class:`InvalidArgument`,
with the same status the library gives them.
"""

from __future__ import annotations

from . import _streampipe as _c

__all__ = [
    "Error",
    "InvalidArgument",
    "OutOfMemory",
    "OutOfDeviceMemory",
    "Unsupported",
    "StageError",
    "BackendError",
    "DeviceLost",
    "Cancelled",
    "WouldBlock",
    "Timeout",
]


class Error(Exception):
    """A streampipe failure: ``str(error)`` is the library's message, ``status`` its code."""

    _status: int = 0

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status: int = self._status if status is None else status

    @property
    def status_name(self) -> str:
        """The status's name in the C API, e.g. ``"SP_ERR_INVALID_ARGUMENT"``."""
        return _c.status_name(self.status)


class InvalidArgument(Error, ValueError):
    """A bad argument (dtype, shape, size, option); nothing ran and nothing was written."""

    _status = _c.ERR_INVALID_ARGUMENT


class OutOfMemory(Error, MemoryError):
    """Host memory, pinned memory included, ran out."""

    _status = _c.ERR_OUT_OF_MEMORY


class OutOfDeviceMemory(Error, MemoryError):
    """Device memory ran out."""

    _status = _c.ERR_OUT_OF_DEVICE_MEMORY


class Unsupported(Error):
    """The backend is absent (CUDA not built or no GPU), or a stage lacks its function."""

    _status = _c.ERR_UNSUPPORTED


class StageError(Error):
    """A stage failed; the message names the stage and the chunk.

    When a Python stage raised, the exception it raised is ``__cause__``.
    """

    _status = _c.ERR_STAGE_FAILED


class BackendError(Error):
    """A backend call failed (a CUDA call, writing a file); the context stays usable."""

    _status = _c.ERR_BACKEND


class DeviceLost(Error):
    """The device context is corrupt; every later call on the context fails."""

    _status = _c.ERR_DEVICE_LOST


class Cancelled(Error):
    """Work skipped because an earlier operation failed."""

    _status = _c.ERR_CANCELLED


class WouldBlock(Error):
    """A non-blocking stream already holds max_in_flight batches."""

    _status = _c.ERR_WOULD_BLOCK


class Timeout(Error, TimeoutError):
    """No stream event came in the time given."""

    _status = _c.ERR_TIMEOUT


_BY_STATUS: dict[int, type[Error]] = {
    cls._status: cls
    for cls in (
        InvalidArgument,
        OutOfMemory,
        OutOfDeviceMemory,
        Unsupported,
        StageError,
        BackendError,
        DeviceLost,
        Cancelled,
        WouldBlock,
        Timeout,
    )
}


def _from_status(status: int, message: str) -> Error:
    """The exception for a status the library returned (the binding raises what this makes)."""
    cls = _BY_STATUS.get(status, Error)
    return cls(message or _c.status_message(status), status)
