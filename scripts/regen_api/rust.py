"""The Rust side.

* cuabi-sys/src/bindings.rs: bindgen's output over the header (its flags live
  only in bindings/rust/regen-sys.sh, which this calls), with each item's
  documentation written from the model in place of bindgen's own: every
  function, constant, type, struct and field carries the header's comment
  (a group's comment for each member, annotation lines left out), so the
  crate builds with `-D missing_docs` (scripts/docs --check);
* cuabi/src/generated.rs: the header's enums and flag sets as Rust types
  (ErrorKind from cuabi_status, Output, FunctionAttribute, CaptureMode,
  StreamFlags, LaunchFlags, ...), each value documented with the header's
  comment (a value without one shares the comment above it), and the
  release function of each handle type;
* the header's callback types (the model's `callbacks`, such as
  cuabi_host_fn) come from bindgen as `Option<unsafe extern "C" fn(...)>`;
  regen checks that they do, since the safe crate's trampolines rely on it;
* the cuabi crates' `version = ...` lines in the Cargo manifests and lock
  files, stamped with the header's version.
"""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from typing import Any, Dict, List

from common import banner
from model import REPO

RUST = os.path.join("bindings", "rust")

# Enums whose Rust type differs from the rule (cuabi_<name> -> <Name>).
# cuabi_status: CUABI_SUCCESS is no error, so it has no kind.
STATUS = "cuabi_status"
SUCCESS = "CUABI_SUCCESS"
RENAMED = {STATUS: "ErrorKind"}
# Enums that take values besides the named ones (the header says "any other
# ... value may be passed"): their Rust type has a Raw(value) variant.
OPEN = {"cuabi_function_attribute"}
# Rust-specific descriptions of types whose header comment speaks of C.
TYPE_DOCS = {
    STATUS: "What failed: one of the header's `cuabi_status` values other than "
    "`CUABI_SUCCESS`. [`Error::status`](crate::Error::status) gives the raw value; "
    "a status newer than this crate maps to [`ErrorKind::Unknown`].",
}

IDENT = re.compile(r"\*?\b(?:cuabi|CUABI)_\w+(?:\.\w+)?(?:\(\))?|\bCU[a-z]\w*|\bnvrtc\w+\b|\b__\w+__\b")


def camel(words: str) -> str:
    return "".join(w[:1].upper() + w[1:].lower() for w in words.split("_") if w)


def doc_text(text: str) -> str:
    """Header prose as Markdown: C names as code, Markdown's own characters escaped."""
    out, at = [], 0
    for m in IDENT.finditer(text):
        out.append(re.sub(r"([\\`*\[\]<>])", r"\\\1", text[at : m.start()]))
        out.append(f"`{m.group(0)}`")
        at = m.end()
    out.append(re.sub(r"([\\`*\[\]<>])", r"\\\1", text[at:]))
    return " ".join("".join(out).split())


def doc(text: str, indent: str = "", raw: bool = False) -> str:
    """`text` as `///` lines that fit in 100 columns."""
    body = " ".join(text.split()) if raw else doc_text(text)
    width = 100 - len(indent) - 4
    lines = textwrap.wrap(body, width, break_long_words=False, break_on_hyphens=False)
    return "".join(f"{indent}/// {line}\n" for line in lines)


def doc_paragraphs(text: str, indent: str = "") -> str:
    """`text` as `///` lines, its paragraphs (blank-line separated) kept."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    return f"{indent}///\n".join(doc(p, indent) for p in paragraphs)


def common_prefix(names: List[str]) -> str:
    words = [n.split("_") for n in names]
    prefix = []
    for group in zip(*words):
        if len(set(group)) != 1:
            break
        prefix.append(group[0])
    return "_".join(prefix) + "_"


def value_doc(value: Dict[str, Any]) -> str:
    return f"`{value['name']}`: {doc_text(value['doc'])}"


def documented(values: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The values, each without a comment of its own taking the comment of
    the value before it (the header documents a run of related values, such
    as a cluster's width, height and depth, once, above the first)."""
    out, last = [], ""
    for v in values:
        last = v["doc"] or last
        out.append(dict(v, doc=last))
    return out


