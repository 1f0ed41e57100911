// Extended launches (cooperative, clusters, programmatic dependent launch),
// occupancy, host functions and graph node updates, on the device.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// CUdevice_attribute values used here (cuda.h is not included by the tests).
constexpr int32_t kMultiprocessorCount = 16;
constexpr int32_t kCooperativeLaunch = 95;

constexpr const char* kLaunchExSource = R"(
// A grid-wide barrier for a cooperative launch (every block is resident, so
// spinning blocks cannot starve the others): a counter and a generation.
__device__ void grid_barrier(unsigned* count, volatile unsigned* generation, unsigned blocks)
{
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned seen = *generation;
    __threadfence();
    if (atomicAdd(count, 1u) == blocks - 1) {
      *count = 0;
      __threadfence();
      atomicAdd((unsigned*)generation, 1u);
    } else {
      while (*generation == seen) {}
    }
    __threadfence();
  }
  __syncthreads();
}

// Sums in[0..n) in one launch: per-block partial sums, a grid barrier, then
// block 0 adds the partials.
extern "C" __global__ void coop_sum(const int* in, unsigned n, unsigned long long* partial,
                                    unsigned* barrier, unsigned long long* out)
{
  __shared__ unsigned long long block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  unsigned long long mine = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    mine += (unsigned long long)in[i];
  atomicAdd(&block_sum, mine);
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = block_sum;
  grid_barrier(barrier, barrier + 1, gridDim.x);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += ((volatile unsigned long long*)partial)[b];
    *out = total;
  }
}

#if __CUDA_ARCH__ >= 900
__device__ void cluster_sync()
{
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Each block reads the value its next peer in the cluster put in its shared
// memory (distributed shared memory): out[b] = 10 * peer block + 1.
__device__ void swap_body(int* out)
{
  __shared__ int value;
  unsigned rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (threadIdx.x == 0) value = (int)block * 10 + 1;
  cluster_sync();
  if (threadIdx.x == 0) {
    unsigned long long generic = (unsigned long long)&value;
    unsigned long long local64;
    asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(local64) : "l"(generic));
    const unsigned local = (unsigned)local64;
    const unsigned peer = (rank + 1) % size;
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(peer));
    int got;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(got) : "r"(remote) : "memory");
    out[block] = got;
  }
  cluster_sync();
}
#else
__device__ void swap_body(int*) {}
#endif

extern "C" __global__ void cluster_swap(int* out) { swap_body(out); }
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_swap_fixed(int* out) { swap_body(out); }
#else
extern "C" __global__ void cluster_swap_fixed(int* out) { swap_body(out); }
#endif

extern "C" __global__ void pdl_producer(int* buf, unsigned n)
{
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = (int)i * 3 + 1;
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

extern "C" __global__ void pdl_consumer(const int* buf, int* out, unsigned n)
{
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = buf[i] * 2;
}
)";

std::string Message() { return cuabi_last_error_message(); }

class LaunchExTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    module_ = Compile(kLaunchExSource);
    ASSERT_TRUE(module_.get() != nullptr);
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_device_get_attribute(device_, kMultiprocessorCount, &sms_))
        << LastError();
  }
  bool Hopper() const { return cc_major_ >= 9; }

  Module module_;
  int32_t sms_ = 0;
};

// Expected result of swap_body for block b in 1-D clusters of `cs` blocks.
int SwapExpected(uint32_t b, uint32_t cs) {
  const uint32_t base = b - b % cs;
  return static_cast<int>(base + (b % cs + 1) % cs) * 10 + 1;
}

