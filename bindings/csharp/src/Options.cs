using System;
using System.Collections.Generic;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>The C++ dialects NVRTC compiles (<c>--std</c>).</summary>
    public enum CppStandard
    {
        /// <summary>C++03 ("--std=c++03").</summary>
        Cpp03 = 3,
        /// <summary>C++11 ("--std=c++11").</summary>
        Cpp11 = 11,
        /// <summary>C++14 ("--std=c++14").</summary>
        Cpp14 = 14,
        /// <summary>C++17 ("--std=c++17"; NVRTC's default).</summary>
        Cpp17 = 17,
        /// <summary>C++20 ("--std=c++20").</summary>
        Cpp20 = 20,
    }

    /// <summary>
    /// How CUDA C++ is compiled, as typed values (architecture, C++ standard,
    /// macros, include paths, fast math, line information, debugging,
    /// relocatable code, LTO-IR) and raw NVRTC option strings, for
    /// <see cref="Device.Compile"/>, <see cref="Device.CompileAsync"/> and
    /// <see cref="Program.Compile(CompileOptions)"/>.
    /// <see cref="ToNvrtcOptions()"/> gives the option strings NVRTC receives.
    /// </summary>
    /// <example>
    /// <code>
    /// var options = new CompileOptions
    /// {
    ///     Architecture = "sm_90",
    ///     Std = CppStandard.Cpp17,
    ///     Defines = { { "BLOCK", "256" }, { "USE_FAST_PATH", null } },
    ///     IncludePaths = { "/usr/local/cuda/include" },
    ///     FastMath = true,
    /// };
    /// </code>
    /// </example>
    public sealed class CompileOptions
    {
        private string architecture;
        private CppStandard? std;

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
        /// The target ("--gpu-architecture="): "sm_XY" for CUBIN (and PTX),
        /// "compute_XY" for PTX, with an optional "a" or "f" suffix
        /// ("sm_90a"); null (the default): the device's own for
        /// <see cref="Device.Compile"/>, NVRTC's default for a
        /// <see cref="Program"/>.
        /// </summary>
        /// <exception cref="ArgumentException">The value has none of those forms.</exception>
        public string Architecture
        {
            get { return architecture; }
            set
            {
                if (value != null && !IsArchitecture(value))
                    throw new ArgumentException(string.Format(
                        "'{0}' is not a GPU architecture: expected sm_XY (CUBIN) or compute_XY (PTX), " +
                        "optionally with an a or f suffix, e.g. sm_90, compute_90, sm_90a", value), "Architecture");
                architecture = value;
            }
        }

        /// <summary>The C++ standard ("--std="); null (the default): NVRTC's.</summary>
        /// <exception cref="ArgumentOutOfRangeException">The value is not a <see cref="CppStandard"/>.</exception>
        public CppStandard? Std
        {
            get { return std; }
            set
            {
                if (value.HasValue && !Enum.IsDefined(typeof(CppStandard), value.Value))
                    throw new ArgumentOutOfRangeException("Std", (int)value.Value,
                        "is not a C++ standard NVRTC takes: Cpp03, Cpp11, Cpp14, Cpp17 or Cpp20");
                std = value;
            }
        }

        /// <summary>
        /// Macros ("--define-macro="): name to value, or to null for a macro
        /// defined without a value (<c>-DNAME</c>). A name is a C identifier.
        /// Passed in the ordinal order of their names.
        /// </summary>
        public IDictionary<string, string> Defines { get; private set; }

        /// <summary>Folders searched for #include files ("--include-path="), in order.</summary>
        public IList<string> IncludePaths { get; private set; }

        /// <summary>Fast, less precise math ("--use_fast_math").</summary>
        public bool FastMath { get; set; }

        /// <summary>Source line information for profilers ("--generate-line-info", -lineinfo).</summary>
        public bool LineInfo { get; set; }

        /// <summary>Device code for the debugger, unoptimised ("--device-debug", -G).</summary>
        public bool Debug { get; set; }

        /// <summary>
        /// Relocatable device code ("--relocatable-device-code=true", -rdc):
        /// device functions a <see cref="Linker"/> resolves across programs.
        /// </summary>
        public bool Rdc { get; set; }

        /// <summary>
        /// LTO-IR for a link-time-optimising link ("--dlink-time-opt", -dlto;
        /// <see cref="Program.LtoIr"/>, <see cref="Linker"/> with
        /// <see cref="LinkOptions.Lto"/>). Such a program has no CUBIN or PTX.
        /// </summary>
        public bool Dlto { get; set; }

        /// <summary>
        /// The NVRTC options these values give: the typed ones first
        /// (architecture, standard, macros, include paths, fast math, line
        /// information, debugging, relocatable code, LTO-IR), then
        /// <see cref="Options"/>. A new array each call.
        /// </summary>
        /// <exception cref="ArgumentException">
        /// A macro name that is not a C identifier, an empty include path, or a string C cannot take
        /// (a NUL character, an unpaired surrogate).
        /// </exception>
        /// <exception cref="ArgumentNullException">A null macro name, include path or option.</exception>
        public string[] ToNvrtcOptions()
        {
            return ToNvrtcOptions("");
        }

        /// <summary>The options, naming a faulty value <paramref name="prefix"/> + property (e.g. "options.Defines").</summary>
        internal string[] ToNvrtcOptions(string prefix)
        {
            var list = new List<string>();
            if (architecture != null)
                list.Add("--gpu-architecture=" + architecture);
            if (std.HasValue)
                list.Add("--std=c++" + ((int)std.Value).ToString("00"));
            var defines = new List<KeyValuePair<string, string>>(Defines);
            defines.Sort((a, b) => string.CompareOrdinal(a.Key, b.Key));
            foreach (var define in defines)
            {
                if (!IsMacroName(define.Key))
                    throw new ArgumentException(string.Format(
                        "'{0}' is not a macro name (letters, digits and underscores, not starting with a digit)", define.Key),
                        prefix + "Defines");
                Utf8.Encode(define.Value, prefix + "Defines[" + define.Key + "]");
                list.Add(define.Value == null ? "--define-macro=" + define.Key : "--define-macro=" + define.Key + "=" + define.Value);
            }
            for (int i = 0; i < IncludePaths.Count; i++)
            {
                string path = IncludePaths[i];
                if (path == null)
                    throw new ArgumentNullException(prefix + "IncludePaths[" + i + "]");
                if (path.Length == 0)
                    throw new ArgumentException("is empty: an include path names a folder", prefix + "IncludePaths[" + i + "]");
                Utf8.Encode(path, prefix + "IncludePaths[" + i + "]");
                list.Add("--include-path=" + path);
            }
            if (FastMath)
                list.Add("--use_fast_math");
            if (LineInfo)
                list.Add("--generate-line-info");
            if (Debug)
                list.Add("--device-debug");
            if (Rdc)
                list.Add("--relocatable-device-code=true");
            if (Dlto)
                list.Add("--dlink-time-opt");
            for (int i = 0; i < Options.Count; i++)
            {
                if (Options[i] == null)
                    throw new ArgumentNullException(prefix + "Options[" + i + "]");
                Utf8.Encode(Options[i], prefix + "Options[" + i + "]");
                list.Add(Options[i]);
            }
            return list.ToArray();
        }

        // sm_XY or compute_XY (two or three digits), optionally with an a or f suffix.
        private static bool IsArchitecture(string value)
        {
            int start = value.StartsWith("sm_", StringComparison.Ordinal) ? 3
                      : value.StartsWith("compute_", StringComparison.Ordinal) ? 8 : -1;
            if (start < 0)
                return false;
            int end = value.Length;
            if (end > start && (value[end - 1] == 'a' || value[end - 1] == 'f'))
                end--;
            if (end - start < 2 || end - start > 3)
                return false;
            for (int i = start; i < end; i++)
                if (value[i] < '0' || value[i] > '9')
                    return false;
            return true;
        }

        // A C identifier: ASCII letters, digits and underscores, not starting with a digit.
        private static bool IsMacroName(string name)
        {
            if (string.IsNullOrEmpty(name) || (name[0] >= '0' && name[0] <= '9'))
                return false;
            foreach (char ch in name)
                if (!(ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
                    return false;
            return true;
        }
    }
}
