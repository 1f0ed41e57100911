"""Four programs compiled one after the other, then from four Python threads
at once, alternating in rounds; prints the median wall time of each. Needs
NVRTC only (no GPU): cuabi releases the GIL for the whole compile, so the
threads' compiles overlap.

    python3 bench/python/bench_compile_threads.py [--rounds N] [--kernels N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

import cuabi


def source(tag: int, kernels: int) -> str:
    return "".join(
        f'extern "C" __global__ void k{tag}_{i}(float* p, int n) {{ float s = 0; '
        f"for (int j = 0; j < n; ++j) s += __sinf(p[j] * {i}.5f) * p[j + {i}]; "
        f"p[{i}] = s; }}\n"
        for i in range(kernels)
    )


def compile_one(src: str) -> None:
    p = cuabi.Program(src, "k.cu")
    p.compile(["--gpu-architecture=sm_90"])
    assert p.cubin


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kernels", type=int, default=60)
    ns = ap.parse_args()
    sources = [source(t, ns.kernels) for t in range(4)]
    serial, threaded = [], []
    compile_one(sources[0])  # NVRTC loaded
    for r in range(ns.rounds):
        for way in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if way == 0:
                for s in sources:
                    compile_one(s)
                serial.append(time.perf_counter() - t0)
            else:
                ts = [threading.Thread(target=compile_one, args=(s,)) for s in sources]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                threaded.append(time.perf_counter() - t0)
    s, t = statistics.median(serial), statistics.median(threaded)
    print(f"four compiles of {ns.kernels} kernels each, median of {ns.rounds} rounds:")
    print(f"  one after the other: {s * 1000:.0f} ms")
    print(f"  four threads at once: {t * 1000:.0f} ms ({s / t:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