TEST_F(LaunchExTest, CooperativeReductionMatchesTheHostSum) {
  int32_t coop = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kCooperativeLaunch, &coop));
  if (!coop) GTEST_SKIP() << "the device does not support cooperative launches";
  Function f = GetFunction(module_, "coop_sum");
  const uint32_t block = 256;
  uint32_t per_sm = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_active_blocks_per_sm(f, block, 0, &per_sm))
      << LastError();
  ASSERT_GT(per_sm, 0u);
  const uint32_t resident = per_sm * static_cast<uint32_t>(sms_);

  const unsigned n = 1u << 20;
  std::vector<int> in(n);
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> dist(0, 999);
  for (auto& v : in) v = dist(gen);
  const unsigned long long want =
      std::accumulate(in.begin(), in.end(), 0ull,
                      [](unsigned long long a, int v) { return a + static_cast<unsigned>(v); });
  Buffer d_in = Alloc(n * sizeof(int));
  Buffer partial = Alloc(resident * sizeof(unsigned long long));
  Buffer barrier = Alloc(2 * sizeof(unsigned));
  Buffer out = Alloc(sizeof(unsigned long long));
  Upload(d_in, in);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(barrier, 0, 0, 2 * sizeof(unsigned)));

  uint64_t p_in = Pointer(d_in), p_partial = Pointer(partial), p_barrier = Pointer(barrier),
           p_out = Pointer(out);
  unsigned count = n;
  void* params[] = {&p_in, &count, &p_partial, &p_barrier, &p_out};
  for (uint32_t grid : {resident, std::max(1u, resident / 2), 1u}) {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = grid;
    c.block_x = block;
    c.flags = CUABI_LAUNCH_COOPERATIVE;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &c, nullptr, params, 5)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
    EXPECT_EQ(want, Download<unsigned long long>(out, 1)[0]) << "grid " << grid;
  }

  // One block more than the device keeps resident is refused, naming both
  // numbers.
  cuabi_launch_config big = CUABI_LAUNCH_CONFIG_INIT;
  big.grid_x = resident + 1;
  big.block_x = block;
  big.flags = CUABI_LAUNCH_COOPERATIVE;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(f, &big, nullptr, params, 5));
  const std::string m = Message();
  EXPECT_TRUE(Contains(m, std::to_string(resident + 1) + " blocks")) << m;
  EXPECT_TRUE(Contains(m, std::to_string(resident))) << m;
  EXPECT_TRUE(Contains(m, std::to_string(per_sm) + " blocks per multiprocessor")) << m;
  EXPECT_TRUE(Contains(m, std::to_string(sms_) + " multiprocessors")) << m;
  // A plan checks the same at creation.
  LaunchPlan plan;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_launch_plan_create(f, &big, nullptr, plan.out()));
}

TEST_F(LaunchExTest, ClusterExchangesThroughDistributedSharedMemory) {
  if (!Hopper()) GTEST_SKIP() << "clusters need compute capability 9.0";
  Function f = GetFunction(module_, "cluster_swap");
  const uint32_t blocks = 16;
  Buffer out = Alloc(blocks * sizeof(int));
  uint64_t p = Pointer(out);
  void* params[] = {&p};
  for (uint32_t cs : {2u, 4u, 8u}) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out, 0, 0, blocks * sizeof(int)));
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = blocks;
    c.block_x = 64;
    c.cluster_x = cs;
    c.cluster_y = c.cluster_z = 1;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &c, nullptr, params, 1)) << LastError();
    std::vector<int> got = Download<int>(out, blocks);
    for (uint32_t b = 0; b < blocks; ++b)
      EXPECT_EQ(SwapExpected(b, cs), got[b]) << "cluster " << cs << ", block " << b;
  }

  // The compile-time cluster (__cluster_dims__(2, 1, 1)), with no cluster in
  // the config and with the same one.
  Function fixed = GetFunction(module_, "cluster_swap_fixed");
  int32_t width = 0;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_get_attribute(fixed, CUABI_FUNC_REQUIRED_CLUSTER_WIDTH, &width));
  EXPECT_EQ(2, width);
  for (uint32_t given : {0u, 2u}) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out, 0, 0, blocks * sizeof(int)));
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = blocks;
    c.block_x = 32;
    c.cluster_x = given;
    c.cluster_y = c.cluster_z = given ? 1 : 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(fixed, &c, nullptr, params, 1)) << LastError();
    std::vector<int> got = Download<int>(out, blocks);
    for (uint32_t b = 0; b < blocks; ++b)
      EXPECT_EQ(SwapExpected(b, 2), got[b]) << "given " << given << ", block " << b;
  }
  cuabi_launch_config other = CUABI_LAUNCH_CONFIG_INIT;
  other.grid_x = blocks;
  other.block_x = 32;
  other.cluster_x = 4;
  other.cluster_y = other.cluster_z = 1;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(fixed, &other, nullptr, params, 1));
  EXPECT_TRUE(Contains(Message(), "compile-time cluster dimensions (2, 1, 1)")) << Message();

  uint32_t clusters = 0;
  cuabi_launch_config two = CUABI_LAUNCH_CONFIG_INIT;
  two.grid_x = blocks;
  two.block_x = 64;
  two.cluster_x = 2;
  two.cluster_y = two.cluster_z = 1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_max_active_clusters(f, &two, &clusters))
      << LastError();
  EXPECT_GE(clusters, 1u);
}

