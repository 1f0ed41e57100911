"""The compile cache's folder as the core reports and clears it, through
each backend (the generated library functions cache_dir, cache_state,
cache_usage and cache_clear), and ``python -m cuabi``'s report and ``--clear-cache`` built on
it. Each test points CUABI_CACHE_DIR at a folder of its own; no GPU."""

from __future__ import annotations

import io
import os

import pytest

import cuabi
from cuabi import __main__ as tool
from cuabi import _objects as _cache
from cuabi._api import CacheState

ENTRY_A = "a" * 64 + ".cubin-cache"
ENTRY_B = "0" * 64 + ".cubin-cache"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    for name in ("CUABI_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "cache"
    monkeypatch.setenv("CUABI_CACHE_DIR", str(folder))
    return folder


def fill(folder) -> None:
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    (folder / ENTRY_A).write_bytes(b"x" * 1000)
    (folder / ENTRY_B).write_bytes(b"x" * 24)
    (folder / ".tmp-0123-abcdef").write_bytes(b"x" * 500)
    (folder / "notes.txt").write_text("keep")
    (folder / ("A" * 64 + ".cubin-cache")).write_text("not lower-case hex: no entry")


def test_folder_state_and_usage(backend, cache, monkeypatch, tmp_path):
    assert _cache.cache_dir(backend) == str(cache)
    assert _cache.cache_state(backend) is CacheState.NOT_CREATED
    assert _cache.cache_usage(backend) == (0, 0)
    assert not cache.exists(), "asking about the folder created it"
    fill(cache)
    assert _cache.cache_state(backend) is CacheState.IN_USE
    assert _cache.cache_usage(backend) == (2, 1024)
    monkeypatch.setenv("CUABI_CACHE", "off")
    assert _cache.cache_state(backend) is CacheState.OFF
    monkeypatch.delenv("CUABI_CACHE")
    os.chmod(cache, 0o777)
    assert _cache.cache_state(backend) is CacheState.WRITABLE_BY_OTHERS
    monkeypatch.delenv("CUABI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_dir(backend) == str(tmp_path / "xdg" / "cuabi")


def test_clear_removes_entries_and_unfinished_writes(backend, cache):
    assert _cache.cache_clear(backend) == (0, 0)
    assert not cache.exists()
    fill(cache)
    assert _cache.cache_clear(backend) == (2, 1024)
    assert sorted(os.listdir(cache)) == ["A" * 64 + ".cubin-cache", "notes.txt"]
    assert _cache.cache_usage(backend) == (0, 0)


def test_clear_refuses_a_folder_others_can_write(backend, cache):
    fill(cache)
    os.chmod(cache, 0o777)
    with pytest.raises(cuabi.FileIOError) as info:
        _cache.cache_clear(backend)
    assert f"not clearing {cache}: writable by others" in info.value.message
    assert (cache / ENTRY_A).exists()


def test_the_report_and_clear_cache_use_the_core(cache, monkeypatch):
    fill(cache)
    assert tool.cache_report() == [f"cache: {cache}", "  entries: 2, 1.0 KiB"]
    monkeypatch.setenv("CUABI_CACHE", "0")
    assert tool.cache_report()[0] == f"cache: {cache} (off: CUABI_CACHE=0)"
    monkeypatch.delenv("CUABI_CACHE")
    out = io.StringIO()
    assert tool.clear_cache(out) == 0
    assert out.getvalue() == f"cleared {cache}: removed 2 entries, 1.0 KiB\n"
    os.chmod(cache, 0o777)
    assert tool.cache_report()[0] == f"cache: {cache} (not used: writable by others)"
    out = io.StringIO()
    assert tool.clear_cache(out) == 1
    assert f"not clearing {cache}: writable by others" in out.getvalue()
    monkeypatch.setenv("CUABI_CACHE_DIR", str(cache / "absent"))
    assert tool.cache_report() == [
        f"cache: {cache / 'absent'} (not created yet)",
        "  entries: 0, 0 bytes",
    ]


def test_version_prints_the_package_and_the_core(capsys):
    """``python -m cuabi --version``, as ``cuabi --version``: the package's
    version, then the loaded core's with its path; exit 0."""
    from cuabi._loader import load_backend

    assert tool.main(["--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"cuabi {cuabi.__version__} (Python package)"
    assert lines[1] == f"libcuabi {cuabi.version_string()} ({load_backend(None).path})"
    assert tool.main(["-V"]) == 0
    assert "--version" in tool.USAGE
