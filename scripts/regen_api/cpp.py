"""The C++ face's generated layer: include/cuabi/cuabi_objects.hpp.

For every function of the model, a C++ form over it:

* each handle kind is a class named after its object (cuabi::device,
  cuabi::buffer, ...), a move-only owner of its handle (the one generic
  detail::owner of cuabi.hpp, released through the kind's *_release);
* a function with a receiver is a const member of its object's class (an
  owner stands for a shared driver object: const guards the handle it
  holds, not the object); one without is a static member, or, for a
  library-level call, a free function of namespace cuabi (a static member
  where the call is named after an object: cuabi_device_get_count is
  device::count());
* names: the function's name without `cuabi_<object>_`; a getter, a two-call
  string or a blob drops `get_` (cuabi_device_get_name is device::name()),
  a library call drops its `get_` too (cuabi_driver_get_version is
  cuabi::driver_version());
* a constructor is a static member of the type it makes (cuabi_buffer_alloc
  is buffer::alloc(device, bytes)), unless its name says it is made by its
  receiver (cuabi_stream_end_capture is stream::end_capture()); a call that
  hands out a new owned handle keeps its `get_`
  (cuabi_module_get_function is module::get_function(name));
* a borrowed handle is its C handle type, so an owner, a raw handle or
  nullptr (where the model allows NULL) may be passed;
* out-parameters are the result: one value, or a struct of several; a new
  handle is returned in its owner; a two-call string is a std::string, a
  blob a std::vector<unsigned char>; a struct the call fills is returned,
  started from its *_init when it is versioned;
* a NUL-terminated string is a const std::string& (const char* where NULL
  is allowed); an array with its count a const std::vector<T>& (of
  std::string for an array of strings); a host byte range stays a pointer and
  its size; a struct passed in is a const reference (a pointer where NULL is
  allowed);
* a failing status throws cuabi::status_error<S> through cuabi::check; a call
  that answers CUABI_ERROR_NOT_READY without failing (a query) returns bool.

cuabi.hpp, which includes this file, writes the idioms that extend these
classes (typed launches, argument packing, templates) as partial
specializations of cuabi::extend<handle, class>, a base of each class.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from common import BANNER

OUTPUT = "include/cuabi/cuabi_objects.hpp"

# The result struct of a call with several out values is named here when
# cuabi.hpp has always called it so (by its fields); otherwise it is
# `<object>_<method>` (`<method>_values` for a library call).
RESULT_NAMES: Dict[Tuple[str, ...], str] = {
    ("major", "minor"): "version_pair",
    ("free_bytes", "total_bytes"): "memory_info",
    ("least", "greatest"): "priority_range",
    ("device_ptr", "bytes"): "global_symbol",
    ("block_size", "min_grid_size"): "block_suggestion",
    ("entries", "bytes"): "cache_entries",
}

# Methods named otherwise than the rule, and why. Each is a name that the
# rule's spelling cannot take in C++.
RENAMES: Dict[str, Tuple[str, str]] = {
    "cuabi_device_reset": (
        "reset_primary_context",
        "reset() is the owner's: it releases the handle",
    ),
    "cuabi_host_buffer_register": ("register_memory", "register is a C++ keyword"),
    "cuabi_graph_exec_set_kernel_node_args": (
        "set_kernel_node_args_packed",
        "set_kernel_node_args is cuabi.hpp's typed form, which packs the arguments",
    ),
    "cuabi_launch_plan_get_args": (
        "get_args",
        "args() is cuabi.hpp's: the block as the plan's typed setters cached it",
    ),
}

# Functions whose C++ form cuabi.hpp writes instead, and why.
HAND_WRITTEN: Dict[str, str] = {
    "cuabi_launch_plan_create": "launch_plan::create keeps the kernel's layout for the typed setters",
    "cuabi_last_error_get_launch_count": "cuabi::error::launches() carries them",
    "cuabi_last_error_get_launch": "cuabi::error::launches() carries them",
    "cuabi_last_error_get_launch_kernel": "cuabi::error::launches() carries them",
}

# Default arguments of the C++ forms: (function, parameter) -> value. A
# trailing nullable handle or struct defaults to nullptr without being named.
DEFAULTS: Dict[Tuple[str, str], str] = {
    ("cuabi_program_compile", "options"): "{}",
    ("cuabi_stream_create", "flags"): "0",
    ("cuabi_stream_create", "priority"): "0",
    ("cuabi_event_create", "flags"): "0",
    ("cuabi_stream_begin_capture", "mode"): "CUABI_CAPTURE_GLOBAL",
    ("cuabi_function_get_active_blocks_per_sm", "dynamic_shared_bytes"): "0",
    ("cuabi_function_suggest_block_size", "shared_bytes_per_block"): "0",
    ("cuabi_function_suggest_block_size", "shared_bytes_per_thread"): "0",
    ("cuabi_function_suggest_block_size", "block_size_limit"): "0",
    ("cuabi_function_suggest_config", "shared_bytes_per_block"): "0",
    ("cuabi_function_suggest_config", "shared_bytes_per_thread"): "0",
}

# Names cuabi.hpp's extensions (cuabi::extend<handle, class>) overload: the
# generated class brings them into its scope beside its own.
OVERLOADS: Dict[str, List[str]] = {
    "cuabi_program": ["create"],
    "cuabi_module": ["compile", "load_data"],
    "cuabi_function": ["launch"],
    "cuabi_stream": ["launch_host_func"],
    "cuabi_event": ["elapsed_ms"],
}

# Functions that answer a status as their value (not as their outcome).
STATUS_VALUES = {"cuabi_last_error_status"}

# The owner's own members, which no generated method may hide.
OWNER_MEMBERS = {"get", "reset", "out", "detach", "owner", "handle_type"}

CPP_KEYWORDS = set(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
    co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
    nullptr operator or or_eq private protected public register reinterpret_cast requires return
    short signed sizeof static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
    xor xor_eq""".split()
)