TEST_F(LaunchExTest, ClusterShapesAreCheckedBeforeTheDriver) {
  if (!Hopper()) GTEST_SKIP() << "clusters need compute capability 9.0";
  Function f = GetFunction(module_, "cluster_swap");
  Buffer out = Alloc(64 * sizeof(int));
  uint64_t p = Pointer(out);
  void* params[] = {&p};

  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = 6;
  c.block_x = 32;
  c.cluster_x = 4;
  c.cluster_y = c.cluster_z = 1;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(f, &c, nullptr, params, 1));
  EXPECT_TRUE(Contains(Message(), "grid x 6 is not a multiple of cluster x 4")) << Message();

  // 16 blocks: more than the portable 8, refused until the kernel allows it.
  c.grid_x = 32;
  c.cluster_x = 16;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(f, &c, nullptr, params, 1));
  EXPECT_TRUE(Contains(Message(), "CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED")) << Message();
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_set_attribute(f, CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
      << LastError();
  uint32_t most = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_max_cluster_size(f, &c, &most)) << LastError();
  EXPECT_GE(most, 8u);
  const cuabi_status st = cuabi_function_launch(f, &c, nullptr, params, 1);
  if (most >= 16) {
    ASSERT_EQ(CUABI_SUCCESS, st) << LastError();
    std::vector<int> got = Download<int>(out, 32);
    for (uint32_t b = 0; b < 32; ++b) EXPECT_EQ(SwapExpected(b, 16), got[b]) << "block " << b;
  } else {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, st);
    EXPECT_TRUE(Contains(Message(), "at most " + std::to_string(most))) << Message();
  }

  c.cluster_x = 2;
  c.cluster_y = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(f, &c, nullptr, params, 1));
  EXPECT_TRUE(Contains(Message(), "zero dimension")) << Message();
}

TEST_F(LaunchExTest, ProgrammaticDependentLaunchSeesTheProducersWrites) {
  if (!Hopper()) GTEST_SKIP() << "programmatic dependent launch needs compute capability 9.0";
  Function producer = GetFunction(module_, "pdl_producer");
  Function consumer = GetFunction(module_, "pdl_consumer");
  const unsigned n = 1u << 18;
  Buffer buf = Alloc(n * sizeof(int));
  Buffer out = Alloc(n * sizeof(int));
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out())) << LastError();
  uint64_t pb = Pointer(buf), po = Pointer(out);
  unsigned count = n;
  void* pp[] = {&pb, &count};
  void* cp[] = {&pb, &po, &count};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = n / 256;
  c.block_x = 256;
  cuabi_launch_config dependent = c;
  dependent.flags = CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION;
  LaunchPlan plan;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_create(consumer, &dependent, s, plan.out()))
      << LastError();
  void* block = nullptr;
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_get_args(plan, &block, &size));
  ASSERT_EQ(20u, size);
  std::memcpy(static_cast<char*>(block), &pb, 8);
  std::memcpy(static_cast<char*>(block) + 8, &po, 8);
  std::memcpy(static_cast<char*>(block) + 16, &count, 4);
  for (int round = 0; round < 4; ++round) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(buf, 0, 0, n * sizeof(int)));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out, 0, 0, n * sizeof(int)));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(producer, &c, s, pp, 2)) << LastError();
    if (round % 2 == 0)
      ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(consumer, &dependent, s, cp, 3))
          << LastError();
    else
      ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_launch(plan)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
    std::vector<int> got = Download<int>(out, n);
    size_t bad = 0;
    for (unsigned i = 0; i < n; ++i) bad += got[i] != (static_cast<int>(i) * 3 + 1) * 2;
    EXPECT_EQ(0u, bad) << "round " << round;
  }
}

