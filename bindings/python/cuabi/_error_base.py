"""The base of cuabi's exceptions: :class:`CudaError`, whose subclasses
(one per status) are generated in :mod:`cuabi._errors`, and
:class:`LibraryNotFoundError`; and :class:`FaultedLaunch`, a launch a
sticky fault's error names. Import them from :mod:`cuabi` (the errors from
:mod:`cuabi.errors` too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

from ._api import STATUS_NAMES

if TYPE_CHECKING:  # _objects imports the loader, which imports this module
    from ._objects import LaunchRecord

__all__ = ["CudaError", "FaultedLaunch", "LibraryNotFoundError", "status_name"]


@dataclass(frozen=True)
class FaultedLaunch:
    """A launch not seen complete when a sticky fault surfaced, as the
    failing call's last error names it (``CudaError.launches``): the kernel's
    name and the launch (``cuabi_last_error_get_launch_kernel`` and
    ``cuabi_last_error_get_launch``)."""

    kernel: str
    """The kernel's name."""
    record: LaunchRecord
    """Its grid, block, dynamic shared memory, cluster, stream id
    (``Stream.id``; 0 for the default stream), device and launch number on
    its stream, and whether the driver's log named it."""


class CudaError(Exception):
    """A cuabi call failed.

    Attributes:
        status: the cuabi status (an ``int``, see ``cuabi.capi.Status``).
        name: its symbolic name, e.g. ``"CUABI_ERROR_INVALID_HANDLE"``.
        message: the last-error message of the failing call.
        code: the raw CUresult or nvrtcResult behind it, 0 if none.
        log: NVRTC's log for a failed compile, else ``""``.
        launches: for :class:`~cuabi.errors.ContextLostError`, the launches
            not seen complete when the sticky fault surfaced, most recent
            first (:class:`FaultedLaunch`; the message names the same);
            ``()`` for any other error.
    """

    status: int = -1
    launches: Tuple[FaultedLaunch, ...] = ()

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        name: Optional[str] = None,
        code: int = 0,
        log: str = "",
        launches: Tuple[FaultedLaunch, ...] = (),
    ) -> None:
        if status is None:
            status = type(self).status
        self.status = status
        self.name = name or status_name(status)
        self.message = message
        self.code = code
        self.log = log
        self.launches = tuple(launches)
        super().__init__(message)

    def __str__(self) -> str:
        text = f"{self.name}: {self.message}" if self.message else self.name
        log = self.log.strip()
        if log and log not in self.message:
            text += "\n" + log
        return text

    def __reduce__(self) -> Tuple[Callable[..., CudaError], Tuple[Any, ...]]:
        """Keeps the attributes across pickling (multiprocessing)."""
        return (
            type(self),
            (self.message, self.status, self.name, self.code, self.log, self.launches),
        )


class LibraryNotFoundError(OSError):
    """libcuabi could not be loaded; the message lists every path tried and why."""

    def __init__(self, message: str, tried: List[str]) -> None:
        super().__init__(message)
        self.tried = tried

    def __str__(self) -> str:
        return str(self.args[0])


def status_name(status: int) -> str:
    """The symbolic name of ``status`` as the header spells it."""
    return STATUS_NAMES.get(status, "CUABI_ERROR_UNKNOWN")
