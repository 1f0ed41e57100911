// An executable graph changed in place: every node kind's parameters updated
// without instantiating again (kernel, copy, upload, download, fill, host,
// event), nodes disabled and enabled, a 3D copy node, and device code that
// launches a graph (fire-and-forget and tail launch); with the refusals.
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// cudaGraphLaunch is a device builtin the driver resolves, as
// cudaGraphSetConditional is: an NVRTC program declares it (see the README).
const char* kSource =
    "typedef struct CUgraphExec_st* cudaGraphExec_t;\n"
    "extern \"C\" __device__ __cudart_builtin__ cudaError_t cudaGraphLaunch(\n"
    "    cudaGraphExec_t graph, cudaStream_t stream);\n"
    "extern \"C\" __global__ void axpb(float* x, int n, float a, float b) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "    x[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void axmb(float* x, int n, float a, float b) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "    x[i] = a * x[i] - b;\n"
    "}\n"
    "extern \"C\" __global__ void put(int* where, int value) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) *where = value;\n"
    "}\n"
    "extern \"C\" __global__ void bump(int* counter, int by) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(counter, by);\n"
    "}\n"
    "extern \"C\" __global__ void launch_graph(unsigned long long graph, unsigned long long mode,\n"
    "                                         int* answer) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0)\n"
    "    *answer = (int)cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)mode);\n"
    "}\n";

// The device-side launch modes (cuda_device_runtime_api.h's values).
constexpr uint64_t kTailLaunch = 0x0100000000000000ull;
constexpr uint64_t kFireAndForget = 0x0200000000000000ull;

class ExecNodeUpdateTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    int32_t version = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version)) << LastError();
    if (version < 12040) GTEST_SKIP() << "these updates need a driver of CUDA 12.4 or later";
    module_ = Compile(kSource);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0,
                                                 stream_.out()));
  }

  static cuabi_launch_config Config(uint32_t grid = 1, uint32_t block = 1) {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = grid;
    c.block_x = block;
    return c;
  }

  void Launch(cuabi_graph_exec e) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, stream_)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream_)) << LastError();
  }

  Module module_;
  Stream stream_;
};

struct Flag {
  std::atomic<int> calls{0};
  int id = 0;
  std::atomic<int> last{0};
};

int32_t CUABI_CALL Mark(void* user_data, char*, size_t) {
  Flag* f = static_cast<Flag*>(user_data);
  f->calls.fetch_add(1);
  f->last.store(f->id);
  return 0;
}

TEST_F(ExecNodeUpdateTest, EveryNodeKindTakesNewParametersWithoutInstantiatingAgain) {
  Function axpb = GetFunction(module_, "axpb");
  Function axmb = GetFunction(module_, "axmb");
  const int n = 2048;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float(i % 61) - 7.0f;
  HostBuffer in, out;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, 2 * n * 4, in.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, 2 * n * 4, out.out()));
  float *pin = nullptr, *pout = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(in, reinterpret_cast<void**>(&pin)));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(out, reinterpret_cast<void**>(&pout)));
  std::memcpy(pin, x.data(), n * 4);
  for (int i = 0; i < n; ++i) pin[n + i] = float(i % 13);
  Buffer a = Alloc(n * 4), b = Alloc(n * 4), c = Alloc(n * 4), flags = Alloc(64);
  // upload(in[0:n] -> a) -> axpb(a) -> copy(a -> b) -> fill(flags) -> download(b -> out[0:n])
  // and a host node after the download.
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  GraphNode up, kern, copy, fill, down, host;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_upload_node(g, nullptr, a, 0, in, 0, n * 4, up.out()))
      << LastError();
  const cuabi_launch_config cfg = Config(8, 128);
  std::vector<char> args = Pack(axpb, Pointer(a), int32_t(n), 2.0f, 1.0f);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_kernel_node(g, up, axpb, &cfg, args.data(),
                                                       args.size(), kern.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_copy_node(g, kern, b, 0, a, 0, n * 4, copy.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_fill_node(g, copy, flags, 0, 0x11u, 4, 4, fill.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_add_download_node(g, fill, out, 0, b, 0, n * 4, down.out()))
      << LastError();
  Flag first, second;
  first.id = 1;
  second.id = 2;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_host_node(g, down, &Mark, &first, host.out()))
      << LastError();
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  Launch(e);
  for (int i = 0; i < n; ++i) ASSERT_EQ(2.0f * x[i] + 1.0f, pout[i]) << "element " << i;
  std::vector<uint32_t> f = Download<uint32_t>(flags, 16);
  EXPECT_EQ(0x11u, f[0]);
  EXPECT_EQ(1, first.last.load());

  // New parameters for every node: the upload reads the second half of `in`,
  // the kernel becomes axmb with a = 3, b = 0.5 on c, the copy copies c to b,
  // the fill writes 0x22 further on, the download writes the second half of
  // `out`, and the host node calls another function.
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_exec_set_upload_node(e, up, c, 0, in, n * 4, n * 4))
      << LastError();
  const cuabi_launch_config cfg2 = Config(4, 256);
  std::vector<char> args2 = Pack(axmb, Pointer(c), int32_t(n), 3.0f, 0.5f);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_kernel_node(e, kern, axmb, &cfg2, args2.data(),
                                                            args2.size()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_copy_node(e, copy, b, 0, c, 0, n * 4))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_fill_node(e, fill, flags, 16, 0x22u, 4, 4))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_download_node(e, down, out, n * 4, b, 0, n * 4))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_host_node(e, host, &Mark, &second))
      << LastError();
  // Released handles do not matter: the executable graph keeps what it uses.
  axmb.reset();
  c.reset();
  Launch(e);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(3.0f * float(i % 13) - 0.5f, pout[n + i]) << "element " << i;
  f = Download<uint32_t>(flags, 16);
  EXPECT_EQ(0x11u, f[0]) << "the first range is left as it was";
  EXPECT_EQ(0x22u, f[4]);
  EXPECT_EQ(1, first.calls.load());
  EXPECT_EQ(1, second.calls.load());
  EXPECT_EQ(2, second.last.load());
  // The graph itself is unchanged: a new instance does the first work.
  std::memset(pout, 0, n * 4);
  GraphExec again;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, again.out())) << LastError();
  Launch(again);
  for (int i = 0; i < n; ++i) ASSERT_EQ(2.0f * x[i] + 1.0f, pout[i]) << "element " << i;
}

