"""The core's compile cases of tests/corpus/cases.json as data in Rust and C#.

The cases of cuabi_program_compile_with that carry their input as data
(`compile_options`, keyed by cuabi_compile_desc field names) are written as
a constant table for the Rust corpus runner and one for the C# one, which
run each case through their language's typed CompileOptions (the Python
binding reads the JSON itself). The tables hold the fields as the case
writes them, each value tagged with its JSON type, so every field reaches
the runner, which decides whether its language's typed options can express
it. `scripts/regen --check` finds a table older than cases.json.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Tuple

from common import banner
from model import REPO

CASES = os.path.join(REPO, "tests", "corpus", "cases.json")
RUST = "bindings/rust/cuabi/tests/corpus/core_compile_cases.rs"
CSHARP = "bindings/csharp/tests/CoreCompileCases.g.cs"
CALL = "cuabi_program_compile_with"
SOURCE = (
    "The data is tests/corpus/cases.json's cases of cuabi_program_compile_with with"
    " compile_options: change them there and run scripts/regen."
)


def cases() -> List[Dict[str, Any]]:
    with open(CASES, encoding="utf-8") as f:
        data = json.load(f)["cases"]
    return [c for c in data if c["call"] == CALL and "compile_options" in c]


def _kind(case: Dict[str, Any], field: str, value: Any) -> str:
    """The JSON type of a field's value: bool, int, str or strs."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "strs"
    raise SystemExit(
        f"regen: {CASES}: case {case['id']}: compile_options.{field} is {value!r}: "
        "a field is a boolean, an integer, a string or a list of strings"
    )


def _fields(case: Dict[str, Any]) -> List[Tuple[str, str, Any]]:
    return [(k, _kind(case, k, v), v) for k, v in case["compile_options"].items()]


def _escape(text: str, unicode_escape) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or ord(ch) > 0x7E:
            out.append(unicode_escape(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def rust_str(text: str) -> str:
    return _escape(text, lambda ch: "\\u{%x}" % ord(ch))


def csharp_str(text: str) -> str:
    def esc(ch: str) -> str:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            return "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
        return "\\u%04x" % code

    return _escape(text, esc)


def rust(description: Dict[str, Any]) -> str:
    def value(kind: str, v: Any) -> str:
        if kind == "bool":
            return f"Value::Bool({'true' if v else 'false'})"
        if kind == "int":
            return f"Value::Int({v})"
        if kind == "str":
            return f"Value::Str({rust_str(v)})"
        return "Value::Strs(&[" + ", ".join(rust_str(s) for s in v) + "])"

    w = [
        banner("//"),
        f"// {SOURCE}\n",
        "\n",
        "//! The core's cases of `cuabi_program_compile_with` whose input is data\n",
        "//! (`compile_options` in tests/corpus/cases.json), for `corpus/compile.rs`.\n",
        "\n",
        "#![allow(dead_code)]\n",
        "\n",
        "/// A `cuabi_compile_desc` field's value as the case writes it.\n",
        "#[derive(Clone, Copy, Debug)]\n",
        "pub enum Value {\n",
        "    Bool(bool),\n",
        "    Int(i64),\n",
        "    Str(&'static str),\n",
        "    Strs(&'static [&'static str]),\n",
        "}\n",
        "\n",
        "/// One case: its id, what is wrong, the status (as `cuabi_status_get_name`\n",
        "/// names it) and the needle its message must hold, and the fields it sets.\n",
        "#[derive(Clone, Copy, Debug)]\n",
        "pub struct CoreCompileCase {\n",
        "    pub id: &'static str,\n",
        "    pub name: &'static str,\n",
        "    pub status: &'static str,\n",
        "    pub needle: &'static str,\n",
        "    pub fields: &'static [(&'static str, Value)],\n",
        "}\n",
        "\n",
        "pub const CORE_COMPILE_CASES: &[CoreCompileCase] = &[\n",
    ]
    for case in cases():
        w.append("    CoreCompileCase {\n")
        for key in ("id", "name", "status", "needle"):
            w.append(f"        {key}: {rust_str(case[key])},\n")
        w.append("        fields: &[\n")
        for field, kind, v in _fields(case):
            w.append(f"            ({rust_str(field)}, {value(kind, v)}),\n")
        w.append("        ],\n")
        w.append("    },\n")
    w.append("];\n")
    return "".join(w)


def csharp(description: Dict[str, Any]) -> str:
    def value(kind: str, v: Any) -> str:
        if kind == "bool":
            return "true" if v else "false"
        if kind == "int":
            return f"{v}L"
        if kind == "str":
            return csharp_str(v)
        return "new string[] { " + ", ".join(csharp_str(s) for s in v) + " }"

    w = [
        banner("//"),
        f"// {SOURCE}\n",
        "\n",
        "using System.Collections.Generic;\n",
        "\n",
        "namespace Cuabi.Tests\n",
        "{\n",
        "    /// <summary>\n",
        "    /// One of the core's cases of cuabi_program_compile_with whose input is\n",
        "    /// data: its id, what is wrong, the status (as cuabi_status_get_name\n",
        "    /// names it), the needle its message must hold, and the\n",
        "    /// cuabi_compile_desc fields it sets (bool, long, string or string[]).\n",
        "    /// </summary>\n",
        "    internal sealed class CoreCompileCase\n",
        "    {\n",
        "        public string Id;\n",
        "        public string Name;\n",
        "        public string Status;\n",
        "        public string Needle;\n",
        "        public KeyValuePair<string, object>[] Fields;\n",
        "    }\n",
        "\n",
        "    internal static class CoreCompileCases\n",
        "    {\n",
        "        private static KeyValuePair<string, object> F(string field, object value)\n",
        "        {\n",
        "            return new KeyValuePair<string, object>(field, value);\n",
        "        }\n",
        "\n",
        "        public static readonly CoreCompileCase[] All =\n",
        "        {\n",
    ]
    for case in cases():
        w.append("            new CoreCompileCase\n")
        w.append("            {\n")
        for key in ("id", "name", "status", "needle"):
            w.append(f"                {key.capitalize()} = {csharp_str(case[key])},\n")
        w.append("                Fields = new[]\n")
        w.append("                {\n")
        for field, kind, v in _fields(case):
            w.append(f"                    F({csharp_str(field)}, {value(kind, v)}),\n")
        w.append("                },\n")
        w.append("            },\n")
    w.append("        };\n")
    w.append("    }\n")
    w.append("}\n")
    return "".join(w)


def outputs(description: Dict[str, Any]) -> Dict[str, str]:
    return {RUST: rust(description), CSHARP: csharp(description)}
