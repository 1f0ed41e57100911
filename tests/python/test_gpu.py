"""On a CUDA device: SAXPY through both backends and both layers, every NumPy
scalar type through a templated kernel, structs by value, memory, streams,
events, graphs, the module cache, and release from other threads. Skipped,
with the reason, where there is no device."""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading
from typing import Dict

import numpy as np
import pytest

import cuabi
from cuabi import capi
from kernels import (
    ADD_ONE,
    GLOBALS,
    SAXPY,
    SCALAR_TYPES,
    TEST_STRUCT,
    WRITE_SCALAR,
    WRITE_SCALAR_EXPRESSIONS,
    write_scalar_expression,
)

pytestmark = pytest.mark.gpu

NUM_THREADS = 512
NUM_BLOCKS = 32768


# --------------------------------------------------------------------------
# SAXPY
# --------------------------------------------------------------------------


def test_saxpy_on_the_objects(device):
    """The overview's SAXPY on the high layer, through each backend."""
    n = NUM_THREADS * NUM_BLOCKS
    rng = np.random.default_rng(1)
    hX = rng.random(n, dtype=np.float32)
    hY = rng.random(n, dtype=np.float32)
    a = np.float32(2.0)
    mod = device.compile(SAXPY, options=["--fmad=false"], name="saxpy.cu")
    saxpy = mod.get_kernel("saxpy")
    assert saxpy.name == "saxpy"
    assert saxpy.param_count == 5
    assert saxpy.params == [(0, 4), (8, 8), (16, 8), (24, 8), (32, 8)]
    assert saxpy.args_size == 40
    with device.create_stream() as stream:
        dX = device.to_device(hX, stream)
        dY = device.to_device(hY, stream)
        dOut = device.zeros(n, np.float32)
        start = stream.record()
        saxpy(NUM_BLOCKS, NUM_THREADS, (a, dX, dY, dOut, np.uint64(n)), stream=stream)
        stop = stream.record()
        hOut = dOut.copy_to_host(stream=stream)
        stream.synchronize()
    assert np.allclose(hOut, a * hX + hY)
    assert isinstance(stop - start, float) and stop - start >= 0


def test_pycuda_tutorials_doublify_by_its_plain_name(device):
    """The PyCUDA tutorial's kernel, no extern "C" and no name expression:
    found by its C++ name; an overloaded name is refused naming both."""
    mod = device.compile(
        "__global__ void doublify(float *a)\n"
        "{\n"
        "  int idx = threadIdx.x + threadIdx.y*4;\n"
        "  a[idx] *= 2;\n"
        "}\n"
        "template <typename T> __global__ void fill(T* a, T v) { a[threadIdx.x] = v; }\n"
        "template __global__ void fill<float>(float*, float);\n"
        "template __global__ void fill<int>(int*, int);\n"
    )
    doublify = mod.get_kernel("doublify")
    a = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    d = device.to_device(a)
    doublify(1, (4, 4, 1), (d,))
    assert np.array_equal(d.copy_to_host(), a * 2)
    with pytest.raises(cuabi.InvalidArgumentError, match="matches 2 kernels") as info:
        mod.get_kernel("fill")
    assert "fill<float>(float*, float)" in str(info.value)
    assert "fill<int>(int*, int)" in str(info.value)


