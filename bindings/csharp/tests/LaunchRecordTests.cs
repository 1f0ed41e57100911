// The launches a lost context's failure names (CudaException.Launches), the
// profiler brackets and device core dumps, through the C# API.
//
// Without a GPU, against the stand-in driver of tests/fake/ (in a child
// process of its own, as HealthTests.cs: cuabi reads CUABI_DRIVER_PATH once
// per process and a lost context stays lost; skipped, saying why, without
// $CUABI_FAULT_FAKE_DRIVER). It follows tests/fault/launch_log_test.c:
// launches on two streams and the default stream (plain and through a plan,
// the plan and one stream disposed before the fault), one stream synchronized
// in between, then CUDA_ERROR_LAUNCH_FAILED injected into cuCtxSynchronize.
// The device's Synchronize throws CudaStatus.ContextLost whose Launches are
// the launches not seen complete, most recent first (kernel, grid, block,
// shared memory, stream id, number on the stream), the synchronized one
// absent; its Message names the same; a later failure of the lost context
// carries the same; another error carries none.
//
// On a GPU (tests/hardening/fault_test.cc's
// TheMessageNamesTheLaunchesNotSeenComplete, in a child process, since the
// fault loses the context for the process): fill on stream a, seen complete;
// fill on a, write_far 1 TiB past the buffer on b, fill on a; the call that
// finds the fault names write_far and the second fill, not the first; the
// child's health is Lost, the parent's stays Usable. The profiler brackets
// answer; a faulting child with core dumps on writes one where it was told
// (tests/c/gpu_coredump_test.cc), with them off none; a machine whose driver
// cannot write dumps (CudaStatus.NotSupported: libcudadebugger.so.1 absent)
// is reported as a skip with the refusal, never as a pass.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;

namespace Cuabi.Tests
{
    internal static class LaunchRecordTests
    {
        private const string StandInMode = "launch-records";
        private const string GpuFaultMode = "gpu-fault-launches";
        private const string CoredumpMode = "coredump";
        private const string CoredumpPathVariable = "CUABI_TEST_COREDUMP_PATH";
        private const string CoredumpEnableVariable = "CUABI_TEST_COREDUMP";
        private const int NoDumpsHere = 77;

        private const int CudaErrorLaunchFailed = 719; // cuda.h: sticky

        // The stand-in's modules take any text holding "__global__"; it knows
        // empty2(int, double*) (4 and 8 bytes).
        private const string StandInSource = "extern \"C\" __global__ void empty2(int a, double* b) {}";

        private const string FaultSource = @"
extern ""C"" __global__ void fill(float* x, unsigned n, float v) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
extern ""C"" __global__ void write_far(float* x, unsigned long long far) {
  x[far + threadIdx.x] = 1.0f;
}
";

        private const string PokeSource = "extern \"C\" __global__ void poke(unsigned long long a) { *(int*)a = 1; }\n";

        public static void Register()
        {
            Registry.Add("launch records: FaultedLaunch keeps its kernel and record; Launches is empty unless given",
                ExceptionValues);
            Registry.Add("launch records: a lost context's failure names the launches not seen complete, as Launches and in "
                + "its message; later failures the same, other errors none (stand-in driver, own process)",
                StandIn);

            Registry.AddGpu("launch records: an out-of-bounds write on one of two streams; the failure names it and the launch "
                + "after the one seen complete (own process; the parent's device stays usable)", GpuFault);
            Registry.AddGpu("profiler: ProfilerStart and ProfilerStop answer, twice over", Profiler);
            Registry.AddGpu("driver log: a limit the driver refuses carries the driver's explanation", RefusedLimitExplained);
            Registry.AddGpu("core dumps: a faulting child writes one where the path pattern says when they are on, none when off "
                + "(own processes)", Coredumps);
        }

        // ------------------------------------------------------------------
        // No device
        // ------------------------------------------------------------------

