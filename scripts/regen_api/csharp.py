"""The C# binding's interop layer: P/Invoke declarations, one SafeHandle class
per handle type, the enums and flag sets with their documentation, the struct
layouts (their defaults come from the *_init functions at run time), and the
version stamped into the project and the assembly.

Everything here is C# 7 as Mono's mcs compiles it. Type mapping:
  cuabi_status and the other enums            -> the generated C# enum
  cuabi_<object>_flags                        -> the [Flags] enum of its bits
  int32_t / uint32_t / uint64_t / uint8_t ... -> int / uint / ulong / byte ...
  size_t                                      -> UIntPtr
  const char* argument                        -> [In] byte[] (UTF-8, NUL-terminated; null for NULL)
  const char* result                          -> IntPtr (a static or thread-local string)
  char* / void* followed by size_t* size      -> [Out] byte[] (null for the size query)
  T* followed by size_t* count                -> [Out] TNative[] (null for the count query)
  size_t* after such a buffer                 -> ref UIntPtr (capacity in, size out)
  other T* out-parameters                     -> out T
  const size_t* (an array)                    -> [In] UIntPtr[]
  other void* / const void* / arrays          -> IntPtr (the caller pins)
  const struct* / struct* to fill             -> ref TNative
  cuabi_<object> handle                       -> Safe<Object>Handle
  cuabi_<object> given to its *_release       -> IntPtr (called by the SafeHandle)
  cuabi_<object> handle as a struct field     -> IntPtr (the struct stays blittable)
  cuabi_<name>_fn callback type               -> a Cdecl delegate type <Name>Native
                                                 (its pointers IntPtr, sizes UIntPtr)
  cuabi_<name>_fn parameter                   -> that delegate (the caller keeps it alive)
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List

from common import banner
from model import REPO

SRC = "bindings/csharp/src/Interop"
PROJECT = "bindings/csharp/Cuabi.csproj"
NUSPEC = "bindings/csharp/Cuabi.nuspec"

# C# names that the rule (PascalCase of the name without "cuabi_") would not
# give: the names the binding has always used for these enums.
ENUM_NAMES = {"cuabi_status": "CudaStatus", "cuabi_output": "CompileOutput"}

# Words kept in capitals in C# names (two-letter acronyms, as .NET does).
ACRONYMS = {"IO", "3D"}  # Copy3D, not Copy3d

# The calls a binding makes once per launch. They are declared a second time
# with raw handle values (FastNativeMethods): a SafeHandle argument costs an
# add-ref and a release around the call, more than the rest of a plan launch.
PER_LAUNCH = ["cuabi_launch_plan_launch", "cuabi_function_launch_packed"]

SCALARS = {
    "int8_t": "sbyte",
    "int16_t": "short",
    "int32_t": "int",
    "int64_t": "long",
    "uint8_t": "byte",
    "uint16_t": "ushort",
    "uint32_t": "uint",
    "uint64_t": "ulong",
    "size_t": "UIntPtr",
    "uintptr_t": "UIntPtr",
    "float": "float",
    "double": "double",
}

KEYWORDS = set(
    """abstract as base bool break byte case catch char checked class const continue decimal default
    delegate do double else enum event explicit extern false finally fixed float for foreach goto if
    implicit in int interface internal is lock long namespace new null object operator out override
    params private protected public readonly ref return sbyte sealed short sizeof stackalloc static
    string struct switch this throw true try typeof uint ulong unchecked unsafe ushort using virtual
    void volatile while""".split()
)


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------


def pascal(words: List[str]) -> str:
    out = []
    for w in words:
        w = w.upper()
        out.append(w if w in ACRONYMS else w[:1] + w[1:].lower())
    return "".join(out)


def stem(c_name: str) -> str:
    return c_name[len("cuabi_") :]


def enum_name(c_name: str) -> str:
    if c_name in ENUM_NAMES:
        return ENUM_NAMES[c_name]
    s = stem(c_name)
    if s.endswith("_flag_bits"):
        s = s[: -len("_flag_bits")] + "_flags"
    return pascal(s.split("_"))


def handle_class(c_name: str) -> str:
    return "Safe" + pascal(stem(c_name).split("_")) + "Handle"


def struct_name(c_name: str) -> str:
    return pascal(stem(c_name).split("_")) + "Native"


def callback_name(c_name: str) -> str:
    """cuabi_host_fn -> HostFnNative: the delegate type of a C function pointer type."""
    return pascal(stem(c_name).split("_")) + "Native"


def ident(name: str) -> str:
    return "@" + name if name in KEYWORDS else name


def value_names(model: Dict[str, Any], enum: Dict[str, Any]) -> List[str]:
    """The C# member names: the words every value of the enum shares dropped
    (for a flag set, the words of its object: CUABI_STREAM_), and the ERROR
    word of the failure statuses."""
    split = [v["name"].split("_") for v in enum["values"]]
    candidates = list(split)
    if enum["is_flag_bits"] or len(split) == 1:
        candidates.append(("CUABI_" + stem(enum["name"]).replace("_flag_bits", "")).upper().split("_") + [""])
    common = 0
    while all(len(c) > common + 1 and c[common] == candidates[0][common] for c in candidates):
        common += 1
    names = []
    for words in split:
        rest = words[common:]
        if enum["name"] == model["conventions"]["status_type"] and rest[0] == "ERROR" and len(rest) > 1:
            rest = rest[1:]
        names.append(pascal(rest))
    return names


# ---------------------------------------------------------------------------
# Documentation
# ---------------------------------------------------------------------------


def xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def doc(text: str, indent: str, tag: str = "summary") -> str:
    lines = [xml(line).rstrip() for line in text.strip().split("\n")]
    if len(lines) == 1:
        return f"{indent}/// <{tag}>{lines[0]}</{tag}>\n"
    body = "".join(f"{indent}///{' ' + line if line else ''}\n" for line in lines)
    return f"{indent}/// <{tag}>\n{body}{indent}/// </{tag}>\n"


def c_prototype(fn: Dict[str, Any]) -> str:
    params = ", ".join(f"{p['type']['c']} {p['name']}" for p in fn["params"]) or "void"
    return f"{fn['returns']['c']} {fn['name']}({params});"


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


class Types:
    def __init__(self, model: Dict[str, Any]) -> None:
        self.enums = {e["name"]: enum_name(e["name"]) for e in model["enums"]}
        for f in model["flags"]:
            self.enums[f["name"]] = enum_name(f["bits"])
        self.structs = {s["name"]: struct_name(s["name"]) for s in model["structs"]}
        self.callbacks = {c["name"]: callback_name(c["name"]) for c in model.get("callbacks", [])}

    def value(self, t: Dict[str, Any], raw_handles: bool = False) -> str:
        """A type passed or stored by value."""
        kind, base = t["kind"], t["base"]
        if kind == "handle":
            return "IntPtr" if raw_handles else handle_class(base)
        if kind in ("enum", "flags"):
            return self.enums[base]
        if kind == "callback":
            return self.callbacks[base]
        if base in SCALARS:
            return SCALARS[base]
        if kind == "struct" and base in self.structs:
            return self.structs[base]  # a struct held by value in another
        raise SystemExit(f"regen: csharp: no C# type for {t['c']}")

    def field(self, t: Dict[str, Any]) -> str:
        if t["pointers"] or t["kind"] in ("handle", "callback"):
            return "IntPtr"  # a blittable struct: raw handle values, function pointers
        return self.value(t)

    def callback_param(self, t: Dict[str, Any]) -> str:
        """A parameter of a callback: pointers stay raw, for the callee to read or fill."""
        if t["pointers"] or t["kind"] in ("handle", "callback"):
            return "IntPtr"
        return self.value(t)

    def returns(self, t: Dict[str, Any]) -> str:
        if t["pointers"]:
            return "IntPtr"
        if t["base"] == "void":
            return "void"
        return self.value(t)

    def param(self, fn: Dict[str, Any], i: int, raw_handles: bool) -> str:
        p = fn["params"][i]
        t = p["type"]
        kind, base, ptrs = t["kind"], t["base"], t["pointers"]
        name = ident(p["name"])
        nxt = fn["params"][i + 1]["type"] if i + 1 < len(fn["params"]) else None
        sized_by_next = nxt is not None and is_size_pointer(nxt)
        if not ptrs:
            if kind == "handle" and fn["releases"]:
                return f"IntPtr {name}"
            return f"{self.value(t, raw_handles)} {name}"
        if len(ptrs) == 2:
            if not t["const"] and not ptrs[0]["const"] and not ptrs[1]["const"]:
                return f"out IntPtr {name}"  # void**: an address written back
            return f"IntPtr {name}"  # const char* const*, void* const*: arrays the caller builds
        if kind == "handle":
            return f"out {self.value(t, raw_handles)} {name}"
        if kind in ("char", "void"):
            if t["const"]:
                return f"[In] byte[] {name}" if kind == "char" else f"IntPtr {name}"
            return f"[Out] byte[] {name}" if sized_by_next else f"IntPtr {name}"
        if kind == "struct":
            s = self.structs[base]
            if not t["const"] and sized_by_next:
                return f"[Out] {s}[] {name}"
            return f"ref {s} {name}"
        cs = self.value(t)
        if t["const"]:
            return f"[In] {cs}[] {name}"
        if i > 0 and is_buffer(fn["params"][i - 1]["type"]) and base == "size_t":
            return f"ref {cs} {name}"
        return f"out {cs} {name}"


def is_size_pointer(t: Dict[str, Any]) -> bool:
    return t["base"] == "size_t" and len(t["pointers"]) == 1 and not t["const"]


def is_buffer(t: Dict[str, Any]) -> bool:
    """A caller's buffer that a function fills: char*, void* or struct*."""
    return len(t["pointers"]) == 1 and not t["const"] and t["kind"] in ("char", "void", "struct")


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------