TEST_F(LaunchExTest, ProgrammaticEventOrdersAnotherStream) {
  if (!Hopper()) GTEST_SKIP() << "programmatic events need compute capability 9.0";
  Function producer = GetFunction(module_, "pdl_producer");
  Function consumer = GetFunction(module_, "pdl_consumer");
  const unsigned n = 1u << 18;
  Buffer buf = Alloc(n * sizeof(int));
  Buffer out = Alloc(n * sizeof(int));
  Stream a, b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, a.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, b.out()));
  Event ev;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, ev.out()));
  uint64_t pb = Pointer(buf), po = Pointer(out);
  unsigned count = n;
  void* pp[] = {&pb, &count};
  void* cp[] = {&pb, &po, &count};
  for (bool at_start : {false, true}) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(buf, 0, 0, n * sizeof(int)));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out, 0, 0, n * sizeof(int)));
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = n / 256;
    c.block_x = 256;
    c.programmatic_event = ev;
    if (at_start) c.flags = CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(producer, &c, a, pp, 2)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_wait_event(b, ev)) << LastError();
    cuabi_launch_config plain = CUABI_LAUNCH_CONFIG_INIT;
    plain.grid_x = n / 256;
    plain.block_x = 256;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(consumer, &plain, b, cp, 3)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(b)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(a)) << LastError();
    std::vector<int> got = Download<int>(out, n);
    size_t bad = 0;
    for (unsigned i = 0; i < n; ++i) bad += got[i] != (static_cast<int>(i) * 3 + 1) * 2;
    EXPECT_EQ(0u, bad) << "at_start " << at_start;
  }
  // A released event is refused before the driver sees it.
  cuabi_event raw = ev.get();
  ev.reset();
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.programmatic_event = raw;
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_function_launch(producer, &c, a, pp, 2));
  EXPECT_TRUE(Contains(Message(), "programmatic_event")) << Message();
}

TEST_F(LaunchExTest, PriorityOutsideTheRangeIsRefused) {
  Function producer = GetFunction(module_, "pdl_producer");
  int32_t least = 0, greatest = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_stream_priority_range(device_, &least, &greatest));
  Buffer buf = Alloc(256 * sizeof(int));
  uint64_t pb = Pointer(buf);
  unsigned count = 256;
  void* pp[] = {&pb, &count};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.block_x = 256;
  c.priority = greatest;
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out()));
  if (greatest != 0) {
    EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch(producer, &c, s, pp, 2)) << LastError();
    EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  }
  c.priority = greatest - 1;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(producer, &c, s, pp, 2));
  EXPECT_TRUE(Contains(Message(), "stream priority range")) << Message();
}

