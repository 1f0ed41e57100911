"""The low layer agrees with include/cuabi/cuabi.h, for both backends.

The chain of trust: gcc compiles the header together with the prototypes our
parser read from it (a misread type is a "conflicting types" error) and prints
every constant and every struct's size and field offsets; the ctypes
declarations, the constants module, the ctypes structs and the cffi library
are each compared with that. The comparison functions are also run on
deliberately wrong declarations, to show that they catch a drift.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from typing import Dict, List, Tuple

import pytest

import cuabi
from cuabi import _constants, _ctypes_api, _header, _loader
from conftest import HEADER, ROOT, have_cffi

# --------------------------------------------------------------------------
# gcc: what the C compiler says about the header
# --------------------------------------------------------------------------


def _cc() -> str:
    for name in ("gcc", "cc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no C compiler (gcc, cc or clang) to check the header with")


def _c_program(hdr: _header.Header) -> str:
    lines = [
        "#include <stddef.h>",
        "#include <stdio.h>",
        "#include <cuabi/cuabi.h>",
        "/* The prototypes as our parser read them: a misread one conflicts. */",
    ]
    for fn in hdr.functions.values():
        lines.append(fn.prototype())
    lines.append("int main(void) {")
    for name in hdr.constants:
        lines.append(f'  printf("const {name} %lld\\n", (long long)({name}));')
    for name, value in hdr.string_constants.items():
        lines.append(f'  printf("string {name} %s\\n", {name});')
    for st in hdr.structs.values():
        lines.append(f'  printf("sizeof {st.name} %zu\\n", sizeof({st.name}));')
        lines.append(f'  printf("alignof {st.name} %zu\\n", _Alignof({st.name}));')
        for f in st.fields:
            lines.append(
                f'  printf("offsetof {st.name} {f.name} %zu %zu\\n", '
                f"offsetof({st.name}, {f.name}), sizeof((({st.name}*)0)->{f.name}));"
            )
    # The _INIT macros, field by field (pointers as 0/1 for NULL or not).
    for st in hdr.structs.values():
        macro = f"{st.name.upper()}_INIT"
        if macro not in hdr.text:
            continue
        lines.append(f"  {{ {st.name} v = {macro};")
        for f in st.fields:
            if "*" in f.type:
                lines.append(
                    f'    printf("init {st.name} {f.name} %d\\n", v.{f.name} != 0);'
                )
            else:
                lines.append(
                    f'    printf("init {st.name} {f.name} %lld\\n", (long long)v.{f.name});'
                )
        lines.append("  }")
    lines.append("  return 0;\n}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_facts(header, tmp_path_factory) -> Dict[str, Dict]:
    """What gcc says: constants, strings, struct sizes/offsets, _INIT values."""
    tmp = tmp_path_factory.mktemp("cfacts")
    src = tmp / "facts.c"
    exe = tmp / "facts"
    src.write_text(_c_program(header))
    done = subprocess.run(
        [
            _cc(),
            "-std=c11",
            "-Wall",
            "-Werror",
            "-I",
            os.path.join(ROOT, "include"),
            str(src),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, (
        "the header and our parse of it disagree:\n" + done.stderr
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    facts: Dict[str, Dict] = {
        "const": {},
        "string": {},
        "sizeof": {},
        "alignof": {},
        "offsetof": {},
        "init": {},
    }
    for line in out.splitlines():
        kind, rest = line.split(" ", 1)
        if kind == "const":
            name, value = rest.split()
            facts["const"][name] = int(value)
        elif kind == "string":
            name, value = rest.split(" ", 1)
            facts["string"][name] = value
        elif kind in ("sizeof", "alignof"):
            name, value = rest.split()
            facts[kind][name] = int(value)
        elif kind == "offsetof":
            st, field, off, size = rest.split()
            facts["offsetof"][(st, field)] = (int(off), int(size))
        elif kind == "init":
            st, field, value = rest.split()
            facts["init"][(st, field)] = int(value)
    return facts


# --------------------------------------------------------------------------
# The parser itself
# --------------------------------------------------------------------------


def test_parser_reads_every_declaration(header):
    text = open(HEADER, encoding="utf-8").read()
    assert len(header.functions) == len(re.findall(r"^CUABI_API ", text, flags=re.M))
    assert len(header.functions) > 80
    assert header.structs.keys() == {"cuabi_launch_config", "cuabi_compile_desc"}
    assert set(header.handles) == set(_ctypes_api.HANDLE_TYPES)


def test_parser_constants_match_gcc(header, c_facts):
    assert header.constants == c_facts["const"]
    assert header.string_constants == c_facts["string"]


def test_parser_refuses_what_it_cannot_read():
    with pytest.raises(ValueError):
        _header.parse_header("CUABI_API int CUABI_CALL f(int x);\nCUABI_API garbage\n")
    with pytest.raises(ValueError):
        _header.parse_header("enum { CUABI_X };")


def test_header_functions_are_all_exported(header):
    lib = ctypes.CDLL(cuabi.find_library())
    missing = [name for name in header.functions if not hasattr(lib, name)]
    assert not missing, f"the library lacks {missing}"
    nm = shutil.which("nm")
    if nm:
        out = subprocess.run(
            [nm, "-D", "--defined-only", os.path.realpath(cuabi.find_library())],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        exported = {
            line.split()[-1] for line in out.splitlines() if " T cuabi_" in line
        }
        assert exported == set(header.functions), (
            f"exported but not in the header: {sorted(exported - set(header.functions))}; "
            f"in the header but not exported: {sorted(set(header.functions) - exported)}"
        )


# --------------------------------------------------------------------------
# ctypes
# --------------------------------------------------------------------------

_SCALARS = {
    "void": None,
    "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "uint8_t": ctypes.c_uint8,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
}

_STRUCTS = {
    "cuabi_launch_config": _ctypes_api.cuabi_launch_config,
    "cuabi_compile_desc": _ctypes_api.cuabi_compile_desc,
}


def expected_ctype(ctype: str, hdr: _header.Header):
    """The ctypes type our conventions give a header type (see _ctypes_api)."""
    if ctype in _SCALARS:
        return _SCALARS[ctype]
    if ctype in hdr.scalar_typedefs:
        return _SCALARS[hdr.scalar_typedefs[ctype]]
    if ctype in hdr.handles:
        return ctypes.c_void_p
    if ctype in ("const char*", "char*"):
        return ctypes.c_char_p
    if ctype in ("void*", "const void*", "void* const*"):
        # void* const* params: an address, so the NumPy way's args.ctypes.data fits
        return ctypes.c_void_p
    if ctype == "const char* const*":
        return ctypes.POINTER(ctypes.c_char_p)
    m = re.fullmatch(r"(const )?(\w+)\*", ctype)
    if m:
        target = m.group(2)
        if target in _STRUCTS:
            return ctypes.POINTER(_STRUCTS[target])
        if target == "void":
            return ctypes.c_void_p
        return ctypes.POINTER(expected_ctype(target, hdr))
    if ctype == "void**":
        return ctypes.POINTER(ctypes.c_void_p)
    raise AssertionError(f"no ctypes convention for {ctype!r}")


def ctypes_mismatches(hdr: _header.Header, declarations) -> List[str]:
    problems = []
    declared = {name: (res, args) for name, res, args in declarations}
    for name in sorted(set(declared) - set(hdr.functions)):
        problems.append(f"{name}: declared but not in the header")
    for fn in hdr.functions.values():
        if fn.name not in declared:
            problems.append(f"{fn.name}: in the header but not declared")
            continue
        restype, argtypes = declared[fn.name]
        want = expected_ctype(fn.restype, hdr)
        if restype is not want:
            problems.append(
                f"{fn.name}: restype {restype} but the header says {fn.restype}"
            )
        if len(argtypes) != len(fn.params):
            problems.append(
                f"{fn.name}: {len(argtypes)} argtypes but the header has {len(fn.params)}"
            )
            continue
        for i, (have, param) in enumerate(zip(argtypes, fn.params)):
            want = expected_ctype(param.type, hdr)
            if have is not want:
                problems.append(
                    f"{fn.name}: argument {i} ({param.name}) is {have} but the header says "
                    f"{param.type}"
                )
    return problems


def test_ctypes_declarations_match_header(header):
    assert ctypes_mismatches(header, _ctypes_api.DECLARATIONS) == []


def test_ctypes_check_catches_drift(header):
    decls = list(_ctypes_api.DECLARATIONS)
    # a wrong argument type, a missing argument, a missing function, an extra one
    name, res, args = decls[15]
    assert name == "cuabi_device_get"
    wrong = [(n, r, list(a)) for n, r, a in decls]
    wrong[15] = (name, res, [ctypes.c_uint64, args[1]])
    wrong[16] = (wrong[16][0], wrong[16][1], [])
    del wrong[20]
    wrong.append(("cuabi_not_in_header", ctypes.c_int32, []))
    problems = ctypes_mismatches(header, wrong)
    assert any("cuabi_device_get: argument 0" in p for p in problems)
    assert any("cuabi_device_release: 0 argtypes" in p for p in problems)
    assert any("in the header but not declared" in p for p in problems)
    assert any("cuabi_not_in_header" in p for p in problems)


def test_ctypes_functions_are_bound_as_declared():
    b = _loader.load_backend("ctypes")
    assert b.missing == {}
    for name, restype, argtypes in _ctypes_api.DECLARATIONS:
        fn = getattr(b.lib, name)
        assert fn.restype is restype, name
        assert list(fn.argtypes) == argtypes, name


def test_constants_module_matches_header(header, c_facts):
    ours = {k: v for k, v in vars(_constants).items() if k.startswith("CUABI_")}
    want = dict(c_facts["const"])
    want.update(c_facts["string"])
    assert ours == want
    assert set(_constants.__all__) == set(want)


def _ctypes_field_type(ftype: str, hdr):
    return expected_ctype(ftype, hdr)


@pytest.mark.parametrize("struct", ["cuabi_launch_config", "cuabi_compile_desc"])
def test_ctypes_struct_layout_matches_gcc(struct, header, c_facts):
    cls = _STRUCTS[struct]
    fields = header.structs[struct].fields
    assert [f[0] for f in cls._fields_] == [f.name for f in fields]
    for (name, ctype), f in zip(cls._fields_, fields):
        assert ctype is expected_ctype(f.type, header), f"{struct}.{name}"
        descr = getattr(cls, name)
        assert (descr.offset, descr.size) == c_facts["offsetof"][(struct, name)], name
    assert ctypes.sizeof(cls) == c_facts["sizeof"][struct]
    assert ctypes.alignment(cls) == c_facts["alignof"][struct]


def test_ctypes_init_macros_match_gcc(c_facts):
    for struct, init in (
        ("cuabi_launch_config", _ctypes_api.CUABI_LAUNCH_CONFIG_INIT),
        ("cuabi_compile_desc", _ctypes_api.CUABI_COMPILE_DESC_INIT),
    ):
        value = init()
        for name, _ in value._fields_:
            field = getattr(value, name)
            if isinstance(field, (bytes, type(None), ctypes._Pointer)):
                field = int(bool(field))
            assert field == c_facts["init"][(struct, name)], f"{struct}.{name}"


# --------------------------------------------------------------------------
# cffi
# --------------------------------------------------------------------------

needs_cffi = pytest.mark.skipif(
    not have_cffi(), reason="cffi is not installed (pip install cffi)"
)


def cffi_mismatches(hdr: _header.Header, ffi, lib) -> List[str]:
    problems = []
    for fn in hdr.functions.values():
        try:
            f = getattr(lib, fn.name)
        except AttributeError:
            problems.append(f"{fn.name}: not in the cffi library")
            continue
        t = ffi.typeof(f)
        if t.result is not ffi.typeof(fn.restype):
            problems.append(
                f"{fn.name}: returns {t.result.cname}, header says {fn.restype}"
            )
        want = [ffi.typeof(p.type) for p in fn.params]
        if list(t.args) != want:
            problems.append(
                f"{fn.name}: takes ({', '.join(a.cname for a in t.args)}), header says "
                f"({', '.join(p.type for p in fn.params)})"
            )
    return problems


@needs_cffi
def test_cffi_functions_match_header(header):
    b = _loader.load_backend("cffi")
    assert b.missing == {}
    assert cffi_mismatches(header, b.ffi, b.lib) == []


@needs_cffi
def test_cffi_check_catches_drift(header):
    import cffi

    text = header.cdef().replace(
        "cuabi_status cuabi_device_get(int32_t ordinal, cuabi_device* out);",
        "cuabi_status cuabi_device_get(uint32_t ordinal, cuabi_device* out);",
    )
    assert "uint32_t ordinal" in text
    ffi = cffi.FFI()
    ffi.cdef(text)
    lib = ffi.dlopen(cuabi.find_library())
    problems = cffi_mismatches(header, ffi, lib)
    assert len(problems) == 1 and "cuabi_device_get" in problems[0]


@needs_cffi
def test_cffi_constants_match_gcc(c_facts):
    b = _loader.load_backend("cffi")
    for name, value in c_facts["const"].items():
        assert getattr(b.lib, name) == value, name


@needs_cffi
@pytest.mark.parametrize("struct", ["cuabi_launch_config", "cuabi_compile_desc"])
def test_cffi_struct_layout_matches_gcc(struct, header, c_facts):
    ffi = _loader.load_backend("cffi").ffi
    assert ffi.sizeof(struct) == c_facts["sizeof"][struct]
    assert ffi.alignof(struct) == c_facts["alignof"][struct]
    fields = dict(ffi.typeof(struct).fields)
    assert list(fields) == [f.name for f in header.structs[struct].fields]
    for f in header.structs[struct].fields:
        got = (ffi.offsetof(struct, f.name), ffi.sizeof(fields[f.name].type))
        assert got == c_facts["offsetof"][(struct, f.name)], f.name
        assert fields[f.name].type is ffi.typeof(f.type), f.name


@needs_cffi
def test_cffi_cdef_comes_from_the_header(header):
    cdef = header.cdef()
    for fn in header.functions.values():
        assert fn.prototype() in cdef
    b = _loader.load_backend("cffi")
    assert (
        os.path.samefile(b.header.path, HEADER)
        or open(b.header.path).read() == open(HEADER).read()
    )


def test_both_backends_load_the_same_library():
    paths: List[Tuple[str, str]] = []
    for name in ("ctypes", "cffi") if have_cffi() else ("ctypes",):
        b = _loader.load_backend(name)
        paths.append((name, os.path.realpath(b.path)))
        assert b.version == cuabi.capi.CUABI_VERSION_NUMBER
    assert len({p for _, p in paths}) == 1, paths
