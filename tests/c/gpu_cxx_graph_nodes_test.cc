// Graphs built node by node through the C++ face (cuabi_objects.hpp): a WHILE
// node counting down on the device, a SWITCH, the edges read back, a clone,
// and the core's refusals as cuabi::error with its status and words.
#include <cuabi/cuabi.hpp>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

const char* kSource =
    "extern \"C\" __device__ __cudart_builtin__ void cudaGraphSetConditional(\n"
    "    cudaGraphConditionalHandle handle, unsigned int value);\n"
    "extern \"C\" __global__ void count_down(int* counter, int* iterations,\n"
    "                                       cudaGraphConditionalHandle h) {\n"
    "  *iterations += 1;\n"
    "  if (--*counter <= 0) cudaGraphSetConditional(h, 0);\n"
    "}\n"
    "extern \"C\" __global__ void put(int* where, int value) { *where = value; }\n"
    "extern \"C\" __global__ void add(int* where, int value) { *where += value; }\n";

class CxxGraphNodesTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    int32_t version = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version));
    if (version < 12040) GTEST_SKIP() << "conditional nodes need a driver of CUDA 12.4 or later";
  }
};

TEST_F(CxxGraphNodesTest, AWhileNodeAndASwitch) {
  Module m = Compile(kSource);
  Function count_down = GetFunction(m, "count_down");
  Function put = GetFunction(m, "put");
  Buffer counter = Alloc(4), iterations = Alloc(4), out = Alloc(4);
  cuabi::graph g = cuabi::graph::create(device_.get());
  const uint64_t h = g.create_conditional_handle(1);
  cuabi::graph_node loop = g.add_conditional_node(nullptr, h, CUABI_CONDITIONAL_WHILE, 1);
  EXPECT_EQ(CUABI_GRAPH_NODE_CONDITIONAL, loop.type());
  cuabi::graph body = loop.get_body(0);
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  size_t args_size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_args_size(count_down, &args_size));
  ASSERT_EQ(24u, args_size);
  std::vector<char> args(24);
  const uint64_t pc = Pointer(counter), pi = Pointer(iterations);
  std::memcpy(args.data(), &pc, 8);
  std::memcpy(args.data() + 8, &pi, 8);
  std::memcpy(args.data() + 16, &h, 8);
  body.add_kernel_node(nullptr, count_down.get(), c, args.data(), args.size());
  // A SWITCH after the loop: case 1 of 2 writes 11.
  const uint64_t sh = g.create_conditional_handle(1);
  cuabi::graph_node sw = g.add_conditional_node(loop.get(), sh, CUABI_CONDITIONAL_SWITCH, 2);
  EXPECT_EQ(1u, sw.dependency_count());
  EXPECT_EQ(CUABI_GRAPH_NODE_CONDITIONAL, sw.get_dependency(0).type());
  EXPECT_EQ(1u, loop.dependent_count());
  for (int i = 0; i < 2; ++i) {
    std::vector<char> p(12);
    const uint64_t po = Pointer(out);
    const int32_t v = 10 * i + 1;
    std::memcpy(p.data(), &po, 8);
    std::memcpy(p.data() + 8, &v, 4);
    sw.get_body(i).add_kernel_node(nullptr, put.get(), c, p.data(), p.size());
  }
  // The driver clones no graph with a conditional node, nor a body: the core
  // says so, in its own words.
  for (cuabi::graph* which : {&g, &body}) {
    try {
      (void)which->clone();
      FAIL() << "a graph with a conditional node (or a body) was cloned";
    } catch (const cuabi::error& e) {
      EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED, e.status());
      EXPECT_NE(std::string::npos, std::string(e.what()).find("the driver clones no")) << e.what();
    }
  }
  cuabi::graph_exec e = g.instantiate();
  Upload(counter, std::vector<int32_t>{9});
  Upload(iterations, std::vector<int32_t>{0});
  Upload(out, std::vector<int32_t>{-1});
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e.get(), nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  EXPECT_EQ(9, Download<int32_t>(iterations, 1)[0]);
  EXPECT_EQ(11, Download<int32_t>(out, 1)[0]);
}

TEST_F(CxxGraphNodesTest, RefusalsAreErrorsWithTheCoresWords) {
  cuabi::graph g = cuabi::graph::create(device_.get());
  const uint64_t h = g.create_conditional_handle(0);
  try {
    (void)g.add_conditional_node(nullptr, h, CUABI_CONDITIONAL_SWITCH, 0);
    FAIL() << "a SWITCH with no case was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("at least 1 case")) << e.what();
  }
  cuabi::graph_node a = g.add_empty_node();
  cuabi::graph_node b = g.add_empty_node(a.get());
  try {
    a.add_dependency(b.get());
    FAIL() << "a cycle was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("cycle")) << e.what();
  }
}

// An executable graph changed in place through graph_exec's methods: a
// kernel node's kernel and arguments, a fill node's value, a node disabled;
// a 3D copy node; and a refusal as cuabi::error.
TEST_F(CxxGraphNodesTest, AnExecutableGraphChangedInPlace) {
  Module m = Compile(kSource);
  Function put = GetFunction(m, "put");
  Function add = GetFunction(m, "add");
  Buffer out = Alloc(16);
  const uint64_t po = Pointer(out);
  auto pack = [&](int32_t v) {
    std::vector<char> p(12);
    std::memcpy(p.data(), &po, 8);
    std::memcpy(p.data() + 8, &v, 4);
    return p;
  };
  cuabi::graph g = cuabi::graph::create(device_.get());
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  std::vector<char> p = pack(5);
  cuabi::graph_node k = g.add_kernel_node(nullptr, put.get(), c, p.data(), p.size());
  cuabi::graph_node f = g.add_fill_node(k.get(), out.get(), 4, 0x33, 4, 1);
  // A 3D copy node: the 8 bytes written copied to bytes 8..15.
  cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
  d.src_buffer = out.get();
  d.dst_buffer = out.get();
  d.dst_x_bytes = 8;
  d.src_pitch = 16;
  d.dst_pitch = 16;
  d.width_bytes = 8;
  g.add_copy_3d_node(f.get(), d);
  cuabi::graph_exec e = g.instantiate();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e.get(), nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  EXPECT_EQ((std::vector<int32_t>{5, 0x33, 5, 0x33}), Download<int32_t>(out, 4));
  // add(out, 7) instead of put, and 0x44 instead of 0x33.
  p = pack(7);
  e.set_kernel_node(k.get(), add.get(), c, p.data(), p.size());
  e.set_fill_node(f.get(), out.get(), 4, 0x44, 4, 1);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e.get(), nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  EXPECT_EQ((std::vector<int32_t>{12, 0x44, 12, 0x44}), Download<int32_t>(out, 4));
  e.set_node_enabled(k.get(), 0);
  EXPECT_EQ(0, e.node_enabled(k.get()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e.get(), nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  EXPECT_EQ(12, Download<int32_t>(out, 1)[0]) << "the disabled kernel node did not run";
  EXPECT_NE(0u, e.launch_handle());
  try {
    e.set_fill_node(k.get(), out.get(), 0, 1, 4, 1);
    FAIL() << "a kernel node took a fill's parameters";
  } catch (const cuabi::error& err) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, err.status());
    EXPECT_NE(std::string::npos, std::string(err.what()).find("the node is a kernel node, not a fill node"))
        << err.what();
  }
}

}  // namespace
}  // namespace cuabi_test
