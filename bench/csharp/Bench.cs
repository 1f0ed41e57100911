// cuabi's C# binding timed with the same loops as the C, Python and Rust
// benchmarks; one JSON object per figure on stdout (see bench/README.md).
//
//   cuabi-bench gpu   [options]   launch, graph, copy, compile
//   cuabi-bench saxpy [options]   one SAXPY application run and its kernel time
//   cuabi-bench cpu   [options]   NVRTC compile, argument packing, handle validation
//   cuabi-bench paired [options]  launch and copy figures paired with the C reference (Paired.cs)
//   cuabi-bench instructions --path P --count N   set-up, then N calls of P (Paired.cs)
//
// Compiled together with the binding's sources (bench/prepare-carry.sh), so
// the CPU figures can time the binding's own internal argument packer.
// Launch figures: the generic Kernel.Launch (object[] arguments) under the
// plain names, the prepared LaunchPlan under the _plan variants (the
// fastest documented path; collect.py takes each implementation's fastest).
// Timing: System.Diagnostics.Stopwatch around the measured region only.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using Cuabi;
using Cuabi.Interop;

public static partial class CuabiBench
{
    private const string Saxpy = @"extern ""C"" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
";

    private const string Empty = "extern \"C\" __global__ void empty2(float a, float *p) {}\n" +
        "extern \"C\" __global__ void empty16(float a0, float *p1, int i2, size_t n3,\n" +
        "    float a4, float *p5, int i6, size_t n7, float a8, float *p9, int i10, size_t n11,\n" +
        "    float a12, float *p13, int i14, size_t n15) {}\n";

    private const int SaxpyThreads = 512;
    private const int SaxpyBlocks = 32768;
    private const int CopyBytes = 64 << 20;
    private const int GraphKernels = 1000;

    private static int bursts = 100, burstSize = 200, warmup = 5, reps = 30, kernelReps = 30;
    private static string arch = "sm_90";
    private static HashSet<string> only = new HashSet<string>();

    // ------------------------------------------------------------------
    // Output and statistics
    // ------------------------------------------------------------------

    private static string Num(double v)
    {
        return double.IsNaN(v) || double.IsInfinity(v) ? "null" : v.ToString("R", CultureInfo.InvariantCulture);
    }

    private static string Str(string s)
    {
        var b = new StringBuilder("\"");
        foreach (char c in s ?? "")
        {
            if (c == '"' || c == '\\') b.Append('\\').Append(c);
            else if (c == '\n') b.Append("\\n");
            else if (c < 0x20) b.AppendFormat("\\u{0:x4}", (int)c);
            else b.Append(c);
        }
        return b.Append('"').ToString();
    }

    private static void Emit(string bench, string body)
    {
        Console.Out.WriteLine("{\"impl\":\"csharp\",\"bench\":" + Str(bench) + body + "}");
        Console.Out.Flush();
    }

    private static double[] Summarize(List<double> samples)
    {
        var v = samples.ToArray();
        Array.Sort(v);
        int n = v.Length;
        if (n == 0) return new double[] { 0, 0, 0, 0, 0 };
        Func<double, double> at = q => v[(int)Math.Floor(q * (n - 1) + 0.5)];
        double median = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        return new[] { median, at(0.1), at(0.9), v[0], v[n - 1] };
    }

    private static void EmitStats(string bench, string unit, List<double> samples, string extra = "")
    {
        double[] s = Summarize(samples);
        Emit(bench, ",\"unit\":\"" + unit + "\",\"value\":" + Num(s[0]) + ",\"median\":" + Num(s[0]) +
            ",\"p10\":" + Num(s[1]) + ",\"p90\":" + Num(s[2]) + ",\"min\":" + Num(s[3]) +
            ",\"max\":" + Num(s[4]) + ",\"n\":" + samples.Count + extra);
    }

    private static void EmitError(string bench, Exception e)
    {
        Emit(bench, ",\"error\":" + Str(e.GetType().Name + ": " + e.Message));
        Console.Error.WriteLine("[csharp] " + bench + ": " + e);
    }

