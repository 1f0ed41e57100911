#!/usr/bin/env python3
"""The parts of the reference site (scripts/docs) that are no tool's own:

  site.py index OUT_DIR             the front page: the SAXPY flow in each
                                    language, taken from the examples and the
                                    bindings' READMEs, linking the references
  site.py csharp XML API OUT_DIR    the C# reference: the XML documentation mcs
                                    wrote, as one HTML page, for the public
                                    types and members API lists (as
                                    ExportedTypes.cs prints them)
  site.py pydoc OUT_DIR             the Python reference through pydoc, where
                                    pdoc is missing
  site.py python-check              every name cuabi.__all__ exports has a
                                    docstring; names each that has none
  site.py doxygen-check LOG XML_DIR [FILE...]
                                    Doxygen's warnings about FILEs (the checked
                                    headers), one per line, and how many
                                    functions of each are documented; exit 1
                                    on a warning

Run from the repository's root; the Python package is imported from
bindings/python.
"""

from __future__ import annotations

import html
import os
import re
import sys
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The names cuabi.__all__ exports that have no docstring yet, each with where
# it is written. The check reports them without failing; an entry whose name
# has its docstring is reported as stale.
PYTHON_KNOWN_UNDOCUMENTED: Dict[str, str] = {}

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1b1b1b; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { background: #f5f5f5; padding: 0.75rem; overflow-x: auto; border-radius: 4px; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; margin-top: 2rem; }
.refs a { margin-right: 1.2rem; }
.member { margin: 0.6rem 0 0.6rem 1rem; }
.member > .name { font-family: ui-monospace, monospace; font-weight: 600; }
.kind { color: #666; font-size: 0.85em; }
dl.params dt { font-family: ui-monospace, monospace; }
nav.toc { columns: 3; font-size: 0.9em; }
"""


def page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def read(rel: str) -> str:
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------------------
# The front page
# ---------------------------------------------------------------------------


def fenced(rel: str, lang: str, containing: str) -> Optional[str]:
    """The first ```lang block of the Markdown file `rel` holding `containing`."""
    for m in re.finditer(r"^```" + re.escape(lang) + r"\n(.*?)^```", read(rel), re.S | re.M):
        if containing in m.group(1):
            return m.group(1).rstrip("\n")
    return None


def ranges(rel: str, spans: List[Tuple[str, str]]) -> Optional[str]:
    """The lines of `rel` from each span's first marker to its second, both
    included, dedented, the spans joined by a `...` line."""
    lines = read(rel).split("\n")
    parts: List[List[str]] = []
    for start, end in spans:
        a = next((i for i, l in enumerate(lines) if start in l), None)
        if a is None:
            return None
        b = next((i for i in range(a, len(lines)) if end in lines[i]), None)
        if b is None:
            return None
        parts.append(lines[a : b + 1])
    indent = min(len(l) - len(l.lstrip()) for p in parts for l in p if l.strip())
    out: List[str] = []
    for p in parts:
        if out:
            out.append("...")
        out += [l[indent:] for l in p]
    return "\n".join(out)


# (title, anchor, the reference's path in the site, the snippet, its source,
# the complete example)
FLOWS = [
    ("C", "c", "c/cuabi_8h.html",
     lambda: fenced("README.md", "c", "cuabi_module_compile"),
     "README.md (The C API in brief)", "examples/c/saxpy.c"),
    ("C++", "cpp", "c/annotated.html",
     lambda: ranges("examples/cpp/saxpy.cpp", [
         ("const cuabi::device device = ", "const cuabi::function kernel = "),
         ("cuabi::buffer dx = ", "const cuabi::stream stream = "),
         ("dx.copy_from_host_async(", "const cuabi_launch_config config = "),
         ("kernel.launch(config, stream, a, dx, dy, dout, n);", "stream.synchronize();"),
     ]),
     "examples/cpp/saxpy.cpp", "examples/cpp/saxpy.cpp"),
    ("Python", "python", "python/cuabi.html",
     lambda: fenced("bindings/python/README.md", "python", "get_kernel(\"saxpy\")"),
     "bindings/python/README.md", "examples/python/saxpy_pythonic.py"),
    ("Rust", "rust", "rust/cuabi/index.html",
     lambda: fenced("bindings/rust/README.md", "rust", "module.function(\"saxpy\")"),
     "bindings/rust/README.md", "bindings/rust/cuabi/examples/saxpy.rs"),
    ("C#", "csharp", "csharp/index.html",
     lambda: fenced("bindings/csharp/README.md", "csharp", "GetKernel(\"saxpy\")"),
     "bindings/csharp/README.md (SAXPY)", "examples/csharp/Saxpy.cs"),
]

REFERENCES = [
    ("C and C++ (Doxygen)", "c/index.html"),
    ("Python (pdoc)", "python/index.html"),
    ("Rust: cuabi", "rust/cuabi/index.html"),
    ("Rust: cuabi-sys", "rust/cuabi_sys/index.html"),
    ("C# (XML documentation)", "csharp/index.html"),
]


def index(out_dir: str) -> int:
    version = re.search(r'"string": "([^"]+)"', read("include/cuabi/cuabi.json"))
    body = [
        f"<h1>cuabi {html.escape(version.group(1) if version else '')}</h1>",
        "<p>cuabi compiles CUDA C++ at run time (NVRTC), moves data and launches kernels "
        "(CUDA driver API) behind one stable C ABI, <code>include/cuabi/cuabi.h</code>, "
        "that any language can reach. Every binding's declarations are generated from "
        "that header, with its comments.</p>",
        "<p class=\"refs\"><strong>References:</strong> "
        + " ".join(f"<a href=\"{href}\">{html.escape(t)}</a>" for t, href in REFERENCES)
        + "</p>",
        "<p>The header's opening comment is the contract every language follows: names, "
        "results and the calling thread's last error, handles and their release, threads, "
        "the two-call pattern for strings and blobs, versioned structs and the ABI rules "
        "(<a href=\"c/cuabi_8h.html\">cuabi.h</a>).</p>",
        "<h2>SAXPY in each language</h2>",
        "<p>The same flow everywhere: compile a CUDA C++ string, load it, get the kernel, "
        "allocate, copy in, launch, copy back, synchronise.</p>",
        "<nav class=\"toc\">"
        + " ".join(f"<a href=\"#{a}\">{html.escape(t)}</a>" for t, a, *_ in FLOWS)
        + "</nav>",
    ]
    missing = []
    for title, anchor, ref, snippet, source, example in FLOWS:
        code = snippet()
        body.append(f"<h3 id=\"{anchor}\">{html.escape(title)}</h3>")
        if code is None:
            missing.append(f"{title}: {source}")
            body.append(f"<p>See <code>{html.escape(example)}</code>.</p>")
        else:
            body.append(f"<pre><code>{html.escape(code)}</code></pre>")
        body.append(
            f"<p>From <code>{html.escape(source)}</code>; the complete program is "
            f"<code>{html.escape(example)}</code>. <a href=\"{ref}\">{html.escape(title)} "
            "reference</a>.</p>"
        )
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as f:
        f.write(page("cuabi reference", "\n".join(body)))
    for m in missing:
        print(f"docs: no SAXPY snippet found for {m}; the front page links the example", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------
# C#: mcs's XML documentation as HTML
# ---------------------------------------------------------------------------

KINDS = {"T": "type", "M": "method", "P": "property", "F": "field", "E": "event"}


def _short(cref: str) -> str:
    """`M:Cuabi.Device.Get(System.Int32)` -> `Device.Get(int)`, roughly."""
    name = cref.split(":", 1)[-1]
    base, _, args = name.partition("(")
    base = re.sub(r"^Cuabi\.", "", base).replace("``", "").replace("`", "")
    base = re.sub(r"\d+(?=\.|$)", "", base) if "`" in name.split("(")[0] else base
    if args:
        args = args.rstrip(")")
        args = ", ".join(a.split(".")[-1] for a in args.split(","))
        return f"{base}({args})"
    return base


def _inline(node: ET.Element) -> str:
    """A documentation element's content as HTML."""
    out = [html.escape(node.text or "")]
    for child in node:
        tag = child.tag
        if tag == "see" or tag == "seealso":
            cref = child.get("cref") or child.get("langword") or child.get("href") or ""
            target = cref.split(":", 1)[-1].split("(")[0]
            label = _inline(child).strip() or html.escape(_short(cref))
            if cref.startswith("T:Cuabi."):
                out.append(f"<a href=\"#{html.escape(target)}\"><code>{label}</code></a>")
            else:
                out.append(f"<code>{label}</code>")
        elif tag in ("paramref", "typeparamref"):
            out.append(f"<code>{html.escape(child.get('name') or '')}</code>")
        elif tag == "c":
            out.append(f"<code>{_inline(child)}</code>")
        elif tag == "code":
            out.append(f"<pre><code>{html.escape(''.join(child.itertext()).strip(chr(10)))}</code></pre>")
        elif tag == "para":
            out.append(f"<p>{_inline(child)}</p>")
        elif tag in ("list",):
            items = "".join(f"<li>{_inline(i)}</li>" for i in child)
            out.append(f"<ul>{items}</ul>")
        else:
            out.append(_inline(child))
        out.append(html.escape(child.tail or ""))
    return "".join(out)


def _member_html(m: ET.Element, title: str) -> str:
    parts = [f"<div class=\"name\">{html.escape(title)}</div>"]
    for tag in ("summary", "remarks"):
        e = m.find(tag)
        if e is not None:
            parts.append(f"<div>{_inline(e)}</div>")
    rows = []
    for tag, label in (("typeparam", "type"), ("param", "")):
        for p in m.findall(tag):
            rows.append(f"<dt>{html.escape(p.get('name') or '')}</dt><dd>{_inline(p)}</dd>")
    if rows:
        parts.append("<dl class=\"params\">" + "".join(rows) + "</dl>")
    r = m.find("returns")
    if r is not None:
        parts.append(f"<div><em>Returns:</em> {_inline(r)}</div>")
    for x in m.findall("exception"):
        parts.append(f"<div><em>Throws</em> <code>{html.escape(_short(x.get('cref') or ''))}</code>: "
                     f"{_inline(x)}</div>")
    for x in m.findall("example"):
        parts.append(f"<div><em>Example:</em> {_inline(x)}</div>")
    return "\n".join(parts)


def csharp(xml_path: str, api_path: str, out_dir: str) -> int:
    public: set = set()  # public types, and (type, member name) pairs
    with open(api_path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                public.add(tuple(line.split("\t")) if "\t" in line else line)
    members = ET.parse(xml_path).getroot().find("members")
    by_type: Dict[str, List[ET.Element]] = {}
    types: Dict[str, ET.Element] = {}
    for m in members if members is not None else []:
        name = m.get("name") or ""
        kind, _, full = name.partition(":")
        if kind == "T":
            types[full] = m
            continue
        owner, _, member = full.split("(")[0].rpartition(".")
        if (owner, re.sub(r"``\d+$", "", member)) in public:
            by_type.setdefault(owner, []).append(m)
    shown = sorted(t for t in types if t in public)
    body = [
        "<h1>cuabi for C#: the <code>Cuabi</code> namespace</h1>",
        "<p><a href=\"../index.html\">cuabi reference</a>. Written from the XML documentation "
        "mcs makes of <code>bindings/csharp/src</code> (<a href=\"Cuabi.xml\">Cuabi.xml</a>), "
        f"for the assembly's {len(shown)} public types and their public and protected "
        "members.</p>",
        "<nav class=\"toc\">"
        + "".join(f"<div><a href=\"#{html.escape(t)}\">{html.escape(_short('T:' + t))}</a></div>"
                  for t in shown)
        + "</nav>",
    ]
    for t in shown:
        body.append(f"<h2 id=\"{html.escape(t)}\">{html.escape(_short('T:' + t))}</h2>")
        body.append(_member_html(types[t], t))
        for m in by_type.get(t, []):
            kind, _, full = (m.get("name") or "").partition(":")
            title = _short(m.get("name") or "")
            body.append(f"<div class=\"member\"><span class=\"kind\">{KINDS.get(kind, kind)}</span> "
                        f"{_member_html(m, title)}</div>")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as f:
        f.write(page("cuabi for C#", "\n".join(body)))
    return 0


# ---------------------------------------------------------------------------
# Python
# ---------------------------------------------------------------------------


def _import_cuabi():
    sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
    import cuabi  # noqa: E402

    return cuabi


def pydoc_site(out_dir: str) -> int:
    import pydoc

    cuabi = _import_cuabi()
    os.makedirs(out_dir, exist_ok=True)
    text = pydoc.HTMLDoc().page("cuabi", pydoc.HTMLDoc().document(cuabi))
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(out_dir, "cuabi.html"), "w", encoding="utf-8") as f:
        f.write(text)
    return 0


def python_check() -> int:
    import inspect

    cuabi = _import_cuabi()
    missing, known, stale, values = [], [], [], []
    for name in cuabi.__all__:
        obj = getattr(cuabi, name)
        if not (inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj)):
            values.append(name)  # a constant: no docstring of its own
            continue
        documented = bool((obj.__doc__ or "").strip())
        if name in PYTHON_KNOWN_UNDOCUMENTED:
            (stale if documented else known).append(name)
        elif not documented:
            missing.append(name)
    total = len(cuabi.__all__) - len(values)
    print(f"python: {total - len(missing) - len(known)} of {total} names cuabi.__all__ exports "
          f"have a docstring ({len(values)} constants not counted)")
    # The public methods and properties each exported class defines itself.
    members = 0
    for name in cuabi.__all__:
        cls = getattr(cuabi, name)
        if not inspect.isclass(cls):
            continue
        for attr, value in vars(cls).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, property):
                doc = value.__doc__
            else:
                func = getattr(value, "__func__", value)
                if not inspect.isroutine(func):
                    continue
                doc = func.__doc__
            members += 1
            if not (doc or "").strip():
                missing.append(f"{name}.{attr}")
    print(f"python: {members - sum('.' in m for m in missing)} of {members} public methods and "
          "properties of the exported classes have a docstring")
    for name in known:
        print(f"python: known gap: cuabi.{name} has no docstring "
              f"({PYTHON_KNOWN_UNDOCUMENTED[name]})")
    for name in stale:
        print(f"python: cuabi.{name} now has a docstring: drop it from "
              "PYTHON_KNOWN_UNDOCUMENTED in docs/reference/site.py")
    for name in missing:
        print(f"python: undocumented: cuabi.{name} has no docstring", file=sys.stderr)
    return 1 if missing else 0


