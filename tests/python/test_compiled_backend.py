"""The compiled backend (cuabi._cuabi_cffi, cffi's API mode): chosen by
default where its module is present and binds to the library found, named
as ``compiled``, bound to the library ``$CUABI_LIBRARY`` names, refused
(and fallen back from) with the reason when it cannot be used, and the
same ``ffi`` as the cffi backend's. Each case that loads libraries runs in
a child process, so what it loads stays out of this one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import cuabi
from cuabi import _loader
from conftest import no_compiled_reason

pytestmark = pytest.mark.skipif(
    no_compiled_reason() is not None, reason=str(no_compiled_reason())
)


def run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, capture_output=True, text=True, timeout=120,
    )


def _module() -> str:
    return _loader.load_backend("compiled").module_path  # type: ignore[attr-defined]


def _library() -> str:
    return _loader.load_backend("compiled").path


def _copy(folder, with_module: bool) -> str:
    """A copy of this suite's library (and the compiled module beside it)
    in ``folder``; the library's path."""
    folder.mkdir()
    lib = str(folder / "libcuabi.so")
    shutil.copy(os.path.realpath(_library()), lib)
    if with_module:
        shutil.copy(_module(), str(folder / os.path.basename(_module())))
    return lib


def test_the_compiled_backend_is_cffi_through_the_module():
    b = _loader.load_backend("compiled")
    assert isinstance(b, _loader.CffiBackend) and b.name == "compiled"
    assert b.missing == {}
    assert type(b.lib).__name__ == "Lib"  # an API-mode lib, not a dlopen one
    assert b.lib.__name__ == "cuabi._cuabi_cffi" or "_cuabi_cffi" in repr(b.lib)
    # The cdef is the generated one: every declared function is there.
    for name, _, _ in _loader._api.DECLARATIONS:
        assert hasattr(b.lib, name), name
    # The same ffi semantics as the cffi backend: boxes, casts, structs.
    box = b.out("size_t")
    b.set_value(box, 7)
    assert b.value(box) == 7
    assert b.handle_int(b.handle(0x1000, "cuabi_stream")) == 0x1000
    assert b.version == cuabi.version()
    # Errors map the same way, read through the module.
    with pytest.raises(cuabi.InvalidArgumentError):
        b.call("cuabi_launch_config_init", b.NULL, 0)


def test_its_calls_reach_the_library_loaded():
    b = _loader.load_backend("compiled")
    import ctypes

    want = ctypes.cast(ctypes.CDLL(b.path).cuabi_version, ctypes.c_void_p).value
    assert int(b.ffi.cast("uintptr_t", b.lib._cuabi_cffi_version_address())) == want


def test_default_is_compiled_and_names_pick_each(subprocess_env):
    code = """
        import cuabi
        from cuabi import _loader
        b = cuabi.get_backend()
        print(b.name, cuabi.Program("x").backend.name, _loader.compiled_status()[0])
        """
    env = dict(subprocess_env)
    env.pop("CUABI_BACKEND", None)
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["compiled", "compiled", _module()]
    for name in ("auto", "compiled", "cffi", "ctypes"):
        done = run_python(code, dict(env, CUABI_BACKEND=name))
        assert done.returncode == 0, done.stderr
        got = done.stdout.split()
        want = "compiled" if name == "auto" else name
        assert got[:2] == [want, want], (name, got)
    done = run_python(code, dict(env, CUABI_BACKEND="fast"))
    assert done.returncode != 0
    assert "unknown cuabi backend 'fast'; choose one of ctypes, cffi, compiled or auto" in (
        done.stderr
    )


def test_python_m_cuabi_says_which(subprocess_env):
    env = dict(subprocess_env)
    env.pop("CUABI_BACKEND", None)
    done = subprocess.run([sys.executable, "-m", "cuabi"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert "(compiled backend)" in done.stdout, done.stdout
    assert f"  python: compiled module {_module()} (in use)" in done.stdout.splitlines()
    done = subprocess.run([sys.executable, "-m", "cuabi"], capture_output=True, text=True,
                          env=dict(env, CUABI_BACKEND="cffi"), timeout=120)
    assert "(cffi backend)" in done.stdout
    assert (f"  python: compiled module {_module()} (not used: CUABI_BACKEND=cffi)"
            in done.stdout.splitlines()), done.stdout


def test_cuabi_library_elsewhere_binds_the_module_beside_it(subprocess_env, tmp_path):
    lib = _copy(tmp_path / "other", with_module=True)
    code = """
        import ctypes, cuabi
        b = cuabi.get_backend()
        want = ctypes.cast(ctypes.CDLL(b.path).cuabi_version, ctypes.c_void_p).value
        got = int(b.ffi.cast("uintptr_t", b.lib._cuabi_cffi_version_address()))
        print(b.name, b.path, b.module_path, got == want)
        """
    env = dict(subprocess_env, CUABI_LIBRARY=lib)
    env.pop("CUABI_BACKEND", None)
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "compiled", lib, str(tmp_path / "other" / os.path.basename(_module())), "True"]


def test_no_module_named_raises_and_default_falls_back(subprocess_env, tmp_path):
    lib = _copy(tmp_path / "bare", with_module=False)
    env = dict(subprocess_env, CUABI_LIBRARY=lib)
    env.pop("CUABI_BACKEND", None)
    code = """
        import cuabi
        from cuabi import _loader
        print("default", cuabi.get_backend().name)
        print("reason", _loader.compiled_status()[1])
        try:
            cuabi.load_backend("compiled")
        except ImportError as e:
            print("named ImportError:", e)
        """
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "default ctypes" in out
    assert f"reason no _cuabi_cffi module in {tmp_path / 'bare'} and " in out
    assert "named ImportError: no _cuabi_cffi module in" in out
    done = subprocess.run([sys.executable, "-m", "cuabi"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert "(ctypes backend)" in done.stdout
    assert "  python: compiled module: none (no _cuabi_cffi module in" in done.stdout


def test_a_module_bound_to_another_library_is_refused(subprocess_env, tmp_path):
    """The module binds to the libcuabi of its soname already in the process:
    when that is not the library named, the compiled backend says so and the
    default falls back to ctypes over the library named."""
    first = _library()
    other = _copy(tmp_path / "second", with_module=True)
    code = f"""
        import cuabi
        from cuabi import _loader
        _loader.load_backend("ctypes", {first!r})  # another copy, loaded first
        try:
            _loader.load_backend("compiled", {other!r})
        except ImportError as e:
            print("named ImportError:", e)
        b = _loader.load_backend("auto", {other!r})
        print("auto", b.name, b.path, _loader._compiled_reason is not None)
        """
    env = dict(subprocess_env)
    env.pop("CUABI_BACKEND", None)
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert f"binds to another libcuabi than {other}" in done.stdout, done.stdout
    assert f"auto ctypes {other} True" in done.stdout


def test_without_cffi_the_default_is_ctypes(subprocess_env):
    code = """
        import sys
        sys.modules["cffi"] = None  # as if it were not installed
        import cuabi
        from cuabi import _loader
        print("default", cuabi.get_backend().name)
        print("reason", _loader.compiled_status()[1])
        """
    env = dict(subprocess_env)
    env.pop("CUABI_BACKEND", None)
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert "default ctypes" in done.stdout
    assert "reason the compiled backend needs the cffi package (pip install cffi)" in done.stdout
