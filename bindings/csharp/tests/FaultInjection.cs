// Fault injection through the C# binding, no GPU: the SAXPY flow through the
// binding's objects (Program, Device.Compile, CudaModule, Kernel, buffers,
// pinned buffers, a stream, events, a LaunchPlan) against the stand-in driver
// and NVRTC of tests/fake/, with each driver and NVRTC call it
// makes failing in turn.
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

        private const string SaxpySource = @"extern ""C"" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) out[tid] = a * x[tid] + y[tid];
}
";

        public static void Register()
        {
            Registry.Add("fault injection: each driver and NVRTC call of SAXPY fails in turn (stand-in driver, own process)", Run);
        }

        // ---- the parent side -------------------------------------------------

        private static void Run()
        {
            string fake = Environment.GetEnvironmentVariable("CUABI_FAULT_FAKE_DRIVER");
            if (string.IsNullOrEmpty(fake))
                throw new SkipException("CUABI_FAULT_FAKE_DRIVER is not set (the stand-in driver "
                    + "build/tests/fault/libcuabi_fault_fake_cuda.so exists only in a CMake build)");
            if (!System.IO.File.Exists(fake))
                throw new SkipException("no stand-in driver at " + fake + " (CUABI_FAULT_FAKE_DRIVER)");
            var env = new Dictionary<string, string>
            {
                { "CUABI_DRIVER_PATH", fake },
                { "CUABI_NVRTC_PATH", fake },
                { "CUABI_CACHE", null },
            };
            Child.Result r = Child.Run(ChildMode, env);
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
        }

        private static bool Check(float a, float[] x, float[] y, float[] got)
        {
            for (int i = 0; i < N; i++)
                if (got[i] != a * x[i] + y[i])
                    return false;
            return true;
        }

        private static Outcome Saxpy()
        {
            var o = new Outcome();
            try
            {
                SaxpyBody(o);
            }
            catch (Exception e)
            {
                o.Error = e;
            }
            return o;
        }

        // Compile (Program to CUBIN, and Device.Compile), get the kernels,
        // allocate, copy in, launch four ways, copy out, verify; every object
        // in a using, so an exception anywhere disposes what was made.
        private static void SaxpyBody(Outcome o)
        {
            var hx = new float[N];
            var hy = new float[N];
            for (int i = 0; i < N; i++)
            {
                hx[i] = i;
                hy[i] = 2 * i + 1;
            }
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
            Outcome warm = Saxpy();
            Collect();
            string why = Fake.Open(path);
            if (why != null)
            {
                Console.Error.WriteLine(why);
                return 5;
            }
            if (warm.Error != null || !warm.Verified)
            {
                Console.WriteLine("NOT HANDLED: saxpy: the clean run fails: "
                    + (warm.Error != null ? Describe(warm.Error) + " at " + warm.Step + "\n" + warm.Error : "wrong results"));
                Console.WriteLine("fault injection (C#): 0 calls failed in turn, 0 handled");
                return 1;
            }
            long baseline = Fake.Live;
            Fake.Reset();
            Outcome counted = Saxpy();
            long calls = Fake.Calls;
            var names = new List<string>();
            for (long i = 1; i <= calls; i++)
                names.Add(Fake.CallName(i) ?? "?");
            Collect();
            if (Environment.GetEnvironmentVariable("CUABI_FAULT_LIST") == "1")
                for (int i = 0; i < names.Count; i++)
                    Console.WriteLine("  call " + (i + 1) + ": " + names[i]);
            if (counted.Error != null || !counted.Verified || Fake.Live != baseline)
            {
                Console.WriteLine("NOT HANDLED: saxpy: the counted clean run fails: "
                    + (counted.Error != null ? Describe(counted.Error)
                       : !counted.Verified ? "wrong results" : "leaks " + (Fake.Live - baseline) + " driver resources"));
                Console.WriteLine("fault injection (C#): 0 calls failed in turn, 0 handled");
                return 1;
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

            long failedRuns = 0, handled = 0, tolerated = 0;
            var toleratedNames = new SortedSet<string>(StringComparer.Ordinal);
            var problems = new List<string>();
            foreach (Case c in cases)
            {
                string expected = names[(int)c.Index - 1];
                bool nvrtc = IsNvrtc(expected);
                Fake.Reset();
                Fake.FailCall(c.Index, nvrtc ? 0 : c.Code, nvrtc ? c.Code : 0);
                Outcome o = Saxpy();
                string failed = Fake.FailedName;
                Fake.Reset();
                Collect();
                if (failed == null)
                    continue; // the run made fewer calls this time
                failedRuns++;
                var whys = new List<string>();
                string report = JudgeReport(o, failed, nvrtc, c.Code);
                if (report != null)
                    whys.Add(report);
                long live = Fake.Live;
                if (live != baseline)
                    whys.Add("leaked " + (live - baseline) + " driver resources (after disposal and the finalizers)");
                Outcome again = Saxpy();
                Collect();
                if (again.Error != null || !again.Verified)
                    whys.Add("the same scenario then fails with no fault: "
                        + (again.Error != null ? Describe(again.Error) + " at " + again.Step : "wrong results"));
                if (Fake.Live != live)
                    whys.Add("the clean run after it leaks " + (Fake.Live - live) + " driver resources");
                if (whys.Count == 0)
                {
                    handled++;
                    if (o.Error == null)
                    {
                        tolerated++;
                        toleratedNames.Add(failed);
                    }
                }
                else
                {
                    problems.Add("saxpy call " + c.Index + " (" + failed + ", " + CodeName(nvrtc, c.Code) + "): "
                        + string.Join("; ", whys));
                }
            }
            Console.WriteLine("  saxpy {0} calls; {1} failed in turn, {2} handled ({3} tolerated with correct results)",
                calls, failedRuns, handled, tolerated);
            Console.WriteLine("fault injection (C#): {0} calls failed in turn, {1} handled", failedRuns, handled);
            Console.WriteLine("  failures tolerated with correct results:" + string.Concat(toleratedNames.Select(n => " " + n)));
            foreach (string p in problems)
                Console.WriteLine("NOT HANDLED: " + p);
            return problems.Count == 0 && failedRuns > 0 ? 0 : 1;
        }
    }
}
