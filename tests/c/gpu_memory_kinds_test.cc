// Memory beyond cuabi_buffer_alloc: stream-ordered pools (also inside a
// capture), managed memory, IPC with a second process, peer queries, pitched
// memory and 2D/3D copies, fills, arrays, texture and surface objects.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

extern char** environ;

namespace cuabi_test {
namespace {

constexpr const char* kKernels = R"(
extern "C" __global__ void scale(float* x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
extern "C" __global__ void scale_u32(unsigned* x, unsigned a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
extern "C" __global__ void row_sums(const float* m, size_t pitch, float* out, unsigned w,
                                    unsigned h) {
  unsigned y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= h) return;
  const float* row = (const float*)((const char*)m + y * pitch);
  float s = 0;
  for (unsigned x = 0; x < w; ++x) s += row[x];
  out[y] = s;
}
extern "C" __global__ void fetch1d(cudaTextureObject_t t, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}
extern "C" __global__ void sample2d(cudaTextureObject_t t, float* out, float u, float v) {
  out[0] = tex2D<float>(t, u, v);
}
extern "C" __global__ void fetch2d(cudaTextureObject_t t, float* out, unsigned w, unsigned h) {
  unsigned x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}
extern "C" __global__ void layers(cudaTextureObject_t t, float* out, unsigned n) {
  unsigned l = threadIdx.x;
  if (l < n) out[l] = tex2DLayered<float>(t, 1.5f, 2.5f, l);
}
extern "C" __global__ void surf_double(cudaSurfaceObject_t s, unsigned w, unsigned h) {
  unsigned x = threadIdx.x, y = blockIdx.x;
  if (x >= w || y >= h) return;
  float v;
  surf2Dread(&v, s, x * 4, y);
  surf2Dwrite(v * 2.0f, s, x * 4, y);
}
)";

class MemoryKindsTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    module_ = Compile(kKernels);
  }

  void Launch(const char* name, uint32_t grid, uint32_t block, std::vector<void*> params,
              cuabi_stream stream = nullptr) {
    Function f = GetFunction(module_, name);
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = grid;
    c.block_x = block;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &c, stream, params.data(), params.size()))
        << name << ": " << LastError();
  }

  void ExpectStatus(cuabi_status expected, cuabi_status got, const char* needle) {
    EXPECT_EQ(StatusName(expected), StatusName(got)) << LastError();
    if (got != CUABI_SUCCESS) {
      EXPECT_TRUE(Contains(cuabi_last_error_message(), needle))
          << "message \"" << cuabi_last_error_message() << "\" lacks \"" << needle << "\"";
    }
  }

  Module module_;
};

// --- stream-ordered allocation ----------------------------------------------

TEST_F(MemoryKindsTest, StreamOrderedFromAPoolWithThresholdUsageAndTrim) {
  cuabi_memory_pool_desc desc = CUABI_MEMORY_POOL_DESC_INIT;
  // Above the pool's reservation granularity (32 MiB on an H100), so a
  // synchronize keeps what the test allocated reserved.
  desc.release_threshold = 1ull << 30;
  MemoryPool pool;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_create(device_, &desc, pool.out())) << LastError();
  uint64_t threshold = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_get_release_threshold(pool, &threshold));
  EXPECT_EQ(1ull << 30, threshold);
  Stream stream;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, stream.out()));

  const unsigned n = 1 << 18;
  std::vector<float> host(n), back(n);
  for (unsigned i = 0; i < n; ++i) host[i] = float(i % 1000);
  cuabi_buffer b = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async(device_, n * 4, pool, stream, &b))
      << LastError();
  cuabi_buffer_kind kind;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_kind(b, &kind));
  EXPECT_EQ(CUABI_BUFFER_STREAM_ORDERED, kind);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host_async(b, 0, host.data(), n * 4, stream));
  uint64_t p = Pointer(b);
  float a = 3.0f;
  Launch("scale", n / 256, 256, {&p, &a, const_cast<unsigned*>(&n)}, stream);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host_async(b, 0, back.data(), n * 4, stream));
  uint64_t reserved = 0, used = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_get_usage(pool, &reserved, &used)) << LastError();
  EXPECT_GE(used, uint64_t(n) * 4);
  EXPECT_GE(reserved, used);
  // Freed in stream order: the handle is gone at once.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_free_async(b, stream)) << LastError();
  size_t size = 0;
  ExpectStatus(CUABI_ERROR_INVALID_HANDLE, cuabi_buffer_get_size(b, &size), "buffer");
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(3.0f * host[i], back[i]) << i;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_get_usage(pool, &reserved, &used));
  EXPECT_EQ(0u, used);
  EXPECT_GE(reserved, uint64_t(n) * 4) << "the threshold keeps the memory reserved";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_trim(pool, 0)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_get_usage(pool, &reserved, &used));
  EXPECT_EQ(0u, reserved) << "trim gives unused memory back";

  // A plain buffer cannot be freed in stream order; the default pool works too.
  Buffer plain = Alloc(64);
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_free_async(plain, stream),
               "release it instead");
  Buffer from_default;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_buffer_alloc_async(device_, 4096, nullptr, stream, from_default.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill_async(from_default, 0, 0x01020304u, 4, 1024, stream));
  uint32_t word = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(from_default, 4092, &word, 4));
  EXPECT_EQ(0x01020304u, word);
  MemoryPool def;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_default_memory_pool(device_, def.out()));
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_memory_pool_export_fd(def, nullptr), "fd");
  int32_t fd = -1;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_memory_pool_export_fd(pool, &fd),
               "without CUABI_MEMORY_POOL_IPC");
  from_default.reset();  // freed in order on `stream`
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream));
}

