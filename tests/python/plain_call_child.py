"""The plain kernel call, ``kernel(grid, block, args, stream=s)``, against the
stand-in driver of tests/fake/ (no GPU), which runs the SAXPY kernel on the
host over ``min(n, grid * block)`` elements at the launch itself, and
records a launch on a capturing stream into the graph instead of running it.
Run by test_plain_call.py in a process of its own, once per backend:

    CUABI_DRIVER_PATH=FAKE CUABI_NVRTC_PATH=FAKE CUABI_BACKEND=ctypes \\
        python plain_call_child.py

The plain call remembers the configuration it launched last by identity;
each check here changes one thing the launch depends on (the grid, the
block, a grid list changed in place, the shared memory, the stream, the
number or the types of the arguments, the values) and looks at what ran,
so a launch through a plan or a packer left from before fails it. Prints
``plain call: N checks passed`` and exits 0, or raises.
"""

from __future__ import annotations

import ctypes
import gc
import os
import struct
import sys
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bindings", "python")
if os.environ.get("CUABI_TEST_INSTALLED") != "1" and BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import cuabi  # noqa: E402

SAXPY = """\
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"""
N = 512

dev = cuabi.Device(0)
kernel = dev.compile(SAXPY, name="saxpy.cu", cache=False).get_kernel("saxpy")
hx = np.arange(N, dtype=np.float32)
hy = (2 * np.arange(N) + 1).astype(np.float32)
x = dev.to_device(hx)
y = dev.to_device(hy)
out = dev.zeros(N, np.float32)
n = np.uint64(N)
checks = []


def check(fn):
    checks.append(fn)
    return fn


def expect(buf, a, count, what):
    """``buf`` holds a * x + y over its first ``count`` elements, 0 after."""
    want = np.zeros(N, np.float32)
    want[:count] = (np.float32(a) * hx + hy)[:count]
    got = buf.to_numpy()
    if not np.array_equal(got, want):
        written = int(np.count_nonzero(got))
        raise AssertionError(
            f"{what}: {written} elements written, first {got[:3]}; want {count} of a={a}"
        )


def cleared(buf=None):
    (buf or out).memset(0)
    return buf or out


def refused(call, piece, kind=cuabi.CudaError):
    try:
        call()
    except kind as exc:
        assert piece in str(exc), f"{piece!r} not in {exc}"
        return
    raise AssertionError(f"not refused: {piece}")


@check
def the_same_objects_launch_the_values_of_each_call():
    s = dev.create_stream()
    grid, block = 2, 64
    for a in (2.0, 3.0, -0.5):
        kernel(grid, block, (np.float32(a), x, y, cleared(), n), stream=s)
        expect(out, a, 128, f"a={a}")
    other = dev.zeros(N, np.float32)
    kernel(grid, block, (np.float32(4.0), x, y, other, n), stream=s)
    expect(other, 4.0, 128, "another output buffer")
    kernel(grid, block, (np.float32(4.0), x, y, cleared(), np.uint64(100)), stream=s)
    expect(out, 4.0, 100, "another n")


@check
def a_changed_block_or_grid_makes_its_own_plan():
    s = dev.create_stream()
    grid = 2
    for block in (32, 64, (16, 1, 1), 128):
        kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
        threads = block if isinstance(block, int) else block[0]
        expect(out, 2.0, 2 * threads, f"block {block}")
    block = 64
    for grid in (1, 3, (2, 1, 1), 5):
        kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
        blocks = grid if isinstance(grid, int) else grid[0]
        expect(out, 2.0, 64 * blocks, f"grid {grid}")


@check
def a_grid_list_changed_in_place_is_read_again():
    s = dev.create_stream()
    grid, block = [1], [32]
    args = (np.float32(2.0), x, y, out, n)
    for g, b in ((1, 32), (3, 32), (3, 64), (1, 16)):
        grid[0], block[0] = g, b
        cleared()
        kernel(grid, block, args, stream=s)
        expect(out, 2.0, g * b, f"grid list {grid}, block list {block}")


