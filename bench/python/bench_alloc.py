"""Allocation and free per call, in one process, alternating in rounds:

  cuabi stream-ordered   Device.alloc(n, stream=s) + DeviceBuffer.free(stream=s)
                         (cuMemAllocAsync / cuMemFreeAsync, the device's pool)
  cuabi cuMemAlloc       Device.alloc(n) + close() (cuMemAlloc / cuMemFree)
  CuPy pool              cupy's default memory pool (cupy.cuda.alloc + release)
  CuPy async pool        cupy.cuda.MemoryAsyncPool (cudaMallocAsync)
  cuda.core pool         Device.allocate(n, stream=s) + Buffer.close(s)

Each iteration allocates ``--bytes`` and frees it (nothing else), and each
round ends with a stream synchronize. Prints the median microseconds per allocate + free of
each way; peers that are not importable are left out with the reason. Exit 2
without a device.

    python3 bench/python/bench_alloc.py [--rounds N] [--iters N] [--bytes N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable, Dict, List

import cuabi


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--bytes", type=int, default=1 << 20)
    ns = p.parse_args()
    try:
        dev = cuabi.Device(0)
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"bench_alloc: no CUDA device ({exc})", file=sys.stderr)
        return 2
    n = ns.bytes
    s = dev.create_stream()
    ways: Dict[str, Callable[[], None]] = {}
    syncs: Dict[str, Callable[[], None]] = {}
    notes: List[str] = []

    def cuabi_async() -> None:
        b = dev.alloc(n, stream=s)
        b.free(stream=s)

    def cuabi_plain() -> None:
        b = dev.alloc(n)
        b.close()

    ways["cuabi stream-ordered (cuMemAllocAsync)"] = cuabi_async
    syncs["cuabi stream-ordered (cuMemAllocAsync)"] = s.synchronize
    ways["cuabi cuMemAlloc + cuMemFree"] = cuabi_plain
    syncs["cuabi cuMemAlloc + cuMemFree"] = s.synchronize

    try:
        import cupy

        cs = cupy.cuda.Stream(non_blocking=True)
        default_pool = cupy.cuda.MemoryPool()
        async_pool = cupy.cuda.MemoryAsyncPool()

        def cupy_with(pool):  # type: ignore[no-untyped-def]
            def run() -> None:
                with cs:
                    m = pool.malloc(n)
                    del m

            return run

        ways["CuPy MemoryPool"] = cupy_with(default_pool)
        syncs["CuPy MemoryPool"] = cs.synchronize
        ways["CuPy MemoryAsyncPool"] = cupy_with(async_pool)
        syncs["CuPy MemoryAsyncPool"] = cs.synchronize
    except Exception as exc:  # noqa: BLE001 - any failure leaves the peer out
        notes.append(f"CuPy left out: {exc}")

    try:
        try:
            import cuda.core as cc

            cc.Device  # noqa: B018
        except (ImportError, AttributeError):
            import cuda.core.experimental as cc  # type: ignore[no-redef]
        cdev = cc.Device(0)
        cdev.set_current()
        ccs = cdev.create_stream()
        wrap = dev.wrap_buffer

        def cc_alloc() -> None:
            buf = cdev.allocate(n, stream=ccs)
            buf.close(ccs)

        ways["cuda.core Device.allocate"] = cc_alloc
        syncs["cuda.core Device.allocate"] = ccs.sync
        del wrap
    except Exception as exc:  # noqa: BLE001
        notes.append(f"cuda.core left out: {exc}")

    times: Dict[str, List[float]] = {k: [] for k in ways}
    for name, run in ways.items():  # warm-up
        for _ in range(50):
            run()
        syncs[name]()
    for r in range(ns.rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            run, sync = ways[name], syncs[name]
            t0 = time.perf_counter()
            for _ in range(ns.iters):
                run()
            sync()
            times[name].append((time.perf_counter() - t0) / ns.iters * 1e6)

    print(f"allocate + free of {n} bytes, median of {ns.rounds} rounds x {ns.iters} (us per call pair)")
    print("| way | median us | min us |")
    print("|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.2f} | {min(t):.2f} |")
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
