// Launch attributes through cuabi.hpp's cuabi::config: a typed launch, a
// launch plan and a captured graph's kernel node with every attribute the
// device can honour, checked against SAXPY on the host; the launch
// completion event orders a second stream; a refusal carries its bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cuabi/cuabi.hpp>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

constexpr int32_t kAttrMaxWindow = 109;           // MAX_ACCESS_POLICY_WINDOW_SIZE
constexpr int32_t kAttrMemSyncDomainCount = 126;  // MEM_SYNC_DOMAIN_COUNT

class CxxLaunchAttributesTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cuabi::compile_options options;
    options.flags = CUABI_COMPILE_NO_CACHE;
    module_ = cuabi::module::compile(device_, kSaxpySource, options);
    saxpy_ = module_.get_function("saxpy");
    x_ = cuabi::buffer::alloc(device_, p_.bytes());
    y_ = cuabi::buffer::alloc(device_, p_.bytes());
    out_ = cuabi::buffer::alloc(device_, p_.bytes());
    x_.upload(p_.x);
    y_.upload(p_.y);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kAttrMaxWindow, &max_window_));
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_device_get_attribute(device_, kAttrMemSyncDomainCount, &domains_));
  }

  cuabi::config Attributed() {
    cuabi::config c(static_cast<uint32_t>(p_.n() / 256), 256);
    if (max_window_ > 0)
      c.access_policy_window(x_.pointer(),
                             std::min<size_t>(p_.bytes(), static_cast<size_t>(max_window_)),
                             0.75f);
    c.mem_sync_domain(CUABI_MEM_SYNC_DOMAIN_REMOTE)
        .shared_carveout(50);
    if (domains_ >= 2) c.mem_sync_domain_map(0, 1);
    if (cc_major_ >= 9) c.cluster_scheduling(CUABI_CLUSTER_SCHEDULING_LOAD_BALANCING);
    return c;
  }

  void ExpectSaxpy() {
    size_t first = 0;
    EXPECT_EQ(0u, p_.Mismatches(out_.download<float>(p_.n()), &first))
        << "first wrong element: " << first;
  }

  SaxpyProblem p_{1 << 20};
  cuabi::module module_;
  cuabi::function saxpy_;
  cuabi::buffer x_, y_, out_;
  int32_t max_window_ = 0, domains_ = 0;
};

TEST_F(CxxLaunchAttributesTest, TypedLaunch) {
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  saxpy_.launch(Attributed(), s, p_.a, x_, y_, out_, p_.n());
  s.synchronize();
  ExpectSaxpy();
}

TEST_F(CxxLaunchAttributesTest, PlanWithACompletionEvent) {
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  const cuabi::event started = cuabi::event::create(device_, CUABI_EVENT_DISABLE_TIMING);
  cuabi::launch_plan plan =
      cuabi::launch_plan::create(saxpy_, Attributed().completion_event(started), s);
  plan.set_args(p_.a, x_, y_, out_, p_.n());
  plan.launch();
  s.synchronize();
  started.synchronize();
  EXPECT_TRUE(started.query());
  ExpectSaxpy();
}

TEST_F(CxxLaunchAttributesTest, CapturedKernelNode) {
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  s.begin_capture(CUABI_CAPTURE_THREAD_LOCAL);
  saxpy_.launch(Attributed(), s, p_.a, x_, y_, out_, p_.n());
  const cuabi::graph g = s.end_capture();
  const cuabi::graph_exec exec = g.instantiate();
  exec.launch(s);
  s.synchronize();
  ExpectSaxpy();

  // A device-updatable kernel node.
  out_.memset(0, 0, p_.bytes());
  s.begin_capture(CUABI_CAPTURE_THREAD_LOCAL);
  saxpy_.launch(cuabi::config(static_cast<uint32_t>(p_.n() / 256), 256).device_updatable(), s,
                p_.a, x_, y_, out_, p_.n());
  const cuabi::graph updatable = s.end_capture();
  const cuabi::graph_exec updatable_exec = updatable.instantiate();
  updatable_exec.upload(s);
  updatable_exec.launch(s);
  s.synchronize();
  ExpectSaxpy();
}

TEST_F(CxxLaunchAttributesTest, CompletionEventOrdersASecondStream) {
  const cuabi::stream first = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  const cuabi::stream second = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  const cuabi::event started = cuabi::event::create(device_, CUABI_EVENT_DISABLE_TIMING);
  const cuabi::event finished = cuabi::event::create(device_, CUABI_EVENT_DISABLE_TIMING);
  saxpy_.launch(cuabi::config(static_cast<uint32_t>(p_.n() / 256), 256).completion_event(started),
                first, p_.a, x_, y_, out_, p_.n());
  finished.record(first);
  // The second stream starts after every block of SAXPY has; it then waits
  // for the end and copies the result.
  second.wait(started);
  second.wait(finished);
  cuabi::buffer copy = cuabi::buffer::alloc(device_, p_.bytes());
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_async(copy, 0, out_, 0, p_.bytes(), second))
      << LastError();
  second.synchronize();
  EXPECT_TRUE(started.query());
  out_ = std::move(copy);
  ExpectSaxpy();
}

TEST_F(CxxLaunchAttributesTest, ARefusalCarriesTheBound) {
  try {
    saxpy_.launch(Attributed().shared_carveout(150), nullptr, p_.a, x_, y_, out_, p_.n());
    FAIL() << "a carve-out of 150 percent was taken";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_TRUE(Contains(e.message(), "shared_carveout is 150, outside 0 to 100 percent"))
        << e.message();
  }
}

}  // namespace
}  // namespace cuabi_test
