"""Exceptions: one :class:`CudaError` subclass per cuabi status.

A failing call raises the subclass of its status, carrying the status, its
symbolic name and the message of the thread's last error (which names the
failing call and the argument or parameter at fault). A failed compile also
carries NVRTC's log.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Type

from . import _constants as C

__all__ = [
    "CudaError",
    "InvalidArgumentError",
    "InvalidHandleError",
    "OutOfMemoryError",
    "InsufficientBufferError",
    "OutOfRangeError",
    "NotFoundError",
    "NotSupportedError",
    "NotReadyError",
    "DriverNotFoundError",
    "StubDriverError",
    "NoDeviceError",
    "NvrtcNotFoundError",
    "CompileError",
    "ContextLostError",
    "ForkedError",
    "CudaDriverError",
    "NvrtcError",
    "FileIOError",
    "InternalError",
    "LibraryNotFoundError",
    "error_class",
    "status_name",
]


class CudaError(Exception):
    """A cuabi call failed.

    Attributes:
        status: the cuabi status (an ``int``, see ``cuabi.CUABI_ERROR_*``).
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

    def __reduce__(self):  # keeps the attributes across pickling (multiprocessing)
        return (
            _rebuild,
            (type(self), self.message, self.status, self.name, self.code, self.log),
        )


def _rebuild(cls, message, status, name, code, log):
    return cls(message, status, name, code, log)


class InvalidArgumentError(CudaError, ValueError):
    """CUABI_ERROR_INVALID_ARGUMENT: an argument out of its domain (the message names it)."""

    status = C.CUABI_ERROR_INVALID_ARGUMENT


class InvalidHandleError(CudaError):
    """CUABI_ERROR_INVALID_HANDLE: a NULL, released, stale or wrong-kind handle."""

    status = C.CUABI_ERROR_INVALID_HANDLE


class OutOfMemoryError(CudaError, MemoryError):
    """CUABI_ERROR_OUT_OF_MEMORY: host or device memory could not be allocated."""

    status = C.CUABI_ERROR_OUT_OF_MEMORY


class InsufficientBufferError(CudaError):
    """CUABI_ERROR_INSUFFICIENT_BUFFER: the caller's buffer is too small."""

    status = C.CUABI_ERROR_INSUFFICIENT_BUFFER


class OutOfRangeError(CudaError, IndexError):
    """CUABI_ERROR_OUT_OF_RANGE: an offset or length past the end of a buffer."""

    status = C.CUABI_ERROR_OUT_OF_RANGE


class NotFoundError(CudaError, LookupError):
    """CUABI_ERROR_NOT_FOUND: no such kernel, global or name expression."""

    status = C.CUABI_ERROR_NOT_FOUND


class NotSupportedError(CudaError):
    """CUABI_ERROR_NOT_SUPPORTED: the driver or NVRTC lacks what the call needs."""

    status = C.CUABI_ERROR_NOT_SUPPORTED


class NotReadyError(CudaError):
    """CUABI_ERROR_NOT_READY: work still in flight (raised only where waiting was asked for)."""

    status = C.CUABI_ERROR_NOT_READY


class DriverNotFoundError(CudaError):
    """CUABI_ERROR_DRIVER_NOT_FOUND: libcuda.so.1 could not be loaded (the message lists
    every path tried)."""

    status = C.CUABI_ERROR_DRIVER_NOT_FOUND


class StubDriverError(CudaError):
    """CUABI_ERROR_STUB_DRIVER: the loaded libcuda is the toolkit's stub library."""

    status = C.CUABI_ERROR_STUB_DRIVER


class NoDeviceError(CudaError):
    """CUABI_ERROR_NO_DEVICE: no CUDA device, or the ordinal is past the last one."""

    status = C.CUABI_ERROR_NO_DEVICE


class NvrtcNotFoundError(CudaError):
    """CUABI_ERROR_NVRTC_NOT_FOUND: no libnvrtc could be loaded."""

    status = C.CUABI_ERROR_NVRTC_NOT_FOUND


class CompileError(CudaError):
    """CUABI_ERROR_COMPILE: NVRTC rejected the source or options; ``.log`` has its log."""

    status = C.CUABI_ERROR_COMPILE


class ContextLostError(CudaError):
    """CUABI_ERROR_CONTEXT_LOST: a device hit a sticky fault.

    The driver then fails every later CUDA call of the process, on every device,
    ``Device.reset()`` included; the recovery it documents is a new process. Run
    untrusted kernels in a child process to survive their faults.
    """

    status = C.CUABI_ERROR_CONTEXT_LOST


class ForkedError(CudaError):
    """CUABI_ERROR_FORKED: CUDA cannot be used in a child forked after it was initialised."""

    status = C.CUABI_ERROR_FORKED


class CudaDriverError(CudaError):
    """CUABI_ERROR_CUDA: another CUDA driver failure; ``.code`` is the CUresult."""

    status = C.CUABI_ERROR_CUDA


class NvrtcError(CudaError):
    """CUABI_ERROR_NVRTC: another NVRTC failure; ``.code`` is the nvrtcResult."""

    status = C.CUABI_ERROR_NVRTC


class FileIOError(CudaError, OSError):
    """CUABI_ERROR_IO: a file could not be read or written."""

    status = C.CUABI_ERROR_IO

    def __init__(
        self, *args, **kwargs
    ) -> None:  # OSError's own __init__ would parse args
        CudaError.__init__(self, *args, **kwargs)

    def __str__(self) -> str:
        return CudaError.__str__(self)


class InternalError(CudaError):
    """CUABI_ERROR_INTERNAL: a bug in cuabi; please report it with the message."""

    status = C.CUABI_ERROR_INTERNAL


class LibraryNotFoundError(OSError):
    """libcuabi could not be loaded; the message lists every path tried and why."""

    def __init__(self, message: str, tried: List[str]) -> None:
        super().__init__(message)
        self.tried = tried

    def __str__(self) -> str:
        return self.args[0]


_BY_STATUS: Dict[int, Type[CudaError]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        InvalidHandleError,
        OutOfMemoryError,
        InsufficientBufferError,
        OutOfRangeError,
        NotFoundError,
        NotSupportedError,
        NotReadyError,
        DriverNotFoundError,
        StubDriverError,
        NoDeviceError,
        NvrtcNotFoundError,
        CompileError,
        ContextLostError,
        ForkedError,
        CudaDriverError,
        NvrtcError,
        FileIOError,
        InternalError,
    )
}

_STATUS_NAMES: Dict[int, str] = {
    value: name
    for name, value in vars(C).items()
    if name == "CUABI_SUCCESS" or name.startswith("CUABI_ERROR_")
}


def error_class(status: int) -> Type[CudaError]:
    """The exception class raised for ``status`` (CudaError for an unknown one)."""
    return _BY_STATUS.get(status, CudaError)


def status_name(status: int) -> str:
    """The symbolic name of ``status`` as the header spells it."""
    return _STATUS_NAMES.get(status, "CUABI_ERROR_UNKNOWN")
