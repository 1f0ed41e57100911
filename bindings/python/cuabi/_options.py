"""NVRTC options as typed values (:class:`CompileOptions`), handed to the
core in the fields of ``cuabi_compile_desc``.

>>> CompileOptions(arch="sm_90", std=17, defines={"N": 4}, fast_math=True)

Every compile takes them as keywords (``prog.compile(std=17, lto=True)``,
``dev.compile(src, defines={"N": 4})``), alone or beside raw option strings;
an unknown keyword raises TypeError naming it. This module only turns Python
values into the fields' C values (a define's value to text, a path to a
string); what each option means, its NVRTC spelling and which values are
valid (a macro name, a C++ standard, an architecture's form) are the core's
to decide, and it refuses a bad one with InvalidArgumentError naming the
field and index (``desc->defines[1]``), the same in every language.
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
from ._objects import flag_in

__all__ = ["CompileOptions", "OptionsArg", "merged_options", "desc_fields", "raw_options"]

DefineValue = Union[str, int, float, bool, None]
Defines = Union[
    Mapping[str, DefineValue], Iterable[Union[str, Tuple[str, DefineValue]]], None
]
PathArg = Union[str, "os.PathLike[str]"]
RawOptions = Union[str, bytes, Sequence[Union[str, bytes]], None]
OptionsArg = Union["CompileOptions", RawOptions]

# The on/off options: fill_compile_desc's keywords of the same names.
_FLAGS = ("fast_math", "line_info", "debug", "lto", "relocatable")

# "c++17" as the number the core takes (17); the core decides which exist.
_STD_TEXT = re.compile(r"c\+\+([0-9]{1,4})\Z")


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


def _std(value: Any) -> Optional[int]:
    """The standard as the core's cuabi_cxx_standard number: an int (17, a
    CxxStandard) as it is, ``"c++17"`` as 17."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        match = _STD_TEXT.match(value)
        if match is None:
            raise ValueError(
                f"std {value!r}: a standard is written 'c++NN' (or given as the int NN)"
            )
        return int(match.group(1))
    raise TypeError(f"std must be an int (17) or a str ('c++17'), not {type(value).__name__}")


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
        out.append((name, _define_value(name, raw)))
    return tuple(out)


def _listed(value: Any, single: Tuple[type, ...], what: str, expected: str) -> List[Any]:
    """``value`` as a list: None as none, one ``single`` item as one, else
    its items; anything else a TypeError saying ``what`` must be ``expected``."""
    if value is None:
        return []
    if isinstance(value, single):
        return [value]
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{what} must be {expected}, not {type(value).__name__}") from None


def _paths(value: Any, what: str) -> Tuple[str, ...]:
    out = []
    for item in _listed(value, (str, bytes, os.PathLike), what, "a path or a sequence of paths"):
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{what}: a path must be a str or os.PathLike, not "
                            f"{type(item).__name__}")
        out.append(os.fspath(item))
    return tuple(out)


def _extra(value: Any) -> Tuple[str, ...]:
    out = []
    for item in _listed(value, (str, bytes), "extra", "a str or a sequence of option strings"):
        if isinstance(item, bytes):
            item = item.decode("utf-8")
        if not isinstance(item, str):
            raise TypeError(f"extra: an option must be a str, not {type(item).__name__}")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True)
class CompileOptions:
    """NVRTC options as values, for the core to spell and check.

    ``arch``: ``"sm_90"`` (CUBIN), ``"compute_90"`` (PTX), an int (90) or
    ``(major, minor)``; None: the target's default (the device's own for
    :meth:`Device.compile <cuabi.Device.compile>`). ``std``: 17, a
    :class:`~cuabi.capi.CxxStandard` or ``"c++17"``. ``defines``:
    ``{"N": 256, "USE_FAST": None, "SQUARE(x)": "((x)*(x))"}`` (None:
    defined without a value; True/False: 1/0) or a sequence of names and
    (name, value) pairs. ``include_paths``: folders searched by
    ``#include``. ``fast_math``, ``line_info``, ``debug`` (device debug
    code), ``lto`` (LTO-IR for a link-time optimising link),
    ``relocatable`` (device code other programs may call, for a link).
    ``extra``: raw NVRTC option strings, passed after the typed ones.
    Immutable and hashable; ``opts.replace(...)`` gives a changed copy.
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
        for name in _FLAGS:
            set_(self, name, flag_in(getattr(self, name), name))
        set_(self, "extra", _extra(self.extra))

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


def raw_options(
    options: RawOptions,
    expected: str = "a str, bytes, a sequence of them or a cuabi.CompileOptions",
) -> List[bytes]:
    """Raw option strings (one, a sequence, or None) as bytes; anything
    else raises TypeError saying it must be ``expected``."""
    return [as_bytes(o, "option") for o in _listed(options, (str, bytes), "options", expected)]


def merged_options(
    options: OptionsArg, typed: Dict[str, Any]
) -> Tuple[CompileOptions, List[bytes]]:
    """The options of a compile: ``options`` (raw strings or a
    CompileOptions) with the typed keywords ``typed``, as (the typed options,
    the raw strings, which follow the typed ``extra`` ones)."""
    if isinstance(options, CompileOptions):
        return (options.replace(**typed) if typed else options), []
    raw = raw_options(options)
    check_names(typed)
    return CompileOptions(**typed), raw


def desc_fields(options: CompileOptions, raw: Sequence[bytes] = ()) -> Dict[str, Any]:
    """The keywords of :func:`fill_compile_desc <cuabi._objects.fill_compile_desc>`
    that ``options`` and the raw option strings ``raw`` give."""
    defines = [
        as_bytes(name if value is None else f"{name}={value}", f"defines[{name!r}]")
        for name, value in cast(Tuple[Tuple[str, Optional[str]], ...], options.defines)
    ]
    extra = [as_bytes(o, "option") for o in cast(Tuple[str, ...], options.extra)]
    return dict(
        arch=options.arch,
        cxx_standard=options.std,
        defines=defines,
        include_paths=options.include_paths,
        **{name: getattr(options, name) for name in _FLAGS},
        options=extra + list(raw),
    )
