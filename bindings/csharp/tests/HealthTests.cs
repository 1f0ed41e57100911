// The driver's log and the context's health through the C# API, no GPU,
// against the stand-in driver of tests/fake/ (fake_cuda.c logs an injected
// failure as the real driver does, through cuLogsRegisterCallback; after an
// injected CUDA_ERROR_LAUNCH_FAILED every later call answers it, as after a
// sticky fault). The C tests tests/fault/driver_log_test.c and health_test.c
// check the same through the C API.
//
// cuabi reads CUABI_DRIVER_PATH once per process and a lost context stays
// lost, so each check runs in a child process of its own with
// CUABI_DRIVER_PATH pointing at the stand-in ($CUABI_FAULT_FAKE_DRIVER, set by
// run-tests.sh and the CTest entry; skipped, saying why, without it):
//   driver log: a failing call's message ends with the lines the driver
//     logged during it; Cuda.DriverLogRead (all, the last 1),
//     Cuda.DriverLogDump, and their refusals;
//   driver log, none kept: FAKE_CUDA_NO_LOGS=1, a driver older than 12.9;
//   health: the profiler and core-dump members reach the library;
//     Device.Health usable, then lost after a sticky fault; the
//     Cuda.ContextLost event raised exactly once, on the failing call's
//     thread, with the message Cuda.ContextLostMessage keeps; a handler's
//     exception stays in C#; a handler added after the loss is called at once.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;

namespace Cuabi.Tests
{
    internal static class HealthTests
    {
        private const string LogMode = "driver-log";
        private const string NoLogMode = "driver-log-absent";
        private const string HealthMode = "health";

        private const int CudaErrorInvalidValue = 1;   // cuda.h
        private const int CudaErrorOutOfMemory = 2;    // cuda.h
        private const int CudaErrorLaunchFailed = 719; // cuda.h: sticky

        public static void Register()
        {
            Registry.Add("driver log: failures carry the driver's lines; read and dump (stand-in driver, own process)",
                () => RunChild(LogMode, false));
            Registry.Add("driver log: a driver that keeps none is reported (stand-in driver, own process)",
                () => RunChild(NoLogMode, true));
            Registry.Add("health: usable, then lost after a sticky fault; ContextLost raised once (stand-in driver, own process)",
                () => RunChild(HealthMode, false));
        }

        private static void RunChild(string mode, bool noLogs)
        {
            string fake = Environment.GetEnvironmentVariable("CUABI_FAULT_FAKE_DRIVER");
            if (string.IsNullOrEmpty(fake) || !File.Exists(fake))
                throw new SkipException("no stand-in driver (CUABI_FAULT_FAKE_DRIVER: a CMake build makes "
                    + "build/tests/fault/libcuabi_fault_fake_cuda.so)");
            var env = new Dictionary<string, string>
            {
                { "CUABI_DRIVER_PATH", fake },
                { "CUABI_NVRTC_PATH", fake },
                { "CUABI_CACHE", "0" },
                { "FAKE_CUDA_NO_LOGS", noLogs ? "1" : null },
            };
            Child.Result r = Child.Run(mode, env);
            if (r.ExitCode != 0 || !(r.Stdout ?? "").Contains(mode.ToUpperInvariant() + " OK"))
                throw new TestFailure("the child failed: " + r);
        }

        // ---- the stand-in's control ------------------------------------------

        /// <summary>The stand-in's fail control, for the child processes of this file and LaunchRecordTests.cs.</summary>
        internal static class Fake
        {
            private const int RTLD_NOW = 2;

            [DllImport("libdl.so.2")] private static extern IntPtr dlopen(string path, int flags);
            [DllImport("libdl.so.2")] private static extern IntPtr dlsym(IntPtr handle, string name);
            [DllImport("libdl.so.2")] private static extern IntPtr dlerror();

            [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
            private delegate void FailEntryFn(IntPtr name, long n, int cu, int nvrtc);

            private static FailEntryFn failEntry;
            // fake_fail_entry keeps the name's pointer: each name is copied once
            // and kept for the process.
            private static readonly Dictionary<string, IntPtr> Names = new Dictionary<string, IntPtr>();

            public static void Open()
            {
                string path = Environment.GetEnvironmentVariable("CUABI_DRIVER_PATH");
                IntPtr h = string.IsNullOrEmpty(path) ? IntPtr.Zero : dlopen(path, RTLD_NOW);
                if (h == IntPtr.Zero)
                    throw new TestFailure("CUABI_DRIVER_PATH must name the stand-in driver: "
                        + (path == null ? "not set" : Marshal.PtrToStringAnsi(dlerror())));
                IntPtr f = dlsym(h, "fake_fail_entry");
                if (f == IntPtr.Zero)
                    throw new TestFailure(path + " is not the stand-in driver (no fake_fail_entry)");
                failEntry = (FailEntryFn)Marshal.GetDelegateForFunctionPointer(f, typeof(FailEntryFn));
            }

            /// <summary>The nth next call of the entry point <paramref name="name"/> fails with <paramref name="cu"/>.</summary>
            public static void FailEntry(string name, long n, int cu)
            {
                IntPtr p;
                if (!Names.TryGetValue(name, out p))
                {
                    p = Marshal.StringToHGlobalAnsi(name);
                    Names.Add(name, p);
                }
                failEntry(p, n, cu, 0);
            }
        }