def test_overview_uint32_n_is_refused_and_nothing_runs(device):
    n = 1024
    saxpy = device.compile(SAXPY).get_kernel("saxpy")
    dX = device.to_device(np.ones(n, np.float32))
    dY = device.to_device(np.ones(n, np.float32))
    dOut = device.zeros(n, np.float32)
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        saxpy(
            n // 256, 256, (np.float32(2), dX, dY, dOut, np.array(n, dtype=np.uint32))
        )
    assert "kernel 'saxpy' parameter 4 is 8 bytes" in info.value.message
    assert "4 bytes" in info.value.message
    device.synchronize()
    assert not dOut.to_numpy().any()  # never ran
    # a Python int is sized to the parameter
    saxpy(n // 256, 256, (2.0, dX, dY, dOut, n))
    assert np.all(dOut.to_numpy() == 3.0)


def _low_layer_saxpy(backend, device, n: int, n_dtype) -> np.ndarray:
    """The overview's NumPy way on the low layer: arrays of argument pointers
    handed to cuabi_function_launch / cuabi_function_launch_sized. Returns hOut."""
    lib = backend.lib
    mod = device.compile(SAXPY)
    kernel = mod.get_kernel("saxpy")
    a = np.array([2.0], dtype=np.float32)
    nn = np.array(n, dtype=n_dtype)
    hX = np.arange(n, dtype=np.float32)
    hY = np.ones(n, dtype=np.float32)
    hOut = np.zeros(n, dtype=np.float32)
    bufs = [device.to_device(hX), device.to_device(hY), device.alloc(hOut.nbytes)]
    dX, dY, dOut = (np.array([b.ptr], dtype=np.uint64) for b in bufs)
    args = [a, dX, dY, dOut, nn]
    params = np.array([arg.ctypes.data for arg in args], dtype=np.uint64)
    sizes = [arg.itemsize for arg in args]
    if backend.name == "ctypes":
        config = capi.cuabi_launch_config()
        cfg = ctypes.byref(config)
        backend.check(lib.cuabi_launch_config_init(cfg, ctypes.sizeof(config)))
        config.grid_x, config.block_x = (n + 255) // 256, 256
        size_arr = (ctypes.c_size_t * 5)(*sizes)
        params_arg = params.ctypes.data
    else:
        ffi = backend.ffi
        cfg = ffi.new("cuabi_launch_config*")
        backend.check(lib.cuabi_launch_config_init(cfg, ffi.sizeof("cuabi_launch_config")))
        cfg.grid_x, cfg.block_x = (n + 255) // 256, 256
        size_arr = ffi.new("size_t[]", sizes)
        params_arg = ffi.cast("void * const *", params.ctypes.data)
    status = lib.cuabi_function_launch_sized(
        kernel.handle, cfg, backend.NULL, params_arg, size_arr, 5
    )
    backend.check(status)
    if n_dtype == np.uint64:  # the unchecked call, exactly as cuLaunchKernel takes it
        backend.check(lib.cuabi_function_launch(kernel.handle, cfg, backend.NULL, params_arg, 5))
    bufs[2].copy_to_host(hOut)
    return hOut


def test_saxpy_on_the_low_layer_numpy_way(backend, device):
    n = 4096
    hOut = _low_layer_saxpy(backend, device, n, np.uint64)
    assert np.array_equal(hOut, 2 * np.arange(n, dtype=np.float32) + 1)


def test_core_refuses_the_overviews_uint32_n(backend, device):
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        _low_layer_saxpy(backend, device, 4096, np.uint32)
    assert (
        "parameter 4 is 8 bytes, but the argument given is 4 bytes"
        in info.value.message
    )


# --------------------------------------------------------------------------
# Every NumPy scalar type, by name expression
# --------------------------------------------------------------------------

_write_scalar_modules: Dict[str, "cuabi.Module"] = {}


def _write_scalar(device, np_type):
    key = device.backend.name
    if key not in _write_scalar_modules:
        _write_scalar_modules[key] = device.compile(
            WRITE_SCALAR,
            options=["-std=c++17"],
            name_expressions=WRITE_SCALAR_EXPRESSIONS,
            name="write_scalar.cu",
        )
    mod = _write_scalar_modules[key]
    expr = write_scalar_expression(np_type)
    assert mod.lowered_name(expr).startswith("_Z12write_scalarI")
    return mod.get_kernel(expr)


SAMPLES = {
    np.bool_: [np.True_, np.False_],
    np.int8: [np.int8(-128), np.int8(127)],
    np.int16: [np.int16(-32768), np.int16(12345)],
    np.int32: [np.int32(-(2**31)), np.int32(2**31 - 1)],
    np.int64: [np.int64(-(2**63)), np.int64(2**63 - 1)],
    np.uint8: [np.uint8(255)],
    np.uint16: [np.uint16(65535)],
    np.uint32: [np.uint32(2**32 - 1)],
    np.uint64: [np.uint64(2**64 - 1)],
    np.float16: [np.float16(-1.5), np.float16(65504)],
    np.float32: [np.float32(3.25), np.float32(-1e-30)],
    np.float64: [np.float64(np.pi), np.float64(-2.5e300)],
    np.complex64: [np.complex64(1.5 - 2.25j)],
    np.complex128: [np.complex128(-1e200 + 3j)],
}

# Python values that the packing rules turn into the same C type
NATIVE = {
    np.bool_: True,
    np.int8: -5,
    np.int16: -300,
    np.int32: -70000,
    np.int64: -(2**40),
    np.uint8: 200,
    np.uint16: 60000,
    np.uint32: 4000000000,
    np.uint64: 2**63 + 5,
    np.float16: 0.5,
    np.float32: 0.1,
    np.float64: 0.1,
    np.complex64: 1 + 2j,
    np.complex128: 0.1 - 0.2j,
}


@pytest.mark.parametrize("np_type", list(SCALAR_TYPES), ids=lambda t: np.dtype(t).name)
def test_every_numpy_scalar_round_trips(device, np_type):
    kernel = _write_scalar(device, np_type)
    dtype = np.dtype(np_type)
    assert kernel.params[0][1] == dtype.itemsize  # the template's parameter size
    out = device.alloc(dtype.itemsize)
    for value in SAMPLES[np_type]:
        out.memset(0xA5)
        kernel(1, 1, (value, out))
        back = out.copy_to_host(np.empty(1, dtype))[0]
        assert back.tobytes() == value.tobytes(), (value, back)
    # a Python value becomes the parameter's C type
    native = NATIVE[np_type]
    out.memset(0)
    kernel(1, 1, (native, out))
    back = out.copy_to_host(np.empty(1, dtype))[0]
    assert back == dtype.type(native)
    # and a value of another size is refused, naming the parameter
    other = np.int8(1) if dtype.itemsize != 1 else np.int16(1)
    with pytest.raises(cuabi.InvalidArgumentError, match="parameter 0"):
        kernel(1, 1, (other, out))


# --------------------------------------------------------------------------
# Structs by value: the overview's testkernel
# --------------------------------------------------------------------------


class CTestStruct(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int)]


