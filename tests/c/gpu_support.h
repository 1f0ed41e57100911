// Fixture and helpers of the GPU suite: every test skips itself, with the
// reason, where the driver or a device is missing.
#ifndef CUABI_TESTS_C_GPU_SUPPORT_H
#define CUABI_TESTS_C_GPU_SUPPORT_H

#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels.h"
#include "test_support.h"

namespace cuabi_test {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = NoDeviceReason();
    if (!reason.empty()) GTEST_SKIP() << reason;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(0, device_.out())) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_compute_capability(device_, &cc_major_, &cc_minor_))
        << LastError();
  }

  // The packed argument block of `values` at `f`'s parameter offsets, each
  // value's size checked against its parameter's (for kernel nodes and
  // packed launches).
  template <typename... T>
  static std::vector<char> Pack(cuabi_function f, const T&... values) {
    std::vector<cuabi_param_info> params(sizeof...(T));
    size_t count = params.size(), size = 0;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_function_get_params(f, params.data(), &count, &size))
        << LastError();
    EXPECT_EQ(sizeof...(T), count);
    std::vector<char> block(size);
    size_t index = 0;
    auto put = [&](const auto& v) {
      const size_t i = index++;
      if (i >= count || params[i].size != sizeof v || params[i].offset + sizeof v > block.size())
        ADD_FAILURE() << "parameter " << i << " does not take a " << sizeof v << "-byte value";
      else
        std::memcpy(&block[params[i].offset], &v, sizeof v);
    };
    (put(values), ...);
    return block;
  }

  // "sm_90" / "compute_90" for this device.
  std::string Arch(const char* prefix) const {
    return std::string(prefix) + std::to_string(cc_major_) + std::to_string(cc_minor_);
  }

  // Compiles `source` with cuabi_module_compile. Fails the test (and returns
  // an empty module) on error.
  Module Compile(const char* source, cuabi_output output = CUABI_OUTPUT_CUBIN,
                 uint32_t flags = CUABI_COMPILE_NO_CACHE,
                 std::vector<const char*> name_expressions = {},
                 std::vector<const char*> options = {}) {
    cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
    desc.source = source;
    desc.output = output;
    desc.flags = flags;
    desc.name_expressions = name_expressions.data();
    desc.num_name_expressions = name_expressions.size();
    desc.options = options.data();
    desc.num_options = options.size();
    Module module;
    const cuabi_status st = cuabi_module_compile(device_, &desc, module.out());
    std::string log;
    if (st == CUABI_ERROR_COMPILE) {
      size_t size = 0;
      cuabi_last_error_log(nullptr, &size);
      std::vector<char> buf(size + 1, '\0');
      cuabi_last_error_log(buf.data(), &size);
      log = buf.data();
    }
    EXPECT_EQ(CUABI_SUCCESS, st) << LastError() << "\n" << log;
    return module;
  }

  Function GetFunction(cuabi_module module, const char* name) {
    Function f;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_module_get_function(module, name, f.out()))
        << name << ": " << LastError();
    return f;
  }

  Buffer Alloc(size_t bytes) {
    Buffer b;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device_, bytes, b.out())) << LastError();
    return b;
  }

  static uint64_t Pointer(cuabi_buffer b) {
    uint64_t p = 0;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pointer(b, &p)) << LastError();
    return p;
  }

  template <typename T>
  static void Upload(cuabi_buffer b, const std::vector<T>& v) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(b, 0, v.data(), v.size() * sizeof(T)))
        << LastError();
  }

  template <typename T>
  static std::vector<T> Download(cuabi_buffer b, size_t count) {
    std::vector<T> v(count);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, v.data(), count * sizeof(T)))
        << LastError();
    return v;
  }

  Device device_;
  int32_t cc_major_ = 0;
  int32_t cc_minor_ = 0;
};

// SAXPY problem of the overview: 512 threads x 32768 blocks, a = 2.
struct SaxpyProblem {
  static constexpr uint32_t kThreads = 512;
  static constexpr uint32_t kBlocks = 32768;
  static constexpr size_t kN = size_t{kThreads} * kBlocks;
  float a = 2.0f;
  std::vector<float> x, y;

  explicit SaxpyProblem(size_t n = kN, uint32_t seed = 2024) : x(n), y(n) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
    for (size_t i = 0; i < n; ++i) {
      x[i] = dist(gen);
      y[i] = dist(gen);
    }
  }
  size_t n() const { return x.size(); }
  size_t bytes() const { return x.size() * sizeof(float); }

  // Number of elements of `out` that differ from a * x + y (a = 2 makes
  // a * x exact, so a fused multiply-add gives the same float).
  size_t Mismatches(const std::vector<float>& out, size_t* first = nullptr) const {
    size_t bad = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const float want = a * x[i] + y[i];
      if (out[i] != want) {
        if (bad == 0 && first) *first = i;
        ++bad;
      }
    }
    return bad;
  }
};

}  // namespace cuabi_test

#endif  // CUABI_TESTS_C_GPU_SUPPORT_H
