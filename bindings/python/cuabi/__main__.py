"""``python -m cuabi``: what cuabi finds on this machine.

    python -m cuabi                 the report: the library, the CUDA driver,
                                    NVRTC, every device, the compile cache
    python -m cuabi --clear-cache   removes every entry of the compile cache
    python -m cuabi --version       the package's version and the core's (libcuabi)

The report is the one the C program ``cuabi`` prints (``capi/tools/cuabi_info.c``),
line for line, plus ``python:`` lines naming this package, its backend, and
the compiled module (cuabi._cuabi_cffi): in use, present but not used and
why, or absent.
Exit status: 0 when the driver and NVRTC load and at least one device is
listed; 1 when any of them is missing (the report says why, with every path
tried) or libcuabi itself cannot be loaded; 2 for a usage error.
``--clear-cache``: 0 when every entry is gone, 1 otherwise.

The compile cache's folder, its state and its entries come from the core
(``cuabi_cache_get_dir``, ``_get_state``, ``_get_usage``,
``cuabi_cache_clear``), which applies the rules of ``cuabi_module_compile``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import List, Optional, Sequence, TextIO

USAGE = """\
usage: python -m cuabi [--clear-cache | --version | --help]

Reports what cuabi finds: the library, the CUDA driver, NVRTC, every device
(name, compute capability, memory) and the compile cache (folder, size,
entries). Exit status 0 when the driver and NVRTC load and a device is
found, 1 when one of them is missing (with the reason and every path
tried), 2 for a usage error.

  --clear-cache   remove every entry of the compile cache
  --version       print the package's and the core's versions and exit
  --help          this text
