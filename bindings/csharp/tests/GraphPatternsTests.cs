// Two graph patterns, as tests/python/test_graph_patterns.py and
// tests/c/gpu_graph_patterns_test.cc test them: a WHILE node running a
// Jacobi iteration until the residual computed on the device falls below a
// tolerance, checked against the same iteration on the host; and a
// hand-built graph of 1,000 kernel nodes in chained diamonds, replayed and
// checked against the host's recurrence.

using System;

namespace Cuabi.Tests
{
    internal static class GraphPatternsTests
    {
        // jacobi: one Jacobi step of 4 x_i - x_{i-1} - x_{i+1} = b_i (one
        // block, n <= 256 threads), then the residual max |b - A x| of the new
        // x; below tol it clears the loop's condition. combine: v[out] =
        // v[a] + 2 v[b] + 1. cudaGraphSetConditional is a device builtin the
        // driver resolves: the program declares it.
        private const string Source = @"
extern ""C"" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern ""C"" __global__ void jacobi(float* x, const float* b, int n, float tol,
                                  int* iterations, cudaGraphConditionalHandle h) {
  __shared__ float xs[256];
  __shared__ float rs[256];
  int i = threadIdx.x;
  if (i < n) xs[i] = x[i];
  __syncthreads();
  float xn = 0.0f;
  if (i < n) xn = (b[i] + (i > 0 ? xs[i - 1] : 0.0f) + (i < n - 1 ? xs[i + 1] : 0.0f)) / 4.0f;
  __syncthreads();
  if (i < n) { xs[i] = xn; x[i] = xn; }
  __syncthreads();
  if (i < n) {
    float ax = 4.0f * xs[i] - (i > 0 ? xs[i - 1] : 0.0f) - (i < n - 1 ? xs[i + 1] : 0.0f);
    rs[i] = fabsf(b[i] - ax);
  } else rs[i] = 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (i < s) rs[i] = fmaxf(rs[i], rs[i + s]);
    __syncthreads();
  }
  if (i == 0) {
    *iterations += 1;
    if (rs[0] < tol) cudaGraphSetConditional(h, 0);
  }
}
extern ""C"" __global__ void combine(int* v, int out, int a, int b) {
  if (threadIdx.x == 0 && blockIdx.x == 0) v[out] = v[a] + 2 * v[b] + 1;
}
";

        public static void Register()
        {
            Registry.AddGpu("graph patterns: a WHILE node runs Jacobi until the residual on the device is small", Jacobi);
            Registry.AddGpu("graph patterns: a thousand nodes of chained diamonds replay in order", Diamonds);
        }

        private static CudaModule Module(Device d)
        {
            if (Cuda.DriverVersion < 12040)
                throw new SkipException("conditional nodes need a driver of CUDA 12.4 or later");
            return d.Compile(Source, new CompileOptions { Name = "graph_patterns.cu" });
        }

        // The device's iteration on the host, in the same float operations in
        // the same order (each result rounded to float): the new x and the
        // number of steps it took.
        private static float[] JacobiOnTheHost(float[] b, float tol, out int steps)
        {
            int n = b.Length;
            var x = new float[n];
            steps = 0;
            while (true)
            {
                var next = new float[n];
                for (int i = 0; i < n; i++)
                {
                    float left = i > 0 ? x[i - 1] : 0.0f, right = i < n - 1 ? x[i + 1] : 0.0f;
                    next[i] = (float)((float)((float)(b[i] + left) + right) / 4.0f);
                }
                x = next;
                steps++;
                float residual = 0.0f;
                for (int i = 0; i < n; i++)
                {
                    float left = i > 0 ? x[i - 1] : 0.0f, right = i < n - 1 ? x[i + 1] : 0.0f;
                    float ax = (float)((float)((float)(4.0f * x[i]) - left) - right);
                    residual = Math.Max(residual, Math.Abs((float)(b[i] - ax)));
                }
                if (residual < tol)
                    return x;
                Assert.True(steps < 10000, "the host iteration does not converge");
            }
        }

