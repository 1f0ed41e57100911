// Graphs built node by node: a hand-built copy -> kernel -> copy graph with a
// host node and an event, checked against the same work on a stream; WHILE,
// IF/ELSE and SWITCH nodes whose conditions device code sets; clone, DOT
// dump, capture into an existing graph, instantiation flags; and the
// refusals.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// cudaGraphSetConditional is a device builtin the driver resolves: an NVRTC
// program declares it (see the README) and needs no device runtime link.
const char* kSource =
    "extern \"C\" __device__ __cudart_builtin__ void cudaGraphSetConditional(\n"
    "    cudaGraphConditionalHandle handle, unsigned int value);\n"
    "extern \"C\" __global__ void axpb(float* x, int n, float a, float b) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "    x[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void count_down(int* counter, int* iterations,\n"
    "                                       cudaGraphConditionalHandle h) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) {\n"
    "    *iterations += 1;\n"
    "    *counter -= 1;\n"
    "    if (*counter <= 0) cudaGraphSetConditional(h, 0);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void set_condition(const int* value, cudaGraphConditionalHandle h) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(h, (unsigned)*value);\n"
    "}\n"
    "extern \"C\" __global__ void put(int* where, int value) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) *where = value;\n"
    "}\n";

class GraphNodesTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    int32_t version = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version)) << LastError();
    if (version < 12040) GTEST_SKIP() << "conditional nodes need a driver of CUDA 12.4 or later";
  }

  static cuabi_launch_config Config(uint32_t grid = 1, uint32_t block = 1) {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = grid;
    c.block_x = block;
    return c;
  }

  GraphNode KernelNode(cuabi_graph g, cuabi_graph_node after, cuabi_function f,
                       const std::vector<char>& args, uint32_t grid = 1, uint32_t block = 1) {
    GraphNode n;
    const cuabi_launch_config c = Config(grid, block);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_graph_add_kernel_node(g, after, f, &c, args.data(),
                                                         args.size(), n.out()))
        << LastError();
    return n;
  }

  void Run(cuabi_graph g, cuabi_stream s) {
    GraphExec e;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, s)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  }
};

struct HostCount {
  std::atomic<int> calls{0};
  bool fail = false;
};

int32_t CUABI_CALL CountCall(void* user_data, char* message, size_t size) {
  HostCount* c = static_cast<HostCount*>(user_data);
  c->calls.fetch_add(1);
  if (c->fail) {
    std::snprintf(message, size, "host node asked to fail");
    return 5;
  }
  return 0;
}

