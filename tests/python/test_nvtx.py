"""NVTX through the Python binding: the scope cuabi.nvtx_range (a context
manager and a decorator, generated from the header's @scope), the free
functions, their refusals, as the test NVTX tool (tests/nvtx/record_nvtx.c)
records them, on each backend, in a child process (nvtx_child.py: NVTX reads
NVTX_INJECTION64_PATH at the process's first annotation). No GPU is needed.

The tool's path comes from $CUABI_TEST_NVTX_TOOL (set by the CTest
registration and by run-tests.sh from the library's build folder); without
it the test FAILS, saying so. The tests below the first need no tool.
"""

from __future__ import annotations

import collections
import inspect
import os
import subprocess
import sys

import pytest

import cuabi
from conftest import BACKEND_PARAMS

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "nvtx_child.py")

sys.path.insert(0, HERE)
from nvtx_child import EXPECTED  # noqa: E402


def _tool() -> str:
    path = os.environ.get("CUABI_TEST_NVTX_TOOL", "")
    if not path:
        pytest.fail(
            "CUABI_TEST_NVTX_TOOL is not set: it must name the test NVTX tool "
            "(libcuabi_record_nvtx.so, CMake target cuabi_record_nvtx, built in "
            "<build>/tests/nvtx/); CTest and run-tests.sh set it from the build folder"
        )
    if not os.path.isfile(path):
        pytest.fail(f"CUABI_TEST_NVTX_TOOL={path} does not exist (build cuabi_record_nvtx)")
    return os.path.abspath(path)


def _split(lines):
    """(the lines outside the threads' segment, the segment's as a multiset)."""
    try:
        a, b = lines.index("mark - - threads"), lines.index("mark - - threads done")
    except ValueError:
        return lines, collections.Counter()
    return lines[: a + 1] + lines[b:], collections.Counter(lines[a + 1 : b])


@pytest.mark.parametrize("backend_name", BACKEND_PARAMS)
def test_nvtx_recorded(backend_name, subprocess_env, tmp_path):
    """Nested scopes, an exception leaving one, the decorator (recursion,
    threads), domains and colours, marks, ranges started and ended on other
    threads, and the refusals (checked by the child) as the tool recorded them."""
    tool = _tool()
    record = tmp_path / "nvtx.txt"
    env = dict(
        subprocess_env,
        NVTX_INJECTION64_PATH=tool,
        CUABI_NVTX_RECORD=str(record),
        CUABI_BACKEND=backend_name,
    )
    done = subprocess.run(
        [sys.executable, CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    output = done.stdout + done.stderr
    if done.returncode < 0:
        pytest.fail(f"the NVTX child crashed (signal {-done.returncode}):\n{output}")
    assert done.returncode == 0, f"exit {done.returncode}:\n{output}"
    assert record.exists(), (
        f"the tool wrote no {record}: was NVTX_INJECTION64_PATH={tool} honoured?\n{output}"
    )
    got = record.read_text(encoding="utf-8").splitlines()
    got_lines, got_threads = _split(got)
    want_lines, want_threads = _split(EXPECTED)
    assert got_lines == want_lines, "\n".join(
        ["recorded (left) and expected (right):"]
        + [f"  {g!r:45} {w!r}" for g, w in zip(got_lines + [""] * 99, want_lines + [""] * 99)
           if g or w]
    )
    assert got_threads == want_threads


# -- no tool needed -------------------------------------------------------------


def test_scope_signature_is_python_order():
    """message first; domain None; argb 0; backend a keyword; the docstring
    says the order and the rule."""
    sig = inspect.signature(cuabi.nvtx_range)
    params = list(sig.parameters.values())
    assert [p.name for p in params] == ["message", "domain", "argb", "backend"]
    assert params[0].default is inspect.Parameter.empty
    assert params[1].default is None and params[2].default == 0
    assert params[3].kind is inspect.Parameter.KEYWORD_ONLY and params[3].default is None
    doc = " ".join((cuabi.nvtx_range.__doc__ or "").split())
    assert "message; domain=None (NVTX's default domain); argb=0" in doc
    assert "(in C: domain, message, argb)" in doc
    # The C order stays the free functions'.
    assert list(inspect.signature(cuabi.nvtx_range_push).parameters)[:3] == [
        "domain", "message", "argb"]


def test_scope_keeps_its_arguments():
    scope = cuabi.nvtx_range("step", "app", 0xFF00FF00)
    assert (scope.message, scope.domain, scope.argb) == ("step", "app", 0xFF00FF00)
    assert repr(scope) == "nvtx_range(message='step', domain='app', argb=4278255360)"


def test_refusals_in_process(backend):
    """The refusals need no tool: the core tracks ranges itself."""
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        cuabi.nvtx_range_pop("py.none", backend=backend)
    assert "no range of domain 'py.none' is open on this thread" in info.value.message
    with pytest.raises(cuabi.InvalidArgumentError, match="domain is an empty name"):
        with cuabi.nvtx_range("x", "", backend=backend):
            pytest.fail("the body of a refused scope ran")
    with pytest.raises(cuabi.InvalidArgumentError, match=r"range 0 is not open"):
        cuabi.nvtx_range_end(0, backend=backend)
    # A scope on an explicit backend opens and closes through it.
    with cuabi.nvtx_range("explicit", "py.inproc", backend=backend):
        pass
    with pytest.raises(cuabi.InvalidArgumentError):
        cuabi.nvtx_range_pop("py.inproc", backend=backend)
