"""A reader for ``include/cuabi/cuabi.h``.

The header is written in a deliberately regular style, so a small parser
recovers everything a binding needs from it: the functions with their
argument lists, the integer constants (``#define`` and ``enum``), the scalar
and handle typedefs and the struct layouts. The cffi backend builds its
``cdef`` from this, and the tests use it to check the ctypes declarations.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

__all__ = [
    "Param",
    "Function",
    "Struct",
    "Header",
    "find_header",
    "parse_header",
    "load_header",
    "normalize_type",
]


@dataclass(frozen=True)
class Param:
    """One function parameter: its C type (normalised) and its name."""

    type: str
    name: str


@dataclass(frozen=True)
class Function:
    """One ``CUABI_API`` function."""

    name: str
    restype: str
    params: Tuple[Param, ...]

    def prototype(self) -> str:
        """The declaration as C text, without the export macros."""
        args = ", ".join(f"{p.type} {p.name}" for p in self.params) or "void"
        return f"{self.restype} {self.name}({args});"


@dataclass(frozen=True)
class Struct:
    """A struct typedef with its fields in declaration order."""

    name: str
    fields: Tuple[Param, ...]


@dataclass
class Header:
    """Everything parsed from the header."""

    path: Optional[str]
    text: str
    functions: Dict[str, Function] = field(default_factory=dict)
    constants: Dict[str, int] = field(default_factory=dict)
    string_constants: Dict[str, str] = field(default_factory=dict)
    enum_constants: List[str] = field(default_factory=list)
    scalar_typedefs: Dict[str, str] = field(default_factory=dict)
    handles: Dict[str, str] = field(default_factory=dict)
    structs: Dict[str, Struct] = field(default_factory=dict)

    def cdef(self) -> str:
        """C declarations for ``cffi.FFI.cdef`` (ABI mode)."""
        out: List[str] = []
        for name, value in self.constants.items():
            out.append(f"#define {name} {value}")
        for name, base in self.scalar_typedefs.items():
            out.append(f"typedef {base} {name};")
        for name, tag in self.handles.items():
            out.append(f"typedef struct {tag}* {name};")
        for st in self.structs.values():
            body = " ".join(f"{f.type} {f.name};" for f in st.fields)
            out.append(f"typedef struct {st.name} {{ {body} }} {st.name};")
        for fn in self.functions.values():
            out.append(fn.prototype())
        return "\n".join(out) + "\n"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def header_candidates() -> List[str]:
    """Where the header is looked for, in order."""
    paths = []
    env = os.environ.get("CUABI_HEADER")
    if env:
        paths.append(env)
    # Bundled into the wheel by the build backend.
    paths.append(os.path.join(_PACKAGE_DIR, "include", "cuabi", "cuabi.h"))
    # A source checkout: bindings/python/cuabi -> repository root.
    root = os.path.dirname(os.path.dirname(os.path.dirname(_PACKAGE_DIR)))
    paths.append(os.path.join(root, "include", "cuabi", "cuabi.h"))
    return paths


def find_header() -> str:
    """The path of ``cuabi.h``; FileNotFoundError listing the paths tried."""
    tried = header_candidates()
    for path in tried:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "cuabi.h not found; tried: " + ", ".join(tried) + " (set CUABI_HEADER)"
    )


_header_cache: Dict[str, Header] = {}


def load_header(path: Optional[str] = None) -> Header:
    """Parses the header at ``path`` (default: :func:`find_header`), cached."""
    path = os.path.abspath(path or find_header())
    if path not in _header_cache:
        with open(path, encoding="utf-8") as f:
            _header_cache[path] = parse_header(f.read(), path)
    return _header_cache[path]


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def normalize_type(text: str) -> str:
    """Canonical spelling of a C type: ``const char * const *`` becomes
    ``const char* const*``."""
    text = re.sub(r"\s+", " ", text.strip())
    text = re.sub(r"\s*\*\s*", "* ", text).strip()
    text = re.sub(r"\*\s+(?=\*)", "*", text)
    return text


_INT_LITERAL = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b")


def _eval_int(expr: str, known: Dict[str, int]) -> Optional[int]:
    """Evaluates an integer constant expression (literals with suffixes,
    names already known, + - * << | and parentheses); None if it is not one."""
    expr = _INT_LITERAL.sub(lambda m: str(int(m.group(1), 0)), expr.strip())
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in known:
            return known[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            ops = {
                ast.Add: lambda a, b: a + b,
                ast.Sub: lambda a, b: a - b,
                ast.Mult: lambda a, b: a * b,
                ast.LShift: lambda a, b: a << b,
                ast.BitOr: lambda a, b: a | b,
            }
            for op_type, fn in ops.items():
                if isinstance(node.op, op_type):
                    return fn(ev(node.left), ev(node.right))
        raise ValueError(ast.dump(node))

    try:
        return ev(tree)
    except ValueError:
        return None


def _split_decl(decl: str) -> Param:
    """``const char* const* names`` -> Param(type, name)."""
    decl = decl.strip()
    m = re.match(r"^(.*?)([A-Za-z_]\w*)$", decl, flags=re.S)
    if not m or not m.group(1).strip():
        raise ValueError(f"cannot read declaration {decl!r}")
    return Param(normalize_type(m.group(1)), m.group(2))


def parse_header(text: str, path: Optional[str] = None) -> Header:
    """Parses the header text. Raises ValueError on a construct it does not
    understand, so a change in the header's style cannot go unnoticed."""
    hdr = Header(path=path, text=text)
    code = _strip_comments(text)
    # Join continued preprocessor lines.
    code = code.replace("\\\n", " ")

    # #define NAME value
    for m in re.finditer(r"^[ \t]*#define[ \t]+(\w+)[ \t]+([^\n]+)$", code, re.M):
        name, value = m.group(1), m.group(2).strip()
        if name.startswith("CUABI_") and value.startswith('"'):
            hdr.string_constants[name] = ast.literal_eval(value)
            continue
        number = _eval_int(value, hdr.constants)
        if number is not None and name.startswith("CUABI_"):
            hdr.constants[name] = number

    # Drop the preprocessor lines for the rest.
    body = re.sub(r"^[ \t]*#[^\n]*$", " ", code, flags=re.M)
    body = body.replace('extern "C" {', " ")

    # Anonymous enums.
    for m in re.finditer(r"\benum\s*\{(.*?)\}\s*;", body, re.S):
        for item in m.group(1).split(","):
            item = item.strip()
            if not item:
                continue
            name, _, value = item.partition("=")
            name = name.strip()
            number = _eval_int(value, hdr.constants) if value else None
            if number is None:
                raise ValueError(f"enum constant {item!r} needs an explicit value")
            hdr.constants[name] = number
            hdr.enum_constants.append(name)

    # Scalar typedefs: typedef int32_t cuabi_status;
    for m in re.finditer(r"\btypedef\s+((?:u?int\d+_t|size_t))\s+(\w+)\s*;", body):
        hdr.scalar_typedefs[m.group(2)] = m.group(1)

    # Handles: typedef struct cuabi_device_s* cuabi_device;
    for m in re.finditer(r"\btypedef\s+struct\s+(\w+)\s*\*\s*(\w+)\s*;", body):
        hdr.handles[m.group(2)] = m.group(1)

    # Structs: typedef struct name { ... } name;
    for m in re.finditer(
        r"\btypedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", body, re.S
    ):
        if m.group(1) != m.group(3):
            raise ValueError(
                f"struct tag {m.group(1)} differs from typedef {m.group(3)}"
            )
        fields: List[Param] = []
        for decl in m.group(2).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            first, *more = [d.strip() for d in decl.split(",")]
            p = _split_decl(first)
            fields.append(p)
            for extra in more:
                if not re.fullmatch(r"\w+", extra):
                    raise ValueError(f"cannot read field list {decl!r}")
                fields.append(Param(p.type, extra))
        hdr.structs[m.group(1)] = Struct(m.group(1), tuple(fields))

    # Functions: CUABI_API <ret> CUABI_CALL name(params);
    fn_re = re.compile(
        r"\bCUABI_API\s+(.*?)\s*\bCUABI_CALL\s+(\w+)\s*\((.*?)\)\s*;", re.S
    )
    for m in fn_re.finditer(body):
        restype, name, params_text = normalize_type(m.group(1)), m.group(2), m.group(3)
        params_text = params_text.strip()
        params: Tuple[Param, ...] = ()
        if params_text and params_text != "void":
            params = tuple(_split_decl(p) for p in params_text.split(","))
        hdr.functions[name] = Function(name, restype, params)
    declared = len(re.findall(r"\bCUABI_API\s+[^#]", body))
    if declared != len(hdr.functions):
        raise ValueError(
            f"read {len(hdr.functions)} functions but the header has {declared} CUABI_API declarations"
        )
    return hdr
