"""What every object of the Pythonic layer shares: owning one handle."""

from __future__ import annotations

import operator
import threading
from typing import Any, Mapping, Optional, Tuple, Type, TypeVar, Union

from ._loader import Backend, get_backend, load_backend
from .errors import InvalidArgumentError

__all__ = ["Resource", "resolve_backend", "dim3", "UINT32_MAX"]

_release_lock = threading.Lock()
_acquire, _release = _release_lock.acquire, _release_lock.release

UINT32_MAX = 0xFFFFFFFF
UINT64_MAX = 0xFFFFFFFFFFFFFFFF
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

R = TypeVar("R", bound="Resource")


def resolve_backend(backend: Union[Backend, str, None]) -> Backend:
    """A Backend from a Backend, a backend name, or None (the default)."""
    if backend is None:
        return get_backend()
    if isinstance(backend, str):
        return load_backend(backend)
    return backend


class Resource:
    """Owns one cuabi handle and releases it exactly once: on :meth:`close`,
    on leaving a ``with`` block, or when garbage-collected, from any thread.

    The core keeps what a handle depends on alive (a kernel its module, a
    buffer its context), so objects may be closed or collected in any order.
    After ``close()`` the object keeps the stale handle, which the core
    recognises: using it raises :class:`~cuabi.InvalidHandleError`.
    """

    _release_fn: str = ""
    _handle_type: str = ""

    def __init__(self, backend: Backend, handle: Any) -> None:
        self._b = backend
        self._handle = handle
        self._closed = False
        self._pins = 0
        self._deferred = False

    @classmethod
    def _from_handle(cls: Type[R], backend: Backend, handle: Any) -> R:
        """An object owning ``handle`` (a new one, given by the library),
        made without running the class's ``__init__``."""
        obj = cls.__new__(cls)
        Resource.__init__(obj, backend, handle)
        return obj

    @classmethod
    def _made_by(cls: Type[R], backend: Backend, handle: Any, by: Optional["Resource"]) -> R:
        """An object owning ``handle``, which a generated method or
        constructor of ``by`` (its receiver, or a constructor's first handle;
        None if none) was just given: the hook by which generated code makes
        a public class (``register_owner``). It keeps the device ``by`` is or
        belongs to as ``device``; a class needing more overrides it."""
        obj = cls._from_handle(backend, handle)
        device = device_of(by)
        if device is not None:
            obj.__dict__["device"] = device
        return obj

    def _own(self, base: "Resource") -> None:
        """Makes this object the owner of ``base``'s handle (the object a
        generated constructor answered), which lets it go."""
        base._closed = True
        Resource.__init__(self, base._b, base._handle)

    @property
    def backend(self) -> Backend:
        """The backend (and library) this object was created through."""
        return self._b

    @property
    def handle(self) -> Any:
        """The cuabi handle, as the backend's low layer takes it
        (``self.backend.lib.cuabi_...(obj.handle, ...)``)."""
        return self._handle

    @property
    def closed(self) -> bool:
        """True once the handle has been released."""
        return self._closed

    def close(self) -> None:
        """Releases the handle now (idempotent, thread-safe, never raises).

        While a view or an export made from this object is alive (see
        ``as_array`` and ``__dlpack__``), the release waits for the last of
        them, so that memory somebody still reads is never freed."""
        self._release(force=False)

    def _claim_release(self, force: bool) -> bool:
        """True once, for the caller that is to release the handle now; False
        when it is released already, or (not ``force``) while a view or
        export is alive: the release then waits for the last of them."""
        _acquire()  # with _release_lock, less the context manager's calls
        try:
            if self._closed:
                return False
            if self._pins and not force:
                self._deferred = True
                return False
            self._closed = True
            return True
        finally:
            _release()

    def _release(self, force: bool) -> None:
        try:
            if not self._claim_release(force):
                return
            self._on_release()
            getattr(self._b.lib, self._release_fn)(self._handle)
        except (
            AttributeError,
            TypeError,
        ):  # partly constructed, or interpreter shutdown
            pass

    def _consumed(self) -> None:
        """A consuming call (``cuabi_buffer_free_async``) released the handle:
        closed from now on, never released again."""
        with _release_lock:
            self._closed = True
        self._on_release()

    def _hold(self, keep: Any) -> None:
        """Keeps ``keep`` (host memory a call named, which the library goes on
        using) for as long as this object lives."""
        held = self.__dict__.setdefault("_held", [])
        held.append(keep)

    def _on_release(self) -> None:
        """Runs once, just before the handle is released: drops what a
        subclass cached from it (must not raise)."""

    def _pin(self) -> None:
        """A view or export of this object appeared."""
        with _release_lock:
            self._pins += 1

    def _unpin(self) -> None:
        """A view or export went away; finish a close() that waited for it."""
        with _release_lock:
            self._pins -= 1
            due = self._deferred and self._pins == 0
        if due:
            self._release(force=False)

    def __del__(self) -> None:
        try:
            # Views hold a reference to this object, so none is left here
            # (except in a cycle collected as a whole, where nobody can read).
            self._release(force=True)
        except Exception:  # never raise from a finalizer
            pass

    def __enter__(self: R) -> R:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _arg(self, backend: Backend) -> Any:
        """This object's handle as an argument for ``backend`` (the same one
        almost always; converted when objects of two backends meet)."""
        if backend is self._b:
            return self._handle
        return backend.handle(self._b.handle_int(self._handle), self._handle_type)

    def __repr__(self) -> str:
        name = type(self).__name__
        if self._closed:
            return f"<cuabi.{name} closed>"
        try:
            return f"<cuabi.{name} {self._describe()}>"
        except Exception:  # a repr never raises
            return f"<cuabi.{name}>"

    def _describe(self) -> str:
        """What the repr says of the object while open (a class says more)."""
        return f"handle=0x{self._b.handle_int(self._handle):x}"


