// The generated object layer (src/Objects.g.cs) against the stand-in driver
// of tests/fake/, no GPU: properties, methods, factories and static members
// of Cuda reach the library, and their own argument checks refuse bad input
// naming the parameter. Like the fault-injection test it runs this program
// again as a child with CUABI_DRIVER_PATH and CUABI_NVRTC_PATH pointing at
// the stand-in ($CUABI_FAULT_FAKE_DRIVER; skipped, saying why, without it).

using System;
using System.Collections.Generic;

namespace Cuabi.Tests
{
    internal static class GeneratedLayerTests
    {
        private const string ChildMode = "generated-layer";

        // The stand-in NVRTC compiles a source that names saxpy.
        private const string SaxpySource = @"extern ""C"" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) out[tid] = a * x[tid] + y[tid];
}
";

        public static void Register()
        {
            Registry.Add("generated layer: members of Objects.g.cs against the stand-in driver (own process)", Run);
        }

        private static void Run()
        {
            string fake = Environment.GetEnvironmentVariable("CUABI_FAULT_FAKE_DRIVER");
            if (string.IsNullOrEmpty(fake) || !System.IO.File.Exists(fake))
                throw new SkipException("no stand-in driver (CUABI_FAULT_FAKE_DRIVER: a CMake build makes "
                    + "build/tests/fault/libcuabi_fault_fake_cuda.so)");
            var env = new Dictionary<string, string>
            {
                { "CUABI_DRIVER_PATH", fake },
                { "CUABI_NVRTC_PATH", fake },
                { "CUABI_CACHE", "0" },
            };
            Child.Result r = Child.Run(ChildMode, env);
            if (r.ExitCode != 0 || !(r.Stdout ?? "").Contains("GENERATED OK"))
                throw new TestFailure("the child failed: " + r);
        }

