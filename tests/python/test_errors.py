"""Statuses map to exceptions; bad handles and bad arguments raise the right one."""

from __future__ import annotations

import ctypes
import pickle

import pytest

import cuabi
from cuabi import capi, errors
from cuabi._base import dim3

SOURCE = 'extern "C" __global__ void f(int* p) { *p = 1; }'


def test_every_status_has_its_exception_class(backend):
    lib = backend.lib
    seen = set()
    for status in range(1, capi.CUABI_STATUS_COUNT):
        cls = errors.error_class(status)
        assert cls is not cuabi.CudaError, status
        assert cls.status == status
        assert issubclass(cls, cuabi.CudaError)
        name = backend.string(lib.cuabi_status_get_name(status))
        assert errors.status_name(status) == name
        seen.add(cls)
    assert len(seen) == capi.CUABI_STATUS_COUNT - 1
    assert errors.error_class(capi.CUABI_STATUS_COUNT) is cuabi.CudaError
    assert (
        backend.string(lib.cuabi_status_get_name(capi.CUABI_STATUS_COUNT))
        == "CUABI_ERROR_UNKNOWN"
    )


def test_named_exceptions_exist():
    assert cuabi.InvalidArgumentError.status == capi.CUABI_ERROR_INVALID_ARGUMENT
    assert cuabi.InvalidHandleError.status == capi.CUABI_ERROR_INVALID_HANDLE
    assert cuabi.CompileError.status == capi.CUABI_ERROR_COMPILE
    assert cuabi.DriverNotFoundError.status == capi.CUABI_ERROR_DRIVER_NOT_FOUND
    assert cuabi.ContextLostError.status == capi.CUABI_ERROR_CONTEXT_LOST
    assert issubclass(cuabi.InvalidArgumentError, ValueError)
    assert issubclass(cuabi.OutOfMemoryError, MemoryError)
    assert issubclass(cuabi.NotFoundError, LookupError)


def test_exceptions_carry_their_fields_and_pickle():
    err = cuabi.CompileError("cuabi_program_compile: no", code=6, log="x.cu(1): error")
    assert (err.status, err.name, err.message, err.code, err.log) == (
        13,
        "CUABI_ERROR_COMPILE",
        "cuabi_program_compile: no",
        6,
        "x.cu(1): error",
    )
    assert str(err) == "CUABI_ERROR_COMPILE: cuabi_program_compile: no\nx.cu(1): error"
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cuabi.CompileError
    assert (again.status, again.message, again.code, again.log) == (
        13,
        err.message,
        6,
        err.log,
    )
    io = cuabi.FileIOError("cannot write")
    assert (
        io.status == capi.CUABI_ERROR_IO and str(io) == "CUABI_ERROR_IO: cannot write"
    )


def test_launches_are_a_tuple_of_faulted_launches_and_pickle():
    assert cuabi.CudaError("x").launches == () and cuabi.ContextLostError("x").launches == ()
    launch = cuabi.FaultedLaunch("fill", cuabi.LaunchRecord(sequence=2, stream_id=1, grid_x=8))
    err = cuabi.ContextLostError("lost", launches=[launch])
    assert err.launches == (launch,)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cuabi.ContextLostError and again.launches == (launch,)
    assert again.launches[0].record.grid_x == 8
    with pytest.raises(AttributeError):
        launch.kernel = "other"  # frozen


def test_other_errors_carry_no_launches(backend):
    arg, _, _ = backend.struct("cuabi_launch_record")
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        backend.call("cuabi_launch_record_init", arg, 3)
    assert "cuabi_launch_record_init" in info.value.message
    assert info.value.launches == ()
    assert backend.lib.cuabi_last_error_get_launch_count() == 0


def test_released_handle_raises_invalid_handle(backend):
    prog = cuabi.Program(SOURCE, backend=backend)
    prog.close()
    assert prog.closed
    with pytest.raises(cuabi.InvalidHandleError) as info:
        prog.log
    assert info.value.status == capi.CUABI_ERROR_INVALID_HANDLE
    assert info.value.message  # the core says which call and which handle
    with pytest.raises(cuabi.InvalidHandleError):
        prog.compile()
    prog.close()  # a second close is harmless


def test_null_forged_and_wrong_kind_handles(backend):
    with cuabi.Program(SOURCE, backend=backend) as prog:
        prog_int = backend.handle_int(prog.handle)
        # a program handle where a module handle belongs
        as_module = backend.handle(prog_int, "cuabi_module")
        with pytest.raises(cuabi.InvalidHandleError):
            backend.get(
                "cuabi_module_get_function", as_module, b"f", out="cuabi_function"
            )
        for forged in (0, 0xDEADBEEF, prog_int ^ 0x10000, prog_int + 1):
            h = backend.handle(forged, "cuabi_program") if forged else backend.NULL
            with pytest.raises(cuabi.InvalidHandleError):
                backend.get_string("cuabi_program_get_log", h)
        # the real one still works
        assert prog.log == ""