def plain_enum(enum: Dict[str, Any]) -> str:
    name = enum["name"]
    rust = RENAMED.get(name) or camel(name[len("cuabi_") :])
    values = documented([v for v in enum["values"] if v["name"] != SUCCESS or name != STATUS])
    prefix = "CUABI_ERROR_" if name == STATUS else common_prefix([v["name"] for v in values])
    open_enum = name in OPEN
    closed = name != STATUS and not open_enum
    # Default only where a value is 0 (what a zeroed struct field holds).
    has_zero = any(v["value"] == 0 for v in values)
    derives = (
        "Clone, Copy, Debug, Default, PartialEq, Eq, Hash"
        if closed and has_zero
        else "Clone, Copy, Debug, PartialEq, Eq, Hash"
    )
    out = [doc(TYPE_DOCS[name], raw=True) if name in TYPE_DOCS else doc(enum["doc"] or f"The values of `{name}`.")]
    if not closed:
        out.append("///\n/// More values may come with a newer library: match with a `_` arm.\n")
    out.append(f"#[derive({derives})]\n")
    if not closed:
        out.append("#[non_exhaustive]\n")
    out.append(f"pub enum {rust} {{\n")
    variants = []
    for v in values:
        assert v["name"].startswith(prefix), (v["name"], prefix)
        variant = camel(v["name"][len(prefix) :])
        variants.append((variant, v))
        out.append(doc(value_doc(v), "    ", raw=True))
        if closed and v["value"] == 0:
            out.append("    #[default]\n")
        out.append(f"    {variant},\n")
    if name == STATUS:
        out.append("    /// A status this version of the crate does not know.\n    Unknown,\n")
    if open_enum:
        out.append(
            f"    /// Any other `{name}` value, by its number.\n    Raw(sys::{name}),\n"
        )
    out.append("}\n\n")
    out.append(f"impl {rust} {{\n")
    if name == STATUS:
        out.append(
            "    /// The kind of a raw `cuabi_status`; `CUABI_SUCCESS` and values this crate does\n"
            "    /// not know give [`ErrorKind::Unknown`].\n"
            f"    pub fn from_status(status: sys::{name}) -> {rust} {{\n"
            "        match status {\n"
        )
        for variant, v in variants:
            out.append(f"            sys::{v['name']} => {rust}::{variant},\n")
        out.append(f"            _ => {rust}::Unknown,\n        }}\n    }}\n")
    else:
        out.append(
            f"    /// The `{name}` value.\n"
            f"    pub fn raw(self) -> sys::{name} {{\n"
            "        match self {\n"
        )
        for variant, v in variants:
            out.append(f"            {rust}::{variant} => sys::{v['name']},\n")
        if open_enum:
            out.append(f"            {rust}::Raw(value) => value,\n")
        out.append("        }\n    }\n")
        if closed:
            out.append(
                f"    /// The variant of a raw `{name}` value (as the library answers it);\n"
                "    /// `None` for a value this version of the crate does not know.\n"
                f"    pub fn from_raw(value: sys::{name}) -> Option<{rust}> {{\n"
                "        match value {\n"
            )
            for variant, v in variants:
                out.append(f"            sys::{v['name']} => Some({rust}::{variant}),\n")
            out.append("            _ => None,\n        }\n    }\n")
    out.append("}\n")
    return "".join(out)


def flag_set(flags: Dict[str, Any], bits: Dict[str, Any]) -> str:
    name = flags["name"]
    obj = name[len("cuabi_") : -len("_flags")]
    rust = camel(obj) + "Flags"
    prefix = f"CUABI_{obj.upper()}_"
    out = [
        doc(flags["doc"] or f"Flags: `{name}`, the bits of `{flags['bits']}`."),
        "#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]\n",
        f"pub struct {rust}(sys::{name});\n\n",
        f"impl {rust} {{\n",
        "    /// No flag.\n",
        f"    pub const NONE: {rust} = {rust}(0);\n",
    ]
    for v in documented(bits["values"]):
        assert v["name"].startswith(prefix), (v["name"], prefix)
        out.append(doc(value_doc(v), "    ", raw=True))
        out.append(f"    pub const {v['name'][len(prefix):]}: {rust} = {rust}(sys::{v['name']});\n")
    out.append(
        f"\n    /// The raw `{name}` bits.\n"
        f"    pub fn bits(self) -> sys::{name} {{\n        self.0\n    }}\n\n"
        f"    /// The flags of raw `{name}` bits, kept as they are (bits this crate\n"
        f"    /// does not name included).\n"
        f"    pub const fn from_bits(bits: sys::{name}) -> {rust} {{\n        {rust}(bits)\n    }}\n\n"
        f"    /// `true` when every flag of `other` is set in `self`.\n"
        f"    pub fn contains(self, other: {rust}) -> bool {{\n"
        f"        self.0 & other.0 == other.0\n    }}\n\n"
        f"    /// `self` with the flags of `other` set when `on`, cleared when not.\n"
        f"    pub fn with(self, other: {rust}, on: bool) -> {rust} {{\n"
        f"        if on {{ {rust}(self.0 | other.0) }} else {{ {rust}(self.0 & !other.0) }}\n"
        f"    }}\n}}\n\n"
        f"impl std::ops::BitOr for {rust} {{\n"
        f"    type Output = {rust};\n"
        f"    fn bitor(self, rhs: {rust}) -> {rust} {{\n"
        f"        {rust}(self.0 | rhs.0)\n    }}\n}}\n\n"
        f"impl std::ops::BitOrAssign for {rust} {{\n"
        f"    fn bitor_assign(&mut self, rhs: {rust}) {{\n"
        f"        self.0 |= rhs.0;\n    }}\n}}\n"
    )
    return "".join(out)


