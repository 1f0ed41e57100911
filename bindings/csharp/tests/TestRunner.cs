// A small test runner (no framework): runs every test, prints one line per
// test, and ends with "N passed, N failed, N skipped". GPU tests skip with the
// reason when there is no usable device; CUABI_TEST_REQUIRE_GPU=1 turns
// those skips into failures (for runs on a GPU machine), all but the ones a
// test marks as the machine's refusal of what it needs (SkipException's
// machineRefused: the device ran the test, the driver refused the feature).
//
//   mono Cuabi.Tests.exe [substring ...]     run the tests whose names contain a substring
//   mono Cuabi.Tests.exe --list              list the tests

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal sealed class SkipException : Exception
    {
        public SkipException(string reason) : base(reason) { }

        /// <param name="reason">Why.</param>
        /// <param name="machineRefused">
        /// The device was there and the test ran on it, but this machine refused
        /// what the test needs (e.g. the driver cannot write device core dumps):
        /// a skip even where CUABI_TEST_REQUIRE_GPU=1.
        /// </param>
        public SkipException(string reason, bool machineRefused) : base(reason)
        {
            MachineRefused = machineRefused;
        }

        public bool MachineRefused { get; private set; }
    }

    internal sealed class TestFailure : Exception
    {
        public TestFailure(string message) : base(message) { }
    }

    internal static class Assert
    {
        public static void True(bool condition, string message)
        {
            if (!condition)
                throw new TestFailure(message);
        }

        public static void Equal<T>(T expected, T actual, string what)
        {
            if (!EqualityComparer<T>.Default.Equals(expected, actual))
                throw new TestFailure(string.Format("{0}: expected <{1}>, got <{2}>", what, expected, actual));
        }

        public static void Contains(string needle, string haystack, string what)
        {
            if (haystack == null || haystack.IndexOf(needle, StringComparison.Ordinal) < 0)
                throw new TestFailure(string.Format("{0}: expected to contain <{1}>, got <{2}>", what, needle, haystack));
        }

        public static TException Throws<TException>(Action action, string what) where TException : Exception
        {
            try
            {
                action();
            }
            catch (TException e)
            {
                return e;
            }
            catch (Exception e)
            {
                throw new TestFailure(string.Format("{0}: expected {1}, got {2}: {3}",
                    what, typeof(TException).Name, e.GetType().Name, e.Message));
            }
            throw new TestFailure(string.Format("{0}: expected {1}, nothing was thrown", what, typeof(TException).Name));
        }

        public static CudaException ThrowsCuda(CudaStatus status, Action action, string what)
        {
            var e = Throws<CudaException>(action, what);
            if (e.Status != status)
                throw new TestFailure(string.Format("{0}: expected status {1}, got {2} ({3}): {4}",
                    what, status, e.Status, e.StatusName, e.Message));
            return e;
        }
    }

    internal sealed class TestCase
    {
        public string Name;
        public bool NeedsGpu;
        public Action Body;
    }

    internal static class Registry
    {
        public static readonly List<TestCase> Tests = new List<TestCase>();

        public static void Add(string name, Action body)
        {
            Tests.Add(new TestCase { Name = name, Body = body });
        }

        public static void AddGpu(string name, Action body)
        {
            Tests.Add(new TestCase { Name = name, Body = body, NeedsGpu = true });
        }
    }

    /// <summary>Whether a device is usable, decided once.</summary>
    internal static class Gpu
    {
        private static bool probed;
        private static string reason;

        public static string Unavailable
        {
            get
            {
                if (!probed)
                {
                    probed = true;
                    reason = Probe();
                }
                return reason;
            }
        }

        private static string Probe()
        {
            try
            {
                int n = Device.Count;
                return n > 0 ? null : "the CUDA driver reports no device";
            }
            catch (CudaException e)
            {
                return "no CUDA device (" + e.StatusName + ")";
            }
        }

        public static void Require()
        {
            if (Unavailable != null)
                throw new SkipException(Unavailable);
        }
    }

    /// <summary>Runs this test program again as a child, for what can only be seen once per process.</summary>
    internal static class Child
    {
        public sealed class Result
        {
            public int ExitCode;
            /// <summary>It did not exit in the time it was given and was killed (<see cref="ExitCode"/> 124).</summary>
            public bool Killed;
            public string Stdout;
            public string Stderr;

            public override string ToString()
            {
                return "exit " + ExitCode + "\nstdout: " + Stdout + "\nstderr: " + Stderr;
            }
        }

        public static Result Run(string mode, IDictionary<string, string> env, params string[] extra)
        {
            return RunAt(typeof(Child).Assembly.Location, mode, env, extra);
        }

        /// <summary>Whether this program runs on Mono, which <see cref="RunAt"/> can give a copy of it (with a copy of Cuabi.dll beside it).</summary>
        public static bool HostRunsCopies
        {
            get
            {
                string host = Path.GetFileNameWithoutExtension(Process.GetCurrentProcess().MainModule.FileName);
                return host == "mono" || host == "mono-sgen";
            }
        }

        /// <summary>Like <see cref="Run"/>, with the test program at <paramref name="self"/> (a copy of it, where <see cref="HostRunsCopies"/>).</summary>
        public static Result RunAt(string self, string mode, IDictionary<string, string> env, params string[] extra)
        {
            return RunAtWithin(ChildSeconds, self, mode, env, extra);
        }

        /// <summary>Like <see cref="Run"/>, with the child killed after <paramref name="seconds"/> instead of <see cref="ChildSeconds"/>.</summary>
        public static Result RunWithin(int seconds, string mode, IDictionary<string, string> env, params string[] extra)
        {
            return RunAtWithin(seconds, typeof(Child).Assembly.Location, mode, env, extra);
        }

        private static Result RunAtWithin(int seconds, string self, string mode, IDictionary<string, string> env, string[] extra)
        {
            string exe = Process.GetCurrentProcess().MainModule.FileName;
            string host = Path.GetFileNameWithoutExtension(exe);
            var args = new StringBuilder();
            if ((host == "mono" || host == "mono-sgen" || host == "dotnet") && !string.IsNullOrEmpty(self))
                args.Append('"').Append(self).Append("\" ");
            args.Append("--child ").Append(mode);
            foreach (string a in extra)
                args.Append(' ').Append(a); // hex, numbers and socket names: nothing to quote
            var psi = new ProcessStartInfo(exe, args.ToString())
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            foreach (var kv in env)
            {
                if (kv.Value == null)
                    psi.EnvironmentVariables.Remove(kv.Key);
                else
                    psi.EnvironmentVariables[kv.Key] = kv.Value;
            }
            using (var p = Process.Start(psi))
            {
                // A child that does not exit in ChildSeconds is killed; its
                // output then ends with a line saying so.
                bool killed = false;
                using (new Timer(_ =>
                {
                    try
                    {
                        if (!p.HasExited) { killed = true; p.Kill(); }
                    }
                    catch (Exception) { }
                }, null, seconds * 1000, Timeout.Infinite))
                {
                    string stderr;
                    string stdout = ReadBoth(p, out stderr);
                    if (killed)
                        stderr += "\nthe child did not exit in " + seconds + " s and was killed\n";
                    return new Result { ExitCode = killed ? 124 : p.ExitCode, Stdout = stdout, Stderr = stderr, Killed = killed };
                }
            }
        }

        /// <summary>How long a child may run before it is killed.</summary>
        public const int ChildSeconds = 120;

        /// <summary>Reads a child's stdout and stderr to the end and waits for it (a plain thread, no thread pool).</summary>
        public static string ReadBoth(Process p, out string stderr)
        {
            string err = null;
            var reader = new Thread(() => err = p.StandardError.ReadToEnd());
            reader.Start();
            string stdout = p.StandardOutput.ReadToEnd();
            reader.Join();
            p.WaitForExit();
            stderr = err;
            return stdout;
        }

        // The child side. Exit codes: 0 fine, 3 library not loaded, 4 CUDA error, 5 other.
        public static int Serve(string mode, string[] extra)
        {
            try
            {
                CuabiLibrary.Load();
            }
            catch (DllNotFoundException e)
            {
                Console.Error.WriteLine(e.Message);
                return 3;
            }
            Console.WriteLine("LOADED " + CuabiLibrary.LoadedFrom);
            return ChildBody(mode, extra);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int ChildBody(string mode, string[] extra)
        {
            try
            {
                switch (mode)
                {
                    case "load":
                        Console.WriteLine("VERSION " + Cuda.VersionString);
                        return 0;
                    case "device-count":
                        Console.WriteLine("COUNT " + Device.Count);
                        return 0;
                    default:
                        int served = MemoryTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = CompileTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = FaultInjection.ServeChild(mode, extra);
                        if (served < 0)
                            served = GeneratedLayerTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = NvtxTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = HealthTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = LaunchRecordTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = LaunchAttributeTests.ServeChild(mode, extra);
                        if (served < 0)
                            served = VmmTests.ServeChild(mode, extra);
                        if (served >= 0)
                            return served;
                        Console.Error.WriteLine("unknown child mode " + mode);
                        return 5;
                }
            }
            catch (CudaException e)
            {
                Console.WriteLine("STATUS " + (int)e.Status + " " + e.StatusName);
                Console.WriteLine("MESSAGE " + e.Message);
                return 4;
            }
        }
    }

    internal static class TestRunner
    {
        public static int Main(string[] args)
        {
            if (args.Length >= 2 && args[0] == "--child")
                return Child.Serve(args[1], args.Skip(2).ToArray());

            NoGpuTests.Register();
            GpuTests.Register();
            LaunchPlanTests.Register();
            ExtendedLaunchTests.Register();
            LaunchAttributeTests.Register();
            GreenTensorTests.Register();
            GraphNodeTests.Register();
            GraphPatternsTests.Register();
            GraphUpdateTests.Register();
            DlpackTests.Register();
            MemoryTests.Register();
            VmmTests.Register();
            CompileTests.Register();
            CorpusTests.Register();
            MemoryCorpus.Register();
            CompileCorpus.Register();
            FaultInjection.Register();
            GeneratedLayerTests.Register();
            DriverLevelTests.Register();
            BatchTests.Register();
            Batch3DTests.Register();
            LoadingTests.Register();
            NvtxTests.Register();
            HealthTests.Register();
            LaunchRecordTests.Register();

            if (args.Length == 1 && args[0] == "--list")
            {
                foreach (var t in Registry.Tests)
                    Console.WriteLine((t.NeedsGpu ? "gpu    " : "no-gpu ") + t.Name);
                return 0;
            }

            bool requireGpu = Environment.GetEnvironmentVariable("CUABI_TEST_REQUIRE_GPU") == "1";
            try
            {
                CuabiLibrary.Load();
                Console.WriteLine("library: " + CuabiLibrary.LoadedFrom);
            }
            catch (DllNotFoundException e)
            {
                Console.WriteLine("FAIL  loading the library: " + e.Message);
                Console.WriteLine("0 passed, 1 failed, 0 skipped");
                return 1;
            }

            int passed = 0, failed = 0, skipped = 0;
            foreach (var test in Registry.Tests)
            {
                if (args.Length > 0 && !args.Any(a => test.Name.Contains(a)))
                    continue;
                try
                {
                    if (test.NeedsGpu)
                        Gpu.Require();
                    test.Body();
                    passed++;
                    Console.WriteLine("PASS  " + test.Name);
                }
                catch (SkipException s)
                {
                    if (test.NeedsGpu && requireGpu && !s.MachineRefused)
                    {
                        failed++;
                        Console.WriteLine("FAIL  " + test.Name + ": skipped, but CUABI_TEST_REQUIRE_GPU=1: " + s.Message);
                    }
                    else
                    {
                        skipped++;
                        Console.WriteLine("SKIP  " + test.Name + ": " + s.Message);
                    }
                }
                catch (Exception e)
                {
                    failed++;
                    string detail = e is TestFailure ? e.Message : e.ToString();
                    Console.WriteLine("FAIL  " + test.Name + ": " + detail.Replace("\n", "\n      "));
                }
            }
            Console.WriteLine("{0} passed, {1} failed, {2} skipped", passed, failed, skipped);
            return failed == 0 ? 0 : 1;
        }
    }
}
