"""Reads include/cuabi/cuabi.h with a real C parser and describes the API.

The header is the one source of truth. The C preprocessor (cc -E) expands it
against the minimal C library stand-ins in fake_libc/, pycparser parses the
result, and the comments are taken from the header text by position: the
comment block that ends on the line just above a declaration, or the comment
that trails it on its own line. The description is plain data (dicts, lists,
strings, numbers): it is written out as include/cuabi/cuabi.json, and every
emitter beside this file reads only it.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any, Dict, List, Optional, Tuple

from pycparser import c_ast, c_parser

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
HEADER = os.path.join(REPO, "include", "cuabi", "cuabi.h")
FAKE_LIBC = os.path.join(HERE, "fake_libc")

# Enumerators that only fix an enum's width; they are no values to pass.
FORCE32_SUFFIX = "_FORCE32"

# Macros that are no API constants.
SKIP_MACROS = {"CUABI_API", "CUABI_CALL", "CUABI_CUABI_H", "CUABI_ENUM_BASE"}

SCALARS = {
    "void": "void",
    "char": "char",
    "float": "float",
    "double": "double",
    "size_t": "size",
    "int8_t": "int",
    "int16_t": "int",
    "int32_t": "int",
    "int64_t": "int",
    "uint8_t": "uint",
    "uint16_t": "uint",
    "uint32_t": "uint",
    "uint64_t": "uint",
    "uintptr_t": "uint",
}


def _cc() -> str:
    return os.environ.get("CC", "cc")


def _preprocess(path: str, extra: str = "", macros_only: bool = False) -> str:
    args = [_cc(), "-E", "-nostdinc", "-I", FAKE_LIBC, "-D__attribute__(x)=", "-x", "c"]
    if macros_only:
        args.append("-dM")
    args.append("-")
    text = f'#include "{path}"\n{extra}'
    out = subprocess.run(args, input=text, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"regen: the preprocessor failed on {path}:\n{out.stderr}")
    return out.stdout


# ---------------------------------------------------------------------------
# Comments, by position
# ---------------------------------------------------------------------------


class Comments:
    """Every /* */ comment of the header with the lines it spans."""

    def __init__(self, text: str) -> None:
        self.blocks: List[Tuple[int, int, str, bool]] = []  # start, end, body, alone on its lines
        lines = text.split("\n")
        i, line, n = 0, 1, len(text)
        while i < n:
            c = text[i]
            if c == "\n":
                line += 1
                i += 1
            elif c == '"':
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
            elif text.startswith("/*", i):
                j = text.index("*/", i + 2)
                body = text[i + 2 : j]
                start, end = line, line + body.count("\n")
                first = lines[start - 1]
                alone = first.strip().startswith("/*")
                self.blocks.append((start, end, body, alone))
                line = end
                i = j + 2
            else:
                i += 1
        self.by_end = {b[1]: b for b in self.blocks if b[3]}
        self.trailing = {b[0]: b for b in self.blocks if not b[3]}
        self.lines = lines

    @staticmethod
    def clean(body: str) -> str:
        out = []
        for raw in body.split("\n"):
            s = raw.strip()
            if s.startswith("*"):
                s = s[1:]
                if s.startswith(" "):
                    s = s[1:]
            out.append(s.rstrip())
        while out and not out[0].strip():
            out.pop(0)
        while out and not out[-1].strip():
            out.pop()
        return "\n".join(out)

    def above(self, line: int) -> Optional[str]:
        """The comment block that ends on the line just above `line`."""
        b = self.by_end.get(line - 1)
        if b is None or b[2].strip().startswith("-"):
            return None
        return self.clean(b[2])

    def on(self, line: int) -> Optional[str]:
        """A comment trailing code on `line`."""
        b = self.trailing.get(line)
        return self.clean(b[2]) if b else None

    def doc(self, line: int) -> Optional[str]:
        return self.on(line) or self.above(line)

    def sections(self) -> List[Tuple[int, str]]:
        """The header's boxed section titles, with their lines."""
        out = []
        for start, end, body, alone in self.blocks:
            s = body.strip()
            rule = self.by_end.get(start - 1)
            if alone and start == end and s and not s.startswith("-") and rule and rule[2].strip().startswith("-"):
                out.append((start, s))
        return out


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def _type(node: Any, kinds: Dict[str, str]) -> Dict[str, Any]:
    """A declaration's type as data: the base type, its constness and the
    pointer levels from the base outwards, each with its own constness."""
    pointers: List[Dict[str, bool]] = []
    while isinstance(node, c_ast.PtrDecl):
        pointers.append({"const": "const" in node.quals})
        node = node.type
    pointers.reverse()
    if isinstance(node, c_ast.ArrayDecl):
        raise SystemExit("regen: arrays in declarations are not supported")
    assert isinstance(node, c_ast.TypeDecl), node
    inner = node.type
    if isinstance(inner, c_ast.IdentifierType):
        base = " ".join(inner.names)
    elif isinstance(inner, (c_ast.Struct, c_ast.Enum)):
        base = inner.name
    else:
        raise SystemExit(f"regen: unsupported type node {type(inner).__name__}")
    base_const = "const" in node.quals
    text = ("const " if base_const else "") + base
    for p in pointers:
        text += "* const" if p["const"] else "*"
    text = text.replace("* const*", "* const*")
    return {
        "c": text,
        "base": base,
        "kind": kinds.get(base, "unknown"),
        "const": base_const,
        "pointers": pointers,
    }


