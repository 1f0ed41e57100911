// Launch attributes (cuabi_launch_config's access-policy window, sync and
// cluster-scheduling policies, memory-sync domain and map, shared-memory
// carve-out, launch completion event, device-updatable kernel node) through a
// plain launch, a launch plan and a captured graph's kernel node, each
// checked against what the kernel wrote; the completion event orders a
// second stream. The refusals are bad-input corpus cases.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// CUdevice_attribute values used here (cuda.h is not included by the tests).
constexpr int32_t kAttrMaxWindow = 109;         // MAX_ACCESS_POLICY_WINDOW_SIZE
constexpr int32_t kAttrMemSyncDomainCount = 126;  // MEM_SYNC_DOMAIN_COUNT

constexpr const char* kSource = R"(
// out[i] = i * k + 1 for i < n; each block counts itself in done[0] when its
// writes are visible.
extern "C" __global__ void fill(int* out, int k, unsigned n, unsigned* done)
{
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = (int)i * k + 1;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(done, 1u);
}

// Waits (at most about two seconds of GPU clock) until `blocks` blocks of
// fill have counted themselves, then copies twice their output. ok[0] is 1
// when the count was reached.
extern "C" __global__ void twice_after(const int* in, int* out, unsigned n,
                                       const unsigned* done, unsigned blocks, int* ok)
{
  __shared__ int reached;
  if (threadIdx.x == 0) {
    const long long start = clock64();
    reached = 0;
    while (clock64() - start < 4000000000LL) {
      if (*(volatile const unsigned*)done >= blocks) { reached = 1; break; }
    }
    if (blockIdx.x == 0) ok[0] = reached;
  }
  __syncthreads();
  __threadfence();
  if (!reached) return;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = 2 * ((volatile const int*)in)[i];
}
)";

class LaunchAttributesTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    module_ = Compile(kSource);
    fill_ = GetFunction(module_, "fill");
    twice_ = GetFunction(module_, "twice_after");
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s_.out()))
        << LastError();
    out_ = Alloc(kN * sizeof(int));
    done_ = Alloc(sizeof(unsigned));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kAttrMaxWindow, &max_window_));
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_device_get_attribute(device_, kAttrMemSyncDomainCount, &domains_));
  }

  // A configuration setting every attribute the device can honour (the
  // completion event aside).
  cuabi_launch_config Attributed() {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = kN / 256;
    c.block_x = 256;
    if (max_window_ > 0) {
      c.access_policy_window.base = Pointer(out_);
      c.access_policy_window.bytes =
          std::min<size_t>(kN * sizeof(int), static_cast<size_t>(max_window_));
      c.access_policy_window.hit_ratio = 0.75f;
    }
    if (cc_major_ >= 9) c.cluster_scheduling_policy = CUABI_CLUSTER_SCHEDULING_SPREAD;
    c.mem_sync_domain = CUABI_MEM_SYNC_DOMAIN_REMOTE;
    if (domains_ >= 2) {
      c.mem_sync_domain_map_default = 0;
      c.mem_sync_domain_map_remote = 1;
    }
    c.shared_carveout = 25;
    return c;
  }

  // The arguments of fill(out_, k, kN, done_).
  struct FillArgs {
    uint64_t out = 0, done = 0;
    int k = 0;
    unsigned n = 0;
    void* params[4] = {&out, &k, &n, &done};
  };
  FillArgs Args(int k) {
    FillArgs a;
    a.out = Pointer(out_);
    a.done = Pointer(done_);
    a.k = k;
    a.n = kN;
    return a;
  }

  void ExpectFilled(int k) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s_)) << LastError();
    const std::vector<int> got = Download<int>(out_, kN);
    size_t bad = 0;
    for (size_t i = 0; i < kN; ++i) bad += got[i] != static_cast<int>(i) * k + 1;
    EXPECT_EQ(0u, bad) << "elements that are not i * " << k << " + 1";
  }

  static constexpr unsigned kN = 1 << 20;
  Module module_;
  Function fill_, twice_;
  Stream s_;
  Buffer out_, done_;
  int32_t max_window_ = 0, domains_ = 0;
};

TEST_F(LaunchAttributesTest, PlainLaunchWithEveryAttribute) {
  cuabi_launch_config c = Attributed();
  FillArgs a = Args(3);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(fill_, &c, s_, a.params, 4)) << LastError();
  ExpectFilled(3);
}

