using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// An NVRTC program: CUDA C++ source compiled at run time to PTX or
    /// CUBIN. Needs NVRTC only, no GPU. For source to a loaded module in one
    /// call (with the on-disk cache) use <see cref="Device.Compile"/>.
    /// </summary>
    public sealed class Program : IDisposable
    {
        private readonly SafeProgramHandle handle;

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

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeProgramHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>Registers a name expression (e.g. "scale&lt;float&gt;") before compiling, to query its lowered name later.</summary>
        /// <param name="expression">A C++ name expression.</param>
        public void AddNameExpression(string expression)
        {
            if (expression == null)
                throw new ArgumentNullException("expression");
            Errors.Check(NativeMethods.cuabi_program_add_name_expression(Handle, Utf8.Encode(expression, "expression")));
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
                int count = options == null ? 0 : options.Length;
                Errors.Check(NativeMethods.cuabi_program_compile(h, (UIntPtr)(uint)count, array));
            }
        }

        /// <summary>The compile log ("" before compiling).</summary>
        public string Log
        {
            get { var h = Handle; return Errors.ReadString(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_program_get_log(h, b, ref s); }); }
        }

        /// <summary>The PTX text.</summary>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotFound"/> when the compile made none (an sm_XY target).</exception>
        public string Ptx
        {
            get { var h = Handle; return Errors.ReadString(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_program_get_ptx(h, b, ref s); }); }
        }

        /// <summary>The CUBIN bytes.</summary>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotFound"/> when the compile made none (a compute_XY target).</exception>
        public byte[] Cubin
        {
            get { var h = Handle; return Errors.ReadBlob(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_program_get_cubin(h, b, ref s); }); }
        }

        /// <summary>The lowered (mangled) name of a registered name expression.</summary>
        /// <param name="expression">An expression given to <see cref="AddNameExpression"/>.</param>
        public string GetLoweredName(string expression)
        {
            if (expression == null)
                throw new ArgumentNullException("expression");
            var h = Handle;
            byte[] e = Utf8.Encode(expression, "expression");
            return Errors.ReadString(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_program_get_lowered_name(h, e, b, ref s); });
        }

        /// <summary>Releases the program.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static SafeProgramHandle Create(string source, string name, IDictionary<string, string> headers)
        {
            var names = new List<string>();
            var contents = new List<string>();
            if (headers != null)
            {
                foreach (var header in headers)
                {
                    names.Add(header.Key);
                    contents.Add(header.Value);
                }
            }
            using (var strings = new NativeStrings())
            {
                IntPtr headerSources = strings.Array(contents, "headers (source)");
                IntPtr headerNames = strings.Array(names, "headers (name)");
                SafeProgramHandle h;
                Errors.Check(NativeMethods.cuabi_program_create(Utf8.Encode(source, "source"), Utf8.Encode(name, "name"),
                    (UIntPtr)(uint)names.Count, headerSources, headerNames, out h));
                return h;
            }
        }
    }
}
