// The driver's own log on a real driver (CUDA 12.9 and later): a call the
// driver refuses for a reason cuabi does not check first carries the
// driver's explanation in its message ("; the driver logged: ..."), and
// cuabi_driver_log_read keeps the same lines.
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

class DriverLogTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    int32_t version = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version));
    if (version < 12090) GTEST_SKIP() << "the driver (CUDA " << version << ") keeps no log";
  }
  static std::string LastLines(size_t n) {
    size_t size = 0;
    if (cuabi_driver_log_read(n, nullptr, &size) != CUABI_SUCCESS) return "(read failed)";
    std::vector<char> buf(size);
    if (cuabi_driver_log_read(n, buf.data(), &size) != CUABI_SUCCESS) return "(read failed)";
    return std::string(buf.data());
  }
};

// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (cuda.h).
const int32_t kAttrSharedOptin = 97;

TEST_F(DriverLogTest, ALimitTheDriverRefusesCarriesItsExplanation) {
  const cuabi_status st =
      cuabi_device_set_limit(device_, CUABI_LIMIT_STACK_SIZE, size_t(1) << 40);
  ASSERT_EQ(CUABI_ERROR_INVALID_ARGUMENT, st);
  const std::string message = LastError();
  EXPECT_NE(std::string::npos, message.find("; the driver logged: ")) << message;
  EXPECT_NE(std::string::npos, message.find("from cuCtxSetLimit")) << message;
  const std::string last = LastLines(1);
  EXPECT_NE(std::string::npos, last.find("][E] Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuCtxSetLimit"))
      << last;
}

TEST_F(DriverLogTest, AKernelAttributeTheDriverRefusesCarriesItsExplanation) {
  // 48 KiB of static shared memory: the opt-in maximum of dynamic shared
  // memory on top of it is more than a block may have.
  Module m = Compile(
      "extern \"C\" __global__ void big(float* out) {\n"
      "  __shared__ float stat[12288];\n"
      "  extern __shared__ float dyn[];\n"
      "  stat[threadIdx.x] = 1; dyn[threadIdx.x] = 2;\n"
      "  __syncthreads();\n"
      "  out[threadIdx.x] = stat[threadIdx.x] + dyn[threadIdx.x];\n"
      "}\n");
  Function f = GetFunction(m, "big");
  int32_t optin = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kAttrSharedOptin, &optin));
  const cuabi_status st =
      cuabi_function_set_attribute(f, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
  ASSERT_EQ(CUABI_ERROR_INVALID_ARGUMENT, st);
  const std::string message = LastError();
  EXPECT_NE(std::string::npos, message.find("cannot be set to " + std::to_string(optin)))
      << message;
  EXPECT_NE(std::string::npos, message.find("; the driver logged: ")) << message;
  EXPECT_NE(std::string::npos, message.find("from cuFuncSetAttribute")) << message;
}

TEST_F(DriverLogTest, AModuleTheDriverCannotLoadCarriesItsExplanation) {
  const char ptx[] =
      ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k() { ret; }\n";
  cuabi_module m = nullptr;
  const cuabi_status st = cuabi_module_load_data(device_, ptx, sizeof ptx, &m);
  ASSERT_NE(CUABI_SUCCESS, st);
  const std::string message = LastError();
  EXPECT_NE(std::string::npos, message.find("; the driver logged: ")) << message;
  EXPECT_NE(std::string::npos, message.find("from cuModuleLoadData")) << message;
  // Each failure carries its own lines only.
  EXPECT_EQ(std::string::npos, message.find("cuCtxSetLimit")) << message;
}

}  // namespace
}  // namespace cuabi_test
