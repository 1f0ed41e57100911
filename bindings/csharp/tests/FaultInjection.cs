// Fault injection through the C# binding, no GPU: the C suite's scenarios
// (tests/fault/fault_injection.cc) through the binding's objects -- the SAXPY
// flow (Program, Device.Compile, CudaModule, Kernel, buffers, pinned buffers,
// a stream, events, a LaunchPlan), graphs, virtual memory (with a file
// descriptor export and import), batches, green contexts and tensor maps, a
// cached compile (the cache folder one of the test's own, its temporary
// files and a failed compile's entries checked) and DLPack -- against the
// stand-in driver and NVRTC of tests/fake/, with each driver and NVRTC call
// they make failing in turn.
//
// cuabi reads CUABI_DRIVER_PATH and CUABI_NVRTC_PATH once per process, so the
// test runs this program again as a child with both pointing at the stand-in
// ($CUABI_FAULT_FAKE_DRIVER, set by run-tests.sh and the CTest entry; the test
// is skipped, saying why, when it is not set). The child runs the scenario
// once clean to count the calls, then once per call with that call failing:
// CUDA_ERROR_OUT_OF_MEMORY and CUDA_ERROR_INVALID_VALUE for driver calls,
// NVRTC_ERROR_COMPILATION and NVRTC_ERROR_OUT_OF_MEMORY for NVRTC ones
// (CUDA_ERROR_LAUNCH_FAILED, sticky, is left to the C test). A run is handled
// when it throws a CudaException whose message names the failed entry point
// (a compile error may say CUABI_ERROR_COMPILE instead) or completes with
// verified results (tolerated, counted apart); and then, every object
// disposed and the finalizers run, nothing is live in the stand-in beyond the
// baseline, and the scenario passes right after with no fault and no leak.
// Past CUABI_FAULT_MAX_RUNS runs (default 400) the cases are sampled with a
// printed seed (CUABI_FAULT_SEED sets it). CUABI_FAULT_LIST=1 lists the calls.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;

namespace Cuabi.Tests
{
    internal static class FaultInjection
    {
        private const string ChildMode = "fault-injection";

        private const int CudaErrorInvalidValue = 1;   // cuda.h
        private const int CudaErrorOutOfMemory = 2;    // cuda.h
        private const int NvrtcErrorOutOfMemory = 1;   // nvrtc.h
        private const int NvrtcErrorCompilation = 6;   // nvrtc.h

        private const int N = 256;

        // Names the child's cache folder, which the cached_compile scenario
        // empties before each run (never a folder the test did not make).
        private const string FaultCacheDir = "CUABI_FAULT_CACHE_DIR";

        private const string SaxpySource = @"extern ""C"" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) out[tid] = a * x[tid] + y[tid];
}
";

        public static void Register()
        {
            Registry.Add("fault injection: each driver and NVRTC call of SAXPY, graphs, virtual memory, batches, green contexts and tensor maps, a cached compile and DLPack fails in turn (stand-in driver, own process)", RunParent);
        }

        // ---- the parent side -------------------------------------------------

        private static void RunParent()
        {
            string fake = Environment.GetEnvironmentVariable("CUABI_FAULT_FAKE_DRIVER");
            if (string.IsNullOrEmpty(fake))
                throw new SkipException("CUABI_FAULT_FAKE_DRIVER is not set (the stand-in driver "
                    + "build/tests/fault/libcuabi_fault_fake_cuda.so exists only in a CMake build)");
            if (!System.IO.File.Exists(fake))
                throw new SkipException("no stand-in driver at " + fake + " (CUABI_FAULT_FAKE_DRIVER)");
            // The cached_compile scenario empties the cache folder before
            // each run: one of the test's own.
            string cacheDir = System.IO.Path.Combine(System.IO.Path.GetTempPath(),
                "cuabi-cs-fault-cache-" + System.Diagnostics.Process.GetCurrentProcess().Id);
            System.IO.Directory.CreateDirectory(cacheDir);
            var env = new Dictionary<string, string>
            {
                { "CUABI_DRIVER_PATH", fake },
                { "CUABI_NVRTC_PATH", fake },
                { "CUABI_CACHE", null },
                { "CUABI_CACHE_DIR", cacheDir },
                { FaultCacheDir, cacheDir },
            };
            Child.Result r;
            try
            {
                r = Child.Run(ChildMode, env);
            }
            finally
            {
                try
                {
                    System.IO.Directory.Delete(cacheDir, true);
                }
                catch (System.IO.IOException)
                {
                }
            }
            bool counted = false;
            foreach (string line in (r.Stdout ?? "").Split('\n'))
            {
                if (line.Length == 0 || line.StartsWith("LOADED ", StringComparison.Ordinal))
                    continue;
                if (line.StartsWith("fault injection (C#): ", StringComparison.Ordinal) && line.Contains(" handled"))
                    counted = true;
                Console.WriteLine(line);
            }
            if (!string.IsNullOrEmpty(r.Stderr))
                Console.WriteLine("  child stderr: " + r.Stderr.TrimEnd().Replace("\n", "\n  "));
            if (r.ExitCode != 0)
                throw new TestFailure("the fault-injection child exited with " + r.ExitCode
                    + (r.ExitCode > 128 ? " (signal " + (r.ExitCode - 128) + ")" : "")
                    + (counted ? "" : " before printing its count"));
            Assert.True(counted, "the child printed no count line");
        }