# ---------------------------------------------------------------------------
# Constant expressions
# ---------------------------------------------------------------------------


def _int_literal(text: str) -> int:
    t = text.rstrip("uUlL")
    return int(t, 0) if not (len(t) > 1 and t[0] == "0" and t[1].isdigit()) else int(t, 8)


def _evaluate(node: Any, names: Dict[str, int]) -> Any:
    if isinstance(node, c_ast.Constant):
        if node.type == "string":
            return bytes(node.value[1:-1], "utf-8").decode("unicode_escape")
        return _int_literal(node.value)
    if isinstance(node, c_ast.ID):
        return names[node.name]
    if isinstance(node, c_ast.UnaryOp):
        v = _evaluate(node.expr, names)
        return {"-": -v, "+": v, "~": ~v}[node.op]
    if isinstance(node, c_ast.Cast):
        return _evaluate(node.expr, names)
    if isinstance(node, c_ast.BinaryOp):
        a, b = _evaluate(node.left, names), _evaluate(node.right, names)
        ops = {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "<<": lambda: a << b,
            ">>": lambda: a >> b,
            "|": lambda: a | b,
            "&": lambda: a & b,
        }
        return ops[node.op]()
    raise SystemExit(f"regen: cannot evaluate {type(node).__name__} in a constant")


# ---------------------------------------------------------------------------
# The description
# ---------------------------------------------------------------------------


def _object_of(name: str, handles: List[str]) -> Optional[str]:
    """The object a function acts on, by the header's naming rule."""
    best = None
    for h in handles:
        obj = h[len("cuabi_") :]
        if name.startswith(f"cuabi_{obj}_") and (best is None or len(obj) > len(best)):
            best = obj
    return best


