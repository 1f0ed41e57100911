"""`pip install bindings/python` into a fresh virtual environment, offline,
without setuptools: the in-tree build backend bundles libcuabi."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

import cuabi
from conftest import BINDING, ROOT

VERSION = cuabi.capi.CUABI_VERSION_STRING  # the package's, stamped from the header

CHECK = """
import os, sys, cuabi
print("FILE", cuabi.__file__)
print("LIB", cuabi.find_library())
prog = cuabi.Program('extern "C" __global__ void f() {}').compile(["-arch=compute_75"])
print("PTX", ".entry f" in prog.ptx)
print("BACKEND", cuabi.get_backend().name)
header = os.path.join(os.path.dirname(cuabi.__file__), "include", "cuabi", "cuabi.h")
print("HEADER", header if os.path.isfile(header) else "missing")
"""


def _clean_env() -> dict:
    """The environment of a fresh install: no path to the source tree, no
    library chosen, no backend chosen (CUABI_BACKEND=cffi of the
    calling suite would fail there, for a fresh venv has no cffi; these
    tests are about the default, dependency-free backend)."""
    env = dict(os.environ)
    for key in (
        "CUABI_LIBRARY",
        "CUABI_BACKEND",
        "PYTHONPATH",
        "PIP_FIND_LINKS",
        "PIP_INDEX_URL",
    ):
        env.pop(key, None)
    env["PIP_NO_INPUT"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(cmd, env, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert (
        done.returncode == 0
    ), f"{' '.join(map(str, cmd))}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def venv(tmp_path):
    """A fresh venv with pip and nothing else (setuptools removed where ensurepip
    still brings it)."""
    try:
        import ensurepip  # noqa: F401  (Debian splits it off into python3-venv)
    except ImportError:
        pytest.skip("this Python cannot make virtual environments (no ensurepip)")
    env = _clean_env()
    path = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(path)], env)
    py = str(path / "bin" / "python")
    has_setuptools = subprocess.run(
        [py, "-c", "import setuptools"], capture_output=True
    )
    if has_setuptools.returncode == 0:
        _run([py, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], env)
    assert (
        subprocess.run([py, "-c", "import setuptools"], capture_output=True).returncode
        != 0
    )
    return py


def _site_packages(py: str) -> str:
    out = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.strip()


def _check_installed(py: str, tmp_path) -> dict:
    out = _run([py, "-c", CHECK], _clean_env(), cwd=str(tmp_path)).stdout
    facts = dict(line.split(" ", 1) for line in out.splitlines())
    site = _site_packages(py)
    assert facts["FILE"].startswith(site), facts
    assert facts["LIB"] == os.path.join(site, "cuabi", "libcuabi.so")
    assert facts["HEADER"] == os.path.join(site, "cuabi", "include", "cuabi", "cuabi.h")
    assert facts["PTX"] == "True"
    assert facts["BACKEND"] == "ctypes"  # the default needs nothing installed
    return facts


def test_install_bundles_cuabi_library(venv, tmp_path):
    env = _clean_env()
    env["CUABI_LIBRARY"] = os.path.realpath(cuabi.find_library())
    _run(
        [venv, "-m", "pip", "install", "--no-index", "--no-cache-dir", "-q", BINDING],
        env,
    )
    _check_installed(venv, tmp_path)
    site = _site_packages(venv)
    with open(os.path.join(site, "cuabi", "libcuabi.so"), "rb") as f, open(
        env["CUABI_LIBRARY"], "rb"
    ) as g:
        assert f.read() == g.read()
    # without its library the package says where it looked
    os.remove(os.path.join(site, "cuabi", "libcuabi.so"))
    done = subprocess.run(
        [venv, "-c", "import cuabi; cuabi.device_count()"],
        env=_clean_env(),
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "LibraryNotFoundError" in done.stderr
    assert os.path.join(site, "cuabi", "libcuabi.so") in done.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_install_builds_the_core_with_cmake(venv, tmp_path):
    _run(
        [venv, "-m", "pip", "install", "--no-index", "--no-cache-dir", "-q", BINDING],
        _clean_env(),
    )
    _check_installed(venv, tmp_path)


def _backend(hook: str, *args: str) -> str:
    code = (
        "import sys; sys.path.insert(0, '_build_backend'); import cuabi_build; "
        f"print(cuabi_build.{hook}(*sys.argv[1:]))"
    )
    env = _clean_env()
    env["CUABI_LIBRARY"] = os.path.realpath(cuabi.find_library())
    return _run([sys.executable, "-c", code, *args], env, cwd=BINDING).stdout.strip()


def test_wheel_record_is_complete_and_correct(tmp_path):
    name = _backend("build_wheel", str(tmp_path))
    assert name.startswith(f"cuabi-{VERSION}-py3-none-") and name.endswith(".whl")
    with zipfile.ZipFile(tmp_path / name) as whl:
        names = set(whl.namelist())
        assert {
            "cuabi/__init__.py",
            "cuabi/libcuabi.so",
            "cuabi/include/cuabi/cuabi.h",
        } <= names
        record = whl.read(f"cuabi-{VERSION}.dist-info/RECORD").decode().splitlines()
        listed = {}
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed[path] = (digest, size)
        assert set(listed) == names
        for path, (digest, size) in listed.items():
            if path.endswith("RECORD"):
                continue
            data = whl.read(path)
            want = (
                base64.urlsafe_b64encode(hashlib.sha256(data).digest())
                .rstrip(b"=")
                .decode()
            )
            assert digest == f"sha256={want}" and int(size) == len(data), path
        wheel = whl.read(f"cuabi-{VERSION}.dist-info/WHEEL").decode()
        assert "Root-Is-Purelib: false" in wheel
        metadata = whl.read(f"cuabi-{VERSION}.dist-info/METADATA").decode()
        assert "Name: cuabi" in metadata and f"Version: {VERSION}" in metadata
        assert 'Requires-Dist: cffi>=1.15; extra == "cffi"' in metadata
        assert "Requires-Dist: numpy\n" not in metadata  # no hard dependency
    # the header shipped is the repository's
    with zipfile.ZipFile(tmp_path / name) as whl:
        with open(os.path.join(ROOT, "include", "cuabi", "cuabi.h"), "rb") as f:
            assert whl.read("cuabi/include/cuabi/cuabi.h") == f.read()


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_sdist_carries_the_core_and_installs(venv, tmp_path):
    name = _backend("build_sdist", str(tmp_path))
    assert name == f"cuabi-{VERSION}.tar.gz"
    with tarfile.open(tmp_path / name) as tar:
        members = set(tar.getnames())
        base = f"cuabi-{VERSION}"
        assert f"{base}/core/CMakeLists.txt" in members
        assert f"{base}/core/include/cuabi/cuabi.h" in members
        assert f"{base}/_build_backend/cuabi_build.py" in members
        assert f"{base}/PKG-INFO" in members
    _run(
        [
            venv,
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-cache-dir",
            "-q",
            str(tmp_path / name),
        ],
        _clean_env(),
    )
    _check_installed(venv, tmp_path)


def test_editable_install_runs_from_the_source_tree(venv, tmp_path):
    pkg = os.path.join(BINDING, "cuabi")
    made = [
        p
        for p in (os.path.join(pkg, "libcuabi.so"), os.path.join(pkg, "include"))
        if not os.path.exists(p)
    ]
    env = _clean_env()
    env["CUABI_LIBRARY"] = os.path.realpath(cuabi.find_library())
    try:
        _run(
            [
                venv,
                "-m",
                "pip",
                "install",
                "--no-index",
                "--no-cache-dir",
                "-q",
                "-e",
                BINDING,
            ],
            env,
        )
        out = _run([venv, "-c", CHECK], _clean_env(), cwd=str(tmp_path)).stdout
        assert f"FILE {os.path.join(pkg, '__init__.py')}" in out
        assert f"LIB {os.path.join(pkg, 'libcuabi.so')}" in out
        assert "PTX True" in out
        assert "BACKEND ctypes" in out
    finally:
        for path in made:  # leave the source tree as it was
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.remove(path)
