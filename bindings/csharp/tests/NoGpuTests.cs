// Tests that need no GPU: loading, NVRTC compiles and their errors, handles
// (bad, released, disposed, finalized), argument checks and the packing of
// launch arguments, and the driver-less paths.

using System;
using System.Collections.Generic;
using System.IO;
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
            Registry.Add("launch packing: values land at the parameter offsets", PackingLayout);
            Registry.Add("launch packing: a 4-byte value for a size_t parameter is refused naming it", PackingSizeMismatch);
            Registry.Add("launch packing: wrong count, null and reference arguments are refused", PackingBadArguments);
            Registry.Add("buffers: element types that hold references are refused", NonBlittableElements);
            Registry.Add("exceptions: CudaException carries status, name, message and log", ExceptionFields);
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
            Assert.Equal(0, NativeMethods.cuabi_program_get_ptx(h, null, ref size), "size query");
            int n = (int)size.ToUInt64();
            Assert.True(n > 100, "PTX size " + n);

            foreach (int small in new[] { 0, 1, n - 1 })
            {
                var buf = new byte[Math.Max(small, 1)];
                for (int i = 0; i < buf.Length; i++)
                    buf[i] = 0xA5;
                UIntPtr s = (UIntPtr)(uint)small;
                int status = NativeMethods.cuabi_program_get_ptx(h, buf, ref s);
                Assert.Equal(NativeMethods.CUABI_ERROR_INSUFFICIENT_BUFFER, status, "status for a " + small + "-byte buffer");
                Assert.Equal((ulong)n, s.ToUInt64(), "size needed, reported after a " + small + "-byte buffer");
                for (int i = 0; i < buf.Length; i++)
                    Assert.Equal((byte)0xA5, buf[i], "byte " + i + " of a too-small buffer was written");
            }

            var exact = new byte[n];
            UIntPtr es = (UIntPtr)(uint)n;
            Assert.Equal(0, NativeMethods.cuabi_program_get_ptx(h, exact, ref es), "exact-size buffer");
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
                Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_HANDLE, NativeMethods.cuabi_program_get_log(released, null, ref size),
                    "released program handle");
                var e = Errors.FromLastError(NativeMethods.CUABI_ERROR_INVALID_HANDLE);
                Assert.Equal(CudaStatus.InvalidHandle, e.Status, "status");
                Assert.True(e.Message.Length > 0, "the library gave no message for a released handle");
            }

            using (var live = new Program(SaxpySource))
            using (var wrongKind = new SafeModuleHandle(live.Handle.DangerousGetHandle(), false))
            {
                SafeFunctionHandle f;
                Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_HANDLE,
                    NativeMethods.cuabi_module_get_function(wrongKind, Utf8.Encode("saxpy", "name"), out f), "program handle used as a module");
                Assert.True(f.IsInvalid, "an out-parameter was written on failure");
                UIntPtr size = UIntPtr.Zero;
                Assert.Equal(0, NativeMethods.cuabi_program_get_log(live.Handle, null, ref size), "the live program still works");
            }

            foreach (long bogus in new long[] { 1, 0x12345678, -1 })
                using (var made = new SafeProgramHandle(new IntPtr(bogus), false))
                {
                    UIntPtr size = UIntPtr.Zero;
                    Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_HANDLE, NativeMethods.cuabi_program_get_log(made, null, ref size),
                        "made-up handle " + bogus);
                }

            using (var nul = new SafeProgramHandle())
            {
                UIntPtr size = UIntPtr.Zero;
                Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_HANDLE, NativeMethods.cuabi_program_get_log(nul, null, ref size),
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
                        Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_HANDLE, NativeMethods.cuabi_program_get_log(h, null, ref size),
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
            int status = NativeMethods.cuabi_program_create(null, null, UIntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out h);
            Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_ARGUMENT, status, "cuabi_program_create(NULL source)");
            Assert.Contains("source", Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "message names the argument");
            Assert.True(h.IsInvalid, "out-parameter written on failure");

            using (var p = new Program(SaxpySource))
            {
                status = NativeMethods.cuabi_program_compile(p.Handle, (UIntPtr)2u, IntPtr.Zero);
                Assert.Equal(NativeMethods.CUABI_ERROR_INVALID_ARGUMENT, status, "2 options at a NULL array");
            }
        }

        private static readonly KernelParameter[] SaxpyLayout =
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

        private static unsafe byte[] Pack(KernelParameter[] layout, int blockSize, params object[] args)
        {
            var block = new byte[blockSize];
            for (int i = 0; i < block.Length; i++)
                block[i] = 0xEE; // the packer must clear padding
            fixed (byte* p = block)
                ArgumentPacker.Pack("saxpy", layout, args, p, blockSize);
            return block;
        }

        private static void PackingLayout()
        {
            byte[] b = Pack(SaxpyLayout, 40, 2.0f, (ulong)0x1111222233334444, new IntPtr(0x55), (long)-2, (ulong)16777216);
            Assert.Equal(2.0f, BitConverter.ToSingle(b, 0), "a at 0");
            Assert.Equal(0, BitConverter.ToInt32(b, 4), "padding after a");
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
            b = Pack(mixed, 48, (byte)7, (short)-3, StreamFlags.NonBlocking,
                new Affine { Scale = 1.5f, Offset = -9, Bias = 0.25 }, true, 'Z', 3.5, 9u);
            Assert.Equal((byte)7, b[0], "byte");
            Assert.Equal(0, (int)b[1], "padding");
            Assert.Equal((short)-3, BitConverter.ToInt16(b, 2), "short");
            Assert.Equal(1u, BitConverter.ToUInt32(b, 4), "enum as its underlying uint");
            Assert.Equal(1.5f, BitConverter.ToSingle(b, 8), "struct.Scale");
            Assert.Equal(-9, BitConverter.ToInt32(b, 12), "struct.Offset");
            Assert.Equal(0.25, BitConverter.ToDouble(b, 16), "struct.Bias");
            Assert.Equal((byte)1, b[24], "bool as one byte");
            Assert.Equal('Z', BitConverter.ToChar(b, 26), "char as two bytes");
            Assert.Equal(3.5, BitConverter.ToDouble(b, 32), "double");
            Assert.Equal(9u, BitConverter.ToUInt32(b, 40), "uint");
            Assert.Equal(0u, BitConverter.ToUInt32(b, 44), "tail padding");
        }

        private static void PackingSizeMismatch()
        {
            var e = Assert.Throws<ArgumentException>(
                () => Pack(SaxpyLayout, 40, 2.0f, 1UL, 2UL, 3UL, (uint)16777216), "4-byte n for size_t");
            Assert.Contains("parameter 4", e.Message, "message names the parameter");
            Assert.Contains("saxpy", e.Message, "message names the kernel");
            Assert.Contains("4 byte", e.Message, "message gives the argument's size");
            Assert.Contains("8 byte", e.Message, "message gives the parameter's size");
            Assert.Equal("args[4]", e.ParamName, "ParamName");

            e = Assert.Throws<ArgumentException>(() => Pack(SaxpyLayout, 40, 2.0, 1UL, 2UL, 3UL, 4UL), "double for float a");
            Assert.Contains("parameter 0", e.Message, "message names the parameter");
            e = Assert.Throws<ArgumentException>(() => Pack(SaxpyLayout, 40, 2.0f, 1, 2UL, 3UL, 4UL), "int for a pointer");
            Assert.Contains("parameter 1", e.Message, "message names the parameter");
        }

        private static void PackingBadArguments()
        {
            var e = Assert.Throws<ArgumentException>(() => Pack(SaxpyLayout, 40, 2.0f, 1UL, 2UL, 3UL), "4 arguments for 5");
            Assert.Contains("5 parameter", e.Message, "message gives the parameter count");
            Assert.Contains("4 argument", e.Message, "message gives the argument count");
            Assert.Throws<ArgumentNullException>(() => Pack(SaxpyLayout, 40, 2.0f, null, 2UL, 3UL, 4UL), "null argument");
            e = Assert.Throws<ArgumentException>(() => Pack(SaxpyLayout, 40, 2.0f, "x", 2UL, 3UL, 4UL), "string argument");
            Assert.Contains("System.String", e.Message, "message names the type");
            e = Assert.Throws<ArgumentException>(() => Pack(SaxpyLayout, 40, 2.0f, new float[2], 2UL, 3UL, 4UL), "array argument");
            Assert.Contains("argument 1", e.Message, "message names the argument");
            Assert.Throws<ArgumentException>(() => Pack(SaxpyLayout, 40, 2.0f, 1UL, 2UL, 3UL, 4UL, 5UL), "6 arguments for 5");
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
            int status = NativeMethods.cuabi_program_get_log(h, null, ref size);
            var ie = Errors.FromLastError(status);
            Assert.Equal(CudaStatus.InvalidHandle, ie.Status, "Status");
            Assert.Equal("CUABI_ERROR_INVALID_HANDLE", ie.StatusName, "StatusName");
            Assert.True(ie.CompileLog == null, "CompileLog set for a non-compile error");
            Assert.Equal(0, ie.Code, "Code for an error with no CUDA/NVRTC result behind it");
        }
    }
}
