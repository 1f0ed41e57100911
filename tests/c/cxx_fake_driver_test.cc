// The C++ face end to end without a GPU: the generated classes and the idioms
// on top of them, against the stand-in driver and NVRTC of tests/fault
// (fake_cuda.c, whose device memory is host memory and which runs saxpy on
// the host). ctest's cuabi_cpu_fake_driver (tests/CMakeLists.txt) points
// CUABI_DRIVER_PATH and CUABI_NVRTC_PATH at the stand-in; elsewhere these
// tests skip.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cuabi/cuabi.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels.h"

namespace {

bool OnTheStandIn() {
  const char* on = std::getenv("CUABI_TEST_FAKE_DRIVER");
  return on != nullptr && std::string(on) == "1";
}

#define SKIP_UNLESS_ON_THE_STAND_IN() \
  if (!OnTheStandIn()) GTEST_SKIP() << "needs the stand-in driver (ctest's cuabi_cpu_fake_driver)"

TEST(FakeDriver, GeneratedAccessorsAnswerWhatTheCCallsAnswer) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  cuabi::init();
  int32_t count = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_count(&count));
  EXPECT_EQ(count, cuabi::device::count());
  const cuabi::device d = cuabi::device::get(0);
  EXPECT_EQ(0, d.ordinal());

  // A two-call string, a struct of two outs, one out of an argument.
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_name(d, nullptr, &size));
  std::string name(size, '\0');
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_name(d, &name[0], &size));
  name.resize(size - 1);
  EXPECT_EQ(name, d.name());
  EXPECT_FALSE(d.name().empty());
  int32_t major = 0, minor = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_compute_capability(d, &major, &minor));
  const cuabi::version_pair cc = d.compute_capability();
  EXPECT_EQ(major, cc.major);
  EXPECT_EQ(minor, cc.minor);
  const cuabi::memory_info m = d.memory_info();
  EXPECT_LE(m.free_bytes, m.total_bytes);
  EXPECT_EQ(m.total_bytes, d.total_memory());
  EXPECT_EQ(m.total_bytes, d.memory().total_bytes) << "the older name answers the same";
  int32_t version = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version));
  EXPECT_EQ(version, cuabi::driver_version());
  EXPECT_FALSE(cuabi::driver_path().empty());

  // A failure throws its status with the library's message, unchanged.
  cuabi_device none = nullptr;
  const cuabi_status st = cuabi_device_get(count, &none);
  ASSERT_NE(CUABI_SUCCESS, st);
  const std::string c_message = cuabi_last_error_message();
  try {
    cuabi::device::get(count);
    FAIL() << "device " << count << " of " << count << " was opened";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(st, e.status());
    EXPECT_EQ(c_message, e.message());
  }
}

TEST(FakeDriver, SaxpyThroughTheGeneratedClassesAndTheIdioms) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  const cuabi::device d = cuabi::device::open(0);
  cuabi::compile_options opts;
  opts.flags = CUABI_COMPILE_NO_CACHE;
  const cuabi::module mod = cuabi::module::compile(d, cuabi_test::kSaxpySource, opts);
  const cuabi::function saxpy = mod.get_function("saxpy");
  EXPECT_EQ("saxpy", saxpy.name());
  const std::vector<cuabi_param_info> params = saxpy.params();
  ASSERT_EQ(5u, params.size());
  EXPECT_EQ(32u, params[4].offset);
  EXPECT_EQ(40u, saxpy.args_size());

  const size_t n = 256;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  const cuabi::buffer bx = cuabi::buffer::alloc(d, n * sizeof(float));
  const cuabi::buffer by = cuabi::buffer::alloc(d, n * sizeof(float));
  const cuabi::buffer out = cuabi::buffer::alloc(d, n * sizeof(float));
  EXPECT_EQ(n * sizeof(float), out.size());
  bx.upload(x);
  by.upload(y);
  const cuabi::stream s = cuabi::stream::create(d);
  const cuabi_launch_config config = cuabi::launch_config(1, static_cast<uint32_t>(n));
  auto expect_saxpy = [&](float a) {
    const std::vector<float> got = out.download<float>(n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(a * x[i] + y[i], got[i]) << "element " << i;
  };

  // A typed launch; a wrong-sized argument is refused before running.
  saxpy.launch(config, s, 2.0f, bx, by, out, n);
  s.synchronize();
  EXPECT_TRUE(s.query());
  expect_saxpy(2.0f);
  EXPECT_THROW(saxpy.launch(config, s, 2.0f, bx, by, out, static_cast<uint32_t>(n)),
               cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>);

  // A launch plan with typed setters, timed by events.
  cuabi::launch_plan plan = cuabi::launch_plan::create(saxpy, config, s);
  plan.set_args(3.0f, bx, by, out, n);
  const cuabi::event start = cuabi::event::create(d);
  const cuabi::event stop = cuabi::event::create(d);
  start.record(s);
  plan.launch();
  stop.record(s);
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  EXPECT_GE(cuabi::event::elapsed_ms(start, stop), 0.0f);
  expect_saxpy(3.0f);

  // The plain generated launch forms.
  float a = 4.0f;
  uint64_t px = bx.pointer(), py = by.pointer(), po = out.pointer();
  size_t count = n;
  saxpy.launch_sized(config, s, {&a, &px, &py, &po, &count}, {4, 8, 8, 8, 8});
  s.synchronize();
  expect_saxpy(4.0f);

  // A captured graph, instantiated and launched.
  s.begin_capture();
  saxpy.launch(config, s, 5.0f, bx, by, out, n);
  const cuabi::graph g = s.end_capture();
  EXPECT_EQ(1u, g.node_count());
  const cuabi::graph_exec exec = g.instantiate();
  exec.launch(s);
  s.synchronize();
  expect_saxpy(5.0f);
}

