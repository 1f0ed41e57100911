// The C++ header (cuabi.hpp) on a GPU: SAXPY through typed launches and
// launch plans, argument sizes checked in the library's own words, the
// parameter layout in one call, streams, events, graphs and memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <cuabi/cuabi.hpp>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

class CxxGpuTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    compile_options_.flags = CUABI_COMPILE_NO_CACHE;
    module_ = cuabi::module::compile(device_, kSaxpySource, compile_options_);
    saxpy_ = module_.get_function("saxpy");
  }

  // Runs the check on SAXPY's output against a * x + y.
  void ExpectSaxpy(const SaxpyProblem& p, const cuabi::buffer& out) {
    size_t first = 0;
    const std::vector<float> got = out.download<float>(p.n());
    EXPECT_EQ(0u, p.Mismatches(got, &first)) << "first wrong element: " << first;
  }

  cuabi::compile_options compile_options_;
  cuabi::module module_;
  cuabi::function saxpy_;
};

TEST_F(CxxGpuTest, SaxpyThroughATypedLaunch) {
  const SaxpyProblem p(1 << 20);
  cuabi::buffer x = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer y = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer out = cuabi::buffer::alloc(device_, p.bytes());
  const cuabi::stream s = cuabi::stream::create(device_);
  x.copy_from_host_async(0, p.x.data(), p.bytes(), s);
  y.copy_from_host_async(0, p.y.data(), p.bytes(), s);
  const cuabi_launch_config config =
      cuabi::launch_config(static_cast<uint32_t>((p.n() + 255) / 256), 256);
  saxpy_.launch(config, s, p.a, x, y, out, p.n());
  s.synchronize();
  EXPECT_TRUE(s.query());
  ExpectSaxpy(p, out);
}

TEST_F(CxxGpuTest, AWrongSizedArgumentIsRefusedInTheLibrarysWords) {
  cuabi::buffer b = cuabi::buffer::alloc(device_, 1024);
  const uint32_t n32 = 16;
  try {
    saxpy_.launch(cuabi::launch_config(1, 32), nullptr, 2.0f, b, b, b, n32);
    FAIL() << "a 4-byte n for a size_t parameter was launched";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_EQ(
        "cuabi_function_launch_sized: kernel 'saxpy' parameter 4 is 8 bytes, but the argument "
        "given is 4 bytes",
        e.message());
  }
  try {
    saxpy_.launch(cuabi::launch_config(1, 32), nullptr, 2.0f, b, b, b);
    FAIL() << "four arguments for five parameters were launched";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_TRUE(Contains(e.message(), "takes 5 parameters, but 4 were given")) << e.message();
  }
}

TEST_F(CxxGpuTest, TheParameterLayoutInOneCall) {
  const std::vector<cuabi_param_info> params = saxpy_.params();
  ASSERT_EQ(5u, params.size());
  const size_t offsets[] = {0, 8, 16, 24, 32};
  const size_t sizes[] = {4, 8, 8, 8, 8};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(offsets[i], params[i].offset) << i;
    EXPECT_EQ(sizes[i], params[i].size) << i;
  }
  EXPECT_EQ(5u, saxpy_.param_count());
  EXPECT_EQ(40u, saxpy_.args_size());
  EXPECT_EQ("saxpy", saxpy_.name());
  saxpy_.check_args<float, cuabi::buffer, cuabi::buffer, cuabi::buffer, size_t>();
  try {
    saxpy_.check_args<float, cuabi::buffer, cuabi::buffer, cuabi::buffer, uint32_t>();
    FAIL() << "a uint32_t for the size_t parameter passed the check";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_EQ(
        "cuabi_function_check_arg_sizes: kernel 'saxpy' parameter 4 is 8 bytes, but the "
        "argument given is 4 bytes",
        e.message());
  }
}

