using System;
using System.Collections.Generic;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// How CUDA C++ is compiled, as typed values (architecture, C++ standard,
    /// macros, include paths, fast math, line information, debugging,
    /// relocatable code, LTO-IR) and raw NVRTC option strings, for
    /// <see cref="Device.Compile"/>, <see cref="Device.CompileAsync"/> and
    /// <see cref="Program.Compile(CompileOptions)"/>. Each typed value goes to
    /// its field of the C compile description; the library spells the NVRTC
    /// option and decides which values are valid, the same in every language,
    /// and refuses a bad one with a <see cref="CudaException"/> of
    /// <see cref="CudaStatus.InvalidArgument"/> naming the field and index
    /// ("desc->defines[1]").
    /// </summary>
    /// <example>
    /// <code>
    /// var options = new CompileOptions
    /// {
    ///     Architecture = "sm_90",
    ///     Std = CxxStandard.Cxx17,
    ///     Defines = { { "BLOCK", "256" }, { "USE_FAST_PATH", null } },
    ///     IncludePaths = { "/usr/local/cuda/include" },
    ///     FastMath = true,
    /// };
    /// </code>
    /// </example>
    /// <remarks>Its switches, fast_math to relocatable of cuabi_compile_desc, are generated (Objects.g.cs).</remarks>
    public sealed partial class CompileOptions
    {
        /// <summary>Empty options: the library's default output (CUBIN for the device), cache on.</summary>
        public CompileOptions()
        {
            Options = new List<string>();
            Headers = new Dictionary<string, string>();
            NameExpressions = new List<string>();
            Defines = new Dictionary<string, string>(StringComparer.Ordinal);
            IncludePaths = new List<string>();
            UseCache = true;
        }

        /// <summary>File name used in diagnostics (null: "cuabi_program.cu").</summary>
        public string Name { get; set; }

        /// <summary>
        /// Raw NVRTC options, e.g. "--fmad=false", "-maxrregcount=64", passed
        /// after those the typed properties give. Without an architecture
        /// (here or in <see cref="Architecture"/>) <see cref="Device.Compile"/>
        /// uses the device's own.
        /// </summary>
        public IList<string> Options { get; private set; }

        /// <summary>Headers the source may #include: include name to contents.</summary>
        public IDictionary<string, string> Headers { get; private set; }

        /// <summary>Name expressions such as "scale&lt;float&gt;", usable afterwards as kernel names.</summary>
        public IList<string> NameExpressions { get; private set; }

        /// <summary>CUBIN or PTX, for <see cref="Device.Compile"/>; null (the default) leaves the library's default, CUBIN.</summary>
        public CompileOutput? Output { get; set; }

        /// <summary>Whether <see cref="Device.Compile"/> reads and writes the on-disk cache (default true).</summary>
        public bool UseCache { get; set; }

        /// <summary>
        /// The target: "sm_XY" for CUBIN (and PTX), "compute_XY" for PTX, with
        /// an optional "a" or "f" suffix ("sm_90a"); null (the default): the
        /// device's own for <see cref="Device.Compile"/>, NVRTC's default for a
        /// <see cref="Program"/>. The library refuses another form.
        /// </summary>
        public string Architecture { get; set; }

        /// <summary>The C++ standard; null (the default): NVRTC's. The library refuses a value it does not know.</summary>
        public CxxStandard? Std { get; set; }

        /// <summary>
        /// Macros: name to value, or to null for a macro defined without a
        /// value. A name is an identifier, or a function-like macro's name
        /// and parameters ("SQUARE(x)", "LOG(...)"), as the library decides.
        /// Passed in the ordinal order of their names.
        /// </summary>
        public IDictionary<string, string> Defines { get; private set; }

        /// <summary>Folders searched for #include files, in order.</summary>
        public IList<string> IncludePaths { get; private set; }

        // Fills the option fields of `desc` (architecture to relocatable code,
        // and the raw options), naming a value C cannot take with `prefix` +
        // its property (e.g. "options.Defines[N]"). The library checks the
        // values themselves.
        internal void Fill(ref CompileDescNative desc, NativeStrings strings, string prefix)
        {
            desc.arch = strings.String(Architecture, prefix + "Architecture");
            desc.cxx_standard = Std ?? CxxStandard.Default;
            var defines = new List<KeyValuePair<string, string>>(Defines);
            defines.Sort((a, b) => string.CompareOrdinal(a.Key, b.Key));
            var texts = new List<string>(defines.Count);
            foreach (var define in defines)
            {
                Utf8.Encode(define.Value, prefix + "Defines[" + define.Key + "]");
                texts.Add(define.Value == null ? define.Key : define.Key + "=" + define.Value);
            }
            desc.defines = strings.Array(texts, prefix + "Defines");
            desc.num_defines = (UIntPtr)(uint)texts.Count;
            desc.include_paths = strings.Array(IncludePaths, prefix + "IncludePaths");
            desc.num_include_paths = (UIntPtr)(uint)IncludePaths.Count;
            WriteTo(ref desc); // fast_math to relocatable
            desc.options = strings.Array(Options, prefix + "Options");
            desc.num_options = (UIntPtr)(uint)Options.Count;
        }
    }
}
