"""SAXPY through cuabi's low layer, step for step as NVIDIA's CUDA Python
overview walks it: compile CUDA C++ with NVRTC, load the PTX as a module, get
the kernel, allocate, copy in asynchronously on a stream, launch with an
explicit kernel parameter array (the overview's NumPy way), copy back,
synchronise, verify; then launch again through a launch plan, the fastest
way to launch many times; free.

Every call is a function of include/cuabi/cuabi.h, through ctypes.

Exit status: 0 when the result is verified, 1 on a failure, 2 when there is
no CUDA device (the kernel is still compiled, to show NVRTC works).
"""

import ctypes
import struct
import sys
from ctypes import byref

import numpy as np

from cuabi import capi

L = capi.load("ctypes")  # the library, its functions declared from the header
lib = L.lib


def checkCudaErrors(status: int) -> None:
    """Raises the cuabi.CudaError of a failed call, with the core's message."""
    L.check(status)


saxpy = """\
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
"""

NUM_THREADS = 512  # Threads per block
NUM_BLOCKS = 32768  # Blocks per grid


def main() -> int:
    # Initialize the driver and find device 0 (cuInit, cuDeviceGet)
    count = ctypes.c_int32(0)
    status = lib.cuabi_device_get_count(byref(count))
    no_device = None
    if status != capi.CUABI_SUCCESS:
        no_device = lib.cuabi_last_error_message().decode()
    elif count.value == 0:
        no_device = "the driver reports 0 devices"

    if no_device is None:
        cuDevice = capi.cuabi_device()
        checkCudaErrors(lib.cuabi_device_get(0, byref(cuDevice)))
        # Derive target architecture for device 0
        major, minor = ctypes.c_int32(), ctypes.c_int32()
        checkCudaErrors(
            lib.cuabi_device_get_compute_capability(
                cuDevice, byref(major), byref(minor)
            )
        )
        arch_arg = f"--gpu-architecture=compute_{major.value}{minor.value}".encode()
    else:
        arch_arg = b"--gpu-architecture=compute_75"

    # Create program
    prog = capi.cuabi_program()
    checkCudaErrors(
        lib.cuabi_program_create(
            saxpy.encode(), b"saxpy.cu", 0, None, None, byref(prog)
        )
    )

    # Compile program
    opts = (ctypes.c_char_p * 2)(b"--fmad=false", arch_arg)
    checkCudaErrors(lib.cuabi_program_compile(prog, 2, opts))

    # Get PTX from compilation
    ptxSize = ctypes.c_size_t(0)
    checkCudaErrors(lib.cuabi_program_get_ptx(prog, None, byref(ptxSize)))
    ptx = ctypes.create_string_buffer(ptxSize.value)
    checkCudaErrors(lib.cuabi_program_get_ptx(prog, ptx, byref(ptxSize)))
    lib.cuabi_program_release(prog)
    print(
        f"compiled saxpy with NVRTC: {ptxSize.value} bytes of PTX ({arch_arg.decode()})"
    )

    if no_device is not None:
        print(f"No CUDA device found: {no_device}", file=sys.stderr)
        return 2

    # Context: the device handle holds device 0's primary context (the one
    # CuPy and PyTorch use); every call makes it current by itself.

    # Load PTX as module data and retrieve function
    module = capi.cuabi_module()
    checkCudaErrors(
        lib.cuabi_module_load_data(cuDevice, ptx, ptxSize.value, byref(module))
    )
    kernel = capi.cuabi_function()
    checkCudaErrors(lib.cuabi_module_get_function(module, b"saxpy", byref(kernel)))

    # Host data. n is a size_t in the kernel: 8 bytes, so np.uint64.
    a = np.array([2.0], dtype=np.float32)
    n = np.array(NUM_THREADS * NUM_BLOCKS, dtype=np.uint64)
    bufferSize = int(n) * a.itemsize

    hX = np.random.rand(int(n)).astype(dtype=np.float32)
    hY = np.random.rand(int(n)).astype(dtype=np.float32)
    hOut = np.zeros(int(n)).astype(dtype=np.float32)

    # Device memory, a stream, and the copies in
    dXclass, dYclass, dOutclass = (
        capi.cuabi_buffer(),
        capi.cuabi_buffer(),
        capi.cuabi_buffer(),
    )
    for buf in (dXclass, dYclass, dOutclass):
        checkCudaErrors(lib.cuabi_buffer_alloc(cuDevice, bufferSize, byref(buf)))

    stream = capi.cuabi_stream()
    checkCudaErrors(lib.cuabi_stream_create(cuDevice, 0, 0, byref(stream)))

    checkCudaErrors(
        lib.cuabi_buffer_copy_from_host_async(
            dXclass, 0, hX.ctypes.data, bufferSize, stream
        )
    )
    checkCudaErrors(
        lib.cuabi_buffer_copy_from_host_async(
            dYclass, 0, hY.ctypes.data, bufferSize, stream
        )
    )

    # The device pointers, each in a one-element np.uint64 array
    def device_pointer(buf) -> np.ndarray:
        ptr = ctypes.c_uint64()
        checkCudaErrors(lib.cuabi_buffer_get_pointer(buf, byref(ptr)))
        return np.array([ptr.value], dtype=np.uint64)

    dX, dY, dOut = (
        device_pointer(dXclass),
        device_pointer(dYclass),
        device_pointer(dOutclass),
    )

    # The launch configuration: the library's defaults, then grid and block
    config = capi.cuabi_launch_config()
    checkCudaErrors(lib.cuabi_launch_config_init(byref(config), ctypes.sizeof(config)))
    config.grid_x = NUM_BLOCKS  # grid x dim
    config.block_x = NUM_THREADS  # block x dim

    # The overview passes n as a 4-byte np.uint32 to the size_t parameter.
    # cuabi_function_launch_sized checks every argument's size and refuses it.
    n32 = np.array(NUM_THREADS * NUM_BLOCKS, dtype=np.uint32)
    bad = [a, dX, dY, dOut, n32]
    bad_args = np.array([arg.ctypes.data for arg in bad], dtype=np.uint64)
    bad_sizes = (ctypes.c_size_t * 5)(*[arg.itemsize for arg in bad])
    status = lib.cuabi_function_launch_sized(
        kernel, byref(config), stream, bad_args.ctypes.data, bad_sizes, 5
    )
    if status != capi.CUABI_ERROR_INVALID_ARGUMENT:
        print("a 4-byte n for a size_t parameter was not refused", file=sys.stderr)
        return 1
    print(f"refused as it should be: {lib.cuabi_last_error_message().decode()}")

    # The argument list: a contiguous array of pointers, one to each argument
    args = [a, dX, dY, dOut, n]
    args = np.array([arg.ctypes.data for arg in args], dtype=np.uint64)

    start, stop = capi.cuabi_event(), capi.cuabi_event()
    checkCudaErrors(lib.cuabi_event_create(cuDevice, 0, byref(start)))
    checkCudaErrors(lib.cuabi_event_create(cuDevice, 0, byref(stop)))

    # Launch (cuLaunchKernel's convention: kernelParams = args.ctypes.data)
    checkCudaErrors(lib.cuabi_event_record(start, stream))
    checkCudaErrors(
        lib.cuabi_function_launch(kernel, byref(config), stream, args.ctypes.data, 5)
    )
    checkCudaErrors(lib.cuabi_event_record(stop, stream))

    checkCudaErrors(
        lib.cuabi_buffer_copy_to_host_async(
            dOutclass, 0, hOut.ctypes.data, bufferSize, stream
        )
    )
    checkCudaErrors(lib.cuabi_stream_synchronize(stream))

    ms = ctypes.c_float()
    checkCudaErrors(lib.cuabi_event_get_elapsed_ms(start, stop, byref(ms)))

    # Assert values are same after running kernel
    hZ = a * hX + hY
    ok = np.allclose(hOut, hZ)
    print(f"saxpy: n = {int(n)}, {NUM_BLOCKS} blocks x {NUM_THREADS} threads")
    print(f"kernel time: {ms.value:.3f} ms")
    print(
        f"check: {'OK' if ok else 'FAILED'} (max abs error {np.max(np.abs(hOut - hZ)):.3g})"
    )

    # Launching many times: a launch plan checks the function, configuration
    # and stream once and owns an argument block laid out at the kernel's
    # parameter offsets. Write the arguments into it in place, then launch
    # with one argument.
    plan = capi.cuabi_launch_plan()
    checkCudaErrors(
        lib.cuabi_launch_plan_create(kernel, byref(config), stream, byref(plan))
    )
    blockAddress, blockSize = ctypes.c_void_p(), ctypes.c_size_t()
    checkCudaErrors(
        lib.cuabi_launch_plan_get_args(plan, byref(blockAddress), byref(blockSize))
    )
    block = L.memory_view(blockAddress.value, blockSize.value)
    layout = struct.Struct("<f4xQQQQ")  # float a, 3 pointers, size_t n
    assert layout.size == blockSize.value
    for a2 in (3.0, -1.5):
        layout.pack_into(block, 0, a2, int(dX[0]), int(dY[0]), int(dOut[0]), int(n))
        checkCudaErrors(lib.cuabi_launch_plan_launch(plan))
    checkCudaErrors(
        lib.cuabi_buffer_copy_to_host_async(
            dOutclass, 0, hOut.ctypes.data, bufferSize, stream
        )
    )
    checkCudaErrors(lib.cuabi_stream_synchronize(stream))
    del block  # the plan owns the memory it views
    lib.cuabi_launch_plan_release(plan)
    plan_ok = np.allclose(hOut, np.float32(-1.5) * hX + hY)
    print(f"launch plan: {'OK' if plan_ok else 'FAILED'}")

    # Free everything (in any order: cuabi keeps what each object needs alive)
    lib.cuabi_event_release(start)
    lib.cuabi_event_release(stop)
    lib.cuabi_stream_release(stream)
    for buf in (dXclass, dYclass, dOutclass):
        lib.cuabi_buffer_release(buf)
    lib.cuabi_function_release(kernel)
    lib.cuabi_module_release(module)
    lib.cuabi_device_release(cuDevice)
    return 0 if ok and plan_ok else 1


if __name__ == "__main__":
    sys.exit(main())
