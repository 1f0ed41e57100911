// Tests of where the library is looked for and how the "cuabi" DllImport
// name is bound, beyond those of NoGpuTests: the NuGet layouts
// (runtimes/<rid>/native/ beside the assembly and in its package), in a
// child process running a copy of this program and of Cuabi.dll, and the
// .NET resolver, built by reflection, given to a stand-in for .NET's
// NativeLibrary (Mono has none).

using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    /// <summary>The shape of .NET's DllImportResolver.</summary>
    internal delegate IntPtr StandInResolver(string libraryName, Assembly assembly, DllImportSearchPath? searchPath);

    /// <summary>A resolver type of another shape.</summary>
    internal delegate IntPtr WrongResolver(string libraryName);

    /// <summary>Stands in for System.Runtime.InteropServices.NativeLibrary.</summary>
    internal static class StandInNativeLibrary
    {
        internal static Assembly Assembly;
        internal static StandInResolver Resolver;
        internal static bool Refuse;

        public static void SetDllImportResolver(Assembly assembly, StandInResolver resolver)
        {
            if (Refuse)
                throw new InvalidOperationException("A resolver is already set for the assembly.");
            Assembly = assembly;
            Resolver = resolver;
        }
    }

    internal static class WrongNativeLibrary
    {
        public static void SetDllImportResolver(Assembly assembly, WrongResolver resolver)
        {
        }
    }

    internal static class LoadingTests
    {
        public static void Register()
        {
            Registry.Add("loading: runtimes/<rid>/native/libcuabi.so beside the assembly, then in its NuGet package, come first", RuntimesFolders);
            Registry.Add("loading: the .NET resolver is made by reflection from SetDllImportResolver's delegate type", DotNetResolver);
        }

        private static string LibraryPath()
        {
            string env = Environment.GetEnvironmentVariable(CuabiLibrary.EnvironmentVariable);
            return string.IsNullOrEmpty(env) ? CuabiLibrary.LoadedFrom : env;
        }

        private static void CopyTo(string file, string destination)
        {
            Directory.CreateDirectory(Path.GetDirectoryName(destination));
            File.Copy(file, destination, true);
        }

        private static void RuntimesFolders()
        {
            if (!Child.HostRunsCopies)
                throw new SkipException("copies of the test program are run on Mono only");
            string rid = CuabiLibrary.RuntimeIdentifier();
            Assert.Equal("linux-" + RuntimeInformation.ProcessArchitecture.ToString().ToLowerInvariant(), rid, "RuntimeIdentifier");
            if (RuntimeInformation.ProcessArchitecture == Architecture.X64)
                Assert.Equal("linux-x64", rid, "RuntimeIdentifier on x86-64");
            string lib = LibraryPath();
            string root = Path.Combine(Path.GetTempPath(), "cuabi-cs-runtimes-" + Guid.NewGuid().ToString("N"));
            try
            {
                // A package as `nuget install` lays it out.
                string package = Path.Combine(root, "packages", "Cuabi.9.9.9");
                string assemblies = Path.Combine(package, "lib", "net472");
                string program = Path.Combine(assemblies, "Cuabi.Tests.exe");
                CopyTo(typeof(Child).Assembly.Location, program);
                CopyTo(typeof(CuabiLibrary).Assembly.Location, Path.Combine(assemblies, "Cuabi.dll"));
                string packaged = Path.Combine(package, "runtimes", rid, "native", "libcuabi.so");
                string output = Path.Combine(assemblies, "runtimes", rid, "native", "libcuabi.so");
                string beside = Path.Combine(assemblies, "libcuabi.so.0");
                var env = new Dictionary<string, string> { { "CUABI_LIBRARY", null }, { "LD_LIBRARY_PATH", null } };

                CopyTo(lib, packaged);
                var r = Child.RunAt(program, "load", env);
                Assert.Equal(0, r.ExitCode, "the package's library (" + r + ")");
                Assert.Contains("LOADED " + packaged + "\n", r.Stdout, "the package's library");

                CopyTo(lib, beside);
                r = Child.RunAt(program, "load", env);
                Assert.Equal(0, r.ExitCode, "with a library beside the assembly too (" + r + ")");
                Assert.Contains("LOADED " + packaged + "\n", r.Stdout, "the package's library, ahead of the one beside the assembly");

                CopyTo(lib, output);
                r = Child.RunAt(program, "load", env);
                Assert.Equal(0, r.ExitCode, "with runtimes/ beside the assembly (" + r + ")");
                Assert.Contains("LOADED " + output + "\n", r.Stdout, "runtimes/ beside the assembly, ahead of the package's");

                r = Child.RunAt(program, "load", new Dictionary<string, string> { { "CUABI_LIBRARY", lib }, { "LD_LIBRARY_PATH", null } });
                Assert.Equal(0, r.ExitCode, "with CUABI_LIBRARY (" + r + ")");
                Assert.True(!r.Stdout.Contains(root), "CUABI_LIBRARY wins over every folder: " + r.Stdout);

                File.Delete(output);
                File.Delete(packaged);
                r = Child.RunAt(program, "load", env);
                Assert.Equal(0, r.ExitCode, "the library beside the assembly (" + r + ")");
                Assert.Contains("LOADED " + beside + "\n", r.Stdout, "then the library beside the assembly");

                File.Delete(beside);
                r = Child.RunAt(program, "load", env);
                if (r.ExitCode == 0)
                    throw new SkipException("libcuabi is installed on the system search path: " + r.Stdout.Trim());
                Assert.Equal(3, r.ExitCode, "nothing found (" + r + ")");
                int a = r.Stderr.IndexOf(output + ": no such file", StringComparison.Ordinal);
                int b = r.Stderr.IndexOf(packaged + ": no such file", StringComparison.Ordinal);
                int c = r.Stderr.IndexOf(beside + ": no such file", StringComparison.Ordinal);
                int d = r.Stderr.IndexOf("\n  libcuabi.so.0: ", StringComparison.Ordinal);
                Assert.True(a >= 0 && a < b && b < c && c < d,
                    "the message lists runtimes/ beside the assembly, the package's, the folder, then the loader, in order: " + r.Stderr);
            }
            finally
            {
                if (Directory.Exists(root))
                    Directory.Delete(root, true);
            }
        }

        private static void DotNetResolver()
        {
            CuabiLibrary.Load();
            IntPtr handle = CuabiLibrary.Handle;
            Assert.True(handle != IntPtr.Zero, "the loaded library has a handle");

            StandInNativeLibrary.Refuse = false;
            CuabiLibrary.InstallResolver(typeof(StandInNativeLibrary));
            Assert.True(StandInNativeLibrary.Assembly == typeof(CuabiLibrary).Assembly, "the resolver is set for Cuabi.dll");
            Assert.True(StandInNativeLibrary.Resolver != null, "a resolver of the stand-in's delegate type was given");
            Assert.Equal(handle, StandInNativeLibrary.Resolver(NativeMethods.LibraryName, typeof(CuabiLibrary).Assembly, null),
                "the resolver's answer for \"cuabi\"");
            Assert.Equal(handle, StandInNativeLibrary.Resolver(NativeMethods.LibraryName, typeof(CuabiLibrary).Assembly,
                DllImportSearchPath.AssemblyDirectory), "the resolver's answer for \"cuabi\" with a search path");
            Assert.Equal(IntPtr.Zero, StandInNativeLibrary.Resolver("libdl.so.2", typeof(CuabiLibrary).Assembly, null),
                "the resolver's answer for another library (the runtime's own search)");

            // The runtime's refusal (a resolver already set) is thrown as it is.
            StandInNativeLibrary.Refuse = true;
            try
            {
                var e = Assert.Throws<InvalidOperationException>(
                    () => CuabiLibrary.InstallResolver(typeof(StandInNativeLibrary)), "a refused resolver");
                Assert.Contains("already set", e.Message, "the runtime's message");
            }
            finally
            {
                StandInNativeLibrary.Refuse = false;
            }

            var wrong = Assert.Throws<PlatformNotSupportedException>(
                () => CuabiLibrary.InstallResolver(typeof(WrongNativeLibrary)), "a resolver type of another shape");
            Assert.Contains(typeof(WrongResolver).FullName, wrong.Message, "the message names the delegate type");
            var none = Assert.Throws<PlatformNotSupportedException>(
                () => CuabiLibrary.InstallResolver(typeof(LoadingTests)), "no SetDllImportResolver");
            Assert.Contains("SetDllImportResolver", none.Message, "the message names the method");
        }
    }
}
