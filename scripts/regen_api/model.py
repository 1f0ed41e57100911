"""Reads include/cuabi/cuabi.h with a real C parser and describes the API.

The header is the one source of truth. The C preprocessor (cc -E) expands it
against the minimal C library stand-ins in fake_libc/, pycparser parses the
result, and the comments are taken from the header text by position: the
comment block that ends on the line just above a declaration, or the comment
that trails it on its own line. Documentation comments are Doxygen's
(`/** ... */` above, `/**< ... */` trailing); the model reads them and plain
`/* */` ones alike, and skips Doxygen's member-group marks (`/**@{*/`,
`/**@}*/`). A comment above a group of functions (declared on consecutive
lines, with no blank line or comment between them) is each member's. The
description is plain data (dicts, lists, strings, numbers): it is written out
as include/cuabi/cuabi.json, and every emitter beside this file reads only it.
"""

from __future__ import annotations

import os
import re
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


# Doxygen's member-group marks: they open and close a group of declarations
# that share one comment, and document nothing themselves.
GROUP_MARKS = ("@{", "@}")


class Comments:
    """Every /* */ comment of the header with the lines it spans. A Doxygen
    opener's own mark (the second `*` of `/**`, the `*<` of `/**<`) is no
    part of the text; member-group marks are no comments here."""

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
                if body.startswith("*<"):
                    body = body[2:]
                elif body.startswith("*"):
                    body = body[1:]
                if body.strip() not in GROUP_MARKS:
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
        for n, raw in enumerate(body.split("\n")):
            s = raw.strip()
            # A continuation line's leading `*` is layout; the first line's
            # text starts right after the opener (`*word == value`).
            if n > 0 and s.startswith("*"):
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

    # The function declared just before, while it ends on the line above the
    # next declaration: (its last line, its comment) for the group rule.
    previous: Optional[Tuple[int, str]] = None
    for ext in ast.ext:
        if ext.coord is None or ext.coord.file != header:
            continue
        line = ext.coord.line
        group_above, previous = previous, None
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
                        {"name": d.name, "type": _type(d.type, kinds), "doc": comments.doc(d.coord.line) or ""}
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
            doc = comments.above(line)
            if doc is None and group_above is not None and group_above[0] == line - 1:
                # A member of a group: the comment above the group is its own too.
                doc = group_above[1]
            doc = doc or ""
            previous = (_end_line(comments.lines, line), doc)
            functions.append(
                {
                    "name": name,
                    "returns": _type(fd.type, kinds),
                    "params": params,
                    "doc": doc,
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
        # A value struct: versioned, filled by its init, and nothing in it but
        # numbers, enums and flag sets. Every language's object layer gives it
        # a value type of its own (the init's defaults, then the fields set),
        # so the functions that take or fill one need no hand-written form.
        s["value"] = bool(
            s["versioned"]
            and s["init"]
            and all(not f["type"]["pointers"] and f["type"]["kind"] in VALUE_KINDS for f in s["fields"][1:])
        )
        # A built struct: versioned, filled by its init, and naming cuabi
        # objects or host memory (handles, pointers). Each language lays it
        # out from one hand-written type of its own (Python's Copy3dOp, Rust's
        # Copy3d, C#'s Copy3D: what pins, borrows and checks the host side),
        # and every function taking it is generated over that type.
        s["built"] = bool(
            s["versioned"]
            and s["init"]
            and not s["value"]
            and any(f["type"]["pointers"] or f["type"]["kind"] == "handle" for f in s["fields"][1:])
        )

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

    statuses = next(e for e in enums if e["name"] == "cuabi_status")
    status_names = [v["name"] for v in statuses["values"]]
    for fn in functions:
        assign_roles(fn, handles, structs, callbacks, status_names)
    check_scopes(functions)

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
            "calls": list(CALLS),
            "roles": list(ROLES),
            "idioms": dict(IDIOMS),
        },
        "constants": constants,
        "handles": handles,
        "callbacks": callbacks,
        "enums": enums,
        "flags": flags,
        "structs": structs,
        "functions": functions,
    }


