"""SAXPY on cuabi's objects: the overview's flow in a few lines.

Exit status: 0 when verified, 1 on a failure, 2 when there is no CUDA device.
"""

import sys

import numpy as np

import cuabi

SAXPY = """\
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
"""
NUM_THREADS, NUM_BLOCKS = 512, 32768

try:
    dev = cuabi.Device(0)
except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
    cuabi.Program(SAXPY, "saxpy.cu").compile(
        ["--fmad=false", "--gpu-architecture=compute_75"]
    )
    print(
        f"compiled saxpy with NVRTC\nNo CUDA device found: {exc.message}",
        file=sys.stderr,
    )
    sys.exit(2)

n = NUM_THREADS * NUM_BLOCKS
a, hX, hY = np.float32(2.0), *(np.random.rand(2, n).astype(np.float32))
saxpy = dev.compile(SAXPY, options=["--fmad=false"]).get_kernel("saxpy")
with dev.create_stream() as stream:
    dX, dY, dOut = (
        dev.to_device(hX, stream),
        dev.to_device(hY, stream),
        dev.empty(n, np.float32),
    )
    start = stream.record()
    saxpy(NUM_BLOCKS, NUM_THREADS, (a, dX, dY, dOut, np.uint64(n)), stream=stream)
    stop = stream.record()
    hOut = dOut.copy_to_host(stream=stream)
    stream.synchronize()

    # The configuration the occupancy calculator suggests for n elements, and
    # a captured graph replayed with new arguments without instantiating again.
    saxpy(saxpy.suggest_config(n), (np.float32(3.0), dX, dY, dOut, np.uint64(n)), stream=stream)
    hSuggested = dOut.copy_to_host(stream=stream)
    stream.synchronize()
    suggested = bool(np.allclose(hSuggested, 3 * hX + hY))
    with stream.capture() as cap:
        saxpy(NUM_BLOCKS, NUM_THREADS, (a, dX, dY, dOut, np.uint64(n)), stream=stream)
    with cap.graph, cap.graph.instantiate() as graph:
        replayed = True
        for factor in (4.0, 5.0):
            graph.set_kernel_node_args(0, saxpy, (np.float32(factor), dX, dY, dOut, np.uint64(n)))
            graph.launch(stream)
            hReplay = dOut.copy_to_host(stream=stream)
            stream.synchronize()
            replayed = replayed and bool(np.allclose(hReplay, np.float32(factor) * hX + hY))

ok = np.allclose(hOut, a * hX + hY) and suggested and replayed
print(f"kernel time: {stop - start:.3f} ms")
print(f"suggested config: {'OK' if suggested else 'FAILED'}; graph replay: {'OK' if replayed else 'FAILED'}")
print(f"check: {'OK' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
