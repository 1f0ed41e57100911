// Finding libcuabi and binding the "cuabi" DllImport name to it.
//
// $CUABI_LIBRARY (a full path) wins when set, and is then the only place
// tried. Otherwise, in order:
//   1. libcuabi.so in runtimes/<rid>/native/ beside this assembly (a .NET
//      build's output folder), then, when this assembly sits in a NuGet
//      package's lib/<framework>/ folder, in the package's own
//      runtimes/<rid>/native/; <rid> is linux-<the process architecture>
//      (linux-x64, linux-arm64, ...), as NuGet names the folders;
//   2. libcuabi.so.0 and libcuabi.so next to this assembly;
//   3. the same names through the dynamic loader (LD_LIBRARY_PATH, the
//      executable's RUNPATH, /etc/ld.so.cache, the system folders).
//
// The library is opened here first, so that a failure can say where it
// looked. The DllImport name is then bound to the file that opened: on Mono
// (which has no NativeLibrary) through a global dllmap entry
// (mono_dllmap_insert); on .NET through NativeLibrary.SetDllImportResolver,
// with a resolver answering the handle already opened. One code serves both
// builds: the assembly build.sh makes (mcs against the 4.7.2 profile: the one
// in the NuGet package), whose profile has no NativeLibrary, and
// Cuabi.csproj's .NET build; each opens the file with dlopen and finds
// SetDllImportResolver by reflection at run time. Mono binds a
// method's native calls when it compiles that method, so this must run
// before any method calling into NativeMethods is compiled; every entry
// point of the Cuabi namespace calls Load() first and keeps its native calls
// in separate methods.

using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using System.Text;

namespace Cuabi.Interop
{
    /// <summary>Finds, loads and describes the native cuabi library.</summary>
    public static class CuabiLibrary
    {
        /// <summary>The environment variable naming the library file to load (a full path).</summary>
        public const string EnvironmentVariable = "CUABI_LIBRARY";

        private static readonly object Gate = new object();
        private static volatile IntPtr libraryHandle;
        private static volatile IntPtr resolverHandle; // what the .NET resolver answers
        private static Exception failure;

        /// <summary>
        /// Loads the library (once per process; later calls return at once or
        /// throw the first failure again).
        /// </summary>
        /// <exception cref="DllNotFoundException">
        /// No library could be loaded; the message lists every place tried and why each failed.
        /// </exception>
        public static void Load()
        {
            if (libraryHandle != IntPtr.Zero)
                return;
            lock (Gate)
            {
                if (libraryHandle != IntPtr.Zero)
                    return;
                if (failure != null)
                    throw new DllNotFoundException(failure.Message);
                try
                {
                    string path;
                    IntPtr h = Open(out path);
                    Bind(path, h);
                    LoadedFrom = path;
                    libraryHandle = h;
                }
                catch (Exception e)
                {
                    failure = e;
                    throw;
                }
            }
        }

        /// <summary>The file the library was loaded from (a full path where known), or null before <see cref="Load"/>.</summary>
        public static string LoadedFrom { get; private set; }

        /// <summary>The handle of the loaded library (zero before <see cref="Load"/>).</summary>
        internal static IntPtr Handle
        {
            get { return libraryHandle; }
        }

        /// <summary>Looks up an exported symbol of the loaded library.</summary>
        /// <param name="name">The symbol name, e.g. "cuabi_version".</param>
        /// <param name="address">Its address, or zero when it is missing.</param>
        /// <returns>Whether the library exports <paramref name="name"/>.</returns>
        public static bool TryGetExport(string name, out IntPtr address)
        {
            Load();
            address = Dl.dlsym(libraryHandle, name);
            return address != IntPtr.Zero;
        }

