"""Compiles and links in the background: one small executor shared by
``compile_async`` and ``link_async``.

NVRTC and the linkers take tens of milliseconds to seconds. Both backends
release the GIL for the whole foreign call (ctypes through ``CDLL``, cffi in
ABI mode), so Python threads keep running while the core works; what the
binding does in Python before and after the call (turning options into
strings, wrapping the handle) takes microseconds. A future's worker thread
spends its time in C, so a few threads serve many compiles.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Any, Callable, Optional, TypeVar

__all__ = ["submit", "executor", "MAX_WORKERS"]

T = TypeVar("T")

MAX_WORKERS = max(1, min(4, os.cpu_count() or 1))

_lock = threading.Lock()
_executor: Optional[concurrent.futures.ThreadPoolExecutor] = None


def executor() -> concurrent.futures.ThreadPoolExecutor:
    """The shared executor, made on first use (``MAX_WORKERS`` threads named
    ``cuabi-compile``)."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=MAX_WORKERS, thread_name_prefix="cuabi-compile"
            )
        return _executor


def submit(
    fn: Callable[..., T],
    *args: Any,
    on: Optional[concurrent.futures.Executor] = None,
) -> "concurrent.futures.Future[T]":
    """``fn(*args)`` on ``on`` (None: the shared executor)."""
    if on is None:
        return executor().submit(fn, *args)
    if not isinstance(on, concurrent.futures.Executor):
        raise TypeError(
            "executor must be a concurrent.futures.Executor or None, "
            f"not {type(on).__name__}"
        )
    return on.submit(fn, *args)


def _after_fork_in_child() -> None:
    """The parent's worker threads do not exist in a forked child: start afresh."""
    global _executor, _lock
    _executor = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
