"""NVRTC options as typed values (:class:`CompileOptions`), turned into the
option strings NVRTC takes.

>>> CompileOptions(arch="sm_90", std=17, defines={"N": 4}, fast_math=True).to_nvrtc()
['--gpu-architecture=sm_90', '-std=c++17', '-DN=4', '--use_fast_math']

Every compile takes them as keywords (``prog.compile(std=17, lto=True)``,
``dev.compile(src, defines={"N": 4})``), alone or beside raw option strings;
an unknown keyword raises TypeError naming it. What the values mean is
NVRTC's to judge: a wrong architecture or standard fails the compile with
NVRTC's own message.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
    cast,
)

from ._base import as_bytes

__all__ = ["CompileOptions", "OptionsArg", "option_strings"]

DefineValue = Union[str, int, float, bool, None]
Defines = Union[
    Mapping[str, DefineValue], Iterable[Union[str, Tuple[str, DefineValue]]], None
]
PathArg = Union[str, "os.PathLike[str]"]
RawOptions = Union[str, bytes, Sequence[Union[str, bytes]], None]
OptionsArg = Union["CompileOptions", RawOptions]

# A macro name, or a function-like macro's name and parameters ("MAX(a,b)").
_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_, ]*\))?\Z")


def _flag(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    raise TypeError(f"{what} must be True or False, not {type(value).__name__}")


def _arch(value: Any) -> Optional[str]:
    """``"sm_90"`` as given; an int 90 or a (major, minor) pair as ``sm_XY``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError("arch must be a str ('sm_90', 'compute_90'), an int or (major, minor)")
    if isinstance(value, int):
        return f"sm_{value}"
    if isinstance(value, tuple):
        if len(value) != 2 or not all(type(v) is int for v in value):
            raise ValueError(f"arch as a tuple is (major, minor), two ints, not {value!r}")
        return f"sm_{value[0]}{value[1]}"
    raise TypeError(
        "arch must be a str ('sm_90', 'compute_90'), an int or (major, minor), "
        f"not {type(value).__name__}"
    )


def _std(value: Any) -> Optional[str]:
    """``"c++17"`` as given; an int 17 as ``c++17``."""
    if value is None or isinstance(value, str):
        return value
    if type(value) is int:
        return f"c++{value}"
    raise TypeError(f"std must be a str ('c++17') or an int (17), not {type(value).__name__}")


