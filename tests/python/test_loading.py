"""Finding and loading libcuabi, and choosing the backend."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import cuabi
from cuabi import _loader
from cuabi._objects import fill_compile_desc
from conftest import BINDING, have_cffi


def run_python(code: str, env: dict, cwd: str = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_library_loads_and_reports_its_version():
    lib_path = cuabi.find_library()
    assert os.path.exists(lib_path) or "/" not in lib_path
    assert cuabi.version() == cuabi.capi.CUABI_VERSION_NUMBER
    assert (
        cuabi.version_string() == cuabi.capi.CUABI_VERSION_STRING == cuabi.__version__
    )


def test_cuabi_library_alone_is_used_when_set(monkeypatch, tmp_path):
    monkeypatch.setenv("CUABI_LIBRARY", str(tmp_path / "libcuabi.so"))
    assert _loader.library_candidates() == [str(tmp_path / "libcuabi.so")]
    monkeypatch.delenv("CUABI_LIBRARY")
    candidates = _loader.library_candidates()
    # the package's own copy comes first
    assert candidates[0] == os.path.join(os.path.dirname(cuabi.__file__), "libcuabi.so")


def test_unloadable_library_lists_every_path_tried(subprocess_env, tmp_path):
    not_a_lib = tmp_path / "libcuabi.so"
    not_a_lib.write_text("this is not a shared library")
    for path, why in (
        (tmp_path / "nowhere" / "libcuabi.so", "no such file"),
        (not_a_lib, ""),
    ):
        env = dict(subprocess_env, CUABI_LIBRARY=str(path))
        done = run_python(
            """
            import cuabi
            try:
                cuabi.device_count()
            except cuabi.LibraryNotFoundError as e:
                print("TRIED", e.tried)
                print(e)
            """,
            env,
        )
        assert done.returncode == 0, done.stderr
        assert "TRIED" in done.stdout
        assert str(path) in done.stdout
        assert why in done.stdout
        assert "CUABI_LIBRARY" in done.stdout  # the message says how to fix it


def test_a_library_of_another_major_version_is_refused(tmp_path):
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        pytest.fail("no C compiler")
    src = tmp_path / "fake.c"
    src.write_text("unsigned cuabi_version(void) { return 10203; }\n")
    lib = tmp_path / "libfake.so"
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    with pytest.raises(
        cuabi.LibraryNotFoundError, match="libcuabi 1.x; this binding needs 0.x"
    ):
        _loader.CtypesBackend(str(lib))


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown cuabi backend 'numba'"):
        cuabi.load_backend("numba")


def test_backends_are_loaded_once():
    assert cuabi.load_backend("ctypes") is cuabi.load_backend("ctypes")


@pytest.mark.skipif(not have_cffi(), reason="cffi is not installed (pip install cffi)")
def test_cuabi_backend_env_picks_the_default(subprocess_env):
    for name in ("ctypes", "cffi"):
        env = dict(subprocess_env, CUABI_BACKEND=name)
        done = run_python(
            "import cuabi; print(cuabi.get_backend().name, cuabi.Program('x').backend.name)",
            env,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [name, name]


def test_cffi_is_optional(subprocess_env):
    """Without cffi, import and the default (ctypes) backend work; asking for
    cffi, by name or through CUABI_BACKEND, says what is missing."""
    code = """
        import sys
        sys.modules["cffi"] = None  # as if it were not installed
        import cuabi
        try:
            print("default", cuabi.Program("x").backend.name)
        except ImportError as e:
            print("default ImportError:", e)
        try:
            cuabi.load_backend("cffi")
        except ImportError as e:
            print("named ImportError:", e)
        """
    env = dict(subprocess_env)
    env.pop("CUABI_BACKEND", None)  # the default, whatever the suite runs under
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert "default ctypes" in done.stdout
    assert "named ImportError: the cffi backend needs the cffi package" in done.stdout

    env["CUABI_BACKEND"] = "cffi"
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert (
        "default ImportError: the cffi backend needs the cffi package (pip install"
        " cffi); the ctypes backend (CUABI_BACKEND=ctypes) needs nothing"
    ) in done.stdout


def test_use_backend_switches_per_block(backend):
    with cuabi.use_backend(backend.name) as chosen:
        assert chosen is backend
        with cuabi.Program('extern "C" __global__ void f() {}') as prog:
            assert prog.backend is backend
    with cuabi.Program("x", backend=backend) as prog:
        assert prog.backend is backend


def test_low_layer_is_reachable_through_capi(backend):
    import ctypes

    lib = backend.lib
    assert lib.cuabi_version() == cuabi.capi.CUABI_VERSION_NUMBER
    assert backend.string(lib.cuabi_status_get_name(cuabi.capi.CUABI_ERROR_NO_DEVICE)) == (
        "CUABI_ERROR_NO_DEVICE"
    )
    if backend.name == "ctypes":
        major, minor = ctypes.c_int32(), ctypes.c_int32()
        backend.check(lib.cuabi_nvrtc_get_version(ctypes.byref(major), ctypes.byref(minor)))
        assert (major.value, minor.value) == cuabi.nvrtc_version()
    else:
        major, minor = backend.ffi.new("int32_t*"), backend.ffi.new("int32_t*")
        backend.check(lib.cuabi_nvrtc_get_version(major, minor))
        assert (major[0], minor[0]) == cuabi.nvrtc_version()


def test_package_imports_from_where_the_tests_expect():
    if os.environ.get("CUABI_TEST_INSTALLED") == "1":
        assert not cuabi.__file__.startswith(BINDING)
    else:
        assert cuabi.__file__.startswith(BINDING)


def test_every_declared_function_is_exported(backend):
    """The declarations generated from the header bind the whole library (a
    missing export would leave a function that fails only when called)."""
    assert backend.missing == {}
    names = [name for name, _, _ in cuabi.capi.DECLARATIONS]
    assert len(names) == len(set(names)) and all(hasattr(backend.lib, n) for n in names)


def test_struct_defaults_come_from_the_library(backend):
    arg, cfg, size = backend.struct("cuabi_launch_config")
    backend.call("cuabi_launch_config_init", arg, size)
    fields = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
    assert cfg.struct_size == size and [getattr(cfg, f) for f in fields] == [1] * 6
    assert cfg.shared_mem_bytes == 0
    _, keep = fill_compile_desc(backend, source=b"int x;", options=[])
    desc = keep[0]
    assert desc.output == cuabi.capi.Output.CUBIN and desc.flags == 0
    assert desc.num_headers == 0 and desc.num_name_expressions == 0


@pytest.mark.skipif(not have_cffi(), reason="cffi is not installed (pip install cffi)")
def test_both_backends_lay_the_structs_out_alike():
    import ctypes

    ffi = cuabi.load_backend("cffi").ffi
    capi = cuabi.capi
    structs = [n for n in capi.__all__ if isinstance(getattr(capi, n), type(ctypes.Structure))]
    assert structs
    for name in structs:
        cls = getattr(capi, name)
        assert ctypes.sizeof(cls) == ffi.sizeof(name), name
        for field, _ in cls._fields_:
            assert getattr(cls, field).offset == ffi.offsetof(name, field), (name, field)