WIDTH = 100


class Unsupported(Exception):
    """The emitter has no C++ form for a function; regen names it."""


def _checked(fn: Dict[str, Any]) -> Dict[str, Any]:
    """`fn` as the model gives it, refused when it lacks a role."""
    if "call" not in fn or "receiver" not in fn:
        raise Unsupported("the model gives it no call kind or receiver")
    for p in fn["params"]:
        if "role" not in p:
            raise Unsupported(f"the model gives parameter `{p['name']}` no role")
    return fn


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def c_type(t: Dict[str, Any], drop: int = 0, top_const: bool = True) -> str:
    """The C spelling of type `t` with `drop` pointer levels taken off; the
    outermost level's const left off unless `top_const`."""
    pointers = t["pointers"][: len(t["pointers"]) - drop] if drop else list(t["pointers"])
    text = ("const " if t["const"] else "") + t["base"]
    for i, p in enumerate(pointers):
        text += "*"
        if p["const"] and (top_const or i < len(pointers) - 1):
            text += " const"
    if not pointers and not top_const and t["const"]:
        text = t["base"]
    return text


def cls_of(handle: str) -> str:
    return handle[len("cuabi_") :]


def wrap_comment(text: str, indent: str) -> List[str]:
    """`text` as /// lines (Doxygen's) no wider than WIDTH: its paragraphs
    refilled, an indented line (a table, a list) kept on a line of its own."""
    blocks: List[str] = []  # "" for a blank line
    for raw in text.split("\n"):
        if not raw.strip():
            blocks.append("")
        elif raw[:1] in (" ", "-", "*") or not blocks or not blocks[-1]:
            blocks.append(raw.rstrip())
        else:
            blocks[-1] += " " + raw.strip()
    out: List[str] = []
    for block in blocks:
        lead = indent + "///"
        if not block:
            out.append(lead)
            continue
        pad = " " * (len(block) - len(block.lstrip()))
        line = lead + " " + pad
        for w in block.split():
            if len(line) + len(w) > WIDTH and line.strip() != "///":
                out.append(line.rstrip())
                line = lead + " " + pad
            line += w + " "
        out.append(line.rstrip())
    while out and out[-1].strip() == "///":
        out.pop()
    return out