def describe(header: str = HEADER) -> Dict[str, Any]:
    with open(header, encoding="utf-8") as f:
        source = f.read()
    comments = Comments(source)
    sections = comments.sections()

    def section_of(line: int) -> str:
        title = ""
        for at, name in sections:
            if at < line:
                title = name
        return title

    text = _preprocess(header)
    ast = c_parser.CParser().parse(text, filename=header)

    # First pass: what each type name is.
    kinds: Dict[str, str] = dict(SCALARS)
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef) and ext.coord.file == header:
            t = ext.type
            if isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.FuncDecl):
                kinds[ext.name] = "callback"
            elif isinstance(t, c_ast.PtrDecl) and isinstance(t.type.type, c_ast.Struct):
                kinds[ext.name] = "handle"
            elif isinstance(t.type, c_ast.Enum):
                kinds[ext.name] = "enum"
            elif isinstance(t.type, c_ast.Struct):
                kinds[ext.name] = "struct"
            elif isinstance(t.type, c_ast.IdentifierType):
                kinds[ext.name] = "flags"

    handles: List[Dict[str, Any]] = []
    callbacks: List[Dict[str, Any]] = []
    enums: List[Dict[str, Any]] = []
    flags: List[Dict[str, Any]] = []
    structs: List[Dict[str, Any]] = []
    functions: List[Dict[str, Any]] = []
    enum_values: Dict[str, int] = {}

    for ext in ast.ext:
        if ext.coord is None or ext.coord.file != header:
            continue
        line = ext.coord.line
        if isinstance(ext, c_ast.Typedef):
            t = ext.type
            kind = kinds[ext.name]
            if kind == "callback":
                fd = t.type
                callbacks.append(
                    {
                        "name": ext.name,
                        "returns": _type(fd.type, kinds),
                        "params": [
                            {"name": p.name, "type": _type(p.type, kinds)}
                            for p in (fd.args.params if fd.args else [])
                            if not isinstance(p, c_ast.Typename)
                        ],
                        "doc": comments.above(line) or "",
                    }
                )
            elif kind == "handle":
                handles.append(
                    {
                        "name": ext.name,
                        "struct": t.type.type.name,
                        "object": ext.name[len("cuabi_") :],
                        "doc": comments.on(line) or "",
                    }
                )
            elif kind == "enum":
                enum = t.type
                values = []
                current = -1
                for e in enum.values.enumerators:
                    current = _evaluate(e.value, enum_values) if e.value is not None else current + 1
                    enum_values[e.name] = current
                    if e.name.endswith(FORCE32_SUFFIX):
                        continue
                    values.append(
                        {"name": e.name, "value": current, "doc": comments.doc(e.coord.line) or ""}
                    )
                doc_line = enum.coord.line if enum.coord else line
                enums.append(
                    {
                        "name": ext.name,
                        "doc": comments.above(doc_line) or "",
                        "is_flag_bits": ext.name.endswith("_flag_bits"),
                        "values": values,
                        "section": section_of(line),
                    }
                )
            elif kind == "struct":
                st = t.type
                fields = []
                for d in st.decls:
                    fields.append(
                        {"name": d.name, "type": _type(d.type, kinds), "doc": comments.on(d.coord.line) or ""}
                    )
                doc_line = st.coord.line if st.coord else line
                structs.append(
                    {
                        "name": ext.name,
                        "doc": comments.above(doc_line) or "",
                        "versioned": bool(fields) and fields[0]["name"] == "struct_size",
                        "fields": fields,
                        "section": section_of(line),
                    }
                )
            elif kind == "flags":
                flags.append(
                    {
                        "name": ext.name,
                        "type": " ".join(t.type.names),
                        "bits": ext.name[: -len("_flags")] + "_flag_bits",
                        "doc": comments.above(line) or "",
                    }
                )
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            fd = ext.type
            params = []
            for p in fd.args.params if fd.args else []:
                if isinstance(p, c_ast.Typename):
                    continue  # (void)
                params.append({"name": p.name, "type": _type(p.type, kinds)})
            name = ext.name
            functions.append(
                {
                    "name": name,
                    "returns": _type(fd.type, kinds),
                    "params": params,
                    "doc": comments.above(line) or "",
                    "section": section_of(line),
                    "object": _object_of(name, [h["name"] for h in handles]),
                    "releases": name.endswith("_release"),
                }
            )
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.Enum):
            raise SystemExit(f"regen: {header}:{line}: an anonymous enum; name it with a typedef")

    # Which struct each *_init function fills, and its _INIT macro.
    for s in structs:
        init = s["name"] + "_init"
        s["init"] = init if any(f["name"] == init for f in functions) else None
        s["init_macro"] = s["name"].upper() + "_INIT"

    # Object-like CUABI_ macros with a constant value.
    defines = _preprocess(header, macros_only=True)
    candidates = []
    for raw in defines.split("\n"):
        parts = raw.split(None, 2)
        if len(parts) < 3 or parts[0] != "#define":
            continue
        name, value = parts[1], parts[2]
        if not name.startswith("CUABI_") or "(" in name or name in SKIP_MACROS:
            continue
        if value.lstrip().startswith("{"):
            continue  # a struct initialiser: the _INIT macros
        candidates.append(name)
    probe = "".join(f"int __regen_{n} = ({n});\n" for n in candidates)
    probe_ast = c_parser.CParser().parse(_preprocess(header, probe), filename="<probe>")
    constants = []
    for ext in probe_ast.ext:
        if isinstance(ext, c_ast.Decl) and ext.name and ext.name.startswith("__regen_"):
            name = ext.name[len("__regen_") :]
            line = _macro_line(comments.lines, name)
            value = _evaluate(ext.init, enum_values)
            constants.append(
                {
                    "name": name,
                    "value": value,
                    "type": "string" if isinstance(value, str) else "int",
                    "doc": (comments.above(line) if line else None) or "",
                }
            )
    constants.sort(key=lambda c: _macro_line(comments.lines, c["name"]) or 0)

    version = {c["name"]: c["value"] for c in constants if c["name"].startswith("CUABI_VERSION_")}
    return {
        "name": "cuabi",
        "description": "The whole C API of cuabi, described from include/cuabi/cuabi.h.",
        "header": "cuabi/cuabi.h",
        "library": {"linux": "libcuabi.so.0", "macos": "libcuabi.0.dylib", "windows": "cuabi.dll"},
        "version": {
            "major": version["CUABI_VERSION_MAJOR"],
            "minor": version["CUABI_VERSION_MINOR"],
            "patch": version["CUABI_VERSION_PATCH"],
            "string": version["CUABI_VERSION_STRING"],
        },
        "conventions": {
            "status_type": "cuabi_status",
            "success": "CUABI_SUCCESS",
            "force32_suffix": FORCE32_SUFFIX,
            "enum_width_bits": 32,
            "two_call_pattern": "buf = NULL learns the size; a too-small buffer answers "
            "CUABI_ERROR_INSUFFICIENT_BUFFER and stores the size needed",
        },
        "constants": constants,
        "handles": handles,
        "callbacks": callbacks,
        "enums": enums,
        "flags": flags,
        "structs": structs,
        "functions": functions,
    }


def _macro_line(lines: List[str], name: str) -> Optional[int]:
    for i, line in enumerate(lines):
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] == "#define" and parts[1] == name:
            return i + 1
    return None


def type_of(model: Dict[str, Any], name: str) -> str:
    """The kind of a type name: handle, enum, flags, struct or a scalar kind."""
    for h in model["handles"]:
        if h["name"] == name:
            return "handle"
    for c in model.get("callbacks", []):
        if c["name"] == name:
            return "callback"
    for e in model["enums"]:
        if e["name"] == name:
            return "enum"
    for f in model["flags"]:
        if f["name"] == name:
            return "flags"
    for s in model["structs"]:
        if s["name"] == name:
            return "struct"
    return SCALARS.get(name, "unknown")
