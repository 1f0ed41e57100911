"""ipc_peer.py: ipc_peer.c on cuabi's Python objects.

The parent, on GPU 0, queues a slow kernel and a fill of a buffer, records an
interprocess event after them without waiting, and starts this same script
as a child process (subprocess, with the buffer's and the event's IPC handles
as hex on its command line). The child, on GPU 1, opens the event on GPU 0
(the exporter's device) and makes a stream of GPU 1 wait on it, then opens
the buffer:

  --mode peer  on GPU 1 (peer access where GPU 1 can reach GPU 0; the copy
               path cuabi reports is printed), copies it into a GPU 1 buffer,
               checks it, and a kernel on GPU 1 writes 2 * x + 1 back
               through the opened buffer;
  --mode copy  on GPU 0, copies it into a GPU 1 buffer, checks it there,
               transforms it on GPU 1 and copies the result back.

The parent waits for the child (with a deadline) and checks every value.
Without --mode both runs are made, one child each.

    python3 ipc_peer.py [--child-device D] [--mode peer|copy] [--elements N] [--timeout S]

``--child-device 0`` runs the child on the parent's GPU (the flow on one
GPU). With one device and no --child-device: prints "ipc_peer.py: needs two
devices, found 1" and exits 0. Exit status: 0 verified (or one device),
1 failure, 3 no CUDA device.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

import cuabi

PROG = "ipc_peer.py"
SOURCE = r"""
extern "C" __global__ void delay(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
extern "C" __global__ void fill(float* x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = (float)(i % 1000) * 0.5f;
}
extern "C" __global__ void transform(float* x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = 2.0f * x[i] + 1.0f;
}
"""
THREADS = 256
CLOCK_RATE = 13  # CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz
PATH_TEXT = {
    cuabi.CopyPath.SAME_DEVICE: "within one device",
    cuabi.CopyPath.PEER: "direct (peer access)",
    cuabi.CopyPath.THROUGH_HOST: "through host memory",
}


def blocks_for(n: int) -> int:
    return max(1, min(4096, (n + THREADS - 1) // THREADS))


def expected(n: int) -> np.ndarray:
    return (np.arange(n) % 1000).astype(np.float32) * np.float32(0.5)


def child(args: argparse.Namespace) -> int:
    d0 = cuabi.Device(0)
    dc = cuabi.Device(args.child_device)
    n = args.elements
    stream = dc.create_stream(non_blocking=True)
    # The event is opened on the exporter's device; a stream of the child's
    # device waits on it.
    ready = cuabi.Event.open_ipc(d0, bytes.fromhex(args.event))
    stream.wait(ready)
    transform = dc.compile(SOURCE, name="ipc_peer.cu").get_kernel("transform")
    local = dc.empty(n, np.float32)
    if args.mode == "peer":
        opener = dc
        if dc.ordinal != d0.ordinal:
            if dc.can_access_peer(d0):
                dc.enable_peer_access(d0)
            else:  # GPU 0's memory is out of reach: opened where it lives
                print(f"{PROG} (child): GPU {dc.ordinal} cannot reach GPU 0's memory (no peer "
                      f"access); the buffer is opened on GPU 0")
                opener = d0
        shared = cuabi.DeviceBuffer.open_ipc(opener, bytes.fromhex(args.buffer))
    else:
        shared = cuabi.DeviceBuffer.open_ipc(d0, bytes.fromhex(args.buffer))
    if shared.nbytes != n * 4:
        print(f"{PROG} (child): the opened buffer has {shared.nbytes} bytes, "
              f"not {n * 4}", file=sys.stderr)
        return 1
    path = local.copy_path(shared)
    local.copy_from(shared, stream=stream)
    seen = local.copy_to_host(stream=stream)
    stream.synchronize()
    wrong = int(np.count_nonzero(seen.view(np.float32) != expected(n)))
    print(f"{PROG} (child, GPU {dc.ordinal}, --mode {args.mode}): buffer opened on GPU "
          f"{shared.device_ordinal}, read {PATH_TEXT[path]}: "
          f"{'every value as written' if not wrong else f'{wrong} values wrong'}")
    if wrong:
        return 1
    if shared.device_ordinal == dc.ordinal:  # in place, over the link
        transform(blocks_for(n), THREADS, (shared, np.uint64(n)), stream=stream)
    else:
        transform(blocks_for(n), THREADS, (local, np.uint64(n)), stream=stream)
        # Back to the parent's GPU: a copy is ordered on a stream of its
        # destination's device, so wait for the transform, then copy there.
        stream.synchronize()
        shared.copy_from(local)
    stream.synchronize()
    del shared
    return 0


def parent(args: argparse.Namespace, child_device: int, mode: str) -> int:
    d0 = cuabi.Device(0)
    n = args.elements
    stream = d0.create_stream(non_blocking=True)
    module = d0.compile(SOURCE, name="ipc_peer.cu")
    buf = d0.empty(n, np.float32)
    clock_khz = d0.attribute(CLOCK_RATE) or 1500000
    module.get_kernel("delay")(1, 1, (np.int64(clock_khz * 200),), stream=stream)
    module.get_kernel("fill")(blocks_for(n), THREADS, (buf, np.uint64(n)), stream=stream)
    ready = stream.record(d0.create_event(interprocess=True))
    command = [sys.executable, os.path.abspath(__file__), "--child",
               "--child-device", str(child_device), "--mode", mode,
               "--elements", str(n), "--buffer", buf.ipc_handle().hex(),
               "--event", ready.ipc_handle().hex()]
    try:
        done = subprocess.run(command, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"{PROG}: the child (GPU {child_device}, --mode {mode}) did not finish in "
              f"{args.timeout} s", file=sys.stderr)
        return 1
    if done.returncode != 0:
        how = (f"killed by signal {-done.returncode}" if done.returncode < 0
               else f"exit {done.returncode}")
        print(f"{PROG}: the child (GPU {child_device}, --mode {mode}) failed: {how}",
              file=sys.stderr)
        return 1
    seen = buf.copy_to_host(stream=stream)
    stream.synchronize()
    want = np.float32(2.0) * expected(n) + np.float32(1.0)
    wrong = int(np.count_nonzero(seen.view(np.float32) != want))
    print(f"{PROG}: --mode {mode}: the child on GPU {child_device} read GPU 0's buffer and "
          f"wrote 2 * x + 1: {'verified' if not wrong else f'{wrong} values wrong, FAILED'}")
    return 1 if wrong else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--child-device", type=int, default=None)
    parser.add_argument("--mode", choices=["peer", "copy"], default=None)
    parser.add_argument("--elements", type=int, default=1 << 22)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--buffer", help=argparse.SUPPRESS)
    parser.add_argument("--event", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.elements < 1 or args.timeout <= 0:
        parser.error("--elements and --timeout must be positive")
    if args.child:
        if args.child_device is None or args.mode is None or not args.buffer or not args.event:
            parser.error("--child needs --child-device, --mode, --buffer and --event")
        return child(args)

    try:
        count = cuabi.device_count()
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"{PROG}: no CUDA device: {exc}", file=sys.stderr)
        return 3
    if count == 0:
        print(f"{PROG}: no CUDA device: the driver reports 0 devices", file=sys.stderr)
        return 3
    if args.child_device is None:
        if count < 2:
            print(f"{PROG}: needs two devices, found {count}")
            return 0
        args.child_device = 1
    if not 0 <= args.child_device < count:
        parser.error(f"--child-device {args.child_device}: there are {count} devices")
    rc = 0
    for mode in [args.mode] if args.mode else ["peer", "copy"]:
        rc |= parent(args, args.child_device, mode)
    if rc == 0:
        print(f"{PROG}: PASSED")
    return rc


if __name__ == "__main__":
    sys.exit(main())
