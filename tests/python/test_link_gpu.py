"""On a CUDA device: compilation beyond one string, through each backend.
Kernels listed by their C++ names and found by plain names (the PyCUDA
tutorial's doublify), the compile log of a loaded module, typed options
that change what runs, linking programs (relocatable code and LTO-IR)
through nvJitLink and the driver's linker, the link cache, libraries, and
compiling and linking in the background. Skipped, with the reason, where
there is no device (tests/c/gpu_link_test.cc checks the same in C)."""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

import cuabi
from cuabi import LinkBackend

pytestmark = pytest.mark.gpu

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

# The PyCUDA tutorial's kernel, as it is written there: no extern "C".
DOUBLIFY = """\
__global__ void doublify(float *a)
{
  int idx = threadIdx.x + threadIdx.y*4;
  a[idx] *= 2;
}
"""

WARNING = '#warning "a warning worth keeping"\nextern "C" __global__ void k(int* p) { *p = 1; }\n'
VALUE = 'extern "C" __global__ void value(int* out) { *out = VALUE; }\n'


def salted(source: str) -> str:
    """``source`` with a device function of a name no other run uses, so
    that its image is new to the compile and link caches."""
    tag = uuid.uuid4().hex
    return source + f'extern "C" __device__ int salt_{tag}() {{ return 0x{tag[:7]}; }}\n'


def compiled(dev: cuabi.Device, source: str, **typed) -> cuabi.Program:
    return cuabi.Program(source, backend=dev.backend).compile(arch=dev.arch, **typed)


def check_apply(dev: cuabi.Device, module: cuabi.Module) -> None:
    """Runs ``apply`` of ``module`` over 256 floats: x -> 2x + 1."""
    apply = module.get_kernel("apply")
    x = np.arange(256, dtype=np.float32)
    buf = dev.to_device(x)
    apply(1, 256, (buf, np.uint32(256)))
    assert np.array_equal(buf.copy_to_host(), 2.0 * x + 1.0)


def cache_enabled() -> bool:
    return os.environ.get("CUABI_CACHE", "1") != "0"


# --------------------------------------------------------------------------
# Kernels by their C++ names
# --------------------------------------------------------------------------


def test_kernels_are_listed_with_their_cxx_names_and_symbols(device):
    mod = device.compile(CXX)
    assert mod.kernel_count == 3
    kernels = mod.kernels
    assert len(kernels) == 3 and all(isinstance(k, cuabi.KernelName) for k in kernels)
    by_name = {k.name: k for k in kernels}
    assert "doublify(float*)" in by_name
    # A template instance demangles with its return type ("void ops::scale<float>(...)").
    for signature in ("ops::scale<float>(float*, float)", "ops::scale<int>(int*, int)"):
        assert sum(name.endswith(signature) for name in by_name) == 1, (signature, by_name)
    assert all(k.symbol.startswith("_Z") for k in kernels)
    for i, k in enumerate(kernels):
        assert mod.kernel_name(i) == k.name
        assert mod.kernel_name(i, "symbol") == k.symbol
        assert mod.kernel_name(i, cuabi.NameForm.SYMBOL) == k.symbol
        assert mod.get_kernel(k.symbol).name == k.symbol  # a symbol always finds it
    with pytest.raises(cuabi.OutOfRangeError, match="past the module's 3 kernels"):
        mod.kernel_name(3)
    with pytest.raises(cuabi.InvalidArgumentError, match="form 7 is not a cuabi_name_form"):
        mod.kernel_name(0, 7)
    with pytest.raises(ValueError, match="unknown name form 'mangled'"):
        mod.kernel_name(0, "mangled")


def test_extern_c_kernels_are_listed_by_their_own_names(device):
    mod = device.compile('extern "C" __global__ void plain(int* p) { *p = 1; }\n')
    assert mod.kernels == [cuabi.KernelName("plain", "plain")]


def test_pycuda_doublify_is_found_by_its_plain_name(device):
    mod = device.compile(DOUBLIFY)
    assert [k.name for k in mod.kernels] == ["doublify(float*)"]
    doublify = mod.get_kernel("doublify")
    a = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    d = device.to_device(a)
    doublify(1, (4, 4, 1), (d,))
    assert np.array_equal(d.copy_to_host(), a * 2)


