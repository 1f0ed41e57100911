// Extended launches (cooperative, clusters, programmatic dependent launch),
// occupancy, host functions and graph updates: what needs a device, and the
// parts of the binding that can be checked without one.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class ExtendedLaunchTests
    {
        // sm_90 kernels, written without headers: a grid barrier of atomics
        // (safe because a cooperative launch keeps every block resident),
        // distributed shared memory through inline PTX (mapa,
        // barrier.cluster), and programmatic dependent launch (griddepcontrol).
        internal const string Source = @"
extern ""C"" __global__ void coop_sum(const int* in, unsigned long long* partial, unsigned int* arrived,
                                      unsigned long long* total, size_t n)
{
  __shared__ unsigned long long s[256];
  size_t stride = (size_t)gridDim.x * blockDim.x;
  unsigned long long acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
    acc += (unsigned long long)in[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    atomicAdd(arrived, 1u);
    while (atomicAdd(arrived, 0u) < gridDim.x) { }
    __threadfence();
  }
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long t = 0;
    for (unsigned int b = 0; b < gridDim.x; b++)
      t += ((volatile unsigned long long*)partial)[b];
    *total = t;
  }
}

extern ""C"" __global__ void cluster_exchange(int* out)
{
  __shared__ int value;
  unsigned int rank;
  asm volatile(""mov.u32 %0, %%cluster_ctarank;"" : ""=r""(rank));
  if (threadIdx.x == 0) value = (int)(blockIdx.x * 1000u + 7u);
  asm volatile(""barrier.cluster.arrive;\n\tbarrier.cluster.wait;"" ::: ""memory"");
  if (threadIdx.x == 0) {
    unsigned int local = (unsigned int)__cvta_generic_to_shared(&value);
    unsigned int remote;
    int v;
    asm volatile(""mapa.shared::cluster.u32 %0, %1, %2;"" : ""=r""(remote) : ""r""(local), ""r""(rank ^ 1u));
    asm volatile(""ld.shared::cluster.u32 %0, [%1];"" : ""=r""(v) : ""r""(remote) : ""memory"");
    out[blockIdx.x] = v;
    out[gridDim.x + blockIdx.x] = (int)rank;
  }
  asm volatile(""barrier.cluster.arrive;\n\tbarrier.cluster.wait;"" ::: ""memory"");
}

extern ""C"" __global__ void pdl_producer(int* data, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) data[i] = (int)(i * 3 + 1);
  __threadfence();
  asm volatile(""griddepcontrol.launch_dependents;"");
}

