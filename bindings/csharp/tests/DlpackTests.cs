// DLPack through the core, as tests/c/gpu_dlpack_test.cc tests it: a tensor
// of the producer library the tests build (tests/dlpack_producer, a C library
// that knows nothing of cuabi, named by CUABI_TEST_DLPACK_PRODUCER) taken
// over, launched on and released, its deleter run exactly once; a buffer
// exported and taken back at its offset; the refusals named by the core.

using System;
using System.Runtime.InteropServices;

namespace Cuabi.Tests
{
    internal static class DlpackTests
    {
        public static void Register()
        {
            Registry.AddGpu("dlpack: a producer's tensors taken over, launched on (SAXPY), released; each deleter once",
                ProducerTensors);
            Registry.AddGpu("dlpack: a buffer exported with an offset and strides and taken back", ExportedAndBack);
            Registry.AddGpu("dlpack: refusals are named; a refused tensor stays the caller's", Refusals);
            Registry.Add("dlpack: bad tensors refused by the core before any driver call, each named; the tensor stays the caller's",
                CpuRefusals);
        }

        private static int handMadeDeleted;
        private static readonly DeleterFn CountDeleted = delegate(IntPtr self) { handMadeDeleted++; };

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        private delegate void DeleterFn(IntPtr self);

        // A versioned tensor of 16 float32 at a made-up device address, laid
        // out as DLManagedTensorVersioned (80 bytes) with its shape after it.
        private static IntPtr HandMade(int deviceType, uint major, ulong flags, byte bits)
        {
            IntPtr t = Marshal.AllocHGlobal(96);
            for (int i = 0; i < 96; i += 8) Marshal.WriteInt64(t, i, 0);
            Marshal.WriteInt32(t, 0, (int)major);
            Marshal.WriteInt32(t, 4, 1);
            Marshal.WriteIntPtr(t, 16, Marshal.GetFunctionPointerForDelegate(CountDeleted));
            Marshal.WriteInt64(t, 24, (long)flags);
            Marshal.WriteInt64(t, 32, 0x7f0000000000L);   // data
            Marshal.WriteInt32(t, 40, deviceType);         // device.device_type
            Marshal.WriteInt32(t, 48, 1);                  // ndim
            Marshal.WriteByte(t, 52, 2);                   // dtype.code: float
            Marshal.WriteByte(t, 53, bits);                // dtype.bits
            Marshal.WriteInt16(t, 54, 1);                  // dtype.lanes
            Marshal.WriteInt64(t, 80, 16);                 // the shape
            Marshal.WriteIntPtr(t, 56, new IntPtr(t.ToInt64() + 80));
            return t;
        }

        private static void CpuRefusals()
        {
            var cases = new[]
            {
                Tuple.Create(HandMade(1, 1, 0, 32), CudaStatus.InvalidArgument, "device.device_type is 1"),
                Tuple.Create(HandMade(2, 2, 0, 32), CudaStatus.NotSupported, "tensor.version is 2.1"),
                Tuple.Create(HandMade(2, 1, 1, 32), CudaStatus.InvalidArgument, "read-only"),
                Tuple.Create(HandMade(2, 1, 0, 4), CudaStatus.NotSupported, "dtype.bits is 4"),
            };
            foreach (var c in cases)
            {
                handMadeDeleted = 0;
                var t = DlpackTensor.FromPointer(c.Item1);
                var e = Assert.ThrowsCuda(c.Item2, () => Dlpack.Import<float>(t), c.Item3);
                Assert.Contains(c.Item3, e.Message, "the message");
                Assert.Equal(c.Item1, t.Pointer, "the tensor stays the caller's");
                Assert.Equal(0, handMadeDeleted, "a refused tensor's deleter");
                t.Dispose();
                Assert.Equal(1, handMadeDeleted, "the deleter, run once by Dispose");
                Marshal.FreeHGlobal(c.Item1);
            }
        }

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        private delegate int MakeFn(int device, long n, float start, ulong flags, out IntPtr tensor, out ulong ptr);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        private delegate int CountFn();

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        private delegate void ResetFn();

        [DllImport("libdl.so.2")]
        private static extern IntPtr dlopen(string path, int flags);

        [DllImport("libdl.so.2")]
        private static extern IntPtr dlsym(IntPtr handle, string name);

        private sealed class Producer
        {
            public MakeFn Make;
            public CountFn Deleted, Freed;
            public ResetFn Reset;

            public DlpackTensor Tensor(long n, float start, ulong flags, out ulong ptr)
            {
                IntPtr t;
                int r = Make(0, n, start, flags, out t, out ptr);
                Assert.True(r == 0, "the producer failed at step " + r);
                return DlpackTensor.FromPointer(t);
            }
        }