TEST_F(ExecNodeUpdateTest, NodesAreDisabledAndEnabledAgain) {
  Function bump = GetFunction(module_, "bump");
  Buffer counter = Alloc(16);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(counter, 0, 0, 16));
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  GraphNode k, fill, host;
  const cuabi_launch_config cfg = Config();
  std::vector<char> args = Pack(bump, Pointer(counter), int32_t(5));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_add_kernel_node(g, nullptr, bump, &cfg, args.data(), args.size(), k.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_fill_node(g, k, counter, 8, 0x7u, 4, 1, fill.out()))
      << LastError();
  Flag flag;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_host_node(g, fill, &Mark, &flag, host.out()));
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  int32_t on = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_get_node_enabled(e, k, &on)) << LastError();
  EXPECT_EQ(1, on);
  Launch(e);
  EXPECT_EQ(5, Download<int32_t>(counter, 1)[0]);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_node_enabled(e, k, 0)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_node_enabled(e, fill, 0)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_get_node_enabled(e, k, &on)) << LastError();
  EXPECT_EQ(0, on);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(counter, 8, 0, 4));
  Launch(e);
  std::vector<int32_t> c = Download<int32_t>(counter, 3);
  EXPECT_EQ(5, c[0]) << "a disabled kernel node does not run";
  EXPECT_EQ(0, c[2]) << "a disabled fill node does not run";
  EXPECT_EQ(2, flag.calls.load()) << "the nodes after a disabled one still run";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_node_enabled(e, k, 1)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_set_node_enabled(e, fill, 1)) << LastError();
  Launch(e);
  c = Download<int32_t>(counter, 3);
  EXPECT_EQ(10, c[0]);
  EXPECT_EQ(7, c[2]);
  // A host node cannot be disabled: the driver's rule, said before it is asked.
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED, cuabi_graph_exec_set_node_enabled(e, host, 0));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "the node is a host node"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED, cuabi_graph_exec_get_node_enabled(e, host, &on));
}

