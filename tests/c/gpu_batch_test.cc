// Batches: writes and waits in one call (a batch held back by a word the
// host writes into pinned memory; producer and consumer streams ordered by
// batched words alone), 1,000 copies of mixed directions in one call, and
// batched prefetches and discards of managed memory; each with a refusal
// naming the element at fault, and nothing queued after a refusal.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using BatchTest = GpuTest;

cuabi_mem_op Write(cuabi_buffer b, size_t offset, uint64_t value, uint32_t width) {
  cuabi_mem_op op = CUABI_MEM_OP_INIT;
  op.kind = CUABI_MEM_OP_WRITE;
  op.buffer = b;
  op.offset = offset;
  op.value = value;
  op.width = width;
  return op;
}

cuabi_mem_op WaitHost(cuabi_host_buffer h, size_t offset, uint64_t value, uint32_t width,
                      cuabi_wait_condition condition) {
  cuabi_mem_op op = CUABI_MEM_OP_INIT;
  op.kind = CUABI_MEM_OP_WAIT;
  op.host_buffer = h;
  op.offset = offset;
  op.value = value;
  op.width = width;
  op.condition = condition;
  return op;
}

struct HostBuffer {
  cuabi_host_buffer h = nullptr;
  void* p = nullptr;
  ~HostBuffer() { cuabi_host_buffer_release(h); }
};

TEST_F(BatchTest, ABatchOfWritesWaitsForTheHostToWriteTheWord) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  HostBuffer host;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, 64, &host.h)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(host.h, &host.p));
  volatile uint32_t* word = static_cast<volatile uint32_t*>(host.p);
  word[0] = 0;
  word[4] = 0;
  Buffer b = Alloc(64);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 0, 64));
  cuabi_mem_op to_host = CUABI_MEM_OP_INIT;
  to_host.host_buffer = host.h;
  to_host.offset = 16;
  to_host.value = 0x5151;
  const cuabi_mem_op ops[] = {WaitHost(host.h, 0, 7, 4, CUABI_WAIT_GEQ), Write(b, 4, 0xC0DEu, 4),
                              Write(b, 8, 0x0102030405060708ull, 8), to_host};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_mem_op_batch(s, ops, 4)) << LastError();
  usleep(200 * 1000);
  EXPECT_EQ(CUABI_ERROR_NOT_READY, cuabi_stream_query(s)) << "the batch ran before the word";
  EXPECT_EQ(0u, word[4]) << "a write after the wait landed before it";
  std::atomic_thread_fence(std::memory_order_seq_cst);
  word[0] = 7;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  EXPECT_EQ(0x5151u, word[4]);
  unsigned char got[64];
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, got, 64));
  uint32_t w32 = 0;
  uint64_t w64 = 0;
  std::memcpy(&w32, got + 4, 4);
  std::memcpy(&w64, got + 8, 8);
  EXPECT_EQ(0xC0DEu, w32);
  EXPECT_EQ(0x0102030405060708ull, w64);
  EXPECT_EQ(0, got[0]);
  EXPECT_EQ(0, got[16]) << "a write spilled past its word";
}

TEST_F(BatchTest, ProducerAndConsumerStreamsOrderedByBatchedWordsAlone) {
  Stream producer, consumer;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, producer.out()));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, consumer.out()));
  const size_t n = 1 << 20;
  Buffer x = Alloc(n), y = Alloc(n), flags = Alloc(16);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(flags, 0, 0, 16));
  for (uint64_t round = 1; round <= 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // The consumer waits on both words (one 32-bit, one 64-bit), then copies.
    cuabi_mem_op waits[2] = {Write(flags, 0, round, 4), Write(flags, 8, round << 40, 8)};
    waits[0].kind = waits[1].kind = CUABI_MEM_OP_WAIT;
    waits[0].condition = CUABI_WAIT_EQ;
    waits[1].condition = CUABI_WAIT_GEQ;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_mem_op_batch(consumer, waits, 2)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_async(y, 0, x, 0, n, consumer));
    // The producer fills x, then writes both words in one batch.
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_memset_async(x, 0, static_cast<uint8_t>(round * 11), n, producer));
    const cuabi_mem_op writes[2] = {Write(flags, 0, round, 4), Write(flags, 8, round << 40, 8)};
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_mem_op_batch(producer, writes, 2)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(consumer)) << LastError();
    std::vector<uint8_t> got = Download<uint8_t>(y, n);
    for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(round * 11, got[i]) << "byte " << i;
    ASSERT_EQ(round * 11, got[n - 1]);
  }
}

