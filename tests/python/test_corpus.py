"""The bad-input corpus through the Python binding, the counterpart of the C
ABI's in tests/hardening/corpus_*_test.cc: a table of cases, each one wrong
input through the objects users call (Device, Program, Module, Kernel,
DeviceBuffer, Stream ...) or, where those make it impossible, through the
low layer with raw handle values. Each case names what is wrong, the exact
exception class it must raise (a cuabi subclass for a core status, or the
TypeError/ValueError the binding raises before C is called), a piece of text
the message must hold (the thing at fault), and may check more (nothing
written, the process still working, the right result).

The runner checks every case the same way and reports, at the end of the
session, ``bad-input corpus (Python <backend>): N cases, P passed`` (and the
same with ``, GPU`` for the part that needs a device), then each failing
case. The backend is the default one (``$CUABI_BACKEND``, else ctypes).
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
from cuabi._packing import ArgumentLayout
from kernels import SAXPY

TINY = 'extern "C" __global__ void tiny(int* x) { *x = 42; }\n'
TEMPLATE = "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n"
SM = "--gpu-architecture=sm_90"
COMPUTE = "--gpu-architecture=compute_90"

# Small kernels for the GPU part: a kernel using dynamic shared memory, a
# __device__ global and a template (as tests/hardening/support.h has them),
# and one with a double parameter.
UTIL = """\
extern "C" __global__ void scale(double* out, double factor)
{
  *out *= factor;
}

