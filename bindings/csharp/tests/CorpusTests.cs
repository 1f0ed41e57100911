// The bad-input corpus through the C# binding: a table of cases, each one
// wrong input with the exception it must give and a piece of text its
// message must hold (the thing at fault). The runner checks every case the
// same way and prints how many ran and passed, so the count in the output is
// the table's.
//
// The library's own corpus (tests/hardening/corpus_*_test.cc) tries every
// bad input on the C ABI; this one holds what the C# layer adds: strings
// (NUL characters, unpaired surrogates, null), numbers C cannot be given
// (negative counts, sizes past 64 bits), null and empty arrays, disposed
// objects, the generated SafeHandle classes, and how the library's failures
// become exceptions, with a smoke subset of the library's cases through the
// classes users use and through NativeMethods.
//
// Two parts: the one that needs NVRTC only, and the one that needs a device
// (reported as skipped without one, like every GPU test).

using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    /// <summary>What a case may report beyond its exception: problems its own checks found.</summary>
    internal sealed class CaseContext
    {
        private readonly List<string> problems = new List<string>();

        /// <summary>What the case's action threw (null when nothing); set before its checks run.</summary>
        public Exception Thrown;

        public void Problem(string what)
        {
            problems.Add(what);
        }

        public void Expect(bool ok, string what)
        {
            if (!ok)
                problems.Add(what);
        }

        public string Problems
        {
            get { return string.Join("; ", problems); }
        }
    }

    internal sealed class CorpusCase
    {
        public string Name;           // what is wrong with the input
        public Type Expected;         // exactly this exception type; null: nothing may be thrown
        public CudaStatus Status;     // for CudaException: the status it must carry
        public string Call;           // for CudaException: the C function its message must start with
        public string Param;          // for ArgumentException and its kin: the ParamName it must carry (null: not checked)
        public string Needle;         // text the message must hold
        public Action<CaseContext> Run;
        public Action<CaseContext> After; // checks run after the action, whatever it did (may be null)
    }

    /// <summary>A table of cases and the runner that checks each the same way.</summary>
    internal sealed class Corpus
    {
        public readonly List<CorpusCase> Cases = new List<CorpusCase>();

        /// <summary>A case that must throw <see cref="CudaException"/> with <paramref name="status"/>, from <paramref name="call"/>.</summary>
        public void Cuda(string name, string call, CudaStatus status, string needle, Action<CaseContext> run,
            Action<CaseContext> after = null)
        {
            Cases.Add(new CorpusCase
            {
                Name = name, Expected = typeof(CudaException), Status = status, Call = call, Needle = needle,
                Run = run, After = after,
            });
        }

        /// <summary>A case that must throw exactly <typeparamref name="T"/>, refused by the binding before C is called.</summary>
        public void Throws<T>(string name, string param, string needle, Action<CaseContext> run,
            Action<CaseContext> after = null) where T : Exception
        {
            Cases.Add(new CorpusCase
            {
                Name = name, Expected = typeof(T), Param = param, Needle = needle, Run = run, After = after,
            });
        }

        /// <summary>A case that must not throw (its checks say whether it did the right thing).</summary>
        public void Fine(string name, Action<CaseContext> run, Action<CaseContext> after = null)
        {
            Cases.Add(new CorpusCase { Name = name, Run = run, After = after });
        }

        /// <summary>
        /// Runs every case, prints "bad-input corpus (label): N cases, P passed"
        /// and each failing case, and fails the test when any case failed.
        /// </summary>
        public void RunAndReport(string label)
        {
            int passed = 0;
            var failures = new List<string>();
            foreach (var c in Cases)
            {
                string why = RunOne(c);
                if (why == null)
                    passed++;
                else
                    failures.Add(why);
            }
            Console.WriteLine("bad-input corpus ({0}): {1} cases, {2} passed", label, Cases.Count, passed);
            foreach (string f in failures)
                Console.WriteLine("  FAILED " + f.Replace("\n", "\n         "));
            if (failures.Count > 0)
                throw new TestFailure(string.Format("{0} of {1} corpus cases failed (listed above)", failures.Count, Cases.Count));
        }

        /// <summary>Null when the case passed; else "name: expected ..., got ...".</summary>
        private static string RunOne(CorpusCase c)
        {
            var ctx = new CaseContext();
            Exception got = null;
            try
            {
                c.Run(ctx);
            }
            catch (Exception e)
            {
                got = e;
            }
            ctx.Thrown = got;
            string why = Judge(c, got);
            if (c.After != null)
            {
                try
                {
                    c.After(ctx);
                }
                catch (Exception e)
                {
                    ctx.Problem("its checks afterwards threw " + Describe(e));
                }
            }
            string problems = ctx.Problems;
            if (problems.Length > 0)
                why = why == null ? problems : why + "; " + problems;
            if (why == null)
                return null;
            return string.Format("{0}: expected {1}, got {2}: {3}", c.Name, Expected(c), Describe(got), why);
        }

        private static string Judge(CorpusCase c, Exception got)
        {
            if (c.Expected == null)
                return got == null ? null : "it threw";
            if (got == null)
                return "nothing was thrown";
            if (got.GetType() != c.Expected)
                return "another exception type";
            var problems = new List<string>();
            var cuda = got as CudaException;
            if (cuda != null)
            {
                if (cuda.Status != c.Status)
                    problems.Add("status " + cuda.Status);
                if (c.Call != null && !got.Message.StartsWith(c.Call + ": ", StringComparison.Ordinal))
                    problems.Add("the message does not start with '" + c.Call + ": '");
                if (cuda.StatusName != Cuabi.Cuda.StatusName(cuda.Status))
                    problems.Add("StatusName " + cuda.StatusName + " does not match the status");
                if (cuda.Status == CudaStatus.Compile && cuda.CompileLog == null)
                    problems.Add("no CompileLog for a Compile status");
            }
            var argument = got as ArgumentException;
            if (argument != null && c.Param != null && argument.ParamName != c.Param)
                problems.Add("ParamName is " + (argument.ParamName == null ? "null" : "'" + argument.ParamName + "'") +
                             ", not '" + c.Param + "'");
            if (got.Message == null || got.Message.IndexOf(c.Needle, StringComparison.Ordinal) < 0)
                problems.Add("the message lacks '" + c.Needle + "'");
            return problems.Count == 0 ? null : string.Join("; ", problems);
        }

        private static string Expected(CorpusCase c)
        {
            if (c.Expected == null)
                return "no exception";
            if (c.Expected == typeof(CudaException))
                return string.Format("CudaException {0} from {1} holding '{2}'", c.Status, c.Call, c.Needle);
            return string.Format("{0}{1} holding '{2}'", c.Expected.Name,
                c.Param == null ? "" : " for '" + c.Param + "'", c.Needle);
        }

        private static string Describe(Exception e)
        {
            if (e == null)
                return "no exception";
            string message = e.Message ?? "";
            if (message.Length > 600)
                message = message.Substring(0, 600) + "...";
            var cuda = e as CudaException;
            string what = cuda != null ? "CudaException " + cuda.Status : e.GetType().Name;
            return what + " (" + message + ")";
        }
    }

    internal static class CorpusTests
    {
        private const string Tiny = "extern \"C\" __global__ void tiny(int* x) { *x = 42; }\n";
        private const string Template = "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n";
        private const string Sm = "--gpu-architecture=sm_90";
        private const string Compute = "--gpu-architecture=compute_90";

        public static void Register()
        {
            Registry.Add("corpus: bad input through the C# binding, the part that needs no GPU", RunCpu);
            Registry.AddGpu("corpus: bad input through the C# binding, the part that needs a GPU", RunGpu);
        }

        // ------------------------------------------------------------------
        // The part that needs NVRTC only
        // ------------------------------------------------------------------

        /// <summary>Programs shared by the cases; every case that consumes one makes its own.</summary>
        private sealed class CpuFixture : IDisposable
        {
            public Program Compiled;   // Template with "store<int>", compiled for sm_90: CUBIN and PTX
            public Program PtxOnly;    // Tiny compiled for compute_90: PTX only
            public Program Fresh;      // created, never compiled
            public Program Failed;     // its compile failed
            public IntPtr Live;        // Compiled's handle value
            public IntPtr Released;    // a value that was a live program once
            public IntPtr Stale;       // released, and its slot reused by Reuser
            public Program Reuser;

            public CpuFixture()
            {
                Compiled = new Program(Template, "corpus.cu");
                Compiled.AddNameExpression("store<int>");
                Compiled.Compile(Sm);
                PtxOnly = new Program(Tiny, "corpus.cu");
                PtxOnly.Compile(Compute);
                Fresh = new Program(Tiny, "corpus.cu");
                Failed = new Program("this is not C++", "corpus.cu");
                try
                {
                    Failed.Compile();
                }
                catch (CudaException e)
                {
                    if (e.Status != CudaStatus.Compile)
                        throw;
                }
                Live = Compiled.Handle.DangerousGetHandle();
                using (var gone = new Program(Tiny))
                    Released = gone.Handle.DangerousGetHandle();
                // A released handle whose slot the next program reuses. A
                // finalizer releasing a handle in between can take the slot
                // first: try again a few times.
                for (int attempt = 0; ; attempt++)
                {
                    using (var s = new Program(Tiny))
                        Stale = s.Handle.DangerousGetHandle();
                    Reuser = new Program(Tiny);
                    if ((Stale.ToInt64() & 0xFFFFFF) == (Reuser.Handle.DangerousGetHandle().ToInt64() & 0xFFFFFF))
                        break;
                    Reuser.Dispose();
                    if (attempt == 4)
                        throw new TestFailure("the handle table did not reuse the released slot; the stale-handle cases would test nothing");
                }
            }

            public void Dispose()
            {
                Compiled.Dispose();
                PtxOnly.Dispose();
                Fresh.Dispose();
                Failed.Dispose();
                Reuser.Dispose();
            }
        }

        private static void RunCpu()
        {
            using (var f = new CpuFixture())
            {
                var corpus = new Corpus();
                StringCases(corpus, f);
                ProgramCases(corpus, f);
                HandleCases(corpus, f);
                RawCpuCases(corpus, f);
                corpus.RunAndReport("C#");
            }
        }

        private static Program Disposed(string source = Tiny)
        {
            var p = new Program(source);
            p.Dispose();
            return p;
        }

        private static T Disposed<T>(T thing) where T : IDisposable
        {
            thing.Dispose();
            return thing;
        }

        private static void LogHolds(CaseContext ctx, string needle)
        {
            var e = ctx.Thrown as CudaException;
            if (e != null && (e.CompileLog == null || e.CompileLog.IndexOf(needle, StringComparison.Ordinal) < 0))
                ctx.Problem("CompileLog lacks '" + needle + "'");
        }

        /// <summary>Throws the library's last error for a failed status, as the safe classes do.</summary>
        private static void Check(CudaStatus status)
        {
            Errors.Check(status);
        }

        // Non-owning SafeHandles around raw values: what the C ABI receives.
        private static SafeProgramHandle AsProgram(IntPtr v) { return new SafeProgramHandle(v, false); }
        private static SafeModuleHandle AsModule(IntPtr v) { return new SafeModuleHandle(v, false); }
        private static SafeFunctionHandle AsFunction(IntPtr v) { return new SafeFunctionHandle(v, false); }

        /// <summary>A NUL-terminated byte string, one byte per char (chars up to U+00FF): for bytes that are not UTF-8.</summary>
        private static byte[] Z(string latin1)
        {
            var b = new byte[latin1.Length + 1];
            for (int i = 0; i < latin1.Length; i++)
                b[i] = checked((byte)latin1[i]);
            return b;
        }

        /// <summary>Every generated cuabi_*_release declaration.</summary>
        private static List<MethodInfo> Releases()
        {
            var result = new List<MethodInfo>();
            foreach (MethodInfo m in typeof(NativeMethods).GetMethods(BindingFlags.Public | BindingFlags.Static))
                if (m.Name.EndsWith("_release", StringComparison.Ordinal))
                    result.Add(m);
            return result;
        }

        /// <summary>Every generated SafeHandle class.</summary>
        private static List<Type> HandleClasses()
        {
            var result = new List<Type>();
            foreach (Type t in typeof(CuabiSafeHandle).Assembly.GetTypes())
                if (t.IsSealed && typeof(CuabiSafeHandle).IsAssignableFrom(t))
                    result.Add(t);
            return result;
        }

        // --- Strings: refused by the binding before C is called -------------

        private static void StringCases(Corpus c, CpuFixture f)
        {
            c.Throws<ArgumentNullException>("source is null", "source", "source", ctx => new Program(null));
            c.Throws<ArgumentException>("source with an embedded NUL", "source", "NUL character",
                ctx => new Program("__global__ void k() {}\0junk"));
            c.Throws<ArgumentException>("program name with an embedded NUL", "name", "NUL character",
                ctx => new Program(Tiny, "a\0b.cu"));
            c.Throws<ArgumentException>("source with a lone high surrogate in a comment", "source", "unpaired surrogate (U+D800",
                ctx => new Program("// \uD800 comment\n" + Tiny));
            c.Throws<ArgumentException>("source with a lone low surrogate", "source", "unpaired surrogate (U+DC00",
                ctx => new Program(Tiny + "// \uDC00\n"));
            c.Throws<ArgumentException>("source with two high surrogates in a row", "source", "at index 3",
                ctx => new Program("// \uD83D\uD83D\uDE00\n"));
            c.Throws<ArgumentException>("source ending in a high surrogate", "source", "unpaired surrogate (U+DBFF",
                ctx => new Program(Tiny + "//\uDBFF"));
            c.Throws<ArgumentException>("program name with a lone surrogate", "name", "unpaired surrogate",
                ctx => new Program(Tiny, "k\uDFFFernel.cu"));
            c.Throws<ArgumentNullException>("a header whose contents are null", "headers (source)[0]", "headers (source)[0]",
                ctx => new Program(Tiny, null, new Dictionary<string, string> { { "a.h", null } }));
            c.Throws<ArgumentException>("a header name with an embedded NUL", "headers (name)[0]", "NUL character",
                ctx => new Program(Tiny, null, new Dictionary<string, string> { { "a\0.h", "int a;" } }));
            c.Throws<ArgumentException>("a header's contents with an embedded NUL", "headers (source)[1]", "NUL character",
                ctx => new Program(Tiny, null, new Dictionary<string, string> { { "a.h", "int a;" }, { "b.h", "int\0 b;" } }));
            c.Throws<ArgumentException>("a header name with a lone surrogate", "headers (name)[0]", "unpaired surrogate",
                ctx => new Program(Tiny, null, new Dictionary<string, string> { { "h\uD83D.h", "int a;" } }));
            c.Fine("valid non-ASCII text (a surrogate pair, accents) in a comment and a name", ctx =>
            {
                using (var p = new Program("// caf\u00e9 \u20ac \uD83D\uDE00\n__device__ int y;\n", "k\u00e9rnel.cu"))
                    p.Compile(Compute);
            });
            c.Fine("an empty source compiles", ctx =>
            {
                using (var p = new Program(""))
                    p.Compile(Compute);
            });
            c.Throws<ArgumentNullException>("a null option", "options[1]", "options[1]", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile(Compute, null);
            });
            c.Throws<ArgumentException>("an option with an embedded NUL", "options[0]", "NUL character", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("-DX=1\0-w");
            });
            c.Throws<ArgumentException>("an option with a lone surrogate", "options[1]", "unpaired surrogate", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile(Compute, "-DX=\uDFFF");
            });
            c.Fine("a null option array compiles with no options", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile((string[])null);
            });
            c.Throws<ArgumentNullException>("a null name expression", "expression", "expression", ctx =>
            {
                using (var p = new Program(Template))
                    p.AddNameExpression(null);
            });
            c.Throws<ArgumentException>("a name expression with an embedded NUL", "expression", "NUL character", ctx =>
            {
                using (var p = new Program(Template))
                    p.AddNameExpression("store<int>\0store<float>");
            });
            c.Throws<ArgumentException>("a name expression with a lone surrogate", "expression", "unpaired surrogate", ctx =>
            {
                using (var p = new Program(Template))
                    p.AddNameExpression("store<\uD800>");
            });
            c.Throws<ArgumentNullException>("the lowered name of null", "expression", "expression",
                ctx => f.Compiled.GetLoweredName(null));
            c.Throws<ArgumentException>("the lowered name of an expression with a lone surrogate", "expression", "unpaired surrogate",
                ctx => f.Compiled.GetLoweredName("store<\uDBFF>"));
            c.Throws<ArgumentException>("the lowered name of an expression with an embedded NUL", "expression", "NUL character",
                ctx => f.Compiled.GetLoweredName("store<int>\0"));
            c.Throws<ArgumentOutOfRangeException>("a negative dimension", "x", "cannot be negative", ctx => ((Dim3)(-1)).ToString());
            c.Throws<ArgumentOutOfRangeException>("a negative grid in a launch configuration", "x", "cannot be negative",
                ctx => new LaunchConfig(int.MinValue, 32));
        }

        // --- Programs: the library's failures as exceptions, disposed programs

        private static void ProgramCases(Corpus c, CpuFixture f)
        {
            c.Cuda("an empty option", "cuabi_program_compile", CudaStatus.InvalidArgument, "options[0] is empty", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("");
            });
            c.Cuda("compiled twice", "cuabi_program_compile", CudaStatus.InvalidArgument, "already compiled",
                ctx => f.Compiled.Compile(Sm),
                ctx => ctx.Expect(f.Compiled.Ptx.Contains(".entry"), "the program lost its PTX after the refused compile"));
            c.Cuda("an unknown option", "cuabi_program_compile", CudaStatus.Compile, "--no-such-option", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("--no-such-option");
            }, ctx => LogHolds(ctx, "--no-such-option"));
            c.Cuda("an undefined identifier, with NVRTC's log", "cuabi_program_compile", CudaStatus.Compile, "undefined_identifier_xyz", ctx =>
            {
                using (var p = new Program("extern \"C\" __global__ void k(int* x) { *x = undefined_identifier_xyz; }"))
                    p.Compile(Compute);
            }, ctx => LogHolds(ctx, "undefined_identifier_xyz"));
            c.Cuda("a missing include", "cuabi_program_compile", CudaStatus.Compile, "missing_header.h", ctx =>
            {
                using (var p = new Program("#include \"missing_header.h\"\n"))
                    p.Compile(Compute);
            }, ctx => LogHolds(ctx, "missing_header.h"));
            c.Cuda("an empty name expression", "cuabi_program_add_name_expression", CudaStatus.InvalidArgument, "expression is empty", ctx =>
            {
                using (var p = new Program(Template))
                    p.AddNameExpression("");
            });
            c.Cuda("a name expression added after compiling", "cuabi_program_add_name_expression", CudaStatus.InvalidArgument,
                "before the program is compiled", ctx => f.Compiled.AddNameExpression("store<float>"));
            c.Cuda("the lowered name of an expression never added", "cuabi_program_get_lowered_name", CudaStatus.NotFound,
                "store<double>", ctx => f.Compiled.GetLoweredName("store<double>"));
            c.Cuda("PTX before compiling", "cuabi_program_get_ptx", CudaStatus.NotFound, "compiled", ctx => { var unused = f.Fresh.Ptx; });
            c.Cuda("CUBIN after a failed compile", "cuabi_program_get_cubin", CudaStatus.NotFound, "compiled", ctx => { var unused = f.Failed.Cubin; });
            c.Cuda("CUBIN of a compute_XY compile", "cuabi_program_get_cubin", CudaStatus.NotFound, "CUBIN", ctx => { var unused = f.PtxOnly.Cubin; });
            c.Fine("the log of a failed compile holds the error", ctx => ctx.Expect(f.Failed.Log.Contains("error"), "the log has no error"));

            c.Throws<ObjectDisposedException>("Compile on a disposed program", null, "Cuabi.Program", ctx => Disposed().Compile(Compute));
            c.Throws<ObjectDisposedException>("AddNameExpression on a disposed program", null, "Cuabi.Program",
                ctx => Disposed(Template).AddNameExpression("store<int>"));
            c.Throws<ObjectDisposedException>("Log of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Log; });
            c.Throws<ObjectDisposedException>("Ptx of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Ptx; });
            c.Throws<ObjectDisposedException>("Cubin of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Cubin; });
            c.Throws<ObjectDisposedException>("GetLoweredName on a disposed program", null, "Cuabi.Program",
                ctx => Disposed(Template).GetLoweredName("store<int>"));
            c.Throws<ObjectDisposedException>("Handle of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Handle; });
            c.Fine("a program disposed twice", ctx => Disposed().Dispose());
            c.Fine("a program disposed after a failed compile, then again", ctx =>
            {
                var p = new Program("int broken(;");
                try
                {
                    p.Compile(Compute);
                }
                catch (CudaException)
                {
                }
                p.Dispose();
                p.Dispose();
            });
        }

        // --- The generated SafeHandle classes and release declarations -------

        private static void HandleCases(Corpus c, CpuFixture f)
        {
            c.Fine("NULL to every generated release, the last error untouched", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                NativeMethods.cuabi_program_get_log(AsProgram(IntPtr.Zero), null, ref n); // plants an error
                string before = Utf8.FromNative(NativeMethods.cuabi_last_error_message());
                foreach (MethodInfo release in Releases())
                    release.Invoke(null, new object[] { IntPtr.Zero });
                ctx.Expect(Releases().Count == 23, Releases().Count + " release declarations");
                ctx.Expect(before == Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "a release changed the last error");
            });
            c.Fine("made-up, released and stale values to every generated release", ctx =>
            {
                var values = new[]
                {
                    new IntPtr(1), new IntPtr(0xdeadbeefL), new IntPtr(-1L), new IntPtr((1L << 32) | (2L << 24) | 77),
                    f.Released, f.Stale,
                };
                foreach (IntPtr v in values)
                    foreach (MethodInfo release in Releases())
                        release.Invoke(null, new object[] { v });
                // The stale value's slot belongs to a live program now: still alive.
                UIntPtr n = UIntPtr.Zero;
                ctx.Expect(NativeMethods.cuabi_program_get_log(f.Reuser.Handle, null, ref n) == CudaStatus.Success,
                    "releasing a stale value released the live program in its slot");
            });
            c.Fine("a live program owned by every other SafeHandle class and disposed: only its own class releases it", ctx =>
            {
                ctx.Expect(HandleClasses().Count == 23, HandleClasses().Count + " SafeHandle classes");
                foreach (Type t in HandleClasses())
                    if (t != typeof(SafeProgramHandle))
                        ((CuabiSafeHandle)Activator.CreateInstance(t, f.Live, true)).Dispose();
                ctx.Expect(f.Compiled.Ptx.Contains(".entry"), "the program died");
                var p = new Program(Tiny);
                IntPtr raw = p.Handle.DangerousGetHandle();
                new SafeProgramHandle(raw, true).Dispose();
                UIntPtr n = UIntPtr.Zero;
                ctx.Expect(NativeMethods.cuabi_program_get_log(AsProgram(raw), null, ref n) == CudaStatus.InvalidHandle,
                    "SafeProgramHandle did not release its program");
                p.Dispose(); // its own handle: released already, ignored
            });
            c.Fine("an owning SafeHandle disposed twice releases once", ctx =>
            {
                SafeProgramHandle h;
                Check(NativeMethods.cuabi_program_create(Z(Tiny), null, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h));
                IntPtr raw = h.DangerousGetHandle();
                h.Dispose();
                h.Dispose();
                UIntPtr n = UIntPtr.Zero;
                ctx.Expect(NativeMethods.cuabi_program_get_log(AsProgram(raw), null, ref n) == CudaStatus.InvalidHandle,
                    "the handle is still live after Dispose");
            });
            c.Throws<ObjectDisposedException>("a disposed SafeHandle passed to NativeMethods", null, "closed", ctx =>
            {
                var h = new SafeProgramHandle();
                h.Dispose();
                UIntPtr n = UIntPtr.Zero;
                NativeMethods.cuabi_program_get_log(h, null, ref n);
            });
            c.Fine("programs dropped without Dispose are released by their finalizers, on another thread", ctx =>
            {
                IntPtr[] raw = null;
                var t = new Thread(() =>
                {
                    raw = new IntPtr[4];
                    for (int i = 0; i < raw.Length; i++)
                        raw[i] = new Program(Tiny).Handle.DangerousGetHandle();
                });
                t.Start();
                t.Join();
                for (int i = 0; i < 3; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
                foreach (IntPtr r in raw)
                {
                    UIntPtr n = UIntPtr.Zero;
                    ctx.Expect(NativeMethods.cuabi_program_get_log(AsProgram(r), null, ref n) == CudaStatus.InvalidHandle,
                        "a dropped program is still live");
                }
            });
        }

        // --- Extended launches, host functions and graph updates: the library's refusals

        private static void ExtendedCases(Corpus c, GpuFixture f)
        {
            Kernel k = f.Saxpy;
            c.Cuda("a cluster that does not divide the grid", "cuabi_function_launch_packed", CudaStatus.InvalidArgument,
                "grid x 3 is not a multiple of cluster x 2", ctx =>
                {
                    Mark(f);
                    k.Launch(new LaunchConfig(3, 256) { Cluster = new Dim3(2, 1, 1) }, null, f.Args());
                }, ctx => Untouched(ctx, f));
            c.Cuda("a plan with a cluster that does not divide the grid", "cuabi_launch_plan_create", CudaStatus.InvalidArgument,
                "grid x 5 is not a multiple of cluster x 2", ctx => k.Prepare(new LaunchConfig(5, 256) { Cluster = new Dim3(2, 1, 1) }));
            c.Cuda("a cluster with a zero dimension", "cuabi_function_launch_packed", CudaStatus.InvalidArgument,
                "has a zero dimension", ctx =>
                {
                    Mark(f);
                    k.Launch(new LaunchConfig(4, 256) { Cluster = new Dim3(2, 0, 1) }, null, f.Args());
                }, ctx => Untouched(ctx, f));
            c.Cuda("a cooperative grid larger than the device keeps resident", "cuabi_function_launch_packed",
                CudaStatus.InvalidArgument, "blocks is larger than the", ctx =>
                {
                    Mark(f);
                    k.Launch(new LaunchConfig(1 << 20, 256) { Cooperative = true }, null, f.Args());
                }, ctx => Untouched(ctx, f));
            c.Cuda("a programmatic event at block start without an event", "cuabi_function_launch_packed",
                CudaStatus.InvalidArgument, "programmatic_event is NULL", ctx =>
                {
                    Mark(f);
                    k.Launch(new LaunchConfig(4, 256) { ProgrammaticEventAtBlockStart = true }, null, f.Args());
                }, ctx => Untouched(ctx, f));
            c.Throws<ObjectDisposedException>("a disposed programmatic event", null, "Cuabi.CudaEvent", ctx =>
            {
                Mark(f);
                k.Launch(new LaunchConfig(4, 256) { ProgrammaticEvent = Disposed(f.Device.CreateEvent(EventFlags.DisableTiming)) },
                    null, f.Args());
            }, ctx => Untouched(ctx, f));
            c.Fine("a right extended launch after the refused ones", ctx =>
            {
                Mark(f);
                k.Launch(new LaunchConfig(4, 256) { Cluster = new Dim3(2, 1, 1) }, null, f.Args());
            }, ctx => Launched(ctx, f));

            c.Cuda("a null host function", "cuabi_stream_launch_host_func", CudaStatus.InvalidArgument, "fn is NULL",
                ctx => f.Stream.LaunchHostFunc(null));
            c.Cuda("a host function on the NULL stream", "cuabi_stream_launch_host_func", CudaStatus.InvalidHandle, "stream",
                ctx => new CudaStream(new SafeStreamHandle()).LaunchHostFunc(() => { }));
            bool ranWhileCapturing = false;
            c.Cuda("a host function on a capturing stream", "cuabi_stream_launch_host_func", CudaStatus.NotSupported, "capturing", ctx =>
            {
                using (var s = f.Device.CreateStream())
                {
                    s.BeginCapture(CaptureMode.ThreadLocal);
                    try
                    {
                        s.LaunchHostFunc(() => ranWhileCapturing = true);
                    }
                    finally
                    {
                        s.EndCapture().Dispose();
                    }
                }
            }, ctx =>
            {
                f.Device.Synchronize();
                ctx.Expect(!ranWhileCapturing, "the refused host function ran");
            });

            CudaGraph graph = null;
            CudaGraphExec exec = null;
            Func<CudaGraphExec> instantiated = () =>
            {
                if (exec == null)
                {
                    graph = Captured(f, f.Stream);
                    exec = graph.Instantiate();
                }
                return exec;
            };
            Kernel tiny = null;
            c.Cuda("updating a kernel node with another kernel", "cuabi_graph_exec_set_kernel_node_args", CudaStatus.InvalidArgument,
                ", not 'tiny'", ctx =>
                {
                    tiny = f.Device.Compile(Tiny, new CompileOptions { Name = "tiny.cu" }).GetKernel("tiny");
                    instantiated().SetKernelNodeArgs(0, tiny, f.B);
                });
            c.Cuda("a kernel node index past the end", "cuabi_graph_exec_set_kernel_node_args", CudaStatus.OutOfRange,
                "kernel node 1 is past the end", ctx => instantiated().SetKernelNodeArgs(1, k, f.Args()));
            c.Throws<ArgumentOutOfRangeException>("a negative kernel node index", "index", "cannot be negative",
                ctx => instantiated().SetKernelNodeArgs(-1, k, f.Args()));
            c.Throws<ArgumentNullException>("a null kernel for a node", "kernel", "kernel",
                ctx => instantiated().SetKernelNodeArgs(0, null, f.Args()));
            c.Throws<ArgumentException>("a node's 4-byte n for a size_t parameter", "args", "parameter 4 is 8 bytes",
                ctx => instantiated().SetKernelNodeArgs(0, k, 2.0f, f.A, f.A, f.B, (uint)N));
            c.Throws<ArgumentNullException>("a whole-graph update from null", "graph", "graph", ctx => instantiated().Update(null));
            c.Fine("the graph replays with new arguments after the refused updates", ctx =>
            {
                Mark(f);
                f.B.Memset(0);
                instantiated().SetKernelNodeArgs(0, k, 2.0f, f.A, f.A, f.B, (ulong)N);
                instantiated().Launch(f.Stream);
                f.Stream.Synchronize();
            }, ctx =>
            {
                Launched(ctx, f);
                if (exec != null)
                    exec.Dispose();
                if (graph != null)
                    graph.Dispose();
                if (tiny != null)
                    tiny.Dispose();
            });
        }

        // --- A smoke subset of the library's cases, through NativeMethods ----

        private static void RawCpuCases(Corpus c, CpuFixture f)
        {
            IntPtr pv = f.Live;
            var noStream = new SafeStreamHandle();
            c.Cuda("NULL program", "cuabi_program_get_log", CudaStatus.InvalidHandle, "program is NULL", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                Check(NativeMethods.cuabi_program_get_log(new SafeProgramHandle(), null, ref n));
            });
            c.Cuda("released program", "cuabi_program_get_ptx", CudaStatus.InvalidHandle, "program is not a live cuabi_program", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                Check(NativeMethods.cuabi_program_get_ptx(AsProgram(f.Released), null, ref n));
            });
            c.Cuda("stale program (its slot reused by a live one)", "cuabi_program_compile", CudaStatus.InvalidHandle,
                "program is not a live cuabi_program",
                ctx => Check(NativeMethods.cuabi_program_compile(AsProgram(f.Stale), UIntPtr.Zero, IntPtr.Zero)));
            c.Cuda("made-up program handle", "cuabi_program_add_name_expression", CudaStatus.InvalidHandle,
                "program is not a live cuabi_program",
                ctx => Check(NativeMethods.cuabi_program_add_name_expression(AsProgram(new IntPtr(0xdeadbeefL)), Z("store<int>"))));
            c.Cuda("program handle as a module", "cuabi_module_get_function", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                SafeFunctionHandle fn;
                CudaStatus st = NativeMethods.cuabi_module_get_function(AsModule(pv), Z("tiny"), out fn);
                ctx.Expect(fn.IsInvalid, "the out-parameter was written");
                Check(st);
            });
            c.Cuda("program handle as a function", "cuabi_function_get_params", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                UIntPtr count = UIntPtr.Zero, size;
                Check(NativeMethods.cuabi_function_get_params(AsFunction(pv), null, ref count, out size));
            });
            c.Cuda("argument sizes checked on a NULL function", "cuabi_function_check_arg_sizes", CudaStatus.InvalidHandle,
                "function is NULL", ctx => Check(NativeMethods.cuabi_function_check_arg_sizes(AsFunction(IntPtr.Zero),
                    new[] { (UIntPtr)4u, (UIntPtr)8u }, (UIntPtr)2u)));
            c.Cuda("one argument size checked on a made-up function", "cuabi_function_check_arg_size", CudaStatus.InvalidHandle,
                "function is not a live cuabi_function",
                ctx => Check(NativeMethods.cuabi_function_check_arg_size(AsFunction(new IntPtr(0xdeadbeefL)), UIntPtr.Zero, (UIntPtr)4u)));
            c.Cuda("source is NULL", "cuabi_program_create", CudaStatus.InvalidArgument, "source is NULL", ctx =>
            {
                SafeProgramHandle h;
                CudaStatus st = NativeMethods.cuabi_program_create(null, null, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h);
                ctx.Expect(h.IsInvalid, "the out-parameter was written");
                Check(st);
            });
            c.Cuda("a program name that is not UTF-8", "cuabi_program_create", CudaStatus.InvalidArgument, "name is not valid UTF-8", ctx =>
            {
                SafeProgramHandle h;
                CudaStatus st = NativeMethods.cuabi_program_create(Z("int x;"), Z("bad\u00ff\u00fename.cu"), UIntPtr.Zero, IntPtr.Zero,
                    IntPtr.Zero, out h);
                h.Dispose();
                Check(st);
            });
            c.Cuda("options NULL with a count", "cuabi_program_compile", CudaStatus.InvalidArgument, "num_options is 2", ctx =>
            {
                using (var p = new Program(Tiny))
                    Check(NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)2u, IntPtr.Zero));
            });
            c.Cuda("PTX into a 0-byte buffer", "cuabi_program_get_ptx", CudaStatus.InsufficientBuffer, "are needed", ctx =>
            {
                var buf = new byte[] { 0x23, 0x23, 0x23, 0x23 };
                UIntPtr n = UIntPtr.Zero;
                CudaStatus st = NativeMethods.cuabi_program_get_ptx(f.Compiled.Handle, buf, ref n);
                ctx.Expect(buf[0] == 0x23, "a too-small buffer was written");
                ctx.Expect(n.ToUInt64() > 100, "*size does not hold the size needed");
                Check(st);
            });
            c.Cuda("a launch configuration initialised with struct_size 4", "cuabi_launch_config_init", CudaStatus.InvalidArgument,
                "struct_size", ctx =>
                {
                    var cfg = new LaunchConfigNative();
                    Check(NativeMethods.cuabi_launch_config_init(ref cfg, (UIntPtr)4u));
                });
            c.Cuda("a compile description initialised with struct_size 0", "cuabi_compile_desc_init", CudaStatus.InvalidArgument,
                "struct_size", ctx =>
                {
                    var desc = new CompileDescNative();
                    Check(NativeMethods.cuabi_compile_desc_init(ref desc, UIntPtr.Zero));
                });
            c.Cuda("packed launch on a made-up function with (size_t)-1 bytes", "cuabi_function_launch_packed", CudaStatus.InvalidHandle,
                "function is not a live cuabi_function", ctx =>
                {
                    var cfg = LaunchConfigNative.Create();
                    Check(FastNativeMethods.cuabi_function_launch_packed(new IntPtr(0xdeadbeefL), ref cfg, IntPtr.Zero, IntPtr.Zero,
                        new UIntPtr(ulong.MaxValue)));
                });
            c.Cuda("launch with every pointer NULL", "cuabi_function_launch", CudaStatus.InvalidHandle, "function is NULL", ctx =>
            {
                var cfg = LaunchConfigNative.Create();
                Check(NativeMethods.cuabi_function_launch(AsFunction(IntPtr.Zero), ref cfg, noStream, IntPtr.Zero, (UIntPtr)5u));
            });
            c.Cuda("a plan launched through a made-up handle", "cuabi_launch_plan_launch", CudaStatus.InvalidHandle,
                "plan is not a live cuabi_launch_plan", ctx => Check(FastNativeMethods.cuabi_launch_plan_launch(new IntPtr(0x5A5A5A5A))));
        }

        // ------------------------------------------------------------------
        // The part that needs a device
        // ------------------------------------------------------------------

        private const int N = 1024; // elements of the fixture's buffers (4096 bytes)

        [StructLayout(LayoutKind.Sequential)]
        private struct WithReference
        {
            public object Value;
        }

        /// <summary>Objects shared by the cases; a case that consumes or breaks one makes its own.</summary>
        private sealed class GpuFixture : IDisposable
        {
            public readonly Device Device;
            public readonly CudaModule SaxpyModule;
            public readonly Kernel Saxpy;
            public readonly DeviceBuffer<float> A, B; // N floats each
            public readonly CudaStream Stream;
            public readonly CudaEvent Timed;
            public readonly PinnedBuffer<float> Pinned; // N floats
            public readonly byte[] Cubin;               // SAXPY for the device's sm_XY

            public GpuFixture()
            {
                Device = Device.Get(0);
                SaxpyModule = Device.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" });
                Saxpy = SaxpyModule.GetKernel("saxpy");
                A = Device.Allocate<float>(N);
                B = Device.Allocate<float>(N);
                Stream = Device.CreateStream();
                Timed = Device.CreateEvent();
                Pinned = Device.AllocatePinned<float>(N);
                var cc = Device.ComputeCapability;
                using (var p = new Program(NoGpuTests.SaxpySource, "saxpy.cu"))
                {
                    p.Compile("--gpu-architecture=sm_" + cc.Major + cc.Minor);
                    Cubin = p.Cubin;
                }
            }

            /// <summary>SAXPY's arguments over the fixture's buffers: out = B = 2 * A + A.</summary>
            public object[] Args()
            {
                return new object[] { 2.0f, A, A, B, (ulong)N };
            }

            public void Dispose()
            {
                Pinned.Dispose();
                Timed.Dispose();
                Stream.Dispose();
                B.Dispose();
                A.Dispose();
                Saxpy.Dispose();
                SaxpyModule.Dispose();
                Device.Dispose();
            }
        }

        private static void RunGpu()
        {
            using (var f = new GpuFixture())
            {
                var corpus = new Corpus();
                MemoryCases(corpus, f);
                DisposedCases(corpus, f);
                LaunchCases(corpus, f);
                ModuleCases(corpus, f);
                RawGpuCases(corpus, f);
                ExtendedCases(corpus, f);
                corpus.RunAndReport("C#, GPU");
                // The context must have survived every case.
                string after = SaxpyResult(f, f.Saxpy, f.Stream, 1 << 16);
                if (after != null)
                    throw new TestFailure("SAXPY after the corpus: " + after);
            }
        }

        /// <summary>
        /// Launches <paramref name="kernel"/> (SAXPY) on new buffers of <paramref name="n"/>
        /// elements and checks every element; null when right, else what was wrong.
        /// </summary>
        private static string SaxpyResult(GpuFixture f, Kernel kernel, CudaStream stream, int n)
        {
            var x = new float[n];
            var y = new float[n];
            for (int i = 0; i < n; i++)
            {
                x[i] = i % 4096;
                y[i] = 1;
            }
            using (var dx = f.Device.AllocateFrom(x))
            using (var dy = f.Device.AllocateFrom(y))
            using (var dout = f.Device.Allocate<float>(n))
            {
                dout.Memset(0);
                kernel.Launch(new LaunchConfig((n + 255) / 256, 256), stream, 2.0f, dx, dy, dout, (ulong)n);
                if (stream != null)
                    stream.Synchronize();
                float[] got = dout.ToArray();
                for (int i = 0; i < n; i++)
                    if (got[i] != 2.0f * x[i] + y[i])
                        return string.Format("element {0} is {1}, expected {2}", i, got[i], 2.0f * x[i] + y[i]);
                return null;
            }
        }

        /// <summary>Fills the fixture's A with 0..N-1 and B with a marker: a launch over them that should not run must leave B so.</summary>
        private static void Mark(GpuFixture f)
        {
            var x = new float[N];
            for (int i = 0; i < N; i++)
                x[i] = i;
            f.A.CopyFrom(x);
            f.B.Memset(0xAB);
        }

        private static void Untouched(CaseContext ctx, GpuFixture f)
        {
            f.Device.Synchronize();
            float[] b = f.B.ToArray();
            int marker = BitConverter.ToInt32(new byte[] { 0xAB, 0xAB, 0xAB, 0xAB }, 0);
            for (int i = 0; i < b.Length; i++)
                if (BitConverter.ToInt32(BitConverter.GetBytes(b[i]), 0) != marker)
                {
                    ctx.Problem("something ran: element " + i + " of the output changed");
                    return;
                }
        }

        /// <summary>B holds 3 * A after a launch with <see cref="GpuFixture.Args"/> over <see cref="Mark"/>ed buffers.</summary>
        private static void Launched(CaseContext ctx, GpuFixture f)
        {
            f.Device.Synchronize();
            float[] b = f.B.ToArray();
            for (int i = 0; i < N; i++)
                if (b[i] != 3.0f * i)
                {
                    ctx.Problem(string.Format("element {0} is {1}, expected {2}", i, b[i], 3.0f * i));
                    return;
                }
        }

        /// <summary>The process keeps working after a failed allocation: allocate, copy, verify, launch.</summary>
        private static void StillWorks(CaseContext ctx, GpuFixture f)
        {
            var v = new int[1 << 18];
            for (int i = 0; i < v.Length; i++)
                v[i] = i * 7 + 1;
            using (var buf = f.Device.AllocateFrom(v))
            {
                int[] back = buf.ToArray();
                for (int i = 0; i < v.Length; i++)
                    if (back[i] != v[i])
                    {
                        ctx.Problem("element " + i + " differs after the copy back");
                        break;
                    }
            }
            string r = SaxpyResult(f, f.Saxpy, f.Stream, 1 << 20);
            if (r != null)
                ctx.Problem("SAXPY afterwards: " + r);
        }

        private static Device DisposedDevice()
        {
            var d = Device.Get(0);
            d.Dispose();
            return d;
        }

        /// <summary>
        /// A graph of one SAXPY launch captured from <paramref name="s"/>. The
        /// capture is thread-local, so that a finalizer freeing memory on
        /// another thread meanwhile cannot invalidate it.
        /// </summary>
        private static CudaGraph Captured(GpuFixture f, CudaStream s)
        {
            s.BeginCapture(CaptureMode.ThreadLocal);
            f.Saxpy.Launch(4, 256, s, f.Args());
            return s.EndCapture();
        }

        // --- Memory: counts and ranges C cannot be given, and the library's refusals

        private static void MemoryCases(Corpus c, GpuFixture f)
        {
            Device d = f.Device;
            c.Throws<ArgumentOutOfRangeException>("a negative count", "count", "cannot be negative", ctx => d.Allocate<float>(-1));
            c.Throws<ArgumentOutOfRangeException>("a count whose bytes overflow 64 bits", "count", "more bytes than a 64-bit size can hold",
                ctx => d.Allocate<float>(long.MaxValue));
            c.Throws<ArgumentException>("an element type that holds references", null, "holds references",
                ctx => d.Allocate<WithReference>(4));
            c.Throws<ArgumentNullException>("AllocateFrom null", "source", "source", ctx => d.AllocateFrom<float>(null));
            c.Cuda("zero elements", "cuabi_buffer_alloc_with_pointer", CudaStatus.InvalidArgument, "bytes is 0", ctx => d.Allocate<float>(0));
            c.Cuda("AllocateFrom an empty array", "cuabi_buffer_alloc_with_pointer", CudaStatus.InvalidArgument, "bytes is 0",
                ctx => d.AllocateFrom(new float[0]));
            c.Cuda("2^50 bytes, then the process keeps working", "cuabi_buffer_alloc_with_pointer", CudaStatus.OutOfMemory, "out of device memory",
                ctx => d.Allocate<byte>(1L << 50), ctx => StillWorks(ctx, f));
            c.Throws<ArgumentOutOfRangeException>("a negative pinned count", "count", "cannot be negative", ctx => d.AllocatePinned<int>(-5));
            c.Throws<ArgumentException>("registering an empty array", "array", "is empty",
                ctx => PinnedBuffer<float>.Register(d, new float[0]));
            c.Throws<ArgumentNullException>("registering null", "array", "array", ctx => PinnedBuffer<float>.Register(d, null));
            c.Throws<ArgumentNullException>("registering with a null device", "device", "device",
                ctx => PinnedBuffer<float>.Register(null, new float[4]));
            c.Throws<ArgumentOutOfRangeException>("wrapping a negative count", "count", "cannot be negative",
                ctx => DeviceBuffer<float>.Wrap(d, f.A.DevicePointer, -1));
            c.Throws<ArgumentNullException>("wrapping with a null device", "device", "device",
                ctx => DeviceBuffer<float>.Wrap(null, f.A.DevicePointer, 4));
            c.Cuda("wrapping address 0", "cuabi_buffer_wrap", CudaStatus.InvalidArgument, "device_ptr is 0",
                ctx => DeviceBuffer<float>.Wrap(d, 0, 16));

            var sentinel = new float[N + 1];
            c.Cuda("reading into an array one element longer than the buffer", "cuabi_buffer_copy_to_host", CudaStatus.OutOfRange,
                "source range", ctx =>
                {
                    for (int i = 0; i < sentinel.Length; i++)
                        sentinel[i] = -7;
                    f.A.CopyTo(sentinel);
                }, ctx => ctx.Expect(Array.TrueForAll(sentinel, v => v == -7), "the array was written although the copy failed"));
            c.Cuda("an array one element longer than the buffer", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange,
                "destination range", ctx => f.A.CopyFrom(new float[N + 1]));
            c.Throws<ArgumentOutOfRangeException>("a destination index whose offset overflows 64 bits", "destinationIndex",
                "more bytes than a 64-bit size can hold", ctx => f.A.CopyFrom(new float[4], 0, long.MaxValue, 1));
            c.Throws<ArgumentOutOfRangeException>("a negative source index", "sourceIndex", "cannot be negative",
                ctx => f.A.CopyFrom(new float[4], -1, 0, 1));
            c.Throws<ArgumentOutOfRangeException>("a negative destination index", "destinationIndex", "cannot be negative",
                ctx => f.A.CopyFrom(new float[4], 0, -1, 1));
            c.Throws<ArgumentOutOfRangeException>("a negative count to copy", "count", "cannot be negative",
                ctx => f.A.CopyFrom(new float[4], 0, 0, -1));
            c.Throws<ArgumentException>("a count past the end of the source array", null, "reach past the end of source",
                ctx => f.A.CopyFrom(new float[10], 5, 0, 6));
            c.Throws<ArgumentNullException>("copying from a null array", "source", "source", ctx => f.A.CopyFrom((float[])null));
            c.Throws<ArgumentException>("reading past the end of the destination array", null, "reach past the end of destination",
                ctx => f.A.CopyTo(0, new float[10], 5, 6));
            c.Throws<ArgumentNullException>("reading into a null array", "destination", "destination", ctx => f.A.CopyTo((float[])null));
            c.Throws<ArgumentNullException>("a device copy from null", "source", "source", ctx => f.A.CopyFrom((DeviceBuffer<float>)null));
            c.Cuda("a device copy of a buffer onto itself", "cuabi_buffer_copy", CudaStatus.InvalidArgument, "overlap",
                ctx => f.A.CopyFrom(f.A));
            c.Throws<ArgumentException>("an async copy from past the end of the pinned memory", null,
                "reach past the end of the pinned buffer", ctx => f.A.CopyFromAsync(f.Pinned, N - 10, 0, 11, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("an async copy with a negative pinned index", "index", "cannot be negative",
                ctx => f.A.CopyToAsync(0, f.Pinned, -1, 1, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("a pinned element at index -1", "index", "cannot be negative",
                ctx => { var unused = f.Pinned[-1]; });
            c.Throws<ArgumentException>("a pinned element past the end", null, "reach past the end of the pinned buffer",
                ctx => f.Pinned[N] = 1);
            c.Throws<ArgumentException>("copying a longer array into pinned memory", null, "reach past the end of the pinned buffer",
                ctx => f.Pinned.CopyFrom(new float[N + 1]));
        }

        // --- Disposed objects: refused by the binding, naming the class ------

        private static void DisposedCases(Corpus c, GpuFixture f)
        {
            Device d = f.Device;
            Kernel k = f.Saxpy;
            c.Throws<ObjectDisposedException>("Allocate on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().Allocate<float>(4));
            c.Throws<ObjectDisposedException>("Compile on a disposed device", null, "Cuabi.Device",
                ctx => DisposedDevice().Compile(NoGpuTests.SaxpySource));
            c.Throws<ObjectDisposedException>("CreateStream on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().CreateStream());
            c.Throws<ObjectDisposedException>("GetKernel on a disposed module", null, "Cuabi.CudaModule",
                ctx => Disposed(d.LoadModule(f.Cubin)).GetKernel("saxpy"));
            c.Throws<ObjectDisposedException>("Launch of a disposed kernel", null, "Cuabi.Kernel", ctx =>
            {
                Mark(f);
                Disposed(f.SaxpyModule.GetKernel("saxpy")).Launch(4, 256, null, f.Args());
            }, ctx => Untouched(ctx, f));
            c.Throws<ObjectDisposedException>("Prepare of a disposed kernel", null, "Cuabi.Kernel",
                ctx => Disposed(f.SaxpyModule.GetKernel("saxpy")).Prepare(4, 256));
            c.Throws<ObjectDisposedException>("a disposed buffer as a launch argument", null, "Cuabi.DeviceBuffer", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, f.A, Disposed(d.Allocate<float>(N)), f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ObjectDisposedException>("a launch on a disposed stream", null, "Cuabi.CudaStream", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, Disposed(d.CreateStream()), f.Args());
            }, ctx => Untouched(ctx, f));
            c.Throws<ObjectDisposedException>("ToArray of a disposed buffer", null, "Cuabi.DeviceBuffer",
                ctx => Disposed(d.Allocate<float>(4)).ToArray());
            c.Throws<ObjectDisposedException>("an async copy from disposed pinned memory", null, "Cuabi.PinnedBuffer",
                ctx => f.A.CopyFromAsync(Disposed(d.AllocatePinned<float>(N)), f.Stream));
            c.Throws<ObjectDisposedException>("Record of a disposed event", null, "Cuabi.CudaEvent",
                ctx => Disposed(d.CreateEvent()).Record(f.Stream));
            c.Throws<ObjectDisposedException>("elapsed time since a disposed event", null, "Cuabi.CudaEvent",
                ctx => f.Timed.ElapsedSince(Disposed(d.CreateEvent())));
            c.Throws<ObjectDisposedException>("Launch of a disposed plan", null, "Cuabi.LaunchPlan",
                ctx => Disposed(k.Prepare(4, 256)).Launch());
            c.Throws<ObjectDisposedException>("Set on a disposed plan", null, "Cuabi.LaunchPlan",
                ctx => Disposed(k.Prepare(4, 256)).Set(0, 1.0f));
            c.Throws<ObjectDisposedException>("a disposed buffer set on a plan", null, "Cuabi.DeviceBuffer", ctx =>
            {
                using (var plan = k.Prepare(4, 256))
                    plan.Set(1, Disposed(d.Allocate<float>(N)));
            });
            c.Throws<ObjectDisposedException>("a plan launched after a buffer it holds was disposed", null,
                "the device memory set as argument 3 was disposed", ctx =>
                {
                    Mark(f);
                    using (var plan = k.Prepare(4, 256))
                    using (var output = d.Allocate<float>(N))
                    {
                        plan.SetArguments(2.0f, f.A, f.A, output, (ulong)N);
                        output.Dispose();
                        plan.Launch();
                    }
                });
            c.Throws<ObjectDisposedException>("SetArguments with a disposed buffer", null, "argument 1 is device memory that was disposed",
                ctx =>
                {
                    using (var plan = k.Prepare(4, 256))
                        plan.SetArguments(2.0f, Disposed(d.Allocate<float>(N)), f.A, f.B, (ulong)N);
                });
            c.Throws<ObjectDisposedException>("Instantiate of a disposed graph", null, "Cuabi.CudaGraph", ctx =>
            {
                using (var s = d.CreateStream())
                    Disposed(Captured(f, s)).Instantiate();
            });
            c.Throws<ObjectDisposedException>("Launch of a disposed graph instance", null, "Cuabi.CudaGraphExec", ctx =>
            {
                using (var s = d.CreateStream())
                using (var g = Captured(f, s))
                    Disposed(g.Instantiate()).Launch(s);
            });

            c.Fine("a device disposed twice", ctx => Disposed(Device.Get(0)).Dispose());
            c.Fine("a module disposed twice", ctx => Disposed(d.LoadModule(f.Cubin)).Dispose());
            c.Fine("a kernel disposed twice", ctx => Disposed(f.SaxpyModule.GetKernel("saxpy")).Dispose());
            c.Fine("a buffer disposed twice", ctx => Disposed(d.Allocate<float>(4)).Dispose());
            c.Fine("pinned memory disposed twice", ctx => Disposed(d.AllocatePinned<float>(4)).Dispose());
            c.Fine("a registered array disposed twice", ctx => Disposed(PinnedBuffer<float>.Register(d, new float[16])).Dispose());
            c.Fine("a stream disposed twice", ctx => Disposed(d.CreateStream()).Dispose());
            c.Fine("an event disposed twice", ctx => Disposed(d.CreateEvent()).Dispose());
            c.Fine("a plan disposed twice", ctx => Disposed(k.Prepare(4, 256)).Dispose());
            c.Fine("a graph and its instance disposed twice", ctx =>
            {
                using (var s = d.CreateStream())
                {
                    var g = Captured(f, s);
                    var e = g.Instantiate();
                    g.Dispose();
                    e.Dispose();
                    g.Dispose();
                    e.Dispose();
                }
            });
        }

        // --- Launch arguments: the library's signature check as ArgumentException,
        // and what only the binding sees --------------------------------------

        private static void LaunchCases(Corpus c, GpuFixture f)
        {
            Kernel k = f.Saxpy;
            c.Throws<ArgumentException>("a 4-byte n for a size_t parameter (the overview's bug)", "args",
                "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes", ctx =>
                {
                    Mark(f);
                    k.Launch(4, 256, null, 2.0f, f.A, f.A, f.B, (uint)N);
                }, ctx =>
                {
                    Untouched(ctx, f);
                    var inner = ctx.Thrown == null ? null : ctx.Thrown.InnerException as CudaException;
                    ctx.Expect(inner != null && inner.Status == CudaStatus.InvalidArgument, "no CudaException InvalidArgument inside");
                });
            c.Throws<ArgumentException>("a double for a float parameter", "args", "parameter 0 is 4 bytes", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0, f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("four arguments for five parameters", "args", "takes 5 parameters, but 4 were given", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, f.A, f.A, f.B);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a null argument array", "args", "but 0 were given", ctx =>
            {
                Mark(f);
                k.Launch(new LaunchConfig(4, 256), null, (object[])null);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentNullException>("a null argument", "args[2]", "argument 2 is null", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, f.A, null, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a string argument", "args[0]", "cannot be passed by value", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, "2.0", f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a host array as a pointer argument", "args[1]", "System.Single[]", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, new float[N], f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a struct holding a reference", "args[0]", "cannot be passed by value", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, new WithReference { Value = "x" }, f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a 4-byte n on a configuration the kernel has prepared", "args", "parameter 4 is 8 bytes", ctx =>
            {
                // The same configuration twice makes the kernel prepare it;
                // the wrong argument then goes through the prepared launch.
                Mark(f);
                k.Launch(2, 512, null, f.Args());
                k.Launch(2, 512, null, f.Args());
                f.B.Memset(0xAB);
                k.Launch(2, 512, null, 2.0f, f.A, f.A, f.B, (uint)N);
            }, ctx => Untouched(ctx, f));
            c.Fine("a right launch after the refused ones", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, f.Args());
            }, ctx => Launched(ctx, f));
            c.Cuda("grid x of zero", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "zero dimension", ctx =>
            {
                Mark(f);
                k.Launch(new LaunchConfig(0, 32), null, f.Args());
            }, ctx => Untouched(ctx, f));
            c.Cuda("plan with a zero grid", "cuabi_launch_plan_create", CudaStatus.InvalidArgument, "zero dimension",
                ctx => k.Prepare(0, 32));

            // Plans: after each refused setter the plan still launches its old arguments.
            Func<LaunchPlan> freshPlan = () =>
            {
                Mark(f);
                var p = k.Prepare(4, 256);
                p.SetArguments(f.Args());
                return p;
            };
            Action<CaseContext, LaunchPlan> stillRight = (ctx, p) =>
            {
                f.B.Memset(0);
                p.Launch();
                Launched(ctx, f);
                p.Dispose();
            };
            LaunchPlan current = null;
            c.Throws<ArgumentException>("plan: a 4-byte n for a size_t parameter", "value", "parameter 4 is 8 bytes",
                ctx => (current = freshPlan()).Set(4, (uint)N), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: a buffer for a float parameter", "value", "parameter 0 is 4 bytes",
                ctx => (current = freshPlan()).Set(0, f.A), ctx => stillRight(ctx, current));
            c.Throws<ArgumentOutOfRangeException>("plan: parameter index 5 of 5", "index", "there is no parameter 5",
                ctx => (current = freshPlan()).Set(5, 1.0f), ctx => stillRight(ctx, current));
            c.Throws<ArgumentOutOfRangeException>("plan: parameter index -1", "index", "cannot be negative",
                ctx => (current = freshPlan()).Set(-1, 1.0f), ctx => stillRight(ctx, current));
            c.Throws<ArgumentNullException>("plan: a null buffer", "buffer", "argument 1 is null",
                ctx => (current = freshPlan()).Set(1, (DeviceBuffer<float>)null), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: four arguments for five parameters", "args", "takes 5 parameters, but 4",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, f.B), ctx => stillRight(ctx, current));
            c.Throws<ArgumentNullException>("plan: a null among the arguments", "args[3]", "argument 3 is null",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, null, (ulong)N), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: every argument set with a 4-byte n (none is written)", "args", "parameter 4 is 8 bytes",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, f.B, (uint)N), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: a 4-byte n after its kernel was disposed (the plan holds the kernel for the check)",
                "value", "parameter 4 is 8 bytes", ctx =>
                {
                    var kernel = f.SaxpyModule.GetKernel("saxpy");
                    current = kernel.Prepare(4, 256);
                    kernel.Dispose();
                    Mark(f);
                    current.SetArguments(f.Args());
                    current.Set(4, (uint)N);
                }, ctx => stillRight(ctx, current));

            // Lifetimes: objects that outlive what they were made from.
            c.Fine("module disposed while its kernel is held: the kernel still launches", ctx =>
            {
                var m = f.Device.Compile(NoGpuTests.SaxpySource);
                using (var kernel = m.GetKernel("saxpy"))
                {
                    m.Dispose();
                    string r = SaxpyResult(f, kernel, null, 4096);
                    if (r != null)
                        ctx.Problem(r);
                }
            });
            c.Fine("a plan outlives its module, kernel and stream", ctx =>
            {
                var m = f.Device.LoadModule(f.Cubin);
                var kernel = m.GetKernel("saxpy");
                var s = f.Device.CreateStream();
                using (var p = kernel.Prepare(4, 256, s))
                {
                    kernel.Dispose();
                    m.Dispose();
                    s.Dispose();
                    Mark(f);
                    p.SetArguments(f.Args());
                    p.Launch();
                    Launched(ctx, f);
                }
            });
            c.Fine("device disposed while its buffer is held: the buffer still works", ctx =>
            {
                var dev = Device.Get(0);
                using (var buf = dev.Allocate<byte>(64))
                {
                    dev.Dispose();
                    buf.Memset(0xAB);
                    byte[] v = buf.ToArray();
                    ctx.Expect(v[0] == 0xAB && v[63] == 0xAB, "wrong data after the device was disposed");
                }
            });
            c.Fine("a kernel and its plans dropped without Dispose: the finalizers release the kernel's handle", ctx =>
            {
                IntPtr raw = IntPtr.Zero;
                var t = new Thread(() =>
                {
                    var kernel = f.SaxpyModule.GetKernel("saxpy");
                    kernel.Prepare(4, 256).SetArguments(f.Args());
                    for (int i = 0; i < 3; i++) // the kernel prepares this configuration for itself
                        kernel.Launch(4, 256, null, f.Args());
                    raw = kernel.Handle.DangerousGetHandle();
                });
                t.Start();
                t.Join();
                f.Device.Synchronize();
                for (int i = 0; i < 3; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
                UIntPtr count = UIntPtr.Zero, size;
                ctx.Expect(NativeMethods.cuabi_function_get_params(AsFunction(raw), null, ref count, out size) == CudaStatus.InvalidHandle,
                    "the dropped kernel's handle is still live");
            });
        }

        // --- Modules and names: strings C cannot be given, and the library's refusals

        private static void ModuleCases(Corpus c, GpuFixture f)
        {
            Device d = f.Device;
            Func<CompileOptions> noCache = () => new CompileOptions { UseCache = false };
            c.Cuda("an unknown kernel", "cuabi_module_get_function", CudaStatus.NotFound, "no kernel named 'no_such_kernel'",
                ctx => f.SaxpyModule.GetKernel("no_such_kernel"));
            c.Throws<ArgumentNullException>("a null kernel name", "name", "name", ctx => f.SaxpyModule.GetKernel(null));
            c.Throws<ArgumentException>("a kernel name with an embedded NUL", "name", "NUL character",
                ctx => f.SaxpyModule.GetKernel("saxpy\0junk"));
            c.Throws<ArgumentException>("a kernel name with a lone surrogate", "name", "unpaired surrogate",
                ctx => f.SaxpyModule.GetKernel("sax\uD800py"));
            c.Cuda("an unknown global", "cuabi_module_get_global", CudaStatus.NotFound, "no global named 'no_such_global'",
                ctx => f.SaxpyModule.GetGlobal("no_such_global"));
            c.Throws<ArgumentNullException>("a null global name", "name", "name", ctx => f.SaxpyModule.GetGlobal(null));
            c.Throws<ArgumentNullException>("a null lowered-name expression", "expression", "expression",
                ctx => f.SaxpyModule.GetLoweredName(null));
            c.Cuda("device ordinal -1", "cuabi_device_get", CudaStatus.NoDevice, "no CUDA device -1", ctx => Device.Get(-1));
            c.Cuda("an unknown capture mode", "cuabi_stream_begin_capture", CudaStatus.InvalidArgument, "mode 99",
                ctx => f.Stream.BeginCapture((CaptureMode)99));
            c.Throws<ArgumentNullException>("waiting on a null event", "event", "event", ctx => f.Stream.WaitEvent(null));
            c.Throws<ArgumentNullException>("elapsed time from a null start", "start", "start",
                ctx => CudaEvent.ElapsedMilliseconds(null, f.Timed));

            c.Throws<ArgumentException>("an empty image", "image", "is empty", ctx => d.LoadModule(new byte[0]));
            c.Throws<ArgumentNullException>("a null image", "image", "image", ctx => d.LoadModule((byte[])null));
            c.Cuda("random bytes as an image", "cuabi_module_load_data", CudaStatus.Cuda, "cuModuleLoadData", ctx =>
            {
                var junk = new byte[256];
                for (int i = 0; i < junk.Length; i++)
                    junk[i] = (byte)(i * 131 + 7);
                d.LoadModule(junk);
            });
            c.Throws<ArgumentNullException>("null PTX text", "ptx", "ptx", ctx => d.LoadModule((string)null));
            c.Throws<ArgumentException>("PTX text with an embedded NUL", "ptx", "NUL character", ctx => d.LoadModule(".version 8.0\0junk"));
            c.Throws<ArgumentException>("PTX text with a lone surrogate", "ptx", "unpaired surrogate", ctx => d.LoadModule("// \uDFFF\n"));
            c.Cuda("a file that does not exist", "cuabi_module_load_file", CudaStatus.IO, "/nonexistent/kernel.cubin",
                ctx => d.LoadModuleFile("/nonexistent/kernel.cubin"));
            c.Throws<ArgumentNullException>("a null path", "path", "path", ctx => d.LoadModuleFile(null));
            c.Throws<ArgumentException>("a path with an embedded NUL", "path", "NUL character", ctx => d.LoadModuleFile("/tmp/a\0.cubin"));
            c.Throws<ArgumentException>("a path with a lone surrogate", "path", "unpaired surrogate", ctx => d.LoadModuleFile("/tmp/\uD800.cubin"));

            c.Cuda("a compile error, with the log", "cuabi_module_compile", CudaStatus.Compile, "undefined_in_module",
                ctx => d.Compile("extern \"C\" __global__ void k(int* p) { *p = undefined_in_module; }", noCache()),
                ctx => LogHolds(ctx, "undefined_in_module"));
            c.Cuda("an output kind that does not exist", "cuabi_module_compile", CudaStatus.InvalidArgument, "desc->output is 7",
                ctx => d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Output = (CompileOutput)7 }));
            c.Throws<ArgumentNullException>("a null source", "source", "source", ctx => d.Compile(null));
            c.Throws<ArgumentException>("a source with a lone surrogate", "source", "unpaired surrogate",
                ctx => d.Compile("// \uD800\n" + NoGpuTests.SaxpySource));
            c.Throws<ArgumentException>("a name with an embedded NUL", "options.Name", "NUL character",
                ctx => d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "a\0.cu" }));
            c.Throws<ArgumentNullException>("a null option", "options.Options[0]", "options.Options[0]", ctx =>
            {
                var o = noCache();
                o.Options.Add(null);
                d.Compile(NoGpuTests.SaxpySource, o);
            });
            c.Throws<ArgumentNullException>("a null name expression", "options.NameExpressions[0]", "options.NameExpressions[0]", ctx =>
            {
                var o = noCache();
                o.NameExpressions.Add(null);
                d.Compile(NoGpuTests.SaxpySource, o);
            });
            c.Throws<ArgumentNullException>("a header whose contents are null", "options.Headers (source)[0]",
                "options.Headers (source)[0]", ctx =>
                {
                    var o = noCache();
                    o.Headers.Add("a.h", null);
                    d.Compile(NoGpuTests.SaxpySource, o);
                });
        }

        // --- A smoke subset of the library's cases, through NativeMethods ----

        private static void RawGpuCases(Corpus c, GpuFixture f)
        {
            SafeFunctionHandle saxpy = f.Saxpy.Handle;
            c.Cuda("released buffer", "cuabi_buffer_get_size", CudaStatus.InvalidHandle, "buffer is not a live cuabi_buffer", ctx =>
            {
                var buf = f.Device.Allocate<float>(4);
                IntPtr raw = buf.Handle.DangerousGetHandle();
                buf.Dispose();
                UIntPtr n;
                Check(NativeMethods.cuabi_buffer_get_size(new SafeBufferHandle(raw, false), out n));
            });
            c.Cuda("buffer handle as a module", "cuabi_module_get_function", CudaStatus.InvalidHandle, "it is a cuabi_buffer", ctx =>
            {
                SafeFunctionHandle fn;
                Check(NativeMethods.cuabi_module_get_function(AsModule(f.A.Handle.DangerousGetHandle()), Z("saxpy"), out fn));
            });
            c.Cuda("a parameter layout into 2 entries for 5", "cuabi_function_get_params", CudaStatus.InsufficientBuffer,
                "params holds 2 entries", ctx =>
                {
                    var info = new ParamInfoNative[2];
                    UIntPtr count = (UIntPtr)2u, size;
                    CudaStatus st = NativeMethods.cuabi_function_get_params(saxpy, info, ref count, out size);
                    ctx.Expect(count.ToUInt64() == 5, "*count is " + count + ", not the 5 needed");
                    ctx.Expect(info[0].size == UIntPtr.Zero, "a too-small array was written");
                    Check(st);
                });
            c.Cuda("argument sizes NULL with a count", "cuabi_function_check_arg_sizes", CudaStatus.InvalidArgument, "sizes is NULL",
                ctx => Check(NativeMethods.cuabi_function_check_arg_sizes(saxpy, null, (UIntPtr)5u)));
            c.Cuda("one argument size past the last parameter", "cuabi_function_check_arg_size", CudaStatus.InvalidArgument,
                "there is no parameter 18446744073709551615",
                ctx => Check(NativeMethods.cuabi_function_check_arg_size(saxpy, new UIntPtr(ulong.MaxValue), (UIntPtr)8u)));
            c.Fine("the right argument sizes pass the check", ctx =>
            {
                var sizes = new[] { (UIntPtr)4u, (UIntPtr)8u, (UIntPtr)8u, (UIntPtr)8u, (UIntPtr)8u };
                ctx.Expect(NativeMethods.cuabi_function_check_arg_sizes(saxpy, sizes, (UIntPtr)5u) == CudaStatus.Success, "refused");
            });
            c.Cuda("a packed block of 36 bytes for 40", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "40-byte argument block",
                ctx =>
                {
                    Mark(f);
                    var cfg = LaunchConfigNative.Create();
                    IntPtr block = Marshal.AllocHGlobal(40);
                    try
                    {
                        Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref cfg, new SafeStreamHandle(), block, (UIntPtr)36u));
                    }
                    finally
                    {
                        Marshal.FreeHGlobal(block);
                    }
                }, ctx => Untouched(ctx, f));
        }
    }
}
