"""The Python binding's declarations (bindings/python/cuabi/_api.py,
_errors.py and errors.py) and the version in its pyproject.toml.

_api.py holds, for both backends: the header's constants, an IntEnum or
IntFlag per enum, the ctypes types, structs and (name, restype, argtypes) of
every function, the C declarations cffi's cdef takes, and the status names.
_errors.py holds one exception class per failure status.

The ctypes conventions (one rule per C type shape, none per function):
handles are c_void_p; an enum is c_int32 (the header fixes its width and
sign), a flag set c_uint32; char* and const char* are c_char_p; void* is
c_void_p; an input array of void pointers (void* const*) is c_void_p too, so
the address of a NumPy array of argument pointers can be passed as it is;
any other pointer is POINTER(T). A callback type is a ctypes.CFUNCTYPE of
its return and parameter types by the same rules, except that a char* the
callback receives is POINTER(c_char) (c_char_p would hand it a copy of the
string instead of the buffer it is to write into).
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from typing import Any, Dict, List, Optional

from common import banner, one_line
from model import REPO

API = "bindings/python/cuabi/_api.py"
ERRORS = "bindings/python/cuabi/_errors.py"
ERRORS_FACADE = "bindings/python/cuabi/errors.py"
PYPROJECT = "bindings/python/pyproject.toml"

CTYPES_SCALARS = {
    "int8_t": "ctypes.c_int8",
    "int16_t": "ctypes.c_int16",
    "int32_t": "ctypes.c_int32",
    "int64_t": "ctypes.c_int64",
    "uint8_t": "ctypes.c_uint8",
    "uint16_t": "ctypes.c_uint16",
    "uint32_t": "ctypes.c_uint32",
    "uint64_t": "ctypes.c_uint64",
    "uintptr_t": "ctypes.c_size_t",
    "size_t": "ctypes.c_size_t",
    "float": "ctypes.c_float",
    "double": "ctypes.c_double",
    "char": "ctypes.c_char",
}

# The Python idiom for some statuses: the built-in exception each one also is,
# so that `except ValueError` catches a bad argument as Python code expects.
PYTHON_BASES = {
    "CUABI_ERROR_INVALID_ARGUMENT": "ValueError",
    "CUABI_ERROR_OUT_OF_MEMORY": "MemoryError",
    "CUABI_ERROR_OUT_OF_RANGE": "IndexError",
    "CUABI_ERROR_NOT_FOUND": "LookupError",
    "CUABI_ERROR_IO": "OSError",
}
# Class names that differ from the derived ones: CudaError is the base class
# of them all, and FileIOError says what the IO status is about.
PYTHON_NAMES = {"CUABI_ERROR_CUDA": "CudaDriverError", "CUABI_ERROR_IO": "FileIOError"}


def camel(words: str) -> str:
    return "".join(w.capitalize() for w in words.split("_") if w)


def error_class_name(status: str) -> str:
    """CUABI_ERROR_INVALID_ARGUMENT -> InvalidArgumentError."""
    return PYTHON_NAMES.get(status) or camel(status[len("CUABI_ERROR_") :]) + "Error"


def enum_class_name(enum: Dict[str, Any]) -> str:
    """cuabi_capture_mode -> CaptureMode; cuabi_stream_flag_bits -> StreamFlag."""
    name = enum["name"][len("cuabi_") :]
    if enum["is_flag_bits"]:
        return camel(name[: -len("_bits")])
    return camel(name)


def member_prefix(enum: Dict[str, Any]) -> str:
    """What every value name of the enum starts with, at a word boundary:
    CUABI_FUNC_ for cuabi_function_attribute. A single value shares it with
    the enum's own name (CUABI_STREAM_ for cuabi_stream_flag_bits)."""
    names = [v["name"] for v in enum["values"]]
    if len(names) == 1:
        own = enum["name"].upper()
        if enum["is_flag_bits"]:
            own = own[: -len("_FLAG_BITS")]
        names.append(own + "_")
    words = [n.split("_") for n in names]
    common: List[str] = []
    for group in zip(*words):
        if len(set(group)) != 1:
            break
        common.append(group[0])
    prefix = "_".join(common) + "_"
    for n in enum["values"]:
        rest = n["name"][len(prefix) :]
        assert rest and not rest[0].isdigit(), f"{n['name']}: no Python member name after {prefix}"
    return prefix


