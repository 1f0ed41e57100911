"""multi_saxpy.py: multi_saxpy.c on cuabi's Python objects.

One process drives every GPU: SAXPY split over all devices (a stream, a
module and buffers per device), peer access enabled where possible, the
parts gathered on device 0 in the order events give (device 0 waits on each
device's event), device 1 waiting on an event recorded on device 0, and the
bandwidth of a 256 MiB copy between device 0 and device 1 with the path
``DeviceBuffer.copy_path`` reports.

With one device it runs the SAXPY (and the gather) on it, verifies it, prints
"multi_saxpy.py: needs two devices, found 1" and exits 0.

    python3 multi_saxpy.py [--devices N] [--elements N] [--copy-mib M] [--repeats R]

``--devices N`` uses N logical devices, logical device i on GPU i % count
(more than there are GPUs: every step runs on shared GPUs, a test of the
flow). Exit status: 0 verified (or one device), 1 failure, 3 no CUDA device.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import cuabi

PROG = "multi_saxpy.py"
SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out,
                                 size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
}
// Writes base + (i % 1024); the first thread first spins for `cycles`
// clock cycles, so the kernel ends that much later.
extern "C" __global__ void slow_fill(float* x, size_t n, float base, long long cycles) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = base + (float)(i % 1024);
}
"""
THREADS = 256
MAX_BLOCKS = 4096
CLOCK_RATE = 13  # CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz

PATH_TEXT = {
    cuabi.CopyPath.SAME_DEVICE: "within one device",
    cuabi.CopyPath.PEER: "direct (peer access)",
    cuabi.CopyPath.THROUGH_HOST: "through host memory",
}


