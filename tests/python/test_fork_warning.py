"""A child forked after CUDA was initialised warns at once (no GPU needed: the
flag a successful Device() sets is set directly here)."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    pkg = os.path.join(os.path.dirname(os.path.dirname(here)), "bindings", "python")
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_child_forked_after_cuda_init_warns():
    done = _run("""
        import os, multiprocessing
        import cuabi
        from cuabi import _fork
        _fork.note_cuda_initialised()
        ctx = multiprocessing.get_context("fork")
        p = ctx.Process(target=lambda: None)
        p.start(); p.join()
        print("exit", p.exitcode)
        """)
    assert done.returncode == 0, done.stderr
    assert "exit 0" in done.stdout
    assert "forked after CUDA was initialised" in done.stderr
    assert "set_start_method('spawn')" in done.stderr


def test_no_warning_before_cuda_init():
    done = _run("""
        import os
        import cuabi
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("done")
        """)
    assert done.returncode == 0, done.stderr
    assert "forked after CUDA" not in done.stderr
