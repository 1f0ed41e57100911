// DLPack on a device: a tensor of a producer library that knows nothing of
// cuabi (tests/dlpack_producer) taken over, launched on and released, its
// deleter run exactly once; a buffer exported and taken back; the read-only
// flag; the stream handshake between two streams.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dlpack_producer.h"
#include "gpu_support.h"

namespace cuabi_test {
namespace {

// Spins on the device for about `cycles` clock cycles, then writes `value`
// to out[0..n).
constexpr const char* kSlowFillSource = R"(
extern "C" __global__ void slow_fill(float* out, size_t n, float value, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = value;
}
)";

class DlpackTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    dlpack_producer_reset();
  }

  // A producer's tensor of n floats start, start + 1, ...
  cuabi_dlpack_managed_tensor_versioned* Produce(int64_t n, float start, uint64_t flags,
                                                 uint64_t* ptr) {
    void* t = nullptr;
    const int r = dlpack_producer_make(0, n, start, flags, &t, ptr);
    EXPECT_EQ(0, r) << "the producer failed at step " << r;
    return static_cast<cuabi_dlpack_managed_tensor_versioned*>(t);
  }

  std::vector<float> Read(cuabi_buffer b, size_t n) {
    std::vector<float> host(n, -1.0f);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, host.data(), n * sizeof(float)))
        << LastError();
    return host;
  }
};

TEST_F(DlpackTest, ProducerTensorsTakenOverLaunchedOnAndReleasedDeleterOnce) {
  const int64_t n = 4096;
  uint64_t px = 0, py = 0;
  cuabi_dlpack_managed_tensor_versioned* tx = Produce(n, 0.0f, 0, &px);
  cuabi_dlpack_managed_tensor_versioned* ty = Produce(n, 100.0f, 0, &py);
  ASSERT_NE(nullptr, tx);
  ASSERT_NE(nullptr, ty);
  Buffer x, y;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(tx, 0, x.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(ty, 0, y.out())) << LastError();
  // Zero-copy: the producer's own memory.
  EXPECT_EQ(px, Pointer(x));
  EXPECT_EQ(py, Pointer(y));
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(x, &size));
  EXPECT_EQ(static_cast<size_t>(n) * sizeof(float), size);
  cuabi_buffer_kind kind = CUABI_BUFFER_DEVICE;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_kind(x, &kind));
  EXPECT_EQ(CUABI_BUFFER_WRAPPED, kind);

  Module m = Compile(kSaxpySource);
  Function saxpy = GetFunction(m, "saxpy");
  Buffer out = Alloc(static_cast<size_t>(n) * sizeof(float));
  float a = 2.0f;
  uint64_t xp = Pointer(x), yp = Pointer(y), op = Pointer(out);
  size_t count = static_cast<size_t>(n);
  void* params[] = {&a, &xp, &yp, &op, &count};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.grid_x = static_cast<uint32_t>(n / 256);
  config.block_x = 256;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(saxpy, &config, nullptr, params, 5))
      << LastError();
  const std::vector<float> got = Read(out, static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(2.0f * static_cast<float>(i) + 100.0f + static_cast<float>(i), got[i]) << i;

  EXPECT_EQ(0, dlpack_producer_deleted()) << "the buffers still hold the tensors";
  x.reset();
  EXPECT_EQ(1, dlpack_producer_deleted());
  y.reset();
  EXPECT_EQ(2, dlpack_producer_deleted());
  EXPECT_EQ(2, dlpack_producer_freed()) << "each deleter freed its memory";
}

TEST_F(DlpackTest, TheLastReferenceRunsTheDeleter) {
  uint64_t p = 0;
  cuabi_dlpack_managed_tensor_versioned* t = Produce(64, 1.0f, 0, &p);
  ASSERT_NE(nullptr, t);
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(t, 0, b.out())) << LastError();
  // Hand the borrowed buffer on as a tensor of ours: it holds the buffer.
  const int64_t shape[1] = {64};
  cuabi_dlpack_managed_tensor_versioned* again = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_export_dlpack(b, 0, shape, nullptr, 1, CUABI_DLPACK_FLOAT,
                                                      32, 1, 0, &again))
      << LastError();
  EXPECT_EQ(p, reinterpret_cast<uintptr_t>(again->dl_tensor.data));
  b.reset();
  EXPECT_EQ(0, dlpack_producer_deleted()) << "our tensor still holds the buffer";
  again->deleter(again);
  EXPECT_EQ(1, dlpack_producer_deleted());
  EXPECT_EQ(1, dlpack_producer_freed());
}