# ---------------------------------------------------------------------------
# Doxygen
# ---------------------------------------------------------------------------


def doxygen_check(log: str, xml_dir: str, files: List[str]) -> int:
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    # A warning is a line "<file>:<line>: warning: ..." and its indented
    # continuation lines (a list of parameters, say).
    warnings: List[Tuple[str, str]] = []
    for line in text.split("\n"):
        m = re.match(r"^(.*?):\d+: (warning|error): ", line)
        if m:
            warnings.append((m.group(1), line))
        elif line.strip() and warnings:
            f0, w0 = warnings[-1]
            warnings[-1] = (f0, w0 + "\n" + line)
    checked = [w for f0, w in warnings if os.path.basename(f0) in files]
    other: Dict[str, int] = {}
    for f0, _ in warnings:
        if os.path.basename(f0) not in files:
            other[os.path.basename(f0)] = other.get(os.path.basename(f0), 0) + 1
    # The functions documented, by the file that declares them (a member of a
    # class or namespace appears in several compounds: counted once), and the
    # functions Doxygen found undocumented.
    documented: Dict[str, set] = {name: set() for name in files}
    for entry in sorted(os.listdir(xml_dir)) if os.path.isdir(xml_dir) else []:
        if not entry.endswith(".xml") or entry == "index.xml":
            continue
        for m in ET.parse(os.path.join(xml_dir, entry)).iter("memberdef"):
            loc = m.find("location")
            where = os.path.basename(loc.get("file") or "") if loc is not None else ""
            if m.get("kind") == "function" and where in documented:
                documented[where].add(m.get("id"))
    for name in files:
        undocumented = sum(
            1 for f0, w in warnings
            if os.path.basename(f0) == name and "(function)" in w and "is not documented" in w
        )
        done = len(documented[name])
        print(f"doxygen: {name}: {done} of {done + undocumented} functions documented")
    for name, n in sorted(other.items()):
        print(f"doxygen: {name}: {n} warnings, not checked (see docs/reference/Doxyfile)")
    for w in checked:
        print(f"doxygen: {w}", file=sys.stderr)
    return 1 if checked else 0


def main(argv: List[str]) -> int:
    if len(argv) >= 2 and argv[0] == "index":
        return index(argv[1])
    if len(argv) >= 4 and argv[0] == "csharp":
        return csharp(argv[1], argv[2], argv[3])
    if len(argv) >= 2 and argv[0] == "pydoc":
        return pydoc_site(argv[1])
    if argv[:1] == ["python-check"]:
        return python_check()
    if len(argv) >= 3 and argv[0] == "doxygen-check":
        return doxygen_check(argv[1], argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
