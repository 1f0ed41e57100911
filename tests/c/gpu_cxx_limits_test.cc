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