def _end_line(lines: List[str], line: int) -> int:
    """The line of the `;` that ends the declaration starting on `line`."""
    at = line
    while at < len(lines) and ";" not in lines[at - 1]:
        at += 1
    return at


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


# ---------------------------------------------------------------------------
# Roles: what each function and parameter means
# ---------------------------------------------------------------------------
#
# Every function gains `call`, `receiver`, `statuses`, `idiom`, `method`,
# `property` and `ready_query`; every parameter gains `role` and the keys that
# go with it (`handle_type`, `count`, `of`, `size`, `struct`, `init`,
# `user_data`, `nullable`, `null_means`).
#
# `method` is the object-layer name, the same in every language: the function
# name without cuabi_<object>_ (cuabi_buffer_alloc -> alloc); for a free
# function (no receiver: library calls and receiver-less strings) the name
# without cuabi_ and its first get_ (cuabi_driver_get_version ->
# driver_version). `property` is set where the call reads like a field: a
# getter whose parameters besides the receiver are all out-parameters (one:
# the value; several: a tuple/struct), a two-call string or blob with no
# input, a setter with one input; it is the method name without get_/set_.
# `ready_query` marks *_query: CUABI_SUCCESS answers true and
# CUABI_ERROR_NOT_READY false, neither being a failure. The rules are the header's naming rules, set out
# in its Conventions comment ("Roles."); where they do not decide, the doc
# comment carries annotation lines (`@param`, `@nullable`, `@idiom`, `@call`,
# `@status`), which are taken out of the function's `doc`. A parameter left
# without a role stops scripts/regen with a message naming the function and
# the parameter.

VALUE_KINDS = ("int", "uint", "size", "float", "enum", "flags")

CALLS = ("constructor", "getter", "setter", "action", "release", "string", "blob", "struct_init", "library")

ROLES = (
    "receiver",
    "handle",
    "in",
    "out",
    "out_handle",
    "inout",
    "string_in",
    "array_in",
    "array_out",
    "count",
    "bytes_in",
    "bytes_out",
    "size",
    "two_call_buf",
    "two_call_size",
    "struct_in",
    "struct_out",
    "callback",
    "user_data",
)

# Functions whose object-layer form every language writes by hand.
IDIOMS = {
    "launch": "a kernel launch or its argument block (cuabi_function_launch*, cuabi_launch_plan_*, "
    "graph-exec kernel-node arguments)",
    "arg_packing": "a kernel's parameter layout, read to pack arguments",
    "ipc": "IPC handle bytes, exported or opened",
    "host_callback": "a host function run by the driver",
    "host_view": "host memory that must outlive the call (asynchronous host copies, registered "
    "host memory): a view, not a copy",
    "dlpack": "a DLPack tensor handed over or taken over (its deleter and its framework's "
    "capsule or object)",
}

ROLE_KEYS = {
    "handle_type",
    "count",
    "of",
    "size",
    "struct",
    "init",
    "user_data",
}

_NULL_DOC = [
    # `x` (NULL: meaning)
    re.compile(r"`(\w+)`\s*\(NULL:\s*((?:[^()]|\([^()]*\))*)\)"),
    # `x` NULL: meaning.
    re.compile(r"`(\w+)`\s+NULL:\s*([^.;]*)"),
    # `x` (optional)
    re.compile(r"`(\w+)`\s*\((optional)\)"),
]


class RoleError(SystemExit):
    pass


def _fail(fn: Dict[str, Any], param: Optional[str], why: str) -> None:
    where = f"{fn['name']}, parameter `{param}`" if param else fn["name"]
    raise RoleError(
        f"regen: {where}: {why}. Annotate its doc comment in include/cuabi/cuabi.h "
        "(see \"Roles.\" in the header's Conventions), e.g. `@param <name> <role> [count=<param>]`."
    )


