// The bad-input corpus through the C# binding: a table of cases, each one
// wrong input with the exception it must give and a piece of text its
// message must hold (the thing at fault). The runner checks every case the
// same way and prints how many ran and passed, so the count in the output is
// the table's. It mirrors the C ABI corpus (tests/hardening/corpus_*_test.cc)
// through the classes users use and, where those make a mistake impossible,
// through NativeMethods with raw handle values and raw bytes.
//
// Two parts: the one that needs NVRTC only, and the one that needs a device
// (reported as skipped without one, like every GPU test).

using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
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
        private static readonly UIntPtr SizeMax = new UIntPtr(ulong.MaxValue); // (size_t)-1

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
            public IntPtr HostMemory = Marshal.AllocHGlobal(64); // a host pointer, as a made-up handle value

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
                Marshal.FreeHGlobal(HostMemory);
            }
        }

        private static void RunCpu()
        {
            using (var f = new CpuFixture())
            {
                var corpus = new Corpus();
                SafeCpuCases(corpus, f);
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

        /// <summary>Compiles and expects it to work; reports the failure as a problem of the case.</summary>
        private static void CompileOk(CaseContext ctx, Program p, params string[] options)
        {
            try
            {
                p.Compile(options);
            }
            catch (CudaException e)
            {
                ctx.Problem("setup compile failed: " + e.Message);
            }
        }

        private static void LogHolds(CaseContext ctx, string needle)
        {
            var e = ctx.Thrown as CudaException;
            if (e != null && (e.CompileLog == null || e.CompileLog.IndexOf(needle, StringComparison.Ordinal) < 0))
                ctx.Problem("CompileLog lacks '" + needle + "'");
        }

        // --- Through the safe layer: programs, strings, options -------------

        private static void SafeCpuCases(Corpus c, CpuFixture f)
        {
            // Program creation: nulls, NULs and unpaired surrogates, refused before C.
            c.Throws<ArgumentNullException>("source is null", "source", "source",
                ctx => new Program(null));
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

            // Compile options.
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
            c.Cuda("an empty option", "cuabi_program_compile", CudaStatus.InvalidArgument, "options[0] is empty", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("");
            });
            c.Cuda("an option of 100 KiB", "cuabi_program_compile", CudaStatus.InvalidArgument, "options[1] is longer than 64 KiB", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("-w", "-D" + new string('X', 100 * 1024));
            });
            c.Cuda("compiled twice", "cuabi_program_compile", CudaStatus.InvalidArgument, "already compiled",
                ctx => f.Compiled.Compile(Sm),
                ctx => ctx.Expect(f.Compiled.Ptx.Contains(".entry"), "the program lost its PTX after the refused compile"));
            c.Cuda("an unknown option", "cuabi_program_compile", CudaStatus.Compile, "--no-such-option", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("--no-such-option");
            }, ctx => LogHolds(ctx, "--no-such-option"));
            c.Cuda("an architecture that does not exist", "cuabi_program_compile", CudaStatus.Compile, "--gpu-architecture", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("--gpu-architecture=sm_1");
            });
            c.Cuda("a virtual architecture that does not exist", "cuabi_program_compile", CudaStatus.Compile,
                "invalid value for --gpu-architecture", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("--gpu-architecture=compute_1");
            });
            c.Cuda("an option missing its value", "cuabi_program_compile", CudaStatus.Compile, "NVRTC rejected the options", ctx =>
            {
                using (var p = new Program(Tiny))
                    p.Compile("--gpu-architecture");
            });

            // Compile errors, with NVRTC's log.
            c.Cuda("a syntax error", "cuabi_program_compile", CudaStatus.Compile, "could not compile the source", ctx =>
            {
                using (var p = new Program("extern \"C\" __global__ void k( {"))
                    p.Compile(Compute);
            }, ctx => LogHolds(ctx, "error"));
            c.Cuda("an undefined identifier", "cuabi_program_compile", CudaStatus.Compile, "undefined_identifier_xyz", ctx =>
            {
                using (var p = new Program("extern \"C\" __global__ void k(int* x) { *x = undefined_identifier_xyz; }"))
                    p.Compile(Compute);
            }, ctx => LogHolds(ctx, "undefined_identifier_xyz"));
            c.Cuda("a missing include", "cuabi_program_compile", CudaStatus.Compile, "missing_header.h", ctx =>
            {
                using (var p = new Program("#include \"missing_header.h\"\n"))
                    p.Compile(Compute);
            }, ctx => LogHolds(ctx, "missing_header.h"));
            c.Cuda("an #error directive", "cuabi_program_compile", CudaStatus.Compile, "custom failure marker", ctx =>
            {
                using (var p = new Program("#error custom failure marker\n"))
                    p.Compile(Compute);
            });
            c.Cuda("an error inside a given header", "cuabi_program_compile", CudaStatus.Compile, "bad_header.h", ctx =>
            {
                var headers = new Dictionary<string, string> { { "bad_header.h", "int broken(;\n" } };
                using (var p = new Program("#include \"bad_header.h\"\n", null, headers))
                    p.Compile(Compute);
            });
            c.Cuda("a name expression naming nothing", "cuabi_program_compile", CudaStatus.Compile, "no_such_template", ctx =>
            {
                using (var p = new Program(Template))
                {
                    p.AddNameExpression("no_such_template<int>");
                    p.Compile(Compute);
                }
            });
            c.Cuda("the error is reported in the program's file name", "cuabi_program_compile", CudaStatus.Compile, "named_in_log.cu", ctx =>
            {
                using (var p = new Program("int broken(;\n", "named_in_log.cu"))
                    p.Compile(Compute);
            });

            // Name expressions and lowered names.
            c.Throws<ArgumentNullException>("a null name expression", "expression", "expression", ctx =>
            {
                using (var p = new Program(Template))
                    p.AddNameExpression(null);
            });
            c.Cuda("an empty name expression", "cuabi_program_add_name_expression", CudaStatus.InvalidArgument, "expression is empty", ctx =>
            {
                using (var p = new Program(Template))
                    p.AddNameExpression("");
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
            c.Cuda("a name expression added after compiling", "cuabi_program_add_name_expression", CudaStatus.InvalidArgument,
                "before the program is compiled", ctx => f.Compiled.AddNameExpression("store<float>"));
            c.Throws<ArgumentNullException>("the lowered name of null", "expression", "expression",
                ctx => f.Compiled.GetLoweredName(null));
            c.Cuda("the lowered name of an expression never added", "cuabi_program_get_lowered_name", CudaStatus.NotFound,
                "store<double>", ctx => f.Compiled.GetLoweredName("store<double>"));
            c.Cuda("the lowered name of an empty expression", "cuabi_program_get_lowered_name", CudaStatus.InvalidArgument,
                "expression is empty", ctx => f.Compiled.GetLoweredName(""));
            c.Cuda("the lowered name before compiling", "cuabi_program_get_lowered_name", CudaStatus.NotFound, "before compiling", ctx =>
            {
                using (var p = new Program(Template))
                {
                    p.AddNameExpression("store<int>");
                    p.GetLoweredName("store<int>");
                }
            });
            c.Throws<ArgumentException>("the lowered name of an expression with a lone surrogate", "expression", "unpaired surrogate",
                ctx => f.Compiled.GetLoweredName("store<\uDBFF>"));
            c.Throws<ArgumentException>("the lowered name of an expression with an embedded NUL", "expression", "NUL character",
                ctx => f.Compiled.GetLoweredName("store<int>\0"));

            // Results that a program does not have.
            c.Cuda("PTX before compiling", "cuabi_program_get_ptx", CudaStatus.NotFound, "compiled", ctx => { var unused = f.Fresh.Ptx; });
            c.Cuda("CUBIN before compiling", "cuabi_program_get_cubin", CudaStatus.NotFound, "compiled", ctx => { var unused = f.Fresh.Cubin; });
            c.Cuda("PTX after a failed compile", "cuabi_program_get_ptx", CudaStatus.NotFound, "compiled", ctx => { var unused = f.Failed.Ptx; });
            c.Cuda("CUBIN after a failed compile", "cuabi_program_get_cubin", CudaStatus.NotFound, "compiled", ctx => { var unused = f.Failed.Cubin; });
            c.Cuda("CUBIN of a compute_XY compile", "cuabi_program_get_cubin", CudaStatus.NotFound, "CUBIN", ctx => { var unused = f.PtxOnly.Cubin; });
            c.Fine("the log of a failed compile holds the error", ctx => ctx.Expect(f.Failed.Log.Contains("error"), "the log has no error"));

            // Disposed programs: refused by the binding, naming the class.
            c.Throws<ObjectDisposedException>("Compile on a disposed program", null, "Cuabi.Program", ctx => Disposed().Compile(Compute));
            c.Throws<ObjectDisposedException>("AddNameExpression on a disposed program", null, "Cuabi.Program",
                ctx => Disposed(Template).AddNameExpression("store<int>"));
            c.Throws<ObjectDisposedException>("Log of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Log; });
            c.Throws<ObjectDisposedException>("Ptx of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Ptx; });
            c.Throws<ObjectDisposedException>("Cubin of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Cubin; });
            c.Throws<ObjectDisposedException>("GetLoweredName on a disposed program", null, "Cuabi.Program",
                ctx => Disposed(Template).GetLoweredName("store<int>"));
            c.Throws<ObjectDisposedException>("Handle of a disposed program", null, "Cuabi.Program", ctx => { var unused = Disposed().Handle; });
            c.Fine("a program disposed twice", ctx =>
            {
                var p = new Program(Tiny);
                p.Dispose();
                p.Dispose();
            });
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

            // Launch dimensions refused before anything is called.
            c.Throws<ArgumentOutOfRangeException>("a negative dimension", "x", "cannot be negative", ctx => ((Dim3)(-1)).ToString());
            c.Throws<ArgumentOutOfRangeException>("a negative grid in a launch configuration", "x", "cannot be negative",
                ctx => new LaunchConfig(int.MinValue, 32));
        }

        // --- Through NativeMethods, with raw values -------------------------

        private static void Check(int status)
        {
            Errors.Check(status);
        }

        // Non-owning SafeHandles around raw values: what the C ABI receives.
        private static SafeDeviceHandle AsDevice(IntPtr v) { return new SafeDeviceHandle(v, false); }
        private static SafeProgramHandle AsProgram(IntPtr v) { return new SafeProgramHandle(v, false); }
        private static SafeModuleHandle AsModule(IntPtr v) { return new SafeModuleHandle(v, false); }
        private static SafeFunctionHandle AsFunction(IntPtr v) { return new SafeFunctionHandle(v, false); }
        private static SafeBufferHandle AsBuffer(IntPtr v) { return new SafeBufferHandle(v, false); }
        private static SafeHostBufferHandle AsHostBuffer(IntPtr v) { return new SafeHostBufferHandle(v, false); }
        private static SafeStreamHandle AsStream(IntPtr v) { return new SafeStreamHandle(v, false); }
        private static SafeEventHandle AsEvent(IntPtr v) { return new SafeEventHandle(v, false); }
        private static SafeGraphHandle AsGraph(IntPtr v) { return new SafeGraphHandle(v, false); }
        private static SafeGraphExecHandle AsGraphExec(IntPtr v) { return new SafeGraphExecHandle(v, false); }
        private static SafeLaunchPlanHandle AsPlan(IntPtr v) { return new SafeLaunchPlanHandle(v, false); }

        /// <summary>The kind bits of a handle value replaced by <paramref name="kind"/> (1 = device ... 11 = launch plan).</summary>
        private static IntPtr WithKind(IntPtr handle, long kind)
        {
            return new IntPtr((handle.ToInt64() & ~(0xFFL << 24)) | (kind << 24));
        }

        /// <summary>A NUL-terminated byte string, one byte per char (chars up to U+00FF): for bytes that are not UTF-8.</summary>
        private static byte[] Z(string latin1)
        {
            var b = new byte[latin1.Length + 1];
            for (int i = 0; i < latin1.Length; i++)
                b[i] = checked((byte)latin1[i]);
            return b;
        }

        private static bool IsUtf8(byte[] bytes, int length)
        {
            try
            {
                new UTF8Encoding(false, true).GetString(bytes, 0, length);
                return true;
            }
            catch (ArgumentException)
            {
                return false;
            }
        }

        /// <summary>Whether the calling thread's last error message is valid UTF-8, read as raw bytes.</summary>
        private static bool LastMessageIsUtf8()
        {
            IntPtr p = NativeMethods.cuabi_last_error_message();
            if (p == IntPtr.Zero)
                return true;
            int n = 0;
            while (Marshal.ReadByte(p, n) != 0)
                n++;
            var bytes = new byte[n];
            Marshal.Copy(p, bytes, 0, n);
            return IsUtf8(bytes, n);
        }

        /// <summary>The program's log as raw bytes, checked to be UTF-8.</summary>
        private static void LogIsUtf8(CaseContext ctx, SafeProgramHandle h)
        {
            UIntPtr size = UIntPtr.Zero;
            if (NativeMethods.cuabi_program_get_log(h, null, ref size) != 0)
            {
                ctx.Problem("the log's size could not be read");
                return;
            }
            var buf = new byte[(int)size.ToUInt64()];
            if (buf.Length > 0 && NativeMethods.cuabi_program_get_log(h, buf, ref size) != 0)
                ctx.Problem("the log could not be read");
            else if (!IsUtf8(buf, Math.Max(buf.Length - 1, 0)))
                ctx.Problem("the compile log is not UTF-8");
        }

        /// <summary>Unmanaged strings and pointer arrays for raw calls, freed on dispose.</summary>
        private sealed class RawStrings : IDisposable
        {
            private readonly List<IntPtr> blocks = new List<IntPtr>();

            public IntPtr Str(byte[] bytes)
            {
                IntPtr p = Marshal.AllocHGlobal(bytes.Length);
                Marshal.Copy(bytes, 0, p, bytes.Length);
                blocks.Add(p);
                return p;
            }

            public IntPtr Str(string text)
            {
                return Str(Utf8.Encode(text, "text"));
            }

            public IntPtr Array(params IntPtr[] items)
            {
                IntPtr p = Marshal.AllocHGlobal(IntPtr.Size * Math.Max(items.Length, 1));
                for (int i = 0; i < items.Length; i++)
                    Marshal.WriteIntPtr(p, i * IntPtr.Size, items[i]);
                blocks.Add(p);
                return p;
            }

            /// <summary>An array of <paramref name="count"/> copies of one string, with NULL last.</summary>
            public IntPtr Repeated(string text, int count)
            {
                IntPtr one = Str(text);
                var items = new IntPtr[count];
                for (int i = 0; i < count - 1; i++)
                    items[i] = one;
                return Array(items);
            }

            public void Dispose()
            {
                foreach (IntPtr p in blocks)
                    Marshal.FreeHGlobal(p);
                blocks.Clear();
            }
        }

        /// <summary>Creates a program from raw source bytes (and headers), for the cases that compile it.</summary>
        private static SafeProgramHandle CreateRaw(CaseContext ctx, byte[] source, byte[] name = null,
            byte[] headerSource = null, byte[] headerName = null)
        {
            using (var r = new RawStrings())
            {
                SafeProgramHandle h;
                int st = headerSource == null
                    ? NativeMethods.cuabi_program_create(source, name, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h)
                    : NativeMethods.cuabi_program_create(source, name, (UIntPtr)1u, r.Array(r.Str(headerSource)),
                        r.Array(r.Str(headerName)), out h);
                if (st != 0)
                    ctx.Problem("cuabi_program_create answered " + Cuabi.Cuda.StatusName((CudaStatus)st));
                return h;
            }
        }

        private static int CompileRaw(SafeProgramHandle h, params string[] options)
        {
            using (var r = new RawStrings())
            {
                var items = new IntPtr[options.Length];
                for (int i = 0; i < options.Length; i++)
                    items[i] = r.Str(options[i]);
                return NativeMethods.cuabi_program_compile(h, (UIntPtr)(uint)options.Length,
                    options.Length == 0 ? IntPtr.Zero : r.Array(items));
            }
        }

        private static void RawCpuCases(Corpus c, CpuFixture f)
        {
            IntPtr pv = f.Live;
            var noStream = new SafeStreamHandle();

            // Program handles: NULL, released, stale, through each program call.
            var programCalls = new List<KeyValuePair<string, Func<SafeProgramHandle, int>>>
            {
                new KeyValuePair<string, Func<SafeProgramHandle, int>>("cuabi_program_add_name_expression",
                    h => NativeMethods.cuabi_program_add_name_expression(h, Z("store<int>"))),
                new KeyValuePair<string, Func<SafeProgramHandle, int>>("cuabi_program_compile", h => CompileRaw(h, Sm)),
                new KeyValuePair<string, Func<SafeProgramHandle, int>>("cuabi_program_get_log", h =>
                {
                    UIntPtr n = UIntPtr.Zero;
                    return NativeMethods.cuabi_program_get_log(h, null, ref n);
                }),
                new KeyValuePair<string, Func<SafeProgramHandle, int>>("cuabi_program_get_ptx", h =>
                {
                    UIntPtr n = UIntPtr.Zero;
                    return NativeMethods.cuabi_program_get_ptx(h, null, ref n);
                }),
                new KeyValuePair<string, Func<SafeProgramHandle, int>>("cuabi_program_get_cubin", h =>
                {
                    UIntPtr n = UIntPtr.Zero;
                    return NativeMethods.cuabi_program_get_cubin(h, null, ref n);
                }),
                new KeyValuePair<string, Func<SafeProgramHandle, int>>("cuabi_program_get_lowered_name", h =>
                {
                    UIntPtr n = UIntPtr.Zero;
                    return NativeMethods.cuabi_program_get_lowered_name(h, Z("store<int>"), null, ref n);
                }),
            };
            foreach (var pc in programCalls)
            {
                var fn = pc.Value;
                c.Cuda("NULL program", pc.Key, CudaStatus.InvalidHandle, "program is NULL",
                    ctx => Check(fn(new SafeProgramHandle())));
                c.Cuda("released program", pc.Key, CudaStatus.InvalidHandle, "program is not a live cuabi_program",
                    ctx => Check(fn(AsProgram(f.Released))));
                c.Cuda("stale program (its slot reused by a live one)", pc.Key, CudaStatus.InvalidHandle,
                    "program is not a live cuabi_program", ctx => Check(fn(AsProgram(f.Stale))), ctx =>
                    {
                        UIntPtr n = UIntPtr.Zero;
                        ctx.Expect(NativeMethods.cuabi_program_get_log(f.Reuser.Handle, null, ref n) == 0,
                            "the live program that reused the slot stopped working");
                    });
            }

            // A live program handle where another kind is expected.
            c.Cuda("program handle as a device", "cuabi_device_get_name", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                Check(NativeMethods.cuabi_device_get_name(AsDevice(pv), null, ref n));
            });
            c.Cuda("program handle as a module", "cuabi_module_get_function", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                SafeFunctionHandle fn;
                int st = NativeMethods.cuabi_module_get_function(AsModule(pv), Z("tiny"), out fn);
                ctx.Expect(fn.IsInvalid, "out was written although the call failed");
                Check(st);
            });
            c.Cuda("program handle as a function", "cuabi_function_get_name", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                Check(NativeMethods.cuabi_function_get_name(AsFunction(pv), null, ref n));
            });
            c.Cuda("program handle as a buffer", "cuabi_buffer_get_size", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                UIntPtr n;
                Check(NativeMethods.cuabi_buffer_get_size(AsBuffer(pv), out n));
            });
            c.Cuda("program handle as a host buffer", "cuabi_host_buffer_get_size", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                UIntPtr n;
                Check(NativeMethods.cuabi_host_buffer_get_size(AsHostBuffer(pv), out n));
            });
            c.Cuda("program handle as a stream", "cuabi_stream_synchronize", CudaStatus.InvalidHandle, "it is a cuabi_program",
                ctx => Check(NativeMethods.cuabi_stream_synchronize(AsStream(pv))));
            c.Cuda("program handle as an event", "cuabi_event_query", CudaStatus.InvalidHandle, "it is a cuabi_program",
                ctx => Check(NativeMethods.cuabi_event_query(AsEvent(pv))));
            c.Cuda("program handle as a graph", "cuabi_graph_get_node_count", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                UIntPtr n;
                Check(NativeMethods.cuabi_graph_get_node_count(AsGraph(pv), out n));
            });
            c.Cuda("program handle as a graph exec", "cuabi_graph_exec_launch", CudaStatus.InvalidHandle, "it is a cuabi_program",
                ctx => Check(NativeMethods.cuabi_graph_exec_launch(AsGraphExec(pv), noStream)));
            c.Cuda("program handle as a launch plan", "cuabi_launch_plan_launch", CudaStatus.InvalidHandle, "it is a cuabi_program",
                ctx => Check(NativeMethods.cuabi_launch_plan_launch(AsPlan(pv))));
            c.Cuda("program handle as the launch's function", "cuabi_function_launch_packed", CudaStatus.InvalidHandle,
                "function is not a live cuabi_function", ctx =>
                {
                    var cfg = LaunchConfigNative.Create();
                    Check(NativeMethods.cuabi_function_launch_packed(AsFunction(pv), ref cfg, noStream, IntPtr.Zero, UIntPtr.Zero));
                });
            c.Cuda("program handle as the compile's device", "cuabi_module_compile", CudaStatus.InvalidHandle,
                "device is not a live cuabi_device", ctx =>
                {
                    using (var r = new RawStrings())
                    {
                        var d = CompileDescNative.Create();
                        d.source = r.Str(Tiny);
                        SafeModuleHandle m;
                        Check(NativeMethods.cuabi_module_compile(AsDevice(pv), ref d, out m));
                    }
                });
            c.Cuda("program handle as the plan's function", "cuabi_launch_plan_create", CudaStatus.InvalidHandle,
                "it is a cuabi_program", ctx =>
                {
                    var cfg = LaunchConfigNative.Create();
                    SafeLaunchPlanHandle plan;
                    int st = NativeMethods.cuabi_launch_plan_create(AsFunction(pv), ref cfg, noStream, out plan);
                    ctx.Expect(plan.IsInvalid, "out was written although the call failed");
                    Check(st);
                });
            c.Cuda("program handle with its kind bits forged to a module", "cuabi_module_get_function", CudaStatus.InvalidHandle,
                "module is not a live cuabi_module", ctx =>
                {
                    SafeFunctionHandle fn;
                    Check(NativeMethods.cuabi_module_get_function(AsModule(WithKind(pv, 3)), Z("tiny"), out fn));
                });
            c.Cuda("program handle with its kind bits forged to a buffer", "cuabi_buffer_memset", CudaStatus.InvalidHandle,
                "buffer is not a live cuabi_buffer",
                ctx => Check(NativeMethods.cuabi_buffer_memset(AsBuffer(WithKind(pv, 5)), UIntPtr.Zero, 0, (UIntPtr)16u)));

            // NULL handles of every other kind.
            var nul = IntPtr.Zero;
            c.Cuda("NULL device", "cuabi_device_get_ordinal", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                int o;
                Check(NativeMethods.cuabi_device_get_ordinal(AsDevice(nul), out o));
            });
            c.Cuda("NULL device", "cuabi_device_reset", CudaStatus.InvalidHandle, "device is NULL",
                ctx => Check(NativeMethods.cuabi_device_reset(AsDevice(nul))));
            c.Cuda("NULL device", "cuabi_device_synchronize", CudaStatus.InvalidHandle, "device is NULL",
                ctx => Check(NativeMethods.cuabi_device_synchronize(AsDevice(nul))));
            c.Cuda("NULL device", "cuabi_buffer_alloc", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeBufferHandle b;
                Check(NativeMethods.cuabi_buffer_alloc(AsDevice(nul), (UIntPtr)16u, out b));
            });
            c.Cuda("NULL device", "cuabi_host_buffer_alloc", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeHostBufferHandle b;
                Check(NativeMethods.cuabi_host_buffer_alloc(AsDevice(nul), (UIntPtr)16u, out b));
            });
            c.Cuda("NULL device", "cuabi_module_load_data", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeModuleHandle m;
                byte[] image = Z("x");
                var pin = GCHandle.Alloc(image, GCHandleType.Pinned);
                try
                {
                    Check(NativeMethods.cuabi_module_load_data(AsDevice(nul), pin.AddrOfPinnedObject(), (UIntPtr)1u, out m));
                }
                finally
                {
                    pin.Free();
                }
            });
            c.Cuda("NULL device", "cuabi_stream_create", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeStreamHandle s;
                Check(NativeMethods.cuabi_stream_create(AsDevice(nul), 0, 0, out s));
            });
            c.Cuda("NULL device", "cuabi_event_create", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeEventHandle e;
                Check(NativeMethods.cuabi_event_create(AsDevice(nul), 0, out e));
            });
            c.Cuda("NULL module", "cuabi_module_get_function", CudaStatus.InvalidHandle, "module is NULL", ctx =>
            {
                SafeFunctionHandle fn;
                Check(NativeMethods.cuabi_module_get_function(AsModule(nul), Z("tiny"), out fn));
            });
            c.Cuda("NULL module", "cuabi_module_get_global", CudaStatus.InvalidHandle, "module is NULL", ctx =>
            {
                ulong ptr;
                UIntPtr n;
                Check(NativeMethods.cuabi_module_get_global(AsModule(nul), Z("g"), out ptr, out n));
            });
            c.Cuda("NULL module", "cuabi_module_get_from_cache", CudaStatus.InvalidHandle, "module is NULL", ctx =>
            {
                int hit;
                Check(NativeMethods.cuabi_module_get_from_cache(AsModule(nul), out hit));
            });
            c.Cuda("NULL function", "cuabi_function_get_param_count", CudaStatus.InvalidHandle, "function is NULL", ctx =>
            {
                UIntPtr n;
                Check(NativeMethods.cuabi_function_get_param_count(AsFunction(nul), out n));
            });
            c.Cuda("NULL function", "cuabi_function_set_attribute", CudaStatus.InvalidHandle, "function is NULL",
                ctx => Check(NativeMethods.cuabi_function_set_attribute(AsFunction(nul), NativeMethods.CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0)));
            c.Cuda("NULL function", "cuabi_function_launch", CudaStatus.InvalidHandle, "function is NULL", ctx =>
            {
                var cfg = LaunchConfigNative.Create();
                Check(NativeMethods.cuabi_function_launch(AsFunction(nul), ref cfg, noStream, IntPtr.Zero, UIntPtr.Zero));
            });
            c.Cuda("NULL function", "cuabi_launch_plan_create", CudaStatus.InvalidHandle, "function is NULL", ctx =>
            {
                var cfg = LaunchConfigNative.Create();
                SafeLaunchPlanHandle plan;
                Check(NativeMethods.cuabi_launch_plan_create(AsFunction(nul), ref cfg, noStream, out plan));
            });
            c.Cuda("NULL buffer", "cuabi_buffer_get_pointer", CudaStatus.InvalidHandle, "buffer is NULL", ctx =>
            {
                ulong ptr;
                Check(NativeMethods.cuabi_buffer_get_pointer(AsBuffer(nul), out ptr));
            });
            c.Cuda("NULL destination buffer", "cuabi_buffer_copy", CudaStatus.InvalidHandle, "dst is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_copy(AsBuffer(nul), UIntPtr.Zero, AsBuffer(nul), UIntPtr.Zero, (UIntPtr)4u)));
            c.Cuda("NULL source buffer", "cuabi_buffer_copy_to_host", CudaStatus.InvalidHandle, "src is NULL", ctx =>
            {
                var host = new byte[4];
                var pin = GCHandle.Alloc(host, GCHandleType.Pinned);
                try
                {
                    Check(NativeMethods.cuabi_buffer_copy_to_host(AsBuffer(nul), UIntPtr.Zero, pin.AddrOfPinnedObject(), (UIntPtr)4u));
                }
                finally
                {
                    pin.Free();
                }
            });
            c.Cuda("NULL buffer", "cuabi_buffer_memset", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_memset(AsBuffer(nul), UIntPtr.Zero, 0, (UIntPtr)4u)));
            c.Cuda("NULL host buffer", "cuabi_host_buffer_get_pointer", CudaStatus.InvalidHandle, "buffer is NULL", ctx =>
            {
                IntPtr p;
                Check(NativeMethods.cuabi_host_buffer_get_pointer(AsHostBuffer(nul), out p));
            });
            c.Cuda("NULL stream", "cuabi_stream_query", CudaStatus.InvalidHandle, "stream is NULL",
                ctx => Check(NativeMethods.cuabi_stream_query(AsStream(nul))));
            c.Cuda("NULL stream", "cuabi_stream_wait_event", CudaStatus.InvalidHandle, "stream is NULL",
                ctx => Check(NativeMethods.cuabi_stream_wait_event(AsStream(nul), AsEvent(nul))));
            c.Cuda("NULL stream", "cuabi_stream_begin_capture", CudaStatus.InvalidHandle, "stream is NULL",
                ctx => Check(NativeMethods.cuabi_stream_begin_capture(AsStream(nul), NativeMethods.CUABI_CAPTURE_GLOBAL)));
            c.Cuda("NULL event", "cuabi_event_synchronize", CudaStatus.InvalidHandle, "event is NULL",
                ctx => Check(NativeMethods.cuabi_event_synchronize(AsEvent(nul))));
            c.Cuda("NULL event", "cuabi_event_record", CudaStatus.InvalidHandle, "event is NULL",
                ctx => Check(NativeMethods.cuabi_event_record(AsEvent(nul), noStream)));
            c.Cuda("NULL start event", "cuabi_event_get_elapsed_ms", CudaStatus.InvalidHandle, "start is NULL", ctx =>
            {
                float ms;
                Check(NativeMethods.cuabi_event_get_elapsed_ms(AsEvent(nul), AsEvent(nul), out ms));
            });
            c.Cuda("NULL graph", "cuabi_graph_instantiate", CudaStatus.InvalidHandle, "graph is NULL", ctx =>
            {
                SafeGraphExecHandle e;
                Check(NativeMethods.cuabi_graph_instantiate(AsGraph(nul), out e));
            });
            c.Cuda("NULL graph exec", "cuabi_graph_exec_launch", CudaStatus.InvalidHandle, "exec is NULL",
                ctx => Check(NativeMethods.cuabi_graph_exec_launch(AsGraphExec(nul), noStream)));
            c.Cuda("NULL plan", "cuabi_launch_plan_get_args", CudaStatus.InvalidHandle, "plan is NULL", ctx =>
            {
                IntPtr args;
                UIntPtr n;
                Check(NativeMethods.cuabi_launch_plan_get_args(AsPlan(nul), out args, out n));
            });
            c.Cuda("NULL plan", "cuabi_launch_plan_launch", CudaStatus.InvalidHandle, "plan is NULL",
                ctx => Check(NativeMethods.cuabi_launch_plan_launch(AsPlan(nul))));
            c.Cuda("made-up plan", "cuabi_launch_plan_get_args", CudaStatus.InvalidHandle, "plan is not a live cuabi_launch_plan", ctx =>
            {
                IntPtr args;
                UIntPtr n;
                Check(NativeMethods.cuabi_launch_plan_get_args(AsPlan(new IntPtr((1L << 32) | (11L << 24))), out args, out n));
            });

            // Made-up handle values.
            IntPtr hostMemory = f.HostMemory;
            var fakes = new List<KeyValuePair<string, IntPtr>>
            {
                new KeyValuePair<string, IntPtr>("the value 1", new IntPtr(1)),
                new KeyValuePair<string, IntPtr>("0xdeadbeef", new IntPtr(0xdeadbeefL)),
                new KeyValuePair<string, IntPtr>("all bits set", new IntPtr(-1L)),
                new KeyValuePair<string, IntPtr>("generation 0 with the program kind", new IntPtr(2L << 24)),
                new KeyValuePair<string, IntPtr>("a never-used slot index", new IntPtr((1L << 32) | (2L << 24) | 0xFFFFFEL)),
                new KeyValuePair<string, IntPtr>("a live handle's generation plus one", new IntPtr(pv.ToInt64() + (1L << 32))),
                new KeyValuePair<string, IntPtr>("a host pointer", hostMemory),
            };
            foreach (var fk in fakes)
            {
                IntPtr v = fk.Value;
                c.Cuda("made-up program handle: " + fk.Key, "cuabi_program_get_log", CudaStatus.InvalidHandle,
                    "program is not a live cuabi_program", ctx =>
                    {
                        UIntPtr n = UIntPtr.Zero;
                        Check(NativeMethods.cuabi_program_get_log(AsProgram(v), null, ref n));
                    });
            }

            // Release: twice, through the wrong kind, NULL, made up.
            c.Cuda("program released twice, then used", "cuabi_program_get_log", CudaStatus.InvalidHandle,
                "program is not a live cuabi_program", ctx =>
                {
                    IntPtr raw;
                    using (var p = new Program(Tiny))
                        raw = p.Handle.DangerousGetHandle();
                    NativeMethods.cuabi_last_error_clear();
                    NativeMethods.cuabi_program_release(raw); // detected and ignored
                    ctx.Expect(NativeMethods.cuabi_last_error_status() == 0, "a second release touched the last-error state");
                    UIntPtr n = UIntPtr.Zero;
                    Check(NativeMethods.cuabi_program_get_log(AsProgram(raw), null, ref n));
                });
            c.Fine("a live program released through every other kind's release", ctx =>
            {
                NativeMethods.cuabi_device_release(pv);
                NativeMethods.cuabi_module_release(pv);
                NativeMethods.cuabi_function_release(pv);
                NativeMethods.cuabi_buffer_release(pv);
                NativeMethods.cuabi_host_buffer_release(pv);
                NativeMethods.cuabi_stream_release(pv);
                NativeMethods.cuabi_event_release(pv);
                NativeMethods.cuabi_graph_release(pv);
                NativeMethods.cuabi_graph_exec_release(pv);
                NativeMethods.cuabi_launch_plan_release(pv);
                for (long k = 1; k <= 11; k++)
                    if (k != 2)
                        NativeMethods.cuabi_module_release(WithKind(pv, k));
                ctx.Expect(f.Compiled.Ptx.Contains(".entry"), "the program died");
            });
            c.Fine("NULL to every release, the last error untouched", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                NativeMethods.cuabi_program_get_log(AsProgram(nul), null, ref n); // plants an error
                string before = Utf8.FromNative(NativeMethods.cuabi_last_error_message());
                NativeMethods.cuabi_device_release(nul);
                NativeMethods.cuabi_program_release(nul);
                NativeMethods.cuabi_module_release(nul);
                NativeMethods.cuabi_function_release(nul);
                NativeMethods.cuabi_buffer_release(nul);
                NativeMethods.cuabi_host_buffer_release(nul);
                NativeMethods.cuabi_stream_release(nul);
                NativeMethods.cuabi_event_release(nul);
                NativeMethods.cuabi_graph_release(nul);
                NativeMethods.cuabi_graph_exec_release(nul);
                NativeMethods.cuabi_launch_plan_release(nul);
                ctx.Expect(before == Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "a release changed the last error");
            });
            c.Fine("made-up values to every release", ctx =>
            {
                var values = new[]
                {
                    new IntPtr(1), new IntPtr(0xdeadbeefL), new IntPtr(-1L), new IntPtr((1L << 32) | (2L << 24) | 77),
                    f.Released, f.Stale, hostMemory,
                };
                foreach (IntPtr v in values)
                {
                    NativeMethods.cuabi_device_release(v);
                    NativeMethods.cuabi_program_release(v);
                    NativeMethods.cuabi_module_release(v);
                    NativeMethods.cuabi_function_release(v);
                    NativeMethods.cuabi_buffer_release(v);
                    NativeMethods.cuabi_host_buffer_release(v);
                    NativeMethods.cuabi_stream_release(v);
                    NativeMethods.cuabi_event_release(v);
                    NativeMethods.cuabi_graph_release(v);
                    NativeMethods.cuabi_graph_exec_release(v);
                    NativeMethods.cuabi_launch_plan_release(v);
                }
                // The stale value's slot belongs to a live program now: still alive.
                UIntPtr n = UIntPtr.Zero;
                ctx.Expect(NativeMethods.cuabi_program_get_log(f.Reuser.Handle, null, ref n) == 0,
                    "releasing a stale value released the live program in its slot");
            });
            c.Fine("an owning SafeHandle disposed twice releases once", ctx =>
            {
                SafeProgramHandle h;
                Check(NativeMethods.cuabi_program_create(Z(Tiny), null, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h));
                IntPtr raw = h.DangerousGetHandle();
                h.Dispose();
                h.Dispose();
                UIntPtr n = UIntPtr.Zero;
                ctx.Expect(NativeMethods.cuabi_program_get_log(AsProgram(raw), null, ref n) == NativeMethods.CUABI_ERROR_INVALID_HANDLE,
                    "the handle is still live after Dispose");
            });
            c.Throws<ObjectDisposedException>("a disposed SafeHandle passed to NativeMethods", null, "closed", ctx =>
            {
                var h = new SafeProgramHandle();
                h.Dispose();
                UIntPtr n = UIntPtr.Zero;
                NativeMethods.cuabi_program_get_log(h, null, ref n);
            });

            // Program creation.
            c.Cuda("source is NULL", "cuabi_program_create", CudaStatus.InvalidArgument, "source is NULL", ctx =>
            {
                SafeProgramHandle h;
                int st = NativeMethods.cuabi_program_create(null, null, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h);
                ctx.Expect(h.IsInvalid, "out was written although the call failed");
                Check(st);
            });
            c.Cuda("headers counted but the arrays NULL", "cuabi_program_create", CudaStatus.InvalidArgument, "num_headers is 2", ctx =>
            {
                SafeProgramHandle h;
                Check(NativeMethods.cuabi_program_create(Z(Tiny), null, (UIntPtr)2u, IntPtr.Zero, IntPtr.Zero, out h));
            });
            c.Cuda("a header's name is NULL", "cuabi_program_create", CudaStatus.InvalidArgument, "header_names[1] is NULL", ctx =>
            {
                using (var r = new RawStrings())
                {
                    SafeProgramHandle h;
                    Check(NativeMethods.cuabi_program_create(Z(Tiny), null, (UIntPtr)2u, r.Array(r.Str("int a;"), r.Str("int b;")),
                        r.Array(r.Str("a.h"), IntPtr.Zero), out h));
                }
            });
            c.Cuda("a header's source is NULL", "cuabi_program_create", CudaStatus.InvalidArgument, "header_sources[0] is NULL", ctx =>
            {
                using (var r = new RawStrings())
                {
                    SafeProgramHandle h;
                    Check(NativeMethods.cuabi_program_create(Z(Tiny), null, (UIntPtr)1u, r.Array(IntPtr.Zero), r.Array(r.Str("a.h")), out h));
                }
            });
            c.Cuda("num_headers is (size_t)-1", "cuabi_program_create", CudaStatus.InvalidArgument,
                "num_headers is 18446744073709551615, implausibly large", ctx =>
                {
                    // Arrays long enough that no read goes past them whatever the
                    // order of the checks; the count must be refused as implausible.
                    using (var r = new RawStrings())
                    {
                        SafeProgramHandle h;
                        int st = NativeMethods.cuabi_program_create(Z(Tiny), null, SizeMax, r.Repeated("int a;", 5000),
                            r.Repeated("a.h", 5000), out h);
                        h.Dispose();
                        Check(st);
                    }
                });

            // Compile through the raw layer.
            c.Cuda("options NULL with a count", "cuabi_program_compile", CudaStatus.InvalidArgument, "num_options is 2", ctx =>
            {
                using (var p = new Program(Tiny))
                    Check(NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)2u, IntPtr.Zero));
            });
            c.Cuda("an option is NULL", "cuabi_program_compile", CudaStatus.InvalidArgument, "options[1] is NULL", ctx =>
            {
                using (var p = new Program(Tiny))
                using (var r = new RawStrings())
                    Check(NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)2u, r.Array(r.Str(Sm), IntPtr.Zero)));
            });
            c.Cuda("num_options is (size_t)-1", "cuabi_program_compile", CudaStatus.InvalidArgument,
                "num_options is 18446744073709551615, implausibly large", ctx =>
                {
                    using (var p = new Program(Tiny))
                    using (var r = new RawStrings())
                        Check(NativeMethods.cuabi_program_compile(p.Handle, SizeMax, r.Repeated("-w", 5000)));
                });

            // Byte strings that are not UTF-8.
            c.Fine("invalid UTF-8 inside a comment", ctx =>
            {
                using (var h = CreateRaw(ctx, Z("// \u00ff\u00fe\u00c0\u00af comment\n__device__ int x;\n")))
                    Check(CompileRaw(h, Compute));
            });
            c.Cuda("invalid UTF-8 inside an identifier", "cuabi_program_compile", CudaStatus.Compile, "could not compile", ctx =>
            {
                using (var h = CreateRaw(ctx, Z("__global__ void k\u00ff\u00fe(int* x) { *x = 1; }\n")))
                {
                    int st = CompileRaw(h, Compute);
                    ctx.Expect(LastMessageIsUtf8(), "the message is not UTF-8");
                    LogIsUtf8(ctx, h);
                    Check(st);
                }
            });
            c.Cuda("invalid UTF-8 inside a string literal", "cuabi_program_compile", CudaStatus.Compile, "could not compile", ctx =>
            {
                using (var h = CreateRaw(ctx, Z("__global__ void k(char* x) { const char* s = \"\u00ff\u00fe\"; *x = s[0]; }\n")))
                {
                    int st = CompileRaw(h, Compute);
                    ctx.Expect(LastMessageIsUtf8(), "the message is not UTF-8");
                    LogIsUtf8(ctx, h);
                    Check(st);
                }
            });
            c.Fine("a source of nothing but invalid bytes (NVRTC skips them)", ctx =>
            {
                using (var h = CreateRaw(ctx, Z("\u00ff\u00fe\u00fd\u0080\u0081\u00c0\u00c1\u00f5\u00f8\u00fc")))
                {
                    Check(CompileRaw(h, Compute));
                    LogIsUtf8(ctx, h);
                }
            });
            c.Cuda("an encoded surrogate (CESU-8) and an overlong NUL in an #error", "cuabi_program_compile", CudaStatus.Compile,
                "could not compile", ctx =>
                {
                    using (var h = CreateRaw(ctx, Z("#error bad \u00ed\u00a0\u0080 and \u00c0\u0080 here\n")))
                    {
                        int st = CompileRaw(h, Compute);
                        ctx.Expect(LastMessageIsUtf8(), "the message is not UTF-8");
                        LogIsUtf8(ctx, h);
                        Check(st);
                    }
                });
            c.Fine("invalid UTF-8 in a header's contents (a comment)", ctx =>
            {
                using (var h = CreateRaw(ctx, Z("#include \"h.cuh\"\n"), null, Z("// \u00ff\u00fe\n__device__ int from_header;\n"), Z("h.cuh")))
                    Check(CompileRaw(h, Compute));
            });
            c.Cuda("a program name that is not UTF-8", "cuabi_program_create", CudaStatus.InvalidArgument, "name is not valid UTF-8", ctx =>
            {
                SafeProgramHandle h;
                int st = NativeMethods.cuabi_program_create(Z("int x;"), Z("bad\u00ff\u00fename.cu"), UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h);
                h.Dispose();
                Check(st);
            });
            c.Cuda("a header name that is not UTF-8", "cuabi_program_create", CudaStatus.InvalidArgument,
                "header_names[0] is not valid UTF-8", ctx =>
                {
                    using (var r = new RawStrings())
                    {
                        SafeProgramHandle h;
                        int st = NativeMethods.cuabi_program_create(Z("#include \"bad\u00ff.h\"\n"), null, (UIntPtr)1u,
                            r.Array(r.Str("int broken(;\n")), r.Array(r.Str(Z("bad\u00ff.h"))), out h);
                        h.Dispose();
                        Check(st);
                    }
                });
            c.Cuda("an option that is not UTF-8", "cuabi_program_compile", CudaStatus.InvalidArgument, "options[0] is not valid UTF-8", ctx =>
            {
                using (var p = new Program(Tiny))
                using (var r = new RawStrings())
                    Check(NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)1u, r.Array(r.Str(Z("-D\u00ff\u00fe=1")))));
            });
            c.Cuda("an architecture value that is not UTF-8", "cuabi_program_compile", CudaStatus.InvalidArgument,
                "options[1] is not valid UTF-8", ctx =>
                {
                    using (var p = new Program(Tiny))
                    using (var r = new RawStrings())
                        Check(NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)2u,
                            r.Array(r.Str("-w"), r.Str(Z("--gpu-architecture=sm_\u00ff")))));
                });
            c.Cuda("a name expression that is not UTF-8", "cuabi_program_add_name_expression", CudaStatus.InvalidArgument, "UTF-8", ctx =>
            {
                using (var p = new Program(Template))
                    Check(NativeMethods.cuabi_program_add_name_expression(p.Handle, Z("store<\u00ff>")));
            });
            c.Cuda("a lowered-name query that is not UTF-8", "cuabi_program_get_lowered_name", CudaStatus.InvalidArgument, "UTF-8", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                Check(NativeMethods.cuabi_program_get_lowered_name(f.Compiled.Handle, Z("store<\u00c0\u0080>"), null, ref n));
            });
            c.Cuda("a kernel name that is not UTF-8 (the module handle is checked first)", "cuabi_module_get_function",
                CudaStatus.InvalidHandle, "module is NULL", ctx =>
                {
                    SafeFunctionHandle fn;
                    Check(NativeMethods.cuabi_module_get_function(AsModule(nul), Z("k\u00ff"), out fn));
                });
            c.Cuda("a module path that is not UTF-8 (the device handle is checked first)", "cuabi_module_load_file",
                CudaStatus.InvalidHandle, "device is NULL", ctx =>
                {
                    SafeModuleHandle m;
                    Check(NativeMethods.cuabi_module_load_file(AsDevice(nul), Z("/tmp/\u00ff.cubin"), out m));
                });

            // Two-call outputs into buffers too small.
            c.Cuda("PTX into a 0-byte buffer", "cuabi_program_get_ptx", CudaStatus.InsufficientBuffer, "are needed", ctx =>
            {
                var buf = new byte[] { 0x23, 0x23, 0x23, 0x23 };
                UIntPtr n = UIntPtr.Zero;
                int st = NativeMethods.cuabi_program_get_ptx(f.Compiled.Handle, buf, ref n);
                ctx.Expect(buf[0] == 0x23, "a too-small buffer was written");
                ctx.Expect(n.ToUInt64() > 100, "*size does not hold the size needed");
                Check(st);
            });
            c.Cuda("CUBIN into a buffer one byte short", "cuabi_program_get_cubin", CudaStatus.InsufficientBuffer, "are needed", ctx =>
            {
                UIntPtr n = UIntPtr.Zero;
                Check(NativeMethods.cuabi_program_get_cubin(f.Compiled.Handle, null, ref n));
                int need = (int)n.ToUInt64();
                var buf = new byte[need];
                n = (UIntPtr)(uint)(need - 1);
                int st = NativeMethods.cuabi_program_get_cubin(f.Compiled.Handle, buf, ref n);
                ctx.Expect(n.ToUInt64() == (ulong)need, "*size is " + n + ", not the " + need + " bytes needed");
                ctx.Expect(Array.TrueForAll(buf, b => b == 0), "a too-small buffer was written");
                Check(st);
            });
            c.Cuda("lowered name into a 1-byte buffer", "cuabi_program_get_lowered_name", CudaStatus.InsufficientBuffer, "are needed", ctx =>
            {
                var buf = new byte[] { 0x23 };
                UIntPtr n = (UIntPtr)1u;
                int st = NativeMethods.cuabi_program_get_lowered_name(f.Compiled.Handle, Z("store<int>"), buf, ref n);
                ctx.Expect(buf[0] == 0x23, "a too-small buffer was written");
                ctx.Expect(n.ToUInt64() > 1, "*size does not hold the size needed");
                Check(st);
            });

            // Launches without a live function.
            c.Cuda("sized launch on a made-up function", "cuabi_function_launch_sized", CudaStatus.InvalidHandle,
                "function is not a live cuabi_function", ctx =>
                {
                    var cfg = LaunchConfigNative.Create();
                    float a = 1;
                    unsafe
                    {
                        IntPtr* ps = stackalloc IntPtr[1];
                        UIntPtr* sizes = stackalloc UIntPtr[1];
                        ps[0] = (IntPtr)(&a);
                        sizes[0] = (UIntPtr)4u;
                        Check(NativeMethods.cuabi_function_launch_sized(AsFunction(new IntPtr((1L << 32) | (4L << 24) | 3)), ref cfg, noStream,
                            (IntPtr)ps, (IntPtr)sizes, (UIntPtr)1u));
                    }
                });
            c.Cuda("launch with every pointer NULL", "cuabi_function_launch", CudaStatus.InvalidHandle, "function is NULL", ctx =>
            {
                var cfg = LaunchConfigNative.Create();
                Check(NativeMethods.cuabi_function_launch(AsFunction(nul), ref cfg, noStream, IntPtr.Zero, (UIntPtr)5u));
            });
            c.Cuda("packed launch on a made-up function with (size_t)-1 bytes", "cuabi_function_launch_packed", CudaStatus.InvalidHandle,
                "function is not a live cuabi_function", ctx =>
                {
                    var cfg = LaunchConfigNative.Create();
                    Check(NativeMethods.cuabi_function_launch_packed(AsFunction(new IntPtr(0xdeadbeefL)), ref cfg, noStream, IntPtr.Zero,
                        SizeMax));
                });
            c.Cuda("compile into a NULL device", "cuabi_module_compile", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                var d = CompileDescNative.Create();
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_module_compile(AsDevice(nul), ref d, out m));
            });
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

        [StructLayout(LayoutKind.Sequential)]
        private struct Sixteen
        {
            public double A, B;
        }

        /// <summary>Objects shared by the cases; a case that consumes or breaks one makes its own.</summary>
        private sealed class GpuFixture : IDisposable
        {
            public readonly Device Device;
            public readonly CudaModule SaxpyModule;
            public readonly Kernel Saxpy;
            public readonly CudaModule RaisedModule; // the same code again, for the shared memory limit cases
            public readonly Kernel Raised;
            public readonly DeviceBuffer<float> A, B; // N floats each
            public readonly CudaStream Stream;
            public readonly CudaEvent Timed, Untimed;
            public readonly PinnedBuffer<float> Pinned; // N floats
            public readonly byte[] Cubin;               // SAXPY for the device's sm_XY
            public readonly long TotalMemory;
            public readonly int MaxOptinShared;
            public readonly IntPtr Host = Marshal.AllocHGlobal(8192); // host memory for the raw copies

            public GpuFixture()
            {
                Device = Device.Get(0);
                SaxpyModule = Device.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" });
                Saxpy = SaxpyModule.GetKernel("saxpy");
                RaisedModule = Device.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" });
                Raised = RaisedModule.GetKernel("saxpy");
                A = Device.Allocate<float>(N);
                B = Device.Allocate<float>(N);
                Stream = Device.CreateStream();
                Timed = Device.CreateEvent();
                Untimed = Device.CreateEvent(EventFlags.DisableTiming);
                Pinned = Device.AllocatePinned<float>(N);
                TotalMemory = Device.TotalMemory;
                // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
                MaxOptinShared = Device.GetAttribute(97);
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
                Untimed.Dispose();
                Timed.Dispose();
                Stream.Dispose();
                B.Dispose();
                A.Dispose();
                Raised.Dispose();
                RaisedModule.Dispose();
                Saxpy.Dispose();
                SaxpyModule.Dispose();
                Device.Dispose();
                Marshal.FreeHGlobal(Host);
            }
        }

        private static void RunGpu()
        {
            using (var f = new GpuFixture())
            {
                var corpus = new Corpus();
                SafeGpuCases(corpus, f);
                RawGpuCases(corpus, f);
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
        private static string SaxpyResult(GpuFixture f, Kernel kernel, CudaStream stream, int n, uint shared = 0)
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
                kernel.Launch(new LaunchConfig((n + 255) / 256, 256, shared), stream, 2.0f, dx, dy, dout, (ulong)n);
                if (stream != null)
                    stream.Synchronize();
                return Mismatch(dout.ToArray(), x, y, 2.0f);
            }
        }

        private static string Mismatch(float[] got, float[] x, float[] y, float a)
        {
            for (int i = 0; i < got.Length; i++)
                if (got[i] != a * x[i] + y[i])
                    return string.Format("element {0} is {1}, expected {2}", i, got[i], a * x[i] + y[i]);
            return null;
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
        private static void Launched(CaseContext ctx, GpuFixture f, float a = 2.0f)
        {
            f.Device.Synchronize();
            float[] b = f.B.ToArray();
            for (int i = 0; i < N; i++)
                if (b[i] != a * i + i)
                {
                    ctx.Problem(string.Format("element {0} is {1}, expected {2}", i, b[i], a * i + i));
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

        private static T Disposed<T>(T thing) where T : IDisposable
        {
            thing.Dispose();
            return thing;
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

        private static string TempFile(byte[] content)
        {
            string path = Path.Combine(Path.GetTempPath(), "cuabi-corpus-" + Guid.NewGuid().ToString("N") + ".cubin");
            File.WriteAllBytes(path, content);
            return path;
        }

        private static void SafeGpuCases(Corpus c, GpuFixture f)
        {
            Device d = f.Device;
            Kernel k = f.Saxpy;

            // --- Allocations ----------------------------------------------------
            c.Cuda("zero elements", "cuabi_buffer_alloc", CudaStatus.InvalidArgument, "bytes is 0", ctx => d.Allocate<float>(0));
            c.Throws<ArgumentOutOfRangeException>("a negative count", "count", "cannot be negative", ctx => d.Allocate<float>(-1));
            c.Throws<ArgumentOutOfRangeException>("a count whose bytes overflow 64 bits", "count", "more bytes than a 64-bit size can hold",
                ctx => d.Allocate<float>(long.MaxValue));
            c.Cuda("2^63 - 1 bytes", "cuabi_buffer_alloc", CudaStatus.OutOfMemory, "9223372036854775807 bytes failed: out of device memory",
                ctx => d.Allocate<byte>(long.MaxValue), ctx => StillWorks(ctx, f));
            c.Cuda("2^50 bytes, then the process keeps working", "cuabi_buffer_alloc", CudaStatus.OutOfMemory, "out of device memory",
                ctx => d.Allocate<byte>(1L << 50), ctx => StillWorks(ctx, f));
            c.Cuda("twice the device's memory, then the process keeps working", "cuabi_buffer_alloc", CudaStatus.OutOfMemory,
                "out of device memory", ctx => d.Allocate<byte>(2 * f.TotalMemory), ctx => StillWorks(ctx, f));
            c.Cuda("2^48 floats (2^50 bytes)", "cuabi_buffer_alloc", CudaStatus.OutOfMemory, "1125899906842624 bytes",
                ctx => d.Allocate<float>(1L << 48));
            c.Throws<ArgumentException>("an element type that holds references", null, "holds references",
                ctx => d.Allocate<WithReference>(4));
            c.Throws<ArgumentNullException>("AllocateFrom null", "source", "source", ctx => d.AllocateFrom<float>(null));
            c.Cuda("AllocateFrom an empty array", "cuabi_buffer_alloc", CudaStatus.InvalidArgument, "bytes is 0",
                ctx => d.AllocateFrom(new float[0]));
            c.Cuda("zero pinned elements", "cuabi_host_buffer_alloc", CudaStatus.InvalidArgument, "bytes is 0", ctx => d.AllocatePinned<float>(0));
            c.Throws<ArgumentOutOfRangeException>("a negative pinned count", "count", "cannot be negative", ctx => d.AllocatePinned<int>(-5));
            c.Cuda("2^63 - 1 pinned bytes", "cuabi_host_buffer_alloc", CudaStatus.OutOfMemory, "cuMemHostAlloc",
                ctx => d.AllocatePinned<byte>(long.MaxValue), ctx => StillWorks(ctx, f));
            c.Throws<ArgumentException>("registering an empty array", "array", "is empty",
                ctx => PinnedBuffer<float>.Register(d, new float[0]));
            c.Throws<ArgumentNullException>("registering null", "array", "array", ctx => PinnedBuffer<float>.Register(d, null));
            c.Throws<ArgumentNullException>("registering with a null device", "device", "device",
                ctx => PinnedBuffer<float>.Register(null, new float[4]));
            c.Cuda("wrapping address 0", "cuabi_buffer_wrap", CudaStatus.InvalidArgument, "device_ptr is 0",
                ctx => DeviceBuffer<float>.Wrap(d, 0, 16));
            c.Cuda("wrapping zero elements", "cuabi_buffer_wrap", CudaStatus.InvalidArgument, "bytes is 0",
                ctx => DeviceBuffer<float>.Wrap(d, f.A.DevicePointer, 0));
            c.Cuda("wrapping a range that wraps around the address space", "cuabi_buffer_wrap", CudaStatus.InvalidArgument, "overflows",
                ctx => DeviceBuffer<float>.Wrap(d, ulong.MaxValue - 15, 16));
            c.Throws<ArgumentOutOfRangeException>("wrapping a negative count", "count", "cannot be negative",
                ctx => DeviceBuffer<float>.Wrap(d, f.A.DevicePointer, -1));
            c.Throws<ArgumentNullException>("wrapping with a null device", "device", "device",
                ctx => DeviceBuffer<float>.Wrap(null, f.A.DevicePointer, 4));

            // --- Copies -----------------------------------------------------------
            c.Cuda("an array one element longer than the buffer", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange,
                "destination range", ctx => f.A.CopyFrom(new float[N + 1]));
            c.Cuda("an offset past the end, copying nothing", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange,
                "past the end of the 4096-byte buffer", ctx => f.A.CopyFrom(new float[4], 0, N + 1, 0));
            c.Fine("an offset at the end, copying nothing", ctx => f.A.CopyFrom(new float[4], 0, N, 0));
            c.Cuda("one element at the end", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange, "destination range",
                ctx => f.A.CopyFrom(new float[4], 0, N, 1));
            c.Cuda("a destination index near 2^62 (offset + bytes overflows)", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange,
                "destination range", ctx => f.A.CopyFrom(new float[4], 0, (long.MaxValue / 2) - 1, 4));
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
            var sentinel = new float[N + 1];
            c.Cuda("reading into an array one element longer than the buffer", "cuabi_buffer_copy_to_host", CudaStatus.OutOfRange,
                "source range", ctx =>
                {
                    for (int i = 0; i < sentinel.Length; i++)
                        sentinel[i] = -7;
                    f.A.CopyTo(sentinel);
                }, ctx => ctx.Expect(Array.TrueForAll(sentinel, v => v == -7), "the array was written although the copy failed"));
            c.Cuda("reading past the end", "cuabi_buffer_copy_to_host", CudaStatus.OutOfRange, "source range",
                ctx => f.A.CopyTo(1000, new float[32], 0, 25));
            c.Throws<ArgumentException>("reading past the end of the destination array", null, "reach past the end of destination",
                ctx => f.A.CopyTo(0, new float[10], 5, 6));
            c.Throws<ArgumentOutOfRangeException>("reading from a negative index", "sourceIndex", "cannot be negative",
                ctx => f.A.CopyTo(-1, new float[10], 0, 1));
            c.Throws<ArgumentNullException>("reading into a null array", "destination", "destination", ctx => f.A.CopyTo((float[])null));
            c.Cuda("a device copy from a larger buffer", "cuabi_buffer_copy", CudaStatus.OutOfRange, "destination range", ctx =>
            {
                using (var small = d.Allocate<float>(N / 2))
                    small.CopyFrom(f.A);
            });
            c.Cuda("a device copy of a buffer onto itself", "cuabi_buffer_copy", CudaStatus.InvalidArgument, "overlap",
                ctx => f.A.CopyFrom(f.A));
            c.Cuda("an async device copy of a buffer onto itself", "cuabi_buffer_copy_async", CudaStatus.InvalidArgument, "overlap",
                ctx => f.A.CopyFromAsync(f.A, f.Stream));
            c.Cuda("a device copy between two overlapping wraps of the same memory", "cuabi_buffer_copy", CudaStatus.InvalidArgument,
                "overlap", ctx =>
                {
                    using (var w1 = DeviceBuffer<float>.Wrap(d, f.A.DevicePointer, N / 2))
                    using (var w2 = DeviceBuffer<float>.Wrap(d, f.A.DevicePointer + 1024, N / 2))
                        w1.CopyFrom(w2);
                });
            c.Fine("a device copy between the two halves of one buffer", ctx =>
            {
                var v = new float[N];
                for (int i = 0; i < N; i++)
                    v[i] = i * 0.5f;
                f.A.CopyFrom(v);
                using (var lo = DeviceBuffer<float>.Wrap(d, f.A.DevicePointer, N / 2))
                using (var hi = DeviceBuffer<float>.Wrap(d, f.A.DevicePointer + N / 2 * 4, N / 2))
                    hi.CopyFrom(lo);
                float[] back = f.A.ToArray();
                for (int i = 0; i < N / 2; i++)
                    if (back[N / 2 + i] != v[i])
                    {
                        ctx.Problem("element " + (N / 2 + i) + " differs after the copy");
                        break;
                    }
            });
            c.Throws<ArgumentNullException>("a device copy from null", "source", "source", ctx => f.A.CopyFrom((DeviceBuffer<float>)null));
            c.Cuda("an async copy from pinned memory past the buffer's end", "cuabi_buffer_copy_from_host_async", CudaStatus.OutOfRange,
                "destination range", ctx => f.A.CopyFromAsync(f.Pinned, 0, 1, N, f.Stream));
            c.Cuda("an async copy into pinned memory from past the buffer's end", "cuabi_buffer_copy_to_host_async", CudaStatus.OutOfRange,
                "source range", ctx => f.A.CopyToAsync(N, f.Pinned, 0, 1, f.Stream));
            c.Throws<ArgumentException>("an async copy from past the end of the pinned memory", null,
                "reach past the end of the pinned buffer", ctx => f.A.CopyFromAsync(f.Pinned, N - 10, 0, 11, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("an async copy with a negative pinned index", "index", "cannot be negative",
                ctx => f.A.CopyToAsync(0, f.Pinned, -1, 1, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("an async copy with a negative count", "count", "cannot be negative",
                ctx => f.A.CopyFromAsync(f.Pinned, 0, 0, -1, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("a pinned element at index -1", "index", "cannot be negative",
                ctx => { var unused = f.Pinned[-1]; });
            c.Throws<ArgumentException>("a pinned element past the end", null, "reach past the end of the pinned buffer",
                ctx => f.Pinned[N] = 1);
            c.Throws<ArgumentException>("copying a longer array into pinned memory", null, "reach past the end of the pinned buffer",
                ctx => f.Pinned.CopyFrom(new float[N + 1]));

            // --- Disposed objects ---------------------------------------------------
            c.Throws<ObjectDisposedException>("Allocate on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().Allocate<float>(4));
            c.Throws<ObjectDisposedException>("AllocatePinned on a disposed device", null, "Cuabi.Device",
                ctx => DisposedDevice().AllocatePinned<float>(4));
            c.Throws<ObjectDisposedException>("Compile on a disposed device", null, "Cuabi.Device",
                ctx => DisposedDevice().Compile(NoGpuTests.SaxpySource));
            c.Throws<ObjectDisposedException>("LoadModule on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().LoadModule(f.Cubin));
            c.Throws<ObjectDisposedException>("CreateStream on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().CreateStream());
            c.Throws<ObjectDisposedException>("CreateEvent on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().CreateEvent());
            c.Throws<ObjectDisposedException>("Name of a disposed device", null, "Cuabi.Device", ctx => { var unused = DisposedDevice().Name; });
            c.Throws<ObjectDisposedException>("Synchronize on a disposed device", null, "Cuabi.Device", ctx => DisposedDevice().Synchronize());
            c.Throws<ObjectDisposedException>("Register with a disposed device", null, "Cuabi.Device",
                ctx => PinnedBuffer<float>.Register(DisposedDevice(), new float[4]));
            c.Throws<ObjectDisposedException>("Wrap with a disposed device", null, "Cuabi.Device",
                ctx => DeviceBuffer<float>.Wrap(DisposedDevice(), f.A.DevicePointer, 4));
            c.Throws<ObjectDisposedException>("GetKernel on a disposed module", null, "Cuabi.CudaModule",
                ctx => Disposed(d.LoadModule(f.Cubin)).GetKernel("saxpy"));
            c.Throws<ObjectDisposedException>("GetGlobal on a disposed module", null, "Cuabi.CudaModule",
                ctx => Disposed(d.LoadModule(f.Cubin)).GetGlobal("g"));
            c.Throws<ObjectDisposedException>("FromCache of a disposed module", null, "Cuabi.CudaModule",
                ctx => { var unused = Disposed(d.LoadModule(f.Cubin)).FromCache; });
            c.Throws<ObjectDisposedException>("Launch of a disposed kernel", null, "Cuabi.Kernel", ctx =>
            {
                Mark(f);
                Disposed(f.SaxpyModule.GetKernel("saxpy")).Launch(4, 256, null, f.Args());
            }, ctx => Untouched(ctx, f));
            c.Throws<ObjectDisposedException>("Prepare of a disposed kernel", null, "Cuabi.Kernel",
                ctx => Disposed(f.SaxpyModule.GetKernel("saxpy")).Prepare(4, 256));
            c.Throws<ObjectDisposedException>("Name of a disposed kernel", null, "Cuabi.Kernel",
                ctx => { var unused = Disposed(f.SaxpyModule.GetKernel("saxpy")).Name; });
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
            c.Throws<ObjectDisposedException>("CopyFrom into a disposed buffer", null, "Cuabi.DeviceBuffer",
                ctx => Disposed(d.Allocate<float>(4)).CopyFrom(new float[4]));
            c.Throws<ObjectDisposedException>("ToArray of a disposed buffer", null, "Cuabi.DeviceBuffer",
                ctx => Disposed(d.Allocate<float>(4)).ToArray());
            c.Throws<ObjectDisposedException>("Memset of a disposed buffer", null, "Cuabi.DeviceBuffer",
                ctx => Disposed(d.Allocate<float>(4)).Memset(0));
            c.Throws<ObjectDisposedException>("a device copy from a disposed buffer", null, "Cuabi.DeviceBuffer",
                ctx => f.A.CopyFrom(Disposed(d.Allocate<float>(4))));
            c.Throws<ObjectDisposedException>("MemsetAsync on a disposed stream", null, "Cuabi.CudaStream",
                ctx => f.A.MemsetAsync(0, Disposed(d.CreateStream())));
            c.Throws<ObjectDisposedException>("an async copy on a disposed stream", null, "Cuabi.CudaStream",
                ctx => f.A.CopyFromAsync(f.Pinned, Disposed(d.CreateStream())));
            c.Throws<ObjectDisposedException>("an async copy from disposed pinned memory", null, "Cuabi.PinnedBuffer",
                ctx => f.A.CopyFromAsync(Disposed(d.AllocatePinned<float>(N)), f.Stream));
            c.Throws<ObjectDisposedException>("CopyFrom into disposed pinned memory", null, "Cuabi.PinnedBuffer",
                ctx => Disposed(d.AllocatePinned<float>(4)).CopyFrom(new float[4]));
            c.Throws<ObjectDisposedException>("Synchronize on a disposed stream", null, "Cuabi.CudaStream",
                ctx => Disposed(d.CreateStream()).Synchronize());
            c.Throws<ObjectDisposedException>("Record of a disposed event", null, "Cuabi.CudaEvent",
                ctx => Disposed(d.CreateEvent()).Record(f.Stream));
            c.Throws<ObjectDisposedException>("Record on a disposed stream", null, "Cuabi.CudaStream",
                ctx => f.Timed.Record(Disposed(d.CreateStream())));
            c.Throws<ObjectDisposedException>("elapsed time since a disposed event", null, "Cuabi.CudaEvent",
                ctx => f.Timed.ElapsedSince(Disposed(d.CreateEvent())));
            c.Throws<ObjectDisposedException>("waiting on a disposed event", null, "Cuabi.CudaEvent",
                ctx => f.Stream.WaitEvent(Disposed(d.CreateEvent())));
            c.Throws<ObjectDisposedException>("Launch of a disposed plan", null, "Cuabi.LaunchPlan",
                ctx => Disposed(k.Prepare(4, 256)).Launch());
            c.Throws<ObjectDisposedException>("Set on a disposed plan", null, "Cuabi.LaunchPlan",
                ctx => Disposed(k.Prepare(4, 256)).Set(0, 1.0f));
            c.Throws<ObjectDisposedException>("SetArguments on a disposed plan", null, "Cuabi.LaunchPlan",
                ctx => Disposed(k.Prepare(4, 256)).SetArguments(f.Args()));
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
            c.Throws<ObjectDisposedException>("Prepare on a disposed stream", null, "Cuabi.CudaStream",
                ctx => k.Prepare(4, 256, Disposed(d.CreateStream())));
            c.Throws<ObjectDisposedException>("NodeCount of a disposed graph", null, "Cuabi.CudaGraph", ctx =>
            {
                using (var s = d.CreateStream())
                {
                    Disposed(Captured(f, s)).Instantiate();
                }
            });
            c.Throws<ObjectDisposedException>("Launch of a disposed graph instance", null, "Cuabi.CudaGraphExec", ctx =>
            {
                using (var s = d.CreateStream())
                {
                    using (var g = Captured(f, s))
                        Disposed(g.Instantiate()).Launch(s);
                }
            });

            // Disposed twice: harmless for every class.
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

            // --- Launch arguments: counts, sizes and types ------------------------------
            c.Throws<ArgumentException>("a 4-byte n for a size_t parameter (the overview's bug)", "args[4]",
                "parameter 4 is 8 bytes, but argument 4 is a System.UInt32 of 4 bytes", ctx =>
                {
                    Mark(f);
                    k.Launch(4, 256, null, 2.0f, f.A, f.A, f.B, (uint)N);
                }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("an int n for a size_t parameter", "args[4]", "a size_t or 64-bit parameter needs a long or ulong", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, f.A, f.A, f.B, N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a double for a float parameter", "args[0]", "parameter 0 is 4 bytes", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0, f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a float for a pointer parameter", "args[1]", "parameter 1 is 8 bytes", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, 1.0f, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a bool for a float parameter", "args[0]", "System.Boolean of 1 bytes", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, true, f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a 16-byte struct for a float parameter", "args[0]", "parameter 0 is 4 bytes", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, new Sixteen { A = 1, B = 2 }, f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a device buffer for a float parameter", "args[0]", "parameter 0 is 4 bytes", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, f.A, f.A, f.A, f.B, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("four arguments for five parameters", "args", "takes 5 parameter(s), but 4 argument(s) were given", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, f.A, f.A, f.B);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("six arguments for five parameters", "args", "but 6 argument(s) were given", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null, 2.0f, f.A, f.A, f.B, (ulong)N, (ulong)N);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("no arguments at all", "args", "but 0 argument(s) were given", ctx =>
            {
                Mark(f);
                k.Launch(4, 256, null);
            }, ctx => Untouched(ctx, f));
            c.Throws<ArgumentException>("a null argument array", "args", "but 0 argument(s) were given", ctx =>
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
            c.Throws<ArgumentException>("a 4-byte n on a configuration the kernel has prepared", "args[4]", "parameter 4 is 8 bytes", ctx =>
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

            // --- Launch plans ---------------------------------------------------------
            Func<LaunchPlan> freshPlan = () =>
            {
                Mark(f);
                var p = k.Prepare(4, 256);
                p.SetArguments(f.Args());
                return p;
            };
            // After each refused setter the plan still launches its old arguments.
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
            c.Throws<ArgumentException>("plan: a double for a float parameter", "value", "parameter 0 is 4 bytes",
                ctx => (current = freshPlan()).Set(0, 3.0), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: a buffer for a float parameter", "value", "parameter 0 is 4 bytes",
                ctx => (current = freshPlan()).Set(0, f.A), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: a struct holding a reference", "value", "cannot be passed by value",
                ctx => (current = freshPlan()).Set(0, new WithReference { Value = 1 }), ctx => stillRight(ctx, current));
            c.Throws<ArgumentOutOfRangeException>("plan: parameter index 5 of 5", "index", "has 5 parameter(s)",
                ctx => (current = freshPlan()).Set(5, 1.0f), ctx => stillRight(ctx, current));
            c.Throws<ArgumentOutOfRangeException>("plan: parameter index -1", "index", "has 5 parameter(s)",
                ctx => (current = freshPlan()).Set(-1, 1.0f), ctx => stillRight(ctx, current));
            c.Throws<ArgumentNullException>("plan: a null buffer", "buffer", "argument 1 is null",
                ctx => (current = freshPlan()).Set(1, (DeviceBuffer<float>)null), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: four arguments for five parameters", "args", "takes 5 parameter(s), but 4",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, f.B), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: six arguments for five parameters", "args", "but 6 argument(s)",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, f.B, (ulong)N, 0), ctx => stillRight(ctx, current));
            c.Throws<ArgumentNullException>("plan: a null among the arguments", "args[3]", "argument 3 is null",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, null, (ulong)N), ctx => stillRight(ctx, current));
            c.Throws<ArgumentException>("plan: every argument set with a 4-byte n (none is written)", "value", "parameter 4 is 8 bytes",
                ctx => (current = freshPlan()).SetArguments(3.0f, f.A, f.A, f.B, (uint)N), ctx => stillRight(ctx, current));

            // --- Launch configurations the device rejects ----------------------------------
            Action<LaunchConfig> launch = cfg =>
            {
                Mark(f);
                k.Launch(cfg, null, f.Args());
            };
            c.Cuda("block of 2048 threads in x", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "exceeds the device's limit",
                ctx => launch(new LaunchConfig(1, 2048)), ctx => Untouched(ctx, f));
            c.Cuda("block of 1024 x 2 threads", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "allows at most",
                ctx => launch(new LaunchConfig(1, new Dim3(1024, 2))), ctx => Untouched(ctx, f));
            c.Cuda("block z of 128", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "exceeds the device's limit",
                ctx => launch(new LaunchConfig(1, new Dim3(1, 1, 128))), ctx => Untouched(ctx, f));
            c.Cuda("grid x of zero", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "zero dimension",
                ctx => launch(new LaunchConfig(0, 32)), ctx => Untouched(ctx, f));
            c.Cuda("grid z of zero", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "zero dimension",
                ctx => launch(new LaunchConfig(new Dim3(1, 1, 0), 32)), ctx => Untouched(ctx, f));
            c.Cuda("block x of zero", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "zero dimension",
                ctx => launch(new LaunchConfig(1, 0)), ctx => Untouched(ctx, f));
            c.Cuda("grid y of 2^32 - 1", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "exceeds the device's limit",
                ctx => launch(new LaunchConfig(new Dim3(1, uint.MaxValue), 32)), ctx => Untouched(ctx, f));
            c.Cuda("1 GiB of dynamic shared memory", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "dynamic shared memory",
                ctx => launch(new LaunchConfig(1, 32, 1u << 30)), ctx => Untouched(ctx, f));
            c.Cuda("shared memory above the default limit, within the opt-in", "cuabi_function_launch_packed", CudaStatus.InvalidArgument,
                "CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES", ctx => launch(new LaunchConfig(4, 256, 64 * 1024)), ctx => Untouched(ctx, f));
            c.Cuda("a refused configuration launched again (the kernel then prepares it)", "cuabi_launch_plan_create",
                CudaStatus.InvalidArgument, "exceeds the device's limit", ctx =>
                {
                    var cfg = new LaunchConfig(1, 4096);
                    try
                    {
                        launch(cfg);
                        ctx.Problem("the first launch was not refused");
                    }
                    catch (CudaException)
                    {
                    }
                    launch(cfg);
                }, ctx => Untouched(ctx, f));
            c.Cuda("shared memory limit raised past the device's", "cuabi_function_set_attribute", CudaStatus.InvalidArgument,
                "cannot be set to", ctx => f.Raised.SetAttribute(FunctionAttribute.MaxDynamicSharedSizeBytes, f.MaxOptinShared + 1));
            c.Fine("shared memory within a raised limit", ctx =>
            {
                f.Raised.SetAttribute(FunctionAttribute.MaxDynamicSharedSizeBytes, 64 * 1024);
                string r = SaxpyResult(f, f.Raised, f.Stream, N, 64 * 1024);
                if (r != null)
                    ctx.Problem(r);
            });
            c.Cuda("plan with a block over the limit", "cuabi_launch_plan_create", CudaStatus.InvalidArgument, "exceeds the device's limit",
                ctx => k.Prepare(1, 4096));
            c.Cuda("plan with a zero grid", "cuabi_launch_plan_create", CudaStatus.InvalidArgument, "zero dimension",
                ctx => k.Prepare(0, 32));
            c.Cuda("plan with a block of 1024 x 1 x 2", "cuabi_launch_plan_create", CudaStatus.InvalidArgument, "allows at most",
                ctx => k.Prepare(1, new Dim3(1024, 1, 2)));
            c.Cuda("plan with 1 GiB of dynamic shared memory", "cuabi_launch_plan_create", CudaStatus.InvalidArgument,
                "dynamic shared memory", ctx => k.Prepare(1, 32, null, 1u << 30));
            c.Cuda("plan with grid z of 2^31", "cuabi_launch_plan_create", CudaStatus.InvalidArgument, "exceeds the device's limit",
                ctx => k.Prepare(new Dim3(1, 1, 1u << 31), 32, f.Stream));

            // --- Names ------------------------------------------------------------------
            c.Cuda("an unknown kernel", "cuabi_module_get_function", CudaStatus.NotFound, "no kernel named 'no_such_kernel'",
                ctx => f.SaxpyModule.GetKernel("no_such_kernel"));
            c.Cuda("an empty kernel name", "cuabi_module_get_function", CudaStatus.InvalidArgument, "name is empty",
                ctx => f.SaxpyModule.GetKernel(""));
            c.Throws<ArgumentNullException>("a null kernel name", "name", "name", ctx => f.SaxpyModule.GetKernel(null));
            c.Throws<ArgumentException>("a kernel name with an embedded NUL", "name", "NUL character",
                ctx => f.SaxpyModule.GetKernel("saxpy\0junk"));
            c.Throws<ArgumentException>("a kernel name with a lone surrogate", "name", "unpaired surrogate",
                ctx => f.SaxpyModule.GetKernel("sax\uD800py"));
            c.Cuda("a template kernel without a name expression", "cuabi_module_get_function", CudaStatus.NotFound, "name expression",
                ctx => f.SaxpyModule.GetKernel("store<int>"));
            c.Cuda("a kernel name differing in case", "cuabi_module_get_function", CudaStatus.NotFound, "no kernel named 'SAXPY'",
                ctx => f.SaxpyModule.GetKernel("SAXPY"));
            c.Cuda("an unknown global", "cuabi_module_get_global", CudaStatus.NotFound, "no global named 'no_such_global'",
                ctx => f.SaxpyModule.GetGlobal("no_such_global"));
            c.Throws<ArgumentNullException>("a null global name", "name", "name", ctx => f.SaxpyModule.GetGlobal(null));
            c.Throws<ArgumentException>("a global name with a lone surrogate", "name", "unpaired surrogate",
                ctx => f.SaxpyModule.GetGlobal("g\uDC00"));
            c.Cuda("an unknown lowered name", "cuabi_module_get_lowered_name", CudaStatus.NotFound, "store<long>",
                ctx => f.SaxpyModule.GetLoweredName("store<long>"));
            c.Throws<ArgumentNullException>("a null lowered-name expression", "expression", "expression",
                ctx => f.SaxpyModule.GetLoweredName(null));
            c.Cuda("an unknown kernel attribute", "cuabi_function_get_attribute", CudaStatus.InvalidArgument, "attribute 9999",
                ctx => k.GetAttribute((FunctionAttribute)9999));
            c.Cuda("an unknown device attribute", "cuabi_device_get_attribute", CudaStatus.InvalidArgument, "cu_attribute 99999",
                ctx => d.GetAttribute(99999));
            c.Cuda("device ordinal -1", "cuabi_device_get", CudaStatus.NoDevice, "no CUDA device -1", ctx => Device.Get(-1));
            c.Cuda("device ordinal 1000000", "cuabi_device_get", CudaStatus.NoDevice, "no CUDA device 1000000", ctx => Device.Get(1000000));
            c.Cuda("unknown stream flags", "cuabi_stream_create", CudaStatus.InvalidArgument, "flags",
                ctx => d.CreateStream((StreamFlags)0x80));
            c.Cuda("unknown event flags", "cuabi_event_create", CudaStatus.InvalidArgument, "flags",
                ctx => d.CreateEvent((EventFlags)0x80));
            c.Cuda("an unknown capture mode", "cuabi_stream_begin_capture", CudaStatus.InvalidArgument, "mode 99",
                ctx => f.Stream.BeginCapture((CaptureMode)99));
            c.Cuda("elapsed time of events never recorded", "cuabi_event_get_elapsed_ms", CudaStatus.InvalidArgument, "never recorded", ctx =>
            {
                using (var e1 = d.CreateEvent())
                using (var e2 = d.CreateEvent())
                    CudaEvent.ElapsedMilliseconds(e1, e2);
            });
            c.Cuda("elapsed time of an untimed event", "cuabi_event_get_elapsed_ms", CudaStatus.InvalidArgument, "DISABLE_TIMING", ctx =>
            {
                f.Untimed.Record();
                f.Timed.Record();
                f.Timed.Synchronize();
                f.Timed.ElapsedSince(f.Untimed);
            });
            c.Throws<ArgumentNullException>("elapsed time from a null start", "start", "start",
                ctx => CudaEvent.ElapsedMilliseconds(null, f.Timed));
            c.Throws<ArgumentNullException>("elapsed time to a null end", "end", "end",
                ctx => CudaEvent.ElapsedMilliseconds(f.Timed, null));
            c.Throws<ArgumentNullException>("waiting on a null event", "ev", "ev", ctx => f.Stream.WaitEvent(null));
            c.Throws<ArgumentNullException>("wrapping a stream for a null device", "device", "device", ctx => CudaStream.Wrap(null, 1));

            // --- Images and files --------------------------------------------------------
            c.Throws<ArgumentException>("an empty image", "image", "is empty", ctx => d.LoadModule(new byte[0]));
            c.Throws<ArgumentNullException>("a null image", "image", "image", ctx => d.LoadModule((byte[])null));
            c.Cuda("random bytes as an image", "cuabi_module_load_data", CudaStatus.Cuda, "cuModuleLoadData", ctx =>
            {
                var junk = new byte[256];
                for (int i = 0; i < junk.Length; i++)
                    junk[i] = (byte)(i * 131 + 7);
                d.LoadModule(junk);
            });
            c.Cuda("PTX text that is not PTX", "cuabi_module_load_data", CudaStatus.Cuda, "cuModuleLoadData",
                ctx => d.LoadModule(".version 99.9\n.target sm_1\nthis is not ptx"));
            c.Cuda("a CUBIN cut in half", "cuabi_module_load_data", CudaStatus.InvalidArgument, "truncated or malformed", ctx =>
            {
                var half = new byte[f.Cubin.Length / 2];
                Array.Copy(f.Cubin, half, half.Length);
                d.LoadModule(half);
            });
            c.Cuda("a CUBIN with its ELF header damaged", "cuabi_module_load_data", CudaStatus.InvalidArgument, "truncated or malformed", ctx =>
            {
                var bad = (byte[])f.Cubin.Clone();
                for (int i = 16; i < 64 && i < bad.Length; i++)
                    bad[i] = 0xFF;
                d.LoadModule(bad);
            });
            c.Cuda("an ELF header alone", "cuabi_module_load_data", CudaStatus.InvalidArgument, "truncated or malformed", ctx =>
            {
                var elf = new byte[64];
                elf[0] = 0x7f;
                elf[1] = (byte)'E';
                elf[2] = (byte)'L';
                elf[3] = (byte)'F';
                elf[4] = 1;
                elf[5] = 1;
                d.LoadModule(elf);
            });
            c.Cuda("a fatbin header claiming 2^40 bytes", "cuabi_module_load_data", CudaStatus.InvalidArgument, "fatbin image is truncated",
                ctx => d.LoadModule(new byte[] { 0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 1, 0, 0 }));
            c.Throws<ArgumentNullException>("null PTX text", "ptx", "ptx", ctx => d.LoadModule((string)null));
            c.Throws<ArgumentException>("PTX text with an embedded NUL", "ptx", "NUL character", ctx => d.LoadModule(".version 8.0\0junk"));
            c.Throws<ArgumentException>("PTX text with a lone surrogate", "ptx", "unpaired surrogate", ctx => d.LoadModule("// \uDFFF\n"));
            c.Cuda("a file that does not exist", "cuabi_module_load_file", CudaStatus.IO, "/nonexistent/kernel.cubin",
                ctx => d.LoadModuleFile("/nonexistent/kernel.cubin"));
            c.Cuda("a directory as the file", "cuabi_module_load_file", CudaStatus.IO, "/tmp", ctx => d.LoadModuleFile("/tmp"));
            c.Cuda("an empty file", "cuabi_module_load_file", CudaStatus.InvalidArgument, "is empty", ctx =>
            {
                string path = TempFile(new byte[0]);
                try
                {
                    d.LoadModuleFile(path);
                }
                finally
                {
                    File.Delete(path);
                }
            });
            c.Cuda("a file holding a truncated CUBIN", "cuabi_module_load_file", CudaStatus.InvalidArgument, "truncated or malformed", ctx =>
            {
                var part = new byte[f.Cubin.Length / 3];
                Array.Copy(f.Cubin, part, part.Length);
                string path = TempFile(part);
                try
                {
                    d.LoadModuleFile(path);
                }
                finally
                {
                    File.Delete(path);
                }
            });
            c.Throws<ArgumentNullException>("a null path", "path", "path", ctx => d.LoadModuleFile(null));
            c.Throws<ArgumentException>("a path with an embedded NUL", "path", "NUL character", ctx => d.LoadModuleFile("/tmp/a\0.cubin"));
            c.Throws<ArgumentException>("a path with a lone surrogate", "path", "unpaired surrogate", ctx => d.LoadModuleFile("/tmp/\uD800.cubin"));

            // --- Device.Compile -------------------------------------------------------------
            var noCache = new Func<CompileOptions>(() => new CompileOptions { UseCache = false });
            c.Cuda("a compile error, with the log", "cuabi_module_compile", CudaStatus.Compile, "undefined_in_module",
                ctx => d.Compile("extern \"C\" __global__ void k(int* x) { *x = undefined_in_module; }", noCache()),
                ctx => LogHolds(ctx, "undefined_in_module"));
            c.Cuda("an architecture that does not exist", "cuabi_module_compile", CudaStatus.Compile, "--gpu-architecture", ctx =>
            {
                var o = noCache();
                o.Options.Add("--gpu-architecture=sm_1");
                d.Compile(NoGpuTests.SaxpySource, o);
            });
            c.Cuda("an unknown option", "cuabi_module_compile", CudaStatus.Compile, "--no-such-option", ctx =>
            {
                var o = noCache();
                o.Options.Add("--no-such-option");
                d.Compile(NoGpuTests.SaxpySource, o);
            }, ctx => LogHolds(ctx, "--no-such-option"));
            c.Cuda("a name expression naming nothing", "cuabi_module_compile", CudaStatus.Compile, "no_such_template", ctx =>
            {
                var o = noCache();
                o.NameExpressions.Add("no_such_template<int>");
                d.Compile(Template, o);
            });
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
            c.Throws<ArgumentException>("an option with a lone surrogate", "options.Options[1]", "unpaired surrogate", ctx =>
            {
                var o = noCache();
                o.Options.Add("-w");
                o.Options.Add("-DX=\uDC00");
                d.Compile(NoGpuTests.SaxpySource, o);
            });
            c.Throws<ArgumentNullException>("a null name expression", "options.NameExpressions[0]", "options.NameExpressions[0]", ctx =>
            {
                var o = noCache();
                o.NameExpressions.Add(null);
                d.Compile(Template, o);
            });
            c.Throws<ArgumentNullException>("a header whose contents are null", "options.Headers (source)[0]",
                "options.Headers (source)[0]", ctx =>
                {
                    var o = noCache();
                    o.Headers.Add("h.cuh", null);
                    d.Compile(NoGpuTests.SaxpySource, o);
                });
            c.Cuda("an empty option", "cuabi_module_compile", CudaStatus.InvalidArgument, "options[0] is empty", ctx =>
            {
                var o = noCache();
                o.Options.Add("");
                d.Compile(NoGpuTests.SaxpySource, o);
            });

            // --- Lifetimes: objects that outlive what they were made from -----------------------
            c.Fine("module disposed while its kernel is held: the kernel still launches", ctx =>
            {
                var m = d.Compile(NoGpuTests.SaxpySource);
                using (var kernel = m.GetKernel("saxpy"))
                {
                    m.Dispose();
                    try
                    {
                        m.GetKernel("saxpy");
                        ctx.Problem("the disposed module still answers");
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                    string r = SaxpyResult(f, kernel, null, 4096);
                    if (r != null)
                        ctx.Problem(r);
                    ctx.Expect(kernel.Name == "saxpy", "the kernel lost its name");
                }
            });
            c.Fine("a plan outlives its module, kernel and stream", ctx =>
            {
                var m = d.LoadModule(f.Cubin);
                var kernel = m.GetKernel("saxpy");
                var s = d.CreateStream();
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
            c.Fine("kernel disposed after preparing a plan: the plan still launches", ctx =>
            {
                var kernel = f.SaxpyModule.GetKernel("saxpy");
                using (var p = kernel.Prepare(4, 256))
                {
                    kernel.Dispose();
                    Mark(f);
                    p.SetArguments(f.Args());
                    p.Launch();
                    Launched(ctx, f);
                }
            });
        }

        // --- The device part through NativeMethods, with raw values -------------------

        /// <summary>
        /// SAXPY's arguments in unmanaged memory for the raw launch calls:
        /// values (8 bytes each: a, x, y, out, n, and n again), the pointer
        /// array to them and the size array, all editable; and a packed
        /// 40-byte block of the same values.
        /// </summary>
        private sealed class RawArgs : IDisposable
        {
            public readonly IntPtr Values = Marshal.AllocHGlobal(6 * 8);
            public readonly IntPtr Params = Marshal.AllocHGlobal(6 * IntPtr.Size);
            public readonly IntPtr Sizes = Marshal.AllocHGlobal(6 * IntPtr.Size);
            public readonly IntPtr Packed = Marshal.AllocHGlobal(40);

            public RawArgs(GpuFixture f)
            {
                var v = new long[] { 0, (long)f.A.DevicePointer, (long)f.A.DevicePointer, (long)f.B.DevicePointer, N, N };
                for (int i = 0; i < 6; i++)
                {
                    Marshal.WriteInt64(Values, 8 * i, v[i]);
                    Marshal.WriteIntPtr(Params, IntPtr.Size * i, Values + 8 * i);
                    Marshal.WriteIntPtr(Sizes, IntPtr.Size * i, new IntPtr(i == 0 ? 4 : 8));
                    if (i < 5)
                        Marshal.WriteInt64(Packed, 8 * i, v[i]);
                }
                Marshal.WriteInt32(Values, 0, BitConverter.ToInt32(BitConverter.GetBytes(2.0f), 0));
                Marshal.WriteInt32(Packed, 0, BitConverter.ToInt32(BitConverter.GetBytes(2.0f), 0));
                Marshal.WriteInt32(Packed, 4, 0);
            }

            public void Param(int i, IntPtr p)
            {
                Marshal.WriteIntPtr(Params, IntPtr.Size * i, p);
            }

            public void Size(int i, long bytes)
            {
                Marshal.WriteIntPtr(Sizes, IntPtr.Size * i, new IntPtr(bytes));
            }

            public void Dispose()
            {
                Marshal.FreeHGlobal(Values);
                Marshal.FreeHGlobal(Params);
                Marshal.FreeHGlobal(Sizes);
                Marshal.FreeHGlobal(Packed);
            }
        }

        private static LaunchConfigNative Config(uint grid, uint block, uint shared = 0)
        {
            var cfg = LaunchConfigNative.Create();
            cfg.grid_x = grid;
            cfg.block_x = block;
            cfg.shared_mem_bytes = shared;
            return cfg;
        }

        /// <summary>A launch configuration as a newer header would lay it out: one more field after it.</summary>
        [StructLayout(LayoutKind.Sequential)]
        private struct NewerLaunchConfig
        {
            public LaunchConfigNative Config;
            public ulong Future;
        }

        /// <summary>A compile description as a newer header would lay it out: one more field after it.</summary>
        [StructLayout(LayoutKind.Sequential)]
        private struct NewerCompileDesc
        {
            public CompileDescNative Desc;
            public ulong Future;
        }

        /// <summary>Makes a handle of one kind and releases it, keeping its value.</summary>
        private static IntPtr ReleasedValue(CuabiSafeHandle h)
        {
            IntPtr v = h.DangerousGetHandle();
            h.Dispose();
            return v;
        }

        /// <summary>The slot index bits of a handle value.</summary>
        private static long SlotOf(IntPtr v)
        {
            return v.ToInt64() & 0xFFFFFF;
        }

        private static void RawGpuCases(Corpus c, GpuFixture f)
        {
            SafeDeviceHandle dev = f.Device.Handle;
            SafeBufferHandle a = f.A.Handle, b = f.B.Handle;
            SafeStreamHandle stream = f.Stream.Handle;
            SafeFunctionHandle saxpy = f.Saxpy.Handle;
            var noStream = new SafeStreamHandle();
            IntPtr host = f.Host;

            // --- Allocations and copies ------------------------------------------------
            c.Cuda("(size_t)-1 bytes", "cuabi_buffer_alloc", CudaStatus.OutOfMemory, "18446744073709551615", ctx =>
            {
                SafeBufferHandle h;
                int st = NativeMethods.cuabi_buffer_alloc(dev, SizeMax, out h);
                ctx.Expect(h.IsInvalid, "out was written although the call failed");
                Check(st);
            }, ctx => StillWorks(ctx, f));
            c.Cuda("(size_t)-1 pinned bytes", "cuabi_host_buffer_alloc", CudaStatus.OutOfMemory, "cuMemHostAlloc", ctx =>
            {
                SafeHostBufferHandle h;
                Check(NativeMethods.cuabi_host_buffer_alloc(dev, SizeMax, out h));
            });
            c.Cuda("registering NULL", "cuabi_host_buffer_register", CudaStatus.InvalidArgument, "ptr is NULL", ctx =>
            {
                SafeHostBufferHandle h;
                Check(NativeMethods.cuabi_host_buffer_register(dev, IntPtr.Zero, (UIntPtr)64u, out h));
            });
            c.Cuda("registering zero bytes", "cuabi_host_buffer_register", CudaStatus.InvalidArgument, "bytes is 0", ctx =>
            {
                SafeHostBufferHandle h;
                Check(NativeMethods.cuabi_host_buffer_register(dev, host, UIntPtr.Zero, out h));
            });
            c.Cuda("offset + bytes overflows size_t", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange, "destination range",
                ctx => Check(NativeMethods.cuabi_buffer_copy_from_host(a, SizeMax, host, (UIntPtr)2u)));
            c.Cuda("(size_t)-1 bytes to copy", "cuabi_buffer_copy_from_host", CudaStatus.OutOfRange, "destination range",
                ctx => Check(NativeMethods.cuabi_buffer_copy_from_host(a, UIntPtr.Zero, host, SizeMax)));
            c.Cuda("source NULL", "cuabi_buffer_copy_from_host", CudaStatus.InvalidArgument, "src is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_copy_from_host(a, UIntPtr.Zero, IntPtr.Zero, (UIntPtr)16u)));
            c.Fine("zero bytes from NULL at the end", ctx =>
                Check(NativeMethods.cuabi_buffer_copy_from_host(a, (UIntPtr)4096u, IntPtr.Zero, UIntPtr.Zero)));
            c.Cuda("reading past the end", "cuabi_buffer_copy_to_host", CudaStatus.OutOfRange, "source range", ctx =>
            {
                Marshal.WriteByte(host, 0, 0x5c);
                Check(NativeMethods.cuabi_buffer_copy_to_host(a, (UIntPtr)4000u, host, (UIntPtr)97u));
            }, ctx => ctx.Expect(Marshal.ReadByte(host, 0) == 0x5c, "the host memory was written although the copy failed"));
            c.Cuda("destination NULL", "cuabi_buffer_copy_to_host", CudaStatus.InvalidArgument, "dst is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_copy_to_host(a, UIntPtr.Zero, IntPtr.Zero, (UIntPtr)16u)));
            c.Cuda("an async copy past the end", "cuabi_buffer_copy_from_host_async", CudaStatus.OutOfRange, "destination range",
                ctx => Check(NativeMethods.cuabi_buffer_copy_from_host_async(a, (UIntPtr)1u, host, (UIntPtr)4096u, stream)));
            c.Cuda("an async read past the end", "cuabi_buffer_copy_to_host_async", CudaStatus.OutOfRange, "source range",
                ctx => Check(NativeMethods.cuabi_buffer_copy_to_host_async(a, (UIntPtr)4096u, host, (UIntPtr)1u, stream)));
            c.Cuda("an async copy on a released stream", "cuabi_buffer_copy_from_host_async", CudaStatus.InvalidHandle,
                "stream is not a live cuabi_stream", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Device.CreateStream().Handle);
                    Check(NativeMethods.cuabi_buffer_copy_from_host_async(a, UIntPtr.Zero, host, (UIntPtr)16u, AsStream(gone)));
                });
            c.Cuda("an async copy with a buffer handle as the stream", "cuabi_buffer_copy_to_host_async", CudaStatus.InvalidHandle,
                "it is a cuabi_buffer", ctx => Check(NativeMethods.cuabi_buffer_copy_to_host_async(a, UIntPtr.Zero, host, (UIntPtr)16u,
                    AsStream(b.DangerousGetHandle()))));
            c.Cuda("an async device copy overlapping", "cuabi_buffer_copy_async", CudaStatus.InvalidArgument, "overlap",
                ctx => Check(NativeMethods.cuabi_buffer_copy_async(a, UIntPtr.Zero, a, (UIntPtr)8u, (UIntPtr)16u, stream)));
            c.Cuda("a device copy of one byte onto itself", "cuabi_buffer_copy", CudaStatus.InvalidArgument, "overlap",
                ctx => Check(NativeMethods.cuabi_buffer_copy(a, (UIntPtr)128u, a, (UIntPtr)128u, (UIntPtr)1u)));
            c.Cuda("a device copy past the destination's end", "cuabi_buffer_copy", CudaStatus.OutOfRange, "destination range",
                ctx => Check(NativeMethods.cuabi_buffer_copy(a, (UIntPtr)4000u, b, UIntPtr.Zero, (UIntPtr)100u)));
            c.Cuda("a device copy past the source's end", "cuabi_buffer_copy", CudaStatus.OutOfRange, "source range",
                ctx => Check(NativeMethods.cuabi_buffer_copy(a, UIntPtr.Zero, b, (UIntPtr)4095u, (UIntPtr)2u)));
            c.Cuda("memset past the end", "cuabi_buffer_memset", CudaStatus.OutOfRange, "memset range",
                ctx => Check(NativeMethods.cuabi_buffer_memset(a, (UIntPtr)4095u, 0, (UIntPtr)2u)));
            c.Cuda("an async memset of (size_t)-1 bytes", "cuabi_buffer_memset_async", CudaStatus.OutOfRange, "memset range",
                ctx => Check(NativeMethods.cuabi_buffer_memset_async(a, UIntPtr.Zero, 0, SizeMax, stream)));

            // --- Released handles of every kind ---------------------------------------------
            c.Cuda("released device", "cuabi_device_get_ordinal", CudaStatus.InvalidHandle, "device is not a live cuabi_device", ctx =>
            {
                int o;
                Check(NativeMethods.cuabi_device_get_ordinal(AsDevice(ReleasedValue(Device.Get(0).Handle)), out o));
            });
            c.Cuda("released module", "cuabi_module_get_function", CudaStatus.InvalidHandle, "module is not a live cuabi_module", ctx =>
            {
                SafeFunctionHandle fn;
                Check(NativeMethods.cuabi_module_get_function(AsModule(ReleasedValue(f.Device.LoadModule(f.Cubin).Handle)),
                    Z("saxpy"), out fn));
            });
            c.Cuda("released function", "cuabi_function_get_param_count", CudaStatus.InvalidHandle,
                "function is not a live cuabi_function", ctx =>
                {
                    UIntPtr n;
                    Check(NativeMethods.cuabi_function_get_param_count(
                        AsFunction(ReleasedValue(f.SaxpyModule.GetKernel("saxpy").Handle)), out n));
                });
            c.Cuda("released buffer", "cuabi_buffer_get_size", CudaStatus.InvalidHandle, "buffer is not a live cuabi_buffer", ctx =>
            {
                UIntPtr n;
                Check(NativeMethods.cuabi_buffer_get_size(AsBuffer(ReleasedValue(f.Device.Allocate<float>(4).Handle)), out n));
            });
            c.Cuda("released host buffer", "cuabi_host_buffer_get_pointer", CudaStatus.InvalidHandle,
                "buffer is not a live cuabi_host_buffer", ctx =>
                {
                    IntPtr p;
                    Check(NativeMethods.cuabi_host_buffer_get_pointer(
                        AsHostBuffer(ReleasedValue(f.Device.AllocatePinned<float>(4).Handle)), out p));
                });
            c.Cuda("released stream", "cuabi_stream_synchronize", CudaStatus.InvalidHandle, "stream is not a live cuabi_stream",
                ctx => Check(NativeMethods.cuabi_stream_synchronize(AsStream(ReleasedValue(f.Device.CreateStream().Handle)))));
            c.Cuda("released event", "cuabi_event_query", CudaStatus.InvalidHandle, "event is not a live cuabi_event",
                ctx => Check(NativeMethods.cuabi_event_query(AsEvent(ReleasedValue(f.Device.CreateEvent().Handle)))));
            c.Cuda("released plan", "cuabi_launch_plan_launch", CudaStatus.InvalidHandle, "plan is not a live cuabi_launch_plan",
                ctx => Check(NativeMethods.cuabi_launch_plan_launch(AsPlan(ReleasedValue(f.Saxpy.Prepare(4, 256).Handle)))));
            c.Cuda("released graph", "cuabi_graph_get_node_count", CudaStatus.InvalidHandle, "graph is not a live cuabi_graph", ctx =>
            {
                using (var s = f.Device.CreateStream())
                {
                    IntPtr gone = ReleasedValue(Captured(f, s).Handle);
                    UIntPtr n;
                    Check(NativeMethods.cuabi_graph_get_node_count(AsGraph(gone), out n));
                }
            });
            c.Cuda("released graph exec", "cuabi_graph_exec_launch", CudaStatus.InvalidHandle, "exec is not a live cuabi_graph_exec", ctx =>
            {
                using (var s = f.Device.CreateStream())
                {
                    using (var g = Captured(f, s))
                        Check(NativeMethods.cuabi_graph_exec_launch(AsGraphExec(ReleasedValue(g.Instantiate().Handle)), s.Handle));
                }
            });
            c.Cuda("stale buffer (its slot reused by a live one)", "cuabi_buffer_memset", CudaStatus.InvalidHandle,
                "buffer is not a live cuabi_buffer", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Device.Allocate<float>(4).Handle);
                    using (var reuser = f.Device.Allocate<float>(4))
                    {
                        if (SlotOf(gone) != SlotOf(reuser.Handle.DangerousGetHandle()))
                            ctx.Problem("the slot was not reused; the case tests nothing");
                        int st = NativeMethods.cuabi_buffer_memset(AsBuffer(gone), UIntPtr.Zero, 0, (UIntPtr)4u);
                        reuser.Memset(0x11);
                        ctx.Expect(reuser.ToArray()[3] == BitConverter.ToSingle(new byte[] { 0x11, 0x11, 0x11, 0x11 }, 0),
                            "the live buffer in the slot stopped working");
                        Check(st);
                    }
                });
            c.Cuda("stale stream (its slot reused by a live one)", "cuabi_stream_query", CudaStatus.InvalidHandle,
                "stream is not a live cuabi_stream", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Device.CreateStream().Handle);
                    using (var reuser = f.Device.CreateStream())
                    {
                        if (SlotOf(gone) != SlotOf(reuser.Handle.DangerousGetHandle()))
                            ctx.Problem("the slot was not reused; the case tests nothing");
                        Check(NativeMethods.cuabi_stream_query(AsStream(gone)));
                    }
                });

            // --- Wrong kinds -------------------------------------------------------------------
            c.Cuda("buffer handle as a module", "cuabi_module_get_function", CudaStatus.InvalidHandle, "it is a cuabi_buffer", ctx =>
            {
                SafeFunctionHandle fn;
                Check(NativeMethods.cuabi_module_get_function(AsModule(a.DangerousGetHandle()), Z("saxpy"), out fn));
            });
            c.Cuda("stream handle as an event", "cuabi_stream_wait_event", CudaStatus.InvalidHandle, "it is a cuabi_stream",
                ctx => Check(NativeMethods.cuabi_stream_wait_event(stream, AsEvent(stream.DangerousGetHandle()))));
            c.Cuda("function handle as a module", "cuabi_module_get_global", CudaStatus.InvalidHandle, "it is a cuabi_function", ctx =>
            {
                ulong p;
                UIntPtr n;
                Check(NativeMethods.cuabi_module_get_global(AsModule(saxpy.DangerousGetHandle()), Z("g"), out p, out n));
            });
            c.Cuda("device handle as a buffer", "cuabi_buffer_copy", CudaStatus.InvalidHandle, "it is a cuabi_device",
                ctx => Check(NativeMethods.cuabi_buffer_copy(a, UIntPtr.Zero, AsBuffer(dev.DangerousGetHandle()), UIntPtr.Zero, (UIntPtr)4u)));
            c.Cuda("event handle as the launch's stream", "cuabi_function_launch_packed", CudaStatus.InvalidHandle,
                "stream is not a live cuabi_stream", ctx =>
                {
                    using (var r = new RawArgs(f))
                    {
                        var cfg = Config(4, 256);
                        Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref cfg, AsStream(f.Timed.Handle.DangerousGetHandle()), r.Packed,
                            (UIntPtr)40u));
                    }
                });
            c.Cuda("module handle as the function", "cuabi_function_launch", CudaStatus.InvalidHandle, "it is a cuabi_module", ctx =>
            {
                var cfg = Config(1, 32);
                Check(NativeMethods.cuabi_function_launch(AsFunction(f.SaxpyModule.Handle.DangerousGetHandle()), ref cfg, noStream, IntPtr.Zero,
                    UIntPtr.Zero));
            });
            c.Cuda("plan handle as a graph exec", "cuabi_graph_exec_launch", CudaStatus.InvalidHandle, "it is a cuabi_launch_plan", ctx =>
            {
                using (var plan = f.Saxpy.Prepare(4, 256))
                    Check(NativeMethods.cuabi_graph_exec_launch(AsGraphExec(plan.Handle.DangerousGetHandle()), noStream));
            });
            c.Cuda("host buffer handle as a device buffer", "cuabi_buffer_get_pointer", CudaStatus.InvalidHandle,
                "it is a cuabi_host_buffer", ctx =>
                {
                    ulong p;
                    Check(NativeMethods.cuabi_buffer_get_pointer(AsBuffer(f.Pinned.Handle.DangerousGetHandle()), out p));
                });

            // --- Released twice; released through another kind --------------------------------
            c.Cuda("buffer released twice, then used", "cuabi_buffer_memset", CudaStatus.InvalidHandle,
                "buffer is not a live cuabi_buffer", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Device.Allocate<float>(16).Handle);
                    NativeMethods.cuabi_buffer_release(gone);
                    Check(NativeMethods.cuabi_buffer_memset(AsBuffer(gone), UIntPtr.Zero, 0, (UIntPtr)64u));
                });
            c.Cuda("stream released twice, then used", "cuabi_stream_synchronize", CudaStatus.InvalidHandle,
                "stream is not a live cuabi_stream", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Device.CreateStream().Handle);
                    NativeMethods.cuabi_stream_release(gone);
                    Check(NativeMethods.cuabi_stream_synchronize(AsStream(gone)));
                });
            c.Cuda("plan released twice, then launched", "cuabi_launch_plan_launch", CudaStatus.InvalidHandle,
                "plan is not a live cuabi_launch_plan", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Saxpy.Prepare(4, 256).Handle);
                    NativeMethods.cuabi_launch_plan_release(gone);
                    Check(NativeMethods.cuabi_launch_plan_launch(AsPlan(gone)));
                });
            c.Cuda("module released, then its handle used", "cuabi_module_get_global", CudaStatus.InvalidHandle,
                "module is not a live cuabi_module", ctx =>
                {
                    IntPtr gone = ReleasedValue(f.Device.LoadModule(f.Cubin).Handle);
                    ulong p;
                    UIntPtr n;
                    Check(NativeMethods.cuabi_module_get_global(AsModule(gone), Z("g"), out p, out n));
                });
            c.Fine("live device objects released through every other kind's release", ctx =>
            {
                IntPtr bv = a.DangerousGetHandle(), sv = stream.DangerousGetHandle(), fv = saxpy.DangerousGetHandle();
                foreach (IntPtr v in new[] { bv, sv, fv })
                {
                    NativeMethods.cuabi_device_release(v);
                    NativeMethods.cuabi_program_release(v);
                    NativeMethods.cuabi_module_release(v);
                    NativeMethods.cuabi_host_buffer_release(v);
                    NativeMethods.cuabi_event_release(v);
                    NativeMethods.cuabi_graph_release(v);
                    NativeMethods.cuabi_graph_exec_release(v);
                    NativeMethods.cuabi_launch_plan_release(v);
                    if (v != bv)
                        NativeMethods.cuabi_buffer_release(v);
                    if (v != sv)
                        NativeMethods.cuabi_stream_release(v);
                    if (v != fv)
                        NativeMethods.cuabi_function_release(v);
                }
                string r = SaxpyResult(f, f.Saxpy, f.Stream, N);
                if (r != null)
                    ctx.Problem("the fixture's kernel, buffer or stream died: " + r);
                UIntPtr size;
                ctx.Expect(NativeMethods.cuabi_buffer_get_size(a, out size) == 0 && size.ToUInt64() == 4096, "the buffer died");
            });

            // --- Launches through the raw calls ------------------------------------------------
            c.Cuda("four arguments for five parameters", "cuabi_function_launch", CudaStatus.InvalidArgument,
                "takes 5 parameters, but 4 were given", ctx =>
                {
                    Mark(f);
                    using (var r = new RawArgs(f))
                    {
                        var cfg = Config(4, 256);
                        Check(NativeMethods.cuabi_function_launch(saxpy, ref cfg, noStream, r.Params, (UIntPtr)4u));
                    }
                }, ctx => Untouched(ctx, f));
            c.Cuda("six arguments for five parameters", "cuabi_function_launch", CudaStatus.InvalidArgument, "6 were given", ctx =>
            {
                Mark(f);
                using (var r = new RawArgs(f))
                {
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch(saxpy, ref cfg, noStream, r.Params, (UIntPtr)6u));
                }
            }, ctx => Untouched(ctx, f));
            c.Cuda("params NULL", "cuabi_function_launch", CudaStatus.InvalidArgument, "params is NULL", ctx =>
            {
                var cfg = Config(4, 256);
                Check(NativeMethods.cuabi_function_launch(saxpy, ref cfg, noStream, IntPtr.Zero, (UIntPtr)5u));
            });
            c.Cuda("one argument pointer NULL", "cuabi_function_launch", CudaStatus.InvalidArgument, "params[3] is NULL", ctx =>
            {
                Mark(f);
                using (var r = new RawArgs(f))
                {
                    r.Param(3, IntPtr.Zero);
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch(saxpy, ref cfg, noStream, r.Params, (UIntPtr)5u));
                }
            }, ctx => Untouched(ctx, f));
            c.Cuda("a 4-byte n for a size_t parameter (the overview's bug)", "cuabi_function_launch_sized", CudaStatus.InvalidArgument,
                "parameter 4 is 8 bytes, but the argument given is 4 bytes", ctx =>
                {
                    Mark(f);
                    using (var r = new RawArgs(f))
                    {
                        r.Size(4, 4);
                        var cfg = Config(4, 256);
                        Check(NativeMethods.cuabi_function_launch_sized(saxpy, ref cfg, noStream, r.Params, r.Sizes, (UIntPtr)5u));
                    }
                }, ctx => Untouched(ctx, f));
            c.Cuda("a double for a float parameter", "cuabi_function_launch_sized", CudaStatus.InvalidArgument, "parameter 0 is 4 bytes", ctx =>
            {
                Mark(f);
                using (var r = new RawArgs(f))
                {
                    r.Size(0, 8);
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch_sized(saxpy, ref cfg, noStream, r.Params, r.Sizes, (UIntPtr)5u));
                }
            }, ctx => Untouched(ctx, f));
            c.Cuda("param_sizes NULL", "cuabi_function_launch_sized", CudaStatus.InvalidArgument, "param_sizes is NULL", ctx =>
            {
                using (var r = new RawArgs(f))
                {
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch_sized(saxpy, ref cfg, noStream, r.Params, IntPtr.Zero, (UIntPtr)5u));
                }
            });
            c.Cuda("no arguments at all", "cuabi_function_launch_sized", CudaStatus.InvalidArgument, "but 0 were given", ctx =>
            {
                var cfg = Config(4, 256);
                Check(NativeMethods.cuabi_function_launch_sized(saxpy, ref cfg, noStream, IntPtr.Zero, IntPtr.Zero, UIntPtr.Zero));
            });
            c.Fine("the right sizes launch", ctx =>
            {
                Mark(f);
                using (var r = new RawArgs(f))
                {
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch_sized(saxpy, ref cfg, noStream, r.Params, r.Sizes, (UIntPtr)5u));
                }
            }, ctx => Launched(ctx, f));
            c.Cuda("a packed block of 36 bytes for 40", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "40-byte argument block", ctx =>
            {
                Mark(f);
                using (var r = new RawArgs(f))
                {
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref cfg, noStream, r.Packed, (UIntPtr)36u));
                }
            }, ctx => Untouched(ctx, f));
            c.Cuda("a packed block of (size_t)-1 bytes", "cuabi_function_launch_packed", CudaStatus.InvalidArgument,
                "18446744073709551615 bytes were given", ctx =>
                {
                    using (var r = new RawArgs(f))
                    {
                        var cfg = Config(4, 256);
                        Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref cfg, noStream, r.Packed, SizeMax));
                    }
                });
            c.Cuda("packed args NULL", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "args is NULL", ctx =>
            {
                var cfg = Config(4, 256);
                Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref cfg, noStream, IntPtr.Zero, (UIntPtr)40u));
            });
            c.Cuda("config struct_size 0", "cuabi_function_launch_packed", CudaStatus.InvalidArgument, "config->struct_size is 0", ctx =>
            {
                using (var r = new RawArgs(f))
                {
                    var cfg = Config(4, 256);
                    cfg.struct_size = UIntPtr.Zero;
                    Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref cfg, noStream, r.Packed, (UIntPtr)40u));
                }
            });
            c.Cuda("a config from a newer header with a field set", "cuabi_function_launch_packed", CudaStatus.NotSupported,
                "newer than this library", ctx =>
                {
                    Mark(f);
                    using (var r = new RawArgs(f))
                    {
                        var big = new NewerLaunchConfig { Config = Config(4, 256), Future = 1 };
                        big.Config.struct_size = (UIntPtr)(uint)Marshal.SizeOf(typeof(NewerLaunchConfig));
                        Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref big.Config, noStream, r.Packed, (UIntPtr)40u));
                    }
                }, ctx => Untouched(ctx, f));
            c.Fine("a config from a newer header, its new field zero", ctx =>
            {
                Mark(f);
                using (var r = new RawArgs(f))
                {
                    var big = new NewerLaunchConfig { Config = Config(4, 256), Future = 0 };
                    big.Config.struct_size = (UIntPtr)(uint)Marshal.SizeOf(typeof(NewerLaunchConfig));
                    Check(NativeMethods.cuabi_function_launch_packed(saxpy, ref big.Config, noStream, r.Packed, (UIntPtr)40u));
                }
            }, ctx => Launched(ctx, f));
            c.Cuda("a program handle as the stream", "cuabi_function_launch_sized", CudaStatus.InvalidHandle, "stream is not a live cuabi_stream", ctx =>
            {
                using (var p = new Program("__device__ int x;"))
                using (var r = new RawArgs(f))
                {
                    var cfg = Config(4, 256);
                    Check(NativeMethods.cuabi_function_launch_sized(saxpy, ref cfg, AsStream(p.Handle.DangerousGetHandle()), r.Params, r.Sizes,
                        (UIntPtr)5u));
                }
            });
            c.Cuda("a plan with config struct_size 0", "cuabi_launch_plan_create", CudaStatus.InvalidArgument, "struct_size is 0", ctx =>
            {
                var cfg = Config(4, 256);
                cfg.struct_size = UIntPtr.Zero;
                SafeLaunchPlanHandle plan;
                Check(NativeMethods.cuabi_launch_plan_create(saxpy, ref cfg, noStream, out plan));
            });
            c.Cuda("a plan on a released stream", "cuabi_launch_plan_create", CudaStatus.InvalidHandle,
                "stream is not a live cuabi_stream", ctx =>
                {
                    var cfg = Config(4, 256);
                    SafeLaunchPlanHandle plan;
                    Check(NativeMethods.cuabi_launch_plan_create(saxpy, ref cfg, AsStream(ReleasedValue(f.Device.CreateStream().Handle)),
                        out plan));
                });
            c.Cuda("a plan with a block over the limit, out untouched", "cuabi_launch_plan_create", CudaStatus.InvalidArgument,
                "exceeds the device's limit", ctx =>
                {
                    var cfg = Config(1, 4096);
                    SafeLaunchPlanHandle plan;
                    int st = NativeMethods.cuabi_launch_plan_create(saxpy, ref cfg, noStream, out plan);
                    ctx.Expect(plan.IsInvalid, "out was written although the call failed");
                    Check(st);
                });
            c.Cuda("parameter index past the end", "cuabi_function_get_param_info", CudaStatus.OutOfRange, "index 5 is past", ctx =>
            {
                UIntPtr off, size;
                Check(NativeMethods.cuabi_function_get_param_info(saxpy, (UIntPtr)5u, out off, out size));
            });
            c.Cuda("parameter index (size_t)-1", "cuabi_function_get_param_info", CudaStatus.OutOfRange, "index 18446744073709551615", ctx =>
            {
                UIntPtr off, size;
                Check(NativeMethods.cuabi_function_get_param_info(saxpy, SizeMax, out off, out size));
            });
            c.Cuda("a kernel name into a 1-byte buffer", "cuabi_function_get_name", CudaStatus.InsufficientBuffer, "are needed", ctx =>
            {
                var buf = new byte[] { 0x23 };
                UIntPtr n = (UIntPtr)1u;
                int st = NativeMethods.cuabi_function_get_name(saxpy, buf, ref n);
                ctx.Expect(buf[0] == 0x23, "a too-small buffer was written");
                ctx.Expect(n.ToUInt64() == 6, "*size is " + n + ", not 6");
                Check(st);
            });

            // --- Names, images and compile descriptions through the raw calls ----------------------
            c.Cuda("a NULL kernel name", "cuabi_module_get_function", CudaStatus.InvalidArgument, "name", ctx =>
            {
                SafeFunctionHandle fn;
                Check(NativeMethods.cuabi_module_get_function(f.SaxpyModule.Handle, null, out fn));
            });
            c.Cuda("a kernel name that is not UTF-8", "cuabi_module_get_function", CudaStatus.InvalidArgument, "UTF-8", ctx =>
            {
                SafeFunctionHandle fn;
                int st = NativeMethods.cuabi_module_get_function(f.SaxpyModule.Handle, Z("sax\u00ffpy"), out fn);
                ctx.Expect(LastMessageIsUtf8(), "the message is not UTF-8");
                Check(st);
            });
            c.Cuda("a global name that is not UTF-8", "cuabi_module_get_global", CudaStatus.InvalidArgument, "UTF-8", ctx =>
            {
                ulong p;
                UIntPtr n;
                Check(NativeMethods.cuabi_module_get_global(f.SaxpyModule.Handle, Z("g\u00c0\u0080"), out p, out n));
            });
            c.Cuda("a module path that is not UTF-8", "cuabi_module_load_file", CudaStatus.InvalidArgument, "UTF-8", ctx =>
            {
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_module_load_file(dev, Z("/tmp/\u00ff\u00fe.cubin"), out m));
            });
            c.Cuda("image NULL", "cuabi_module_load_data", CudaStatus.InvalidArgument, "image is NULL", ctx =>
            {
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_module_load_data(dev, IntPtr.Zero, (UIntPtr)10u, out m));
            });
            c.Cuda("an image of zero bytes", "cuabi_module_load_data", CudaStatus.InvalidArgument, "size is 0", ctx =>
            {
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_module_load_data(dev, host, UIntPtr.Zero, out m));
            });
            Func<Func<RawStrings, CompileDescNative>, Action<CaseContext>> compileDesc = make => ctx =>
            {
                using (var r = new RawStrings())
                {
                    CompileDescNative d = make(r);
                    SafeModuleHandle m;
                    int st = NativeMethods.cuabi_module_compile(dev, ref d, out m);
                    m.Dispose();
                    Check(st);
                }
            };
            c.Cuda("desc struct_size 0", "cuabi_module_compile", CudaStatus.InvalidArgument, "desc->struct_size is 0", compileDesc(r =>
            {
                var d = CompileDescNative.Create();
                d.source = r.Str(NoGpuTests.SaxpySource);
                d.struct_size = UIntPtr.Zero;
                return d;
            }));
            c.Cuda("desc source NULL", "cuabi_module_compile", CudaStatus.InvalidArgument, "desc->source is NULL",
                compileDesc(r => CompileDescNative.Create()));
            c.Cuda("desc flags unknown", "cuabi_module_compile", CudaStatus.InvalidArgument, "desc->flags", compileDesc(r =>
            {
                var d = CompileDescNative.Create();
                d.source = r.Str(NoGpuTests.SaxpySource);
                d.flags = 0x100;
                return d;
            }));
            c.Cuda("desc options NULL with a count", "cuabi_module_compile", CudaStatus.InvalidArgument, "desc->options", compileDesc(r =>
            {
                var d = CompileDescNative.Create();
                d.source = r.Str(NoGpuTests.SaxpySource);
                d.num_options = (UIntPtr)3u;
                return d;
            }));
            c.Cuda("desc options count (size_t)-1", "cuabi_module_compile", CudaStatus.InvalidArgument, "implausibly large", compileDesc(r =>
            {
                var d = CompileDescNative.Create();
                d.source = r.Str(NoGpuTests.SaxpySource);
                d.options = r.Array(r.Str("-w"));
                d.num_options = SizeMax;
                return d;
            }));
            c.Cuda("desc name expression NULL", "cuabi_module_compile", CudaStatus.InvalidArgument, "desc->name_expressions[0] is NULL",
                compileDesc(r =>
                {
                    var d = CompileDescNative.Create();
                    d.source = r.Str(Template);
                    d.name_expressions = r.Array(IntPtr.Zero);
                    d.num_name_expressions = (UIntPtr)1u;
                    return d;
                }));
            c.Cuda("desc header name NULL", "cuabi_module_compile", CudaStatus.InvalidArgument, "header_names[0] is NULL", compileDesc(r =>
            {
                var d = CompileDescNative.Create();
                d.source = r.Str(NoGpuTests.SaxpySource);
                d.header_sources = r.Array(r.Str("int a;"));
                d.header_names = r.Array(IntPtr.Zero);
                d.num_headers = (UIntPtr)1u;
                return d;
            }));
            c.Cuda("desc source that is not UTF-8 in an identifier", "cuabi_module_compile", CudaStatus.Compile, "could not compile",
                compileDesc(r =>
                {
                    var d = CompileDescNative.Create();
                    d.source = r.Str(Z("extern \"C\" __global__ void k\u00ff(int* x) { *x = 1; }\n"));
                    d.flags = NativeMethods.CUABI_COMPILE_NO_CACHE;
                    return d;
                }));
            c.Cuda("a desc from a newer header with a field set", "cuabi_module_compile", CudaStatus.NotSupported, "newer than this library",
                ctx =>
                {
                    using (var r = new RawStrings())
                    {
                        var big = new NewerCompileDesc { Desc = CompileDescNative.Create(), Future = 3 };
                        big.Desc.struct_size = (UIntPtr)(uint)Marshal.SizeOf(typeof(NewerCompileDesc));
                        big.Desc.source = r.Str(NoGpuTests.SaxpySource);
                        SafeModuleHandle m;
                        int st = NativeMethods.cuabi_module_compile(dev, ref big.Desc, out m);
                        m.Dispose();
                        Check(st);
                    }
                });

            // --- Streams and events through the raw calls ---------------------------------------
            c.Cuda("waiting on a released event", "cuabi_stream_wait_event", CudaStatus.InvalidHandle, "event is not a live cuabi_event",
                ctx => Check(NativeMethods.cuabi_stream_wait_event(stream, AsEvent(ReleasedValue(f.Device.CreateEvent().Handle)))));
            c.Cuda("recording on a released stream", "cuabi_event_record", CudaStatus.InvalidHandle, "stream is not a live cuabi_stream",
                ctx => Check(NativeMethods.cuabi_event_record(f.Timed.Handle, AsStream(ReleasedValue(f.Device.CreateStream().Handle)))));
            c.Cuda("elapsed time to a released event", "cuabi_event_get_elapsed_ms", CudaStatus.InvalidHandle, "end", ctx =>
            {
                float ms;
                Check(NativeMethods.cuabi_event_get_elapsed_ms(f.Timed.Handle, AsEvent(ReleasedValue(f.Device.CreateEvent().Handle)), out ms));
            });
            c.Cuda("a graph launched on a released stream", "cuabi_graph_exec_launch", CudaStatus.InvalidHandle,
                "stream is not a live cuabi_stream", ctx =>
                {
                    using (var s = f.Device.CreateStream())
                    {
                        using (var g = Captured(f, s))
                        using (var e = g.Instantiate())
                            Check(NativeMethods.cuabi_graph_exec_launch(e.Handle, AsStream(ReleasedValue(f.Device.CreateStream().Handle))));
                    }
                });
        }
    }
}