def wrap_call(head: str, args: List[str], tail: str, indent: str, width: int = WIDTH) -> List[str]:
    """`head(arg, arg, ...)tail`, broken after commas as clang-format would."""
    WIDTH = width  # noqa: N806
    one = f"{indent}{head}({', '.join(args)}){tail}"
    if len(one) <= WIDTH:
        return [one]
    if "(" in head:
        # A call inside a call: the inner one whole on the next line.
        outer, inner = head.split("(", 1)
        second = f"{indent}    {inner}({', '.join(args)}){tail}"
        if len(second) <= WIDTH:
            return [f"{indent}{outer}(", second]
    # Arguments aligned after the open parenthesis.
    col = len(indent) + len(head) + 1
    if col < WIDTH - 30:
        lines: List[str] = []
        line = f"{indent}{head}("
        for i, a in enumerate(args):
            piece = a + ("," if i < len(args) - 1 else ")" + tail)
            if line.endswith("(") or len(line) + 1 + len(piece) <= WIDTH:
                line += ("" if line.endswith("(") else " ") + piece
            else:
                lines.append(line)
                line = " " * col + piece
        lines.append(line)
        if all(len(x) <= WIDTH for x in lines):
            return lines
    # Arguments on the next lines, indented by four.
    lines = [f"{indent}{head}("]
    line = indent + "    "
    for i, a in enumerate(args):
        piece = a + ("," if i < len(args) - 1 else ")" + tail)
        if line.strip() and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line = indent + "    "
        line += ("" if not line.strip() else " ") + piece
    lines.append(line)
    return lines


# ---------------------------------------------------------------------------
# One function's C++ form
# ---------------------------------------------------------------------------


class Form:
    """The C++ declaration and definition of one function."""

    def __init__(self) -> None:
        self.home: Optional[str] = None  # class name, None: free function
        self.static = False
        self.name = ""
        self.returns = "void"
        self.params: List[str] = []
        self.body: List[str] = []
        self.doc = ""
        self.noexcept = False


def result_name(f: Form) -> str:
    """The struct of several out values, when RESULT_NAMES does not name it."""
    name = f.name[len("get_") :] if f.name.startswith("get_") else f.name
    return f"{f.home}_{name}" if f.home else f"{name}_values"


