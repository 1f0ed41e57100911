// Green contexts and tensor maps, as tests/c/gpu_green_context_test.cc and
// gpu_tensor_map_test.cc test them: a kernel recording %smid from every block
// stays on a green context's SMs and reaches more on the primary context; a
// Hopper kernel copies tiles with cp.async.bulk.tensor through a TensorMap
// passed by value (TensorMapValue), checked against the host with and
// without swizzle and after the map's address is replaced; the core's
// refusals carry their bound.

using System;
using System.Collections.Generic;

namespace Cuabi.Tests
{
    internal static class GreenTensorTests
    {
        private const string Smid = @"
extern ""C"" __global__ void record_smid(unsigned* out, long long spin) {
  unsigned id;
  asm volatile(""mov.u32 %0, %%smid;"" : ""=r""(id));
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = id;
}
";

        private const string Tiles = @"
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

extern ""C"" __global__ void copy_tiles(const __grid_constant__ TensorMap map, float* out,
                                      int tiles_x) {
  __shared__ __align__(1024) float tile[256];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned mbar = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile(""mbarrier.init.shared::cta.b64 [%0], %1;"" ::""r""(mbar), ""r""(1u) : ""memory"");
    asm volatile(""fence.proxy.async.shared::cta;"" ::: ""memory"");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int x = static_cast<int>(blockIdx.x % tiles_x) * 32;
    const int y = static_cast<int>(blockIdx.x / tiles_x) * 8;
    asm volatile(""mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;""
                 ::""r""(mbar), ""r""(1024u) : ""memory"");
    asm volatile(
        ""cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes""
        "" [%0], [%1, {%2, %3}], [%4];""
        ::""r""(smem), ""l""(reinterpret_cast<unsigned long long>(&map)), ""r""(x), ""r""(y),
          ""r""(mbar)
        : ""memory"");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile(
        ""{\n.reg .pred p;\n""
        ""mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n""
        ""selp.u32 %0, 1, 0, p;\n}""
        : ""=r""(done)
        : ""r""(mbar), ""r""(0u)
        : ""memory"");
  }
  out[blockIdx.x * 256 + threadIdx.x] = tile[threadIdx.x];
}
";

        private const int Blocks = 1024;
        private const int Rows = 64, Cols = 128;

        public static void Register()
        {
            Registry.AddGpu("green context: a kernel stays on its SMs; the primary context reaches more", StaysOnItsSms);
            Registry.AddGpu("green context: refusals name the bound", GreenRefusals);
            Registry.AddGpu("tensor map: tiles match the host, with and without swizzle, then after replace", Tiles2D);
            Registry.AddGpu("tensor map: refusals name the bound", MapRefusals);
        }

        private static HashSet<uint> Seen(Kernel k, DeviceBuffer<uint> output, CudaStream s)
        {
            output.MemsetAsync(0xFF, s);
            k.Launch(new LaunchConfig(Blocks, 64), s, output, 200000L);
            s.Synchronize();
            var seen = new HashSet<uint>();
            foreach (uint id in output.ToArray())
            {
                Assert.True(id != 0xFFFFFFFFu, "a block recorded nothing");
                seen.Add(id);
            }
            return seen;
        }

