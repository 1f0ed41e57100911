"""Exceptions: one :class:`CudaError` subclass per cuabi status.

A failing call raises the subclass of its status, carrying the status, its
symbolic name and the message of the thread's last error (which names the
failing call and the argument or parameter at fault). A failed compile also
carries NVRTC's log. The subclasses are generated from the header, one per
status, named after it (``CUABI_ERROR_INVALID_HANDLE``:
:class:`InvalidHandleError`); some are also the built-in exception Python
code expects (:class:`InvalidArgumentError` is a ``ValueError``,
:class:`NotFoundError` a ``LookupError`` ...).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple, Type

from ._api import STATUS_NAMES

__all__ = ["CudaError", "LibraryNotFoundError", "error_class", "status_name"]


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


def error_class(status: int) -> Type[CudaError]:
    """The exception class raised for ``status`` (CudaError for an unknown one)."""
    return ERROR_CLASSES.get(status, CudaError)


def status_name(status: int) -> str:
    """The symbolic name of ``status`` as the header spells it."""
    return STATUS_NAMES.get(status, "CUABI_ERROR_UNKNOWN")


# The generated subclasses need CudaError above.
from . import _errors  # noqa: E402
from ._errors import *  # noqa: E402,F401,F403
from ._errors import ERROR_CLASSES  # noqa: E402

__all__ += _errors.__all__