// The driver's own occupancy answers, through libcuda directly (cuabi has
// made the primary context current on this thread).
struct RawDriver {
  using LoadData = int (*)(void**, const void*);
  using GetFunction = int (*)(void**, void*, const char*);
  using Active = int (*)(int*, void*, int, size_t);
  using Potential = int (*)(int*, int*, void*, void*, size_t, int);
  void* lib = nullptr;
  LoadData load = nullptr;
  GetFunction get = nullptr;
  Active active = nullptr;
  Potential potential = nullptr;
  RawDriver() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    load = reinterpret_cast<LoadData>(dlsym(lib, "cuModuleLoadData"));
    get = reinterpret_cast<GetFunction>(dlsym(lib, "cuModuleGetFunction"));
    active = reinterpret_cast<Active>(dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
    potential = reinterpret_cast<Potential>(dlsym(lib, "cuOccupancyMaxPotentialBlockSize"));
  }
  bool ok() const { return load && get && active && potential; }
};

TEST_F(LaunchExTest, OccupancyAgreesWithTheDriver) {
  RawDriver raw;
  if (!raw.ok()) GTEST_SKIP() << "libcuda.so.1 could not be opened by the test";
  // The same kernels, compiled to a CUBIN this test loads itself.
  Program prog;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_create(kUtilSource, "util.cu", 0, nullptr, nullptr,
                                                prog.out()));
  const std::string arch = "-arch=" + Arch("sm_");
  const char* opts[] = {arch.c_str()};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile(prog, 1, opts)) << LastError();
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_get_cubin(prog, nullptr, &size));
  std::vector<char> cubin(size);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_get_cubin(prog, cubin.data(), &size));
  Module mod;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_load_data(device_, cubin.data(), cubin.size(), mod.out()))
      << LastError();
  void* raw_module = nullptr;
  ASSERT_EQ(0, raw.load(&raw_module, cubin.data()));

  for (const char* name : {"add_scalar", "bounded", "reverse_in_shared"}) {
    SCOPED_TRACE(name);
    Function f = GetFunction(mod, name);
    void* rf = nullptr;
    ASSERT_EQ(0, raw.get(&rf, raw_module, name));
    int32_t max_threads = 0;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_function_get_attribute(f, CUABI_FUNC_MAX_THREADS_PER_BLOCK, &max_threads));
    for (uint32_t block : {32u, 96u, 128u, 256u, 1024u}) {
      if (block > static_cast<uint32_t>(max_threads)) {
        uint32_t blocks = 0;
        EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
                  cuabi_function_get_active_blocks_per_sm(f, block, 0, &blocks));
        continue;
      }
      for (size_t shared : {size_t{0}, size_t{4096}}) {
        uint32_t ours = 0;
        ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_active_blocks_per_sm(f, block, shared, &ours))
            << LastError();
        int theirs = -1;
        ASSERT_EQ(0, raw.active(&theirs, rf, static_cast<int>(block), shared));
        EXPECT_EQ(static_cast<uint32_t>(theirs), ours) << "block " << block << ", shared " << shared;
      }
    }
    uint32_t block = 0, min_grid = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_suggest_block_size(f, 0, 0, 0, &block, &min_grid))
        << LastError();
    int their_grid = 0, their_block = 0;
    ASSERT_EQ(0, raw.potential(&their_grid, &their_block, rf, nullptr, 0, 0));
    uint32_t ours_per_sm = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_active_blocks_per_sm(f, block, 0, &ours_per_sm));
    int theirs_per_sm = 0;
    ASSERT_EQ(0, raw.active(&theirs_per_sm, rf, their_block, 0));
    // The same occupancy in threads (either block size of a tie would do).
    EXPECT_EQ(static_cast<uint64_t>(theirs_per_sm) * static_cast<uint32_t>(their_block),
              uint64_t{ours_per_sm} * block);
    EXPECT_EQ(ours_per_sm * static_cast<uint32_t>(sms_), min_grid);
    EXPECT_LE(block, static_cast<uint32_t>(max_threads));
    EXPECT_EQ(0u, block % 32);

    size_t avail = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_available_dynamic_shared(f, 1, 32, &avail))
        << LastError();
    EXPECT_GT(avail, 0u);
  }

  // A launch at the suggested configuration covers every element.
  Function add = GetFunction(mod, "add_scalar");
  const unsigned n = 1000003;
  cuabi_launch_config c;
  c.struct_size = sizeof c;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_suggest_config(add, n, 0, 0, &c)) << LastError();
  EXPECT_GE(uint64_t{c.grid_x} * c.block_x, n);
  EXPECT_LT(uint64_t{c.grid_x - 1} * c.block_x, n);
  EXPECT_EQ(0u, c.flags);
  Buffer x = Alloc(n * sizeof(int));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(x, 0, 0, n * sizeof(int)));
  uint64_t px = Pointer(x);
  int v = 5;
  unsigned count = n;
  void* params[] = {&px, &v, &count};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(add, &c, nullptr, params, 3)) << LastError();
  std::vector<int> got = Download<int>(x, n);
  EXPECT_EQ(size_t{n}, static_cast<size_t>(std::count(got.begin(), got.end(), 5)));
}