        private static void StaysOnItsSms()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(Smid, new CompileOptions { Name = "smid.cu" }))
            using (var k = m.GetKernel("record_smid"))
            using (var output = d.Allocate<uint>(Blocks))
            {
                CudaStream gs;
                uint n;
                using (var all = d.SmResource)
                using (var group = all.Split(2, 0, 0))
                using (var green = GreenContext.Create(group))
                {
                    n = group.SmCount;
                    Assert.True(n < all.SmCount, "a group has fewer SMs than the device");
                    Assert.True(green.SmCount == n, "the context has the group's SMs");
                    gs = green.CreateStream(StreamFlags.NonBlocking, 0);
                    green.CheckStream(gs);
                }
                using (gs)
                {
                    // What the stream was made from is disposed: the stream keeps it.
                    var onGreen = Seen(k, output, gs);
                    Assert.True(onGreen.Count <= n, string.Format("ran on {0} SMs, more than {1}", onGreen.Count, n));
                }
                using (var primary = d.CreateStream(StreamFlags.NonBlocking))
                {
                    var onPrimary = Seen(k, output, primary);
                    Assert.True(onPrimary.Count > n, string.Format("the primary context reached only {0} SMs", onPrimary.Count));
                }
            }
        }

        private static void GreenRefusals()
        {
            using (var d = Device.Get(0))
            using (var all = d.SmResource)
            {
                uint total = all.SmCount;
                Assert.Contains("group_count is 0",
                    Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => all.Split(0, 0, 0), "no groups").Message, "message");
                Assert.Contains("the resource has " + total + " SMs",
                    Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => all.Split(total + 1, 0, 0), "too many").Message, "message");
                using (var part = all.Split(1, 0, 0))
                    Assert.Contains("does not split again",
                        Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => part.Split(1, 0, 0), "a part").Message, "message");
                using (var p1 = all.Split(2, 0, 0))
                using (var p2 = all.Split(2, 0, 1))
                using (var g1 = GreenContext.Create(p1))
                using (var g2 = GreenContext.Create(p2))
                using (var s2 = g2.CreateStream(StreamFlags.NonBlocking, 0))
                using (var plain = d.CreateStream(StreamFlags.NonBlocking))
                {
                    Assert.Contains("another green context",
                        Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => g1.CheckStream(s2), "other").Message, "message");
                    Assert.Contains("primary context",
                        Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => g1.CheckStream(plain), "plain").Message, "message");
                    Assert.Contains("CUABI_STREAM_NON_BLOCKING",
                        Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => g1.CreateStream(0, 0).Dispose(), "blocking").Message,
                        "message");
                }
            }
        }

        private static float[] Expected(float[] host, int mask)
        {
            int tilesX = Cols / 32, tiles = tilesX * (Rows / 8);
            var output = new float[tiles * 256];
            for (int b = 0; b < tiles; b++)
            {
                int x0 = (b % tilesX) * 32, y0 = (b / tilesX) * 8;
                for (int r = 0; r < 8; r++)
                    for (int c = 0; c < 32; c++)
                    {
                        int o = (r * 32 + c) * 4;
                        int s = o ^ (((o >> 7) & mask) << 4);
                        output[b * 256 + s / 4] = host[(y0 + r) * Cols + x0 + c];
                    }
            }
            return output;
        }

        private static void Same(float[] want, float[] got, string what)
        {
            for (int i = 0; i < want.Length; i++)
                if (want[i] != got[i])
                    throw new TestFailure(string.Format("{0}: element {1} is {2}, expected {3}", what, i, got[i], want[i]));
        }

        private static TensorMap Map(DeviceMemory buf, TensorSwizzle swizzle)
        {
            return TensorMap.EncodeTiled(buf, 0, TensorDataType.Float32, new long[] { Cols, Rows },
                new long[] { 4, Cols * 4 }, new long[] { 32, 8 }, null, TensorInterleave.None, swizzle);
        }

        private static void Tiles2D()
        {
            using (var d = Device.Get(0))
            {
                if (d.ComputeCapability.Major < 9)
                    throw new SkipException("tensor maps need compute capability 9.0");
                var h1 = new float[Rows * Cols];
                var h2 = new float[Rows * Cols];
                for (int i = 0; i < h1.Length; i++)
                {
                    h1[i] = i;
                    h2[i] = 3.0f - 0.5f * i;
                }
                using (var m = d.Compile(Tiles, new CompileOptions { Name = "tiles.cu" }))
                using (var k = m.GetKernel("copy_tiles"))
                using (var a = d.AllocateFrom(h1))
                using (var output = d.Allocate<float>(Rows * Cols))
                {
                    foreach (var pair in new[] { Tuple.Create(TensorSwizzle.None, 0), Tuple.Create(TensorSwizzle.B128, 7) })
                    {
                        using (var map = Map(a, pair.Item1))
                        {
                            Action<float[], string> run = (host, what) =>
                            {
                                k.Launch(new LaunchConfig((Cols / 32) * (Rows / 8), 256), null, map.Value, output, Cols / 32);
                                d.Synchronize();
                                Same(Expected(host, pair.Item2), output.ToArray(), what);
                            };
                            run(h1, "swizzle " + pair.Item1);
                            using (var b = d.AllocateFrom(h2))
                                map.ReplaceAddress(b, 0);
                            run(h2, "swizzle " + pair.Item1 + " after replace");
                        }
                    }
                }
            }
        }

        private static void MapRefusals()
        {
            using (var d = Device.Get(0))
            using (var buf = d.Allocate<float>(1 << 14))
            {
                Assert.Contains("not a multiple of 16", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => TensorMap.EncodeTiled(buf, 0, TensorDataType.Float32, new long[] { 64, 64 }, new long[] { 4, 260 },
                        new long[] { 32, 8 }).Dispose(), "stride").Message, "message");
                Assert.Contains("box[1] is 257, not within 1 to 256", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => TensorMap.EncodeTiled(buf, 0, TensorDataType.Float32, new long[] { 64, 64 }, new long[] { 4, 256 },
                        new long[] { 32, 257 }).Dispose(), "box").Message, "message");
                Assert.Contains("more than the 64-byte span", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => TensorMap.EncodeTiled(buf, 0, TensorDataType.Float32, new long[] { 64, 64 }, new long[] { 4, 256 },
                        new long[] { 64, 8 }, null, TensorInterleave.None, TensorSwizzle.B64).Dispose(), "swizzle").Message, "message");
                using (var map = TensorMap.EncodeTiled(buf, 0, TensorDataType.Float32, new long[] { 64, 64 },
                    new long[] { 4, 256 }, new long[] { 32, 8 }))
                    Assert.Contains("16-byte aligned", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                        () => map.ReplaceAddress(buf, 4), "misaligned").Message, "message");
            }
        }
    }
}