def parse_annotations(fn: Dict[str, Any]) -> Dict[str, Any]:
    """The annotation lines of a function's doc comment, taken out of it."""
    keep: List[str] = []
    notes: Dict[str, Any] = {
        "params": {},
        "nullable": {},
        "idiom": None,
        "call": None,
        "statuses": [],
        "scope": None,
    }
    for line in fn["doc"].split("\n"):
        s = line.strip()
        if not s.startswith("@"):
            keep.append(line)
            continue
        tag, _, rest = s.partition(" ")
        rest = rest.strip()
        if tag == "@param":
            words = rest.split()
            if len(words) < 2:
                _fail(fn, None, f"`{s}`: @param needs a parameter name and a role")
            name, role = words[0], words[1]
            if role not in ROLES:
                _fail(fn, name, f"`{s}`: unknown role `{role}` (one of {', '.join(ROLES)})")
            keys: Dict[str, Any] = {"role": role}
            for w in words[2:]:
                k, eq, v = w.partition("=")
                if not eq or k not in ROLE_KEYS:
                    _fail(fn, name, f"`{s}`: `{w}` is no key=value of {sorted(ROLE_KEYS)}")
                keys[k] = v
            notes["params"][name] = keys
        elif tag == "@nullable":
            name, colon, means = rest.partition(":")
            notes["nullable"][name.strip()] = means.strip() if colon else ""
        elif tag == "@idiom":
            if rest not in IDIOMS:
                _fail(fn, None, f"`{s}`: unknown idiom (one of {', '.join(IDIOMS)})")
            notes["idiom"] = rest
        elif tag == "@call":
            if rest not in CALLS:
                _fail(fn, None, f"`{s}`: unknown call kind (one of {', '.join(CALLS)})")
            notes["call"] = rest
        elif tag == "@status":
            notes["statuses"] += rest.split()
        elif tag == "@scope":
            words = rest.split()
            if len(words) not in (2, 3) or not words[1].startswith("cuabi_") or words[2:] not in ([], ["thread"]):
                _fail(fn, None, f"`{s}`: @scope needs a name, the closing function and optionally `thread`")
            # `thread`: the scope belongs to the thread that opened it.
            notes["scope"] = {"name": words[0], "closer": words[1], "thread": words[2:] == ["thread"]}
        else:
            _fail(fn, None, f"unknown annotation `{tag}` (@param, @nullable, @idiom, @call, @status, @scope)")
    while keep and not keep[-1].strip():
        keep.pop()
    fn["doc"] = "\n".join(keep)
    return notes


def check_scopes(functions: List[Dict[str, Any]]) -> None:
    """A scope (`@scope <name> <closer>`): the closer exists, and each of its
    parameters is one of the opener's inputs by name (the scope keeps them
    and passes them on when it closes). Every language's object layer makes
    the scope its own way: a context manager, a guard, an IDisposable, RAII."""
    by_name = {f["name"]: f for f in functions}
    for fn in functions:
        scope = fn.get("scope")
        if not scope:
            continue
        closer = by_name.get(scope["closer"])
        if closer is None:
            _fail(fn, None, f"@scope names {scope['closer']}, which the header does not declare")
        inputs = {p["name"] for p in fn["params"] if p["role"] in ("in", "string_in", "handle", "receiver")}
        for p in closer["params"]:
            if p["name"] not in inputs:
                _fail(fn, None, f"@scope: {closer['name']}'s parameter `{p['name']}` is none of this call's inputs")
        if any(p["role"] not in ("in", "string_in", "handle", "receiver") for p in fn["params"]):
            _fail(fn, None, "@scope: an opening call with outputs")
        scope["keeps"] = [p["name"] for p in closer["params"]]