// SAXPY on integer-valued floats, so that a * x + y is exact either way.
struct SmallSaxpy {
  size_t n = 4096;
  std::vector<float> x, y;
  SmallSaxpy() : x(n), y(n) {
    for (size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(static_cast<int>(i % 201) - 100);
      y[i] = static_cast<float>(static_cast<int>((i * 7) % 101) - 50);
    }
  }
};

class GraphUpdateTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    module_ = Compile(kSaxpySource);
    util_ = Compile(kUtilSource);
    saxpy_ = GetFunction(module_, "saxpy");
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s_.out()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_params(saxpy_, nullptr, &count_, &args_size_));
    params_.resize(count_);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_params(saxpy_, params_.data(), &count_, nullptr));
  }
  std::vector<unsigned char> Block(float a, uint64_t x, uint64_t y, uint64_t out, size_t n) {
    std::vector<unsigned char> b(args_size_);
    std::memcpy(b.data() + params_[0].offset, &a, 4);
    std::memcpy(b.data() + params_[1].offset, &x, 8);
    std::memcpy(b.data() + params_[2].offset, &y, 8);
    std::memcpy(b.data() + params_[3].offset, &out, 8);
    std::memcpy(b.data() + params_[4].offset, &n, 8);
    return b;
  }
  Graph Capture(const std::vector<unsigned char>& block, uint32_t grid) {
    Graph g;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(s_, CUABI_CAPTURE_THREAD_LOCAL));
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = grid;
    c.block_x = 256;
    EXPECT_EQ(CUABI_SUCCESS,
              cuabi_function_launch_packed(saxpy_, &c, s_, block.data(), block.size()))
        << LastError();
    EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s_, g.out())) << LastError();
    return g;
  }

  Module module_, util_;
  Function saxpy_;
  Stream s_;
  size_t count_ = 0, args_size_ = 0;
  std::vector<cuabi_param_info> params_;
};

