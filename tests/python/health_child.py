"""The driver's log, health and the context-lost handler through the Python
binding, against the stand-in driver of tests/fake/ (no GPU). Run by
test_health.py in a process of its own per case and backend (cuabi reads
CUABI_DRIVER_PATH once per process, and a lost context stays lost):

    CUABI_DRIVER_PATH=FAKE CUABI_NVRTC_PATH=FAKE CUABI_BACKEND=ctypes \\
        python health_child.py FAKE CASE

CASE is one of
  log           a failure's message ends with the lines the driver logged
                during it; driver_log_read(0) and (1), driver_log_dump; the
                core dump refusals
  nologs        a driver without a log (FAKE_CUDA_NO_LOGS=1): NotSupportedError
  lost          health usable, forked in a forked child, then lost after a
                sticky CUDA_ERROR_LAUNCH_FAILED; the handler called once with
                the message context_lost_message() gives; a handler registered
                after the loss called at once; a raising one reported, never
                raised
  lost_raising  the handler raises when the context is first lost: the failing
                call raises its own ContextLostError, the handler's exception
                goes to sys.unraisablehook, and cuabi goes on working
  launches      launches on two streams (one released before the fault) and
                the default stream, plain and prepared, one stream synchronized
                in between, then a sticky fault: the ContextLostError's
                .launches are those not seen complete, most recent first, as
                its message names them; a later failure carries them again,
                another kind of error none
(the C tests tests/fault/driver_log_test.c, health_test.c and launch_log_test.c
check the same).
Prints one line per failed check; exits 1 when there is one, 2 when it
cannot start.
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import re
import sys
import tempfile
import threading
import warnings
from typing import Any, Callable, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bindings", "python")
if os.environ.get("CUABI_TEST_INSTALLED") != "1" and BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import cuabi  # noqa: E402

CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_LAUNCH_FAILED = 719  # sticky: every later driver call fails too
LOGGED = ("; the driver logged: stand-in: cuMemAlloc fails as told | Returning 2 "
          "(CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc")
LOST = "cuabi_device_synchronize: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED"
LINE = re.compile(r"^\[\d\d:\d\d:\d\d\.\d{3}\]\[\d+\]\[E\] .+$")

failures: List[str] = []


def check(cond: bool, what: str) -> None:
    if not cond:
        failures.append(what)


def raises(cls: type, call: Callable[[], Any], what: str) -> Any:
    """The exception of class ``cls`` that ``call()`` raises (None, and a
    failed check, otherwise)."""
    try:
        call()
    except cls as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 (reported as a failed check)
        failures.append(f"{what}: raised {type(exc).__name__}: {exc}, not {cls.__name__}")
        return None
    failures.append(f"{what}: no {cls.__name__}")
    return None


class Fake:
    """The stand-in's fault injection (the instance cuabi loaded: same path)."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        self._fail_entry = lib.fake_fail_entry
        self._fail_entry.restype = None
        self._fail_entry.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_int, ctypes.c_int]

    def fail_entry(self, name: str, nth: int, cu: int) -> None:
        """Fails the ``nth`` next call of the driver entry point ``name``."""
        self._keep = name.encode()  # the stand-in keeps the pointer
        self._fail_entry(self._keep, nth, cu, 0)


def case_log(fake: Fake, dev: cuabi.Device) -> None:
    check(cuabi.driver_log_read(0) == "", f"the log before any failure: {cuabi.driver_log_read(0)!r}")
    fake.fail_entry("cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY)
    exc = raises(cuabi.OutOfMemoryError, lambda: dev.alloc(1024), "the injected cuMemAlloc failure")
    if exc is not None:
        check(exc.message.endswith(LOGGED), f"the message {exc.message!r} does not end with {LOGGED!r}")
        check(str(exc).endswith(LOGGED), f"str(): {exc}")
    # The next failure carries its own lines, not the previous call's.
    buf = dev.alloc(1024)
    fake.fail_entry("cuMemsetD8", 1, CUDA_ERROR_INVALID_VALUE)
    exc = raises(cuabi.InvalidArgumentError, lambda: buf.memset(0), "the injected cuMemsetD8 failure")
    if exc is not None:
        check("the driver logged: stand-in: cuMemsetD8 fails" in exc.message, f"message: {exc.message}")
        check("cuMemAlloc" not in exc.message, f"repeats an older call: {exc.message}")
    buf.close()

    every = cuabi.driver_log_read(0)
    lines = every.splitlines()
    check(len(lines) == 4 and every.endswith("\n"), f"the log kept: {every!r}")
    check(all(LINE.match(line) for line in lines), f"the line format: {lines!r}")
    check("][E] stand-in: cuMemAlloc fails as told\n" in every, f"the log kept: {every!r}")
    last = cuabi.driver_log_read(1)
    check(last.count("\n") == 1 and last.endswith(
        "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemsetD8\n"), f"the last line: {last!r}")
    check(cuabi.driver_log_read(2).splitlines() == lines[-2:], "the last two lines")
    check(cuabi.driver_log_read(1000) == every, "more lines asked for than kept: all")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "driver.log")
        cuabi.driver_log_dump(path)
        with open(path, encoding="utf-8") as f:
            check(f.read() == every, "the dump differs from driver_log_read(0)")
        cuabi.driver_log_dump(os.fsencode(path))  # bytes too, replacing it
        with open(path, encoding="utf-8") as f:
            check(f.read() == every, "the dump (bytes path) differs")
    exc = raises(cuabi.FileIOError, lambda: cuabi.driver_log_dump("/nonexistent-folder/log.txt"),
                 "a dump to a missing folder")
    if exc is not None:
        check("cannot open /nonexistent-folder/log.txt" in exc.message, f"message: {exc.message}")
    raises(cuabi.InvalidArgumentError, lambda: cuabi.driver_log_read(-1), "a negative count")

    # Core dumps: the refusals, before any driver call.
    exc = raises(cuabi.InvalidArgumentError, lambda: cuabi.coredump_set(1, None, 1 << 9),
                 "unknown core dump flags")
    exc = raises(cuabi.InvalidArgumentError, lambda: dev.set_coredump(1, "x" * 1024, 0),
                 "a core dump path of 1024 bytes")
    check(isinstance(cuabi.CoredumpFlag.LIGHTWEIGHT, int), "cuabi.CoredumpFlag")


