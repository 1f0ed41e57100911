"""1,000 device-to-device copies of 4 KiB, in one process, alternating in
rounds:

  cuabi batch        Stream.copy_batch (cuabi_stream_copy_batch:
                     cuMemcpyBatchAsync, every range checked first)
  cuabi per call     DeviceBuffer.copy_from(..., stream=s), 1,000 calls
                     (cuMemcpyDtoDAsync each)
  cuda.core batch    cuda.core.utils.copy_batch over 1,000 buffer pairs
  cuda.core per call Buffer.copy_to(dst, stream=s), 1,000 calls

Each sample queues the 1,000 copies and synchronizes the stream. The cuabi
rows copy between 4 KiB slots of two buffers; the cuda.core rows between
1,000 pairs of 4 KiB buffers (its batch copy takes whole buffers). Prints
the median microseconds per 1,000 copies; a peer that is not importable, or
a cuda.core without copy_batch, is left out with the reason. Exit 2 without
a device. A benchmark, not a test: it asserts nothing about the times.

    python3 bench/python/bench_batch_copy.py [--rounds N] [--copies N] [--bytes N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable, Dict, List

import numpy as np

import cuabi
from cuabi import CopyOp


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--copies", type=int, default=1000)
    p.add_argument("--bytes", type=int, default=4096)
    ns = p.parse_args()
    try:
        dev = cuabi.Device(0)
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"bench_batch_copy: no CUDA device ({exc})", file=sys.stderr)
        return 2
    k, n = ns.copies, ns.bytes
    s = dev.create_stream(non_blocking=True)
    src = dev.to_device(np.arange(k * n, dtype=np.uint8))
    dst = dev.zeros(k * n, np.uint8)
    ops = [CopyOp(dst, src, n, i * n, i * n) for i in range(k)]
    ways: Dict[str, Callable[[], None]] = {}
    syncs: Dict[str, Callable[[], None]] = {}
    notes: List[str] = []

    def cuabi_batch() -> None:
        s.copy_batch(ops)

    def cuabi_each() -> None:
        for i in range(k):
            dst.copy_from(src, n, i * n, i * n, stream=s)

    try:
        cuabi_batch()
        s.synchronize()
        if not (dst.copy_to_host() == src.copy_to_host()).all():
            raise RuntimeError("the batch copied other bytes than asked")
        ways["cuabi batch (cuMemcpyBatchAsync)"] = cuabi_batch
        syncs["cuabi batch (cuMemcpyBatchAsync)"] = s.synchronize
    except cuabi.CudaError as exc:
        notes.append(f"cuabi batch left out: {exc}")
    ways["cuabi one call each (cuMemcpyDtoDAsync)"] = cuabi_each
    syncs["cuabi one call each (cuMemcpyDtoDAsync)"] = s.synchronize

    try:
        try:
            import cuda.core as cc

            cc.Device  # noqa: B018
        except (ImportError, AttributeError):
            import cuda.core.experimental as cc  # type: ignore[no-redef]
        cdev = cc.Device(0)
        cdev.set_current()
        ccs = cdev.create_stream()
        srcs = [cdev.allocate(n, stream=ccs) for _ in range(k)]
        dsts = [cdev.allocate(n, stream=ccs) for _ in range(k)]
        ccs.sync()

        def cc_each() -> None:
            for a, b in zip(srcs, dsts):
                a.copy_to(b, stream=ccs)

        ways["cuda.core Buffer.copy_to each"] = cc_each
        syncs["cuda.core Buffer.copy_to each"] = ccs.sync
        try:
            from cuda.core.utils import copy_batch  # type: ignore[import-not-found]

            def cc_batch() -> None:
                copy_batch(ccs, srcs, dsts)

            cc_batch()
            ccs.sync()
            ways["cuda.core utils.copy_batch"] = cc_batch
            syncs["cuda.core utils.copy_batch"] = ccs.sync
        except Exception as exc:  # noqa: BLE001 - an older cuda.core has none
            notes.append(f"cuda.core batch left out: {exc}")
    except Exception as exc:  # noqa: BLE001
        notes.append(f"cuda.core left out: {exc}")

    times: Dict[str, List[float]] = {name: [] for name in ways}
    for name, run in ways.items():  # warm-up
        for _ in range(3):
            run()
        syncs[name]()
    for r in range(ns.rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            t0 = time.perf_counter()
            ways[name]()
            syncs[name]()
            times[name].append((time.perf_counter() - t0) * 1e6)

    print(f"{k} device-to-device copies of {n} bytes, median of {ns.rounds} rounds (us per {k} copies)")
    print("| way | median us | min us |")
    print("|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.1f} | {min(t):.1f} |")
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
