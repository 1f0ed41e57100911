// Device and pinned host memory: allocation, copies and their bounds,
// overlap, memset, asynchronous copies and wrapping foreign memory.
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using MemoryTest = GpuTest;

TEST_F(MemoryTest, AllocationProperties) {
  Buffer b = Alloc(1000);
  ASSERT_NE(nullptr, b.get());
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(b, &size));
  EXPECT_EQ(1000u, size);
  EXPECT_NE(0u, Pointer(b));
  int32_t ordinal = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_device_ordinal(b, &ordinal));
  EXPECT_EQ(0, ordinal);

  cuabi_buffer untouched = AsHandle<cuabi_buffer>(0x77);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_alloc(device_, 0, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_buffer>(0x77), untouched);
  EXPECT_EQ(StatusName(CUABI_ERROR_OUT_OF_MEMORY),
            StatusName(cuabi_buffer_alloc(device_, size_t{1} << 60, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_buffer>(0x77), untouched);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_get_size(b, nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_get_pointer(b, nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_get_device_ordinal(b, nullptr)));
}

TEST_F(MemoryTest, CopiesAtOffsets) {
  const size_t n = 4096;
  Buffer b = Alloc(n);
  std::vector<unsigned char> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 0, n));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(b, 100, src.data(), 1000)) << LastError();
  std::vector<unsigned char> all = Download<unsigned char>(b, n);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char want = (i >= 100 && i < 1100) ? src[i - 100] : 0;
    ASSERT_EQ(want, all[i]) << "byte " << i;
  }
  std::vector<unsigned char> part(500, 0xCC);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 600, part.data(), 500));
  for (size_t i = 0; i < 500; ++i) ASSERT_EQ(src[500 + i], part[i]);

  // Device to device between buffers, at offsets.
  Buffer c = Alloc(n);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(c, 0, 0xAB, n));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(c, 10, b, 100, 1000)) << LastError();
  all = Download<unsigned char>(c, n);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char want = (i >= 10 && i < 1010) ? src[i - 10] : 0xAB;
    ASSERT_EQ(want, all[i]) << "byte " << i;
  }

  // Zero bytes: success, nothing happens.
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(b, 0, src.data(), 0)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, part.data(), 0)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(c, 0, b, 0, 0)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 1, 0)) << LastError();
  EXPECT_EQ(src[0], Download<unsigned char>(b, 101)[100]);
}

TEST_F(MemoryTest, CopyPastTheEndIsOutOfRange) {
  const size_t n = 1024;
  Buffer a = Alloc(n);
  Buffer b = Alloc(n);
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out()));
  std::vector<unsigned char> host(2 * n, 0x5A);
  const size_t huge = ~size_t{0};
  struct Range {
    size_t offset, bytes;
  };
  // Past the end, and offsets whose sum with the length wraps around.
  const Range bad[] = {{0, n + 1}, {1000, 25}, {n, 1}, {n + 1, 1}, {huge - 1, 4}, {4, huge}};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(a, 0, 0x11, n));
  for (const Range& r : bad) {
    SCOPED_TRACE("offset " + std::to_string(r.offset) + ", bytes " + std::to_string(r.bytes));
    const cuabi_status want = CUABI_ERROR_OUT_OF_RANGE;
    CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_from_host(a, r.offset, host.data(), r.bytes));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_to_host(a, r.offset, host.data(), r.bytes));
    CUABI_EXPECT_STATUS(want,
                        cuabi_buffer_copy_from_host_async(a, r.offset, host.data(), r.bytes, s));
    CUABI_EXPECT_STATUS(want,
                        cuabi_buffer_copy_to_host_async(a, r.offset, host.data(), r.bytes, s));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_copy(b, r.offset, a, 0, r.bytes));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_copy(b, 0, a, r.offset, r.bytes));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_async(b, r.offset, a, 0, r.bytes, s));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_async(b, 0, a, r.offset, r.bytes, s));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_memset(a, r.offset, 0, r.bytes));
    CUABI_EXPECT_STATUS(want, cuabi_buffer_memset_async(a, r.offset, 0, r.bytes, s));
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  // Nothing was written: the host copy is unchanged and the buffer too.
  for (unsigned char v : host) ASSERT_EQ(0x5A, v);
  for (unsigned char v : Download<unsigned char>(a, n)) ASSERT_EQ(0x11, v);
  // The last byte exactly is fine.
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(a, n - 1, host.data(), 1));
}

TEST_F(MemoryTest, OverlappingCopyWithinOneBufferIsRefused) {
  const size_t n = 1024;
  Buffer a = Alloc(n);
  std::vector<unsigned char> src(n);
  std::iota(src.begin(), src.end(), 0);
  Upload(a, src);
  const cuabi_status want = CUABI_ERROR_INVALID_ARGUMENT;
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy(a, 0, a, 100, 200));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy(a, 100, a, 0, 200));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy(a, 0, a, 0, 16));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_async(a, 10, a, 20, 100, nullptr));

  // Two wrapped views of the same memory overlap too.
  Buffer view;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_wrap(device_, Pointer(a) + 64, 512, view.out()));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy(view, 0, a, 0, 128));
  EXPECT_EQ(src, Download<unsigned char>(a, n)) << "a refused copy changed the data";

  // Disjoint ranges of one buffer are fine.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(a, 0, a, 512, 256)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(a, 300, a, 0, 200)) << LastError();
  const std::vector<unsigned char> got = Download<unsigned char>(a, n);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(src[512 + i], got[i]);
  for (size_t i = 0; i < 200; ++i) ASSERT_EQ(src[512 + i], got[300 + i]);
}