        /// <summary>The child's work for the mode this test runs it in; -1 for another mode.</summary>
        public static int ServeChild(string mode, string[] extra)
        {
            if (mode != ChildMode)
                return -1;
            try
            {
                Body();
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e);
                return 5;
            }
            Console.WriteLine("GENERATED OK");
            return 0;
        }

        private static void Body()
        {
            // Static members of Cuda.
            Assert.Equal("CUABI_ERROR_INVALID_HANDLE", Cuda.StatusName(CudaStatus.InvalidHandle), "Cuda.StatusName");
            Assert.Equal(Environment.GetEnvironmentVariable("CUABI_DRIVER_PATH"), Cuda.DriverPath, "Cuda.DriverPath");
            Assert.True(Cuda.DriverVersion > 0, "Cuda.DriverVersion is positive");

            using (Device device = Device.Get(0))
            {
                // Properties of one-value getters, a two-call string included.
                Assert.True(device.Name.Length > 0, "Device.Name is not empty");
                Assert.True(device.TotalMemory > 0, "Device.TotalMemory is positive");

                // Factories: a stream, an event on it, a module loaded from a file.
                using (CudaStream stream = CudaStream.Create(device, StreamFlags.None, 0))
                using (CudaEvent ev = CudaEvent.Create(device, EventFlags.None))
                {
                    ev.Record(stream);
                    ev.Record(); // a nullable handle: the default stream
                    stream.WaitEvent(ev);
                    stream.Synchronize();
                    Assert.True(stream.Query(), "CudaStream.Query after Synchronize");
                    Assert.True(ev.Query(), "CudaEvent.Query after the stream synchronized");
                    Assert.Equal("event", Assert.Throws<ArgumentNullException>(() => stream.WaitEvent(null),
                        "WaitEvent(null)").ParamName, "a null handle is named");
                    stream.Dispose();
                    Assert.Throws<ObjectDisposedException>(() => stream.Synchronize(), "Synchronize after Dispose");
                }

                Assert.Equal("device", Assert.Throws<ArgumentNullException>(() => CudaModule.LoadFile(null, "x.cubin"),
                    "CudaModule.LoadFile(null, ...)").ParamName, "a null receiver is named");
                Assert.Equal("path", Assert.Throws<ArgumentNullException>(() => CudaModule.LoadFile(device, null),
                    "CudaModule.LoadFile(device, null)").ParamName, "a null string is named");
                Assert.Equal("path", Assert.Throws<ArgumentException>(() => CudaModule.LoadFile(device, "a\0b"),
                    "CudaModule.LoadFile with a NUL").ParamName, "a string with a NUL is named");
                Assert.ThrowsCuda(CudaStatus.IO, () => CudaModule.LoadFile(device, "/nonexistent/cuabi.cubin"),
                    "CudaModule.LoadFile of a missing file");

                // Value structs in and out, generic methods over pinned memory,
                // and the core's checks that come before any driver call.
                using (CudaStream stream = CudaStream.Create(device, StreamFlags.NonBlocking, 0))
                using (DeviceBuffer<ulong> words = device.Allocate<ulong>(8))
                using (PinnedBuffer<uint> pinned = device.AllocatePinned<uint>(16))
                {
                    AccessPolicyWindow window = AccessPolicyWindow.Default();
                    window.Bytes = -1;
                    Assert.Equal("window.Bytes", Assert.Throws<ArgumentOutOfRangeException>(
                        () => stream.SetAccessPolicyWindow(window), "a window of -1 bytes").ParamName, "a negative field is named");
                    window.Bytes = 256;
                    window.Base = words.DevicePointer;
                    window.HitRatio = 1.5f;
                    Assert.Contains("window->hit_ratio is 1.500000; it is from 0 to 1", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                        () => stream.SetAccessPolicyWindow(window), "a hit ratio of 1.5").Message, "the core's refusal");
                    Assert.Contains("limit is 42, not one of", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                        () => device.GetLimit((Limit)42), "limit 42").Message, "the core's refusal");
                    Assert.Contains("policy is 0, not one of", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                        () => stream.SetSyncPolicy((SyncPolicy)0), "policy 0").Message, "the core's refusal");
                    Assert.Contains("width is 3; a word is 4 or 8 bytes", Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                        () => stream.WriteValue(words, 0, 1, 3, MemOpFlags.None), "width 3").Message, "the core's refusal");
                    Assert.Contains("reaches past the end of the 64-byte buffer", Assert.ThrowsCuda(CudaStatus.OutOfRange,
                        () => stream.WaitValue(words, 64, 1, 8, WaitCondition.Eq, MemOpFlags.None), "a word at the end").Message,
                        "the core's refusal");
                    Assert.Equal("offset", Assert.Throws<ArgumentOutOfRangeException>(
                        () => stream.WaitValueHost(pinned, -4, 1, 4, WaitCondition.Geq, MemOpFlags.None), "offset -4").ParamName,
                        "a negative offset is named");
                    Assert.Equal("buffer", Assert.Throws<ArgumentNullException>(
                        () => stream.WriteValueHost<float>(null, 0, 1, 4, MemOpFlags.None), "a null pinned buffer").ParamName,
                        "a null pinned buffer is named");
                    Assert.Equal("device", Assert.Throws<ArgumentNullException>(() => MemoryPool.Create(null),
                        "MemoryPool.Create(null)").ParamName, "a null device is named");
                    ArrayDesc shape = ArrayDesc.Default();
                    shape.Width = -1;
                    Assert.Equal("desc.Width", Assert.Throws<ArgumentOutOfRangeException>(() => CudaArray.Create(device, shape),
                        "an array of width -1").ParamName, "a negative field is named");
                }

                // A size_t argument refuses a negative value before the call.
                using (CudaModule module = device.Compile(SaxpySource))
                {
                    Assert.Equal("index", Assert.Throws<ArgumentOutOfRangeException>(
                        () => module.GetKernelName(-1L, NameForm.Demangled), "GetKernelName(-1)").ParamName,
                        "a negative size is named");
                    using (Kernel kernel = module.GetFunction("saxpy"))
                        Assert.Equal("saxpy", kernel.Name, "GetFunction gives the kernel");
                }
            }
        }
    }
}
