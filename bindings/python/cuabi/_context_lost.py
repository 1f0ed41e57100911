"""cuabi.on_context_lost: a Python callable told when the context is lost.

The C library calls one callback (``cuabi_set_context_lost_callback``) once
per process, when a call first finds the context lost, on that call's thread
after it failed. Here that callback is a trampoline per backend (a ctypes
CFUNCTYPE or a cffi callback), made once and kept for the process, so the C
library never holds a pointer to freed code; it calls the one Python
callable registered last.

The ContextLostError of the failing call (and of every later one) carries
the launches not seen complete as ``launches``: Backend.error reads them
into :class:`~cuabi.LaunchRecord` values, the type registered here.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Callable, Dict, Optional, Tuple, Union

from ._base import resolve_backend
from ._loader import Backend, register_launch_record_type
from ._objects import LaunchRecord

__all__ = ["on_context_lost"]

Handler = Callable[[str], object]

# Held over the registration, so the handler stored and the one the C
# library calls agree; re-entrant, as a handler registered after the loss
# runs inside it (and may register another).
_lock = threading.RLock()
_handler: Optional[Handler] = None
# id(backend) -> (the backend, its trampoline): kept for the process.
_trampolines: Dict[int, Tuple[Backend, Any]] = {}
_ERR_MSG = "Exception ignored in the cuabi.on_context_lost handler"


class _Unraisable:
    """What ``sys.unraisablehook`` reads (its own type cannot be made here)."""

    def __init__(self, exc: BaseException, handler: object) -> None:
        self.exc_type = type(exc)
        self.exc_value = exc
        self.exc_traceback = exc.__traceback__
        self.err_msg = _ERR_MSG
        self.object = handler


def _report(exc: BaseException, handler: object) -> None:
    """Reports what the handler raised through ``sys.unraisablehook``; where
    that is Python's own hook (which takes only its own argument type),
    writes what it writes to stderr. Never raises."""
    try:
        hook = sys.unraisablehook
        if hook is not sys.__unraisablehook__:
            hook(_Unraisable(exc, handler))  # type: ignore[arg-type]
            return
        sys.stderr.write(f"{_ERR_MSG}: {handler!r}\n")
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    except BaseException:  # noqa: B036 (nothing may unwind into the C library)
        pass


def _call(message: str) -> None:
    handler = _handler
    if handler is None:
        return
    try:
        handler(message)
    except BaseException as exc:  # reported, never unwound into the C library
        _report(exc, handler)


def _trampoline(b: Backend) -> Any:
    """The ``cuabi_context_lost_fn`` of backend ``b``, made once."""
    kept = _trampolines.get(id(b))
    if kept is not None:
        return kept[1]

    def lost(user_data: Any, message: Any) -> None:
        _call(b.string(message))

    t = b.callback("cuabi_context_lost_fn", lost)
    _trampolines[id(b)] = (b, t)
    return t


def on_context_lost(
    handler: Optional[Handler], *, backend: Union[Backend, str, None] = None
) -> Optional[Handler]:
    """Calls ``handler(message)`` once, when a cuabi call first finds the CUDA
    context lost (the driver then fails every CUDA call of the process; the
    recovery is a new process), on that call's thread after it failed, before
    its exception is raised. ``message`` is that call's message, as
    :func:`context_lost_message` gives it. Registered after the context was
    lost, the handler is called at once, on this thread. None removes it.
    Returns the handler registered before.

    One handler per process (a later call replaces it, whichever backend).
    The handler may call cuabi (CUDA work raises ContextLostError). An
    exception it raises never reaches the C library: it is reported through
    ``sys.unraisablehook`` (object: the handler), as Python reports an
    exception it cannot raise; under Python's own hook it is written to
    stderr. It is not raised by the failing call, which raises its own
    ContextLostError.

    >>> cuabi.on_context_lost(lambda message: log.critical("GPU lost: %s", message))
    """
    global _handler
    if handler is not None and not callable(handler):
        raise TypeError(f"handler must be callable or None, not {type(handler).__name__}")
    b = resolve_backend(backend)
    with _lock:
        previous, _handler = _handler, handler
        if handler is None:
            fn = b.null_callback("cuabi_context_lost_fn")
        else:
            fn = _trampoline(b)
        try:
            b.call("cuabi_set_context_lost_callback", fn, b.NULL)
        except BaseException:
            _handler = previous
            raise
    return previous


register_launch_record_type(LaunchRecord)
