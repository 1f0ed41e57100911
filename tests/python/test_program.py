"""NVRTC through the Program API: compile, logs, images, name expressions, errors,
and release from other threads. Needs NVRTC, no GPU."""

from __future__ import annotations

import gc
import struct
import threading

import pytest

import cuabi
from kernels import SAXPY, TEST_STRUCT, WRITE_SCALAR, WRITE_SCALAR_EXPRESSIONS

ARCH_CUBIN = "--gpu-architecture=sm_75"
ARCH_PTX = "--gpu-architecture=compute_75"


def test_saxpy_compiles_to_cubin_and_ptx(use_each_backend):
    with cuabi.Program(SAXPY, "saxpy.cu") as prog:
        assert prog.log == ""  # before compiling
        prog.compile(["--fmad=false", ARCH_CUBIN])
        cubin = prog.cubin
        assert cubin[:4] == b"\x7fELF"
    with cuabi.Program(SAXPY, "saxpy.cu").compile([ARCH_PTX]) as prog:
        ptx = prog.ptx
        assert ".entry saxpy" in ptx and ".target sm_75" in ptx
        with pytest.raises(cuabi.NotFoundError):
            prog.cubin  # a compute_XY target makes no CUBIN


def test_compile_error_carries_the_log(use_each_backend):
    prog = cuabi.Program("__global__ void broken( { }", name="broken.cu")
    with pytest.raises(cuabi.CompileError) as info:
        prog.compile([ARCH_PTX])
    err = info.value
    assert err.status == cuabi.capi.CUABI_ERROR_COMPILE
    assert err.name == "CUABI_ERROR_COMPILE"
    assert "broken.cu(1): error" in err.log
    assert err.log.strip() in str(err) and str(err).count(err.log.strip()) == 1
    assert "error" in prog.log  # the program keeps the log too
    assert isinstance(err, cuabi.CudaError)


def test_warnings_land_in_the_log(use_each_backend):
    src = 'extern "C" __global__ void w(int* p) { int unused = 3; *p = 1; }'
    with cuabi.Program(src, "warn.cu").compile([ARCH_PTX]) as prog:
        assert "warn.cu(1): warning" in prog.log and '"unused"' in prog.log


def test_invalid_option_is_reported(use_each_backend):
    with pytest.raises(cuabi.CompileError) as info:
        cuabi.Program(SAXPY).compile(["--no-such-option"])
    assert "no-such-option" in str(info.value) or "option" in str(info.value).lower()


def test_headers_are_given_by_name(use_each_backend):
    src = '#include "params.h"\nextern "C" __global__ void k(float* p) { *p = SCALE; }'
    prog = cuabi.Program(src, headers={"params.h": "#define SCALE 2.5f\n"})
    prog.compile([ARCH_PTX])
    bits = struct.unpack("<I", struct.pack("<f", 2.5))[0]
    assert str(bits) in prog.ptx  # the header's constant made it in
    with pytest.raises(cuabi.CompileError, match="params.h"):
        cuabi.Program(src).compile([ARCH_PTX])
    pairs = cuabi.Program(src, headers=[("params.h", b"#define SCALE 1.0f\n")])
    pairs.compile([ARCH_PTX])


def test_name_expressions_give_lowered_names(use_each_backend):
    prog = cuabi.Program(
        WRITE_SCALAR, "write_scalar.cu", name_expressions=WRITE_SCALAR_EXPRESSIONS
    )
    prog.compile([ARCH_CUBIN, "-std=c++17"])
    names = prog.lowered_names
    assert list(names) == WRITE_SCALAR_EXPRESSIONS
    assert all(n.startswith("_Z12write_scalarI") for n in names.values())
    assert len(set(names.values())) == len(names)  # one instantiation each
    assert names["write_scalar<float>"] == "_Z12write_scalarIfEvT_PS0_"
    assert names["write_scalar<int>"] == "_Z12write_scalarIiEvT_PS0_"


def test_the_overviews_test_struct_kernel_compiles(use_each_backend):
    prog = cuabi.Program(TEST_STRUCT, "teststruct.cu").compile([ARCH_PTX])
    assert ".entry testkernel" in prog.ptx


def test_context_manager_and_close(use_each_backend):
    with cuabi.Program(SAXPY) as prog:
        assert not prog.closed
    assert prog.closed
    with pytest.raises(cuabi.InvalidHandleError):
        prog.ptx


def _is_released(backend, handle) -> bool:
    size = backend.out("size_t")
    status = backend.lib.cuabi_program_get_log(handle, backend.NULL, backend.ref(size))
    return status == cuabi.capi.CUABI_ERROR_INVALID_HANDLE


def test_objects_collected_on_another_thread_release_their_handles(use_each_backend):
    b = use_each_backend
    programs = [cuabi.Program(SAXPY) for _ in range(50)]
    handles = [p.handle for p in programs]
    assert not any(_is_released(b, h) for h in handles)
    box = [programs]
    del programs

    def drop():
        box.clear()  # the last references go on this thread
        gc.collect()

    t = threading.Thread(target=drop)
    t.start()
    t.join()
    assert all(_is_released(b, h) for h in handles)


def test_objects_in_a_cycle_are_released_by_gc(use_each_backend):
    b = use_each_backend
    prog = cuabi.Program(SAXPY)
    handle = prog.handle
    prog.self_ref = prog  # a cycle: only the collector can free it
    del prog
    gc.collect()
    assert _is_released(b, handle)


def test_close_races_release_once(use_each_backend):
    b = use_each_backend
    for _ in range(20):
        prog = cuabi.Program(SAXPY)
        start = threading.Barrier(8)

        def closer():
            start.wait()
            prog.close()

        threads = [threading.Thread(target=closer) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert prog.closed and _is_released(b, prog.handle)


def test_concurrent_compiles(use_each_backend):
    errors = []
    lowered = []

    def work(i: int) -> None:
        try:
            src = f"template <int N> __global__ void k{i}(int* p) {{ *p = N; }}"
            expr = f"k{i}<{i}>"
            with cuabi.Program(src, name_expressions=[expr]) as prog:
                prog.compile([ARCH_PTX])
                lowered.append(prog.lowered_name(expr))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(lowered)) == 8


def test_nvrtc_information():
    major, minor = cuabi.nvrtc_version()
    assert major >= 11 and minor >= 0
    assert "nvrtc" in cuabi.nvrtc_path()
