// The batches through the C++ face (cuabi_objects.hpp, generated from the API
// model: stream::mem_op_batch, copy_batch, prefetch_batch and the discards
// take std::vectors of the C structs): a batch of writes held back by a
// word the host writes, 1,000 copies of mixed directions, and a refusal as
// cuabi::error naming the element at fault.
#include <cuabi/cuabi.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using CxxBatchTest = GpuTest;

TEST_F(CxxBatchTest, ABatchWaitsForTheHostThenWrites) {
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  const cuabi::host_buffer host = cuabi::host_buffer::alloc(device_, 64);
  volatile uint32_t* word = static_cast<volatile uint32_t*>(host.pointer());
  word[0] = 0;
  const cuabi::buffer b = cuabi::buffer::alloc(device_, 64);
  b.memset(0, 0, 64);
  std::vector<cuabi_mem_op> ops(3, cuabi_mem_op(CUABI_MEM_OP_INIT));
  ops[0].kind = CUABI_MEM_OP_WAIT;
  ops[0].host_buffer = host.get();
  ops[0].value = 3;
  ops[1].buffer = b.get();
  ops[1].value = 0xFEED;
  ops[2].buffer = b.get();
  ops[2].offset = 8;
  ops[2].width = 8;
  ops[2].value = 0xAABBCCDDEEFF0011ull;
  s.mem_op_batch(ops);
  usleep(200 * 1000);
  EXPECT_EQ(CUABI_ERROR_NOT_READY, cuabi_stream_query(s.get())) << "the batch ran before the word";
  std::atomic_thread_fence(std::memory_order_seq_cst);
  word[0] = 3;
  s.synchronize();
  uint64_t got[2] = {0, 0};
  b.copy_to_host(0, got, 16);
  EXPECT_EQ(0xFEEDu, got[0]);
  EXPECT_EQ(0xAABBCCDDEEFF0011ull, got[1]);
}

TEST_F(CxxBatchTest, AThousandCopiesAndARefusalNamingTheCopy) {
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  const size_t kCopies = 1000, kSlot = 64;
  const cuabi::buffer dev = cuabi::buffer::alloc(device_, kCopies * kSlot);
  const cuabi::buffer dev2 = cuabi::buffer::alloc(device_, kCopies * kSlot);
  std::vector<uint8_t> up(kCopies * kSlot), down(kCopies * kSlot, 0);
  for (size_t i = 0; i < up.size(); ++i) up[i] = static_cast<uint8_t>(i * 31 + 7);
  // Up to the device, across it, and back down: three batches on one stream.
  std::vector<cuabi_copy_op> to_dev(kCopies), across(kCopies), back(kCopies);
  for (size_t i = 0; i < kCopies; ++i) {
    cuabi_copy_op op = CUABI_COPY_OP_INIT;
    op.bytes = kSlot;
    op.dst_offset = op.src_offset = i * kSlot;
    to_dev[i] = across[i] = back[i] = op;
    to_dev[i].dst_buffer = dev.get();
    to_dev[i].src_host = up.data();
    across[i].dst_buffer = dev2.get();
    across[i].src_buffer = dev.get();
    back[i].dst_host = down.data();
    back[i].src_buffer = dev2.get();
  }
  s.copy_batch(to_dev, 0);
  s.copy_batch(across, CUABI_COPY_BATCH_PREFER_OVERLAP);
  s.copy_batch(back, 0);
  s.synchronize();
  EXPECT_EQ(up, down);
  back[777].src_offset = kCopies * kSlot - 8;
  try {
    s.copy_batch(back, 0);
    FAIL() << "a copy past its source's end was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, e.status());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("ops[777]: source range")) << e.what();
  }
}

}  // namespace
}  // namespace cuabi_test
