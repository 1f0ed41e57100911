// The bad-input corpus of compilation beyond one string through the C#
// binding: typed compile options, LTO-IR, compiles on the thread pool,
// kernel listings, linkers and libraries. Each case is one wrong input with
// the exception it must give and text its message must hold, run by the
// corpus runner of CorpusTests.cs. Two parts: what NVRTC, the binding or the
// library refuses without a device (invalid typed values, NULL handles,
// images refused before the driver), and what needs a device.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class CompileCorpus
    {
        public static void Register()
        {
            Registry.Add("corpus: bad input to compile options, linkers and libraries, the part that needs no GPU", RunCpu);
            Registry.AddGpu("corpus: bad input to compile options, linkers and libraries, the part that needs a GPU", RunGpu);
        }

        private static void Check(CudaStatus status)
        {
            Errors.Check(status);
        }

        private static readonly SafeDeviceHandle NoDevice = new SafeDeviceHandle(IntPtr.Zero, false);
        private static readonly SafeProgramHandle NoProgram = new SafeProgramHandle(IntPtr.Zero, false);
        private static readonly SafeModuleHandle NoModule = new SafeModuleHandle(IntPtr.Zero, false);
        private static readonly SafeLinkerHandle NoLinker = new SafeLinkerHandle(IntPtr.Zero, false);
        private static readonly SafeLibraryHandle NoLibrary = new SafeLibraryHandle(IntPtr.Zero, false);

        private const string Kernel = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n";

        // ------------------------------------------------------------------
        // No GPU
        // ------------------------------------------------------------------

        private static void RunCpu()
        {
            var c = new Corpus();
            TypedOptionCases(c);
            CoreCases(c);
            ProgramCases(c);
            NullHandleCases(c);
            LibraryCases(c);
            c.RunAndReport("C#, compile");
        }

        // A Program of the tiny kernel compiled with `options`.
        private static void CompileWith(CompileOptions options)
        {
            Use(p => p.Compile(options));
        }

        private static void TypedOptionCases(Corpus c)
        {
            // What a value may be is the library's rule (cuabi_compile_desc), the
            // same in every language: these are the core's words.
            const string With = "cuabi_program_compile_with";
            foreach (string arch in new[] { "sm90", "90", "sm_9", "SM_90", "sm_90b", "compute_", "lto_90", "sm_90 " })
            {
                string value = arch;
                c.Cuda("the architecture '" + value + "'", With, CudaStatus.InvalidArgument,
                    "desc->arch \"" + value + "\" is no GPU architecture: expected sm_XY (CUBIN) or compute_XY (PTX)",
                    ctx => CompileWith(new CompileOptions { Architecture = value }));
            }
            c.Cuda("an empty architecture", With, CudaStatus.InvalidArgument, "desc->arch is empty",
                ctx => CompileWith(new CompileOptions { Architecture = "" }));
            c.Cuda("an architecture given typed and raw", With, CudaStatus.InvalidArgument,
                "desc->arch (\"sm_90\") and desc->options[0] (\"-arch=sm_80\") both name an architecture",
                ctx => CompileWith(new CompileOptions { Architecture = "sm_90", Options = { "-arch=sm_80" } }));
            foreach (int value in new[] { 15, 18, 23 })
            {
                int std = value;
                c.Cuda("a C++ standard that does not exist (" + std + ")", With, CudaStatus.InvalidArgument,
                    "desc->cxx_standard is " + std + ", no C++ standard this library knows",
                    ctx => CompileWith(new CompileOptions { Std = (CxxStandard)std }));
            }
            c.Cuda("a macro name starting with a digit", With, CudaStatus.InvalidArgument,
                "desc->defines[0] \"2X=1\" is no macro definition: a macro name cannot start with a digit",
                ctx => CompileWith(new CompileOptions { Defines = { { "2X", "1" } } }));
            c.Cuda("a macro name with a space", With, CudaStatus.InvalidArgument,
                "desc->defines[0] \"A B\" is no macro definition: a macro name holds no whitespace",
                ctx => CompileWith(new CompileOptions { Defines = { { "A B", null } } }));
            c.Cuda("an empty macro name", With, CudaStatus.InvalidArgument,
                "desc->defines[0] \"=1\" is no macro definition: the macro name before '=' is empty",
                ctx => CompileWith(new CompileOptions { Defines = { { "", "1" } } }));
            c.Cuda("a function-like macro with a space in its parameters", With, CudaStatus.InvalidArgument,
                "desc->defines[0] \"F(a, b)=a\" is no macro definition: a parameter is an identifier or \"...\", and a space starts none",
                ctx => CompileWith(new CompileOptions { Defines = { { "F(a, b)", "a" } } }));
            c.Cuda("a second define naming what is wrong by its index", With, CudaStatus.InvalidArgument,
                "desc->defines[1] \"F(a,a)=a\" is no macro definition: the parameter a appears twice",
                ctx => CompileWith(new CompileOptions { Defines = { { "A", null }, { "F(a,a)", "a" } } }));
            c.Fine("function-like and variadic macros", ctx =>
            {
                const string source = "static_assert(SQUARE(3) == 9, \"\");\nstatic_assert(FIRST(4, 5, 6) == 4, \"\");\n" + Kernel;
                using (var p = new Program(source))
                    p.Compile(new CompileOptions
                    {
                        Architecture = "compute_90",
                        Defines = { { "SQUARE(x)", "((x)*(x))" }, { "FIRST(a,...)", "(a)" } },
                    });
            });
            c.Fine("a define key holding '=' is a whole definition, as the library reads it", ctx =>
            {
                using (var p = new Program("static_assert(A == 1, \"\");\n" + Kernel))
                    p.Compile(new CompileOptions { Architecture = "compute_90", Defines = { { "A=1", null } } });
            });
            c.Throws<ArgumentNullException>("a null macro name", "key", "key",
                ctx => new CompileOptions { Defines = { { null, "1" } } });
            c.Throws<ArgumentNullException>("a null include path", "options.IncludePaths[1]", "options.IncludePaths[1]",
                ctx => CompileWith(new CompileOptions { IncludePaths = { "/usr/include", null } }));
            c.Cuda("an empty include path", With, CudaStatus.InvalidArgument, "desc->include_paths[0] is empty",
                ctx => CompileWith(new CompileOptions { IncludePaths = { "" } }));
            c.Throws<ArgumentNullException>("a null raw option", "options.Options[0]", "options.Options[0]",
                ctx => CompileWith(new CompileOptions { Options = { null } }));
            c.Throws<ArgumentException>("a define value with a NUL character", "options.Defines[V]", "NUL character", ctx =>
            {
                using (var p = new Program(Kernel))
                    p.Compile(new CompileOptions { Defines = { { "V", "1\0" } } });
            });
            c.Throws<ArgumentException>("an include path with an unpaired surrogate", "options.IncludePaths[0]", "unpaired surrogate",
                ctx => CompileWith(new CompileOptions { IncludePaths = { "/tmp/\ud800" } }));
            c.Throws<ArgumentException>("a raw option with a NUL character", "options.Options[1]", "NUL character",
                ctx => Use(p => p.CompileAsync(new CompileOptions { Options = { "-w", "-DX=\0" } })));
        }

        private static void ProgramCases(Corpus c)
        {
            c.Throws<ArgumentNullException>("Program.Compile of null options", "options", "options",
                ctx => Use(p => p.Compile((CompileOptions)null)));
            c.Throws<ArgumentException>("Program.Compile given headers", "options.Headers",
                "a Program's headers are given when it is created",
                ctx => Use(p => p.Compile(new CompileOptions { Headers = { { "a.h", "" } } })));
            c.Throws<ArgumentException>("Program.Compile given a file name", "options.Name",
                "a Program's file name is given when it is created",
                ctx => Use(p => p.Compile(new CompileOptions { Name = "x.cu" })));
            c.Throws<ArgumentException>("Program.Compile given an output kind", "options.Output",
                "applies to Device.Compile; a Program's output follows Architecture",
                ctx => Use(p => p.Compile(new CompileOptions { Output = CompileOutput.Ptx })));
            c.Throws<ArgumentNullException>("Program.Compile given a null name expression", "options.NameExpressions[1]",
                "options.NameExpressions[1]", ctx => Use(p => p.Compile(new CompileOptions { NameExpressions = { "k", null } })));
            c.Cuda("Program.Compile given an invalid macro", "cuabi_program_compile_with", CudaStatus.InvalidArgument,
                "desc->defines[0] \"-X\" is no macro definition: a macro name starts with a letter or '_', not '-'",
                ctx => Use(p => p.Compile(new CompileOptions { Defines = { { "-X", null } } })));
            c.Cuda("Program.CompileAsync given an invalid macro, awaited", "cuabi_program_compile_with", CudaStatus.InvalidArgument,
                "desc->defines[0] \"1X\"", ctx => Use(p => p.CompileAsync(new CompileOptions { Defines = { { "1X", null } } }).GetAwaiter().GetResult()));
            c.Throws<ArgumentException>("Program.CompileAsync given headers throws before any task", "options.Headers",
                "a Program's headers are given when it is created",
                ctx => Use(p => p.CompileAsync(new CompileOptions { Headers = { { "a.h", "" } } })));
            c.Throws<ArgumentNullException>("Program.CompileAsync given a null option throws before any task", "options[1]", "options[1]",
                ctx => Use(p => p.CompileAsync("--gpu-architecture=compute_90", null)));
            c.Throws<ArgumentException>("Program.CompileAsync given a NUL in an option", "options[0]", "NUL character",
                ctx => Use(p => p.CompileAsync("-DX=\0")));
            c.Cuda("an architecture of the right form that NVRTC does not know", "cuabi_program_compile_with", CudaStatus.Compile,
                "invalid value for --gpu-architecture", ctx => Use(p => p.Compile(new CompileOptions { Architecture = "sm_10" })));
            c.Cuda("a raw option NVRTC does not know", "cuabi_program_compile_with", CudaStatus.Compile, "unrecognized option --no-such-option",
                ctx => Use(p => p.Compile(new CompileOptions { Options = { "--no-such-option" } })));
            c.Cuda("a second compile of a program, awaited", "cuabi_program_compile", CudaStatus.InvalidArgument,
                "the program was already compiled; create a new one to compile again", ctx => Use(p =>
            {
                p.Compile("--gpu-architecture=compute_90");
                p.CompileAsync("--gpu-architecture=compute_90").GetAwaiter().GetResult();
            }));
            c.Fine("a second compile's task is faulted with the CudaException", ctx => Use(p =>
            {
                p.Compile("--gpu-architecture=compute_90");
                Task<Program> t = p.CompileAsync("--gpu-architecture=compute_90");
                try
                {
                    t.Wait();
                }
                catch (AggregateException)
                {
                }
                ctx.Expect(t.IsFaulted, "the task is " + t.Status);
                ctx.Expect(t.Exception != null && t.Exception.InnerException is CudaException, "the task's exception is not a CudaException");
            }));
            c.Throws<ObjectDisposedException>("CompileAsync of a disposed program throws before any task", null, "Cuabi.Program", ctx =>
            {
                var p = new Program(Kernel);
                p.Dispose();
                p.CompileAsync("--gpu-architecture=compute_90");
            });
            c.Cuda("the LTO-IR of a program compiled without -dlto", "cuabi_program_get_lto_ir", CudaStatus.NotFound,
                "the program was compiled without \"-dlto\": it has no LTO-IR", ctx => Use(p =>
                {
                    p.Compile(new CompileOptions { Architecture = "sm_90" });
                    var ir = p.LtoIr;
                }));
            c.Cuda("the LTO-IR of a program not compiled", "cuabi_program_get_lto_ir", CudaStatus.NotFound, "has not been compiled successfully",
                ctx => Use(p => { var ir = p.LtoIr; }));
            c.Throws<ObjectDisposedException>("the LTO-IR of a disposed program", null, "Cuabi.Program", ctx =>
            {
                var p = new Program(Kernel);
                p.Dispose();
                var ir = p.LtoIr;
            });
        }

        // ------------------------------------------------------------------
        // The core's cases of typed options, as data (tests/corpus/cases.json,
        // generated into CoreCompileCases.g.cs by scripts/regen)
        // ------------------------------------------------------------------

        // Why a core case's input is not handed to the library: C#'s types
        // cannot hold it (listed, with the reason, not run), or the binding's
        // CompileOptions cannot express it (a failed case).
        private sealed class NotWritten : Exception
        {
            public readonly bool Unwritable;

            public NotWritten(bool unwritable, string why) : base(why)
            {
                Unwritable = unwritable;
            }
        }

        private static string[] Strings(string field, object value)
        {
            var items = value as string[];
            if (items == null)
                throw new NotWritten(false, field + " is " + value + ", not a list of strings");
            return items;
        }

        private static bool Flag(string field, string property, object value)
        {
            if (value is bool)
                return (bool)value;
            if (value is long && ((long)value == 0 || (long)value == 1))
                return (long)value == 1;
            if (value is long)
                throw new NotWritten(true, field + " is " + value + ": CompileOptions." + property +
                                     " is a bool, which holds no " + value);
            throw new NotWritten(false, field + " is " + value + ", not a flag");
        }

        // A case's fields as the binding's typed options; the architecture
        // defaults to compute_75, so an accepted case compiles without a device.
        internal static CompileOptions CoreOptions(CoreCompileCase core)
        {
            var options = new CompileOptions { Architecture = "compute_75" };
            foreach (var field in core.Fields)
            {
                object v = field.Value;
                switch (field.Key)
                {
                    case "arch":
                        if (!(v is string))
                            throw new NotWritten(false, "arch is " + v + ", not a string");
                        options.Architecture = (string)v;
                        break;
                    case "cxx_standard":
                        if (!(v is long) || (long)v < int.MinValue || (long)v > int.MaxValue)
                            throw new NotWritten(false, "cxx_standard is " + v + ", not an int");
                        options.Std = (CxxStandard)(int)(long)v;
                        break;
                    case "defines":
                        var given = new List<string>();
                        foreach (string define in Strings(field.Key, v))
                        {
                            int eq = define.IndexOf('=');
                            string name = eq < 0 ? define : define.Substring(0, eq);
                            if (options.Defines.ContainsKey(name))
                                throw new NotWritten(false, "Defines is a dictionary: the macro '" + name + "' cannot be given twice");
                            options.Defines.Add(name, eq < 0 ? null : define.Substring(eq + 1));
                            given.Add(name);
                        }
                        var passed = new List<string>(given);
                        passed.Sort(string.CompareOrdinal);
                        // The order matters where the message names an index.
                        // Defines is a dictionary passed in the documented ordinal order of
                        // its names: a case whose message names an index of another order
                        // cannot be written in C# (its refusal is one of C#'s own cases).
                        if (!passed.SequenceEqual(given) && core.Needle.Contains("desc->defines["))
                            throw new NotWritten(true, "CompileOptions passes Defines in the ordinal order of their " +
                                                 "names (" + string.Join(", ", passed) + "), not the case's (" +
                                                 string.Join(", ", given) + "), so the library's desc->defines[N] " +
                                                 "indices differ from the case's");
                        break;
                    case "include_paths":
                        foreach (string path in Strings(field.Key, v))
                            options.IncludePaths.Add(path);
                        break;
                    case "options":
                        foreach (string option in Strings(field.Key, v))
                            options.Options.Add(option);
                        break;
                    case "fast_math":
                        options.FastMath = Flag(field.Key, "FastMath", v);
                        break;
                    case "line_info":
                        options.LineInfo = Flag(field.Key, "LineInfo", v);
                        break;
                    case "device_debug":
                        options.Debug = Flag(field.Key, "Debug", v);
                        break;
                    case "lto":
                        options.Dlto = Flag(field.Key, "Dlto", v);
                        break;
                    case "relocatable":
                        options.Rdc = Flag(field.Key, "Rdc", v);
                        break;
                    default:
                        throw new NotWritten(false, "this runner does not map " + field.Key + " = " + v + " to CompileOptions");
                }
            }
            return options;
        }

        // Every core case of typed options C# can write, through CompileOptions
        // and Program.Compile: the same status and needle as in every language.
        // One the binding cannot express is a failed case; one C#'s types
        // cannot hold is listed with why.
        private static void CoreCases(Corpus c)
        {
            var unwritable = new List<string>();
            foreach (var core in CoreCompileCases.All)
            {
                string name = "core case " + core.Id;
                CompileOptions options;
                try
                {
                    options = CoreOptions(core);
                }
                catch (NotWritten e)
                {
                    if (e.Unwritable)
                    {
                        unwritable.Add(core.Id + ": " + e.Message);
                        continue;
                    }
                    string why = "the C# CompileOptions cannot express its input: " + e.Message;
                    c.Fine(name, ctx => ctx.Problem(why));
                    continue;
                }
                if (core.Status == "CUABI_SUCCESS")
                {
                    c.Fine(name, ctx => CompileWith(options));
                    continue;
                }
                var statuses = ((CudaStatus[])Enum.GetValues(typeof(CudaStatus)))
                    .Where(s => Cuabi.Cuda.StatusName(s) == core.Status).ToList();
                if (statuses.Count != 1)
                {
                    string why = "no CudaStatus is named " + core.Status;
                    c.Fine(name, ctx => ctx.Problem(why));
                    continue;
                }
                c.Cuda(name, "cuabi_program_compile_with", statuses[0], core.Needle, ctx => CompileWith(options));
            }
            if (unwritable.Count > 0)
            {
                Console.WriteLine("  not run: {0} of the core's {1} compile cases (tests/corpus/cases.json) cannot be written in C#:",
                    unwritable.Count, CoreCompileCases.All.Length);
                foreach (string line in unwritable)
                    Console.WriteLine("    " + line);
            }
        }

        private static void Use(Action<Program> body)
        {
            using (var p = new Program(Kernel))
                body(p);
        }

        private static void NullHandleCases(Corpus c)
        {
            UIntPtr size = UIntPtr.Zero;
            c.Cuda("NULL program: LTO-IR", "cuabi_program_get_lto_ir", CudaStatus.InvalidHandle, "program is NULL",
                ctx => Check(NativeMethods.cuabi_program_get_lto_ir(NoProgram, null, ref size)));
            c.Cuda("NULL module: compile log", "cuabi_module_get_compile_log", CudaStatus.InvalidHandle, "module is NULL",
                ctx => Check(NativeMethods.cuabi_module_get_compile_log(NoModule, null, ref size)));
            c.Cuda("NULL module: kernel count", "cuabi_module_get_kernel_count", CudaStatus.InvalidHandle, "module is NULL", ctx =>
            {
                UIntPtr n;
                Check(NativeMethods.cuabi_module_get_kernel_count(NoModule, out n));
            });
            c.Cuda("NULL module: kernel name", "cuabi_module_get_kernel_name", CudaStatus.InvalidHandle, "module is NULL",
                ctx => Check(NativeMethods.cuabi_module_get_kernel_name(NoModule, UIntPtr.Zero, NameForm.Demangled, null, ref size)));
            c.Cuda("NULL device: linker", "cuabi_linker_create", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                var desc = LinkDescNative.Create();
                SafeLinkerHandle l;
                Check(NativeMethods.cuabi_linker_create(NoDevice, ref desc, out l));
            });
            c.Cuda("NULL linker: backend", "cuabi_linker_get_backend", CudaStatus.InvalidHandle, "linker is NULL", ctx =>
            {
                LinkBackend b;
                Check(NativeMethods.cuabi_linker_get_backend(NoLinker, out b));
            });
            c.Cuda("NULL linker: add data", "cuabi_linker_add_data", CudaStatus.InvalidHandle, "linker is NULL",
                ctx => Check(NativeMethods.cuabi_linker_add_data(NoLinker, LinkInput.Auto, IntPtr.Zero, UIntPtr.Zero, null)));
            c.Cuda("NULL linker: add file", "cuabi_linker_add_file", CudaStatus.InvalidHandle, "linker is NULL",
                ctx => Check(NativeMethods.cuabi_linker_add_file(NoLinker, LinkInput.Auto, Utf8.Encode("/tmp/x.ptx", "path"))));
            c.Cuda("NULL linker: add program", "cuabi_linker_add_program", CudaStatus.InvalidHandle, "linker is NULL",
                ctx => Use(p => Check(NativeMethods.cuabi_linker_add_program(NoLinker, p.Handle))));
            c.Cuda("NULL linker: link", "cuabi_linker_link", CudaStatus.InvalidHandle, "linker is NULL", ctx =>
            {
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_linker_link(NoLinker, out m));
            });
            c.Cuda("NULL linker: log", "cuabi_linker_get_log", CudaStatus.InvalidHandle, "linker is NULL",
                ctx => Check(NativeMethods.cuabi_linker_get_log(NoLinker, null, ref size)));
            c.Cuda("NULL linker: image", "cuabi_linker_get_image", CudaStatus.InvalidHandle, "linker is NULL",
                ctx => Check(NativeMethods.cuabi_linker_get_image(NoLinker, null, ref size)));
            c.Cuda("NULL library: module", "cuabi_library_get_module", CudaStatus.InvalidHandle, "library is NULL", ctx =>
            {
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_library_get_module(NoLibrary, NoDevice, out m));
            });
            c.Cuda("a program's handle as a linker", "cuabi_linker_get_log", CudaStatus.InvalidHandle, "it is a cuabi_program",
                ctx => Use(p => Check(NativeMethods.cuabi_linker_get_log(new SafeLinkerHandle(p.Handle.DangerousGetHandle(), false), null, ref size))));
            c.Cuda("a made-up library value", "cuabi_library_get_module", CudaStatus.InvalidHandle, "library is not a live cuabi_library", ctx =>
            {
                SafeModuleHandle m;
                Check(NativeMethods.cuabi_library_get_module(new SafeLibraryHandle(new IntPtr(0x5A5A5A5A), false), NoDevice, out m));
            });
            c.Fine("NULL to the new releases, the last error untouched", ctx =>
            {
                string before = Utf8.FromNative(NativeMethods.cuabi_last_error_message());
                NativeMethods.cuabi_linker_release(IntPtr.Zero);
                NativeMethods.cuabi_library_release(IntPtr.Zero);
                ctx.Expect(before == Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "a release changed the last error");
            });
            c.Throws<ArgumentNullException>("a linker for a null device", "device", "device", ctx => new Linker(null));
        }

        private static void LibraryCases(Corpus c)
        {
            c.Throws<ArgumentNullException>("a library of null bytes", "image", "image", ctx => CudaLibrary.Load(null));
            c.Throws<ArgumentNullException>("a library of a null path", "path", "path", ctx => CudaLibrary.LoadFile(null));
            c.Throws<ArgumentException>("a library path with a NUL character", "path", "NUL character",
                ctx => CudaLibrary.LoadFile("/tmp/a\0b.cubin"));
            c.Cuda("a library of no bytes", "cuabi_library_load_data", CudaStatus.InvalidArgument, "size is 0: an image has at least one byte",
                ctx => CudaLibrary.Load(new byte[0]));
            c.Cuda("a library of 3 bytes of an ELF header", "cuabi_library_load_data", CudaStatus.InvalidArgument,
                "the image is truncated: 3 bytes of a CUBIN or fatbin header", ctx => CudaLibrary.Load(new byte[] { 0x7f, (byte)'E', (byte)'L' }));
            c.Cuda("a library of half a CUBIN", "cuabi_library_load_data", CudaStatus.InvalidArgument, "the CUBIN image is truncated or malformed",
                ctx => Use(p =>
                {
                    p.Compile(new CompileOptions { Architecture = "sm_90" });
                    byte[] cubin = p.Cubin;
                    CudaLibrary.Load(cubin.Take(cubin.Length / 2).ToArray());
                }));
            c.Cuda("a library file that does not exist", "cuabi_library_load_file", CudaStatus.IO,
                "cannot open '/nonexistent/cuabi.cubin'", ctx => CudaLibrary.LoadFile("/nonexistent/cuabi.cubin"));
            c.Cuda("a library file that is a folder", "cuabi_library_load_file", CudaStatus.IO, "cannot read '/'",
                ctx => CudaLibrary.LoadFile("/"));
        }

        // ------------------------------------------------------------------
        // With a device
        // ------------------------------------------------------------------

        private sealed class Fixture : IDisposable
        {
            public readonly Device Device;
            public readonly Program Caller, Callee, CallerLto, Uncompiled, Plain;
            public readonly CudaModule Cxx;

            public Fixture()
            {
                Device = Device.Get(0);
                string sm = CompileTests.Sm(Device);
                Caller = CompileTests.Compiled(CompileTests.Caller, new CompileOptions { Architecture = sm, Rdc = true });
                Callee = CompileTests.Compiled(CompileTests.Callee, new CompileOptions { Architecture = sm, Rdc = true });
                CallerLto = CompileTests.Compiled(CompileTests.Caller, new CompileOptions { Architecture = sm, Rdc = true, Dlto = true });
                Uncompiled = new Program(CompileTests.Callee);
                Plain = CompileTests.Compiled(Kernel, new CompileOptions { Architecture = sm });
                Cxx = Device.Compile(CompileTests.CxxKernels, new CompileOptions { Name = "compile_corpus.cu" });
            }

            public Linker NewLinker(LinkBackend backend = LinkBackend.Auto)
            {
                return new Linker(Device, new LinkOptions { Backend = backend, UseCache = false });
            }

            public void Dispose()
            {
                Cxx.Dispose();
                Plain.Dispose();
                Uncompiled.Dispose();
                CallerLto.Dispose();
                Callee.Dispose();
                Caller.Dispose();
                Device.Dispose();
            }
        }

        private static void RunGpu()
        {
            using (var f = new Fixture())
            {
                var c = new Corpus();
                LinkerCases(c, f);
                ModuleCases(c, f);
                DeviceCompileCases(c, f);
                GpuLibraryCases(c, f);
                c.RunAndReport("C#, compile, GPU");
                // The fixture's programs must still link after every case.
                using (var l = f.NewLinker())
                {
                    l.Add(f.Caller);
                    l.Add(f.Callee);
                    using (var m = l.Link())
                        CompileTests.CheckApply(f.Device, m);
                }
            }
        }

        private static void LinkerCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            c.Cuda("a link backend that does not exist", "cuabi_linker_create", CudaStatus.InvalidArgument,
                "desc->backend 7 is not a cuabi_link_backend", ctx => new Linker(d, new LinkOptions { Backend = (LinkBackend)7 }));
            c.Cuda("options for the driver's linker", "cuabi_linker_create", CudaStatus.InvalidArgument,
                "the driver's linker takes no options", ctx => new Linker(d, new LinkOptions { Backend = LinkBackend.Driver, Options = { "-O3" } }));
            c.Cuda("link-time optimisation by the driver's linker", "cuabi_linker_create", CudaStatus.NotSupported,
                "link-time optimisation needs nvJitLink", ctx => new Linker(d, new LinkOptions { Backend = LinkBackend.Driver, Lto = true }));
            c.Throws<ArgumentNullException>("a null link option", "options.Options[0]", "options.Options[0]",
                ctx => new Linker(d, new LinkOptions { Options = { null } }));
            c.Throws<ArgumentException>("a link option with a NUL character", "options.Options[0]", "NUL character",
                ctx => new Linker(d, new LinkOptions { Options = { "-O3\0" } }));
            c.Throws<ObjectDisposedException>("a linker for a disposed device", null, "Cuabi.Device", ctx =>
            {
                var other = Device.Get(0);
                other.Dispose();
                new Linker(other);
            });
            c.Cuda("bytes whose kind cannot be told", "cuabi_linker_add_data", CudaStatus.InvalidArgument, "cannot tell what the input",
                ctx => WithLinker(f, l => l.AddData(new byte[] { 1, 2, 3, 32, 110, 111, 116 })));
            c.Cuda("no bytes", "cuabi_linker_add_data", CudaStatus.InvalidArgument, "size is 0", ctx => WithLinker(f, l => l.AddData(new byte[0])));
            c.Cuda("an input kind that does not exist", "cuabi_linker_add_data", CudaStatus.InvalidArgument,
                "kind 42 is not a cuabi_link_input", ctx => WithLinker(f, l => l.AddData(new byte[] { 1, 2, 3, 4 }, (LinkInput)42)));
            c.Cuda("an input kind that does not exist, for a file", "cuabi_linker_add_file", CudaStatus.InvalidArgument,
                "kind -1 is not a cuabi_link_input", ctx => WithLinker(f, l => l.AddFile("/etc/passwd", (LinkInput)(-1))));
            c.Throws<ArgumentNullException>("null bytes", "data", "data", ctx => WithLinker(f, l => l.AddData(null)));
            c.Throws<ArgumentException>("an input name with a NUL character", "name", "NUL character",
                ctx => WithLinker(f, l => l.AddData(new byte[] { 1 }, LinkInput.Ptx, "a\0b")));
            c.Cuda("LTO-IR bytes for the driver's linker", "cuabi_linker_add_data", CudaStatus.NotSupported, "LTO-IR needs the nvJitLink backend",
                ctx => WithLinker(f, l => l.AddData(f.CallerLto.LtoIr, LinkInput.LtoIr), LinkBackend.Driver));
            c.Cuda("a file that does not exist", "cuabi_linker_add_file", CudaStatus.IO, "cannot open '/nonexistent/callee.ptx'",
                ctx => WithLinker(f, l => l.AddFile("/nonexistent/callee.ptx")));
            c.Throws<ArgumentNullException>("a null path", "path", "path", ctx => WithLinker(f, l => l.AddFile(null)));
            c.Throws<ArgumentNullException>("a null program", "program", "program", ctx => WithLinker(f, l => l.Add(null)));
            c.Cuda("a program not compiled", "cuabi_linker_add_program", CudaStatus.InvalidArgument, "the program has not compiled successfully",
                ctx => WithLinker(f, l => l.Add(f.Uncompiled)));
            c.Throws<ObjectDisposedException>("a disposed program", null, "Cuabi.Program", ctx => WithLinker(f, l =>
            {
                var p = CompileTests.Compiled(CompileTests.Callee, new CompileOptions { Architecture = CompileTests.Sm(d), Rdc = true });
                p.Dispose();
                l.Add(p);
            }));
            c.Cuda("an LTO-IR program for the driver's linker", "cuabi_linker_add_program", CudaStatus.NotSupported,
                "LTO-IR needs the nvJitLink backend", ctx => WithLinker(f, l => l.Add(f.CallerLto), LinkBackend.Driver));
            c.Cuda("a link of nothing", "cuabi_linker_link", CudaStatus.InvalidArgument, "nothing to link: add inputs first",
                ctx => WithLinker(f, l => l.Link()));
            c.Cuda("an asynchronous link of nothing, awaited", "cuabi_linker_link", CudaStatus.InvalidArgument, "nothing to link",
                ctx => WithLinker(f, l => l.LinkAsync().GetAwaiter().GetResult()));
            c.Cuda("a second link", "cuabi_linker_link", CudaStatus.InvalidArgument, "the linker already linked", ctx => WithLinker(f, l =>
            {
                l.Add(f.Caller);
                l.Add(f.Callee);
                l.Link().Dispose();
                l.Link();
            }));
            c.Cuda("an input after the link", "cuabi_linker_add_program", CudaStatus.InvalidArgument, "the linker already linked",
                ctx => WithLinker(f, l =>
                {
                    l.Add(f.Caller);
                    l.Add(f.Callee);
                    l.Link().Dispose();
                    l.Add(f.Callee);
                }));
            c.Cuda("the image before a link", "cuabi_linker_get_image", CudaStatus.NotFound, "the linker has not linked successfully",
                ctx => WithLinker(f, l => { var i = l.Image; }));
            c.Cuda("the image after a failed link", "cuabi_linker_get_image", CudaStatus.NotFound, "the linker has not linked successfully",
                ctx => WithLinker(f, l =>
                {
                    l.Add(f.Caller);
                    try
                    {
                        l.Link();
                    }
                    catch (CudaException)
                    {
                    }
                    var i = l.Image;
                }));
            c.Cuda("a caller without its callee", "cuabi_linker_link", CudaStatus.Compile, "twice",
                ctx => WithLinker(f, l => { l.Add(f.Caller); l.Link(); }));
            c.Cuda("a caller without its callee, awaited", "cuabi_linker_link", CudaStatus.Compile, "twice",
                ctx => WithLinker(f, l => { l.Add(f.Caller); l.LinkAsync().GetAwaiter().GetResult(); }));
            c.Cuda("a caller without its callee, through the driver", "cuabi_linker_link", CudaStatus.Compile, "twice",
                ctx => WithLinker(f, l => { l.Add(f.Caller); l.Link(); }, LinkBackend.Driver));
            c.Throws<ObjectDisposedException>("a disposed linker: Add", null, "Cuabi.Linker", ctx => Disposed(f).Add(f.Caller));
            c.Throws<ObjectDisposedException>("a disposed linker: Link", null, "Cuabi.Linker", ctx => Disposed(f).Link());
            c.Throws<ObjectDisposedException>("a disposed linker: LinkAsync throws before any task", null, "Cuabi.Linker", ctx => Disposed(f).LinkAsync());
            c.Throws<ObjectDisposedException>("a disposed linker: Log", null, "Cuabi.Linker", ctx => { var log = Disposed(f).Log; });
            c.Fine("a linker disposed twice", ctx =>
            {
                var l = Disposed(f);
                l.Dispose();
            });
            c.Fine("a linker disposed while it links asynchronously still links", ctx =>
            {
                var l = f.NewLinker();
                l.Add(f.Caller);
                l.Add(f.Callee);
                Task<CudaModule> t = l.LinkAsync();
                l.Dispose();
                using (CudaModule m = t.GetAwaiter().GetResult())
                    CompileTests.CheckApply(f.Device, m);
            });
        }

        private static void WithLinker(Fixture f, Action<Linker> body, LinkBackend backend = LinkBackend.Auto)
        {
            using (var l = f.NewLinker(backend))
                body(l);
        }

        private static Linker Disposed(Fixture f)
        {
            var l = f.NewLinker();
            l.Dispose();
            return l;
        }

        private static void ModuleCases(Corpus c, Fixture f)
        {
            c.Throws<ArgumentOutOfRangeException>("kernel name -1", "index", "cannot be negative", ctx => f.Cxx.GetKernelName(-1));
            c.Cuda("a kernel name past the last kernel", "cuabi_module_get_kernel_name", CudaStatus.OutOfRange,
                "index 3 is past the module's 3 kernels", ctx => f.Cxx.GetKernelName(3));
            c.Cuda("a name form that does not exist", "cuabi_module_get_kernel_name", CudaStatus.InvalidArgument,
                "form 7 is not a cuabi_name_form", ctx => f.Cxx.GetKernelName(0, (NameForm)7));
            c.Cuda("a plain name two kernels have", "cuabi_module_get_function", CudaStatus.InvalidArgument,
                "the name 'scale' matches 2 kernels of the module", ctx => f.Cxx.GetKernel("scale"));
            c.Cuda("a name no kernel has", "cuabi_module_get_function", CudaStatus.NotFound,
                "the module has no kernel named 'tripleify'; its kernels: ", ctx => f.Cxx.GetKernel("tripleify"));
            c.Cuda("a demangled signature as a kernel name", "cuabi_module_get_function", CudaStatus.NotFound,
                "the module has no kernel named 'doublify(float*)'", ctx => f.Cxx.GetKernel("doublify(float*)"));
            c.Throws<ObjectDisposedException>("the listing of a disposed module", null, "Cuabi.CudaModule", ctx =>
            {
                var m = f.Device.Compile(Kernel);
                m.Dispose();
                var k = m.Kernels;
            });
            c.Throws<ObjectDisposedException>("the compile log of a disposed module", null, "Cuabi.CudaModule", ctx =>
            {
                var m = f.Device.Compile(Kernel);
                m.Dispose();
                var log = m.CompileLog;
            });
        }

        private static void DeviceCompileCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            c.Cuda("Device.Compile given an invalid macro", "cuabi_module_compile", CudaStatus.InvalidArgument,
                "desc->defines[0] \"1X\" is no macro definition: a macro name cannot start with a digit",
                ctx => d.Compile(Kernel, new CompileOptions { Defines = { { "1X", null } } }));
            c.Cuda("Device.Compile of LTO-IR", "cuabi_module_compile", CudaStatus.InvalidArgument,
                "desc->lto is 1, but an LTO compile makes LTO-IR, which no module loads",
                ctx => d.Compile(Kernel, new CompileOptions { Dlto = true, UseCache = false }));
            c.Throws<ArgumentNullException>("Device.Compile given a null include path", "options.IncludePaths[0]", "options.IncludePaths[0]",
                ctx => d.Compile(Kernel, new CompileOptions { IncludePaths = { null } }));
            c.Cuda("Device.CompileAsync given an invalid macro, awaited", "cuabi_module_compile", CudaStatus.InvalidArgument,
                "desc->defines[0] \"1X\"",
                ctx => d.CompileAsync(Kernel, new CompileOptions { Defines = { { "1X", null } } }).GetAwaiter().GetResult());
            c.Throws<ArgumentNullException>("Device.CompileAsync of no source throws before any task", "source", "source",
                ctx => d.CompileAsync(null));
            c.Throws<ObjectDisposedException>("Device.CompileAsync on a disposed device throws before any task", null, "Cuabi.Device", ctx =>
            {
                var other = Device.Get(0);
                other.Dispose();
                other.CompileAsync(Kernel);
            });
            c.Cuda("Device.CompileAsync of broken code, awaited", "cuabi_module_compile", CudaStatus.Compile, "undefined_function",
                ctx => d.CompileAsync("extern \"C\" __global__ void k() { undefined_function(); }").GetAwaiter().GetResult());
            c.Cuda("an architecture NVRTC does not know, for a device", "cuabi_module_compile", CudaStatus.Compile,
                "invalid value for --gpu-architecture", ctx => d.Compile(Kernel, new CompileOptions { Architecture = "sm_10", UseCache = false }));
            c.Fine("a device disposed while it compiles asynchronously still compiles", ctx =>
            {
                var other = Device.Get(0);
                Task<CudaModule> t = other.CompileAsync("// " + Guid.NewGuid().ToString("N") + "\n" + Kernel);
                other.Dispose();
                using (CudaModule m = t.GetAwaiter().GetResult())
                using (var k = m.GetKernel("k"))
                    ctx.Expect(k.Parameters.Count == 1, "the kernel has " + k.Parameters.Count + " parameters");
            });
        }

        private static void GpuLibraryCases(Corpus c, Fixture f)
        {
            c.Throws<ArgumentNullException>("a library's module for a null device", "device", "device", ctx =>
            {
                using (var lib = CudaLibrary.Load(f.Plain.Cubin))
                    lib.GetModule(null);
            });
            c.Throws<ObjectDisposedException>("a module of a disposed library", null, "Cuabi.CudaLibrary", ctx =>
            {
                var lib = CudaLibrary.Load(f.Plain.Cubin);
                lib.Dispose();
                lib.GetModule(f.Device);
            });
            c.Throws<ObjectDisposedException>("a library's module for a disposed device", null, "Cuabi.Device", ctx =>
            {
                var other = Device.Get(0);
                other.Dispose();
                using (var lib = CudaLibrary.Load(f.Plain.Cubin))
                    lib.GetModule(other);
            });
        }
    }
}
