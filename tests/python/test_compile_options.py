"""Compilation features that need NVRTC and no GPU: typed compile options
and the description fields they fill, LTO-IR, warnings kept in the log of a successful
compile, and compiling in the background while Python goes on (the GIL is
released for the foreign call). On each backend."""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import re
import threading
import time
from typing import Callable, List, Tuple

import pytest

import cuabi
from cuabi._api import CxxStandard
from cuabi._objects import fill_compile_desc
from cuabi._options import desc_fields
from kernels import SAXPY

ARCH = "sm_75"

CALLEE = 'extern "C" __device__ float twice(float x) { return 2.0f * x; }\n'
VALUE = 'extern "C" __global__ void value(int* out) { *out = VALUE; }\n'


def heavy_source(kernels: int = 24) -> str:
    """A source NVRTC takes a few hundred milliseconds over (for sm_XY)."""
    return "".join(
        f'extern "C" __global__ void k{i}(float* p, int n) {{ float s = 0; '
        f"for (int j = 0; j < n; ++j) s += __sinf(p[j] * {i}.5f) * p[j + {i}]; "
        f"p[{i}] = s; }}\n"
        for i in range(kernels)
    )


# --------------------------------------------------------------------------
# Typed options and their strings
# --------------------------------------------------------------------------


def test_every_typed_option_fills_its_desc_field(backend):
    # The binding hands values over: each typed option becomes its field of
    # cuabi_compile_desc, and no NVRTC option string is written here.
    opts = cuabi.CompileOptions(
        arch="sm_90",
        std=17,
        defines={"N": 256, "FLAG": None, "ON": True, "OFF": False, "SCALE": 2.5, "NAME": "x"},
        include_paths=["/opt/inc", pathlib.Path("/srv/more")],
        fast_math=True,
        line_info=True,
        debug=True,
        lto=True,
        relocatable=True,
        extra=["-O3", "--extra-device-vectorization"],
    )
    _, keep = fill_compile_desc(backend, **desc_fields(opts))
    desc, text = keep[0], backend_text(backend)
    assert text(desc.arch) == b"sm_90"
    assert desc.cxx_standard == 17
    defines = [text(desc.defines[i]) for i in range(desc.num_defines)]
    assert defines == [b"N=256", b"FLAG", b"ON=1", b"OFF=0", b"SCALE=2.5", b"NAME=x"]
    assert desc.num_defines == 6
    paths = [text(desc.include_paths[i]) for i in range(desc.num_include_paths)]
    assert paths == [b"/opt/inc", b"/srv/more"] and desc.num_include_paths == 2
    extra = [text(desc.options[i]) for i in range(desc.num_options)]
    assert extra == [b"-O3", b"--extra-device-vectorization"] and desc.num_options == 2
    for name in ("fast_math", "line_info", "device_debug", "lto", "relocatable"):
        assert getattr(desc, name) == 1, name
    empty = fill_compile_desc(backend, **desc_fields(cuabi.CompileOptions()))[1][0]
    assert not empty.arch and empty.cxx_standard == 0
    assert empty.num_defines == empty.num_include_paths == empty.num_options == 0
    assert not any(getattr(empty, n) for n in ("fast_math", "line_info", "device_debug", "lto"))


def backend_text(backend):
    """Reads a ``const char*`` field as bytes, under either backend."""
    ffi = getattr(backend, "ffi", None)
    return (lambda p: ffi.string(p)) if ffi is not None else (lambda p: p)


def test_option_values_in_their_other_forms():
    assert cuabi.CompileOptions(arch=(8, 6)).arch == "sm_86"
    assert cuabi.CompileOptions(arch=90).arch == "sm_90"
    assert cuabi.CompileOptions(arch="compute_80").arch == "compute_80"
    assert cuabi.CompileOptions(std="c++20").std == 20
    assert cuabi.CompileOptions(std="c++03").std == 3
    assert cuabi.CompileOptions(std=CxxStandard.CXX14).std == 14
    # A sequence of names and pairs keeps its order; a single path and a
    # single raw string are one item each, not their characters.
    opts = cuabi.CompileOptions(
        defines=["A", ("B", 2), ("MAX(a,b)", "((a)>(b)?(a):(b))")],
        include_paths="/one/folder",
        extra="-O2",
    )
    assert opts.defines == (("A", None), ("B", "2"), ("MAX(a,b)", "((a)>(b)?(a):(b))"))
    assert opts.include_paths == ("/one/folder",)
    assert opts.extra == ("-O2",)