extern "C" __global__ void fill_shared(int* out)
{
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__device__ int corpus_counter;

template <typename T>
__global__ void store(T* out, T value)
{
  *out = value;
}
"""

SIZE_MAX = (1 << 64) - 1
SAXPY_OFFSETS = (0, 8, 16, 24, 32)
SAXPY_SIZES = (4, 8, 8, 8, 8)

# CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
MAX_SHARED_OPTIN = 97


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
        if self.b.name == "cffi" and not isinstance(v, (int, float)):
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

    def config(
        self,
        grid: Sequence[int] = (1, 1, 1),
        block: Sequence[int] = (1, 1, 1),
        shared: int = 0,
        struct_size: Optional[int] = None,
    ) -> Any:
        cfg = self.b.launch_config(tuple(grid), tuple(block), shared)
        if struct_size is not None:
            target = cfg._obj if self.b.name == "ctypes" else cfg
            target.struct_size = struct_size
        return cfg

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
        self.failed = P("this is not C++", "corpus.cu")
        try:
            self.failed.compile()
        except cuabi.CompileError:
            pass
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
        for p in (self.compiled, self.ptx_only, self.fresh, self.failed, self.reuser):
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
    sm_opts = r.strings([SM.encode()])

    def size_ref() -> Any:
        return r.ref(r.out("size_t"))

    def reuser_alive(ctx: CaseContext) -> None:
        ctx.expect(f.reuser.log == "", "the live program that reused the slot stopped working")

    # --- Program handles, low layer: NULL, released, stale ---------------------
    program_calls = [
        (
            "cuabi_program_add_name_expression",
            lambda h: lib.cuabi_program_add_name_expression(h, b"store<int>"),
        ),
        ("cuabi_program_compile", lambda h: lib.cuabi_program_compile(h, 1, sm_opts)),
        ("cuabi_program_get_log", lambda h: lib.cuabi_program_get_log(h, b.NULL, size_ref())),
        ("cuabi_program_get_ptx", lambda h: lib.cuabi_program_get_ptx(h, b.NULL, size_ref())),
        ("cuabi_program_get_cubin", lambda h: lib.cuabi_program_get_cubin(h, b.NULL, size_ref())),
        (
            "cuabi_program_get_lowered_name",
            lambda h: lib.cuabi_program_get_lowered_name(h, b"store<int>", b.NULL, size_ref()),
        ),
    ]
    for call, fn in program_calls:
        add(
            f"{call}: NULL program",
            IH,
            f"{call}: program is NULL",
            lambda ctx, fn=fn: r.check(fn(b.NULL)),
        )
        add(
            f"{call}: released program",
            IH,
            f"{call}: program is not a live cuabi_program",
            lambda ctx, fn=fn: r.check(fn(r.h("program", f.released))),
        )

        def stale(ctx: CaseContext, fn=fn) -> None:
            try:
                r.check(fn(r.h("program", f.stale)))
            finally:
                reuser_alive(ctx)

        add(
            f"{call}: stale program (slot reused by a live one)",
            IH,
            f"{call}: program is not a live cuabi_program",
            stale,
        )

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

    # --- Wrong kind: a live program handle where another kind belongs -----------
    def wrong(kind: str) -> Any:
        return r.h(kind, pv)

    def function_out_untouched(ctx: CaseContext) -> None:
        out = r.out("cuabi_function", 0x5A5A)
        try:
            r.check(lib.cuabi_module_get_function(wrong("module"), b"tiny", r.ref(out)))
        finally:
            ctx.expect(r.got(out) == 0x5A5A, "out was written although the call failed")

    def buffer_size_untouched(ctx: CaseContext) -> None:
        out = r.out("size_t", 777)
        try:
            r.check(lib.cuabi_buffer_get_size(wrong("buffer"), r.ref(out)))
        finally:
            ctx.expect(r.got(out) == 777, "bytes was written although the call failed")

    for name, needle, fn in [
        (
            "as a device",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_device_get_name(wrong("device"), b.NULL, size_ref())),
        ),
        ("as a module", "it is a cuabi_program", function_out_untouched),
        (
            "as a function",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_function_get_name(wrong("function"), b.NULL, size_ref())),
        ),
        ("as a buffer", "it is a cuabi_program", buffer_size_untouched),
        (
            "as a host buffer",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_host_buffer_get_size(wrong("host_buffer"), size_ref())),
        ),
        (
            "as a stream",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_stream_synchronize(wrong("stream"))),
        ),
        (
            "as an event",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_event_query(wrong("event"))),
        ),
        (
            "as a graph",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_graph_get_node_count(wrong("graph"), size_ref())),
        ),
        (
            "as a graph exec",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_graph_exec_launch(wrong("graph_exec"), b.NULL)),
        ),
        (
            "as a launch plan",
            "it is a cuabi_program",
            lambda ctx: r.check(lib.cuabi_launch_plan_launch(wrong("launch_plan"))),
        ),
        (
            "as the launch's function",
            "function is not a live cuabi_function",
            lambda ctx: r.check(
                lib.cuabi_function_launch_packed(wrong("function"), r.config(), b.NULL, b.NULL, 0)
            ),
        ),
        (
            "as the plan's function",
            "it is a cuabi_program",
            lambda ctx: r.check(
                lib.cuabi_launch_plan_create(
                    wrong("function"), b.NULL, b.NULL, r.ref(r.out("cuabi_launch_plan"))
                )
            ),
        ),
        (
            "as the compile's device",
            "device is not a live cuabi_device",
            lambda ctx: r.check(
                lib.cuabi_module_compile(
                    wrong("device"),
                    b.compile_desc(source=TINY.encode())[0],
                    r.ref(r.out("cuabi_module")),
                )
            ),
        ),
        (
            "with its kind bits forged to a module",
            "module is not a live cuabi_module",
            lambda ctx: r.check(
                lib.cuabi_module_get_function(
                    r.h("module", kind_bits(pv, 3)), b"tiny", r.ref(r.out("cuabi_function"))
                )
            ),
        ),
    ]:
        add(f"a program handle {name}", IH, needle, fn)

    # --- Made-up program handle values -------------------------------------------
    host = ctypes.c_size_t(0)
    for what, value in [
        ("the value 1", 1),
        ("0xdeadbeef", 0xDEADBEEF),
        ("all bits set", SIZE_MAX),
        ("generation 0 with the program kind", 2 << 24),
        ("a never-used slot index", (1 << 32) | (2 << 24) | 0xFFFFFE),
        ("a live handle's generation plus one", pv + (1 << 32)),
        ("a host pointer", ctypes.addressof(host)),
    ]:
        add(
            f"made-up program handle: {what}",
            IH,
            "program is not a live cuabi_program",
            lambda ctx, v=value: r.check(
                lib.cuabi_program_get_log(r.h("program", v), b.NULL, size_ref())
            ),
        )

    # --- NULL handles of every other kind ----------------------------------------
    def plan_args_untouched(ctx: CaseContext) -> None:
        args, n = r.out("void*", 0x1234), r.out("size_t", 77)
        try:
            r.check(lib.cuabi_launch_plan_get_args(b.NULL, r.ref(args), r.ref(n)))
        finally:
            ctx.expect(r.got(args) == 0x1234 and r.got(n) == 77, "outputs written on failure")

    def plan_out_untouched(ctx: CaseContext) -> None:
        out = r.out("cuabi_launch_plan", 0x31)
        try:
            r.check(lib.cuabi_launch_plan_create(b.NULL, r.config(), b.NULL, r.ref(out)))
        finally:
            ctx.expect(r.got(out) == 0x31, "out was written although the call failed")

    host4 = b.char_buffer(4)
    for name, needle, fn in [
        (
            "NULL device (get_ordinal)",
            "cuabi_device_get_ordinal: device is NULL",
            lambda ctx: r.check(lib.cuabi_device_get_ordinal(b.NULL, r.ref(r.out("int32_t")))),
        ),
        (
            "NULL device (reset)",
            "cuabi_device_reset: device is NULL",
            lambda ctx: r.check(lib.cuabi_device_reset(b.NULL)),
        ),
        (
            "NULL device (buffer_alloc)",
            "cuabi_buffer_alloc: device is NULL",
            lambda ctx: r.check(lib.cuabi_buffer_alloc(b.NULL, 16, r.ref(r.out("cuabi_buffer")))),
        ),
        (
            "NULL device (module_load_data)",
            "cuabi_module_load_data: device is NULL",
            lambda ctx: r.check(
                lib.cuabi_module_load_data(b.NULL, b"x", 1, r.ref(r.out("cuabi_module")))
            ),
        ),
        (
            "NULL module",
            "cuabi_module_get_function: module is NULL",
            lambda ctx: r.check(
                lib.cuabi_module_get_function(b.NULL, b"tiny", r.ref(r.out("cuabi_function")))
            ),
        ),
        (
            "NULL function (param count)",
            "cuabi_function_get_param_count: function is NULL",
            lambda ctx: r.check(lib.cuabi_function_get_param_count(b.NULL, size_ref())),
        ),
        (
            "NULL function (launch)",
            "cuabi_function_launch: function is NULL",
            lambda ctx: r.check(lib.cuabi_function_launch(b.NULL, r.config(), b.NULL, b.NULL, 0)),
        ),
        (
            "NULL buffer",
            "cuabi_buffer_get_pointer: buffer is NULL",
            lambda ctx: r.check(lib.cuabi_buffer_get_pointer(b.NULL, r.ref(r.out("uint64_t")))),
        ),
        (
            "NULL destination buffer",
            "cuabi_buffer_copy: dst is NULL",
            lambda ctx: r.check(lib.cuabi_buffer_copy(b.NULL, 0, b.NULL, 0, 4)),
        ),
        (
            "NULL source buffer",
            "cuabi_buffer_copy_to_host: src is NULL",
            lambda ctx: r.check(lib.cuabi_buffer_copy_to_host(b.NULL, 0, host4, 4)),
        ),
        (
            "NULL host buffer",
            "cuabi_host_buffer_get_pointer: buffer is NULL",
            lambda ctx: r.check(lib.cuabi_host_buffer_get_pointer(b.NULL, r.ref(r.out("void*")))),
        ),
        (
            "NULL stream (query)",
            "cuabi_stream_query: stream is NULL",
            lambda ctx: r.check(lib.cuabi_stream_query(b.NULL)),
        ),
        (
            "NULL stream (wait_event)",
            "cuabi_stream_wait_event: stream is NULL",
            lambda ctx: r.check(lib.cuabi_stream_wait_event(b.NULL, b.NULL)),
        ),
        (
            "NULL event",
            "cuabi_event_synchronize: event is NULL",
            lambda ctx: r.check(lib.cuabi_event_synchronize(b.NULL)),
        ),
        (
            "NULL start event",
            "cuabi_event_get_elapsed_ms: start is NULL",
            lambda ctx: r.check(lib.cuabi_event_get_elapsed_ms(b.NULL, b.NULL, r.ref(r.out("float")))),
        ),
        (
            "NULL graph",
            "cuabi_graph_instantiate: graph is NULL",
            lambda ctx: r.check(
                lib.cuabi_graph_instantiate(b.NULL, r.ref(r.out("cuabi_graph_exec")))
            ),
        ),
        (
            "NULL graph exec",
            "cuabi_graph_exec_launch: exec is NULL",
            lambda ctx: r.check(lib.cuabi_graph_exec_launch(b.NULL, b.NULL)),
        ),
        ("NULL plan (get_args)", "cuabi_launch_plan_get_args: plan is NULL", plan_args_untouched),
        (
            "NULL plan (launch)",
            "cuabi_launch_plan_launch: plan is NULL",
            lambda ctx: r.check(lib.cuabi_launch_plan_launch(b.NULL)),
        ),
        (
            "plan of a NULL function",
            "cuabi_launch_plan_create: function is NULL",
            plan_out_untouched,
        ),
        (
            "made-up plan",
            "plan is not a live cuabi_launch_plan",
            lambda ctx: r.check(
                lib.cuabi_launch_plan_get_args(
                    r.h("launch_plan", (1 << 32) | (11 << 24)), r.ref(r.out("void*")), size_ref()
                )
            ),
        ),
    ]:
        add(name, IH, needle, fn)

    # --- Release: twice, through the wrong kind, NULL, made up -------------------
    releases = [
        ("device", lib.cuabi_device_release),
        ("program", lib.cuabi_program_release),
        ("module", lib.cuabi_module_release),
        ("function", lib.cuabi_function_release),
        ("buffer", lib.cuabi_buffer_release),
        ("host_buffer", lib.cuabi_host_buffer_release),
        ("stream", lib.cuabi_stream_release),
        ("event", lib.cuabi_event_release),
        ("graph", lib.cuabi_graph_release),
        ("graph_exec", lib.cuabi_graph_exec_release),
        ("launch_plan", lib.cuabi_launch_plan_release),
    ]

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

    def every_other_release(ctx: CaseContext) -> None:
        for kind, release in releases:
            if kind != "program":
                release(r.h(kind, pv))
        for k in range(1, 12):  # the same slot and generation, forged kind bits
            if k != 2:
                lib.cuabi_module_release(r.h("module", kind_bits(pv, k)))
        ctx.expect(live.lowered_name("store<int>"), "the live program lost its lowered name")

    add("a live program through every other kind's release", None, "", every_other_release)

    def null_releases(ctx: CaseContext) -> None:
        before = b.string(lib.cuabi_last_error_message())
        for _, release in releases:
            release(b.NULL)
        ctx.expect(
            before == b.string(lib.cuabi_last_error_message()), "a release changed the last error"
        )

    add("NULL to every release, the last error untouched", None, "", null_releases)

    def made_up_releases(ctx: CaseContext) -> None:
        values = [
            1,
            0xDEADBEEF,
            SIZE_MAX,
            (1 << 32) | (2 << 24) | 0xFFFFFE,  # a slot never handed out
            f.released,
            f.stale,
        ]
        for v in values:
            for kind, release in releases:
                release(r.h(kind, v))
        reuser_alive(ctx)  # the stale value's slot belongs to it now

    add("made-up values to every release", None, "", made_up_releases)

    # --- Program creation ----------------------------------------------------------
    def create(ctx: CaseContext, source: Any, n: int, srcs: Any, names: Any, out: Any) -> None:
        r.check(lib.cuabi_program_create(source, b.NULL, n, srcs, names, out))

    def source_null(ctx: CaseContext) -> None:
        out = r.out("cuabi_program", 0x77)
        try:
            create(ctx, b.NULL, 0, b.NULL, b.NULL, r.ref(out))
        finally:
            ctx.expect(r.got(out) == 0x77, "out was written although the call failed")

    add("low layer: source is NULL", IA, "cuabi_program_create: source is NULL", source_null)
    add(
        "low layer: out is NULL",
        IA,
        "out is NULL",
        lambda ctx: create(ctx, TINY.encode(), 0, b.NULL, b.NULL, b.NULL),
    )
    add(
        "low layer: headers counted but the arrays NULL",
        IA,
        "num_headers is 2",
        lambda ctx: create(ctx, TINY.encode(), 2, b.NULL, b.NULL, r.ref(r.out("cuabi_program"))),
    )
    add(
        "low layer: a header's name is NULL",
        IA,
        "header_names[1] is NULL",
        lambda ctx: create(
            ctx,
            TINY.encode(),
            2,
            r.strings([b"int a;", b"int b;"]),
            r.strings([b"a.h", None]),
            r.ref(r.out("cuabi_program")),
        ),
    )
    add(
        "low layer: a header's source is NULL",
        IA,
        "header_sources[0] is NULL",
        lambda ctx: create(
            ctx,
            TINY.encode(),
            1,
            r.strings([None]),
            r.strings([b"a.h"]),
            r.ref(r.out("cuabi_program")),
        ),
    )
    srcs5000 = r.strings([b"int a;"] * 4999 + [None])
    names5000 = r.strings([b"a.h"] * 4999 + [None])

    def too_many_headers(ctx: CaseContext) -> None:
        out = r.out("cuabi_program")
        try:
            create(ctx, TINY.encode(), SIZE_MAX, srcs5000, names5000, r.ref(out))
        finally:
            lib.cuabi_program_release(b.value(out))

    add(
        "low layer: num_headers is (size_t)-1",
        IA,
        "num_headers is 18446744073709551615, implausibly large",
        too_many_headers,
    )
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

    add(
        "options NULL with a count (low layer)",
        IA,
        "num_options is 2",
        lambda ctx: r.check(lib.cuabi_program_compile(f.fresh.handle, 2, b.NULL)),
    )
    add(
        "an option is NULL (low layer)",
        IA,
        "options[1] is NULL",
        lambda ctx: r.check(
            lib.cuabi_program_compile(f.fresh.handle, 2, r.strings([SM.encode(), None]))
        ),
    )
    many_opts = r.strings([b"-w"] * 4999 + [None])
    add(
        "num_options is (size_t)-1 (low layer)",
        IA,
        "num_options is 18446744073709551615, implausibly large",
        lambda ctx: r.check(lib.cuabi_program_compile(f.fresh.handle, SIZE_MAX, many_opts)),
    )
    add("an empty option", IA, "options[0] is empty", compile_fresh([""]))
    add(
        "an option of 100 KiB",
        IA,
        "options[1] is longer than 64 KiB",
        compile_fresh(["-w", "-D" + "X" * (100 * 1024)]),
    )
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
        "an option missing its value",
        CE,
        "NVRTC rejected the options",
        compile_fresh(["--gpu-architecture"]),
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
        "options must be a str, bytes or a sequence",
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
        "an undefined identifier",
        CE,
        "undefined_identifier_xyz",
        compile_error(
            'extern "C" __global__ void k(int* x) { *x = undefined_identifier_xyz; }',
            "undefined_identifier_xyz",
        ),
    )
    add(
        "a missing include",
        CE,
        "missing_header.h",
        compile_error('#include "missing_header.h"\n', "missing_header.h"),
    )
    add(
        "an #error directive",
        CE,
        "custom failure marker",
        compile_error("#error custom failure marker\n", "custom failure marker"),
    )

    def header_error(ctx: CaseContext) -> None:
        with P('#include "bad_header.h"\n', headers={"bad_header.h": "int broken(;\n"}) as p:
            p.compile()

    add("an error inside a given header", CE, "bad_header.h", header_error)

    def expression_naming_nothing(ctx: CaseContext) -> None:
        with P(TEMPLATE, name_expressions=["no_such_template<int>"]) as p:
            p.compile()

    add("a name expression naming nothing", CE, "no_such_template", expression_naming_nothing)

    def empty_source(ctx: CaseContext) -> None:
        with P("") as p:
            p.compile([COMPUTE])
            ctx.expect(".version" in p.ptx, "an empty source gave no PTX header")

    add("an empty source", None, "", empty_source)

    # --- Name expressions and lowered names ----------------------------------------
    add(
        "an empty name expression",
        IA,
        "expression",
        lambda ctx: P(TEMPLATE).add_name_expression(""),
    )
    add(
        "an empty name expression given to Program()",
        IA,
        "expression",
        lambda ctx: P(TEMPLATE, name_expressions=["store<int>", ""]),
    )
    add(
        "a name expression added after compiling",
        IA,
        "before the program is compiled",
        lambda ctx: live.add_name_expression("store<float>"),
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
    add(
        "the lowered name of a NULL expression (low layer)",
        IA,
        "expression",
        lambda ctx: r.check(
            lib.cuabi_program_get_lowered_name(live.handle, b.NULL, b.NULL, size_ref())
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

    # --- Outputs and two-call sizes --------------------------------------------------
    add("PTX before compiling", NF, "compiled", lambda ctx: f.fresh.ptx)
    add("CUBIN before compiling", NF, "compiled", lambda ctx: f.fresh.cubin)
    add("CUBIN after a failed compile", NF, "compiled", lambda ctx: f.failed.cubin)
    add("CUBIN of a compute_XY compile", NF, "CUBIN", lambda ctx: f.ptx_only.cubin)
    add(
        "log with size NULL (low layer)",
        IA,
        "size is NULL",
        lambda ctx: r.check(lib.cuabi_program_get_log(live.handle, b.NULL, b.NULL)),
    )
    add(
        "PTX with size NULL (low layer)",
        IA,
        "size is NULL",
        lambda ctx: r.check(lib.cuabi_program_get_ptx(live.handle, b.NULL, b.NULL)),
    )

    def ptx_too_small(ctx: CaseContext) -> None:
        buf = b.char_buffer(4)
        buf[0] = b"#"
        n = r.out("size_t")
        try:
            r.check(lib.cuabi_program_get_ptx(live.handle, buf, r.ref(n)))
        finally:
            ctx.expect(buf[0] == b"#", "a too-small buffer was written")

    add(
        "PTX into a 0-byte buffer (low layer)",
        cuabi.InsufficientBufferError,
        "are needed",
        ptx_too_small,
    )

    def last_error_log_null(ctx: CaseContext) -> None:
        before = b.string(lib.cuabi_last_error_message())
        status = lib.cuabi_last_error_log(b.NULL, b.NULL)
        ctx.expect(status == capi.CUABI_ERROR_INVALID_ARGUMENT, f"answered {status}")
        ctx.expect(
            before == b.string(lib.cuabi_last_error_message()),
            "it changed the last-error state, which this call must leave alone",
        )

    add(
        "last error log with size NULL (leaves the last error alone)", None, "", last_error_log_null
    )
    add(
        "NVRTC version into NULL",
        IA,
        "major is NULL",
        lambda ctx: r.check(lib.cuabi_nvrtc_get_version(b.NULL, r.ref(r.out("int32_t")))),
    )
    add(
        "NVRTC path with size NULL",
        IA,
        "size is NULL",
        lambda ctx: r.check(lib.cuabi_nvrtc_get_path(b.NULL, b.NULL)),
    )
    add(
        "driver version into NULL",
        IA,
        "version is NULL",
        lambda ctx: r.check(lib.cuabi_driver_get_version(b.NULL)),
    )
    add(
        "device count into NULL",
        IA,
        "count is NULL",
        lambda ctx: r.check(lib.cuabi_device_get_count(b.NULL)),
    )
    add("device into NULL", IA, "out is NULL", lambda ctx: r.check(lib.cuabi_device_get(0, b.NULL)))

    # --- Strings that are not UTF-8 ------------------------------------------------
    def compiles(source: Any, headers: Any = None, name: Any = "corpus.cu") -> Callable:
        def run(ctx: CaseContext) -> None:
            with P(source, name, headers=headers) as p:
                try:
                    p.compile([COMPUTE])
                finally:
                    ctx.expect(isinstance(p.log, str), "the log is not text")

        return run

    add(
        "invalid UTF-8 inside a comment",
        None,
        "",
        compiles(b"// \xff\xfe\xc0\xaf comment\n__device__ int x;\n"),
    )
    add(
        "invalid UTF-8 inside an identifier",
        CE,
        "could not compile",
        compiles(b"__global__ void k\xff\xfe(int* x) { *x = 1; }\n"),
    )
    add(
        "invalid UTF-8 inside a string literal",
        CE,
        "could not compile",
        compiles(b'__global__ void k(char* x) { const char* s = "\xff\xfe"; *x = s[0]; }\n'),
    )
    add(
        "a source of nothing but invalid bytes (NVRTC skips them)",
        None,
        "",
        compiles(b"\xff\xfe\xfd\x80\x81\xc0\xc1\xf5\xf8\xfc"),
    )
    add(
        "a surrogate (CESU) and an overlong NUL in an #error",
        CE,
        "could not compile",
        compiles(b"#error bad \xed\xa0\x80 and \xc0\x80 here\n"),
    )
    add(
        "invalid UTF-8 in a header's content (a comment)",
        None,
        "",
        compiles('#include "h.cuh"\n', {"h.cuh": b"// \xff\xfe\n__device__ int y;\n"}),
    )
    add(
        "valid non-ASCII text in a comment and a name",
        None,
        "",
        compiles("// caf\u00e9 \u20ac \U0001f600\n__device__ int y;\n", name="k\u00e9rnel.cu"),
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
        "a header name that is not UTF-8 (bytes)",
        IA,
        "header_names[0] is not valid UTF-8",
        lambda ctx: P('#include "bad.h"\n', headers={b"bad\xff.h": "int broken(;\n"}),
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
        "an architecture value that is not UTF-8 (bytes)",
        IA,
        "options[0] is not valid UTF-8",
        compile_fresh([b"--gpu-architecture=sm_\xff"]),
    )
    add(
        "an option with a lone surrogate (str)",
        IA,
        "option cannot be encoded as UTF-8",
        compile_fresh(["-D\udcff=1"]),
    )
    add(
        "a name expression that is not UTF-8 (bytes)",
        IA,
        "UTF-8",
        lambda ctx: P(TEMPLATE).add_name_expression(b"store<\xff>"),
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
    add(
        "a kernel name that is not UTF-8 (the module handle is checked first)",
        IH,
        "module is NULL",
        lambda ctx: r.check(
            lib.cuabi_module_get_function(b.NULL, b"k\xff", r.ref(r.out("cuabi_function")))
        ),
    )
    add(
        "a module path that is not UTF-8 (the device handle is checked first)",
        IH,
        "device is NULL",
        lambda ctx: r.check(
            lib.cuabi_module_load_file(b.NULL, b"/tmp/\xff.cubin", r.ref(r.out("cuabi_module")))
        ),
    )

    # --- Launch validation without a live function -----------------------------------
    one_float = np.array([1.0], np.float32)
    add(
        "a sized launch on a made-up function",
        IH,
        "function is not a live cuabi_function",
        lambda ctx: r.check(
            lib.cuabi_function_launch_sized(
                r.h("function", (1 << 32) | (4 << 24) | 3),
                r.config(),
                b.NULL,
                r.pointers([one_float.ctypes.data]),
                r.sizes([4]),
                1,
            )
        ),
    )
    add(
        "a launch with every pointer NULL",
        IH,
        "function is NULL",
        lambda ctx: r.check(lib.cuabi_function_launch(b.NULL, b.NULL, b.NULL, b.NULL, 5)),
    )
    add(
        "a packed launch, NULL config and args, on a made-up function",
        IH,
        "function",
        lambda ctx: r.check(
            lib.cuabi_function_launch_packed(r.h("function", 0xDEADBEEF), b.NULL, b.NULL, b.NULL, SIZE_MAX)
        ),
    )
    add(
        "a compile into a NULL device with a NULL desc",
        IH,
        "device is NULL",
        lambda ctx: r.check(lib.cuabi_module_compile(b.NULL, b.NULL, r.ref(r.out("cuabi_module")))),
    )

    # --- The packers: wrong counts and sizes for SAXPY's layout ------------------------
    def saxpy_pack(*values: Any, types: Any = None) -> Callable[[CaseContext], None]:
        return lambda ctx: cuabi.pack_args(
            values, SAXPY_OFFSETS, SAXPY_SIZES, 40, types=types, kernel="saxpy"
        )

    a32, n64 = np.float32(2.0), np.uint64(16)
    ptr = 0x7F0000001000
    add(
        "packing four arguments for five parameters",
        IA,
        "kernel 'saxpy' takes 5 parameters, but 4 were given",
        saxpy_pack(a32, ptr, ptr, ptr),
    )
    add(
        "packing six arguments for five parameters",
        IA,
        "but 6 were given",
        saxpy_pack(a32, ptr, ptr, ptr, n64, n64),
    )
    add("packing no arguments", IA, "but 0 were given", saxpy_pack())
    add(
        "packing a 4-byte n for a size_t parameter (the overview's bug)",
        IA,
        "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes (numpy.uint32)",
        saxpy_pack(a32, ptr, ptr, ptr, np.uint32(16)),
    )
    add(
        "packing a float64 for a float parameter",
        IA,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes (numpy.float64)",
        saxpy_pack(np.float64(2.0), ptr, ptr, ptr, n64),
    )
    add(
        "packing a float32 for a double parameter",
        IA,
        "kernel 'scale' parameter 0 is 8 bytes, but the argument given is 4 bytes (numpy.float32)",
        lambda ctx: cuabi.pack_args([np.float32(2.0)], [0], [8], kernel="scale"),
    )
    add(
        "packing a ctypes uint32 for a size_t parameter",
        IA,
        "parameter 4 is 8 bytes, but the argument given is 4 bytes (ctypes.",
        saxpy_pack(a32, ptr, ptr, ptr, ctypes.c_uint32(16)),
    )
    add(
        "packing a one-element float64 array for a float",
        IA,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes (numpy.ndarray of float64)",
        saxpy_pack(np.array([2.0]), ptr, ptr, ptr, n64),
    )
    add(
        "packing an int past 64 bits",
        IA,
        "parameter 4 is 8 bytes, and the int",
        saxpy_pack(a32, ptr, ptr, ptr, 1 << 64),
    )
    add(
        "packing a float past float32's range",
        IA,
        "out of the range of a 32-bit float",
        saxpy_pack(1e300, ptr, ptr, ptr, n64),
    )
    add(
        "packing a complex for a float",
        IA,
        "a Python complex fills an 8-byte",
        saxpy_pack(1j, ptr, ptr, ptr, n64),
    )
    add(
        "packing None for a float",
        IA,
        "parameter 0 is 4 bytes, but the argument given is 8",
        saxpy_pack(None, ptr, ptr, ptr, n64),
    )
    add(
        "packing a str for a pointer",
        IA,
        "parameter 1: cannot pass a str",
        saxpy_pack(a32, "x", ptr, ptr, n64),
    )
    add(
        "packing a host array for a pointer",
        IA,
        "parameter 1: the argument is a host array",
        saxpy_pack(a32, np.zeros(16, np.float32), ptr, ptr, n64),
    )
    add(
        "packing a one-element object array",
        IA,
        "an object array has no C value",
        saxpy_pack(np.array([None], dtype=object), ptr, ptr, ptr, n64),
    )
    add(
        "packing with three types for five arguments",
        IA,
        "3 types were given for 5 kernel arguments",
        saxpy_pack(a32, ptr, ptr, ptr, n64, types=[None, None, None]),
    )
    add(
        "packing with a type the value cannot convert to",
        IA,
        "parameter 0: cannot convert str to c_float",
        saxpy_pack("two", ptr, ptr, ptr, n64, types=[ctypes.c_float] + [None] * 4),
    )
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

    layout = ArgumentLayout(SAXPY_OFFSETS, SAXPY_SIZES, 40, "saxpy")
    add(
        "a compiled packer for four types",
        IA,
        "takes 5 parameters, but 4 were given",
        lambda ctx: layout.compile_packer((np.float32, int, int, int)),
    )

    def compiled(values: Sequence[Any]) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            pack = layout.compile_packer(tuple(map(type, values)))
            pack(memoryview(bytearray(40)), values)

        return run

    add(
        "a compiled packer given a 4-byte n",
        IA,
        "parameter 4 is 8 bytes",
        compiled((a32, ptr, ptr, ptr, np.uint32(16))),
    )
    add(
        "a compiled packer given an int past 64 bits",
        IA,
        "does not fit in 64 bits",
        compiled((a32, ptr, ptr, ptr, 1 << 64)),
    )
    add(
        "a compiled packer given a negative int past 64 bits",
        IA,
        "does not fit in 64 bits",
        compiled((a32, -(1 << 63) - 1, ptr, ptr, n64)),
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
        self.untimed = self.dev.create_event(timing=False)
        self.total_memory = self.dev.total_memory

    def close(self) -> None:
        made = [self.__dict__.get(k) for k in ("scale", "fill_shared", "raised", "util")]
        for obj in made + [self.untimed, self.event, self.stream, self.b_, self.a, self.saxpy]:
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

    @functools.cached_property
    def fill_shared(self) -> cuabi.Kernel:
        return self.util.get_kernel("fill_shared")

    @functools.cached_property
    def raised(self) -> cuabi.Kernel:  # fill_shared whose limit a case raises
        return self.dev.compile(UTIL, name="util.cu").get_kernel("fill_shared")

    @functools.cached_property
    def max_shared_optin(self) -> int:
        return self.dev.attribute(MAX_SHARED_OPTIN)

    @functools.cached_property
    def cubin(self) -> bytes:
        p = cuabi.Program(SAXPY, "saxpy.cu", backend=self.b)
        return p.compile([f"--gpu-architecture={self.dev.arch}"]).cubin

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
    add("2^50 bytes", OOM, "out of device memory", lambda ctx: dev.alloc(1 << 50))
    add(
        "twice the device's memory",
        OOM,
        "out of device memory",
        lambda ctx: dev.alloc(2 * f.total_memory),
    )
    add(
        "an empty() array of 2^52 bytes",
        OOM,
        "out of device memory",
        lambda ctx: dev.empty((1 << 25, 1 << 25), np.float32),
    )

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
    add("zero pinned bytes", IA, "bytes is 0", lambda ctx: dev.host_alloc(0))
    add("(size_t)-1 pinned bytes", OOM, "cuMemHostAlloc", lambda ctx: dev.host_alloc(SIZE_MAX))
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
        "pinning an empty array",
        IA,
        "cuabi_host_buffer_register: bytes is 0",
        lambda ctx: dev.pin(np.zeros(0, np.uint8)),
    )
    add("wrapping address 0", IA, "device_ptr is 0", lambda ctx: dev.wrap_buffer(0, 64))
    add("wrapping zero bytes", IA, "bytes is 0", lambda ctx: dev.wrap_buffer(A.ptr, 0))
    add(
        "wrapping a range that wraps around the address space",
        IA,
        "overflows",
        lambda ctx: dev.wrap_buffer(SIZE_MAX - 15, 64),
    )
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

    # --- Copies ----------------------------------------------------------------------
    u8 = functools.partial(np.zeros, dtype=np.uint8)
    add("one byte past the end", OOR, "destination range", lambda ctx: A.copy_from_host(u8(4097)))
    add(
        "an offset past the end",
        OOR,
        "4096-byte buffer",
        lambda ctx: A.copy_from_host(u8(0), offset=4097),
    )
    add(
        "offset + bytes overflows size_t",
        OOR,
        "destination range",
        lambda ctx: A.copy_from_host(u8(2), offset=SIZE_MAX),
    )
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
    add(
        "float64 host data for 1024 float32",
        OOR,
        "destination range",
        lambda ctx: dev.empty(1024, np.float32).copy_from_host(np.zeros(1024)),
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
        "a float64 host array for 1024 float32",
        OOR,
        "source range",
        lambda ctx: dev.zeros(1024, np.float32).copy_to_host(np.empty(1024)),
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
        "a read from an offset past the end",
        OOR,
        "source range",
        lambda ctx: A.copy_to_host(offset=5000),
    )
    add(
        "a read from a negative offset",
        IA,
        "offset = -4 is out of range",
        lambda ctx: A.copy_to_host(offset=-4),
    )
    add(
        "an async copy past the end",
        OOR,
        "destination range",
        lambda ctx: A.copy_from_host(u8(4096), offset=1, stream=stream),
    )
    add(
        "an async read past the end",
        OOR,
        "source range",
        lambda ctx: A.copy_to_host(u8(1), offset=4096, stream=stream),
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
        "a device copy onto itself",
        IA,
        "overlap",
        lambda ctx: A.copy_from(A, 1, dst_offset=128, src_offset=128),
    )

    def two_wraps(ctx: CaseContext) -> None:
        with dev.wrap_buffer(A.ptr, 2048) as w1, dev.wrap_buffer(A.ptr + 1024, 2048) as w2:
            w1.copy_from(w2, 100, dst_offset=1074, src_offset=0)

    add("a device copy between two wraps of the same memory", IA, "overlap", two_wraps)
    add(
        "an async device copy overlapping",
        IA,
        "overlap",
        lambda ctx: A.copy_from(A, 16, dst_offset=0, src_offset=8, stream=stream),
    )
    add(
        "a device copy past the destination's end",
        OOR,
        "destination range",
        lambda ctx: A.copy_from(B, 100, dst_offset=4000),
    )
    add(
        "a device copy past the source's end",
        OOR,
        "source range",
        lambda ctx: A.copy_from(B, 2, src_offset=4095),
    )
    add(
        "a device copy from an offset past the source's end",
        OOR,
        "source range",
        lambda ctx: A.copy_from(B, src_offset=4100),
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

    def halves(ctx: CaseContext) -> None:
        v = (np.arange(4096) * 7).astype(np.uint8)
        A.copy_from_host(v)
        A.copy_from(A, 2048, dst_offset=2048, src_offset=0)
        back = A.copy_to_host(np.empty(4096, np.uint8))
        ctx.expect(np.array_equal(back[2048:], v[:2048]), "the copied half differs")

    add("non-overlapping halves of one buffer", None, "", halves)
    add("a memset past the end", OOR, "memset range", lambda ctx: A.memset(0, 4095, 2))
    add(
        "a memset from an offset past the end",
        OOR,
        "memset range",
        lambda ctx: A.memset(0, offset=5000),
    )
    add(
        "an async memset of (size_t)-1 bytes",
        OOR,
        "memset range",
        lambda ctx: A.memset(0, 0, SIZE_MAX, stream=stream),
    )
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
    add("a block of 1024 x 2 threads", IA, "allows at most", launch(1, (1024, 2)))
    add("a block z of 128", IA, "exceeds the device's limit", launch(1, (1, 1, 128)))
    add("a grid x of zero", IA, "zero dimension", launch(0, 32))
    add("a grid z of zero", IA, "zero dimension", launch((1, 1, 0), 32))
    add("a block x of zero", IA, "zero dimension", launch(1, 0))
    add("a grid y of 2^32-1", IA, "exceeds the device's limit", launch((1, (1 << 32) - 1), 32))
    add("1 GiB of dynamic shared memory", IA, "dynamic shared memory", launch(1, 32, 1 << 30))
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
    add("prepare() with a zero grid", IA, "zero dimension", lambda ctx: saxpy.prepare(0, 32))
    add(
        "prepare() with negative shared memory",
        IA,
        "shared_mem = -1 is out of range",
        lambda ctx: saxpy.prepare(1, 32, shared_mem=-1),
    )

    def fill_shared_64k(ctx: CaseContext) -> None:
        f.fill_shared(1, 32, (A,), shared_mem=64 * 1024)

    add(
        "shared memory above the default limit, within the opt-in",
        IA,
        "CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES",
        fill_shared_64k,
    )
    add(
        "a shared memory limit raised past the device's",
        IA,
        "cannot be set to",
        lambda ctx: f.raised.set_attribute(
            capi.CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, f.max_shared_optin + 1
        ),
    )

    def within_raised(ctx: CaseContext) -> None:
        f.raised.set_attribute(capi.CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024)
        with dev.zeros(32, np.int32) as out:
            f.raised(1, 32, (out,), shared_mem=64 * 1024)
            got = out.copy_to_host()
        ctx.expect(np.array_equal(got, np.arange(31, -1, -1)), "fill_shared gave wrong results")

    add("shared memory within a raised limit", None, "", within_raised)
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
        "kernel 'saxpy' parameter 0 is 4 bytes",
        launch_args((np.float64(2.0), A, A, OUT, n64)),
    )
    add(
        "a host array for a pointer parameter",
        IA,
        "parameter 1: the argument is a host array",
        launch_args((a32, np.zeros(16, np.float32), A, OUT, n64)),
    )
    add(
        "a str argument", IA, "parameter 2: cannot pass a str", launch_args((a32, A, "y", OUT, n64))
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
        "kernel 'scale' parameter 1 is 8 bytes, but the argument given is 4 bytes (numpy.float32)",
        scale(np.float32(2.0)),
    )
    add(
        "prepare(): a float32 for a double parameter",
        IA,
        "kernel 'scale' parameter 1 is 8 bytes, but the argument given is 4 bytes",
        scale(np.float32(2.0), prepared=True),
    )
    add("a Python float for a double parameter (passed as a double)", None, "", scale(2.5))
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

    # --- Argument lists through the low layer --------------------------------------
    class Args:
        """SAXPY's arguments as separate host values (a = 2, x = y = out = A, n = 16)."""

        def __init__(self) -> None:
            self.values = [
                np.array([2.0], np.float32),
                np.array([A.ptr], np.uint64),
                np.array([A.ptr], np.uint64),
                np.array([A.ptr], np.uint64),
                np.array([16], np.uint64),
            ]

        def params(self, count: int = 5, null: int = -1) -> Any:
            addrs = [v.ctypes.data for v in self.values]
            addrs = (addrs + addrs)[:count]
            if null >= 0:
                addrs[null] = 0
            return r.pointers(addrs)

        def sizes(self) -> Any:
            return r.sizes([v.nbytes for v in self.values])

    def raw_launch(fn: Callable[[Args], int]) -> Callable[[CaseContext], None]:
        return lambda ctx: r.check(fn(Args()))

    cfg = r.config((1, 1, 1), (32, 1, 1))
    add(
        "cuabi_function_launch: four arguments for five parameters",
        IA,
        "takes 5 parameters, but 4 were given",
        raw_launch(lambda g: lib.cuabi_function_launch(saxpy.handle, cfg, b.NULL, g.params(4), 4)),
    )
    add(
        "cuabi_function_launch: six arguments for five parameters",
        IA,
        "6 were given",
        raw_launch(lambda g: lib.cuabi_function_launch(saxpy.handle, cfg, b.NULL, g.params(6), 6)),
    )
    add(
        "cuabi_function_launch: params NULL",
        IA,
        "params is NULL",
        raw_launch(lambda g: lib.cuabi_function_launch(saxpy.handle, cfg, b.NULL, b.NULL, 5)),
    )
    add(
        "cuabi_function_launch: one argument pointer NULL",
        IA,
        "params[3] is NULL",
        raw_launch(lambda g: lib.cuabi_function_launch(saxpy.handle, cfg, b.NULL, g.params(5, 3), 5)),
    )

    def sized(change: Callable[[Args], None]) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            g = Args()
            change(g)
            r.check(lib.cuabi_function_launch_sized(saxpy.handle, cfg, b.NULL, g.params(), g.sizes(), 5))

        return run

    def n32(g: Args) -> None:
        g.values[4] = np.array([16], np.uint32)

    def a64(g: Args) -> None:
        g.values[0] = np.array([2.0], np.float64)

    add(
        "cuabi_function_launch_sized: a 4-byte n for a size_t parameter",
        IA,
        "parameter 4 is 8 bytes, but the argument given is 4 bytes",
        sized(n32),
    )
    add(
        "cuabi_function_launch_sized: a double for a float parameter",
        IA,
        "parameter 0 is 4 bytes",
        sized(a64),
    )
    add(
        "cuabi_function_launch_sized: param_sizes NULL",
        IA,
        "param_sizes is NULL",
        raw_launch(
            lambda g: lib.cuabi_function_launch_sized(saxpy.handle, cfg, b.NULL, g.params(), b.NULL, 5)
        ),
    )
    add(
        "cuabi_function_launch_sized: config NULL",
        IA,
        "config is NULL",
        raw_launch(
            lambda g: lib.cuabi_function_launch_sized(saxpy.handle, b.NULL, b.NULL, g.params(), g.sizes(), 5)
        ),
    )
    add(
        "cuabi_function_launch_sized: config struct_size 0",
        IA,
        "config->struct_size is 0",
        raw_launch(
            lambda g: lib.cuabi_function_launch_sized(
                saxpy.handle,
                r.config((1, 1, 1), (32, 1, 1), 0, 0),
                b.NULL,
                g.params(),
                g.sizes(),
                5,
            )
        ),
    )
    packed36 = bytes(36)
    add(
        "cuabi_function_launch_packed: a block of 36 bytes for 40",
        IA,
        "40-byte argument block",
        lambda ctx: r.check(lib.cuabi_function_launch_packed(saxpy.handle, cfg, b.NULL, packed36, 36)),
    )
    add(
        "cuabi_function_launch_packed: a block of (size_t)-1 bytes",
        IA,
        "18446744073709551615 bytes were given",
        lambda ctx: r.check(lib.cuabi_function_launch_packed(saxpy.handle, cfg, b.NULL, b"\0", SIZE_MAX)),
    )
    add(
        "cuabi_function_launch_packed: args NULL",
        IA,
        "args is NULL",
        lambda ctx: r.check(lib.cuabi_function_launch_packed(saxpy.handle, cfg, b.NULL, b.NULL, 40)),
    )

    def program_as_stream(ctx: CaseContext) -> None:
        with cuabi.Program("int x;", backend=b) as p:
            g = Args()
            r.check(
                lib.cuabi_function_launch_sized(
                    saxpy.handle,
                    cfg,
                    r.h("stream", b.handle_int(p.handle)),
                    g.params(),
                    g.sizes(),
                    5,
                )
            )

    add(
        "a program handle as the stream", IH, "stream is not a live cuabi_stream", program_as_stream
    )
    add(
        "a module handle as the function",
        IH,
        "it is a cuabi_module",
        lambda ctx: r.check(
            lib.cuabi_function_launch(
                r.h("function", b.handle_int(f.saxpy_module.handle)), cfg, b.NULL, b.NULL, 0
            )
        ),
    )

    # --- Launch plans through the low layer -------------------------------------------
    OWN = object()  # plan_create's own out-parameter

    def plan_create(config: Any, stream_h: Any = None, out: Any = OWN) -> None:
        box = r.out("cuabi_launch_plan")
        try:
            r.check(
                lib.cuabi_launch_plan_create(
                    saxpy.handle,
                    config,
                    b.NULL if stream_h is None else stream_h,
                    r.ref(box) if out is OWN else out,
                )
            )
        finally:
            if r.got(box):
                lib.cuabi_launch_plan_release(b.value(box))

    add("a plan with a NULL config", IA, "config is NULL", lambda ctx: plan_create(b.NULL))

    def plan_over_limit(ctx: CaseContext) -> None:
        out = r.out("cuabi_launch_plan", 0x77)
        try:
            plan_create(r.config((1, 1, 1), (4096, 1, 1)), out=r.ref(out))
        finally:
            ctx.expect(r.got(out) == 0x77, "out was written although the call failed")

    add("a plan with a block over the limit", IA, "exceeds the device's limit", plan_over_limit)
    add(
        "a plan with a zero grid",
        IA,
        "zero dimension",
        lambda ctx: plan_create(r.config((0, 1, 1), (32, 1, 1))),
    )
    add(
        "a plan with config struct_size 0",
        IA,
        "struct_size is 0",
        lambda ctx: plan_create(r.config((1, 1, 1), (32, 1, 1), 0, 0)),
    )

    def plan_on_released_stream(ctx: CaseContext) -> None:
        s = dev.create_stream()
        s.close()
        plan_create(cfg, s.handle)

    add(
        "a plan on a released stream",
        IH,
        "stream is not a live cuabi_stream",
        plan_on_released_stream,
    )
    add("a plan into NULL", IA, "out is NULL", lambda ctx: plan_create(cfg, out=b.NULL))

    def new_plan() -> Any:
        box = r.out("cuabi_launch_plan")
        r.check(lib.cuabi_launch_plan_create(saxpy.handle, cfg, b.NULL, r.ref(box)))
        return b.value(box)

    def plan_args_null(ctx: CaseContext) -> None:
        plan = new_plan()
        try:
            r.check(lib.cuabi_launch_plan_get_args(plan, b.NULL, r.ref(r.out("size_t"))))
        finally:
            lib.cuabi_launch_plan_release(plan)

    add("plan arguments into NULL", IA, "args is NULL", plan_args_null)

    def plan_released_twice(ctx: CaseContext) -> None:
        plan = new_plan()
        lib.cuabi_launch_plan_release(plan)
        lib.cuabi_launch_plan_release(plan)
        r.check(lib.cuabi_launch_plan_launch(plan))

    add(
        "a plan released twice, then launched",
        IH,
        "plan is not a live cuabi_launch_plan",
        plan_released_twice,
    )

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

    # --- Names, attributes, ordinals ------------------------------------------------
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
    add("an empty kernel name", IA, "name", lambda ctx: f.saxpy_module.get_kernel(""))
    add(
        "a kernel name that is None",
        TypeError,
        "name must be str or bytes",
        lambda ctx: f.saxpy_module.get_kernel(None),
    )
    add(
        "a kernel name that is not UTF-8 (bytes)",
        IA,
        "UTF-8",
        lambda ctx: f.saxpy_module.get_kernel(b"sax\xffpy"),
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
        "a template kernel without a name expression",
        NF,
        "name expression",
        lambda ctx: f.util.get_kernel("store<int>"),
    )
    add(
        "an unknown global",
        NF,
        "no global named 'no_such_global'",
        lambda ctx: f.util.get_global("no_such_global"),
    )
    add(
        "an unknown lowered name", NF, "store<long>", lambda ctx: f.util.lowered_name("store<long>")
    )
    add(
        "a parameter index past the end (low layer)",
        OOR,
        "index 5 is past",
        lambda ctx: b.get_many(
            "cuabi_function_get_param_info", saxpy.handle, 5, outs=("size_t", "size_t")
        ),
    )
    add(
        "parameter index (size_t)-1 (low layer)",
        OOR,
        "index 18446744073709551615",
        lambda ctx: b.get_many(
            "cuabi_function_get_param_info", saxpy.handle, SIZE_MAX, outs=("size_t", "size_t")
        ),
    )
    add("an unknown function attribute", IA, "attribute 9999", lambda ctx: saxpy.attribute(9999))
    add("an unknown device attribute", IA, "cu_attribute 99999", lambda ctx: dev.attribute(99999))
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
        "ordinal 1000000",
        cuabi.NoDeviceError,
        "no CUDA device 1000000",
        lambda ctx: cuabi.Device(1000000, backend=b),
    )
    add(
        "a stream priority past int32",
        IA,
        "priority = 2147483648 is out of range",
        lambda ctx: dev.create_stream(priority=1 << 31),
    )
    add(
        "unknown stream flags (low layer)",
        IA,
        "flags",
        lambda ctx: r.check(
            lib.cuabi_stream_create(dev.handle, 0x80, 0, r.ref(r.out("cuabi_stream")))
        ),
    )
    add(
        "unknown event flags (low layer)",
        IA,
        "flags",
        lambda ctx: r.check(lib.cuabi_event_create(dev.handle, 0x80, r.ref(r.out("cuabi_event")))),
    )
    add("an unknown capture mode", IA, "mode 99", lambda ctx: stream.begin_capture(99))
    add(
        "a capture mode past int32 (not silently mode 0)",
        IA,
        "mode = 4294967296 is out of range",
        lambda ctx: dev.create_stream().begin_capture(1 << 32),
    )
    add(
        "a negative CUstream to wrap",
        IA,
        "cu_stream = -1 is out of range",
        lambda ctx: dev.wrap_stream(-1),
    )
    add(
        "an unknown capture mode name",
        ValueError,
        "unknown capture mode 'sideways'",
        lambda ctx: stream.begin_capture("sideways"),
    )

    def never_recorded(ctx: CaseContext) -> None:
        with dev.create_event() as e1, dev.create_event() as e2:
            e1.elapsed_ms(e2)

    add("the elapsed time of events never recorded", IA, "never recorded", never_recorded)

    def untimed(ctx: CaseContext) -> None:
        f.untimed.record()
        f.event.record()
        f.event.synchronize()
        f.event - f.untimed

    add("the elapsed time of an untimed event", IA, "DISABLE_TIMING", untimed)

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
        "a Stream given as the event (low layer)",
        IH,
        "it is a cuabi_stream",
        lambda ctx: r.check(
            lib.cuabi_stream_wait_event(stream.handle, r.h("event", b.handle_int(stream.handle)))
        ),
    )
    add(
        "an event recorded on an Event given as the stream",
        TypeError,
        "stream must be a cuabi.Stream",
        lambda ctx: f.event.record(f.untimed),
    )

    # --- Images, files, compile descriptions -----------------------------------------
    junk = bytes((i * 131 + 7) & 0xFF for i in range(256))
    add("an image of zero bytes", IA, "size is 0", lambda ctx: dev.load_module(b""))
    add(
        "random bytes as an image",
        cuabi.CudaDriverError,
        "cuModuleLoadData",
        lambda ctx: dev.load_module(junk),
    )
    add(
        "PTX text that is not PTX",
        cuabi.CudaDriverError,
        "cuModuleLoadData",
        lambda ctx: dev.load_module(b".version 99.9\n.target sm_1\nthis is not ptx"),
    )

    def half_cubin(ctx: CaseContext) -> None:
        dev.load_module(f.cubin[: len(f.cubin) // 2])

    add("a CUBIN cut in half", IA, "truncated or malformed", half_cubin)

    def damaged_cubin(ctx: CaseContext) -> None:
        bad = bytearray(f.cubin)
        bad[16:64] = b"\xff" * 48
        dev.load_module(bytes(bad))

    add("a CUBIN with its ELF header damaged", IA, "truncated or malformed", damaged_cubin)
    add(
        "an ELF header alone",
        IA,
        "truncated or malformed",
        lambda ctx: dev.load_module(bytes([0x7F, 0x45, 0x4C, 0x46, 1, 1]) + bytes(58)),
    )
    add(
        "a fatbin header claiming 2^40 bytes",
        IA,
        "fatbin image is truncated",
        lambda ctx: dev.load_module(
            bytes([0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 1, 0, 0])
        ),
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
    add("a directory as the file", cuabi.FileIOError, tmp, lambda ctx: dev.load_module(tmp))

    def empty_file(ctx: CaseContext) -> None:
        fd, path = tempfile.mkstemp(suffix=".cubin")
        os.close(fd)
        try:
            dev.load_module(path)
        finally:
            os.unlink(path)

    add("an empty file", IA, "is empty", empty_file)
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
        "an architecture that does not exist",
        CE,
        "--gpu-architecture",
        lambda ctx: dev.compile(SAXPY, options=["--gpu-architecture=sm_1"], cache=False),
    )
    add(
        "an unknown option",
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
        "a name expression that is not UTF-8 (bytes)",
        IA,
        "UTF-8",
        lambda ctx: dev.compile(UTIL, name_expressions=[b"store<\xff>"]),
    )
    add(
        "an empty header name",
        IA,
        "header_names[0] is empty",
        lambda ctx: dev.compile(SAXPY, headers={"": "int x;"}),
    )

    def desc(**fields: Any) -> Callable[[CaseContext], None]:
        def run(ctx: CaseContext) -> None:
            d, keep = b.compile_desc(**fields)
            r.check(lib.cuabi_module_compile(dev.handle, d, r.ref(r.out("cuabi_module"))))

        return run

    src = SAXPY.encode()
    add(
        "desc NULL",
        IA,
        "desc is NULL",
        lambda ctx: r.check(
            lib.cuabi_module_compile(dev.handle, b.NULL, r.ref(r.out("cuabi_module")))
        ),
    )
    add("desc struct_size 0", IA, "desc->struct_size is 0", desc(source=src, struct_size=0))
    add("desc source NULL", IA, "desc->source is NULL", desc())
    add("desc output 7", IA, "desc->output is 7", desc(source=src, output=7))
    add("desc flags unknown", IA, "desc->flags", desc(source=src, flags=0x100))
    add(
        "desc options NULL with a count",
        IA,
        "desc->options",
        desc(source=src, options=None, num_options=3),
    )
    one_opt = r.strings([b"-w"])
    add(
        "desc options count (size_t)-1",
        IA,
        "implausibly large",
        desc(source=src, options=one_opt, num_options=SIZE_MAX),
    )
    null_expr = r.strings([None])
    add(
        "desc name expression NULL",
        IA,
        "desc->name_expressions[0] is NULL",
        desc(source=UTIL.encode(), name_expressions=null_expr, num_name_expressions=1),
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

    def stale_buffer(ctx: CaseContext) -> None:
        old = dev.alloc(64)
        old.close()
        new = dev.alloc(64)
        try:
            ctx.expect(
                b.handle_int(old.handle) & 0xFFFFFF == b.handle_int(new.handle) & 0xFFFFFF,
                "the new buffer did not reuse the slot: nothing stale was tested",
            )
            old.memset(1)
        finally:
            new.memset(7)
            ctx.expect(
                (new.copy_to_host(np.empty(64, np.uint8)) == 7).all(),
                "the buffer in the reused slot was damaged",
            )
            new.close()

    add("a closed buffer whose slot a new one reuses", IH, "it was released", stale_buffer)
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

    add(
        "a kernel closed, then its attribute read",
        IH,
        "function is not a live cuabi_function",
        closed_then(kernel_of_new_module, lambda k: k.max_threads_per_block),
    )
    add(
        "a stream closed, then synchronized",
        IH,
        "stream is not a live cuabi_stream",
        closed_then(dev.create_stream, lambda s: s.synchronize()),
    )
    add(
        "an event closed, then recorded",
        IH,
        "event is not a live cuabi_event",
        closed_then(dev.create_event, lambda e: e.record()),
    )
    add(
        "a pinned buffer closed, then read",
        IH,
        "the pinned buffer was closed",
        closed_then(lambda: dev.host_alloc(64), lambda p: p.as_array()),
    )

    def captured_graph() -> cuabi.Graph:
        s = dev.create_stream()
        with s.capture() as cap:
            saxpy(1, 32, f.saxpy_args(), stream=s)
        s.close()
        return cap.graph

    add(
        "a graph closed, then instantiated",
        IH,
        "graph is not a live cuabi_graph",
        closed_then(captured_graph, lambda g: g.instantiate()),
    )
    add(
        "a graph exec closed, then launched",
        IH,
        "exec is not a live cuabi_graph_exec",
        closed_then(lambda: captured_graph().instantiate(), lambda e: e.launch()),
    )
    add(
        "a buffer handle as the stream (low layer)",
        IH,
        "it is a cuabi_buffer",
        lambda ctx: r.check(
            lib.cuabi_buffer_copy_to_host_async(
                A.handle, 0, b.char_buffer(16), 16, r.h("stream", b.handle_int(B.handle))
            )
        ),
    )

    def closed_pinned_dst(ctx: CaseContext) -> None:
        p = dev.host_alloc(64)
        p.close()
        A.copy_to_host(p)

    add("a read into a closed pinned buffer", IH, "the pinned buffer was closed", closed_pinned_dst)
    add(
        "a closed pinned buffer's handle (low layer)",
        IH,
        "buffer is not a live cuabi_host_buffer",
        closed_then(
            lambda: dev.host_alloc(64),
            lambda p: b.get("cuabi_host_buffer_get_size", p.handle, out="size_t"),
        ),
    )
    add(
        "to_device() of an array of Python objects",
        TypeError,
        "holds Python objects",
        lambda ctx: dev.to_device(np.array([object(), object()])),
    )

    def stale(
        make: Callable[[], Any], probe: Callable[[Any], Any], reuse: Optional[Callable] = None
    ) -> Callable[[CaseContext], None]:
        """Closes one object, makes a live one in its slot, then uses the old
        handle: refused, and the live one untouched."""

        def run(ctx: CaseContext) -> None:
            old = make()
            h = old.handle
            old.close()
            new = (reuse or make)()
            try:
                ctx.expect(
                    b.handle_int(h) & 0xFFFFFF == b.handle_int(new.handle) & 0xFFFFFF,
                    "the slot was not reused: nothing stale was tested",
                )
                probe(h)
            finally:
                if reuse is None:
                    try:
                        probe(new.handle)
                    except cuabi.CudaError as exc:
                        ctx.problem(f"the object in the reused slot failed: {describe(exc)}")
                new.close()

        return run

    for kind, make, probe, reuse in [
        (
            "device",
            lambda: cuabi.Device(0, backend=b),
            lambda h: b.get_string("cuabi_device_get_name", h),
            None,
        ),
        (
            "module",
            lambda: dev.compile(SAXPY, name="saxpy.cu"),
            lambda h: b.get("cuabi_module_get_from_cache", h),
            None,
        ),
        (
            "function",
            lambda: f.saxpy_module.get_kernel("saxpy"),
            lambda h: b.get("cuabi_function_get_param_count", h, out="size_t"),
            None,
        ),
        (
            "host_buffer",
            lambda: dev.host_alloc(64),
            lambda h: b.get("cuabi_host_buffer_get_size", h, out="size_t"),
            None,
        ),
        ("stream", dev.create_stream, lambda h: b.call("cuabi_stream_synchronize", h), None),
        ("event", dev.create_event, lambda h: b.call("cuabi_event_query", h), None),
        (
            "graph",
            captured_graph,
            lambda h: b.get("cuabi_graph_get_node_count", h, out="size_t"),
            dev.create_event,
        ),
        (
            "graph_exec",
            lambda: captured_graph().instantiate(),
            lambda h: b.call("cuabi_graph_exec_launch", h, b.NULL),
            dev.create_event,
        ),
    ]:
        add(
            f"a stale cuabi_{kind} (its slot reused by a live object)",
            IH,
            f"is not a live cuabi_{kind}: it was released",
            stale(make, probe, reuse),
        )

    def released_device_handle(ctx: CaseContext) -> None:
        d = cuabi.Device(0, backend=b)
        d.close()
        b.get_string("cuabi_device_get_name", d.handle)

    add(
        "a released device handle (low layer)",
        IH,
        "device is not a live cuabi_device",
        released_device_handle,
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
    assert result.cases > 100


@pytest.mark.gpu
def test_bad_input_corpus_gpu(default_backend: Backend, summary_line) -> None:
    """The cases that need a device (skipped, with the reason, without one)."""
    b = default_backend
    with no_collection():
        fixture = GpuFixture(b)
        try:
            cases = gpu_cases(b, fixture)
            result = run_corpus(b, cases)
            # The context must have survived every case.
            survived = saxpy_problem(fixture.dev, fixture.saxpy, 1 << 16, 11.0, fixture.stream)
        finally:
            fixture.close()
    report(f"Python {b.name}, GPU", result, summary_line)
    assert not survived, f"after the corpus: {survived}"