TEST_F(MemoryTest, Memset) {
  const size_t n = 4096;
  Buffer a = Alloc(n);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(a, 0, 0xAB, n)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(a, 100, 0x00, 100)) << LastError();
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset_async(a, 3000, 0x7F, 1001, s)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  const std::vector<unsigned char> got = Download<unsigned char>(a, n);
  for (size_t i = 0; i < n; ++i) {
    unsigned char want = 0xAB;
    if (i >= 100 && i < 200) want = 0x00;
    if (i >= 3000 && i < 4001) want = 0x7F;
    ASSERT_EQ(want, got[i]) << "byte " << i;
  }
}

TEST_F(MemoryTest, NullHostPointerIsRefused) {
  Buffer a = Alloc(64);
  const cuabi_status want = CUABI_ERROR_INVALID_ARGUMENT;
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_from_host(a, 0, nullptr, 16));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_to_host(a, 0, nullptr, 16));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_from_host_async(a, 0, nullptr, 16, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_copy_to_host_async(a, 0, nullptr, 16, nullptr));
}

// Pinned memory round trip on a stream: host -> device, kernel, device -> host.
class PinnedTest : public GpuTest {
 protected:
  void RoundTrip(int* host, size_t count) {
    Module m = Compile(kUtilSource);
    Function add = GetFunction(m, "add_scalar");
    Stream s;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
    Buffer d = Alloc(count * sizeof(int));
    for (size_t i = 0; i < count; ++i) host[i] = static_cast<int>(i);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host_async(d, 0, host, count * sizeof(int), s))
        << LastError();
    uint64_t p = Pointer(d);
    int v = 1000;
    unsigned n = static_cast<unsigned>(count);
    void* params[] = {&p, &v, &n};
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    config.block_x = 256;
    config.grid_x = static_cast<uint32_t>((count + 255) / 256);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(add, &config, s, params, 3)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host_async(d, 0, host, count * sizeof(int), s))
        << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(static_cast<int>(i) + 1000, host[i]) << i;
  }
};

TEST_F(PinnedTest, HostAlloc) {
  const size_t count = 1 << 20;
  HostBuffer h;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, count * sizeof(int), h.out())) << LastError();
  void* ptr = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(h, &ptr));
  ASSERT_NE(nullptr, ptr);
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_size(h, &size));
  EXPECT_EQ(count * sizeof(int), size);
  RoundTrip(static_cast<int*>(ptr), count);

  cuabi_host_buffer untouched = AsHandle<cuabi_host_buffer>(0x77);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_host_buffer_alloc(device_, 0, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_host_buffer>(0x77), untouched);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_host_buffer_get_pointer(h, nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_host_buffer_get_size(h, nullptr)));
}

TEST_F(PinnedTest, HostRegister) {
  const size_t count = 1 << 20;
  std::vector<int> memory(count);
  HostBuffer h;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_host_buffer_register(device_, memory.data(), count * sizeof(int), h.out()))
      << LastError();
  void* ptr = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(h, &ptr));
  EXPECT_EQ(static_cast<void*>(memory.data()), ptr);
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_size(h, &size));
  EXPECT_EQ(count * sizeof(int), size);
  RoundTrip(memory.data(), count);
  h.reset();  // unpins; the memory stays ours
  memory[0] = 5;
  EXPECT_EQ(5, memory[0]);

  cuabi_host_buffer untouched = AsHandle<cuabi_host_buffer>(0x77);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_host_buffer_register(device_, nullptr, 4096, &untouched)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_host_buffer_register(device_, memory.data(), 0, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_host_buffer>(0x77), untouched);
}

TEST_F(MemoryTest, WrapWithoutOwnership) {
  const size_t n = 1024;
  Buffer owner = Alloc(n);
  const uint64_t p = Pointer(owner);
  {
    Buffer view;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_wrap(device_, p, n, view.out())) << LastError();
    EXPECT_EQ(p, Pointer(view));
    size_t size = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(view, &size));
    EXPECT_EQ(n, size);
    std::vector<unsigned char> data(n);
    std::iota(data.begin(), data.end(), 1);
    Upload(view, data);
    EXPECT_EQ(data, Download<unsigned char>(owner, n)) << "the view and the owner share memory";
  }  // the view is released here: it must not free the owner's memory

  std::vector<unsigned char> fresh(n, 0x42);
  Upload(owner, fresh);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  EXPECT_EQ(fresh, Download<unsigned char>(owner, n));
  // A second allocation must not land on the still-owned memory.
  Buffer other = Alloc(n);
  EXPECT_NE(p, Pointer(other));

  // A sub-range view is bounded by its own size.
  Buffer sub;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_wrap(device_, p + 256, 256, sub.out())) << LastError();
  std::vector<unsigned char> host(512, 0);
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_buffer_copy_to_host(sub, 0, host.data(), 257));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(sub, 0, host.data(), 256));
  EXPECT_EQ(0x42, host[0]);

  cuabi_buffer untouched = AsHandle<cuabi_buffer>(0x77);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_wrap(device_, 0, 256, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_buffer>(0x77), untouched);
}

}  // namespace
}  // namespace cuabi_test
