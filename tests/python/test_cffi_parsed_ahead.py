"""The cffi backend's cdef parsed ahead: a build writes
``_cuabi_cffi_abi.py`` (cffi's out-of-line ABI mode) from the generated
cdef, and the backend imports it instead of parsing the cdef at start-up,
only when it was made from that very cdef. Each case loads its library in a
child process, so what it loads stays out of this one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from cuabi import _loader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATOR = os.path.join(ROOT, "bindings", "python", "build_cffi_module.py")
API = os.path.join(ROOT, "bindings", "python", "cuabi", "_api.py")

pytest.importorskip("cffi", reason="the cffi backend needs cffi")


def _library_in(folder) -> str:
    """A copy of this suite's library in ``folder``: its path."""
    lib = str(folder / "libcuabi.so")
    shutil.copy(os.path.realpath(_loader.load_backend("ctypes").path), lib)
    return lib


def _cdef_from(lib: str) -> str:
    """Where a fresh process's cffi backend over ``lib`` took its cdef from."""
    code = f"""
        from cuabi import _loader
        b = _loader.load_backend("cffi", {lib!r})
        assert b.lib.cuabi_version() > 0
        print(b.cdef_from)
    """
    env = dict(os.environ)
    env.pop("CUABI_BACKEND", None)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(_loader.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _write(folder) -> str:
    path = str(folder / "_cuabi_cffi_abi.py")
    done = subprocess.run([sys.executable, GENERATOR, "--api", API, "--abi-out", path],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return path


def test_the_cdef_parsed_ahead_beside_the_library_is_used(tmp_path):
    lib = _library_in(tmp_path)
    assert _cdef_from(lib) in ("parsed at load", os.path.join(os.path.dirname(_loader.__file__),
                                                             "_cuabi_cffi_abi.py"))
    path = _write(tmp_path)
    with open(path, encoding="utf-8") as f:
        assert 'CDEF_SHA256 = "' in f.read()
    assert _cdef_from(lib) == path


def test_one_made_from_another_cdef_is_not_used(tmp_path):
    lib = _library_in(tmp_path)
    path = _write(tmp_path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index('CDEF_SHA256 = "') + len('CDEF_SHA256 = "')
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:start] + "0" * 64 + text[start + 64 :])
    assert _cdef_from(lib) != path
    with open(path, "w", encoding="utf-8") as f:
        f.write("this is not Python\n")
    assert _cdef_from(lib) != path