def header(summary: str, usings: List[str]) -> str:
    out = banner("//")
    out += "".join(f"// {line}\n" if line else "//\n" for line in summary.split("\n"))
    out += "\n" + "".join(f"using {u};\n" for u in usings) + "\n"
    return out


def declaration(types: Types, fn: Dict[str, Any], raw: bool, indent: str) -> str:
    params = ", ".join(types.param(fn, i, raw) for i in range(len(fn["params"])))
    ret = types.returns(fn["returns"])
    text = f"{indent}// {c_prototype(fn)}\n"
    if not raw:
        if fn["doc"]:
            text += doc(fn["doc"], indent)
        elif fn["releases"]:
            obj = fn["params"][0]["type"]["base"]
            text += doc(f"Releases a {obj} handle; NULL and released handles are ignored.", indent)
        else:
            text += doc(f"{fn['name']}; see the conventions of cuabi.h.", indent)
    library = "NativeMethods.LibraryName" if raw else "LibraryName"
    entry = fn["name"]
    text += f'{indent}[DllImport({library}, CallingConvention = CallingConvention.Cdecl, EntryPoint = "{entry}")]\n'
    access = "internal" if raw else "public"
    text += f"{indent}{access} static extern {ret} {fn['name']}({params});\n"
    return text


def native_methods(model: Dict[str, Any], types: Types) -> str:
    out = header(
        "The whole C API of cuabi as P/Invoke declarations, one per C function, in\n"
        "the header's order, each under its C prototype; the type mapping is in\n"
        "scripts/regen_api/csharp.py.",
        ["System", "System.Runtime.InteropServices", "System.Security"],
    )
    i1, i2 = "    ", "        "
    out += "namespace Cuabi.Interop\n{\n"
    out += (
        f"{i1}/// <summary>\n"
        f"{i1}/// The cuabi C API, declared one to one. Prefer the safe classes of the\n"
        f"{i1}/// <c>Cuabi</c> namespace; use these for what they do not cover.\n"
        f"{i1}/// </summary>\n"
        f"{i1}/// <remarks>\n"
        f"{i1}/// Call <see cref=\"CuabiLibrary.Load\"/> once before the first method that\n"
        f"{i1}/// calls into this class is run: Mono binds a method's native calls when it\n"
        f"{i1}/// compiles the method, so the library must be chosen before then. The\n"
        f"{i1}/// classes of the <c>Cuabi</c> namespace do this themselves. On failure a\n"
        f"{i1}/// function returns a <see cref=\"CudaStatus\"/> other than Success, and the\n"
        f"{i1}/// <c>cuabi_last_error_*</c> functions describe it.\n"
        f"{i1}/// </remarks>\n"
        f"{i1}public static class NativeMethods\n{i1}{{\n"
        f"{i2}/// <summary>The library name every declaration binds to;\n"
        f"{i2}/// <see cref=\"CuabiLibrary\"/> maps it to a file.</summary>\n"
        f'{i2}public const string LibraryName = "cuabi";\n'
    )
    for c in model["constants"]:
        text = c["doc"] or f"{c['name']} of the header these declarations follow."
        out += "\n" + doc(text, i2)
        if c["type"] == "string":
            out += f'{i2}public const string {c["name"]} = "{c["value"]}";\n'
        else:
            out += f"{i2}public const int {c['name']} = {c['value']};\n"
    section = None
    for fn in model["functions"]:
        if fn["section"] != section:
            section = fn["section"]
            out += f"\n{i2}// --- {section} ---\n"
        out += "\n" + declaration(types, fn, False, i2)
    out += f"{i1}}}\n\n"
    out += (
        f"{i1}// The calls made once per launch again, with raw handle values: the\n"
        f"{i1}// library detects a released or stale handle and answers\n"
        f"{i1}// CUABI_ERROR_INVALID_HANDLE, and the callers keep the owning objects\n"
        f"{i1}// reachable until the call returns (GC.KeepAlive).\n"
        f"{i1}[SuppressUnmanagedCodeSecurity]\n"
        f"{i1}internal static class FastNativeMethods\n{i1}{{\n"
    )
    by_name = {f["name"]: f for f in model["functions"]}
    out += "\n".join(declaration(types, by_name[n], True, i2) for n in PER_LAUNCH)
    out += f"{i1}}}\n}}\n"
    return out