TEST_F(GraphNodesTest, AHandBuiltGraphMatchesTheSameWorkOnAStream) {
  Module m = Compile(kSource);
  Function axpb = GetFunction(m, "axpb");
  const int n = 4096;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float(i % 97) * 0.5f;
  // The stream's answer.
  Buffer ref = Alloc(n * 4);
  Upload(ref, x);
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  uint64_t pref = Pointer(ref);
  int32_t count = n;
  float a = 3.0f, b = -1.25f;
  void* params[] = {&pref, &count, &a, &b};
  const cuabi_launch_config c = Config(16, 256);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(axpb, &c, s, params, 4)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  std::vector<float> want = Download<float>(ref, n);
  // The graph: upload -> kernel -> download, a host node and an event record after.
  HostBuffer in, out;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, n * 4, in.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, n * 4, out.out()));
  void *pin = nullptr, *pout = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(in, &pin));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(out, &pout));
  std::memcpy(pin, x.data(), n * 4);
  std::memset(pout, 0, n * 4);
  Buffer dev = Alloc(n * 4);
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out())) << LastError();
  GraphNode up, kern, down, host, rec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_upload_node(g, nullptr, dev, 0, in, 0, n * 4, up.out()))
      << LastError();
  kern = KernelNode(g, up, axpb, Pack(axpb, Pointer(dev), int32_t(n), a, b), 16, 256);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_add_download_node(g, kern, out, 0, dev, 0, n * 4, down.out()))
      << LastError();
  HostCount calls;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_host_node(g, down, &CountCall, &calls, host.out()))
      << LastError();
  Event ev;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, ev.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_event_record_node(g, down, ev, rec.out()))
      << LastError();
  size_t nodes = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(g, &nodes));
  EXPECT_EQ(5u, nodes);
  cuabi_graph_node_type t = CUABI_GRAPH_NODE_EMPTY;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(kern, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_KERNEL, t);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(up, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_MEMCPY, t);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(host, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_HOST, t);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(rec, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_EVENT_RECORD, t);
  size_t deps = 0, dependents = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_dependency_count(kern, &deps));
  EXPECT_EQ(1u, deps);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_dependent_count(down, &dependents));
  EXPECT_EQ(2u, dependents);
  GraphNode dep;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_dependency(kern, 0, dep.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(dep, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_MEMCPY, t);
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_graph_node_get_dependency(kern, 1, dep.out()));
  // Released handles do not matter: the graph keeps what its nodes use.
  in.reset();
  dev.reset();
  kern.reset();
  Run(g, s);
  EXPECT_EQ(1, calls.calls.load());
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_query(ev)) << LastError();
  std::vector<float> got(n);
  std::memcpy(got.data(), pout, n * 4);
  for (int i = 0; i < n; ++i) ASSERT_EQ(want[i], got[i]) << "element " << i;
  // A host node's failure is reported at the stream's synchronize.
  calls.fail = true;
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, s)) << LastError();
  EXPECT_EQ(CUABI_ERROR_HOST_FUNCTION, cuabi_stream_synchronize(s));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "host node asked to fail"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << "the failure is cleared";
}

TEST_F(GraphNodesTest, FillCopyChildAndAllocationNodes) {
  Module m = Compile(kSource);
  Function axpb = GetFunction(m, "axpb");
  const int n = 1000;
  Buffer a = Alloc(n * 4), b = Alloc(n * 4);
  Graph child;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, child.out()));
  GraphNode ck = KernelNode(child, nullptr, axpb, Pack(axpb, Pointer(b), int32_t(n), 2.0f, 1.0f));
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  GraphNode fill, copy, sub, alloc, free_node, use;
  const float seven = 7.0f;
  uint32_t bits = 0;
  std::memcpy(&bits, &seven, 4);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_fill_node(g, nullptr, a, 0, bits, 4, n, fill.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_copy_node(g, fill, b, 0, a, 0, n * 4, copy.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_child_graph_node(g, copy, child, sub.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_mem_alloc_node(g, sub, 64 * 4, alloc.out()))
      << LastError();
  uint64_t scratch = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_address(alloc, &scratch)) << LastError();
  EXPECT_NE(0u, scratch);
  use = KernelNode(g, alloc, axpb, Pack(axpb, scratch, int32_t(64), 1.0f, 0.0f));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_mem_free_node(g, use, alloc, free_node.out()))
      << LastError();
  cuabi_graph_node_type t = CUABI_GRAPH_NODE_EMPTY;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(sub, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_GRAPH, t);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(free_node, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_MEM_FREE, t);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_node_get_address(use, &scratch));
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  Run(g, s);
  std::vector<float> got = Download<float>(b, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(15.0f, got[i]) << "element " << i;
}