def test_an_ambiguous_name_is_refused_listing_the_candidates(device):
    mod = device.compile(CXX)
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        mod.get_kernel("scale")
    message = info.value.message
    assert "the name 'scale' matches 2 kernels" in message
    assert "ops::scale<float>(float*, float)" in message
    assert "ops::scale<int>(int*, int)" in message
    assert "name expression" in message
    # a qualified name with its template arguments names one instance
    y = device.to_device(np.full(4, 3, np.int32))
    mod.get_kernel("ops::scale<int>")(1, 4, (y, np.int32(5)))
    assert np.array_equal(y.copy_to_host(), np.full(4, 15, np.int32))
    with pytest.raises(cuabi.NotFoundError) as info:
        mod.get_kernel("tripple")
    assert "its kernels:" in info.value.message and "doublify(float*)" in info.value.message
    # the plain name of the one kernel that has it still works
    x = device.to_device(np.full(8, 1.5, np.float32))
    mod.get_kernel("doublify")(1, 8, (x,))
    assert np.array_equal(x.copy_to_host(), np.full(8, 3.0, np.float32))
    # and a name expression picks one instance
    picked = device.compile(CXX, name_expressions=["ops::scale<int>"])
    assert picked.get_kernel("ops::scale<int>").name == "ops::scale<int>"


# --------------------------------------------------------------------------
# The compile log and typed options on a device
# --------------------------------------------------------------------------


def test_the_compile_log_keeps_the_warnings_of_a_successful_compile(device):
    mod = device.compile(WARNING, cache=False)
    assert "a warning worth keeping" in mod.compile_log
    assert not mod.from_cache


def test_a_module_the_cache_served_has_an_empty_compile_log(device):
    if not cache_enabled():
        pytest.skip("CUABI_CACHE=0: the compile cache is off for this run")
    src = salted(WARNING)
    first = device.compile(src)
    assert not first.from_cache and "a warning worth keeping" in first.compile_log
    second = device.compile(src)
    assert second.from_cache and second.compile_log == ""


def test_modules_loaded_from_images_have_an_empty_compile_log(device):
    prog = compiled(device, WARNING)
    assert "a warning worth keeping" in prog.log
    assert prog.load(device).compile_log == ""


def test_defines_change_what_runs(device):
    out = device.zeros(1, np.int32)
    for value in (7, -3, 41):
        mod = device.compile(VALUE, defines={"VALUE": value})
        mod.get_kernel("value")(1, 1, (out,))
        assert int(out.copy_to_host()[0]) == value
    opts = cuabi.CompileOptions(std=17, defines={"VALUE": 12})
    device.compile(VALUE, opts).get_kernel("value")(1, 1, (out,))
    assert int(out.copy_to_host()[0]) == 12
    with pytest.raises(TypeError, match="unknown compile option 'define'"):
        device.compile(VALUE, define={"VALUE": 1})


def test_fast_math_and_an_explicit_architecture_on_a_device(device):
    src = 'extern "C" __global__ void s(float* x) { x[threadIdx.x] = sinf(x[threadIdx.x]); }\n'
    x = np.linspace(0.0, 3.0, 32, dtype=np.float32)
    compute = "compute_%d%d" % device.compute_capability
    for typed in ({"fast_math": True}, {"arch": device.arch}, {"arch": compute}):
        buf = device.to_device(x)
        device.compile(src, **typed).get_kernel("s")(1, 32, (buf,))
        assert np.allclose(buf.copy_to_host(), np.sin(x), atol=1e-3), typed


# --------------------------------------------------------------------------
# Linking
# --------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["nvjitlink", "driver"])
def test_relocatable_programs_link_through_either_backend(device, which):
    caller = compiled(device, CALLER, relocatable=True)
    callee = compiled(device, CALLEE, relocatable=True)
    with cuabi.Linker(device, link_backend=which, cache=False) as linker:
        assert linker.link_backend == LinkBackend[which.upper()]
        assert linker.backend is device.backend  # the FFI backend, as on every object
        assert linker.log == ""  # before linking
        with pytest.raises(cuabi.NotFoundError, match="has not linked successfully"):
            linker.image
        assert linker.add_program(caller) is linker
        linker.add_program(callee)
        mod = linker.link()
        assert not mod.from_cache
        assert mod.compile_log == ""  # a linked module
        image = linker.image
        assert image[:4] == b"\x7fELF" and len(image) > 64
        with pytest.raises(cuabi.InvalidArgumentError, match="already linked"):
            linker.link()
    check_apply(device, mod)
    assert [k.name for k in mod.kernels] == ["apply"]