    private static void EmitSkip(string bench, string why)
    {
        Emit(bench, ",\"skipped\":" + Str(why));
    }

    /// <summary>Runs one figure; a failure becomes an error record.</summary>
    private static void Guard(string bench, Action figure)
    {
        try
        {
            figure();
        }
        catch (Exception e)
        {
            EmitError(bench, e);
        }
    }

    private static bool Wanted(string name)
    {
        return only.Count == 0 || only.Contains(name);
    }

    private static double Ms(long ticks)
    {
        return ticks * 1000.0 / Stopwatch.Frequency;
    }

    private static List<double> RepeatMs(int count, Action f)
    {
        f();
        var t = new List<double>(count);
        for (int i = 0; i < count; i++)
        {
            long t0 = Stopwatch.GetTimestamp();
            f();
            t.Add(Ms(Stopwatch.GetTimestamp() - t0));
        }
        return t;
    }

    // ------------------------------------------------------------------
    // GPU figures
    // ------------------------------------------------------------------

    /// <summary>Host microseconds per launch in bursts, synchronised between bursts outside the timed region.</summary>
    private static List<double> LaunchBursts(CudaStream stream, Action launch)
    {
        for (int w = 0; w < warmup; w++)
        {
            for (int i = 0; i < burstSize; i++) launch();
            stream.Synchronize();
        }
        var t = new List<double>(bursts);
        for (int b = 0; b < bursts; b++)
        {
            long t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < burstSize; i++) launch();
            long t1 = Stopwatch.GetTimestamp();
            stream.Synchronize();
            t.Add(Ms(t1 - t0) * 1000.0 / burstSize);
        }
        return t;
    }

    private static object[] Args16(object pointer)
    {
        var a = new List<object>();
        for (int k = 0; k < 4; k++)
        {
            a.Add(1.0f + k);
            a.Add(pointer);
            a.Add(1 + k);
            a.Add((ulong)(10 * (k + 1)));
        }
        return a.ToArray();
    }

    private static void LaunchAndGraph(Device device)
    {
        using (CudaModule module = device.Compile(Empty))
        using (CudaStream stream = device.CreateStream())
        using (DeviceBuffer<float> buf = device.Allocate<float>(64))
        {
            var one = new LaunchConfig(new Dim3(1), new Dim3(1));
            string burst = ",\"burst\":" + burstSize;
            if (Wanted("launch"))
            {
                // The generic path (Kernel.Launch, object[] arguments) and the
                // prepared one (LaunchPlan), each reported; collect.py takes the
                // fastest for the targets. _plan writes the arguments once (as
                // the C _plan figure does); _plan_set writes every argument
                // through the typed setters before each launch.
                Guard("launch_2args", () =>
                {
                    using (Kernel k = module.GetKernel("empty2"))
                    {
                        object[] args = { 2.0f, buf };
                        EmitStats("launch_2args", "us", LaunchBursts(stream, () => k.Launch(one, stream, args)),
                            burst + ",\"args\":2,\"path\":\"Kernel.Launch(config, stream, object[] built once)\"");
                        float a = 2.0f;
                        EmitStats("launch_2args_boxed", "us", LaunchBursts(stream, () => k.Launch(one, stream, a, buf)),
                            burst + ",\"args\":2,\"path\":\"Kernel.Launch(config, stream, a, buf): params array and boxing per launch\"");
                    }
                });
                Guard("launch_2args_plan", () =>
                {
                    using (Kernel k = module.GetKernel("empty2"))
                    using (LaunchPlan plan = k.Prepare(one, stream))
                    {
                        plan.Set(0, 2.0f);
                        plan.Set(1, buf);
                        EmitStats("launch_2args_plan", "us", LaunchBursts(stream, plan.Launch),
                            burst + ",\"args\":2,\"path\":\"LaunchPlan.Launch() (Kernel.Prepare; arguments set once)\"");
                        EmitStats("launch_2args_plan_set", "us", LaunchBursts(stream, () =>
                        {
                            plan.Set(0, 2.0f);
                            plan.Set(1, buf);
                            plan.Launch();
                        }), burst + ",\"args\":2,\"path\":\"LaunchPlan.Set<T> per argument, then Launch()\"");
                    }
                });
                Guard("launch_16args", () =>
                {
                    using (Kernel k = module.GetKernel("empty16"))
                    {
                        object[] args = Args16(buf);
                        EmitStats("launch_16args", "us", LaunchBursts(stream, () => k.Launch(one, stream, args)),
                            burst + ",\"args\":16,\"path\":\"Kernel.Launch(config, stream, object[] built once)\"");
                    }
                });
                Guard("launch_16args_plan", () =>
                {
                    using (Kernel k = module.GetKernel("empty16"))
                    using (LaunchPlan plan = k.Prepare(one, stream))
                    {
                        plan.SetArguments(Args16(buf));
                        EmitStats("launch_16args_plan", "us", LaunchBursts(stream, plan.Launch),
                            burst + ",\"args\":16,\"path\":\"LaunchPlan.Launch() (Kernel.Prepare; arguments set once)\"");
                        EmitStats("launch_16args_plan_set", "us", LaunchBursts(stream, () =>
                        {
                            for (int g = 0; g < 4; g++)
                            {
                                plan.Set(4 * g, 1.0f + g);
                                plan.Set(4 * g + 1, buf);
                                plan.Set(4 * g + 2, 1 + g);
                                plan.Set(4 * g + 3, (ulong)(10 * (g + 1)));
                            }
                            plan.Launch();
                        }), burst + ",\"args\":16,\"path\":\"LaunchPlan.Set<T> per argument, then Launch()\"");
                    }
                });
            }
            if (Wanted("graph"))
            {
                Guard("graph_replay", () =>
                {
                    using (Kernel k = module.GetKernel("empty2"))
                    {
                        object[] args = { 2.0f, buf };
                        k.Launch(one, stream, args); // first use outside the capture
                        stream.Synchronize();
                        CudaGraph graph;
                        stream.BeginCapture(CaptureMode.Global);
                        try
                        {
                            for (int i = 0; i < GraphKernels; i++) k.Launch(one, stream, args);
                        }
                        finally
                        {
                            graph = stream.EndCapture();
                        }
                        using (graph)
                        using (CudaGraphExec exec = graph.Instantiate())
                        {
                            for (int w = 0; w < warmup; w++)
                            {
                                exec.Launch(stream);
                                stream.Synchronize();
                            }
                            var perKernel = new List<double>();
                            var host = new List<double>();
                            for (int r = 0; r < Math.Max(reps, 50); r++)
                            {
                                long t0 = Stopwatch.GetTimestamp();
                                exec.Launch(stream);
                                long t1 = Stopwatch.GetTimestamp();
                                stream.Synchronize();
                                long t2 = Stopwatch.GetTimestamp();
                                perKernel.Add(Ms(t2 - t0) * 1000.0 / GraphKernels);
                                host.Add(Ms(t1 - t0) * 1000.0);
                            }
                            string extra = ",\"kernels\":" + GraphKernels;
                            EmitStats("graph_replay", "us", perKernel, extra);
                            EmitStats("graph_launch_call", "us", host, extra);
                        }
                    }
                });
            }
        }
    }

    private static void CopyRate(string bench, Action copy, string path)
    {
        for (int w = 0; w < warmup; w++) copy();
        var t = new List<double>(reps);
        for (int r = 0; r < reps; r++)
        {
            long t0 = Stopwatch.GetTimestamp();
            copy();
            t.Add(Ms(Stopwatch.GetTimestamp() - t0));
        }
        double[] s = Summarize(t);
        Emit(bench, ",\"unit\":\"GB/s\",\"value\":" + Num(CopyBytes / (s[0] * 1e6)) + ",\"best\":" +
            Num(CopyBytes / (s[3] * 1e6)) + ",\"median_ms\":" + Num(s[0]) + ",\"bytes\":" + CopyBytes +
            ",\"n\":" + t.Count + ",\"path\":" + Str(path));
    }

    private static void Copies(Device device)
    {
        using (DeviceBuffer<byte> buf = device.Allocate<byte>(CopyBytes))
        using (CudaStream stream = device.CreateStream())
        using (PinnedBuffer<byte> pinned = device.AllocatePinned<byte>(CopyBytes))
        {
            var host = new byte[CopyBytes];
            for (int i = 0; i < host.Length; i++) host[i] = 1;
            Guard("copy_h2d_pageable", () => CopyRate("copy_h2d_pageable", () => buf.CopyFrom(host), "CopyFrom(byte[])"));
            Guard("copy_d2h_pageable", () => CopyRate("copy_d2h_pageable", () => buf.CopyTo(host), "CopyTo(byte[])"));
            Guard("copy_h2d_pinned", () => CopyRate("copy_h2d_pinned", () =>
            {
                buf.CopyFromAsync(pinned, stream);
                stream.Synchronize();
            }, "CopyFromAsync(PinnedBuffer) + Synchronize"));
            Guard("copy_d2h_pinned", () => CopyRate("copy_d2h_pinned", () =>
            {
                buf.CopyToAsync(pinned, stream);
                stream.Synchronize();
            }, "CopyToAsync(PinnedBuffer) + Synchronize"));
        }
    }

    private static byte[] NvrtcImage(string archOption, bool cubin)
    {
        using (var p = new Program(Saxpy, "saxpy.cu"))
        {
            p.Compile("--fmad=false", archOption);
            return cubin ? p.Cubin : Encoding.UTF8.GetBytes(p.Ptx);
        }
    }

    private static void CompileNvrtc(string target)
    {
        string option = "--gpu-architecture=" + target;
        EmitStats("compile_nvrtc", "ms", RepeatMs(Math.Max(reps / 3, 5), () => NvrtcImage(option, true)),
            ",\"arch\":" + Str(target));
    }

    private static void CompileFigures(Device device)
    {
        ComputeCapability cc = device.ComputeCapability;
        string sm = "sm_" + cc.Major + cc.Minor;
        Guard("compile_nvrtc", () => CompileNvrtc(sm));
        Guard("compile_cache_hit", () =>
        {
            var options = new CompileOptions { Name = "saxpy.cu" };
            options.Options.Add("--fmad=false");
            device.Compile(Saxpy, options).Dispose();
            int misses = 0;
            var t = RepeatMs(Math.Max(reps, 20), () =>
            {
                using (CudaModule m = device.Compile(Saxpy, options))
                    if (!m.FromCache) misses++;
            });
            if (misses > 0) throw new Exception(misses + " compiles missed a warm cache");
            EmitStats("compile_cache_hit", "ms", t);
        });
        Guard("load_cubin", () =>
        {
            byte[] image = NvrtcImage("--gpu-architecture=" + sm, true);
            EmitStats("load_cubin", "ms", RepeatMs(Math.Max(reps / 3, 10), () => device.LoadModule(image).Dispose()));
        });
        Guard("load_ptx", () =>
        {
            byte[] image = NvrtcImage("--gpu-architecture=compute_" + cc.Major + cc.Minor, false);
            EmitStats("load_ptx", "ms", RepeatMs(Math.Max(reps / 3, 10), () => device.LoadModule(image).Dispose()));
        });
    }

    private static int RunGpu()
    {
        Device device;
        try
        {
            device = Device.Get(0);
            ComputeCapability cc = device.ComputeCapability;
            Emit("info", ",\"device\":" + Str(device.Name) + ",\"cc\":\"" + cc.Major + "." + cc.Minor +
                "\",\"runtime\":" + Str(RuntimeName()));
        }
        catch (Exception e)
        {
            EmitError("init", e);
            return 1;
        }
        using (device)
        {
            if (Wanted("launch") || Wanted("graph")) Guard("launch_2args", () => LaunchAndGraph(device));
            if (Wanted("copy")) Guard("copy_h2d_pageable", () => Copies(device));
            if (Wanted("compile")) Guard("compile_nvrtc", () => CompileFigures(device));
        }
        return 0;
    }

    private static string RuntimeName()
    {
        Type mono = Type.GetType("Mono.Runtime");
        return mono != null ? "Mono " + Environment.Version : ".NET " + Environment.Version;
    }

    // ------------------------------------------------------------------
    // SAXPY
    // ------------------------------------------------------------------

    /// <summary>
    /// How many results differ from the host's a * x + y, within the same
    /// tolerance as the other languages' checks.
    /// Written without Math.Abs, which Mono's JIT calls out of line: with it
    /// this check of 16M floats took 94 ms against 42 ms without, on one
    /// CPU core, all of it counted in the time to first result.
    /// </summary>
    private static int CountWrong(float a, float[] x, float[] y, float[] got)
    {
        int bad = 0;
        for (int i = 0; i < got.Length; i++)
        {
            float want = a * x[i] + y[i];
            float diff = got[i] - want;
            if (diff < 0) diff = -diff;
            float size = want < 0 ? -want : want;
            if (diff > 1e-5f * (1.0f + size)) bad++;
        }
        return bad;
    }

    private static int RunSaxpy()
    {
        const int n = SaxpyThreads * SaxpyBlocks;
        var hX = new float[n];
        var hY = new float[n];
        var hOut = new float[n];
        uint s = 1234;
        foreach (float[] v in new[] { hX, hY })
            for (int i = 0; i < n; i++)
            {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                v[i] = (s >> 8) * (1.0f / 16777216.0f);
            }
        const float a = 2.0f;

        // CUABI_BENCH_PHASES=1: also where the time to first result went
        // (the saxpy_phases record, ms per step), to find what to cut.
        bool phases = Environment.GetEnvironmentVariable("CUABI_BENCH_PHASES") == "1";
        var marks = new List<KeyValuePair<string, long>>();
        Action<string> mark = name =>
        {
            if (phases)
                marks.Add(new KeyValuePair<string, long>(name, Stopwatch.GetTimestamp()));
        };
        long t0 = Stopwatch.GetTimestamp();
        Device device = Device.Get(0);
        mark("device");
        var options = new CompileOptions { Name = "saxpy.cu" };
        options.Options.Add("--fmad=false");
        CudaModule module = device.Compile(Saxpy, options);
        mark("compile");
        bool hit = module.FromCache;
        Kernel kernel = module.GetKernel("saxpy");
        mark("kernel");
        DeviceBuffer<float> dX = device.Allocate<float>(n);
        DeviceBuffer<float> dY = device.Allocate<float>(n);
        DeviceBuffer<float> dOut = device.Allocate<float>(n);
        CudaStream stream = device.CreateStream();
        CudaEvent start = device.CreateEvent(), stop = device.CreateEvent();
        mark("allocate");
        dX.CopyFrom(hX);
        dY.CopyFrom(hY);
        mark("upload");
        var config = new LaunchConfig(new Dim3(SaxpyBlocks), new Dim3(SaxpyThreads));
        object[] args = { a, dX, dY, dOut, (ulong)n };
        start.Record(stream);
        kernel.Launch(config, stream, args);
        mark("launch");
        stop.Record(stream);
        stream.Synchronize();
        mark("synchronize");
        dOut.CopyTo(hOut);
        mark("download");
        int bad = CountWrong(a, hX, hY, hOut);
        double appMs = Ms(Stopwatch.GetTimestamp() - t0);
        if (bad != 0)
        {
            EmitError("saxpy_app", new Exception(bad + " of " + n + " results differ from the host's"));
            return 1;
        }
        float first = stop.ElapsedSince(start);
        if (phases)
        {
            var parts = new StringBuilder();
            long at = t0;
            foreach (var m in marks)
            {
                parts.Append(",\"" + m.Key + "\":" + Num(Ms(m.Value - at)));
                at = m.Value;
            }
            Emit("saxpy_phases", ",\"unit\":\"ms\"" + parts);
        }
        Emit("saxpy_app", ",\"unit\":\"ms\",\"value\":" + Num(appMs) + ",\"n\":1,\"cache\":\"" +
            (hit ? "hit" : "miss") + "\",\"verified\":true");
        Guard("saxpy_kernel", () =>
        {
            var k = new List<double>();
            for (int r = 0; r < kernelReps; r++)
            {
                // An untimed SAXPY keeps the stream busy while the timed one is enqueued.
                kernel.Launch(config, stream, args);
                start.Record(stream);
                kernel.Launch(config, stream, args);
                stop.Record(stream);
                stream.Synchronize();
                k.Add(stop.ElapsedSince(start));
            }
            EmitStats("saxpy_kernel", "ms", k, ",\"first_ms\":" + Num(first) + ",\"elements\":" + n);
        });
        return 0;
    }

    // ------------------------------------------------------------------
    // CPU only
    // ------------------------------------------------------------------

    /// <summary>Nanoseconds per call: 50 rounds of 2000 calls.</summary>
    private static List<double> PerCallNs(Action call)
    {
        const int rounds = 50, calls = 2000;
        for (int i = 0; i < calls; i++) call();
        var t = new List<double>(rounds);
        for (int r = 0; r < rounds; r++)
        {
            long t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < calls; i++) call();
            t.Add(Ms(Stopwatch.GetTimestamp() - t0) * 1e6 / calls);
        }
        return t;
    }

    private static unsafe void Packing()
    {
        // What Kernel.Launch runs on every launch to write its arguments
        // (type check against the writer kept for each parameter, then a
        // store), for the layouts the driver reports for empty2 and empty16.
        var p2 = new[] { new KernelParameter(0, 0, 4), new KernelParameter(1, 8, 8) };
        var p16 = new KernelParameter[16];
        int[] offsets = { 0, 8, 16, 24 };
        int[] sizes = { 4, 8, 4, 8 };
        for (int i = 0; i < 16; i++) p16[i] = new KernelParameter(i, 32 * (i / 4) + offsets[i % 4], sizes[i % 4]);
        var pointer = new IntPtr(0x7F0000000000);
        object[] a2 = { 2.0f, pointer };
        object[] a16 = Args16(pointer);
        ArgumentLayout l2 = Accepting(p2, 16, a2);
        ArgumentLayout l16 = Accepting(p16, 128, a16);
        byte* block = stackalloc byte[128];
        byte* b = block;
        EmitStats("pack_2args", "ns", PerCallNs(() => l2.Write(a2, b)),
            ",\"path\":\"ArgumentLayout.Write (float, IntPtr), as Kernel.Launch per launch\"");
        EmitStats("pack_16args", "ns", PerCallNs(() => l16.Write(a16, b)),
            ",\"path\":\"ArgumentLayout.Write (float, IntPtr, int, ulong) x 4, as Kernel.Launch per launch\"");
    }

    /// <summary>
    /// A layout with no function behind it whose argument types are taken as
    /// accepted, as the library's check (made once per signature, not timed
    /// here) leaves them: what Kernel.Launch writes per launch.
    /// </summary>
    private static ArgumentLayout Accepting(KernelParameter[] parameters, int blockSize, object[] args)
    {
        var layout = new ArgumentLayout(new SafeFunctionHandle(IntPtr.Zero, false), parameters, blockSize);
        for (int i = 0; i < args.Length; i++)
            layout.Accepted[i] = ArgumentWriter.For(args[i].GetType());
        return layout;
    }

    private static void Handles()
    {
        IntPtr stale;
        using (var p = new Program("extern \"C\" __global__ void k() {}", "k.cu"))
            stale = p.Handle.DangerousGetHandle();
        var released = new SafeProgramHandle(stale, false);
        var none = new SafeFunctionHandle(IntPtr.Zero, false);
        EmitStats("invalid_handle_released", "ns", PerCallNs(() =>
        {
            UIntPtr size = UIntPtr.Zero;
            if (NativeMethods.cuabi_program_get_log(released, null, ref size) != CudaStatus.InvalidHandle)
                throw new Exception("a released handle was not refused");
        }), ",\"path\":\"status only (NativeMethods, non-owning SafeHandle)\"");
        EmitStats("invalid_handle_null", "ns", PerCallNs(() =>
        {
            UIntPtr count;
            if (NativeMethods.cuabi_function_get_param_count(none, out count) != CudaStatus.InvalidHandle)
                throw new Exception("a NULL handle was not refused");
        }), ",\"path\":\"status only (NativeMethods)\"");
        using (var p = new Program("extern \"C\" __global__ void k() {}", "k.cu"))
        {
            EmitStats("error_path", "ns", PerCallNs(() =>
            {
                try
                {
                    string ptx = p.Ptx;
                    throw new Exception("PTX before a compile did not fail: " + ptx.Length);
                }
                catch (CudaException)
                {
                }
            }), ",\"path\":\"Program.Ptx before compile -> CudaException\"");
        }
        var disposed = new Program("extern \"C\" __global__ void k() {}", "k.cu");
        disposed.Dispose();
        EmitStats("disposed_object", "ns", PerCallNs(() =>
        {
            try
            {
                string log = disposed.Log;
                throw new Exception("a disposed Program answered: " + log);
            }
            catch (ObjectDisposedException)
            {
            }
        }), ",\"path\":\"disposed Program.Log -> ObjectDisposedException (binding-side)\"");
    }

    private static int RunCpu()
    {
        Guard("compile_nvrtc", () => CompileNvrtc(arch));
        Guard("pack_2args", Packing);
        Guard("invalid_handle_released", Handles);
        return 0;
    }

    // ------------------------------------------------------------------

    private static int Parse(string[] argv)
    {
        for (int i = 1; i < argv.Length; i += 2)
        {
            if (i + 1 >= argv.Length) throw new ArgumentException(argv[i] + " needs a value");
            string v = argv[i + 1];
            switch (argv[i])
            {
                case "--bursts": bursts = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--burst-size": burstSize = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--warmup": warmup = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--reps": reps = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--kernel-reps": kernelReps = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--arch": arch = v; break;
                case "--pairs": pairs = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--copy-pairs": copyPairs = int.Parse(v, CultureInfo.InvariantCulture); break;
                case "--path": instrPath = v; break;
                case "--count": instrCount = long.Parse(v, CultureInfo.InvariantCulture); break;
                case "--only":
                    foreach (string s in v.Split(','))
                        if (s.Length > 0) only.Add(s);
                    break;
                default: throw new ArgumentException("unknown option " + argv[i]);
            }
        }
        return 0;
    }

    public static int Main(string[] argv)
    {
        if (argv.Length < 1)
        {
            Console.Error.WriteLine("usage: cuabi-bench gpu|saxpy|cpu|paired|instructions [options]");
            return 2;
        }
        try
        {
            Parse(argv);
            // Binds the "cuabi" DllImport name before any method calling
            // NativeMethods is compiled (Mono binds at JIT time).
            CuabiLibrary.Load();
        }
        catch (Exception e)
        {
            EmitError("init", e);
            return 1;
        }
        switch (argv[0])
        {
            case "gpu": return RunGpu();
            case "cpu": return RunCpu();
            case "paired": return RunPaired();
            case "instructions":
                try
                {
                    return RunInstructions();
                }
                catch (Exception e)
                {
                    Console.Error.WriteLine("[csharp] instructions " + instrPath + ": " + e);
                    return 1;
                }
            case "saxpy":
                try
                {
                    return RunSaxpy();
                }
                catch (Exception e)
                {
                    EmitError("saxpy_app", e);
                    return 1;
                }
            default:
                Console.Error.WriteLine("unknown mode " + argv[0]);
                return 2;
        }
    }
}
