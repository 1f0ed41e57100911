using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>How a <see cref="Linker"/> links.</summary>
    public sealed class LinkOptions
    {
        /// <summary>The defaults: either backend (nvJitLink when it loads), no link-time optimisation, no options, cache on.</summary>
        public LinkOptions()
        {
            Options = new List<string>();
            UseCache = true;
        }

        /// <summary>
        /// Which linker does the work: <see cref="LinkBackend.Auto"/> (the
        /// default: nvJitLink when it loads, else the driver's),
        /// <see cref="LinkBackend.Nvjitlink"/> (LTO-IR, link-time
        /// optimisation, options) or <see cref="LinkBackend.Driver"/>
        /// (cuLink*: CUBIN, PTX, fatbin, objects and libraries; no LTO-IR, no
        /// options).
        /// </summary>
        public LinkBackend Backend { get; set; }

        /// <summary>Link-time optimisation over the LTO-IR inputs ("-lto"; nvJitLink only).</summary>
        public bool Lto { get; set; }

        /// <summary>Whether to read and write the on-disk cache for this link (default true).</summary>
        public bool UseCache { get; set; }

        /// <summary>
        /// nvJitLink options ("-O3", "-lineinfo", "-maxrregcount=64"); the
        /// device's "-arch=sm_XY" is added unless one is given. The driver's
        /// linker takes none.
        /// </summary>
        public IList<string> Options { get; private set; }
    }

    /// <summary>
    /// Links device code for one device: programs compiled with "-rdc=true"
    /// or "-dlto" (<see cref="CompileOptions.Rdc"/>, <see cref="CompileOptions.Dlto"/>),
    /// CUBIN, PTX, fatbin or LTO-IR bytes or files, objects and static
    /// libraries of device code, into one image loaded as a
    /// <see cref="CudaModule"/>. Through nvJitLink, or the driver's linker
    /// (<see cref="LinkOptions.Backend"/>). A linker links once. Linked images
    /// go through the compile cache (<see cref="CudaModule.FromCache"/>).
    /// </summary>
    /// <example>
    /// <code>
    /// using (var linker = new Linker(device, new LinkOptions { Lto = true }))
    /// {
    ///     linker.Add(caller);   // programs compiled with Dlto = true
    ///     linker.Add(callee);
    ///     using (CudaModule module = linker.Link())
    ///     using (Kernel apply = module.GetKernel("apply"))
    ///         apply.Launch(1, 256, null, x, 256u);
    /// }
    /// </code>
    /// </example>
    public sealed partial class Linker : IDisposable
    {
        /// <summary>A linker for <paramref name="device"/>.</summary>
        /// <param name="device">The device the result is for and loaded on.</param>
        /// <param name="options">How to link; null for the defaults.</param>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.NotFound"/> for <see cref="LinkBackend.Nvjitlink"/> where nvJitLink cannot be loaded
        /// (the message lists every path tried); <see cref="CudaStatus.InvalidArgument"/> for options given to the
        /// driver's linker; <see cref="CudaStatus.NotSupported"/> for link-time optimisation without nvJitLink.
        /// </exception>
        public Linker(Device device, LinkOptions options = null)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            var o = options ?? new LinkOptions();
            using (var strings = new NativeStrings())
            {
                var desc = LinkDescNative.Create();
                desc.backend = o.Backend;
                if (o.Lto)
                    desc.flags |= LinkFlags.Lto;
                if (!o.UseCache)
                    desc.flags |= LinkFlags.NoCache;
                desc.options = strings.Array(o.Options, "options.Options");
                desc.num_options = (UIntPtr)(uint)o.Options.Count;
                Errors.Check(NativeMethods.cuabi_linker_create(device.Handle, ref desc, out handle));
            }
        }

        /// <summary>
        /// Adds a compiled program's output: its LTO-IR when compiled with
        /// "-dlto", else its CUBIN, else its PTX.
        /// </summary>
        /// <param name="program">A program compiled successfully.</param>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.InvalidArgument"/> for a program not compiled successfully;
        /// <see cref="CudaStatus.NotSupported"/> for LTO-IR given to the driver's linker.
        /// </exception>
        public void Add(Program program)
        {
            AddProgram(program);
        }

        /// <summary>Adds bytes of device code (copied now).</summary>
        /// <param name="data">CUBIN, PTX, fatbin, LTO-IR, object or library bytes.</param>
        /// <param name="kind">What they are; <see cref="LinkInput.Auto"/> (the default) tells by the bytes.</param>
        /// <param name="name">The input's name in the log; null: "input&lt;N&gt;".</param>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.InvalidArgument"/> for no bytes, bytes whose kind cannot be told, or an unknown kind;
        /// <see cref="CudaStatus.NotSupported"/> for LTO-IR given to the driver's linker.
        /// </exception>
        public void AddData(byte[] data, LinkInput kind = LinkInput.Auto, string name = null)
        {
            if (data == null)
                throw new ArgumentNullException("data");
            AddData(kind, data, name);
        }

        /// <summary>Adds a file of device code (read now: a later change to the file is not seen).</summary>
        /// <param name="path">The file's path.</param>
        /// <param name="kind">What it is; <see cref="LinkInput.Auto"/> (the default) tells by the extension (.cubin, .ptx, .fatbin, .ltoir, .o, .a), else by the bytes.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.IO"/> when the file cannot be read.</exception>
        public void AddFile(string path, LinkInput kind = LinkInput.Auto)
        {
            AddFile(kind, path);
        }

        /// <summary>
        /// <see cref="Link"/> on the thread pool: the calling thread goes on
        /// while the linker works. The task carries a link failure
        /// (<see cref="CudaException"/>). The linker may be disposed before the
        /// task ends.
        /// </summary>
        public Task<CudaModule> LinkAsync()
        {
            return Background.Run(Handle, raw => new CudaModule(LinkCore(new SafeLinkerHandle(raw, false))), null);
        }

        private static SafeModuleHandle LinkCore(SafeLinkerHandle linker)
        {
            SafeModuleHandle module;
            Errors.Check(NativeMethods.cuabi_linker_link(linker, out module));
            return module;
        }
    }
}