def test_options_are_immutable_hashable_and_replaceable():
    a = cuabi.CompileOptions(std=17, defines={"N": 4})
    b = cuabi.CompileOptions(std="c++17", defines=[("N", 4)])
    assert a == b and hash(a) == hash(b)  # normalised values compare equal
    with pytest.raises(AttributeError):
        a.std = "c++20"  # type: ignore[misc]
    c = a.replace(fast_math=True)
    assert c.fast_math is True and a.fast_math is False and c.defines == a.defines
    with pytest.raises(TypeError, match="unknown compile option 'fastmath'.*'fast_math'"):
        a.replace(fastmath=True)


IA = cuabi.InvalidArgumentError


@pytest.mark.parametrize(
    "typed, error, text",
    [
        # What Python checks: keywords and the types of values.
        ({"fastmath": True}, TypeError, "unknown compile option 'fastmath' (did you mean 'fast_math'?)"),
        ({"include": ["/x"]}, TypeError, "unknown compile option 'include'"),
        ({"fast_math": "yes"}, TypeError, "fast_math must be True or False, not str"),
        ({"std": 17.0}, TypeError, "std must be an int (17) or a str ('c++17'), not float"),
        ({"std": "gnu++17"}, ValueError, "std 'gnu++17': a standard is written 'c++NN'"),
        ({"arch": (9,)}, ValueError, "arch as a tuple is (major, minor)"),
        ({"arch": 9.0}, TypeError, "arch must be a str"),
        ({"defines": {3: 1}}, TypeError, "a define's name must be a str, not int"),
        ({"defines": {"N": [1]}}, TypeError, "defines['N'] must be a str, an int"),
        ({"defines": "N=1"}, TypeError, "defines must be a mapping"),
        ({"defines": [("A", 1, 2)]}, TypeError, "each define is a name or a (name, value) pair"),
        ({"include_paths": 5}, TypeError, "include_paths must be a path or a sequence of paths"),
        ({"include_paths": [None]}, TypeError, "include_paths: a path must be a str"),
        ({"extra": 3}, TypeError, "extra must be a str or a sequence of option strings"),
        # What the core refuses, in its words, the same in every language.
        ({"defines": {"A B": 1}}, IA, 'desc->defines[0] "A B=1" is no macro definition: '
         "a macro name holds no whitespace"),
        ({"defines": ["OK", "2X"]}, IA, 'desc->defines[1] "2X" is no macro definition: '
         "a macro name cannot start with a digit"),
        ({"defines": {"": 1}}, IA, "desc->defines[0] \"=1\" is no macro definition: "
         "the macro name before '=' is empty"),
        ({"debug": 2}, IA, "desc->device_debug is 2; expected 0 or 1"),
        ({"std": 18}, IA, "desc->cxx_standard is 18, no C++ standard this library knows"),
        ({"std": "c++18"}, IA, "desc->cxx_standard is 18"),
        ({"arch": "sm9"}, IA, 'desc->arch "sm9" is no GPU architecture'),
        ({"arch": "sm_90", "extra": ["-arch=sm_80"]}, IA, "both name an architecture"),
    ],
)
def test_wrong_typed_options_are_refused_naming_them(use_each_backend, typed, error, text):
    prog = cuabi.Program(SAXPY)
    with pytest.raises(error) as info:
        prog.compile(**typed)
    assert type(info.value) is error
    assert text in str(info.value)
    assert prog.log == ""  # nothing was compiled
    prog.compile(arch=ARCH)  # the program is still usable