def _read_test_outputs(pInt, pFloat, pStruct):
    return (
        int(pInt.copy_to_host(np.empty(1, np.int32))[0]),
        float(pFloat.copy_to_host(np.empty(1, np.float32))[0]),
        int(pStruct.copy_to_host(np.empty(1, np.int32))[0]),
    )


def test_struct_by_value_every_way(device):
    kernel = device.compile(TEST_STRUCT).get_kernel("testkernel")
    assert [size for _, size in kernel.params] == [4, 8, 4, 8, 4, 8]
    test_struct = np.dtype([("value", np.int32)], align=True)
    pInt, pFloat, pStruct = (
        device.alloc(4),
        device.alloc(4),
        device.alloc(test_struct.itemsize),
    )

    def reset():
        for b in (pInt, pFloat, pStruct):
            b.memset(0)

    # The NumPy way: the overview's kernelValues, passed as they are
    reset()
    kernel_values = (
        np.array(1, dtype=np.uint32),
        np.array([pInt.ptr], dtype=np.intp),
        np.array(123.456, dtype=np.float32),
        np.array([pFloat.ptr], dtype=np.intp),
        np.array([5], test_struct),
        np.array([pStruct.ptr], dtype=np.intp),
    )
    kernel(1, 1, kernel_values)
    assert _read_test_outputs(pInt, pFloat, pStruct) == (
        1,
        pytest.approx(123.456, 1e-6),
        5,
    )

    # The ctypes way: values and types
    reset()
    values = (2, pInt.ptr, 23.5, pFloat.ptr, CTestStruct(6), pStruct.ptr)
    types = (
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_float,
        ctypes.c_void_p,
        None,
        ctypes.c_void_p,
    )
    kernel.launch(1, 1, values, types=types)
    assert _read_test_outputs(pInt, pFloat, pStruct) == (2, 23.5, 6)

    # Pythonic: numbers, buffers, a structured scalar
    reset()
    kernel(1, 1, (3, pInt, 0.25, pFloat, np.array([(7,)], test_struct)[0], pStruct))
    assert _read_test_outputs(pInt, pFloat, pStruct) == (3, 0.25, 7)

    # The NumPy way on the low layer: kernelParams, an array of pointers
    reset()
    kernel_params = np.array([arg.ctypes.data for arg in kernel_values], dtype=np.intp)
    b = device.backend
    if b.name == "ctypes":
        config = capi.cuabi_launch_config()  # the defaults: one thread
        cfg, params = ctypes.byref(config), kernel_params.ctypes.data
        b.check(b.lib.cuabi_launch_config_init(cfg, ctypes.sizeof(config)))
    else:
        cfg = b.launch_config((1, 1, 1), (1, 1, 1), 0)
        params = b.ffi.cast("void * const *", kernel_params.ctypes.data)
    b.check(b.lib.cuabi_function_launch(kernel.handle, cfg, b.NULL, params, 6))
    assert _read_test_outputs(pInt, pFloat, pStruct) == (
        1,
        pytest.approx(123.456, 1e-6),
        5,
    )

    # The ctypes way on the low layer: (values, types) as a void** array
    if b.name == "ctypes":
        reset()
        p = capi.kernel_params(values, types)
        b.check(
            b.lib.cuabi_function_launch_sized(
                kernel.handle, cfg, None, p.params, p.sizes, p.count
            )
        )
        assert _read_test_outputs(pInt, pFloat, pStruct) == (2, 23.5, 6)

    # a struct of the wrong size is refused
    with pytest.raises(cuabi.InvalidArgumentError, match="parameter 4 is 4 bytes"):
        kernel(1, 1, (3, pInt, 0.25, pFloat, np.zeros(1, "i4,i4")[0], pStruct))