TEST_F(LaunchAttributesTest, PlanWithEveryAttributeLaunchesTwice) {
  cuabi_launch_config c = Attributed();
  Event done;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, done.out()));
  c.completion_event = done;
  LaunchPlan plan;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_create(fill_, &c, s_, plan.out())) << LastError();
  void* args = nullptr;
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_get_args(plan, &args, &size));
  std::vector<cuabi_param_info> params(4);
  size_t count = 4;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_params(fill_, params.data(), &count, nullptr)) << LastError();
  FillArgs a = Args(5);
  for (int k : {5, 7}) {
    a.k = k;
    for (size_t i = 0; i < 4; ++i)
      std::memcpy(static_cast<char*>(args) + params[i].offset, a.params[i], params[i].size);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_launch(plan)) << LastError();
    ExpectFilled(k);
  }
  // The completion event was recorded by the plan's launches.
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_synchronize(done)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_query(done));
}

TEST_F(LaunchAttributesTest, CapturedKernelNodeTakesTheAttributes) {
  cuabi_launch_config c = Attributed();
  FillArgs a = Args(9);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(s_, CUABI_CAPTURE_THREAD_LOCAL));
  const cuabi_status launched = cuabi_function_launch(fill_, &c, s_, a.params, 4);
  const std::string why = LastError();
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s_, g.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, launched) << why;
  size_t kernels = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_kernel_node_count(g, &kernels));
  ASSERT_EQ(1u, kernels);
  GraphExec exec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, exec.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s_)) << LastError();
  ExpectFilled(9);
}

TEST_F(LaunchAttributesTest, DeviceUpdatableKernelNodeOnlyInACapture) {
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = kN / 256;
  c.block_x = 256;
  c.flags = CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE;
  FillArgs a = Args(11);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(fill_, &c, s_, a.params, 4));
  EXPECT_NE(std::string::npos, LastError().find("the stream is not capturing a graph"))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(s_, CUABI_CAPTURE_THREAD_LOCAL));
  const cuabi_status launched = cuabi_function_launch(fill_, &c, s_, a.params, 4);
  const std::string why = LastError();
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s_, g.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, launched) << why;
  GraphExec exec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, exec.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_upload(exec, s_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s_)) << LastError();
  ExpectFilled(11);
}

TEST_F(LaunchAttributesTest, CompletionEventOrdersASecondStream) {
  Stream second;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, second.out()));
  Event started;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, started.out()));
  Buffer copy = Alloc(kN * sizeof(int)), ok = Alloc(sizeof(int));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(done_, 0, 0, sizeof(unsigned)));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(copy, 0, 0, kN * sizeof(int)));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(ok, 0, 0, sizeof(int)));

  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = 64;
  c.block_x = 256;
  c.completion_event = started;
  FillArgs a = Args(13);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(fill_, &c, s_, a.params, 4)) << LastError();
  // The second stream's kernel starts once every block of the first has.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_wait_event(second, started)) << LastError();
  uint64_t in = Pointer(out_), out = Pointer(copy), done = Pointer(done_), okp = Pointer(ok);
  unsigned n = kN, blocks = c.grid_x;
  void* params[] = {&in, &out, &n, &done, &blocks, &okp};
  cuabi_launch_config one = CUABI_LAUNCH_CONFIG_INIT;
  one.grid_x = 1;
  one.block_x = 256;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(twice_, &one, second, params, 6)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(second)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_query(started));
  EXPECT_EQ(1, Download<int>(ok, 1)[0]) << "the first kernel's blocks never all finished";
  const std::vector<int> got = Download<int>(copy, kN);
  size_t bad = 0;
  for (size_t i = 0; i < kN; ++i) bad += got[i] != 2 * (static_cast<int>(i) * 13 + 1);
  EXPECT_EQ(0u, bad) << "elements the second stream read wrong";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s_));
}

TEST_F(LaunchAttributesTest, RefusalsNameTheDeviceBound) {
  cuabi_launch_config c = Attributed();
  FillArgs a = Args(1);
  c.mem_sync_domain_map_default = 0;
  c.mem_sync_domain_map_remote = domains_;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(fill_, &c, s_, a.params, 4));
  EXPECT_NE(std::string::npos,
            LastError().find("domains 0 to " + std::to_string(domains_ - 1))) << LastError();
  c = Attributed();
  c.access_policy_window.base = Pointer(out_);
  c.access_policy_window.bytes = static_cast<size_t>(max_window_) + 1;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(fill_, &c, s_, a.params, 4));
  EXPECT_NE(std::string::npos,
            LastError().find("maximum window of " + std::to_string(max_window_) + " bytes"))
      << LastError();
  c = Attributed();
  c.sync_policy = CUABI_SYNC_POLICY_SPIN;  // a stream's policy only
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED, cuabi_function_launch(fill_, &c, s_, a.params, 4));
  EXPECT_NE(std::string::npos, LastError().find("cuabi_stream_set_sync_policy")) << LastError();
  c = Attributed();
  c.shared_carveout = 101;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(fill_, &c, s_, a.params, 4));
  EXPECT_NE(std::string::npos, LastError().find("outside 0 to 100 percent")) << LastError();
}

}  // namespace
}  // namespace cuabi_test