def _define_value(name: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise TypeError(
        f"defines[{name!r}] must be a str, an int, a float, a bool or None, "
        f"not {type(value).__name__}"
    )


def _defines(value: Any) -> Tuple[Tuple[str, Optional[str]], ...]:
    """((name, value or None), ...) from a mapping, or an iterable of names
    and (name, value) pairs."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        raise TypeError(
            "defines must be a mapping {name: value} or a sequence of names and "
            f"(name, value) pairs, not {type(value).__name__}"
        )
    if isinstance(value, Mapping):
        items: Iterable[Any] = value.items()
    else:
        try:
            items = list(value)
        except TypeError:
            raise TypeError(
                "defines must be a mapping {name: value} or a sequence of names and "
                f"(name, value) pairs, not {type(value).__name__}"
            ) from None
    out: List[Tuple[str, Optional[str]]] = []
    for item in items:
        if isinstance(item, str):
            name, raw = item, None
        elif isinstance(item, tuple) and len(item) == 2:
            name, raw = item
        else:
            raise TypeError(
                f"each define is a name or a (name, value) pair, not {item!r}"
            )
        if not isinstance(name, str):
            raise TypeError(f"a define's name must be a str, not {type(name).__name__}")
        if not _MACRO.match(name):
            raise ValueError(f"defines: {name!r} is not a macro name")
        out.append((name, _define_value(name, raw)))
    return tuple(out)


def _paths(value: Any, what: str) -> Tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(
            f"{what} must be a path or a sequence of paths, not {type(value).__name__}"
        ) from None
    out = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{what}: a path must be a str or os.PathLike, not "
                            f"{type(item).__name__}")
        out.append(os.fspath(item))
    return tuple(out)


def _extra(value: Any) -> Tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(
            f"extra must be a str or a sequence of option strings, not {type(value).__name__}"
        ) from None
    out = []
    for item in items:
        if isinstance(item, bytes):
            item = item.decode("utf-8")
        if not isinstance(item, str):
            raise TypeError(f"extra: an option must be a str, not {type(item).__name__}")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True)
class CompileOptions:
    """NVRTC options as values; :meth:`to_nvrtc` gives the option strings.

    ``arch``: ``"sm_90"`` (CUBIN), ``"compute_90"`` (PTX), an int (90) or
    ``(major, minor)``; None: the target's default (the device's own for
    :meth:`Device.compile <cuabi.Device.compile>`). ``std``: ``"c++17"`` or
    17. ``defines``: ``{"N": 256, "USE_FAST": None}`` (None: defined without
    a value; True/False: 1/0) or a sequence of names and (name, value)
    pairs. ``include_paths``: folders searched by ``#include``.
    ``fast_math`` (``--use_fast_math``), ``line_info`` (``-lineinfo``),
    ``debug`` (``-G``), ``lto`` (``-dlto``: LTO-IR for a link-time
    optimising link), ``relocatable`` (``-rdc=true``: device code other
    programs may call, for a link). ``extra``: raw option strings, added
    last. Immutable and hashable; ``opts.replace(...)`` gives a changed copy.
    """

    arch: Union[str, int, Tuple[int, int], None] = None
    std: Union[str, int, None] = None
    defines: Defines = None
    include_paths: Union[PathArg, Sequence[PathArg], None] = ()
    fast_math: bool = False
    line_info: bool = False
    debug: bool = False
    lto: bool = False
    relocatable: bool = False
    extra: Union[str, Sequence[str], None] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "arch", _arch(self.arch))
        set_(self, "std", _std(self.std))
        set_(self, "defines", _defines(self.defines))
        set_(self, "include_paths", _paths(self.include_paths, "include_paths"))
        for name in ("fast_math", "line_info", "debug", "lto", "relocatable"):
            set_(self, name, _flag(getattr(self, name), name))
        set_(self, "extra", _extra(self.extra))

    def to_nvrtc(self) -> List[str]:
        """The NVRTC option strings, in the order of the fields."""
        out: List[str] = []
        if self.arch is not None:
            out.append(f"--gpu-architecture={self.arch}")
        if self.std is not None:
            out.append(f"-std={self.std}")
        defines = cast(Tuple[Tuple[str, Optional[str]], ...], self.defines)
        for name, value in defines:
            out.append(f"-D{name}" if value is None else f"-D{name}={value}")
        for path in cast(Tuple[str, ...], self.include_paths):
            out.append(f"--include-path={path}")
        if self.fast_math:
            out.append("--use_fast_math")
        if self.line_info:
            out.append("-lineinfo")
        if self.debug:
            out.append("-G")
        if self.lto:
            out.append("-dlto")
        if self.relocatable:
            out.append("-rdc=true")
        out.extend(cast(Tuple[str, ...], self.extra))
        return out

    def replace(self, **changes: Any) -> "CompileOptions":
        """A copy with ``changes``; an unknown name raises TypeError."""
        check_names(changes)
        return dataclasses.replace(self, **changes)


FIELDS: Tuple[str, ...] = tuple(f.name for f in dataclasses.fields(CompileOptions))


def check_names(typed: Mapping[str, Any]) -> None:
    """TypeError naming the first keyword that is no compile option."""
    for name in typed:
        if name not in FIELDS:
            close = difflib.get_close_matches(name, FIELDS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(
                f"unknown compile option {name!r}{hint}; the options are "
                + ", ".join(FIELDS)
                + " (raw NVRTC strings go in options or extra)"
            )


def _raw(options: RawOptions) -> List[bytes]:
    if options is None:
        return []
    if isinstance(options, (str, bytes)):
        options = [options]
    try:
        items = list(options)
    except TypeError:
        raise TypeError(
            "options must be a str, bytes, a sequence of them or a cuabi.CompileOptions, "
            f"not {type(options).__name__}"
        ) from None
    return [as_bytes(o, "option") for o in items]


def option_strings(options: OptionsArg, typed: Dict[str, Any]) -> List[bytes]:
    """The NVRTC options of a compile: ``options`` (raw strings or a
    CompileOptions) with the typed keywords ``typed``. Typed options come
    first, then raw strings."""
    if isinstance(options, CompileOptions):
        merged = options.replace(**typed) if typed else options
        return [as_bytes(o, "option") for o in merged.to_nvrtc()]
    raw = _raw(options)
    if not typed:
        return raw
    check_names(typed)
    return [as_bytes(o, "option") for o in CompileOptions(**typed).to_nvrtc()] + raw