TEST_F(GraphUpdateTest, KernelNodeArgumentsChangeWithoutInstantiatingAgain) {
  SmallSaxpy p;
  const size_t bytes = p.n * sizeof(float);
  Buffer x = Alloc(bytes), y = Alloc(bytes), out = Alloc(bytes), out2 = Alloc(bytes);
  Upload(x, p.x);
  Upload(y, p.y);
  const uint32_t grid = static_cast<uint32_t>((p.n + 255) / 256);
  Graph g = Capture(Block(1.0f, Pointer(x), Pointer(y), Pointer(out), p.n), grid);
  size_t kernels = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_kernel_node_count(g, &kernels)) << LastError();
  ASSERT_EQ(1u, kernels);
  GraphExec exec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, exec.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_upload(exec, s_)) << LastError();

  for (int i = 0; i < 100; ++i) {
    const float a = static_cast<float>(i - 50);
    std::vector<unsigned char> b = Block(a, Pointer(x), Pointer(y), Pointer(out), p.n);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_kernel_node_args(exec, 0, saxpy_, b.data(),
                                                                    b.size()))
        << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s_)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s_)) << LastError();
    std::vector<float> got = Download<float>(out, p.n);
    size_t bad = 0;
    for (size_t k = 0; k < p.n; ++k) bad += got[k] != a * p.x[k] + p.y[k];
    ASSERT_EQ(0u, bad) << "a = " << a;
  }

  // Bad updates are refused, naming what was wrong.
  std::vector<unsigned char> b = Block(3.0f, Pointer(x), Pointer(y), Pointer(out), p.n);
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE,
            cuabi_graph_exec_set_kernel_node_args(exec, 1, saxpy_, b.data(), b.size()));
  EXPECT_TRUE(Contains(Message(), "has 1 kernel node")) << Message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node_args(exec, 0, saxpy_, b.data(), b.size() - 8));
  EXPECT_TRUE(Contains(Message(), "argument block")) << Message();
  Function other = GetFunction(util_, "add_scalar");
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node_args(exec, 0, other, b.data(), 16));
  EXPECT_TRUE(Contains(Message(), "kernel node 0 runs 'saxpy', not 'add_scalar'")) << Message();

  // A graph captured again with other pointers updates the executable graph;
  // node updates then start from it.
  Graph g2 = Capture(Block(2.0f, Pointer(x), Pointer(y), Pointer(out2), p.n), grid);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_update(exec, g2)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out2, 0, 0, bytes));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s_)) << LastError();
  std::vector<float> got = Download<float>(out2, p.n);
  size_t bad = 0;
  for (size_t k = 0; k < p.n; ++k) bad += got[k] != 2.0f * p.x[k] + p.y[k];
  EXPECT_EQ(0u, bad);
  b = Block(-3.0f, Pointer(x), Pointer(y), Pointer(out2), p.n);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_exec_set_kernel_node_args(exec, 0, saxpy_, b.data(), b.size()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s_)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s_)) << LastError();
  got = Download<float>(out2, p.n);
  bad = 0;
  for (size_t k = 0; k < p.n; ++k) bad += got[k] != -3.0f * p.x[k] + p.y[k];
  EXPECT_EQ(0u, bad);

  // A graph of another topology (two kernels) cannot update it.
  Graph two;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(s_, CUABI_CAPTURE_THREAD_LOCAL));
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = grid;
  c.block_x = 256;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch_packed(saxpy_, &c, s_, b.data(), b.size()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch_packed(saxpy_, &c, s_, b.data(), b.size()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s_, two.out()));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_update(exec, two));
  EXPECT_TRUE(Contains(Message(), "cannot update")) << Message();
}

TEST_F(GraphUpdateTest, KernelNodesAreNumberedInCaptureOrder) {
  Function add = GetFunction(util_, "add_scalar");
  Function times = GetFunction(util_, "times_ten_plus");
  Buffer x = Alloc(sizeof(int));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(x, 0, 0, sizeof(int)));
  uint64_t px = Pointer(x);
  int v = 1;
  unsigned n = 1;
  void* add_params[] = {&px, &v, &n};
  void* times_params[] = {&px, &v};
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(s_, CUABI_CAPTURE_THREAD_LOCAL));
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(add, &c, s_, add_params, 3));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(times, &c, s_, times_params, 2));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s_, g.out()));
  size_t kernels = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_kernel_node_count(g, &kernels));
  ASSERT_EQ(2u, kernels);
  GraphExec exec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, exec.out()));
  // Node 0 is add_scalar(x, 4, 1), node 1 times_ten_plus(x, 7): (0 + 4) * 10 + 7.
  unsigned char add_block[16] = {0};
  const int four = 4, seven = 7;
  std::memcpy(add_block, &px, 8);
  std::memcpy(add_block + 8, &four, 4);
  std::memcpy(add_block + 12, &n, 4);
  unsigned char times_block[12] = {0};
  std::memcpy(times_block, &px, 8);
  std::memcpy(times_block + 8, &seven, 4);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_exec_set_kernel_node_args(exec, 0, add, add_block, sizeof add_block))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_exec_set_kernel_node_args(exec, 1, times, times_block, sizeof times_block))
      << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node_args(exec, 0, times, times_block, sizeof times_block));
  EXPECT_TRUE(Contains(Message(), "runs 'add_scalar', not 'times_ten_plus'")) << Message();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s_));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s_));
  EXPECT_EQ(47, Download<int>(x, 1)[0]);
}

