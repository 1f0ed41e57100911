"""The base of cuabi's exceptions: :class:`CudaError`, whose subclasses
(one per status) are generated in :mod:`cuabi._errors`, and
:class:`LibraryNotFoundError`. Import them from :mod:`cuabi` or
:mod:`cuabi.errors`."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from ._api import STATUS_NAMES

__all__ = ["CudaError", "LibraryNotFoundError", "status_name"]


class CudaError(Exception):
    """A cuabi call failed.

    Attributes:
        status: the cuabi status (an ``int``, see ``cuabi.capi.Status``).
        name: its symbolic name, e.g. ``"CUABI_ERROR_INVALID_HANDLE"``.
        message: the last-error message of the failing call.
        code: the raw CUresult or nvrtcResult behind it, 0 if none.
        log: NVRTC's log for a failed compile, else ``""``.
    """

    status: int = -1

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        name: Optional[str] = None,
        code: int = 0,
        log: str = "",
    ) -> None:
        if status is None:
            status = type(self).status
        self.status = status
        self.name = name or status_name(status)
        self.message = message
        self.code = code
        self.log = log
        super().__init__(message)

    def __str__(self) -> str:
        text = f"{self.name}: {self.message}" if self.message else self.name
        log = self.log.strip()
        if log and log not in self.message:
            text += "\n" + log
        return text

    def __reduce__(self) -> Tuple[Callable[..., CudaError], Tuple[Any, ...]]:
        """Keeps the attributes across pickling (multiprocessing)."""
        return (type(self), (self.message, self.status, self.name, self.code, self.log))


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
