// Two graph patterns checked against the host: a WHILE node running a Jacobi
// iteration until the residual computed on the device falls below a
// tolerance, and a hand-built graph of 1,000 kernel nodes in chained
// diamonds, replayed.
#include <cmath>
#include <cstring>
#include <vector>

#include <cuabi/cuabi.hpp>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

const char* kSource =
    "extern \"C\" __device__ __cudart_builtin__ void cudaGraphSetConditional(\n"
    "    cudaGraphConditionalHandle handle, unsigned int value);\n"
    // One Jacobi step of 4 x_i - x_{i-1} - x_{i+1} = b_i (one block, n <= 256
    // threads), then the residual max |b - A x| of the new x; below tol the
    // loop ends.
    "extern \"C\" __global__ void jacobi(float* x, const float* b, int n, float tol,\n"
    "                                   int* iterations, cudaGraphConditionalHandle h) {\n"
    "  __shared__ float xs[256];\n"
    "  __shared__ float rs[256];\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) xs[i] = x[i];\n"
    "  __syncthreads();\n"
    "  float xn = 0.0f;\n"
    "  if (i < n) xn = (b[i] + (i > 0 ? xs[i - 1] : 0.0f) + (i < n - 1 ? xs[i + 1] : 0.0f)) / 4.0f;\n"
    "  __syncthreads();\n"
    "  if (i < n) { xs[i] = xn; x[i] = xn; }\n"
    "  __syncthreads();\n"
    "  if (i < n) {\n"
    "    float ax = 4.0f * xs[i] - (i > 0 ? xs[i - 1] : 0.0f) - (i < n - 1 ? xs[i + 1] : 0.0f);\n"
    "    rs[i] = fabsf(b[i] - ax);\n"
    "  } else rs[i] = 0.0f;\n"
    "  __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s /= 2) {\n"
    "    if (i < s) rs[i] = fmaxf(rs[i], rs[i + s]);\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (i == 0) {\n"
    "    *iterations += 1;\n"
    "    if (rs[0] < tol) cudaGraphSetConditional(h, 0);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void combine(int* v, int out, int a, int b) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) v[out] = v[a] + 2 * v[b] + 1;\n"
    "}\n";

class GraphPatternsTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    int32_t version = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version)) << LastError();
    if (version < 12040) GTEST_SKIP() << "conditional nodes need a driver of CUDA 12.4 or later";
    module_ = Compile(kSource);
  }

  Module module_;
};

TEST_F(GraphPatternsTest, AWhileNodeRunsJacobiUntilTheResidualOnTheDeviceIsSmall) {
  Function jacobi = GetFunction(module_, "jacobi");
  const int n = 64;
  const float tol = 1e-4f;
  std::vector<float> b(n);
  for (int i = 0; i < n; ++i) b[i] = float((i * 7) % 11) - 3.0f;
  Buffer x = Alloc(n * 4), bb = Alloc(n * 4), iterations = Alloc(4);
  Upload(x, std::vector<float>(n, 0.0f));
  Upload(bb, b);
  Upload(iterations, std::vector<int32_t>{0});
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  uint64_t h = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create_conditional_handle(g, 1, &h)) << LastError();
  GraphNode loop;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_graph_add_conditional_node(g, nullptr, h, CUABI_CONDITIONAL_WHILE, 1, loop.out()))
      << LastError();
  Graph body;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_body(loop, 0, body.out())) << LastError();
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.block_x = n;
  std::vector<char> args = Pack(jacobi, Pointer(x), Pointer(bb), int32_t(n), tol,
                                Pointer(iterations), h);
  GraphNode step;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_kernel_node(body, nullptr, jacobi, &c, args.data(),
                                                       args.size(), step.out()))
      << LastError();
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  // The same iteration on the host, in the same float operations.
  std::vector<float> want(n, 0.0f), next(n);
  int steps = 0;
  for (;;) {
    for (int i = 0; i < n; ++i)
      next[i] = (b[i] + (i > 0 ? want[i - 1] : 0.0f) + (i < n - 1 ? want[i + 1] : 0.0f)) / 4.0f;
    want = next;
    ++steps;
    float r = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float ax = 4.0f * want[i] - (i > 0 ? want[i - 1] : 0.0f) -
                       (i < n - 1 ? want[i + 1] : 0.0f);
      r = std::fmax(r, std::fabs(b[i] - ax));
    }
    if (r < tol) break;
    ASSERT_LT(steps, 10000) << "the host iteration does not converge";
  }
  EXPECT_GT(steps, 5);
  EXPECT_EQ(steps, Download<int32_t>(iterations, 1)[0]);
  std::vector<float> got = Download<float>(x, n);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(want[i], got[i], 1e-5f) << "x[" << i << "]";
}