        // ---- the child side ----------------------------------------------------

        /// <summary>The child's work for the mode this test runs it in; -1 for another mode.</summary>
        public static int ServeChild(string mode, string[] extra)
        {
            Action body;
            switch (mode)
            {
                case LogMode: body = DriverLog; break;
                case NoLogMode: body = DriverLogAbsent; break;
                case HealthMode: body = Health; break;
                default: return -1;
            }
            try
            {
                Fake.Open();
                body();
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e);
                return 5;
            }
            Console.WriteLine(mode.ToUpperInvariant() + " OK");
            return 0;
        }

        private static int CountLines(string s)
        {
            return s.Count(c => c == '\n');
        }

        private static void DriverLog()
        {
            using (Device device = Device.Get(0))
            {
                Assert.Equal("", Cuda.DriverLogRead(0), "the log before any failure");

                Fake.FailEntry("cuMemAlloc", 1, CudaErrorOutOfMemory);
                CudaException e = Assert.ThrowsCuda(CudaStatus.OutOfMemory, () => device.Allocate<byte>(1024).Dispose(),
                    "an allocation whose cuMemAlloc fails");
                const string logged = "; the driver logged: stand-in: cuMemAlloc fails as told"
                    + " | Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc";
                Assert.True(e.Message.EndsWith(logged, StringComparison.Ordinal),
                    "the message ends with the driver's lines: " + e.Message);

                // The next failure carries its own lines, not the previous call's.
                using (DeviceBuffer<byte> b = device.Allocate<byte>(1024))
                {
                    Fake.FailEntry("cuMemsetD8", 1, CudaErrorInvalidValue);
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => b.Memset(0), "a memset whose cuMemsetD8 fails");
                    Assert.Contains("the driver logged: stand-in: cuMemsetD8 fails", e.Message, "the memset's message");
                    Assert.True(e.Message.IndexOf("cuMemAlloc", StringComparison.Ordinal) < 0,
                        "the message repeats an older call: " + e.Message);
                }

                string all = Cuda.DriverLogRead(0);
                Assert.Equal(4, CountLines(all), "lines kept: " + all);
                Assert.Contains("][E] stand-in: cuMemAlloc fails as told\n", all, "the kept lines");
                string last = Cuda.DriverLogRead(1);
                Assert.Equal(1, CountLines(last), "the last line: " + last);
                Assert.Contains("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemsetD8\n", last, "the last line");
                Assert.True(all.EndsWith(last, StringComparison.Ordinal), "the last line is the last of all");

                string path = Path.GetTempFileName();
                try
                {
                    Cuda.DriverLogDump(path);
                    Assert.Equal(all, File.ReadAllText(path), "the dump");
                }
                finally
                {
                    File.Delete(path);
                }

                e = Assert.ThrowsCuda(CudaStatus.IO, () => Cuda.DriverLogDump("/nonexistent-folder/log.txt"),
                    "a dump into a missing folder");
                Assert.Contains("cannot open /nonexistent-folder/log.txt", e.Message, "the dump's refusal");
                Assert.Equal("path", Assert.Throws<ArgumentNullException>(() => Cuda.DriverLogDump(null),
                    "DriverLogDump(null)").ParamName, "a null path is named");
                Assert.Equal("last", Assert.Throws<ArgumentOutOfRangeException>(() => Cuda.DriverLogRead(-1),
                    "DriverLogRead(-1)").ParamName, "a negative count is named");
            }
        }

        private static void DriverLogAbsent()
        {
            using (Device device = Device.Get(0))
            {
                CudaException e = Assert.ThrowsCuda(CudaStatus.NotSupported, () => Cuda.DriverLogRead(0),
                    "reading a log the driver does not keep");
                Assert.Contains("keeps no log; CUDA 12.9 drivers and later do", e.Message, "the refusal");
                Assert.ThrowsCuda(CudaStatus.NotSupported, () => Cuda.DriverLogDump(Path.Combine(Path.GetTempPath(), "unused")),
                    "dumping a log the driver does not keep");
                Fake.FailEntry("cuMemAlloc", 1, CudaErrorOutOfMemory);
                e = Assert.ThrowsCuda(CudaStatus.OutOfMemory, () => device.Allocate<byte>(1024).Dispose(),
                    "an allocation whose cuMemAlloc fails");
                Assert.True(e.Message.IndexOf("the driver logged", StringComparison.Ordinal) < 0,
                    "nothing is added to the message: " + e.Message);
            }
        }