# --------------------------------------------------------------------------
# Launch configuration and argument errors
# --------------------------------------------------------------------------


def test_launch_errors_are_named(device):
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    buf = device.zeros(16, np.int32)
    with pytest.raises(cuabi.InvalidArgumentError):
        add_one(0, 16, (buf, 16))  # a zero grid
    with pytest.raises(cuabi.InvalidArgumentError):
        add_one(1, 4096, (buf, 16))  # more threads than a block may have
    with pytest.raises(cuabi.InvalidArgumentError):
        add_one(1, 16, (buf, 16), shared_mem=1 << 30)
    with pytest.raises(
        cuabi.InvalidArgumentError, match="takes 2 parameters, but 1 was given"
    ):
        add_one(1, 16, (buf,))
    with pytest.raises(TypeError, match="stream must be a cuabi.Stream"):
        add_one(1, 16, (buf, 16), stream=12345)
    buf.close()
    with pytest.raises(cuabi.InvalidHandleError):
        add_one(1, 16, (buf, 16))
    # launch configurations are cached per (grid, block, shared memory)
    other = device.zeros(16, np.int32)
    for _ in range(3):
        add_one((1,), [16], (other, 16))
    assert np.all(other.to_numpy() == 3)


# --------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------


def test_device_buffers(device):
    host = np.arange(256, dtype=np.uint8)
    buf = device.alloc(256)
    assert buf.nbytes == 256 and buf.shape == (256,) and buf.dtype == np.uint8
    assert buf.device_ordinal == 0 and buf.ptr != 0
    buf.copy_from_host(host)
    assert np.array_equal(buf.to_numpy(), host)
    buf.copy_from_host(bytes([9] * 16), offset=100)
    got = buf.copy_to_host(bytearray(32), offset=96)
    assert got == bytearray(
        host[96:100].tobytes() + bytes([9] * 16) + host[116:128].tobytes()
    )
    buf.memset(7, offset=10, nbytes=5)
    assert list(buf.to_numpy()[8:17]) == [8, 9, 7, 7, 7, 7, 7, 15, 16]
    with pytest.raises(cuabi.OutOfRangeError):
        buf.copy_from_host(np.zeros(300, np.uint8))
    with pytest.raises(cuabi.OutOfRangeError):
        buf.copy_to_host(np.zeros(16, np.uint8), offset=250)
    with pytest.raises(ValueError, match="not a byte"):
        buf.memset(256)
    with pytest.raises(ValueError, match="C-contiguous"):
        buf.copy_from_host(np.zeros((16, 16), np.uint8)[:, ::2])
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(16, np.uint8)
        ro.flags.writeable = False
        buf.copy_to_host(ro)
    other = device.alloc(256)
    other.copy_from(buf)
    assert np.array_equal(other.to_numpy(), buf.to_numpy())
    with pytest.raises(cuabi.InvalidArgumentError):
        device.alloc(0)
    typed = device.to_device(np.arange(12, dtype=np.float64).reshape(3, 4))
    assert typed.shape == (3, 4) and typed.dtype == np.float64
    assert np.array_equal(typed.to_numpy(), np.arange(12.0).reshape(3, 4))
    view = typed.as_array(np.int32)
    assert view.shape == (24,) and view.ptr == typed.ptr
    with pytest.raises(ValueError, match="needs 200 bytes"):
        typed.as_array(np.float64, (25,))