def handles(model: Dict[str, Any]) -> str:
    out = header(
        "One SafeHandle class per cuabi handle type, releasing through its\n"
        "cuabi_<object>_release: that never fails, may run on any thread (the\n"
        "finalizer's included) and accepts any release order. A hand-written part\n"
        "of a class (Handles.cs) implements Released() where the handle owns more.",
        ["System"],
    )
    i1, i2, i3 = "    ", "        ", "            "
    out += "namespace Cuabi.Interop\n{\n"
    releases = {f["params"][0]["type"]["base"]: f["name"] for f in model["functions"] if f["releases"]}
    blocks = []
    for h in model["handles"]:
        cls = handle_class(h["name"])
        release = releases.get(h["name"])
        if release is None:
            raise SystemExit(f"regen: csharp: {h['name']} has no {h['name']}_release")
        text = doc(f"A {h['name']} handle: {h['doc']}. Disposing it calls {release}.", i1)
        text += f"{i1}public sealed partial class {cls} : CuabiSafeHandle\n{i1}{{\n"
        text += doc("A NULL handle (the runtime fills it in for out-parameters).", i2)
        text += f"{i2}public {cls}() {{ }}\n\n"
        text += doc("Wraps an existing handle value.", i2)
        text += f'{i2}/// <param name="existing">The raw handle value.</param>\n'
        text += f'{i2}/// <param name="ownsHandle">Whether disposing this object releases the handle.</param>\n'
        text += f"{i2}public {cls}(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) {{ }}\n\n"
        text += doc("The NULL handle, shared and never released: a null object's, where the library takes NULL.", i2)
        text += f"{i2}internal static readonly {cls} Null = new {cls}(IntPtr.Zero, false);\n\n"
        text += doc(f"Releases the handle through {release}.", i2)
        text += f"{i2}protected override bool ReleaseHandle()\n{i2}{{\n"
        text += f"{i3}NativeMethods.{release}(handle);\n{i3}Released();\n{i3}return true;\n{i2}}}\n\n"
        text += f"{i2}partial void Released();\n{i1}}}\n"
        blocks.append(text)
    out += "\n".join(blocks) + "}\n"
    return out


