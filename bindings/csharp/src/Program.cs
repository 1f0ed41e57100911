using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// An NVRTC program: CUDA C++ source compiled at run time to PTX or
    /// CUBIN. Needs NVRTC only, no GPU. For source to a loaded module in one
    /// call (with the on-disk cache) use <see cref="Device.Compile"/>.
    /// </summary>
    public sealed partial class Program : IDisposable
    {
        /// <summary>Creates a program from source.</summary>
        /// <param name="source">CUDA C++ source.</param>
        /// <param name="name">File name used in diagnostics (null: "cuabi_program.cu").</param>
        /// <param name="headers">Headers the source may #include: include name to contents; null for none.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.NvrtcNotFound"/> when NVRTC cannot be loaded.</exception>
        public Program(string source, string name = null, IDictionary<string, string> headers = null)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            CuabiLibrary.Load();
            handle = Create(source, name, headers);
        }

        /// <summary>
        /// Compiles with NVRTC options (e.g. "--gpu-architecture=sm_90": CUBIN;
        /// "--gpu-architecture=compute_90": PTX). A program compiles once.
        /// </summary>
        /// <param name="options">NVRTC options.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.Compile"/> with the log when NVRTC rejects the code or options.</exception>
        public void Compile(params string[] options)
        {
            var h = Handle;
            using (var strings = new NativeStrings())
            {
                IntPtr array = strings.Array(options, "options");
                Errors.Check(CompileCore(h, options, array));
            }
        }

        /// <summary>
        /// Compiles with typed options (cuabi_program_compile_with: the library
        /// turns them into NVRTC options and checks them) and registers their
        /// <see cref="CompileOptions.NameExpressions"/> first. A program's file name and headers are given when it is
        /// created, and it has no cache (<see cref="CompileOptions.UseCache"/>
        /// does not apply); its output follows
        /// <see cref="CompileOptions.Architecture"/>.
        /// </summary>
        /// <param name="options">The options.</param>
        /// <exception cref="ArgumentException">
        /// <see cref="CompileOptions.Name"/>, <see cref="CompileOptions.Headers"/> or
        /// <see cref="CompileOptions.Output"/> is set (they apply to <see cref="Device.Compile"/>),
        /// or a string C cannot take.
        /// </exception>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.InvalidArgument"/> naming the field when the library refuses a typed
        /// value (a macro name, a standard, an architecture's form);
        /// <see cref="CudaStatus.Compile"/> with the log when NVRTC rejects the code or options.
        /// </exception>
        public void Compile(CompileOptions options)
        {
            var h = Handle;
            using (var strings = new NativeStrings())
            {
                var desc = Prepare(options, strings);
                Errors.Check(NativeMethods.cuabi_program_compile_with(h, ref desc));
            }
        }

        /// <summary>
        /// <see cref="Compile(string[])"/> on the thread pool: the calling
        /// thread goes on while NVRTC works (tens to hundreds of
        /// milliseconds). Bad arguments throw at once; the task carries a
        /// compile failure (<see cref="CudaException"/>). The program stays
        /// alive until the compile ends, even if disposed meanwhile. The task's
        /// result is this program.
        /// </summary>
        /// <param name="options">NVRTC options.</param>
        public Task<Program> CompileAsync(params string[] options)
        {
            return Background.Run(Handle, strings => strings.Array(options, "options"), (raw, array) =>
            {
                Errors.Check(CompileCore(new SafeProgramHandle(raw, false), options, array));
                return this;
            });
        }

        /// <summary>
        /// <see cref="Compile(CompileOptions)"/> on the thread pool, as
        /// <see cref="CompileAsync(string[])"/>: what C# checks (null, strings C
        /// cannot take) throws at once and the name expressions are registered
        /// before this returns; the task carries what the library refuses.
        /// </summary>
        /// <param name="options">The options.</param>
        public Task<Program> CompileAsync(CompileOptions options)
        {
            return Background.Run(Handle, strings => Prepare(options, strings), (raw, desc) =>
            {
                Errors.Check(NativeMethods.cuabi_program_compile_with(new SafeProgramHandle(raw, false), ref desc));
                return this;
            });
        }

        private static CudaStatus CompileCore(SafeProgramHandle h, string[] options, IntPtr array)
        {
            int count = options == null ? 0 : options.Length;
            return NativeMethods.cuabi_program_compile(h, (UIntPtr)(uint)count, array);
        }

        // The compile description of typed options, its strings in `strings`,
        // after registering their name expressions; refuses what only
        // Device.Compile takes.
        private CompileDescNative Prepare(CompileOptions options, NativeStrings strings)
        {
            if (options == null)
                throw new ArgumentNullException("options");
            if (options.Name != null)
                throw new ArgumentException("a Program's file name is given when it is created (new Program(source, name, headers)); " +
                    "CompileOptions.Name applies to Device.Compile", "options.Name");
            if (options.Headers.Count > 0)
                throw new ArgumentException("a Program's headers are given when it is created (new Program(source, name, headers)); " +
                    "CompileOptions.Headers apply to Device.Compile", "options.Headers");
            if (options.Output.HasValue)
                throw new ArgumentException("applies to Device.Compile; a Program's output follows Architecture " +
                    "(sm_XY: CUBIN, compute_XY: PTX, Dlto: LTO-IR)", "options.Output");
            var desc = CompileDescNative.Create();
            options.Fill(ref desc, strings, "options.");
            var h = Handle;
            var expressions = new byte[options.NameExpressions.Count][];
            for (int i = 0; i < expressions.Length; i++)
            {
                string e = options.NameExpressions[i];
                if (e == null)
                    throw new ArgumentNullException("options.NameExpressions[" + i + "]");
                expressions[i] = Utf8.Encode(e, "options.NameExpressions[" + i + "]");
            }
            foreach (byte[] e in expressions)
                Errors.Check(NativeMethods.cuabi_program_add_name_expression(h, e));
            return desc;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static SafeProgramHandle Create(string source, string name, IDictionary<string, string> headers)
        {
            using (var strings = new NativeStrings())
            {
                IntPtr headerNames, headerSources;
                UIntPtr count = strings.Headers(headers, "headers", out headerNames, out headerSources);
                SafeProgramHandle h;
                Errors.Check(NativeMethods.cuabi_program_create(Utf8.Encode(source, "source"), Utf8.Encode(name, "name"),
                    count, headerSources, headerNames, out h));
                return h;
            }
        }
    }
}
