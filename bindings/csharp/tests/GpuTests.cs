// Tests that need a CUDA device; each is reported as skipped (with the
// reason) where there is none.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class GpuTests
    {
        private const string KernelSource = @"
struct Affine { float scale; int offset; double bias; };

extern ""C"" __global__ void affine(Affine p, const float* x, double* out, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = (double)(p.scale * x[i]) + p.offset + p.bias;
}

extern ""C"" __global__ void add_one(int* data, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

__device__ int g_value = 42;

template <typename T> __global__ void fill(T* p, T v, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
";

        [StructLayout(LayoutKind.Sequential)]
        private struct SmallParams
        {
            public float Scale;
        }

        public static void Register()
        {
            Registry.AddGpu("device: name, compute capability, memory, attributes", DeviceInfo);
            Registry.AddGpu("device: an ordinal past the last device gives NoDevice", NoSuchDevice);
            Registry.AddGpu("saxpy: the overview's flow (NVRTC PTX, load, pinned async copies, launch, events, check)", SaxpyFlow);
            Registry.AddGpu("saxpy: Device.Compile and synchronous copies", SaxpyCompiled);
            Registry.AddGpu("launch: a 4-byte n for size_t is refused naming the parameter, and nothing runs", ParameterSizeMismatch);
            Registry.AddGpu("launch: the kernel's parameter layout is reported and cached", ParameterInfo);
            Registry.AddGpu("launch: a struct passed by value", StructByValue);
            Registry.AddGpu("launch: a bad configuration is refused by the library", BadLaunchConfig);
            Registry.AddGpu("module: CUBIN from Program loads", CubinModule);
            Registry.AddGpu("module: Device.Compile uses the cache; compile errors carry the log", CompileCache);
            Registry.AddGpu("module: name expressions and globals", NameExpressionsAndGlobals);
            Registry.AddGpu("memory: async copies through pinned and registered host memory", AsyncPinnedCopies);
            Registry.AddGpu("memory: memset, device-to-device copy, ranges checked", MemoryOps);
            Registry.AddGpu("memory: allocation answers the address with the handle (sync and stream-ordered)", AllocationAddress);
            Registry.AddGpu("events: timing, queries and cross-stream waits", Events);
            Registry.AddGpu("graphs: a captured stream replays", Graphs);
            Registry.AddGpu("handles: disposal order does not matter", DisposalOrder);
            Registry.AddGpu("handles: finalizers release device objects; the remaining ones still launch", FinalizerReleasedObjects);
        }

        private static CudaModule Kernels(Device d)
        {
            var o = new CompileOptions { Name = "kernels.cu" };
            o.NameExpressions.Add("fill<int>");
            o.NameExpressions.Add("fill<float>");
            return d.Compile(KernelSource, o);
        }

        private static float[] RandomFloats(int n, int seed)
        {
            var r = new Random(seed);
            var a = new float[n];
            for (int i = 0; i < n; i++)
                a[i] = (float)r.NextDouble();
            return a;
        }

        private static void CheckSaxpy(float a, float[] x, float[] y, float[] got)
        {
            for (int i = 0; i < x.Length; i++)
            {
                float want = a * x[i] + y[i];
                if (Math.Abs(got[i] - want) > 1e-8 + 1e-5 * Math.Abs(want))
                    throw new TestFailure(string.Format("out[{0}] = {1}, expected {2}", i, got[i], want));
            }
        }

        private static void DeviceInfo()
        {
            using (var d = Device.Get(0))
            {
                Assert.Equal(0, d.Ordinal, "Ordinal");
                Assert.True(d.Name.Length > 0, "empty name");
                var cc = d.ComputeCapability;
                Assert.True(cc.Major >= 5, "compute capability " + cc);
                // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
                Assert.Equal(cc.Major, d.GetAttribute(75), "attribute 75");
                long free, total;
                d.GetMemoryInfo(out free, out total);
                Assert.True(total > 0 && free > 0 && free <= total, "memory " + free + " of " + total);
                Assert.Equal(d.TotalMemory, total, "TotalMemory");
                Assert.True(d.NativeContext != 0, "no context");
                int least, greatest;
                d.GetStreamPriorityRange(out least, out greatest);
                Assert.True(greatest <= least, "priority range " + least + ".." + greatest);
                Assert.True(Cuda.DriverVersion >= 12000, "driver version " + Cuda.DriverVersion);
                Assert.Contains("libcuda", Cuda.DriverPath, "DriverPath");
                d.Synchronize();
            }
        }

        private static void NoSuchDevice()
        {
            int n = Device.Count;
            var e = Assert.ThrowsCuda(CudaStatus.NoDevice, () => Device.Get(n), "Device.Get(" + n + ")");
            Assert.True(e.Message.Length > 0, "empty message");
            Assert.ThrowsCuda(CudaStatus.NoDevice, () => Device.Get(-1), "Device.Get(-1)");
        }

        private static void SaxpyFlow()
        {
            const int threads = 512, blocks = 32768, n = threads * blocks;
            const float a = 2.0f;
            float[] hx = RandomFloats(n, 1), hy = RandomFloats(n, 2);
            using (var d = Device.Get(0))
            {
                var cc = d.ComputeCapability;
                string ptx;
                using (var p = new Program(NoGpuTests.SaxpySource, "saxpy.cu"))
                {
                    p.Compile("--fmad=false", "--gpu-architecture=compute_" + cc.Major + cc.Minor);
                    ptx = p.Ptx;
                }
                using (var module = d.LoadModule(ptx))
                using (var kernel = module.GetKernel("saxpy"))
                using (var stream = d.CreateStream())
                using (var px = d.AllocatePinned<float>(n))
                using (var py = d.AllocatePinned<float>(n))
                using (var pout = d.AllocatePinned<float>(n))
                using (var dx = d.Allocate<float>(n))
                using (var dy = d.Allocate<float>(n))
                using (var dout = d.Allocate<float>(n))
                using (var start = d.CreateEvent())
                using (var stop = d.CreateEvent())
                {
                    px.CopyFrom(hx);
                    py.CopyFrom(hy);
                    dx.CopyFromAsync(px, stream);
                    dy.CopyFromAsync(py, stream);
                    start.Record(stream);
                    kernel.Launch(blocks, threads, stream, a, dx, dy, dout, (ulong)n);
                    stop.Record(stream);
                    dout.CopyToAsync(pout, stream);
                    stream.Synchronize();
                    Assert.True(stop.ElapsedSince(start) >= 0, "negative kernel time");
                    CheckSaxpy(a, hx, hy, pout.ToArray());
                }
            }
        }

        private static void SaxpyCompiled()
        {
            const int n = 100003; // not a multiple of the block size
            float[] hx = RandomFloats(n, 3), hy = RandomFloats(n, 4);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var dx = d.AllocateFrom(hx))
            using (var dy = d.AllocateFrom(hy))
            using (var dout = d.Allocate<float>(n))
            {
                Assert.Equal("saxpy", k.Name, "kernel name");
                k.Launch(new LaunchConfig((n + 255) / 256, 256), null, 3.5f, dx, dy, dout, (long)n);
                CheckSaxpy(3.5f, hx, hy, dout.ToArray());
            }
        }

        private static void ParameterSizeMismatch()
        {
            const int n = 4096;
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var dx = d.AllocateFrom(RandomFloats(n, 5)))
            using (var dy = d.AllocateFrom(RandomFloats(n, 6)))
            using (var dout = d.Allocate<float>(n))
            {
                dout.Memset(0xAB);
                // The library's check and words, as an ArgumentException.
                var e = Assert.Throws<ArgumentException>(
                    () => k.Launch(n / 256, 256, null, 2.0f, dx, dy, dout, (uint)n), "4-byte n");
                Assert.Contains("kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes", e.Message, "message");
                Assert.Equal("args", e.ParamName, "ParamName");
                var inner = e.InnerException as CudaException;
                Assert.True(inner != null && inner.Status == CudaStatus.InvalidArgument, "inner exception: " + e.InnerException);
                Assert.Contains("cuabi_function_check_arg_sizes", inner.Message, "the call that checked");
                e = Assert.Throws<ArgumentException>(() => k.Launch(n / 256, 256, null, 2.0f, dx, dy, dout), "missing n");
                Assert.Contains("kernel 'saxpy' takes 5 parameters, but 4 were given", e.Message, "message");
                using (var plan = k.Prepare(n / 256, 256))
                {
                    e = Assert.Throws<ArgumentException>(() => plan.Set(4, (uint)n), "a plan's 4-byte n");
                    Assert.Contains("kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes", e.Message, "message");
                    Assert.Equal("value", e.ParamName, "ParamName");
                    var r = Assert.Throws<ArgumentOutOfRangeException>(() => plan.Set(5, 1UL), "index 5 of 5");
                    Assert.Contains("takes 5 parameters; there is no parameter 5", r.Message, "message");
                    Assert.Equal("index", r.ParamName, "ParamName");
                }

                // The library's own check, through cuabi_function_launch_sized.
                var config = new LaunchConfig(n / 256, 256).ToNative();
                var values = new ulong[] { BitConverter.ToUInt32(BitConverter.GetBytes(2.0f), 0), dx.DevicePointer,
                    dy.DevicePointer, dout.DevicePointer, n };
                var valuePins = GCHandle.Alloc(values, GCHandleType.Pinned);
                var pointers = new IntPtr[5];
                for (int i = 0; i < 5; i++)
                    pointers[i] = Marshal.UnsafeAddrOfPinnedArrayElement(values, i);
                var sizes = new[] { (UIntPtr)4u, (UIntPtr)8u, (UIntPtr)8u, (UIntPtr)8u, (UIntPtr)4u };
                var pp = GCHandle.Alloc(pointers, GCHandleType.Pinned);
                try
                {
                    CudaStatus status = NativeMethods.cuabi_function_launch_sized(k.Handle, ref config, new SafeStreamHandle(),
                        pp.AddrOfPinnedObject(), sizes, (UIntPtr)5u);
                    Assert.Equal(CudaStatus.InvalidArgument, status, "cuabi_function_launch_sized with a 4-byte n");
                    Assert.Contains("parameter 4 is 8 bytes", Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "message");
                }
                finally
                {
                    valuePins.Free();
                    pp.Free();
                }

                d.Synchronize();
                foreach (float f in dout.ToArray())
                    Assert.Equal(unchecked((int)0xABABABAB), BitConverter.ToInt32(BitConverter.GetBytes(f), 0),
                        "output written although every launch was refused");
            }
        }

        private static void ParameterInfo()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            {
                var ps = k.Parameters;
                Assert.Equal(5, ps.Count, "parameter count");
                Assert.Equal("4 8 8 8 8", string.Join(" ", ps.Select(p => p.Size)), "sizes");
                Assert.Equal("0 8 16 24 32", string.Join(" ", ps.Select(p => p.Offset)), "offsets");
                Assert.Equal(40, k.ArgumentBlockSize, "argument block size");
                Assert.True(k.GetAttribute(FunctionAttribute.MaxThreadsPerBlock) >= 256, "max threads per block");
                Assert.True(k.GetAttribute(FunctionAttribute.NumRegs) > 0, "registers");
            }
        }

        private static void StructByValue()
        {
            const int n = 1000;
            float[] hx = RandomFloats(n, 7);
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k = m.GetKernel("affine"))
            using (var dx = d.AllocateFrom(hx))
            using (var dout = d.Allocate<double>(n))
            {
                Assert.Equal(16, k.Parameters[0].Size, "sizeof(Affine) on the device");
                var p = new NoGpuTests.Affine { Scale = 3.0f, Offset = -7, Bias = 0.5 };
                k.Launch(4, 256, null, p, dx, dout, (ulong)n);
                double[] got = dout.ToArray();
                for (int i = 0; i < n; i++)
                {
                    double want = (double)(p.Scale * hx[i]) + p.Offset + p.Bias;
                    Assert.True(Math.Abs(got[i] - want) < 1e-5, "out[" + i + "] = " + got[i] + ", expected " + want);
                }
                var e = Assert.Throws<ArgumentException>(
                    () => k.Launch(4, 256, null, new SmallParams { Scale = 1 }, dx, dout, (ulong)n), "a 4-byte struct for Affine");
                Assert.Contains("parameter 0", e.Message, "message names the parameter");
            }
        }

        private static void BadLaunchConfig()
        {
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k = m.GetKernel("add_one"))
            using (var buf = d.Allocate<int>(16))
            {
                Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => k.Launch(new LaunchConfig(new Dim3(0), 16), null, buf, 16UL), "zero grid");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => k.Launch(new LaunchConfig(1, 1 << 20), null, buf, 16UL), "a block of 2^20 threads");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => k.Launch(new LaunchConfig(1, 16, 1u << 30), null, buf, 16UL), "1 GiB of shared memory");
                buf.Memset(0);
                k.Launch(1, 16, null, buf, 16UL);
                Assert.True(buf.ToArray().All(v => v == 1), "a good launch after the refused ones");
            }
        }

        private static void CubinModule()
        {
            using (var d = Device.Get(0))
            {
                var cc = d.ComputeCapability;
                byte[] cubin;
                using (var p = new Program(KernelSource))
                {
                    p.Compile("--gpu-architecture=sm_" + cc.Major + cc.Minor);
                    cubin = p.Cubin;
                }
                using (var m = d.LoadModule(cubin))
                using (var k = m.GetKernel("add_one"))
                using (var buf = d.AllocateFrom(new[] { 1, 2, 3 }))
                {
                    k.Launch(1, 32, null, buf, 3UL);
                    Assert.Equal("2 3 4", string.Join(" ", buf.ToArray()), "add_one");
                }
                Assert.ThrowsCuda(CudaStatus.NotFound, () => d.LoadModule(cubin).GetKernel("no_such_kernel"), "missing kernel");
            }
        }

        private static void CompileCache()
        {
            string token = Guid.NewGuid().ToString("N");
            string source = "// " + token + "\n" + NoGpuTests.SaxpySource;
            bool cacheOff = Environment.GetEnvironmentVariable("CUABI_CACHE") == "0";
            using (var d = Device.Get(0))
            {
                using (var first = d.Compile(source))
                    Assert.True(!first.FromCache, "a never-seen source came from the cache");
                using (var second = d.Compile(source))
                {
                    if (!cacheOff)
                        Assert.True(second.FromCache, "the second compile of the same source missed the cache (CUABI_CACHE_DIR=" +
                                                      Environment.GetEnvironmentVariable("CUABI_CACHE_DIR") + ")");
                    using (var k = second.GetKernel("saxpy"))
                        Assert.Equal(5, k.Parameters.Count, "a kernel from the cached module");
                }
                using (var third = d.Compile(source, new CompileOptions { UseCache = false }))
                    Assert.True(!third.FromCache, "UseCache = false still read the cache");
                using (var ptx = d.Compile(source, new CompileOptions { Output = CompileOutput.Ptx }))
                using (var k = ptx.GetKernel("saxpy"))
                    Assert.Equal(40, k.ArgumentBlockSize, "PTX-compiled kernel");

                var e = Assert.ThrowsCuda(CudaStatus.Compile,
                    () => d.Compile("extern \"C\" __global__ void k() { nope(); }", new CompileOptions { Name = "nope.cu" }),
                    "broken source");
                Assert.Contains("nope", e.CompileLog, "CompileLog");
            }
        }

        private static void NameExpressionsAndGlobals()
        {
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            {
                string lowered = m.GetLoweredName("fill<int>");
                Assert.True(lowered.StartsWith("_Z"), "lowered name " + lowered);
                using (var k = m.GetKernel("fill<int>"))
                using (var buf = d.Allocate<int>(100))
                {
                    k.Launch(1, 128, null, buf, 77, 100UL);
                    Assert.True(buf.ToArray().All(v => v == 77), "fill<int>");
                    Assert.Equal("fill<int>", k.Name, "Kernel.Name of a kernel taken by a name expression");
                }
                using (var k = m.GetKernel("fill<float>"))
                using (var buf = d.Allocate<float>(10))
                {
                    Assert.Throws<ArgumentException>(() => k.Launch(1, 32, null, buf, 1.0, 10UL), "a double for a float");
                    k.Launch(1, 32, null, buf, 1.25f, 10UL);
                    Assert.True(buf.ToArray().All(v => v == 1.25f), "fill<float>");
                }
                ModuleGlobal g = m.GetGlobal("g_value");
                Assert.Equal(4L, g.SizeInBytes, "sizeof g_value");
                using (var view = DeviceBuffer<int>.Wrap(d, g.DevicePointer, 1))
                {
                    Assert.Equal(42, view.ToArray()[0], "g_value");
                    view.CopyFrom(new[] { 43 });
                }
                using (var again = DeviceBuffer<int>.Wrap(d, g.DevicePointer, 1))
                    Assert.Equal(43, again.ToArray()[0], "g_value after writing through a released wrapper");
                Assert.ThrowsCuda(CudaStatus.NotFound, () => m.GetGlobal("no_such_global"), "missing global");
            }
        }

        private static void AsyncPinnedCopies()
        {
            const int n = 1 << 20;
            var data = Enumerable.Range(0, n).ToArray();
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k = m.GetKernel("add_one"))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var host = d.AllocatePinned<int>(n))
            using (var back = d.AllocatePinned<int>(n))
            using (var dev = d.Allocate<int>(n))
            {
                host.CopyFrom(data);
                Assert.Equal(5, host[5], "pinned indexer");
                dev.CopyFromAsync(host, stream);
                k.Launch(n / 256, 256, stream, dev, (ulong)n);
                dev.CopyToAsync(back, stream);
                stream.Synchronize();
                Assert.True(stream.IsComplete, "stream not complete after Synchronize");
                int[] got = back.ToArray();
                for (int i = 0; i < n; i++)
                    if (got[i] != i + 1)
                        throw new TestFailure("back[" + i + "] = " + got[i]);

                // Part of the range, at offsets.
                dev.CopyToAsync(10, back, 0, 5, stream);
                stream.Synchronize();
                Assert.Equal("11 12 13 14 15", string.Join(" ", back.ToArray().Take(5)), "ranged async copy");
                Assert.Throws<ArgumentException>(() => dev.CopyToAsync(0, back, n - 2, 5, stream), "past the end of the pinned buffer");

                // Managed arrays pinned in place.
                var src = Enumerable.Range(0, 1000).Select(i => i * 3).ToArray();
                var dst = new int[1000];
                using (var rs = PinnedBuffer<int>.Register(d, src))
                using (var rd = PinnedBuffer<int>.Register(d, dst))
                using (var small = d.Allocate<int>(1000))
                {
                    small.CopyFromAsync(rs, stream);
                    k.Launch(4, 256, stream, small, 1000UL);
                    small.CopyToAsync(rd, stream);
                    stream.Synchronize();
                }
                for (int i = 0; i < 1000; i++)
                    Assert.Equal(i * 3 + 1, dst[i], "registered dst[" + i + "]");
            }
        }

        private static void AllocationAddress()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream())
            using (var m = Kernels(d))
            using (var k = m.GetKernel("add_one"))
            {
                using (var a = d.Allocate<int>(64))
                {
                    Assert.Equal(a.Pointer, a.DevicePointer, "Allocate: the address is the buffer's pointer");
                    Assert.Equal(256L, a.SizeInBytes, "Allocate: SizeInBytes");
                    Assert.Equal(64L, a.Count, "Allocate: Count");
                    a.Memset(0x01);
                    k.Launch(1, 64, null, a, 64UL);
                    Assert.True(a.ToArray().All(v => v == 0x01010102), "Allocate: memset and a kernel write through it");
                }
                var b = d.AllocateAsync<int>(64, stream);
                try
                {
                    Assert.Equal(b.Pointer, b.DevicePointer, "AllocateAsync: the address is the buffer's pointer");
                    Assert.Equal(256L, b.SizeInBytes, "AllocateAsync: SizeInBytes");
                    Assert.Equal(64L, b.Count, "AllocateAsync: Count");
                    b.MemsetAsync(0x02, stream);
                    k.Launch(1, 64, stream, b, 64UL);
                    stream.Synchronize();
                    Assert.True(b.ToArray().All(v => v == 0x02020203), "AllocateAsync: memset and a kernel write through it");
                }
                finally
                {
                    b.FreeAsync(stream);
                    stream.Synchronize();
                }
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => d.Allocate<int>(0), "Allocate: 0 elements");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => d.AllocateAsync<int>(0, stream), "AllocateAsync: 0 elements");
                Assert.ThrowsCuda(CudaStatus.OutOfMemory, () => d.Allocate<byte>(1L << 50), "Allocate: 2^50 bytes");
            }
        }

        private static void MemoryOps()
        {
            using (var d = Device.Get(0))
            using (var a = d.Allocate<int>(64))
            using (var b = d.Allocate<int>(64))
            {
                Assert.Equal(256L, a.SizeInBytes, "SizeInBytes");
                Assert.Equal(0, a.DeviceOrdinal, "DeviceOrdinal");
                a.Memset(0x01);
                Assert.True(a.ToArray().All(v => v == 0x01010101), "memset");
                b.CopyFrom(a);
                Assert.True(b.ToArray().All(v => v == 0x01010101), "device-to-device copy");
                b.MemsetAsync(0, null);
                b.CopyFrom(new[] { 5, 6, 7 }, 1, 10, 2);
                var part = new int[4];
                b.CopyTo(9, part, 0, 4);
                Assert.Equal("0 6 7 0", string.Join(" ", part), "ranged copies");

                Assert.ThrowsCuda(CudaStatus.OutOfRange, () => a.CopyFrom(new int[65]), "65 ints into 64");
                Assert.ThrowsCuda(CudaStatus.OutOfRange, () => a.CopyTo(60, new int[8], 0, 8), "reading past the end");
                Assert.Throws<ArgumentException>(() => a.CopyFrom(new int[4], 2, 0, 3), "past the end of the host array");
                Assert.Throws<ArgumentOutOfRangeException>(() => a.CopyFrom(new int[4], -1, 0, 1), "negative index");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => d.Allocate<int>(0), "a 0-element allocation");
            }
        }

        private static void Events()
        {
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k = m.GetKernel("add_one"))
            using (var s1 = d.CreateStream())
            using (var s2 = d.CreateStream())
            using (var buf = d.Allocate<int>(1 << 20))
            using (var start = d.CreateEvent())
            using (var stop = d.CreateEvent(EventFlags.BlockingSync))
            using (var sync = d.CreateEvent(EventFlags.DisableTiming))
            {
                buf.MemsetAsync(0, s1);
                start.Record(s1);
                for (int i = 0; i < 10; i++)
                    k.Launch(4096, 256, s1, buf, (ulong)(1 << 20));
                stop.Record(s1);
                sync.Record(s1);
                s2.WaitEvent(sync);
                k.Launch(4096, 256, s2, buf, (ulong)(1 << 20)); // after the ten on s1
                stop.Synchronize();
                Assert.True(stop.IsComplete && start.IsComplete, "events not complete after Synchronize");
                float ms = CudaEvent.ElapsedMilliseconds(start, stop);
                Assert.True(ms >= 0 && ms < 60000, "elapsed " + ms + " ms");
                Assert.Throws<CudaException>(() => sync.ElapsedSince(start), "timing with a DisableTiming event");
                s2.Synchronize();
                Assert.True(buf.ToArray().All(v => v == 11), "the launch on s2 did not wait for s1");
            }
        }

        private static void Graphs()
        {
            const int n = 4096;
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k = m.GetKernel("add_one"))
            using (var stream = d.CreateStream())
            using (var buf = d.Allocate<int>(n))
            {
                buf.Memset(0);
                stream.BeginCapture();
                for (int i = 0; i < 3; i++)
                    k.Launch(n / 256, 256, stream, buf, (ulong)n);
                CudaGraph graph = stream.EndCapture();
                Assert.True(buf.ToArray().All(v => v == 0), "captured work ran during the capture");
                using (graph)
                using (var exec = graph.Instantiate())
                {
                    Assert.Equal(3L, graph.NodeCount, "graph nodes");
                    exec.Launch(stream);
                    exec.Launch(stream);
                    stream.Synchronize();
                }
                Assert.True(buf.ToArray().All(v => v == 6), "two replays of three add_one");
                Assert.Throws<CudaException>(() => new CudaStream(new SafeStreamHandle()).BeginCapture(), "capturing the default stream");
            }
        }

        private static void DisposalOrder()
        {
            Kernel k;
            DeviceBuffer<int> buf;
            CudaStream stream;
            using (var d = Device.Get(0))
            {
                var m = Kernels(d);
                k = m.GetKernel("add_one");
                buf = d.Allocate<int>(256);
                stream = d.CreateStream();
                m.Dispose(); // the kernel keeps its module
            } // and every object its device context
            using (k)
            using (buf)
            using (stream)
            {
                buf.MemsetAsync(0, stream);
                k.Launch(1, 256, stream, buf, 256UL);
                stream.Synchronize();
                Assert.True(buf.ToArray().All(v => v == 1), "launch after the module and device were disposed");
            }
            Assert.Throws<ObjectDisposedException>(() => k.Launch(1, 1, null, 1, 1UL), "launching a disposed kernel");
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k2 = m.GetKernel("add_one"))
            {
                var e = Assert.Throws<ObjectDisposedException>(() => k2.Launch(1, 1, null, buf, 1UL), "a disposed buffer as argument");
                Assert.Contains("DeviceBuffer", e.ObjectName, "ObjectName");
                Assert.Throws<ObjectDisposedException>(() => k2.Launch(1, 1, stream, d.Allocate<int>(1), 1UL), "a disposed stream");
            }
        }

        private static void FinalizerReleasedObjects()
        {
            using (var d = Device.Get(0))
            using (var m = Kernels(d))
            using (var k = m.GetKernel("add_one"))
            using (var kept = d.Allocate<int>(1024))
            {
                // Objects of every kind, used once, then dropped without Dispose.
                IntPtr[] raw = AbandonAndCollect(() =>
                {
                    var dev = Device.Get(0);
                    var mod = Kernels(dev);
                    var fn = mod.GetKernel("add_one");
                    var b = dev.Allocate<int>(1024);
                    var s = dev.CreateStream();
                    var e = dev.CreateEvent();
                    var pinned = dev.AllocatePinned<int>(1024);
                    b.MemsetAsync(0, s);
                    fn.Launch(4, 256, s, b, 1024UL);
                    e.Record(s);
                    b.CopyToAsync(pinned, s);
                    s.BeginCapture();
                    fn.Launch(4, 256, s, b, 1024UL);
                    var graph = s.EndCapture();
                    var exec = graph.Instantiate();
                    s.Synchronize();
                    return new[]
                    {
                        dev.Handle.DangerousGetHandle(), mod.Handle.DangerousGetHandle(), fn.Handle.DangerousGetHandle(),
                        b.Handle.DangerousGetHandle(), s.Handle.DangerousGetHandle(), e.Handle.DangerousGetHandle(),
                        pinned.Handle.DangerousGetHandle(), graph.Handle.DangerousGetHandle(), exec.Handle.DangerousGetHandle(),
                    };
                });

                int ordinal;
                UIntPtr size;
                ulong ptr;
                IntPtr hostPtr;
                const CudaStatus invalid = CudaStatus.InvalidHandle;
                Assert.Equal(invalid, NativeMethods.cuabi_device_get_ordinal(new SafeDeviceHandle(raw[0], false), out ordinal), "device");
                Assert.Equal(invalid, NativeMethods.cuabi_module_get_from_cache(new SafeModuleHandle(raw[1], false), out ordinal), "module");
                Assert.Equal(invalid, NativeMethods.cuabi_function_get_args_size(new SafeFunctionHandle(raw[2], false), out size), "function");
                Assert.Equal(invalid, NativeMethods.cuabi_buffer_get_size(new SafeBufferHandle(raw[3], false), out size), "buffer");
                Assert.Equal(invalid, NativeMethods.cuabi_stream_get_handle(new SafeStreamHandle(raw[4], false), out ptr), "stream");
                Assert.Equal(invalid, NativeMethods.cuabi_event_query(new SafeEventHandle(raw[5], false)), "event");
                Assert.Equal(invalid, NativeMethods.cuabi_host_buffer_get_pointer(new SafeHostBufferHandle(raw[6], false), out hostPtr), "host buffer");
                Assert.Equal(invalid, NativeMethods.cuabi_graph_get_node_count(new SafeGraphHandle(raw[7], false), out size), "graph");
                Assert.Equal(invalid, NativeMethods.cuabi_graph_exec_launch(new SafeGraphExecHandle(raw[8], false), new SafeStreamHandle()), "graph exec");

                kept.Memset(0);
                k.Launch(4, 256, null, kept, 1024UL);
                k.Launch(4, 256, null, kept, 1024UL);
                Assert.True(kept.ToArray().All(v => v == 2), "launches on the remaining handles");
            }
        }

        private static IntPtr[] AbandonAndCollect(Func<IntPtr[]> make)
        {
            IntPtr[] raw = null;
            Exception failure = null;
            var t = new Thread(() =>
            {
                try
                {
                    raw = make();
                }
                catch (Exception e)
                {
                    failure = e;
                }
            });
            t.Start();
            t.Join();
            if (failure != null)
                throw new TestFailure("making the objects failed: " + failure);
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            return raw;
        }
    }
}