def test_release_never_touches_the_last_error(backend):
    lib = backend.lib
    status = lib.cuabi_program_add_name_expression(backend.NULL, b"f")
    assert status == capi.CUABI_ERROR_INVALID_HANDLE
    message = backend.string(lib.cuabi_last_error_message())
    assert message
    lib.cuabi_program_release(backend.NULL)
    lib.cuabi_program_release(backend.handle(0xDEADBEEF, "cuabi_program"))
    assert backend.string(lib.cuabi_last_error_message()) == message
    assert lib.cuabi_last_error_status() == capi.CUABI_ERROR_INVALID_HANDLE
    lib.cuabi_last_error_clear()
    assert backend.string(lib.cuabi_last_error_message()) == ""


def test_bad_arguments_raise_invalid_argument(backend):
    # NULL source through the low layer
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        backend.get(
            "cuabi_program_create",
            backend.NULL,
            backend.NULL,
            0,
            backend.NULL,
            backend.NULL,
            out="cuabi_program",
        )
    assert "source" in info.value.message
    # a program compiles once
    with cuabi.Program(SOURCE, backend=backend) as prog:
        prog.compile(["-arch=compute_75"])
        with pytest.raises(cuabi.InvalidArgumentError):
            prog.compile(["-arch=compute_75"])
    with pytest.raises(TypeError):
        cuabi.Program(12345, backend=backend)


def test_two_call_pattern_sizes(backend):
    """Size query, too small a buffer (nothing written, size needed stored), exact size."""
    lib = backend.lib
    with cuabi.Program(SOURCE, name_expressions=["f"], backend=backend) as prog:
        prog.compile(["-arch=compute_75"])
        ptx = prog.ptx
        need = len(ptx.encode()) + 1
        if backend.name == "ctypes":
            size = ctypes.c_size_t(0)
            assert lib.cuabi_program_get_ptx(prog.handle, None, ctypes.byref(size)) == 0
            assert size.value == need
            small = ctypes.create_string_buffer(b"\x55" * 4, 4)
            size.value = 1
            status = lib.cuabi_program_get_ptx(prog.handle, small, ctypes.byref(size))
            assert status == capi.CUABI_ERROR_INSUFFICIENT_BUFFER
            assert size.value == need and small.raw == b"\x55" * 4
            exact = ctypes.create_string_buffer(need)
            size.value = need
            assert (
                lib.cuabi_program_get_ptx(prog.handle, exact, ctypes.byref(size)) == 0
            )
            assert exact.value.decode() == ptx
        else:
            ffi = backend.ffi
            size = ffi.new("size_t*", 0)
            assert lib.cuabi_program_get_ptx(prog.handle, ffi.NULL, size) == 0
            assert size[0] == need
            small = ffi.new("char[]", b"\x55" * 3)
            size[0] = 1
            status = lib.cuabi_program_get_ptx(prog.handle, small, size)
            assert status == capi.CUABI_ERROR_INSUFFICIENT_BUFFER
            assert size[0] == need and ffi.buffer(small, 4)[:] == b"\x55" * 3 + b"\0"
        with pytest.raises(cuabi.InsufficientBufferError):
            backend.check(capi.CUABI_ERROR_INSUFFICIENT_BUFFER)


def test_unknown_name_expression_is_not_found(backend):
    with cuabi.Program(SOURCE, backend=backend) as prog:
        prog.compile(["-arch=compute_75"])
        with pytest.raises(cuabi.NotFoundError, match="g<int>"):
            prog.lowered_name("g<int>")


@pytest.mark.parametrize(
    "value,what",
    [
        (-1, "grid.x = -1 is out of range"),
        (1 << 32, "out of range"),
        ((1, 2, 3, 4), "1 to 3 dimensions"),
        ("big", "must be an int or a tuple"),
        ((1.5,), "grid.x must be an int"),
    ],
)
def test_launch_dimensions_are_checked_before_the_core(value, what):
    with pytest.raises(cuabi.InvalidArgumentError, match=what):
        dim3(value, "grid")


def test_dimensions_default_to_one():
    assert dim3(7, "grid") == (7, 1, 1)
    assert dim3((2, 3), "block") == (2, 3, 1)
    assert dim3([2, 3, 4], "block") == (2, 3, 4)
