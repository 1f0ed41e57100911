// The driver-level calls of the generated object layer (src/Objects.g.cs)
// that no other C# test reaches: a device's limits, a stream's attributes
// (the L2 access-policy window a value type, AccessPolicyWindow) and the
// stream memory operations, on device memory and on pinned host memory. They
// follow tests/python/test_limits.py, test_stream_attributes.py and
// test_stream_memops.py; each refusal asserts the exception and a piece of
// the core's own message (capi/core/limits.cpp, stream_attributes.cpp,
// memops.cpp). The value types themselves are checked without a GPU: their
// defaults are the C init's, and converting one sets every field over the
// init's struct.

using System;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class DriverLevelTests
    {
        // CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE in cuda.h: the most
        // bytes of L2 that can be set aside for persisting accesses.
        private const int MaxPersistingL2 = 108;

        // CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE in cuda.h: the
        // largest access-policy window (num_bytes); 0 where there is none.
        private const int MaxAccessPolicyWindow = 109;

        private const string SetWindow = "cuabi_stream_set_access_policy_window";
        private const string WriteCall = "cuabi_stream_write_value";
        private const string WaitCall = "cuabi_stream_wait_value";

        private const string MemopsSource = @"
extern ""C"" __global__ void spin_then_fill(float* x, int n, float v, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = v;
}
extern ""C"" __global__ void copy(float* y, const float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = x[i];
}
";

        public static void Register()
        {
            Registry.Add("value types: Default() is what each C init gives, field for field", ValueTypeDefaults);
            Registry.Add("value types: converting sets every field over the init's struct; a negative size is refused naming the field",
                ValueTypeConversions);

            Registry.AddGpu("limits: stack size, printf FIFO and malloc heap round trip, the old values restored", LimitRoundTrips);
            Registry.AddGpu("limits: a persisting-L2 set-aside within the device maximum; one past it is refused naming the maximum",
                PersistingL2);
            Registry.AddGpu("limits: an unknown limit is refused naming it", UnknownLimit);

            Registry.AddGpu("stream attributes: each synchronization policy round trips; an unknown one is refused", SyncPolicyRoundTrips);
            Registry.AddGpu("stream attributes: a priority within the device range round trips; one outside it is refused naming the range",
                PriorityRange);
            Registry.AddGpu("stream attributes: the memory sync domain round trips; an unknown one is refused", MemorySyncDomainRoundTrips);
            Registry.AddGpu("stream attributes: an access-policy window over a device buffer reads back field for field",
                AccessPolicyWindowRoundTrips);
            Registry.AddGpu("stream attributes: access-policy windows refused (bytes, hit ratio, property, base 0), the stream's kept",
                AccessPolicyWindowRefusals);
            Registry.AddGpu("stream attributes: a kernel on a stream with an access-policy window computes correctly",
                KernelWithAWindow);

            Registry.AddGpu("stream memory ops: a kernel waits on pinned host memory until the host writes the word", HostHoldsAKernel);
            Registry.AddGpu("stream memory ops: producer and consumer streams ordered by a word alone, three rounds", ProducerConsumer);
            Registry.AddGpu("stream memory ops: 4- and 8-byte words land at their byte offsets, in device and pinned host memory",
                WordsLandWhereAsked);
            Registry.AddGpu("stream memory ops: a write without a memory barrier is refused as not supported", NoMemoryBarrier);
            Registry.AddGpu("stream memory ops: the word checks (width, alignment, end, 4-byte value, FLUSH on a write, condition)",
                WordChecks);
        }

        // ------------------------------------------------------------------
        // Helpers
        // ------------------------------------------------------------------

        /// <summary>
        /// <paramref name="action"/> throws a CudaException of <paramref name="status"/>
        /// whose message starts with "<paramref name="call"/>: " and holds each of
        /// <paramref name="pieces"/>.
        /// </summary>
        private static CudaException Refused(CudaStatus status, string call, Action action, string what, params string[] pieces)
        {
            CudaException e = Assert.ThrowsCuda(status, action, what);
            Assert.True(e.Message.StartsWith(call + ": ", StringComparison.Ordinal),
                what + ": the message does not start with '" + call + ": ': " + e.Message);
            foreach (string piece in pieces)
                Assert.Contains(piece, e.Message, what);
            return e;
        }

        private static int RequireWindow(Device d)
        {
            int most = d.GetAttribute(MaxAccessPolicyWindow);
            if (most <= 0)
                throw new SkipException("device " + d.Ordinal + " takes no access-policy window "
                    + "(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE is 0)");
            return most;
        }

        private static void AssertWindow(AccessPolicyWindow want, AccessPolicyWindow got, string what)
        {
            Assert.Equal(want.Base, got.Base, what + ": Base");
            Assert.Equal(want.Bytes, got.Bytes, what + ": Bytes");
            Assert.Equal(want.HitRatio, got.HitRatio, what + ": HitRatio");
            Assert.Equal(want.HitProperty, got.HitProperty, what + ": HitProperty");
            Assert.Equal(want.MissProperty, got.MissProperty, what + ": MissProperty");
            Assert.True(want == got && want.Equals(got) && want.GetHashCode() == got.GetHashCode(),
                what + ": the values are not equal: " + want + " and " + got);
        }

        private static float[] RandomFloats(int n, int seed)
        {
            var r = new Random(seed);
            var a = new float[n];
            for (int i = 0; i < n; i++)
                a[i] = (float)r.NextDouble();
            return a;
        }

        private static void AllEqual(float want, float[] got, string what)
        {
            for (int i = 0; i < got.Length; i++)
                if (got[i] != want)
                    throw new TestFailure(string.Format("{0}: [{1}] = {2}, expected {3}", what, i, got[i], want));
        }

        // ------------------------------------------------------------------
        // Value types, no GPU
        // ------------------------------------------------------------------

        private static void ValueTypeDefaults()
        {
            // CUABI_ACCESS_POLICY_WINDOW_INIT: { size, 0, 0, 1.0f, PERSISTING, STREAMING }
            AccessPolicyWindow w = AccessPolicyWindow.Default();
            AccessPolicyWindowNative wn = AccessPolicyWindowNative.Create();
            Assert.Equal(wn.@base, w.Base, "AccessPolicyWindow.Base");
            Assert.Equal((long)wn.bytes.ToUInt64(), w.Bytes, "AccessPolicyWindow.Bytes");
            Assert.Equal(wn.hit_ratio, w.HitRatio, "AccessPolicyWindow.HitRatio");
            Assert.Equal(wn.hit_property, w.HitProperty, "AccessPolicyWindow.HitProperty");
            Assert.Equal(wn.miss_property, w.MissProperty, "AccessPolicyWindow.MissProperty");
            Assert.Equal(0UL, w.Base, "the init's base");
            Assert.Equal(0L, w.Bytes, "the init's bytes");
            Assert.Equal(1.0f, w.HitRatio, "the init's hit ratio");
            Assert.Equal(AccessProperty.Persisting, w.HitProperty, "the init's hit property");
            Assert.Equal(AccessProperty.Streaming, w.MissProperty, "the init's miss property");
            Assert.True(w != new AccessPolicyWindow(), "Default() is not all zeros");

            // CUABI_ARRAY_DESC_INIT: { size, 0, 0, 0, CUABI_FORMAT_F32, 1, 0 }
            ArrayDesc a = ArrayDesc.Default();
            ArrayDescNative an = ArrayDescNative.Create();
            Assert.Equal((long)an.width.ToUInt64(), a.Width, "ArrayDesc.Width");
            Assert.Equal((long)an.height.ToUInt64(), a.Height, "ArrayDesc.Height");
            Assert.Equal((long)an.depth.ToUInt64(), a.Depth, "ArrayDesc.Depth");
            Assert.Equal(an.format, a.Format, "ArrayDesc.Format");
            Assert.Equal(an.channels, a.Channels, "ArrayDesc.Channels");
            Assert.Equal(an.flags, a.Flags, "ArrayDesc.Flags");
            Assert.Equal(ArrayFormat.F32, a.Format, "the init's format");
            Assert.Equal(1u, a.Channels, "the init's channels");

            // CUABI_MEMORY_POOL_DESC_INIT: { size, 0, 0, 0 }
            MemoryPoolDesc p = MemoryPoolDesc.Default();
            MemoryPoolDescNative pn = MemoryPoolDescNative.Create();
            Assert.Equal(pn.max_bytes, p.MaxBytes, "MemoryPoolDesc.MaxBytes");
            Assert.Equal(pn.release_threshold, p.ReleaseThreshold, "MemoryPoolDesc.ReleaseThreshold");
            Assert.Equal(pn.flags, p.Flags, "MemoryPoolDesc.Flags");
            Assert.Equal(new MemoryPoolDesc(), p, "the pool init's fields are all 0");

            Assert.Equal("AccessPolicyWindow { Base = 0, Bytes = 0, HitRatio = 1, HitProperty = Persisting, MissProperty = Streaming }",
                w.ToString(), "ToString");
        }

        private static void ValueTypeConversions()
        {
            AccessPolicyWindow w = AccessPolicyWindow.Default();
            w.Base = 0x7F0000001000UL;
            w.Bytes = 1 << 20;
            w.HitRatio = 0.25f;
            w.MissProperty = AccessProperty.Normal;
            AccessPolicyWindowNative n = w.ToNative("window");
            Assert.Equal((ulong)Marshal.SizeOf(typeof(AccessPolicyWindowNative)), n.struct_size.ToUInt64(), "struct_size");
            Assert.Equal(0x7F0000001000UL, n.@base, "base");
            Assert.Equal(1UL << 20, n.bytes.ToUInt64(), "bytes");
            Assert.Equal(0.25f, n.hit_ratio, "hit_ratio");
            Assert.Equal(AccessProperty.Persisting, n.hit_property, "hit_property (the init's)");
            Assert.Equal(AccessProperty.Normal, n.miss_property, "miss_property");
            AssertWindow(w, AccessPolicyWindow.FromNative(ref n), "back from the native struct");

            // An enum value the binding does not name reads back as the number,
            // as the generated enum getters return it.
            n.miss_property = (AccessProperty)7;
            Assert.Equal((AccessProperty)7, AccessPolicyWindow.FromNative(ref n).MissProperty, "an unknown property read back");

            // A negative size_t field is refused before any call, naming the field.
            w.Bytes = -1;
            var e = Assert.Throws<ArgumentOutOfRangeException>(() => w.ToNative("window"), "Bytes = -1");
            Assert.Equal("window.Bytes", e.ParamName, "the refused field");

            var a = ArrayDesc.Default();
            a.Width = 8;
            a.Height = 4;
            a.Format = ArrayFormat.F16;
            a.Channels = 2;
            a.Flags = ArrayFlags.SurfaceLoadStore | ArrayFlags.TextureGather;
            ArrayDescNative an = a.ToNative("desc");
            Assert.Equal(8UL, an.width.ToUInt64(), "width");
            Assert.Equal(4UL, an.height.ToUInt64(), "height");
            Assert.Equal(0UL, an.depth.ToUInt64(), "depth (the init's)");
            Assert.Equal(ArrayFormat.F16, an.format, "format");
            Assert.Equal(2u, an.channels, "channels");
            Assert.Equal(ArrayFlags.SurfaceLoadStore | ArrayFlags.TextureGather, an.flags, "flags");
            Assert.Equal(a, ArrayDesc.FromNative(ref an), "the array desc back");
            a.Depth = -3;
            Assert.Equal("desc.Depth", Assert.Throws<ArgumentOutOfRangeException>(() => a.ToNative("desc"), "Depth = -3").ParamName,
                "the refused field");

            var p = MemoryPoolDesc.Default();
            p.ReleaseThreshold = 1UL << 40;
            p.Flags = MemoryPoolFlags.Ipc;
            MemoryPoolDescNative pn = p.ToNative("desc");
            Assert.Equal(0UL, pn.max_bytes, "max_bytes (the init's)");
            Assert.Equal(1UL << 40, pn.release_threshold, "release_threshold");
            Assert.Equal(MemoryPoolFlags.Ipc, pn.flags, "flags");
            Assert.Equal(p, MemoryPoolDesc.FromNative(ref pn), "the pool desc back");
        }

        // ------------------------------------------------------------------
        // Limits
        // ------------------------------------------------------------------

        private static void LimitRoundTrips()
        {
            using (var d = Device.Get(0))
            {
                foreach (Limit limit in new[] { Limit.StackSize, Limit.PrintfFifoSize, Limit.MallocHeapSize })
                {
                    long before = d.GetLimit(limit);
                    Assert.True(before > 0, limit + " is " + before);
                    long want = before * 2 + 4096;
                    try
                    {
                        d.SetLimit(limit, want);
                        long got = d.GetLimit(limit);
                        // The driver may round up, never down.
                        Assert.True(got >= want, limit + ": set to " + want + ", read back " + got);
                    }
                    finally
                    {
                        d.SetLimit(limit, before);
                    }
                    Assert.Equal(before, d.GetLimit(limit), limit + " restored");
                }
            }
        }

        private static void PersistingL2()
        {
            using (var d = Device.Get(0))
            {
                int most = d.GetAttribute(MaxPersistingL2);
                if (most <= 0)
                    throw new SkipException("device " + d.Ordinal + " has no persisting L2 set-aside "
                        + "(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE is 0)");
                long before = d.GetLimit(Limit.PersistingL2CacheSize);
                try
                {
                    d.SetLimit(Limit.PersistingL2CacheSize, most / 2);
                    long got = d.GetLimit(Limit.PersistingL2CacheSize);
                    Assert.True(got >= most / 2 && got <= most,
                        "set to " + most / 2 + " of at most " + most + " bytes, read back " + got);
                    d.ResetPersistingL2();
                    Refused(CudaStatus.InvalidArgument, "cuabi_device_set_limit",
                        () => d.SetLimit(Limit.PersistingL2CacheSize, (long)most + 1), "one byte past the maximum",
                        "CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE of " + ((long)most + 1) + " bytes is past device " + d.Ordinal
                        + "'s maximum of " + most + " bytes (CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)");
                    d.SetLimit(Limit.PersistingL2CacheSize, 0);
                }
                finally
                {
                    d.SetLimit(Limit.PersistingL2CacheSize, before);
                }
            }
        }

        private static void UnknownLimit()
        {
            const string named = "limit is 42, not one of CUABI_LIMIT_STACK_SIZE (0), CUABI_LIMIT_PRINTF_FIFO_SIZE (1), "
                + "CUABI_LIMIT_MALLOC_HEAP_SIZE (2), CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE (3)";
            using (var d = Device.Get(0))
            {
                Refused(CudaStatus.InvalidArgument, "cuabi_device_get_limit", () => d.GetLimit((Limit)42), "reading limit 42", named);
                Refused(CudaStatus.InvalidArgument, "cuabi_device_set_limit", () => d.SetLimit((Limit)42, 1024), "setting limit 42",
                    named);
                Assert.Equal("value", Assert.Throws<ArgumentOutOfRangeException>(
                    () => d.SetLimit(Limit.StackSize, -1), "a negative size").ParamName, "the refused argument");
            }
        }

        // ------------------------------------------------------------------
        // Stream attributes
        // ------------------------------------------------------------------

        private static void SyncPolicyRoundTrips()
        {
            using (var d = Device.Get(0))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                foreach (SyncPolicy policy in new[] { SyncPolicy.Spin, SyncPolicy.Yield, SyncPolicy.BlockingSync,
                             SyncPolicy.Auto })
                {
                    s.SetSyncPolicy(policy);
                    Assert.Equal(policy, s.SyncPolicy, "the policy read back");
                }
                Refused(CudaStatus.InvalidArgument, "cuabi_stream_set_sync_policy", () => s.SetSyncPolicy((SyncPolicy)0),
                    "policy 0", "policy is 0, not one of CUABI_SYNC_POLICY_AUTO (1), _SPIN (2), _YIELD (3), _BLOCKING_SYNC (4)");
                Assert.Equal(SyncPolicy.Auto, s.SyncPolicy, "the refused policy changed nothing");
            }
        }

        private static void PriorityRange()
        {
            using (var d = Device.Get(0))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                int least, greatest;
                d.GetStreamPriorityRange(out least, out greatest);
                s.SetPriority(greatest);
                Assert.Equal(greatest, s.Priority, "the highest priority read back");
                s.SetPriority(least);
                Assert.Equal(least, s.Priority, "the lowest priority read back");
                string range = greatest + " (highest) to " + least + " (lowest)";
                Refused(CudaStatus.InvalidArgument, "cuabi_stream_set_priority", () => s.SetPriority(greatest - 1),
                    "one above the highest", "priority " + (greatest - 1) + " is outside device " + d.Ordinal + "'s range, " + range);
                Refused(CudaStatus.InvalidArgument, "cuabi_stream_set_priority", () => s.SetPriority(least + 1),
                    "one below the lowest", "priority " + (least + 1) + " is outside device " + d.Ordinal + "'s range, " + range);
                Assert.Equal(least, s.Priority, "the refused priorities changed nothing");
            }
        }

        private static void MemorySyncDomainRoundTrips()
        {
            using (var d = Device.Get(0))
            using (var s = d.CreateStream(StreamFlags.NonBlocking))
            {
                s.SetMemorySyncDomain(MemSyncDomain.Remote);
                Assert.Equal(MemSyncDomain.Remote, s.MemorySyncDomain, "the remote domain read back");
                s.SetMemorySyncDomain(MemSyncDomain.Default);
                Assert.Equal(MemSyncDomain.Default, s.MemorySyncDomain, "the default domain read back");
                Refused(CudaStatus.InvalidArgument, "cuabi_stream_set_memory_sync_domain", () => s.SetMemorySyncDomain((MemSyncDomain)7),
                    "domain 7", "domain is 7, not one of CUABI_MEM_SYNC_DOMAIN_DEFAULT (0), _REMOTE (1)");
            }
        }

        private static void AccessPolicyWindowRoundTrips()
        {
            using (var d = Device.Get(0))
            {
                int most = RequireWindow(d);
                using (var s = d.CreateStream(StreamFlags.NonBlocking))
                using (var buf = d.Allocate<byte>(1 << 20))
                {
                    Assert.Equal(0L, s.AccessPolicyWindow.Bytes, "a new stream's window (none)");
                    long bytes = Math.Min(buf.SizeInBytes, most);
                    // Every field other than the init's, in values a float holds exactly.
                    var cases = new[]
                    {
                        new { Ratio = 0.75f, Hit = AccessProperty.Persisting, Miss = AccessProperty.Normal },
                        new { Ratio = 0.25f, Hit = AccessProperty.Streaming, Miss = AccessProperty.Streaming },
                    };
                    foreach (var c in cases)
                    {
                        AccessPolicyWindow w = AccessPolicyWindow.Default();
                        w.Base = buf.DevicePointer;
                        w.Bytes = bytes;
                        w.HitRatio = c.Ratio;
                        w.HitProperty = c.Hit;
                        w.MissProperty = c.Miss;
                        s.SetAccessPolicyWindow(w);
                        AssertWindow(w, s.AccessPolicyWindow, "hit ratio " + c.Ratio);
                    }

                    // The init's hit ratio and properties, over half the buffer.
                    AccessPolicyWindow half = AccessPolicyWindow.Default();
                    half.Base = buf.DevicePointer;
                    half.Bytes = bytes / 2;
                    s.SetAccessPolicyWindow(half);
                    AssertWindow(half, s.AccessPolicyWindow, "the init's fields");

                    // Bytes 0: no window (the reset of the CUDA programming guide).
                    AccessPolicyWindow none = half;
                    none.Bytes = 0;
                    s.SetAccessPolicyWindow(none);
                    Assert.Equal(0L, s.AccessPolicyWindow.Bytes, "bytes 0: no window");
                }
            }
        }

        private static void AccessPolicyWindowRefusals()
        {
            using (var d = Device.Get(0))
            {
                int most = RequireWindow(d);
                using (var s = d.CreateStream(StreamFlags.NonBlocking))
                using (var buf = d.Allocate<byte>(1 << 16))
                {
                    AccessPolicyWindow kept = AccessPolicyWindow.Default();
                    kept.Base = buf.DevicePointer;
                    kept.Bytes = Math.Min(buf.SizeInBytes, most);
                    kept.HitRatio = 0.5f;
                    kept.HitProperty = AccessProperty.Persisting;
                    kept.MissProperty = AccessProperty.Normal;
                    s.SetAccessPolicyWindow(kept);

                    AccessPolicyWindow w = kept;
                    w.Bytes = (long)most + 1;
                    Refused(CudaStatus.InvalidArgument, SetWindow, () => s.SetAccessPolicyWindow(w), "bytes past the maximum",
                        "window->bytes is " + ((long)most + 1) + ", past device " + d.Ordinal + "'s maximum window of " + most
                        + " bytes (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)");

                    w = kept;
                    w.Bytes = 256;
                    w.HitRatio = 1.5f;
                    Refused(CudaStatus.InvalidArgument, SetWindow, () => s.SetAccessPolicyWindow(w), "hit ratio 1.5",
                        "window->hit_ratio is 1.500000; it is from 0 to 1");
                    w.HitRatio = -0.25f;
                    Refused(CudaStatus.InvalidArgument, SetWindow, () => s.SetAccessPolicyWindow(w), "hit ratio -0.25",
                        "window->hit_ratio is -0.250000; it is from 0 to 1");

                    w = kept;
                    w.Bytes = 256;
                    w.HitProperty = (AccessProperty)7;
                    Refused(CudaStatus.InvalidArgument, SetWindow, () => s.SetAccessPolicyWindow(w), "hit property 7",
                        "window->hit_property is 7, not one of CUABI_ACCESS_PROPERTY_NORMAL (0), _STREAMING (1), _PERSISTING (2)");
                    w = kept;
                    w.Bytes = 256;
                    w.MissProperty = (AccessProperty)(-1);
                    Refused(CudaStatus.InvalidArgument, SetWindow, () => s.SetAccessPolicyWindow(w), "miss property -1",
                        "window->miss_property is -1, not one of CUABI_ACCESS_PROPERTY_NORMAL (0)");

                    w = kept;
                    w.Base = 0;
                    w.Bytes = 256;
                    Refused(CudaStatus.InvalidArgument, SetWindow, () => s.SetAccessPolicyWindow(w), "base 0 with bytes",
                        "window->base is 0 for a window of 256 bytes");

                    // The binding's own check, before the call.
                    w = kept;
                    w.Bytes = -1;
                    Assert.Equal("window.Bytes", Assert.Throws<ArgumentOutOfRangeException>(
                        () => s.SetAccessPolicyWindow(w), "bytes -1").ParamName, "the refused field");

                    // Nothing refused reached the stream.
                    AssertWindow(kept, s.AccessPolicyWindow, "the window after the refusals");
                }
            }
        }

        private static void KernelWithAWindow()
        {
            const int n = 1 << 20;
            const float a = 2.5f;
            using (var d = Device.Get(0))
            {
                int most = RequireWindow(d);
                float[] hx = RandomFloats(n, 5), hy = RandomFloats(n, 6);
                using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
                using (var k = m.GetKernel("saxpy"))
                using (var s = d.CreateStream(StreamFlags.NonBlocking))
                using (var x = d.AllocateFrom(hx))
                using (var y = d.AllocateFrom(hy))
                using (var output = d.Allocate<float>(n))
                {
                    AccessPolicyWindow w = AccessPolicyWindow.Default();
                    w.Base = x.DevicePointer;
                    w.Bytes = Math.Min(x.SizeInBytes, most);
                    w.HitRatio = 0.6f;
                    w.HitProperty = AccessProperty.Persisting;
                    w.MissProperty = AccessProperty.Streaming;
                    s.SetAccessPolicyWindow(w);
                    k.Launch((n + 255) / 256, 256, s, a, x, y, output, (ulong)n);
                    s.Synchronize();
                    Assert.Equal(w.Bytes, s.AccessPolicyWindow.Bytes, "the window is still set after the launch");
                    float[] got = output.ToArray();
                    for (int i = 0; i < n; i++)
                    {
                        float want = a * hx[i] + hy[i];
                        if (Math.Abs(got[i] - want) > 1e-6 + 1e-5 * Math.Abs(want))
                            throw new TestFailure(string.Format("out[{0}] = {1}, expected {2}", i, got[i], want));
                    }
                }
            }
        }

        // ------------------------------------------------------------------
        // Stream memory operations
        // ------------------------------------------------------------------

        private static void HostHoldsAKernel()
        {
            const int n = 1 << 16;
            using (var d = Device.Get(0))
            using (var m = d.Compile(MemopsSource))
            using (var fill = m.GetKernel("spin_then_fill"))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var host = d.AllocatePinned<uint>(16))
            using (var x = d.Allocate<float>(n))
            {
                host[0] = 0;
                x.Memset(0);
                fill.Launch(1, 1, stream, x, 0, 0f, 0L); // loads the kernel before the stream waits
                d.Synchronize();
                Quiesce();
                stream.WaitValueHost(host, 0, 7, 4, WaitCondition.Geq, MemOpFlags.None);
                fill.Launch(64, 256, stream, x, n, 3.5f, 0L);
                try
                {
                    Thread.Sleep(200);
                    Assert.True(!stream.Query(), "the kernel ran before the host wrote the word");
                    host[0] = 6;
                    Thread.Sleep(100);
                    Assert.True(!stream.Query(), "the kernel ran on 6, short of 7");
                }
                finally
                {
                    host[0] = 7; // never leave the stream waiting
                    stream.Synchronize();
                }
                AllEqual(3.5f, x.ToArray(), "x after the host wrote 7");
            }
        }

        // While a stream waits on a word that later work writes, nothing may
        // synchronize the device: a finalizer freeing memory then (cuMemFree
        // synchronizes) would wait for the word forever. The finalizers run
        // first.
        private static void Quiesce()
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        private static void ProducerConsumer()
        {
            const int n = 1 << 20;
            using (var d = Device.Get(0))
            using (var m = d.Compile(MemopsSource))
            using (var fill = m.GetKernel("spin_then_fill"))
            using (var copy = m.GetKernel("copy"))
            using (var producer = d.CreateStream(StreamFlags.NonBlocking))
            using (var consumer = d.CreateStream(StreamFlags.NonBlocking))
            using (var x = d.Allocate<float>(n))
            using (var y = d.Allocate<float>(n))
            using (var flag = d.Allocate<ulong>(1))
            {
                x.Memset(0);
                y.Memset(0);
                flag.Memset(0);
                copy.Launch(1, 1, consumer, y, x, 0); // both kernels loaded before a stream waits
                fill.Launch(1, 1, producer, x, 0, 0f, 0L);
                d.Synchronize();
                for (int round = 1; round <= 3; round++)
                {
                    Quiesce();
                    consumer.WaitValue(flag, 0, (ulong)round, 8, WaitCondition.Eq, MemOpFlags.None);
                    copy.Launch(64, 256, consumer, y, x, n);
                    float v = round * 10;
                    fill.Launch(64, 256, producer, x, n, v, 50000000L);
                    producer.WriteValue(flag, 0, (ulong)round, 8, MemOpFlags.None);
                    consumer.Synchronize();
                    AllEqual(v, y.ToArray(), "round " + round + ": the consumer read before the word");
                }
                producer.Synchronize();
                Assert.Equal(3UL, flag.ToArray()[0], "the word after three rounds");
            }
        }

        private static void WordsLandWhereAsked()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var b = d.Allocate<ulong>(8))
            using (var host = d.AllocatePinned<ulong>(8))
            {
                b.Memset(0);
                d.Synchronize();
                stream.WriteValue(b, 4, 0x01020304UL, 4, MemOpFlags.None);
                stream.WriteValue(b, 16, 0x1122334455667788UL, 8, MemOpFlags.None);
                stream.WaitValue(b, 16, 0x8UL, 8, WaitCondition.And, MemOpFlags.None);
                stream.Synchronize();
                var raw = new byte[64];
                Buffer.BlockCopy(b.ToArray(), 0, raw, 0, raw.Length);
                Assert.Equal(0x01020304u, BitConverter.ToUInt32(raw, 4), "the 4-byte word at byte 4");
                Assert.Equal(0x1122334455667788UL, BitConverter.ToUInt64(raw, 16), "the 8-byte word at byte 16");
                for (int i = 0; i < raw.Length; i++)
                    if ((i < 4 || (i >= 8 && i < 16) || i >= 24) && raw[i] != 0)
                        throw new TestFailure("byte " + i + " is " + raw[i] + ", outside the words written");

                // The same into pinned host memory, which the host reads after the stream.
                host.CopyFrom(new ulong[8]);
                stream.WriteValueHost(host, 4, 0x01020304UL, 4, MemOpFlags.None);
                stream.WriteValueHost(host, 16, 0xCAFEF00DDEADBEEFUL, 8, MemOpFlags.None);
                stream.WaitValueHost(host, 16, 0xCAFEF00DDEADBEEFUL, 8, WaitCondition.Eq, MemOpFlags.None);
                stream.Synchronize();
                ulong[] words = host.ToArray();
                Assert.Equal(0x0102030400000000UL, words[0], "the 4-byte word at byte 4 of host memory");
                Assert.Equal(0UL, words[1], "host bytes 8 to 15");
                Assert.Equal(0xCAFEF00DDEADBEEFUL, words[2], "the 8-byte word at byte 16 of host memory");
                Assert.True(words.Skip(3).All(w => w == 0), "host bytes past 24");
            }
        }

        private static void NoMemoryBarrier()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var b = d.Allocate<ulong>(8))
            using (var host = d.AllocatePinned<ulong>(8))
            {
                b.Memset(0);
                d.Synchronize();
                Refused(CudaStatus.NotSupported, WriteCall, () => stream.WriteValue(b, 16, 1, 8, MemOpFlags.NoMemoryBarrier),
                    "a device write without a barrier", "CUABI_MEM_OP_NO_MEMORY_BARRIER");
                Refused(CudaStatus.NotSupported, "cuabi_stream_write_value_host",
                    () => stream.WriteValueHost(host, 16, 1, 8, MemOpFlags.NoMemoryBarrier), "a host write without a barrier",
                    "CUABI_MEM_OP_NO_MEMORY_BARRIER");
                // On a wait it is the other operation's flag.
                Refused(CudaStatus.InvalidArgument, WaitCall,
                    () => stream.WaitValue(b, 0, 0, 8, WaitCondition.Geq, MemOpFlags.NoMemoryBarrier), "a wait without a barrier",
                    "CUABI_MEM_OP_NO_MEMORY_BARRIER is for a write, not a wait");
                // Nothing refused reached the stream: the buffer is untouched.
                stream.Synchronize();
                Assert.True(b.ToArray().All(w => w == 0), "a refused write wrote");
            }
        }

        private static void WordChecks()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var b = d.Allocate<ulong>(8))
            using (var host = d.AllocatePinned<uint>(16))
            {
                Refused(CudaStatus.InvalidArgument, WriteCall, () => stream.WriteValue(b, 0, 1, 3, MemOpFlags.None),
                    "width 3", "width is 3; a word is 4 or 8 bytes");
                Refused(CudaStatus.InvalidArgument, WriteCall, () => stream.WriteValue(b, 6, 1, 4, MemOpFlags.None),
                    "offset 6 of 4-byte words", "offset 6 is not a multiple of the width (4 bytes)");
                Refused(CudaStatus.OutOfRange, WriteCall, () => stream.WriteValue(b, 64, 1, 8, MemOpFlags.None),
                    "a word at the end", "the 8-byte word at offset 64 reaches past the end of the 64-byte buffer");
                Refused(CudaStatus.InvalidArgument, WriteCall, () => stream.WriteValue(b, 0, 1UL << 32, 4, MemOpFlags.None),
                    "2^32 in 4 bytes", "value 4294967296 does not fit in a 4-byte word");
                Refused(CudaStatus.InvalidArgument, WriteCall, () => stream.WriteValue(b, 0, 1, 4, MemOpFlags.Flush),
                    "FLUSH on a write", "CUABI_MEM_OP_FLUSH is for a wait, not a write");
                Refused(CudaStatus.InvalidArgument, WaitCall,
                    () => stream.WaitValue(b, 0, 1, 4, (WaitCondition)9, MemOpFlags.None), "condition 9",
                    "condition is 9, not one of CUABI_WAIT_GEQ (0), CUABI_WAIT_EQ (1), CUABI_WAIT_AND (2), CUABI_WAIT_NOR (3)");
                Refused(CudaStatus.InvalidArgument, WaitCall, () => stream.WaitValue(b, 2, 1, 8, WaitCondition.Eq, MemOpFlags.None),
                    "a wait at offset 2 of 8-byte words", "offset 2 is not a multiple of the width (8 bytes)");
                // The pinned host forms check the same, against the host buffer's size.
                Refused(CudaStatus.OutOfRange, "cuabi_stream_write_value_host",
                    () => stream.WriteValueHost(host, 64, 1, 8, MemOpFlags.None), "a host word at the end",
                    "the 8-byte word at offset 64 reaches past the end of the 64-byte buffer");
                Refused(CudaStatus.OutOfRange, "cuabi_stream_wait_value_host",
                    () => stream.WaitValueHost(host, 64, 1, 4, WaitCondition.Geq, MemOpFlags.None), "a host wait at the end",
                    "the 4-byte word at offset 64 reaches past the end of the 64-byte buffer");
                // The binding's own checks, before any call.
                Assert.Equal("offset", Assert.Throws<ArgumentOutOfRangeException>(
                    () => stream.WriteValue(b, -8, 1, 8, MemOpFlags.None), "offset -8").ParamName, "the refused argument");
                Assert.Equal("buffer", Assert.Throws<ArgumentNullException>(
                    () => stream.WaitValueHost<uint>(null, 0, 1, 4, WaitCondition.Geq, MemOpFlags.None), "a null host buffer").ParamName,
                    "the refused argument");
                stream.Synchronize();
            }
        }
    }
}