TEST_F(MemoryKindsTest, AllocationAndFreeInsideACaptureReplay) {
  Stream stream;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, stream.out()));
  const unsigned n = 4096;
  Buffer out = Alloc(n * 4);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL));
  cuabi_buffer tmp = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async(device_, n * 4, nullptr, stream, &tmp))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill_async(tmp, 0, 7, 4, n, stream)) << LastError();
  uint64_t pt = Pointer(tmp);
  unsigned factor = 6;
  Launch("scale_u32", n / 256, 256, {&pt, &factor, const_cast<unsigned*>(&n)}, stream);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_async(out, 0, tmp, 0, n * 4, stream)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_free_async(tmp, stream)) << LastError();
  Graph graph;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(stream, graph.out())) << LastError();
  size_t nodes = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(graph, &nodes));
  EXPECT_EQ(5u, nodes) << "alloc, fill, kernel, copy, free";
  GraphExec exec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(graph, exec.out())) << LastError();
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out, 0, 0, n * 4));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, stream)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
    std::vector<uint32_t> v = Download<uint32_t>(out, n);
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(42u, v[i]) << "round " << round << " at " << i;
  }
  // A stream-ordered buffer released (not freed) during a capture: its free
  // waits for the capture's end instead of joining the graph.
  cuabi_buffer before = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async(device_, 1024, nullptr, stream, &before));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill_async(out, 0, 1, 4, 16, stream));
  cuabi_buffer_release(before);
  Graph second;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(stream, second.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(second, &nodes));
  EXPECT_EQ(1u, nodes) << "the release added no free node";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
}

// --- managed memory -----------------------------------------------------------

TEST_F(MemoryKindsTest, ManagedMemoryHostViewPrefetchAndAdvice) {
  const unsigned n = 1 << 16;
  Buffer m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_managed(device_, n * 4, 0, m.out())) << LastError();
  cuabi_buffer_kind kind;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_kind(m, &kind));
  EXPECT_EQ(CUABI_BUFFER_MANAGED, kind);
  void* host = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_host_pointer(m, &host)) << LastError();
  EXPECT_EQ(Pointer(m), reinterpret_cast<uint64_t>(host));
  float* f = static_cast<float*>(host);
  for (unsigned i = 0; i < n; ++i) f[i] = float(i);
  int32_t ordinal = 0;
  cuabi_device_get_ordinal(device_, &ordinal);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_advise(m, 0, n * 4, CUABI_ADVISE_SET_PREFERRED_LOCATION,
                                               ordinal)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_advise(m, 0, n * 4, CUABI_ADVISE_SET_ACCESSED_BY,
                                               ordinal)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_prefetch_async(m, 0, n * 4, ordinal, nullptr))
      << LastError();
  uint64_t p = Pointer(m);
  float a = 2.0f;
  Launch("scale", n / 256, 256, {&p, &a, const_cast<unsigned*>(&n)});
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_prefetch_async(m, 0, n * 4, CUABI_LOCATION_HOST, nullptr))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_));
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(2.0f * float(i), f[i]) << i;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_advise(m, 0, n * 4, CUABI_ADVISE_SET_READ_MOSTLY, 0))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_advise(m, 0, n * 4, CUABI_ADVISE_UNSET_READ_MOSTLY, 0));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_advise(m, 0, n * 4, CUABI_ADVISE_UNSET_ACCESSED_BY,
                                               ordinal));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_buffer_advise(m, 0, n * 4, CUABI_ADVISE_UNSET_PREFERRED_LOCATION, ordinal));
  // Bad input.
  Buffer plain = Alloc(64);
  void* none = nullptr;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_get_host_pointer(plain, &none),
               "not managed memory");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_prefetch_async(plain, 0, 64, CUABI_LOCATION_HOST, nullptr),
               "not managed memory");
  ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_buffer_prefetch_async(m, 4, n * 4, 0, nullptr),
               "past the end");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_prefetch_async(m, 0, 4, 4096, nullptr),
               "location 4096");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_advise(m, 0, 4, static_cast<cuabi_memory_advice>(99), 0), "advice 99");
  Buffer other;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_alloc_managed(device_, 64, 8, other.out()),
               "flags");
}