        private static void ExceptionValues()
        {
            var r = new LaunchRecord { Sequence = 2, StreamId = 7, GridX = 3, GridY = 1, GridZ = 1, BlockX = 64, BlockY = 1, BlockZ = 1 };
            var f = new FaultedLaunch("write_far", r);
            Assert.Equal("write_far", f.Kernel, "Kernel");
            Assert.Equal(r, f.Record, "Record");
            Assert.Contains("kernel 'write_far'", f.ToString(), "ToString");

            var plain = new CudaException(CudaStatus.InvalidArgument, "CUABI_ERROR_INVALID_ARGUMENT", "m", 0, null);
            Assert.True(plain.Launches != null && plain.Launches.Count == 0, "a plain exception has no launches");

            var given = new List<FaultedLaunch> { f, new FaultedLaunch("fill", new LaunchRecord { Sequence = 1 }) };
            var lost = new CudaException(CudaStatus.ContextLost, "CUABI_ERROR_CONTEXT_LOST", "m", 719, null, given);
            given.Clear(); // the exception keeps its own copy
            Assert.Equal(2, lost.Launches.Count, "launches given");
            Assert.Equal("write_far", lost.Launches[0].Kernel, "the first launch");
            Assert.Equal("fill", lost.Launches[1].Kernel, "the second launch");
            Assert.True(lost.Launches is System.Collections.ObjectModel.ReadOnlyCollection<FaultedLaunch>,
                "Launches is read-only: " + lost.Launches.GetType());
        }

        // ------------------------------------------------------------------
        // The stand-in driver, in a child process
        // ------------------------------------------------------------------