// Host functions.
struct Appender {
  std::mutex* mutex;
  std::vector<int>* seen;
  int value;
};

int32_t CUABI_CALL Append(void* data, char*, size_t) {
  Appender* a = static_cast<Appender*>(data);
  std::lock_guard<std::mutex> lock(*a->mutex);
  a->seen->push_back(a->value);
  return 0;
}

int32_t CUABI_CALL FailWithMessage(void* data, char* message, size_t size) {
  std::snprintf(message, size, "%s", static_cast<const char*>(data));
  return 3;
}

TEST_F(GpuTest, HostFunctionsRunInStreamOrder) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out()));
  std::mutex mutex;
  std::vector<int> seen;
  std::vector<Appender> calls;
  for (int i = 0; i < 16; ++i) calls.push_back({&mutex, &seen, i});
  for (auto& c : calls)
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_launch_host_func(s, &Append, &c)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  std::vector<int> want(16);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(want, seen);
}

TEST_F(GpuTest, AFailedHostFunctionIsReportedByTheNextSynchronizeOnce) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out()));
  const char* reason = "checksum mismatch in batch 7";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_launch_host_func(s, &FailWithMessage,
                                                         const_cast<char*>(reason)));
  EXPECT_EQ(CUABI_ERROR_HOST_FUNCTION, cuabi_stream_synchronize(s));
  EXPECT_EQ(std::string("cuabi_stream_synchronize: a host function failed: ") + reason, Message());
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();

  // Two failures: counted, the first one's message given.
  const char* second = "second";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_launch_host_func(s, &FailWithMessage,
                                                         const_cast<char*>(reason)));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_launch_host_func(s, &FailWithMessage,
                                                         const_cast<char*>(second)));
  EXPECT_EQ(CUABI_ERROR_HOST_FUNCTION, cuabi_stream_synchronize(s));
  EXPECT_TRUE(Contains(Message(), std::string("2 host functions failed; the first: ") + reason))
      << Message();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();

  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_launch_host_func(s, nullptr, nullptr));
  EXPECT_TRUE(Contains(Message(), "fn is NULL")) << Message();
}

TEST_F(GpuTest, HostFunctionOutlivesItsReleasedStream) {
  std::atomic<int> ran{0};
  {
    Stream s;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, s.out()));
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_stream_launch_host_func(
                  s,
                  [](void* data, char*, size_t) -> int32_t {
                    static_cast<std::atomic<int>*>(data)->fetch_add(1);
                    return 0;
                  },
                  &ran));
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  for (int i = 0; i < 1000 && ran.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(1, ran.load());
}

TEST_F(GpuTest, CxxHostFunctionsTurnExceptionsIntoFailures) {
  cuabi::stream s = cuabi::stream::create(device_);
  std::vector<int> seen;
  s.launch_host_func([&seen] { seen.push_back(1); });
  s.launch_host_func([] { throw std::runtime_error("bad record 12"); });
  s.launch_host_func([&seen] { seen.push_back(2); });
  try {
    s.synchronize();
    ADD_FAILURE() << "synchronize did not throw";
  } catch (const cuabi::status_error<CUABI_ERROR_HOST_FUNCTION>& e) {
    EXPECT_TRUE(Contains(e.message(), "a host function failed: bad record 12")) << e.message();
  }
  EXPECT_EQ((std::vector<int>{1, 2}), seen);
  s.synchronize();
}

}  // namespace
}  // namespace cuabi_test
