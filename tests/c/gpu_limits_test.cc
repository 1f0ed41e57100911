// The primary context's limits: each one read, set and read back; device
// printf through a raised FIFO keeps every line; the
// persisting-L2 size against the device's maximum. Each test runs in its
// own process (one ctest entry per test), so the printf FIFO can still be set
// before this process's first printing kernel.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using LimitsTest = GpuTest;

// CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE (cuda.h).
const int32_t kAttrMaxPersistingL2 = 108;

TEST_F(LimitsTest, EachLimitRoundTrips) {
  const cuabi_limit limits[] = {CUABI_LIMIT_STACK_SIZE, CUABI_LIMIT_PRINTF_FIFO_SIZE,
                                CUABI_LIMIT_MALLOC_HEAP_SIZE};
  for (cuabi_limit limit : limits) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    size_t before = 0, after = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_limit(device_, limit, &before)) << LastError();
    EXPECT_GT(before, 0u);
    const size_t want = before * 2 + 4096;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_set_limit(device_, limit, want)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_limit(device_, limit, &after)) << LastError();
    EXPECT_GE(after, want) << "the driver may round up, never down";
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_set_limit(device_, limit, before)) << LastError();
  }
}

TEST_F(LimitsTest, PersistingL2WithinTheDeviceMaximum) {
  int32_t max = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kAttrMaxPersistingL2, &max));
  if (max <= 0) GTEST_SKIP() << "this device has no persisting L2 set-aside";
  const size_t want = static_cast<size_t>(max) / 2;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_device_set_limit(device_, CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, want))
      << LastError();
  size_t got = 0;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_device_get_limit(device_, CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, &got));
  EXPECT_GE(got, want);
  EXPECT_LE(got, static_cast<size_t>(max));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_device_reset_persisting_l2(device_)) << LastError();
  // One byte past the maximum: refused before the driver, naming the maximum.
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_device_set_limit(device_, CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE,
                                   static_cast<size_t>(max) + 1));
  EXPECT_NE(
      std::string::npos,
      std::string(cuabi_last_error_message()).find("maximum of " + std::to_string(max) + " bytes"))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_device_get_limit(device_, CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, &got));
  EXPECT_GE(got, want) << "a refused set changed the limit";
  EXPECT_EQ(CUABI_SUCCESS,
            cuabi_device_set_limit(device_, CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, 0));
}

TEST_F(LimitsTest, UnknownLimitIsRefusedByName) {
  size_t v = 7;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_device_get_limit(device_, static_cast<cuabi_limit>(42), &v));
  EXPECT_NE(std::string::npos, std::string(cuabi_last_error_message()).find("limit is 42"));
  EXPECT_EQ(7u, v) << "an out-parameter was written on failure";
}

// A kernel printing `lines` lines of 64 bytes, its output captured from the
// process's standard output (the driver writes it there at synchronize).
size_t PrintedLines(cuabi_device device, cuabi_function f, int lines) {
  char path[] = "/tmp/cuabi-printf-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  fflush(stdout);
  const int saved = dup(1);
  dup2(fd, 1);
  int32_t n = lines;
  void* args[] = {&n};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.grid_x = static_cast<uint32_t>((lines + 127) / 128);
  config.block_x = 128;
  const cuabi_status launched = cuabi_function_launch(f, &config, nullptr, args, 1);
  const cuabi_status synced = cuabi_device_synchronize(device);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  EXPECT_EQ(CUABI_SUCCESS, launched) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, synced) << LastError();
  size_t count = 0;
  FILE* in = fopen(path, "r");
  char line[256];
  while (in && fgets(line, sizeof line, in))
    if (std::string(line).rfind("cuabi printf line ", 0) == 0) ++count;
  if (in) fclose(in);
  unlink(path);
  return count;
}

const char* kPrintf =
    "extern \"C\" __global__ void chatter(int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) printf(\"cuabi printf line %08d ..............................\\n\", i);\n"
    "}\n";

// 40,000 lines, each printf record holding its format and one argument.
const int kLines = 40000;

TEST_F(LimitsTest, PrintfFifoRaisedBeforeTheFirstLaunchKeepsEveryLine) {
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_set_limit(device_, CUABI_LIMIT_PRINTF_FIFO_SIZE, 16u << 20))
      << LastError();
  Module m = Compile(kPrintf);
  Function f = GetFunction(m, "chatter");
  EXPECT_EQ(static_cast<size_t>(kLines), PrintedLines(device_, f, kLines));
}

}  // namespace
}  // namespace cuabi_test
