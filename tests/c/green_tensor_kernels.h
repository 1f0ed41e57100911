// Kernels of the green-context and tensor-map GPU tests (C and C++).
#ifndef CUABI_TESTS_C_GREEN_TENSOR_KERNELS_H
#define CUABI_TESTS_C_GREEN_TENSOR_KERNELS_H

namespace cuabi_test {

// Each block spins for a while so that the blocks spread over every SM the
// scheduler may use, then records the SM it ran on.
inline const char* const kSmidSource = R"(
extern "C" __global__ void record_smid(unsigned* out, long long spin) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = id;
}
)";

// Copies one 32 x 8 float box per block from the tensor map into shared
// memory with cp.async.bulk.tensor (sm_90), waits on an mbarrier for its
// 1024 bytes, and dumps the shared tile as it landed (swizzled or not).
inline const char* const kTileSource = R"(
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

extern "C" __global__ void copy_tiles(const __grid_constant__ TensorMap map, float* out,
                                      int tiles_x) {
  __shared__ __align__(1024) float tile[256];  // one 32 x 8 box
  __shared__ __align__(8) unsigned long long bar;
  const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned mbar = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(mbar), "r"(1u) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int x = static_cast<int>(blockIdx.x % tiles_x) * 32;
    const int y = static_cast<int>(blockIdx.x / tiles_x) * 8;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(mbar), "r"(1024u) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y),
          "r"(mbar)
        : "memory");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(mbar), "r"(0u)
        : "memory");
  }
  out[blockIdx.x * 256 + threadIdx.x] = tile[threadIdx.x];
}
)";

}  // namespace cuabi_test

#endif  // CUABI_TESTS_C_GREEN_TENSOR_KERNELS_H