class Emitter:
    def __init__(self, model: Dict[str, Any]) -> None:
        self.model = model
        self.handles = [h["name"] for h in model["handles"]]
        self.structs = {s["name"]: s for s in model["structs"]}
        self.results: Dict[str, List[Tuple[str, str]]] = {}  # struct name -> fields
        self.result_users: Dict[str, List[str]] = {}  # struct name -> the C functions
        self.result_order: List[str] = []

    # -- naming --------------------------------------------------------------

    def method_name(self, fn: Dict[str, Any], prefix: str, drop_get: bool) -> str:
        name = fn["name"]
        if name in RENAMES:
            return RENAMES[name][0]
        rest = name[len(prefix) :] if name.startswith(prefix) else name[len("cuabi_") :]
        if drop_get:
            if rest.startswith("get_"):
                rest = rest[len("get_") :]
            elif prefix == "cuabi_" and "_get_" in rest:
                rest = rest.replace("_get_", "_", 1)
        if rest in CPP_KEYWORDS:
            raise Unsupported(f"its C++ name `{rest}` is a keyword: name it in cpp.py's RENAMES")
        return rest

    def result_struct(self, fields: List[Tuple[str, str]], fallback: str, c_name: str) -> str:
        key = tuple(f for _, f in fields)
        name = RESULT_NAMES.get(key, fallback)
        self.result_users.setdefault(name, []).append(c_name)
        if name in self.results:
            if self.results[name] != fields:
                raise Unsupported(f"its result struct `{name}` is already another struct")
        else:
            self.results[name] = fields
            self.result_order.append(name)
        return name

    # -- the form ------------------------------------------------------------

    def form(self, fn: Dict[str, Any]) -> Optional[Form]:
        call = fn["call"]
        if call == "release" or fn["name"] in HAND_WRITTEN:
            return None
        params = fn["params"]
        by_name = {p["name"]: p for p in params}
        receiver = by_name.get(fn["receiver"]) if fn.get("receiver") else None
        f = Form()
        f.doc = fn["name"] + (": " + fn["doc"] if fn.get("doc") else "")
        obj = fn.get("object")

        made = [p for p in params if p["role"] == "out_handle"]
        if call == "library" and obj is not None:
            # A library-level call named after an object (cuabi_device_get_count):
            # a static member of that object's class.
            f.home, f.static = obj, True
            f.name = self.method_name(fn, f"cuabi_{obj}_", drop_get=True)
        elif call == "library" or (obj is None and call != "constructor"):
            f.home = None
            f.name = self.method_name(fn, "cuabi_", drop_get=True)
        elif call == "constructor" and made:
            made_cls = cls_of(made[0]["handle_type"])
            if fn["name"].startswith(f"cuabi_{made_cls}_") or receiver is None:
                f.home, f.static = made_cls, True
                f.name = self.method_name(fn, f"cuabi_{made_cls}_", drop_get=False)
            else:
                home = cls_of(receiver["type"]["base"])
                f.home = home
                f.name = self.method_name(fn, f"cuabi_{home}_", drop_get=False)
        else:
            home = obj
            if receiver is not None:
                home = cls_of(receiver["type"]["base"])
            f.home = home
            f.static = receiver is None
            # A call that hands out a new owned handle keeps its verb
            # (module::get_function): it makes an object, it reads no value.
            f.name = self.method_name(
                fn, f"cuabi_{home}_", drop_get=call in ("getter", "string", "blob") and not made
            )
        if f.home is not None and f.name in OWNER_MEMBERS and not (f.name == "get" and f.static):
            raise Unsupported(f"its method name `{f.name}` is the owner's: name it in cpp.py's RENAMES")

        # Counts and sizes that C++ gives from a container.
        given = {}
        for p in params:
            if p["role"] in ("array_in", "array_out") and p.get("count"):
                given.setdefault(p["count"], []).append(p)

        args: List[str] = []  # the C call's arguments
        prep: List[str] = []
        outs: List[Tuple[str, str, Dict[str, Any]]] = []  # (C++ type, name, param)
        cpp_params: List[Tuple[str, str, Optional[str], Dict[str, Any]]] = []  # type, name, default, param
        two_call: Optional[Dict[str, Any]] = None
        array_out: Optional[Dict[str, Any]] = None
        fname = fn["name"]

        for p in params:
            role, pname, t = p["role"], p["name"], p["type"]
            if pname in given and role != "inout":
                role = "count"  # the length of an array C++ passes whole
            if role == "receiver":
                args.append("get()" if not f.static else pname)
                if f.static:
                    cpp_params.append((c_type(t, top_const=False), pname, None, p))
            elif role == "handle":
                cpp_params.append((t["base"], pname, "nullptr" if p.get("nullable") else None, p))
                args.append(pname)
            elif role in ("in", "size", "callback", "user_data"):
                cpp_params.append((c_type(t, top_const=False), pname, None, p))
                args.append(pname)
            elif role == "count":
                arrays = given.get(pname)
                if not arrays:  # a count with no array to give it: the caller's
                    cpp_params.append((c_type(t, top_const=False), pname, None, p))
                    args.append(pname)
                    continue
                if arrays[0]["role"] == "array_out":
                    args.append(pname)
                    continue
                first = arrays[0]["name"]
                for other in arrays[1:]:
                    prep.append(f"if ({other['name']}.size() != {first}.size())")
                    prep.append("  throw std::invalid_argument(")
                    prep.append(f'      "{fname}: {other["name"]} and {first} differ in length");')
                if t["base"] == "size_t":
                    args.append(f"{first}.size()")
                else:
                    args.append(f"static_cast<{t['base']}>({first}.size())")
            elif role == "inout":
                if pname in given and given[pname][0]["role"] == "array_out":
                    args.append(f"&{pname}")
                    continue
                cpp_params.append((c_type(t, drop=1, top_const=False) + "&", pname, None, p))
                args.append(f"&{pname}")
            elif role == "out" and call == "constructor" and len(made) == 1:
                # A constructor's other outs (cuabi_buffer_alloc_with_pointer's
                # address): answered through references after the inputs; the
                # new owner is what the call returns.
                cpp_params.append((c_type(t, drop=1, top_const=False) + "&", pname, None, p))
                args.append(f"&{pname}")
            elif role == "out":
                vt = c_type(t, drop=1, top_const=False)
                outs.append((vt, pname, p))
                args.append(f"&{pname}")
            elif role == "out_handle":
                outs.append(("cuabi::" + cls_of(p["handle_type"]), pname, p))
                args.append(f"{pname}.out()")
            elif role == "struct_out":
                vt = c_type(t, drop=1, top_const=False)
                outs.append((vt, pname, p))
                args.append(f"&{pname}")
            elif role == "struct_in":
                st = c_type(t, drop=1, top_const=False)
                if p.get("nullable"):
                    cpp_params.append((f"const {st}*", pname, "nullptr", p))
                    args.append(pname)
                else:
                    cpp_params.append((f"const {st}&", pname, None, p))
                    args.append(f"&{pname}")
            elif role == "string_in":
                if p.get("nullable"):
                    cpp_params.append(("const char*", pname, None, p))
                    args.append(pname)
                else:
                    cpp_params.append(("const std::string&", pname, None, p))
                    args.append(f"{pname}.c_str()")
            elif role == "array_in":
                elem = c_type(t, drop=1, top_const=False)
                if elem.replace(" ", "") in ("constchar*", "char*", "constchar*const"):
                    cpp_params.append(("const std::vector<std::string>&", pname, None, p))
                    prep.append(f"const std::vector<const char*> {pname}_c = detail::c_strings({pname});")
                    args.append(f"{pname}_c.data()")
                else:
                    if elem.startswith("const "):
                        elem = elem[len("const ") :]
                    cpp_params.append((f"const std::vector<{elem}>&", pname, None, p))
                    args.append(f"{pname}.data()")
            elif role == "array_out":
                array_out = p
                args.append(f"{pname}.data()")
            elif role in ("bytes_in", "bytes_out"):
                cpp_params.append((c_type(t, top_const=False), pname, None, p))
                args.append(pname)
            elif role == "two_call_buf":
                two_call = p
                args.append("buf")
            elif role == "two_call_size":
                args.append("size")
            else:
                raise Unsupported(f"parameter `{pname}` has the role {role!r}, which cpp.py does not know")

        # Defaults: named ones, then a trailing nullable handle or struct.
        with_defaults: List[str] = []
        trailing = True
        for ctype, pname, default, p in reversed(cpp_params):
            d = DEFAULTS.get((fname, pname))
            if d is None and not (trailing and default is not None):
                d = None
            elif d is None:
                d = default
            if d is None:
                trailing = False
            elif not trailing:
                d = None
            with_defaults.append(f"{ctype} {pname}" + (f" = {d}" if d is not None else ""))
        f.params = list(reversed(with_defaults))

        returns_status = (
            fn["returns"]["base"] == "cuabi_status"
            and not fn["returns"]["pointers"]
            and fname not in STATUS_VALUES
        )
        callee = f"{fname}"

        if call == "struct_init":
            st = c_type(params[0]["type"], drop=1, top_const=False)
            f.returns = st
            f.params = []
            f.body = [f"{st} value;", f"cuabi::check({fname}(&value, sizeof value));", "return value;"]
            return f
        if two_call is not None:
            is_string = two_call["type"]["base"] == "char"
            f.returns = "std::string" if is_string else "std::vector<unsigned char>"
            fetch = "fetch_string" if is_string else "fetch_bytes"
            buf_t = "char*" if is_string else "void*"
            capture = "[&]" if (cpp_params or not f.static) else "[]"
            lam = f"{capture}({buf_t} buf, size_t* size) {{ return {callee}({', '.join(args)}); }});"
            if len("  " + "    " + lam) <= WIDTH:
                f.body = prep + [f"return detail::{fetch}(", "    " + lam]
            else:
                f.body = prep + [f"return detail::{fetch}({capture}({buf_t} buf, size_t* size) {{"]
                f.body += ["  " + x for x in wrap_call(f"return {callee}", args, ";", "", WIDTH - 4)]
                f.body += ["});"]
            return f
        if not returns_status:
            f.returns = c_type(fn["returns"], top_const=True)
            head = f"return {callee}" if f.returns != "void" else callee
            call_text = wrap_call(head, args, ";", "", WIDTH - 2)
            f.body = prep + call_text
            f.noexcept = not prep and call == "library"
            return f

        if array_out is not None:
            # A two-call array: the count first, then the values. An optional
            # out beside it (NULL allowed) is left out; any other is returned
            # with the array in a struct.
            elem = c_type(array_out["type"], drop=1, top_const=False)
            count, vec = array_out["count"], array_out["name"]
            kept = [o for o in outs if not o[2].get("nullable")]
            skipped = {f"&{n}" for _, n, p in outs if p.get("nullable")}
            args = ["nullptr" if a in skipped else a for a in args]
            first_args = ["nullptr" if a == f"{vec}.data()" else a for a in args]
            f.body = prep + [f"size_t {count} = 0;"]
            for vt, oname, _ in kept:
                f.body.append(f"{vt} {oname}{{}};")
            f.body += wrap_call(f"cuabi::check({callee}", first_args, ");", "", WIDTH - 2)
            f.body.append(f"std::vector<{elem}> {vec}({count});")
            f.body.append("for (;;) {")
            again = wrap_call(f"const cuabi_status st = {callee}", args, ";", "", WIDTH - 4)
            f.body += ["  " + x for x in again]
            f.body += [
                "  if (st != CUABI_ERROR_INSUFFICIENT_BUFFER) {",
                "    cuabi::check(st);",
                "    break;",
                "  }",
                f"  {vec}.resize({count});  // it grew between the two calls",
                "}",
                f"{vec}.resize({count});",
            ]
            if kept:
                fields = [(f"std::vector<{elem}>", vec)] + [(vt, n) for vt, n, _ in kept]
                rs = self.result_struct(fields, result_name(f), fn["name"])
                f.returns = "cuabi::" + rs
                f.body.append(f"return {{std::move({vec}), " + ", ".join(n for _, n, _ in kept) + "};")
            else:
                f.returns = f"std::vector<{elem}>"
                f.body.append(f"return {vec};")
            return f

        call_line = wrap_call(f"cuabi::check({callee}", args, ");", "", WIDTH - 2)
        if not outs:
            is_query = fn.get("ready_query", "CUABI_ERROR_NOT_READY" in fn.get("statuses", []))
            if is_query:
                f.returns = "bool"
                f.body = prep + wrap_call(f"return detail::ready({callee}", args, ");", "", WIDTH - 2)
            else:
                f.body = prep + call_line
            return f
        if len(outs) == 1:
            vt, oname, p = outs[0]
            f.returns = vt
            init = ""
            if p["role"] == "struct_out":
                init_fn = p.get("init") or (self.structs.get(vt, {}) or {}).get("init")
                f.body = prep + [f"{vt} {oname};"]
                if init_fn:
                    f.body.append(f"cuabi::check({init_fn}(&{oname}, sizeof {oname}));")
                else:
                    f.body[-1] = f"{vt} {oname}{{}};"
            elif p["role"] == "out_handle":
                f.body = prep + [f"{vt} {oname};"]
            else:
                f.body = prep + [f"{vt} {oname}{init}{{}};"]
            if p.get("flag"):  # it receives 1 or 0: a bool
                f.returns = "bool"
                f.body += call_line + [f"return {oname} != 0;"]
                return f
            f.body += call_line + [f"return {oname};"]
            return f
        # Several out values: a struct of them.
        if any(p["role"] != "out" for _, _, p in outs):
            raise Unsupported("several outs, not all plain values")
        fields = [(vt, n) for vt, n, _ in outs]
        rs = self.result_struct(fields, result_name(f), fn["name"])
        f.returns = "cuabi::" + rs
        names = {n for _, n in fields}
        args2 = [f"&r.{a[1:]}" if a.startswith("&") and a[1:] in names else a for a in args]
        f.body = prep + [f"cuabi::{rs} r;"]
        f.body += wrap_call(f"cuabi::check({callee}", args2, ");", "", WIDTH - 2) + ["return r;"]
        return f