TEST_F(GraphPatternsTest, AThousandNodesOfChainedDiamondsReplayInOrder) {
  Function combine = GetFunction(module_, "combine");
  // 333 diamonds: top -> (left, right) -> bottom, each bottom the next top;
  // with the first top, 1 + 333 * 3 = 1000 kernel nodes. Node k writes v[k]
  // from its two dependencies' slots (the first top from slot 0 itself).
  const int diamonds = 333, nodes = 1 + diamonds * 3;
  Buffer v = Alloc(nodes * 4);
  const uint64_t pv = Pointer(v);
  Graph g;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_create(device_, g.out()));
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  std::vector<int> a_of(nodes), b_of(nodes);
  std::vector<GraphNode> made(nodes);
  auto add = [&](int k, int a, int b, cuabi_graph_node after) {
    a_of[k] = a;
    b_of[k] = b;
    std::vector<char> args = Pack(combine, pv, int32_t(k), int32_t(a), int32_t(b));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_kernel_node(g, after, combine, &c, args.data(),
                                                         args.size(), made[k].out()))
        << "node " << k << ": " << LastError();
  };
  add(0, 0, 0, nullptr);
  int top = 0;
  for (int d = 0; d < diamonds; ++d) {
    const int left = 1 + 3 * d, right = left + 1, bottom = left + 2;
    add(left, top, top, made[top]);
    add(right, top, left, made[top]);
    // The right node reads left's slot: it must run after left too.
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_add_dependency(made[right], made[left]))
        << LastError();
    add(bottom, left, right, made[left]);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_add_dependency(made[bottom], made[right]))
        << LastError();
    top = bottom;
  }
  size_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(g, &count));
  EXPECT_EQ(size_t(nodes), count);
  size_t deps = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_node_get_dependency_count(made[3], &deps));
  EXPECT_EQ(2u, deps);
  // The host's answer, modulo 2^32 as the device's ints wrap.
  std::vector<uint32_t> want(nodes, 0);
  for (int k = 0; k < nodes; ++k) want[k] = want[a_of[k]] + 2u * want[b_of[k]] + 1u;
  GraphExec e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(g, e.out())) << LastError();
  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(v, 0, 0, nodes * 4));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e, nullptr)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
    std::vector<uint32_t> got = Download<uint32_t>(v, nodes);
    for (int k = 0; k < nodes; ++k) ASSERT_EQ(want[k], got[k]) << "replay " << replay << " node " << k;
  }
}

// The same loop through the C++ face: cuabi::graph, its WHILE node and body.
TEST_F(GraphPatternsTest, TheJacobiLoopThroughTheCxxFace) {
  Function jacobi = GetFunction(module_, "jacobi");
  const int n = 32;
  const float tol = 1e-4f;
  std::vector<float> b(n);
  for (int i = 0; i < n; ++i) b[i] = float(i % 5) + 1.0f;
  Buffer x = Alloc(n * 4), bb = Alloc(n * 4), iterations = Alloc(4);
  Upload(x, std::vector<float>(n, 0.0f));
  Upload(bb, b);
  Upload(iterations, std::vector<int32_t>{0});
  cuabi::graph g = cuabi::graph::create(device_.get());
  const uint64_t h = g.create_conditional_handle(1);
  cuabi::graph_node loop = g.add_conditional_node(nullptr, h, CUABI_CONDITIONAL_WHILE, 1);
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.block_x = n;
  std::vector<char> args = Pack(jacobi.get(), Pointer(x), Pointer(bb), int32_t(n), tol,
                                Pointer(iterations), h);
  loop.get_body(0).add_kernel_node(nullptr, jacobi.get(), c, args.data(), args.size());
  cuabi::graph_exec e = g.instantiate();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(e.get(), nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
  std::vector<float> want(n, 0.0f), next(n);
  int steps = 0;
  for (float r = 1.0f; r >= tol; ++steps) {
    for (int i = 0; i < n; ++i)
      next[i] = (b[i] + (i > 0 ? want[i - 1] : 0.0f) + (i < n - 1 ? want[i + 1] : 0.0f)) / 4.0f;
    want = next;
    r = 0.0f;
    for (int i = 0; i < n; ++i)
      r = std::fmax(r, std::fabs(b[i] - (4.0f * want[i] - (i > 0 ? want[i - 1] : 0.0f) -
                                         (i < n - 1 ? want[i + 1] : 0.0f))));
    ASSERT_LT(steps, 10000);
  }
  EXPECT_EQ(steps, Download<int32_t>(iterations, 1)[0]);
  std::vector<float> got = Download<float>(x, n);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(want[i], got[i], 1e-5f) << "x[" << i << "]";
}

}  // namespace
}  // namespace cuabi_test
