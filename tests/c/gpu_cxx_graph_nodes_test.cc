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
    "extern \"C\" __global__ void put(int* where, int value) { *where = value; }\n";

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

}  // namespace
}  // namespace cuabi_test