TEST_F(GraphNodesTest, AWhileNodeLoopsUntilDeviceCodeClearsTheCondition) {
  Module m = Compile(kSource);
  Function count_down = GetFunction(m, "count_down");
  Buffer counter = Alloc(4), iterations = Alloc(4);
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  uint64_t handle = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(g, 1, &handle)) << LastError();
  GraphNode loop;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_conditional_node(g, nullptr, handle,
                                                            CUABI_CONDITIONAL_WHILE, 1, loop.out()))
      << LastError();
  cuabi_graph_node_type t = CUABI_GRAPH_NODE_EMPTY;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_type(loop, &t));
  EXPECT_EQ(CUABI_GRAPH_NODE_CONDITIONAL, t);
  Graph body;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_body(loop, 0, body.out())) << LastError();
  Graph none;
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, cuabi_graph_node_get_body(loop, 1, none.out()));
  GraphNode step = KernelNode(body, nullptr, count_down,
                              Pack(count_down, Pointer(counter), Pointer(iterations), handle));
  body.reset();
  loop.reset();
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  for (int32_t start : {7, 1, 23}) {
    Upload(counter, std::vector<int32_t>{start});
    Upload(iterations, std::vector<int32_t>{0});
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, s)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
    EXPECT_EQ(start, Download<int32_t>(iterations, 1)[0]) << "start " << start;
    EXPECT_EQ(0, Download<int32_t>(counter, 1)[0]);
  }
}

TEST_F(GraphNodesTest, IfElseAndSwitchChooseTheirBodiesOnTheDevice) {
  Module m = Compile(kSource);
  Function set_condition = GetFunction(m, "set_condition");
  Function put = GetFunction(m, "put");
  Buffer value = Alloc(4), out = Alloc(4);
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  // IF with ELSE.
  {
    Graph g;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
    uint64_t h = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(g, 0, &h));
    GraphNode setter = KernelNode(g, nullptr, set_condition,
                                  Pack(set_condition, Pointer(value), h));
    GraphNode branch;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_conditional_node(g, setter, h, CUABI_CONDITIONAL_IF,
                                                              2, branch.out()))
        << LastError();
    for (int i = 0; i < 2; ++i) {
      Graph body;
      ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_body(branch, i, body.out()));
      KernelNode(body, nullptr, put, Pack(put, Pointer(out), int32_t(i == 0 ? 100 : 200)));
    }
    GraphExec e;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
    for (int32_t v : {1, 0, 5}) {
      Upload(value, std::vector<int32_t>{v});
      Upload(out, std::vector<int32_t>{-1});
      ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, s)) << LastError();
      ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
      EXPECT_EQ(v ? 100 : 200, Download<int32_t>(out, 1)[0]) << "condition " << v;
    }
  }
  // SWITCH of four cases; 4 and more run none.
  {
    Graph g;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
    uint64_t h = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(g, 0, &h));
    GraphNode setter = KernelNode(g, nullptr, set_condition,
                                  Pack(set_condition, Pointer(value), h));
    GraphNode sw;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_conditional_node(g, setter, h,
                                                              CUABI_CONDITIONAL_SWITCH, 4, sw.out()))
        << LastError();
    for (int i = 0; i < 4; ++i) {
      Graph body;
      ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_body(sw, i, body.out()));
      KernelNode(body, nullptr, put, Pack(put, Pointer(out), int32_t(10 * i + 1)));
    }
    GraphExec e;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
    for (int32_t v : {2, 0, 3, 1, 4}) {
      Upload(value, std::vector<int32_t>{v});
      Upload(out, std::vector<int32_t>{-1});
      ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, s)) << LastError();
      ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
      EXPECT_EQ(v < 4 ? 10 * v + 1 : -1, Download<int32_t>(out, 1)[0]) << "case " << v;
    }
  }
}