def test_function_like_macros_are_the_cores_to_accept(use_each_backend):
    src = (
        "static_assert(SQUARE(3) == 9, \"\");\n"
        "static_assert(FIRST(4, 5, 6) == 4, \"\");\n" + VALUE
    )
    defines = {"SQUARE(x)": "((x)*(x))", "FIRST(a,...)": "(a)", "VALUE": 1}
    prog = cuabi.Program(src).compile(arch="compute_75", defines=defines)
    assert _ptx_constant(prog) == [1]
    # A key holding '=' is a whole definition, as the core reads it.
    prog = cuabi.Program(VALUE).compile(arch="compute_75", defines=["VALUE=9"])
    assert _ptx_constant(prog) == [9]


def test_a_nul_in_a_typed_option_is_refused_by_the_binding(use_each_backend):
    # A C string ends at its NUL: the binding cannot hand this value over.
    with pytest.raises(cuabi.InvalidArgumentError, match=r"defines\['VALUE'\] contains a NUL"):
        cuabi.Program(VALUE).compile(defines={"VALUE": "1\x002"})


# --------------------------------------------------------------------------
# What the typed options do to a compile
# --------------------------------------------------------------------------


def _ptx_constant(prog: cuabi.Program) -> List[int]:
    """The immediates stored by ``value``'s ``*out = VALUE``."""
    return [int(v) for v in re.findall(r"mov\.u32\s+%r\d+,\s*(\d+);", prog.ptx)]


def test_typed_and_raw_options_compile_alike(use_each_backend):
    typed = cuabi.Program(VALUE).compile(arch="compute_75", defines={"VALUE": 41}, std=17)
    raw = cuabi.Program(VALUE).compile(["--gpu-architecture=compute_75", "-DVALUE=41", "-std=c++17"])
    assert typed.ptx == raw.ptx
    assert _ptx_constant(typed) == [41]
    other = cuabi.Program(VALUE).compile(arch="compute_75", defines={"VALUE": 7})
    assert _ptx_constant(other) == [7]
    # Typed options beside raw strings, and a CompileOptions as the options.
    mixed = cuabi.Program(VALUE).compile(["-std=c++17"], arch="compute_75", defines={"VALUE": 41})
    assert mixed.ptx == typed.ptx
    base = cuabi.CompileOptions(arch="compute_75", std=17)
    merged = cuabi.Program(VALUE).compile(base, defines={"VALUE": 41})
    assert merged.ptx == typed.ptx


def test_the_architecture_decides_cubin_or_ptx(use_each_backend):
    cubin = cuabi.Program(SAXPY).compile(arch=(7, 5))
    assert cubin.cubin[:4] == b"\x7fELF"
    ptx = cuabi.Program(SAXPY).compile(arch="compute_75")
    assert ".target sm_75" in ptx.ptx
    with pytest.raises(cuabi.NotFoundError):
        ptx.cubin


def test_an_unknown_standard_is_refused_by_the_core(use_each_backend):
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        cuabi.Program(SAXPY).compile(std=99)
    assert "desc->cxx_standard is 99" in info.value.message
    prog = cuabi.Program(
        "#if __cplusplus != 201402L\n#error not C++14\n#endif\n" + VALUE
    ).compile(arch="compute_75", std=14, defines={"VALUE": 1})
    assert _ptx_constant(prog) == [1]


def test_include_paths_are_searched(use_each_backend, tmp_path):
    (tmp_path / "params.h").write_text("#define VALUE 123\n")
    src = '#include "params.h"\n' + VALUE
    prog = cuabi.Program(src).compile(arch="compute_75", include_paths=[tmp_path])
    assert _ptx_constant(prog) == [123]
    with pytest.raises(cuabi.CompileError, match="params.h"):
        cuabi.Program(src).compile(arch="compute_75")


def test_line_info_and_debug_reach_nvrtc(use_each_backend):
    plain = cuabi.Program(SAXPY, "saxpy.cu").compile(arch="compute_75").ptx
    lines = cuabi.Program(SAXPY, "saxpy.cu").compile(arch="compute_75", line_info=True).ptx
    debug = cuabi.Program(SAXPY, "saxpy.cu").compile(arch="compute_75", debug=True).ptx
    assert ".loc" not in plain and ".loc" in lines
    assert ".section\t.debug_info" in debug or ".section .debug_info" in debug


