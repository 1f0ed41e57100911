"""Graphs built by hand against other ways, in one process, alternating in
rounds (a benchmark, not a test: it asserts nothing about the times):

1. Build and instantiate a chain of 100 kernel nodes three ways:
     cuabi by hand       Graph.create + 100 add_kernel_node + instantiate
     cuabi by capture    100 launches captured on a stream + instantiate
     cuda.core builder   cuda.core's GraphBuilder (launches into it) +
                         complete(); left out, with the reason, where the
                         installed cuda.core has none
2. A data-dependent loop of N iterations (a counter counted down to 0):
     WHILE node          one launch of a graph whose WHILE body runs the
                         step until device code clears the condition
     host loop           N launches of the step, each followed by reading
                         the counter back to decide whether to go on

Prints median and minimum microseconds of each. Exit 2 without a device.

    python3 bench/python/bench_graph_build.py [--rounds N] [--nodes N] [--iterations N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable, Dict, List

import numpy as np

import cuabi
from cuabi import _api

SOURCE = r"""
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void inc(int* p) { if (threadIdx.x == 0) *p += 1; }
extern "C" __global__ void step(int* left) { if (threadIdx.x == 0) *left -= 1; }
extern "C" __global__ void step_while(int* left, cudaGraphConditionalHandle h) {
  if (threadIdx.x == 0 && --*left <= 0) cudaGraphSetConditional(h, 0);
}
"""


def _rounds(ways: Dict[str, Callable[[], None]], rounds: int) -> Dict[str, List[float]]:
    times: Dict[str, List[float]] = {name: [] for name in ways}
    for run in ways.values():  # warm-up
        run()
        run()
    for r in range(rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            t0 = time.perf_counter()
            ways[name]()
            times[name].append((time.perf_counter() - t0) * 1e6)
    return times


def _table(title: str, times: Dict[str, List[float]]) -> None:
    print(title)
    print("| way | median us | min us |")
    print("|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.1f} | {min(t):.1f} |")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--nodes", type=int, default=100)
    p.add_argument("--iterations", type=int, default=100)
    ns = p.parse_args()
    try:
        dev = cuabi.Device(0)
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"bench_graph_build: no CUDA device ({exc})", file=sys.stderr)
        return 2
    mod = dev.compile(SOURCE, name="bench_graph_build.cu")
    inc, step, step_while = (mod.get_kernel(k) for k in ("inc", "step", "step_while"))
    s = dev.create_stream(non_blocking=True)
    counter = dev.alloc(4)
    notes: List[str] = []
    k = ns.nodes

    def by_hand() -> None:
        g = cuabi.Graph.create(dev)
        node = None
        for _ in range(k):
            node = g.add_kernel_node(inc, 1, 32, (counter,), after=node)
        g.instantiate()

    def by_capture() -> None:
        with s.capture() as cap:
            for _ in range(k):
                inc(1, 32, (counter,), stream=s)
        cap.graph.instantiate()

    build: Dict[str, Callable[[], None]] = {
        f"cuabi by hand ({k} add_kernel_node)": by_hand,
        f"cuabi by capture ({k} launches)": by_capture,
    }
    try:
        try:
            import cuda.core as cc

            cc.Device  # noqa: B018
        except (ImportError, AttributeError):
            import cuda.core.experimental as cc  # type: ignore[no-redef]
        cdev = cc.Device(0)
        cdev.set_current()
        major, minor = cdev.compute_capability
        prog = cc.Program(
            'extern "C" __global__ void inc(int* p) { if (threadIdx.x == 0) *p += 1; }',
            code_type="c++",
            options=cc.ProgramOptions(arch=f"sm_{major}{minor}"),
        )
        ckern = prog.compile("cubin").get_kernel("inc")
        cbuf = cdev.allocate(4, stream=cdev.create_stream())
        cfg = cc.LaunchConfig(grid=1, block=32)

        def cc_builder() -> None:
            gb = cdev.create_graph_builder()
            gb.begin_building()
            for _ in range(k):
                cc.launch(gb, cfg, ckern, cbuf)
            gb.end_building().complete()

        cc_builder()
        build["cuda.core GraphBuilder (launches + complete)"] = cc_builder
    except Exception as exc:  # noqa: BLE001 - a cuda.core without a builder is left out
        notes.append(f"cuda.core left out: {type(exc).__name__}: {exc}")
    _table(f"a chain of {k} kernel nodes built and instantiated, median of {ns.rounds} rounds",
           _rounds(build, ns.rounds))

    n = ns.iterations
    left = dev.alloc(4)
    start = np.array([n], np.int32)
    g = cuabi.Graph.create(dev)
    h = g.create_conditional_handle(1)
    loop = g.add_conditional_node(None, h, _api.ConditionalType.WHILE, 1)
    cuabi.Graph.add_kernel_node(loop.get_body(0), step_while, 1, 32, (left, np.uint64(h)))
    exe = g.instantiate()
    back = np.empty(1, np.int32)

    def while_node() -> None:
        left.copy_from_host(start)
        exe.launch(s)
        s.synchronize()

    def host_loop() -> None:
        left.copy_from_host(start)
        while True:
            step(1, 32, (left,), stream=s)
            left.copy_to_host(back, stream=s)
            s.synchronize()
            if back[0] <= 0:
                break

    while_node()
    left.copy_to_host(back)
    if back[0] != 0:
        raise RuntimeError(f"the WHILE node left {back[0]}, not 0")
    _table(f"a loop of {n} iterations decided on the device, median of {ns.rounds} rounds",
           _rounds({"WHILE node (one graph launch)": while_node,
                    f"host loop ({n} launches, each read back)": host_loop}, ns.rounds))
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
