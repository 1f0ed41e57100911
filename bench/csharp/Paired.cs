// The paired figures and the instruction counts of the C# benchmark
// (bench/README.md, "Paired figures"; bench/instructions/bindings.py).
//
//   cuabi-bench paired [--pairs N] [--burst-size N] [--copy-pairs N] [--warmup N] [--arch sm_XY]
//   cuabi-bench instructions --path P --count N
//
// Series of the launch figures (paired_launch_2args, paired_launch_16args):
//   c_ref     benchref_launch_burst: C's raw cuLaunchKernel, timed in C
//   raw       C#'s own [DllImport("libcuda.so.1")] cuLaunchKernel, blittable
//             arguments (IntPtr, uint, void**), the reference's CUfunction
//   launch    Kernel.Launch(config, stream, object[] built once)
//   boxed     Kernel.Launch(config, stream, a, buf, ...): params array and boxing per launch
//   plan      LaunchPlan.Launch(), arguments set once (the headline: the
//             fastest documented path, as the launch_*_plan rows)
//   plan_set  LaunchPlan.Set<T> per argument, then Launch()
// Series of the copy figures: c_ref (benchref_copy_to_device / _to_host on
// the very same host memory and device buffer) and copy (the binding's copy).
//
// The reference library: [DllImport("cuabi_bench_reference")], the name
// bound to $CUABI_BENCH_REFERENCE (a full path) by a Mono dllmap entry, as
// the binding binds "cuabi" to $CUABI_LIBRARY (works in the mkbundle'd
// executable as well); without the variable, to libcuabi_bench_reference.so
// through the dynamic loader's search path (LD_LIBRARY_PATH).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using Cuabi;
using Cuabi.Interop;

public static partial class CuabiBench
{
    private static int pairs = 100, copyPairs = 30;
    private static string instrPath;
    private static long instrCount = -1;

    // ------------------------------------------------------------------
    // Native entry points: the reference library and the driver itself
    // ------------------------------------------------------------------

    private static class Reference
    {
        internal const string Name = "cuabi_bench_reference";
        internal const string EnvironmentVariable = "CUABI_BENCH_REFERENCE";
        private static bool bound;

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int benchref_load_kernel(ulong context, [MarshalAs(UnmanagedType.LPStr)] string source,
            [MarshalAs(UnmanagedType.LPStr)] string name, [MarshalAs(UnmanagedType.LPStr)] string arch, out ulong function);

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        internal static extern unsafe long benchref_launch_burst(ulong function, ulong stream, IntPtr* parameters, uint count);

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        internal static extern long benchref_copy_to_device(ulong dst, IntPtr src, UIntPtr bytes);

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        internal static extern long benchref_copy_to_host(IntPtr dst, ulong src, UIntPtr bytes);

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        internal static extern long benchref_alloc_burst(ulong stream, UIntPtr bytes, int ordered, uint count);

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int benchref_stream_sync(ulong stream);

        [DllImport(Name, CallingConvention = CallingConvention.Cdecl)]
        private static extern IntPtr benchref_error();

        internal static string Error()
        {
            IntPtr p = benchref_error();
            return p == IntPtr.Zero ? "?" : Marshal.PtrToStringAnsi(p);
        }

        /// <summary>Binds <see cref="Name"/> to the library file; before any method calling it is compiled.</summary>
        internal static void Bind()
        {
            if (bound)
                return;
            string path = Environment.GetEnvironmentVariable(EnvironmentVariable);
            if (string.IsNullOrEmpty(path))
                path = "libcuabi_bench_reference.so";
            Dl.dlerror();
            if (Dl.dlopen(path, 2 /* RTLD_NOW */) == IntPtr.Zero)
            {
                IntPtr e = Dl.dlerror();
                throw new DllNotFoundException("the reference library (" + path + ", $" + EnvironmentVariable +
                    "): " + (e == IntPtr.Zero ? "dlopen failed" : Marshal.PtrToStringAnsi(e)));
            }
            MonoRuntime.mono_dllmap_insert(IntPtr.Zero, Name, null, path, null);
            bound = true;
        }

        internal static ulong LoadKernel(ulong context, string name)
        {
            ulong f;
            if (benchref_load_kernel(context, Empty, name, arch, out f) != 0)
                throw new Exception("benchref_load_kernel(" + name + "): " + Error());
            return f;
        }
    }