// --- IPC ------------------------------------------------------------------------

int RunChild(std::vector<std::string> args, const char* extra_env = nullptr);

std::string Hex(const unsigned char* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// Runs the IPC child with `args`; its exit status (or -1).
int RunChild(std::vector<std::string> args, const char* extra_env) {
  args.insert(args.begin(), CUABI_IPC_CHILD);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  std::string extra = extra_env ? extra_env : "";
  if (!extra.empty()) env.push_back(&extra[0]);
  env.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, CUABI_IPC_CHILD, nullptr, nullptr, argv.data(), env.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(MemoryKindsTest, IpcBufferAndEventOpenedInAnotherProcess) {
  const unsigned n = 1 << 16;
  Buffer b = Alloc(n * 4);
  Stream stream;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, stream.out()));
  Event event;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_INTERPROCESS |
                                                           CUABI_EVENT_DISABLE_TIMING,
                                              event.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill_async(b, 0, 7, 4, n, stream));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(event, stream));
  unsigned char handle[CUABI_IPC_HANDLE_SIZE], event_handle[CUABI_IPC_HANDLE_SIZE];
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_ipc_handle(b, handle, sizeof handle)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_get_ipc_handle(event, event_handle, sizeof event_handle))
      << LastError();
  EXPECT_EQ(0, RunChild({"mem", Hex(handle, sizeof handle), Hex(event_handle, sizeof event_handle),
                         "7", "9"}));
  std::vector<uint32_t> v = Download<uint32_t>(b, n);
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(9u, v[i]) << "the child's write at " << i;

  // Refusals: this very process, garbage, damage, the wrong kind, too small.
  Buffer opened;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_open_ipc(device_, nullptr, handle, sizeof handle, opened.out()),
               "exported by this process");
  unsigned char garbage[CUABI_IPC_HANDLE_SIZE];
  for (size_t i = 0; i < sizeof garbage; ++i) garbage[i] = static_cast<unsigned char>(i * 37);
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_open_ipc(device_, nullptr, garbage, sizeof garbage, opened.out()),
               "not a cuabi IPC handle");
  unsigned char damaged[CUABI_IPC_HANDLE_SIZE];
  std::memcpy(damaged, handle, sizeof damaged);
  damaged[60] ^= 1;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_open_ipc(device_, nullptr, damaged, sizeof damaged, opened.out()),
               "checksum");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_open_ipc(device_, nullptr, handle, 64, opened.out()), "handle_size");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_open_ipc(device_, nullptr, event_handle, sizeof event_handle,
                                     opened.out()),
               "an event's handle");
  ExpectStatus(CUABI_ERROR_INSUFFICIENT_BUFFER, cuabi_buffer_get_ipc_handle(b, handle, 100),
               "128");
  Event timed;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, timed.out()));
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_event_get_ipc_handle(timed, event_handle, sizeof event_handle),
               "CUABI_EVENT_INTERPROCESS");
  Event bad;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_event_create(device_, CUABI_EVENT_INTERPROCESS, bad.out()),
               "CUABI_EVENT_DISABLE_TIMING");
  Buffer managed;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_managed(device_, 64, 0, managed.out()));
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_get_ipc_handle(managed, handle, sizeof handle), "can be shared");

  // One handle opened twice in the other process.
  EXPECT_EQ(0, RunChild({"twice", Hex(handle, sizeof handle), "9"}));
  // A freed buffer's handle: the other process's open is refused by the driver.
  // (64 MiB: a small allocation shares its block with others, which the
  // driver keeps while any of them lives.)
  Buffer gone = Alloc(64u << 20);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_ipc_handle(gone, handle, sizeof handle));
  gone.reset();
  EXPECT_EQ(0, RunChild({"freed", Hex(handle, sizeof handle)}));
}

TEST_F(MemoryKindsTest, IpcPoolAllocationThroughAnInheritedDescriptor) {
  cuabi_memory_pool_desc desc = CUABI_MEMORY_POOL_DESC_INIT;
  desc.flags = CUABI_MEMORY_POOL_IPC;
  MemoryPool pool;
  const cuabi_status st = cuabi_memory_pool_create(device_, &desc, pool.out());
  if (st == CUABI_ERROR_NOT_SUPPORTED) GTEST_SKIP() << LastError();
  ASSERT_EQ(CUABI_SUCCESS, st) << LastError();
  const unsigned n = 1 << 14;
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async(device_, n * 4, pool, nullptr, b.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(b, 0, 11, 4, n));
  unsigned char handle[CUABI_IPC_HANDLE_SIZE];
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_ipc_handle(b, handle, sizeof handle)) << LastError();
  int32_t fd = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_export_fd(pool, &fd)) << LastError();
  ASSERT_GE(fd, 0);
  fcntl(fd, F_SETFD, 0);  // inherited by the child
  EXPECT_EQ(0, RunChild({"pool", Hex(handle, sizeof handle), std::to_string(fd), "11", "13"}));
  close(fd);
  std::vector<uint32_t> v = Download<uint32_t>(b, n);
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(13u, v[i]) << "the child's write at " << i;
  // A plain pool's allocations cannot be shared.
  Buffer plain;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async(device_, 256, nullptr, nullptr, plain.out()));
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_get_ipc_handle(plain, handle, sizeof handle), "CUABI_MEMORY_POOL_IPC");
  cuabi_device_synchronize(device_);
}

