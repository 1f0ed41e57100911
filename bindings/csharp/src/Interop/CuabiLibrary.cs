// Finding libcuabi and binding the "cuabi" DllImport name to it.
//
// $CUABI_LIBRARY (a full path) wins when set, and is then the only place
// tried. Otherwise: libcuabi.so.0 and libcuabi.so next to this assembly, then
// the same names through the dynamic loader (LD_LIBRARY_PATH, the
// executable's RUNPATH, /etc/ld.so.cache, the system folders).
//
// The library is opened here first, so that a failure can say where it
// looked. The DllImport name is then bound to the file that opened: on .NET
// through NativeLibrary.SetDllImportResolver, on Mono through a global
// dllmap entry (mono_dllmap_insert). Mono binds a method's native calls
// when it compiles that method, so this must run before any method calling
// into NativeMethods is compiled; every entry point of the Cuabi namespace
// calls Load() first and keeps its native calls in separate methods.

using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
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
        private static string loadedFrom;
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
                    loadedFrom = path;
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
        public static string LoadedFrom
        {
            get { return loadedFrom; }
        }

        /// <summary>Looks up an exported symbol of the loaded library.</summary>
        /// <param name="name">The symbol name, e.g. "cuabi_version".</param>
        /// <param name="address">Its address, or zero when it is missing.</param>
        /// <returns>Whether the library exports <paramref name="name"/>.</returns>
        public static bool TryGetExport(string name, out IntPtr address)
        {
            Load();
#if NETCOREAPP
            return NativeLibrary.TryGetExport(libraryHandle, name, out address);
#else
            address = Dl.dlsym(libraryHandle, name);
            return address != IntPtr.Zero;
#endif
        }

        private static IntPtr Open(out string path)
        {
            var tried = new List<string>();
            string env = Environment.GetEnvironmentVariable(EnvironmentVariable);
            if (!string.IsNullOrEmpty(env))
            {
                string error;
                IntPtr h = TryOpen(env, out error);
                if (h != IntPtr.Zero)
                {
                    path = ResolvePath(h, env);
                    return h;
                }
                throw new DllNotFoundException(string.Format(
                    "cuabi: could not load the library named by ${0}={1}: {2}", EnvironmentVariable, env, error));
            }

            var candidates = new List<string>();
            string here = AssemblyDirectory();
            if (here != null)
            {
                candidates.Add(Path.Combine(here, "libcuabi.so.0"));
                candidates.Add(Path.Combine(here, "libcuabi.so"));
            }
            candidates.Add("libcuabi.so.0");
            candidates.Add("libcuabi.so");
            foreach (string candidate in candidates)
            {
                if (Path.IsPathRooted(candidate) && !File.Exists(candidate))
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

#if NETCOREAPP
        private static IntPtr TryOpen(string name, out string error)
        {
            try
            {
                error = null;
                return NativeLibrary.Load(name);
            }
            catch (Exception e)
            {
                error = e.Message;
                return IntPtr.Zero;
            }
        }

        private static string ResolvePath(IntPtr handle, string name)
        {
            return LinkMapPath(handle) ?? name;
        }

        private static unsafe string LinkMapPath(IntPtr handle)
        {
            // On glibc a dlopen handle is the library's struct link_map,
            // whose second field is its file name.
            try
            {
                if (!RuntimeInformation.IsOSPlatform(OSPlatform.Linux))
                    return null;
                IntPtr name = ((IntPtr*)handle)[1];
                string s = Utf8.FromNative(name);
                return string.IsNullOrEmpty(s) ? null : s;
            }
            catch (Exception)
            {
                return null;
            }
        }

        private static void Bind(string path, IntPtr handle)
        {
            NativeLibrary.SetDllImportResolver(typeof(CuabiLibrary).Assembly,
                delegate(string name, Assembly assembly, DllImportSearchPath? searchPath)
                {
                    return name == NativeMethods.LibraryName ? handle : IntPtr.Zero;
                });
        }
#else
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
            if (Type.GetType("Mono.Runtime") == null)
                throw new PlatformNotSupportedException(
                    "cuabi: this build of the binding is for Mono; build Cuabi.csproj for .NET");
            // A global map entry: "cuabi" means this file for every assembly.
            MonoRuntime.mono_dllmap_insert(IntPtr.Zero, NativeMethods.LibraryName, null, path, null);
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
#endif
    }
}
