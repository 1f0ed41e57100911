// An executable graph changed in place, as tests/c/gpu_graph_update_test.cc
// and tests/python/test_graph_update.py test it: every node kind's
// parameters updated without instantiating again, nodes disabled and
// enabled, a 3D copy node, a kernel that launches a device graph
// (fire-and-forget, then tail launch), and the refusals with the core's
// words.

using System;

namespace Cuabi.Tests
{
    internal static class GraphUpdateTests
    {
        // cudaGraphLaunch is a device builtin the driver resolves, as
        // cudaGraphSetConditional is: the program declares it.
        private const string Source = @"
typedef struct CUgraphExec_st* cudaGraphExec_t;
extern ""C"" __device__ __cudart_builtin__ cudaError_t cudaGraphLaunch(
    cudaGraphExec_t graph, cudaStream_t stream);
extern ""C"" __global__ void axpb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
extern ""C"" __global__ void axmb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] - b;
}
extern ""C"" __global__ void put(int* where, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *where = value;
}
extern ""C"" __global__ void bump(int* counter, int by) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(counter, by);
}
extern ""C"" __global__ void launch_graph(unsigned long long graph, unsigned long long mode,
                                        int* answer) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *answer = (int)cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)mode);
}
";

        // The device-side launch modes (cuda_device_runtime_api.h's values).
        private const ulong TailLaunch = 0x0100000000000000UL;
        private const ulong FireAndForget = 0x0200000000000000UL;

        public static void Register()
        {
            Registry.AddGpu("graph updates: every node kind takes new parameters without instantiating again", EveryKind);
            Registry.AddGpu("graph updates: nodes are disabled and enabled again", EnableDisable);
            Registry.AddGpu("graph updates: the refusals name what was wrong", Refusals);
            Registry.AddGpu("graph updates: a 3D copy node copies a box into pitched memory and an array", Copy3DNode);
            Registry.AddGpu("graph updates: a kernel launches a device graph, fire-and-forget then tail", DeviceLaunch);
        }

        private static CudaModule Module(Device d)
        {
            if (Cuda.DriverVersion < 12040)
                throw new SkipException("these updates need a driver of CUDA 12.4 or later");
            return d.Compile(Source, new CompileOptions { Name = "graph_update.cu" });
        }

        private static void Run(CudaGraphExec exec, CudaStream s)
        {
            exec.Launch(s);
            s.Synchronize();
        }

        private static void EveryKind()
        {
            const int n = 2048;
            long bytes = n * 4L;
            var x = new float[n];
            var y = new float[n];
            for (int i = 0; i < n; i++)
            {
                x[i] = (i % 61) - 7.0f;
                y[i] = i % 13;
            }
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var axpb = m.GetKernel("axpb"))
            using (var axmb = m.GetKernel("axmb"))
            using (var hin = d.AllocatePinned<float>(2 * n))
            using (var hout = d.AllocatePinned<float>(2 * n))
            using (var a = d.Allocate<float>(n))
            using (var b = d.Allocate<float>(n))
            using (var c = d.Allocate<float>(n))
            using (var flags = d.Allocate<uint>(16))
            using (var start = d.CreateEvent())
            using (var ev1 = d.CreateEvent())
            using (var ev2 = d.CreateEvent())
            using (var g = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                var both = new float[2 * n];
                Array.Copy(x, both, n);
                Array.Copy(y, 0, both, n, n);
                hin.CopyFrom(both);
                flags.Memset(0);
                int firstCalls = 0, secondCalls = 0, last = 0;
                // upload(hin[0:n] -> a) -> axpb(a) -> copy(a -> b) -> fill(flags)
                // -> download(b -> hout[0:n]) -> host -> record ev1
                using (var up = g.AddUploadNode(null, a, 0, hin, 0, bytes))
                using (var kern = g.AddKernelNode(up, axpb, new LaunchConfig(8, 128), a, n, 2.0f, 1.0f))
                using (var copy = g.AddCopyNode(kern, b, 0, a, 0, bytes))
                using (var fill = g.AddFillNode(copy, flags, 0, 0x11, 4, 4))
                using (var down = g.AddDownloadNode(fill, hout, 0, b, 0, bytes))
                using (var host = g.AddHostNode(down, () => { firstCalls++; last = 1; }))
                using (var rec = g.AddEventRecordNode(host, ev1))
                using (var exec = g.Instantiate())
                {
                    start.Record(s);
                    Run(exec, s);
                    float[] got = hout.ToArray();
                    for (int i = 0; i < n; i++)
                        Assert.Equal(2.0f * x[i] + 1.0f, got[i], "first launch, element " + i);
                    Assert.Equal(0x11u, flags.ToArray()[0], "the first fill");
                    Assert.Equal(1, last, "the first host function");
                    Assert.True(CudaEvent.ElapsedMilliseconds(start, ev1) >= 0.0f, "the record node recorded the first event");
                    Assert.Throws<CudaException>(() => CudaEvent.ElapsedMilliseconds(start, ev2),
                        "the second event, recorded by nothing yet");

                    // New parameters for every node: the upload reads the second
                    // half of hin into c, the kernel becomes axmb (a = 3, b = 0.5)
                    // on c, the copy copies c to b, the fill writes 0x22 further
                    // on, the download writes the second half of hout, the host
                    // node calls another function, the record node records ev2.
                    exec.SetUploadNode(up, c, 0, hin, bytes, bytes);
                    exec.SetKernelNode(kern, axmb, new LaunchConfig(4, 256), c, n, 3.0f, 0.5f);
                    exec.SetCopyNode(copy, b, 0, c, 0, bytes);
                    exec.SetFillNode(fill, flags, 16, 0x22, 4, 4);
                    exec.SetDownloadNode(down, hout, bytes, b, 0, bytes);
                    exec.SetHostNode(host, () => { secondCalls++; last = 2; });
                    exec.SetEventNode(rec, ev2);
                    // Released handles do not matter: the executable graph keeps what it uses.
                    axmb.Dispose();
                    c.Dispose();
                    start.Record(s);
                    Run(exec, s);
                    got = hout.ToArray();
                    for (int i = 0; i < n; i++)
                        Assert.Equal(3.0f * y[i] - 0.5f, got[n + i], "updated, element " + i);
                    uint[] f = flags.ToArray();
                    Assert.Equal(0x11u, f[0], "the first fill's range is left as it was");
                    Assert.Equal(0x22u, f[4], "the updated fill");
                    Assert.Equal(1, firstCalls, "calls of the first host function");
                    Assert.Equal(1, secondCalls, "calls of the new host function");
                    Assert.Equal(2, last, "the host function called last");
                    Assert.True(CudaEvent.ElapsedMilliseconds(start, ev2) >= 0.0f, "the updated record node recorded the second event");

                    // The graph itself is unchanged: a new instance does the first work.
                    hout.CopyFrom(new float[2 * n]);
                    using (var again = g.Instantiate())
                        Run(again, s);
                    got = hout.ToArray();
                    for (int i = 0; i < n; i++)
                        Assert.Equal(2.0f * x[i] + 1.0f, got[i], "a new instance, element " + i);
                    Assert.Equal(2, firstCalls, "a new instance calls the first host function");
                }
            }
        }

        private static void EnableDisable()
        {
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var bump = m.GetKernel("bump"))
            using (var counter = d.Allocate<int>(4))
            using (var g = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                counter.Memset(0);
                int calls = 0;
                using (var k = g.AddKernelNode(null, bump, new LaunchConfig(1, 1), counter, 5))
                using (var fill = g.AddFillNode(k, counter, 8, 7, 4, 1))
                using (var host = g.AddHostNode(fill, () => calls++))
                using (var exec = g.Instantiate())
                {
                    Assert.Equal(1, exec.GetNodeEnabled(k), "a new node");
                    Run(exec, s);
                    Assert.Equal(5, counter.ToArray()[0], "the first launch");
                    exec.SetNodeEnabled(k, 0);
                    exec.SetNodeEnabled(fill, 0);
                    Assert.Equal(0, exec.GetNodeEnabled(k), "a disabled node");
                    Assert.Equal(0, exec.GetNodeEnabled(fill), "a disabled fill node");
                    counter.Memset(8, 0, 4);
                    Run(exec, s);
                    int[] v = counter.ToArray();
                    Assert.Equal(5, v[0], "a disabled kernel node does not run");
                    Assert.Equal(0, v[2], "a disabled fill node does not run");
                    Assert.Equal(2, calls, "the nodes after a disabled one still run");
                    exec.SetNodeEnabled(k, 1);
                    exec.SetNodeEnabled(fill, 1);
                    Assert.Equal(1, exec.GetNodeEnabled(fill), "a fill node enabled again");
                    Run(exec, s);
                    v = counter.ToArray();
                    Assert.Equal(10, v[0], "enabled again: the kernel");
                    Assert.Equal(7, v[2], "enabled again: the fill");
                    // A host node cannot be disabled: the driver's rule, said before it is asked.
                    var e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => exec.SetNodeEnabled(host, 0), "a host node disabled");
                    Assert.Contains("the node is a host node", e.Message, "a host node disabled");
                    e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => exec.GetNodeEnabled(host), "a host node's state");
                    Assert.Contains("the node is a host node", e.Message, "a host node's state");
                }
            }
        }

        private static void Refusals()
        {
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var axpb = m.GetKernel("axpb"))
            using (var put = m.GetKernel("put"))
            using (var a = d.Allocate<float>(1024))
            using (var b = d.Allocate<float>(1024))
            using (var pinned = d.AllocatePinned<float>(1024))
            using (var ev = d.CreateEvent())
            using (var g = CudaGraph.Create(d))
            using (var other = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                var cfg = new LaunchConfig(1, 32);
                using (var k = g.AddKernelNode(null, axpb, cfg, a, 1024, 1.0f, 0.0f))
                using (var copy = g.AddCopyNode(k, b, 0, a, 0, 4096))
                using (var fill = g.AddFillNode(copy, a, 0, 1, 4, 16))
                using (var down = g.AddDownloadNode(fill, pinned, 0, b, 0, 64))
                using (var rec = g.AddEventRecordNode(down, ev))
                using (var foreign = other.AddFillNode(null, a, 0, 1, 4, 16))
                using (var exec = g.Instantiate())
                {
                    // A kernel of another signature.
                    var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetKernelNode(k, put, cfg, a, 3), "another signature");
                    Assert.Contains("keeps the kernel's signature", e.Message, "another signature");
                    Assert.Contains("'axpb'", e.Message, "another signature");
                    // Launch attributes stay as instantiated.
                    var prio = new LaunchConfig(1, 32) { Priority = 1 };
                    e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => exec.SetKernelNode(k, axpb, prio, a, 1024, 1.0f, 0.0f), "a priority");
                    Assert.Contains("stay as instantiated", e.Message, "a priority");
                    // A node of another kind.
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetKernelNode(copy, axpb, cfg, a, 1024, 1.0f, 0.0f), "a copy node as a kernel node");
                    Assert.Contains("the node is a copy node, not a kernel node", e.Message, "a copy node as a kernel node");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetCopyNode(fill, b, 0, a, 0, 64), "a fill node as a copy node");
                    Assert.Contains("the node is a fill node, not a copy node", e.Message, "a fill node as a copy node");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetUploadNode(down, b, 0, pinned, 0, 64), "a download node as an upload node");
                    Assert.Contains("a download node, not an upload node", e.Message, "a download node as an upload node");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetEventNode(fill, ev), "a fill node as an event node");
                    Assert.Contains("the node is a fill node, not an event record or event wait node", e.Message, "a fill node as an event node");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetHostNode(fill, () => { }), "a fill node as a host node");
                    Assert.Contains("the node is a fill node, not a host node", e.Message, "a fill node as a host node");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetHostNode(rec, null), "no host function");
                    Assert.Contains("fn is NULL", e.Message, "no host function");
                    // A node of another graph.
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetFillNode(foreign, a, 0, 2, 4, 16), "a node of another graph");
                    Assert.Contains("not a node of the graph", e.Message, "a node of another graph");
                    // Ranges checked as adding the node checks them.
                    e = Assert.ThrowsCuda(CudaStatus.OutOfRange, () => exec.SetCopyNode(copy, b, 1, a, 0, 4096), "a copy past the end");
                    Assert.Contains("reaches past the end of the 4096-byte buffer", e.Message, "a copy past the end");
                    Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetCopyNode(copy, a, 0, a, 8, 64), "overlapping ranges");
                    Assert.ThrowsCuda(CudaStatus.OutOfRange, () => exec.SetDownloadNode(down, pinned, 4090, b, 0, 64), "a download past the pinned memory's end");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => exec.SetFillNode(fill, a, 0, 1, 3, 16), "3-byte elements");
                    Assert.Contains("expected 1, 2 or 4", e.Message, "3-byte elements");
                    // Nothing refused changed the executable graph: it still runs as built.
                    Run(exec, s);
                }
            }
        }

        private static void Copy3DNode()
        {
            const int w = 40, h = 24;
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var host = d.AllocatePinned<float>(w * h))
            using (var back = d.AllocatePinned<float>(w * h))
            using (var pitched = d.AllocatePitched<float>(w, h))
            using (var arr = d.CreateArray(ArrayFormat.F32, 1, w, h))
            using (var g = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                var values = new float[w * h];
                for (int i = 0; i < w * h; i++)
                    values[i] = i * 0.25f;
                host.CopyFrom(values);
                var minusOne = new float[w * h];
                for (int i = 0; i < w * h; i++)
                    minusOne[i] = -1.0f;
                back.CopyFrom(minusOne);
                new Copy3D(CopyEnd.Host(new float[w * h], w * 4), CopyEnd.Array(arr), w * 4, h).Copy();
                using (var n1 = g.AddCopy3DNode(null, new Copy3D(CopyEnd.Host(host, w * 4).At(8 * 4, 4), CopyEnd.Device(pitched), 24 * 4, 16)))
                using (var n2 = g.AddCopy3DNode(n1, new Copy3D(CopyEnd.Device(pitched), CopyEnd.Array(arr).At(8 * 4, 4), 24 * 4, 16)))
                using (var n3 = g.AddCopy3DNode(n2, new Copy3D(CopyEnd.Array(arr), CopyEnd.Host(back, w * 4), w * 4, h)))
                {
                    Assert.Equal(GraphNodeType.Memcpy, n2.Type, "a 3D copy node's type");
                    pitched.Dispose(); // the graph keeps it
                    using (var exec = g.Instantiate())
                    {
                        Run(exec, s);
                        float[] got = back.ToArray();
                        for (int y = 0; y < h; y++)
                            for (int x = 0; x < w; x++)
                            {
                                bool inside = y >= 4 && y < 20 && x >= 8 && x < 32;
                                Assert.Equal(inside ? values[y * w + x] : 0.0f, got[y * w + x], "(" + x + ", " + y + ")");
                            }
                        using (var s1 = d.Allocate<byte>(64))
                        using (var s2 = d.Allocate<byte>(64))
                        {
                            var e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => exec.SetCopyNode(n2, s1, 0, s2, 0, 64), "a 3D copy node updated");
                            Assert.Contains("3D copy node", e.Message, "a 3D copy node updated");
                        }
                        // Refusals: a box past the array, an empty box, a managed array.
                        Assert.ThrowsCuda(CudaStatus.OutOfRange,
                            () => g.AddCopy3DNode(null, new Copy3D(CopyEnd.Array(arr).At(0, 8), CopyEnd.Host(back, w * 4), w * 4, h)),
                            "a box past the array");
                        var empty = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                            () => g.AddCopy3DNode(null, new Copy3D(CopyEnd.Array(arr), CopyEnd.Host(back, w * 4), 0, h)),
                            "an empty box");
                        Assert.Contains("width_bytes is 0", empty.Message, "an empty box");
                        Assert.Throws<ArgumentException>(
                            () => g.AddCopy3DNode(null, new Copy3D(CopyEnd.Host(values, w * 4), CopyEnd.Array(arr), w * 4, h)),
                            "a managed array in a graph's copy");
                    }
                }
            }
        }

        private static void DeviceLaunch()
        {
            using (var d = Device.Get(0))
            using (var m = Module(d))
            using (var bump = m.GetKernel("bump"))
            using (var launcher = m.GetKernel("launch_graph"))
            using (var words = d.Allocate<int>(4))
            using (var child = CudaGraph.Create(d))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                child.AddKernelNode(null, bump, new LaunchConfig(1, 1), words, 3).Dispose();
                using (var deviceGraph = child.InstantiateWithFlags(GraphInstantiateFlags.DeviceLaunch | GraphInstantiateFlags.Upload, s))
                {
                    ulong handle = deviceGraph.LaunchHandle;
                    Assert.True(handle != 0, "the launch handle is 0");
                    ulong answer = words.DevicePointer + 4;
                    foreach (ulong mode in new[] { FireAndForget, TailLaunch })
                    {
                        words.Memset(0);
                        using (var host = CudaGraph.Create(d))
                        {
                            host.AddKernelNode(null, launcher, new LaunchConfig(1, 1), handle, mode, answer).Dispose();
                            using (var exec = host.Instantiate())
                            {
                                Run(exec, s);
                                Run(exec, s);
                            }
                        }
                        int[] w = words.ToArray();
                        Assert.Equal(0, w[1], "mode " + mode.ToString("x") + ": cudaGraphLaunch's answer");
                        Assert.Equal(6, w[0], "mode " + mode.ToString("x") + ": two launches, each adding 3");
                    }
                    // The driver refuses a stream launch of a kernel that launches a graph.
                    var e = Assert.Throws<CudaException>(
                        () => launcher.Launch(new Dim3(1), new Dim3(1), s, handle, FireAndForget, answer),
                        "a stream launch of the launching kernel");
                    Assert.Contains("cuLaunchKernel", e.Message, "a stream launch of the launching kernel");
                    s.Synchronize(); // the refusal is not sticky
                }
            }
        }
    }
}
