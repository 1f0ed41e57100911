// Loading the driver when it is missing or is the toolkit's stub. The driver
// path is read once per process, so ctest runs each group in its own process
// with CUABI_DRIVER_PATH set (see CMakeLists.txt); run by hand without it,
// these tests skip.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <thread>

#include "kernels.h"
#include "test_support.h"

namespace {

using cuabi_test::Contains;
using cuabi_test::LastError;

const char* const kMissingDriver = "/nonexistent/libcuda.so.1";

// CUresult CUDA_ERROR_STUB_LIBRARY, which the stub's cuInit answers.
const int32_t kCudaErrorStubLibrary = 34;

std::string DriverPathEnv() {
  const char* v = std::getenv("CUABI_DRIVER_PATH");
  return v ? v : "";
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Every call that needs the driver answers `expected` and leaves its
// out-parameters alone.
void ExpectDeviceCallsFail(cuabi_status expected, const std::string& in_message) {
  const std::string want = cuabi_status_get_name(expected);
  int32_t count = -3;
  EXPECT_EQ(want, cuabi_status_get_name(cuabi_device_get_count(&count)));
  EXPECT_EQ(-3, count);
  EXPECT_TRUE(Contains(cuabi_last_error_message(), in_message)) << cuabi_last_error_message();

  cuabi_device device = cuabi_test::AsHandle<cuabi_device>(0x77);
  EXPECT_EQ(want, cuabi_status_get_name(cuabi_device_get(0, &device)));
  EXPECT_EQ(cuabi_test::AsHandle<cuabi_device>(0x77), device);
  EXPECT_EQ(expected, cuabi_last_error_status());

  int32_t version = -3;
  EXPECT_EQ(want, cuabi_status_get_name(cuabi_driver_get_version(&version)));
  EXPECT_EQ(-3, version);
}

TEST(NoDriver, InitFailsAndListsThePathTried) {
  if (DriverPathEnv() != kMissingDriver) {
    GTEST_SKIP() << "needs CUABI_DRIVER_PATH=" << kMissingDriver << " (ctest sets it)";
  }
  cuabi_last_error_clear();
  ASSERT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, cuabi_init());
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, cuabi_last_error_status());
  const std::string message = cuabi_last_error_message();
  EXPECT_TRUE(Contains(message, kMissingDriver)) << message;

  // The failure is remembered and answered again with the same message, on
  // any thread.
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, cuabi_init());
  EXPECT_EQ(message, cuabi_last_error_message());
  std::string other_thread;
  cuabi_status other_status = CUABI_SUCCESS;
  std::thread t([&] {
    other_status = cuabi_init();
    other_thread = cuabi_last_error_message();
  });
  t.join();
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, other_status);
  EXPECT_EQ(message, other_thread);
}

TEST(NoDriver, DeviceCallsAnswerDriverNotFound) {
  if (DriverPathEnv() != kMissingDriver) {
    GTEST_SKIP() << "needs CUABI_DRIVER_PATH=" << kMissingDriver << " (ctest sets it)";
  }
  ExpectDeviceCallsFail(CUABI_ERROR_DRIVER_NOT_FOUND, kMissingDriver);
  size_t size = 99;
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, cuabi_driver_get_path(nullptr, &size));
  EXPECT_EQ(99u, size);
}

TEST(NoDriver, CompilingNeedsNoDriver) {
  if (DriverPathEnv() != kMissingDriver) {
    GTEST_SKIP() << "needs CUABI_DRIVER_PATH=" << kMissingDriver << " (ctest sets it)";
  }
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, cuabi_init());
  cuabi_program program = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_create(cuabi_test::kSaxpySource, "saxpy.cu", 0, nullptr,
                                                nullptr, &program))
      << LastError();
  const char* options[] = {"--gpu-architecture=sm_90"};
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_compile(program, 1, options)) << LastError();
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_cubin(program, nullptr, &size)) << LastError();
  EXPECT_GT(size, 0u);
  cuabi_program_release(program);
}

TEST(StubDriver, InitAnswersStubDriver) {
  const std::string path = DriverPathEnv();
  if (path.empty() || !Contains(path, "stubs")) {
    GTEST_SKIP() << "needs CUABI_DRIVER_PATH=<toolkit>/lib64/stubs/libcuda.so (ctest sets it)";
  }
  if (access(path.c_str(), R_OK) != 0) GTEST_SKIP() << "no stub driver at " << path;

  cuabi_last_error_clear();
  ASSERT_EQ(CUABI_ERROR_STUB_DRIVER, cuabi_init()) << LastError();
  const std::string message = cuabi_last_error_message();
  EXPECT_TRUE(Contains(Lower(message), "stub")) << message;
  const int32_t code = cuabi_last_error_code();
  EXPECT_TRUE(code == 0 || code == kCudaErrorStubLibrary) << "code " << code;
  // Remembered.
  EXPECT_EQ(CUABI_ERROR_STUB_DRIVER, cuabi_init());
  EXPECT_EQ(message, cuabi_last_error_message());
}

TEST(StubDriver, DeviceCallsAnswerStubDriver) {
  const std::string path = DriverPathEnv();
  if (path.empty() || !Contains(path, "stubs")) {
    GTEST_SKIP() << "needs CUABI_DRIVER_PATH=<toolkit>/lib64/stubs/libcuda.so (ctest sets it)";
  }
  if (access(path.c_str(), R_OK) != 0) GTEST_SKIP() << "no stub driver at " << path;
  ExpectDeviceCallsFail(CUABI_ERROR_STUB_DRIVER, "");
}

}  // namespace

namespace {

const char* const kMissingNvrtc = "/nonexistent/libnvrtc.so.13";

TEST(NoNvrtc, CompilingAnswersNvrtcNotFoundListingThePath) {
  const char* env = std::getenv("CUABI_NVRTC_PATH");
  if (env == nullptr || std::string(env) != kMissingNvrtc) {
    GTEST_SKIP() << "needs CUABI_NVRTC_PATH=" << kMissingNvrtc << " (ctest sets it)";
  }
  cuabi_program program = cuabi_test::AsHandle<cuabi_program>(0x77);
  ASSERT_EQ(CUABI_ERROR_NVRTC_NOT_FOUND,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 0, nullptr, nullptr, &program));
  EXPECT_EQ(cuabi_test::AsHandle<cuabi_program>(0x77), program);
  const std::string message = cuabi_last_error_message();
  EXPECT_TRUE(cuabi_test::Contains(message, kMissingNvrtc)) << message;

  int32_t major = -1, minor = -1;
  EXPECT_EQ(CUABI_ERROR_NVRTC_NOT_FOUND, cuabi_nvrtc_get_version(&major, &minor));
  EXPECT_EQ(-1, major);
  size_t size = 5;
  EXPECT_EQ(CUABI_ERROR_NVRTC_NOT_FOUND, cuabi_nvrtc_get_path(nullptr, &size));
  EXPECT_EQ(5u, size);
  // Remembered, with the same message.
  EXPECT_EQ(CUABI_ERROR_NVRTC_NOT_FOUND,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 0, nullptr, nullptr, &program));
  EXPECT_EQ(message, cuabi_last_error_message());
}

}  // namespace