def _strip_prefix(name: str, prefixes: List[str]) -> str:
    for prefix in prefixes:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def assign_roles(
    fn: Dict[str, Any],
    handles: List[Dict[str, Any]],
    structs: List[Dict[str, Any]],
    callbacks: List[Dict[str, Any]],
    status_names: List[str],
) -> None:
    """Fills in the roles of `fn` and its parameters, or stops naming what
    cannot be decided."""
    notes = parse_annotations(fn)
    handle_names = {h["name"] for h in handles}
    struct_by_name = {s["name"]: s for s in structs}
    callback_names = {c["name"] for c in callbacks}
    params = fn["params"]
    by_name = {p["name"]: p for p in params}
    name = fn["name"]
    own = f"cuabi_{fn['object']}" if fn["object"] else None

    for pname in list(notes["params"]) + list(notes["nullable"]):
        if pname not in by_name:
            _fail(fn, pname, "an annotation names a parameter the function does not have")

    def ptrs(p: Dict[str, Any]) -> int:
        return len(p["type"]["pointers"])

    def is_size(p: Optional[Dict[str, Any]], levels: int) -> bool:
        return p is not None and p["type"]["base"] == "size_t" and ptrs(p) == levels

    def claim(p: Dict[str, Any], role: str, **keys: Any) -> None:
        if "role" in p and p["role"] != role:
            _fail(fn, p["name"], f"is both {p['role']} and {role}")
        p["role"] = role
        p.update(keys)

    # Annotated parameters first: they decide, and the rules fill in the rest.
    for pname, keys in notes["params"].items():
        p = by_name[pname]
        p.update(keys)
        other = {"count": "of", "size": "of", "two_call_size": "of"}
        for k in ("count", "size"):
            if k in keys and keys[k] in by_name:
                q = by_name[keys[k]]
                if "role" not in q:
                    q["role"] = "two_call_size" if p["role"] == "two_call_buf" else k
                    q["of"] = pname
        del other

    struct_init = (
        name.endswith("_init")
        and len(params) == 2
        and params[0]["type"]["base"] in struct_by_name
        and params[1]["name"] == "struct_size"
    )
    if struct_init:
        s = params[0]["type"]["base"]
        claim(params[0], "struct_out", struct=s, init=name)
        claim(params[1], "size", of=params[0]["name"])

    has_callback = any(p["type"]["base"] in callback_names for p in params)
    for i, p in enumerate(params):
        if "role" in p:
            continue
        t = p["type"]
        base, n = t["base"], ptrs(p)
        nxt = params[i + 1] if i + 1 < len(params) else None
        if base in handle_names and n == 0:
            claim(p, "handle", handle_type=base)
        elif base in handle_names and n == 1 and not t["const"]:
            claim(p, "out_handle", handle_type=base)
        elif base in callback_names and n == 0:
            user = next((q["name"] for q in params if q["name"] == "user_data"), None)
            if user is None:
                _fail(fn, p["name"], "a callback without a `user_data` parameter")
            claim(p, "callback", user_data=user)
        elif p["name"] == "user_data" and base == "void" and n == 1 and has_callback:
            claim(p, "user_data")
        elif base == "char" and n == 1 and t["const"]:
            claim(p, "string_in")
        elif base in ("char", "void") and n == 1 and not t["const"] and is_size(nxt, 1):
            assert nxt is not None
            claim(p, "two_call_buf", size=nxt["name"])
            claim(nxt, "two_call_size", of=p["name"])
        elif base == "void" and n == 1 and is_size(nxt, 0):
            assert nxt is not None
            claim(p, "bytes_in" if t["const"] else "bytes_out", size=nxt["name"])
            claim(nxt, "size", of=p["name"])
        elif base in struct_by_name and n == 1:
            if nxt is not None and nxt["type"]["base"] == "size_t" and "role" not in nxt:
                _fail(fn, p["name"], f"a {base}* followed by a size_t: one struct or an array of them?")
            keys = {"struct": base}
            if struct_by_name[base].get("versioned"):
                keys["init"] = base + "_init"
            claim(p, "struct_in" if t["const"] else "struct_out", **keys)
        elif (n == 1 and t["const"]) or (n == 2 and t["pointers"][0]["const"]):
            # An array in: `const T*` or `T* const*`. Its count is the size_t
            # named num_<name>, or a `count` right after it.
            count = by_name.get("num_" + p["name"])
            if count is None and nxt is not None and nxt["name"] == "count" and is_size(nxt, 0):
                count = nxt
            if count is None or not is_size(count, 0):
                _fail(fn, p["name"], "an array whose count cannot be told (no num_<name>, no `count` after it)")
            assert count is not None
            claim(p, "array_in", count=count["name"])
            if "role" not in count:
                claim(count, "count", of=p["name"])
        elif n == 0:
            claim(p, "in")
        elif n == 1 and base == "void":
            _fail(fn, p["name"], "a void* without a size: a byte range, a view or user data?")
        elif not t["const"]:
            claim(p, "out")
        else:
            _fail(fn, p["name"], "no rule gives it a role")

    # Nullable parameters: annotated, said in the doc comment, or a stream
    # that is not the receiver (NULL: the default stream).
    for pname, means in notes["nullable"].items():
        by_name[pname]["nullable"] = True
        by_name[pname]["null_means"] = means
    for rx in _NULL_DOC:
        for m in rx.finditer(fn["doc"]):
            p = by_name.get(m.group(1))
            if p is not None and "nullable" not in p and ptrs(p) + (p["type"]["base"] in handle_names) > 0:
                p["nullable"] = True
                p["null_means"] = " ".join(m.group(2).split())

    # Flags: an int32_t out whose comment reads "`x` receives 1 when ..."
    # answers 1 or 0, a bool in each language.
    for p in params:
        if (
            p["role"] == "out"
            and p["type"]["base"] == "int32_t"
            and ptrs(p) == 1
            and f"`{p['name']}` receives 1 when" in " ".join(fn["doc"].split())
        ):
            p["flag"] = True

    # The call kind and the receiver.
    outs_new = [p for p in params if p["role"] == "out_handle"]
    receiver = None
    if notes["call"] is None or notes["call"] not in ("library", "struct_init"):
        if own is not None and own in handle_names:
            receiver = next((p for p in params if p["role"] == "handle" and p["type"]["base"] == own), None)
    makes_own = len(outs_new) == 1 and own is not None and outs_new[0]["handle_type"] == own
    if makes_own:
        # A constructor: its receiver is the handle it is made from, if any.
        receiver = next((p for p in params if p["role"] == "handle"), None)
    roles = [p["role"] for p in params]
    if notes["call"]:
        call = notes["call"]
    elif fn["releases"]:
        call = "release"
    elif struct_init:
        call = "struct_init"
    elif makes_own:
        call = "constructor"
    elif "two_call_buf" in roles:
        buf = next(p for p in params if p["role"] == "two_call_buf")
        call = "string" if buf["type"]["base"] == "char" else "blob"
    elif receiver is None:
        call = "library"
    elif "_set_" in name:
        call = "setter"
    elif "_get_" in name and any(r in ("out", "out_handle", "struct_out", "array_out") for r in roles):
        call = "getter"
    else:
        call = "action"
    if call in ("library", "struct_init"):
        receiver = None
    if receiver is not None:
        receiver["role"] = "receiver"
        for k in ("handle_type", "nullable", "null_means"):
            receiver.pop(k, None)

    for p in params:
        if p["role"] == "handle" and p["type"]["base"] == "cuabi_stream" and "nullable" not in p:
            if "(not NULL)" not in fn["doc"]:
                p["nullable"] = True
                p["null_means"] = "the default stream"
        if p.get("nullable") and not p.get("null_means"):
            p["null_means"] = "not given"

    # The idiom: annotated, or by name and shape.
    idiom = notes["idiom"]
    if idiom is None:
        if (
            name.startswith("cuabi_function_launch")
            or name.startswith("cuabi_launch_plan_")
            or name == "cuabi_graph_exec_set_kernel_node_args"
        ):
            idiom = "launch"
        elif "_ipc" in name:
            idiom = "ipc"
        elif has_callback:
            idiom = "host_callback"
        elif name.endswith("_async") and any(r in ("bytes_in", "bytes_out") for r in roles):
            idiom = "host_view"

    # The statuses it can answer.
    found: List[str] = []
    if fn["returns"]["base"] == "cuabi_status":
        found.append("CUABI_SUCCESS")
        if any(r in ("receiver", "handle") for r in roles):
            found.append("CUABI_ERROR_INVALID_HANDLE")
        if any(ptrs(p) > 0 for p in params) or struct_init:
            found.append("CUABI_ERROR_INVALID_ARGUMENT")
        if call in ("string", "blob") or "two_call_buf" in roles or "array_out" in roles:
            found.append("CUABI_ERROR_INSUFFICIENT_BUFFER")
        if name.endswith("_query"):
            found.append("CUABI_ERROR_NOT_READY")
        for s in status_names:
            if re.search(r"\b" + s + r"\b", fn["doc"]):
                found.append(s)
        for s in notes["statuses"]:
            if s not in status_names:
                _fail(fn, None, f"@status names `{s}`, which is no cuabi_status")
            found.append(s)
    fn["statuses"] = [s for s in status_names if s in found]

    # Object-layer names, the same in every language.
    if receiver is None and call in ("library", "string", "blob"):
        # A free function: cuabi_driver_get_version -> driver_version.
        method = _strip_prefix(name, ["cuabi_"])
        method = method[len("get_") :] if method.startswith("get_") else method.replace("_get_", "_", 1)
    else:
        method = _strip_prefix(name, [f"cuabi_{fn['object']}_", "cuabi_"])
    prop = None
    inputs = [p for p in params if p["role"] not in ("receiver", "two_call_buf", "two_call_size")]
    if receiver is not None and method.startswith("get_"):
        if call == "getter" and inputs and all(p["role"] in ("out", "out_handle", "struct_out") for p in inputs):
            prop = method[len("get_") :]
        elif call in ("string", "blob") and not inputs:
            prop = method[len("get_") :]
    if receiver is not None and call == "setter" and method.startswith("set_"):
        if len(inputs) == 1 and inputs[0]["role"] == "in":
            prop = method[len("set_") :]

    # What a built struct names may be used after the call returns: by the
    # receiver while it lives (a graph's node: "receiver"), or until a
    # stream reaches the work (an *_async call, work queued on a stream
    # receiver: "queued"). Host memory it names must stay valid that long.
    for p in params:
        if p["role"] in ("struct_in", "array_in") and struct_by_name.get(p["type"]["base"], {}).get("built"):
            if receiver is not None and receiver["type"]["base"] == "cuabi_graph":
                p["lasting"] = "receiver"
            elif name.endswith("_async") or (receiver is not None and receiver["type"]["base"] == "cuabi_stream"):
                p["lasting"] = "queued"

    fn["call"] = call
    fn["receiver"] = receiver["name"] if receiver is not None else None
    fn["statuses"] = fn["statuses"]
    fn["idiom"] = idiom
    fn["scope"] = notes["scope"]
    fn["method"] = method
    fn["property"] = prop
    fn["ready_query"] = name.endswith("_query")
    # A call that releases its receiver's handle itself once it succeeds
    # (its comment says it "releases the handle": cuabi_buffer_free_async).
    fn["consumes"] = (
        call == "action" and receiver is not None and "releases the handle" in " ".join(fn["doc"].split())
    )
    for p in params:
        if p["role"] not in ROLES:
            _fail(fn, p["name"], f"unknown role {p['role']}")
