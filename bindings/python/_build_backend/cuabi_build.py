"""The PEP 517 / PEP 660 build backend of the cuabi Python package.

Standard library only, so ``pip install bindings/python`` works offline in a
fresh virtual environment (``[build-system] requires = []``). The wheel holds
the ``cuabi`` package, ``libcuabi.so`` inside it, and the header (the cffi
backend builds its declarations from it).

Where the library comes from:

* ``$CUABI_LIBRARY`` at build time: that file is bundled as it is;
* otherwise CMake builds it from the core sources: the repository two levels
  up (``bindings/python`` -> root), or the ``core/`` folder of an sdist.
  ``$CUABI_CMAKE_ARGS`` adds arguments to the configure step and
  ``$CUABI_BUILD_DIR`` keeps the build folder (default: a temporary one).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from typing import Dict, Iterable, List, Optional, Tuple

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bindings/python
PACKAGE = "cuabi"

if sys.platform == "win32":
    LIB_NAME = "cuabi.dll"
elif sys.platform == "darwin":
    LIB_NAME = "libcuabi.dylib"
else:
    LIB_NAME = "libcuabi.so"

# What an sdist carries of the core, relative to the repository root.
CORE_PATHS = ("CMakeLists.txt", "capi", "include", "cmake", "LICENSE", "README.md")


# ---------------------------------------------------------------------------
# Metadata from pyproject.toml
# ---------------------------------------------------------------------------


def _read_pyproject() -> Dict[str, object]:
    path = os.path.join(HERE, "pyproject.toml")
    with open(path, "rb") as f:
        data = f.read()
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        return _mini_toml(data.decode("utf-8"))
    return tomllib.loads(data.decode("utf-8"))


def _mini_toml(text: str) -> Dict[str, object]:
    """Enough TOML for our own pyproject.toml on Python < 3.11: tables,
    ``key = "string"`` and ``key = ["list", "of strings"]`` (one line)."""
    root: Dict[str, object] = {}
    table: Dict[str, object] = root
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\[([\w.\-]+)\]", line)
        if m:
            table = root
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})  # type: ignore[assignment]
            continue
        key, _, value = line.partition("=")
        key, value = key.strip().strip('"'), value.strip()
        if value.startswith("["):
            table[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith('"'):
            table[key] = value.strip('"')
        elif value in ("true", "false"):
            table[key] = value == "true"
    return root


def _project() -> Dict[str, object]:
    project = _read_pyproject().get("project", {})
    assert isinstance(project, dict)
    return project


def _name_version() -> Tuple[str, str]:
    p = _project()
    return str(p["name"]), str(p["version"])


def _metadata_text() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
    ]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    license_ = p.get("license")
    if isinstance(license_, dict) and license_.get("text"):
        lines.append(f"License: {license_['text']}")
    elif isinstance(license_, str):
        lines.append(f"License: {license_}")
    for dep in p.get("dependencies", []) or []:
        lines.append(f"Requires-Dist: {dep}")
    extras = p.get("optional-dependencies", {}) or {}
    assert isinstance(extras, dict)
    for extra, deps in extras.items():
        lines.append(f"Provides-Extra: {extra}")
        for dep in deps:
            lines.append(f'Requires-Dist: {dep}; extra == "{extra}"')
    body = ""
    readme = os.path.join(HERE, "README.md")
    if os.path.isfile(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _platform_tag() -> str:
    return re.sub(r"[^\w]", "_", sysconfig.get_platform())


def _wheel_text(tag: str) -> str:
    return (
        "Wheel-Version: 1.0\n"
        "Generator: cuabi_build\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n"
    )


def _dist_info() -> str:
    name, version = _name_version()
    return f"{name}-{version}.dist-info"


# ---------------------------------------------------------------------------
# The library
# ---------------------------------------------------------------------------


def _log(message: str) -> None:
    print(f"cuabi_build: {message}", file=sys.stderr, flush=True)


def _core_root() -> str:
    """The folder holding the core's CMakeLists.txt (an sdist's core/, or
    the repository two levels up)."""
    for root in (os.path.join(HERE, "core"), os.path.dirname(os.path.dirname(HERE))):
        if os.path.isfile(os.path.join(root, "CMakeLists.txt")) and os.path.isfile(
            os.path.join(root, "include", "cuabi", "cuabi.h")
        ):
            return root
    raise RuntimeError(
        "cuabi_build: the core sources are not here (expected the repository two levels "
        f"above {HERE}, or core/ in an sdist); set CUABI_LIBRARY to a built libcuabi.so"
    )


def _header_path() -> Optional[str]:
    try:
        path = os.path.join(_core_root(), "include", "cuabi", "cuabi.h")
    except RuntimeError:
        return None
    return path if os.path.isfile(path) else None


def _cmake_build(config_settings: Optional[dict]) -> Tuple[str, Optional[str]]:
    """Builds libcuabi with CMake; returns (library path, build dir to remove)."""
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError(
            "cuabi_build: cmake is not on PATH; install it, or set CUABI_LIBRARY to a built "
            "libcuabi.so to bundle that instead"
        )
    root = _core_root()
    settings = config_settings or {}
    build_dir = settings.get("build-dir") or os.environ.get("CUABI_BUILD_DIR")
    scratch = None
    if not build_dir:
        build_dir = scratch = tempfile.mkdtemp(prefix="cuabi-build-")
    configure = [cmake, "-S", root, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja") and not os.path.isfile(
        os.path.join(build_dir, "CMakeCache.txt")
    ):
        configure += ["-G", "Ninja"]
    configure += [
        "-DCUABI_BUILD_TESTS=OFF",
        "-DCUABI_BUILD_EXAMPLES=OFF",
        "-DCUABI_BINDING_TESTS=OFF",
        "-DCUABI_HEAVY_TESTS=OFF",
        "-DCUABI_WERROR=OFF",
    ]
    configure += shlex.split(os.environ.get("CUABI_CMAKE_ARGS", ""))
    extra = settings.get("cmake-args")
    if extra:
        configure += shlex.split(extra) if isinstance(extra, str) else list(extra)
    jobs = str(os.cpu_count() or 2)
    build = [cmake, "--build", build_dir, "--target", "cuabi", "-j", jobs]
    for cmd in (configure, build):
        _log(" ".join(cmd))
        done = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
        if done.returncode:
            raise RuntimeError(
                f"cuabi_build: {' '.join(cmd)} failed ({done.returncode})"
            )
    for candidate in (
        os.path.join(build_dir, LIB_NAME),
        os.path.join(build_dir, "Release", LIB_NAME),
    ):
        if os.path.exists(candidate):
            return os.path.realpath(candidate), scratch
    raise RuntimeError(f"cuabi_build: the build made no {LIB_NAME} in {build_dir}")


def _library(config_settings: Optional[dict]) -> Tuple[str, Optional[str]]:
    given = os.environ.get("CUABI_LIBRARY")
    if given:
        if not os.path.isfile(given):
            raise RuntimeError(f"cuabi_build: CUABI_LIBRARY={given} is not a file")
        _log(f"bundling {given} (CUABI_LIBRARY)")
        return os.path.realpath(given), None
    return _cmake_build(config_settings)


# ---------------------------------------------------------------------------
# Wheels
# ---------------------------------------------------------------------------


def _package_files() -> List[Tuple[str, str]]:
    """(path in the wheel, file on disk) of the Python package."""
    out = []
    pkg = os.path.join(HERE, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".py", ".typed")):
                full = os.path.join(dirpath, fn)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"), full))
    return out


class _WheelWriter:
    def __init__(self, path: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: List[str] = []

    def add(self, arcname: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(arcname, date_time=_zip_time())
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
        self.zip.writestr(info, data)
        digest = (
            base64.urlsafe_b64encode(hashlib.sha256(data).digest())
            .rstrip(b"=")
            .decode()
        )
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, dist_info: str) -> None:
        record = f"{dist_info}/RECORD"
        self.records.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=_zip_time())
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (0o644 | 0o100000) << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n")
        self.zip.close()


def _zip_time() -> Tuple[int, int, int, int, int, int]:
    epoch = int(
        os.environ.get("SOURCE_DATE_EPOCH", "315532800")
    )  # reproducible by default
    return time.gmtime(max(epoch, 315532800))[:6]


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write_metadata_dir(directory: str, tag: str) -> str:
    dist_info = _dist_info()
    target = os.path.join(directory, dist_info)
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata_text())
    with open(os.path.join(target, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_text(tag))
    return dist_info


def _build(
    wheel_directory: str,
    config_settings: Optional[dict],
    editable: bool,
) -> str:
    name, version = _name_version()
    tag = f"py3-none-{_platform_tag()}"
    filename = f"{name}-{version}-{tag}.whl"
    dist_info = _dist_info()
    lib, scratch = _library(config_settings)
    header = _header_path()
    try:
        os.makedirs(wheel_directory, exist_ok=True)
        path = os.path.join(wheel_directory, filename)
        w = _WheelWriter(path)
        if editable:
            # The package runs from the source folder: put the library and
            # the header next to its modules, and point sys.path there.
            pkg = os.path.join(HERE, PACKAGE)
            shutil.copyfile(lib, os.path.join(pkg, LIB_NAME))
            if header:
                os.makedirs(os.path.join(pkg, "include", "cuabi"), exist_ok=True)
                shutil.copyfile(
                    header, os.path.join(pkg, "include", "cuabi", "cuabi.h")
                )
            w.add(f"__editable__.{name}.pth", (HERE + "\n").encode("utf-8"))
        else:
            for arcname, full in _package_files():
                w.add(arcname, _read(full))
            w.add(f"{PACKAGE}/{LIB_NAME}", _read(lib), executable=True)
            if header:
                w.add(f"{PACKAGE}/include/cuabi/cuabi.h", _read(header))
        w.add(f"{dist_info}/METADATA", _metadata_text().encode("utf-8"))
        w.add(f"{dist_info}/WHEEL", _wheel_text(tag).encode("utf-8"))
        w.add(f"{dist_info}/top_level.txt", f"{PACKAGE}\n".encode("utf-8"))
        w.close(dist_info)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    _log(f"wrote {filename}")
    return filename


# ---------------------------------------------------------------------------
# PEP 517 / PEP 660 hooks
# ---------------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings=None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    return _write_metadata_dir(metadata_directory, f"py3-none-{_platform_tag()}")


def prepare_metadata_for_build_editable(
    metadata_directory, config_settings=None
) -> str:
    return _write_metadata_dir(metadata_directory, f"py3-none-{_platform_tag()}")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _build(wheel_directory, config_settings, editable=False)


def build_editable(
    wheel_directory, config_settings=None, metadata_directory=None
) -> str:
    return _build(wheel_directory, config_settings, editable=True)


def _sdist_members() -> Iterable[Tuple[str, str]]:
    """(name in the archive, file on disk)."""
    for rel in ("pyproject.toml", "README.md", "run-tests.sh"):
        full = os.path.join(HERE, rel)
        if os.path.isfile(full):
            yield rel, full
    for top in ("_build_backend", PACKAGE):
        for dirpath, dirnames, filenames in os.walk(os.path.join(HERE, top)):
            dirnames[:] = sorted(
                d for d in dirnames if d not in ("__pycache__", "include")
            )
            for fn in sorted(filenames):
                if fn.endswith((".py", ".typed")):
                    full = os.path.join(dirpath, fn)
                    yield os.path.relpath(full, HERE), full
    root = _core_root()
    for rel in CORE_PATHS:
        full = os.path.join(root, rel)
        if os.path.isfile(full):
            yield f"core/{rel}", full
        elif os.path.isdir(full):
            for dirpath, dirnames, filenames in os.walk(full):
                dirnames.sort()
                for fn in sorted(filenames):
                    path = os.path.join(dirpath, fn)
                    yield "core/" + os.path.relpath(path, root), path


def build_sdist(sdist_directory, config_settings=None) -> str:
    name, version = _name_version()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    with tarfile.open(
        os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT
    ) as tar:

        def add(arcname: str, data: bytes, mode: int = 0o644) -> None:
            info = tarfile.TarInfo(f"{base}/{arcname}".replace(os.sep, "/"))
            info.size = len(data)
            info.mode = mode
            info.mtime = mtime
            tar.addfile(info, io.BytesIO(data))

        for arcname, full in _sdist_members():
            mode = (
                0o755
                if os.access(full, os.X_OK) and not full.endswith(".py")
                else 0o644
            )
            add(arcname, _read(full), mode)
        add("PKG-INFO", _metadata_text().encode("utf-8"))
    return filename