TEST_F(CxxGpuTest, ALaunchPlanWithTypedSetters) {
  const SaxpyProblem p(1 << 16);
  cuabi::buffer x = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer y = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer out = cuabi::buffer::alloc(device_, p.bytes());
  x.upload(p.x);
  y.upload(p.y);
  const cuabi::stream s = cuabi::stream::create(device_);
  cuabi::launch_plan plan = cuabi::launch_plan::create(
      saxpy_, cuabi::launch_config(static_cast<uint32_t>(p.n() / 256), 256), s);
  ASSERT_EQ(40u, plan.args_size());
  ASSERT_NE(nullptr, plan.args());

  plan.set(0, p.a);
  plan.set(1, x);
  plan.set(2, y);
  plan.set(3, out);
  plan.set(4, p.n());
  plan.launch();
  s.synchronize();
  ExpectSaxpy(p, out);

  // The setters write at the kernel's offsets.
  const unsigned char* block = static_cast<const unsigned char*>(plan.args());
  uint64_t written = 0;
  std::memcpy(&written, block + 24, 8);
  EXPECT_EQ(out.pointer(), written);

  // A value of the wrong size, or an index past the last parameter, is
  // refused by the library, in its words.
  try {
    plan.set(4, static_cast<uint32_t>(p.n()));
    FAIL() << "a uint32_t was written to the size_t parameter";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_EQ(
        "cuabi_function_check_arg_size: kernel 'saxpy' parameter 4 is 8 bytes, but the argument "
        "given is 4 bytes",
        e.message());
  }
  try {
    plan.set(5, p.a);
    FAIL() << "parameter 5 of five was written";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_TRUE(Contains(e.message(), "there is no parameter 5")) << e.message();
  }
}

TEST_F(CxxGpuTest, SettersCheckEachArgumentOnce) {
  const SaxpyProblem p(1 << 16);
  cuabi::buffer x = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer y = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer out = cuabi::buffer::alloc(device_, p.bytes());
  x.upload(p.x);
  y.upload(p.y);
  cuabi::launch_plan plan = cuabi::launch_plan::create(
      saxpy_, cuabi::launch_config(static_cast<uint32_t>(p.n() / 256), 256));
  plan.set_args(p.a, x, y, out, p.n());
  plan.set(4, p.n());

  // Checked already: with the function's handle released, writing the same
  // signature and the same sizes needs no call into the library.
  saxpy_.reset();
  out.memset(0, 0, p.bytes());
  EXPECT_NO_THROW(plan.set_args(p.a, x, y, out, p.n()));
  EXPECT_NO_THROW(plan.set(0, p.a));
  // A plan keeps its kernel alive: it still launches, and moves.
  cuabi::launch_plan moved = std::move(plan);
  moved.launch();
  device_.synchronize();
  ExpectSaxpy(p, out);
  // A new size must be checked, and the released function answers so.
  try {
    moved.set(4, static_cast<uint32_t>(p.n()));
    FAIL() << "a new size was written unchecked";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_HANDLE>& e) {
    EXPECT_TRUE(Contains(e.message(), "cuabi_function_check_arg_size: function")) << e.message();
  }
}

TEST_F(CxxGpuTest, EventsAndGraphs) {
  const SaxpyProblem p(1 << 16);
  cuabi::buffer x = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer y = cuabi::buffer::alloc(device_, p.bytes());
  cuabi::buffer out = cuabi::buffer::alloc(device_, p.bytes());
  x.upload(p.x);
  y.upload(p.y);
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  const cuabi::event start = cuabi::event::create(device_);
  const cuabi::event stop = cuabi::event::create(device_);

  s.begin_capture(CUABI_CAPTURE_THREAD_LOCAL);
  saxpy_.launch(cuabi::launch_config(static_cast<uint32_t>(p.n() / 256), 256), s, p.a, x, y, out,
                p.n());
  const cuabi::graph g = s.end_capture();
  EXPECT_GE(g.node_count(), 1u);
  const cuabi::graph_exec exec = g.instantiate();

  start.record(s);
  exec.launch(s);
  stop.record(s);
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  EXPECT_GE(cuabi::event::elapsed_ms(start, stop), 0.0f);
  ExpectSaxpy(p, out);

  const cuabi::stream other = cuabi::stream::create(device_);
  other.wait(stop);
  other.synchronize();
}