# ---------------------------------------------------------------------------
# The file
# ---------------------------------------------------------------------------


def declaration(f: Form, qualified: bool, indent: str, end: str) -> List[str]:
    """The function's head: `static T name(params) const` in its class, or
    `inline T cls::name(params) const` where it is defined, followed by `end`."""
    params = f.params if not qualified else [p.split(" = ")[0] for p in f.params]
    if f.home is None:
        head = f"inline {f.returns} {f.name}"
    elif qualified:
        head = f"inline {f.returns} {f.home}::{f.name}"
    else:
        head = ("static " if f.static else "") + f.returns + " " + f.name
    tail = ""
    if f.home is not None and not f.static:
        tail += " const"
    if f.noexcept:
        tail += " noexcept"
    return wrap_call(head, params, tail + end, indent)


def definition(f: Form, qualified: bool) -> List[str]:
    """The whole definition; a one-statement body on the head's line when it
    fits, as clang-format writes it."""
    lines = declaration(f, qualified, "", " {")
    if len(lines) == 1 and len(f.body) == 1:
        one = lines[0][: -len(" {")] + " { " + f.body[0] + " }"
        if len(one) <= WIDTH:
            return [one]
    return lines + ["  " + b for b in f.body] + ["}"]


def em_name(fn: Dict[str, Any]) -> str:
    """The C++ name of a library call: the C name without `cuabi_`."""
    return fn["name"][len("cuabi_") :]


