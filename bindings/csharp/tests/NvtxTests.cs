// NVTX ranges and marks through the C# API, no GPU: the scope class
// NvtxRange (generated from the header's @scope), Cuda.NvtxRangePush/Pop,
// NvtxRangeStart/End and NvtxMark, recorded by the test NVTX tool
// tests/nvtx/record_nvtx.c (CMake target cuabi_record_nvtx; its header
// comment gives the line format). NVTX reads NVTX_INJECTION64_PATH once, at
// the process's first annotation, so the annotations are made in a child
// process started with NVTX_INJECTION64_PATH = $CUABI_TEST_NVTX_TOOL and
// CUABI_NVTX_RECORD = a file the parent then reads. Without
// CUABI_TEST_NVTX_TOOL (set by run-tests.sh when the tool is next to the
// library, and by the CTest entry) the test FAILS, saying so. A second child
// makes the same calls with no tool attached: the same refusals, nothing
// written.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;

namespace Cuabi.Tests
{
    internal static class NvtxTests
    {
        private const string ChildMode = "nvtx";

        // What the tool records for Annotate(), in order.
        private static readonly string[] Expected =
        {
            "push - - outer",
            "create cuabi.cs",
            "push cuabi.cs ff0000ff inner",
            "mark cuabi.cs - inside",
            "pop cuabi.cs",                     // Dispose on the exception's way out
            "push cuabi.cs 80102030 early",
            "pop cuabi.cs",                     // Close(), early; then nothing more
            "start - - started",
            "end -",
            "create cuabi.cs.other",
            "start cuabi.cs.other - across",
            "end cuabi.cs.other",               // ended on another thread
            "mark - ff00ff00 tick",
            "pop -",                            // the outer using
            "create cuabi.cs.a",
            "push cuabi.cs.a - a1",
            "create cuabi.cs.b",
            "push cuabi.cs.b - b1",
            "push cuabi.cs.a - a2",
            "pop cuabi.cs.a",                   // nested usings close innermost first
            "pop cuabi.cs.b",
            "pop cuabi.cs.a",
            "push cuabi.cs - popped",
            "pop cuabi.cs",                     // popped behind the scope's back
            "push - - swallowed",
            "pop -",                            // idem; Dispose then ignores the refusal
        };

        public static void Register()
        {
            Registry.Add("nvtx: NvtxRange scopes, marks, start/end and refusals, recorded by the test tool (own process)", Recorded);
            Registry.Add("nvtx: the same annotations and refusals with no tool attached (own process)", NoTool);
        }

        private static string Tool()
        {
            string tool = Environment.GetEnvironmentVariable("CUABI_TEST_NVTX_TOOL");
            if (string.IsNullOrEmpty(tool))
                throw new TestFailure("CUABI_TEST_NVTX_TOOL is not set: it must name the test NVTX tool "
                    + "libcuabi_record_nvtx.so (CMake target cuabi_record_nvtx, built into "
                    + "<build>/tests/nvtx/; run-tests.sh sets it when the tool is there)");
            if (!File.Exists(tool))
                throw new TestFailure("CUABI_TEST_NVTX_TOOL names " + tool + ", which does not exist "
                    + "(build the CMake target cuabi_record_nvtx)");
            return tool;
        }

        private static void Recorded()
        {
            string tool = Tool();
            string record = Path.Combine(Path.GetTempPath(), "cuabi-cs-nvtx-" + Guid.NewGuid().ToString("N") + ".txt");
            try
            {
                var env = new Dictionary<string, string>
                {
                    { "NVTX_INJECTION64_PATH", tool },
                    { "CUABI_NVTX_RECORD", record },
                };
                Child.Result r = Child.Run(ChildMode, env);
                if (r.ExitCode != 0 || !(r.Stdout ?? "").Contains("NVTX OK"))
                    throw new TestFailure("the child failed: " + r);
                if (!File.Exists(record))
                    throw new TestFailure("the tool wrote no " + record + " (was NVTX_INJECTION64_PATH honoured?)");
                string[] got = File.ReadAllLines(record);
                var problems = new List<string>();
                for (int i = 0; i < Math.Max(got.Length, Expected.Length); i++)
                {
                    string g = i < got.Length ? got[i] : "(nothing)";
                    string w = i < Expected.Length ? Expected[i] : "(nothing)";
                    if (g != w)
                        problems.Add("line " + (i + 1) + ": '" + g + "', want '" + w + "'");
                }
                if (problems.Count > 0)
                    throw new TestFailure("the tool recorded " + got.Length + " lines, want " + Expected.Length + ":\n"
                        + string.Join("\n", problems) + "\nrecorded:\n" + string.Join("\n", got));
            }
            finally
            {
                File.Delete(record);
            }
        }

        private static void NoTool()
        {
            string record = Path.Combine(Path.GetTempPath(), "cuabi-cs-nvtx-" + Guid.NewGuid().ToString("N") + ".txt");
            var env = new Dictionary<string, string>
            {
                { "NVTX_INJECTION64_PATH", null },
                { "CUABI_NVTX_RECORD", record },
            };
            Child.Result r = Child.Run(ChildMode, env);
            bool wrote = File.Exists(record);
            File.Delete(record);
            if (r.ExitCode != 0 || !(r.Stdout ?? "").Contains("NVTX OK"))
                throw new TestFailure("the child failed: " + r);
            Assert.True(!wrote, "something wrote " + record + " with no tool attached");
        }