def docstring(text: str, indent: str) -> str:
    """A docstring literal for `text` at `indent`."""
    body = one_line(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = textwrap.wrap(body, 85 - len(indent)) or [""]
    if len(lines) == 1 and len(lines[0]) + len(indent) + 6 <= 88:
        return f'{indent}"""{lines[0]}"""\n'
    return f'{indent}"""' + f"\n{indent}".join(lines) + f'\n{indent}"""\n'


def comment(text: str, indent: str = "") -> str:
    return "".join(f"{indent}# {line}\n" for line in textwrap.wrap(one_line(text), 86 - len(indent)))


# ---------------------------------------------------------------------------
# ctypes
# ---------------------------------------------------------------------------


def ctype(t: Dict[str, Any]) -> str:
    """The ctypes type of a model type, by the conventions above."""
    base, pointers = t["base"], t["pointers"]
    levels = len(pointers)
    if levels == 0:
        if base == "void":
            return "None"
        if t["kind"] in ("handle", "enum", "flags", "struct", "callback"):
            return base
        return CTYPES_SCALARS[base]
    if levels == 1 and base == "char":
        return "ctypes.c_char_p"
    if levels == 1 and base == "void":
        return "ctypes.c_void_p"
    if levels == 2 and base == "void" and pointers[0]["const"]:
        return "ctypes.c_void_p"
    inner = dict(t, pointers=pointers[:-1])
    return f"ctypes.POINTER({ctype(inner)})"


def callback_ctype(t: Dict[str, Any]) -> str:
    """The ctypes type of a callback's parameter (see the module docstring)."""
    if t["base"] == "char" and len(t["pointers"]) == 1 and not t["pointers"][0]["const"]:
        return "ctypes.POINTER(ctypes.c_char)"
    if t["kind"] == "struct" and t["pointers"]:
        # Callback types come before the structs: the address, raw.
        return "ctypes.c_void_p"
    return ctype(t)


def callback_cdef(c: Dict[str, Any]) -> str:
    """``typedef int32_t (*cuabi_host_fn)(void*, char*, size_t);``"""
    # A struct a callback points to is declared after the callbacks: by its tag.
    args = (
        ", ".join(
            ("struct " if p["type"]["kind"] == "struct" else "") + p["type"]["c"]
            for p in c["params"]
        )
        or "void"
    )
    return f"typedef {c['returns']['c']} (*{c['name']})({args});"


def c_declaration(f: Dict[str, Any]) -> str:
    args = ", ".join(f"{p['type']['c']} {p['name']}" for p in f["params"]) or "void"
    return f"{f['returns']['c']} {f['name']}({args});"


def api(model: Dict[str, Any]) -> str:
    out: List[str] = [banner("#")]
    out.append(
        '"""include/cuabi/cuabi.h for Python: its constants, an IntEnum or IntFlag\n'
        "per enum, its types, structs and functions as ctypes declares them, the C\n"
        "declarations cffi's cdef takes, and the status names. Both backends and\n"
        ":mod:`cuabi.capi` build on this module; see scripts/regen_api/python.py\n"
        'for the ctypes conventions."""\n\n'
        "from __future__ import annotations\n\n"
        "import ctypes\nimport enum\n"
        "from typing import Any, Dict, List, Tuple\n\n"
    )
    names: List[str] = []

    out.append("# " + "-" * 75 + "\n# Constants\n# " + "-" * 75 + "\n\n")
    for c in model["constants"]:
        if c["doc"]:
            out.append(comment(c["doc"]))
        value = json.dumps(c["value"]) if c["type"] == "string" else str(c["value"])
        out.append(f"{c['name']} = {value}\n")
        names.append(c["name"])
    for e in model["enums"]:
        out.append(f"\n# {e['name']}\n")
        for v in e["values"]:
            out.append(f"{v['name']} = {v['value']}\n")
            names.append(v["name"])

    out.append("\n\n# " + "-" * 75 + "\n# Enums as Python classes\n# " + "-" * 75 + "\n")
    for e in model["enums"]:
        cls = enum_class_name(e)
        prefix = member_prefix(e)
        kind = "enum.IntFlag" if e["is_flag_bits"] else "enum.IntEnum"
        out.append(f"\n\nclass {cls}({kind}):\n")
        doc = e["doc"] or next((f["doc"] for f in model["flags"] if f["bits"] == e["name"]), "")
        out.append(docstring(f"{e['name']}: {doc}" if doc else e["name"], "    "))
        for v in e["values"]:
            out.append(f"\n    {v['name'][len(prefix):]} = {v['value']}\n")
            if v["doc"]:
                out.append(docstring(v["doc"], "    "))
        names.append(cls)

    out.append("\n\n# " + "-" * 75 + "\n# Types\n# " + "-" * 75 + "\n\n")
    for e in model["enums"]:
        if not e["is_flag_bits"]:
            out.append(f"{e['name']} = ctypes.c_int32\n")
            names.append(e["name"])
    for f in model["flags"]:
        out.append(f"{f['name']} = {CTYPES_SCALARS[f['type']]}\n")
        names.append(f["name"])
    for h in model["handles"]:
        out.append(f"{h['name']} = ctypes.c_void_p  # {h['doc']}\n")
        names.append(h["name"])
    for c in model.get("callbacks", []):
        out.append("\n" + comment(c["doc"]))
        args = ", ".join([callback_ctype(c["returns"])] + [callback_ctype(p["type"]) for p in c["params"]])
        out.append(f"{c['name']} = ctypes.CFUNCTYPE({args})\n")
        names.append(c["name"])
    out.append("\nHANDLE_TYPES: Tuple[str, ...] = (\n")
    out += [f'    "{h["name"]}",\n' for h in model["handles"]]
    out.append(")\n")
    names.append("HANDLE_TYPES")
    # The ctypes type of an out-parameter box (CtypesBackend.out): each
    # scalar, a pointer, and a handle. Not exported (capi's names are the header's).
    out.append("\n# The ctypes type of an out-parameter box of each C type (CtypesBackend.out).\n")
    out.append("OUT_BOXES: Dict[str, Any] = {\n")
    out += [f'    "{c}": {t},\n' for c, t in CTYPES_SCALARS.items() if c not in ("char", "uintptr_t")]
    out.append('    "void*": ctypes.c_void_p,\n')
    out += [f'    "{h["name"]}": ctypes.c_void_p,\n' for h in model["handles"]]
    out.append("}\n")

    for s in model["structs"]:
        out.append(f"\n\nclass {s['name']}(ctypes.Structure):\n")
        doc = s["doc"]
        if s["init"]:
            doc += f" {s['init']} fills its defaults."
        out.append(docstring(doc, "    "))
        out.append("\n    _fields_ = [\n")
        for fld in s["fields"]:
            out.append(f'        ("{fld["name"]}", {ctype(fld["type"])}),\n')
        out.append("    ]\n")
        names.append(s["name"])

    out.append("\n\n# " + "-" * 75 + "\n# Functions: (name, restype, argtypes)\n# " + "-" * 75 + "\n\n")
    out.append("DECLARATIONS: List[Tuple[str, Any, List[Any]]] = [\n")
    for f in model["functions"]:
        out.append(f"    # {c_declaration(f)}\n")
        args = ", ".join(ctype(p["type"]) for p in f["params"])
        out.append(f'    ("{f["name"]}", {ctype(f["returns"])}, [{args}]),\n')
    out.append("]\n")
    names.append("DECLARATIONS")

    out.append(
        "\n\nclass Functions:\n"
        '    """Every function of the header, bound once per backend: the\n'
        "    library's function objects as attributes, so that a call looks up no\n"
        "    name. A function the loaded library lacks (an older one of the same\n"
        '    major version) raises AttributeError when called."""\n\n'
    )
    out.append("    __slots__ = (\n")
    out += [f'        "{f["name"]}",\n' for f in model["functions"]]
    out.append("    )\n\n")
    out += [f"    {f['name']}: Any\n" for f in model["functions"]]
    out.append(
        "\n    def __init__(self, lib: Any) -> None:\n"
        "        for name in self.__slots__:\n"
        "            try:\n"
        "                fn = getattr(lib, name)\n"
        "            except AttributeError as exc:\n"
        "                fn = _missing(name, str(exc))\n"
        "            setattr(self, name, fn)\n"
        "\n\n"
        "def _missing(name: str, why: str) -> Any:\n"
        "    def call(*args: Any) -> Any:\n"
        "        raise AttributeError(f\"{name}: {why}\")\n\n"
        "    call.__name__ = name\n"
        "    return call\n"
    )
    names.append("Functions")

    out.append("\n# The symbolic name of each status.\nSTATUS_NAMES: Dict[int, str] = {\n")
    status = next(e for e in model["enums"] if e["name"] == model["conventions"]["status_type"])
    out += [f'    {v["value"]}: "{v["name"]}",\n' for v in status["values"]]
    out.append("}\n")
    names.append("STATUS_NAMES")

    out.append('\n# The header as C declarations for cffi.FFI.cdef (ABI mode).\nCDEF = """\\\n')
    out.append(cdef(model))
    out.append('"""\n')
    names.append("CDEF")

    out.append("\n__all__ = [\n")
    out += [f'    "{n}",\n' for n in names]
    out.append("]\n")
    return "".join(out)


def cdef(model: Dict[str, Any]) -> str:
    """Plain C for cffi: no export macros, each enum a 32-bit signed integer
    (as the header fixes it) with its values as integer constants."""
    out: List[str] = []
    for c in model["constants"]:
        if c["type"] == "int":
            out.append(f"#define {c['name']} {c['value']}\n")
    for e in model["enums"]:
        if not e["is_flag_bits"]:
            out.append(f"typedef int32_t {e['name']};\n")
        out += [f"#define {v['name']} {v['value']}\n" for v in e["values"]]
    for f in model["flags"]:
        out.append(f"typedef {f['type']} {f['name']};\n")
    for h in model["handles"]:
        out.append(f"typedef struct {h['struct']}* {h['name']};\n")
    out += [callback_cdef(c) + "\n" for c in model.get("callbacks", [])]
    for s in model["structs"]:
        fields = " ".join(f"{fld['type']['c']} {fld['name']};" for fld in s["fields"])
        out.append(f"typedef struct {s['name']} {{ {fields} }} {s['name']};\n")
    out += [c_declaration(f) + "\n" for f in model["functions"]]
    return "".join(out)


# ---------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------


def errors(model: Dict[str, Any]) -> str:
    status = next(e for e in model["enums"] if e["name"] == model["conventions"]["status_type"])
    failures = [v for v in status["values"] if v["name"] != model["conventions"]["success"]]
    out: List[str] = [banner("#")]
    out.append(
        '"""One :class:`~cuabi.errors.CudaError` subclass per failure status of\n'
        "include/cuabi/cuabi.h, named after the status (CUABI_ERROR_NOT_FOUND:\n"
        "NotFoundError) and documented as the header documents it. Import them\n"
        'from :mod:`cuabi` or :mod:`cuabi.errors`."""\n\n'
        "from __future__ import annotations\n\n"
        "from typing import Dict, List, Type\n\n"
        "from ._error_base import CudaError\n"
    )
    classes = []
    for v in failures:
        cls = error_class_name(v["name"])
        bases = ", ".join(["CudaError"] + ([PYTHON_BASES[v["name"]]] if v["name"] in PYTHON_BASES else []))
        out.append(f"\n\nclass {cls}({bases}):\n")
        out.append(docstring(f"{v['name']}: {v['doc']}", "    "))
        out.append(f"\n    status = {v['value']}\n")
        assert cls != "CudaError" and cls not in {c for _, c in classes}, f"{v['name']}: {cls} is taken"
        classes.append((v["value"], cls))
    out.append("\n\n# The class raised for each failure status.\nERROR_CLASSES: Dict[int, Type[CudaError]] = {\n")
    out += [f"    {value}: {cls},\n" for value, cls in classes]
    out.append("}\n\n\n")
    out.append(
        "def error_class(status: int) -> Type[CudaError]:\n"
        '    """The exception class raised for ``status`` (CudaError for an unknown one)."""\n'
        "    return ERROR_CLASSES.get(status, CudaError)\n\n\n"
    )
    out.append("__all__: List[str] = [\n")
    out += [f'    "{cls}",\n' for _, cls in classes]
    out.append('    "error_class",\n')
    out.append("]\n")
    return "".join(out)


def errors_facade(model: Dict[str, Any]) -> str:
    """cuabi/errors.py: every exception by name, spelled out for type checkers."""
    status = next(e for e in model["enums"] if e["name"] == model["conventions"]["status_type"])
    names = [error_class_name(v["name"]) for v in status["values"] if v["name"] != model["conventions"]["success"]]
    out: List[str] = [banner("#")]
    out.append(
        '"""Exceptions: one :class:`CudaError` subclass per cuabi status.\n\n'
        "A failing call raises the subclass of its status, carrying the status, its\n"
        "symbolic name and the message of the thread's last error (which names the\n"
        "failing call and the argument or parameter at fault). A failed compile also\n"
        "carries NVRTC's log. The subclasses are generated from the header, one per\n"
        "status, named after it (``CUABI_ERROR_INVALID_HANDLE``:\n"
        ":class:`InvalidHandleError`); some are also the built-in exception Python\n"
        "code expects (:class:`InvalidArgumentError` is a ``ValueError``,\n"
        ':class:`NotFoundError` a ``LookupError`` ...).\n"""\n\n'
        "from __future__ import annotations\n\n"
        "from typing import List\n\n"
        "from ._error_base import CudaError, LibraryNotFoundError, status_name\n"
        "from ._errors import (\n"
    )
    out += [f"    {n},\n" for n in sorted(names + ["error_class"])]
    out.append(")\n\n__all__: List[str] = [\n")
    out += [f'    "{n}",\n' for n in ["CudaError", "LibraryNotFoundError", "error_class", "status_name"] + names]
    out.append("]\n")
    return "".join(out)


# ---------------------------------------------------------------------------
# The version
# ---------------------------------------------------------------------------


def pyproject(model: Dict[str, Any]) -> Optional[str]:
    """pyproject.toml as it is, with [project]'s version set to the header's."""
    path = os.path.join(REPO, PYPROJECT)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    version = model["version"]["string"]
    table = re.search(r"^\[project\]$.*?(?=^\[|\Z)", text, flags=re.M | re.S)
    line = re.compile(r'^version = "[^"\n]*"$', flags=re.M)
    if table is None or not line.search(table.group(0)):
        raise SystemExit(f'regen: no version = "..." line in [project] of {PYPROJECT}')
    stamped = line.sub(f'version = "{version}"', table.group(0), count=1)
    return text[: table.start()] + stamped + text[table.end() :]


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    files = {API: api(model), ERRORS: errors(model), ERRORS_FACADE: errors_facade(model)}
    project = pyproject(model)
    if project is not None:
        files[PYPROJECT] = project
    return files