def case_nologs(fake: Fake, dev: cuabi.Device) -> None:
    exc = raises(cuabi.NotSupportedError, lambda: cuabi.driver_log_read(0), "read without a log")
    if exc is not None:
        check("keeps no log; CUDA 12.9 drivers and later do" in exc.message, f"message: {exc.message}")
    raises(cuabi.NotSupportedError, lambda: cuabi.driver_log_dump("/tmp/unused"), "dump without a log")
    fake.fail_entry("cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY)
    exc = raises(cuabi.OutOfMemoryError, lambda: dev.alloc(1024), "the injected failure")
    if exc is not None:
        check("the driver logged" not in exc.message, f"message: {exc.message}")


def lose(fake: Fake, dev: cuabi.Device) -> Any:
    fake.fail_entry("cuCtxSynchronize", 1, CUDA_ERROR_LAUNCH_FAILED)
    return raises(cuabi.ContextLostError, dev.synchronize, "synchronize after a sticky fault")


def case_lost(fake: Fake, dev: cuabi.Device) -> None:
    told: List[Any] = []

    def handler(message: str) -> None:
        # cuabi may be called from here.
        told.append((message, threading.get_ident(), dev.health, cuabi.context_lost_message()))

    check(cuabi.on_context_lost(handler) is None, "a handler before the first")
    check(dev.health == cuabi.Health.USABLE, f"health {dev.health!r} before any fault")
    check(isinstance(dev.health, cuabi.Health), "health is a cuabi.Health")
    check(cuabi.context_lost_message() == "", "a lost message before any fault")

    if hasattr(os, "fork"):  # a child forked now cannot use CUDA, and says so
        with warnings.catch_warnings():  # the child's warning of cuabi._fork
            warnings.simplefilter("ignore", RuntimeWarning)
            pid = os.fork()
        if pid == 0:
            os._exit(0 if dev.health == cuabi.Health.FORKED else 1)
        _, status = os.waitpid(pid, 0)
        check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
              "the forked child's health is not FORKED")
        check(dev.health == cuabi.Health.USABLE, "the parent's health after a fork")

    exc = lose(fake, dev)
    check(dev.health == cuabi.Health.LOST, f"health {dev.health!r} after the fault")
    message = cuabi.context_lost_message()
    check(message.startswith(LOST), f"the lost message {message!r}")
    if exc is not None:
        check(exc.message.startswith(LOST), f"the exception's message {exc.message!r}")
    check(len(told) == 1, f"the handler ran {len(told)} times")
    if told:
        said, thread, health, inside = told[0]
        check(said == message, f"the handler was told {said!r}, not {message!r}")
        check(thread == threading.get_ident(), "the handler ran on another thread")
        check(health == cuabi.Health.LOST, f"health {health!r} inside the handler")
        check(inside == message, "context_lost_message() inside the handler")

    # Later failures of the lost context: no second call, the first message kept.
    raises(cuabi.ContextLostError, lambda: dev.alloc(64), "an allocation after the fault")
    check(len(told) == 1, f"the handler ran again: {len(told)}")
    check(cuabi.context_lost_message() == message, "the lost message changed")

    # Registered after the loss: called at once, on this thread.
    again: List[str] = []
    check(cuabi.on_context_lost(again.append) is handler, "on_context_lost answers the previous one")
    check(again == [message], f"a handler registered after the loss was told {again!r}")

    # A raising handler: reported through sys.unraisablehook, never raised.
    seen: List[Any] = []
    hook = sys.unraisablehook
    sys.unraisablehook = seen.append

    def raiser(message: str) -> None:
        raise RuntimeError("the handler's own failure")

    try:
        cuabi.on_context_lost(raiser)
    except BaseException as e:  # noqa: BLE001
        failures.append(f"the handler's exception reached the caller: {e!r}")
    finally:
        sys.unraisablehook = hook
    check(len(seen) == 1, f"sys.unraisablehook saw {len(seen)} reports")
    if seen:
        r = seen[0]
        check(isinstance(r.exc_value, RuntimeError) and r.exc_type is RuntimeError, f"{r.exc_value!r}")
        check(r.object is raiser, "the report's object is the handler")
        check("cuabi.on_context_lost" in r.err_msg, f"err_msg {r.err_msg!r}")
        check(r.exc_traceback is not None, "the report's traceback")

    # Under Python's own hook: written to stderr as that hook writes.
    err = io.StringIO()
    stderr, sys.stderr = sys.stderr, err
    try:
        cuabi.on_context_lost(raiser)
    finally:
        sys.stderr = stderr
    text = err.getvalue()
    check("Exception ignored in the cuabi.on_context_lost handler" in text, f"stderr: {text!r}")
    check("RuntimeError: the handler's own failure" in text, f"stderr: {text!r}")

    check(cuabi.on_context_lost(None) is raiser, "None answers the previous one")
    check(cuabi.on_context_lost(None) is None, "none registered")
    check(dev.health == cuabi.Health.LOST and cuabi.context_lost_message() == message,
          "health and message after the handlers")


