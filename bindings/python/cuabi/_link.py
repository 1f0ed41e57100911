"""Linking device code (:class:`Linker`) and libraries (:class:`Library`)."""

from __future__ import annotations

import concurrent.futures
import os
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from ._api import LinkBackend, LinkFlag, LinkInput
from ._background import submit
from ._objects import LibraryBase, LinkerBase, enum_in, register_owner
from ._base import no_nul, resolve_backend
from ._loader import Backend
from ._memory import device_arg
from ._options import raw_options
from ._program import Module, Program

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["Linker", "Library", "LinkInput", "LinkBackend"]

PathArg = Union[str, "os.PathLike[str]"]
ImageArg = Union[bytes, bytearray, memoryview, PathArg]
InputKind = Union[LinkInput, int, str]
BackendKind = Union[LinkBackend, int, str]

def input_kind(kind: InputKind) -> int:
    """A cuabi_link_input from a LinkInput, its name ("auto", "cubin", "ptx",
    "lto_ir", "fatbin", "object", "library") or an int."""
    return enum_in(kind, LinkInput, "link input kind")


def _is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


class Linker(LinkerBase):
    """Links device code of several programs, images and files into one
    image for a device (``cuabi_linker``) and loads it:

    >>> caller = Program(CALLER).compile(arch=dev.arch, relocatable=True)
    >>> callee = Program(CALLEE).compile(arch=dev.arch, relocatable=True)
    >>> linker = Linker(dev)                  # nvJitLink when it loads, else the driver's
    >>> linker.add_program(caller).add_program(callee)
    >>> mod = linker.link()
    >>> linker.log, linker.image, linker.link_backend

    ``link_backend``: ``"auto"`` (nvJitLink when it loads, else the
    driver's linker), ``"nvjitlink"`` or ``"driver"`` (or a LinkBackend).
    ``lto=True`` optimises across LTO-IR inputs (programs compiled with
    ``lto=True``; nvJitLink only). ``options`` are nvJitLink's (``"-O3"``,
    ``"-maxrregcount=64"``; the driver's linker takes none); the device's
    architecture is added unless one is given. ``cache=False`` keeps this
    link out of the on-disk cache, which otherwise serves a link of the
    same inputs and options again (``module.from_cache``).

    A linker links once. A failed link raises CompileError whose ``.log``
    is the linker's log (also :attr:`log`). ``.backend``, as on every
    object, is the FFI backend; :attr:`link_backend` is the linker used.
    """

    def __init__(
        self,
        device: "Device",
        *,
        link_backend: BackendKind = "auto",
        lto: bool = False,
        options: Union[str, Sequence[Union[str, bytes]], None] = (),
        cache: bool = True,
    ) -> None:
        dev = device_arg(device)
        for flag, what in ((lto, "lto"), (cache, "cache")):
            if not isinstance(flag, bool):
                raise TypeError(f"{what} must be True or False, not {type(flag).__name__}")
        opts = raw_options(options, "a str or a sequence of nvJitLink option strings")
        flags = (LinkFlag.LTO if lto else 0) | (0 if cache else LinkFlag.NO_CACHE)
        self._own(LinkerBase.create(dev, backend=link_backend, flags=int(flags), options=opts))
        self.device = dev

    # -- inputs ---------------------------------------------------------------

    def add_data(  # type: ignore[override]
        self,
        data: Union[bytes, bytearray, memoryview],
        kind: InputKind = "auto",
        name: Optional[str] = None,
    ) -> "Linker":
        """Adds image bytes of ``kind`` (``"auto"``: told by the bytes;
        ``"cubin"``, ``"ptx"``, ``"lto_ir"``, ``"fatbin"``, ``"object"``,
        ``"library"``); ``name`` names the input in the log. The bytes are
        copied. Returns self."""
        if isinstance(data, str):
            raise TypeError(
                "data must be bytes (PTX text encoded), not str; add a file with add_file"
            )
        super().add_data(input_kind(kind), data, name)
        return self

    def add_file(self, path: PathArg, kind: InputKind = "auto") -> "Linker":
        """Adds a file of ``kind`` (``"auto"``: told by its extension:
        .cubin, .ptx, .fatbin, .ltoir, .o, .a); it is read now. Returns self."""
        code = input_kind(kind)
        if not _is_path(path):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        raw = no_nul(os.fsencode(path), "path")
        self._b.call("cuabi_linker_add_file", self._handle, code, raw)
        return self

    def add(self, item: Any, kind: InputKind = "auto", name: Optional[str] = None) -> "Linker":
        """Adds a compiled Program, image bytes, a file path, or a
        ``(data or path, kind)`` pair. Returns self."""
        if isinstance(item, tuple) and len(item) == 2:
            item, kind = item
        if isinstance(item, Program):
            return self.add_program(item)
        if isinstance(item, (bytes, bytearray, memoryview)):
            return self.add_data(item, kind, name)
        if _is_path(item):
            return self.add_file(item, kind)
        raise TypeError(
            "a linker input is a compiled cuabi.Program, image bytes, a file path or a "
            f"(data, kind) pair, not {type(item).__name__}"
        )

    # -- linking (link: LinkerBase; a CompileError carries the linker's log) --

    def link_async(
        self, *, executor: Optional[concurrent.futures.Executor] = None
    ) -> "concurrent.futures.Future[Module]":
        """:meth:`link` in the background: a Future whose result is the
        Module (or whose exception is the CompileError). Runs on the shared
        executor of ``compile_async`` unless ``executor`` is given; the GIL
        is released while the linker works."""
        return submit(self.link, on=executor)

    def _describe(self) -> str:
        try:
            which = self.link_backend.name.lower()
        except Exception:  # a repr never raises
            which = "?"
        return f"{which} for {self.device!r}"


class Library(LibraryBase):
    """Device code loaded once for every device (``cuabi_library``,
    cuLibraryLoadData): CUBIN, PTX or fatbin bytes, or a file. Each
    device's :meth:`get_module` serves its kernels without loading the image
    again:

    >>> lib = Library(linker.image)           # or Library("kernels.cubin")
    >>> kernel = lib.get_module(dev).get_kernel("doublify")

    Needs a driver but no device. The modules keep the library loaded, so it
    may be closed before them."""

    def __init__(
        self,
        image: ImageArg,
        *,
        backend: Union[Backend, str, None] = None,
    ) -> None:
        b = resolve_backend(backend)
        if isinstance(image, (bytes, bytearray, memoryview)):
            self._own(LibraryBase.load_data(image, backend=b))
        elif _is_path(image):
            self._own(LibraryBase.load_file(os.fsencode(image), backend=b))
        else:
            raise TypeError(
                "a library's image is CUBIN, PTX or fatbin bytes or a file path, "
                f"not {type(image).__name__}"
            )


register_owner("cuabi_linker", Linker)
register_owner("cuabi_library", Library)