// --- peers ----------------------------------------------------------------------

TEST_F(MemoryKindsTest, PeerQueriesOnOneDeviceAndCopyPath) {
  int32_t can = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_can_access_peer(device_, device_, &can)) << LastError();
  EXPECT_EQ(0, can) << "a device is not its own peer";
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_device_enable_peer_access(device_, device_),
               "not its own peer");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_device_disable_peer_access(device_, device_),
               "not its own peer");
  int32_t value = 0;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_device_get_peer_attribute(device_, device_, 1, &value), "not its own peer");
  Buffer a = Alloc(1 << 20), b = Alloc(1 << 20);
  cuabi_copy_path path = CUABI_COPY_PEER;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_copy_path(b, a, &path));
  EXPECT_EQ(CUABI_COPY_SAME_DEVICE, path);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(a, 0, 0x5a5a5a5au, 4, 1 << 18));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(b, 0, a, 0, 1 << 20));
  EXPECT_EQ(0x5a5a5a5au, Download<uint32_t>(b, 1 << 18).back());

  int32_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_count(&count));
  for (int32_t other = 1; other < count; ++other) {
    Device peer;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(other, peer.out()));
    Buffer far;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(peer, 1 << 20, far.out()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_copy_path(far, a, &path));
    EXPECT_EQ(CUABI_COPY_THROUGH_HOST, path);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_can_access_peer(device_, peer, &can));
    if (can) {
      ASSERT_EQ(CUABI_SUCCESS, cuabi_device_enable_peer_access(device_, peer)) << LastError();
      ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_copy_path(far, a, &path));
      EXPECT_EQ(CUABI_COPY_PEER, path);
    }
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(far, 0, a, 0, 1 << 20)) << LastError();
    EXPECT_EQ(0x5a5a5a5au, Download<uint32_t>(far, 1 << 18).back());
    if (can) {
      ASSERT_EQ(CUABI_SUCCESS, cuabi_device_disable_peer_access(device_, peer));
    }
  }
}

// --- pitched memory, fills and 3D copies ---------------------------------------------

TEST_F(MemoryKindsTest, PitchedUploadKernelByPitchAndDownload) {
  const unsigned w = 100, h = 37, host_pitch_floats = 104;
  Buffer m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_pitched(device_, w * 4, h, 4, m.out()))
      << LastError();
  size_t pitch = 0, size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pitch(m, &pitch));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(m, &size));
  EXPECT_GE(pitch, w * 4u);
  EXPECT_EQ(pitch * h, size);
  std::vector<float> host(host_pitch_floats * h, -1.0f);
  for (unsigned y = 0; y < h; ++y)
    for (unsigned x = 0; x < w; ++x) host[y * host_pitch_floats + x] = float(y * 1000 + x);
  cuabi_copy_3d_desc c = CUABI_COPY_3D_DESC_INIT;
  c.src_host = host.data();
  c.src_pitch = host_pitch_floats * 4;
  c.dst_buffer = m;
  c.width_bytes = w * 4;
  c.height = h;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&c)) << LastError();
  Buffer sums = Alloc(h * 4);
  uint64_t pm = Pointer(m), ps = Pointer(sums);
  unsigned ww = w, hh = h;
  Launch("row_sums", 1, 64, {&pm, &pitch, &ps, &ww, &hh});
  std::vector<float> s = Download<float>(sums, h);
  for (unsigned y = 0; y < h; ++y)
    EXPECT_EQ(float(y * 1000 * w + w * (w - 1) / 2), s[y]) << "row " << y;
  // Back to a tightly packed host matrix, through an async copy.
  std::vector<float> back(w * h, 0.0f);
  cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
  d.src_buffer = m;
  d.dst_host = back.data();
  d.width_bytes = w * 4;
  d.height = h;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d_async(&d, nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_));
  for (unsigned y = 0; y < h; ++y)
    for (unsigned x = 0; x < w; ++x) ASSERT_EQ(float(y * 1000 + x), back[y * w + x]);
  // A sub-box: rows 3..5, columns 10..19.
  std::vector<float> box(10 * 3);
  d.src_x_bytes = 40;
  d.src_y = 3;
  d.dst_host = box.data();
  d.width_bytes = 40;
  d.height = 3;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&d)) << LastError();
  EXPECT_EQ(float(3 * 1000 + 10), box[0]);
  EXPECT_EQ(float(5 * 1000 + 19), box[29]);
  // Checked before the driver: a box past the end, a pitch too small, two memories.
  c.height = h + 1;
  ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_copy_3d(&c), "dst box reaches");
  c.height = h;
  c.src_pitch = w * 4 - 4;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_copy_3d(&c), "src pitch");
  c.src_pitch = 0;
  c.src_buffer = m;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_copy_3d(&c), "more than one of");
  c.src_buffer = nullptr;
  c.src_host = nullptr;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_copy_3d(&c), "none of");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_alloc_pitched(device_, 64, 4, 3, m.out()),
               "element_size");
}

