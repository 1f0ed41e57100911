// Graphs built node by node, as tests/c/gpu_graph_nodes_test.cc tests them:
// a hand-built upload -> kernel -> download graph with a host node and an
// event record, checked against the same kernel on the host; a WHILE node
// counting down on the device; IF/ELSE and a SWITCH chosen on the device;
// clone, DOT dump and instantiation flags; the core's refusals.

using System;
using System.IO;

namespace Cuabi.Tests
{
    internal static class GraphNodeTests
    {
        // cudaGraphSetConditional is a device builtin the driver resolves: the
        // program declares it (see the README).
        private const string Source = @"
extern ""C"" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern ""C"" __global__ void axpb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
extern ""C"" __global__ void count_down(int* counter, int* iterations,
                                      cudaGraphConditionalHandle h) {
  *iterations += 1;
  if (--*counter <= 0) cudaGraphSetConditional(h, 0);
}
extern ""C"" __global__ void set_condition(const int* value, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, (unsigned)*value);
}
extern ""C"" __global__ void put(int* where, int value) { *where = value; }
";

        public static void Register()
        {
            Registry.AddGpu("graph nodes: a hand-built graph matches the same work on the host", HandBuilt);
            Registry.AddGpu("graph nodes: a WHILE node loops until device code clears the condition", WhileLoop);
            Registry.AddGpu("graph nodes: IF/ELSE and SWITCH choose their bodies on the device", IfAndSwitch);
            Registry.AddGpu("graph nodes: clone, DOT dump and instantiation flags", CloneDotFlags);
            Registry.AddGpu("graph nodes: refusals carry the core's words", Refusals);
        }

        private static CudaModule Module(Device d)
        {
            if (Cuda.DriverVersion < 12040)
                throw new SkipException("conditional nodes need a driver of CUDA 12.4 or later");
            return d.Compile(Source, new CompileOptions { Name = "graph_nodes.cu" });
        }