def enums(model: Dict[str, Any]) -> str:
    out = header(
        "The header's enums and flag sets, with their documentation. A flag set\n"
        "(cuabi_<object>_flags) is the [Flags] enum of its bits, with None added.",
        ["System"],
    )
    i1, i2 = "    ", "        "
    out += "namespace Cuabi\n{\n"
    flag_docs = {f["bits"]: f for f in model["flags"]}
    blocks = []
    for e in model["enums"]:
        name = enum_name(e["name"])
        text = e["doc"]
        if e["is_flag_bits"]:
            flags = flag_docs[e["name"]]
            text = flags["doc"] or text
            c_names = f"{flags['name']}, {e['name']}"
        else:
            c_names = e["name"]
        body = doc(text or f"{e['name']}.", i1)
        body += f"{i1}/// <remarks>C: {c_names}.</remarks>\n"
        if e["is_flag_bits"]:
            body += f"{i1}[Flags]\n{i1}public enum {name} : uint\n{i1}{{\n"
            body += doc("No flags.", i2) + f"{i2}None = 0,\n"
        else:
            body += f"{i1}public enum {name}\n{i1}{{\n"
        for v, cs in zip(e["values"], value_names(model, e)):
            body += doc(v["doc"] or f"{v['name']}.", i2)
            body += f"{i2}{cs} = {v['value']},\n"
        body += f"{i1}}}\n"
        blocks.append(body)
    out += "\n".join(blocks) + "}\n"
    return out