TEST(FakeDriver, TypedCompileOptionsReachTheLibrarysChecks) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  const cuabi::device d = cuabi::device::get(0);
  cuabi::compile_options opts;
  opts.flags = CUABI_COMPILE_NO_CACHE;
  opts.defines = {"N=4", "9LIVES"};
  try {
    cuabi::module::compile(d, cuabi_test::kSaxpySource, opts);
    FAIL() << "a macro name starting with a digit was compiled";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_NE(std::string::npos, e.message().find("defines[1]")) << e.message();
  }
  opts.defines = {"N=4"};
  opts.cxx_standard = CUABI_STD_CXX17;
  opts.line_info = true;
  EXPECT_EQ("saxpy",
            cuabi::module::compile(d, cuabi_test::kSaxpySource, opts).get_function("saxpy").name());
}

TEST(FakeDriver, BlobsStringsAndOwnedResultsFromAProgram) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  cuabi::program p = cuabi::program::create(cuabi_test::kSaxpySource, "saxpy.cu");
  EXPECT_EQ("", p.log());
  p.compile({"--gpu-architecture=sm_90"});
  const std::vector<unsigned char> cubin = p.cubin();
  EXPECT_FALSE(cubin.empty());
  const cuabi::device d = cuabi::device::get(0);
  const cuabi::module m = cuabi::module::load_data(d, cubin);
  EXPECT_FALSE(m.from_cache());
  EXPECT_EQ("saxpy", m.get_function("saxpy").name());
  EXPECT_THROW(m.get_function("no_such_kernel"), cuabi::status_error<CUABI_ERROR_NOT_FOUND>);
}

// The driver's log and health through the C++ face, against the stand-in:
// its own ctest entry (cuabi_cpu_fake_driver_lost), since the context is
// lost for the rest of the process.
TEST(FakeDriverLost, TheDriversLogAndHealthThroughTheFace) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  void* fake = dlopen(std::getenv("CUABI_DRIVER_PATH"), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nullptr, fake);
  auto fail_entry =
      reinterpret_cast<void (*)(const char*, long, int, int)>(dlsym(fake, "fake_fail_entry"));
  ASSERT_NE(nullptr, fail_entry);
  const cuabi::device d = cuabi::device::get(0);
  EXPECT_EQ(CUABI_HEALTH_USABLE, d.health());
  int told = 0;
  std::string told_message;
  cuabi::on_context_lost([&](const std::string& m) {
    ++told;
    told_message = m;
    throw std::runtime_error("a handler that throws does not cross the C library");
  });

  fail_entry("cuMemAlloc", 1, 2 /* CUDA_ERROR_OUT_OF_MEMORY */, 0);
  try {
    cuabi::buffer::alloc(d, 64);
    FAIL() << "the injected failure was not reported";
  } catch (const cuabi::status_error<CUABI_ERROR_OUT_OF_MEMORY>& e) {
    EXPECT_NE(std::string::npos,
              e.message().find("; the driver logged: stand-in: cuMemAlloc fails as told | "
                               "Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc"))
        << e.message();
  }
  EXPECT_NE(std::string::npos, cuabi::driver_log_read(1).find("from cuMemAlloc\n"));

  fail_entry("cuCtxSynchronize", 1, 719 /* CUDA_ERROR_LAUNCH_FAILED */, 0);
  EXPECT_THROW(d.synchronize(), cuabi::status_error<CUABI_ERROR_CONTEXT_LOST>);
  EXPECT_EQ(CUABI_HEALTH_LOST, d.health());
  EXPECT_EQ(1, told);
  EXPECT_EQ(told_message, cuabi::context_lost_message());
  EXPECT_EQ(0u, told_message.rfind("cuabi_device_synchronize: cuCtxSynchronize failed", 0))
      << told_message;
  cuabi::on_context_lost(nullptr);
}

}  // namespace