TEST_F(BatchTest, AMemOpBatchRefusalNamesTheElementAndQueuesNothing) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  Buffer b = Alloc(64);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 0, 64));
  cuabi_mem_op ops[3] = {Write(b, 0, 1, 4), Write(b, 8, 2, 8), Write(b, 6, 3, 4)};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_mem_op_batch(s, ops, 3));
  EXPECT_NE(std::string::npos, LastError().find("ops[2]: offset 6")) << LastError();
  ops[2] = Write(b, 64, 3, 4);
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_stream_mem_op_batch(s, ops, 3));
  EXPECT_NE(std::string::npos, LastError().find("ops[2]")) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  std::vector<uint32_t> got = Download<uint32_t>(b, 16);
  EXPECT_EQ(0u, got[0]) << "ops[0] ran although ops[2] was refused";
  EXPECT_EQ(0u, got[2]);
}

// 1,000 copies of 4 to 256 bytes in one call: host to device (plain and
// pinned host memory), device to host, device to device.
TEST_F(BatchTest, AThousandCopiesOfMixedDirectionsInOneCall) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  const size_t kCopies = 1000, kSlot = 256;
  const size_t bytes = kCopies * kSlot;
  Buffer dev = Alloc(bytes), dev_src = Alloc(bytes);
  HostBuffer pinned;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, bytes, &pinned.h)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(pinned.h, &pinned.p));
  std::vector<uint8_t> plain(bytes), back(bytes, 0xEE), src_pattern(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    plain[i] = static_cast<uint8_t>(i * 7 + 1);
    src_pattern[i] = static_cast<uint8_t>(i * 13 + 5);
    static_cast<uint8_t*>(pinned.p)[i] = static_cast<uint8_t>(i * 3 + 2);
  }
  Upload(dev_src, src_pattern);
  std::vector<uint8_t> dev_init(bytes, 0x5A);
  Upload(dev, dev_init);
  std::vector<cuabi_copy_op> ops(kCopies);
  std::vector<size_t> sizes(kCopies);
  for (size_t i = 0; i < kCopies; ++i) {
    cuabi_copy_op& op = ops[i];
    cuabi_copy_op_init(&op, sizeof op);
    const size_t at = i * kSlot, len = 4 + (i * 37) % (kSlot - 4);
    sizes[i] = len;
    op.bytes = len;
    op.dst_offset = op.src_offset = at;
    switch (i % 4) {
      case 0: op.dst_buffer = dev; op.src_host = plain.data(); break;
      case 1: op.dst_host = back.data(); op.src_buffer = dev_src; break;
      case 2: op.dst_buffer = dev; op.src_buffer = dev_src; break;
      case 3: op.dst_buffer = dev; op.src_host_buffer = pinned.h; break;
    }
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_copy_batch(s, ops.data(), kCopies, 0)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  std::vector<uint8_t> got = Download<uint8_t>(dev, bytes);
  const uint8_t* pin = static_cast<const uint8_t*>(pinned.p);
  for (size_t i = 0; i < kCopies; ++i) {
    const size_t at = i * kSlot;
    for (size_t k = 0; k < kSlot; ++k) {
      const size_t j = at + k;
      const bool in = k < sizes[i];
      switch (i % 4) {
        case 0: ASSERT_EQ(in ? plain[j] : 0x5A, got[j]) << "copy " << i << " byte " << k; break;
        case 1: ASSERT_EQ(in ? src_pattern[j] : 0xEE, back[j]) << "copy " << i << " byte " << k;
                ASSERT_EQ(0x5A, got[j]); break;
        case 2: ASSERT_EQ(in ? src_pattern[j] : 0x5A, got[j]) << "copy " << i << " byte " << k; break;
        case 3: ASSERT_EQ(in ? pin[j] : 0x5A, got[j]) << "copy " << i << " byte " << k; break;
      }
    }
  }
}