def end_setter(s: Dict[str, Any], types: Types) -> str:
    """SetEnd() of a struct whose src_* fields each have a dst_* field of the
    same type after them (a copy's two ends): it sets one end's fields, the
    dst_* ones when `destination`, else the src_* ones, to the values given
    in the fields' order; "" for another struct."""
    fields = {f["name"]: types.field(f["type"]) for f in s["fields"]}
    src = [f for f in s["fields"] if f["name"].startswith("src_")]
    if not src or any(fields.get("dst_" + f["name"][4:]) != fields[f["name"]] for f in src):
        return ""
    i2, i3, i4 = "        ", "            ", "                "
    names = [f["name"][4:] for f in src]
    args = [ident(n.split("_")[0] + pascal(n.split("_")[1:])) for n in names]
    summary = "Sets one end's fields, the dst_* ones when destination is true, else the src_* ones: "
    summary += ", ".join(names) + "."
    params = ", ".join(f"{types.field(f['type'])} {a}" for f, a in zip(src, args))
    text = f"\n{doc(summary, i2)}{i2}public void SetEnd(bool destination, {params})\n{i2}{{\n"
    for prefix, test in (("dst_", "if (destination)"), ("src_", "else")):
        text += f"{i3}{test}\n{i3}{{\n"
        text += "".join(f"{i4}{ident(prefix + n)} = {a};\n" for n, a in zip(names, args))
        text += f"{i3}}}\n"
    return text + f"{i2}}}\n"


def structs(model: Dict[str, Any], types: Types) -> str:
    out = header(
        "The header's structs, field for field. A struct that has a *_init\n"
        "function gets Create(): the library's defaults, asked once and copied;\n"
        "one whose src_* fields pair with dst_* ones (a copy's two ends) SetEnd().",
        ["System", "System.Runtime.InteropServices"],
    )
    i1, i2, i3, i4 = "    ", "        ", "            ", "                "
    out += "namespace Cuabi.Interop\n{\n"
    blocks = []
    for s in model["structs"]:
        name = struct_name(s["name"])
        body = doc(f"{s['name']}: {s['doc']}" if s["doc"] else f"{s['name']}.", i1)
        body += f"{i1}[StructLayout(LayoutKind.Sequential)]\n{i1}public struct {name}\n{i1}{{\n"
        for f in s["fields"]:
            body += doc(f["doc"] or f"{f['name']} ({f['type']['c']}).", i2)
            body += f"{i2}public {types.field(f['type'])} {ident(f['name'])};\n"
        if s["init"]:
            body += (
                f"\n{i2}private static {name} defaults;\n"
                f"{i2}private static volatile bool haveDefaults;\n\n"
            )
            body += doc(
                f"A {s['name']} filled by {s['init']}: the defaults of {s['init_macro']}, "
                "its struct_size this struct's size.",
                i2,
            )
            body += (
                f"{i2}public static {name} Create()\n{i2}{{\n"
                f"{i3}if (!haveDefaults)\n{i3}{{\n"
                f"{i4}var value = new {name}();\n"
                f"{i4}var size = (UIntPtr)(uint)Marshal.SizeOf(typeof({name}));\n"
                f"{i4}Errors.Check(NativeMethods.{s['init']}(ref value, size));\n"
                f"{i4}defaults = value;\n{i4}haveDefaults = true;\n{i3}}}\n"
                f"{i3}return defaults;\n{i2}}}\n"
            )
        body += end_setter(s, types)
        body += f"{i1}}}\n"
        blocks.append(body)
    out += "\n".join(blocks) + "}\n"
    return out