        private static void Health()
        {
            using (Device device = Device.Get(0))
            {
                int told = 0, toldLater = 0, thrower = 0;
                string toldMessage = null, toldLaterMessage = null;
                int toldThread = -1;
                Health healthInside = (Health)(-1);
                Action<string> throwing = m =>
                {
                    thrower++;
                    throw new InvalidOperationException("a handler's exception stays in C#");
                };
                Action<string> counting = m =>
                {
                    told++;
                    toldMessage = m;
                    toldThread = Thread.CurrentThread.ManagedThreadId;
                    healthInside = device.Health; // cuabi may be called from here
                };
                Action<string> removed = m => Assert.True(false, "a removed handler ran");
                Cuda.ContextLost += throwing;
                Cuda.ContextLost += removed;
                Cuda.ContextLost += counting;
                Cuda.ContextLost -= removed;

                // The profiler and core-dump members reach the library: the
                // stand-in has no profiler entry points, and the core refuses
                // bad core-dump settings before the driver.
                Assert.Contains("cuProfilerStart", Assert.ThrowsCuda(CudaStatus.NotSupported, () => device.ProfilerStart(),
                    "ProfilerStart on the stand-in").Message, "the failing entry point is named");
                Assert.Contains("cuProfilerStop", Assert.ThrowsCuda(CudaStatus.NotSupported, () => device.ProfilerStop(),
                    "ProfilerStop on the stand-in").Message, "the failing entry point is named");
                Assert.Contains("flags 0x100 hold bits that are no cuabi_coredump_flag_bits", Assert.ThrowsCuda(
                    CudaStatus.InvalidArgument, () => Cuda.CoredumpSet(1, null, (CoredumpFlags)0x100), "unknown core-dump flags").Message,
                    "the core's refusal");
                Assert.Contains("path is 1100 bytes long; the driver takes at most 1023", Assert.ThrowsCuda(
                    CudaStatus.InvalidArgument, () => device.SetCoredump(1, new string('a', 1100), CoredumpFlags.Lightweight | CoredumpFlags.SkipAbort),
                    "a core-dump path too long").Message, "the core's refusal");

                Assert.Equal(global::Cuabi.Health.Usable, device.Health, "health before any fault");
                Assert.Equal("", Cuda.ContextLostMessage, "the lost message before any fault");

                Fake.FailEntry("cuCtxSynchronize", 1, CudaErrorLaunchFailed);
                CudaException e = Assert.ThrowsCuda(CudaStatus.ContextLost, () => device.Synchronize(),
                    "a synchronize whose cuCtxSynchronize fails sticky");
                Assert.Equal(global::Cuabi.Health.Lost, device.Health, "health after the fault");
                string lost = Cuda.ContextLostMessage;
                Assert.True(lost.StartsWith("cuabi_device_synchronize: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED",
                    StringComparison.Ordinal), "the lost message: " + lost);
                Assert.Equal(1, told, "the event ran its handler");
                Assert.Equal(1, thrower, "the throwing handler ran");
                Assert.Equal(lost, toldMessage, "the event's message");
                Assert.Equal(Thread.CurrentThread.ManagedThreadId, toldThread, "the event ran on the failing call's thread");
                Assert.Equal(global::Cuabi.Health.Lost, healthInside, "health inside the handler");
                Assert.Contains("cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED", e.Message, "the exception's message");

                // Later failures of the lost context: no second event, the first message kept.
                e = Assert.ThrowsCuda(CudaStatus.ContextLost, () => device.Allocate<byte>(64).Dispose(),
                    "an allocation after the fault");
                Assert.Equal(1, told, "the event ran again");
                Assert.Equal(1, thrower, "the throwing handler ran again");
                Assert.Equal(lost, Cuda.ContextLostMessage, "the lost message after a later failure");

                // A handler added after the loss: called at once, with the message.
                Cuda.ContextLost += m =>
                {
                    toldLater++;
                    toldLaterMessage = m;
                };
                Assert.Equal(1, toldLater, "a handler added after the loss ran");
                Assert.Equal(lost, toldLaterMessage, "its message");
                Cuda.ContextLost += throwing; // its exception stays here too
                Assert.Equal(2, thrower, "the throwing handler added after the loss ran");
                Cuda.ContextLost -= counting;
                Assert.Equal(1, told, "the first handler ran once in all");
            }
        }
    }
}
