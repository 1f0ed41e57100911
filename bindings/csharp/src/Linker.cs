using System;
using System.Collections.Generic;
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
    }
}