@check
def equal_values_made_anew_for_each_call_are_compared_by_value():
    s = dev.create_stream()
    args = (np.float32(2.0), x, y, out, n)
    # int("...") above 256 is a new object each time: equal, never identical.
    for text, count in (("300", 300), ("300", 300), ("400", 400), ("257", 257)):
        cleared()
        kernel(1, int(text), args, stream=s)
        expect(out, 2.0, count, f"block {text} made anew")
    for blocks in (2, 2, 3, 1):
        cleared()
        kernel((blocks, 1, 1), (int("300") // 3, 1), args, stream=s)
        expect(out, 2.0, min(N, blocks * 100), f"grid ({blocks}, 1, 1) made anew")
    for shared in ("1000", "1000", "2000"):
        cleared()
        kernel(2, 64, args, stream=s, shared_mem=int(shared))
        expect(out, 2.0, 128, f"shared memory {shared} made anew")
    refused(
        lambda: kernel(2, 64, args, stream=s, shared_mem=int("100000")),
        "100000 bytes of dynamic shared memory",
        cuabi.InvalidArgumentError,
    )


@check
def alternating_configurations_and_streams_each_launch_their_own():
    s1, s2 = dev.create_stream(), dev.create_stream()
    args = (np.float32(2.0), x, y, out, n)
    for _ in range(3):
        for grid, block, count in ((1, 64, 64), (3, 64, 192), (3, 64, 192), (1, 64, 64)):
            cleared()
            kernel(grid, block, args, stream=s1)
            expect(out, 2.0, count, f"alternating grid {grid}")
    for _ in range(3):  # three configurations in turn
        for grid, block in ((1, 32), (2, 32), (4, 32)):
            cleared()
            kernel(grid, block, args, stream=s1)
            expect(out, 2.0, grid * block, f"grid {grid} of three in turn")
    s2.begin_capture("relaxed")
    try:
        for i in range(4):
            cleared()
            kernel(1, 64, args, stream=s1)
            expect(out, 2.0, 64, f"stream 1, turn {i}")
            cleared()
            kernel(1, 64, args, stream=s2)
            expect(out, 2.0, 0, f"captured on stream 2, turn {i}")
    finally:
        graph = s2.end_capture()
    assert graph.node_count == 4, graph.node_count
    # The configuration remembered second, asked for on the other stream.
    kernel(1, 32, args, stream=s1)
    s2.begin_capture("relaxed")
    try:
        cleared()
        kernel(2, 32, args, stream=s2)
        kernel(1, 32, args, stream=s2)
        expect(out, 2.0, 0, "both captured on stream 2")
    finally:
        graph = s2.end_capture()
    assert graph.node_count == 2, graph.node_count
    for i in range(3):  # two signatures in turn on one configuration
        cleared()
        kernel(1, 64, (2.0, x, y, out, N), stream=s1)
        expect(out, 2.0, 64, f"Python values, turn {i}")
        cleared()
        kernel(1, 64, (2, x, y, out, N), stream=s1)
        expect(out, np.frombuffer(struct.pack("<i", 2), np.float32)[0], 64, f"an int, turn {i}")


@check
def a_bad_configuration_after_a_good_one_is_refused():
    s = dev.create_stream()
    args = (np.float32(2.0), x, y, cleared(), n)
    grid, block = 1, 64
    kernel(grid, block, args, stream=s)
    refused(lambda: kernel(grid, 2048, args, stream=s), "2048", cuabi.InvalidArgumentError)
    refused(
        lambda: kernel(grid, block, args, stream=s, shared_mem=1 << 20),
        "bytes of dynamic shared memory",
        cuabi.InvalidArgumentError,
    )
    refused(lambda: kernel(0, block, args, stream=s), "zero dimension", cuabi.InvalidArgumentError)
    kernel(grid, block, (np.float32(3.0), x, y, cleared(), n), stream=s, shared_mem=128)
    expect(out, 3.0, 64, "with shared memory")
    kernel(grid, block, (np.float32(5.0), x, y, cleared(), n), stream=s)
    expect(out, 5.0, 64, "again without")


@check
def a_changed_count_of_arguments_is_refused():
    s = dev.create_stream()
    grid, block = 1, 64
    kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
    refused(lambda: kernel(grid, block, (np.float32(2.0), x, y, out), stream=s), "4")
    refused(lambda: kernel(grid, block, (np.float32(2.0), x, y, out, n, n), stream=s), "6")
    refused(lambda: kernel(grid, block, (), stream=s), "0")
    kernel(grid, block, [np.float32(6.0), x, y, cleared(), n], stream=s)  # a list
    expect(out, 6.0, 64, "a list of arguments")


@check
def changed_argument_types_are_packed_by_their_own_rules():
    s = dev.create_stream()
    grid, block = 2, 32
    cases = [
        (np.float32(2.0), x, y, out, n),
        (2.5, x, y, out, N),  # a Python float and int
        (2, x, y, out, N),  # an int fills the float parameter as an int32
        (ctypes.c_float(3.0), x.ptr, y.ptr, out.ptr, ctypes.c_uint64(N)),
        (np.float32(-1.0), x, y, out, np.uint64(N)),
        (1.5, x, y, out, True),  # n = 1
    ]
    for args in cases:
        cleared()
        kernel(grid, block, args, stream=s)
        a = args[0].value if isinstance(args[0], ctypes.c_float) else args[0]
        if type(a) is int:
            a = np.frombuffer(struct.pack("<i", a), np.float32)[0]
        count = 1 if args[4] is True else 64
        expect(out, a, count, f"argument types {[type(v).__name__ for v in args]}")
    refused(
        lambda: kernel(grid, block, ("2", x, y, out, n), stream=s),
        "parameter 0",
        cuabi.InvalidArgumentError,
    )
    refused(
        lambda: kernel(grid, block, (2.0, x, y, out, 1 << 64), stream=s),
        "parameter 4",
        cuabi.InvalidArgumentError,
    )
    cleared()
    kernel(
        grid,
        block,
        (7, x.ptr, y.ptr, out.ptr, N),
        stream=s,
        types=[ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64],
    )
    expect(out, 7.0, 64, "types=")
    kernel(grid, block, (np.float32(8.0), x, y, cleared(), n), stream=s)
    expect(out, 8.0, 64, "after types=")
    # The same values as the launch before, but types= makes n 4 bytes.
    refused(
        lambda: kernel(
            grid, block, (np.float32(8.0), x, y, out, n), stream=s,
            types=[None, None, None, None, ctypes.c_uint32],
        ),
        "parameter 4 is 8 bytes",
        cuabi.InvalidArgumentError,
    )


@check
def each_stream_gets_the_launch():
    s1, s2 = dev.create_stream(), dev.create_stream()
    grid, block = 1, 64
    kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s1)
    expect(out, 2.0, 64, "stream 1")
    cleared()
    s2.begin_capture("relaxed")
    try:
        kernel(grid, block, (np.float32(3.0), x, y, out, n), stream=s2)
        # Captured on s2, so not run: a plan of s1 would have run it.
        expect(out, 3.0, 0, "captured on stream 2")
    finally:
        graph = s2.end_capture()
    assert graph.node_count == 1, graph.node_count
    kernel(grid, block, (np.float32(4.0), x, y, out, n), stream=s1)
    expect(out, 4.0, 64, "stream 1 again")
    kernel(grid, block, (np.float32(5.0), x, y, cleared(), n))  # the default stream
    expect(out, 5.0, 64, "the default stream")
    cleared()
    s2.begin_capture("relaxed")
    try:
        kernel(grid, block, (np.float32(6.0), x, y, out, n), stream=s2)
        expect(out, 6.0, 0, "captured on stream 2 after the default stream")
    finally:
        graph = s2.end_capture()
    assert graph.node_count == 1, graph.node_count


@check
def a_new_stream_in_place_of_a_collected_one_gets_its_own_plan():
    grid, block = 1, 64
    for _ in range(3):
        s = dev.create_stream()
        kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
        expect(out, 2.0, 64, "a stream")
        del s
        gc.collect()
        s = dev.create_stream()
        s.begin_capture("relaxed")
        try:
            kernel(grid, block, (np.float32(3.0), x, y, cleared(), n), stream=s)
            expect(out, 3.0, 0, "captured on the new stream")
        finally:
            graph = s.end_capture()
        assert graph.node_count == 1
        s.close()


@check
def a_closed_stream_is_refused_by_the_core():
    grid, block = 1, 64
    s = dev.create_stream()
    kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
    s.close()
    for _ in range(2):
        refused(
            lambda: kernel(grid, block, (np.float32(2.0), x, y, out, n), stream=s),
            "",
            cuabi.InvalidHandleError,
        )
    refused(lambda: kernel(grid, block, (1, 2), stream=object()), "", TypeError)


@check
def options_and_launch_configs_between_plain_calls():
    s = dev.create_stream()
    grid, block = 1, 64
    kernel(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
    expect(out, 2.0, 64, "plain")
    kernel(cuabi.LaunchConfig(1, 32), (np.float32(3.0), x, y, cleared(), n), stream=s)
    expect(out, 3.0, 32, "a LaunchConfig")
    kernel(grid, block, (np.float32(4.0), x, y, cleared(), n), stream=s, priority=0)
    expect(out, 4.0, 64, "an option")
    refused(lambda: kernel(grid, block, (), stream=s, colour=1), "colour", TypeError)
    kernel(grid, block, (np.float32(5.0), x, y, cleared(), n), stream=s)
    expect(out, 5.0, 64, "plain again")


@check
def threads_launching_the_same_configuration_each_get_their_own_block():
    s = dev.create_stream()
    grid, block = 2, 64
    failures = []
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def worker(index):
        mine = dev.zeros(N, np.float32)
        a = np.float32(index + 1)
        try:
            for _ in range(150):
                mine.memset(0)
                kernel(grid, block, (a, x, y, mine, n), stream=s)
                expect(mine, a, 128, f"thread {index}")
        except Exception as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(previous)
    assert not failures, failures[0]


@check
def a_closed_kernel_is_refused_by_the_core():
    s = dev.create_stream()
    k = dev.compile(SAXPY, name="saxpy.cu", cache=False).get_kernel("saxpy")
    grid, block = 1, 64
    k(grid, block, (np.float32(2.0), x, y, cleared(), n), stream=s)
    expect(out, 2.0, 64, "before closing")
    k.close()
    for _ in range(2):
        refused(
            lambda: k(grid, block, (np.float32(2.0), x, y, out, n), stream=s),
            "",
            cuabi.InvalidHandleError,
        )


for fn in checks:
    fn()
print(f"plain call: {len(checks)} checks passed ({os.environ.get('CUABI_BACKEND', 'default')})")
