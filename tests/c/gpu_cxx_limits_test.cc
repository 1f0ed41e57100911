// The context limits through the C++ face (cuabi_objects.hpp, generated from
// the API model): each limit set and read back, the reset of persisting L2,
// and the core's refusals as cuabi::error carrying the status and message.
#include <cuabi/cuabi.hpp>
#include <gtest/gtest.h>

#include <string>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using CxxLimitsTest = GpuTest;

TEST_F(CxxLimitsTest, EachLimitRoundTrips) {
  const cuabi::device dev = cuabi::device::get(0);
  for (cuabi_limit limit :
       {CUABI_LIMIT_STACK_SIZE, CUABI_LIMIT_PRINTF_FIFO_SIZE, CUABI_LIMIT_MALLOC_HEAP_SIZE}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    const size_t before = dev.limit(limit);
    EXPECT_GT(before, 0u);
    dev.set_limit(limit, before * 2 + 4096);
    EXPECT_GE(dev.limit(limit), before * 2 + 4096);
    dev.set_limit(limit, before);
  }
}

TEST_F(CxxLimitsTest, RefusalsAreErrorsWithTheCoresWords) {
  const cuabi::device dev = cuabi::device::get(0);
  try {
    (void)dev.limit(static_cast<cuabi_limit>(42));
    FAIL() << "an unknown limit was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("limit is 42, not one of"))
        << e.what();
  }
  int32_t most = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(dev.get(), 108, &most));
  if (most <= 0) return;  // no persisting L2 on this device
  try {
    dev.set_limit(CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, static_cast<size_t>(most) + 1);
    FAIL() << "a persisting-L2 size past the maximum was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_NE(std::string::npos,
              std::string(e.what()).find("maximum of " + std::to_string(most) + " bytes"));
  }
  dev.set_limit(CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, static_cast<size_t>(most) / 2);
  dev.reset_persisting_l2();
  dev.set_limit(CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
}

}  // namespace
}  // namespace cuabi_test

namespace cuabi_test {
namespace {

using CxxStreamAttributesTest = GpuTest;

// Stream attributes and memory operations through the generated C++ face.
TEST_F(CxxStreamAttributesTest, AttributesAndWordsThroughTheFace) {
  const cuabi::device dev = cuabi::device::get(0);
  const cuabi::stream s = cuabi::stream::create(dev.get(), CUABI_STREAM_NON_BLOCKING);
  s.set_sync_policy(CUABI_SYNC_POLICY_YIELD);
  EXPECT_EQ(CUABI_SYNC_POLICY_YIELD, s.sync_policy());
  s.set_memory_sync_domain(CUABI_MEM_SYNC_DOMAIN_REMOTE);
  EXPECT_EQ(CUABI_MEM_SYNC_DOMAIN_REMOTE, s.memory_sync_domain());
  cuabi_access_policy_window w = cuabi::access_policy_window_init();
  EXPECT_EQ(0u, w.bytes);
  EXPECT_EQ(0u, s.access_policy_window().bytes);

  const cuabi::buffer b = cuabi::buffer::alloc(dev.get(), 64);
  s.write_value(b.get(), 8, 0xFEEDu, 4, 0);
  s.wait_value(b.get(), 8, 0xFEEDu, 4, CUABI_WAIT_EQ, 0);
  s.synchronize();
  uint32_t word = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b.get(), 8, &word, 4));
  EXPECT_EQ(0xFEEDu, word);
  try {
    s.write_value(b.get(), 2, 1, 4, 0);
    FAIL() << "a misaligned word was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("offset 2 is not a multiple"));
  }
}

}  // namespace
}  // namespace cuabi_test