TEST_F(BatchTest, ACopyBatchRefusalNamesTheCopyAndQueuesNothing) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  Buffer dev = Alloc(4096);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(dev, 0, 0, 4096));
  std::vector<uint8_t> host(4096, 9);
  std::vector<cuabi_copy_op> ops(500, cuabi_copy_op(CUABI_COPY_OP_INIT));
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i].dst_buffer = dev;
    ops[i].dst_offset = i * 8;
    ops[i].src_host = host.data();
    ops[i].bytes = 8;
  }
  ops[412].dst_offset = 4000;
  ops[412].bytes = 200;
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_stream_copy_batch(s, ops.data(), ops.size(), 0));
  EXPECT_NE(std::string::npos, LastError().find("ops[412]: destination range [4000, 4000 + 200)"))
      << LastError();
  ops[412].bytes = 8;
  ops[412].src_buffer = dev;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_batch(s, ops.data(), ops.size(), 0));
  EXPECT_NE(std::string::npos, LastError().find("ops[412]: more than one of src_buffer"))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  std::vector<uint8_t> got = Download<uint8_t>(dev, 4096);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(0, got[i]) << "a copy ran: byte " << i;
}

TEST_F(BatchTest, ManagedRangesPrefetchedAndDiscardedInOneCall) {
  int32_t concurrent = 0;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_device_get_attribute(device_, 89 /* CONCURRENT_MANAGED_ACCESS */,
                                       &concurrent));
  if (!concurrent) GTEST_SKIP() << "device 0 has no concurrent managed access";
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  const size_t kRanges = 64, kRange = 64 * 1024;
  Buffer m;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_buffer_alloc_managed(device_, kRanges * kRange, 0, m.out()))
      << LastError();
  void* hp = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_host_pointer(m, &hp));
  uint32_t* words = static_cast<uint32_t*>(hp);
  for (size_t i = 0; i < kRanges * kRange / 4; ++i) words[i] = static_cast<uint32_t>(i * 2654435761u);
  std::vector<cuabi_managed_range> ranges(kRanges, cuabi_managed_range(CUABI_MANAGED_RANGE_INIT));
  for (size_t i = 0; i < kRanges; ++i) {
    ranges[i].buffer = m;
    ranges[i].offset = i * kRange;
    ranges[i].bytes = kRange;
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_prefetch_batch(s, ranges.data(), kRanges, 0)) << LastError();
  // On the device now: a device-side copy reads what the host wrote.
  Buffer copy = Alloc(kRanges * kRange);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_async(copy, 0, m, 0, kRanges * kRange, s));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_prefetch_batch(s, ranges.data(), kRanges, CUABI_LOCATION_HOST))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  std::vector<uint32_t> got = Download<uint32_t>(copy, kRanges * kRange / 4);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(static_cast<uint32_t>(i * 2654435761u), got[i]) << "word " << i;
  for (size_t i = 0; i < got.size(); i += 997)
    ASSERT_EQ(static_cast<uint32_t>(i * 2654435761u), words[i]) << "host word " << i;
  // Discarding: the driver takes it (contents undefined afterwards).
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_discard_batch(s, ranges.data(), kRanges)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_discard_and_prefetch_batch(s, ranges.data(), kRanges, 0))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  // A range of a device buffer, named by its index.
  Buffer plain = Alloc(kRange);
  ranges[5].buffer = plain;
  ranges[5].offset = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_prefetch_batch(s, ranges.data(), kRanges, 0));
  EXPECT_NE(std::string::npos, LastError().find("ranges[5]: the buffer is a device buffer"))
      << LastError();
  ranges[5].buffer = m;
  ranges[9].bytes = kRanges * kRange;
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_stream_discard_batch(s, ranges.data(), kRanges));
  EXPECT_NE(std::string::npos, LastError().find("ranges[9]: discard range")) << LastError();
}

}  // namespace
}  // namespace cuabi_test
