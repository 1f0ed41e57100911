// Compilation beyond one string: typed compile options and the strings they
// give, the compile log of a successful compile, LTO-IR, compiles and links
// on the thread pool while the calling thread works, kernel listings and C++
// kernels by plain names, linking programs (relocatable code and LTO-IR)
// through nvJitLink and the driver's linker, the link cache, and libraries.
// The NVRTC-only tests run without a GPU; the others are reported as skipped
// there.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class CompileTests
    {
        // A kernel calling a device function another program defines.
        internal const string Caller = @"
extern ""C"" __device__ float twice(float x);
extern ""C"" __global__ void apply(float* x, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]) + 1.0f;
}
";

        internal const string Callee = @"
extern ""C"" __device__ float twice(float x) { return 2.0f * x; }
";

        // C++ kernels without extern "C": the PyCUDA tutorial's doublify and
        // two instances of one template.
        internal const string CxxKernels = @"
namespace ops {
template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }
template __global__ void scale<float>(float*, float);
template __global__ void scale<int>(int*, int);
}
__global__ void doublify(float *a)
{
  int idx = threadIdx.x + threadIdx.y*4;
  a[idx] *= 2;
}
";

        private const string Warning = "#warning \"a warning worth keeping\"\nextern \"C\" __global__ void k() {}\n";

        public static void Register()
        {
            Registry.Add("compile options: every typed value reaches NVRTC through the library, raw options last", TypedValuesReachNvrtc);
            Registry.Add("compile options: NVRTC takes every typed option, and each changes the output", NvrtcTakesTypedOptions);
            Registry.Add("compile options: defines decide what compiles; include paths find headers", DefinesAndIncludePaths);
            Registry.Add("compile options: a Program compiled with CompileOptions registers its name expressions", ProgramNameExpressions);
            Registry.Add("nvrtc: a #warning is in the log of a successful compile", WarningInProgramLog);
            Registry.Add("nvrtc: -dlto gives LTO-IR and no CUBIN; -rdc keeps an unused device function", LtoIrAndRdc);
            Registry.Add("async: the calling thread keeps working while CompileAsync compiles, then awaits a usable program", () => CompileWhileWorking().GetAwaiter().GetResult());
            Registry.Add("async: a failing CompileAsync's task throws the CudaException with the log when awaited", () => FailingCompileAsync().GetAwaiter().GetResult());
            Registry.Add("async: four programs compile at once on the thread pool", () => ConcurrentCompiles().GetAwaiter().GetResult());
            Registry.Add("async: a program disposed while it compiles in the background is released after the compile", DisposedWhileCompiling);
            Registry.AddGpu("kernels: a module lists its kernels with demangled names and symbols", KernelListing);
            Registry.AddGpu("kernels: the PyCUDA tutorial's doublify (no extern \"C\") is found by its plain name and runs; an ambiguous name is refused", PlainCxxNames);
            Registry.AddGpu("compile log: a module keeps its compile's warnings; one the cache served has none", ModuleCompileLog);
            Registry.AddGpu("compile options: -D values change what a kernel computes", DefinesChangeBehaviour);
            Registry.AddGpu("link: relocatable programs linked through nvJitLink and through the driver's linker run", LinkBothBackends);
            Registry.AddGpu("link: the caller alone fails with a log naming the missing function", LinkMissingFunction);
            Registry.AddGpu("link: LTO-IR linked with link-time optimisation runs; the driver's linker refuses LTO-IR", LinkLto);
            Registry.AddGpu("link: a second identical link comes from the cache; a PTX file is read by its extension", LinkCacheAndFiles);
            Registry.AddGpu("link: without nvJitLink, asking for it names the path tried and Auto falls back to the driver's linker (child process)", NoNvJitLink);
            Registry.AddGpu("library: a CUBIN loaded as a library (bytes and file) serves modules whose kernels run", Libraries);
            Registry.AddGpu("async: Device.CompileAsync and Linker.LinkAsync while the calling thread works", () => CompileAndLinkAsync().GetAwaiter().GetResult());
        }

        // ------------------------------------------------------------------
        // Helpers
        // ------------------------------------------------------------------

        internal static string Sm(Device d)
        {
            var cc = d.ComputeCapability;
            return "sm_" + cc.Major + cc.Minor;
        }

        /// <summary>A program of <paramref name="source"/> compiled with <paramref name="options"/>.</summary>
        internal static Program Compiled(string source, CompileOptions options)
        {
            var p = new Program(source);
            try
            {
                p.Compile(options);
                return p;
            }
            catch
            {
                p.Dispose();
                throw;
            }
        }

        /// <summary>Runs `apply` of <paramref name="module"/> over 256 floats and checks x -> 2x + 1.</summary>
        internal static void CheckApply(Device d, CudaModule module)
        {
            var x = new float[256];
            for (int i = 0; i < x.Length; i++)
                x[i] = i * 0.5f;
            using (var k = module.GetKernel("apply"))
            using (var b = d.AllocateFrom(x))
            {
                k.Launch(1, 256, null, b, (uint)x.Length);
                d.Synchronize();
                float[] y = b.ToArray();
                for (int i = 0; i < x.Length; i++)
                    if (y[i] != 2.0f * x[i] + 1.0f)
                        throw new TestFailure(string.Format("apply: element {0} is {1}, expected {2}", i, y[i], 2.0f * x[i] + 1.0f));
            }
        }

        /// <summary>Runs doublify (block 4x4) of <paramref name="module"/> and checks the 16 values doubled.</summary>
        private static void CheckDoublify(Device d, CudaModule module, string name)
        {
            var a = new float[16];
            for (int i = 0; i < a.Length; i++)
                a[i] = i - 4.5f;
            using (var k = module.GetKernel(name))
            using (var b = d.AllocateFrom(a))
            {
                k.Launch(1, new Dim3(4, 4), null, b);
                d.Synchronize();
                float[] r = b.ToArray();
                for (int i = 0; i < a.Length; i++)
                    Assert.Equal(2 * a[i], r[i], "doublify element " + i);
            }
        }

        private static string HeavySource(int kernels)
        {
            // Template chains NVRTC instantiates one by one: a few hundred
            // milliseconds of compiling.
            var sb = new StringBuilder();
            sb.Append("template <int N> struct Chain { __device__ static float run(float x) { return Chain<N - 1>::run(x * 1.0001f + (float)N); } };\n");
            sb.Append("template <> struct Chain<0> { __device__ static float run(float x) { return x; } };\n");
            for (int k = 0; k < kernels; k++)
                sb.AppendFormat("extern \"C\" __global__ void heavy{0}(float* x) {{ x[threadIdx.x] = Chain<{1}>::run(x[threadIdx.x] + {0}.0f); }}\n",
                    k, 190 - k);
            return sb.ToString();
        }

        private static bool IsElf(byte[] image)
        {
            return image.Length > 4 && image[0] == 0x7f && image[1] == (byte)'E' && image[2] == (byte)'L' && image[3] == (byte)'F';
        }

        // ------------------------------------------------------------------
        // No GPU
        // ------------------------------------------------------------------

        // The library spells each typed option; what NVRTC then sees shows in
        // what it compiles.
        private static void TypedValuesReachNvrtc()
        {
            const string source = @"
#if __cplusplus != 201402L
#error ""not C++14""
#endif
#include ""cuabi_test_width.h""
static_assert(WIDTH == 4 && defined_flag() && TWICE(3) == 6 && RAW_LAST == 1, ""defines"");
extern ""C"" __global__ void k(float* x) { x[0] = x[1] / x[2]; }
";
            string dir = Path.Combine(Path.GetTempPath(), "cuabi-cs-typed-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                File.WriteAllText(Path.Combine(dir, "cuabi_test_width.h"),
                    "#ifdef FLAG\n__host__ __device__ constexpr bool defined_flag() { return true; }\n#endif\n");
                var o = new CompileOptions
                {
                    Architecture = "compute_90",
                    Std = CxxStandard.Cxx14,
                    Defines = { { "WIDTH", "4" }, { "FLAG", null }, { "TWICE(x)", "(2 * (x))" } },
                    IncludePaths = { "/nonexistent/first", dir },
                    FastMath = true,
                    LineInfo = true,
                    Options = { "-DRAW_LAST=1" },
                };
                using (var p = Compiled(source, o))
                {
                    Assert.Contains(".target sm_90", p.Ptx, "the architecture");
                    Assert.True(!p.Ptx.Contains("div.rn.f32"), "fast math left an IEEE division");
                    Assert.Contains(".loc", p.Ptx, "line information");
                }
                o.Std = CxxStandard.Cxx17;
                using (var p = new Program(source))
                {
                    var e = Assert.ThrowsCuda(CudaStatus.Compile, () => p.Compile(o), "compiling as C++17");
                    Assert.Contains("not C++14", e.CompileLog, "the log of a C++17 compile");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        private static void NvrtcTakesTypedOptions()
        {
            const string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = sinf(x[threadIdx.x]); }\n";
            Func<CompileOptions, string> ptx = o =>
            {
                o.Architecture = "compute_90";
                using (var p = Compiled(source, o))
                    return p.Ptx;
            };
            string plain = ptx(new CompileOptions());
            Assert.True(plain.Contains(".entry k"), "the plain PTX has no entry k");
            Assert.True(!plain.Contains("sin.approx"), "plain PTX already uses sin.approx");
            Assert.True(!plain.Contains(".file"), "plain PTX already has line information");
            Assert.Contains("sin.approx", ptx(new CompileOptions { FastMath = true }), "PTX with FastMath");
            Assert.Contains(".file", ptx(new CompileOptions { LineInfo = true }), "PTX with LineInfo");
            Assert.Contains("debug_info", ptx(new CompileOptions { Debug = true }), "PTX with Debug");
            foreach (CxxStandard std in Enum.GetValues(typeof(CxxStandard)))
                Assert.True(ptx(new CompileOptions { Std = std }).Contains(".entry k"), "PTX with Std = " + std);
            using (var p = Compiled(source, new CompileOptions { Architecture = "sm_90" }))
            {
                Assert.True(IsElf(p.Cubin), "sm_90 made no CUBIN");
                Assert.Contains(".target sm_90", p.Ptx, "PTX of sm_90");
            }
        }

        private static void DefinesAndIncludePaths()
        {
            const string needsDefines = @"
#ifndef REQUIRED
#error ""REQUIRED is not defined""
#endif
static_assert(SCALE == 3, ""SCALE is not 3"");
extern ""C"" __global__ void k(float* x) { x[0] *= SCALE; }
";
            using (var p = new Program(needsDefines))
            {
                var e = Assert.ThrowsCuda(CudaStatus.Compile, () => p.Compile(new CompileOptions { Architecture = "compute_90" }), "compiling without the defines");
                Assert.Contains("REQUIRED is not defined", e.CompileLog, "the log without the defines");
            }
            using (var p = new Program(needsDefines))
            {
                var e = Assert.ThrowsCuda(CudaStatus.Compile,
                    () => p.Compile(new CompileOptions { Architecture = "compute_90", Defines = { { "REQUIRED", null }, { "SCALE", "4" } } }),
                    "compiling with SCALE 4");
                Assert.Contains("SCALE is not 3", e.CompileLog, "the log with SCALE 4");
            }
            using (var p = Compiled(needsDefines, new CompileOptions { Architecture = "compute_90", Defines = { { "REQUIRED", null }, { "SCALE", "3" } } }))
                Assert.Contains(".entry k", p.Ptx, "PTX with the defines");

            string dir = Path.Combine(Path.GetTempPath(), "cuabi-cs-include-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                File.WriteAllText(Path.Combine(dir, "cuabi_test_factor.h"), "#define FACTOR 7.0f\n");
                const string includes = "#include \"cuabi_test_factor.h\"\nextern \"C\" __global__ void k(float* x) { x[0] *= FACTOR; }\n";
                using (var p = new Program(includes))
                {
                    var e = Assert.ThrowsCuda(CudaStatus.Compile, () => p.Compile(new CompileOptions { Architecture = "compute_90" }),
                        "compiling without the include path");
                    Assert.Contains("cuabi_test_factor.h", e.CompileLog, "the log without the include path");
                }
                using (var p = Compiled(includes, new CompileOptions { Architecture = "compute_90", IncludePaths = { dir } }))
                    Assert.Contains("0f40E00000", p.Ptx, "PTX multiplying by 7.0f from the included header");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        private static void ProgramNameExpressions()
        {
            var o = new CompileOptions { Architecture = "compute_90", NameExpressions = { "ops::scale<float>", "ops::scale<int>" } };
            using (var p = Compiled(CxxKernels, o))
            {
                Assert.Equal("_ZN3ops5scaleIfEEvPT_S1_", p.GetLoweredName("ops::scale<float>"), "lowered name of scale<float>");
                Assert.Equal("_ZN3ops5scaleIiEEvPT_S1_", p.GetLoweredName("ops::scale<int>"), "lowered name of scale<int>");
            }
            using (var p = new Program(CxxKernels))
            {
                Program same = p.CompileAsync(o).GetAwaiter().GetResult();
                Assert.True(ReferenceEquals(p, same), "CompileAsync's result is not the program");
                Assert.Equal("_ZN3ops5scaleIfEEvPT_S1_", p.GetLoweredName("ops::scale<float>"), "lowered name after CompileAsync");
            }
        }

        private static void WarningInProgramLog()
        {
            using (var p = Compiled(Warning, new CompileOptions { Architecture = "compute_90" }))
            {
                Assert.Contains("a warning worth keeping", p.Log, "the log of a successful compile");
                Assert.Contains(".entry k", p.Ptx, "PTX beside the warning");
            }
        }

        private static void LtoIrAndRdc()
        {
            using (var p = Compiled(Callee, new CompileOptions { Architecture = "sm_90", Dlto = true }))
            {
                byte[] ir = p.LtoIr;
                Assert.True(ir.Length > 16, "LTO-IR of " + ir.Length + " bytes");
                Assert.ThrowsCuda(CudaStatus.NotFound, () => { var c = p.Cubin; }, "the CUBIN of a -dlto compile");
            }
            using (var p = Compiled(Callee, new CompileOptions { Architecture = "compute_90", Rdc = true }))
                Assert.Contains("twice", p.Ptx, "PTX of relocatable code keeps the device function");
            using (var p = Compiled(Callee, new CompileOptions { Architecture = "compute_90" }))
                Assert.True(!p.Ptx.Contains("twice"), "whole-program PTX kept an unused device function");
            using (var p = Compiled(Callee, new CompileOptions { Architecture = "sm_90", Rdc = true }))
            {
                Assert.True(IsElf(p.Cubin), "-rdc with sm_90 made no CUBIN");
                Assert.ThrowsCuda(CudaStatus.NotFound, () => { var ir = p.LtoIr; }, "the LTO-IR of a compile without -dlto");
            }
        }

        private static async Task CompileWhileWorking()
        {
            string source = HeavySource(48);
            using (var p = new Program(source, "heavy.cu"))
            {
                var clock = Stopwatch.StartNew();
                Task<Program> task = p.CompileAsync(new CompileOptions { Architecture = "sm_90" });
                TimeSpan returned = clock.Elapsed;
                Assert.True(!task.IsCompleted, "CompileAsync returned a finished task (after " + returned.TotalMilliseconds + " ms)");
                long iterations = 0;
                double sum = 0;
                while (!task.IsCompleted)
                {
                    for (int i = 0; i < 100; i++)
                        sum += Math.Sqrt(iterations + i);
                    iterations++;
                }
                TimeSpan compiled = clock.Elapsed;
                Program result = await task;
                Assert.True(ReferenceEquals(p, result), "the task's result is not the program");
                Assert.True(iterations > 100, "the calling thread ran " + iterations + " iterations while compiling for " +
                    compiled.TotalMilliseconds + " ms");
                Assert.True(returned.TotalMilliseconds * 4 < compiled.TotalMilliseconds,
                    string.Format("CompileAsync took {0} ms to return, the compile {1} ms", returned.TotalMilliseconds, compiled.TotalMilliseconds));
                Assert.True(sum > 0, "the work was optimised away");
                byte[] cubin = p.Cubin;
                Assert.True(IsElf(cubin), "the compiled program has no CUBIN");
                Assert.Contains(".entry heavy47", p.Ptx, "the last kernel in the PTX");
                Console.WriteLine("      (compiled for {0:F0} ms; the calling thread ran {1} iterations meanwhile)",
                    compiled.TotalMilliseconds, iterations);
            }
        }

        private static async Task FailingCompileAsync()
        {
            using (var p = new Program("extern \"C\" __global__ void k() { undefined_function(); }", "broken.cu"))
            {
                Task<Program> task = p.CompileAsync("--gpu-architecture=compute_90");
                try
                {
                    await task;
                    throw new TestFailure("awaiting the compile of broken code threw nothing");
                }
                catch (CudaException e)
                {
                    Assert.Equal(CudaStatus.Compile, e.Status, "status");
                    Assert.Contains("cuabi_program_compile: ", e.Message, "message");
                    Assert.Contains("undefined_function", e.CompileLog, "CompileLog");
                }
                Assert.True(task.IsFaulted, "the task of a failed compile is not faulted");
                Assert.Contains("undefined_function", p.Log, "the program's log");
            }
        }

        private static async Task ConcurrentCompiles()
        {
            var programs = new List<Program>();
            try
            {
                var tasks = new List<Task<Program>>();
                for (int i = 0; i < 4; i++)
                {
                    var p = new Program("extern \"C\" __global__ void k" + i + "(float* x) { x[threadIdx.x] += " + i + ".0f; }\n");
                    programs.Add(p);
                    tasks.Add(p.CompileAsync(new CompileOptions { Architecture = "compute_90" }));
                }
                Program[] done = await Task.WhenAll(tasks);
                for (int i = 0; i < done.Length; i++)
                {
                    Assert.True(ReferenceEquals(programs[i], done[i]), "task " + i + " gave another program");
                    Assert.Contains(".entry k" + i, done[i].Ptx, "PTX of program " + i);
                }
            }
            finally
            {
                foreach (var p in programs)
                    p.Dispose();
            }
        }

        private static void DisposedWhileCompiling()
        {
            var p = new Program(HeavySource(16));
            IntPtr raw = p.Handle.DangerousGetHandle();
            Task<Program> task = p.CompileAsync(new CompileOptions { Architecture = "sm_90" });
            p.Dispose();
            // The compile ran to its end on the program it was given...
            Program result = task.GetAwaiter().GetResult();
            Assert.True(ReferenceEquals(p, result), "the task's result is not the program");
            Assert.Throws<ObjectDisposedException>(() => { var log = p.Log; }, "the log of a disposed program");
            // ...and the program was released after it, not leaked.
            UIntPtr size = UIntPtr.Zero;
            Assert.Equal(CudaStatus.InvalidHandle,
                NativeMethods.cuabi_program_get_log(new SafeProgramHandle(raw, false), null, ref size), "the handle after the compile");
        }

        // ------------------------------------------------------------------
        // With a device
        // ------------------------------------------------------------------

        private static void KernelListing()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(CxxKernels, new CompileOptions { Name = "cxx_kernels.cu" }))
            {
                Assert.Equal(3, m.KernelCount, "KernelCount");
                IReadOnlyList<ModuleKernel> kernels = m.Kernels;
                Assert.Equal(3, kernels.Count, "Kernels.Count");
                Assert.True(ReferenceEquals(kernels, m.Kernels), "the listing was read again");
                string all = string.Join("; ", kernels.Select(k => k.Name));
                // As the demangler writes them: a template instance with its return type.
                foreach (string name in new[] { "void ops::scale<float>(float*, float)", "void ops::scale<int>(int*, int)", "doublify(float*)" })
                    Assert.True(kernels.Any(k => k.Name == name), "no kernel " + name + " in " + all);
                foreach (var k in kernels)
                {
                    Assert.True(k.Symbol.StartsWith("_Z", StringComparison.Ordinal), "symbol of " + k.Name + ": " + k.Symbol);
                    Assert.Equal(k.Name + " (" + k.Symbol + ")", k.ToString(), "ToString");
                }
                var doublify = kernels.Single(k => k.Name == "doublify(float*)");
                Assert.Equal("_Z8doublifyPf", doublify.Symbol, "doublify's symbol");
                Assert.Equal("_ZN3ops5scaleIfEEvPT_S1_", kernels.Single(k => k.Name == "void ops::scale<float>(float*, float)").Symbol,
                    "scale<float>'s symbol");
                for (int i = 0; i < 3; i++)
                {
                    Assert.Equal(kernels[i].Name, m.GetKernelName(i), "GetKernelName(" + i + ")");
                    Assert.Equal(kernels[i].Symbol, m.GetKernelName(i, NameForm.Symbol), "GetKernelName(" + i + ", Symbol)");
                }
                // The symbol names the kernel too.
                CheckDoublify(d, m, doublify.Symbol);
            }
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            {
                var only = m.Kernels.Single();
                Assert.Equal("saxpy", only.Name, "an extern \"C\" kernel's name");
                Assert.Equal("saxpy", only.Symbol, "an extern \"C\" kernel's symbol");
                Assert.Equal("saxpy", only.ToString(), "ToString of an extern \"C\" kernel");
            }
        }

        private static void PlainCxxNames()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(CxxKernels, new CompileOptions { NameExpressions = { "ops::scale<float>" } }))
            {
                CheckDoublify(d, m, "doublify");
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => m.GetKernel("scale"), "the ambiguous name 'scale'");
                Assert.Contains("matches 2 kernels", e.Message, "ambiguity message");
                Assert.Contains("ops::scale<float>(float*, float)", e.Message, "ambiguity message lists scale<float>");
                Assert.Contains("ops::scale<int>(int*, int)", e.Message, "ambiguity message lists scale<int>");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => m.GetKernel("ops::scale"), "the ambiguous qualified name");
                // A name expression still picks one instance.
                var x = new float[] { 1, 2, 3, 4 };
                using (var k = m.GetKernel("ops::scale<float>"))
                using (var b = d.AllocateFrom(x))
                {
                    k.Launch(1, 4, null, b, 2.5f);
                    d.Synchronize();
                    float[] r = b.ToArray();
                    Assert.Equal(10.0f, r[3], "scale<float> through its name expression");
                }
                var missing = Assert.ThrowsCuda(CudaStatus.NotFound, () => m.GetKernel("tripleify"), "an unknown name");
                Assert.Contains("doublify(float*)", missing.Message, "the unknown name's message lists the kernels");
            }
        }

        private static void ModuleCompileLog()
        {
            bool cacheOff = Environment.GetEnvironmentVariable("CUABI_CACHE") == "0";
            string source = "// " + Guid.NewGuid().ToString("N") + "\n" + Warning;
            using (var d = Device.Get(0))
            {
                using (var m = d.Compile(source))
                {
                    Assert.True(!m.FromCache, "a never-seen source came from the cache");
                    Assert.Contains("a warning worth keeping", m.CompileLog, "the module's compile log");
                }
                using (var m = d.Compile(source))
                {
                    if (!cacheOff)
                    {
                        Assert.True(m.FromCache, "the second compile missed the cache");
                        Assert.Equal("", m.CompileLog, "the compile log of a module the cache served");
                    }
                }
                using (var p = Compiled(source, new CompileOptions { Architecture = Sm(d) }))
                using (var loaded = d.LoadModule(p.Cubin))
                    Assert.Equal("", loaded.CompileLog, "the compile log of a module loaded from an image");
            }
        }

        private static void DefinesChangeBehaviour()
        {
            const string source = "extern \"C\" __global__ void scaled(float* x) { x[threadIdx.x] *= SCALE; }\n";
            using (var d = Device.Get(0))
            {
                foreach (int scale in new[] { 3, 5 })
                {
                    using (var m = d.Compile(source, new CompileOptions { Defines = { { "SCALE", scale + ".0f" } } }))
                    using (var k = m.GetKernel("scaled"))
                    using (var b = d.AllocateFrom(new float[] { 1, 2, 3, 4 }))
                    {
                        k.Launch(1, 4, null, b);
                        d.Synchronize();
                        Assert.Equal(4.0f * scale, b.ToArray()[3], "x[3] with SCALE " + scale);
                    }
                }
            }
        }

        private static void LinkBothBackends()
        {
            using (var d = Device.Get(0))
            {
                var rdc = new CompileOptions { Architecture = Sm(d), Rdc = true };
                using (var caller = Compiled(Caller, rdc))
                using (var callee = Compiled(Callee, rdc))
                {
                    foreach (var backend in new[] { LinkBackend.Nvjitlink, LinkBackend.Driver })
                    {
                        using (var linker = new Linker(d, new LinkOptions { Backend = backend, UseCache = false }))
                        {
                            Assert.Equal(backend, linker.Backend, "Backend");
                            Assert.Equal("", linker.Log, "the log before linking");
                            Assert.ThrowsCuda(CudaStatus.NotFound, () => { var i = linker.Image; }, "the image before linking");
                            linker.Add(caller);
                            linker.Add(callee);
                            using (var m = linker.Link())
                            {
                                Assert.True(!m.FromCache, backend + ": a link without the cache came from it");
                                byte[] image = linker.Image;
                                Assert.True(IsElf(image) && image.Length > 64, backend + ": the image is no CUBIN (" + image.Length + " bytes)");
                                Assert.True(linker.Log != null, "no log");
                                var again = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => linker.Link(), backend + ": a second link");
                                Assert.Contains("already linked", again.Message, "second link's message");
                                CheckApply(d, m);
                                // The linked image loads as a module of its own.
                                using (var reloaded = d.LoadModule(image))
                                    CheckApply(d, reloaded);
                            }
                        }
                    }
                    using (var auto = new Linker(d))
                        Assert.True(auto.Backend == LinkBackend.Nvjitlink || auto.Backend == LinkBackend.Driver,
                            "Auto resolved to " + auto.Backend);
                }
            }
        }

        private static void LinkMissingFunction()
        {
            using (var d = Device.Get(0))
            using (var caller = Compiled(Caller, new CompileOptions { Architecture = Sm(d), Rdc = true }))
            {
                foreach (var backend in new[] { LinkBackend.Auto, LinkBackend.Driver })
                {
                    using (var linker = new Linker(d, new LinkOptions { Backend = backend, UseCache = false }))
                    {
                        linker.Add(caller);
                        var e = Assert.ThrowsCuda(CudaStatus.Compile, () => linker.Link(), backend + ": linking the caller alone");
                        Assert.Contains("twice", e.CompileLog, backend + ": CompileLog");
                        Assert.Contains("twice", linker.Log, backend + ": the linker's log");
                        Assert.Contains("twice", e.Message, backend + ": the message");
                    }
                }
            }
        }

        private static void LinkLto()
        {
            using (var d = Device.Get(0))
            {
                var dlto = new CompileOptions { Architecture = Sm(d), Dlto = true, Rdc = true };
                using (var caller = Compiled(Caller, dlto))
                using (var callee = Compiled(Callee, dlto))
                {
                    Assert.True(caller.LtoIr.Length > 16, "the caller's LTO-IR");
                    using (var linker = new Linker(d, new LinkOptions { Backend = LinkBackend.Nvjitlink, Lto = true, UseCache = false, Options = { "-O3" } }))
                    {
                        linker.Add(caller);
                        linker.Add(callee);
                        using (var m = linker.Link())
                            CheckApply(d, m);
                    }
                    // The LTO-IR as bytes of their kind.
                    using (var linker = new Linker(d, new LinkOptions { Backend = LinkBackend.Nvjitlink, Lto = true, UseCache = false }))
                    {
                        linker.AddData(caller.LtoIr, LinkInput.LtoIr, "caller.ltoir");
                        linker.AddData(callee.LtoIr, LinkInput.LtoIr, "callee.ltoir");
                        using (var m = linker.Link())
                            CheckApply(d, m);
                    }
                    using (var driver = new Linker(d, new LinkOptions { Backend = LinkBackend.Driver, UseCache = false }))
                    {
                        var e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => driver.Add(caller), "LTO-IR for the driver's linker");
                        Assert.Contains("LTO-IR needs the nvJitLink backend", e.Message, "the refusal");
                    }
                    var lto = Assert.ThrowsCuda(CudaStatus.NotSupported,
                        () => new Linker(d, new LinkOptions { Backend = LinkBackend.Driver, Lto = true }), "link-time optimisation by the driver");
                    Assert.Contains("link-time optimisation needs nvJitLink", lto.Message, "the refusal");
                }
            }
        }

        private static void LinkCacheAndFiles()
        {
            bool cacheOff = Environment.GetEnvironmentVariable("CUABI_CACHE") == "0";
            string dir = Path.Combine(Path.GetTempPath(), "cuabi-cs-link-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                using (var d = Device.Get(0))
                {
                    string ptxPath = Path.Combine(dir, "callee.ptx");
                    // A source of its own, so no earlier run's cache entry can answer.
                    string callee = "// " + Guid.NewGuid().ToString("N") + "\n" + Callee;
                    using (var p = Compiled(callee, new CompileOptions { Architecture = "compute_" + Sm(d).Substring(3), Rdc = true }))
                        File.WriteAllText(ptxPath, p.Ptx);
                    using (var caller = Compiled(Caller, new CompileOptions { Architecture = Sm(d), Rdc = true }))
                    {
                        for (int round = 0; round < 2; round++)
                        {
                            using (var linker = new Linker(d))
                            {
                                linker.Add(caller);
                                linker.AddFile(ptxPath);
                                using (var m = linker.Link())
                                {
                                    if (!cacheOff)
                                    {
                                        Assert.Equal(round == 1, m.FromCache, "FromCache in round " + round);
                                        if (round == 1)
                                            Assert.Equal("", linker.Log, "the log of a link the cache served");
                                    }
                                    Assert.True(IsElf(linker.Image), "round " + round + ": the image is no CUBIN");
                                    CheckApply(d, m);
                                }
                            }
                        }
                        // UseCache = false neither reads nor writes it.
                        using (var linker = new Linker(d, new LinkOptions { UseCache = false }))
                        {
                            linker.Add(caller);
                            linker.AddFile(ptxPath, LinkInput.Ptx);
                            using (var m = linker.Link())
                                Assert.True(!m.FromCache, "UseCache = false came from the cache");
                        }
                    }
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        private const string NoJitLinkPath = "/nowhere/libnvJitLink.so.13";

        private static void NoNvJitLink()
        {
            // Another process: nvJitLink is looked for once per process.
            var r = Child.Run("no-nvjitlink", new Dictionary<string, string> { { "CUABI_NVJITLINK_PATH", NoJitLinkPath } });
            if (r.ExitCode != 0 || !r.Stdout.Contains("\nOK"))
                throw new TestFailure("the child process failed: " + r);
        }

        /// <summary>The child side of <see cref="NoNvJitLink"/>; -1 for a mode it does not serve.</summary>
        internal static int ServeChild(string mode, string[] args)
        {
            if (mode != "no-nvjitlink")
                return -1;
            using (var d = Device.Get(0))
            {
                try
                {
                    new Linker(d, new LinkOptions { Backend = LinkBackend.Nvjitlink }).Dispose();
                    Console.WriteLine("WRONG a linker asking for nvJitLink was made without it");
                    return 6;
                }
                catch (CudaException e)
                {
                    if (e.Status != CudaStatus.NotFound || !e.Message.Contains(NoJitLinkPath) || !e.Message.StartsWith("cuabi_linker_create: ", StringComparison.Ordinal))
                    {
                        Console.WriteLine("WRONG refusal: " + e.StatusName + ": " + e.Message);
                        return 6;
                    }
                }
                var rdc = new CompileOptions { Architecture = Sm(d), Rdc = true };
                using (var caller = Compiled(Caller, rdc))
                using (var callee = Compiled(Callee, rdc))
                using (var linker = new Linker(d, new LinkOptions { UseCache = false }))
                {
                    if (linker.Backend != LinkBackend.Driver)
                    {
                        Console.WriteLine("WRONG Auto chose " + linker.Backend);
                        return 6;
                    }
                    linker.Add(caller);
                    linker.Add(callee);
                    using (var m = linker.Link())
                    {
                        try
                        {
                            CheckApply(d, m);
                        }
                        catch (TestFailure f)
                        {
                            Console.WriteLine("WRONG " + f.Message);
                            return 6;
                        }
                    }
                }
            }
            Console.WriteLine("OK");
            return 0;
        }

        private static void Libraries()
        {
            string dir = Path.Combine(Path.GetTempPath(), "cuabi-cs-library-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                using (var d = Device.Get(0))
                {
                    CudaModule m;
                    using (var p = Compiled(CxxKernels, new CompileOptions { Architecture = Sm(d) }))
                    using (var library = CudaLibrary.Load(p.Cubin))
                        m = library.GetModule(d);
                    // The library was disposed: the module keeps it loaded.
                    using (m)
                    {
                        Assert.Equal(3, m.Kernels.Count, "the library module's kernels");
                        CheckDoublify(d, m, "doublify");
                        Assert.Equal("", m.CompileLog, "the compile log of a library's module");
                    }

                    // A linked image written to a file, loaded as a library.
                    string path = Path.Combine(dir, "linked.cubin");
                    var rdc = new CompileOptions { Architecture = Sm(d), Rdc = true };
                    using (var caller = Compiled(Caller, rdc))
                    using (var callee = Compiled(Callee, rdc))
                    using (var linker = new Linker(d, new LinkOptions { UseCache = false }))
                    {
                        linker.Add(caller);
                        linker.Add(callee);
                        using (linker.Link())
                            File.WriteAllBytes(path, linker.Image);
                    }
                    using (var library = CudaLibrary.LoadFile(path))
                    {
                        using (var first = library.GetModule(d))
                            CheckApply(d, first);
                        // Another module of the same library works as well.
                        using (var second = library.GetModule(d))
                            CheckApply(d, second);
                    }
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        private static async Task CompileAndLinkAsync()
        {
            using (var d = Device.Get(0))
            {
                string source = "// " + Guid.NewGuid().ToString("N") + "\n" + HeavySource(32) +
                                "extern \"C\" __global__ void doubled(float* x) { x[threadIdx.x] *= 2.0f; }\n";
                Task<CudaModule> compile = d.CompileAsync(source, new CompileOptions { UseCache = false });
                Assert.True(!compile.IsCompleted, "Device.CompileAsync returned a finished task");
                long iterations = 0;
                while (!compile.IsCompleted)
                    iterations++;
                Assert.True(iterations > 100, "the calling thread ran " + iterations + " iterations while compiling");
                using (CudaModule m = await compile)
                using (var k = m.GetKernel("doubled"))
                using (var b = d.AllocateFrom(new float[] { 1, 2, 3 }))
                {
                    Assert.True(!m.FromCache, "UseCache = false came from the cache");
                    k.Launch(1, 3, null, b);
                    d.Synchronize();
                    Assert.Equal(6.0f, b.ToArray()[2], "the asynchronously compiled kernel");
                }

                var rdc = new CompileOptions { Architecture = Sm(d), Rdc = true };
                Task<Program> callerTask = new Program(Caller).CompileAsync(rdc);
                Task<Program> calleeTask = new Program(Callee).CompileAsync(rdc);
                using (Program caller = await callerTask)
                using (Program callee = await calleeTask)
                using (var linker = new Linker(d, new LinkOptions { UseCache = false }))
                {
                    linker.Add(caller);
                    linker.Add(callee);
                    Task<CudaModule> link = linker.LinkAsync();
                    long spins = 0;
                    while (!link.IsCompleted)
                        spins++;
                    using (CudaModule linked = await link)
                        CheckApply(d, linked);
                }

                // A link failure comes out of the await.
                using (Program caller = await new Program(Caller).CompileAsync(rdc))
                using (var linker = new Linker(d, new LinkOptions { UseCache = false }))
                {
                    linker.Add(caller);
                    try
                    {
                        using (await linker.LinkAsync())
                            throw new TestFailure("linking the caller alone asynchronously threw nothing");
                    }
                    catch (CudaException e)
                    {
                        Assert.Equal(CudaStatus.Compile, e.Status, "the failed link's status");
                        Assert.Contains("twice", e.CompileLog, "the failed link's log");
                    }
                }
            }
        }
    }
}
