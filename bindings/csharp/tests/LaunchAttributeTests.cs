// Launch attributes of LaunchConfig (access-policy window, sync and
// cluster-scheduling policies, memory-sync domain and map, shared-memory
// carve-out, launch completion event, device-updatable kernel node), as
// tests/c/gpu_launch_attributes_test.cc tests them: through a plain launch,
// a prepared launch (a plan) and a captured graph's kernel node, each checked
// against SAXPY on the host; the completion event orders a second stream; the
// core's refusals carry their bound.

using System;

namespace Cuabi.Tests
{
    internal static class LaunchAttributeTests
    {
        // CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE and
        // CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT in cuda.h.
        private const int MaxAccessPolicyWindow = 109;
        private const int MemSyncDomainCount = 126;
        private const int N = 1 << 20;

        public static void Register()
        {
            Registry.Add("launch attributes: unset by default; each setter marks the config extended", Defaults);
            Registry.AddGpu("launch attributes: every attribute the device honours, on a plain launch", PlainLaunch);
            Registry.AddGpu("launch attributes: a plan with every attribute and a completion event, launched twice", Plan);
            Registry.AddGpu("launch attributes: a captured kernel node takes them; a device-updatable node only in a capture",
                CapturedNode);
            Registry.AddGpu("launch attributes: the completion event orders a second stream", CompletionEventOrders);
            Registry.AddGpu("launch attributes: refusals name the device's bound", Refusals);
            Registry.AddGpu("limits: device printf past the default FIFO prints every line once the FIFO is raised (a child process)",
                PrintfBeyondTheDefaultFifo);
        }

        // ------------------------------------------------------------------
        // Device printf through a raised FIFO, in a child process: the FIFO
        // can only change before a process's first printing kernel.
        // ------------------------------------------------------------------

        private const int PrintfLines = 40000;
        private const string PrintfSource = @"
extern ""C"" __global__ void chatter(int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) printf(""cuabi printf line %08d ..............................\n"", i);
}
";

        /// <summary>The child "printf-raised": raises the FIFO to 16 MiB, then prints <see cref="PrintfLines"/> lines (about 2.5 MB of records, past the 1 MiB default).</summary>
        public static int ServeChild(string mode, string[] extra)
        {
            if (mode != "printf-raised")
                return -1;
            using (var d = Device.Get(0))
            {
                d.SetLimit(Limit.PrintfFifoSize, 16L << 20);
                using (var m = d.Compile(PrintfSource, new CompileOptions { Name = "chatter.cu" }))
                using (var k = m.GetKernel("chatter"))
                {
                    k.Launch((PrintfLines + 127) / 128, 128, null, PrintfLines);
                    d.Synchronize();
                }
            }
            return 0;
        }

        private static void PrintfBeyondTheDefaultFifo()
        {
            Child.Result r = Child.Run("printf-raised", new System.Collections.Generic.Dictionary<string, string>());
            Assert.Equal(0, r.ExitCode, "the child's exit code (stderr: " + r.Stderr + ")");
            int lines = 0;
            foreach (string line in r.Stdout.Split('\n'))
                if (line.StartsWith("cuabi printf line ", StringComparison.Ordinal))
                    lines++;
            Assert.Equal(PrintfLines, lines, "printf lines that came out");
        }

        private static float[] RandomFloats(int n, int seed)
        {
            var r = new Random(seed);
            var v = new float[n];
            for (int i = 0; i < n; i++)
                v[i] = (float)(r.NextDouble() * 200.0 - 100.0);
            return v;
        }

        private static void Check(float a, float[] x, float[] y, float[] got, string what)
        {
            for (int i = 0; i < got.Length; i++)
            {
                float want = a * x[i] + y[i];
                if (Math.Abs(got[i] - want) > 1e-5 + 1e-5 * Math.Abs(want))
                    throw new TestFailure(string.Format("{0}: out[{1}] = {2}, expected {3}", what, i, got[i], want));
            }
        }

        private static LaunchConfig Attributed(Device d, DeviceBuffer<float> x)
        {
            var c = new LaunchConfig(N / 256, 256)
            {
                MemSyncDomain = MemSyncDomain.Remote,
                SharedCarveout = 25,
            };
            int most = d.GetAttribute(MaxAccessPolicyWindow);
            if (most > 0)
            {
                AccessPolicyWindow w = AccessPolicyWindow.Default();
                w.Base = x.DevicePointer;
                w.Bytes = Math.Min(x.SizeInBytes, most);
                w.HitRatio = 0.75f;
                c.AccessPolicyWindow = w;
            }
            if (d.GetAttribute(MemSyncDomainCount) >= 2)
            {
                c.MemSyncDomainMapDefault = 0;
                c.MemSyncDomainMapRemote = 1;
            }
            if (d.ComputeCapability.Major >= 9)
                c.ClusterScheduling = ClusterSchedulingPolicy.Spread;
            return c;
        }