        private static IntPtr Open(out string path)
        {
            var tried = new List<string>();
            var candidates = new List<string>();
            string env = Environment.GetEnvironmentVariable(EnvironmentVariable);
            bool named = !string.IsNullOrEmpty(env);
            string here = named ? null : AssemblyDirectory();
            if (named)
                candidates.Add(env); // then the only place tried
            else
            {
                if (here != null)
                {
                    candidates.AddRange(RuntimesCandidates(here));
                    candidates.Add(Path.Combine(here, "libcuabi.so.0"));
                    candidates.Add(Path.Combine(here, "libcuabi.so"));
                }
                candidates.Add("libcuabi.so.0");
                candidates.Add("libcuabi.so");
            }
            foreach (string candidate in candidates)
            {
                if (!named && Path.IsPathRooted(candidate) && !File.Exists(candidate))
                {
                    tried.Add(candidate + ": no such file");
                    continue;
                }
                string error;
                IntPtr h = TryOpen(candidate, out error);
                if (h != IntPtr.Zero)
                {
                    path = ResolvePath(h, candidate);
                    return h;
                }
                if (named)
                    throw new DllNotFoundException(string.Format(
                        "cuabi: could not load the library named by ${0}={1}: {2}", EnvironmentVariable, env, error));
                tried.Add(candidate + ": " + error);
            }

            var message = new StringBuilder();
            message.Append("cuabi: could not load the cuabi library. Set $").Append(EnvironmentVariable)
                .Append(" to the full path of libcuabi.so, or put its folder on LD_LIBRARY_PATH (now \"")
                .Append(Environment.GetEnvironmentVariable("LD_LIBRARY_PATH") ?? "")
                .Append("\"). Tried, in order (bare names through the dynamic loader's search path):");
            foreach (string t in tried)
                message.Append("\n  ").Append(t);
            throw new DllNotFoundException(message.ToString());
        }

        /// <summary>
        /// The NuGet runtime identifier of this process's native folder:
        /// linux-x64, linux-arm64, ... (null where the architecture cannot be told).
        /// </summary>
        internal static string RuntimeIdentifier()
        {
            try
            {
                // The Architecture names lowercased are .NET's: x64, x86, arm, arm64, s390x, ppc64le, ...
                return "linux-" + RuntimeInformation.ProcessArchitecture.ToString().ToLowerInvariant();
            }
            catch (Exception)
            {
                return null;
            }
        }

        /// <summary>
        /// The package's native library for an assembly in folder
        /// <paramref name="here"/>: in runtimes/&lt;rid&gt;/native/ beside it
        /// (a .NET build's output), then, where <paramref name="here"/> is a
        /// package's lib/&lt;framework&gt;/, in the package's runtimes/&lt;rid&gt;/native/.
        /// </summary>
        internal static List<string> RuntimesCandidates(string here)
        {
            var candidates = new List<string>();
            string rid = RuntimeIdentifier();
            if (rid == null)
                return candidates;
            string native = Path.Combine("runtimes", rid, "native", "libcuabi.so");
            candidates.Add(Path.Combine(here, native));
            string lib = Path.GetDirectoryName(here);
            if (lib != null && Path.GetFileName(lib) == "lib")
            {
                string package = Path.GetDirectoryName(lib);
                if (package != null)
                    candidates.Add(Path.Combine(package, native));
            }
            return candidates;
        }

        private static string AssemblyDirectory()
        {
            try
            {
                string location = typeof(CuabiLibrary).Assembly.Location;
                if (string.IsNullOrEmpty(location))
                    return null;
                return Path.GetDirectoryName(Path.GetFullPath(location));
            }
            catch (Exception)
            {
                return null; // bundled or in-memory assemblies have no folder
            }
        }

        /// <summary>
        /// The DllImport resolver: the library's handle for the "cuabi" name,
        /// zero (the runtime's own search) for any other.
        /// </summary>
        private static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? searchPath)
        {
            return name == NativeMethods.LibraryName ? resolverHandle : IntPtr.Zero;
        }

