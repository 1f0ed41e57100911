"""Linker, Library and Module listings without a GPU: every method converts
its arguments on each backend and reaches the core, which answers for a
handle that is not live (a Linker needs a device to be made, so the objects
here carry made-up handles; the GPU tests are in test_link_gpu.py)."""

from __future__ import annotations

import pytest

import cuabi
from cuabi import LinkBackend, LinkInput
from cuabi._base import Resource
from cuabi._objects import fill_link_desc

MADE_UP = 0xDEADBEEF


def fake(cls, b, kind: str):
    """An object of ``cls`` over a made-up handle of ``kind``."""
    obj = cls.__new__(cls)
    Resource.__init__(obj, b, b.handle(MADE_UP, "cuabi_" + kind))
    return obj


@pytest.fixture
def linker(backend):
    obj = fake(cuabi.Linker, backend, "linker")
    obj.device = None
    yield obj
    obj._closed = True  # nothing to release


@pytest.fixture
def module(backend):
    obj = fake(cuabi.Module, backend, "module")
    obj.device = None
    yield obj
    obj._closed = True


def _refused(fn: str):
    return pytest.raises(cuabi.InvalidHandleError, match=f"{fn}: linker is not a live cuabi_linker")


def test_every_linker_method_reaches_the_core(linker, tmp_path, backend):
    program = cuabi.Program('extern "C" __device__ int f() { return 1; }', backend=backend)
    program.compile(arch="sm_75", relocatable=True)
    (tmp_path / "x.ptx").write_text(".version 8.0\n.target sm_75\n")
    with _refused("cuabi_linker_get_backend"):
        linker.link_backend
    with _refused("cuabi_linker_add_program"):
        linker.add_program(program)
    with _refused("cuabi_linker_add_data"):
        linker.add_data(program.cubin, "cubin", name="f")
    with _refused("cuabi_linker_add_data"):
        linker.add_data(bytearray(b"\x7fELF"), LinkInput.CUBIN)
    with _refused("cuabi_linker_add_data"):
        linker.add_data(memoryview(b".version 8.0"), "ptx")
    with _refused("cuabi_linker_add_file"):
        linker.add_file(tmp_path / "x.ptx")
    with _refused("cuabi_linker_add_file"):
        linker.add_file(str(tmp_path / "x.ptx"), "ptx")
    for item in (program, program.cubin, tmp_path / "x.ptx", (program.cubin, "cubin")):
        with pytest.raises(cuabi.InvalidHandleError, match="linker is not a live cuabi_linker"):
            linker.add(item)
    with _refused("cuabi_linker_link"):
        linker.link()
    with _refused("cuabi_linker_link"):
        linker.link_async().result(timeout=60)
    with _refused("cuabi_linker_get_log"):
        linker.log
    with _refused("cuabi_linker_get_image"):
        linker.image
    program.close()


def test_linker_arguments_are_checked_before_the_core(linker):
    with pytest.raises(ValueError, match="unknown link input kind 'bin'"):
        linker.add_data(b"\x7fELF", "bin")
    with pytest.raises(TypeError, match="data must be bytes"):
        linker.add_data(".version 8.0")
    with pytest.raises(TypeError, match="program must be a cuabi.Program, not bytes"):
        linker.add_program(b"\x7fELF")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, not bytes"):
        linker.add_file(b"/tmp/x.ptx")
    with pytest.raises(cuabi.InvalidArgumentError, match="name contains a NUL"):
        linker.add_data(b"\x7fELF", name="a\0b")


def test_every_module_listing_method_reaches_the_core(module):
    def refused(fn: str):
        return pytest.raises(
            cuabi.InvalidHandleError, match=f"{fn}: module is not a live cuabi_module"
        )

    with refused("cuabi_module_get_kernel_count"):
        module.kernel_count
    with refused("cuabi_module_get_kernel_count"):
        module.kernels
    with refused("cuabi_module_get_kernel_name"):
        module.kernel_name(0)
    with refused("cuabi_module_get_kernel_name"):
        module.kernel_name(1, "symbol")
    with refused("cuabi_module_get_kernel_name"):
        module.kernel_name(1, cuabi.NameForm.SYMBOL)
    with refused("cuabi_module_get_compile_log"):
        module.compile_log


def test_library_arguments_reach_the_core(backend, tmp_path):
    with pytest.raises(cuabi.InvalidArgumentError, match="cuabi_library_load_data: size is 0"):
        cuabi.Library(bytearray(), backend=backend)
    with pytest.raises(cuabi.FileIOError, match="cannot open '.*missing.cubin'"):
        cuabi.Library(tmp_path / "missing.cubin", backend=backend)
    lib = fake(cuabi.Library, backend, "library")
    with pytest.raises(TypeError, match="device must be a cuabi.Device, not str"):
        lib.get_module("0")
    lib._closed = True


def test_the_enums_and_names_of_the_header():
    assert [k.name.lower() for k in LinkInput] == [
        "auto", "cubin", "ptx", "lto_ir", "fatbin", "object", "library"
    ]
    assert [k.name.lower() for k in LinkBackend] == ["auto", "nvjitlink", "driver"]
    assert [f.name.lower() for f in cuabi.NameForm] == ["demangled", "symbol"]
    assert cuabi.KernelName("k", "k")._fields == ("name", "symbol")


def test_the_low_layers_link_description(backend):
    arg, keep = fill_link_desc(backend, backend=int(LinkBackend.DRIVER), flags=1,
                               options=[b"-O3"])
    desc = keep[0]
    size = backend.struct("cuabi_link_desc")[2]
    assert int(desc.struct_size) == size  # the library's defaults came first
    assert int(desc.backend) == 2 and int(desc.flags) == 1 and int(desc.num_options) == 1
    out = backend.out("cuabi_linker")
    status = backend.lib.cuabi_linker_create(backend.NULL, arg, backend.ref(out))
    assert status == cuabi.capi.CUABI_ERROR_INVALID_HANDLE
    assert "cuabi_linker_create: device is NULL" in backend.error(status).message