def blocks_for(n: int) -> int:
    return max(1, min(MAX_BLOCKS, (n + THREADS - 1) // THREADS))


def time_copy(dev, stream, dst, src, nbytes: int, repeats: int) -> tuple:
    """(ms per copy, GB/s) of `repeats` copies src -> dst on `stream` (of dst's device)."""
    dst.copy_from(src, nbytes, stream=stream)  # warm-up
    stream.synchronize()
    start = stream.record(dev.create_event())
    for _ in range(repeats):
        dst.copy_from(src, nbytes, stream=stream)
    stop = stream.record(dev.create_event())
    stream.synchronize()
    ms = (stop - start) / repeats
    return ms, nbytes / (ms * 1e-3) / 1e9


def main() -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=0)
    parser.add_argument("--elements", type=int, default=1 << 25)
    parser.add_argument("--copy-mib", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    if args.devices < 0 or args.elements < 1 or args.copy_mib < 1 or args.repeats < 1:
        parser.error("every number must be positive")

    try:
        count = cuabi.device_count()
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"{PROG}: no CUDA device: {exc}", file=sys.stderr)
        return 3
    if count == 0:
        print(f"{PROG}: no CUDA device: the driver reports 0 devices", file=sys.stderr)
        return 3
    ndev = min(args.devices, 64) if args.devices else count
    n = max(args.elements, ndev)
    print(
        f"{PROG}: {count} CUDA device{'s' if count != 1 else ''}; using {ndev} logical "
        f"device{'s' if ndev != 1 else ''}"
        + (" (more than there are GPUs: logical device i runs on GPU i % count)"
           if ndev > count else "")
    )

    devices = [cuabi.Device(i % count) for i in range(ndev)]
    streams = [d.create_stream(non_blocking=True) for d in devices]
    modules = [d.compile(SOURCE, options=["--fmad=false"], name="multi_saxpy.cu") for d in devices]
    saxpy = [m.get_kernel("saxpy") for m in modules]
    counts = [n // ndev + (1 if i < n % ndev else 0) for i in range(ndev)]
    offsets = [sum(counts[:i]) for i in range(ndev)]
    for i, d in enumerate(devices):
        print(f"  logical device {i}: GPU {d.ordinal} ({d.name}), elements "
              f"[{offsets[i]}, {offsets[i] + counts[i]})")

    # Peer access between every two distinct GPUs in use, where possible.
    gpus = min(ndev, count)
    direct = through_host = 0
    for i in range(gpus):
        for j in range(gpus):
            if i == j:
                continue
            if devices[i].can_access_peer(devices[j]):
                devices[i].enable_peer_access(devices[j])
                direct += 1
                state = "enabled"
            else:
                through_host += 1
                state = "not possible (copies go through host memory)"
            print(f"  peer access GPU {i} -> GPU {j}: {state}")

    rng = np.random.default_rng(12345)
    hx = rng.random(n, dtype=np.float32)
    hy = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)

    # 1. Every device: its part in, SAXPY, an event when done.
    t0 = time.perf_counter()
    outs, done, keep = [], [], []
    for i, (d, s) in enumerate(zip(devices, streams)):
        lo, hi = offsets[i], offsets[i] + counts[i]
        x = d.to_device(hx[lo:hi], stream=s)
        y = d.to_device(hy[lo:hi], stream=s)
        out = d.empty(counts[i], np.float32)
        saxpy[i](blocks_for(counts[i]), THREADS, (a, x, y, out, np.uint64(counts[i])), stream=s)
        done.append(s.record(d.create_event(timing=False)))
        outs.append(out)
        keep += [x, y]

    # 3. Gather on device 0, each copy after its device's event.
    gathered = devices[0].empty(n, np.float32)
    paths = {p: 0 for p in cuabi.CopyPath}
    for i, out in enumerate(outs):
        paths[gathered.copy_path(out)] += 1
        streams[0].wait(done[i])
        gathered.copy_from(out, dst_offset=offsets[i] * 4, stream=streams[0])
    hout = gathered.copy_to_host(stream=streams[0])
    streams[0].synchronize()
    elapsed = (time.perf_counter() - t0) * 1e3
    want = a * hx + hy
    ok = bool(np.allclose(hout, want, rtol=1e-5, atol=1e-6))
    print(
        f"{PROG}: SAXPY of {n} elements on {ndev} device{'s' if ndev != 1 else ''}, gathered on "
        f"device 0 ({paths[cuabi.CopyPath.SAME_DEVICE]} within device 0, "
        f"{paths[cuabi.CopyPath.PEER]} direct, {paths[cuabi.CopyPath.THROUGH_HOST]} through host) "
        f"in {elapsed:.1f} ms: {'verified' if ok else 'FAILED'} "
        f"(max abs error {float(np.max(np.abs(hout - want))):.3g})"
    )
    if not ok:
        return 1

    if ndev < 2:
        if args.devices:
            print(f"{PROG}: only 1 device asked for (--devices 1); the steps across devices "
                  f"need two")
        else:
            print(f"{PROG}: needs two devices, found {count}")
        return 0

    d0, d1, s0, s1 = devices[0], devices[1], streams[0], streams[1]
    # 4. Device 1 waits on an event recorded on device 0 after a slow kernel.
    m = 1 << 20
    a0 = d0.zeros(m, np.float32)
    a1 = d1.empty(m, np.float32)
    a1.memset(0xFF)
    slow_fill = modules[0].get_kernel("slow_fill")
    clock_khz = d0.attribute(CLOCK_RATE) or 1500000
    slow_fill(blocks_for(m), THREADS,
              (a0, np.uint64(m), np.float32(1000.0), np.int64(clock_khz * 50)), stream=s0)
    ready = s0.record(d0.create_event(timing=False))
    s1.wait(ready)
    a1.copy_from(a0, stream=s1)
    seen = a1.copy_to_host(stream=s1)
    s1.synchronize()
    expect = np.float32(1000.0) + (np.arange(m) % 1024).astype(np.float32)
    stale = int(np.count_nonzero(seen != expect))
    print(f"{PROG}: device 1's stream waited on an event recorded on device 0 after a ~50 ms "
          f"kernel; its copy of device 0's {m} values: "
          f"{'FAILED' if stale else 'all finished values'}")
    rc = 0
    if stale:
        print(f"{PROG}: {stale} values were read before device 0 had written them", file=sys.stderr)
        rc = 1

    # 5. Copy bandwidth between device 0 and device 1, both directions.
    cb = args.copy_mib << 20
    b0, b1 = d0.alloc(cb), d1.alloc(cb)
    b0.memset(1)
    b1.memset(2)
    fwd, back = b1.copy_path(b0), b0.copy_path(b1)
    ms, gbs = time_copy(d1, s1, b1, b0, cb, args.repeats)
    print(f"{PROG}: copy device 0 -> device 1 (GPU {d0.ordinal} -> GPU {d1.ordinal}), "
          f"{args.copy_mib} MiB, {PATH_TEXT[fwd]}: {ms:.3f} ms each, {gbs:.1f} GB/s")
    b1.memset(2)  # what the copies back must bring
    ms, gbs = time_copy(d0, s0, b0, b1, cb, args.repeats)
    print(f"{PROG}: copy device 1 -> device 0 (GPU {d1.ordinal} -> GPU {d0.ordinal}), "
          f"{args.copy_mib} MiB, {PATH_TEXT[back]}: {ms:.3f} ms each, {gbs:.1f} GB/s")
    if d0.ordinal == d1.ordinal:
        print(f"{PROG}: note: logical devices 0 and 1 share GPU {d0.ordinal}, so these are "
              f"copies within one GPU, not peer copies")
    tail = bytearray(16)
    b0.copy_to_host(tail, offset=cb - 16)
    if any(v != 2 for v in tail):
        print(f"{PROG}: the copy from device 1 did not arrive on device 0", file=sys.stderr)
        rc = 1
    if rc == 0:
        print(f"{PROG}: PASSED on {ndev} devices ({direct} peer pair{'s' if direct != 1 else ''} "
              f"direct, {through_host} through host)")
    return rc


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.exit(main())
