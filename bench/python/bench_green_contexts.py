"""Two concurrent kernels, each alone on its own green context, against both
on the primary context. A wide kernel ("bulk": enough blocks to fill every SM
many times) is launched first and a narrow one ("urgent": one block per SM of
a small group) right after, on two streams:

  primary     both on non-blocking streams of the primary context: urgent's
              blocks wait behind bulk's for free SMs
  green       urgent on a green context of a small group of SMs, bulk on one
              of the remainder: neither takes the other's SMs

Each block spins a fixed number of clock cycles. Prints, per arrangement, the
median milliseconds from urgent's launch to its end (events on its stream)
and from the pair's start to both ends; exit 2 without a device.

    python3 bench/python/bench_green_contexts.py [--rounds N] [--group-sms N] [--cycles N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Dict, List, Tuple

import numpy as np

import cuabi

SOURCE = r"""
extern "C" __global__ void busy(long long cycles, unsigned* out) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
}
"""


def timed_pair(kernel, bulk_stream, urgent_stream, bulk_blocks, urgent_blocks, cycles, out_b,
               out_u, dev) -> Tuple[float, float]:
    start, bulk_end = dev.create_event(), dev.create_event()
    urgent_start, urgent_end = dev.create_event(), dev.create_event()
    start.record(bulk_stream)
    kernel(bulk_blocks, 128, (np.int64(cycles), out_b), stream=bulk_stream)
    bulk_end.record(bulk_stream)
    urgent_start.record(urgent_stream)
    kernel(urgent_blocks, 128, (np.int64(cycles), out_u), stream=urgent_stream)
    urgent_end.record(urgent_stream)
    bulk_stream.synchronize()
    urgent_stream.synchronize()
    urgent_ms = urgent_start.elapsed_ms(urgent_end)
    pair_ms = max(start.elapsed_ms(bulk_end), start.elapsed_ms(urgent_end))
    return urgent_ms, pair_ms


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--group-sms", type=int, default=0, help="urgent's SMs; 0: twice the least group")
    p.add_argument("--cycles", type=int, default=400_000)
    ns = p.parse_args()
    try:
        dev = cuabi.Device(0)
    except cuabi.CudaError as exc:
        print(f"bench_green_contexts: no CUDA device ({exc})", file=sys.stderr)
        return 2
    res = dev.sm_resource
    total = res.sm_count
    want = ns.group_sms or 2 * res.min_partition_size
    want = -(-want // res.alignment) * res.alignment
    urgent_res = res.split(1, want, 0)
    bulk_res = res.split(1, want, 1)  # the remainder
    urgent_ctx = urgent_res.create_green_context()
    bulk_ctx = bulk_res.create_green_context()
    n_urgent = urgent_ctx.sm_count
    kernel = dev.compile(SOURCE, name="busy.cu").get_kernel("busy")
    bulk_blocks = total * 32
    out_b = dev.zeros(bulk_blocks, np.uint32)
    out_u = dev.zeros(n_urgent, np.uint32)
    arrangements = {
        "primary": (dev.create_stream(non_blocking=True), dev.create_stream(non_blocking=True)),
        "green": (bulk_ctx.create_stream(), urgent_ctx.create_stream()),
    }
    times: Dict[str, List[Tuple[float, float]]] = {k: [] for k in arrangements}
    for name, (bs, us) in arrangements.items():  # warm-up
        timed_pair(kernel, bs, us, bulk_blocks, n_urgent, ns.cycles, out_b, out_u, dev)
    for _ in range(ns.rounds):
        for name, (bs, us) in arrangements.items():
            times[name].append(timed_pair(kernel, bs, us, bulk_blocks, n_urgent, ns.cycles,
                                          out_b, out_u, dev))
    print(f"bulk: {bulk_blocks} blocks on {total - n_urgent} SMs (green) or all {total}; "
          f"urgent: {n_urgent} blocks on {n_urgent} SMs (green) or any; {ns.cycles} cycles a block")
    print("| arrangement | urgent median ms | urgent min ms | pair median ms |")
    print("|---|---|---|---|")
    for name, t in times.items():
        u = [a for a, _ in t]
        pair = [b for _, b in t]
        print(f"| {name} | {statistics.median(u):.3f} | {min(u):.3f} | {statistics.median(pair):.3f} |")
    ratio = statistics.median([a for a, _ in times["primary"]]) / statistics.median(
        [a for a, _ in times["green"]])
    print(f"urgent on its own green context: {ratio:.2f}x faster than beside bulk on the primary context")
    return 0


if __name__ == "__main__":
    sys.exit(main())