def callbacks(model: Dict[str, Any], types: Types) -> str:
    out = header(
        "The header's function pointer types as delegate types. A delegate passed\n"
        "to native code must stay reachable until its last call: keep it in a\n"
        "static field or beside what the call's user data names.",
        ["System", "System.Runtime.InteropServices"],
    )
    i1, i2 = "    ", "        "
    out += "namespace Cuabi.Interop\n{\n"
    blocks = []
    for c in model.get("callbacks", []):
        name = callback_name(c["name"])
        params = ", ".join(f"{types.callback_param(p['type'])} {ident(p['name'])}" for p in c["params"])
        c_params = ", ".join(f"{p['type']['c']} {p['name']}" for p in c["params"]) or "void"
        ret = "void" if c["returns"]["base"] == "void" and not c["returns"]["pointers"] else types.callback_param(c["returns"])
        text = f"{i1}// typedef {c['returns']['c']} (*{c['name']})({c_params});\n"
        text += doc(c["doc"] or f"{c['name']}.", i1)
        text += f"{i1}[UnmanagedFunctionPointer(CallingConvention.Cdecl)]\n"
        text += f"{i1}public delegate {ret} {name}({params});\n"
        blocks.append(text)
    out += "\n".join(blocks) + "}\n"
    return out


def assembly_version(model: Dict[str, Any]) -> str:
    v = model["version"]
    four = f"{v['major']}.{v['minor']}.{v['patch']}.0"
    return header(
        "The assembly's version: the header's CUABI_VERSION_*. Cuabi.csproj leaves\n"
        "these attributes to this file.",
        ["System.Reflection"],
    ) + (
        f'[assembly: AssemblyVersion("{four}")]\n'
        f'[assembly: AssemblyFileVersion("{four}")]\n'
        f'[assembly: AssemblyInformationalVersion("{v["string"]}")]\n'
    )


def project(model: Dict[str, Any]) -> str:
    """Cuabi.csproj as it is, with the header's version in <Version>."""
    path = os.path.join(REPO, PROJECT)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stamped, n = re.subn(r"<Version>[^<]*</Version>", f"<Version>{model['version']['string']}</Version>", text)
    if n != 1:
        raise SystemExit(f"regen: csharp: {PROJECT} must hold exactly one <Version> element")
    return stamped


def nuspec(model: Dict[str, Any]) -> str:
    """Cuabi.nuspec (the NuGet package) as it is, with the header's version in <version>."""
    path = os.path.join(REPO, NUSPEC)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stamped, n = re.subn(r"<version>[^<]*</version>", f"<version>{model['version']['string']}</version>", text)
    if n != 1:
        raise SystemExit(f"regen: csharp: {NUSPEC} must hold exactly one <version> element")
    return stamped


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    types = Types(model)
    return {
        f"{SRC}/NativeMethods.g.cs": native_methods(model, types),
        f"{SRC}/Handles.g.cs": handles(model),
        f"{SRC}/Enums.g.cs": enums(model),
        f"{SRC}/Structs.g.cs": structs(model, types),
        f"{SRC}/Callbacks.g.cs": callbacks(model, types),
        f"{SRC}/AssemblyVersion.g.cs": assembly_version(model),
        PROJECT: project(model),
        NUSPEC: nuspec(model),
    }