TEST_F(MemoryKindsTest, FillsOf8And16And32BitValues) {
  Buffer b = Alloc(64);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(b, 0, 0, 64));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(b, 2, 0xBEEF, 2, 5)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(b, 16, 0xDEADBEEFu, 4, 8)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(b, 48, 0xA5, 1, 3)) << LastError();
  std::vector<uint8_t> v = Download<uint8_t>(b, 64);
  uint16_t h16[6];
  std::memcpy(h16, v.data(), 12);
  EXPECT_EQ(0u, h16[0]);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(0xBEEFu, h16[i]);
  uint32_t h32[8];
  std::memcpy(h32, v.data() + 16, 32);
  for (uint32_t x : h32) EXPECT_EQ(0xDEADBEEFu, x);
  EXPECT_EQ(0xA5, v[48]);
  EXPECT_EQ(0xA5, v[50]);
  EXPECT_EQ(0, v[51]);
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_fill(b, 0, 0x10000, 2, 1), "does not fit");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_fill(b, 2, 1, 4, 1), "boundary");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_fill(b, 0, 1, 8, 1), "element_size");
  ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_buffer_fill(b, 8, 1, 4, 15), "past the end");
}

TEST_F(MemoryKindsTest, AnArraysElementSizeIsItsFormatsSizeTimesItsChannels) {
  const struct {
    cuabi_array_format format;
    uint32_t channels;
    size_t bytes;
  } cases[] = {{CUABI_FORMAT_U8, 1, 1},  {CUABI_FORMAT_U8, 4, 4},   {CUABI_FORMAT_S16, 2, 4},
               {CUABI_FORMAT_F16, 4, 8}, {CUABI_FORMAT_F32, 1, 4},  {CUABI_FORMAT_S32, 2, 8},
               {CUABI_FORMAT_F32, 4, 16}};
  for (const auto& k : cases) {
    cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
    ad.width = 8;
    ad.format = k.format;
    ad.channels = k.channels;
    Array arr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, arr.out())) << LastError();
    size_t element = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_array_get_element_size(arr, &element)) << LastError();
    EXPECT_EQ(k.bytes, element) << "format " << k.format << " x" << k.channels;
  }
}

TEST_F(MemoryKindsTest, ThreeDimensionalCopiesThroughAnArray) {
  const unsigned W = 8, H = 6, D = 5;
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = W;
  ad.height = H;
  ad.depth = D;
  Array arr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, arr.out())) << LastError();
  cuabi_array_desc got = CUABI_ARRAY_DESC_INIT;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_get_desc(arr, &got));
  EXPECT_EQ(W, got.width);
  EXPECT_EQ(D, got.depth);
  EXPECT_EQ(CUABI_FORMAT_F32, got.format);
  size_t element = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_get_element_size(arr, &element)) << LastError();
  EXPECT_EQ(4u, element);
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_array_get_element_size(arr, nullptr), "bytes");
  std::vector<float> vol(W * H * D), back(W * H * D, 0.0f);
  for (size_t i = 0; i < vol.size(); ++i) vol[i] = float(i);
  cuabi_copy_3d_desc c = CUABI_COPY_3D_DESC_INIT;
  c.src_host = vol.data();
  c.dst_array = arr;
  c.width_bytes = W * 4;
  c.height = H;
  c.depth = D;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&c)) << LastError();
  cuabi_copy_3d_desc r = CUABI_COPY_3D_DESC_INIT;
  r.src_array = arr;
  r.dst_host = back.data();
  r.width_bytes = W * 4;
  r.height = H;
  r.depth = D;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&r)) << LastError();
  EXPECT_EQ(vol, back);
  // Array -> pitched device buffer -> host, a sub-box.
  Buffer m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_pitched(device_, 3 * 4, 2 * 2, 4, m.out()));
  cuabi_copy_3d_desc s = CUABI_COPY_3D_DESC_INIT;
  s.src_array = arr;
  s.src_x_bytes = 2 * 4;
  s.src_y = 1;
  s.src_z = 1;
  s.dst_buffer = m;
  s.dst_height = 2;
  s.width_bytes = 3 * 4;
  s.height = 2;
  s.depth = 2;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&s)) << LastError();
  std::vector<float> box(12);
  cuabi_copy_3d_desc t = CUABI_COPY_3D_DESC_INIT;
  t.src_buffer = m;
  t.src_height = 2;
  t.dst_host = box.data();
  t.width_bytes = 12;
  t.height = 2;
  t.depth = 2;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&t)) << LastError();
  EXPECT_EQ(vol[(1 * H + 1) * W + 2], box[0]);
  EXPECT_EQ(vol[(2 * H + 2) * W + 4], box[11]);
  // Past the array's depth, and not whole elements.
  s.src_z = 4;
  ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_copy_3d(&s), "depth of 5");
  s.src_z = 0;
  s.src_x_bytes = 2;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_copy_3d(&s), "whole elements");
  ad.depth = 0;
  ad.height = 0;
  ad.depth = 3;
  Array bad;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_array_create(device_, &ad, bad.out()),
               "needs a height");
  ad.height = 4;
  ad.channels = 3;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_array_create(device_, &ad, bad.out()),
               "channels is 3");
  ad.channels = 1;
  ad.width = 1u << 30;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_array_create(device_, &ad, bad.out()),
               "exceeds the device's limit");
}