def test_pinned_memory(device):
    with device.host_alloc(4096) as pinned:
        arr = pinned.as_array(np.float32)
        assert arr.shape == (1024,) and arr.ctypes.data == pinned.ptr
        arr[:] = np.arange(1024)
        with device.create_stream() as stream:
            buf = device.alloc(4096, np.float32)
            buf.copy_from_host(pinned, stream=stream)
            out = device.pin(np.zeros(1024, np.float32))
            assert out.ptr == out.array.ctypes.data  # pinned in place
            buf.copy_to_host(out.array, stream=stream)
            stream.synchronize()
            assert np.array_equal(out.array, np.arange(1024, dtype=np.float32))
            out.close()
        del arr
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(4)
        ro.flags.writeable = False
        device.pin(ro)


def test_close_waits_for_views_and_exports(device):
    buf = device.alloc(64, np.float32)
    view = buf.as_array(np.float32, (16,))
    buf.close()
    assert not buf.closed  # the view still reads it
    assert view.ptr == buf.ptr
    del view
    gc.collect()
    assert buf.closed
    buf2 = device.alloc(64, np.float32)
    capsule = buf2.__dlpack__()
    buf2.close()
    assert not buf2.closed
    del capsule
    gc.collect()
    assert buf2.closed


# --------------------------------------------------------------------------
# Streams, events, graphs
# --------------------------------------------------------------------------


def test_streams_and_events(device):
    least, greatest = device.stream_priority_range
    assert greatest <= least
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    buf = device.zeros(1024, np.int32)
    with device.create_stream(
        non_blocking=True, priority=greatest
    ) as s1, device.create_stream() as s2:
        assert s1.ptr != 0 and s1.ptr != s2.ptr
        done = device.create_event(timing=False)
        add_one(4, 256, (buf, 1024), stream=s1)
        s1.record(done)
        s2.wait(done)
        add_one(4, 256, (buf, 1024), stream=s2)
        s2.synchronize()
        assert s2.query() and done.query()
        assert np.all(buf.to_numpy() == 2)
        wrapped = device.wrap_stream(s1.ptr)
        assert wrapped.ptr == s1.ptr
        wrapped.close()
        s1.synchronize()  # the wrapped stream was not destroyed
        with pytest.raises(cuabi.CudaError):
            done.elapsed_ms(done)  # timing was disabled
    start, stop = device.create_event(), device.create_event()
    start.record()
    stop.record()
    stop.synchronize()
    assert stop - start >= 0
    blocking = device.create_event(blocking_sync=True).record()
    blocking.synchronize()
    assert blocking.query() is True


