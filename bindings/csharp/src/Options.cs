using System;
using System.Collections.Generic;

namespace Cuabi
{
    /// <summary>What <see cref="Device.Compile"/> compiles besides the source.</summary>
    public sealed class CompileOptions
    {
        /// <summary>Empty options: the library's default output (CUBIN for the device), cache on.</summary>
        public CompileOptions()
        {
            Options = new List<string>();
            Headers = new Dictionary<string, string>();
            NameExpressions = new List<string>();
            UseCache = true;
        }

        /// <summary>File name used in diagnostics (null: "cuabi_program.cu").</summary>
        public string Name { get; set; }

        /// <summary>NVRTC options, e.g. "--fmad=false", "-std=c++17". Without an architecture option the device's own is used.</summary>
        public IList<string> Options { get; private set; }

        /// <summary>Headers the source may #include: include name to contents.</summary>
        public IDictionary<string, string> Headers { get; private set; }

        /// <summary>Name expressions such as "scale&lt;float&gt;", usable afterwards as kernel names.</summary>
        public IList<string> NameExpressions { get; private set; }

        /// <summary>CUBIN or PTX; null (the default) leaves the library's default, CUBIN.</summary>
        public CompileOutput? Output { get; set; }

        /// <summary>Whether to read and write the on-disk cache (default true).</summary>
        public bool UseCache { get; set; }
    }
}