def releases(model: Dict[str, Any]) -> str:
    """`Release` for each handle type: its `*_release` function."""
    out = []
    for f in model["functions"]:
        if f["releases"]:
            handle = f["params"][0]["type"]["c"]
            out.append(
                f"impl Release for sys::{handle} {{\n"
                f"    unsafe fn release(self) {{\n        sys::{f['name']}(self)\n    }}\n}}\n"
            )
    return "\n".join(out)


def inits(model: Dict[str, Any]) -> str:
    """`Versioned` for each versioned struct: its `_init` function, which
    `crate::error::init_struct` calls over a zeroed struct."""
    out = [
        "/// A versioned struct of the header (first field `struct_size`) and its `_init`.\n"
        "///\n/// # Safety\n"
        "/// Zero is a value of every field (numbers, enums, pointers and handles), and\n"
        "/// [`init`](Versioned::init) is the struct's `_init` function.\n"
        "pub(crate) unsafe trait Versioned {\n"
        "    /// Fills the `size` bytes at `raw` with the library's defaults.\n"
        "    ///\n    /// # Safety\n    /// `raw` points to `size` writable bytes.\n"
        "    unsafe fn init(raw: *mut Self, size: usize) -> sys::cuabi_status;\n}\n"
    ]
    for st in model["structs"]:
        if st.get("init"):
            out.append(
                f"unsafe impl Versioned for sys::{st['name']} {{\n"
                "    unsafe fn init(raw: *mut Self, size: usize) -> sys::cuabi_status {\n"
                f"        sys::{st['init']}(raw, size)\n    }}\n}}\n"
            )
    return "\n".join(out)


def generated(model: Dict[str, Any]) -> str:
    by_name = {e["name"]: e for e in model["enums"]}
    parts = [plain_enum(e) for e in model["enums"] if not e["is_flag_bits"]]
    parts += [flag_set(f, by_name[f["bits"]]) for f in model["flags"]]
    parts.append(releases(model))
    parts.append(inits(model))
    text = (
        banner("//")
        + "//! What the header defines as data: its enums and flag sets as Rust types,\n"
        "//! each value with the header's comment, the release function of each\n"
        "//! handle type and the init function of each versioned struct.\n\n"
        "use cuabi_sys as sys;\n\nuse crate::handle::Release;\n\n"
        + "\n".join(parts)
    )
    return rustfmt(text)


def rustfmt(text: str) -> str:
    out = subprocess.run(
        ["rustfmt", "--edition", "2021", "--emit", "stdout", "--quiet"],
        input=text, capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"regen: rustfmt failed on the generated Rust:\n{out.stderr}")
    return out.stdout


