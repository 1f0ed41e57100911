// 3D batch copies on a GPU (CudaStream.Copy3DBatch): boxes between pinned
// host memory, plain and pitched device memory and an array, several in one
// call, each checked against the box cut from the host volume; and a refusal
// naming the copy at fault (copies[i]), after which nothing of the batch ran.
// They follow tests/python/test_batch_3d.py.

using System;
using System.Linq;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class Batch3DTests
    {
        private const int W = 8, H = 6, D = 5;

        public static void Register()
        {
            Registry.AddGpu("3D batches: boxes between pinned host memory, pitched memory, buffers and an array in one call", BoxesInOneCall);
            Registry.AddGpu("3D batches: a refusal names the copy and queues nothing", Refusal);
        }

        private static float Value(int x, int y, int z)
        {
            return ((z * H + y) * W + x) * 3 + 0.5f;
        }

        private static void BoxesInOneCall()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var vol = d.AllocatePinned<float>(W * H * D))
            using (var sub = d.AllocatePinned<float>(3 * 2 * 2))
            using (var arr = d.CreateArray(ArrayFormat.F32, 1, W, H, D))
            using (var pitched = d.AllocatePitched<float>(W, H * D))
            using (var tight = d.Allocate<float>(W * H * D))
            using (var fromArray = d.Allocate<float>(W * H * D))
            {
                for (int z = 0; z < D; z++)
                    for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++)
                            vol[(z * H + y) * W + x] = Value(x, y, z);
                for (int i = 0; i < 12; i++) sub[i] = -1;
                stream.Copy3DBatch(new[]
                {
                    new Copy3D(CopyEnd.Host(vol), CopyEnd.Array(arr), W * 4, H, D),
                    new Copy3D(CopyEnd.Host(vol), CopyEnd.Device(pitched, 0, H), W * 4, H, D),
                });
                stream.Copy3DBatch(new[]
                {
                    new Copy3D(CopyEnd.Array(arr), CopyEnd.Device(fromArray), W * 4, H, D),
                    new Copy3D(CopyEnd.Device(pitched, 0, H), CopyEnd.Device(tight), W * 4, H, D),
                    // Elements x 1..3, rows 2..3, slices 1..2 of the pitched volume.
                    new Copy3D(CopyEnd.Device(pitched, 0, H).At(1 * 4, 2, 1), CopyEnd.Host(sub), 3 * 4, 2, 2),
                }, CopyBatchFlags.PreferOverlap);
                stream.Synchronize();
                float[] want = Enumerable.Range(0, W * H * D).Select(i => Value(i % W, i / W % H, i / (W * H))).ToArray();
                Assert.True(want.SequenceEqual(tight.ToArray()), "host -> pitched -> buffer differs from the volume");
                Assert.True(want.SequenceEqual(fromArray.ToArray()), "host -> array -> buffer differs from the volume");
                for (int z = 0; z < 2; z++)
                    for (int y = 0; y < 2; y++)
                        for (int x = 0; x < 3; x++)
                            Assert.Equal(Value(1 + x, 2 + y, 1 + z), sub[(z * 2 + y) * 3 + x],
                                "sub-box element (" + x + "," + y + "," + z + ")");
            }
        }

        private static void Refusal()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var dev = d.Allocate<byte>(4096))
            using (var host = d.AllocatePinned<byte>(16 * 16))
            using (var f32 = d.CreateArray(ArrayFormat.F32, 1, W, H, D))
            using (var f32x4 = d.CreateArray(ArrayFormat.F32, 4, W, H, D))
            {
                dev.Memset(0);
                d.Synchronize();
                for (int i = 0; i < 256; i++) host[i] = 0x11;
                Func<int, int, Copy3D> box = (x, y) =>
                    new Copy3D(CopyEnd.Host(host, 16), CopyEnd.Device(dev, 64).At(x, y), 16, 16);
                var e = Assert.ThrowsCuda(CudaStatus.OutOfRange,
                    () => stream.Copy3DBatch(new[] { box(0, 0), box(16, 0), box(0, 60) }), "box 2 past the end");
                Assert.Contains("copies[2]: dst box reaches byte 4816 of the 4096-byte buffer", e.Message, "the message");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => stream.Copy3DBatch(new[] { box(0, 0), new Copy3D(CopyEnd.Array(f32), CopyEnd.Array(f32x4), 16) }),
                    "arrays of unlike element sizes");
                Assert.Contains("copies[1]: the src array's elements are 4 bytes and the dst array's 16", e.Message, "the message");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => stream.Copy3DBatch(new Copy3D[0]), "an empty batch");
                Assert.Throws<ArgumentException>(
                    () => stream.Copy3DBatch(new[] { new Copy3D(CopyEnd.Host(new byte[256]), CopyEnd.Device(dev), 16) }),
                    "a managed array in a batch");
                stream.Synchronize();
                Assert.True(dev.ToArray().All(v => v == 0), "a copy ran although the batch was refused");
                stream.Copy3DBatch(new[] { box(0, 0), box(16, 0) });
                stream.Synchronize();
                byte[] got = dev.ToArray();
                for (int y = 0; y < 64; y++)
                    for (int x = 0; x < 64; x++)
                        Assert.Equal(y < 16 && x < 32 ? (byte)0x11 : (byte)0, got[y * 64 + x], "byte " + x + " of row " + y);
            }
        }
    }
}