TEST_F(GraphNodesTest, CloneDotDumpCaptureIntoAGraphAndInstantiationFlags) {
  Module m = Compile(kSource);
  Function put = GetFunction(m, "put");
  Buffer out = Alloc(8);
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  GraphNode first = KernelNode(g, nullptr, put, Pack(put, Pointer(out), int32_t(41)));
  Graph copy;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_clone(g, copy.out())) << LastError();
  size_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(copy, &count));
  EXPECT_EQ(1u, count);
  // Capture a second kernel into the graph after the first.
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_begin_capture_to_graph(s, g, first, CUABI_CAPTURE_THREAD_LOCAL))
      << LastError();
  uint64_t p = Pointer(out);
  int32_t second = 42;
  void* params[] = {&p, &second};
  const cuabi_launch_config c = Config();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(put, &c, s, params, 2)) << LastError();
  Graph same;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s, same.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(g, &count));
  EXPECT_EQ(2u, count);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(same, &count));
  EXPECT_EQ(2u, count);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(copy, &count));
  EXPECT_EQ(1u, count) << "the clone is a copy";
  const std::string path = "/tmp/cuabi_graph_" + std::to_string(getpid()) + ".dot";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_write_dot(g, path.c_str())) << LastError();
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  unlink(path.c_str());
  EXPECT_TRUE(Contains(text.str(), "digraph")) << text.str();
  EXPECT_TRUE(Contains(text.str(), "put")) << text.str();
  // Flags: upload at instantiation and node priority; an undefined bit refused.
  GraphExec e;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_instantiate_with_flags(g, 1u << 9, s, e.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "bits this version does not define"));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_instantiate_with_flags(
                g, CUABI_GRAPH_INSTANTIATE_UPLOAD | CUABI_GRAPH_INSTANTIATE_USE_NODE_PRIORITY, s,
                e.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, s)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  // The captured node ran after the hand-made one it was captured after.
  EXPECT_EQ(42, Download<int32_t>(out, 1)[0]);
  GraphExec auto_free;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate_with_flags(
                               copy, CUABI_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH, nullptr,
                               auto_free.out()))
      << LastError();
}

TEST_F(GraphNodesTest, Refusals) {
  Module m = Compile(kSource);
  Function put = GetFunction(m, "put");
  Buffer buf = Alloc(64);
  Graph g, other;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, other.out()));
  GraphNode a, b, foreign, bad;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_empty_node(g, nullptr, a.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_empty_node(g, a, b.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_empty_node(other, nullptr, foreign.out()));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_empty_node(g, foreign, bad.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "node of another graph"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_node_add_dependency(a, foreign));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_node_add_dependency(a, b));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "cycle")) << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_node_add_dependency(a, a));
  // Wrong argument block size.
  std::vector<char> args(4);
  const cuabi_launch_config c = Config();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_kernel_node(g, nullptr, put, &c, args.data(), args.size(), bad.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "-byte argument block"));
  // Copy past the end.
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE,
            cuabi_graph_add_copy_node(g, nullptr, buf, 32, buf, 0, 33, bad.out()));
  // SWITCH with no case; a handle of another graph.
  uint64_t h = 0, foreign_h = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(g, 0, &h));
  // The driver numbers every graph's handles alike: the other graph's
  // second handle is a number this graph never made.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(other, 0, &foreign_h));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(other, 0, &foreign_h));
  ASSERT_NE(h, foreign_h);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_conditional_node(g, nullptr, h, CUABI_CONDITIONAL_SWITCH, 0, bad.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "at least 1 case"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_conditional_node(
                                              g, nullptr, foreign_h, CUABI_CONDITIONAL_IF, 1,
                                              bad.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "not made for this graph"));
  // The driver clones no graph with a conditional node, nor a body.
  {
    GraphNode cond;
    Graph body, copy;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_conditional_node(g, nullptr, h, CUABI_CONDITIONAL_IF,
                                                              1, cond.out()))
        << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_body(cond, 0, body.out()));
    for (cuabi_graph which : {g.get(), body.get()}) {
      EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED, cuabi_graph_clone(which, copy.out()));
      EXPECT_TRUE(Contains(cuabi_last_error_message(), "the driver clones no"))
          << cuabi_last_error_message();
      EXPECT_EQ(nullptr, copy.get());
    }
  }
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_conditional_node(
                                              g, nullptr, h, CUABI_CONDITIONAL_WHILE, 2,
                                              bad.out()));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_mem_free_node(g, nullptr, a, bad.out()));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_add_child_graph_node(g, nullptr, g, bad.out()));
  Graph body;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_node_get_body(a, 0, body.out()));
}

}  // namespace
}  // namespace cuabi_test