TEST_F(ExecNodeUpdateTest, TheRefusalsNameWhatWasWrong) {
  Function axpb = GetFunction(module_, "axpb");
  Function put = GetFunction(module_, "put");
  Buffer a = Alloc(4096), b = Alloc(4096);
  HostBuffer pinned;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, 4096, pinned.out()));
  Graph g, other;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, other.out()));
  GraphNode k, copy, fill, down, foreign, rec;
  const cuabi_launch_config cfg = Config(1, 32);
  std::vector<char> args = Pack(axpb, Pointer(a), int32_t(1024), 1.0f, 0.0f);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_add_kernel_node(g, nullptr, axpb, &cfg, args.data(), args.size(), k.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_copy_node(g, k, b, 0, a, 0, 4096, copy.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_fill_node(g, copy, a, 0, 1, 4, 16, fill.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_download_node(g, fill, pinned, 0, b, 0, 64, down.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_fill_node(other, nullptr, a, 0, 1, 4, 16, foreign.out()));
  Event ev;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, ev.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_event_record_node(g, down, ev, rec.out()));
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();

  // A kernel of another signature.
  std::vector<char> pargs = Pack(put, Pointer(a), int32_t(3));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node(e, k, put, &cfg, pargs.data(), pargs.size()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "keeps the kernel's signature"))
      << cuabi_last_error_message();
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "'axpb'")) << cuabi_last_error_message();
  // An argument block of the wrong size, checked as a launch checks it.
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node(e, k, axpb, &cfg, args.data(), args.size() - 4));
  // Launch attributes stay as instantiated.
  cuabi_launch_config prio = cfg;
  prio.priority = 1;
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED,
            cuabi_graph_exec_set_kernel_node(e, k, axpb, &prio, args.data(), args.size()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "stay as instantiated"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node(e, k, axpb, nullptr, args.data(), args.size()));
  // A node of another kind.
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_kernel_node(e, copy, axpb, &cfg, args.data(), args.size()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "the node is a copy node, not a kernel node"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_set_copy_node(e, fill, b, 0, a, 0, 64));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "the node is a fill node, not a copy node"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_upload_node(e, down, b, 0, pinned, 0, 64));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "a download node, not an upload node"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_set_event_node(e, fill, ev));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_set_host_node(e, fill, &Mark, nullptr));
  // A node of another graph.
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_exec_set_fill_node(e, foreign, a, 0, 2, 4, 16));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "not a node of the graph"))
      << cuabi_last_error_message();
  // Ranges checked as adding the node checks them.
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_graph_exec_set_copy_node(e, copy, b, 1, a, 0, 4096));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "reaches past the end of the 4096-byte buffer"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_set_copy_node(e, copy, a, 0, a, 8, 64));
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE,
            cuabi_graph_exec_set_download_node(e, down, pinned, 4090, b, 0, 64));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_set_fill_node(e, fill, a, 0, 1, 3, 16));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_set_host_node(e, down, nullptr, nullptr));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_get_node_enabled(e, k, nullptr));
  // Nothing refused changed the executable graph: it still runs as built.
  EXPECT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, stream_)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream_)) << LastError();
}

TEST_F(ExecNodeUpdateTest, A3dCopyNodeCopiesABoxIntoPitchedMemoryAndAnArray) {
  const size_t w = 40, h = 24;  // floats per row, rows
  HostBuffer host;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, w * h * 4, host.out()));
  float* ph = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(host, reinterpret_cast<void**>(&ph)));
  for (size_t i = 0; i < w * h; ++i) ph[i] = float(i) * 0.25f;
  Buffer pitched;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_buffer_alloc_pitched(device_, w * 4, h, 4, pitched.out()))
      << LastError();
  size_t pitch = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pitch(pitched, &pitch)) << LastError();
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = w;
  ad.height = h;
  ad.format = CUABI_FORMAT_F32;
  ad.channels = 1;
  Array arr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &ad, arr.out())) << LastError();
  std::vector<float> back(w * h, -1.0f);
  // host box (rows 4..19, columns 8..31) -> pitched at (0, 0) -> array at (8, 4) -> back.
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  cuabi_copy_3d_desc d1 = CUABI_COPY_3D_DESC_INIT;
  d1.src_host = ph;
  d1.src_x_bytes = 8 * 4;
  d1.src_y = 4;
  d1.src_pitch = w * 4;
  d1.dst_buffer = pitched;
  d1.width_bytes = 24 * 4;
  d1.height = 16;
  cuabi_copy_3d_desc d2 = CUABI_COPY_3D_DESC_INIT;
  d2.src_buffer = pitched;
  d2.dst_array = arr;
  d2.dst_x_bytes = 8 * 4;
  d2.dst_y = 4;
  d2.width_bytes = 24 * 4;
  d2.height = 16;
  cuabi_copy_3d_desc d3 = CUABI_COPY_3D_DESC_INIT;
  d3.src_array = arr;
  d3.dst_host = back.data();
  d3.dst_pitch = w * 4;
  d3.width_bytes = w * 4;
  d3.height = h;
  // The array starts zeroed by a copy of zeros.
  std::vector<float> zeros(w * h, 0.0f);
  cuabi_copy_3d_desc z = CUABI_COPY_3D_DESC_INIT;
  z.src_host = zeros.data();
  z.src_pitch = w * 4;
  z.dst_array = arr;
  z.width_bytes = w * 4;
  z.height = h;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_copy_3d(&z)) << LastError();
  GraphNode n1, n2, n3;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_copy_3d_node(g, nullptr, &d1, n1.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_copy_3d_node(g, n1, &d2, n2.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_copy_3d_node(g, n2, &d3, n3.out())) << LastError();
  cuabi_graph_node_type t = CUABI_GRAPH_NODE_EMPTY;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(n2, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_MEMCPY, t);
  pitched.reset();  // the graph keeps it
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  Launch(e);
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) {
      const bool inside = y >= 4 && y < 20 && x >= 8 && x < 32;
      ASSERT_EQ(inside ? ph[y * w + x] : 0.0f, back[y * w + x]) << "x " << x << " y " << y;
    }
  // The driver updates no 3D copy in place; the core says so.
  Buffer a = Alloc(256), b = Alloc(256);
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED, cuabi_graph_exec_set_copy_node(e, n2, a, 0, b, 0, 64));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "3D copy node")) << cuabi_last_error_message();
  // Refusals: a box past the array, an empty box, no desc.
  cuabi_copy_3d_desc bad = d3;
  bad.src_y = 8;
  GraphNode nb;
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_graph_add_copy_3d_node(g, nullptr, &bad, nb.out()));
  bad = d3;
  bad.width_bytes = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_copy_3d_node(g, nullptr, &bad, nb.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "width_bytes is 0"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_copy_3d_node(g, nullptr, nullptr, nb.out()));
}