def bindgen() -> str:
    script = os.path.join(REPO, RUST, "regen-sys.sh")
    out = subprocess.run([script, "--stdout"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"regen: bindgen failed:\n{out.stderr}")
    return out.stdout


# bindgen's items: `pub fn NAME(`, `pub const NAME:`, `pub type NAME =`,
# `pub struct NAME {`, and a struct's `pub FIELD:`.
_ITEM = re.compile(r"^(\s*)pub (fn|const|type|struct) (\w+)")
_FIELD = re.compile(r"^(\s+)pub (\w+): ")
_BINDGEN_DOC = re.compile(r'^\s*#\[doc = ".*"\]\s*$')


def sys_docs(model: Dict[str, Any]) -> Dict[str, str]:
    """Each name bindgen declares, with its documentation from the model."""
    docs: Dict[str, str] = {}
    for c in model["constants"]:
        docs[c["name"]] = c["doc"]
    for e in model["enums"]:
        docs[e["name"]] = e["doc"]
        for v in documented(e["values"]):
            docs[v["name"]] = v["doc"]
        # The width enumerator the model leaves out.
        stem = e["name"][len("cuabi_") :].upper()
        docs[f"CUABI_{stem}_FORCE32"] = (
            f"Fixes the width of `{e['name']}` at 32 bits; no value to pass."
        )
    for f in model["flags"]:
        docs[f["name"]] = f["doc"]
    for h in model["handles"]:
        docs[h["name"]] = f"A `{h['name']}` handle: {h['doc']}." if h["doc"] else ""
        docs[h["struct"]] = f"The opaque type a `{h['name']}` handle points to; never dereferenced."
    for c in model["callbacks"]:
        docs[c["name"]] = c["doc"]
    for st in model["structs"]:
        docs[st["name"]] = st["doc"]
    for fn in model["functions"]:
        docs[fn["name"]] = fn["doc"]
    return docs


def documented_bindings(model: Dict[str, Any], text: str) -> str:
    """bindgen's output with the model's documentation on each item, in place
    of the comments bindgen copied from the header. An item the model has no
    text for stays undocumented (`-D missing_docs` then names it)."""
    docs = sys_docs(model)
    fields = {st["name"]: {f["name"]: f["doc"] for f in st["fields"]} for st in model["structs"]}
    out: List[str] = []
    struct = None
    for line in text.split("\n"):
        if _BINDGEN_DOC.match(line):
            continue
        item = _ITEM.match(line)
        text_doc = ""
        indent = ""
        if item:
            indent, kind, name = item.groups()
            text_doc = docs.get(name, "")
            if kind == "struct":
                struct = name if line.rstrip().endswith("{") else None
        elif struct is not None:
            if line.startswith("}"):
                struct = None
            else:
                field = _FIELD.match(line)
                if field:
                    indent = field.group(1)
                    text_doc = fields.get(struct, {}).get(field.group(2), "")
        if text_doc:
            # Before the item's attributes (#[repr(C)], #[derive(...)]).
            at = len(out)
            while at > 0 and out[at - 1].lstrip().startswith("#["):
                at -= 1
            out[at:at] = doc_paragraphs(text_doc, indent).rstrip("\n").split("\n")
        out.append(line)
    return "\n".join(out)


CRATES = ("cuabi", "cuabi-sys")


def stamped(rel: str, version: str) -> str:
    """The file at `rel` with the cuabi crates' versions set to `version`."""
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        text = f.read()
    v = f'version = "{version}"'
    if rel.endswith("Cargo.lock"):
        # [[package]] name = "cuabi" / version = "..."
        names = "|".join(re.escape(c) for c in CRATES)
        return re.sub(rf'(name = "(?:{names})"\n)version = "[^"]*"', rf"\g<1>{v}", text)
    if rel == os.path.join(RUST, "Cargo.toml"):
        # The workspace's package version, inherited by both crates.
        return re.sub(r'(\[workspace\.package\][^\[]*?)version = "[^"]*"', rf"\g<1>{v}", text)
    # A dependency on a cuabi crate: name = { path = "...", version = "..." }.
    names = "|".join(re.escape(c) for c in CRATES)
    return re.sub(rf'^((?:{names}) = \{{[^}}\n]*)version = "[^"]*"', rf"\g<1>{v}", text, flags=re.M)


MANIFESTS = [
    os.path.join(RUST, "Cargo.toml"),
    os.path.join(RUST, "cuabi", "Cargo.toml"),
    os.path.join(RUST, "Cargo.lock"),
    os.path.join("bench", "rust", "Cargo.lock"),
    os.path.join("examples", "rust", "downstream", "Cargo.lock"),
]


def callbacks_are_nullable(model: Dict[str, Any], bindings: str) -> None:
    """Each callback type of the header must reach Rust as bindgen's
    `Option<unsafe extern "C" fn(...)>`, which the safe crate passes its
    trampolines as (`Some(trampoline::<F>)`) and NULL as `None`."""
    for callback in model.get("callbacks", []):
        name = callback["name"]
        # rustfmt may wrap a long type after the `=`.
        if not re.search(rf"pub type {name} =\s*::std::option::Option<", bindings):
            raise SystemExit(
                f"regen: bindgen did not declare the callback type {name} as "
                "::std::option::Option<unsafe extern \"C\" fn(...)>; check regen-sys.sh's flags"
            )


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    version = model["version"]["string"]
    bindings = documented_bindings(model, bindgen())
    callbacks_are_nullable(model, bindings)
    files = {
        os.path.join(RUST, "cuabi-sys", "src", "bindings.rs"): bindings,
        os.path.join(RUST, "cuabi", "src", "generated.rs"): generated(model),
    }
    for rel in MANIFESTS:
        if os.path.exists(os.path.join(REPO, rel)):
            files[rel] = stamped(rel, version)
    return files