// --- textures and surfaces -----------------------------------------------------------

TEST_F(MemoryKindsTest, TextureOverAnArrayWithNormalizedCoordinatesAndLinearFiltering) {
  const unsigned W = 4, H = 4;
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = W;
  ad.height = H;
  Array arr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, arr.out())) << LastError();
  std::vector<float> img(W * H);
  for (unsigned i = 0; i < W * H; ++i) img[i] = float(i * i);
  cuabi_copy_3d_desc c = CUABI_COPY_3D_DESC_INIT;
  c.src_host = img.data();
  c.dst_array = arr;
  c.width_bytes = W * 4;
  c.height = H;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&c)) << LastError();
  cuabi_texture_desc td = CUABI_TEXTURE_DESC_INIT;
  td.array = arr;
  td.normalized_coords = 1;
  td.filter = CUABI_FILTER_LINEAR;
  td.address_x = td.address_y = CUABI_ADDRESS_WRAP;
  Texture tex;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&td, tex.out())) << LastError();
  arr.reset();  // the texture keeps its array alive
  uint64_t t = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_get_handle(tex, &t));
  Buffer out = Alloc(4);
  uint64_t po = Pointer(out);
  // Halfway between the centres of elements (0, 0) and (1, 0).
  float u = 0.25f, v = 0.125f;
  Launch("sample2d", 1, 1, {&t, &po, &u, &v});
  EXPECT_NEAR((img[0] + img[1]) / 2, Download<float>(out, 1)[0], 1e-3);
  // Between (2, 1), (3, 1), (2, 2) and (3, 2).
  u = 0.75f;
  v = 0.5f;
  Launch("sample2d", 1, 1, {&t, &po, &u, &v});
  EXPECT_NEAR((img[6] + img[7] + img[10] + img[11]) / 4, Download<float>(out, 1)[0], 1e-2);
  // Wrapped: u = 1.125 is u = 0.125, the centre of element (0, 0).
  u = 1.125f;
  v = 0.125f;
  Launch("sample2d", 1, 1, {&t, &po, &u, &v});
  EXPECT_NEAR(img[0], Download<float>(out, 1)[0], 1e-3);

  // Refused before the driver.
  Array arr2;
  ad.width = 4;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, arr2.out()));
  Texture bad;
  cuabi_texture_desc b = CUABI_TEXTURE_DESC_INIT;
  b.array = arr2;
  b.address_x = CUABI_ADDRESS_WRAP;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_texture_create(&b, bad.out()),
               "normalized_coords");
  b.address_x = CUABI_ADDRESS_CLAMP;
  b.buffer = out;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_texture_create(&b, bad.out()), "both");
  b.buffer = nullptr;
  b.array = nullptr;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_texture_create(&b, bad.out()), "neither");
  b.array = arr2;
  b.read_mode = CUABI_READ_NORMALIZED_FLOAT;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_texture_create(&b, bad.out()),
               "8- and 16-bit integer");
}

