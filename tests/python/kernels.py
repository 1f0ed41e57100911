"""CUDA C++ sources shared by the tests."""

import numpy as np

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

# The overview's "Preparing kernel arguments" kernel.
TEST_STRUCT = """\
typedef struct {
    int value;
} testStruct;

extern "C" __global__
void testkernel(int i, int *pi,
                float f, float *pf,
                testStruct s, testStruct *ps)
{
    *pi = i;
    *pf = f;
    ps->value = s.value;
}
"""

# One template for every NumPy scalar type; float16 travels as its 16 bits
# (NVRTC has no <cuda_fp16.h> without the toolkit's include folder).
WRITE_SCALAR = """\
struct __align__(2) half_bits { unsigned short bits; };

template <typename T>
__global__ void write_scalar(T value, T* out)
{
    *out = value;
}
"""

# NumPy type -> the C++ type of the kernel parameter
SCALAR_TYPES = {
    np.bool_: "bool",
    np.int8: "signed char",
    np.int16: "short",
    np.int32: "int",
    np.int64: "long long",
    np.uint8: "unsigned char",
    np.uint16: "unsigned short",
    np.uint32: "unsigned int",
    np.uint64: "unsigned long long",
    np.float16: "half_bits",
    np.float32: "float",
    np.float64: "double",
    np.complex64: "float2",
    np.complex128: "double2",
}


def write_scalar_expression(np_type) -> str:
    return f"write_scalar<{SCALAR_TYPES[np_type]}>"


WRITE_SCALAR_EXPRESSIONS = [write_scalar_expression(t) for t in SCALAR_TYPES]

ADD_ONE = """\
extern "C" __global__ void add_one(int* p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}
"""

# Writes through a NULL pointer: a sticky fault that loses the context.
CRASH = """\
extern "C" __global__ void crash(int* p)
{
    p[threadIdx.x] = 1;
}
"""

GLOBALS = """\
__device__ int counter = 7;
extern "C" __global__ void bump() { counter += 1; }
"""