        private static void HandBuilt()
        {
            const int n = 4096;
            const float a = 3.0f, b = -1.25f;
            var hx = new float[n];
            for (int i = 0; i < n; i++)
                hx[i] = (i % 97) * 0.5f;
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var axpb = m.GetKernel("axpb"))
            using (var hin = d.AllocatePinned<float>(n))
            using (var hout = d.AllocatePinned<float>(n))
            using (var buf = d.Allocate<float>(n))
            using (var g = CudaGraph.Create(d))
            using (var ev = d.CreateEvent())
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                hin.CopyFrom(hx);
                int calls = 0;
                using (var up = g.AddUploadNode(null, buf, 0, hin, 0, n * 4L))
                using (var kern = g.AddKernelNode(up, axpb, new LaunchConfig(16, 256), buf, n, a, b))
                using (var down = g.AddDownloadNode(kern, hout, 0, buf, 0, n * 4L))
                using (var host = g.AddHostNode(down, () => calls++))
                using (var rec = g.AddEventRecordNode(down, ev))
                {
                    Assert.Equal(5L, g.NodeCount, "node count");
                    Assert.Equal(GraphNodeType.Kernel, kern.Type, "kernel node type");
                    Assert.Equal(GraphNodeType.Memcpy, up.Type, "upload node type");
                    Assert.Equal(GraphNodeType.Host, host.Type, "host node type");
                    Assert.Equal(GraphNodeType.EventRecord, rec.Type, "record node type");
                    Assert.Equal(1L, kern.DependencyCount, "the kernel's dependencies");
                    Assert.Equal(2L, down.DependentCount, "the download's dependents");
                    using (var dep = kern.GetDependency(0))
                        Assert.Equal(GraphNodeType.Memcpy, dep.Type, "the kernel's dependency");
                }
                using (var exec = g.Instantiate())
                {
                    exec.Launch(s);
                    s.Synchronize();
                }
                Assert.Equal(1, calls, "host node calls");
                float[] got = hout.ToArray();
                for (int i = 0; i < n; i++)
                    Assert.Equal(a * hx[i] + b, got[i], "element " + i);
                using (var failing = CudaGraph.Create(d))
                {
                    failing.AddHostNode(null, () => { throw new InvalidOperationException("host node asked to fail"); }).Dispose();
                    using (var exec = failing.Instantiate())
                    {
                        exec.Launch(s);
                        var e = Assert.ThrowsCuda(CudaStatus.HostFunction, () => s.Synchronize(), "a failing host node");
                        Assert.Contains("host node asked to fail", e.Message, "the host node's message");
                        s.Synchronize();
                    }
                }
            }
        }

        private static void WhileLoop()
        {
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var countDown = m.GetKernel("count_down"))
            using (var counter = d.Allocate<int>(1))
            using (var iterations = d.Allocate<int>(1))
            using (var g = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                ulong h = g.CreateConditionalHandle(1);
                using (var loop = g.AddConditionalNode(null, h, ConditionalType.While, 1))
                using (var body = loop.GetBody(0))
                    body.AddKernelNode(null, countDown, new LaunchConfig(1, 1), counter, iterations, h).Dispose();
                using (var exec = g.Instantiate())
                {
                    foreach (int start in new[] { 7, 1, 23 })
                    {
                        counter.CopyFrom(new[] { start });
                        iterations.CopyFrom(new[] { 0 });
                        exec.Launch(s);
                        s.Synchronize();
                        Assert.Equal(start, iterations.ToArray()[0], "iterations from " + start);
                    }
                }
            }
        }

        private static void IfAndSwitch()
        {
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var setCondition = m.GetKernel("set_condition"))
            using (var put = m.GetKernel("put"))
            using (var value = d.Allocate<int>(1))
            using (var output = d.Allocate<int>(1))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                foreach (bool isIf in new[] { true, false })
                {
                    uint size = isIf ? 2u : 4u;
                    int[] cases = isIf ? new[] { 1, 0, 5 } : new[] { 2, 0, 3, 1, 4 };
                    using (var g = CudaGraph.Create(d))
                    {
                        ulong h = g.CreateConditionalHandle(0);
                        using (var setter = g.AddKernelNode(null, setCondition, new LaunchConfig(1, 1), value, h))
                        using (var node = g.AddConditionalNode(setter, h,
                                   isIf ? ConditionalType.If : ConditionalType.Switch, size))
                        {
                            for (int i = 0; i < size; i++)
                            {
                                int mark = isIf ? (i == 0 ? 100 : 200) : 10 * i + 1;
                                using (var body = node.GetBody(i))
                                    body.AddKernelNode(null, put, new LaunchConfig(1, 1), output, mark).Dispose();
                            }
                        }
                        using (var exec = g.Instantiate())
                        {
                            foreach (int v in cases)
                            {
                                value.CopyFrom(new[] { v });
                                output.CopyFrom(new[] { -1 });
                                exec.Launch(s);
                                s.Synchronize();
                                int want = isIf ? (v != 0 ? 100 : 200) : (v < 4 ? 10 * v + 1 : -1);
                                Assert.Equal(want, output.ToArray()[0], (isIf ? "IF " : "SWITCH ") + v);
                            }
                        }
                    }
                }
            }
        }

        private static void CloneDotFlags()
        {
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var put = m.GetKernel("put"))
            using (var output = d.Allocate<int>(1))
            using (var g = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                using (var first = g.AddKernelNode(null, put, new LaunchConfig(1, 1), output, 41))
                    g.AddEmptyNode(first).Dispose();
                using (var copy = g.Clone())
                {
                    g.AddEmptyNode().Dispose();
                    Assert.Equal(2L, copy.NodeCount, "the clone's nodes");
                    Assert.Equal(3L, g.NodeCount, "the graph's nodes");
                }
                string path = Path.Combine(Path.GetTempPath(), "cuabi_graph_" + Guid.NewGuid().ToString("N") + ".dot");
                g.WriteDot(path);
                string text = File.ReadAllText(path);
                File.Delete(path);
                Assert.Contains("digraph", text, "the DOT text");
                Assert.Contains("put", text, "the DOT text names the kernel");
                using (var exec = g.InstantiateWithFlags(GraphInstantiateFlags.Upload, s))
                {
                    exec.Launch(s);
                    s.Synchronize();
                }
                Assert.Equal(41, output.ToArray()[0], "the node ran");
            }
        }

        private static void Refusals()
        {
            using (var d = Device.Get(0))
            using (var buf = d.Allocate<byte>(64))
            using (var g = CudaGraph.Create(d))
            using (var other = CudaGraph.Create(d))
            using (var a = g.AddEmptyNode())
            using (var b = g.AddEmptyNode(a))
            using (var foreign = other.AddEmptyNode())
            {
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => g.AddEmptyNode(foreign), "a node of another graph");
                Assert.Contains("node of another graph", e.Message, "the refusal");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => a.AddDependency(b), "a cycle");
                Assert.Contains("would make a cycle", e.Message, "the refusal");
                e = Assert.ThrowsCuda(CudaStatus.OutOfRange, () => g.AddCopyNode(null, buf, 32, buf, 0, 33), "a copy past the end");
                Assert.Contains("reaches past the end", e.Message, "the refusal");
                ulong h = g.CreateConditionalHandle(0);
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => g.AddConditionalNode(null, h, ConditionalType.Switch, 0),
                    "a SWITCH with no case");
                Assert.Contains("at least 1 case", e.Message, "the refusal");
                // The driver numbers every graph's handles alike: the other
                // graph's second handle is a number this graph never made.
                other.CreateConditionalHandle(0);
                ulong hOther = other.CreateConditionalHandle(0);
                Assert.True(hOther != h, "the other graph's second handle is " + hOther + ", as this graph's");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => g.AddConditionalNode(null, hOther, ConditionalType.If, 1),
                    "a handle of another graph");
                Assert.Contains("not made for this graph", e.Message, "the refusal");
                // The driver clones no graph with a conditional node, nor a body.
                using (var cond = g.AddConditionalNode(null, h, ConditionalType.If, 1))
                using (var body = cond.GetBody(0))
                {
                    foreach (var which in new[] { g, body })
                    {
                        e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => which.Clone(), "a clone of a graph with a conditional node");
                        Assert.Contains("the driver clones no", e.Message, "the refusal");
                    }
                }
            }
        }
    }
}
