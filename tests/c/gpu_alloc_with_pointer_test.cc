// Allocation answering the address too (cuabi_buffer_alloc_with_pointer,
// cuabi_buffer_alloc_async_with_pointer): the address is the buffer's, a
// kernel given that raw address writes the buffer's memory, and the buffer
// is freed as its kind says (cuMemFree; in stream order on its stream, by
// cuabi_buffer_free_async or by release). Through the C API and cuabi.hpp.
#include <string>
#include <vector>

#include <cuabi/cuabi.hpp>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using AllocWithPointerTest = GpuTest;

const unsigned kCount = 1024;

// saxpy(a, x, y, out, n) on `stream` with `out` the raw address `out_ptr`.
void Saxpy(cuabi_function f, cuabi_stream stream, float a, cuabi_buffer x, cuabi_buffer y,
           uint64_t out_ptr) {
  uint64_t px = 0, py = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pointer(x, &px));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pointer(y, &py));
  size_t n = kCount;
  void* args[] = {&a, &px, &py, &out_ptr, &n};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.grid_x = (kCount + 255) / 256;
  config.block_x = 256;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &config, stream, args, 5)) << LastError();
}

// Inputs x[i] = i, y[i] = 1 on the device.
struct Inputs {
  Buffer x, y;
};
Inputs MakeInputs(cuabi_device device) {
  Inputs in;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device, kCount * sizeof(float), in.x.out()));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device, kCount * sizeof(float), in.y.out()));
  std::vector<float> x(kCount), y(kCount, 1.0f);
  for (unsigned i = 0; i < kCount; ++i) x[i] = static_cast<float>(i);
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(in.x, 0, x.data(), kCount * sizeof(float)));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(in.y, 0, y.data(), kCount * sizeof(float)));
  return in;
}

TEST_F(AllocWithPointerTest, PlainAllocationAnswersItsAddress) {
  Module m = Compile(kSaxpySource);
  Function saxpy = GetFunction(m, "saxpy");
  Inputs in = MakeInputs(device_);
  Buffer b;
  uint64_t ptr = 0;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_buffer_alloc_with_pointer(device_, kCount * sizeof(float), b.out(), &ptr))
      << LastError();
  ASSERT_NE(0u, ptr);
  EXPECT_EQ(Pointer(b), ptr);
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(b, &size));
  EXPECT_EQ(kCount * sizeof(float), size);
  cuabi_buffer_kind kind = CUABI_BUFFER_KIND_FORCE32;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_kind(b, &kind));
  EXPECT_EQ(CUABI_BUFFER_DEVICE, kind);
  // A kernel given the raw address writes the buffer's memory.
  Saxpy(saxpy, nullptr, 2.0f, in.x, in.y, ptr);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  const std::vector<float> back = Download<float>(b, kCount);
  for (unsigned i = 0; i < kCount; ++i) ASSERT_EQ(2.0f * i + 1.0f, back[i]) << i;
}

TEST_F(AllocWithPointerTest, StreamOrderedAllocationAnswersItsAddress) {
  Module m = Compile(kSaxpySource);
  Function saxpy = GetFunction(m, "saxpy");
  Inputs in = MakeInputs(device_);
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  // The default pool (NULL), then a pool of its own.
  MemoryPool own;
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_create(device_, nullptr, own.out()))
          << LastError();
    }
    cuabi_memory_pool from = round == 0 ? nullptr : own.get();
    SCOPED_TRACE(from ? "a pool of its own" : "the default pool");
    Buffer b;
    uint64_t ptr = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async_with_pointer(
                                 device_, kCount * sizeof(float), from, s, b.out(), &ptr))
        << LastError();
    ASSERT_NE(0u, ptr);
    EXPECT_EQ(Pointer(b), ptr);
    cuabi_buffer_kind kind = CUABI_BUFFER_KIND_FORCE32;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_kind(b, &kind));
    EXPECT_EQ(CUABI_BUFFER_STREAM_ORDERED, kind);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset_async(b, 0, 0, kCount * sizeof(float), s));
    Saxpy(saxpy, s, 3.0f, in.x, in.y, ptr);
    std::vector<float> back(kCount, -1.0f);
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_copy_to_host_async(b, 0, back.data(), kCount * sizeof(float), s));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
    for (unsigned i = 0; i < kCount; ++i) ASSERT_EQ(3.0f * i + 1.0f, back[i]) << i;
    // Freed in order on its stream; the handle is gone.
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_free_async(b.detach(), s)) << LastError();
  }
  // Released without a free: freed in order on the stream it came from.
  {
    Buffer b;
    uint64_t ptr = 0;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_alloc_async_with_pointer(device_, 256, own, s, b.out(), &ptr));
    EXPECT_EQ(Pointer(b), ptr);
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  uint64_t reserved = 0, used = 1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_get_usage(own, &reserved, &used));
  EXPECT_EQ(0u, used) << "every allocation of the pool was freed";
}

TEST_F(AllocWithPointerTest, OutOfMemoryWritesNothing) {
  Buffer b;
  uint64_t ptr = 0x77;
  EXPECT_EQ(CUABI_ERROR_OUT_OF_MEMORY,
            cuabi_buffer_alloc_with_pointer(device_, size_t(1) << 50, b.out(), &ptr));
  EXPECT_EQ(nullptr, b.get());
  EXPECT_EQ(0x77u, ptr);
  EXPECT_EQ(CUABI_ERROR_OUT_OF_MEMORY, cuabi_buffer_alloc_async_with_pointer(
                                           device_, size_t(1) << 50, nullptr, nullptr, b.out(),
                                           &ptr));
  EXPECT_EQ(nullptr, b.get());
  EXPECT_EQ(0x77u, ptr);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
}

TEST_F(AllocWithPointerTest, CxxFormsAnswerTheAddress) {
  uint64_t ptr = 0;
  cuabi::buffer b = cuabi::buffer::alloc_with_pointer(device_, 4096, ptr);
  EXPECT_EQ(Pointer(b), ptr);
  cuabi::stream s = cuabi::stream::create(device_.get(), 0, 0);
  uint64_t ptr2 = 0;
  cuabi::buffer c = cuabi::buffer::alloc_async_with_pointer(device_, 4096, nullptr, s, ptr2);
  EXPECT_EQ(Pointer(c), ptr2);
  EXPECT_NE(ptr, ptr2);
  c.reset();
  s.synchronize();
  EXPECT_THROW(cuabi::buffer::alloc_with_pointer(device_, 0, ptr), cuabi::error);
}

}  // namespace
}  // namespace cuabi_test