def scope_class(fn: Dict[str, Any], f: Form, closer: Dict[str, Any]) -> List[str]:
    """A class that opens with `fn` (its C++ form `f`) when made and closes
    with `closer` when destroyed; close() closes it and reports a failure,
    which the destructor cannot."""
    name = fn["scope"]["name"]
    if f.returns != "void" or f.home is not None:
        raise SystemExit(f"regen: cpp.py: the scope of {fn['name']}: an opening call with a result")
    by = {p["name"]: p for p in fn["params"]}
    members: List[str] = []
    inits: List[str] = []
    args: List[str] = []
    for p in closer["params"]:
        q = by[p["name"]]
        n = q["name"]
        if q["role"] == "string_in" and q.get("nullable"):
            members += [f"std::string {n}_;", f"bool {n}_null_;"]
            inits += [f"{n}_({n} ? {n} : \"\")", f"{n}_null_({n} == nullptr)"]
            args.append(f"{n}_null_ ? nullptr : {n}_.c_str()")
        elif q["role"] == "string_in":
            members.append(f"std::string {n}_;")
            inits.append(f"{n}_({n})")
            args.append(f"{n}_.c_str()")
        elif q["role"] == "in":
            members.append(f"{c_type(q['type'])} {n}_;")
            inits.append(f"{n}_({n})")
            args.append(f"{n}_")
        else:
            raise SystemExit(f"regen: cpp.py: the scope of {fn['name']} keeps `{n}`, a {q['role']}")
    closing = f"{closer['name']}({', '.join(args)})"
    out = wrap_comment(
        f"A scope of {fn['name']}: made, it calls {fn['name']}; destroyed, it calls "
        f"{closer['name']} (close() does it sooner and reports a failure, which the "
        "destructor cannot). Neither copied nor moved.",
        "",
    )
    out.append(f"class {name} {{")
    out.append(" public:")
    out += wrap_comment(f"Opens the scope: calls {fn['name']}, throwing its failure.", "  ")
    out += wrap_call(name, f.params, "", "  ")
    out.append("      : " + ", ".join(inits) + " {")
    out += ["    " + b for b in f.body]
    out.append("  }")
    out.append(f"  {name}(const {name}&) = delete;")
    out.append(f"  {name}& operator=(const {name}&) = delete;")
    out += wrap_comment(f"Closes the scope if it is open: calls {closer['name']}, ignoring a failure.", "  ")
    out.append(f"  ~{name}() {{")
    out.append(f"    if (open_) (void){closing};")
    out.append("  }")
    out += wrap_comment(
        f"Closes the scope now: calls {closer['name']}, throwing its failure; then nothing is "
        "left for the destructor. A closed scope's close() does nothing.",
        "  ",
    )
    out.append("  void close() {")
    out.append("    if (!open_) return;")
    out.append("    open_ = false;")
    out.append(f"    cuabi::check({closing});")
    out.append("  }")
    out.append("")
    out.append(" private:")
    out += ["  " + m for m in members]
    out.append("  bool open_ = true;")
    out.append("};")
    return out


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    em = Emitter(model)
    failures: List[str] = []
    classes: Dict[str, List[Form]] = {cls_of(h): [] for h in em.handles}
    free: List[Form] = []
    listed: List[Tuple[str, str]] = []  # (function, its C++ name)
    for raw in model["functions"]:
        fn = raw
        try:
            f = em.form(_checked(fn))
        except Unsupported as e:
            failures.append(f"{raw['name']}: {e}")
            continue
        if f is None:
            where = f"the owner of cuabi::{fn['object']}" if fn["call"] == "release" else "cuabi.hpp"
            listed.append((raw["name"], where))
            continue
        if f.home is None:
            free.append(f)
            listed.append((raw["name"], f"cuabi::{f.name}"))
        else:
            if f.home not in classes:
                failures.append(f"{raw['name']}: its class `{f.home}` is no handle kind")
                continue
            classes[f.home].append(f)
            listed.append((raw["name"], f"cuabi::{f.home}::{f.name}"))
    if failures:
        raise SystemExit("regen: cpp.py has no C++ form for:\n  " + "\n  ".join(failures))

    out: List[str] = []
    w = out.append
    w(f"/* {BANNER[:BANNER.index(' scripts/regen.')]}\n * scripts/regen. */\n")
    w(
        "/* The C++ face's plain layer: a class per handle kind and a member or free\n"
        " * function per C function, written from the API model (cuabi.json) by\n"
        " * scripts/regen_api/cpp.py. Include <cuabi/cuabi.hpp>, which extends these\n"
        " * classes with its idioms before it includes this file. */\n"
    )
    w("#ifndef CUABI_CUABI_OBJECTS_HPP\n#define CUABI_CUABI_OBJECTS_HPP\n\n")
    w("#ifndef CUABI_CUABI_HPP\n#error \"include <cuabi/cuabi.hpp>, not cuabi_objects.hpp\"\n#endif\n\n")
    w("namespace cuabi {\n\n")

    # Class names first: the members name each other's types.
    for h in em.handles:
        w(f"class {cls_of(h)};\n")
    w("\n")

    # Result structs.
    if em.result_order:
        w("// Results of the calls with several out values, named by their fields.\n")
    for rs in em.result_order:
        users = em.result_users[rs]
        calls = ", ".join(users[:-1]) + (" and " if len(users) > 1 else "") + users[-1]
        for line in wrap_comment(f"What {calls} {'answer' if len(users) > 1 else 'answers'}: "
                                 "one field per out-parameter, named after it.", ""):
            w(line + "\n")
        w(f"struct {rs} {{\n")
        for vt, n in em.results[rs]:
            init = "" if vt.startswith("std::") else "{}"
            w(f"  {vt} {n}{init};  ///< the out-parameter `{n}`\n")
        w("};\n")
    w("\n")

    # Classes with their declarations.
    docs = {h["name"]: h.get("doc", "") for h in model["handles"]}
    for h in em.handles:
        c = cls_of(h)
        forms = classes[c]
        doc = (docs.get(h) or c).rstrip(".")
        for line in wrap_comment(f"{doc[:1].upper()}{doc[1:]} ({h}).", ""):
            w(line + "\n")
        w(
            f"class {c} : public detail::owner<{h}, {h}_release>,\n"
            f"{' ' * (len(c) + 9)}public extend<{h}, {c}> {{\n"
        )
        w(" public:\n")
        names = {f.name for f in forms}
        usings = ["owner::owner"] + (["owner::get"] if "get" in names else [])
        usings += [f"extend::{n}" for n in OVERLOADS.get(h, []) if n in names]
        for u in sorted(usings):
            w(f"  using {u};\n")
        for f in forms:
            w("\n")
            if f.doc:
                for line in wrap_comment(f.doc, "  "):
                    w(line + "\n")
            for line in declaration(f, qualified=False, indent="  ", end=";"):
                w(line + "\n")
        w("};\n\n")

    # Library-level calls.
    w("// ---------------------------------------------------------------------------\n")
    w("// The library\n")
    w("// ---------------------------------------------------------------------------\n\n")
    for f in free:
        if f.doc:
            for line in wrap_comment(f.doc, ""):
                w(line + "\n")
        for line in definition(f, qualified=False):
            w(line + "\n")
        w("\n")

    # Scopes (`@scope`): RAII over an opening call and its closing call.
    by_name = {fn["name"]: fn for fn in model["functions"]}
    scoped = [(fn, f) for fn in model["functions"] if fn.get("scope") for f in free if f.name == em_name(fn)]
    for fn, f in scoped:
        for line in scope_class(fn, f, by_name[fn["scope"]["closer"]]):
            w(line + "\n")
        w("\n")
        listed.append((fn["name"] + " (scope)", f"cuabi::{fn['scope']['name']}"))

    # Member definitions.
    w("// ---------------------------------------------------------------------------\n")
    w("// Member definitions\n")
    w("// ---------------------------------------------------------------------------\n")
    for h in em.handles:
        for f in classes[cls_of(h)]:
            w("\n")
            for line in definition(f, qualified=True):
                w(line + "\n")
    w("\n")

    # Where each function went, for readers and for the coverage test.
    w("// Every function of the C API and its C++ form:\n")
    for name, where in listed:
        w(f"//   {name}: {where}\n")
    w("\n}  // namespace cuabi\n\n#endif /* CUABI_CUABI_OBJECTS_HPP */\n")
    return {OUTPUT: "".join(out)}
