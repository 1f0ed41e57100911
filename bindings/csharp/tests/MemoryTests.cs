// The memory API: stream-ordered allocation and pools, managed memory, IPC
// with a child process, peer access and copy paths, pitched memory, fills,
// 2D and 3D copies, arrays, textures and surfaces. GPU tests are reported as
// skipped without a device; the child process modes are served here too.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class MemoryTests
    {
        internal const string Source = @"
extern ""C"" __global__ void scale(float* out, const float* in, float a, unsigned long long n)
{
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
}

extern ""C"" __global__ void add_one(float* out, const float* in, unsigned long long n)
{
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

extern ""C"" __global__ void double_ints(int* p, unsigned long long n)
{
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2;
}

extern ""C"" __global__ void spin_fill(int* p, int n, int value, long long cycles)
{
  long long start = clock64();
  while (clock64() - start < cycles) { }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = value;
}

extern ""C"" __global__ void read_pitched(const char* base, unsigned long long pitch, float* out, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) {
    const float* row = (const float*)(base + y * pitch);
    out[y * width + x] = row[x] * 2.0f;
  }
}

extern ""C"" __global__ void sample2d(cudaTextureObject_t tex, const float* uv, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(tex, uv[2 * i], uv[2 * i + 1]);
}

extern ""C"" __global__ void fetch1d(cudaTextureObject_t tex, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}

extern ""C"" __global__ void fetch2d(cudaTextureObject_t tex, float* out, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) out[y * width + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

extern ""C"" __global__ void fetch_layered(cudaTextureObject_t tex, float* out, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
  if (x < width && y < height) out[(layer * height + y) * width + x] = tex2DLayered<float>(tex, x + 0.5f, y + 0.5f, layer);
}

// Reads a cubemap at the centre of each face, in CUDA's face order +X, -X,
// +Y, -Y, +Z, -Z: the direction (1, 0, 0) for +X and so on.
extern ""C"" __global__ void cube_centres(cudaTextureObject_t tex, float* out)
{
  int face = threadIdx.x;
  if (face < 6) {
    float sign = face % 2 ? -1.0f : 1.0f;
    int axis = face / 2;
    out[face] = texCubemap<float>(tex, axis == 0 ? sign : 0.0f, axis == 1 ? sign : 0.0f,
                                  axis == 2 ? sign : 0.0f);
  }
}

extern ""C"" __global__ void surf_read(cudaSurfaceObject_t surf, float* out, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) surf2Dread(&out[y * width + x], surf, x * (int)sizeof(float), y);
}

extern ""C"" __global__ void surf_update(cudaSurfaceObject_t surf, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) {
    float v;
    surf2Dread(&v, surf, x * (int)sizeof(float), y);
    surf2Dwrite(v * 2.0f + 1.0f, surf, x * (int)sizeof(float), y);
  }
}
";

        public static void Register()
        {
            Registry.Add("fd passing: a pipe's descriptor sent to a child process over a Unix socket reaches the same pipe", FdToChild);
            Registry.Add("memory: MemoryLocation values, and textures and surfaces are 8-byte kernel arguments", NoGpuBasics);
            Registry.Add("nvrtc: the memory tests' kernels (texture and surface objects, no #include) compile", KernelsCompile);
            Registry.AddGpu("stream-ordered: allocate, launch and free on a user stream from a user pool (threshold, usage, trim)", StreamOrdered);
            Registry.AddGpu("stream-ordered: the default pool, and Dispose freeing in order on the allocating stream", DefaultPool);
            Registry.AddGpu("stream-ordered: allocation and free captured into a graph replay correctly, twice", CapturedAllocation);
            Registry.AddGpu("managed: host view written, kernel doubles it, host reads it after synchronize; prefetch; every advice", Managed);
            Registry.AddGpu("ipc: a buffer opened by a child process, which reads and writes it", IpcBuffer);
            Registry.AddGpu("ipc: an event recorded after a kernel here is waited on by a child process", IpcEvent);
            Registry.AddGpu("ipc: a pool allocation opened by a child process through the pool's exported descriptor", IpcPool);
            Registry.AddGpu("ipc: this process's handle, garbage, damaged, short and wrong-kind handles are refused; a freed buffer's fails in a child", IpcRefusals);
            Registry.AddGpu("peer: a device and itself are no peers; a copy between buffers of one device (and across devices, if any)", Peer);
            Registry.AddGpu("pitched: a 2D round trip with a host pitch unlike the device's, and a kernel reading rows by pitch", Pitched);
            Registry.AddGpu("copies: 3D host -> array -> host, boxes at offsets, array <-> device memory, async through pinned memory", Copies3D);
            Registry.AddGpu("fill: 8-, 16- and 32-bit values, whole and ranges, checked by download", Fills);
            Registry.AddGpu("texture: a 2D array with normalised coordinates and linear filtering gives interpolated values", TextureLinearFilter);
            Registry.AddGpu("texture: linear memory read with tex1Dfetch, pitched memory read with tex2D", TextureOverMemory);
            Registry.AddGpu("surface: a kernel reads and writes an array through a surface; read back", SurfaceReadWrite);
            Registry.AddGpu("arrays: a layered array, copied in and out and read by tex2DLayered", LayeredArray);
            Registry.AddGpu("arrays: a cubemap filled face by face, read by texCubemap at the face centres; bad shapes refused", CubemapArray);
            Registry.AddGpu("texture and surface objects: every launch form passes them, and they keep their memory alive", ObjectsInEveryLaunchForm);
        }

        // ------------------------------------------------------------------
        // Helpers
        // ------------------------------------------------------------------

        private static CudaModule Compile(Device d)
        {
            return d.Compile(Source, new CompileOptions { Name = "memory.cu" });
        }

        internal static string Hex(byte[] bytes)
        {
            var sb = new StringBuilder(bytes.Length * 2);
            foreach (byte b in bytes)
                sb.Append(b.ToString("x2", CultureInfo.InvariantCulture));
            return sb.ToString();
        }

        internal static byte[] Unhex(string hex)
        {
            var bytes = new byte[hex.Length / 2];
            for (int i = 0; i < bytes.Length; i++)
                bytes[i] = byte.Parse(hex.Substring(2 * i, 2), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            return bytes;
        }

        private static void Near(float expected, float actual, float tolerance, string what)
        {
            if (Math.Abs(expected - actual) > tolerance)
                throw new TestFailure(string.Format("{0}: expected {1} (within {2}), got {3}", what, expected, tolerance, actual));
        }

        private static void Same<T>(T[] expected, T[] actual, string what)
        {
            Assert.Equal(expected.Length, actual.Length, what + ": length");
            var cmp = EqualityComparer<T>.Default;
            for (int i = 0; i < expected.Length; i++)
                if (!cmp.Equals(expected[i], actual[i]))
                    throw new TestFailure(string.Format("{0}: element {1} is {2}, expected {3}", what, i, actual[i], expected[i]));
        }

        private static float[] Values(int n, Func<int, float> f)
        {
            var a = new float[n];
            for (int i = 0; i < n; i++)
                a[i] = f(i);
            return a;
        }

        private static int[] Ints(int n, Func<int, int> f)
        {
            var a = new int[n];
            for (int i = 0; i < n; i++)
                a[i] = f(i);
            return a;
        }

        private static Child.Result RunChild(string mode, params string[] extra)
        {
            return Child.Run(mode, new Dictionary<string, string>(), extra);
        }

        private static void ChildSucceeded(Child.Result r, string what)
        {
            if (r.ExitCode != 0 || !r.Stdout.Contains("\nOK"))
                throw new TestFailure(what + ": the child process failed: " + r);
        }

        // ------------------------------------------------------------------
        // No GPU
        // ------------------------------------------------------------------

        private static void FdToChild()
        {
            var fds = new int[2];
            Assert.True(Posix.pipe(fds) == 0, "pipe failed");
            try
            {
                Child.Result r;
                using (var offer = new FdOffer(fds[1]))
                {
                    r = RunChild("fd-write", offer.Name);
                    // The child is gone: the offer sent, or failed and said why.
                    Assert.True(offer.Sent, "the descriptor was not sent: " + (offer.Error ?? "the child never connected") + "\n" + r);
                }
                Assert.Equal(0, r.ExitCode, "child exit code (" + r + ")");
                Posix.close(fds[1]);
                fds[1] = -1;
                var buf = new byte[64];
                long n = (long)Posix.read(fds[0], buf, (UIntPtr)(uint)buf.Length);
                Assert.Equal("written by the child\n", Encoding.ASCII.GetString(buf, 0, (int)Math.Max(n, 0)), "what came through the pipe");
            }
            finally
            {
                Posix.close(fds[0]);
                if (fds[1] >= 0)
                    Posix.close(fds[1]);
            }
        }

        private static void KernelsCompile()
        {
            foreach (string source in new[] { Source, MemoryCorpus.Kernels })
                using (var p = new Program(source, "memory.cu"))
                {
                    p.Compile("--gpu-architecture=compute_90");
                    foreach (string kernel in new[] { "sample2d", "fetch_layered", "surf_update", "surf_read", "touch" })
                        if (source.Contains(" " + kernel + "("))
                            Assert.Contains(".entry " + kernel + "(", p.Ptx, "PTX entry of " + kernel);
                }
        }

        private static void NoGpuBasics()
        {
            Assert.Equal(-1, MemoryLocation.Host.Value, "MemoryLocation.Host");
            Assert.True(MemoryLocation.Host.IsHost, "Host.IsHost");
            Assert.Equal(3, MemoryLocation.OfDevice(3).Value, "OfDevice(3)");
            Assert.True(!MemoryLocation.OfDevice(0).IsHost, "OfDevice(0).IsHost");
            Assert.Equal("host", MemoryLocation.Host.ToString(), "ToString");
            Assert.Equal(128, DeviceMemory.IpcHandleSize, "IpcHandleSize");
            foreach (Type t in new[] { typeof(Texture), typeof(Surface) })
            {
                ArgumentWriter w = ArgumentWriter.For(t);
                Assert.Equal(8, w.Size, t.Name + " argument size");
                Assert.Equal(ArgumentWriter.Kinds.Object, w.Kind, t.Name + " argument kind");
            }
            Assert.Equal(ArgumentWriter.Kinds.Memory, ArgumentWriter.For(typeof(DeviceBuffer<float>)).Kind, "DeviceBuffer kind");
            var options = new TextureOptions();
            Assert.Equal(AddressMode.Clamp, options.AddressX, "default address mode");
            Assert.Equal(FilterMode.Point, options.Filter, "default filter");
            options.Address = AddressMode.Border;
            Assert.True(options.AddressX == AddressMode.Border && options.AddressY == AddressMode.Border &&
                        options.AddressZ == AddressMode.Border, "Address sets all three");
            var pool = new MemoryPoolOptions { Ipc = true };
            Assert.Equal(MemoryPoolFlags.Ipc, pool.Flags, "Ipc sets the flag");
            pool.Ipc = false;
            Assert.Equal(MemoryPoolFlags.None, pool.Flags, "Ipc clears the flag");
        }

        // ------------------------------------------------------------------
        // Stream-ordered allocation and pools
        // ------------------------------------------------------------------

        private static void StreamOrdered()
        {
            const int n = 1 << 20;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var scale = m.GetKernel("scale"))
            using (var stream = d.CreateStream())
            using (var pool = d.CreateMemoryPool(new MemoryPoolOptions { ReleaseThreshold = 1 << 20 }))
            using (var host = d.AllocatePinned<float>(n))
            {
                Assert.Equal(1L << 20, pool.ReleaseThreshold, "ReleaseThreshold from the options");
                pool.ReleaseThreshold = 64L << 20;
                Assert.Equal(64L << 20, pool.ReleaseThreshold, "ReleaseThreshold after setting it");

                var input = d.AllocateAsync<float>(n, stream, pool);
                var output = d.AllocateAsync<float>(n, stream, pool);
                Assert.Equal(BufferKind.StreamOrdered, input.Kind, "Kind");
                Assert.Equal((long)n, input.Count, "Count");
                Assert.Equal(4L * n, input.SizeInBytes, "SizeInBytes");
                Assert.Equal(0L, input.Pitch, "Pitch of a stream-ordered buffer");
                MemoryPoolUsage live = pool.Usage;
                Assert.True(live.UsedBytes >= 8L * n, "used while two buffers live: " + live);
                Assert.True(live.ReservedBytes >= live.UsedBytes, "reserved < used: " + live);

                input.FillAsync(1.5f, stream);
                scale.Launch(new LaunchConfig(n / 256, 256), stream, output, input, 4.0f, (ulong)n);
                output.CopyToAsync(host, stream);
                IntPtr raw = input.Handle.DangerousGetHandle();
                input.FreeAsync(stream);
                output.FreeAsync(stream);
                stream.Synchronize();
                float[] got = host.ToArray();
                for (int i = 0; i < n; i++)
                    if (got[i] != 6.0f)
                        throw new TestFailure("element " + i + " is " + got[i] + ", expected 6");

                // Freed: the objects are disposed, their handles dead, Dispose does nothing.
                Assert.Throws<ObjectDisposedException>(() => { var h = input.Handle; }, "Handle after FreeAsync");
                Assert.Throws<ObjectDisposedException>(() => input.FreeAsync(stream), "FreeAsync twice");
                input.Dispose();
                output.Dispose();
                UIntPtr size;
                Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_buffer_get_size(new SafeBufferHandle(raw, false), out size),
                    "the freed buffer's handle");

                MemoryPoolUsage after = pool.Usage;
                Assert.Equal(0L, after.UsedBytes, "used after both were freed");
                Assert.True(after.ReservedBytes > 0, "the pool gave back memory below its threshold: " + after);
                pool.Trim(0);
                Assert.Equal(0L, pool.Usage.ReservedBytes, "reserved after Trim(0)");

                // A buffer of another kind is not freed in stream order, and stays usable.
                using (var plain = d.Allocate<float>(16))
                {
                    var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => plain.FreeAsync(stream), "FreeAsync of a device buffer");
                    Assert.Contains("not stream-ordered", e.Message, "message");
                    plain.Fill(2.0f);
                    Assert.Equal(2.0f, plain.ToArray()[15], "the buffer after the refused FreeAsync");
                }
            }
        }

        private static void DefaultPool()
        {
            const int n = 4096;
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream())
            using (var pool = d.GetDefaultMemoryPool())
            {
                long threshold = pool.ReleaseThreshold;
                Assert.True(threshold >= 0, "threshold");
                var b = d.AllocateAsync<int>(n, stream);
                Assert.Equal(BufferKind.StreamOrdered, b.Kind, "Kind from the default pool");
                Assert.True(pool.Usage.UsedBytes >= 4L * n, "the default pool's usage counts the buffer: " + pool.Usage);
                b.FillAsync(7, stream);
                var check = new int[n];
                using (var host = d.AllocatePinned<int>(n))
                {
                    b.CopyToAsync(host, stream);
                    b.FreeAsync(null); // on the default stream: after the copy, which the legacy default stream waits for
                    stream.Synchronize();
                    d.Synchronize();
                    check = host.ToArray();
                }
                Same(Ints(n, i => 7), check, "filled from the default pool");

                // Dispose frees in order on the stream the buffer was allocated on.
                using (var user = d.CreateMemoryPool())
                {
                    var c = d.AllocateAsync<int>(n, stream, user);
                    c.FillAsync(3, stream);
                    c.Dispose();
                    Assert.Throws<ObjectDisposedException>(() => c.FreeAsync(stream), "FreeAsync after Dispose");
                    stream.Synchronize();
                    Assert.Equal(0L, user.Usage.UsedBytes, "used after Dispose and a synchronize");
                }
            }
            // Disposing the default pool's object left the pool alone.
            using (var d = Device.Get(0))
            using (var again = d.GetDefaultMemoryPool())
            using (var stream = d.CreateStream())
            {
                var b = d.AllocateAsync<byte>(256, stream, again);
                b.FillAsync(9, stream);
                stream.Synchronize();
                Assert.Equal((byte)9, b.ToArray()[255], "allocation from the default pool again");
                b.FreeAsync(stream);
                stream.Synchronize();
            }
        }

        private static void CapturedAllocation()
        {
            const int n = 8192;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var scale = m.GetKernel("scale"))
            using (var addOne = m.GetKernel("add_one"))
            using (var stream = d.CreateStream())
            using (var x = d.Allocate<float>(n))
            using (var output = d.Allocate<float>(n))
            {
                var config = new LaunchConfig(n / 256, 256);
                stream.BeginCapture();
                var temp = d.AllocateAsync<float>(n, stream);
                scale.Launch(config, stream, temp, x, 2.0f, (ulong)n);
                addOne.Launch(config, stream, output, temp, (ulong)n);
                temp.FreeAsync(stream);
                using (CudaGraph graph = stream.EndCapture())
                {
                    Assert.Throws<ObjectDisposedException>(() => { var h = temp.Handle; }, "the captured buffer after FreeAsync");
                    Assert.Equal(4L, graph.NodeCount, "nodes: allocation, two kernels, free");
                    Assert.Equal(2L, graph.KernelNodeCount, "kernel nodes");
                    using (CudaGraphExec exec = graph.Instantiate())
                    {
                        for (int round = 1; round <= 2; round++)
                        {
                            float[] values = Values(n, i => i * 0.25f + round);
                            x.CopyFrom(values);
                            output.Fill(-1.0f);
                            exec.Launch(stream);
                            stream.Synchronize();
                            float[] got = output.ToArray();
                            for (int i = 0; i < n; i++)
                                if (got[i] != 2.0f * values[i] + 1.0f)
                                    throw new TestFailure(string.Format("replay {0}: element {1} is {2}, expected {3}",
                                        round, i, got[i], 2.0f * values[i] + 1.0f));
                        }
                    }
                }
            }
        }

        // ------------------------------------------------------------------
        // Managed memory
        // ------------------------------------------------------------------

        private static void Managed()
        {
            const int n = 100000;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var twice = m.GetKernel("double_ints"))
            using (var stream = d.CreateStream())
            using (var managed = d.AllocateManaged<int>(n))
            {
                Assert.Equal(BufferKind.Managed, managed.Kind, "Kind");
                Assert.Equal((long)managed.DevicePointer, managed.HostPointer.ToInt64(), "host and device addresses");
                int[] values = Ints(n, i => i * 3 - 7);
                managed.WriteHost(values);
                managed.WriteHost(5, 1000);
                values[5] = 1000;
                Assert.Equal(1000, managed.ReadHost(5), "ReadHost after WriteHost");

                var here = MemoryLocation.OfDevice(d);
                managed.Advise(MemoryAdvice.SetReadMostly, here);
                managed.Advise(MemoryAdvice.UnsetReadMostly, here);
                managed.Advise(MemoryAdvice.SetPreferredLocation, here);
                managed.Advise(MemoryAdvice.UnsetPreferredLocation, here);
                managed.Advise(MemoryAdvice.SetPreferredLocation, MemoryLocation.Host);
                managed.Advise(MemoryAdvice.UnsetPreferredLocation, MemoryLocation.Host);
                managed.Advise(MemoryAdvice.SetAccessedBy, here);
                managed.Advise(0, n / 2, MemoryAdvice.UnsetAccessedBy, here);
                managed.Advise(n / 2, n - n / 2, MemoryAdvice.UnsetAccessedBy, here);

                // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: prefetches need it.
                bool concurrent = d.GetAttribute(89) == 1;
                if (concurrent)
                    managed.PrefetchAsync(here, stream);
                twice.Launch(new LaunchConfig((n + 255) / 256, 256), stream, managed, (ulong)n);
                stream.Synchronize();
                var got = new int[n];
                managed.ReadHost(got);
                Same(Ints(n, i => 2 * values[i]), got, "doubled, read through the host view");
                Same(got, managed.ToArray(), "the same through a driver copy");

                if (concurrent)
                {
                    managed.PrefetchAsync(MemoryLocation.Host, stream);
                    managed.PrefetchAsync(10, 100, here, stream);
                    stream.Synchronize();
                    var part = new int[100];
                    managed.ReadHost(10, part, 0, 100);
                    for (int i = 0; i < 100; i++)
                        Assert.Equal(2 * values[10 + i], part[i], "element " + (10 + i) + " after prefetches");
                }

                // Attached to the host at first.
                using (var attached = d.AllocateManaged<float>(64, ManagedFlags.AttachHost))
                {
                    attached.WriteHost(Values(64, i => i));
                    Same(Values(64, i => i), attached.ToArray(), "an AttachHost buffer");
                }
                if (!concurrent)
                    throw new SkipException("the host view and advice passed; CONCURRENT_MANAGED_ACCESS is 0 here, so prefetches were not tried");
            }
        }

        // ------------------------------------------------------------------
        // IPC
        // ------------------------------------------------------------------

        private static void IpcBuffer()
        {
            const int n = 5000;
            using (var d = Device.Get(0))
            using (var buffer = d.Allocate<int>(n))
            {
                buffer.CopyFrom(Ints(n, i => i * 3 + 1));
                byte[] handle = buffer.GetIpcHandle();
                Assert.Equal(128, handle.Length, "handle length");
                Child.Result r = RunChild("ipc-buffer", Hex(handle), n.ToString(CultureInfo.InvariantCulture));
                ChildSucceeded(r, "ipc-buffer");
                Same(Ints(n, i => i * 5 + 2), buffer.ToArray(), "what the child wrote");
            }
            // Pitched memory is shared the same way.
            using (var d = Device.Get(0))
            using (var pitched = d.AllocatePitched<int>(100, 10))
            {
                pitched.Fill(0);
                pitched.CopyFrom(Ints(n / 5, i => i * 3 + 1));
                Child.Result r = RunChild("ipc-buffer", Hex(pitched.GetIpcHandle()), (n / 5).ToString(CultureInfo.InvariantCulture));
                ChildSucceeded(r, "ipc-buffer (pitched)");
                var back = new int[n / 5];
                pitched.CopyTo(0, back, 0, back.Length);
                Same(Ints(n / 5, i => i * 5 + 2), back, "what the child wrote into pitched memory");
            }
        }

        private static void IpcEvent()
        {
            const int n = 4096, value = 77;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var spin = m.GetKernel("spin_fill"))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var buffer = d.Allocate<int>(n))
            using (var ev = d.CreateEvent(EventFlags.Interprocess | EventFlags.DisableTiming))
            {
                buffer.Fill(0);
                // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (kHz): the kernel spins about two seconds before writing.
                long cycles = (long)d.GetAttribute(13) * 1000L * 2L;
                spin.Launch(new LaunchConfig(4, 256), stream, buffer, n, value, cycles);
                ev.Record(stream);
                byte[] eventHandle = ev.GetIpcHandle();
                Assert.Equal(128, eventHandle.Length, "event handle length");
                Child.Result r = RunChild("ipc-event", Hex(eventHandle), Hex(buffer.GetIpcHandle()),
                    n.ToString(CultureInfo.InvariantCulture), value.ToString(CultureInfo.InvariantCulture));
                ChildSucceeded(r, "ipc-event");
                stream.Synchronize();
                Same(Ints(n, i => value), buffer.ToArray(), "the kernel's output here");
            }
        }

        private static void IpcPool()
        {
            const int n = 3000;
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream())
            using (var pool = d.CreateMemoryPool(new MemoryPoolOptions { Ipc = true }))
            using (var host = d.AllocatePinned<int>(n))
            {
                var buffer = d.AllocateAsync<int>(n, stream, pool);
                host.CopyFrom(Ints(n, i => i * 7 + 3));
                buffer.CopyFromAsync(host, stream);
                stream.Synchronize();
                byte[] handle = buffer.GetIpcHandle();
                int fd = pool.ExportFd();
                Assert.True(fd >= 0, "ExportFd gave " + fd);
                try
                {
                    Child.Result r;
                    using (var offer = new FdOffer(fd))
                    {
                        r = RunChild("ipc-pool", offer.Name, Hex(handle), n.ToString(CultureInfo.InvariantCulture));
                        Assert.True(offer.Sent, "the pool's descriptor was not sent: " + (offer.Error ?? "the child never connected") + "\n" + r);
                    }
                    ChildSucceeded(r, "ipc-pool");
                }
                finally
                {
                    Posix.close(fd);
                }
                Same(Ints(n, i => i * 11 + 4), buffer.ToArray(), "what the child wrote into the pool allocation");
                buffer.FreeAsync(stream);
                stream.Synchronize();
            }
        }

        private static void IpcRefusals()
        {
            using (var d = Device.Get(0))
            using (var buffer = d.Allocate<int>(64))
            using (var ev = d.CreateEvent(EventFlags.Interprocess | EventFlags.DisableTiming))
            {
                byte[] own = buffer.GetIpcHandle();
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => DeviceBuffer<int>.OpenIpc(d, own), "this process's handle");
                Assert.Contains("exported by this process", e.Message, "message");
                byte[] ownEvent = ev.GetIpcHandle();
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => CudaEvent.OpenIpc(d, ownEvent), "this process's event handle");
                Assert.Contains("exported by this process", e.Message, "message");

                var garbage = new byte[128];
                new Random(13).NextBytes(garbage);
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => DeviceBuffer<int>.OpenIpc(d, garbage), "garbage");
                Assert.Contains("not a cuabi IPC handle", e.Message, "message");
                var damaged = (byte[])own.Clone();
                damaged[60] ^= 0x10;
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => DeviceBuffer<int>.OpenIpc(d, damaged), "a damaged handle");
                Assert.Contains("checksum", e.Message, "message");
                var shortHandle = new byte[64];
                Array.Copy(own, shortHandle, 64);
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => DeviceBuffer<int>.OpenIpc(d, shortHandle), "64 bytes");
                Assert.Contains("handle_size is 64", e.Message, "message");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => DeviceBuffer<int>.OpenIpc(d, ownEvent), "an event's handle as a buffer's");
                Assert.Contains("an event's handle, not a buffer's", e.Message, "message");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => CudaEvent.OpenIpc(d, own), "a buffer's handle as an event's");
                Assert.Contains("a buffer's handle, not an event's", e.Message, "message");
            }
            // In another process: garbage is refused there too, and a freed buffer's handle fails in the driver.
            byte[] freed;
            using (var d = Device.Get(0))
            {
                // 64 MiB: a small buffer shares a driver block with other allocations,
                // which stays mapped while any of them lives (see the header).
                var gone = d.Allocate<int>(16 << 20);
                freed = gone.GetIpcHandle();
                gone.Dispose();
                d.Synchronize();
            }
            Child.Result r = RunChild("ipc-open-refused", Hex(freed), Hex(new byte[128]));
            if (r.ExitCode != 0 || !r.Stdout.Contains("\nOK"))
                throw new TestFailure("ipc-open-refused: " + r);
        }

        // ------------------------------------------------------------------
        // Peer access
        // ------------------------------------------------------------------

        private static void Peer()
        {
            using (var d = Device.Get(0))
            using (var same = Device.Get(0))
            {
                Assert.True(!d.CanAccessPeer(d), "a device can access itself as a peer");
                Assert.True(!d.CanAccessPeer(same), "a device can access itself (a second object) as a peer");
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => d.EnablePeerAccess(same), "EnablePeerAccess(itself)");
                Assert.Contains("not its own peer", e.Message, "message");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => d.GetPeerAttribute(d, 1), "GetPeerAttribute(itself)");
                Assert.Contains("not its own peer", e.Message, "message");

                using (var a = d.AllocateFrom(Ints(1000, i => i * i)))
                using (var b = d.Allocate<int>(1000))
                {
                    Assert.Equal(CopyPath.SameDevice, b.GetCopyPathFrom(a), "copy path on one device");
                    b.CopyFrom(a);
                    Same(Ints(1000, i => i * i), b.ToArray(), "a copy on one device");
                }

                if (Device.Count < 2)
                    return;
                using (var other = Device.Get(1))
                using (var a = d.AllocateFrom(Ints(1000, i => i + 5)))
                using (var b = other.Allocate<int>(1000))
                {
                    bool can = other.CanAccessPeer(d);
                    // CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 2
                    Assert.Equal(can ? 1 : 0, other.GetPeerAttribute(d, 2), "ACCESS_SUPPORTED agrees with CanAccessPeer");
                    other.DisablePeerAccess(d);
                    Assert.Equal(CopyPath.ThroughHost, b.GetCopyPathFrom(a), "copy path without peer access");
                    b.CopyFrom(a);
                    Same(Ints(1000, i => i + 5), b.ToArray(), "a copy between devices through the host");
                    if (can && d.CanAccessPeer(other))
                    {
                        other.EnablePeerAccess(d);
                        other.EnablePeerAccess(d); // enabling what is enabled succeeds
                        d.EnablePeerAccess(other);
                        Assert.Equal(CopyPath.Peer, b.GetCopyPathFrom(a), "copy path with peer access");
                        b.Fill(0);
                        b.CopyFrom(a);
                        Same(Ints(1000, i => i + 5), b.ToArray(), "a peer copy");
                        other.DisablePeerAccess(d);
                        d.DisablePeerAccess(other);
                    }
                    else if (!can)
                    {
                        Assert.ThrowsCuda(CudaStatus.NotSupported, () => other.EnablePeerAccess(d), "EnablePeerAccess of a pair without access");
                    }
                }
            }
        }

        // ------------------------------------------------------------------
        // Pitched memory, 2D and 3D copies, fills
        // ------------------------------------------------------------------

        private static void Pitched()
        {
            const int w = 37, h = 19, hostRow = w + 5;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var read = m.GetKernel("read_pitched"))
            using (var stream = d.CreateStream())
            using (var buffer = d.AllocatePitched<float>(w, h))
            using (var output = d.Allocate<float>(w * h))
            {
                long pitch = buffer.Pitch;
                Assert.Equal(BufferKind.Pitched, buffer.Kind, "Kind");
                Assert.True(pitch >= w * 4 && pitch % 4 == 0, "pitch " + pitch);
                Assert.Equal(pitch * h, buffer.SizeInBytes, "SizeInBytes = pitch * height");
                Assert.Equal(pitch * h / 4, buffer.Count, "Count in whole elements");
                Assert.True(pitch != hostRow * 4, "the host pitch equals the device's; the test would prove nothing");

                var source = new float[hostRow * h];
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < hostRow; x++)
                        source[y * hostRow + x] = x < w ? x + 100 * y : -7;
                new Copy3D(CopyEnd.Host(source, hostRow * 4), CopyEnd.Device(buffer), w * 4, h).Copy();

                read.Launch(new LaunchConfig(new Dim3(1, (uint)h), new Dim3(64)), null, buffer, (ulong)pitch, output, w, h);
                float[] doubled = output.ToArray();
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++)
                        if (doubled[y * w + x] != 2 * (x + 100 * y))
                            throw new TestFailure(string.Format("kernel read ({0}, {1}) as {2}, expected {3}", x, y, doubled[y * w + x], 2 * (x + 100 * y)));

                const int backRow = w + 3;
                var back = Values(backRow * h, i => -1);
                new Copy3D(CopyEnd.Device(buffer), CopyEnd.Host(back, backRow * 4), w * 4, h).Copy();
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < backRow; x++)
                    {
                        float want = x < w ? x + 100 * y : -1;
                        if (back[y * backRow + x] != want)
                            throw new TestFailure(string.Format("download ({0}, {1}) is {2}, expected {3}", x, y, back[y * backRow + x], want));
                    }

                var box = new float[5 * 4];
                new Copy3D(CopyEnd.Device(buffer).At(2 * 4, 3), CopyEnd.Host(box), 5 * 4, 4).Copy();
                for (int y = 0; y < 4; y++)
                    for (int x = 0; x < 5; x++)
                        Assert.Equal((float)(2 + x + 100 * (3 + y)), box[y * 5 + x], "box element (" + x + ", " + y + ")");

                using (var pinned = d.AllocatePinned<float>(w * h))
                {
                    new Copy3D(CopyEnd.Device(buffer), CopyEnd.Host(pinned), w * 4, h).CopyAsync(stream);
                    stream.Synchronize();
                    float[] packed = pinned.ToArray();
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < w; x++)
                            Assert.Equal((float)(x + 100 * y), packed[y * w + x], "async download (" + x + ", " + y + ")");
                }
            }
        }

        private static void Copies3D()
        {
            const int w = 8, h = 5, depth = 3, n = w * h * depth;
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream())
            using (var array = d.CreateArray(ArrayFormat.F32, 1, w, h, depth))
            {
                Assert.Equal((long)w, array.Width, "Width");
                Assert.Equal((long)h, array.Height, "Height");
                Assert.Equal((long)depth, array.Depth, "Depth");
                Assert.Equal(ArrayFormat.F32, array.Format, "Format");
                Assert.Equal(1, array.Channels, "Channels");
                Assert.Equal(4, array.ElementSize, "ElementSize");
                using (var rgbaHalf = d.CreateArray(ArrayFormat.F16, 4, w))
                    Assert.Equal(8, rgbaHalf.ElementSize, "ElementSize of four 16-bit channels");
                var released = d.CreateArray(ArrayFormat.U8, 2, w);
                Assert.Equal(2, released.ElementSize, "ElementSize of two 8-bit channels");
                released.Dispose();
                Assert.Throws<ObjectDisposedException>(() => { var unused = released.ElementSize; }, "ElementSize of a disposed array");
                Assert.True(array.NativeHandle != 0, "NativeHandle");

                float[] source = Values(n, i => (i % w) + 10 * (i / w % h) + 100 * (i / (w * h)));
                new Copy3D(CopyEnd.Host(source), CopyEnd.Array(array), w * 4, h, depth).Copy();
                var back = new float[n];
                new Copy3D(CopyEnd.Array(array), CopyEnd.Host(back), w * 4, h, depth).Copy();
                Same(source, back, "host -> array -> host");

                var box = new float[3 * 2 * 2];
                new Copy3D(CopyEnd.Array(array).At(2 * 4, 1, 1), CopyEnd.Host(box), 3 * 4, 2, 2).Copy();
                for (int z = 0; z < 2; z++)
                    for (int y = 0; y < 2; y++)
                        for (int x = 0; x < 3; x++)
                            Assert.Equal((float)((2 + x) + 10 * (1 + y) + 100 * (1 + z)), box[(z * 2 + y) * 3 + x],
                                "box element (" + x + ", " + y + ", " + z + ")");

                using (var device = d.Allocate<float>(n))
                {
                    new Copy3D(CopyEnd.Array(array), CopyEnd.Device(device), w * 4, h, depth).Copy();
                    Same(source, device.ToArray(), "array -> device memory");
                    float[] other = Values(n, i => -i);
                    device.CopyFrom(other);
                    new Copy3D(CopyEnd.Device(device), CopyEnd.Array(array), w * 4, h, depth).Copy();
                    new Copy3D(CopyEnd.Array(array), CopyEnd.Host(back), w * 4, h, depth).Copy();
                    Same(other, back, "device memory -> array");
                }

                using (var pinned = d.AllocatePinned<float>(n))
                {
                    pinned.CopyFrom(source);
                    new Copy3D(CopyEnd.Host(pinned), CopyEnd.Array(array), w * 4, h, depth).CopyAsync(stream);
                    stream.Synchronize();
                    new Copy3D(CopyEnd.Array(array), CopyEnd.Host(back), w * 4, h, depth).Copy();
                    Same(source, back, "pinned -> array, asynchronously");
                }
            }
        }

        private static void Fills()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream())
            {
                using (var u16 = d.Allocate<ushort>(1000))
                {
                    u16.Fill(0xBEEF);
                    Same(Repeat((ushort)0xBEEF, 1000), u16.ToArray(), "u16 fill");
                    u16.Fill(0x1234, 10, 5);
                    u16.FillAsync(0x0F0F, 500, 100, stream);
                    stream.Synchronize();
                    ushort[] got = u16.ToArray();
                    for (int i = 0; i < 1000; i++)
                    {
                        ushort want = i >= 10 && i < 15 ? (ushort)0x1234 : i >= 500 && i < 600 ? (ushort)0x0F0F : (ushort)0xBEEF;
                        Assert.Equal(want, got[i], "u16 element " + i);
                    }
                }
                using (var u32 = d.Allocate<uint>(777))
                {
                    u32.Fill(0xDEADBEEF);
                    Same(Repeat(0xDEADBEEFu, 777), u32.ToArray(), "u32 fill");
                    u32.FillAsync(0x01020304u, stream);
                    stream.Synchronize();
                    Same(Repeat(0x01020304u, 777), u32.ToArray(), "u32 async fill");
                }
                using (var f32 = d.Allocate<float>(100))
                {
                    f32.Fill(1.5f);
                    Same(Repeat(1.5f, 100), f32.ToArray(), "float fill");
                }
                using (var i16 = d.Allocate<short>(50))
                {
                    i16.Fill(-2);
                    Same(Repeat((short)-2, 50), i16.ToArray(), "short fill (negative)");
                }
                using (var u8 = d.Allocate<byte>(33))
                {
                    u8.Fill(0x5A);
                    Same(Repeat((byte)0x5A, 33), u8.ToArray(), "byte fill");
                }
                using (var pitched = d.AllocatePitched<int>(10, 3))
                {
                    pitched.Fill(-5);
                    Same(Repeat(-5, (int)pitched.Count), pitched.ToArray(), "a pitched buffer, padding included");
                }
            }
        }

        private static T[] Repeat<T>(T value, int n)
        {
            var a = new T[n];
            for (int i = 0; i < n; i++)
                a[i] = value;
            return a;
        }

        // ------------------------------------------------------------------
        // Arrays, textures, surfaces
        // ------------------------------------------------------------------

        private static void TextureLinearFilter()
        {
            const int w = 4, h = 4;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var sample = m.GetKernel("sample2d"))
            using (var array = d.CreateArray(ArrayFormat.F32, 1, w, h))
            {
                new Copy3D(CopyEnd.Host(Values(w * h, i => (i % w) + 10 * (i / w))), CopyEnd.Array(array), w * 4, h).Copy();
                var options = new TextureOptions { NormalizedCoordinates = true, Filter = FilterMode.Linear, Address = AddressMode.Clamp };
                using (var tex = Texture.FromArray(array, options))
                {
                    Assert.True(ReferenceEquals(array, tex.Source), "Source is the array");
                    Assert.True(tex.NativeHandle != 0, "NativeHandle");
                    ulong texObject;
                    Errors.Check(NativeMethods.cuabi_texture_get_handle(tex.Handle, out texObject));
                    Assert.Equal(texObject, tex.NativeHandle, "NativeHandle (kept) is the library's");
                    // Texel centres sit at (i + 0.5) / extent; between them the value is interpolated,
                    // and v(x, y) = x + 10 y is linear, so the expected value is exact at these
                    // fractions (multiples of 1/256, the filter's weight precision).
                    float[] texel = { 1.5f, 1.0f, 1.5f, 1.5f, 1.25f, 1.0f, 2.0f, 3.0f, 0.75f, 2.5f };
                    int count = texel.Length / 2;
                    var uv = new float[texel.Length];
                    for (int i = 0; i < texel.Length; i++)
                        uv[i] = (texel[i] + 0.5f) / (i % 2 == 0 ? w : h);
                    using (var coords = d.AllocateFrom(uv))
                    using (var output = d.Allocate<float>(count))
                    {
                        sample.Launch(1, 32, null, tex, coords, output, count);
                        float[] got = output.ToArray();
                        for (int i = 0; i < count; i++)
                        {
                            float want = texel[2 * i] + 10 * texel[2 * i + 1];
                            Near(want, got[i], 1e-3f, string.Format("sample at texel ({0}, {1})", texel[2 * i], texel[2 * i + 1]));
                        }
                        Assert.True(got[0] != 11.0f && got[0] != 12.0f, "not interpolated: " + got[0]);
                    }
                }
            }
        }

        private static void TextureOverMemory()
        {
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var fetch1 = m.GetKernel("fetch1d"))
            using (var fetch2 = m.GetKernel("fetch2d"))
            {
                const int n = 300;
                float[] values = Values(n, i => i * 0.5f - 3);
                using (var linear = d.AllocateFrom(values))
                using (var tex = Texture.FromLinear(linear, ArrayFormat.F32, 1, n))
                using (var output = d.Allocate<float>(n))
                {
                    fetch1.Launch(new LaunchConfig((n + 127) / 128, 128), null, tex, output, n);
                    Same(values, output.ToArray(), "tex1Dfetch over linear memory");
                }

                const int w = 33, h = 7;
                float[] image = Values(w * h, i => (i % w) * 2 + 1000 * (i / w));
                using (var pitched = d.AllocatePitched<float>(w, h))
                using (var output = d.Allocate<float>(w * h))
                {
                    new Copy3D(CopyEnd.Host(image), CopyEnd.Device(pitched), w * 4, h).Copy();
                    using (var tex = Texture.FromPitched(pitched, ArrayFormat.F32, 1, w, h))
                    {
                        Assert.True(ReferenceEquals(pitched, tex.Source), "Source is the buffer");
                        fetch2.Launch(new LaunchConfig(new Dim3(1, h), new Dim3(64)), null, tex, output, w, h);
                        Same(image, output.ToArray(), "tex2D over pitched memory");
                    }
                }
            }
        }

        private static void SurfaceReadWrite()
        {
            const int w = 16, h = 8;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var update = m.GetKernel("surf_update"))
            using (var array = d.CreateArray(ArrayFormat.F32, 1, w, h, 0, ArrayFlags.SurfaceLoadStore))
            using (var surface = array.CreateSurface())
            {
                Assert.True(ReferenceEquals(array, surface.Array), "Array");
                Assert.True(surface.NativeHandle != 0, "NativeHandle");
                ulong surfObject;
                Errors.Check(NativeMethods.cuabi_surface_get_handle(surface.Handle, out surfObject));
                Assert.Equal(surfObject, surface.NativeHandle, "NativeHandle (kept) is the library's");
                float[] values = Values(w * h, i => (i % w) + 100 * (i / w));
                new Copy3D(CopyEnd.Host(values), CopyEnd.Array(array), w * 4, h).Copy();
                update.Launch(new LaunchConfig(new Dim3(1, h), new Dim3(32)), null, surface, w, h);
                var back = new float[w * h];
                new Copy3D(CopyEnd.Array(array), CopyEnd.Host(back), w * 4, h).Copy();
                Same(Values(w * h, i => 2 * values[i] + 1), back, "written through the surface");
            }
        }

        private static void LayeredArray()
        {
            const int w = 6, h = 4, layers = 3, n = w * h * layers;
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var fetch = m.GetKernel("fetch_layered"))
            using (var array = d.CreateArray(ArrayFormat.F32, 1, w, h, layers, ArrayFlags.Layered))
            using (var output = d.Allocate<float>(n))
            {
                Assert.Equal((long)layers, array.Depth, "Depth (layers)");
                Assert.Equal(ArrayFlags.Layered, array.Flags, "Flags");
                float[] values = Values(n, i => (i % w) + 10 * (i / w % h) + 100 * (i / (w * h)));
                new Copy3D(CopyEnd.Host(values), CopyEnd.Array(array), w * 4, h, layers).Copy();
                var back = new float[n];
                new Copy3D(CopyEnd.Array(array), CopyEnd.Host(back), w * 4, h, layers).Copy();
                Same(values, back, "layers copied in and out");
                using (var tex = Texture.FromArray(array))
                {
                    fetch.Launch(new LaunchConfig(new Dim3(1, h, layers), new Dim3(32)), null, tex, output, w, h);
                    Same(values, output.ToArray(), "tex2DLayered");
                }
            }
        }

        private static void CubemapArray()
        {
            const int size = 7; // odd: each face's centre is the centre of one texel
            float[] values = { 1.5f, -2.0f, 3.25f, -4.5f, 5.0f, -6.75f }; // +X, -X, +Y, -Y, +Z, -Z
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var centres = m.GetKernel("cube_centres"))
            using (var array = d.CreateArray(ArrayFormat.F32, 1, size, size, 6, ArrayFlags.Cubemap))
            using (var output = d.Allocate<float>(6))
            {
                Assert.Equal(ArrayFlags.Cubemap, array.Flags, "Flags");
                Assert.Equal((long)size, array.Height, "Height");
                Assert.Equal(6L, array.Depth, "Depth (faces)");
                // Face by face, each a slice of its own; a corner apart, so that the
                // round trip sees the layout.
                var faces = new float[6 * size * size];
                for (int face = 0; face < 6; face++)
                {
                    float[] texels = Values(size * size, i => values[face]);
                    texels[0] = 100 + face;
                    new Copy3D(CopyEnd.Host(texels), CopyEnd.Array(array).At(0, 0, face), size * 4, size).Copy();
                    Array.Copy(texels, 0, faces, face * size * size, texels.Length);
                }
                var back = new float[faces.Length];
                new Copy3D(CopyEnd.Array(array), CopyEnd.Host(back), size * 4, size, 6).Copy();
                Same(faces, back, "the faces copied in and out");
                var options = new TextureOptions { NormalizedCoordinates = true, Filter = FilterMode.Point };
                using (var tex = Texture.FromArray(array, options))
                {
                    centres.Launch(1, 32, null, tex, output);
                    Same(values, output.ToArray(), "texCubemap at the face centres");
                }

                // The library refuses other shapes, in its own words.
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => d.CreateArray(ArrayFormat.F32, 1, 4, 8, 6, ArrayFlags.Cubemap), "a cubemap of non-square faces");
                Assert.Contains("cuabi_array_create: a cubemap has square faces (width 4, height 8) and depth 6", e.Message,
                    "a cubemap of non-square faces");
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => d.CreateArray(ArrayFormat.F32, 1, 8, 8, 5, ArrayFlags.Cubemap), "a cubemap of 5 faces");
                Assert.Contains("or a multiple of 6 when layered (depth 5)", e.Message, "a cubemap of 5 faces");
            }
        }

        private static void ObjectsInEveryLaunchForm()
        {
            const int n = 256;
            float[] first = Values(n, i => i + 0.25f), second = Values(n, i => -i);
            using (var d = Device.Get(0))
            using (var m = Compile(d))
            using (var fetch = m.GetKernel("fetch1d"))
            using (var update = m.GetKernel("surf_update"))
            using (var stream = d.CreateStream())
            using (var output = d.Allocate<float>(n))
            {
                // The textures outlive the objects of the memory they read.
                var a = d.AllocateFrom(first);
                var b = d.AllocateFrom(second);
                using (var t1 = Texture.FromLinear(a, ArrayFormat.F32, 1, n))
                using (var t2 = Texture.FromLinear(b, ArrayFormat.F32, 1, n))
                {
                    a.Dispose();
                    b.Dispose();
                    GC.Collect();
                    GC.WaitForPendingFinalizers();

                    output.Fill(0);
                    fetch.Launch(1, n, null, t1, output, n);
                    Same(first, output.ToArray(), "Kernel.Launch");

                    using (var plan = fetch.Prepare(1, n))
                    {
                        output.Fill(0);
                        plan.Set(0, t2);
                        plan.Set(1, output);
                        plan.Set(2, n);
                        plan.Launch();
                        Same(second, output.ToArray(), "LaunchPlan.Set");
                        output.Fill(0);
                        plan.SetArguments(t1, output, n);
                        plan.Launch();
                        Same(first, output.ToArray(), "LaunchPlan.SetArguments");
                    }

                    stream.BeginCapture();
                    fetch.Launch(1, n, stream, t1, output, n);
                    using (var graph = stream.EndCapture())
                    using (var exec = graph.Instantiate())
                    {
                        output.Fill(0);
                        exec.SetKernelNodeArgs(0, fetch, t2, output, n);
                        exec.Launch(stream);
                        stream.Synchronize();
                        Same(second, output.ToArray(), "graph node arguments");
                    }

                    // A disposed texture is refused before anything launches.
                    var gone = Texture.FromLinear(output, ArrayFormat.F32, 1, n);
                    using (var plan = fetch.Prepare(1, n))
                    {
                        plan.SetArguments(gone, output, n);
                        gone.Dispose();
                        var e = Assert.Throws<ObjectDisposedException>(() => plan.Launch(), "a plan with a disposed texture");
                        Assert.Contains("the texture object set as argument 0 was disposed", e.Message, "message");
                    }
                    Assert.Throws<ObjectDisposedException>(() => fetch.Launch(1, n, null, gone, output, n), "Launch with a disposed texture");
                }

                // A texture keeps a stream-ordered buffer from being freed in stream order.
                // (The first allocation of a new pool: its address is aligned for textures.)
                using (var pool = d.CreateMemoryPool())
                {
                    var ordered = d.AllocateAsync<float>(n, stream, pool);
                    ordered.FillAsync(2.5f, stream);
                    stream.Synchronize();
                    using (var t = Texture.FromLinear(ordered, ArrayFormat.F32, 1, n))
                    {
                        var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => ordered.FreeAsync(stream), "FreeAsync of a buffer a texture reads");
                        Assert.Contains("still read by 1 texture object", e.Message, "message");
                        fetch.Launch(1, n, stream, t, output, n);
                        stream.Synchronize();
                        Same(Repeat(2.5f, n), output.ToArray(), "a texture over stream-ordered memory");
                    }
                    ordered.FreeAsync(stream);
                    stream.Synchronize();
                }

                // A surface in a plan, its array's object disposed first.
                const int w = 16, h = 4;
                var array = d.CreateArray(ArrayFormat.F32, 1, w, h, 0, ArrayFlags.SurfaceLoadStore);
                new Copy3D(CopyEnd.Host(Values(w * h, i => i)), CopyEnd.Array(array), w * 4, h).Copy();
                using (var surface = Surface.Create(array))
                using (var plan = update.Prepare(new Dim3(1, h), new Dim3(32)))
                using (var read = m.GetKernel("surf_read"))
                using (var values = d.Allocate<float>(w * h))
                {
                    array.Dispose();
                    plan.Set(0, surface);
                    plan.Set(1, w);
                    plan.Set(2, h);
                    plan.Launch();
                    plan.Launch();
                    read.Launch(new LaunchConfig(new Dim3(1, h), new Dim3(32)), null, surface, values, w, h);
                    Same(Values(w * h, i => 4 * i + 3), values.ToArray(), "a surface in a plan, launched twice, its array's object disposed");
                }
            }
        }

        // ------------------------------------------------------------------
        // The child process
        // ------------------------------------------------------------------

        /// <summary>Serves a child mode of this file; -1 when the mode is not one of them.</summary>
        internal static int ServeChild(string mode, string[] args)
        {
            switch (mode)
            {
                case "fd-write":
                    {
                        int fd = FdPassing.Receive(args[0]);
                        byte[] text = Encoding.ASCII.GetBytes("written by the child\n");
                        long written = (long)Posix.write(fd, text, (UIntPtr)(uint)text.Length);
                        Posix.close(fd);
                        if (written != text.Length)
                        {
                            Console.Error.WriteLine("write gave " + written);
                            return 6;
                        }
                        Console.WriteLine("OK");
                        return 0;
                    }
                case "ipc-buffer":
                    return IpcBufferChild(Unhex(args[0]), int.Parse(args[1], CultureInfo.InvariantCulture), null);
                case "ipc-pool":
                    {
                        int fd = FdPassing.Receive(args[0]);
                        Console.WriteLine("RECEIVED fd " + fd);
                        using (var d = Device.Get(0))
                        {
                            MemoryPool pool;
                            try
                            {
                                pool = MemoryPool.ImportFd(d, fd);
                            }
                            finally
                            {
                                Posix.close(fd); // the caller's to close, imported or not
                            }
                            using (pool)
                                return IpcBufferChild(Unhex(args[1]), int.Parse(args[2], CultureInfo.InvariantCulture), pool);
                        }
                    }
                case "ipc-event":
                    return IpcEventChild(Unhex(args[0]), Unhex(args[1]), int.Parse(args[2], CultureInfo.InvariantCulture),
                        int.Parse(args[3], CultureInfo.InvariantCulture));
                case "ipc-open-refused":
                    return IpcRefusedChild(Unhex(args[0]), Unhex(args[1]));
                default:
                    return -1;
            }
        }

        /// <summary>Opens the buffer, checks it holds i * 3 + 1 (i * 7 + 3 for a pool's), writes i * 5 + 2 (i * 11 + 4).</summary>
        private static int IpcBufferChild(byte[] handle, int n, MemoryPool pool)
        {
            using (var d = Device.Get(0))
            using (var buffer = DeviceBuffer<int>.OpenIpc(d, handle, pool))
            {
                if (buffer.Kind != BufferKind.Ipc || buffer.Count < n)
                {
                    Console.WriteLine("WRONG kind " + buffer.Kind + ", count " + buffer.Count);
                    return 6;
                }
                var got = new int[n];
                buffer.CopyTo(0, got, 0, n);
                for (int i = 0; i < n; i++)
                {
                    int want = pool == null ? i * 3 + 1 : i * 7 + 3;
                    if (got[i] != want)
                    {
                        Console.WriteLine("MISMATCH element " + i + " is " + got[i] + ", expected " + want);
                        return 6;
                    }
                }
                buffer.CopyFrom(Ints(n, i => pool == null ? i * 5 + 2 : i * 11 + 4), 0, 0, n);
                d.Synchronize();
            }
            Console.WriteLine("OK");
            return 0;
        }

        private static int IpcEventChild(byte[] eventHandle, byte[] bufferHandle, int n, int value)
        {
            using (var d = Device.Get(0))
            using (var ev = CudaEvent.OpenIpc(d, eventHandle))
            using (var buffer = DeviceBuffer<int>.OpenIpc(d, bufferHandle))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var host = d.AllocatePinned<int>(n))
            {
                Console.WriteLine("EVENT complete when opened: " + ev.IsComplete);
                stream.WaitEvent(ev);
                buffer.CopyToAsync(0, host, 0, n, stream);
                stream.Synchronize();
                ev.Synchronize();
                int[] got = host.ToArray();
                for (int i = 0; i < n; i++)
                    if (got[i] != value)
                    {
                        Console.WriteLine("MISMATCH element " + i + " is " + got[i] + ", expected " + value + " (the wait did not hold)");
                        return 6;
                    }
            }
            Console.WriteLine("OK");
            return 0;
        }

        /// <summary>A freed buffer's handle fails in the driver; zeros are refused before it.</summary>
        private static int IpcRefusedChild(byte[] freed, byte[] zeros)
        {
            using (var d = Device.Get(0))
            {
                try
                {
                    using (DeviceBuffer<int>.OpenIpc(d, zeros))
                    {
                    }
                    Console.WriteLine("WRONG: zeros opened");
                    return 6;
                }
                catch (CudaException e)
                {
                    Console.WriteLine("ZEROS " + e.StatusName + ": " + e.Message);
                    if (e.Status != CudaStatus.InvalidArgument || !e.Message.Contains("not a cuabi IPC handle"))
                        return 6;
                }
                try
                {
                    using (DeviceBuffer<int>.OpenIpc(d, freed))
                    {
                    }
                    Console.WriteLine("WRONG: the freed buffer's handle opened");
                    return 6;
                }
                catch (CudaException e)
                {
                    Console.WriteLine("FREED " + e.StatusName + ": " + e.Message);
                    // The driver's refusal (its status depends on its error code), not one of the library's checks.
                    if (!e.Message.Contains("cuIpcOpenMemHandle"))
                        return 6;
                }
            }
            Console.WriteLine("OK");
            return 0;
        }
    }
}