TEST_F(ExecNodeUpdateTest, AKernelLaunchesADeviceGraphFireAndForgetThenAsATailLaunch) {
  Function bump = GetFunction(module_, "bump");
  Function launcher = GetFunction(module_, "launch_graph");
  Buffer words = Alloc(16);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(words, 0, 0, 16));
  const uint64_t base = Pointer(words);
  // The device graph: one kernel node adding 3 to words[0].
  Graph child;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, child.out()));
  GraphNode cn;
  const cuabi_launch_config one = Config();
  std::vector<char> cargs = Pack(bump, base, int32_t(3));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_kernel_node(child, nullptr, bump, &one, cargs.data(),
                                                       cargs.size(), cn.out()))
      << LastError();
  GraphExec device_graph;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_instantiate_with_flags(
                child, CUABI_GRAPH_INSTANTIATE_DEVICE_LAUNCH | CUABI_GRAPH_INSTANTIATE_UPLOAD,
                stream_, device_graph.out()))
      << LastError();
  uint64_t handle = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_get_launch_handle(device_graph, &handle))
      << LastError();
  EXPECT_NE(0u, handle);
  for (uint64_t mode : {kFireAndForget, kTailLaunch}) {
    SCOPED_TRACE(mode == kFireAndForget ? "fire-and-forget" : "tail launch");
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(words, 0, 0, 16));
    // The host graph: a kernel node that launches the device graph, answering
    // cudaGraphLaunch's status in words[1].
    Graph host;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, host.out()));
    GraphNode ln;
    std::vector<char> largs = Pack(launcher, handle, mode, base + 4);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_kernel_node(host, nullptr, launcher, &one,
                                                         largs.data(), largs.size(), ln.out()))
        << LastError();
    GraphExec e;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(host, e.out())) << LastError();
    for (int i = 0; i < 2; ++i) Launch(e);
    std::vector<int32_t> w = Download<int32_t>(words, 2);
    EXPECT_EQ(0, w[1]) << "cudaGraphLaunch answered " << w[1];
    EXPECT_EQ(6, w[0]) << "two launches of the host graph, each adding 3 from the device graph";
  }
  // The driver refuses a stream launch of a kernel that launches a graph.
  std::vector<char> largs = Pack(launcher, handle, kFireAndForget, base + 4);
  EXPECT_NE(CUABI_SUCCESS,
            cuabi_function_launch_packed(launcher, &one, stream_, largs.data(), largs.size()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "cuLaunchKernel")) << cuabi_last_error_message();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream_)) << "the refusal is not sticky: "
                                                              << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_exec_get_launch_handle(device_graph, nullptr));
}

}  // namespace
}  // namespace cuabi_test