def device_of(by: Optional[Resource]) -> Any:
    """The device ``by`` is or belongs to (its ``device``), or None."""
    return by if by is None or by._handle_type == "cuabi_device" else getattr(by, "device", None)


def dim3(value: Union[int, Tuple[int, ...], Any], what: str) -> Tuple[int, int, int]:
    """(x, y, z) from an int or a sequence of one to three ints, each checked
    to fit the header's uint32_t (the core itself refuses 0)."""
    if isinstance(value, int):
        dims: Tuple[int, ...] = (value,)
    elif isinstance(value, (str, bytes)):
        raise InvalidArgumentError(
            f"{what} must be an int or a tuple of 1 to 3 ints, not str"
        )
    else:
        try:
            dims = tuple(value)
        except TypeError:
            raise InvalidArgumentError(
                f"{what} must be an int or a tuple of 1 to 3 ints, not {type(value).__name__}"
            ) from None
    if not 1 <= len(dims) <= 3:
        raise InvalidArgumentError(
            f"{what} must have 1 to 3 dimensions, not {len(dims)}"
        )
    out = []
    for axis, d in zip("xyz", dims):
        try:
            d = int(d.__index__())
        except AttributeError:
            raise InvalidArgumentError(
                f"{what}.{axis} must be an int, not {type(d).__name__}"
            ) from None
        out.append(check_int(d, f"{what}.{axis}", 0, UINT32_MAX))
    while len(out) < 3:
        out.append(1)
    return out[0], out[1], out[2]


def check_u32(value: int, what: str) -> int:
    """A ``uint32_t`` argument given as anything ``int()`` takes."""
    return check_int(int(value), what, 0, UINT32_MAX)


def check_int(value: Any, what: str, low: int, high: int) -> int:
    """``value`` as an int within the C type's range [low, high]. ctypes would
    wrap a value outside it silently (-1 becoming SIZE_MAX) and cffi raise an
    OverflowError naming no argument, so both are refused here, naming it."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not low <= v <= high:
        raise InvalidArgumentError(f"{what} = {v} is out of range ({low} to {high})")
    return v


def check_size(value: Any, what: str) -> int:
    """A ``size_t`` (or ``uint64_t``) argument."""
    return check_int(value, what, 0, UINT64_MAX)


def check_i32(value: Any, what: str) -> int:
    """An ``int32_t`` argument."""
    return check_int(value, what, INT32_MIN, INT32_MAX)


def named(value: Any, table: Mapping[str, Any], what: str, param: str, hint: str = "") -> int:
    """An enum value given by its name in ``table`` (lower case; any case,
    spaces around ignored) or as an int (``param``, which the core checks).
    An unknown name raises ValueError naming ``what`` and the names."""
    if isinstance(value, str):
        member = table.get(value.strip().lower())
        if member is None:
            raise ValueError(f"unknown {what} {value!r}; use one of {', '.join(table)}{hint}")
        return int(member)
    return check_i32(value, param)


def no_nul(data: bytes, what: str) -> bytes:
    """``data`` for a C string: an embedded NUL would end it early, silently."""
    at = data.find(b"\0")
    if at >= 0:
        raise InvalidArgumentError(
            f"{what} contains a NUL character at index {at}; a C string would end there"
        )
    return data


def as_bytes(text: Union[str, bytes], what: str) -> bytes:
    """A ``const char*`` argument: str as UTF-8, bytes as they are."""
    if isinstance(text, bytes):
        return no_nul(text, what)
    if isinstance(text, str):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArgumentError(
                f"{what} cannot be encoded as UTF-8: a lone surrogate "
                f"(U+{ord(text[exc.start]):04X}) at index {exc.start}"
            ) from None
        return no_nul(data, what)
    raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")


def opt_bytes(text: Optional[Union[str, bytes]], what: str) -> Optional[bytes]:
    return None if text is None else as_bytes(text, what)