def test_graph_capture(device):
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    buf = device.zeros(256, np.int32)
    with device.create_stream() as stream:
        with stream.capture() as cap:
            add_one(1, 256, (buf, 256), stream=stream)
            add_one(1, 256, (buf, 256), stream=stream)
        graph = cap.graph
        assert graph.node_count == 2
        assert not buf.to_numpy().any()  # captured, not run
        with graph.instantiate() as exe:
            exe.launch(stream)
            exe(stream)
            stream.synchronize()
    assert np.all(buf.to_numpy() == 4)
    with pytest.raises(cuabi.CudaError):
        device.create_stream().end_capture()  # not capturing


# --------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------


def test_module_cache(device, tmp_path, monkeypatch):
    monkeypatch.setenv("CUABI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUABI_CACHE", raising=False)
    src = ADD_ONE + f"// {os.getpid()} {id(tmp_path)}\n"
    first = device.compile(src)
    assert not first.from_cache
    second = device.compile(src)
    assert second.from_cache
    assert not device.compile(src, cache=False).from_cache
    buf = device.zeros(4, np.int32)
    second.get_kernel("add_one")(1, 4, (buf, 4))
    assert np.all(buf.to_numpy() == 1)


def test_compile_errors_and_missing_kernels(device):
    with pytest.raises(cuabi.CompileError) as info:
        device.compile("__global__ void broken( {", name="broken.cu")
    assert "broken.cu" in info.value.log
    mod = device.compile(ADD_ONE)
    with pytest.raises(cuabi.NotFoundError):
        mod.get_kernel("no_such_kernel")


def test_program_load_and_ptx_output(device):
    prog = cuabi.Program(ADD_ONE, backend=device.backend)
    major, minor = device.compute_capability
    prog.compile([f"--gpu-architecture=compute_{major}{minor}"])
    mod = prog.load(device)
    buf = device.zeros(8, np.int32)
    mod.get_kernel("add_one")(1, 8, (buf, 8))
    assert np.all(buf.to_numpy() == 1)
    ptx_mod = device.compile(ADD_ONE, output="ptx", cache=False)
    ptx_mod.get_kernel("add_one")(1, 8, (buf, 8))
    assert np.all(buf.to_numpy() == 2)


def test_module_globals(device):
    mod = device.compile(GLOBALS)
    ptr, size = mod.get_global("counter")
    assert size == 4
    view = device.wrap_buffer(ptr, size)
    assert int(view.copy_to_host(np.empty(1, np.int32))[0]) == 7
    mod.get_kernel("bump")(1, 1)
    assert int(view.copy_to_host(np.empty(1, np.int32))[0]) == 8
    with pytest.raises(cuabi.NotFoundError):
        mod.get_global("nope")


def test_device_information(device):
    assert isinstance(device.name, str) and device.name
    major, minor = device.compute_capability
    assert major >= 3 and device.arch == f"sm_{major}{minor}"
    free, total = device.memory_info
    assert 0 < free <= total == device.total_memory
    assert device.context != 0
    assert device.attribute(16) > 0  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    assert cuabi.driver_version() >= 12000
    assert cuabi.driver_path()
    with pytest.raises(cuabi.NoDeviceError):
        cuabi.Device(cuabi.device_count(), backend=device.backend)


# --------------------------------------------------------------------------
# Lifetimes
# --------------------------------------------------------------------------


def test_objects_outlive_what_they_came_from(device):
    dev2 = cuabi.Device(0, backend=device.backend)
    mod = dev2.compile(ADD_ONE)
    kernel = mod.get_kernel("add_one")
    buf = dev2.zeros(32, np.int32)
    stream = dev2.create_stream()
    dev2.close()
    mod.close()  # the kernel keeps its module, the buffer its context
    kernel(1, 32, (buf, 32), stream=stream)
    stream.synchronize()
    assert np.all(buf.to_numpy() == 1)


