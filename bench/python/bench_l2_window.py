"""An L2 access-policy window as a launch attribute: a kernel that reads a hot
region again and again while streaming once through a cold one, timed

  plain            no window, no persisting-L2 set-aside
  window           LaunchConfig(access_policy_window=hot, PERSISTING hits,
                   STREAMING misses) plus a persisting-L2 set-aside of the
                   hot region's size (Limit.PERSISTING_L2_CACHE_SIZE, at most
                   the device's maximum)

in alternating rounds on one stream, timed with events. The hot region is
sized to fit the set-aside; the cold one is many times the L2. Prints the
median milliseconds per launch of each and the speed-up; exit 2 without a
device. The set-aside is reset and put back as it was at the end.

    python3 bench/python/bench_l2_window.py [--rounds N] [--hot-mib N] [--cold-mib N] [--reps N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Dict, List

import numpy as np

import cuabi
from cuabi import _api

MAX_PERSISTING_L2 = 108  # CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
MAX_WINDOW = 109  # CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE
L2_SIZE = 38  # CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE

SOURCE = r"""
// Each thread streams through its share of `cold` once (plain loads, which
// compete for L2 with everything else) and, for each cold element, reads
// `reps` scattered elements of `hot` (a region the size of the persisting L2
// set-aside); the sums go to out so nothing is elided.
extern "C" __global__ void hot_cold(const float* hot, unsigned hot_n, const float* cold,
                                    unsigned long long cold_n, int reps, float* out)
{
  float acc = 0.0f;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned h = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < cold_n; i += stride) {
    acc += cold[i];
    for (int r = 0; r < reps; ++r) {
      h = h * 1664525u + 1013904223u;
      acc += hot[h % hot_n];
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--hot-mib", type=int, default=0, help="0: the most the set-aside holds")
    p.add_argument("--cold-mib", type=int, default=1024)
    p.add_argument("--reps", type=int, default=8)
    ns = p.parse_args()
    try:
        dev = cuabi.Device(0)
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"bench_l2_window: no CUDA device ({exc})", file=sys.stderr)
        return 2
    most_persisting = dev.attribute(MAX_PERSISTING_L2)
    most_window = dev.attribute(MAX_WINDOW)
    if most_persisting <= 0 or most_window <= 0:
        print(f"bench_l2_window: device {dev.ordinal} has no persisting L2 "
              f"(set-aside {most_persisting}, window {most_window})", file=sys.stderr)
        return 2
    hot_bytes = (ns.hot_mib << 20) if ns.hot_mib else most_persisting
    hot_bytes = min(hot_bytes, most_window, most_persisting)
    hot_n = hot_bytes // 4
    cold_n = (ns.cold_mib << 20) // 4
    kernel = dev.compile(SOURCE, name="bench_l2_window.cu").get_kernel("hot_cold")
    rng = np.random.default_rng(1)
    s = dev.create_stream(non_blocking=True)
    hot = dev.to_device(rng.random(hot_n, dtype=np.float32), s)
    cold = dev.to_device(rng.random(cold_n, dtype=np.float32), s)
    blocks, threads = dev.multiprocessor_count * 8, 256
    out = dev.zeros(blocks * threads, np.float32)
    args = (hot, np.uint32(hot_n), cold, np.uint64(cold_n), np.int32(ns.reps), out)
    window = cuabi.AccessPolicyWindow(base=hot.ptr, bytes=hot_bytes, hit_ratio=1.0,
                                      hit_property=_api.AccessProperty.PERSISTING,
                                      miss_property=_api.AccessProperty.STREAMING)
    plain = kernel.prepare(blocks, threads, stream=s)
    windowed = kernel.prepare(blocks, threads, stream=s, access_policy_window=window)
    before = dev.get_limit(_api.Limit.PERSISTING_L2_CACHE_SIZE)
    start, stop = dev.create_event(), dev.create_event()
    times: Dict[str, List[float]] = {"plain": [], "window + set-aside": []}

    def timed(launch, set_aside: int) -> float:  # type: ignore[no-untyped-def]
        dev.set_limit(_api.Limit.PERSISTING_L2_CACHE_SIZE, set_aside)
        dev.reset_persisting_l2()
        launch(*args)  # warm the L2 as a loop of launches would
        start.record(s)
        for _ in range(ns.iters):
            launch(*args)
        stop.record(s)
        stop.synchronize()
        return start.elapsed_ms(stop) / ns.iters

    try:
        for r in range(ns.rounds):
            order = [("plain", plain, 0), ("window + set-aside", windowed, hot_bytes)]
            if r % 2:
                order.reverse()
            for name, launch, set_aside in order:
                times[name].append(timed(launch, set_aside))
    finally:
        dev.reset_persisting_l2()
        dev.set_limit(_api.Limit.PERSISTING_L2_CACHE_SIZE, before)
    l2 = dev.attribute(L2_SIZE)
    print(f"hot {hot_bytes >> 20} MiB read {ns.reps}x per cold element while streaming "
          f"{ns.cold_mib} MiB cold (L2 {l2 >> 20} MiB, set-aside at most {most_persisting >> 20} MiB); "
          f"median of {ns.rounds} rounds x {ns.iters} launches")
    print("| launch | median ms | min ms |")
    print("|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.3f} | {min(t):.3f} |")
    ratio = statistics.median(times["plain"]) / statistics.median(times["window + set-aside"])
    print(f"window + set-aside: {ratio:.2f}x the plain launch's speed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
