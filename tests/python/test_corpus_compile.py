"""The bad-input corpus of compilation beyond one string (typed compile
options, compiling in the background, LTO-IR, kernel listings, linkers and
libraries) through the Python binding, run and reported as test_corpus.py
runs its cases: ``bad-input corpus (Python <backend>, compile): N cases, P
passed``, and ``, compile, GPU`` for the part that needs a device
(``SKIPPED``, with the reason, without one).

The part without a GPU holds the core's checks that come before any driver
call (NULL, made-up and wrong-kind handles, NULL and short descriptions,
images and paths refused before loading), reached through the low layer and,
where an object can be made without a device, through the objects (Program,
CompileOptions, Library); and what only Python checks (unknown and mistyped
options, wrong argument types). The GPU part is wrong input through the
objects users call: Linker, Library, Module and Device."""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import tempfile
from typing import Any, Callable, Dict, List

import numpy as np
import pytest

import cuabi
from cuabi._loader import Backend
from conftest import no_device_reason
from test_corpus import (
    COMPUTE,
    SM,
    TINY,
    Case,
    CaseContext,
    Raw,
    Table,
    no_collection,
    report,
    run_corpus,
)

CALLER = """\
extern "C" __device__ float twice(float x);
extern "C" __global__ void apply(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]) + 1.0f;
}
"""
CALLEE = 'extern "C" __device__ float twice(float x) { return 2.0f * x; }\n'
CXX = """\
namespace ops {
template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }
template __global__ void scale<float>(float*, float);
template __global__ void scale<int>(int*, int);
}
__global__ void doublify(float* a) { a[threadIdx.x] *= 2.0f; }
"""
MISSING = "/nonexistent-cuabi-corpus/k.cubin"

CORPUS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus", "cases.json"
)
# The Python keyword of each cuabi_compile_desc field a case sets.
_KEYWORDS = {"cxx_standard": "std", "device_debug": "debug", "options": "extra"}
_STATUS_ERRORS = {"CUABI_SUCCESS": None, "CUABI_ERROR_INVALID_ARGUMENT": cuabi.InvalidArgumentError}


