// Stream memory operations: a kernel held back by a wait on pinned host
// memory until the host writes the word; a producer and a consumer stream
// ordered by a written and awaited word alone (no event); 32- and 64-bit
// words; and the words' checks.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using MemOpsTest = GpuTest;

const char* kSource =
    "extern \"C\" __global__ void spin_then_fill(float* x, int n, float v, long long cycles) {\n"
    "  const long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {}\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "    x[i] = v;\n"
    "}\n"
    "extern \"C\" __global__ void copy(float* y, const float* x, int n) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "    y[i] = x[i];\n"
    "}\n";

cuabi_launch_config Config() {
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = 64;
  c.block_x = 256;
  return c;
}

TEST_F(MemOpsTest, AKernelWaitsForTheHostToWriteTheWord) {
  Module m = Compile(kSource);
  Function fill = GetFunction(m, "spin_then_fill");
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  cuabi_host_buffer host = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, 64, &host)) << LastError();
  void* hp = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(host, &hp));
  volatile uint32_t* word = static_cast<volatile uint32_t*>(hp);
  *word = 0;
  const int n = 1 << 16;
  Buffer x = Alloc(n * sizeof(float));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(x, 0, 0, n * sizeof(float)));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_wait_value_host(s, host, 0, 7, 4, CUABI_WAIT_GEQ, 0)) << LastError();
  uint64_t px = Pointer(x);
  int32_t count = n;
  float v = 3.5f;
  long long cycles = 0;
  void* args[] = {&px, &count, &v, &cycles};
  const cuabi_launch_config config = Config();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(fill, &config, s, args, 4)) << LastError();
  usleep(200 * 1000);
  EXPECT_EQ(CUABI_ERROR_NOT_READY, cuabi_stream_query(s)) << "the kernel ran before the word";
  *word = 6;  // not yet: GEQ 7
  usleep(100 * 1000);
  EXPECT_EQ(CUABI_ERROR_NOT_READY, cuabi_stream_query(s));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *word = 7;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  std::vector<float> got(n);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(x, 0, got.data(), n * sizeof(float)));
  for (int i = 0; i < n; ++i) ASSERT_EQ(3.5f, got[i]) << "element " << i;
  cuabi_host_buffer_release(host);
}

TEST_F(MemOpsTest, ProducerAndConsumerStreamsOrderedByAWordAlone) {
  Module m = Compile(kSource);
  Function fill = GetFunction(m, "spin_then_fill");
  Function copy = GetFunction(m, "copy");
  Stream producer, consumer;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, producer.out()));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, consumer.out()));
  const int n = 1 << 20;
  Buffer x = Alloc(n * sizeof(float)), y = Alloc(n * sizeof(float)), flag = Alloc(8);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(x, 0, 0, n * sizeof(float)));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(flag, 0, 0, 8));
  for (uint64_t round = 1; round <= 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // The consumer is queued first and must still see the producer's data.
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_stream_wait_value(consumer, flag, 0, round, 8, CUABI_WAIT_EQ, 0))
        << LastError();
    uint64_t px = Pointer(x), py = Pointer(y);
    int32_t count = n;
    void* copy_args[] = {&py, &px, &count};
    const cuabi_launch_config config = Config();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(copy, &config, consumer, copy_args, 3));
    float v = static_cast<float>(round) * 10.0f;
    long long cycles = 50 * 1000 * 1000;  // tens of milliseconds
    void* fill_args[] = {&px, &count, &v, &cycles};
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(fill, &config, producer, fill_args, 4));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_write_value(producer, flag, 0, round, 8, 0))
        << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(consumer)) << LastError();
    std::vector<float> got(n);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(y, 0, got.data(), n * sizeof(float)));
    for (int i = 0; i < n; i += 4099) ASSERT_EQ(v, got[i]) << "element " << i;
    ASSERT_EQ(v, got[n - 1]);
  }
  uint64_t word = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(flag, 0, &word, 8));
  EXPECT_EQ(3u, word);
}

TEST_F(MemOpsTest, ThirtyTwoAndSixtyFourBitWordsLandWhereAsked) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  Buffer b = Alloc(64);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 0xAB, 64));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_write_value(s, b, 4, 0x01020304u, 4, 0)) << LastError();
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED,
            cuabi_stream_write_value(s, b, 16, 1, 8, CUABI_MEM_OP_NO_MEMORY_BARRIER));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_write_value(s, b, 16, 0x1122334455667788ull, 8, 0))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_wait_value(s, b, 4, 0x01020304u, 4, CUABI_WAIT_EQ, 0));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_wait_value(s, b, 16, 0x8, 8, CUABI_WAIT_AND, 0));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  unsigned char got[64];
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, got, 64));
  uint32_t w32 = 0;
  uint64_t w64 = 0;
  std::memcpy(&w32, got + 4, 4);
  std::memcpy(&w64, got + 16, 8);
  EXPECT_EQ(0x01020304u, w32);
  EXPECT_EQ(0x1122334455667788ull, w64);
  EXPECT_EQ(0xAB, got[0]);
  EXPECT_EQ(0xAB, got[8]);
  EXPECT_EQ(0xAB, got[24]) << "a write spilled past its word";
}

}  // namespace
}  // namespace cuabi_test
