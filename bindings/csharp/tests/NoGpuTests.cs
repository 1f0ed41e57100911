// Tests that need no GPU: loading, NVRTC compiles and their errors, handles
// (bad, released, disposed, finalized), argument checks and the packing of
// launch arguments, and the driver-less paths.

using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class NoGpuTests
    {
        internal const string SaxpySource = @"extern ""C"" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
";

        private const string Arch = "--gpu-architecture=sm_90";
        private const string VirtualArch = "--gpu-architecture=compute_90";

        public static void Register()
        {
            Registry.Add("interop: the library exports every generated declaration's entry point", Exports);
            Registry.Add("interop: versions and status names agree with the generated declarations", VersionsAndStatuses);
            Registry.Add("interop: struct defaults come from the library's *_init functions", StructDefaults);
            Registry.Add("loading: CUABI_LIBRARY names the file that was loaded", LoadedFromEnvironment);
            Registry.Add("loading: a CUABI_LIBRARY that does not exist fails naming it", MissingLibraryNamed);
            Registry.Add("loading: without CUABI_LIBRARY the loader search path is used", SearchPath);
            Registry.Add("loading: without CUABI_LIBRARY and nothing on the path, the error lists where it looked", SearchPathFailure);
            Registry.Add("driver: a missing driver gives DriverNotFound naming the path tried", DriverNotFound);
            Registry.Add("driver: the toolkit's stub driver gives StubDriver", StubDriver);
            Registry.Add("nvrtc: version and path", NvrtcInfo);
            Registry.Add("nvrtc: saxpy compiles to PTX with its entry point", CompilePtx);
            Registry.Add("nvrtc: saxpy compiles to CUBIN (an ELF image)", CompileCubin);
            Registry.Add("nvrtc: a syntax error gives Compile with NVRTC's log", CompileError);
            Registry.Add("nvrtc: a bad option gives Compile with the log", BadOption);
            Registry.Add("nvrtc: a program compiles once", CompileTwice);
            Registry.Add("nvrtc: headers are found by their include names", Headers);
            Registry.Add("nvrtc: name expressions give lowered names", NameExpressions);
            Registry.Add("two-call pattern: size query, too small (0 and 1), exact", TwoCallPattern);
            Registry.Add("handles: released, stale, wrong-kind and made-up handles give InvalidHandle", BadHandles);
            Registry.Add("handles: disposed objects throw ObjectDisposedException; Dispose twice is harmless", DisposedObjects);
            Registry.Add("handles: the finalizer releases programs through the C API", FinalizerReleasesPrograms);
            Registry.Add("arguments: nulls, NUL characters and raw NULLs are refused clearly", BadArguments);
            Registry.Add("launch packing: values of every kind land at the parameter offsets", PackingLayout);
            Registry.Add("launch packing: a signature not accepted before goes to the library; an accepted one does not", PackingChecksInTheLibrary);
            Registry.Add("launch packing: null and types that cannot be passed are refused naming the argument", PackingBadArguments);
            Registry.Add("buffers: element types that hold references are refused", NonBlittableElements);
            Registry.Add("exceptions: CudaException carries status, name, message and log", ExceptionFields);
        }

        private static void Exports()
        {
            var missing = new List<string>();
            int count = 0;
            foreach (Type t in new[] { typeof(NativeMethods), typeof(NativeMethods).Assembly.GetType("Cuabi.Interop.FastNativeMethods") })
                foreach (MethodInfo m in t.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static))
                {
                    if ((m.Attributes & MethodAttributes.PinvokeImpl) == 0)
                        continue;
                    var import = (DllImportAttribute)Attribute.GetCustomAttribute(m, typeof(DllImportAttribute));
                    string entry = import != null && !string.IsNullOrEmpty(import.EntryPoint) ? import.EntryPoint : m.Name;
                    Assert.Equal(m.Name, entry, "entry point of " + t.Name + "." + m.Name);
                    IntPtr address;
                    if (!CuabiLibrary.TryGetExport(entry, out address))
                        missing.Add(entry);
                    count++;
                }
            Assert.True(count > 90, "only " + count + " declarations found");
            Assert.True(missing.Count == 0, CuabiLibrary.LoadedFrom + " does not export: " + string.Join(", ", missing));
        }

        private static void VersionsAndStatuses()
        {
            Assert.Equal(NativeMethods.CUABI_VERSION_NUMBER, Cuda.Version, "cuabi_version()");
            Assert.Equal(NativeMethods.CUABI_VERSION_STRING, Cuda.VersionString, "cuabi_version_string()");
            Assert.Equal(NativeMethods.CUABI_VERSION_MAJOR * 10000 + NativeMethods.CUABI_VERSION_MINOR * 100 + NativeMethods.CUABI_VERSION_PATCH,
                NativeMethods.CUABI_VERSION_NUMBER, "CUABI_VERSION_NUMBER");
            var informational = (AssemblyInformationalVersionAttribute)Attribute.GetCustomAttribute(
                typeof(NativeMethods).Assembly, typeof(AssemblyInformationalVersionAttribute));
            Assert.Equal(NativeMethods.CUABI_VERSION_STRING, informational.InformationalVersion, "the assembly's version");
            Assert.Equal(NativeMethods.CUABI_VERSION_STRING + ".0", typeof(NativeMethods).Assembly.GetName().Version.ToString(),
                "AssemblyVersion");
            var values = (CudaStatus[])Enum.GetValues(typeof(CudaStatus));
            Assert.Equal(NativeMethods.CUABI_STATUS_COUNT, values.Length, "CudaStatus members");
            for (int s = 0; s < NativeMethods.CUABI_STATUS_COUNT; s++)
            {
                var status = (CudaStatus)s;
                Assert.True(Enum.IsDefined(typeof(CudaStatus), status), "CudaStatus has no member " + s);
                string name = Cuda.StatusName(status);
                string words = name.Replace("CUABI_ERROR_", "").Replace("CUABI_", "").Replace("_", "");
                Assert.Equal(words.ToUpperInvariant(), status.ToString().ToUpperInvariant(), "CudaStatus." + status + " vs " + name);
                Assert.True(Cuda.StatusDescription(status).Length > 0, "no description of " + name);
            }
            Assert.Equal("CUABI_ERROR_UNKNOWN", Cuda.StatusName((CudaStatus)NativeMethods.CUABI_STATUS_COUNT), "an undefined status");
        }

        private static void StructDefaults()
        {
            LaunchConfigNative c = LaunchConfigNative.Create();
            Assert.Equal((ulong)Marshal.SizeOf(typeof(LaunchConfigNative)), c.struct_size.ToUInt64(), "launch config struct_size");
            Assert.Equal("1 1 1 1 1 1 0", string.Join(" ", c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z, c.shared_mem_bytes),
                "CUABI_LAUNCH_CONFIG_INIT");
            CompileDescNative d = CompileDescNative.Create();
            Assert.Equal((ulong)Marshal.SizeOf(typeof(CompileDescNative)), d.struct_size.ToUInt64(), "compile desc struct_size");
            Assert.Equal(CompileOutput.Cubin, d.output, "default output");
            Assert.Equal(CompileFlags.None, d.flags, "default flags");
            Assert.True(d.source == IntPtr.Zero && d.options == IntPtr.Zero && d.num_options == UIntPtr.Zero, "no source or options");
            LaunchConfigNative made = new LaunchConfig(new Dim3(7, 2), 3).ToNative();
            Assert.Equal("7 2 1 3 1 1", string.Join(" ", made.grid_x, made.grid_y, made.grid_z, made.block_x, made.block_y, made.block_z),
                "LaunchConfig.ToNative");
            Assert.Equal(1u, LaunchConfigNative.Create().grid_x, "the defaults after a configuration was made from them");

            // The library checks what it is given, the binding's size included.
            var small = new LaunchConfigNative();
            Assert.Equal(CudaStatus.InvalidArgument, NativeMethods.cuabi_launch_config_init(ref small, (UIntPtr)4u), "struct_size 4");
            Assert.Contains("struct_size", Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "message names the argument");
        }

        private static string LibraryPath()
        {
            string env = Environment.GetEnvironmentVariable(CuabiLibrary.EnvironmentVariable);
            return string.IsNullOrEmpty(env) ? CuabiLibrary.LoadedFrom : env;
        }

        private static void LoadedFromEnvironment()
        {
            string env = Environment.GetEnvironmentVariable(CuabiLibrary.EnvironmentVariable);
            if (string.IsNullOrEmpty(env))
                throw new SkipException("CUABI_LIBRARY is not set in this run");
            Assert.Equal(Path.GetFullPath(env), Path.GetFullPath(CuabiLibrary.LoadedFrom), "CuabiLibrary.LoadedFrom");
            var r = Child.Run("load", new Dictionary<string, string> { { "CUABI_LIBRARY", env } });
            Assert.Equal(0, r.ExitCode, "child exit (" + r + ")");
            Assert.Contains("VERSION " + NativeMethods.CUABI_VERSION_STRING, r.Stdout, "child output");
        }

        private static void MissingLibraryNamed()
        {
            string bogus = "/nonexistent/cuabi-test/libcuabi.so";
            var r = Child.Run("load", new Dictionary<string, string> { { "CUABI_LIBRARY", bogus } });
            Assert.Equal(3, r.ExitCode, "child exit (" + r + ")");
            Assert.Contains(bogus, r.Stderr, "error message");
            Assert.Contains("CUABI_LIBRARY", r.Stderr, "error message");
        }

        private static void SearchPath()
        {
            string lib = LibraryPath();
            string dir = Path.GetDirectoryName(Path.GetFullPath(lib));
            if (!File.Exists(Path.Combine(dir, "libcuabi.so.0")) && !File.Exists(Path.Combine(dir, "libcuabi.so")))
                throw new SkipException(dir + " has neither libcuabi.so.0 nor libcuabi.so");
            var r = Child.Run("load", new Dictionary<string, string>
            {
                { "CUABI_LIBRARY", null },
                { "LD_LIBRARY_PATH", dir },
            });
            Assert.Equal(0, r.ExitCode, "child exit (" + r + ")");
            Assert.Contains("LOADED " + dir + "/libcuabi.so", r.Stdout, "child output");
        }

        private static void SearchPathFailure()
        {
            var r0 = Child.Run("load", new Dictionary<string, string> { { "CUABI_LIBRARY", null }, { "LD_LIBRARY_PATH", null } });
            if (r0.ExitCode == 0)
                throw new SkipException("libcuabi is installed on the system search path: " + r0.Stdout.Trim());
            Assert.Equal(3, r0.ExitCode, "child exit (" + r0 + ")");
            Assert.Contains("libcuabi.so.0", r0.Stderr, "error message");
            Assert.Contains("libcuabi.so:", r0.Stderr, "error message");
            Assert.Contains("LD_LIBRARY_PATH", r0.Stderr, "error message");
            Assert.Contains("CUABI_LIBRARY", r0.Stderr, "error message");
        }

        private static void DriverNotFound()
        {
            string bogus = "/nonexistent/cuabi-test/libcuda.so.1";
            var r = Child.Run("device-count", new Dictionary<string, string>
            {
                { "CUABI_LIBRARY", LibraryPath() },
                { "CUABI_DRIVER_PATH", bogus },
            });
            Assert.Equal(4, r.ExitCode, "child exit (" + r + ")");
            Assert.Contains("STATUS 9 CUABI_ERROR_DRIVER_NOT_FOUND", r.Stdout, "child output");
            Assert.Contains(bogus, r.Stdout, "message names the path tried");
        }

        private static void StubDriver()
        {
            string stub = null;
            foreach (string root in new[] { Environment.GetEnvironmentVariable("CUDA_HOME"), "/usr/local/cuda" })
                if (!string.IsNullOrEmpty(root) && File.Exists(Path.Combine(root, "lib64/stubs/libcuda.so")))
                {
                    stub = Path.Combine(root, "lib64/stubs/libcuda.so");
                    break;
                }
            if (stub == null)
                throw new SkipException("no CUDA toolkit stub driver (lib64/stubs/libcuda.so) here");
            var r = Child.Run("device-count", new Dictionary<string, string>
            {
                { "CUABI_LIBRARY", LibraryPath() },
                { "CUABI_DRIVER_PATH", stub },
            });
            Assert.Equal(4, r.ExitCode, "child exit (" + r + ")");
            Assert.Contains("STATUS 10 CUABI_ERROR_STUB_DRIVER", r.Stdout, "child output");
        }

        private static void NvrtcInfo()
        {
            Version v = Cuda.NvrtcVersion;
            Assert.True(v.Major >= 11, "NVRTC version " + v);
            string path = Cuda.NvrtcPath;
            Assert.Contains("nvrtc", path, "NVRTC path");
        }

        private static void CompilePtx()
        {
            using (var p = new Program(SaxpySource, "saxpy.cu"))
            {
                Assert.Equal("", p.Log, "log before compiling");
                p.Compile("--fmad=false", VirtualArch);
                string ptx = p.Ptx;
                Assert.Contains(".entry saxpy", ptx, "PTX");
                Assert.Contains(".target sm_90", ptx, "PTX target");
                Assert.True(ptx.IndexOf('\0') < 0, "PTX string holds a NUL");
                Assert.ThrowsCuda(CudaStatus.NotFound, () => { var unused = p.Cubin; }, "CUBIN of a compute_90 compile");
            }
        }

        private static void CompileCubin()
        {
            using (var p = new Program(SaxpySource, "saxpy.cu"))
            {
                p.Compile(Arch);
                byte[] cubin = p.Cubin;
                Assert.True(cubin.Length > 100, "CUBIN of " + cubin.Length + " bytes");
                Assert.True(cubin[0] == 0x7f && cubin[1] == (byte)'E' && cubin[2] == (byte)'L' && cubin[3] == (byte)'F',
                    "CUBIN does not start with the ELF magic");
                Assert.Contains("saxpy", Encoding.ASCII.GetString(cubin), "CUBIN symbol table");
            }
        }

        private static void CompileError()
        {
            using (var p = new Program("extern \"C\" __global__ void broken(int* p) { p[0] = undefined_name; }", "broken.cu"))
            {
                var e = Assert.ThrowsCuda(CudaStatus.Compile, () => p.Compile(Arch), "compiling broken code");
                Assert.Equal("CUABI_ERROR_COMPILE", e.StatusName, "StatusName");
                Assert.Contains("undefined_name", e.CompileLog, "CompileLog");
                Assert.Contains("broken.cu", e.CompileLog, "CompileLog names the file");
                Assert.True(!string.IsNullOrEmpty(e.Message), "empty message");
                Assert.Contains("undefined_name", p.Log, "Program.Log after the failure");
            }
        }

        private static void BadOption()
        {
            using (var p = new Program(SaxpySource))
            {
                var e = Assert.ThrowsCuda(CudaStatus.Compile, () => p.Compile("--no-such-nvrtc-option"), "bad option");
                Assert.Contains("no-such-nvrtc-option", e.CompileLog + e.Message, "log or message names the option");
            }
        }

        private static void CompileTwice()
        {
            using (var p = new Program(SaxpySource))
            {
                p.Compile(VirtualArch);
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => p.Compile(VirtualArch), "second compile");
                Assert.Contains(".entry saxpy", p.Ptx, "PTX after the refused second compile");
            }
        }

        private static void Headers()
        {
            const string source = "#include \"params.h\"\nextern \"C\" __global__ void fill(int* p) { p[0] = MAGIC_VALUE; }\n";
            var headers = new Dictionary<string, string> { { "params.h", "#define MAGIC_VALUE 1234567\n" } };
            using (var p = new Program(source, "fill.cu", headers))
            {
                p.Compile(VirtualArch);
                Assert.Contains("1234567", p.Ptx, "the header's value in the PTX");
            }
            using (var p = new Program(source, "fill.cu"))
            {
                var e = Assert.ThrowsCuda(CudaStatus.Compile, () => p.Compile(VirtualArch), "missing header");
                Assert.Contains("params.h", e.CompileLog, "log names the missing header");
            }
        }

        private static void NameExpressions()
        {
            const string source = "template <typename T> __global__ void write_scalar(T* p, T v) { *p = v; }\n";
            using (var p = new Program(source))
            {
                p.AddNameExpression("write_scalar<float>");
                p.AddNameExpression("write_scalar<int>");
                p.Compile(VirtualArch);
                string f = p.GetLoweredName("write_scalar<float>");
                string i = p.GetLoweredName("write_scalar<int>");
                Assert.True(f.StartsWith("_Z") && f.Contains("write_scalar"), "lowered name " + f);
                Assert.True(f != i, "float and int instantiations have one lowered name: " + f);
                Assert.Contains(".entry " + f, p.Ptx, "PTX entry under the lowered name");
                Assert.Throws<CudaException>(() => p.GetLoweredName("write_scalar<double>"), "unregistered expression");
            }
        }

        private static void TwoCallPattern()
        {
            using (var p = new Program(SaxpySource))
            {
                p.Compile(VirtualArch);
                ProgramHandle(p);
            }
        }

        private static void ProgramHandle(Program p)
        {
            SafeProgramHandle h = p.Handle;
            UIntPtr size = UIntPtr.Zero;
            Assert.Equal(CudaStatus.Success, NativeMethods.cuabi_program_get_ptx(h, null, ref size), "size query");
            int n = (int)size.ToUInt64();
            Assert.True(n > 100, "PTX size " + n);

            foreach (int small in new[] { 0, 1, n - 1 })
            {
                var buf = new byte[Math.Max(small, 1)];
                for (int i = 0; i < buf.Length; i++)
                    buf[i] = 0xA5;
                UIntPtr s = (UIntPtr)(uint)small;
                CudaStatus status = NativeMethods.cuabi_program_get_ptx(h, buf, ref s);
                Assert.Equal(CudaStatus.InsufficientBuffer, status, "status for a " + small + "-byte buffer");
                Assert.Equal((ulong)n, s.ToUInt64(), "size needed, reported after a " + small + "-byte buffer");
                for (int i = 0; i < buf.Length; i++)
                    Assert.Equal((byte)0xA5, buf[i], "byte " + i + " of a too-small buffer was written");
            }

            var exact = new byte[n];
            UIntPtr es = (UIntPtr)(uint)n;
            Assert.Equal(CudaStatus.Success, NativeMethods.cuabi_program_get_ptx(h, exact, ref es), "exact-size buffer");
            Assert.Equal((byte)0, exact[n - 1], "NUL terminator in the last byte");
            Assert.Equal(n - 1, Array.IndexOf(exact, (byte)0), "first NUL");
            Assert.Equal(p.Ptx, Encoding.UTF8.GetString(exact, 0, n - 1), "PTX through the safe layer");
        }

        private static void BadHandles()
        {
            IntPtr stale;
            using (var p = new Program(SaxpySource))
                stale = p.Handle.DangerousGetHandle();
            using (var released = new SafeProgramHandle(stale, false))
            {
                UIntPtr size = UIntPtr.Zero;
                Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_program_get_log(released, null, ref size),
                    "released program handle");
                var e = Errors.FromLastError(CudaStatus.InvalidHandle);
                Assert.Equal(CudaStatus.InvalidHandle, e.Status, "status");
                Assert.True(e.Message.Length > 0, "the library gave no message for a released handle");
            }

            using (var live = new Program(SaxpySource))
            using (var wrongKind = new SafeModuleHandle(live.Handle.DangerousGetHandle(), false))
            {
                SafeFunctionHandle f;
                Assert.Equal(CudaStatus.InvalidHandle,
                    NativeMethods.cuabi_module_get_function(wrongKind, Utf8.Encode("saxpy", "name"), out f), "program handle used as a module");
                Assert.True(f.IsInvalid, "an out-parameter was written on failure");
                UIntPtr size = UIntPtr.Zero;
                Assert.Equal(CudaStatus.Success, NativeMethods.cuabi_program_get_log(live.Handle, null, ref size), "the live program still works");
            }

            foreach (long bogus in new long[] { 1, 0x12345678, -1 })
                using (var made = new SafeProgramHandle(new IntPtr(bogus), false))
                {
                    UIntPtr size = UIntPtr.Zero;
                    Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_program_get_log(made, null, ref size),
                        "made-up handle " + bogus);
                }

            using (var nul = new SafeProgramHandle())
            {
                UIntPtr size = UIntPtr.Zero;
                Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_program_get_log(nul, null, ref size),
                    "NULL handle");
            }

            // Releasing released, NULL and made-up handles is harmless.
            NativeMethods.cuabi_program_release(stale);
            NativeMethods.cuabi_program_release(IntPtr.Zero);
            NativeMethods.cuabi_module_release(new IntPtr(0x12345678));
        }

        private static void DisposedObjects()
        {
            var p = new Program(SaxpySource);
            p.Dispose();
            p.Dispose();
            var e = Assert.Throws<ObjectDisposedException>(() => p.Compile(VirtualArch), "Compile after Dispose");
            Assert.Contains("Cuabi.Program", e.ObjectName, "ObjectName");
            Assert.Throws<ObjectDisposedException>(() => { var unused = p.Log; }, "Log after Dispose");

            var h = new SafeProgramHandle();
            h.Dispose();
            Assert.Throws<ObjectDisposedException>(() =>
            {
                UIntPtr size = UIntPtr.Zero;
                NativeMethods.cuabi_program_get_log(h, null, ref size);
            }, "a disposed SafeHandle passed to the native layer");
        }

        // Made on another thread whose stack is gone afterwards, so that no
        // stale stack slot keeps the objects alive for a conservative GC.
        private static IntPtr[] AbandonOnAnotherThread(Func<IntPtr[]> make)
        {
            IntPtr[] raw = null;
            Exception failure = null;
            var t = new Thread(() =>
            {
                try
                {
                    raw = make();
                }
                catch (Exception e)
                {
                    failure = e;
                }
            });
            t.Start();
            t.Join();
            if (failure != null)
                throw failure;
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            return raw;
        }

        private static void FinalizerReleasesPrograms()
        {
            IntPtr[] raw = AbandonOnAnotherThread(() =>
            {
                var handles = new IntPtr[8];
                for (int i = 0; i < handles.Length; i++)
                {
                    var p = new Program(SaxpySource, "abandoned" + i + ".cu");
                    if (i % 2 == 0)
                        p.Compile(VirtualArch);
                    handles[i] = p.Handle.DangerousGetHandle();
                }
                return handles;
            });
            using (var kept = new Program(SaxpySource))
            {
                foreach (IntPtr r in raw)
                    using (var h = new SafeProgramHandle(r, false))
                    {
                        UIntPtr size = UIntPtr.Zero;
                        Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_program_get_log(h, null, ref size),
                            "a finalized program's handle");
                    }
                kept.Compile(VirtualArch);
                Assert.Contains(".entry saxpy", kept.Ptx, "a program made after the finalizers ran");
            }
        }

        private static void BadArguments()
        {
            Assert.Throws<ArgumentNullException>(() => new Program(null), "null source");
            var nul = Assert.Throws<ArgumentException>(() => new Program("__global__ void k() {}\0junk"), "source with NUL");
            Assert.Equal("source", nul.ParamName, "ParamName");
            using (var p = new Program(SaxpySource))
            {
                var e = Assert.Throws<ArgumentNullException>(() => p.Compile(VirtualArch, null), "a null option");
                Assert.Contains("options[1]", e.ParamName, "ParamName");
                Assert.Throws<ArgumentNullException>(() => p.AddNameExpression(null), "null name expression");
            }
            Assert.Throws<ArgumentOutOfRangeException>(() => ((Dim3)(-1)).ToString(), "negative dimension");

            // Raw NULLs reach the library, which names what is wrong.
            SafeProgramHandle h;
            CudaStatus status = NativeMethods.cuabi_program_create(null, null, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h);
            Assert.Equal(CudaStatus.InvalidArgument, status, "cuabi_program_create(NULL source)");
            Assert.Contains("source", Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "message names the argument");
            Assert.True(h.IsInvalid, "out-parameter written on failure");

            using (var p = new Program(SaxpySource))
            {
                status = NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)2u, IntPtr.Zero);
                Assert.Equal(CudaStatus.InvalidArgument, status, "2 options at a NULL array");
            }
        }

        internal static readonly KernelParameter[] SaxpyLayout =
        {
            new KernelParameter(0, 0, 4), new KernelParameter(1, 8, 8), new KernelParameter(2, 16, 8),
            new KernelParameter(3, 24, 8), new KernelParameter(4, 32, 8),
        };

        [StructLayout(LayoutKind.Sequential)]
        internal struct Affine
        {
            public float Scale;
            public int Offset;
            public double Bias;
        }

        /// <summary>
        /// A layout over the NULL function with the writers of <paramref name="args"/>'
        /// types taken as accepted, as if the library had checked that signature:
        /// writing it needs no device. Any other signature goes to the library,
        /// which refuses the NULL function.
        /// </summary>
        internal static ArgumentLayout Accepting(KernelParameter[] layout, int blockSize, params object[] args)
        {
            var l = new ArgumentLayout(new SafeFunctionHandle(IntPtr.Zero, false), layout, blockSize);
            for (int i = 0; i < args.Length; i++)
                l.Accepted[i] = ArgumentWriter.For(args[i].GetType());
            return l;
        }

        private static unsafe byte[] Pack(ArgumentLayout layout, params object[] args)
        {
            var block = new byte[layout.BlockSize];
            for (int i = 0; i < block.Length; i++)
                block[i] = 0xEE;
            fixed (byte* p = block)
                layout.Write(args, p);
            return block;
        }

        private static void PackingLayout()
        {
            object[] saxpy = { 2.0f, (ulong)0x1111222233334444, new IntPtr(0x55), (long)-2, (ulong)16777216 };
            byte[] b = Pack(Accepting(SaxpyLayout, 40, saxpy), saxpy);
            Assert.Equal(2.0f, BitConverter.ToSingle(b, 0), "a at 0");
            Assert.Equal(unchecked((int)0xEEEEEEEE), BitConverter.ToInt32(b, 4), "padding after a untouched");
            Assert.Equal((ulong)0x1111222233334444, BitConverter.ToUInt64(b, 8), "x at 8");
            Assert.Equal(0x55L, BitConverter.ToInt64(b, 16), "y at 16");
            Assert.Equal(-2L, BitConverter.ToInt64(b, 24), "out at 24");
            Assert.Equal(16777216UL, BitConverter.ToUInt64(b, 32), "n at 32");

            var mixed = new[]
            {
                new KernelParameter(0, 0, 1), new KernelParameter(1, 2, 2), new KernelParameter(2, 4, 4),
                new KernelParameter(3, 8, 16), new KernelParameter(4, 24, 1), new KernelParameter(5, 26, 2),
                new KernelParameter(6, 32, 8), new KernelParameter(7, 40, 4),
            };
            object[] args = { (byte)7, (short)-3, StreamFlags.NonBlocking, new Affine { Scale = 1.5f, Offset = -9, Bias = 0.25 },
                true, 'Z', 3.5, 9u };
            b = Pack(Accepting(mixed, 48, args), args);
            Assert.Equal((byte)7, b[0], "byte");
            Assert.Equal((short)-3, BitConverter.ToInt16(b, 2), "short");
            Assert.Equal(1u, BitConverter.ToUInt32(b, 4), "enum as its underlying uint");
            Assert.Equal(1.5f, BitConverter.ToSingle(b, 8), "struct.Scale");
            Assert.Equal(-9, BitConverter.ToInt32(b, 12), "struct.Offset");
            Assert.Equal(0.25, BitConverter.ToDouble(b, 16), "struct.Bias");
            Assert.Equal((byte)1, b[24], "bool as one byte");
            Assert.Equal('Z', BitConverter.ToChar(b, 26), "char as two bytes");
            Assert.Equal(3.5, BitConverter.ToDouble(b, 32), "double");
            Assert.Equal(9u, BitConverter.ToUInt32(b, 40), "uint");
        }

        private static void PackingChecksInTheLibrary()
        {
            // Nothing accepted yet: the signature goes to cuabi_function_check_arg_sizes.
            object[] saxpy = { 2.0f, 1UL, 2UL, 3UL, 4UL };
            var fresh = new ArgumentLayout(new SafeFunctionHandle(IntPtr.Zero, false), SaxpyLayout, 40);
            var e = Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => Pack(fresh, saxpy), "a signature not accepted before");
            Assert.Contains("cuabi_function_check_arg_sizes", e.Message, "the library checked it");
            Assert.True(fresh.Accepted[0] == null, "a refused signature was kept");

            // Accepted: written without the library. Changed: checked again.
            var layout = Accepting(SaxpyLayout, 40, saxpy);
            Pack(layout, saxpy);
            Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => Pack(layout, 2.0f, 1UL, 2UL, 3UL, (uint)4), "a uint after ulongs for n");
            Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => Pack(layout, 2.0, 1UL, 2UL, 3UL, 4UL), "a double after floats for a");
            Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => Pack(layout, 2.0f, 1UL, 2UL, 3UL), "4 arguments for 5");
            Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => Pack(layout, 2.0f, 1UL, 2UL, 3UL, 4UL, 5UL), "6 arguments for 5");
            Assert.Equal(typeof(ulong), layout.Accepted[4].Type, "the accepted writer after refused ones");
            Assert.Equal(4UL, BitConverter.ToUInt64(Pack(layout, saxpy), 32), "the accepted signature still writes");
        }

        private static void PackingBadArguments()
        {
            // What only the binding can see is refused before the library is asked.
            var layout = Accepting(SaxpyLayout, 40, 2.0f, 1UL, 2UL, 3UL, 4UL);
            var n = Assert.Throws<ArgumentNullException>(() => Pack(layout, 2.0f, null, 2UL, 3UL, 4UL), "null argument");
            Assert.Equal("args[1]", n.ParamName, "ParamName");
            Assert.Contains("IntPtr.Zero", n.Message, "message says how to pass NULL");
            var e = Assert.Throws<ArgumentException>(() => Pack(layout, 2.0f, "x", 2UL, 3UL, 4UL), "string argument");
            Assert.Contains("System.String", e.Message, "message names the type");
            Assert.Contains("cannot be passed", e.Message, "message says why");
            e = Assert.Throws<ArgumentException>(() => Pack(layout, 2.0f, new float[2], 2UL, 3UL, 4UL), "array argument");
            Assert.Contains("argument 1", e.Message, "message names the argument");
            Assert.Equal("args[1]", e.ParamName, "ParamName");
            e = Assert.Throws<ArgumentException>(() => Pack(layout, 2.0f, new WithReference(), 2UL, 3UL, 4UL), "a struct holding a reference");
            Assert.Contains("WithReference", e.Message, "message names the struct");
        }

        internal struct WithReference
        {
            public string Text;
        }

        private static void NonBlittableElements()
        {
            Assert.Equal(0, Element<WithReference>.Size, "element size of a struct with a reference");
            var e = Assert.Throws<ArgumentException>(() => Element<WithReference>.Require(), "Require");
            Assert.Contains("WithReference", e.Message, "message names the type");
            Assert.Equal(4, Element<float>.Size, "float");
            Assert.Equal(16, Element<Affine>.Size, "Affine");
            Assert.Equal(8, Element<double>.Size, "double");
        }

        private static void ExceptionFields()
        {
            var e = Assert.ThrowsCuda(CudaStatus.Compile, () =>
            {
                using (var p = new Program("__global__ void k() { syntax error here }"))
                    p.Compile(VirtualArch);
            }, "compile error");
            Assert.Equal(Cuda.StatusName(CudaStatus.Compile), e.StatusName, "StatusName");
            Assert.True(e.CompileLog != null && e.CompileLog.Contains("error"), "CompileLog: " + e.CompileLog);

            var h = new SafeProgramHandle(new IntPtr(0x7777), false);
            UIntPtr size = UIntPtr.Zero;
            CudaStatus status = NativeMethods.cuabi_program_get_log(h, null, ref size);
            var ie = Errors.FromLastError(status);
            Assert.Equal(CudaStatus.InvalidHandle, ie.Status, "Status");
            Assert.Equal("CUABI_ERROR_INVALID_HANDLE", ie.StatusName, "StatusName");
            Assert.True(ie.CompileLog == null, "CompileLog set for a non-compile error");
            Assert.Equal(0, ie.Code, "Code for an error with no CUDA/NVRTC result behind it");
        }
    }
}