"""

_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


def human_size(n: int) -> str:
    """``"512 bytes"``, ``"1.5 KiB"``, ``"79.2 GiB"`` (as the C program writes them)."""
    if n < 1024:
        return f"{n} bytes"
    value = n / 1024.0
    unit = 0
    while value >= 1024.0 and unit + 1 < len(_UNITS):
        value /= 1024.0
        unit += 1
    return f"{value:.1f} {_UNITS[unit]}"


def _indented(text: str, indent: int) -> List[str]:
    return [" " * indent + line for line in text.split("\n") if line]


# ---------------------------------------------------------------------------
# The compile cache
# ---------------------------------------------------------------------------

# Why compiles do not use the folder, as the report words it.
_NOT_USED = {
    "NOT_A_FOLDER": "not a folder",
    "OWNED_BY_OTHERS": "owned by another user",
    "WRITABLE_BY_OTHERS": "writable by others",
    "UNREADABLE": "cannot be read",
}


def cache_report() -> List[str]:
    import cuabi
    from cuabi import _api, _errors, _objects

    try:
        folder = _objects.cache_dir()
    except _errors.NotFoundError:
        return ["cache: none (no home folder; set CUABI_CACHE_DIR)"]
    except cuabi.CudaError as exc:
        return [f"cache: not available ({exc.name})"] + _indented(exc.message, 2)
    state = _objects.cache_state()
    if state == _api.CacheState.OFF:
        lines = [f"cache: {folder} (off: CUABI_CACHE={os.environ.get('CUABI_CACHE')})"]
    elif state.name in _NOT_USED:
        lines = [f"cache: {folder} (not used: {_NOT_USED[state.name]})"]
    elif state == _api.CacheState.NOT_CREATED:
        lines = [f"cache: {folder} (not created yet)"]
    else:
        lines = [f"cache: {folder}"]
    try:
        entries, size = _objects.cache_usage()
    except cuabi.CudaError as exc:
        return lines + [f"  entries: unknown ({exc.message})"]
    return lines + [f"  entries: {entries}, {human_size(size)}"]


def clear_cache(out: TextIO) -> int:
    """Removes every entry (and unfinished write) of the cache; 0 when done."""
    try:
        import cuabi
        from cuabi import _errors, _objects
    except ImportError as exc:  # pragma: no cover - a broken installation
        print(f"cuabi: the package cannot be imported: {exc}", file=out)
        return 1
    try:
        folder = _objects.cache_dir()
        removed, size = _objects.cache_clear()
    except _errors.NotFoundError:
        print("cuabi: no cache folder (no home folder; set CUABI_CACHE_DIR)", file=out)
        return 1
    except cuabi.CudaError as exc:
        print(f"cuabi: {exc.message}", file=out)
        return 1
    except OSError as exc:  # libcuabi cannot be loaded
        print(f"cuabi: not available: {exc}", file=out)
        return 1
    noun = "entry" if removed == 1 else "entries"
    print(f"cleared {folder}: removed {removed} {noun}, {human_size(size)}", file=out)
    return 0


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def library_file(path: str) -> str:
    """The file the loaded libcuabi came from (links resolved), as the
    dynamic loader knows it; ``path`` is what the backend opened."""
    try:
        lib = ctypes.CDLL(path)  # the library already loaded: the same handle
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        info = _DlInfo()
        address = ctypes.cast(lib.cuabi_version, ctypes.c_void_p).value
        if dladdr(address, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    except (OSError, AttributeError):
        pass
    return os.path.realpath(path) if os.sep in path else path


def compiled_line(backend: object) -> str:
    """What the report says of the compiled module (cuabi._cuabi_cffi):
    the file in use, or where it is and why it is not used, or that the
    installation has none."""
    from cuabi import _loader  # as report() imports the package: inside, guarded

    path, why = _loader.compiled_status()
    if path:
        return f"compiled module {path} (in use)"
    found = _loader.compiled_module_candidates(getattr(backend, "path", ""))
    if found:
        return f"compiled module {found[0]} (not used: {why})"
    return f"compiled module: none ({why})"


def report(out: TextIO) -> int:
    """Prints the report; returns the exit status."""
    try:
        import cuabi
    except ImportError as exc:  # pragma: no cover - a broken installation
        print(f"cuabi: the package cannot be imported: {exc}", file=out)
        return 1
    try:
        backend = cuabi.get_backend()
    except (OSError, ImportError) as exc:
        print("cuabi: not available", file=out)
        for line in _indented(str(exc), 2):
            print(line, file=out)
        return 1

    ok = True
    lines = [
        f"cuabi {cuabi.version_string()}",
        f"  library: {library_file(backend.path)}",
        f"  python: cuabi {cuabi.__version__} ({backend.name} backend) at "
        f"{os.path.dirname(os.path.abspath(cuabi.__file__))}",
        f"  python: {compiled_line(backend)}",
    ]
    def failure(what: str, exc: "cuabi.CudaError", indent: int = 0) -> None:
        lines.append(f"{' ' * indent}{what}: not available ({exc.name})")
        lines.extend(_indented(exc.message, indent + 2))

    driver = False
    try:
        cuabi.init()
        version = cuabi.driver_version()
        lines.append(f"driver: CUDA {version // 1000}.{version % 1000 // 10} ({version})")
        try:
            lines.append(f"  path: {cuabi.driver_path()}")
        except cuabi.CudaError:
            lines.append("  path: unknown")
        driver = True
    except cuabi.CudaError as exc:
        failure("driver", exc)
        ok = False

    try:
        major, minor = cuabi.nvrtc_version()
        lines.append(f"nvrtc: {major}.{minor}")
        try:
            lines.append(f"  path: {cuabi.nvrtc_path()}")
        except cuabi.CudaError:
            lines.append("  path: unknown")
    except cuabi.CudaError as exc:
        failure("nvrtc", exc)
        ok = False

    if not driver:
        lines.append("devices: unknown (no driver)")
    else:
        try:
            count = cuabi.device_count()
        except cuabi.CudaError as exc:
            failure("devices", exc)
            count = -1
            ok = False
        if count >= 0:
            lines.append(f"devices: {count}")
            ok = ok and count > 0
        for ordinal in range(count):
            try:
                with cuabi.Device(ordinal) as device:
                    name = device.name
                    major, minor = device.compute_capability
                    free, total = device.memory_info
                lines.append(
                    f"  {ordinal}: {name}, compute capability {major}.{minor}, "
                    f"memory {human_size(total)} total, {human_size(free)} free"
                )
            except cuabi.CudaError as exc:
                failure(str(ordinal), exc, indent=2)
                ok = False

    lines.extend(cache_report())
    for line in lines:
        print(line, file=out)
    return 0 if ok else 1


def print_version(out: TextIO) -> int:
    """``--version``: the package's version, then the core's (the libcuabi
    this package loads, and where), as ``cuabi --version`` prints the C
    program's; 1 when the library cannot be loaded (the reason instead)."""
    from cuabi import _api, _loader, _objects

    print(f"cuabi {_api.CUABI_VERSION_STRING} (Python package)", file=out)
    try:
        backend = _loader.load_backend(None)
        core = _objects.version_string(backend)
    except Exception as exc:  # the reason is the answer
        print(f"libcuabi: not loaded: {exc}", file=out)
        return 1
    print(f"libcuabi {core} ({backend.path})", file=out)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    clear = False
    for arg in args:
        if arg == "--clear-cache":
            clear = True
        elif arg in ("--version", "-V"):
            return print_version(sys.stdout)
        elif arg in ("--help", "-h"):
            sys.stdout.write(USAGE)
            return 0
        else:
            sys.stderr.write(f"cuabi: unknown argument '{arg}'\n{USAGE}")
            return 2
    if clear:
        return clear_cache(sys.stdout)
    return report(sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