        private static void Defaults()
        {
            var c = new LaunchConfig(4, 32);
            Assert.True(c.SharedCarveout == null && c.MemSyncDomain == null && c.AccessPolicyWindow == null &&
                        c.SyncPolicy == null && c.CompletionEvent == null && !c.DeviceUpdatableKernelNode,
                "a new config sets no attribute");
            c.SharedCarveout = 10;
            Assert.Contains("shared carve-out 10%", c.ToString(), "ToString names the carve-out");
            c.DeviceUpdatableKernelNode = true;
            Assert.True((c.Flags & LaunchFlags.DeviceUpdatableKernelNode) != 0, "the device-updatable flag");
        }

        private static void PlainLaunch()
        {
            float[] hx = RandomFloats(N, 31), hy = RandomFloats(N, 32);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(N))
            {
                k.Launch(Attributed(d, x), s, 2.0f, x, y, output, (ulong)N);
                s.Synchronize();
                Check(2.0f, hx, hy, output.ToArray(), "plain launch");
            }
        }

        private static void Plan()
        {
            float[] hx = RandomFloats(N, 33), hy = RandomFloats(N, 34);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            using (var started = d.CreateEvent(EventFlags.DisableTiming))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(N))
            {
                LaunchConfig c = Attributed(d, x);
                c.CompletionEvent = started;
                using (var plan = k.Prepare(c, s))
                {
                    foreach (float a in new[] { 2.0f, 4.0f })
                    {
                        plan.SetArguments(a, x, y, output, (ulong)N);
                        plan.Launch();
                        s.Synchronize();
                        Check(a, hx, hy, output.ToArray(), "plan, a = " + a);
                    }
                }
                started.Synchronize();
                Assert.True(started.Query(), "the completion event was recorded");
            }
        }

        private static void CapturedNode()
        {
            float[] hx = RandomFloats(N, 35), hy = RandomFloats(N, 36);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(N))
            {
                var updatable = new LaunchConfig(N / 256, 256) { DeviceUpdatableKernelNode = true };
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Launch(updatable, s, 2.0f, x, y, output, (ulong)N),
                    "a device-updatable launch outside a capture");
                foreach (LaunchConfig c in new[] { Attributed(d, x), updatable })
                {
                    output.Memset(0);
                    d.Synchronize();
                    s.BeginCapture(CaptureMode.ThreadLocal);
                    k.Launch(c, s, 2.0f, x, y, output, (ulong)N);
                    using (CudaGraph graph = s.EndCapture())
                    using (CudaGraphExec exec = graph.Instantiate())
                    {
                        Assert.Equal(1L, graph.KernelNodeCount, "kernel nodes");
                        exec.Upload(s);
                        exec.Launch(s);
                        s.Synchronize();
                        Check(2.0f, hx, hy, output.ToArray(), "captured: " + c);
                    }
                }
            }
        }

        private static void CompletionEventOrders()
        {
            float[] hx = RandomFloats(N, 37), hy = RandomFloats(N, 38);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var first = d.CreateStream(StreamFlags.NonBlocking))
            using (var second = d.CreateStream(StreamFlags.NonBlocking))
            using (var started = d.CreateEvent(EventFlags.DisableTiming))
            using (var finished = d.CreateEvent(EventFlags.DisableTiming))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(N))
            {
                k.Launch(new LaunchConfig(N / 256, 256) { CompletionEvent = started }, first, 3.0f, x, y, output, (ulong)N);
                finished.Record(first);
                // The second stream goes on once every block has started, and
                // once SAXPY has finished.
                second.WaitEvent(started);
                second.WaitEvent(finished);
                second.Synchronize();
                Assert.True(started.Query(), "the completion event was recorded");
                Assert.True(finished.Query(), "the second stream waited for SAXPY");
                Check(3.0f, hx, hy, output.ToArray(), "read after the second stream");
            }
        }

        private static void Refusals()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var x = d.Allocate<float>(N))
            {
                int domains = d.GetAttribute(MemSyncDomainCount);
                var map = new LaunchConfig(N / 256, 256) { MemSyncDomainMapDefault = 0, MemSyncDomainMapRemote = domains };
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Launch(map, null, 2.0f, x, x, x, (ulong)N),
                    "a domain map past the device's domains");
                Assert.Contains("domains 0 to " + (domains - 1), e.Message, "the domain bound");
                var carve = new LaunchConfig(N / 256, 256) { SharedCarveout = 101 };
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Launch(carve, null, 2.0f, x, x, x, (ulong)N),
                    "a carve-out of 101");
                Assert.Contains("outside 0 to 100 percent", e.Message, "the carve-out bound");
                AccessPolicyWindow w = AccessPolicyWindow.Default();
                w.Base = x.DevicePointer;
                w.Bytes = 4096;
                w.HitRatio = 1.5f;
                var ratio = new LaunchConfig(N / 256, 256) { AccessPolicyWindow = w };
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Launch(ratio, null, 2.0f, x, x, x, (ulong)N),
                    "a hit ratio of 1.5");
                Assert.Contains("hit_ratio is 1.500000", e.Message, "the hit-ratio bound");
                var sync = new LaunchConfig(N / 256, 256) { SyncPolicy = SyncPolicy.Spin };
                e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => k.Launch(sync, null, 2.0f, x, x, x, (ulong)N),
                    "a synchronization policy on a launch");
                Assert.Contains("cuabi_stream_set_sync_policy", e.Message, "where the policy goes");
            }
        }
    }
}