TEST_F(DlpackTest, ExportedBufferTakenBackAtItsOffset) {
  Buffer b = Alloc(4096);
  std::vector<float> host(1024);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(b, 0, host.data(), 4096)) << LastError();
  const int64_t shape[2] = {4, 8};
  const int64_t strides[2] = {16, 1};  // every other row of 16
  cuabi_dlpack_managed_tensor_versioned* t = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_export_dlpack(b, 64, shape, strides, 2, CUABI_DLPACK_FLOAT,
                                                      32, 1, 0, &t))
      << LastError();
  ASSERT_NE(nullptr, t);
  EXPECT_EQ(1u, t->version.major);
  EXPECT_EQ(Pointer(b), reinterpret_cast<uintptr_t>(t->dl_tensor.data));
  EXPECT_EQ(64u, t->dl_tensor.byte_offset);
  EXPECT_EQ(CUABI_DLPACK_DEVICE_CUDA, t->dl_tensor.device.device_type);
  EXPECT_EQ(0, t->dl_tensor.device.device_id);
  EXPECT_EQ(2, t->dl_tensor.ndim);
  EXPECT_EQ(16, t->dl_tensor.strides[0]);
  EXPECT_EQ(8, t->dl_tensor.shape[1]);
  EXPECT_EQ(0u, t->flags);
  const uint64_t base = Pointer(b);
  b.reset();  // the tensor holds it
  Buffer back;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(t, 0, back.out())) << LastError();
  EXPECT_EQ(base + 64, Pointer(back));
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(back, &size));
  EXPECT_EQ((3u * 16u + 8u) * sizeof(float), size) << "to the end of the last element";
  const std::vector<float> got = Read(back, size / sizeof(float));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(host[16 + i], got[i]) << i;
}

TEST_F(DlpackTest, ReadOnlyTensorTakenOnlyForReading) {
  uint64_t p = 0;
  cuabi_dlpack_managed_tensor_versioned* t = Produce(16, 0.0f, CUABI_DLPACK_FLAG_READ_ONLY, &p);
  ASSERT_NE(nullptr, t);
  Buffer b;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_import_dlpack(t, 0, b.out())));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "read-only")) << cuabi_last_error_message();
  EXPECT_EQ(0, dlpack_producer_deleted()) << "a refused tensor stays the caller's";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(t, CUABI_DLPACK_IMPORT_READ_ONLY, b.out()))
      << LastError();
  EXPECT_EQ(p, Pointer(b));
  b.reset();
  EXPECT_EQ(1, dlpack_producer_deleted());
}

TEST_F(DlpackTest, UnversionedTensorTakenOver) {
  void* raw = nullptr;
  uint64_t p = 0;
  ASSERT_EQ(0, dlpack_producer_make_unversioned(0, 32, 7.0f, &raw, &p));
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_buffer_import_dlpack_unversioned(
                static_cast<cuabi_dlpack_managed_tensor*>(raw), 0, b.out()))
      << LastError();
  EXPECT_EQ(p, Pointer(b));
  const std::vector<float> got = Read(b, 32);
  EXPECT_EQ(7.0f, got[0]);
  EXPECT_EQ(38.0f, got[31]);
  b.reset();
  EXPECT_EQ(1, dlpack_producer_deleted());
  EXPECT_EQ(1, dlpack_producer_freed());
}

// The producer's slow kernel runs on its stream; the consumer's stream,
// after the handshake, reads what it wrote, not what was there before.
TEST_F(DlpackTest, StreamHandshakeOrdersTheConsumerAfterTheProducer) {
  Module m = Compile(kSlowFillSource);
  Function slow = GetFunction(m, "slow_fill");
  const size_t n = 1 << 16;
  for (int side = 0; side < 2; ++side) {
    Buffer b = Alloc(n * sizeof(float));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 0, n * sizeof(float)));
    Stream producer, consumer;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0,
                                                 producer.out()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0,
                                                 consumer.out()));
    uint64_t ptr = Pointer(b);
    size_t count = n;
    float value = 42.0f + static_cast<float>(side);
    long long cycles = 200000000;  // about 0.1 s at 2 GHz
    void* params[] = {&ptr, &count, &value, &cycles};
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    config.grid_x = 1;
    config.block_x = 256;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(slow, &config, producer, params, 4))
        << LastError();
    uint64_t raw_producer = 0, raw_consumer = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_handle(producer, &raw_producer));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_handle(consumer, &raw_consumer));
    if (side == 0)  // the producer's side: the consumer's stream named
      ASSERT_EQ(CUABI_SUCCESS,
                cuabi_stream_dlpack_handoff(producer, static_cast<int64_t>(raw_consumer)))
          << LastError();
    else  // the consumer's side: the producer's stream named
      ASSERT_EQ(CUABI_SUCCESS,
                cuabi_stream_dlpack_wait(consumer, static_cast<int64_t>(raw_producer)))
          << LastError();
    std::vector<float> host(n, -1.0f);
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_copy_to_host_async(b, 0, host.data(), n * sizeof(float), consumer))
        << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(consumer)) << LastError();
    EXPECT_EQ(value, host[0]) << (side ? "dlpack_wait" : "dlpack_handoff");
    EXPECT_EQ(value, host[n - 1]) << (side ? "dlpack_wait" : "dlpack_handoff");
    // -1: no synchronisation asked, nothing done.
    EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_dlpack_handoff(producer, -1));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(producer));
  }
}

}  // namespace
}  // namespace cuabi_test