TEST_F(MemoryKindsTest, TexturesOverLinearAndPitchedMemory) {
  const unsigned n = 1000;
  Buffer lin = Alloc(n * 4);
  std::vector<float> data(n);
  for (unsigned i = 0; i < n; ++i) data[i] = 0.5f * float(i);
  Upload(lin, data);
  cuabi_texture_desc td = CUABI_TEXTURE_DESC_INIT;
  td.buffer = lin;
  td.width = n;
  Texture t1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&td, t1.out())) << LastError();
  uint64_t v1 = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_get_handle(t1, &v1));
  Buffer out = Alloc(n * 4);
  uint64_t po = Pointer(out);
  unsigned nn = n;
  Launch("fetch1d", (n + 255) / 256, 256, {&v1, &po, &nn});
  EXPECT_EQ(data, Download<float>(out, n));
  // The buffer is in use: a stream-ordered free would be refused, and the
  // range is checked.
  td.width = n + 1;
  Texture bad;
  ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_texture_create(&td, bad.out()), "past the end");
  td.width = n;
  td.filter = CUABI_FILTER_LINEAR;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_texture_create(&td, bad.out()), "tex1Dfetch");

  const unsigned W = 50, H = 20;
  Buffer pitched;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_pitched(device_, W * 4, H, 4, pitched.out()));
  std::vector<float> img(W * H);
  for (unsigned i = 0; i < W * H; ++i) img[i] = float(i) + 0.25f;
  cuabi_copy_3d_desc c = CUABI_COPY_3D_DESC_INIT;
  c.src_host = img.data();
  c.dst_buffer = pitched;
  c.width_bytes = W * 4;
  c.height = H;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&c)) << LastError();
  cuabi_texture_desc pd = CUABI_TEXTURE_DESC_INIT;
  pd.buffer = pitched;
  pd.width = W;
  pd.height = H;
  Texture t2;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&pd, t2.out())) << LastError();
  pitched.reset();  // kept alive by the texture
  uint64_t v2 = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_get_handle(t2, &v2));
  Buffer out2 = Alloc(W * H * 4);
  uint64_t po2 = Pointer(out2);
  unsigned w = W, h = H;
  Launch("fetch2d", H, 64, {&v2, &po2, &w, &h});
  EXPECT_EQ(img, Download<float>(out2, W * H));
  pd.buffer = lin;
  pd.pitch = 0;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_texture_create(&pd, bad.out()), "not pitched");
}

TEST_F(MemoryKindsTest, TextureKeepsAStreamOrderedBufferFromBeingFreed) {
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_async(device_, 4096, nullptr, nullptr, b.out()));
  cuabi_texture_desc td = CUABI_TEXTURE_DESC_INIT;
  td.buffer = b;
  td.width = 1024;
  Texture t;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&td, t.out())) << LastError();
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_free_async(b, nullptr),
               "texture object");
  t.reset();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_free_async(b.detach(), nullptr)) << LastError();
  cuabi_device_synchronize(device_);
}

TEST_F(MemoryKindsTest, LayeredArrayAndSurfaceWrites) {
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = 4;
  ad.height = 4;
  ad.depth = 3;
  ad.flags = CUABI_ARRAY_LAYERED;
  Array layered;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, layered.out())) << LastError();
  std::vector<float> layers(4 * 4 * 3);
  for (size_t i = 0; i < layers.size(); ++i) layers[i] = float(i / 16 + 1);
  cuabi_copy_3d_desc c = CUABI_COPY_3D_DESC_INIT;
  c.src_host = layers.data();
  c.dst_array = layered;
  c.width_bytes = 16;
  c.height = 4;
  c.depth = 3;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&c)) << LastError();
  cuabi_texture_desc td = CUABI_TEXTURE_DESC_INIT;
  td.array = layered;
  Texture t;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&td, t.out())) << LastError();
  uint64_t tv = t.value();
  Buffer out = Alloc(12);
  uint64_t po = Pointer(out);
  unsigned n = 3;
  Launch("layers", 1, 32, {&tv, &po, &n});
  EXPECT_EQ((std::vector<float>{1, 2, 3}), Download<float>(out, 3));

  const unsigned W = 16, H = 8;
  cuabi_array_desc sd = CUABI_ARRAY_DESC_INIT;
  sd.width = W;
  sd.height = H;
  sd.flags = CUABI_ARRAY_SURFACE_LOAD_STORE;
  Array sa;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &sd, sa.out())) << LastError();
  std::vector<float> img(W * H), back(W * H);
  for (unsigned i = 0; i < W * H; ++i) img[i] = float(i);
  cuabi_copy_3d_desc u = CUABI_COPY_3D_DESC_INIT;
  u.src_host = img.data();
  u.dst_array = sa;
  u.width_bytes = W * 4;
  u.height = H;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&u)) << LastError();
  Surface s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_surface_create(sa, s.out())) << LastError();
  uint64_t sv = s.value();
  unsigned w = W, h = H;
  Launch("surf_double", H, 32, {&sv, &w, &h});
  cuabi_copy_3d_desc r = CUABI_COPY_3D_DESC_INIT;
  r.src_array = sa;
  r.dst_host = back.data();
  r.width_bytes = W * 4;
  r.height = H;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&r)) << LastError();
  for (unsigned i = 0; i < W * H; ++i) ASSERT_EQ(2.0f * img[i], back[i]) << i;
  Surface bad;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_surface_create(layered, bad.out()),
               "CUABI_ARRAY_SURFACE_LOAD_STORE");
}

}  // namespace
}  // namespace cuabi_test