extern ""C"" __global__ void pdl_consumer(const int* data, int* out, size_t n)
{
  asm volatile(""griddepcontrol.wait;"" ::: ""memory"");
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = data[i] * 2;
}
";

        public static void Register()
        {
            Registry.Add("launch config: the extended options reach the native struct", ConfigToNative);
            Registry.Add("launch config: prepared launches are told apart by every option", ConfigSameAs);
            Registry.Add("host functions: the trampoline runs the delegate once and frees its handle", TrampolineRuns);
            Registry.Add("host functions: an exception becomes 'Type: message', cut to the buffer", TrampolineCatches);
            Registry.Add("host functions: a refused launch frees the delegate's handle", RefusedHostFuncFrees);
            Registry.AddGpu("cooperative: one launch reduces an array with a grid-wide barrier", CooperativeSum);
            Registry.AddGpu("clusters: 2x1x1 clusters exchange values through distributed shared memory", ClusterExchange);
            Registry.AddGpu("programmatic dependent launch: a consumer waits for its producer", ProgrammaticDependentLaunch);
            Registry.AddGpu("programmatic dependent launch: the programmatic event fires", ProgrammaticEvent);
            Registry.AddGpu("occupancy: suggestions are sane and a suggested launch computes", Occupancy);
            Registry.AddGpu("launch: the extended options through plans and priorities", ExtendedPlans);
            Registry.AddGpu("host functions: run in stream order", HostFunctionsInOrder);
            Registry.AddGpu("host functions: an exception is reported by the next Synchronize, once", HostFunctionThrows);
            Registry.AddGpu("graphs: SAXPY's a changed 100 times in one instantiation", GraphNodeUpdate);
            Registry.AddGpu("graphs: a whole-graph update from a new capture", GraphWholeUpdate);
        }

        // ------------------------------------------------------------------
        // Without a device
        // ------------------------------------------------------------------

        private static void ConfigToNative()
        {
            var plain = new LaunchConfig(4, 32).ToNative();
            Assert.Equal(LaunchFlags.None, plain.flags, "default flags");
            Assert.Equal("0 0 0 0", string.Join(" ", plain.cluster_x, plain.cluster_y, plain.cluster_z, plain.priority), "default cluster and priority");
            Assert.Equal(IntPtr.Zero, plain.programmatic_event, "default programmatic event");
            Assert.True(!new LaunchConfig(4, 32).IsExtended, "a plain configuration counts as extended");

            var c = new LaunchConfig(new Dim3(8, 2), 64, 128)
            {
                Cooperative = true,
                ProgrammaticSerialization = true,
                Cluster = new Dim3(2, 1, 1),
                Priority = -1,
            };
            Assert.True(c.Cooperative && c.ProgrammaticSerialization && !c.ProgrammaticEventAtBlockStart, "flag properties");
            Assert.Equal(LaunchFlags.Cooperative | LaunchFlags.ProgrammaticSerialization, c.Flags, "Flags");
            var n = c.ToNative();
            Assert.Equal("8 2 1 64 1 1 128", string.Join(" ", n.grid_x, n.grid_y, n.grid_z, n.block_x, n.block_y, n.block_z,
                n.shared_mem_bytes), "grid, block, shared");
            Assert.Equal((uint)(LaunchFlags.Cooperative | LaunchFlags.ProgrammaticSerialization), (uint)n.flags, "flags");
            Assert.Equal("2 1 1 -1", string.Join(" ", n.cluster_x, n.cluster_y, n.cluster_z, n.priority), "cluster and priority");
            Assert.Equal((ulong)Marshal.SizeOf(typeof(LaunchConfigNative)), n.struct_size.ToUInt64(), "struct_size");
            c.Cooperative = false;
            c.ProgrammaticEventAtBlockStart = true;
            Assert.Equal(LaunchFlags.ProgrammaticSerialization | LaunchFlags.ProgrammaticEventAtBlockStart, c.Flags, "flags after set and clear");
            Assert.Contains("cluster (2, 1, 1)", c.ToString(), "ToString");

            // The native struct is the header's: 136 bytes on a 64-bit system (64 up
            // to the programmatic event, then the launch attributes).
            if (IntPtr.Size == 8)
            {
                Assert.Equal(136, Marshal.SizeOf(typeof(LaunchConfigNative)), "sizeof(cuabi_launch_config)");
                Assert.Equal(56, Marshal.OffsetOf(typeof(LaunchConfigNative), "programmatic_event").ToInt32(), "offset of programmatic_event");
                Assert.Equal(36, Marshal.OffsetOf(typeof(LaunchConfigNative), "flags").ToInt32(), "offset of flags");
            }

            // What the library's own defaults say, and a round trip.
            LaunchConfigNative d = LaunchConfigNative.Create();
            Assert.Equal(LaunchFlags.None, d.flags, "CUABI_LAUNCH_CONFIG_INIT flags");
            Assert.True(d.cluster_x == 0 && d.cluster_y == 0 && d.cluster_z == 0 && d.priority == 0 &&
                        d.programmatic_event == IntPtr.Zero, "CUABI_LAUNCH_CONFIG_INIT extended fields");
            var back = LaunchConfig.FromNative(ref n);
            Assert.True(back.Cooperative && back.Cluster.X == 2 && back.Priority == -1 && back.SharedMemoryBytes == 128, "FromNative");
        }

        private static void ConfigSameAs()
        {
            var a = new LaunchConfig(8, 64);
            var b = new LaunchConfig(8, 64);
            Assert.True(a.SameAs(ref b), "equal configurations differ");
            b.Cluster = new Dim3(2, 1, 1);
            Assert.True(!a.SameAs(ref b), "a cluster is not told apart");
            b = new LaunchConfig(8, 64) { Cooperative = true };
            Assert.True(!a.SameAs(ref b), "cooperative is not told apart");
            b = new LaunchConfig(8, 64) { Priority = -1 };
            Assert.True(!a.SameAs(ref b), "a priority is not told apart");
            b = new LaunchConfig(8, 64) { ProgrammaticSerialization = true };
            Assert.True(!a.SameAs(ref b), "programmatic serialization is not told apart");
        }

        private static int CallTrampoline(Action action, byte[] message)
        {
            GCHandle h = GCHandle.Alloc(action);
            GCHandle pin = GCHandle.Alloc(message, GCHandleType.Pinned);
            try
            {
                return HostFunctions.Trampoline(GCHandle.ToIntPtr(h), pin.AddrOfPinnedObject(), (UIntPtr)(uint)message.Length);
            }
            finally
            {
                pin.Free();
            }
        }

        private static string Text(byte[] message)
        {
            int end = Array.IndexOf(message, (byte)0);
            Assert.True(end >= 0, "the message is not NUL-terminated");
            return System.Text.Encoding.UTF8.GetString(message, 0, end);
        }

        private static void TrampolineRuns()
        {
            int calls = 0;
            var message = new byte[64];
            message[0] = 0x23;
            Assert.Equal(0, CallTrampoline(() => calls++, message), "the return of a callback that succeeded");
            Assert.Equal(1, calls, "calls");
            Assert.Equal((byte)0x23, message[0], "a message was written for a success");
            AssertHandleFreedAfterRun();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static WeakReference RunOnce(bool fail)
        {
            var payload = new byte[1 << 16];
            Action action = () => { payload[0] = 1; if (fail) throw new InvalidOperationException("x"); };
            var weak = new WeakReference(action);
            CallTrampoline(action, new byte[64]);
            return weak;
        }

        private static void AssertHandleFreedAfterRun()
        {
            WeakReference weak = null, weakFailed = null;
            var t = new Thread(() =>
            {
                weak = RunOnce(false);
                weakFailed = RunOnce(true);
            });
            t.Start();
            t.Join();
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            Assert.True(!weak.IsAlive, "the delegate of a host function that ran is still held");
            Assert.True(!weakFailed.IsAlive, "the delegate of a host function that threw is still held");
        }

        private static void TrampolineCatches()
        {
            var message = new byte[256];
            int r = CallTrampoline(() => { throw new InvalidOperationException("boom 42"); }, message);
            Assert.True(r != 0, "a callback that threw returned 0");
            Assert.Equal("System.InvalidOperationException: boom 42", Text(message), "message");

            // Cut to the buffer, at a character boundary, NUL-terminated.
            var small = new byte[16];
            for (int i = 0; i < small.Length; i++)
                small[i] = 0x23;
            r = CallTrampoline(() => { throw new ArgumentException("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"); }, small);
            Assert.True(r != 0, "a callback that threw returned 0");
            string cut = Text(small);
            Assert.True(System.Text.Encoding.UTF8.GetByteCount(cut) <= 15, "the message overflows its buffer: " + cut);
            Assert.True("System.ArgumentException: \u00e9".StartsWith(cut, StringComparison.Ordinal), "not a prefix of the message: " + cut);

            var none = new byte[1];
            none[0] = 0x23;
            r = CallTrampoline(() => { throw new Exception("x"); }, none);
            Assert.True(r != 0, "a callback that threw returned 0");
            Assert.Equal((byte)0, none[0], "a 1-byte buffer holds only the NUL");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static WeakReference RefuseOne(out Exception thrown)
        {
            var payload = new byte[1 << 16];
            Action action = () => payload[0] = 1;
            var weak = new WeakReference(action);
            thrown = null;
            try
            {
                new CudaStream(new SafeStreamHandle()).LaunchHostFunc(action);
            }
            catch (Exception e)
            {
                thrown = e;
            }
            return weak;
        }

        private static void RefusedHostFuncFrees()
        {
            WeakReference weak = null;
            Exception thrown = null;
            var t = new Thread(() => weak = RefuseOne(out thrown));
            t.Start();
            t.Join();
            Assert.True(thrown is CudaException, "a host function on the NULL stream was not refused by the library: " + thrown);
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            Assert.True(!weak.IsAlive, "the delegate of a refused host function is still held");
        }

        // ------------------------------------------------------------------
        // With a device
        // ------------------------------------------------------------------

        private static CudaModule Compile(Device d)
        {
            return d.Compile(Source, new CompileOptions { Name = "extended.cu" });
        }

        private const int MultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

        private static void CooperativeSum()
        {
            const int n = (1 << 20) + 17;
            var r = new Random(11);
            var host = new int[n];
            ulong want = 0;
            for (int i = 0; i < n; i++)
            {
                host[i] = r.Next(1000);
                want += (ulong)host[i];
            }
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var k = m.GetKernel("coop_sum"))
            using (var input = d.AllocateFrom(host))
            {
                int perSm = k.GetActiveBlocksPerMultiprocessor(256);
                Assert.True(perSm >= 1, "coop_sum: " + perSm + " blocks per multiprocessor at 256 threads");
                int grid = Math.Min(perSm, 2) * d.GetAttribute(MultiprocessorCount);
                using (var partial = d.Allocate<ulong>(grid))
                using (var arrived = d.Allocate<uint>(1))
                using (var total = d.Allocate<ulong>(1))
                {
                    for (int round = 0; round < 2; round++)
                    {
                        arrived.Memset(0);
                        total.Memset(0);
                        var config = new LaunchConfig(grid, 256) { Cooperative = true };
                        k.Launch(config, null, input, partial, arrived, total, (ulong)n);
                        d.Synchronize();
                        Assert.Equal(want, total.ToArray()[0], "the cooperative sum, round " + round);
                        Assert.Equal((uint)grid, arrived.ToArray()[0], "blocks through the barrier");
                    }
                }
            }
        }

        private static void ClusterExchange()
        {
            const int grid = 16;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var k = m.GetKernel("cluster_exchange"))
            using (var output = d.Allocate<int>(2 * grid))
            {
                var config = new LaunchConfig(grid, 64) { Cluster = new Dim3(2, 1, 1) };
                Assert.True(k.GetMaxClusterSize(config) >= 2, "the device runs no clusters of 2");
                Assert.True(k.GetMaxActiveClusters(config) >= 1, "no cluster of 2 can be resident");
                output.Memset(0xFF);
                k.Launch(config, null, output);
                d.Synchronize();
                int[] got = output.ToArray();
                for (int b = 0; b < grid; b++)
                {
                    Assert.Equal(b % 2, got[grid + b], "cluster rank of block " + b);
                    Assert.Equal((b ^ 1) * 1000 + 7, got[b], "the value block " + b + " read from its partner's shared memory");
                }
                // The same through a plan.
                output.Memset(0xFF);
                using (var plan = k.Prepare(config))
                {
                    plan.SetArguments(output);
                    plan.Launch();
                }
                d.Synchronize();
                got = output.ToArray();
                for (int b = 0; b < grid; b++)
                    Assert.Equal((b ^ 1) * 1000 + 7, got[b], "plan: block " + b);
            }
        }

        private static void CheckPdl(int[] data, int[] output, int n)
        {
            for (int i = 0; i < n; i++)
            {
                Assert.Equal(i * 3 + 1, data[i], "producer element " + i);
                Assert.Equal((i * 3 + 1) * 2, output[i], "consumer element " + i);
            }
        }

        private static void ProgrammaticDependentLaunch()
        {
            const int n = 1 << 20;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var producer = m.GetKernel("pdl_producer"))
            using (var consumer = m.GetKernel("pdl_consumer"))
            using (var stream = d.CreateStream())
            using (var data = d.Allocate<int>(n))
            using (var output = d.Allocate<int>(n))
            {
                for (int round = 0; round < 3; round++)
                {
                    data.Memset(0);
                    output.Memset(0);
                    producer.Launch(new LaunchConfig(n / 256, 256), stream, data, (ulong)n);
                    var config = new LaunchConfig(n / 256, 256) { ProgrammaticSerialization = true };
                    consumer.Launch(config, stream, data, output, (ulong)n);
                    stream.Synchronize();
                    CheckPdl(data.ToArray(), output.ToArray(), n);
                }
            }
        }

        private static void ProgrammaticEvent()
        {
            const int n = 1 << 18;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var producer = m.GetKernel("pdl_producer"))
            using (var consumer = m.GetKernel("pdl_consumer"))
            using (var first = d.CreateStream(StreamFlags.NonBlocking))
            using (var second = d.CreateStream(StreamFlags.NonBlocking))
            using (var ev = d.CreateEvent(EventFlags.DisableTiming))
            using (var data = d.Allocate<int>(n))
            using (var output = d.Allocate<int>(n))
            {
                data.Memset(0);
                output.Memset(0);
                d.Synchronize();
                var config = new LaunchConfig(n / 256, 256) { ProgrammaticEvent = ev };
                producer.Launch(config, first, data, (ulong)n);
                second.WaitEvent(ev);
                consumer.Launch(new LaunchConfig(n / 256, 256), second, data, output, (ulong)n);
                first.Synchronize();
                second.Synchronize();
                ev.Synchronize();
                Assert.True(ev.IsComplete, "the programmatic event did not fire");
                CheckPdl(data.ToArray(), output.ToArray(), n);
            }
        }

        private static void Occupancy()
        {
            const int n = 1000003;
            float[] hx = new float[n], hy = new float[n];
            var r = new Random(5);
            for (int i = 0; i < n; i++)
            {
                hx[i] = (float)r.NextDouble();
                hy[i] = (float)r.NextDouble();
            }
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var dx = d.AllocateFrom(hx))
            using (var dy = d.AllocateFrom(hy))
            using (var dout = d.Allocate<float>(n))
            {
                int maxThreads = k.GetAttribute(FunctionAttribute.MaxThreadsPerBlock);
                BlockSizeSuggestion s = k.SuggestBlockSize();
                Assert.True(s.BlockSize >= 32 && s.BlockSize <= maxThreads, "suggested block size " + s.BlockSize);
                Assert.True(s.MinGridSize >= d.GetAttribute(MultiprocessorCount), "suggested minimum grid " + s.MinGridSize);
                Assert.True(k.GetActiveBlocksPerMultiprocessor(s.BlockSize) >= 1, "no block resident at the suggested size");
                BlockSizeSuggestion capped = k.SuggestBlockSize(0, 0, 64);
                Assert.True(capped.BlockSize >= 1 && capped.BlockSize <= 64, "capped block size " + capped.BlockSize);

                LaunchConfig config = k.SuggestConfig(n);
                Assert.Equal((uint)s.BlockSize, config.Block.X, "the suggested configuration's block");
                Assert.True(config.Block.Y == 1 && config.Block.Z == 1 && config.Grid.Y == 1 && config.Grid.Z == 1, "not 1-D: " + config);
                ulong covered = (ulong)config.Grid.X * config.Block.X;
                Assert.True(covered >= n && covered - config.Block.X < n, "the grid does not just cover n: " + config);
                Assert.Equal(0u, config.SharedMemoryBytes, "shared memory without rules");
                Assert.True(!config.IsExtended, "extended options in a suggestion: " + config);
                k.Launch(config, null, 1.5f, dx, dy, dout, (ulong)n);
                float[] got = dout.ToArray();
                for (int i = 0; i < n; i++)
                {
                    float want = 1.5f * hx[i] + hy[i];
                    if (Math.Abs(got[i] - want) > 1e-5f * Math.Max(1f, Math.Abs(want)))
                        throw new TestFailure(string.Format("out[{0}] = {1}, expected {2}", i, got[i], want));
                }

                LaunchConfig shared = k.SuggestConfig(n, 16, 4);
                Assert.Equal(16u + 4u * shared.Block.X, shared.SharedMemoryBytes, "shared memory from the two rules");
                Assert.True((ulong)shared.Grid.X * shared.Block.X >= n, "the grid with shared memory does not cover n");

                long available = k.GetAvailableDynamicSharedMemory(1, s.BlockSize);
                Assert.True(available >= 16 * 1024, "available dynamic shared memory " + available);
                Assert.True(k.GetMaxClusterSize(new LaunchConfig(16, 128)) >= 2, "max cluster size");
                Assert.True(k.GetMaxActiveClusters(new LaunchConfig(16, 128) { Cluster = new Dim3(2, 1, 1) }) >= 1, "max active clusters");
            }
        }

        private static void ExtendedPlans()
        {
            const int n = 4096;
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var dx = d.AllocateFrom(Enumerable.Range(0, n).Select(i => (float)i).ToArray()))
            using (var dy = d.AllocateFrom(Enumerable.Repeat(1.0f, n).ToArray()))
            using (var dout = d.Allocate<float>(n))
            {
                int least, greatest;
                d.GetStreamPriorityRange(out least, out greatest);
                var configs = new[]
                {
                    new LaunchConfig(n / 256, 256) { Priority = greatest },
                    new LaunchConfig(n / 256, 256) { Cluster = new Dim3(2, 1, 1) },
                    new LaunchConfig(n / 256, 256) { Cooperative = true },
                    new LaunchConfig(n / 256, 256) { ProgrammaticSerialization = true },
                };
                using (var stream = d.CreateStream())
                {
                    float a = 1;
                    // Each configuration three times: the kernel prepares launches for what repeats.
                    foreach (var c in configs)
                        for (int i = 0; i < 3; i++)
                        {
                            a += 1;
                            k.Launch(c, stream, a, dx, dy, dout, (ulong)n);
                            stream.Synchronize();
                            float[] got = dout.ToArray();
                            for (int j = 0; j < n; j += 97)
                                Assert.Equal(a * j + 1, got[j], c + ": element " + j);
                        }
                    Assert.True(k.PreparedLaunchCount <= 4, "prepared launches kept: " + k.PreparedLaunchCount);
                    foreach (var c in configs)
                        using (var plan = k.Prepare(c, stream))
                        {
                            LaunchConfig kept = plan.Config;
                            Assert.True(kept.SameAs(ref configs[Array.IndexOf(configs, c)]), "the plan's configuration " + kept);
                            plan.SetArguments(7.0f, dx, dy, dout, (ulong)n);
                            plan.Launch();
                            stream.Synchronize();
                            Assert.Equal(7.0f * 100 + 1, dout.ToArray()[100], "plan " + c);
                        }
                }
            }
        }

        private static void HostFunctionsInOrder()
        {
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var producer = m.GetKernel("pdl_producer"))
            using (var stream = d.CreateStream())
            using (var data = d.Allocate<int>(1 << 16))
            {
                var order = new List<int>();
                int driverThreads = 0;
                int mainThread = Thread.CurrentThread.ManagedThreadId;
                for (int i = 0; i < 20; i++)
                {
                    int captured = i;
                    producer.Launch(new LaunchConfig(256, 256), stream, data, (ulong)(1 << 16));
                    stream.LaunchHostFunc(() =>
                    {
                        lock (order)
                            order.Add(captured);
                        if (Thread.CurrentThread.ManagedThreadId != mainThread)
                            Interlocked.Increment(ref driverThreads);
                    });
                }
                stream.Synchronize();
                lock (order)
                    Assert.Equal(string.Join(",", Enumerable.Range(0, 20)), string.Join(",", order), "the order the host functions ran in");
                Assert.Equal(20, driverThreads, "host functions run on a driver thread");
                stream.Synchronize();
            }
        }

        private static void HostFunctionThrows()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream())
            {
                bool before = false, after = false;
                stream.LaunchHostFunc(() => before = true);
                stream.LaunchHostFunc(() => { throw new InvalidOperationException("boom 42"); });
                stream.LaunchHostFunc(() => after = true);
                var e = Assert.Throws<HostFunctionException>(() => stream.Synchronize(), "Synchronize after a host function threw");
                Assert.Equal(CudaStatus.HostFunction, e.Status, "status");
                Assert.Equal("CUABI_ERROR_HOST_FUNCTION", e.StatusName, "status name");
                Assert.Contains("System.InvalidOperationException: boom 42", e.Message, "message");
                Assert.True(before && after, "the host functions around the failing one did not run");
                stream.Synchronize(); // reported once
                stream.LaunchHostFunc(() => after = false);
                stream.Synchronize();
                Assert.True(!after, "a host function after the failure did not run");
            }
        }

        private static void CheckSaxpy(float a, float[] x, float[] y, float[] got, string what)
        {
            for (int i = 0; i < x.Length; i++)
            {
                float want = a * x[i] + y[i];
                if (Math.Abs(got[i] - want) > 1e-6f + 1e-5f * Math.Abs(want))
                    throw new TestFailure(string.Format("{0}: out[{1}] = {2}, expected {3}", what, i, got[i], want));
            }
        }

        private static void GraphNodeUpdate()
        {
            const int n = 4096;
            var r = new Random(9);
            float[] hx = new float[n], hy = new float[n];
            for (int i = 0; i < n; i++)
            {
                hx[i] = (float)r.NextDouble();
                hy[i] = (float)r.NextDouble();
            }
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var stream = d.CreateStream())
            using (var dx = d.AllocateFrom(hx))
            using (var dy = d.AllocateFrom(hy))
            using (var dout = d.Allocate<float>(n))
            {
                stream.BeginCapture(CaptureMode.ThreadLocal);
                k.Launch(new LaunchConfig(n / 256, 256), stream, 2.0f, dx, dy, dout, (ulong)n);
                using (CudaGraph graph = stream.EndCapture())
                using (CudaGraphExec exec = graph.Instantiate())
                {
                    Assert.Equal(1L, graph.KernelNodeCount, "kernel nodes");
                    exec.Upload(stream);
                    exec.Launch(stream);
                    stream.Synchronize();
                    CheckSaxpy(2.0f, hx, hy, dout.ToArray(), "as captured");
                    for (int i = 0; i < 100; i++)
                    {
                        float a = 0.25f * i - 7.0f;
                        exec.SetKernelNodeArgs(0, k, a, dx, dy, dout, (ulong)n);
                        exec.Launch(stream);
                        stream.Synchronize();
                        CheckSaxpy(a, hx, hy, dout.ToArray(), "replay " + i + " with a = " + a);
                    }
                }
            }
        }

        private static void GraphWholeUpdate()
        {
            const int n = 4096;
            var r = new Random(10);
            float[] hx = new float[n], hy = new float[n];
            for (int i = 0; i < n; i++)
            {
                hx[i] = (float)r.NextDouble();
                hy[i] = (float)r.NextDouble();
            }
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var stream = d.CreateStream())
            using (var dx = d.AllocateFrom(hx))
            using (var dy = d.AllocateFrom(hy))
            using (var dout = d.Allocate<float>(n))
            using (var other = d.Allocate<float>(n))
            {
                stream.BeginCapture(CaptureMode.ThreadLocal);
                k.Launch(new LaunchConfig(n / 256, 256), stream, 2.0f, dx, dy, dout, (ulong)n);
                using (CudaGraph first = stream.EndCapture())
                using (CudaGraphExec exec = first.Instantiate())
                {
                    stream.BeginCapture(CaptureMode.ThreadLocal);
                    k.Launch(new LaunchConfig(n / 256, 256), stream, -3.0f, dx, dy, other, (ulong)n);
                    using (CudaGraph second = stream.EndCapture())
                    {
                        dout.Memset(0);
                        other.Memset(0);
                        exec.Update(second);
                        exec.Launch(stream);
                        stream.Synchronize();
                        CheckSaxpy(-3.0f, hx, hy, other.ToArray(), "after the update");
                        Assert.True(dout.ToArray().All(v => v == 0), "the old output was written after the update");
                    }
                }
            }
        }
    }
}