        private static void Jacobi()
        {
            const int n = 64;
            const float tol = 1e-4f;
            var b = new float[n];
            for (int i = 0; i < n; i++)
                b[i] = (float)((i * 7) % 11 - 3);
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var jacobi = m.GetKernel("jacobi"))
            using (var x = d.AllocateFrom(new float[n]))
            using (var bb = d.AllocateFrom(b))
            using (var iterations = d.AllocateFrom(new[] { 0 }))
            using (var g = CudaGraph.Create(d))
            {
                ulong h = g.CreateConditionalHandle(1);
                using (var loop = g.AddConditionalNode(null, h, ConditionalType.While, 1))
                using (var body = loop.GetBody(0))
                    body.AddKernelNode(null, jacobi, new LaunchConfig(1, n), x, bb, n, tol, iterations, h).Dispose();
                using (var exec = g.Instantiate())
                    exec.Launch();
                d.Synchronize();
                int steps;
                float[] want = JacobiOnTheHost(b, tol, out steps);
                Assert.True(steps > 5, "the host converged in " + steps + " steps");
                Assert.Equal(steps, iterations.ToArray()[0], "the device's iterations");
                float[] got = x.ToArray();
                for (int i = 0; i < n; i++)
                    Assert.True(Math.Abs(got[i] - want[i]) <= 1e-5f,
                        "x[" + i + "] is " + got[i].ToString("R") + ", the host's " + want[i].ToString("R"));
            }
        }

        private static void Diamonds()
        {
            // 333 diamonds: top -> (left, right) -> bottom, each bottom the next
            // top; with the first top, 1 + 333 * 3 = 1000 kernel nodes. Node k
            // writes v[k] from its dependencies' slots (the first top from
            // slot 0 itself).
            const int diamonds = 333, nodes = 1 + 3 * diamonds;
            var aOf = new int[nodes];
            var bOf = new int[nodes];
            var made = new GraphNode[nodes];
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var combine = m.GetKernel("combine"))
            using (var v = d.Allocate<uint>(nodes))
            using (var g = CudaGraph.Create(d))
            {
                try
                {
                    Action<int, int, int, GraphNode> add = (k, a, b, after) =>
                    {
                        aOf[k] = a;
                        bOf[k] = b;
                        made[k] = g.AddKernelNode(after, combine, new LaunchConfig(1, 1), v, k, a, b);
                    };
                    add(0, 0, 0, null);
                    int top = 0;
                    for (int i = 0; i < diamonds; i++)
                    {
                        int left = 1 + 3 * i, right = 2 + 3 * i, bottom = 3 + 3 * i;
                        add(left, top, top, made[top]);
                        add(right, top, left, made[top]);
                        // The right node reads left's slot: it must run after left too.
                        made[right].AddDependency(made[left]);
                        add(bottom, left, right, made[left]);
                        made[bottom].AddDependency(made[right]);
                        top = bottom;
                    }
                    Assert.Equal((long)nodes, g.NodeCount, "node count");
                    Assert.Equal(2L, made[3].DependencyCount, "the first bottom's dependencies");
                    // The host's answer, modulo 2^32 as the device's ints wrap.
                    var want = new uint[nodes];
                    unchecked
                    {
                        for (int k = 0; k < nodes; k++)
                            want[k] = want[aOf[k]] + 2u * want[bOf[k]] + 1u;
                    }
                    using (var exec = g.Instantiate())
                    {
                        for (int replay = 0; replay < 3; replay++)
                        {
                            v.Memset(0);
                            exec.Launch();
                            d.Synchronize();
                            uint[] got = v.ToArray();
                            for (int k = 0; k < nodes; k++)
                                Assert.Equal(want[k], got[k], "replay " + replay + " node " + k);
                        }
                    }
                }
                finally
                {
                    foreach (var node in made)
                        if (node != null)
                            node.Dispose();
                }
            }
        }
    }
}
