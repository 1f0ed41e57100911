// CUDA C++ sources the tests compile at run time.
#ifndef CUABI_TESTS_C_KERNELS_H
#define CUABI_TESTS_C_KERNELS_H

namespace cuabi_test {

// The SAXPY kernel of the CUDA Python overview.
inline constexpr const char* kSaxpySource = R"(
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
)";

// A template kernel reached through name expressions.
inline constexpr const char* kWriteScalarSource = R"(
template <typename T>
__global__ void write_scalar(T* out, T value)
{
  *out = value;
}
)";

// A kernel that includes two named headers given with the program.
inline constexpr const char* kHeaderUserSource = R"(
#include "my_math.cuh"
#include "config/offset.h"
extern "C" __global__ void scale(float* x, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]) + SCALE_OFFSET;
}
)";

// Small kernels for the GPU suite.
inline constexpr const char* kUtilSource = R"(
// Waits until *flag turns non-zero (at most about ten seconds, so a broken
// test cannot hang), then writes 1 (flag seen) or 2 (gave up) to out[0].
extern "C" __global__ void wait_flag(volatile int* flag, int* out)
{
  long long start = clock64();
  int seen = 0;
  while ((seen = *flag) == 0) {
    if (clock64() - start > 20000000000LL) break;
  }
  out[0] = seen ? 1 : 2;
}

extern "C" __global__ void add_scalar(int* x, int v, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}

extern "C" __global__ void times_ten_plus(int* x, int v)
{
  x[0] = x[0] * 10 + v;
}

__device__ int counter[4];
__constant__ float coeff;

extern "C" __global__ void bump_counter(float* out)
{
  atomicAdd(&counter[threadIdx.x % 4], 1);
  if (threadIdx.x == 0) out[0] = coeff;
}

extern "C" __global__ void __launch_bounds__(128) bounded(int* x)
{
  x[threadIdx.x] = threadIdx.x;
}

extern "C" __global__ void reverse_in_shared(int* out)
{
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void no_params() {}

extern "C" __global__ void trap_kernel() { __trap(); }
)";

}  // namespace cuabi_test

#endif  // CUABI_TESTS_C_KERNELS_H