        // ---- the child side ----------------------------------------------------

        /// <summary>The child's work for the mode this test runs it in; -1 for another mode.</summary>
        public static int ServeChild(string mode, string[] extra)
        {
            if (mode != ChildMode)
                return -1;
            try
            {
                Annotate();
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e);
                return 5;
            }
            Console.WriteLine("NVTX OK");
            return 0;
        }

        private static void Refused(Action action, string needle, string what)
        {
            CudaException e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, action, what);
            Assert.Contains(needle, e.Message, what + ": the core's message");
        }

        private static void Annotate()
        {
            using (new NvtxRange(null, "outer", 0))
            {
                try
                {
                    using (new NvtxRange("cuabi.cs", "inner", 0xFF0000FFu))
                    {
                        Cuda.NvtxMark("cuabi.cs", "inside", 0);
                        throw new InvalidOperationException("leaves the scope");
                    }
                }
                catch (InvalidOperationException)
                {
                }

                var early = new NvtxRange("cuabi.cs", "early", 0x80102030u);
                early.Close();
                early.Close();   // closed already: nothing
                early.Dispose(); // idem

                ulong id = Cuda.NvtxRangeStart(null, "started", 0);
                Assert.True(id != 0, "a started range's id is not 0");
                Cuda.NvtxRangeEnd(id);
                Refused(() => Cuda.NvtxRangeEnd(id),
                    "range " + id + " is not open (not started by cuabi_nvtx_range_start, or ended already)",
                    "ending a range twice");
                Refused(() => Cuda.NvtxRangeEnd(0), "range 0 is not open", "ending range 0");

                // A started range ends on any thread; pushed ranges are the thread's own.
                ulong across = Cuda.NvtxRangeStart("cuabi.cs.other", "across", 0);
                Exception fromThread = null;
                CudaException popThere = null;
                var t = new Thread(() =>
                {
                    try
                    {
                        popThere = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => Cuda.NvtxRangePop(null),
                            "a pop on a thread with no open range");
                        Cuda.NvtxRangeEnd(across);
                    }
                    catch (Exception e)
                    {
                        fromThread = e;
                    }
                });
                t.Start();
                t.Join();
                if (fromThread != null)
                    throw fromThread;
                Assert.Contains("no range of NVTX's default domain is open on this thread", popThere.Message,
                    "the other thread's pop");

                Cuda.NvtxMark(null, "tick", 0xFF00FF00u);
            }

            // Domains: a pop closes the innermost range of its own domain.
            using (new NvtxRange("cuabi.cs.a", "a1", 0))
            using (new NvtxRange("cuabi.cs.b", "b1", 0))
            using (new NvtxRange("cuabi.cs.a", "a2", 0))
            {
            }

            // Refusals, as exceptions carrying the core's message.
            Refused(() => Cuda.NvtxRangePop("cuabi.cs"),
                "no range of domain 'cuabi.cs' is open on this thread (cuabi_nvtx_range_push opens one)",
                "a pop with none open");
            Refused(() => Cuda.NvtxRangePop(null), "no range of NVTX's default domain is open on this thread",
                "a pop of the default domain with none open");
            Refused(() => new NvtxRange("", "x", 0).Dispose(),
                "domain is an empty name; NULL names NVTX's default domain", "a scope of an empty domain");
            Refused(() => Cuda.NvtxMark("", "x", 0), "domain is an empty name", "a mark of an empty domain");
            Refused(() => Cuda.NvtxRangeStart("", "x", 0), "domain is an empty name", "a start of an empty domain");
            Assert.Equal("message", Assert.Throws<ArgumentNullException>(() => new NvtxRange(null, null, 0).Dispose(),
                "a scope without a message").ParamName, "a null message is named");
            Assert.Equal("message", Assert.Throws<ArgumentNullException>(() => Cuda.NvtxMark(null, null, 0),
                "a mark without a message").ParamName, "a null message is named");
            Assert.Equal("domain", Assert.Throws<ArgumentException>(() => new NvtxRange("a\0b", "x", 0).Dispose(),
                "a domain with a NUL").ParamName, "a domain with a NUL is named");

            // A range popped behind the scope's back: Close() reports the
            // refusal, and the scope is closed all the same.
            var scope = new NvtxRange("cuabi.cs", "popped", 0);
            Cuda.NvtxRangePop("cuabi.cs");
            Refused(() => scope.Close(), "no range of domain 'cuabi.cs' is open on this thread", "Close() of a popped scope");
            scope.Dispose(); // closed already: nothing
            Refused(() => Cuda.NvtxRangePop("cuabi.cs"), "no range of domain 'cuabi.cs'", "nothing left open");

            // Dispose() never throws: the same refusal is ignored.
            var swallowed = new NvtxRange(null, "swallowed", 0);
            Cuda.NvtxRangePop(null);
            swallowed.Dispose();
        }
    }
}
