// Graphs built node by node against the stand-in driver (tests/fake): the
// core's refusals that come before any node reaches the driver, through the C
// API and the C++ face. ctest's cuabi_cpu_fake_driver runs FakeDriver.*;
// elsewhere these tests skip.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cuabi/cuabi.hpp>
#include <string>
#include <vector>

#include "kernels.h"

namespace {

bool OnTheStandIn() {
  const char* on = std::getenv("CUABI_TEST_FAKE_DRIVER");
  return on != nullptr && std::string(on) == "1";
}

bool Contains(const char* haystack, const char* needle) {
  return std::string(haystack).find(needle) != std::string::npos;
}

TEST(FakeDriver, GraphNodeRefusalsComeBeforeTheDriver) {
  if (!OnTheStandIn()) GTEST_SKIP() << "needs the stand-in driver (ctest's cuabi_cpu_fake_driver)";
  const cuabi::device d = cuabi::device::open(0);
  cuabi::compile_options opts;
  opts.flags = CUABI_COMPILE_NO_CACHE;
  const cuabi::module mod = cuabi::module::compile(d, cuabi_test::kSaxpySource, opts);
  const cuabi::function saxpy = mod.get_function("saxpy");
  const cuabi::buffer buf = cuabi::buffer::alloc(d, 256);
  cuabi::graph g = cuabi::graph::create(d.get());
  cuabi::graph other = cuabi::graph::create(d.get());
  cuabi_graph_node n = nullptr;

  // A kernel node's argument block is checked as a packed launch's is.
  unsigned char args[12] = {0};
  const cuabi_launch_config c = cuabi::launch_config(1, 32);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_kernel_node(g.get(), nullptr, saxpy.get(), &c, args, sizeof args, &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "takes a 40-byte argument block"))
      << cuabi_last_error_message();
  cuabi_launch_config zero = c;
  zero.grid_x = 0;
  std::vector<unsigned char> block(40);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_kernel_node(g.get(), nullptr, saxpy.get(), &zero, block.data(),
                                        block.size(), &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "has a zero dimension"));
  cuabi_launch_config programmatic = c;
  programmatic.flags = CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION;
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED,
            cuabi_graph_add_kernel_node(g.get(), nullptr, saxpy.get(), &programmatic,
                                        block.data(), block.size(), &n));

  // Copies and fills: ranges against the buffer.
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE,
            cuabi_graph_add_copy_node(g.get(), nullptr, buf.get(), 200, buf.get(), 0, 57, &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "reaches past the end of the 256-byte buffer"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_copy_node(g.get(), nullptr, buf.get(), 0, buf.get(), 8, 64, &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "overlap"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_fill_node(g.get(), nullptr, buf.get(), 0, 1, 3, 4, &n));
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE,
            cuabi_graph_add_fill_node(g.get(), nullptr, buf.get(), 0, 1, 4, 65, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_mem_alloc_node(g.get(), nullptr, 0, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_host_node(g.get(), nullptr, nullptr, nullptr, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_child_graph_node(g.get(), nullptr, g.get(), &n));

  // Conditional nodes: sizes by kind, and the handle's graph.
  const uint64_t h = g.create_conditional_handle(0);
  const uint64_t foreign = other.create_conditional_handle(0);
  EXPECT_NE(h, foreign);
  try {
    (void)g.add_conditional_node(nullptr, h, CUABI_CONDITIONAL_SWITCH, 0);
    ADD_FAILURE() << "a SWITCH with no case was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_TRUE(Contains(e.what(), "at least 1 case")) << e.what();
  }
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_conditional_node(g.get(), nullptr, h, CUABI_CONDITIONAL_WHILE, 2, &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "a WHILE node has 1 body"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_conditional_node(g.get(), nullptr, h, CUABI_CONDITIONAL_IF, 3, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_conditional_node(g.get(), nullptr, h,
                                             static_cast<cuabi_conditional_type>(9), 1, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_add_conditional_node(g.get(), nullptr, foreign, CUABI_CONDITIONAL_IF, 1,
                                             &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "not made for this graph"))
      << cuabi_last_error_message();

  // Instantiation flags and the DOT dump's path.
  cuabi_graph_exec e = nullptr;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_graph_instantiate_with_flags(g.get(), 1u << 12, nullptr, &e));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "bits this version does not define"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_graph_write_dot(g.get(), nullptr));
  EXPECT_EQ(nullptr, n) << "no node was made";
  EXPECT_EQ(nullptr, e);
}

}  // namespace