        // ---- the stand-in's controls -----------------------------------------

        private static class Fake
        {
            private const int RTLD_NOW = 2;

            [DllImport("libdl.so.2")] private static extern IntPtr dlopen(string path, int flags);
            [DllImport("libdl.so.2")] private static extern IntPtr dlsym(IntPtr handle, string name);
            [DllImport("libdl.so.2")] private static extern IntPtr dlerror();

            [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate long LongFn();
            [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate IntPtr NameAtFn(long i);
            [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate IntPtr NameFn();
            [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate void VoidFn();
            [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate void FailCallFn(long n, int cu, int nvrtc);

            private static LongFn live, calls;
            private static NameAtFn callName;
            private static NameFn failedName;
            private static VoidFn reset;
            private static FailCallFn failCall;

            /// <summary>Opens the stand-in cuabi has loaded; null, or why not.</summary>
            public static string Open(string path)
            {
                IntPtr h = dlopen(path, RTLD_NOW);
                if (h == IntPtr.Zero)
                    return "cannot open " + path + ": " + Marshal.PtrToStringAnsi(dlerror());
                live = Get<LongFn>(h, "fake_live_resources");
                calls = Get<LongFn>(h, "fake_calls");
                callName = Get<NameAtFn>(h, "fake_call_name");
                failedName = Get<NameFn>(h, "fake_failed_name");
                reset = Get<VoidFn>(h, "fake_reset");
                failCall = Get<FailCallFn>(h, "fake_fail_call");
                if (live == null || calls == null || callName == null || failedName == null || reset == null || failCall == null)
                    return path + " is not the fault-injection stand-in (no fake_* controls)";
                return null;
            }

            private static T Get<T>(IntPtr h, string name) where T : class
            {
                IntPtr f = dlsym(h, name);
                return f == IntPtr.Zero ? null : (T)(object)Marshal.GetDelegateForFunctionPointer(f, typeof(T));
            }

            public static long Live { get { return live(); } }
            public static long Calls { get { return calls(); } }
            public static string CallName(long i) { return Marshal.PtrToStringAnsi(callName(i)); }
            public static string FailedName { get { return Marshal.PtrToStringAnsi(failedName()); } }
            public static void Reset() { reset(); }
            public static void FailCall(long n, int cu, int nvrtc) { failCall(n, cu, nvrtc); }
        }

        // ---- the scenario ------------------------------------------------------

        private sealed class Outcome
        {
            public Exception Error;   // what the scenario threw, or null
            public string Step = "";  // the step it was at
            public bool Verified;     // every result checked (when nothing was thrown)
            public bool FirstCompileFailed; // cached_compile: the compile that stores an entry threw
        }

        // SAXPY's inputs: x[i] = i, y[i] = 2 i + 1.
        private static void SaxpyInputs(out float[] hx, out float[] hy)
        {
            hx = new float[N];
            hy = new float[N];
            for (int i = 0; i < N; i++)
            {
                hx[i] = i;
                hy[i] = 2 * i + 1;
            }
        }

        private static bool Check(float a, float[] x, float[] y, float[] got)
        {
            for (int i = 0; i < N; i++)
                if (got[i] != a * x[i] + y[i])
                    return false;
            return true;
        }

        private sealed class Scenario
        {
            public string Name;
            public Action<Outcome> Body;
            public bool UsesCache;    // the cache folder is emptied before each run
        }

        // What is failed call by call: the SAXPY flow, then graphs, virtual
        // memory and batches, as the C suite's scenarios do.
        private static readonly Scenario[] Scenarios =
        {
            new Scenario { Name = "saxpy", Body = SaxpyBody },
            new Scenario { Name = "graph", Body = GraphBody },
            new Scenario { Name = "virtual_memory", Body = VirtualMemoryBody },
            new Scenario { Name = "batches", Body = BatchesBody },
            new Scenario { Name = "green_tensor", Body = GreenTensorBody },
            new Scenario { Name = "cached_compile", Body = CachedCompileBody, UsesCache = true },
            new Scenario { Name = "dlpack", Body = DlpackBody },
        };

        private static Outcome Run(Scenario scenario)
        {
            if (scenario.UsesCache)
                ClearCache();
            var o = new Outcome();
            try
            {
                scenario.Body(o);
            }
            catch (Exception e)
            {
                o.Error = e;
            }
            return o;
        }

        // A graph captured from a stream (a launch of SAXPY), then one built
        // node by node (upload, fill, kernel, copy, download), each
        // instantiated, launched and verified.
        private static void GraphBody(Outcome o)
        {
            float[] hx, hy;
            SaxpyInputs(out hx, out hy);
            bool ok = true;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            {
                o.Step = "Device.Compile";
                using (CudaModule m = d.Compile(SaxpySource, new CompileOptions { Name = "saxpy.cu", UseCache = false }))
                using (Kernel k = m.GetKernel("saxpy"))
                using (DeviceBuffer<float> dx = d.AllocateFrom(hx))
                using (DeviceBuffer<float> dy = d.AllocateFrom(hy))
                using (DeviceBuffer<float> dout = d.Allocate<float>(N))
                using (CudaStream stream = d.CreateStream(StreamFlags.NonBlocking))
                {
                    o.Step = "capture";
                    stream.BeginCapture(CaptureMode.ThreadLocal);
                    CudaGraph captured = null;
                    try
                    {
                        k.Launch(2, N / 2, stream, 2.0f, dx, dy, dout, (ulong)N);
                    }
                    finally
                    {
                        captured = stream.EndCapture();
                    }
                    using (captured)
                    {
                        o.Step = "CudaGraph.Instantiate (captured)";
                        using (CudaGraphExec exec = captured.Instantiate())
                        {
                            exec.Launch(stream);
                            stream.Synchronize();
                            ok &= Check(2.0f, hx, hy, dout.ToArray());
                        }
                    }
                    o.Step = "a graph built node by node";
                    using (PinnedBuffer<float> pin = d.AllocatePinned<float>(N))
                    using (PinnedBuffer<float> pout = d.AllocatePinned<float>(N))
                    using (DeviceBuffer<float> ones = d.Allocate<float>(N))
                    using (DeviceBuffer<float> copy = d.Allocate<float>(N))
                    using (CudaGraph g = CudaGraph.Create(d))
                    {
                        pin.CopyFrom(hx);
                        using (GraphNode up = g.AddUploadNode(null, dx, 0, pin, 0, N * 4L))
                        using (GraphNode fill = g.AddFillNode(up, ones, 0, 0x3F800000u, 4, N))
                        using (GraphNode kern = g.AddKernelNode(fill, k, new LaunchConfig(2, N / 2), 3.0f, dx, ones, dout, (ulong)N))
                        using (GraphNode cp = g.AddCopyNode(kern, copy, 0, dout, 0, N * 4L))
                        using (GraphNode down = g.AddDownloadNode(cp, pout, 0, copy, 0, N * 4L))
                        using (CudaGraphExec exec = g.Instantiate())
                        {
                            o.Step = "CudaGraphExec.Launch (built)";
                            exec.Launch(stream);
                            stream.Synchronize();
                            var one = new float[N];
                            for (int i = 0; i < N; i++)
                                one[i] = 1.0f;
                            ok &= Check(3.0f, hx, one, pout.ToArray());
                        }
                    }
                }
                o.Step = "Device.Dispose";
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // Virtual memory: physical memory mapped into a reserved range, a
        // buffer over it written and read back, the memory exported by file
        // descriptor and imported into a second range, read there, then
        // unmapped and freed; a growable buffer grown twice, its contents
        // checked at both ends.
        private static void VirtualMemoryBody(Outcome o)
        {
            bool ok = true;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            {
                long g, recommended;
                o.Step = "Device.GetVmGranularity";
                d.GetVmGranularity(out g, out recommended);
                var pattern = new int[64];
                for (int i = 0; i < pattern.Length; i++)
                    pattern[i] = i * 31 + 7;
                o.Step = "PhysicalMemory.Create";
                using (PhysicalMemory memory = PhysicalMemory.Create(d, 2 * g, PhysicalMemoryFlags.Exportable))
                using (AddressRange range = AddressRange.Reserve(d, 4 * g))
                {
                    o.Step = "AddressRange.Map";
                    range.Map(0, memory);
                    range.SetAccess(0, 2 * g, d, VmAccess.Readwrite);
                    using (DeviceBuffer<int> view = range.Buffer<int>(d, 0, 2 * g / 4))
                    {
                        o.Step = "write and read the view";
                        view.CopyFrom(pattern);
                        int[] back = view.ToArray();
                        for (int i = 0; i < pattern.Length; i++)
                            ok &= back[i] == pattern[i];
                    }
                    // The memory exported by file descriptor and imported
                    // again, mapped into a second range: the same contents.
                    o.Step = "PhysicalMemory.ExportFd";
                    int fd = memory.ExportFd();
                    try
                    {
                        o.Step = "PhysicalMemory.ImportFd";
                        using (PhysicalMemory imported = PhysicalMemory.ImportFd(d, fd, 2 * g))
                        using (AddressRange second = AddressRange.Reserve(d, 2 * g))
                        {
                            o.Step = "AddressRange.Map (imported)";
                            second.Map(0, imported);
                            second.SetAccess(0, 2 * g, d, VmAccess.Readwrite);
                            using (DeviceBuffer<int> again = second.Buffer<int>(d, 0, 2 * g / 4))
                            {
                                o.Step = "read the imported memory";
                                int[] seen = again.ToArray();
                                for (int i = 0; i < pattern.Length; i++)
                                    ok &= seen[i] == pattern[i];
                            }
                        }
                    }
                    finally
                    {
                        Posix.close(fd); // the caller's, imported or not
                    }
                    o.Step = "AddressRange.Unmap";
                    range.Unmap(0, 2 * g);
                    memory.Free();
                }
                o.Step = "Device.AllocateGrowable";
                using (DeviceBuffer<int> grown = d.AllocateGrowable<int>(g / 4, 4 * g / 4))
                {
                    grown.CopyFrom(pattern);
                    o.Step = "DeviceBuffer.Grow";
                    grown.Grow(2 * g / 4);
                    grown.Grow(4 * g / 4);
                    grown.CopyFrom(pattern, 0, 4 * g / 4 - pattern.Length, pattern.Length);
                    int[] all = grown.ToArray();
                    for (int i = 0; i < pattern.Length; i++)
                        ok &= all[i] == pattern[i] && all[all.Length - pattern.Length + i] == pattern[i];
                }
                o.Step = "Device.Dispose";
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // ---- the cache folder (cached_compile) -------------------------------

        private static string CacheFolder
        {
            get { return Environment.GetEnvironmentVariable(FaultCacheDir); }
        }

        private static void ClearCache()
        {
            string dir = CacheFolder;
            if (string.IsNullOrEmpty(dir) || !System.IO.Directory.Exists(dir))
                return;
            foreach (string f in System.IO.Directory.GetFiles(dir))
                System.IO.File.Delete(f);
        }

        // Entries in the cache folder; `temporary` counts the .tmp files.
        private static int CacheFiles(out int temporary)
        {
            int n = 0;
            temporary = 0;
            string dir = CacheFolder;
            if (string.IsNullOrEmpty(dir) || !System.IO.Directory.Exists(dir))
                return 0;
            foreach (string f in System.IO.Directory.GetFiles(dir))
            {
                if (System.IO.Path.GetFileName(f).StartsWith(".tmp", StringComparison.Ordinal))
                    temporary++;
                else
                    n++;
            }
            return n;
        }

        // A cached compile: the first compiles and stores an entry, the
        // second loads it; the cached kernel launched and verified.
        private static void CachedCompileBody(Outcome o)
        {
            float[] hx, hy;
            SaxpyInputs(out hx, out hy);
            bool ok = true;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            {
                o.Step = "Device.Compile (stores)";
                o.FirstCompileFailed = true;
                using (CudaModule m1 = d.Compile(SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
                {
                    o.FirstCompileFailed = false;
                    o.Step = "CudaModule.FromCache (first)";
                    ok &= !m1.FromCache;
                }
                o.Step = "Device.Compile (loads)";
                using (CudaModule m2 = d.Compile(SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
                {
                    o.Step = "CudaModule.FromCache (second)";
                    ok &= m2.FromCache;
                    o.Step = "CudaModule.GetKernel";
                    using (Kernel k = m2.GetKernel("saxpy"))
                    using (DeviceBuffer<float> dx = d.AllocateFrom(hx))
                    using (DeviceBuffer<float> dy = d.AllocateFrom(hy))
                    using (DeviceBuffer<float> dout = d.Allocate<float>(N))
                    {
                        o.Step = "launch of the cached kernel";
                        k.Launch(2, N / 2, null, 2.0f, dx, dy, dout, (ulong)N);
                        ok &= Check(2.0f, hx, hy, dout.ToArray());
                    }
                }
                o.Step = "Device.Dispose";
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // DLPack: a buffer exported as a tensor and taken back as a buffer
        // (the tensor's deleter run when that buffer goes), and the stream
        // handshake both ways between two streams, a copy ordered after it.
        private static void DlpackBody(Outcome o)
        {
            var input = new uint[64];
            for (uint i = 0; i < 64; i++)
                input[i] = i * 3 + 1;
            bool ok = true;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            using (CudaStream producer = d.CreateStream(StreamFlags.NonBlocking))
            using (CudaStream consumer = d.CreateStream(StreamFlags.NonBlocking))
            using (PinnedBuffer<uint> pin = d.AllocatePinned<uint>(64))
            using (PinnedBuffer<uint> pout = d.AllocatePinned<uint>(64))
            using (DeviceBuffer<uint> a = d.Allocate<uint>(64))
            {
                pin.CopyFrom(input);
                for (int i = 0; i < 64; i++)
                    pout[i] = 0;
                o.Step = "copy in on the producer";
                a.CopyFromAsync(pin, producer);
                o.Step = "CudaStream.DlpackHandoff";
                producer.DlpackHandoff((long)consumer.NativeHandle);
                o.Step = "CudaStream.DlpackWait";
                consumer.DlpackWait((long)producer.NativeHandle);
                o.Step = "Dlpack.Export";
                using (DlpackTensor t = Dlpack.Export(a, new long[] { 64 }))
                {
                    o.Step = "Dlpack.Import";
                    using (DeviceBuffer<uint> back = Dlpack.Import<uint>(t))
                    {
                        o.Step = "copy out on the consumer";
                        back.CopyToAsync(pout, consumer);
                        consumer.Synchronize();
                        for (int i = 0; i < 64; i++)
                            ok &= pout[i] == input[i];
                        ok &= back.DevicePointer == a.DevicePointer && back.Count == 64;
                    }
                }
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // Green contexts and tensor maps: the device's SMs split, a green
        // context of one group, SAXPY launched on its stream and verified; a
        // tiled tensor map encoded, its address replaced, its bytes read.
        private static void GreenTensorBody(Outcome o)
        {
            float[] hx, hy;
            SaxpyInputs(out hx, out hy);
            bool ok = true;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            {
                o.Step = "Device.Compile";
                using (CudaModule m = d.Compile(SaxpySource, new CompileOptions { Name = "saxpy.cu", UseCache = false }))
                using (Kernel k = m.GetKernel("saxpy"))
                using (DeviceBuffer<float> dx = d.AllocateFrom(hx))
                using (DeviceBuffer<float> dy = d.AllocateFrom(hy))
                using (DeviceBuffer<float> dout = d.Allocate<float>(N))
                {
                    o.Step = "Device.SmResource";
                    using (SmResource all = d.SmResource)
                    using (SmResource group = all.Split(2, 0, 0))
                    using (GreenContext green = GreenContext.Create(group))
                    {
                        ok &= green.SmCount == group.SmCount && group.SmCount > 0;
                        o.Step = "GreenContext.CreateStream";
                        using (CudaStream gs = green.CreateStream(StreamFlags.NonBlocking, 0))
                        {
                            o.Step = "launch on the green stream";
                            k.Launch(2, N / 2, gs, 2.0f, dx, dy, dout, (ulong)N);
                            gs.Synchronize();
                            ok &= Check(2.0f, hx, hy, dout.ToArray());
                        }
                    }
                    o.Step = "TensorMap.EncodeTiled";
                    using (TensorMap map = TensorMap.EncodeTiled(dx, 0, TensorDataType.Float32, new long[] { 16, N / 16 },
                        new long[] { 4, 16 * 4 }, new long[] { 16, 8 }, null, TensorInterleave.None, TensorSwizzle.None))
                    {
                        o.Step = "TensorMap.ReplaceAddress";
                        map.ReplaceAddress(dy, 0);
                        byte[] bytes = map.Bytes;
                        ok &= bytes.Length == 128 && BitConverter.ToUInt64(bytes, 0) == dy.DevicePointer;
                    }
                }
                o.Step = "Device.Dispose";
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // Batches: writes and a met wait in one call (device and pinned
        // memory), copies of every direction in one call, and a 3D batch of
        // two boxes, each result verified.
        private static void BatchesBody(Outcome o)
        {
            bool ok = true;
            var input = new uint[64];
            for (uint i = 0; i < 64; i++)
                input[i] = i * 11 + 3;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            using (CudaStream s = d.CreateStream(StreamFlags.NonBlocking))
            using (DeviceBuffer<uint> a = d.Allocate<uint>(64))
            using (DeviceBuffer<uint> b = d.Allocate<uint>(64))
            using (PinnedBuffer<uint> pinned = d.AllocatePinned<uint>(64))
            {
                for (int i = 0; i < 64; i++)
                    pinned[i] = 0;
                a.Memset(0);
                o.Step = "CudaStream.MemOpBatch";
                s.MemOpBatch(new MemOpBatch()
                    .Write(a, 0, 0xC0DE, 4)
                    .Write(a, 8, 0x0102030405060708UL, 8)
                    .Write(BatchMemory.Pinned(pinned), 4, 7, 4)
                    .Wait(BatchMemory.Pinned(pinned), 4, 7, 4, WaitCondition.Eq));
                s.Synchronize();
                uint[] words = a.ToArray();
                ok &= words[0] == 0xC0DE && words[2] == 0x05060708u && words[3] == 0x01020304u && pinned[1] == 7;
                o.Step = "CudaStream.CopyBatch";
                var output = new uint[64];
                using (s.CopyBatch(new CopyBatch().Copy(a, 0, input, 0, 256).Copy(BatchMemory.Pinned(pinned), 0, input, 0, 256)))
                    s.Synchronize();
                using (s.CopyBatch(new CopyBatch().Copy(b, 0, a, 0, 256)))
                    s.Synchronize();
                using (s.CopyBatch(new CopyBatch().Copy(output, 0, b, 0, 256), CopyBatchFlags.PreferOverlap))
                    s.Synchronize();
                for (int i = 0; i < 64; i++)
                    ok &= output[i] == input[i] && pinned[i] == input[i];
                o.Step = "CudaStream.Copy3DBatch";
                using (PinnedBuffer<uint> boxes = d.AllocatePinned<uint>(64))
                {
                    // The buffer as 8 rows of 8 words: rows 0-3 whole, and the
                    // right halves of rows 4-7, in one call.
                    for (int i = 0; i < 64; i++)
                        boxes[i] = 0;
                    s.Copy3DBatch(new[]
                    {
                        new Copy3D(CopyEnd.Device(b, 32), CopyEnd.Host(boxes, 32), 32, 4),
                        new Copy3D(CopyEnd.Device(b, 32).At(16, 4), CopyEnd.Host(boxes, 32).At(16, 4), 16, 4),
                    });
                    s.Synchronize();
                    for (int row = 0; row < 8; row++)
                        for (int col = 0; col < 8; col++)
                        {
                            bool copied = row < 4 || col >= 4;
                            ok &= boxes[row * 8 + col] == (copied ? input[row * 8 + col] : 0u);
                        }
                }
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // Compile (Program to CUBIN, and Device.Compile), get the kernels,
        // allocate, copy in, launch four ways, copy out, verify; every object
        // in a using, so an exception anywhere disposes what was made.
        private static void SaxpyBody(Outcome o)
        {
            float[] hx, hy;
            SaxpyInputs(out hx, out hy);
            bool ok = true;
            o.Step = "Device.Get";
            using (Device d = Device.Get(0))
            {
                byte[] cubin;
                o.Step = "new Program";
                using (var p = new Program(SaxpySource, "saxpy.cu"))
                {
                    o.Step = "Program.Compile";
                    p.Compile();
                    o.Step = "Program.Ptx";
                    ok &= p.Ptx.Length > 0;
                    o.Step = "Program.Cubin";
                    cubin = p.Cubin;
                }
                o.Step = "Device.LoadModule";
                using (CudaModule m1 = d.LoadModule(cubin))
                {
                    o.Step = "Device.Compile";
                    using (CudaModule m2 = d.Compile(SaxpySource, new CompileOptions { Name = "saxpy.cu", UseCache = false }))
                    {
                        o.Step = "CudaModule.GetKernel";
                        using (Kernel k1 = m1.GetKernel("saxpy"))
                        using (Kernel k2 = m2.GetKernel("saxpy"))
                        {
                            o.Step = "Device.Allocate";
                            using (DeviceBuffer<float> dx = d.Allocate<float>(N))
                            using (DeviceBuffer<float> dy = d.Allocate<float>(N))
                            using (DeviceBuffer<float> dout = d.Allocate<float>(N))
                            {
                                o.Step = "Device.CreateStream";
                                using (CudaStream stream = d.CreateStream())
                                {
                                    o.Step = "Device.AllocatePinned";
                                    using (PinnedBuffer<float> px = d.AllocatePinned<float>(N))
                                    using (PinnedBuffer<float> pout = d.AllocatePinned<float>(N))
                                    {
                                        o.Step = "Device.CreateEvent";
                                        using (CudaEvent start = d.CreateEvent())
                                        using (CudaEvent stop = d.CreateEvent())
                                        {
                                            o.Step = "copy in";
                                            px.CopyFrom(hx);
                                            dx.CopyFromAsync(px, stream);
                                            dy.CopyFrom(hy);

                                            o.Step = "launch (a = 2)";
                                            dout.MemsetAsync(0, stream);
                                            start.Record(stream);
                                            k1.Launch(2, N / 2, stream, 2.0f, dx, dy, dout, (ulong)N);
                                            stop.Record(stream);
                                            dout.CopyToAsync(pout, stream);
                                            stream.Synchronize();
                                            ok &= Check(2.0f, hx, hy, pout.ToArray());
                                            o.Step = "CudaEvent.ElapsedSince";
                                            ok &= stop.ElapsedSince(start) >= 0;

                                            o.Step = "launch (a = 3, LaunchConfig)";
                                            dout.Memset(0);
                                            k1.Launch(new LaunchConfig(2, N / 2), stream, 3.0f, dx, dy, dout, (ulong)N);
                                            stream.Synchronize();
                                            ok &= Check(3.0f, hx, hy, dout.ToArray());

                                            o.Step = "LaunchPlan (a = 4)";
                                            using (LaunchPlan plan = k1.Prepare(2, N / 2, stream))
                                            {
                                                plan.SetArguments(4.0f, dx, dy, dout, (ulong)N);
                                                plan.Launch();
                                                dout.CopyToAsync(pout, stream);
                                                d.Synchronize();
                                                ok &= Check(4.0f, hx, hy, pout.ToArray());
                                            }

                                            o.Step = "Device.AllocateAsync (a = 6)";
                                            DeviceBuffer<float> ordered = d.AllocateAsync<float>(N, stream);
                                            try
                                            {
                                                k1.Launch(2, N / 2, stream, 6.0f, dx, dy, ordered, (ulong)N);
                                                ordered.CopyToAsync(pout, stream);
                                                stream.Synchronize();
                                                ok &= Check(6.0f, hx, hy, pout.ToArray());
                                            }
                                            finally
                                            {
                                                ordered.Dispose(); // freed in order on the stream
                                            }

                                            o.Step = "launch of the Device.Compile kernel (a = 5)";
                                            k2.Launch(1, N, null, 5.0f, dx, dy, dout, (ulong)N);
                                            var hout = new float[N];
                                            dout.CopyTo(hout);
                                            ok &= Check(5.0f, hx, hy, hout);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                o.Step = "Device.Dispose";
            }
            o.Step = "done";
            o.Verified = ok;
        }

        // Every object of the run is disposed; this runs the finalizers of
        // anything the binding left to them, so the live count is final.
        private static void Collect()
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        // ---- the child side ----------------------------------------------------

        /// <summary>The child's work for the mode this test runs it in; -1 for another mode.</summary>
        public static int ServeChild(string mode, string[] extra)
        {
            if (mode != ChildMode)
                return -1;
            return Inject();
        }

        private struct Case
        {
            public long Index;
            public int Code;
        }

        private static bool IsNvrtc(string name)
        {
            return name != null && name.StartsWith("nvrtc", StringComparison.Ordinal);
        }

        private static string CodeName(bool nvrtc, int code)
        {
            if (nvrtc)
                return code == NvrtcErrorCompilation ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR_OUT_OF_MEMORY";
            return code == CudaErrorOutOfMemory ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_INVALID_VALUE";
        }

        private static string Describe(Exception e)
        {
            var c = e as CudaException;
            if (c != null)
                return c.GetType().Name + " " + c.StatusName + ": \"" + c.Message + "\"";
            return e.GetType().FullName + ": \"" + e.Message + "\""
                + (e.InnerException != null ? " (inner " + Describe(e.InnerException) + ")" : "");
        }

        // Whether a run reported the failed call properly: null when it did, else why not.
        private static string JudgeReport(Outcome o, string failed, bool nvrtc, int code)
        {
            if (o.Error == null)
                return o.Verified ? null : "completed with wrong results";
            // The binding's error: a CudaException, or an ArgumentException
            // wrapping the library's (a failed argument check).
            var c = o.Error as CudaException ?? o.Error.InnerException as CudaException;
            if (c == null)
                return "threw " + Describe(o.Error) + " at " + o.Step + " instead of a CudaException naming " + failed
                    + "\n      " + o.Error.StackTrace?.Replace("\n", "\n      ");
            if (c.Message.IndexOf(failed, StringComparison.Ordinal) >= 0)
                return null;
            if (nvrtc && code == NvrtcErrorCompilation && failed == "nvrtcCompileProgram" && c.Status == CudaStatus.Compile)
                return null; // a compile error: the status says so, the log is kept
            return "threw " + Describe(o.Error) + " at " + o.Step + ", which does not name " + failed;
        }

        private static int Inject()
        {
            string path = Environment.GetEnvironmentVariable("CUABI_DRIVER_PATH");
            if (string.IsNullOrEmpty(path))
            {
                Console.Error.WriteLine("CUABI_DRIVER_PATH must name the stand-in driver");
                return 5;
            }
            int seed = Environment.TickCount & 0x7fffffff;
            string s = Environment.GetEnvironmentVariable("CUABI_FAULT_SEED");
            if (!string.IsNullOrEmpty(s))
                seed = int.Parse(s);
            int maxRuns = 400;
            string m = Environment.GetEnvironmentVariable("CUABI_FAULT_MAX_RUNS");
            if (!string.IsNullOrEmpty(m))
                maxRuns = int.Parse(m);
            Console.WriteLine("fault injection (C#): seed " + seed);

            // The clean run loads the driver and NVRTC (cuabi opens them on first use).
            Outcome warm = Run(Scenarios[0]);
            Collect();
            string why = Fake.Open(path);
            if (why != null)
            {
                Console.Error.WriteLine(why);
                return 5;
            }
            long failedRuns = 0, handled = 0;
            var toleratedNames = new SortedSet<string>(StringComparer.Ordinal);
            var problems = new List<string>();
            foreach (Scenario scenario in Scenarios)
            {
                if (scenario != Scenarios[0])
                {
                    warm = Run(scenario);
                    Collect();
                }
                if (warm.Error != null || !warm.Verified)
                {
                    problems.Add(scenario.Name + ": the clean run fails: "
                        + (warm.Error != null ? Describe(warm.Error) + " at " + warm.Step + "\n" + warm.Error : "wrong results"));
                    continue;
                }
                long baseline = Fake.Live;
                Fake.Reset();
                Outcome counted = Run(scenario);
                long calls = Fake.Calls;
                var names = new List<string>();
                for (long i = 1; i <= calls; i++)
                    names.Add(Fake.CallName(i) ?? "?");
                Collect();
                if (Environment.GetEnvironmentVariable("CUABI_FAULT_LIST") == "1")
                    for (int i = 0; i < names.Count; i++)
                        Console.WriteLine("  " + scenario.Name + " call " + (i + 1) + ": " + names[i]);
                if (counted.Error != null || !counted.Verified || Fake.Live != baseline)
                {
                    problems.Add(scenario.Name + ": the counted clean run fails: "
                        + (counted.Error != null ? Describe(counted.Error)
                           : !counted.Verified ? "wrong results" : "leaks " + (Fake.Live - baseline) + " driver resources"));
                    continue;
                }

                var cases = new List<Case>();
                for (int i = 1; i <= calls; i++)
                {
                    string name = names[i - 1];
                    if (IsNvrtc(name))
                    {
                        cases.Add(new Case { Index = i, Code = NvrtcErrorCompilation });
                        cases.Add(new Case { Index = i, Code = NvrtcErrorOutOfMemory });
                    }
                    else
                    {
                        cases.Add(new Case { Index = i, Code = CudaErrorOutOfMemory });
                        // INVALID_VALUE is how cuFuncGetParamInfo says the index is
                        // past the last parameter: failing it with that only
                        // shortens the list.
                        if (name != "cuFuncGetParamInfo")
                            cases.Add(new Case { Index = i, Code = CudaErrorInvalidValue });
                    }
                }
                if (cases.Count > maxRuns)
                {
                    var rng = new Random(seed);
                    cases = cases.OrderBy(c => rng.Next()).Take(maxRuns)
                        .OrderBy(c => c.Index).ThenBy(c => c.Code).ToList();
                }

                long scenarioRuns = 0, scenarioHandled = 0, tolerated = 0;
                foreach (Case c in cases)
                {
                    string expected = names[(int)c.Index - 1];
                    bool nvrtc = IsNvrtc(expected);
                    Fake.Reset();
                    Fake.FailCall(c.Index, nvrtc ? 0 : c.Code, nvrtc ? c.Code : 0);
                    Outcome o = Run(scenario);
                    string failed = Fake.FailedName;
                    Fake.Reset();
                    Collect();
                    if (failed == null)
                        continue; // the run made fewer calls this time
                    scenarioRuns++;
                    var whys = new List<string>();
                    string report = JudgeReport(o, failed, nvrtc, c.Code);
                    if (report != null)
                        whys.Add(report);
                    long live = Fake.Live;
                    if (live != baseline)
                        whys.Add("leaked " + (live - baseline) + " driver resources (after disposal and the finalizers)");
                    if (scenario.UsesCache)
                    {
                        int temporary;
                        int entries = CacheFiles(out temporary);
                        if (temporary > 0)
                            whys.Add(temporary + " temporary files left in the cache");
                        if (o.FirstCompileFailed && entries > 0)
                            whys.Add("a failed compile left " + entries + " cache entries");
                    }
                    Outcome again = Run(scenario);
                    Collect();
                    if (again.Error != null || !again.Verified)
                        whys.Add("the same scenario then fails with no fault: "
                            + (again.Error != null ? Describe(again.Error) + " at " + again.Step : "wrong results"));
                    if (Fake.Live != live)
                        whys.Add("the clean run after it leaks " + (Fake.Live - live) + " driver resources");
                    if (whys.Count == 0)
                    {
                        scenarioHandled++;
                        if (o.Error == null)
                        {
                            tolerated++;
                            toleratedNames.Add(failed);
                        }
                    }
                    else
                    {
                        problems.Add(scenario.Name + " call " + c.Index + " (" + failed + ", " + CodeName(nvrtc, c.Code) + "): "
                            + string.Join("; ", whys));
                    }
                }
                Console.WriteLine("  {0} {1} calls; {2} failed in turn, {3} handled ({4} tolerated with correct results)",
                    scenario.Name, calls, scenarioRuns, scenarioHandled, tolerated);
                failedRuns += scenarioRuns;
                handled += scenarioHandled;
            }
            Console.WriteLine("fault injection (C#): {0} calls failed in turn, {1} handled", failedRuns, handled);
            Console.WriteLine("  failures tolerated with correct results:" + string.Concat(toleratedNames.Select(n => " " + n)));
            foreach (string p in problems)
                Console.WriteLine("NOT HANDLED: " + p);
            return problems.Count == 0 && failedRuns > 0 ? 0 : 1;
        }
    }
}
