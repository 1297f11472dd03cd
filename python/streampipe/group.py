"""Groups: one run spread over several devices of the process (sp_group, include/
streampipe_group.h). Each device runs the same chain on its own pipeline; devices take work
units from one queue, so a slower one takes fewer, and records land in order."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from ._dtypes import ShapeLike
from .errors import InvalidArgument
from .pipeline import Pipeline
from .stage import Stage

if TYPE_CHECKING:
    from .context import Context

__all__ = ["Group"]


def _device_list(devices: Union[None, int, Sequence[int]]) -> list[int]:
    if devices is None:
        return [-1]  # every visible GPU; on HOST one host backend
    if isinstance(devices, bool):
        raise InvalidArgument("devices must be None, a count or a list of device indices")
    if isinstance(devices, int):
        if not 1 <= devices <= 64:
            raise InvalidArgument(f"a group of {devices} devices; 1..64")
        return list(range(devices))
    try:
        listed = [operator.index(d) for d in devices]
    except TypeError:
        raise InvalidArgument("devices must be None, a count or a list of device indices") from None
    if not 1 <= len(listed) <= 64 or any(not 0 <= d < 2**31 for d in listed):
        raise InvalidArgument(f"devices {listed}: 1..64 indices, each at least 0")
    return listed


class Group:
    """Devices of the context's backend, made by :meth:`Context.group`, for pipelines whose
    runs use them all.

    ``devices``: None (every visible GPU; on HOST, one host backend), a count N (devices
    0..N-1; on HOST, N host backends, so that a CPU machine runs groups too) or a list of
    device indices (a device may be listed twice: two pipelines on it).
    """

    def __init__(self, context: "Context", devices: Union[None, int, Sequence[int]]) -> None:
        self.context = context
        self._devices = _device_list(devices)

    def __repr__(self) -> str:
        shown = "all" if self._devices == [-1] else self._devices
        return f"Group({self.context!r}, devices={shown})"

    def pipeline(
        self,
        stages: Union[Stage, Sequence[Stage]],
        in_dtype: Any,
        in_shape: ShapeLike = (),
        **options: Any,
    ) -> Pipeline:
        """A pipeline per device with the same stages and options as
        :meth:`Context.pipeline` takes, behind one :class:`Pipeline`: ``run`` and
        ``run_io`` (positional sources only) go over every device, and
        :meth:`Pipeline.device_reports` says what each did. Streams and ``run_serial`` are
        for single pipelines. Python CUDA stages and built-in stages made for the context
        (the MLP) run on the context's device only, so their groups may list only it.

        Python stages may be called from several devices' threads at once."""
        return Pipeline(self.context, stages, in_dtype, in_shape, **options,
                        _devices=list(self._devices))

    @property
    def devices(self) -> Optional[list[int]]:
        """The devices asked for (None: every visible one)."""
        return None if self._devices == [-1] else list(self._devices)