def test_device_link_takes_programs_in_one_call(device):
    caller = compiled(device, CALLER, relocatable=True)
    callee = compiled(device, CALLEE, relocatable=True)
    check_apply(device, device.link(caller, callee, cache=False))
    check_apply(device, device.link(caller, callee, link_backend="driver", cache=False))


def test_lto_ir_links_with_link_time_optimisation(device):
    caller = compiled(device, CALLER, lto=True, relocatable=True)
    callee = compiled(device, CALLEE, lto=True, relocatable=True)
    assert len(caller.lto_ir) > 16 and len(callee.lto_ir) > 16
    linker = cuabi.Linker(device, link_backend="nvjitlink", lto=True, cache=False)
    linker.add_program(caller).add_program(callee)
    mod = linker.link()
    check_apply(device, mod)
    # The LTO-IR as bytes of a kind named
    again = cuabi.Linker(device, link_backend="nvjitlink", lto=True, cache=False)
    again.add_data(caller.lto_ir, "lto_ir", name="caller")
    again.add_data(callee.lto_ir, cuabi.LinkInput.LTO_IR, name="callee")
    check_apply(device, again.link())


def test_lto_ir_bytes_are_told_by_their_content(device):
    """The header: "auto" tells LTO-IR by the bytes."""
    caller = compiled(device, CALLER, lto=True, relocatable=True)
    callee = compiled(device, CALLEE, lto=True, relocatable=True)
    linker = cuabi.Linker(device, link_backend="nvjitlink", lto=True, cache=False)
    linker.add_data(caller.lto_ir).add_data(callee.lto_ir, "auto")
    check_apply(device, linker.link())


def test_the_driver_backend_refuses_lto_ir(device):
    lto = compiled(device, CALLEE, lto=True, relocatable=True)
    linker = cuabi.Linker(device, link_backend="driver", cache=False)
    with pytest.raises(cuabi.NotSupportedError, match="LTO-IR needs the nvJitLink backend"):
        linker.add_program(lto)
    with pytest.raises(cuabi.NotSupportedError, match="LTO-IR needs the nvJitLink backend"):
        linker.add_data(lto.lto_ir, cuabi.LinkInput.LTO_IR)
    with pytest.raises(cuabi.NotSupportedError, match="link-time optimisation needs nvJitLink"):
        cuabi.Linker(device, link_backend="driver", lto=True)


@pytest.mark.parametrize("which", ["auto", "nvjitlink", "driver"])
def test_a_missing_function_fails_the_link_with_a_log_naming_it(device, which):
    caller = compiled(device, CALLER, relocatable=True)
    linker = cuabi.Linker(device, link_backend=which, cache=False)
    linker.add_program(caller)
    with pytest.raises(cuabi.CompileError) as info:
        linker.link()
    err = info.value
    assert err.status == cuabi.capi.CUABI_ERROR_COMPILE
    assert "twice" in err.log, err.log
    assert "twice" in linker.log
    assert "twice" in str(err)
    with pytest.raises(cuabi.CompileError) as info:
        device.link(caller, link_backend=which, cache=False)
    assert "twice" in info.value.log


def test_a_second_identical_link_comes_from_the_cache(device, tmp_path):
    if not cache_enabled():
        pytest.skip("CUABI_CACHE=0: the compile cache is off for this run")
    caller = compiled(device, CALLER, relocatable=True)
    # The callee as a PTX file, told apart by its extension; salted, so
    # that no earlier run has linked these bytes.
    callee_ptx = cuabi.Program(salted(CALLEE), backend=device.backend).compile(
        arch="compute_%d%d" % device.compute_capability, relocatable=True
    ).ptx
    path = tmp_path / "callee.ptx"
    path.write_text(callee_ptx)
    images = []
    for round_ in range(2):
        linker = cuabi.Linker(device)
        linker.add_program(caller).add_file(path)
        mod = linker.link()
        assert mod.from_cache == (round_ == 1), f"round {round_}"
        if round_ == 1:
            assert linker.log == ""  # the cache served it: no link ran
        images.append(linker.image)
        check_apply(device, mod)
    assert images[0] == images[1]
    # cache=False neither reads nor writes it
    linker = cuabi.Linker(device, cache=False)
    assert not linker.add_program(caller).add_file(path).link().from_cache