        private static Producer Load()
        {
            string path = Environment.GetEnvironmentVariable("CUABI_TEST_DLPACK_PRODUCER");
            if (string.IsNullOrEmpty(path))
                throw new SkipException("CUABI_TEST_DLPACK_PRODUCER is not set (a CMake build makes the producer)");
            IntPtr lib = dlopen(path, 2);
            if (lib == IntPtr.Zero)
                throw new SkipException("cannot open " + path);
            return new Producer
            {
                Make = (MakeFn)Marshal.GetDelegateForFunctionPointer(dlsym(lib, "dlpack_producer_make"), typeof(MakeFn)),
                Deleted = (CountFn)Marshal.GetDelegateForFunctionPointer(dlsym(lib, "dlpack_producer_deleted"), typeof(CountFn)),
                Freed = (CountFn)Marshal.GetDelegateForFunctionPointer(dlsym(lib, "dlpack_producer_freed"), typeof(CountFn)),
                Reset = (ResetFn)Marshal.GetDelegateForFunctionPointer(dlsym(lib, "dlpack_producer_reset"), typeof(ResetFn)),
            };
        }

        private static void ProducerTensors()
        {
            Producer p = Load();
            p.Reset();
            const int n = 4096;
            ulong px, py;
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var tx = p.Tensor(n, 0f, 0, out px))
            using (var ty = p.Tensor(n, 100f, 0, out py))
            {
                var x = Dlpack.Import<float>(tx);
                var y = Dlpack.Import<float>(ty);
                Assert.Equal(px, x.DevicePointer, "x's address (zero-copy)");
                Assert.Equal(py, y.DevicePointer, "y's address (zero-copy)");
                Assert.Equal((long)n, x.Count, "elements");
                using (var dout = d.Allocate<float>(n))
                {
                    k.Launch(new LaunchConfig(n / 256, 256), null, 2.0f, x, y, dout, (ulong)n);
                    var got = new float[n];
                    dout.CopyTo(got);
                    for (int i = 0; i < n; i++)
                        Assert.Equal(2f * i + 100f + i, got[i], "out[" + i + "]");
                }
                Assert.Equal(0, p.Deleted(), "deleter calls while the buffers hold the tensors");
                x.Dispose();
                Assert.Equal(1, p.Deleted(), "deleter calls after one buffer went");
                y.Dispose();
                Assert.Equal(2, p.Deleted(), "deleter calls after both");
                Assert.Equal(2, p.Freed(), "frees");
            }
            Assert.Equal(2, p.Deleted(), "disposing the emptied tensors deletes nothing more");
        }

        private static void ExportedAndBack()
        {
            using (var d = Device.Get(0))
            {
                var host = new float[1024];
                for (int i = 0; i < host.Length; i++) host[i] = i * 0.5f;
                var buf = d.Allocate<float>(1024);
                buf.CopyFrom(host);
                ulong basePtr = buf.DevicePointer;
                using (var t = Dlpack.Export(buf, new long[] { 4, 8 }, new long[] { 16, 1 }, 64))
                {
                    Assert.Equal(basePtr, t.Data, "data");
                    Assert.Equal(64UL, t.ByteOffset, "byte_offset");
                    Assert.Equal(16L, t.Strides[0], "strides[0]");
                    buf.Dispose(); // the tensor holds the memory
                    using (var back = Dlpack.Import<float>(t))
                    {
                        Assert.Equal(basePtr + 64, back.DevicePointer, "taken back at the offset");
                        Assert.Equal(56L, back.Count, "elements to the end of the last one");
                        var got = new float[56];
                        back.CopyTo(got);
                        for (int i = 0; i < got.Length; i++)
                            Assert.Equal(host[16 + i], got[i], "element " + i);
                    }
                }
            }
        }

        private static void Refusals()
        {
            using (var d = Device.Get(0))
            using (var buf = d.Allocate<float>(16))
            {
                var e = Assert.ThrowsCuda(CudaStatus.OutOfRange,
                    () => Dlpack.Export(buf, new long[] { 17 }), "17 floats of a 64-byte buffer");
                Assert.Contains("64-byte buffer", e.Message, "the message");
                Producer p = Load();
                p.Reset();
                ulong ptr;
                using (var t = p.Tensor(8, 0f, 1 /* read-only */, out ptr))
                {
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => Dlpack.Import<float>(t), "read-only as writable");
                    Assert.Contains("read-only", e.Message, "the message");
                    Assert.Equal(0, p.Deleted(), "a refused tensor is not deleted");
                    using (var b = Dlpack.Import<float>(t, true))
                        Assert.Equal(ptr, b.DevicePointer, "zero-copy");
                    Assert.Equal(1, p.Deleted(), "deleter calls");
                }
            }
        }
    }
}