def case_lost_raising(fake: Fake, dev: cuabi.Device) -> None:
    seen: List[Any] = []
    sys.unraisablehook = seen.append
    calls: List[str] = []

    def raiser(message: str) -> None:
        calls.append(message)
        raise ValueError("from the handler")

    cuabi.on_context_lost(raiser)
    exc = lose(fake, dev)  # its own ContextLostError, not the handler's ValueError
    check(len(calls) == 1, f"the handler ran {len(calls)} times")
    check(len(seen) == 1 and isinstance(seen[0].exc_value, ValueError),
          f"sys.unraisablehook saw {[getattr(s, 'exc_value', s) for s in seen]!r}")
    message = cuabi.context_lost_message()
    check(message.startswith(LOST) and calls == [message], f"the lost message {message!r}")
    if exc is not None:
        check(exc.__context__ is None, f"the handler's exception chained: {exc.__context__!r}")
    # cuabi goes on: the health, the log, later failures, other calls.
    check(dev.health == cuabi.Health.LOST, "health after a raising handler")
    raises(cuabi.ContextLostError, lambda: dev.alloc(64), "an allocation after the fault")
    check(len(calls) == 1, "the handler ran again")
    check("cuCtxSynchronize" in cuabi.driver_log_read(0), "the driver's log after the loss")
    cuabi.nvtx_mark(None, "still annotating", 0)
    cuabi.on_context_lost(None)


EMPTY2 = b'extern "C" __global__ void empty2(int a, double* b) {}\0'
FAULT_NAMES = "; launches not seen complete, most recent first: "
STAND_IN_LOG = "; the driver's log names none of these kernels; the driver now fails"


def launched(grid: int, block: int, shared: int, stream_id: int, sequence: int) -> Any:
    """The FaultedLaunch of an empty2 launch of this test, every field given."""
    return cuabi.FaultedLaunch("empty2", cuabi.LaunchRecord(
        sequence=sequence, stream_id=stream_id, device=0, grid_x=grid, grid_y=1, grid_z=1,
        block_x=block, block_y=1, block_z=1, shared_mem_bytes=shared, cluster_x=0,
        cluster_y=0, cluster_z=0, named_by_driver_log=0))


def named(launches: Tuple[Any, ...]) -> str:
    """The list the core's message gives for these launches."""
    items = []
    for i, launch in enumerate(launches, 1):
        r = launch.record
        where = "the default stream" if r.stream_id == 0 else f"stream {r.stream_id}"
        items.append(
            f"[{i}] kernel '{launch.kernel}' grid ({r.grid_x}, {r.grid_y}, {r.grid_z}) "
            f"block ({r.block_x}, {r.block_y}, {r.block_z}) shared {r.shared_mem_bytes} bytes, "
            f"launch {r.sequence} on {where} of device {r.device}")
    return FAULT_NAMES + "; ".join(items) + STAND_IN_LOG