    private static class Dl
    {
        [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr dlopen([MarshalAs(UnmanagedType.LPStr)] string file, int mode);

        [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr dlerror();
    }

    private static class MonoRuntime
    {
        [DllImport("__Internal", CallingConvention = CallingConvention.Cdecl)]
        internal static extern void mono_dllmap_insert(IntPtr assembly,
            [MarshalAs(UnmanagedType.LPStr)] string dll, [MarshalAs(UnmanagedType.LPStr)] string func,
            [MarshalAs(UnmanagedType.LPStr)] string tdll, [MarshalAs(UnmanagedType.LPStr)] string tfunc);
    }

    /// <summary>The driver through C#'s own FFI: what a C# program calling CUDA directly pays.</summary>
    private static unsafe class RawCuda
    {
        // CUresult cuLaunchKernel(CUfunction f, unsigned gx, gy, gz, bx, by, bz, unsigned shmem,
        //                         CUstream s, void** params, void** extra);
        [DllImport("libcuda.so.1", CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cuLaunchKernel(IntPtr f, uint gx, uint gy, uint gz, uint bx, uint by, uint bz,
            uint shmem, IntPtr stream, IntPtr* parameters, IntPtr* extra);

        // Only in the instructions stand-in (bench/instructions/fake_driver.c).
        [DllImport("libcuda.so.1", CallingConvention = CallingConvention.Cdecl)]
        internal static extern void instructions_fake_set_stream_query(int notReady);
    }

    // ------------------------------------------------------------------
    // What the series launch with
    // ------------------------------------------------------------------

    /// <summary>One kernel (empty2 or empty16) ready for every series: the reference's CUfunction and its
    /// argument values in unmanaged memory, the binding's kernel, a plan and the object[] arguments.</summary>
    private sealed unsafe class LaunchSet : IDisposable
    {
        internal readonly int Count;
        internal readonly IntPtr Function;     // the reference's CUfunction
        internal readonly IntPtr RawStream;    // cuabi's CUstream
        internal readonly ulong Function64, Stream64;
        internal readonly IntPtr* Params;      // void*[Count], into Values
        private readonly IntPtr memory;
        internal readonly Kernel Kernel;
        internal readonly LaunchPlan Plan;
        internal readonly object[] Args;
        internal readonly LaunchConfig Config = new LaunchConfig(new Dim3(1), new Dim3(1));
        internal readonly CudaStream Stream;
        internal readonly DeviceBuffer<float> Buffer;

        /// <param name="reference">Whether to load the reference's CUfunction (the raw and c_ref series need it).</param>
        internal LaunchSet(Device device, CudaModule module, CudaStream stream, DeviceBuffer<float> buffer, int count,
            bool reference = true)
        {
            Count = count;
            Stream = stream;
            Buffer = buffer;
            string name = "empty" + count;
            Function64 = reference ? Reference.LoadKernel(device.NativeContext, name) : 0;
            Function = new IntPtr((long)Function64);
            Stream64 = stream.NativeHandle;
            RawStream = new IntPtr((long)Stream64);
            // The values 8 bytes apart, then the pointers to them.
            memory = Marshal.AllocHGlobal(16 * count);
            byte* values = (byte*)memory;
            Params = (IntPtr*)(values + 8 * count);
            for (int i = 0; i < 8 * count; i++)
                values[i] = 0;
            Args = count == 2 ? new object[] { 2.0f, buffer } : Args16(buffer);
            for (int i = 0; i < count; i++)
            {
                byte* v = values + 8 * i;
                object a = Args[i];
                if (a is float) *(float*)v = (float)a;
                else if (a is int) *(int*)v = (int)a;
                else if (a is ulong) *(ulong*)v = (ulong)a;
                else *(ulong*)v = buffer.DevicePointer;
                Params[i] = (IntPtr)v;
            }
            Kernel = module.GetKernel(name);
            Plan = Kernel.Prepare(Config, stream);
            Plan.SetArguments(Args);
        }

        public void Dispose()
        {
            Plan.Dispose();
            Kernel.Dispose();
            Marshal.FreeHGlobal(memory);
        }

        // Each path as a loop of `n` calls, written out (no delegate per call).

        internal void Raw(long n)
        {
            IntPtr f = Function, s = RawStream;
            IntPtr* p = Params;
            for (long i = 0; i < n; i++)
            {
                int r = RawCuda.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, p, null);
                if (r != 0)
                    throw new Exception("cuLaunchKernel: CUresult " + r);
            }
        }

        internal void Launch(long n)
        {
            Kernel k = Kernel;
            LaunchConfig c = Config;
            CudaStream s = Stream;
            object[] a = Args;
            for (long i = 0; i < n; i++)
                k.Launch(c, s, a);
        }

        internal void Boxed(long n)
        {
            Kernel k = Kernel;
            LaunchConfig c = Config;
            CudaStream s = Stream;
            DeviceBuffer<float> b = Buffer;
            if (Count == 2)
            {
                float a = 2.0f;
                for (long i = 0; i < n; i++)
                    k.Launch(c, s, a, b);
            }
            else
            {
                for (long i = 0; i < n; i++)
                    k.Launch(c, s, 1.0f, b, 1, 10UL, 2.0f, b, 2, 20UL, 3.0f, b, 3, 30UL, 4.0f, b, 4, 40UL);
            }
        }

        internal void PlanLaunch(long n)
        {
            LaunchPlan p = Plan;
            for (long i = 0; i < n; i++)
                p.Launch();
        }

        internal void PlanSet(long n)
        {
            LaunchPlan p = Plan;
            DeviceBuffer<float> b = Buffer;
            if (Count == 2)
            {
                for (long i = 0; i < n; i++)
                {
                    p.Set(0, 2.0f);
                    p.Set(1, b);
                    p.Launch();
                }
            }
            else
            {
                for (long i = 0; i < n; i++)
                {
                    for (int g = 0; g < 4; g++)
                    {
                        p.Set(4 * g, 1.0f + g);
                        p.Set(4 * g + 1, b);
                        p.Set(4 * g + 2, 1 + g);
                        p.Set(4 * g + 3, (ulong)(10 * (g + 1)));
                    }
                    p.Launch();
                }
            }
        }

        /// <summary>One burst of the reference's launches: microseconds per launch (timed in C).</summary>
        internal double ReferenceBurst(int n)
        {
            long ns = Reference.benchref_launch_burst(Function64, Stream64, Params, (uint)n);
            if (ns < 0)
                throw new Exception("benchref_launch_burst: " + Reference.Error());
            return ns / 1000.0 / n;
        }
    }

    private struct Series
    {
        internal string Name, What;
        internal Func<double> Sample;

        internal Series(string name, string what, Func<double> sample)
        {
            Name = name;
            What = what;
            Sample = sample;
        }
    }

    /// <summary>
    /// Warm-up rounds (discarded), then `rounds` rounds of every series once,
    /// in an order rotated by the round's index; the stream synchronised
    /// (through cuabi) before every sample, outside the timed region.
    /// </summary>
    private static List<double>[] Rounds(Series[] series, int rounds, CudaStream stream)
    {
        int s = series.Length;
        var samples = new List<double>[s];
        for (int i = 0; i < s; i++)
            samples[i] = new List<double>(rounds);
        for (int r = -warmup; r < rounds; r++)
        {
            int first = ((r % s) + s) % s;
            for (int j = 0; j < s; j++)
            {
                int i = (first + j) % s;
                stream.Synchronize();
                double v = series[i].Sample();
                if (r >= 0)
                    samples[i].Add(v);
            }
        }
        stream.Synchronize();
        return samples;
    }

    private static void EmitPaired(string bench, Series[] series, List<double>[] samples, string headline, string extra)
    {
        var b = new StringBuilder();
        b.Append(",\"kind\":\"paired\",\"unit\":\"us\"").Append(extra)
            .Append(",\"headline\":").Append(Str(headline)).Append(",\"series\":{");
        for (int i = 0; i < series.Length; i++)
        {
            if (i > 0) b.Append(',');
            b.Append(Str(series[i].Name)).Append(":[");
            for (int k = 0; k < samples[i].Count; k++)
            {
                if (k > 0) b.Append(',');
                b.Append(Num(samples[i][k]));
            }
            b.Append(']');
        }
        b.Append("},\"paths\":{");
        for (int i = 0; i < series.Length; i++)
        {
            if (i > 0) b.Append(',');
            b.Append(Str(series[i].Name)).Append(':').Append(Str(series[i].What));
        }
        Emit(bench, b.Append('}').ToString());
    }

    private static double BurstUs(long ticks, int n)
    {
        return Ms(ticks) * 1000.0 / n;
    }

    private static void PairedLaunch(LaunchSet set)
    {
        string bench = "paired_launch_" + set.Count + "args";
        int n = burstSize;
        // headline: plan, the fastest documented path (LaunchPlan.Launch, arguments set once).
        var series = new[]
        {
            new Series("c_ref", "benchref_launch_burst: C's cuLaunchKernel, timed in C", () => set.ReferenceBurst(n)),
            new Series("raw", "[DllImport(\"libcuda.so.1\")] cuLaunchKernel, blittable arguments", () =>
            {
                long t0 = Stopwatch.GetTimestamp();
                set.Raw(n);
                return BurstUs(Stopwatch.GetTimestamp() - t0, n);
            }),
            new Series("launch", "Kernel.Launch(config, stream, object[] built once)", () =>
            {
                long t0 = Stopwatch.GetTimestamp();
                set.Launch(n);
                return BurstUs(Stopwatch.GetTimestamp() - t0, n);
            }),
            new Series("boxed", "Kernel.Launch(config, stream, a, buf, ...): params array and boxing per launch", () =>
            {
                long t0 = Stopwatch.GetTimestamp();
                set.Boxed(n);
                return BurstUs(Stopwatch.GetTimestamp() - t0, n);
            }),
            new Series("plan", "LaunchPlan.Launch() (Kernel.Prepare; arguments set once)", () =>
            {
                long t0 = Stopwatch.GetTimestamp();
                set.PlanLaunch(n);
                return BurstUs(Stopwatch.GetTimestamp() - t0, n);
            }),
            new Series("plan_set", "LaunchPlan.Set<T> per argument, then Launch()", () =>
            {
                long t0 = Stopwatch.GetTimestamp();
                set.PlanSet(n);
                return BurstUs(Stopwatch.GetTimestamp() - t0, n);
            }),
        };
        List<double>[] samples = Rounds(series, pairs, set.Stream);
        EmitPaired(bench, series, samples, "plan",
            ",\"burst\":" + n + ",\"pairs\":" + pairs + ",\"args\":" + set.Count);
    }

    private static Series CopySample(string what, Action copy)
    {
        return new Series("copy", what, () =>
        {
            long t0 = Stopwatch.GetTimestamp();
            copy();
            return Ms(Stopwatch.GetTimestamp() - t0) * 1000.0;
        });
    }

    private static Series CopyReference(Func<long> copy)
    {
        return new Series("c_ref", "benchref_copy_to_device / benchref_copy_to_host: cuMemcpyHtoD / cuMemcpyDtoH", () =>
        {
            long ns = copy();
            if (ns < 0)
                throw new Exception("benchref copy: " + Reference.Error());
            return ns / 1000.0;
        });
    }

    private static void PairedCopy(string bench, CudaStream stream, Series reference, Series copy)
    {
        var series = new[] { reference, copy };
        List<double>[] samples = Rounds(series, copyPairs, stream);
        EmitPaired(bench, series, samples, "copy", ",\"pairs\":" + copyPairs + ",\"bytes\":" + CopyBytes);
    }

    private static void PairedCopies(Device device)
    {
        using (DeviceBuffer<byte> buf = device.Allocate<byte>(CopyBytes))
        using (CudaStream stream = device.CreateStream())
        using (PinnedBuffer<byte> pinned = device.AllocatePinned<byte>(CopyBytes))
        {
            var host = new byte[CopyBytes];
            for (int i = 0; i < host.Length; i++) host[i] = 1;
            pinned.CopyFrom(host);
            // The array pinned for the whole figure, so the reference copies from and to its very bytes.
            GCHandle pin = GCHandle.Alloc(host, GCHandleType.Pinned);
            try
            {
                IntPtr hostPtr = pin.AddrOfPinnedObject();
                IntPtr pinnedPtr = pinned.Pointer;
                ulong dev = buf.DevicePointer;
                var bytes = (UIntPtr)(ulong)CopyBytes;
                Guard("paired_copy_to_device_pageable", () => PairedCopy("paired_copy_to_device_pageable", stream,
                    CopyReference(() => Reference.benchref_copy_to_device(dev, hostPtr, bytes)),
                    CopySample("DeviceBuffer.CopyFrom(byte[])", () => buf.CopyFrom(host))));
                Guard("paired_copy_to_host_pageable", () => PairedCopy("paired_copy_to_host_pageable", stream,
                    CopyReference(() => Reference.benchref_copy_to_host(hostPtr, dev, bytes)),
                    CopySample("DeviceBuffer.CopyTo(byte[])", () => buf.CopyTo(host))));
                Guard("paired_copy_to_device_pinned", () => PairedCopy("paired_copy_to_device_pinned", stream,
                    CopyReference(() => Reference.benchref_copy_to_device(dev, pinnedPtr, bytes)),
                    CopySample("DeviceBuffer.CopyFromAsync(PinnedBuffer) + Synchronize", () =>
                    {
                        buf.CopyFromAsync(pinned, stream);
                        stream.Synchronize();
                    })));
                Guard("paired_copy_to_host_pinned", () => PairedCopy("paired_copy_to_host_pinned", stream,
                    CopyReference(() => Reference.benchref_copy_to_host(pinnedPtr, dev, bytes)),
                    CopySample("DeviceBuffer.CopyToAsync(PinnedBuffer) + Synchronize", () =>
                    {
                        buf.CopyToAsync(pinned, stream);
                        stream.Synchronize();
                    })));
            }
            finally
            {
                pin.Free();
            }
        }
    }

    /// <summary>Allocations per sample of the allocation figures.</summary>
    private const int AllocBurst = 100;

    private static string AllocBench(bool ordered, long bytes)
    {
        return "paired_alloc_" + (ordered ? "ordered_" : "sync_") + bytes;
    }

    /// <summary>
    /// One paired allocation figure: a burst of allocations of <paramref name="bytes"/>, each
    /// freed at once, against the reference's cuMemAllocAsync + cuMemFreeAsync on the same
    /// stream (ordered) or cuMemAlloc + cuMemFree: microseconds per allocate + free.
    /// </summary>
    private static void PairedAlloc(Device device, CudaStream stream, bool ordered, long bytes)
    {
        ulong raw = stream.NativeHandle;
        var size = (UIntPtr)(ulong)bytes;
        var series = new[]
        {
            new Series("c_ref", ordered ? "benchref_alloc_burst: cuMemAllocAsync + cuMemFreeAsync"
                : "benchref_alloc_burst: cuMemAlloc + cuMemFree", () =>
            {
                long ns = Reference.benchref_alloc_burst(raw, size, ordered ? 1 : 0, AllocBurst);
                if (ns < 0)
                    throw new Exception("benchref_alloc_burst: " + Reference.Error());
                return ns / 1000.0 / AllocBurst;
            }),
            new Series("alloc", ordered ? "Device.AllocateAsync<byte>(n, stream) + FreeAsync(stream)"
                : "Device.Allocate<byte>(n) + Dispose()", () =>
            {
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < AllocBurst; i++)
                {
                    if (ordered)
                        device.AllocateAsync<byte>(bytes, stream).FreeAsync(stream);
                    else
                        device.Allocate<byte>(bytes).Dispose();
                }
                return BurstUs(Stopwatch.GetTimestamp() - t0, AllocBurst);
            }),
        };
        List<double>[] samples = Rounds(series, copyPairs, stream);
        EmitPaired(AllocBench(ordered, bytes), series, samples, "alloc",
            ",\"burst\":" + AllocBurst + ",\"pairs\":" + copyPairs + ",\"bytes\":" + bytes);
    }

    private static readonly long[] AllocSizes = { 256, 1 << 20 };

    private static readonly string[] PairedBenches =
    {
        "paired_launch_2args", "paired_launch_16args", "paired_copy_to_device_pageable",
        "paired_copy_to_host_pageable", "paired_copy_to_device_pinned", "paired_copy_to_host_pinned",
        "paired_alloc_ordered_256", "paired_alloc_ordered_1048576", "paired_alloc_sync_256",
        "paired_alloc_sync_1048576",
    };

    private static int RunPaired()
    {
        if (pairs < 30)
        {
            Console.Error.WriteLine("cuabi-bench paired: --pairs must be at least 30 (got " + pairs + ")");
            return 2;
        }
        Device device;
        try
        {
            Reference.Bind();
            device = Device.Get(0);
        }
        catch (Exception e)
        {
            // Every figure reports the failure, so none goes missing silently.
            foreach (string b in PairedBenches)
                EmitError(b, e);
            return 1;
        }
        using (device)
        {
            if (Wanted("launch"))
            {
                try
                {
                    using (CudaModule module = device.Compile(Empty))
                    using (CudaStream stream = device.CreateStream())
                    using (DeviceBuffer<float> buf = device.Allocate<float>(64))
                    {
                        foreach (int count in new[] { 2, 16 })
                        {
                            Guard("paired_launch_" + count + "args", () =>
                            {
                                using (var set = new LaunchSet(device, module, stream, buf, count))
                                    PairedLaunch(set);
                            });
                        }
                    }
                }
                catch (Exception e)
                {
                    EmitError("paired_launch_2args", e);
                    EmitError("paired_launch_16args", e);
                }
            }
            if (Wanted("copy"))
            {
                try
                {
                    PairedCopies(device);
                }
                catch (Exception e)
                {
                    for (int i = 2; i < 6; i++)
                        EmitError(PairedBenches[i], e);
                }
            }
            if (Wanted("alloc"))
            {
                try
                {
                    using (CudaStream stream = device.CreateStream())
                    {
                        foreach (bool ordered in new[] { true, false })
                            foreach (long bytes in AllocSizes)
                                Guard(AllocBench(ordered, bytes), () => PairedAlloc(device, stream, ordered, bytes));
                    }
                }
                catch (Exception e)
                {
                    for (int i = 6; i < PairedBenches.Length; i++)
                        EmitError(PairedBenches[i], e);
                }
            }
        }
        return 0;
    }

    // ------------------------------------------------------------------
    // Instructions: set-up, then exactly --count calls of --path, silent
    // ------------------------------------------------------------------

    private static int RunInstructions()
    {
        if (instrPath == null || instrCount < 0)
        {
            Console.Error.WriteLine("usage: cuabi-bench instructions --path P --count N");
            return 2;
        }
        string[] parts = instrPath.Split('/');
        string path = parts[0];
        int args = 0;
        if (path != "query" && path != "alloc" && (parts.Length != 2 || !int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out args)))
            throw new ArgumentException("unknown path " + instrPath);
        Reference.Bind();
        using (Device device = Device.Get(0))
        using (CudaStream stream = device.CreateStream())
        {
            if (path == "query")
            {
                if (parts.Length != 2 || (parts[1] != "success" && parts[1] != "not_ready"))
                    throw new ArgumentException("unknown path " + instrPath);
                bool notReady = parts[1] == "not_ready";
                RawCuda.instructions_fake_set_stream_query(notReady ? 1 : 0);
                if (Query(stream, 1000) == notReady)
                    throw new Exception("the stand-in's stream query did not answer " + parts[1]);
                Settle();
                Query(stream, instrCount);
                return 0;
            }
            if (path == "alloc")
            {
                if (parts.Length != 2 || parts[1] != "ordered")
                    throw new ArgumentException("unknown path " + instrPath);
                AllocFree(device, stream, 1000);
                stream.Synchronize();
                Settle();
                AllocFree(device, stream, instrCount);
                return 0;
            }
            if (args != 2 && args != 16)
                throw new ArgumentException("unknown path " + instrPath);
            using (CudaModule module = device.Compile(Empty))
            using (DeviceBuffer<float> buf = device.Allocate<float>(64))
            // The reference's NVRTC compile (most of the set-up under callgrind) only where counted calls use it.
            using (var set = new LaunchSet(device, module, stream, buf, args, path == "raw"))
            {
                Action<long> calls;
                switch (path)
                {
                    case "raw": calls = set.Raw; break;
                    case "launch": calls = set.Launch; break;
                    case "boxed": calls = set.Boxed; break;
                    case "plan": calls = set.PlanLaunch; break;
                    case "plan_set": calls = set.PlanSet; break;
                    default: throw new ArgumentException("unknown path " + instrPath);
                }
                // Warm-up: every method on the path compiled by the JIT, every
                // native entry point bound, the kernel's own prepared launch
                // made, before the counted calls.
                calls(1000);
                stream.Synchronize();
                Settle();
                calls(instrCount);
            }
        }
        return 0;
    }

    /// <summary>N stream-ordered allocations of 256 bytes, each freed at once on the same stream.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void AllocFree(Device device, CudaStream stream, long n)
    {
        for (long i = 0; i < n; i++)
            device.AllocateAsync<byte>(256, stream).FreeAsync(stream);
    }

    /// <summary>N stream queries; whether the last answered complete.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool Query(CudaStream stream, long n)
    {
        bool complete = false;
        for (long i = 0; i < n; i++)
            complete = stream.IsComplete;
        return complete;
    }

    /// <summary>An empty nursery and no finalizer pending before the counted calls, so that
    /// the collections during them depend only on their count.</summary>
    private static void Settle()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }
}