def test_fast_math_reaches_nvrtc(use_each_backend):
    src = 'extern "C" __global__ void s(float* x) { *x = sinf(*x); }\n'
    precise = cuabi.Program(src).compile(arch="compute_75").ptx
    fast = cuabi.Program(src).compile(arch="compute_75", fast_math=True).ptx
    assert "sin.approx" in fast and "sin.approx" not in precise


# --------------------------------------------------------------------------
# LTO-IR and relocatable code
# --------------------------------------------------------------------------


def test_lto_gives_lto_ir_and_a_plain_compile_none(use_each_backend):
    lto = cuabi.Program(CALLEE).compile(arch=ARCH, lto=True, relocatable=True)
    ir = lto.lto_ir
    assert isinstance(ir, bytes) and len(ir) > 16
    plain = cuabi.Program(CALLEE).compile(arch=ARCH, relocatable=True)
    with pytest.raises(cuabi.NotFoundError) as info:
        plain.lto_ir
    assert '"-dlto"' in info.value.message
    assert plain.cubin[:4] == b"\x7fELF"  # relocatable device code, for a link
    with pytest.raises(cuabi.NotFoundError):
        cuabi.Program(CALLEE).lto_ir  # not compiled yet


def test_relocatable_code_keeps_an_external_device_function(use_each_backend):
    # Without -rdc an unused __device__ function is dropped; with it, it is
    # kept for other programs to call through a link.
    whole = cuabi.Program(CALLEE).compile(arch="compute_75").ptx
    rdc = cuabi.Program(CALLEE).compile(arch="compute_75", relocatable=True).ptx
    assert ".func" not in whole or "twice" not in whole
    assert ".visible .func" in rdc and "twice" in rdc


# --------------------------------------------------------------------------
# Warnings of a successful compile
# --------------------------------------------------------------------------


def test_a_warning_stays_in_the_log_of_a_successful_compile(use_each_backend):
    src = '#warning "a warning worth keeping"\nextern "C" __global__ void k() {}\n'
    prog = cuabi.Program(src, "warn.cu").compile(arch=ARCH)
    assert prog.cubin[:4] == b"\x7fELF"  # it compiled
    assert "a warning worth keeping" in prog.log
    assert "warn.cu" in prog.log


# --------------------------------------------------------------------------
# In the background
# --------------------------------------------------------------------------


def _run_beside(start: Callable[[], "concurrent.futures.Future[object]"]) -> Tuple[int, float, float]:
    """Starts the future and spins a Python loop on this thread until it is
    done: (iterations, seconds until done, longest pause between two
    iterations). With the GIL held by the foreign call, the loop would stop
    for as long as the call runs."""
    t0 = time.perf_counter()
    future = start()
    stamps = [t0]
    count = 0
    while not future.done():
        count += 1
        stamps.append(time.perf_counter())
    future.result()
    stamps.append(time.perf_counter())
    longest = max(b - a for a, b in zip(stamps, stamps[1:]))
    return count, stamps[-1] - t0, longest


def test_compile_async_lets_python_run_meanwhile(use_each_backend):
    # A source long enough to tell on this machine: grown until one compile
    # takes more than 0.1 s.
    for kernels in (160, 640, 2560):
        prog = cuabi.Program(heavy_source(kernels), "heavy.cu")
        count, took, longest = _run_beside(lambda: prog.compile_async(arch=ARCH))
        if took > 0.1:
            break
    assert took > 0.05, f"the compile took {took:.3f} s, too short to tell"
    assert count > 1000, f"the main thread ran {count} iterations in {took:.3f} s"
    assert longest < 0.5 * took, (
        f"the main thread stopped for {longest:.3f} s of the {took:.3f} s compile: "
        "the GIL was held"
    )
    assert prog.cubin[:4] == b"\x7fELF"