def case_launches(fake: Fake, dev: cuabi.Device) -> None:
    kernel = dev.load_module(EMPTY2).get_kernel("empty2")
    a = dev.create_stream(non_blocking=True)
    b = dev.create_stream(non_blocking=True)
    gone = dev.create_stream(non_blocking=True)
    ida, idb, idgone = a.id, b.id, gone.id
    check(0 not in (ida, idb, idgone) and len({ida, idb, idgone}) == 3,
          f"stream ids {ida} {idb} {idgone}")
    check(a.id == ida, "a stream's id changed")
    args = (1, None)

    # Seen complete: a's first launch, synchronized.
    kernel(1, 1, args, stream=a)
    a.synchronize()
    # Not seen, in launch order.
    kernel(2, 32, args, stream=b)  # the oldest
    kernel(3, 64, args, stream=gone, shared_mem=128)
    gone.close()  # its launch is kept
    with kernel.prepare(5, 96, stream=b) as prepared:  # b's second
        prepared(*args)
    kernel(7, 128, args)  # the default stream
    kernel(11, 256, args, stream=a, shared_mem=64)  # the newest
    expected = (
        launched(11, 256, 64, ida, 2),
        launched(7, 128, 0, 0, 1),
        launched(5, 96, 0, idb, 2),
        launched(3, 64, 128, idgone, 1),
        launched(2, 32, 0, idb, 1),
    )

    exc = lose(fake, dev)
    if exc is None:
        return
    check(exc.launches == expected,
          "the launches:\n  " + "\n  ".join(map(repr, exc.launches)) + "\nnot\n  "
          + "\n  ".join(map(repr, expected)))
    check(type(exc.launches) is tuple, f"launches is a {type(exc.launches).__name__}")
    check(all(type(x) is cuabi.FaultedLaunch and type(x.record) is cuabi.LaunchRecord
              for x in exc.launches), "the launches' types")
    text = named(expected)
    check(text in exc.message, f"the message:\n  {exc.message}\nlacks:\n  {text}")
    check(text in str(exc), f"str(): {exc}")
    check("grid (1, 1, 1)" not in exc.message, f"a launch seen complete is named: {exc.message}")
    again = pickle.loads(pickle.dumps(exc))
    check(type(again) is cuabi.ContextLostError and again.launches == expected,
          f"pickled: {again!r} {getattr(again, 'launches', None)!r}")
    try:
        expected[0].kernel = "other"  # type: ignore[misc]
        failures.append("a FaultedLaunch is not frozen")
    except AttributeError:
        pass

    # A later CONTEXT_LOST failure carries the same launches.
    later = raises(cuabi.ContextLostError, lambda: kernel(1, 1, args, stream=a),
                   "a launch after the fault")
    if later is not None:
        check(later.launches == expected, f"a later launch's failure carries {later.launches!r}")
        check(text in later.message, f"a later failure's message: {later.message}")
    later = raises(cuabi.ContextLostError, lambda: dev.alloc(64), "an allocation after the fault")
    if later is not None:
        check(later.launches == expected, f"a later allocation's failure carries {later.launches!r}")
    # Another kind of error: none, from the core and from the binding.
    be = dev.backend
    other = raises(cuabi.InvalidArgumentError,
                   lambda: be.call("cuabi_stream_get_id", b._handle, be.NULL),
                   "cuabi_stream_get_id with a NULL id")
    if other is not None:
        check("id is NULL" in other.message and other.launches == (),
              f"an INVALID_ARGUMENT failure: {other.message!r} carries {other.launches!r}")
    other = raises(cuabi.InvalidArgumentError, lambda: dev.set_coredump(1, "x" * 1024, 0),
                   "a core dump path of 1024 bytes")
    if other is not None:
        check(other.launches == (), f"a core dump refusal carries {other.launches!r}")
    check(cuabi.CudaError("made by hand").launches == (), "a CudaError made by hand")
    a.close()
    b.close()


CASES = {
    "log": case_log,
    "nologs": case_nologs,
    "lost": case_lost,
    "lost_raising": case_lost_raising,
    "launches": case_launches,
}


def main(argv: List[str]) -> int:
    if len(argv) != 2 or argv[1] not in CASES:
        print(f"usage: health_child.py FAKE {'|'.join(CASES)}")
        return 2
    fake_path, case = os.path.abspath(argv[0]), argv[1]
    if os.path.abspath(os.environ.get("CUABI_DRIVER_PATH", "")) != fake_path:
        print(f"CUABI_DRIVER_PATH must be {fake_path}")
        return 2
    backend = (os.environ.get("CUABI_BACKEND") or "ctypes").strip().lower()
    if cuabi.get_backend().name != backend:
        print(f"the default backend is {cuabi.get_backend().name}, not {backend}")
        return 2
    dev = cuabi.Device(0)
    CASES[case](Fake(fake_path), dev)
    for f in failures:
        print(f"FAILED: {f}")
    if not failures:
        print(f"{case} (Python {backend}): as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
