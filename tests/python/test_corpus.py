"""The bad-input corpus through the Python binding. The C ABI's own corpus
(tests/hardening/corpus_*_test.cc) holds every case of bad input the core
checks; this one holds what the Python layer adds: the marshalling of Python
values (wrong types, out-of-range ints, NUL characters and lone surrogates in
strings, kernel arguments), the mapping of statuses to exception classes,
objects used after close() and released in any order, and a smoke subset of
the core's cases through the low layer, to show they arrive intact.

Each case is wrong input through the objects users call (Device, Program,
Module, Kernel, DeviceBuffer, Stream ...) or, where those make it
impossible, through the low layer with raw handle values. Each names what is
wrong, the exact exception class it must raise (a cuabi subclass for a core
status, or the TypeError/ValueError the binding raises before C is called),
a piece of text the message must hold (the thing at fault), and may check
more (nothing written, the process still working, the right result).

The runner checks every case the same way and reports, at the end of the
session, ``bad-input corpus (Python <backend>): N cases, P passed`` and the
same with ``, GPU`` for the part that needs a device (``SKIPPED``, with the
reason, without one), then each failing case. The backend is the default one
(``$CUABI_BACKEND``, else ctypes).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import pathlib
import struct
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Type

import numpy as np
import pytest

import cuabi
from cuabi import capi
from cuabi._loader import Backend
from cuabi._objects import fill_compile_desc
from conftest import no_device_reason
from kernels import SAXPY

TINY = 'extern "C" __global__ void tiny(int* x) { *x = 42; }\n'
TEMPLATE = "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n"
SM = "--gpu-architecture=sm_90"
COMPUTE = "--gpu-architecture=compute_90"

# Small kernels for the GPU part: one with a double parameter, a __device__
# global and a template (as tests/hardening/support.h has them).
UTIL = """\
extern "C" __global__ void scale(double* out, double factor)
{
  *out *= factor;
}

__device__ int corpus_counter;

