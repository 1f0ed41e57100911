"""Shared set-up for the Python binding's tests.

The package is imported from ``bindings/python`` (the source tree) unless
``CUABI_TEST_INSTALLED=1`` asks for the installed one. The library is
``$CUABI_LIBRARY`` (run-tests.sh sets it) or the source checkout's
``build/libcuabi.so``; if neither loads, the tests fail with the list of paths
tried rather than skipping.

GPU tests carry ``@pytest.mark.gpu`` (or use the ``device`` fixture) and are
skipped, with the reason, where no CUDA device is usable.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterator, List, Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINDING = os.path.join(ROOT, "bindings", "python")
EXAMPLES = os.path.join(ROOT, "examples", "python")

if os.environ.get("CUABI_TEST_INSTALLED") != "1" and BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import cuabi  # noqa: E402
from cuabi import _loader  # noqa: E402


def have_cffi() -> bool:
    try:
        import cffi  # noqa: F401
    except ImportError:
        return False
    return True


_compiled_reason: Optional[str] = None
_compiled_checked = False


def no_compiled_reason() -> Optional[str]:
    """None when the compiled backend (cuabi._cuabi_cffi) loads, else why
    not (for skip messages)."""
    global _compiled_reason, _compiled_checked
    if not _compiled_checked:
        _compiled_checked = True
        try:
            _loader.load_backend("compiled")
        except (ImportError, OSError) as exc:
            _compiled_reason = f"the compiled backend is not available: {exc}"
    return _compiled_reason


_device_reason: Optional[str] = None
_device_checked = False


def no_device_reason() -> Optional[str]:
    """None when a CUDA device is usable, else why not (for skip messages)."""
    global _device_reason, _device_checked
    if not _device_checked:
        _device_checked = True
        try:
            count = cuabi.device_count(backend="ctypes")
        except cuabi.CudaError as exc:
            detail = " ".join(exc.message.split())
            if len(detail) > 160:
                detail = detail[:157] + "..."
            _device_reason = f"no CUDA device ({exc.name}: {detail})"
        else:
            if count == 0:
                _device_reason = "no CUDA device (the driver reports 0 devices)"
    return _device_reason


_SUMMARY_LINES = pytest.StashKey[Dict[str, List[str]]]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.stash[_SUMMARY_LINES] = {}


def pytest_terminal_summary(
    terminalreporter, exitstatus, config: pytest.Config
) -> None:
    """Shows the lines tests recorded with ``summary_line`` (the bad-input
    corpus's counts, what a GPU fault test saw), whatever pytest's output
    capture, under a heading per section."""
    for section, lines in config.stash.get(_SUMMARY_LINES, {}).items():
        terminalreporter.section(section)
        for line in lines:
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(config: pytest.Config, items) -> None:
    reason = None
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            if reason is None:
                reason = no_device_reason() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


def pytest_report_header(config: pytest.Config) -> str:
    try:
        lib = cuabi.find_library()
    except Exception as exc:  # reported again, as failures, by the tests
        lib = f"NOT LOADABLE: {exc}"
    return (
        f"cuabi package: {os.path.dirname(cuabi.__file__)}\n"
        f"libcuabi: {lib}\n"
        f"cffi: {'yes' if have_cffi() else 'no'}; "
        f"compiled: {no_compiled_reason() or 'yes'}; device: {no_device_reason() or 'yes'}"
    )


BACKEND_PARAMS = [
    "ctypes",
    pytest.param(
        "cffi",
        marks=pytest.mark.skipif(
            not have_cffi(), reason="cffi is not installed (pip install cffi)"
        ),
    ),
    pytest.param(
        "compiled",
        marks=pytest.mark.skipif(
            no_compiled_reason() is not None, reason=str(no_compiled_reason())
        ),
    ),
]


@pytest.fixture(params=BACKEND_PARAMS)
def backend(request) -> _loader.Backend:
    """Each backend in turn (cffi and compiled skipped, with the reason,
    where they are missing)."""
    return _loader.load_backend(request.param)


@pytest.fixture
def default_backend() -> _loader.Backend:
    """The backend objects use when none is named: ``$CUABI_BACKEND``, else
    the compiled one where it loads, else ctypes. Skips, with the reason,
    where it is cffi and cffi is missing (a CUABI_BACKEND=compiled that
    cannot load fails)."""
    name = (os.environ.get("CUABI_BACKEND") or "auto").strip().lower()
    if name == "cffi" and not have_cffi():
        pytest.skip("CUABI_BACKEND=cffi but cffi is not installed (pip install cffi)")
    return _loader.load_backend(name)


@pytest.fixture
def summary_line(request) -> Callable[..., None]:
    """``summary_line(text, section="bad-input corpus")`` prints ``text`` at
    the end of the session, under the heading ``section``."""
    sections = request.config.stash[_SUMMARY_LINES]

    def add(text: str, section: str = "bad-input corpus") -> None:
        sections.setdefault(section, []).append(text)

    return add


@pytest.fixture
def use_each_backend(backend) -> Iterator[_loader.Backend]:
    """Makes each backend the default for the objects the test creates."""
    with cuabi.use_backend(backend):
        yield backend


@pytest.fixture
def device(backend) -> Iterator["cuabi.Device"]:
    """Device 0 through each backend; skips where there is no device."""
    reason = no_device_reason()
    if reason:
        pytest.skip(reason)
    with cuabi.Device(0, backend=backend) as dev:
        yield dev


@pytest.fixture
def device_ctypes() -> Iterator["cuabi.Device"]:
    reason = no_device_reason()
    if reason:
        pytest.skip(reason)
    with cuabi.Device(0, backend="ctypes") as dev:
        yield dev


@pytest.fixture
def subprocess_env() -> dict:
    """The environment for a child Python that imports this same cuabi."""
    env = dict(os.environ)
    if os.environ.get("CUABI_TEST_INSTALLED") != "1":
        env["PYTHONPATH"] = BINDING + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("CUABI_LIBRARY", cuabi.find_library())
    return env