def test_compile_async_returns_the_program_and_checks_options_now(use_each_backend):
    prog = cuabi.Program(VALUE)
    future = prog.compile_async(arch="compute_75", defines={"VALUE": 5})
    assert isinstance(future, concurrent.futures.Future)
    assert future.result(timeout=60) is prog
    assert _ptx_constant(prog) == [5]
    with pytest.raises(TypeError, match="unknown compile option 'defnes'"):
        cuabi.Program(VALUE).compile_async(defnes={"VALUE": 5})  # raised here, not later
    # What the core refuses comes from the future.
    refused = cuabi.Program(VALUE).compile_async(defines={"1N": 5})
    with pytest.raises(cuabi.InvalidArgumentError, match=r"desc->defines\[0\]"):
        refused.result(timeout=60)


def test_a_failed_background_compile_raises_from_the_future(use_each_backend):
    future = cuabi.Program("__global__ void broken( { }", "broken.cu").compile_async(
        arch="compute_75"
    )
    with pytest.raises(cuabi.CompileError) as info:
        future.result(timeout=60)
    assert "broken.cu(1): error" in info.value.log


def test_many_background_compiles_share_the_executor(use_each_backend):
    progs = [cuabi.Program(VALUE) for _ in range(8)]
    futures = [p.compile_async(arch="compute_75", defines={"VALUE": i}) for i, p in enumerate(progs)]
    done = [f.result(timeout=120) for f in futures]
    assert [_ptx_constant(p) for p in done] == [[i] for i in range(8)]
    names = set()
    progs2 = [cuabi.Program(VALUE) for _ in range(2)]

    def compile_and_name(p: cuabi.Program) -> str:
        p.compile(arch="compute_75", defines={"VALUE": 1})
        return threading.current_thread().name

    from cuabi import _background

    for p in progs2:
        names.add(_background.submit(compile_and_name, p).result(timeout=60))
    assert all(n.startswith("cuabi-compile") for n in names)


def test_compile_async_on_an_executor_of_ones_own(use_each_backend):
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mine") as pool:
        prog = cuabi.Program(VALUE)
        seen = []
        future = prog.compile_async(arch="compute_75", defines={"VALUE": 3}, executor=pool)
        future.add_done_callback(lambda f: seen.append(threading.current_thread().name))
        assert future.result(timeout=60) is prog
    assert _ptx_constant(prog) == [3]
    assert seen and seen[0].startswith("mine")
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor"):
        cuabi.Program(VALUE).compile_async(executor=os)


def test_a_forked_child_gets_a_fresh_executor(use_each_backend):
    if not hasattr(os, "fork"):
        pytest.skip("no fork() here")
    cuabi.Program(VALUE).compile_async(arch="compute_75", defines={"VALUE": 1}).result(60)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker threads are gone
        try:
            prog = cuabi.Program(VALUE)
            prog.compile_async(arch="compute_75", defines={"VALUE": 9}).result(60)
            os.write(write, b"ok" if _ptx_constant(prog) == [9] else b"wrong")
        except BaseException as exc:  # reported to the parent
            os.write(write, repr(exc).encode()[:200])
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as f:
        said = f.read()
    assert said == b"ok", said
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_four_threads_compile_at_the_same_time(use_each_backend):
    """Compiles from four threads overlap in time (the GIL is released for
    each): every compile starts before the first one ends. The wall times
    are measured by bench/python/bench_compile_threads.py, not here."""
    import threading

    spans: List[Tuple[float, float]] = []
    lock = threading.Lock()

    def one(tag: int) -> None:
        prog = cuabi.Program(heavy_source(40).replace("void k", f"void t{tag}_k"), f"t{tag}.cu")
        start = time.perf_counter()
        prog.compile(arch=ARCH)
        end = time.perf_counter()
        assert prog.cubin
        with lock:
            spans.append((start, end))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(spans) == 4
    first_end = min(end for _, end in spans)
    assert all(start < first_end for start, _ in spans), f"the compiles ran one at a time: {spans}"
