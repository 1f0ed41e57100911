"""Allocation and free per call, in one process, alternating in rounds:

  cuabi stream-ordered   Device.alloc(n, stream=s) + DeviceBuffer.free(stream=s)
                         (cuMemAllocAsync / cuMemFreeAsync, the device's pool,
                         behind Device.buffer_cache: a block freed on s is
                         reused by the next allocation of its size on s)
  cuabi cuMemAlloc       Device.alloc(n) + close() (cuMemAlloc / cuMemFree,
                         synchronous; one call each way)
  CuPy pool              cupy's default memory pool (cupy.cuda.alloc + release)
  CuPy async pool        cupy.cuda.MemoryAsyncPool (cudaMallocAsync)
  cuda.core pool         Device.allocate(n, stream=s) + Buffer.close(s)

Each iteration allocates ``n`` bytes and frees it (nothing else), for each
size of ``--bytes`` (default 256 B and 1 MiB, the targets' sizes), and each
round ends with a stream synchronize. Prints, per size, the median and the
minimum microseconds per allocate + free of each way, and the buffer cache's
hits; peers that are not importable are left out with the reason.
``--no-cache`` turns the buffer cache off (the one-call path alone). Exit 2
without a device.

    python3 bench/python/bench_alloc.py [--rounds N] [--iters N] [--bytes N[,N...]] [--no-cache]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable, Dict, List

import cuabi

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import paired  # noqa: E402  (bench/paired.py: the paired figures' intervals)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--bytes", default="256,1048576",
                   help="sizes in bytes, comma-separated (default: 256 and 1 MiB)")
    p.add_argument("--no-cache", action="store_true",
                   help="turn Device.buffer_cache off (the one-call path alone)")
    ns = p.parse_args()
    sizes = [int(x) for x in str(ns.bytes).split(",") if x.strip()]
    try:
        dev = cuabi.Device(0)
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"bench_alloc: no CUDA device ({exc})", file=sys.stderr)
        return 2
    if ns.no_cache:
        dev.buffer_cache.enabled = False
    for n in sizes:
        run_size(dev, n, ns.rounds, ns.iters)
    return 0


def run_size(dev: "cuabi.Device", n: int, rounds: int, iters: int) -> None:
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

    ways["cuabi stream-ordered (cuMemAllocAsync, buffer cache)"] = cuabi_async
    syncs["cuabi stream-ordered (cuMemAllocAsync, buffer cache)"] = s.synchronize
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

        def cc_alloc() -> None:
            buf = cdev.allocate(n, stream=ccs)
            buf.close(ccs)

        ways["cuda.core Device.allocate"] = cc_alloc
        syncs["cuda.core Device.allocate"] = ccs.sync
    except Exception as exc:  # noqa: BLE001
        notes.append(f"cuda.core left out: {exc}")

    cache = dev.buffer_cache
    hits0, misses0 = cache.hits, cache.misses
    times: Dict[str, List[float]] = {k: [] for k in ways}
    for name, run in ways.items():  # warm-up
        for _ in range(50):
            run()
        syncs[name]()
    for r in range(rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            run, sync = ways[name], syncs[name]
            t0 = time.perf_counter()
            for _ in range(iters):
                run()
            sync()
            times[name].append((time.perf_counter() - t0) / iters * 1e6)

    print(f"allocate + free of {n} bytes, median of {rounds} rounds x {iters} (us per call pair)")
    # Each way against CuPy's MemoryPool, paired by round (bench/paired.py):
    # the median difference and its 95% interval, judged at 0 ("no slower").
    ref = "CuPy MemoryPool"
    print(f"| way | median us | min us | - {ref} (us, paired) | no slower than {ref} |")
    print("|---|---|---|---|---|")
    for name, t in times.items():
        iv = paired.compare(times, name, ref) if name != ref else None
        vs = f"{iv['median']:+.2f} [{iv['lo']:+.2f}, {iv['hi']:+.2f}]" if iv else "–"
        verdict = paired.judge_at_most(iv, 0.0) if iv else "–"
        print(f"| {name} | {statistics.median(t):.2f} | {min(t):.2f} | {vs} | {verdict} |")
    print(f"buffer cache: {cache.hits - hits0} hits, {cache.misses - misses0} misses"
          f"{'' if cache.enabled else ' (off)'}")
    for note in notes:
        print(note)
    cache.trim(s)
    s.synchronize()
    s.close()


if __name__ == "__main__":
    sys.exit(main())