def _released(b, kind: str, handle) -> bool:
    getters = {
        "buffer": ("cuabi_buffer_get_size", "size_t"),
        "stream": ("cuabi_stream_get_handle", "uint64_t"),
        "event": None,
        "module": ("cuabi_module_get_from_cache", "int32_t"),
        "kernel": ("cuabi_function_get_param_count", "size_t"),
        "pinned": ("cuabi_host_buffer_get_size", "size_t"),
        "graph": ("cuabi_graph_get_node_count", "size_t"),
    }
    if kind == "event":
        status = b.lib.cuabi_event_query(handle)
    else:
        fn, out = getters[kind]
        box = b.out(out)
        status = getattr(b.lib, fn)(handle, b.ref(box))
    return status == capi.CUABI_ERROR_INVALID_HANDLE


def test_objects_freed_by_gc_on_another_thread(device):
    b = device.backend
    objects = []
    for _ in range(10):
        mod = device.compile(ADD_ONE)
        stream = device.create_stream()
        with stream.capture() as cap:
            pass
        objects += [
            ("module", mod),
            ("kernel", mod.get_kernel("add_one")),
            ("buffer", device.alloc(1024)),
            ("stream", stream),
            ("event", device.create_event()),
            ("pinned", device.host_alloc(4096)),
            ("graph", cap.graph),
        ]
    handles = [(kind, obj.handle) for kind, obj in objects]
    assert not any(_released(b, k, h) for k, h in handles)
    box = [objects]
    del objects, mod, stream, cap

    def drop():
        box.clear()
        gc.collect()

    t = threading.Thread(target=drop)
    t.start()
    t.join()
    gc.collect()
    still = [(k, h) for k, h in handles if not _released(b, k, h)]
    assert not still


def _child(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_context_lost_needs_a_new_process(subprocess_env, backend):
    """A sticky fault: every later call on the device, reset included, raises
    ContextLostError saying the process must be restarted; a new process then
    uses the device normally (the recovery the driver documents)."""
    from kernels import CRASH

    code = f"""
    import numpy as np, cuabi
    dev = cuabi.Device(0, backend={backend.name!r})
    crash = dev.compile({CRASH!r}).get_kernel("crash")
    crash(1, 32, (None,))
    try:
        dev.synchronize()
        print("no fault")
    except cuabi.ContextLostError as e:
        print("lost", e.status, e.name, "start a new one" in e.message)
    try:
        dev.alloc(16)
    except cuabi.ContextLostError:
        print("still lost")
    try:
        dev.reset()
        print("reset worked")
    except cuabi.ContextLostError:
        print("reset refused")
    """
    done = _child(code, subprocess_env)
    assert done.returncode == 0, done.stderr
    assert (
        f"lost {capi.CUABI_ERROR_CONTEXT_LOST} CUABI_ERROR_CONTEXT_LOST True"
        in done.stdout
    ), done.stdout
    assert "still lost" in done.stdout
    assert "reset refused" in done.stdout

    fresh = f"""
    import numpy as np, cuabi
    dev = cuabi.Device(0, backend={backend.name!r})
    buf = dev.zeros(4, np.int32)
    add_one = dev.compile({ADD_ONE!r}).get_kernel("add_one")
    add_one(1, 4, (buf, 4))
    print("new process", buf.to_numpy().tolist())
    """
    done = _child(fresh, subprocess_env)
    assert done.returncode == 0, done.stderr
    assert "new process [1, 1, 1, 1]" in done.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_forked_child_gets_forked_error(subprocess_env):
    code = """
    import os, cuabi
    cuabi.Device(0).close()
    pid = os.fork()
    if pid == 0:
        try:
            cuabi.Device(0)
            os._exit(3)
        except cuabi.ForkedError:
            os._exit(0)
        except BaseException:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
    """
    done = _child(code, subprocess_env)
    assert done.returncode == 0, done.stderr
    assert "child 0" in done.stdout