template <typename T>
__global__ void store(T* out, T value)
{
  *out = value;
}
"""

SIZE_MAX = (1 << 64) - 1

# A kernel of more parameters than the binding's first layout query holds.
MANY = 70
MANY_PARAMS = (
    'extern "C" __global__ void many(int* out, '
    + ", ".join(f"int p{i}" for i in range(1, MANY))
    + ") { *out = p1 + p69; }\n"
)


# ---------------------------------------------------------------------------
# The table and its runner
# ---------------------------------------------------------------------------


class CaseContext:
    """What a case may report beyond its exception: a problem its own
    checks found (an output written on failure, a wrong result)."""

    def __init__(self) -> None:
        self.problems: List[str] = []

    def problem(self, what: str) -> None:
        self.problems.append(what)

    def expect(self, condition: Any, what: str) -> None:
        if not condition:
            self.problem(what)


@dataclass
class Case:
    name: str  # what is wrong with the input
    expected: Optional[Type[BaseException]]  # the exact class raised; None: no exception
    needle: str  # text the message must hold (the thing at fault)
    run: Callable[[CaseContext], Any]


@dataclass
class CorpusResult:
    cases: int = 0
    passed: int = 0
    failures: List[str] = field(default_factory=list)


def message_of(exc: BaseException) -> str:
    return exc.message if isinstance(exc, cuabi.CudaError) else str(exc)


def describe(exc: BaseException) -> str:
    text = " ".join(message_of(exc).split())
    if len(text) > 400:
        text = text[:400] + "..."
    return f"{type(exc).__module__}.{type(exc).__qualname__}: {text}"


def class_name(cls: Optional[Type[BaseException]]) -> str:
    if cls is None:
        return "no exception"
    return cls.__qualname__ if cls.__module__ == "builtins" else f"cuabi.{cls.__qualname__}"


def plant_last_error(b: Backend) -> None:
    """Sets a recognisable last error, so that a raise reading a stale one shows."""
    b.lib.cuabi_program_get_log(b.NULL, b.NULL, b.NULL)  # "program is NULL"


def judge(case: Case, raised: Optional[Exception]) -> List[str]:
    why: List[str] = []
    if case.expected is None:
        if raised is not None:
            why.append(f"raised {describe(raised)}")
        return why
    expected = f"{class_name(case.expected)} with '{case.needle}'"
    if raised is None:
        return [f"expected {expected}, but nothing was raised"]
    if type(raised) is not case.expected:
        return [f"expected {expected}, got {describe(raised)}"]
    message = message_of(raised)
    if case.needle not in message:
        why.append(f"message lacks '{case.needle}': {describe(raised)}")
    try:
        message.encode("utf-8")
        str(raised).encode("utf-8")
    except UnicodeEncodeError:
        why.append("the message is not valid Unicode text")
    if isinstance(raised, cuabi.CudaError):
        if raised.status != case.expected.status:
            why.append(f"status {raised.status}, not {case.expected.status}")
        if raised.name != cuabi.errors.status_name(raised.status):
            why.append(f"name {raised.name!r} does not match status {raised.status}")
        if message not in str(raised):
            why.append("str() of the exception lacks its message")
    return why


def run_corpus(b: Backend, cases: Sequence[Case]) -> CorpusResult:
    """Runs every case and checks, for each: the exact exception class (or
    none), the needle in its message, valid text, and the case's own checks.
    A crash would end the process: there is no way to pass one."""
    result = CorpusResult()
    for case in cases:
        result.cases += 1
        plant_last_error(b)
        ctx = CaseContext()
        raised: Optional[Exception] = None
        try:
            case.run(ctx)
        except Exception as exc:  # noqa: BLE001 - every class is judged
            raised = exc
        why = judge(case, raised) + ctx.problems
        if why:
            result.failures.append(f"[{case.name}]: " + "; ".join(why))
        else:
            result.passed += 1
    return result


def report(label: str, result: CorpusResult, summary_line: Callable[[str], None]) -> None:
    """Prints the count and each failure at the end of the session, and
    fails the test, listing the failures, if any case failed."""
    lines = [f"bad-input corpus ({label}): {result.cases} cases, {result.passed} passed"]
    lines += [f"  FAILED {f}" for f in result.failures]
    for line in lines:
        summary_line(line)
    if result.failures:
        pytest.fail("\n".join(lines), pytrace=False)


class Table:
    """Collects cases: ``add(name, expected, needle, run)``."""

    def __init__(self) -> None:
        self.cases: List[Case] = []

    def add(
        self,
        name: str,
        expected: Optional[Type[BaseException]],
        needle: str,
        run: Callable[[CaseContext], Any],
    ) -> None:
        self.cases.append(Case(name, expected, needle, run))


# ---------------------------------------------------------------------------
# The low layer, the same on either backend
# ---------------------------------------------------------------------------


def kind_bits(value: int, kind: int) -> int:
    """A handle value with its kind bits replaced (1 = device ... 11 = plan)."""
    return (value & ~(0xFF << 24)) | (kind << 24)


class Raw:
    """Raw handle values, out-parameters, arrays and configs for ``b.lib``."""

    def __init__(self, b: Backend) -> None:
        self.b = b
        self.lib = b.lib
        self._keep: List[Any] = []  # cffi arrays do not keep what they point to

    def h(self, kind: str, value: int) -> Any:
        """The handle ``value`` typed as ``cuabi_<kind>`` (0: NULL)."""
        return self.b.handle(value, "cuabi_" + kind) if value else self.b.NULL

    def out(self, ctype: str, initial: int = 0) -> Any:
        box = self.b.out(ctype)
        if initial:
            if self.b.name == "ctypes":
                box.value = initial
            elif ctype.startswith("cuabi_") or ctype == "void*":
                box[0] = self.b.ffi.cast("void *" if ctype == "void*" else ctype, initial)
            else:
                box[0] = initial
        return box

    def ref(self, box: Any) -> Any:
        return self.b.ref(box)

    def got(self, box: Any) -> int:
        """The integer in an out-parameter box (a handle's raw value too)."""
        v = self.b.value(box)
        if self.b.name in ("cffi", "compiled") and not isinstance(v, (int, float)):
            return int(self.b.ffi.cast("uintptr_t", v))
        return int(v or 0)

    def strings(self, items: Sequence[Optional[bytes]]) -> Any:
        """A ``const char* const*`` holding ``items`` (None: a NULL entry)."""
        if self.b.name == "ctypes":
            return (ctypes.c_char_p * len(items))(*items)
        ffi = self.b.ffi
        keep = [ffi.NULL if s is None else ffi.new("char[]", s) for s in items]
        arr = ffi.new("const char *[]", keep)
        self._keep.append(keep)
        return arr

    def pointers(self, addresses: Sequence[int]) -> Any:
        """A ``void* const*`` holding ``addresses`` (0: a NULL entry)."""
        if self.b.name == "ctypes":
            return (ctypes.c_void_p * len(addresses))(*[a or None for a in addresses])
        ffi = self.b.ffi
        return ffi.new("void *[]", [ffi.cast("void *", a) for a in addresses])

    def sizes(self, items: Sequence[int]) -> Any:
        return self.b.size_array(items)

    def config(self, grid: Sequence[int] = (1, 1, 1), block: Sequence[int] = (1, 1, 1)) -> Any:
        return self.b.launch_config(tuple(grid), tuple(block), 0)

    def check(self, status: int) -> None:
        capi.check(status, self.b)


# ---------------------------------------------------------------------------
# The part that needs no GPU
# ---------------------------------------------------------------------------


class CpuFixture:
    """Programs shared by the cases; a case that consumes one makes its own."""

    def __init__(self, b: Backend) -> None:
        self.b = b
        P = functools.partial(cuabi.Program, backend=b)
        self.compiled = P(TEMPLATE, "corpus.cu", name_expressions=["store<int>"])
        self.compiled.compile([SM])  # CUBIN and PTX
        self.ptx_only = P(TINY, "corpus.cu").compile([COMPUTE])
        self.fresh = P(TINY, "corpus.cu")  # never compiled
        gone = P(TINY)
        self.released = b.handle_int(gone.handle)  # a value that was live once
        gone.close()
        s = P(TINY)
        self.stale = b.handle_int(s.handle)  # released, its slot reused by reuser
        s.close()
        self.reuser = P(TINY)
        if self.stale & 0xFFFFFF != b.handle_int(self.reuser.handle) & 0xFFFFFF:
            raise RuntimeError(
                "the handle table did not reuse the released slot; "
                "the stale-handle cases would test nothing"
            )

    def close(self) -> None:
        for p in (self.compiled, self.ptx_only, self.fresh, self.reuser):
            p.close()


def cpu_cases(b: Backend, f: CpuFixture) -> List[Case]:
    t = Table()
    add = t.add
    r = Raw(b)
    lib = b.lib
    P = functools.partial(cuabi.Program, backend=b)
    IH, IA, NF = cuabi.InvalidHandleError, cuabi.InvalidArgumentError, cuabi.NotFoundError
    CE = cuabi.CompileError
    live = f.compiled
    pv = b.handle_int(live.handle)

    def size_ref() -> Any:
        return r.ref(r.out("size_t"))

    def reuser_alive(ctx: CaseContext) -> None:
        ctx.expect(f.reuser.log == "", "the live program that reused the slot stopped working")

    # --- Handles through the low layer (a smoke subset of the core's) ---------
    def get_log(h: Any) -> None:
        r.check(lib.cuabi_program_get_log(h, b.NULL, size_ref()))

    add("NULL program", IH, "cuabi_program_get_log: program is NULL", lambda ctx: get_log(b.NULL))
    add(
        "released program",
        IH,
        "cuabi_program_get_log: program is not a live cuabi_program",
        lambda ctx: get_log(r.h("program", f.released)),
    )

    def stale(ctx: CaseContext) -> None:
        try:
            get_log(r.h("program", f.stale))
        finally:
            reuser_alive(ctx)

    add("stale program (slot reused by a live one)", IH, "it was released", stale)

    def function_out_untouched(ctx: CaseContext) -> None:
        out = r.out("cuabi_function", 0x5A5A)
        try:
            r.check(lib.cuabi_module_get_function(r.h("module", pv), b"tiny", r.ref(out)))
        finally:
            ctx.expect(r.got(out) == 0x5A5A, "out was written although the call failed")

    add("a program handle as a module", IH, "it is a cuabi_program", function_out_untouched)
    add(
        "a program handle as the compile's device",
        IH,
        "device is not a live cuabi_device",
        lambda ctx: r.check(
            lib.cuabi_module_compile(
                r.h("device", pv),
                fill_compile_desc(b, source=TINY.encode())[0],
                r.ref(r.out("cuabi_module")),
            )
        ),
    )
    for what, value in [
        ("0xdeadbeef", 0xDEADBEEF),
        ("all bits set", SIZE_MAX),
        ("a host pointer", ctypes.addressof(ctypes.c_size_t(0))),
    ]:
        add(
            f"made-up program handle: {what}",
            IH,
            "program is not a live cuabi_program",
            lambda ctx, v=value: get_log(r.h("program", v)),
        )

    def plan_args_untouched(ctx: CaseContext) -> None:
        args, n = r.out("void*", 0x1234), r.out("size_t", 77)
        try:
            r.check(lib.cuabi_launch_plan_get_args(b.NULL, r.ref(args), r.ref(n)))
        finally:
            ctx.expect(r.got(args) == 0x1234 and r.got(n) == 77, "outputs written on failure")

    add("NULL plan (get_args)", IH, "cuabi_launch_plan_get_args: plan is NULL", plan_args_untouched)
    add(
        "NULL start event",
        IH,
        "cuabi_event_get_elapsed_ms: start is NULL",
        lambda ctx: r.check(
            lib.cuabi_event_get_elapsed_ms(b.NULL, b.NULL, r.ref(r.out("float")))
        ),
    )
    add(
        "NULL function (parameter layout)",
        IH,
        "cuabi_function_get_params: function is NULL",
        lambda ctx: b.function_params(b.NULL),
    )
    add(
        "NULL function (argument sizes)",
        IH,
        "cuabi_function_check_arg_sizes: function is NULL",
        lambda ctx: b.check_arg_sizes(b.NULL, [4, 8]),
    )

    def source_null(ctx: CaseContext) -> None:
        out = r.out("cuabi_program", 0x77)
        try:
            r.check(lib.cuabi_program_create(b.NULL, b.NULL, 0, b.NULL, b.NULL, r.ref(out)))
        finally:
            ctx.expect(r.got(out) == 0x77, "out was written although the call failed")

    add("low layer: source is NULL", IA, "cuabi_program_create: source is NULL", source_null)
    add(
        "low layer: a header's name is NULL",
        IA,
        "header_names[1] is NULL",
        lambda ctx: r.check(
            lib.cuabi_program_create(
                TINY.encode(),
                b.NULL,
                2,
                r.strings([b"int a;", b"int b;"]),
                r.strings([b"a.h", None]),
                r.ref(r.out("cuabi_program")),
            )
        ),
    )

    def lowered_too_small(ctx: CaseContext) -> None:
        buf = b.char_buffer(1)
        buf[0] = b"#"
        n = r.out("size_t", 1)
        try:
            r.check(lib.cuabi_program_get_lowered_name(live.handle, b"store<int>", buf, r.ref(n)))
        finally:
            ctx.expect(buf[0] == b"#", "a too-small buffer was written")
            ctx.expect(r.got(n) > 1, "*size does not hold the size needed")

    add(
        "a lowered name into a 1-byte buffer (low layer)",
        cuabi.InsufficientBufferError,
        "are needed",
        lowered_too_small,
    )
    add(
        "device count into NULL",
        IA,
        "count is NULL",
        lambda ctx: r.check(lib.cuabi_device_get_count(b.NULL)),
    )

    # --- Release: twice, NULL, through the low layer ------------------------------
    releases = [getattr(lib, f"{kind}_release") for kind in capi.HANDLE_TYPES]

    def released_twice(ctx: CaseContext) -> None:
        p = P(TINY)
        h = p.handle
        p.close()
        lib.cuabi_last_error_clear()
        lib.cuabi_program_release(h)  # detected and ignored
        lib.cuabi_program_release(h)
        ctx.expect(
            lib.cuabi_last_error_status() == 0, "a second release touched the last-error state"
        )
        b.get_string("cuabi_program_get_log", h)

    add(
        "a program released twice more through the low layer, then used",
        IH,
        "program is not a live cuabi_program",
        released_twice,
    )

    def null_releases(ctx: CaseContext) -> None:
        before = b.string(lib.cuabi_last_error_message())
        for release in releases:
            release(b.NULL)
        ctx.expect(
            before == b.string(lib.cuabi_last_error_message()), "a release changed the last error"
        )

    add("NULL to every release, the last error untouched", None, "", null_releases)

    def made_up_releases(ctx: CaseContext) -> None:
        for v in (1, 0xDEADBEEF, SIZE_MAX, f.released, f.stale, pv):
            for kind, release in zip(capi.HANDLE_TYPES, releases):
                if kind != "cuabi_program":
                    release(b.handle(v, kind))
        reuser_alive(ctx)  # the stale value's slot belongs to it now
        ctx.expect(live.lowered_name("store<int>"), "the live program lost its lowered name")

    add("made-up and wrong-kind values to every release", None, "", made_up_releases)

    # --- Program objects: closed, stale, closed twice ----------------------------
    closed = P(TEMPLATE, name_expressions=["store<int>"]).compile([SM])
    closed.close()
    for what, fn in [
        ("log", lambda: closed.log),
        ("ptx", lambda: closed.ptx),
        ("cubin", lambda: closed.cubin),
        ("lowered_name()", lambda: closed.lowered_name("store<int>")),
        ("lowered_names", lambda: closed.lowered_names),
        ("add_name_expression()", lambda: closed.add_name_expression("store<float>")),
        ("compile()", lambda: closed.compile([SM])),
    ]:
        add(
            f"Program.{what} after close()",
            IH,
            "program is not a live cuabi_program",
            lambda ctx, fn=fn: fn(),
        )

    def stale_object(ctx: CaseContext) -> None:
        old = P(TINY)
        old.close()
        new = P(TINY)
        try:
            ctx.expect(
                b.handle_int(old.handle) & 0xFFFFFF == b.handle_int(new.handle) & 0xFFFFFF,
                "the new program did not reuse the slot: nothing stale was tested",
            )
            old.compile([COMPUTE])
        finally:
            try:
                new.compile([COMPUTE])
                ctx.expect(new.ptx, "the program in the reused slot has no PTX")
            except cuabi.CudaError as exc:
                ctx.problem(f"the program in the reused slot failed: {describe(exc)}")
            new.close()

    add("a closed Program whose slot a new one reuses", IH, "it was released", stale_object)

    def closed_twice(ctx: CaseContext) -> None:
        p = P(TINY)
        with p:
            pass
        p.close()
        p.close()
        ctx.expect(p.closed, "closed is False after close()")
        ctx.expect("closed" in repr(p), "repr() of a closed program does not say so")
        p.log

    add("a Program closed three times, then used", IH, "program is not a live", closed_twice)

    def collected_out_of_order(ctx: CaseContext) -> None:
        progs = [P(TINY) for _ in range(8)]
        handles = [p.handle for p in progs]
        del progs[::2]  # released by their finalizers, the others still live
        for i, h in enumerate(handles):
            status = lib.cuabi_program_get_log(h, b.NULL, size_ref())
            want = capi.CUABI_ERROR_INVALID_HANDLE if i % 2 == 0 else capi.CUABI_SUCCESS
            ctx.expect(status == want, f"program {i} answered {status}, not {want}")
        for p in progs:
            p.close()

    add("Programs collected out of order", None, "", collected_out_of_order)

    # --- Program creation: Python values -----------------------------------------
    add(
        "Program(None)", TypeError, "source must be str or bytes, not NoneType", lambda ctx: P(None)
    )
    add("Program(12345)", TypeError, "source must be str or bytes, not int", lambda ctx: P(12345))
    add(
        "a header source that is None",
        TypeError,
        "header source must be str or bytes",
        lambda ctx: P(TINY, headers={"a.h": None}),
    )
    add(
        "a header name that is None",
        TypeError,
        "header name must be str or bytes",
        lambda ctx: P(TINY, headers={None: "int a;"}),
    )
    add(
        "an empty header name",
        IA,
        "header_names[0] is empty",
        lambda ctx: P(TINY, headers={"": "int a;"}),
    )
    add(
        "a source with an embedded NUL",
        IA,
        "source contains a NUL character at index 6",
        lambda ctx: P("int x;\0 this would be ignored"),
    )
    add(
        "a program name with an embedded NUL",
        IA,
        "name contains a NUL character",
        lambda ctx: P(TINY, name="a\0b.cu"),
    )
    add(
        "a header source with an embedded NUL",
        IA,
        "header source contains a NUL character",
        lambda ctx: P(TINY, headers={"a.h": b"int a;\0int b;"}),
    )
    add(
        "a header name with an embedded NUL",
        IA,
        "header name contains a NUL character",
        lambda ctx: P(TINY, headers={"a.h\0b.h": "int a;"}),
    )

    # --- Compile: options, state, errors -----------------------------------------
    def compile_fresh(options: Any, source: str = TINY) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            with P(source, "corpus.cu") as p:
                p.compile(options)

        return run

    add("an empty option", IA, "options[0] is empty", compile_fresh([""]))
    add("compiled twice", IA, "already compiled", lambda ctx: live.compile([SM]))

    def unknown_option(ctx: CaseContext) -> None:
        with P(TINY) as p:
            try:
                p.compile(["--no-such-option"])
            finally:
                ctx.expect("--no-such-option" in p.log, "the program's log does not name it")

    add("an unknown option", CE, "--no-such-option", unknown_option)
    add(
        "an architecture that does not exist",
        CE,
        "--gpu-architecture",
        compile_fresh(["--gpu-architecture=sm_1"]),
    )
    add(
        "an option that is an int",
        TypeError,
        "option must be str or bytes, not int",
        compile_fresh([SM, 123]),
    )
    add(
        "options that are an int",
        TypeError,
        "options must be a str, bytes, a sequence of them or a cuabi.CompileOptions, not int",
        compile_fresh(90),
    )
    add(
        "an option with an embedded NUL",
        IA,
        "option contains a NUL character",
        compile_fresh(["-DX=1\0--no-such-option"]),
    )

    def compile_error(source: str, *log_needles: str) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            with P(source, "corpus.cu") as p:
                try:
                    p.compile()
                except cuabi.CompileError as exc:
                    for needle in log_needles:
                        ctx.expect(needle in exc.log, f".log lacks {needle!r}")
                        ctx.expect(needle in str(exc), f"str() lacks {needle!r}")
                    raise

        return run

    add(
        "a syntax error",
        CE,
        "could not compile the source",
        compile_error('extern "C" __global__ void k( {', "error"),
    )
    add(
        "a missing include",
        CE,
        "missing_header.h",
        compile_error('#include "missing_header.h"\n', "missing_header.h"),
    )

    def header_error(ctx: CaseContext) -> None:
        with P('#include "bad_header.h"\n', headers={"bad_header.h": "int broken(;\n"}) as p:
            p.compile()

    add("an error inside a given header", CE, "bad_header.h", header_error)

    # --- Name expressions, lowered names and outputs -------------------------------
    add(
        "an empty name expression",
        IA,
        "expression",
        lambda ctx: P(TEMPLATE).add_name_expression(""),
    )
    add(
        "the lowered name of an expression never added",
        NF,
        "store<double>",
        lambda ctx: live.lowered_name("store<double>"),
    )
    add(
        "the lowered name of None",
        TypeError,
        "expression must be str or bytes",
        lambda ctx: live.lowered_name(None),
    )
    add(
        "a name expression that is not a string",
        TypeError,
        "expression must be str or bytes",
        lambda ctx: P(TEMPLATE, name_expressions=[42]),
    )
    add("PTX before compiling", NF, "compiled", lambda ctx: f.fresh.ptx)
    add("CUBIN of a compute_XY compile", NF, "CUBIN", lambda ctx: f.ptx_only.cubin)

    # --- Strings: encoding, surrogates, NUL ----------------------------------------
    def compiles(source: Any, name: Any = "corpus.cu") -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            with P(source, name) as p:
                try:
                    p.compile([COMPUTE])
                finally:
                    ctx.expect(isinstance(p.log, str), "the log is not text")

        return run

    add(
        "valid non-ASCII text in a comment and a name",
        None,
        "",
        compiles("// caf\u00e9 \u20ac \U0001f600\n__device__ int y;\n", name="k\u00e9rnel.cu"),
    )
    add(
        "invalid UTF-8 inside an identifier (the log stays text)",
        CE,
        "could not compile",
        compiles(b"__global__ void k\xff\xfe(int* x) { *x = 1; }\n"),
    )
    add(
        "a program name that is not UTF-8 (bytes)",
        IA,
        "name is not valid UTF-8",
        lambda ctx: P("int x;", name=b"bad\xff\xfename.cu"),
    )
    add(
        "a program name with a lone surrogate (str)",
        IA,
        "name cannot be encoded as UTF-8",
        lambda ctx: P("int x;", name="bad\udcffname.cu"),
    )
    add(
        "a source with a lone surrogate (str)",
        IA,
        "source cannot be encoded as UTF-8",
        lambda ctx: P("// \ud800\nint x;"),
    )
    add(
        "a header name with a lone surrogate (str)",
        IA,
        "header name cannot be encoded",
        lambda ctx: P('#include "bad.h"\n', headers={"bad\udc80.h": "int x;\n"}),
    )
    add(
        "an option that is not UTF-8 (bytes)",
        IA,
        "options[0] is not valid UTF-8",
        compile_fresh([b"-D\xff\xfe=1"]),
    )
    add(
        "an option with a lone surrogate (str)",
        IA,
        "option cannot be encoded as UTF-8",
        compile_fresh(["-D\udcff=1"]),
    )
    add(
        "a name expression with a lone surrogate (str)",
        IA,
        "expression cannot be encoded as UTF-8",
        lambda ctx: P(TEMPLATE).add_name_expression("store<\udcff>"),
    )
    add(
        "a name expression with an embedded NUL",
        IA,
        "expression contains a NUL character",
        lambda ctx: P(TEMPLATE).add_name_expression("store<int>\0store<float>"),
    )
    add(
        "a lowered-name query that is not UTF-8 (bytes)",
        IA,
        "UTF-8",
        lambda ctx: live.lowered_name(b"store<\xc0\x80>"),
    )
    add(
        "a lowered-name query with an embedded NUL",
        IA,
        "expression contains a NUL",
        lambda ctx: live.lowered_name("store<int>\0"),
    )

    # --- The ctypes way's parameter arrays ---------------------------------------
    add(
        "kernel_params with two values for three types",
        ValueError,
        "2 values but 3 types",
        lambda ctx: capi.kernel_params([1, 2], [ctypes.c_int] * 3),
    )
    add(
        "kernel_params with a str and no type",
        TypeError,
        "argument 0: a str with type None",
        lambda ctx: capi.kernel_params(["x"], [None]),
    )
    add(
        "kernel_params with a value its type cannot take",
        IA,
        "parameter 0: cannot convert str to c_float",
        lambda ctx: capi.kernel_params(["two"], [ctypes.c_float]),
    )

    # --- Choosing a library, a backend, a device ---------------------------------------
    add(
        "an unknown backend name",
        ValueError,
        "unknown cuabi backend 'nope'",
        lambda ctx: cuabi.load_backend("nope"),
    )
    add(
        "an unknown backend name for a Program",
        ValueError,
        "unknown cuabi backend 'nope'",
        lambda ctx: cuabi.Program(TINY, backend="nope"),
    )
    add(
        "a library path that does not exist",
        cuabi.LibraryNotFoundError,
        "/nonexistent/libcuabi.so: no such file",
        lambda ctx: cuabi.load_backend(b.name, path="/nonexistent/libcuabi.so"),
    )
    add(
        "a device ordinal past int32",
        IA,
        "ordinal = 4294967296 is out of range",
        lambda ctx: cuabi.Device(1 << 32, backend=b),
    )
    add(
        "a device ordinal that is a float",
        TypeError,
        "ordinal must be an int, not float",
        lambda ctx: cuabi.Device(0.5, backend=b),
    )
    add(
        "a device ordinal that is a str",
        TypeError,
        "ordinal must be an int, not str",
        lambda ctx: cuabi.Device("0", backend=b),
    )
    return t.cases


# ---------------------------------------------------------------------------
# The part that needs a GPU
# ---------------------------------------------------------------------------


class GpuFixture:
    """Objects shared by the cases (the ones only some cases use are made on
    first use, so that a failure there fails those cases alone)."""

    def __init__(self, b: Backend) -> None:
        self.b = b
        self.dev = cuabi.Device(0, backend=b)
        self.saxpy_module = self.dev.compile(SAXPY, name="saxpy.cu")
        self.saxpy = self.saxpy_module.get_kernel("saxpy")
        self.a = self.dev.alloc(4096)
        self.b_ = self.dev.alloc(4096)
        self.stream = self.dev.create_stream()
        self.event = self.dev.create_event()

    def close(self) -> None:
        made = [self.__dict__.get(k) for k in ("scale", "util")]
        for obj in made + [self.event, self.stream, self.b_, self.a, self.saxpy]:
            if obj is not None:
                obj.close()
        self.saxpy_module.close()
        self.dev.close()

    @functools.cached_property
    def util(self) -> cuabi.Module:
        return self.dev.compile(UTIL, name="util.cu")

    @functools.cached_property
    def scale(self) -> cuabi.Kernel:
        return self.util.get_kernel("scale")

    def saxpy_args(self, n: int = 16, out: Optional[cuabi.DeviceBuffer] = None) -> tuple:
        return (np.float32(2.0), self.a, self.a, self.a if out is None else out, np.uint64(n))


def saxpy_problem(
    dev: cuabi.Device,
    kernel: Any,
    n: int = 4096,
    seed: float = 3.0,
    stream: Optional[cuabi.Stream] = None,
) -> str:
    """What is wrong when ``kernel`` (a SAXPY kernel) computes out = 2x + y
    for ``n`` elements; "" when the result is right."""
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, seed, np.float32)
    dx, dy, do = dev.to_device(x), dev.to_device(y), dev.zeros(n, np.float32)
    try:
        kernel((n + 255) // 256, 256, (np.float32(2.0), dx, dy, do, np.uint64(n)), stream=stream)
        (stream or dev).synchronize()
        out = do.copy_to_host()
    except cuabi.CudaError as exc:
        return f"SAXPY failed: {describe(exc)}"
    finally:
        for buf in (dx, dy, do):
            buf.close()
    want = 2.0 * x + y
    bad = np.flatnonzero(out != want)
    if len(bad):
        return f"SAXPY element {bad[0]} is {out[bad[0]]}, not {want[bad[0]]}"
    return ""


def gpu_cases(b: Backend, f: GpuFixture) -> List[Case]:
    t = Table()
    add = t.add
    r = Raw(b)
    lib = b.lib
    dev, saxpy, A, B, stream = f.dev, f.saxpy, f.a, f.b_, f.stream
    IH, IA, NF = cuabi.InvalidHandleError, cuabi.InvalidArgumentError, cuabi.NotFoundError
    OOM, OOR, CE = cuabi.OutOfMemoryError, cuabi.OutOfRangeError, cuabi.CompileError

    def zeros_stay(buf: cuabi.DeviceBuffer, ctx: CaseContext, what: str) -> None:
        ctx.expect(not buf.copy_to_host(np.empty(buf.nbytes, np.uint8)).any(), what)

    # --- Allocations ---------------------------------------------------------------
    add("zero bytes", IA, "bytes is 0", lambda ctx: dev.alloc(0))
    add("-1 bytes", IA, "nbytes = -1 is out of range", lambda ctx: dev.alloc(-1))
    add(
        "2^64 bytes",
        IA,
        "nbytes = 18446744073709551616 is out of range",
        lambda ctx: dev.alloc(1 << 64),
    )
    add("(size_t)-1 bytes", OOM, "18446744073709551615", lambda ctx: dev.alloc(SIZE_MAX))

    def keeps_working(ctx: CaseContext) -> None:
        try:
            dev.alloc(1 << 50)
        finally:
            data = np.arange(1 << 18, dtype=np.float32)
            with dev.to_device(data) as buf:
                ctx.expect(np.array_equal(buf.copy_to_host(), data), "data did not round-trip")
            problem = saxpy_problem(dev, saxpy, 1 << 20, 7.0)
            ctx.expect(not problem, f"after the failed allocation: {problem}")

    add(
        "the process keeps working after running out of memory",
        OOM,
        "out of device memory",
        keeps_working,
    )
    add(
        "a float for a size",
        TypeError,
        "nbytes must be an int, not float",
        lambda ctx: dev.alloc(16.0),
    )
    add("a negative dimension", ValueError, "negative dimension", lambda ctx: dev.empty(-5))
    add(
        "a shape bigger than the allocation",
        ValueError,
        "shape (5,) needs 20 bytes",
        lambda ctx: dev.alloc(16, np.float32, (5,)),
    )
    add(
        "a dtype of Python objects",
        TypeError,
        "holds Python objects",
        lambda ctx: dev.alloc(16, object),
    )
    add("-1 pinned bytes", IA, "nbytes = -1 is out of range", lambda ctx: dev.host_alloc(-1))
    add(
        "pinning a non-contiguous array",
        ValueError,
        "not C-contiguous",
        lambda ctx: dev.pin(np.zeros((8, 8), np.float32)[:, ::2]),
    )
    readonly = np.zeros(64, np.uint8)
    readonly.flags.writeable = False
    add("pinning a read-only array", ValueError, "read-only", lambda ctx: dev.pin(readonly))
    add("pinning bytes", ValueError, "bytes are read-only", lambda ctx: dev.pin(b"x" * 64))
    add("pinning a str", TypeError, "a str is not host memory", lambda ctx: dev.pin("text"))
    add(
        "wrapping a raw address without nbytes",
        ValueError,
        "needs nbytes",
        lambda ctx: dev.wrap_buffer(A.ptr),
    )
    add(
        "wrapping a negative address",
        IA,
        "device_ptr = -1 is out of range",
        lambda ctx: dev.wrap_buffer(-1, 64),
    )
    add(
        "wrapping something that is not device memory",
        TypeError,
        "cannot wrap a object",
        lambda ctx: dev.wrap_buffer(object()),
    )
    add(
        "to_device() of an array of Python objects",
        TypeError,
        "holds Python objects",
        lambda ctx: dev.to_device(np.array([object(), object()])),
    )

    # --- Copies ----------------------------------------------------------------------
    u8 = functools.partial(np.zeros, dtype=np.uint8)
    add("one byte past the end", OOR, "destination range", lambda ctx: A.copy_from_host(u8(4097)))
    add(
        "a negative offset",
        IA,
        "offset = -1 is out of range",
        lambda ctx: A.copy_from_host(u8(16), offset=-1),
    )
    add(
        "a float offset",
        TypeError,
        "offset must be an int, not float",
        lambda ctx: A.copy_from_host(u8(16), offset=1.0),
    )
    add(
        "a non-contiguous host array",
        ValueError,
        "not C-contiguous",
        lambda ctx: A.copy_from_host(np.zeros((32, 32), np.float32)[:, ::2]),
    )
    add(
        "a str as the host data",
        TypeError,
        "a str is not host memory",
        lambda ctx: A.copy_from_host("text"),
    )
    add(
        "a list as the host data",
        TypeError,
        "a list is not host memory",
        lambda ctx: A.copy_from_host([1, 2, 3]),
    )

    def read_past_end(ctx: CaseContext) -> None:
        dst = np.full(97, 0x5C, np.uint8)
        try:
            A.copy_to_host(dst, offset=4000)
        finally:
            ctx.expect((dst == 0x5C).all(), "the host array was written although the copy failed")

    add("a read past the end", OOR, "source range", read_past_end)

    def smaller_host_array(ctx: CaseContext) -> None:
        data = np.arange(1024, dtype=np.float32)
        with dev.to_device(data) as buf:
            part = buf.copy_to_host(np.zeros(100, np.float32), offset=400)
        ctx.expect(np.array_equal(part, data[100:200]), "the partial copy is wrong")

    add(
        "a host array smaller than the buffer takes as many bytes as it holds",
        None,
        "",
        smaller_host_array,
    )
    add(
        "a read into a read-only array",
        ValueError,
        "read-only",
        lambda ctx: A.copy_to_host(readonly),
    )
    add(
        "a read into bytes",
        ValueError,
        "bytes are read-only",
        lambda ctx: A.copy_to_host(b"\0" * 16),
    )
    add(
        "a read into a non-contiguous array",
        ValueError,
        "not C-contiguous",
        lambda ctx: A.copy_to_host(np.zeros((8, 8), np.uint8)[::2]),
    )
    add(
        "a read from a negative offset",
        IA,
        "offset = -4 is out of range",
        lambda ctx: A.copy_to_host(offset=-4),
    )

    def on_closed_stream(ctx: CaseContext) -> None:
        s = dev.create_stream()
        s.close()
        A.copy_from_host(u8(16), stream=s)

    add(
        "an async copy on a closed stream",
        IH,
        "stream is not a live cuabi_stream",
        on_closed_stream,
    )
    add(
        "an async copy with an Event as the stream",
        TypeError,
        "stream must be a cuabi.Stream",
        lambda ctx: A.copy_from_host(u8(16), stream=f.event),
    )
    add(
        "an async copy with an int as the stream",
        TypeError,
        "stream must be a cuabi.Stream",
        lambda ctx: A.copy_to_host(u8(16), stream=0),
    )
    add(
        "a device copy overlapping itself",
        IA,
        "overlap",
        lambda ctx: A.copy_from(A, 64, dst_offset=4, src_offset=0),
    )
    add(
        "a device copy of -5 bytes",
        IA,
        "nbytes = -5 is out of range",
        lambda ctx: A.copy_from(B, -5),
    )
    add(
        "a device copy from a host array",
        TypeError,
        "src must be a DeviceBuffer",
        lambda ctx: A.copy_from(u8(16)),
    )

    def from_closed(ctx: CaseContext) -> None:
        gone = dev.alloc(64)
        gone.close()
        A.copy_from(gone, 64)

    add("a device copy from a closed buffer", IH, "src is not a live cuabi_buffer", from_closed)
    add("a memset past the end", OOR, "memset range", lambda ctx: A.memset(0, 4095, 2))
    add(
        "a memset value of 256",
        ValueError,
        "memset value 256 is not a byte",
        lambda ctx: A.memset(256),
    )
    add(
        "a memset from a negative offset",
        IA,
        "offset = -1 is out of range",
        lambda ctx: A.memset(0, offset=-1),
    )

    # --- Launch configurations ---------------------------------------------------------
    def launch(grid: Any, block: Any, shared: int = 0) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            out = dev.zeros(16, np.float32)
            try:
                saxpy(grid, block, f.saxpy_args(16, out), shared_mem=shared)
            finally:
                dev.synchronize()
                zeros_stay(out, ctx, "the kernel ran although the launch was refused")
                out.close()

        return run

    add("a block of 2048 threads in x", IA, "exceeds the device's limit", launch(1, 2048))
    add("a grid x of zero", IA, "zero dimension", launch(0, 32))
    add("a negative grid", IA, "grid.x = -1 is out of range", launch(-1, 32))
    add("a negative block y", IA, "block.y = -2 is out of range", launch(1, (32, -2)))
    add("negative shared memory", IA, "shared_mem = -1 is out of range", launch(1, 32, -1))
    add("a grid x of 2^32", IA, "grid.x = 4294967296 is out of range", launch(1 << 32, 32))
    add(
        "a grid of four dimensions",
        IA,
        "grid must have 1 to 3 dimensions",
        launch((1, 2, 3, 4), 32),
    )
    add("a block that is a str", IA, "block must be an int or a tuple", launch(1, "32"))
    add(
        "a grid that is a float",
        IA,
        "grid must be an int or a tuple of 1 to 3 ints, not float",
        launch(1.5, 32),
    )
    add(
        "prepare() with a block of 2048",
        IA,
        "exceeds the device's limit",
        lambda ctx: saxpy.prepare(1, 2048),
    )
    add(
        "prepare() with negative shared memory",
        IA,
        "shared_mem = -1 is out of range",
        lambda ctx: saxpy.prepare(1, 32, shared_mem=-1),
    )

    # --- Extended launches, host functions, graph updates ------------------------------
    add(
        "a cluster (2, 1, 1) that does not divide a grid of 3",
        IA,
        "grid x 3 is not a multiple of cluster x 2",
        lambda ctx: saxpy(3, 32, f.saxpy_args(), stream=stream, cluster=(2, 1, 1)),
    )
    add(
        "prepare() with a cluster that does not divide the grid",
        IA,
        "is not a multiple of cluster x 4",
        lambda ctx: saxpy.prepare(cuabi.LaunchConfig(6, 32, cluster=4), stream=stream),
    )
    add(
        "a cluster with a zero dimension",
        IA,
        "has a zero dimension (use (0, 0, 0) for no cluster)",
        lambda ctx: saxpy(4, 32, f.saxpy_args(), stream=stream, cluster=(2, 0, 1)),
    )

    def cooperative_too_large(ctx: CaseContext) -> None:
        resident = saxpy.active_blocks_per_sm(256) * dev.multiprocessor_count
        saxpy(resident + 1, 256, f.saxpy_args(), stream=stream, cooperative=True)

    add("a cooperative grid larger than the device keeps resident", IA,
        "a cooperative grid of", cooperative_too_large)
    add(
        "a priority outside the stream priority range",
        IA,
        "priority 1000 is outside",
        lambda ctx: saxpy(1, 32, f.saxpy_args(), stream=stream, priority=1000),
    )
    add(
        "event_at_block_start without a programmatic event",
        IA,
        "PROGRAMMATIC_EVENT_AT_BLOCK_START is set but programmatic_event is NULL",
        lambda ctx: saxpy(1, 32, f.saxpy_args(), stream=stream, event_at_block_start=True),
    )
    add(
        "a programmatic event that is no Event",
        TypeError,
        "programmatic_event must be a cuabi.Event or None, not int",
        lambda ctx: saxpy(1, 32, f.saxpy_args(), stream=stream, programmatic_event=7),
    )
    add(
        "a kernel attribute by an unknown name",
        ValueError,
        "unknown kernel attribute 'num_registers'",
        lambda ctx: saxpy.attribute("num_registers"),
    )
    add(
        "a host function of None",
        IA,
        "fn is NULL",
        lambda ctx: stream.launch_host_func(None),  # type: ignore[arg-type]
    )

    def host_func_not_callable(ctx: CaseContext) -> None:
        from cuabi import _loader

        before = len(_loader._host_pending)
        try:
            stream.launch_host_func(42)  # type: ignore[arg-type]
        finally:
            ctx.expect(len(_loader._host_pending) == before, "an entry was left behind")

    add("a host function that is not callable", TypeError,
        "a host function must be callable, not int", host_func_not_callable)

    def host_func_while_capturing(ctx: CaseContext) -> None:
        from cuabi import _loader

        ran: List[int] = []
        s = dev.create_stream()
        try:
            s.begin_capture()
            try:
                s.launch_host_func(ran.append, 1)
            finally:
                s.end_capture().close()
                ctx.expect(not _loader._host_pending, "the refused host function is still held")
            s.synchronize()
            ctx.expect(not ran, "the refused host function ran")
        finally:
            s.close()

    add("a host function on a capturing stream", cuabi.NotSupportedError,
        "the stream is capturing a graph", host_func_while_capturing)

    def node_args(index: int, kernel: Callable[[], Any], args: Callable[[], tuple]) -> Callable:
        def run(ctx: CaseContext) -> None:
            graph = captured_graph()
            try:
                with graph.instantiate() as exe:
                    exe.set_kernel_node_args(index, kernel(), args())
            finally:
                graph.close()

        return run

    add(
        "a kernel node updated with another kernel",
        IA,
        "kernel node 0 runs",
        node_args(0, lambda: f.scale, lambda: (A, 2.0)),
    )
    add(
        "a kernel node index past the end",
        OOR,
        "kernel node 1 is past the end: the graph has 1 kernel node",
        node_args(1, lambda: saxpy, f.saxpy_args),
    )
    add(
        "a kernel node given arguments that do not fit the kernel",
        IA,
        "kernel 'saxpy' parameter 4 is 8 bytes",
        node_args(0, lambda: saxpy, lambda: f.saxpy_args()[:4] + (np.uint32(16),)),
    )
    add(
        "a kernel node index of -1",
        IA,
        "index = -1 is out of range",
        node_args(-1, lambda: saxpy, f.saxpy_args),
    )

    def update_other_topology(ctx: CaseContext) -> None:
        one = captured_graph()
        s = dev.create_stream()
        with s.capture() as cap:
            saxpy(1, 32, f.saxpy_args(), stream=s)
            saxpy(1, 32, f.saxpy_args(), stream=s)
        s.close()
        two = cap.graph
        try:
            with one.instantiate() as exe:
                try:
                    exe.update(two)
                finally:  # left as it was: still launchable
                    exe.launch(stream)
                    stream.synchronize()
        finally:
            one.close()
            two.close()

    add("a graph update from another topology", IA, "the graph cannot update this executable graph",
        update_other_topology)
    add(
        "a graph update from something that is no Graph",
        TypeError,
        "graph must be a cuabi.Graph, not Stream",
        lambda ctx: captured_graph().instantiate().update(stream),  # type: ignore[arg-type]
    )
    add(
        "an attribute value past int32",
        IA,
        "value = 4294967296 is out of range",
        lambda ctx: saxpy.set_attribute(capi.CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 32),
    )

    # --- Argument lists ----------------------------------------------------------------
    def launch_args(args: Any, prepared: bool = False, **kw: Any) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            out = dev.zeros(16, np.float32)
            real = [out if a is OUT else a for a in args] if isinstance(args, tuple) else args
            try:
                if prepared:
                    saxpy.prepare(1, 32)(*real)
                else:
                    saxpy(1, 32, real, **kw)
            finally:
                dev.synchronize()
                zeros_stay(out, ctx, "the kernel ran although its arguments were refused")
                out.close()
                problem = saxpy_problem(dev, saxpy, 64, 5.0)
                ctx.expect(not problem, f"the next, right launch: {problem}")

        return run

    OUT = object()  # stands for a fresh zeroed output buffer
    a32, n64 = np.float32(2.0), np.uint64(16)
    # What the core checks: the count and each argument's size.
    add(
        "four arguments for five parameters",
        IA,
        "kernel 'saxpy' takes 5 parameters, but 4 were given",
        launch_args((a32, A, A, OUT)),
    )
    add(
        "six arguments for five parameters",
        IA,
        "6 were given",
        launch_args((a32, A, A, OUT, n64, n64)),
    )
    add("no arguments at all", IA, "but 0 were given", launch_args(()))
    add(
        "a 4-byte n for a size_t parameter (the overview's bug)",
        IA,
        "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes",
        launch_args((a32, A, A, OUT, np.uint32(16))),
    )
    add(
        "a float64 for the float parameter",
        IA,
        "kernel 'saxpy' parameter 0 is 4 bytes, but the argument given is 8 bytes",
        launch_args((np.float64(2.0), A, A, OUT, n64)),
    )
    add(
        "a ctypes uint32 for the size_t parameter",
        IA,
        "parameter 4 is 8 bytes, but the argument given is 4 bytes",
        launch_args((a32, A, A, OUT, ctypes.c_uint32(16))),
    )
    add(
        "a one-element float64 array for the float parameter",
        IA,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes",
        launch_args((np.array([2.0]), A, A, OUT, n64)),
    )
    add(
        "None for the float parameter",
        IA,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes",
        launch_args((None, A, A, OUT, n64)),
    )
    add(
        "a struct of the wrong size for the float parameter",
        IA,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes",
        launch_args((np.zeros(1, "i4,i4")[0], A, A, OUT, n64)),
    )
    # What only Python knows: values of no C type or out of the parameter's range.
    add(
        "a host array for a pointer parameter",
        IA,
        "parameter 1: the argument is a host array",
        launch_args((a32, np.zeros(16, np.float32), A, OUT, n64)),
    )
    add(
        "a str argument", IA, "parameter 2: cannot pass a str", launch_args((a32, A, "y", OUT, n64))
    )
    add(
        "a one-element object array",
        IA,
        "an object array has no C value",
        launch_args((np.array([None], dtype=object), A, A, OUT, n64)),
    )
    add(
        "an int past 64 bits for n",
        IA,
        "parameter 4 is 8 bytes, and the int",
        launch_args((a32, A, A, OUT, 1 << 64)),
    )
    add(
        "a negative int past 64 bits for n",
        IA,
        "does not fit in 64 bits",
        launch_args((a32, A, A, OUT, -(1 << 63) - 1)),
    )
    add(
        "a float past float32's range",
        IA,
        "out of the range of a 32-bit float",
        launch_args((1e300, A, A, OUT, n64)),
    )
    add(
        "a complex for the float parameter",
        IA,
        "a Python complex fills an 8-byte",
        launch_args((1j, A, A, OUT, n64)),
    )

    def closed_arg(ctx: CaseContext) -> None:
        gone = dev.alloc(64)
        saxpy(1, 32, f.saxpy_args(16))  # the packer for these types is compiled now
        gone.close()
        saxpy(1, 32, (a32, gone, A, A, n64))

    add("a closed buffer as an argument", IH, "the buffer was closed", closed_arg)
    add(
        "three types for five arguments",
        IA,
        "3 types were given for 5 kernel arguments",
        launch_args((a32, A, A, OUT, n64), types=[None] * 3),
    )
    add(
        "a type the value cannot convert to",
        IA,
        "parameter 0: cannot convert str to c_float",
        launch_args(("two", A, A, OUT, n64), types=[ctypes.c_float] + [None] * 4),
    )
    add(
        "a bare buffer as args (not a tuple)",
        TypeError,
        "args must be a sequence of the kernel's arguments",
        launch_args(A),
    )
    add(
        "prepare(): four arguments for five parameters",
        IA,
        "takes 5 parameters, but 4 were given",
        launch_args((a32, A, A, OUT), prepared=True),
    )
    add(
        "prepare(): a 4-byte n for a size_t parameter",
        IA,
        "parameter 4 is 8 bytes, but the argument given is 4 bytes",
        launch_args((a32, A, A, OUT, np.uint32(16)), prepared=True),
    )
    add(
        "prepare(): an int past 64 bits for n",
        IA,
        "does not fit in 64 bits",
        launch_args((a32, A, A, OUT, 1 << 64), prepared=True),
    )

    def prepared_closed_arg(ctx: CaseContext) -> None:
        go = saxpy.prepare(1, 32)
        go(*f.saxpy_args(16))
        gone = dev.alloc(64)
        gone.close()
        go(a32, A, gone, A, n64)

    add(
        "prepare(): a closed buffer as an argument",
        IH,
        "the buffer was closed",
        prepared_closed_arg,
    )

    def scale(factor: Any, prepared: bool = False) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            with dev.to_device(np.array([3.0])) as out:
                try:
                    if prepared:
                        f.scale.prepare(1, 1)(out, factor)
                    else:
                        f.scale(1, 1, (out, factor))
                finally:
                    dev.synchronize()
                    got = out.copy_to_host()[0]
                    want = 3.0 if isinstance(factor, np.float32) else 3.0 * factor
                    ctx.expect(got == want, f"out is {got}, not {want}")

        return run

    add(
        "a float32 for a double parameter",
        IA,
        "kernel 'scale' parameter 1 is 8 bytes, but the argument given is 4 bytes",
        scale(np.float32(2.0)),
    )
    add(
        "prepare(): a float32 for a double parameter",
        IA,
        "kernel 'scale' parameter 1 is 8 bytes, but the argument given is 4 bytes",
        scale(np.float32(2.0), prepared=True),
    )
    add("a Python float for a double parameter (passed as a double)", None, "", scale(2.5))

    def many_parameters(ctx: CaseContext) -> None:
        with dev.compile(MANY_PARAMS, name="many.cu") as m, dev.zeros(1, np.int32) as out:
            k = m.get_kernel("many")
            ctx.expect(k.param_count == MANY, f"{k.param_count} parameters, not {MANY}")
            k(1, 1, (out,) + tuple(range(1, MANY)))
            got = int(out.copy_to_host()[0])
            ctx.expect(got == 1 + 69, f"the kernel wrote {got}, not 70")
            k(1, 1, (out,) + tuple(range(1, MANY - 1)))

    add(
        "a kernel of more parameters than the first layout query holds, one too few",
        IA,
        f"takes {MANY} parameters, but {MANY - 1} were given",
        many_parameters,
    )
    add(
        "an Event as the launch's stream",
        TypeError,
        "stream must be a cuabi.Stream",
        lambda ctx: saxpy(1, 32, f.saxpy_args(), stream=f.event),
    )
    add(
        "prepare() with an int as the stream",
        TypeError,
        "stream must be a cuabi.Stream",
        lambda ctx: saxpy.prepare(1, 32, stream=0),
    )

    def launch_on_closed_stream(ctx: CaseContext) -> None:
        s = dev.create_stream()
        saxpy(1, 32, f.saxpy_args(), stream=s)  # a plan on it is cached now
        s.close()
        saxpy(1, 32, f.saxpy_args(), stream=s)

    add(
        "a launch on a closed stream",
        IH,
        "stream is not a live cuabi_stream",
        launch_on_closed_stream,
    )

    def prepared_stream_closed(ctx: CaseContext) -> None:
        s = dev.create_stream()
        go = saxpy.prepare(1, 32, stream=s)
        go(*f.saxpy_args())
        s.close()
        go(*f.saxpy_args())

    add(
        "prepare(): its stream closed, then called",
        IH,
        "stream is not a live cuabi_stream",
        prepared_stream_closed,
    )

    def prepared_closed(ctx: CaseContext) -> None:
        with saxpy.prepare(1, 32) as go:
            go(*f.saxpy_args())
        go(*f.saxpy_args())

    add("prepare(): closed, then called", IH, "the prepared launch was closed", prepared_closed)

    def kernel_of_new_module() -> cuabi.Kernel:
        return dev.compile(SAXPY, name="saxpy.cu").get_kernel("saxpy")

    def prepared_kernel_closed(ctx: CaseContext) -> None:
        k = kernel_of_new_module()
        go = k.prepare(1, 32)
        k.close()
        go(*f.saxpy_args())

    add(
        "prepare(): its kernel closed, then called",
        IH,
        "function is not a live cuabi_function",
        prepared_kernel_closed,
    )

    def kernel_closed(ctx: CaseContext) -> None:
        k = kernel_of_new_module()
        k(1, 32, f.saxpy_args())
        k.close()
        k.close()
        k(1, 32, f.saxpy_args())

    add(
        "a kernel closed twice, then launched",
        IH,
        "function is not a live cuabi_function",
        kernel_closed,
    )

    def new_signature_after_close(ctx: CaseContext) -> None:
        k = kernel_of_new_module()
        k(1, 32, f.saxpy_args())
        k.close()
        k.pack((np.float64(2.0), A, A, A, n64))  # sizes the core was never asked about

    add(
        "a kernel closed, then packed with sizes never checked",
        IH,
        "cuabi_function_check_arg_sizes: function is not a live cuabi_function",
        new_signature_after_close,
    )

    # --- The low layer (a smoke subset of the core's) ----------------------------
    cfg = r.config((1, 1, 1), (32, 1, 1))

    def sized_n32(ctx: CaseContext) -> None:
        values = [
            np.array([2.0], np.float32),
            np.array([A.ptr], np.uint64),
            np.array([A.ptr], np.uint64),
            np.array([A.ptr], np.uint64),
            np.array([16], np.uint32),
        ]
        params = r.pointers([v.ctypes.data for v in values])
        sizes = r.sizes([v.nbytes for v in values])
        r.check(lib.cuabi_function_launch_sized(saxpy.handle, cfg, b.NULL, params, sizes, 5))

    add(
        "cuabi_function_launch_sized: a 4-byte n for a size_t parameter",
        IA,
        "parameter 4 is 8 bytes, but the argument given is 4 bytes",
        sized_n32,
    )
    add(
        "cuabi_function_launch_packed: a block of 36 bytes for 40",
        IA,
        "40-byte argument block",
        lambda ctx: r.check(
            lib.cuabi_function_launch_packed(saxpy.handle, cfg, b.NULL, bytes(36), 36)
        ),
    )
    add(
        "cuabi_function_check_arg_size: an index past the last parameter",
        IA,
        "there is no parameter 5",
        lambda ctx: b.call("cuabi_function_check_arg_size", saxpy.handle, 5, 8),
    )
    add(
        "a module handle as the function",
        IH,
        "it is a cuabi_module",
        lambda ctx: b.function_params(r.h("function", b.handle_int(f.saxpy_module.handle))),
    )

    def new_plan() -> Any:
        box = r.out("cuabi_launch_plan")
        r.check(lib.cuabi_launch_plan_create(saxpy.handle, cfg, b.NULL, r.ref(box)))
        return b.value(box)

    def stale_plan(ctx: CaseContext) -> None:
        old = new_plan()
        lib.cuabi_launch_plan_release(old)
        new = new_plan()
        try:
            ctx.expect(
                b.handle_int(old) & 0xFFFFFF == b.handle_int(new) & 0xFFFFFF,
                "the slot was not reused: nothing stale was tested",
            )
            r.check(lib.cuabi_launch_plan_launch(old))
        finally:
            struct.pack_into("<f4xQQQQ", b.plan_block(new), 0, 2.0, A.ptr, A.ptr, A.ptr, 16)
            status = lib.cuabi_launch_plan_launch(new)
            ctx.expect(status == 0, f"the plan in the reused slot failed with status {status}")
            dev.synchronize()
            lib.cuabi_launch_plan_release(new)

    add(
        "a stale plan (its slot reused by a live one)",
        IH,
        "plan is not a live cuabi_launch_plan: it was released",
        stale_plan,
    )

    def plan_outlives(ctx: CaseContext) -> None:
        k = kernel_of_new_module()
        s = dev.create_stream()
        box = r.out("cuabi_launch_plan")
        r.check(
            lib.cuabi_launch_plan_create(
                k.handle, r.config((4, 1, 1), (256, 1, 1)), s.handle, r.ref(box)
            )
        )
        plan = b.value(box)
        k.module.close()
        k.close()
        s.close()
        n = 1024
        x = np.arange(n, dtype=np.float32)
        bx, by, bo = (dev.to_device(x), dev.to_device(np.ones(n, np.float32)), dev.zeros(n))
        try:
            view = b.plan_block(plan)
            ctx.expect(len(view) == 40, f"the plan's block is {len(view)} bytes, not 40")
            struct.pack_into("<f4xQQQQ", view, 0, 2.0, bx.ptr, by.ptr, bo.ptr, n)
            launch_fn, arg = b.plan_launcher(plan)
            r.check(launch_fn(arg))
            dev.synchronize()
            ctx.expect(
                np.array_equal(bo.copy_to_host(), 2.0 * x + 1.0), "the plan's launch is wrong"
            )
        finally:
            lib.cuabi_launch_plan_release(plan)
            for buf in (bx, by, bo):
                buf.close()

    add("a plan outlives its module, function and stream", None, "", plan_outlives)

    # --- Names, attributes, ordinals, streams and events -----------------------------
    add(
        "an unknown kernel",
        NF,
        "no kernel named 'no_such_kernel'",
        lambda ctx: f.saxpy_module.get_kernel("no_such_kernel"),
    )
    add(
        "an unknown kernel through []",
        NF,
        "no kernel named 'nope'",
        lambda ctx: f.saxpy_module["nope"],
    )
    add(
        "a kernel name that is None",
        TypeError,
        "name must be str or bytes",
        lambda ctx: f.saxpy_module.get_kernel(None),
    )
    add(
        "a kernel name with a lone surrogate (str)",
        IA,
        "name cannot be encoded as UTF-8",
        lambda ctx: f.saxpy_module.get_kernel("sax\udcffpy"),
    )
    add(
        "a kernel name with an embedded NUL (not silently 'saxpy')",
        IA,
        "name contains a NUL character at index 5",
        lambda ctx: f.saxpy_module.get_kernel("saxpy\0 and more"),
    )
    add(
        "an unknown global",
        NF,
        "no global named 'no_such_global'",
        lambda ctx: f.util.get_global("no_such_global"),
    )
    add(
        "a device attribute past int32",
        IA,
        "cu_attribute = 2147483648 is out of range",
        lambda ctx: dev.attribute(1 << 31),
    )
    add(
        "ordinal -1",
        cuabi.NoDeviceError,
        "no CUDA device -1",
        lambda ctx: cuabi.Device(-1, backend=b),
    )
    add(
        "a stream priority past int32",
        IA,
        "priority = 2147483648 is out of range",
        lambda ctx: dev.create_stream(priority=1 << 31),
    )
    add(
        "a capture mode past int32 (not silently mode 0)",
        IA,
        "mode = 4294967296 is out of range",
        lambda ctx: dev.create_stream().begin_capture(1 << 32),
    )
    add(
        "an unknown capture mode name",
        ValueError,
        "unknown capture mode 'sideways'",
        lambda ctx: stream.begin_capture("sideways"),
    )
    add(
        "a negative CUstream to wrap",
        IA,
        "cu_stream = -1 is out of range",
        lambda ctx: dev.wrap_stream(-1),
    )

    def wait_closed_event(ctx: CaseContext) -> None:
        e = dev.create_event()
        e.close()
        stream.wait(e)

    add("a wait on a closed event", IH, "event is not a live cuabi_event", wait_closed_event)
    add(
        "a wait on a Stream given as the event",
        TypeError,
        "event must be a cuabi.Event, not Stream",
        lambda ctx: stream.wait(stream),
    )
    add(
        "a wait on None",
        TypeError,
        "event must be a cuabi.Event, not NoneType",
        lambda ctx: stream.wait(None),
    )
    add(
        "an elapsed time to a Stream given as the end",
        TypeError,
        "end must be a cuabi.Event, not Stream",
        lambda ctx: f.event.elapsed_ms(stream),
    )
    add(
        "an event recorded on an Event given as the stream",
        TypeError,
        "stream must be a cuabi.Stream",
        lambda ctx: f.event.record(f.event),
    )

    # --- Images, files, compile descriptions -----------------------------------------
    junk = bytes((i * 131 + 7) & 0xFF for i in range(256))
    add(
        "random bytes as an image",
        cuabi.CudaDriverError,
        "cuModuleLoadData",
        lambda ctx: dev.load_module(junk),
    )
    add(
        "a file that does not exist",
        cuabi.FileIOError,
        "/nonexistent/kernel.cubin",
        lambda ctx: dev.load_module("/nonexistent/kernel.cubin"),
    )
    add(
        "a path-like that does not exist",
        cuabi.FileIOError,
        "/nonexistent/kernel.cubin",
        lambda ctx: dev.load_module(pathlib.Path("/nonexistent/kernel.cubin")),
    )
    tmp = tempfile.gettempdir()
    add(
        "a path that is not UTF-8",
        IA,
        "UTF-8",
        lambda ctx: dev.load_module(os.fsdecode(b"/tmp/\xff\xfe.cubin")),
    )
    add(
        "a path with an embedded NUL",
        IA,
        "path contains a NUL character",
        lambda ctx: dev.load_module(f"{tmp}/k.cubin\0.ptx"),
    )
    add(
        "an unknown output kind",
        ValueError,
        "output must be 'cubin' or 'ptx', not 'elf'",
        lambda ctx: dev.compile(SAXPY, output="elf"),
    )

    def module_compile_error(ctx: CaseContext) -> None:
        try:
            dev.compile(
                'extern "C" __global__ void k(int* x) { *x = undefined_in_module; }', cache=False
            )
        except cuabi.CompileError as exc:
            ctx.expect("undefined_in_module" in exc.log, ".log does not hold NVRTC's log")
            raise

    add("a compile error", CE, "undefined_in_module", module_compile_error)
    add(
        "an unknown option given as a str",
        CE,
        "--no-such-option",
        lambda ctx: dev.compile(SAXPY, options="--no-such-option", cache=False),
    )
    add(
        "a source with an embedded NUL",
        IA,
        "source contains a NUL character",
        lambda ctx: dev.compile(SAXPY + "\0 junk"),
    )
    add(
        "a compile description of the defaults: no source (low layer)",
        IA,
        "desc->source is NULL",
        lambda ctx: r.check(
            lib.cuabi_module_compile(dev.handle, fill_compile_desc(b)[0], r.ref(r.out("cuabi_module")))
        ),
    )

    # --- Objects released while others hold them ------------------------------------
    def module_released(ctx: CaseContext) -> None:
        m = dev.compile(SAXPY, name="saxpy.cu")
        k = m.get_kernel("saxpy")
        m.close()
        try:
            m.get_kernel("saxpy")
            ctx.problem("the closed module still answers")
        except cuabi.InvalidHandleError:
            pass
        problem = saxpy_problem(dev, k, 4096, 3.0)
        ctx.expect(not problem, problem)
        ctx.expect(k.name == "saxpy", "the kernel lost its name")
        go = k.prepare(16, 256)
        go(*f.saxpy_args(16))
        k.close()

    add("a module closed, its kernel still launches", None, "", module_released)

    def module_closed_global(ctx: CaseContext) -> None:
        m = dev.compile(UTIL, name="util.cu")
        m.close()
        m.get_global("corpus_counter")

    add(
        "a module closed, then its global looked up",
        IH,
        "module is not a live cuabi_module",
        module_closed_global,
    )

    def buffer_closed_twice(ctx: CaseContext) -> None:
        x = dev.alloc(64)
        x.close()
        x.close()
        x.memset(0)

    add(
        "a buffer closed twice, then used",
        IH,
        "buffer is not a live cuabi_buffer",
        buffer_closed_twice,
    )

    def buffer_closed_ptr(ctx: CaseContext) -> None:
        x = dev.alloc(64)
        x.close()
        x.ptr

    add("a closed buffer's address", IH, "the buffer was closed", buffer_closed_ptr)

    def buffer_closed_dlpack(ctx: CaseContext) -> None:
        x = dev.alloc(64)
        x.close()
        x.__dlpack__()

    add(
        "a closed buffer exported through DLPack", IH, "the buffer was closed", buffer_closed_dlpack
    )
    add(
        "a view bigger than the buffer",
        ValueError,
        "needs 8192 bytes but the buffer has 4096",
        lambda ctx: A.as_array(np.float64, (1024,)),
    )

    def device_released(ctx: CaseContext) -> None:
        d = cuabi.Device(0, backend=b)
        x = d.alloc(64)
        d.close()
        x.memset(0xAB)
        ctx.expect(
            (x.copy_to_host(np.empty(64, np.uint8)) == 0xAB).all(),
            "wrong data after the device was closed",
        )
        x.close()

    add("a device closed, its buffer still works", None, "", device_released)

    def device_closed(ctx: CaseContext) -> None:
        d = cuabi.Device(0, backend=b)
        d.close()
        d.alloc(64)

    add("a device closed, then used", IH, "device is not a live cuabi_device", device_closed)

    def closed_then(make: Callable[[], Any], use: Callable[[Any], Any]) -> Callable:
        def run(ctx: CaseContext) -> None:
            obj = make()
            obj.close()
            obj.close()
            use(obj)

        return run

    def captured_graph() -> cuabi.Graph:
        s = dev.create_stream()
        with s.capture() as cap:
            saxpy(1, 32, f.saxpy_args(), stream=s)
        s.close()
        return cap.graph

    for what, needle, make, use in [
        (
            "a kernel closed, then its attribute read",
            "function is not a live cuabi_function",
            kernel_of_new_module,
            lambda k: k.max_threads_per_block,
        ),
        (
            "a stream closed, then synchronized",
            "stream is not a live cuabi_stream",
            dev.create_stream,
            lambda s: s.synchronize(),
        ),
        (
            "an event closed, then recorded",
            "event is not a live cuabi_event",
            dev.create_event,
            lambda e: e.record(),
        ),
        (
            "a pinned buffer closed, then read",
            "the pinned buffer was closed",
            lambda: dev.host_alloc(64),
            lambda p: p.as_array(),
        ),
        (
            "a graph closed, then instantiated",
            "graph is not a live cuabi_graph",
            captured_graph,
            lambda g: g.instantiate(),
        ),
        (
            "a graph exec closed, then launched",
            "exec is not a live cuabi_graph_exec",
            lambda: captured_graph().instantiate(),
            lambda e: e.launch(),
        ),
    ]:
        add(what, IH, needle, closed_then(make, use))

    def closed_pinned_dst(ctx: CaseContext) -> None:
        p = dev.host_alloc(64)
        p.close()
        A.copy_to_host(p)

    add("a read into a closed pinned buffer", IH, "the pinned buffer was closed", closed_pinned_dst)

    def stale(
        make: Callable[[], Any], probe: Callable[[Any], Any]
    ) -> Callable[[CaseContext], None]:
        """Closes one object, makes a live one in its slot, then uses the old
        handle: refused, and the live one untouched."""

        def run(ctx: CaseContext) -> None:
            old = make()
            h = old.handle
            old.close()
            new = make()
            try:
                ctx.expect(
                    b.handle_int(h) & 0xFFFFFF == b.handle_int(new.handle) & 0xFFFFFF,
                    "the slot was not reused: nothing stale was tested",
                )
                probe(h)
            finally:
                try:
                    probe(new.handle)
                except cuabi.CudaError as exc:
                    ctx.problem(f"the object in the reused slot failed: {describe(exc)}")
                new.close()

        return run

    for kind, make, probe in [
        (
            "buffer",
            lambda: dev.alloc(64),
            lambda h: b.get("cuabi_buffer_get_size", h, out="size_t"),
        ),
        (
            "function",
            lambda: f.saxpy_module.get_kernel("saxpy"),
            lambda h: b.function_params(h),
        ),
        ("stream", dev.create_stream, lambda h: b.call("cuabi_stream_synchronize", h)),
    ]:
        add(
            f"a stale cuabi_{kind} (its slot reused by a live object)",
            IH,
            f"is not a live cuabi_{kind}: it was released",
            stale(make, probe),
        )

    def every_kind_twice(ctx: CaseContext) -> None:
        m = dev.compile(SAXPY, name="saxpy.cu")
        graph = captured_graph()
        objs = [
            cuabi.Device(0, backend=b),
            m,
            m.get_kernel("saxpy"),
            dev.alloc(64),
            dev.host_alloc(64),
            dev.create_stream(),
            dev.create_event(),
            graph,
            graph.instantiate(),
        ]
        for obj in reversed(objs):
            obj.close()
        for obj in objs:
            obj.close()
            getattr(lib, obj._release_fn)(obj.handle)  # and the low layer's release
        problem = saxpy_problem(dev, saxpy, 256, 1.0, stream)
        ctx.expect(not problem, f"after the double releases: {problem}")

    add("every kind closed twice and released again (low layer)", None, "", every_kind_twice)

    return t.cases


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def no_collection():
    """No garbage collection meanwhile: a collector run could release some
    other test's objects and hand their slots out before the one a stale
    case freed (the handle table reuses the last slot freed first)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def test_bad_input_corpus(default_backend: Backend, summary_line) -> None:
    """The cases that need NVRTC but no GPU."""
    b = default_backend
    with no_collection():
        fixture = CpuFixture(b)
        try:
            cases = cpu_cases(b, fixture)
            result = run_corpus(b, cases)
        finally:
            fixture.close()
    report(f"Python {b.name}", result, summary_line)
    assert result.cases > 60


def test_bad_input_corpus_gpu(default_backend: Backend, summary_line) -> None:
    """The cases that need a device; without one the count line says SKIPPED,
    with the reason, and the test is skipped."""
    b = default_backend
    label = f"Python {b.name}, GPU"
    reason = no_device_reason()
    if reason:
        summary_line(f"bad-input corpus ({label}): SKIPPED: {reason}")
        pytest.skip(reason)
    with no_collection():
        fixture = GpuFixture(b)
        try:
            cases = gpu_cases(b, fixture)
            result = run_corpus(b, cases)
            # The context must have survived every case.
            survived = saxpy_problem(fixture.dev, fixture.saxpy, 1 << 16, 11.0, fixture.stream)
        finally:
            fixture.close()
    report(label, result, summary_line)
    assert not survived, f"after the corpus: {survived}"
    assert result.cases > 100