def test_inputs_as_bytes_files_and_pairs(device, tmp_path):
    caller = compiled(device, CALLER, relocatable=True)
    callee = compiled(device, CALLEE, relocatable=True)
    (tmp_path / "callee.cubin").write_bytes(callee.cubin)
    (tmp_path / "callee.bin").write_bytes(callee.cubin)
    for inputs in (
        [caller.cubin, bytearray(callee.cubin)],
        [memoryview(caller.cubin), tmp_path / "callee.cubin"],
        [(caller.cubin, "cubin"), (str(tmp_path / "callee.bin"), cuabi.LinkInput.CUBIN)],
    ):
        check_apply(device, device.link(*inputs, cache=False))


# --------------------------------------------------------------------------
# Libraries
# --------------------------------------------------------------------------


def test_a_library_serves_its_kernels_as_a_module_of_the_device(device):
    prog = compiled(device, CXX)
    lib = cuabi.Library(prog.cubin, backend=device.backend)
    mod = lib.get_module(device)
    lib.close()  # the module keeps the library loaded
    assert mod.kernel_count == 3
    doublify = mod.get_kernel("doublify")  # a plain C++ name
    x = device.to_device(np.full(64, 1.5, np.float32))
    doublify(1, 64, (x,))
    assert np.array_equal(x.copy_to_host(), np.full(64, 3.0, np.float32))


def test_a_linked_image_loads_as_a_library_from_bytes_and_from_a_file(device, tmp_path):
    linker = cuabi.Linker(device, cache=False)
    linker.add_program(compiled(device, CALLER, relocatable=True))
    linker.add_program(compiled(device, CALLEE, relocatable=True))
    linker.link()
    image = linker.image
    path = tmp_path / "linked.cubin"
    path.write_bytes(image)
    for source in (image, path, str(path)):
        with cuabi.Library(source, backend=device.backend) as lib:
            check_apply(device, lib.get_module(device))


def test_one_library_serves_every_device_of_its_architecture(device):
    b = device.backend
    lib = cuabi.Library(compiled(device, CXX).cubin, backend=b)
    devices = [cuabi.Device(i, backend=b) for i in range(cuabi.device_count(b))]
    same = [d for d in devices if d.compute_capability == device.compute_capability]
    assert len(same) >= 1
    for d in same:
        mod = lib.get_module(d)
        assert mod.device is d
        x = d.to_device(np.ones(4, np.float32))
        mod.get_kernel("doublify")(1, 4, (x,))
        assert np.array_equal(x.copy_to_host(), np.full(4, 2.0, np.float32))


# --------------------------------------------------------------------------
# In the background
# --------------------------------------------------------------------------


def test_device_compile_async_gives_a_working_module(device):
    future = device.compile_async(VALUE, defines={"VALUE": 99}, cache=False)
    mod = future.result(timeout=120)
    assert isinstance(mod, cuabi.Module) and mod.device is device
    out = device.zeros(1, np.int32)
    mod.get_kernel("value")(1, 1, (out,))
    assert int(out.copy_to_host()[0]) == 99
    bad = device.compile_async("__global__ void broken( { }", cache=False)
    with pytest.raises(cuabi.CompileError) as info:
        bad.result(timeout=120)
    assert "error" in info.value.log
    with pytest.raises(TypeError, match="unknown compile option 'fast'"):
        device.compile_async(VALUE, fast=True)


def test_link_async_gives_a_working_module(device):
    linker = cuabi.Linker(device, cache=False)
    linker.add_program(compiled(device, CALLER, relocatable=True))
    linker.add_program(compiled(device, CALLEE, relocatable=True))
    future = linker.link_async()
    mod = future.result(timeout=120)
    check_apply(device, mod)
    broken = cuabi.Linker(device, cache=False)
    broken.add_program(compiled(device, CALLER, relocatable=True))
    with pytest.raises(cuabi.CompileError) as info:
        broken.link_async().result(timeout=120)
    assert "twice" in info.value.log