TEST_F(CxxGpuTest, MemoryAndDevice) {
  EXPECT_EQ(0, device_.ordinal());
  EXPECT_FALSE(device_.name().empty());
  const cuabi::version_pair cc = device_.compute_capability();
  EXPECT_EQ(cc_major_, cc.major);
  EXPECT_EQ(cc_minor_, cc.minor);
  const cuabi::memory_info m = device_.memory();
  EXPECT_GT(m.total_bytes, 0u);
  EXPECT_LE(m.free_bytes, m.total_bytes);
  EXPECT_EQ(m.total_bytes, device_.total_memory());
  const cuabi::priority_range r = device_.stream_priority_range();
  EXPECT_LE(r.greatest, r.least);

  cuabi::host_buffer pinned = cuabi::host_buffer::alloc(device_, 256 * sizeof(int));
  int* h = pinned.as<int>();
  for (int i = 0; i < 256; ++i) h[i] = i;
  cuabi::buffer a = cuabi::buffer::alloc(device_, 256 * sizeof(int));
  cuabi::buffer b = cuabi::buffer::alloc(device_, 256 * sizeof(int));
  const cuabi::stream s = cuabi::stream::create(device_);
  a.copy_from_host_async(0, h, pinned.size(), s);
  b.copy_from_async(0, a, 0, pinned.size(), s);
  b.memset_async(0, 0x01, sizeof(int), s);
  s.synchronize();
  const std::vector<int> back = b.download<int>(256);
  EXPECT_EQ(0x01010101, back[0]);
  EXPECT_EQ(1, back[1]);
  EXPECT_EQ(255, back[255]);
  EXPECT_EQ(256 * sizeof(int), b.size());
  EXPECT_EQ(0, b.device_ordinal());

  try {
    a.copy_to_host(1, h, 256 * sizeof(int));
    FAIL() << "a copy past the end was made";
  } catch (const cuabi::status_error<CUABI_ERROR_OUT_OF_RANGE>& e) {
    EXPECT_TRUE(Contains(e.message(), "cuabi_buffer_copy_to_host: ")) << e.message();
  }
}

TEST_F(CxxGpuTest, ModulesWithNameExpressionsGlobalsAndErrors) {
  cuabi::compile_options opts;
  opts.name_expressions = {"write_scalar<int>"};
  opts.flags = CUABI_COMPILE_NO_CACHE;
  const cuabi::module m = cuabi::module::compile(device_, kWriteScalarSource, opts);
  EXPECT_FALSE(m.from_cache());
  const cuabi::function f = m.get_function("write_scalar<int>");
  EXPECT_EQ(0u, m.lowered_name("write_scalar<int>").rfind("_Z", 0));
  cuabi::buffer out = cuabi::buffer::alloc(device_, sizeof(int));
  f.launch(cuabi::launch_config(1, 1), nullptr, out, 42);
  EXPECT_EQ(42, out.download<int>(1)[0]);

  const cuabi::module util = cuabi::module::compile(device_, kUtilSource, compile_options_);
  const cuabi::global_symbol counter = util.global("counter");
  EXPECT_NE(0u, counter.device_ptr);
  EXPECT_EQ(4 * sizeof(int), counter.bytes);

  try {
    cuabi::module::compile(device_, "extern \"C\" __global__ void k() { nope_in_cxx; }",
                           compile_options_);
    FAIL() << "the compile did not fail";
  } catch (const cuabi::status_error<CUABI_ERROR_COMPILE>& e) {
    EXPECT_TRUE(Contains(e.log(), "nope_in_cxx")) << e.log();
  }
  try {
    m.get_function("no_such_kernel");
    FAIL() << "an unknown kernel was found";
  } catch (const cuabi::status_error<CUABI_ERROR_NOT_FOUND>& e) {
    EXPECT_TRUE(Contains(e.message(), "no_such_kernel")) << e.message();
  }

  // CUBIN from a program, loaded as data.
  cuabi::program prog = cuabi::program::create(kSaxpySource, "saxpy.cu");
  prog.compile({"--gpu-architecture=" + Arch("sm_")});
  const cuabi::module loaded = cuabi::module::load_data(device_, prog.cubin());
  EXPECT_EQ("saxpy", loaded.get_function("saxpy").name());
}

}  // namespace
}  // namespace cuabi_test