        /// <summary>
        /// Calls <paramref name="nativeLibrary"/>'s static
        /// SetDllImportResolver(Assembly, resolver) for this assembly, with a
        /// delegate of its resolver type over <see cref="Resolve"/>: .NET's
        /// System.Runtime.InteropServices.NativeLibrary, found at run time by
        /// a build compiled without it.
        /// </summary>
        internal static void InstallResolver(Type nativeLibrary)
        {
            MethodInfo set = null;
            foreach (MethodInfo m in nativeLibrary.GetMethods(BindingFlags.Public | BindingFlags.Static))
            {
                ParameterInfo[] p = m.GetParameters();
                if (m.Name == "SetDllImportResolver" && p.Length == 2 && p[0].ParameterType == typeof(Assembly) &&
                    typeof(Delegate).IsAssignableFrom(p[1].ParameterType))
                {
                    set = m;
                    break;
                }
            }
            if (set == null)
                throw new PlatformNotSupportedException(
                    "cuabi: " + nativeLibrary.FullName + " has no SetDllImportResolver(Assembly, resolver)");
            Type resolverType = set.GetParameters()[1].ParameterType;
            MethodInfo resolve = ((Func<string, Assembly, DllImportSearchPath?, IntPtr>)Resolve).Method;
            Delegate resolver = Delegate.CreateDelegate(resolverType, resolve, false);
            if (resolver == null)
                throw new PlatformNotSupportedException(string.Format(
                    "cuabi: {0} is not a (string, Assembly, DllImportSearchPath?) -> IntPtr delegate",
                    resolverType.FullName));
            try
            {
                set.Invoke(null, new object[] { typeof(CuabiLibrary).Assembly, resolver });
            }
            catch (TargetInvocationException e) when (e.InnerException != null)
            {
                ExceptionDispatchInfo.Capture(e.InnerException).Throw();
            }
        }

        private const int RTLD_NOW = 2;
        private const int RTLD_GLOBAL = 0x100;
        private const int RTLD_DI_LINKMAP = 2;

        private static IntPtr TryOpen(string name, out string error)
        {
            Dl.dlerror();
            IntPtr h = Dl.dlopen(name, RTLD_NOW | RTLD_GLOBAL);
            error = h == IntPtr.Zero ? (Utf8.FromNative(Dl.dlerror()) ?? "dlopen failed") : null;
            return h;
        }

        private static unsafe string ResolvePath(IntPtr handle, string name)
        {
            IntPtr map;
            if (Dl.dlinfo(handle, RTLD_DI_LINKMAP, out map) == 0 && map != IntPtr.Zero)
            {
                string s = Utf8.FromNative(((IntPtr*)map)[1]);
                if (!string.IsNullOrEmpty(s))
                    return s;
            }
            return name;
        }

        private static void Bind(string path, IntPtr handle)
        {
            resolverHandle = handle;
            // .NET (Core 3.0 and later, and .NET's own Mono) has NativeLibrary;
            // Mono (the Mono project's runtime, whose profile this build is
            // compiled against) has none, and has the dllmap.
            Type nativeLibrary = FindNativeLibrary();
            if (nativeLibrary != null)
                InstallResolver(nativeLibrary);
            else if (Type.GetType("Mono.Runtime") != null)
                BindMono(path);
            else
                throw new PlatformNotSupportedException(string.Format(
                    "cuabi: the \"{0}\" DllImport name cannot be bound to {1}: this runtime is neither Mono nor " +
                    ".NET with System.Runtime.InteropServices.NativeLibrary (.NET Core 3.0 or later)",
                    NativeMethods.LibraryName, path));
        }

        private static void BindMono(string path)
        {
            // A global map entry: "cuabi" means this file for every assembly.
            MonoRuntime.mono_dllmap_insert(IntPtr.Zero, NativeMethods.LibraryName, null, path, null);
        }

        private static Type FindNativeLibrary()
        {
            const string name = "System.Runtime.InteropServices.NativeLibrary";
            return typeof(Marshal).Assembly.GetType(name, false)
                ?? Type.GetType(name + ", System.Runtime.InteropServices", false);
        }

        private static class Dl
        {
            [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
            internal static extern IntPtr dlopen([MarshalAs(UnmanagedType.LPStr)] string file, int mode);

            [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
            internal static extern IntPtr dlerror();

            [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
            internal static extern IntPtr dlsym(IntPtr handle, [MarshalAs(UnmanagedType.LPStr)] string symbol);

            [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
            internal static extern int dlinfo(IntPtr handle, int request, out IntPtr info);
        }

        private static class MonoRuntime
        {
            // MONO_API void mono_dllmap_insert(MonoImage* assembly, const char* dll,
            //     const char* func, const char* tdll, const char* tfunc);
            [DllImport("__Internal", CallingConvention = CallingConvention.Cdecl)]
            internal static extern void mono_dllmap_insert(IntPtr assembly,
                [MarshalAs(UnmanagedType.LPStr)] string dll, [MarshalAs(UnmanagedType.LPStr)] string func,
                [MarshalAs(UnmanagedType.LPStr)] string tdll, [MarshalAs(UnmanagedType.LPStr)] string tfunc);
        }
    }
}