        private static void StandIn()
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
                { "FAKE_CUDA_NO_LOGS", null },
            };
            Child.Result r = Child.Run(StandInMode, env);
            if (r.ExitCode != 0 || !(r.Stdout ?? "").Contains(StandInMode.ToUpperInvariant() + " OK"))
                throw new TestFailure("the child failed: " + r);
        }

        private static LaunchRecord Expected(ulong sequence, ulong stream, uint grid, uint block, uint shared)
        {
            LaunchRecord r = LaunchRecord.Default();
            r.Sequence = sequence;
            r.StreamId = stream;
            r.Device = 0;
            r.GridX = grid;
            r.GridY = 1;
            r.GridZ = 1;
            r.BlockX = block;
            r.BlockY = 1;
            r.BlockZ = 1;
            r.SharedMemBytes = shared;
            return r;
        }

        /// <summary>One launch as a failure's message names it (the part the records hold).</summary>
        private static string Named(int position, FaultedLaunch l)
        {
            LaunchRecord r = l.Record;
            string stream = r.StreamId == 0 ? "the default stream" : "stream " + r.StreamId.ToString(CultureInfo.InvariantCulture);
            return string.Format(CultureInfo.InvariantCulture,
                "[{0}] kernel '{1}' grid ({2}, {3}, {4}) block ({5}, {6}, {7}) shared {8} bytes, launch {9} on {10} of device {11}",
                position, l.Kernel, r.GridX, r.GridY, r.GridZ, r.BlockX, r.BlockY, r.BlockZ, r.SharedMemBytes,
                r.Sequence, stream, r.Device);
        }

        private static void AssertSameLaunches(IReadOnlyList<FaultedLaunch> want, IReadOnlyList<FaultedLaunch> got, string what)
        {
            Assert.Equal(want.Count, got.Count, what + ": launches");
            for (int i = 0; i < want.Count; i++)
            {
                Assert.Equal(want[i].Kernel, got[i].Kernel, what + ": kernel " + i);
                Assert.Equal(want[i].Record, got[i].Record, what + ": record " + i);
            }
        }

        /// <summary>The child's work for the modes of this file; -1 for another mode.</summary>
        public static int ServeChild(string mode, string[] extra)
        {
            switch (mode)
            {
                case StandInMode:
                    try
                    {
                        HealthTests.Fake.Open();
                        StandInChild();
                    }
                    catch (Exception e)
                    {
                        Console.Error.WriteLine(e);
                        return 5;
                    }
                    Console.WriteLine(mode.ToUpperInvariant() + " OK");
                    return 0;
                case GpuFaultMode:
                    return GpuFaultChild();
                case CoredumpMode:
                    return CoredumpChild();
                default:
                    return -1;
            }
        }

        private static void StandInChild()
        {
            using (Device device = Device.Get(0))
            using (CudaModule module = device.LoadModule(StandInSource))
            using (Kernel empty2 = module.GetKernel("empty2"))
            using (CudaStream a = device.CreateStream(StreamFlags.NonBlocking))
            using (CudaStream b = device.CreateStream(StreamFlags.NonBlocking))
            {
                CudaStream gone = device.CreateStream(StreamFlags.NonBlocking);
                ulong ida = a.Id, idb = b.Id, idgone = gone.Id;
                Assert.True(ida != 0 && idb != 0 && idgone != 0 && ida != idb && idb != idgone && ida != idgone,
                    string.Format("stream ids {0} {1} {2}", ida, idb, idgone));
                object[] args = { 1, IntPtr.Zero };

                // Seen complete: a's first launch, synchronized.
                empty2.Launch(new LaunchConfig(1, 1), a, args);
                a.Synchronize();
                // Not seen: in launch order.
                empty2.Launch(new LaunchConfig(2, 32), b, args);                 // oldest
                empty2.Launch(new LaunchConfig(3, 64, 128), gone, args);
                gone.Dispose(); // its launch is kept
                using (LaunchPlan plan = empty2.Prepare(5, 96, b))
                {
                    plan.SetArguments(args);
                    plan.Launch();                                               // b's second
                } // its launch is kept
                empty2.Launch(new LaunchConfig(7, 128), null, args);             // the default stream
                empty2.Launch(new LaunchConfig(11, 256, 64), a, args);           // newest

                HealthTests.Fake.FailEntry("cuCtxSynchronize", 1, CudaErrorLaunchFailed);
                CudaException e = Assert.ThrowsCuda(CudaStatus.ContextLost, () => device.Synchronize(),
                    "a synchronize whose cuCtxSynchronize fails sticky");
                string expect = string.Format(CultureInfo.InvariantCulture,
                    "; launches not seen complete, most recent first: "
                    + "[1] kernel 'empty2' grid (11, 1, 1) block (256, 1, 1) shared 64 bytes, launch 2 on stream {0} of device 0; "
                    + "[2] kernel 'empty2' grid (7, 1, 1) block (128, 1, 1) shared 0 bytes, launch 1 on the default stream of device 0; "
                    + "[3] kernel 'empty2' grid (5, 1, 1) block (96, 1, 1) shared 0 bytes, launch 2 on stream {1} of device 0; "
                    + "[4] kernel 'empty2' grid (3, 1, 1) block (64, 1, 1) shared 128 bytes, launch 1 on stream {2} of device 0; "
                    + "[5] kernel 'empty2' grid (2, 1, 1) block (32, 1, 1) shared 0 bytes, launch 1 on stream {1} of device 0; "
                    + "the driver's log names none of these kernels; the driver now fails",
                    ida, idb, idgone);
                Assert.Contains(expect, e.Message, "the message");
                Assert.True(e.Message.IndexOf("grid (1, 1, 1)", StringComparison.Ordinal) < 0,
                    "a launch seen complete is named: " + e.Message);

                // The same as data, most recent first.
                var want = new[]
                {
                    Expected(2, ida, 11, 256, 64),
                    Expected(1, 0, 7, 128, 0),
                    Expected(2, idb, 5, 96, 0),
                    Expected(1, idgone, 3, 64, 128),
                    Expected(1, idb, 2, 32, 0),
                };
                Assert.Equal(want.Length, e.Launches.Count, "launches: " + string.Join("; ", e.Launches));
                int at = 0;
                for (int i = 0; i < want.Length; i++)
                {
                    FaultedLaunch l = e.Launches[i];
                    Assert.Equal("empty2", l.Kernel, "kernel " + i);
                    Assert.Equal(want[i], l.Record, "record " + i);
                    Assert.Equal(0u, l.Record.NamedByDriverLog, "record " + i + " named by the driver's log");
                    // The message names the same launches, in the same order.
                    string named = Named(i + 1, l);
                    int found = e.Message.IndexOf(named, at, StringComparison.Ordinal);
                    Assert.True(found >= 0, "the message does not name launch " + i + " (" + named + ") after the ones before: " + e.Message);
                    at = found + named.Length;
                }

                // A later failure of the lost context names the same launches.
                CudaException later = Assert.ThrowsCuda(CudaStatus.ContextLost, () => empty2.Launch(new LaunchConfig(1, 1), a, args),
                    "a launch after the fault");
                Assert.Contains("[5] kernel 'empty2' grid (2, 1, 1)", later.Message, "a later failure's message");
                AssertSameLaunches(e.Launches, later.Launches, "a later failure");

                // Another error carries none.
                CudaException other = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => Cuda.CoredumpSet(1, null, (CoredumpFlags)0x100), "unknown core-dump flags after the fault");
                Assert.Equal(0, other.Launches.Count, "the launches of an INVALID_ARGUMENT failure");
                Assert.True(other.Message.IndexOf("launches not seen complete", StringComparison.Ordinal) < 0,
                    "an INVALID_ARGUMENT failure's message names launches: " + other.Message);

                // And the lost context's next failure names them again.
                CudaException again = Assert.ThrowsCuda(CudaStatus.ContextLost, () => device.Synchronize(),
                    "a synchronize after the other error");
                AssertSameLaunches(e.Launches, again.Launches, "the failure after the other error");
            }
        }

        // ------------------------------------------------------------------
        // A GPU fault, in a child process
        // ------------------------------------------------------------------

        private static string OneLine(string s)
        {
            return (s ?? "").Replace("\r", "\\r").Replace("\n", "\\n");
        }

        private static int GpuFaultChild()
        {
            try
            {
                using (Device device = Device.Get(0))
                using (CudaModule module = device.Compile(FaultSource))
                using (Kernel fill = module.GetKernel("fill"))
                using (Kernel writeFar = module.GetKernel("write_far"))
                using (DeviceBuffer<float> x = device.Allocate<float>(1 << 18))
                using (CudaStream a = device.CreateStream(StreamFlags.NonBlocking))
                using (CudaStream b = device.CreateStream(StreamFlags.NonBlocking))
                {
                    Console.WriteLine("STREAMS " + a.Id.ToString(CultureInfo.InvariantCulture) + " "
                        + b.Id.ToString(CultureInfo.InvariantCulture));
                    uint n = 1u << 18;
                    float v = 1.0f;
                    ulong far = 1UL << 38; // 1 TiB past the buffer, in floats
                    fill.Launch(4, 128, a, x, n, v);
                    a.Synchronize();
                    fill.Launch(8, 256, a, x, n, v);
                    writeFar.Launch(3, 64, b, x, far);
                    string seenBy = "the third launch";
                    CudaException e = null;
                    try
                    {
                        fill.Launch(16, 32, a, x, n, v);
                        seenBy = "the device's Synchronize";
                        device.Synchronize();
                    }
                    catch (CudaException caught)
                    {
                        e = caught;
                    }
                    if (e == null)
                    {
                        Console.WriteLine("NO-FAULT the write 1 TiB past the buffer was not reported");
                        return 1;
                    }
                    Console.WriteLine("SEEN-BY " + seenBy);
                    Console.WriteLine("STATUS " + e.StatusName);
                    Console.WriteLine("MESSAGE " + OneLine(e.Message));
                    foreach (FaultedLaunch l in e.Launches)
                    {
                        LaunchRecord r = l.Record;
                        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                            "LAUNCH {0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10} {11}",
                            l.Kernel, r.Sequence, r.StreamId, r.Device, r.GridX, r.GridY, r.GridZ,
                            r.BlockX, r.BlockY, r.BlockZ, r.SharedMemBytes, r.NamedByDriverLog));
                    }
                    Console.WriteLine("HEALTH " + device.Health);
                }
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e);
                return 5;
            }
            return 0;
        }

        private sealed class PrintedLaunch
        {
            public string Kernel;
            public ulong[] Fields; // sequence, stream, device, grid xyz, block xyz, shared, named by the log
        }

        private static void GpuFault()
        {
            Child.Result r = Child.Run(GpuFaultMode, new Dictionary<string, string>());
            if (r.ExitCode != 0)
                throw new TestFailure("the faulting child failed: " + r);
            string message = null, seenBy = null, status = null, health = null;
            ulong ida = 0, idb = 0;
            var launches = new List<PrintedLaunch>();
            foreach (string line in (r.Stdout ?? "").Split('\n'))
            {
                string l = line.TrimEnd('\r');
                if (l.StartsWith("MESSAGE ", StringComparison.Ordinal))
                    message = l.Substring(8);
                else if (l.StartsWith("SEEN-BY ", StringComparison.Ordinal))
                    seenBy = l.Substring(8);
                else if (l.StartsWith("STATUS ", StringComparison.Ordinal))
                    status = l.Substring(7);
                else if (l.StartsWith("HEALTH ", StringComparison.Ordinal))
                    health = l.Substring(7);
                else if (l.StartsWith("STREAMS ", StringComparison.Ordinal))
                {
                    string[] ids = l.Substring(8).Split(' ');
                    ida = ulong.Parse(ids[0], CultureInfo.InvariantCulture);
                    idb = ulong.Parse(ids[1], CultureInfo.InvariantCulture);
                }
                else if (l.StartsWith("LAUNCH ", StringComparison.Ordinal))
                {
                    string[] parts = l.Substring(7).Split(' ');
                    launches.Add(new PrintedLaunch
                    {
                        Kernel = parts[0],
                        Fields = parts.Skip(1).Select(p => ulong.Parse(p, CultureInfo.InvariantCulture)).ToArray(),
                    });
                }
            }
            Assert.Equal("CUABI_ERROR_CONTEXT_LOST", status, "the fault's status (" + seenBy + "): " + message);
            Assert.True(message != null && ida != 0 && idb != 0, "the child printed no message or stream ids: " + r);
            Console.WriteLine("  the fault, as " + seenBy + " reported it:\n    " + message);

            string bad = "kernel 'write_far' grid (3, 1, 1) block (64, 1, 1) shared 0 bytes, launch 1 on stream "
                + idb.ToString(CultureInfo.InvariantCulture) + " of device 0";
            Assert.Contains(bad, message, "the message names the out-of-bounds launch");
            Assert.Contains("kernel 'fill' grid (8, 1, 1) block (256, 1, 1) shared 0 bytes, launch 2 on stream "
                + ida.ToString(CultureInfo.InvariantCulture), message, "the message names the launch after the one seen complete");
            Assert.True(message.IndexOf("grid (4, 1, 1)", StringComparison.Ordinal) < 0,
                "the launch seen complete is named: " + message);
            bool logged = message.Contains("; the driver logged: ");
            Assert.True(logged || message.Contains("the driver logged nothing during the failing call"),
                "the message says neither what the driver logged nor that it logged nothing: " + message);
            Console.WriteLine("  the driver's log during that call: " + (logged ? "lines carried in the message" : "none"));

            // As data: most recent first; the third launch only where it ran.
            bool thirdRan = seenBy == "the device's Synchronize";
            Assert.Equal(thirdRan ? 3 : 2, launches.Count, "Launches (" + seenBy + ")");
            int w = thirdRan ? 1 : 0;
            PrintedLaunch far = launches[w], fill = launches[w + 1];
            Assert.Equal("write_far", far.Kernel, "Launches[" + w + "].Kernel");
            Assert.Equal(1UL, far.Fields[0], "write_far's Sequence");
            Assert.Equal(idb, far.Fields[1], "write_far's StreamId");
            Assert.Equal(0UL, far.Fields[2], "write_far's Device");
            Assert.Equal(3UL, far.Fields[3], "write_far's GridX");
            Assert.Equal(1UL, far.Fields[4], "write_far's GridY");
            Assert.Equal(1UL, far.Fields[5], "write_far's GridZ");
            Assert.Equal(64UL, far.Fields[6], "write_far's BlockX");
            Assert.Equal(1UL, far.Fields[7], "write_far's BlockY");
            Assert.Equal(1UL, far.Fields[8], "write_far's BlockZ");
            Assert.Equal(0UL, far.Fields[9], "write_far's SharedMemBytes");
            Assert.Equal("fill", fill.Kernel, "Launches[" + (w + 1) + "].Kernel");
            Assert.Equal(2UL, fill.Fields[0], "the second fill's Sequence");
            Assert.Equal(ida, fill.Fields[1], "the second fill's StreamId");
            Assert.Equal(8UL, fill.Fields[3], "the second fill's GridX");
            Assert.Equal(256UL, fill.Fields[6], "the second fill's BlockX");
            if (thirdRan)
            {
                Assert.Equal("fill", launches[0].Kernel, "Launches[0].Kernel");
                Assert.Equal(3UL, launches[0].Fields[0], "the third fill's Sequence");
                Assert.Equal(16UL, launches[0].Fields[3], "the third fill's GridX");
            }

            Assert.Equal("Lost", health, "the child's device health after the fault");
            using (Device device = Device.Get(0))
                Assert.Equal(Health.Usable, device.Health, "this process's device health");
        }

        // ------------------------------------------------------------------
        // The profiler
        // ------------------------------------------------------------------

        // A stack size the driver refuses for a reason the core does not check
        // first: the message ends with the lines the driver logged during the
        // call, and DriverLogRead(1) keeps the last of them.
        private static void RefusedLimitExplained()
        {
            if (Cuda.DriverVersion < 12090)
            {
                Console.WriteLine("  the driver keeps no log before CUDA 12.9: nothing to check");
                return;
            }
            using (Device device = Device.Get(0))
            {
                CudaException e = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => device.SetLimit(Limit.StackSize, 1L << 40), "a 1 TiB stack");
                Assert.Contains("; the driver logged: ", e.Message, "the message");
                Assert.Contains("from cuCtxSetLimit", e.Message, "the message");
                string last = Cuda.DriverLogRead(1);
                Assert.Contains("][E] Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuCtxSetLimit", last, "the last line kept");
            }
        }

        private static void Profiler()
        {
            using (Device device = Device.Get(0))
            {
                for (int i = 0; i < 2; i++)
                {
                    device.ProfilerStart();
                    device.ProfilerStop();
                }
                Assert.Equal(Health.Usable, device.Health, "health after the profiler brackets");
            }
        }

        // ------------------------------------------------------------------
        // Core dumps, in child processes
        // ------------------------------------------------------------------

        // Sets core dumps for the contexts to come (on or off, lightweight, no
        // abort) to the path pattern in $CUABI_TEST_COREDUMP_PATH, then writes
        // to address 0x10 from a kernel. Exits 77 when the library answered
        // NotSupported (printing the refusal), 0 when the fault was reported as
        // ContextLost or, with dumps on, whatever the driver answered.
        private static int CoredumpChild()
        {
            bool on = Environment.GetEnvironmentVariable(CoredumpEnableVariable) == "on";
            string path = Environment.GetEnvironmentVariable(CoredumpPathVariable);
            try
            {
                try
                {
                    Cuda.CoredumpSet(on ? 1 : 0, path, CoredumpFlags.Lightweight | CoredumpFlags.SkipAbort);
                }
                catch (CudaException e)
                {
                    if (e.Status != CudaStatus.NotSupported)
                        throw;
                    Console.WriteLine("REFUSED " + OneLine(e.Message));
                    return NoDumpsHere;
                }
                Console.WriteLine("PID " + System.Diagnostics.Process.GetCurrentProcess().Id.ToString(CultureInfo.InvariantCulture));
                using (Device device = Device.Get(0))
                using (CudaModule module = device.Compile(PokeSource))
                using (Kernel poke = module.GetKernel("poke"))
                {
                    CudaException fault = null;
                    try
                    {
                        poke.Launch(1, 1, null, 0x10UL);
                        device.Synchronize();
                    }
                    catch (CudaException e)
                    {
                        fault = e;
                    }
                    // With dumps on, the driver may hand the exception to the dump and
                    // answer as it pleases; the parent judges by the dump file.
                    Console.WriteLine("FAULT (" + (on ? "on" : "off") + ") "
                        + (fault == null ? "CUABI_SUCCESS" : fault.StatusName + ": " + OneLine(fault.Message)));
                    if (!on && (fault == null || fault.Status != CudaStatus.ContextLost))
                        return 1;
                }
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e);
                return 5;
            }
            return 0;
        }

        private static Child.Result RunCoredumpChild(bool on, string pattern)
        {
            // With dumps on, a driver that cannot write them may report no
            // fault and then never let the process end: killed after 30 s.
            return Child.RunWithin(on ? 30 : Child.ChildSeconds, CoredumpMode, new Dictionary<string, string>
            {
                { CoredumpEnableVariable, on ? "on" : "off" },
                { CoredumpPathVariable, pattern },
                // The driver's variables take precedence over the call: none here.
                { "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", null },
                { "CUDA_COREDUMP_FILE", null },
                { "CUDA_COREDUMP_GENERATION_FLAGS", null },
            });
        }

        private static string Line(Child.Result r, string prefix)
        {
            foreach (string line in (r.Stdout ?? "").Split('\n'))
                if (line.StartsWith(prefix, StringComparison.Ordinal))
                    return line.Substring(prefix.Length).TrimEnd('\r');
            return null;
        }

        private static void Coredumps()
        {
            string dir = Path.Combine(Path.GetTempPath(), "cuabi-cs-coredump-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                // %p: the driver puts the process id there.
                Child.Result off = RunCoredumpChild(false, Path.Combine(dir, "off.%p.core"));
                Assert.Equal(0, off.ExitCode, "the child with dumps off: " + off);
                Assert.Equal(0, Directory.GetFiles(dir, "off.*").Length,
                    "a dump was written with dumps off: " + string.Join(", ", Directory.GetFiles(dir)));

                Child.Result on = RunCoredumpChild(true, Path.Combine(dir, "on.%p.core"));
                if (on.ExitCode == NoDumpsHere && !on.Killed)
                    throw new SkipException("this machine cannot write device core dumps: Cuda.CoredumpSet answered "
                        + "CUABI_ERROR_NOT_SUPPORTED: " + Line(on, "REFUSED "), true);
                string[] dumps = Directory.GetFiles(dir, "on.*");
                if (dumps.Length == 0)
                    throw new SkipException("the driver wrote no device core dump in " + dir
                        + " (dumps on, lightweight, no abort; the child "
                        + (on.Killed ? "did not exit in 30 s" : "exited " + on.ExitCode) + "; "
                        + Line(on, "FAULT ") + ")", true);
                Assert.True(!on.Killed, "the child with dumps on wrote a dump but did not exit: " + on);
                Assert.Equal(0, on.ExitCode, "the child with dumps on: " + on);
                var info = new FileInfo(dumps[0]);
                Assert.True(info.Length > 0, "the dump " + info.FullName + " is empty");
                string pid = Line(on, "PID ");
                Console.WriteLine("  device core dump: " + info.Name + ", " + info.Length + " bytes"
                    + (pid != null && info.Name == "on." + pid + ".core" ? " (%p: the child's process id)" : ""));
            }
            finally
            {
                try
                {
                    Directory.Delete(dir, true);
                }
                catch (IOException)
                {
                }
            }
        }
    }
}