namespace cuabi_test {
namespace {

// --- long runs and the overview's texture kernel ------------------------------------

TEST_F(MemoryKindsTest, AHundredThousandStreamOrderedAllocationsKeepMemoryFlat) {
  Stream stream;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, stream.out()));
  // A private pool that keeps what it reserved: its reservation must stay
  // flat once warm. (The device's used memory is printed too; it is shared
  // with whatever else runs on the device, so it is not asserted.)
  cuabi_memory_pool_desc desc = CUABI_MEMORY_POOL_DESC_INIT;
  desc.release_threshold = ~0ull;
  MemoryPool pool;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_create(device_, &desc, pool.out())) << LastError();
  auto sample = [&](uint64_t* reserved, size_t* used_device) {
    uint64_t used = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_get_usage(pool, reserved, &used));
    EXPECT_EQ(0u, used) << "every allocation was freed";
    size_t free_bytes = 0, total = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_memory_info(device_, &free_bytes, &total));
    *used_device = total - free_bytes;
  };
  const int kIterations = 100000, kWarmUp = 10000;
  uint64_t reserved_warm = 0, reserved_end = 0;
  size_t device_warm = 0, device_end = 0;
  for (int i = 0; i < kIterations; ++i) {
    cuabi_buffer b = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_alloc_async(device_, 4096 + 256 * (i % 7), pool, stream, &b))
        << "iteration " << i << ": " << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill_async(b, 0, uint32_t(i), 4, 1024, stream));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_free_async(b, stream)) << LastError();
    if (i + 1 == kWarmUp) sample(&reserved_warm, &device_warm);
  }
  sample(&reserved_end, &device_end);
  std::printf("stream-ordered loop: %d allocations; pool reserved %llu -> %llu bytes, device used "
              "%zu -> %zu bytes (after %d, at the end)\n",
              kIterations, static_cast<unsigned long long>(reserved_warm),
              static_cast<unsigned long long>(reserved_end), device_warm, device_end, kWarmUp);
  EXPECT_GT(reserved_warm, 0u) << "the pool kept nothing reserved";
  EXPECT_EQ(reserved_warm, reserved_end) << "the pool grew after the warm-up";
}

// The overview's transformKernel (cuda-python's simpleCubemapTexture), reading a
// cubemap texture object made by cuabi and passed as an 8-byte argument.
constexpr const char* kTransform = R"(
extern "C" __global__ void transformKernel(float* g_odata, int width, cudaTextureObject_t tex) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  float u = ((x + 0.5f) / (float)width) * 2.f - 1.f;
  float v = ((y + 0.5f) / (float)width) * 2.f - 1.f;
  float cx, cy, cz;
  for (unsigned face = 0; face < 6; face++) {
    if (face == 0) { cx = 1; cy = -v; cz = -u; }
    else if (face == 1) { cx = -1; cy = -v; cz = u; }
    else if (face == 2) { cx = u; cy = 1; cz = v; }
    else if (face == 3) { cx = u; cy = -1; cz = -v; }
    else if (face == 4) { cx = u; cy = -v; cz = 1; }
    else { cx = -u; cy = -v; cz = -1; }
    g_odata[face * width * width + y * width + x] = -texCubemap<float>(tex, cx, cy, cz);
  }
}
)";

TEST_F(MemoryKindsTest, TheOverviewsTransformKernelReadsACubemapTextureMadeByCuabi) {
  const int width = 64;
  const size_t n = size_t(width) * width * 6;
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = float(i);
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = width;
  ad.height = width;
  ad.depth = 6;
  ad.flags = CUABI_ARRAY_CUBEMAP;
  Array cube;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, cube.out())) << LastError();
  cuabi_copy_3d_desc c = CUABI_COPY_3D_DESC_INIT;
  c.src_host = data.data();
  c.dst_array = cube;
  c.width_bytes = width * 4;
  c.height = width;
  c.depth = 6;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&c)) << LastError();
  cuabi_texture_desc td = CUABI_TEXTURE_DESC_INIT;
  td.array = cube;
  td.normalized_coords = 1;
  td.address_x = td.address_y = td.address_z = CUABI_ADDRESS_WRAP;
  Texture tex;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&td, tex.out())) << LastError();
  Module m = Compile(kTransform);
  Function f = GetFunction(m, "transformKernel");
  Buffer out = Alloc(n * 4);
  uint64_t po = Pointer(out), t = tex.value();
  int w = width;
  void* params[] = {&po, &w, &t};
  size_t sizes[] = {8, 4, 8};
  cuabi_launch_config cfg = CUABI_LAUNCH_CONFIG_INIT;
  cfg.block_x = 8;
  cfg.block_y = 8;
  cfg.grid_x = width / 8;
  cfg.grid_y = width / 8;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch_sized(f, &cfg, nullptr, params, sizes, 3))
      << LastError();
  std::vector<float> got = Download<float>(out, n);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += got[i] != -data[i];
  EXPECT_EQ(0u, wrong) << "of " << n << " texels; first: " << got[0] << " for " << -data[0];
  // A cubemap's faces are square and there are six of them.
  ad.height = width / 2;
  Array bad;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_array_create(device_, &ad, bad.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "square faces"));
}

}  // namespace
}  // namespace cuabi_test
