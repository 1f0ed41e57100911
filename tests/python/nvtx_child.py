"""NVTX annotations through the Python binding, recorded by the test NVTX tool
(tests/nvtx/record_nvtx.c). Run by test_nvtx.py in a process of its own, once
per backend, because NVTX reads NVTX_INJECTION64_PATH at the process's first
annotation:

    NVTX_INJECTION64_PATH=TOOL CUABI_NVTX_RECORD=FILE CUABI_BACKEND=ctypes \\
        python nvtx_child.py

It makes the annotations of EXPECTED below (the parent compares what the tool
recorded) and checks the refusals itself: each an InvalidArgumentError with
the core's words (capi/core/nvtx.cpp). Prints one line per failed check and
exits 1 when there is one, 2 when it cannot start.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, List

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bindings", "python")
if os.environ.get("CUABI_TEST_INSTALLED") != "1" and BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import cuabi  # noqa: E402

THREADS = 4

# What the tool records, in order. The lines between the marks "threads" and
# "threads done" come from THREADS threads at once: compared as a multiset.
EXPECTED = [
    # nested scopes: the default domain ("-"), a named one created at its first use, colours
    "push - - outer",
    "create py.test",
    "push py.test ff00ff00 inner",
    "mark py.test - tick",
    "pop py.test",
    "pop -",
    # an exception leaving a scope closes it
    "push py.test - raises",
    "pop py.test",
    # str and bytes messages (UTF-8)
    "push - - bytes",
    "push - - π step",
    "pop -",
    "pop -",
    # the decorator: around each call, recursion included; an exception leaving it
    "push - 80102030 work",
    "push - 80102030 work",
    "pop -",
    "pop -",
    "push - 80102030 work",
    "pop -",
    "push py.test - fails",
    "pop py.test",
    # the same decorated function on several threads at once
    "mark - - threads",
    "create py.threads",
    *["push py.threads - threaded"] * THREADS,
    *["pop py.threads"] * THREADS,
    "mark - - threads done",
    # ranges started on one thread and ended on another
    "start py.test ff0000ff async",
    "end py.test",
    "start - - from a thread",
    "end -",
    # the range a scope opened popped behind its back: the exit reports it
    "push py.test - popped",
    "pop py.test",
    "push py.test - popped under an exception",
    "pop py.test",
    # the free functions, in C's order
    "push py.test 000000ff free",
    "pop py.test",
    # a second domain, used twice: created once
    "create py.other",
    "mark py.other - once",
    "mark py.other - twice",
]

failures: List[str] = []


def check(cond: bool, what: str) -> None:
    if not cond:
        failures.append(what)


def refused(call: Callable[[], Any], needle: str, what: str) -> None:
    """``call()`` raises InvalidArgumentError whose message has ``needle``."""
    try:
        call()
    except cuabi.InvalidArgumentError as exc:
        check(needle in exc.message, f"{what}: message {exc.message!r} lacks {needle!r}")
        check(exc.status == cuabi.capi.CUABI_ERROR_INVALID_ARGUMENT, f"{what}: status {exc.name}")
    except Exception as exc:  # noqa: BLE001 (reported as a failed check)
        failures.append(f"{what}: raised {type(exc).__name__}: {exc}, not InvalidArgumentError")
    else:
        failures.append(f"{what}: no exception; wanted one naming {needle!r}")


def scenario() -> None:
    nvtx_range = cuabi.nvtx_range

    # Nested scopes, domains and colours.
    with nvtx_range("outer") as outer:
        check(isinstance(outer, nvtx_range), "__enter__ answers the scope")
        with nvtx_range("inner", "py.test", 0xFF00FF00):
            cuabi.nvtx_mark("py.test", "tick", 0)

    # An exception leaving a scope: the range is closed, the exception goes on
    # unchanged (the pop succeeded: no note).
    try:
        with nvtx_range("raises", domain="py.test"):
            raise KeyError("leaves the scope")
    except KeyError as exc:
        check(not getattr(exc, "__notes__", None), f"a note on a clean exit: {exc!r}")
    else:
        failures.append("the KeyError did not leave the scope")

    with nvtx_range(b"bytes"), nvtx_range("π step"):
        pass

    # The decorator: around each call; re-entrant (recursion), and the
    # function's name and docstring kept.
    @nvtx_range("work", argb=0x80102030)
    def work(n: int) -> int:
        """Counts down."""
        return work(n - 1) + 1 if n else 0

    check(work(1) == 1, "the decorated function's result")
    check(work(0) == 0, "the decorated function's result")
    check(work.__name__ == "work" and work.__doc__ == "Counts down.", "functools.wraps")

    @nvtx_range("fails", "py.test")
    def fails() -> None:
        raise ValueError("from the decorated function")

    try:
        fails()
    except ValueError:
        pass
    else:
        failures.append("the decorated function's ValueError was lost")

    # One decorated function, one scope instance, on several threads at once:
    # every thread's range is open together, each closed on its own thread.
    barrier = threading.Barrier(THREADS)
    errors: List[BaseException] = []

    @nvtx_range("threaded", domain="py.threads")
    def threaded() -> None:
        barrier.wait(timeout=30)

    def run() -> None:
        try:
            threaded()
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    cuabi.nvtx_mark(None, "threads", 0)
    workers = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    cuabi.nvtx_mark(None, "threads done", 0)
    check(not errors, f"the threads raised: {errors!r}")

    # Started ranges end on any thread, once.
    rid = cuabi.nvtx_range_start("py.test", "async", 0xFF0000FF)
    check(isinstance(rid, int) and rid != 0, f"range id {rid!r}")
    ender = threading.Thread(target=cuabi.nvtx_range_end, args=(rid,))
    ender.start()
    ender.join()
    refused(lambda: cuabi.nvtx_range_end(rid), f"range {rid} is not open", "end twice")
    started: List[int] = []
    starter = threading.Thread(
        target=lambda: started.append(cuabi.nvtx_range_start(None, "from a thread", 0))
    )
    starter.start()
    starter.join()
    check(len(started) == 1, "the thread started no range")
    for r in started:
        cuabi.nvtx_range_end(r)

    # Closing fails: raised when nothing else leaves the scope ...
    def popped() -> None:
        with nvtx_range("popped", "py.test"):
            cuabi.nvtx_range_pop("py.test")

    refused(popped, "no range of domain 'py.test' is open on this thread", "exit after a pop")

    # ... else noted on the exception leaving it, which goes on.
    try:
        with nvtx_range("popped under an exception", "py.test"):
            cuabi.nvtx_range_pop("py.test")
            raise KeyError("the body's own")
    except KeyError as exc:
        if sys.version_info >= (3, 11):
            notes = getattr(exc, "__notes__", [])
            check(
                len(notes) == 1 and "cuabi_nvtx_range_pop failed" in notes[0]
                and "no range of domain 'py.test' is open on this thread" in notes[0],
                f"the note on the leaving exception: {notes!r}",
            )
    except Exception as exc:  # noqa: BLE001
        failures.append(f"the pop's failure replaced the body's exception: {exc!r}")

    # The free functions take C's order.
    cuabi.nvtx_range_push("py.test", "free", 0xFF)
    cuabi.nvtx_range_pop("py.test")

    # Refusals, none recorded.
    refused(lambda: cuabi.nvtx_range_pop("py.test"),
            "no range of domain 'py.test' is open on this thread", "pop with none open")
    refused(lambda: cuabi.nvtx_range_pop(),
            "no range of NVTX's default domain is open on this thread", "pop default")
    refused(lambda: cuabi.nvtx_range_end(0), "range 0 is not open", "end 0")
    refused(lambda: cuabi.nvtx_range_end(12345678), "range 12345678 is not open", "end unknown")

    def empty_domain_scope() -> None:
        with nvtx_range("x", ""):
            failures.append("the body of a refused scope ran")

    refused(empty_domain_scope, "domain is an empty name", "scope with an empty domain")
    refused(lambda: cuabi.nvtx_mark("", "x", 0), "domain is an empty name", "mark, empty domain")
    refused(lambda: cuabi.nvtx_range_start("", "x", 0), "domain is an empty name",
            "start, empty domain")
    refused(lambda: nvtx_range("x", argb=-1).__enter__(), "argb = -1 is out of range",
            "a negative colour")
    refused(lambda: cuabi.nvtx_mark(None, "a\0b", 0), "message", "a NUL in the message")
    try:
        with nvtx_range(None):  # type: ignore[arg-type]
            pass
    except TypeError as exc:
        check("message must be str or bytes" in str(exc), f"None message: {exc}")
    else:
        failures.append("a None message was taken")

    cuabi.nvtx_mark("py.other", "once", 0)
    cuabi.nvtx_mark("py.other", "twice", 0)


def main() -> int:
    backend = (os.environ.get("CUABI_BACKEND") or "ctypes").strip().lower()
    if cuabi.get_backend().name != backend:
        print(f"the default backend is {cuabi.get_backend().name}, not {backend}")
        return 2
    if not os.environ.get("NVTX_INJECTION64_PATH") or not os.environ.get("CUABI_NVTX_RECORD"):
        print("NVTX_INJECTION64_PATH and CUABI_NVTX_RECORD must be set")
        return 2
    scenario()
    for f in failures:
        print(f"FAILED: {f}")
    if not failures:
        print(f"nvtx (Python {backend}): every annotation made, every refusal as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