def core_compile_option_cases() -> List[Dict[str, Any]]:
    """The core's cases of cuabi_program_compile_with that carry their
    typed options as data: the same inputs every language runs."""
    with open(CORPUS, encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    return [
        c for c in cases
        if c["call"] == "cuabi_program_compile_with" and "compile_options" in c
    ]


def python_options(fields: Dict[str, Any]) -> Dict[str, Any]:
    """A case's compile_options (cuabi_compile_desc field names) as the
    keywords of Program.compile; arch defaults to compute_75 so an accepted
    case compiles without a device."""
    out = {_KEYWORDS.get(k, k): v for k, v in fields.items()}
    out.setdefault("arch", "compute_75")
    return out


# ---------------------------------------------------------------------------
# Without a GPU
# ---------------------------------------------------------------------------


def cpu_cases(b: Backend, program: cuabi.Program, plain: cuabi.Program) -> List[Case]:
    """``program``: a live, never compiled program; ``plain``: one compiled
    without -dlto."""
    t = Table()
    add = t.add
    r = Raw(b)
    lib = b.lib
    IH, IA, NF = cuabi.InvalidHandleError, cuabi.InvalidArgumentError, cuabi.NotFoundError
    IO = cuabi.FileIOError
    NULL = b.NULL
    pv = b.handle_int(program.handle)  # a live handle of another kind
    P = functools.partial(cuabi.Program, backend=b)

    def call(fn: str, *args: Any) -> Callable[[CaseContext], None]:
        return lambda ctx: r.check(getattr(lib, fn)(*args))

    def out(kind: str) -> Any:
        return r.ref(r.out(kind))

    def made_up(kind: str) -> Any:
        return r.h(kind, 0xDEADBEEF)

    def as_kind(kind: str) -> Any:
        return r.h(kind, pv)

    data = b"\x7fELF" + bytes(60)
    keep = [data]
    dp = b.pointer(int(np.frombuffer(data, np.uint8).ctypes.data))
    keep.append(dp)

    handle_cases = [
        # (function, arguments, the argument at fault, its kind)
        ("cuabi_program_get_lto_ir", (NULL, NULL, out("size_t")), "program", "program"),
        ("cuabi_module_get_compile_log", (NULL, NULL, out("size_t")), "module", "module"),
        ("cuabi_module_get_kernel_count", (NULL, out("size_t")), "module", "module"),
        ("cuabi_module_get_kernel_name", (NULL, 0, 0, NULL, out("size_t")), "module", "module"),
        ("cuabi_linker_create", (NULL, NULL, out("cuabi_linker")), "device", "device"),
        ("cuabi_linker_get_backend", (NULL, out("int32_t")), "linker", "linker"),
        ("cuabi_linker_add_data", (NULL, 0, dp, len(data), NULL), "linker", "linker"),
        ("cuabi_linker_add_file", (NULL, 0, b"/tmp/x.ptx"), "linker", "linker"),
        ("cuabi_linker_add_program", (NULL, program.handle), "linker", "linker"),
        ("cuabi_linker_link", (NULL, out("cuabi_module")), "linker", "linker"),
        ("cuabi_linker_get_log", (NULL, NULL, out("size_t")), "linker", "linker"),
        ("cuabi_linker_get_image", (NULL, NULL, out("size_t")), "linker", "linker"),
        ("cuabi_library_get_module", (NULL, NULL, out("cuabi_module")), "library", "library"),
    ]
    for fn, args, what, _ in handle_cases:
        add(f"low layer: NULL {what} to {fn}", IH, f"{fn}: {what} is NULL", call(fn, *args))
    for fn, args, what, kind in handle_cases:
        add(
            f"low layer: a made-up {what} to {fn}",
            IH,
            f"{fn}: {what} is not a live cuabi_{kind}",
            call(fn, made_up(kind), *args[1:]),
        )
        if kind != "program":
            add(
                f"low layer: a program handle as the {what} of {fn}",
                IH,
                "it is a cuabi_program",
                call(fn, as_kind(kind), *args[1:]),
            )
    add(
        "low layer: a NULL program to cuabi_linker_add_program of a made-up linker",
        IH,
        "linker is not a live cuabi_linker",
        call("cuabi_linker_add_program", made_up("linker"), NULL),
    )

    # --- Descriptions, images and paths -----------------------------------------------
    add("low layer: cuabi_link_desc_init into NULL", IA, "cuabi_link_desc_init: desc is NULL",
        call("cuabi_link_desc_init", NULL, 64))

    def short(ctx: CaseContext) -> None:
        arg, desc, size = b.struct("cuabi_link_desc")
        desc.struct_size = 77
        try:
            r.check(lib.cuabi_link_desc_init(arg, 4))
        finally:
            ctx.expect(int(desc.struct_size) == 77, "the struct was written on failure")

    add("low layer: cuabi_link_desc_init with struct_size 4", IA, "struct_size 4 is smaller", short)

    def untouched(fn: str, *args: Any) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            box = r.out("cuabi_library", 0x77)
            try:
                r.check(getattr(lib, fn)(*args, r.ref(box)))
            finally:
                ctx.expect(r.got(box) == 0x77, "out was written although the call failed")

        return run

    add("low layer: a library of a NULL image", IA, "cuabi_library_load_data: image is NULL",
        untouched("cuabi_library_load_data", NULL, 16))
    add("low layer: a library of 0 bytes", IA, "size is 0: an image has at least one byte",
        untouched("cuabi_library_load_data", dp, 0))
    add("low layer: a library of a NULL path", IA, "cuabi_library_load_file: path is NULL",
        untouched("cuabi_library_load_file", NULL))
    add("low layer: a library of an empty path", IA, "path is empty",
        untouched("cuabi_library_load_file", b""))
    add("low layer: a library of a missing file", IO, f"cannot open '{MISSING}'",
        untouched("cuabi_library_load_file", MISSING.encode()))
    add("low layer: a library of a folder", IO, "cannot read '/'",
        untouched("cuabi_library_load_file", b"/"))
    add("low layer: the LTO-IR of a program compiled without -dlto", NF,
        'the program was compiled without "-dlto": it has no LTO-IR',
        call("cuabi_program_get_lto_ir", plain.handle, NULL, out("size_t")))

    # --- Programs and typed options -----------------------------------------------------
    add("lto_ir of a program compiled without lto", NF, 'compiled without "-dlto"',
        lambda ctx: plain.lto_ir)
    add("lto_ir of a program never compiled", NF, "cuabi_program_get_lto_ir",
        lambda ctx: program.lto_ir)

    def typed(**kw: Any) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            p = P(TINY)
            try:
                p.compile(**kw)
            finally:
                ctx.expect(p.log == "", "something was compiled")
                p.close()

        return run

    add("an unknown compile option", TypeError,
        "unknown compile option 'fastmath' (did you mean 'fast_math'?)", typed(fastmath=True))
    add("a compile option of nvcc's name", TypeError, "unknown compile option 'use_fast_math'",
        typed(use_fast_math=True))
    add("fast_math as a str", TypeError, "fast_math must be True or False, not str",
        typed(fast_math="yes"))
    add("relocatable as 2", IA, "desc->relocatable is 2; expected 0 or 1",
        typed(relocatable=2))
    add("lto as None", TypeError, "lto must be True or False, not NoneType", typed(lto=None))
    add("std as a float", TypeError, "std must be an int (17) or a str ('c++17'), not float",
        typed(std=17.0))
    add("std as a str of no standard's form", ValueError,
        "std 'gnu++17': a standard is written 'c++NN'", typed(std="gnu++17"))
    add("arch as a one-item tuple", ValueError, "arch as a tuple is (major, minor)",
        typed(arch=(9,)))
    add("arch as a list", TypeError, "arch must be a str ('sm_90', 'compute_90'), an int or "
        "(major, minor), not list", typed(arch=[9, 0]))
    add("a define name with a space", IA,
        'desc->defines[0] "A B=1" is no macro definition: a macro name holds no whitespace',
        typed(defines={"A B": 1}))
    add("an empty define name", IA,
        "desc->defines[0] \"=1\" is no macro definition: the macro name before '=' is empty",
        typed(defines={"": 1}))
    add("a define of an int name", TypeError, "a define's name must be a str, not int",
        typed(defines={4: "N"}))
    add("a define of a list value", TypeError, "defines['N'] must be a str, an int, a float",
        typed(defines={"N": [1, 2]}))
    add("defines as a str", TypeError, "defines must be a mapping {name: value}",
        typed(defines="N=4"))
    add("defines as an int", TypeError, "defines must be a mapping {name: value}",
        typed(defines=4))
    add("a define of three items", TypeError, "each define is a name or a (name, value) pair",
        typed(defines=[("N", 1, 2)]))
    add("include_paths as an int", TypeError, "include_paths must be a path or a sequence",
        typed(include_paths=3))
    add("an include path of None", TypeError, "include_paths: a path must be a str or os.PathLike",
        typed(include_paths=["/usr/include", None]))
    add("extra as an int", TypeError, "extra must be a str or a sequence of option strings",
        typed(extra=3))
    add("an extra option of None", TypeError, "extra: an option must be a str, not NoneType",
        typed(extra=["-O3", None]))
    add("a define value with a NUL", IA, "defines['N'] contains a NUL character",
        typed(defines={"N": "1\x002"}))
    add("an include path with a lone surrogate", IA,
        "include_paths[0] cannot be encoded as UTF-8",
        typed(include_paths=["/tmp/\udc80"]))
    add("options of an int", TypeError,
        "options must be a str, bytes, a sequence of them or a cuabi.CompileOptions, not int",
        lambda ctx: P(TINY).compile(42))
    add("CompileOptions with an unknown field", TypeError, "unknown compile option 'opt'",
        lambda ctx: cuabi.CompileOptions().replace(opt=3))
    add("a compile of CompileOptions of a bad define", IA,
        'desc->defines[0] "1N=1" is no macro definition: a macro name cannot start with a digit',
        lambda ctx: P(TINY).compile(cuabi.CompileOptions(defines={"1N": 1})))
    add("CompileOptions merged with an unknown keyword", TypeError,
        "unknown compile option 'stdd'",
        lambda ctx: P(TINY).compile(cuabi.CompileOptions(std=17), stdd=17))
    add("a standard the core does not know", IA, "desc->cxx_standard is 3000",
        lambda ctx: P(TINY).compile(std="c++3000"))
    add("an architecture of no architecture's form", IA, 'desc->arch "sm_1" is no GPU architecture',
        lambda ctx: P(TINY).compile(arch="sm_1"))
    add("an architecture NVRTC does not know", cuabi.CompileError, "NVRTC rejected the options",
        lambda ctx: P(TINY).compile(arch="sm_19"))

    # --- The core's cases of typed options (tests/corpus/cases.json), as data -----------
    for case in core_compile_option_cases():
        add(f"core case {case['id']}", _STATUS_ERRORS.get(case["status"]), case["needle"],
            typed(**python_options(case["compile_options"])))

    def compiled_twice(ctx: CaseContext) -> None:
        p = P(TINY).compile([COMPUTE])
        p.compile(arch="compute_75")

    add("a typed compile of a compiled program", IA, "already compiled", compiled_twice)

    # --- In the background ----------------------------------------------------------------
    def async_typed(ctx: CaseContext) -> None:
        p = P(TINY)
        try:
            p.compile_async(fast_math="on")
        finally:
            ctx.expect(p.log == "", "something was compiled")

    add("compile_async with a mistyped option raises at once", TypeError,
        "fast_math must be True or False", async_typed)
    add("compile_async with an unknown option raises at once", TypeError,
        "unknown compile option 'arc' (did you mean 'arch'?)",
        lambda ctx: P(TINY).compile_async(arc="sm_90"))
    add("compile_async on an int as the executor", TypeError,
        "executor must be a concurrent.futures.Executor or None, not int",
        lambda ctx: P(TINY).compile_async(executor=4))

    def async_broken(ctx: CaseContext) -> None:
        f = P("__global__ void broken( { }", "broken.cu").compile_async([COMPUTE])
        try:
            f.result(timeout=60)
        finally:
            ctx.expect(f.done() and f.exception() is not None, "the future holds no error")

    add("a failed background compile raises from the future", cuabi.CompileError,
        "NVRTC could not compile the source", async_broken)

    def async_closed(ctx: CaseContext) -> None:
        p = P(TINY)
        p.close()
        p.compile_async([COMPUTE]).result(timeout=60)

    add("compile_async of a closed program", IH,
        "cuabi_program_compile_with: program is not a live cuabi_program", async_closed)

    def async_shut_down(ctx: CaseContext) -> None:
        pool = concurrent.futures.ThreadPoolExecutor(1)
        pool.shutdown()
        P(TINY).compile_async([COMPUTE], executor=pool)

    add("compile_async on a shut-down executor", RuntimeError, "after shutdown", async_shut_down)

    # --- Libraries and linkers without a device -------------------------------------------
    add("Library of None", TypeError,
        "a library's image is CUBIN, PTX or fatbin bytes or a file path, not NoneType",
        lambda ctx: cuabi.Library(None, backend=b))  # type: ignore[arg-type]
    add("Library of an int", TypeError, "not int", lambda ctx: cuabi.Library(7, backend=b))
    add("Library of a Program", TypeError, "not Program",
        lambda ctx: cuabi.Library(plain, backend=b))
    add("Library of no bytes", IA, "cuabi_library_load_data: size is 0",
        lambda ctx: cuabi.Library(b"", backend=b))
    add("Library of a missing file", IO, f"cannot open '{MISSING}'",
        lambda ctx: cuabi.Library(MISSING, backend=b))
    add("Library of an empty path", IA, "cuabi_library_load_file: path is empty",
        lambda ctx: cuabi.Library("", backend=b))
    add("Library of a path with a NUL", IA, "path contains a NUL character",
        lambda ctx: cuabi.Library("k\x00.cubin", backend=b))
    add("Library on an unknown backend", ValueError, "unknown cuabi backend 'fortran'",
        lambda ctx: cuabi.Library(MISSING, backend="fortran"))
    add("Linker of None", TypeError, "device must be a cuabi.Device, not NoneType",
        lambda ctx: cuabi.Linker(None))  # type: ignore[arg-type]
    add("Linker of an ordinal", TypeError, "device must be a cuabi.Device, not int",
        lambda ctx: cuabi.Linker(0))  # type: ignore[arg-type]
    add("Linker of a Program", TypeError, "device must be a cuabi.Device, not Program",
        lambda ctx: cuabi.Linker(plain))  # type: ignore[arg-type]
    return t.cases


def test_bad_input_corpus_compile(default_backend: Backend, summary_line) -> None:
    """The compile cases that need NVRTC but no GPU (nor a driver)."""
    b = default_backend
    with no_collection():
        program = cuabi.Program(TINY, backend=b)
        plain = cuabi.Program(TINY, backend=b).compile([SM])
        try:
            result = run_corpus(b, cpu_cases(b, program, plain))
        finally:
            program.close()
            plain.close()
    report(f"Python {b.name}, compile", result, summary_line)
    assert result.cases > 80


# ---------------------------------------------------------------------------
# With a GPU
# ---------------------------------------------------------------------------


class GpuFixture:
    def __init__(self, b: Backend) -> None:
        self.b = b
        self.dev = cuabi.Device(0, backend=b)
        arch = self.dev.arch
        P = functools.partial(cuabi.Program, backend=b)
        self.caller = P(CALLER).compile(arch=arch, relocatable=True)
        self.callee = P(CALLEE).compile(arch=arch, relocatable=True)
        self.lto = P(CALLEE).compile(arch=arch, relocatable=True, lto=True)
        self.fresh = P(CALLEE)  # never compiled
        self.cxx = self.dev.compile(CXX)
        self.folder = tempfile.TemporaryDirectory(prefix="cuabi-corpus-")

    def path(self, name: str, data: bytes) -> str:
        p = os.path.join(self.folder.name, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def close(self) -> None:
        for obj in (self.cxx, self.fresh, self.lto, self.callee, self.caller, self.dev):
            obj.close()
        self.folder.cleanup()


def gpu_cases(b: Backend, f: GpuFixture) -> List[Case]:
    t = Table()
    add = t.add
    dev = f.dev
    IH, IA, NF = cuabi.InvalidHandleError, cuabi.InvalidArgumentError, cuabi.NotFoundError
    NS, CE, OOR = cuabi.NotSupportedError, cuabi.CompileError, cuabi.OutOfRangeError
    L = functools.partial(cuabi.Linker, dev, cache=False)
    garbage = b"\x01\x02\x03 not an image"
    junk = bytes((i * 131 + 7) & 0xFF for i in range(256))  # as test_corpus.py loads it

    # --- Linkers ----------------------------------------------------------------------------
    add("an unknown link backend", ValueError,
        "unknown link backend 'sideways'; use one of auto, nvjitlink, driver",
        lambda ctx: L(link_backend="sideways"))
    add("a link backend of 9", IA, "desc->backend 9 is not a cuabi_link_backend",
        lambda ctx: L(link_backend=9))
    add("a link backend of a float", TypeError, "link backend must be one of auto, nvjitlink",
        lambda ctx: L(link_backend=1.0))
    add("options for the driver's linker", IA, "the driver's linker takes no options",
        lambda ctx: L(link_backend="driver", options=["-O3"]))
    add("link-time optimisation on the driver's linker", NS,
        "link-time optimisation needs nvJitLink", lambda ctx: L(link_backend="driver", lto=True))
    add("lto as a str", TypeError, "lto must be True or False, not str",
        lambda ctx: L(lto="yes"))
    add("cache as None", TypeError, "cache must be True or False, not NoneType",
        lambda ctx: cuabi.Linker(dev, cache=None))  # type: ignore[arg-type]
    add("options as an int", TypeError, "options must be a str or a sequence of nvJitLink option",
        lambda ctx: L(options=5))
    add("an empty link option", IA, "desc->options[0] is empty", lambda ctx: L(options=[""]))
    add("a link option with a NUL", IA, "option contains a NUL character",
        lambda ctx: L(options=["-O\x003"]))

    def nvjitlink_unknown_option(ctx: CaseContext) -> None:
        linker = L(link_backend="nvjitlink", options=["-no-such-flag"])
        linker.add_program(f.caller).add_program(f.callee)
        linker.link()

    add("an option nvJitLink does not know", IA, "nvJitLinkCreate failed", nvjitlink_unknown_option)

    def with_linker(fn: Callable[[cuabi.Linker], Any], **kw: Any) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            with L(**kw) as linker:
                fn(linker)

        return run

    add("bytes that are no image", IA, "cannot tell what the input",
        with_linker(lambda l: l.add_data(garbage, name="g")))
    add("no bytes", IA, "cuabi_linker_add_data: size is 0", with_linker(lambda l: l.add_data(b"")))
    add("an unknown input kind", ValueError,
        "unknown link input kind 'elf'; use one of auto, cubin, ptx, lto_ir, fatbin, object, library",
        with_linker(lambda l: l.add_data(f.callee.cubin, "elf")))
    add("an input kind of 42", IA, "kind 42 is not a cuabi_link_input",
        with_linker(lambda l: l.add_data(f.callee.cubin, 42)))
    add("an input kind of None", TypeError, "link input kind must be one of auto",
        with_linker(lambda l: l.add_data(f.callee.cubin, None)))
    add("a str as the data", TypeError, "data must be bytes (PTX text encoded), not str",
        with_linker(lambda l: l.add_data("ptx text")))
    add("a list as the data", TypeError, "a list is not host memory",
        with_linker(lambda l: l.add_data([1, 2, 3])))
    add("an input name that is empty", IA, "name is empty",
        with_linker(lambda l: l.add_data(f.callee.cubin, name="")))
    add("a missing file", cuabi.FileIOError, "cannot open '/nonexistent-cuabi-corpus/x.ptx'",
        with_linker(lambda l: l.add_file("/nonexistent-cuabi-corpus/x.ptx")))
    add("an empty file", IA, "the file is empty",
        with_linker(lambda l: l.add_file(f.path("empty.ptx", b""))))
    add("a file whose kind cannot be told", IA, "cannot tell what the input",
        with_linker(lambda l: l.add_file(f.path("notes.txt", garbage))))
    add("a path of an int", TypeError, "path must be a str or os.PathLike, not int",
        with_linker(lambda l: l.add_file(3)))
    add("a path with a NUL", IA, "path contains a NUL character",
        with_linker(lambda l: l.add_file("x\x00.ptx")))
    add("a program never compiled", IA, "the program has not compiled successfully",
        with_linker(lambda l: l.add_program(f.fresh)))
    add("source text as the program", TypeError, "program must be a cuabi.Program, not str",
        with_linker(lambda l: l.add_program(CALLEE)))

    def closed_program(ctx: CaseContext) -> None:
        p = cuabi.Program(CALLEE, backend=b).compile(arch=dev.arch, relocatable=True)
        p.close()
        with L() as linker:
            linker.add_program(p)

    add("a closed program", IH, "program is not a live cuabi_program", closed_program)
    add("a float as an input", TypeError,
        "a linker input is a compiled cuabi.Program, image bytes, a file path or a (data, kind) "
        "pair, not float", with_linker(lambda l: l.add(1.5)))
    add("LTO-IR on the driver's linker", NS, "LTO-IR needs the nvJitLink backend",
        with_linker(lambda l: l.add_program(f.lto), link_backend="driver"))
    add("nothing to link", IA, "nothing to link: add inputs first",
        with_linker(lambda l: l.link()))
    add("the image before linking", NF, "the linker has not linked successfully",
        with_linker(lambda l: l.image))

    def linked_twice(ctx: CaseContext) -> None:
        with L() as linker:
            mod = linker.add_program(f.caller).add_program(f.callee).link()
            try:
                linker.link()
            finally:
                ctx.expect(mod.get_kernel("apply") is not None, "the first module stopped working")

    add("a second link", IA, "the linker already linked; create a new one", linked_twice)

    def add_after_link(ctx: CaseContext) -> None:
        with L() as linker:
            linker.add_program(f.caller).add_program(f.callee).link()
            linker.add_program(f.callee)

    add("an input after linking", IA, "the linker already linked", add_after_link)

    def missing_symbol(ctx: CaseContext) -> None:
        with L() as linker:
            try:
                linker.add_program(f.caller).link()
            except cuabi.CompileError as exc:
                ctx.expect("twice" in exc.log, f"the log does not name twice: {exc.log!r}")
                ctx.expect("twice" in linker.log, "the linker's log does not name twice")
                raise

    add("a call to a function no input defines", CE, "failed", missing_symbol)

    def missing_symbol_driver(ctx: CaseContext) -> None:
        with L(link_backend="driver") as linker:
            try:
                linker.add_program(f.caller).link()
            except cuabi.CompileError as exc:
                ctx.expect("twice" in exc.log, f"the log does not name twice: {exc.log!r}")
                raise

    add("a call to a function no input defines (driver)", CE, "cuLinkComplete failed",
        missing_symbol_driver)

    def closed_linker(ctx: CaseContext) -> None:
        linker = L()
        linker.close()
        linker.add_program(f.caller)

    add("a closed linker", IH, "linker is not a live cuabi_linker", closed_linker)

    def link_async_nothing(ctx: CaseContext) -> None:
        with L() as linker:
            linker.link_async().result(timeout=60)

    add("link_async of nothing raises from the future", IA, "nothing to link", link_async_nothing)
    add("link_async on a str as the executor", TypeError,
        "executor must be a concurrent.futures.Executor or None, not str",
        with_linker(lambda l: l.link_async(executor="pool")))
    add("Device.link of nothing", IA, "nothing to link", lambda ctx: dev.link(cache=False))
    add("Device.link of source text (a str is a path)", cuabi.FileIOError,
        "cannot open 'extern \"C\" __device__ float twice",
        lambda ctx: dev.link(CALLEE, cache=False))
    add("Device.link with an unknown backend", ValueError, "unknown link backend 'gcc'",
        lambda ctx: dev.link(f.caller, f.callee, link_backend="gcc"))

    # --- Libraries ----------------------------------------------------------------------------
    add("a library of bytes that are no image", cuabi.InvalidArgumentError, "neither CUBIN",
        lambda ctx: cuabi.Library(junk, backend=b))
    add("a library's module on an int", TypeError, "device must be a cuabi.Device, not int",
        lambda ctx: cuabi.Library(f.callee.cubin, backend=b).get_module(0))

    def closed_library(ctx: CaseContext) -> None:
        lib = cuabi.Library(f.callee.cubin, backend=b)
        lib.close()
        lib.get_module(dev)

    add("a closed library", IH, "library is not a live cuabi_library", closed_library)

    # --- Modules: listings and names ------------------------------------------------------------
    mod = f.cxx
    add("a kernel index past the end", OOR, "index 3 is past the module's 3 kernels",
        lambda ctx: mod.kernel_name(3))
    add("a negative kernel index", IA, "index = -1 is out of range",
        lambda ctx: mod.kernel_name(-1))
    add("a kernel index of a str", TypeError, "index must be an int, not str",
        lambda ctx: mod.kernel_name("0"))  # type: ignore[arg-type]
    add("a name form of 7", IA, "form 7 is not a cuabi_name_form",
        lambda ctx: mod.kernel_name(0, 7))
    add("an unknown name form", ValueError, "unknown name form 'mangled'; use one of demangled, symbol",
        lambda ctx: mod.kernel_name(0, "mangled"))
    add("a name form of a float", TypeError, "form must be an int, not float",
        lambda ctx: mod.kernel_name(0, 1.0))  # type: ignore[arg-type]
    add("a name several kernels have", IA, "the name 'scale' matches 2 kernels",
        lambda ctx: mod.get_kernel("scale"))
    add("a name no kernel has", NF, "the module has no kernel named 'tripple'; its kernels:",
        lambda ctx: mod.get_kernel("tripple"))

    def closed_module(ctx: CaseContext) -> None:
        m = dev.compile(TINY)
        m.close()
        m.kernels

    add("the kernels of a closed module", IH, "module is not a live cuabi_module", closed_module)

    def closed_module_log(ctx: CaseContext) -> None:
        m = dev.compile(TINY)
        m.close()
        m.compile_log

    add("the compile log of a closed module", IH,
        "cuabi_module_get_compile_log: module is not a live cuabi_module", closed_module_log)

    # --- Device.compile with typed options -------------------------------------------------------
    add("Device.compile with an unknown option", TypeError,
        "unknown compile option 'fast_maths' (did you mean 'fast_math'?)",
        lambda ctx: dev.compile(TINY, fast_maths=True))
    add("Device.compile with a mistyped option", TypeError, "debug must be True or False",
        lambda ctx: dev.compile(TINY, debug="no"))
    add("Device.compile_async with an unknown option", TypeError,
        "unknown compile option 'includes'",
        lambda ctx: dev.compile_async(TINY, includes=["/x"]))
    add("Device.compile_async with an unknown output", ValueError,
        "output must be 'cubin' or 'ptx', not 'sass'",
        lambda ctx: dev.compile_async(TINY, output="sass"))
    add("Device.compile_async of a broken source", CE, "NVRTC could not compile the source",
        lambda ctx: dev.compile_async("__global__ void broken( { }", cache=False).result(60))
    add("Device.compile of a define that is no macro name", IA,
        'desc->defines[0] "A-B=1" is no macro definition',
        lambda ctx: dev.compile(TINY, defines={"A-B": 1}))
    add("Device.compile of LTO-IR", IA, "desc->lto is 1, but an LTO compile makes LTO-IR",
        lambda ctx: dev.compile(TINY, lto=True, cache=False))
    return t.cases


def test_bad_input_corpus_compile_gpu(default_backend: Backend, summary_line) -> None:
    b = default_backend
    label = f"Python {b.name}, compile, GPU"
    reason = no_device_reason()
    if reason:
        summary_line(f"bad-input corpus ({label}): SKIPPED: {reason}")
        pytest.skip(reason)
    with no_collection():
        fixture = GpuFixture(b)
        try:
            result = run_corpus(b, gpu_cases(b, fixture))
            fixture.dev.synchronize()  # the context survived every case
        finally:
            fixture.close()
    report(label, result, summary_line)
    assert result.cases > 55
