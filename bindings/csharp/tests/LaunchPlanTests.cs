// Prepared launches (LaunchPlan) and the launch path of Kernel: the typed
// setters and their checks without a device (over a block of host memory),
// then, with a device, SAXPY through a plan, relaunches with changed
// arguments, lifetimes, finalizers, and Kernel.Launch across configurations,
// streams and threads.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class LaunchPlanTests
    {
        public static void Register()
        {
            Registry.Add("plan: typed setters write each argument at its parameter's offset", SettersWriteAtOffsets);
            Registry.Add("plan: a setter type not accepted before goes to the library; nothing is written when refused", SetterChecks);
            Registry.Add("plan: SetArguments checks every argument before writing any", SetArgumentsAllOrNothing);
            Registry.Add("plan: a disposed plan refuses setters and launches; a NULL plan handle gives InvalidHandle", DisposedAndNullPlans);
            Registry.Add("plan: the C API refuses NULL and made-up plan handles", PlanHandlesInTheCApi);

            Registry.AddGpu("plan: SAXPY through a plan matches the host; relaunches see changed arguments", PlanSaxpy);
            Registry.AddGpu("plan: a 4-byte n for size_t is refused naming the parameter; the plan still launches", PlanSizeMismatch);
            Registry.AddGpu("plan: Kernel.Prepare refuses a bad configuration", PlanBadConfig);
            Registry.AddGpu("plan: outlives its kernel, module, stream and device objects", PlanOutlivesItsObjects);
            Registry.AddGpu("plan: keeps its buffers from the collector; a disposed buffer is refused at launch", PlanBufferLifetimes);
            Registry.AddGpu("plan: the finalizer releases an abandoned plan", PlanFinalizer);
            Registry.AddGpu("launch: alternating configurations and streams each launch with their own arguments", LaunchAcrossConfigurations);
            Registry.AddGpu("launch: repeated configurations are prepared once and reused; many in turn make no plans", PreparedLaunchReuse);
            Registry.AddGpu("launch: Kernel.Launch with an object[] made once, and plan setters and launches, allocate nothing", NoAllocationPerLaunch);
            Registry.AddGpu("launch: threads sharing a kernel, configuration and stream each launch with their own arguments", LaunchFromThreads);
            Registry.AddGpu("launch: a disposed stream or kernel is refused after prepared launches were made", LaunchAfterDispose);
        }

        private static readonly KernelParameter[] SaxpyLayout =
        {
            new KernelParameter(0, 0, 4), new KernelParameter(1, 8, 8), new KernelParameter(2, 16, 8),
            new KernelParameter(3, 24, 8), new KernelParameter(4, 32, 8),
        };

        private static readonly Type[] SaxpyTypes = { typeof(float), typeof(IntPtr), typeof(IntPtr), typeof(IntPtr), typeof(ulong) };

        /// <summary>
        /// A plan over <paramref name="size"/> bytes of host memory filled with
        /// 0xEE, given to <paramref name="body"/>. Its function is NULL: the
        /// <paramref name="accepted"/> types are taken as accepted for the
        /// parameters, as if the library had checked them; any other goes to the
        /// library, which refuses the NULL function.
        /// </summary>
        private static void WithHostPlan(KernelParameter[] layout, int size, Type[] accepted, Action<LaunchPlan, IntPtr> body)
        {
            IntPtr block = Marshal.AllocHGlobal(size);
            try
            {
                for (int i = 0; i < size; i++)
                    Marshal.WriteByte(block, i, 0xEE);
                using (LaunchPlan plan = LaunchPlan.OverBlock(layout, size, block, "saxpy"))
                {
                    for (int i = 0; i < accepted.Length; i++)
                        plan.Layout.Accepted[i] = ArgumentWriter.For(accepted[i]);
                    body(plan, block);
                }
            }
            finally
            {
                Marshal.FreeHGlobal(block);
            }
        }

        private static byte[] Bytes(IntPtr block, int size)
        {
            var b = new byte[size];
            Marshal.Copy(block, b, 0, size);
            return b;
        }

        private static void SettersWriteAtOffsets()
        {
            var types = new[] { typeof(float), typeof(IntPtr), typeof(ulong), typeof(long), typeof(ulong) };
            WithHostPlan(SaxpyLayout, 40, types, (plan, block) =>
            {
                Assert.Equal(5, plan.Parameters.Count, "Parameters");
                Assert.Equal(40, plan.ArgumentBlockSize, "ArgumentBlockSize");
                Assert.Equal("saxpy", plan.KernelName, "KernelName");
                plan.Set(0, 2.5f);
                plan.Set(1, new IntPtr(0x1000));
                plan.Set<ulong>(2, 0x2000);
                plan.Set(3, -2L);
                plan.Set(4, (ulong)16777216);
                byte[] b = Bytes(block, 40);
                Assert.Equal(2.5f, BitConverter.ToSingle(b, 0), "a at 0");
                Assert.Equal(unchecked((int)0xEEEEEEEE), BitConverter.ToInt32(b, 4), "padding after a untouched");
                Assert.Equal(0x1000L, BitConverter.ToInt64(b, 8), "x at 8");
                Assert.Equal(0x2000L, BitConverter.ToInt64(b, 16), "y at 16");
                Assert.Equal(-2L, BitConverter.ToInt64(b, 24), "out at 24");
                Assert.Equal(16777216UL, BitConverter.ToUInt64(b, 32), "n at 32");

                // A setter changes its argument only.
                plan.Set(0, -1.0f);
                byte[] after = Bytes(block, 40);
                Assert.Equal(-1.0f, BitConverter.ToSingle(after, 0), "a rewritten");
                Assert.True(after.Skip(4).SequenceEqual(b.Skip(4)), "other arguments changed by Set(0, ...)");
            });

            var mixed = new[]
            {
                new KernelParameter(0, 0, 1), new KernelParameter(1, 2, 2), new KernelParameter(2, 4, 4),
                new KernelParameter(3, 8, 16), new KernelParameter(4, 24, 1), new KernelParameter(5, 26, 2),
                new KernelParameter(6, 32, 8), new KernelParameter(7, 40, 4), new KernelParameter(8, 44, 1),
                new KernelParameter(9, 46, 2), new KernelParameter(10, 48, 8),
            };
            var mixedTypes = new[]
            {
                typeof(byte), typeof(short), typeof(StreamFlags), typeof(NoGpuTests.Affine), typeof(bool), typeof(char),
                typeof(double), typeof(uint), typeof(sbyte), typeof(ushort), typeof(UIntPtr),
            };
            WithHostPlan(mixed, 56, mixedTypes, (plan, block) =>
            {
                plan.Set(0, (byte)7);
                plan.Set(1, (short)-3);
                plan.Set(2, StreamFlags.NonBlocking);
                plan.Set(3, new NoGpuTests.Affine { Scale = 1.5f, Offset = -9, Bias = 0.25 });
                plan.Set(4, true);
                plan.Set(5, 'Z');
                plan.Set(6, 3.5);
                plan.Set(7, 9u);
                plan.Set(8, (sbyte)-5);
                plan.Set(9, (ushort)60000);
                plan.Set(10, new UIntPtr(0xABCDEF));
                byte[] b = Bytes(block, 56);
                Assert.Equal((byte)7, b[0], "byte");
                Assert.Equal((short)-3, BitConverter.ToInt16(b, 2), "short");
                Assert.Equal(1u, BitConverter.ToUInt32(b, 4), "enum as its underlying uint");
                Assert.Equal(1.5f, BitConverter.ToSingle(b, 8), "struct.Scale");
                Assert.Equal(-9, BitConverter.ToInt32(b, 12), "struct.Offset");
                Assert.Equal(0.25, BitConverter.ToDouble(b, 16), "struct.Bias");
                Assert.Equal((byte)1, b[24], "bool as one byte");
                Assert.Equal('Z', BitConverter.ToChar(b, 26), "char as two bytes");
                Assert.Equal(3.5, BitConverter.ToDouble(b, 32), "double");
                Assert.Equal(9u, BitConverter.ToUInt32(b, 40), "uint");
                Assert.Equal((byte)0xFB, b[44], "sbyte");
                Assert.Equal((ushort)60000, BitConverter.ToUInt16(b, 46), "ushort");
                Assert.Equal(0xABCDEFUL, BitConverter.ToUInt64(b, 48), "UIntPtr");
                plan.Set(4, false);
                Assert.Equal((byte)0, Marshal.ReadByte(block, 24), "false as zero");
            });
        }

        private static void SetterChecks()
        {
            WithHostPlan(SaxpyLayout, 40, SaxpyTypes, (plan, block) =>
            {
                plan.SetArguments(2.0f, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, 100UL);
                byte[] before = Bytes(block, 40);

                // Another type goes to cuabi_function_check_arg_size, here refused for the NULL function.
                var c = Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => plan.Set(4, (uint)100), "a uint where a ulong was accepted");
                Assert.Contains("cuabi_function_check_arg_size", c.Message, "the library checked it");
                Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => plan.Set(0, 2.0), "a double where a float was accepted");
                Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => plan.Set(5, 1UL), "index past the last parameter");
                Assert.True(plan.Layout.Accepted[4].Type == typeof(ulong), "a refused type was kept");

                // What only the binding can see.
                var e = Assert.Throws<ArgumentException>(() => plan.Set(1, new NoGpuTests.WithReference { Text = "x" }),
                    "a struct holding a reference");
                Assert.Contains("WithReference", e.Message, "message names the struct");
                Assert.Contains("cannot be passed", e.Message, "message says why");
                Assert.Equal("value", e.ParamName, "ParamName");
                var r = Assert.Throws<ArgumentOutOfRangeException>(() => plan.Set(-1, 1.0f), "a negative index");
                Assert.Equal("index", r.ParamName, "ParamName");
                Assert.Throws<ArgumentNullException>(() => plan.Set(1, (DeviceMemory)null), "a null buffer");

                Assert.True(Bytes(block, 40).SequenceEqual(before), "a refused setter changed the block");
                plan.Set(4, 7UL);
                Assert.Equal(7UL, BitConverter.ToUInt64(Bytes(block, 40), 32), "the accepted type after refused ones");
            });
        }

        private static void SetArgumentsAllOrNothing()
        {
            WithHostPlan(SaxpyLayout, 40, SaxpyTypes, (plan, block) =>
            {
                plan.SetArguments(1.0f, new IntPtr(8), new IntPtr(16), new IntPtr(24), 32UL);
                byte[] before = Bytes(block, 40);

                Assert.ThrowsCuda(CudaStatus.InvalidHandle,
                    () => plan.SetArguments(9.0f, new IntPtr(9), new IntPtr(9), new IntPtr(9), (uint)9), "a 4-byte n, last");
                Assert.True(Bytes(block, 40).SequenceEqual(before), "arguments before the refused one were written");
                Assert.ThrowsCuda(CudaStatus.InvalidHandle, () => plan.SetArguments(9.0f, new IntPtr(9)), "2 arguments for 5");
                var n = Assert.Throws<ArgumentNullException>(() => plan.SetArguments(9.0f, null, new IntPtr(9), new IntPtr(9), 9UL), "null");
                Assert.Equal("args[1]", n.ParamName, "ParamName");
                var e = Assert.Throws<ArgumentException>(() => plan.SetArguments(9.0f, "x", new IntPtr(9), new IntPtr(9), 9UL), "a string");
                Assert.Contains("System.String", e.Message, "message names the type");
                Assert.True(Bytes(block, 40).SequenceEqual(before), "a refused SetArguments changed the block");

                plan.SetArguments(3.0f, new IntPtr(1), new IntPtr(2), new IntPtr(3), 4UL);
                byte[] b = Bytes(block, 40);
                Assert.Equal(3.0f, BitConverter.ToSingle(b, 0), "a");
                Assert.Equal(2L, BitConverter.ToInt64(b, 16), "y");
                Assert.Equal(4UL, BitConverter.ToUInt64(b, 32), "n");
            });
        }

        private static void DisposedAndNullPlans()
        {
            WithHostPlan(SaxpyLayout, 40, SaxpyTypes, (plan, block) =>
            {
                plan.Set(0, 1.0f);
                // The plan's handle is NULL: the library refuses it by itself.
                var c = Assert.ThrowsCuda(CudaStatus.InvalidHandle, plan.Launch, "launching a NULL plan handle");
                Assert.Contains("plan", c.Message, "message names the argument");
                plan.Dispose();
                plan.Dispose();
                Assert.Throws<ObjectDisposedException>(() => plan.Set(0, 1.0f), "Set after Dispose");
                Assert.Throws<ObjectDisposedException>(() => plan.Set(1, IntPtr.Zero), "Set<IntPtr> after Dispose");
                Assert.Throws<ObjectDisposedException>(() => plan.SetArguments(1.0f, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, 1UL),
                    "SetArguments after Dispose");
                Assert.Throws<ObjectDisposedException>(plan.Launch, "Launch after Dispose");
                Assert.Throws<ObjectDisposedException>(() => plan.Handle.ToString(), "Handle after Dispose");
                Assert.Contains("disposed", plan.ToString(), "ToString of a disposed plan");
            });
        }

        private static void PlanHandlesInTheCApi()
        {
            var none = new SafeLaunchPlanHandle(IntPtr.Zero, false);
            var madeUp = new SafeLaunchPlanHandle(new IntPtr(0x5A5A5A5A), false);
            IntPtr args;
            UIntPtr size;
            const CudaStatus invalid = CudaStatus.InvalidHandle;
            Assert.Equal(invalid, NativeMethods.cuabi_launch_plan_get_args(none, out args, out size), "get_args(NULL)");
            Assert.Equal(invalid, NativeMethods.cuabi_launch_plan_get_args(madeUp, out args, out size), "get_args(made up)");
            Assert.Equal(invalid, NativeMethods.cuabi_launch_plan_launch(none), "launch(NULL)");
            Assert.Equal(invalid, NativeMethods.cuabi_launch_plan_launch(madeUp), "launch(made up)");
            Assert.Contains("plan", Utf8.FromNative(NativeMethods.cuabi_last_error_message()), "message names the argument");
            NativeMethods.cuabi_launch_plan_release(IntPtr.Zero); // a no-op
            NativeMethods.cuabi_launch_plan_release(new IntPtr(0x5A5A5A5A)); // detected and ignored

            var config = LaunchConfigNative.Create();
            SafeLaunchPlanHandle plan;
            CudaStatus status = NativeMethods.cuabi_launch_plan_create(new SafeFunctionHandle(IntPtr.Zero, false), ref config,
                new SafeStreamHandle(IntPtr.Zero, false), out plan);
            Assert.Equal(invalid, status, "create with a NULL function");
            Assert.True(plan.IsInvalid, "out-parameter written on failure");
        }

        // ------------------------------------------------------------------
        // With a device
        // ------------------------------------------------------------------

        private static void CheckSaxpy(float a, float[] x, float[] y, float[] got, int n, string what)
        {
            for (int i = 0; i < got.Length; i++)
            {
                float want = i < n ? a * x[i] + y[i] : -1.0f;
                // The device fuses a * x + y into one rounding; the host rounds
                // twice. Where the sum cancels, the two differ by about one
                // rounding of the terms, not of the result.
                double scale = i < n ? Math.Abs(a * x[i]) + Math.Abs(y[i]) : 1.0;
                if (Math.Abs(got[i] - want) > 1e-8 + 1e-6 * scale)
                    throw new TestFailure(string.Format("{0}: out[{1}] = {2}, expected {3}", what, i, got[i], want));
            }
        }

        private static float[] Random(int n, int seed)
        {
            var r = new System.Random(seed);
            var a = new float[n];
            for (int i = 0; i < n; i++)
                a[i] = (float)r.NextDouble();
            return a;
        }

        private static void PlanSaxpy()
        {
            const int threads = 512, blocks = 32768, n = threads * blocks;
            float[] hx = Random(n, 11), hy = Random(n, 12);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource, new CompileOptions { Name = "saxpy.cu" }))
            using (var k = m.GetKernel("saxpy"))
            using (var stream = d.CreateStream())
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(n))
            using (LaunchPlan plan = k.Prepare(blocks, threads, stream))
            {
                Assert.Equal("saxpy", plan.KernelName, "KernelName");
                Assert.Equal(40, plan.ArgumentBlockSize, "ArgumentBlockSize");
                Assert.Equal((uint)blocks, plan.Config.Grid.X, "Config.Grid");
                Assert.Equal((uint)threads, plan.Config.Block.X, "Config.Block");
                plan.Set(0, 2.0f);
                plan.Set(1, x);
                plan.Set(2, y);
                plan.Set(3, output);
                plan.Set(4, (ulong)n);
                plan.Launch();
                stream.Synchronize();
                CheckSaxpy(2.0f, hx, hy, output.ToArray(), n, "first launch");

                // One argument changed, the others kept.
                plan.Set(0, -3.25f);
                plan.Launch();
                stream.Synchronize();
                CheckSaxpy(-3.25f, hx, hy, output.ToArray(), n, "a changed");

                // x and y swapped, a smaller n: the tail keeps what it held.
                output.CopyFrom(Enumerable.Repeat(-1.0f, n).ToArray());
                plan.SetArguments(0.5f, y, x, output, (ulong)(n / 3));
                plan.Launch();
                plan.Launch(); // twice: the same result
                stream.Synchronize();
                CheckSaxpy(0.5f, hy, hx, output.ToArray(), n / 3, "swapped, n / 3");

                // Work queued back to back with changed arguments: each launch
                // read the block as it was at its call.
                using (var second = d.Allocate<float>(n))
                {
                    plan.SetArguments(1.0f, x, y, output, (ulong)n);
                    plan.Launch();
                    plan.Set(0, 4.0f);
                    plan.Set(3, second);
                    plan.Launch();
                    stream.Synchronize();
                    CheckSaxpy(1.0f, hx, hy, output.ToArray(), n, "first of two queued launches");
                    CheckSaxpy(4.0f, hx, hy, second.ToArray(), n, "second of two queued launches");
                }
            }
        }

        private static void PlanSizeMismatch()
        {
            const int n = 4096;
            float[] hx = Random(n, 13), hy = Random(n, 14);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(n))
            using (var plan = k.Prepare(n / 256, 256))
            {
                plan.SetArguments(2.0f, x, y, output, (ulong)n);
                var e = Assert.Throws<ArgumentException>(() => plan.Set(4, (uint)n), "a 4-byte n");
                Assert.Contains("parameter 4", e.Message, "message names the parameter");
                Assert.Contains("saxpy", e.Message, "message names the kernel");
                e = Assert.Throws<ArgumentException>(() => plan.SetArguments(2.0f, x, y, output, (uint)n), "a 4-byte n, all at once");
                Assert.Contains("parameter 4", e.Message, "message names the parameter");
                plan.Launch(); // with the arguments set before the refused ones
                d.Synchronize();
                CheckSaxpy(2.0f, hx, hy, output.ToArray(), n, "after refused setters");
            }
        }

        private static void PlanBadConfig()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            {
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Prepare(new Dim3(0), 32), "zero grid");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Prepare(1, 1 << 20), "a block of 2^20 threads");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => k.Prepare(1, 32, null, 1u << 30), "1 GiB of shared memory");
                using (var plan = k.Prepare(new LaunchConfig(new Dim3(2, 3, 1), new Dim3(32, 2, 1), 16)))
                {
                    Assert.Equal(3u, plan.Config.Grid.Y, "Config.Grid.Y");
                    Assert.Equal(16u, plan.Config.SharedMemoryBytes, "Config.SharedMemoryBytes");
                }
            }
        }

        private static void PlanOutlivesItsObjects()
        {
            const int n = 10000;
            float[] hx = Random(n, 15), hy = Random(n, 16);
            LaunchPlan plan;
            DeviceBuffer<float> x, y, output;
            Device d = Device.Get(0);
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var stream = d.CreateStream())
            {
                x = d.AllocateFrom(hx);
                y = d.AllocateFrom(hy);
                output = d.Allocate<float>(n);
                plan = k.Prepare((n + 127) / 128, 128, stream);
            } // kernel, module and stream objects disposed
            d.Dispose();
            using (plan)
            using (x)
            using (y)
            using (output)
            {
                plan.SetArguments(1.5f, x, y, output, (ulong)n);
                plan.Launch();
                plan.Launch();
                using (var again = Device.Get(0))
                    again.Synchronize();
                CheckSaxpy(1.5f, hx, hy, output.ToArray(), n, "a plan whose kernel, module, stream and device were disposed");
            }
        }

        private static void PlanBufferLifetimes()
        {
            const int n = 1 << 16;
            float[] hx = Random(n, 17), hy = Random(n, 18);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var output = d.Allocate<float>(n))
            using (var plan = k.Prepare(n / 256, 256))
            {
                // Buffers referenced by the plan alone: no collection frees them.
                SetInputsAndDrop(d, plan, hx, hy);
                for (int i = 0; i < 3; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
                plan.Set(0, 2.0f);
                plan.Set(3, output);
                plan.Set(4, (ulong)n);
                plan.Launch();
                d.Synchronize();
                CheckSaxpy(2.0f, hx, hy, output.ToArray(), n, "inputs referenced only by the plan");

                // A disposed buffer is refused at launch, naming its parameter.
                var doomed = d.Allocate<float>(n);
                plan.Set(3, doomed);
                doomed.Dispose();
                var e = Assert.Throws<ObjectDisposedException>(plan.Launch, "a disposed output buffer");
                Assert.Contains("argument 3", e.Message, "message names the parameter");
                Assert.Throws<ObjectDisposedException>(() => plan.Set(3, doomed), "setting a disposed buffer");
                plan.Set(3, output); // set again: launches
                plan.Set(0, 3.0f);
                plan.Launch();
                d.Synchronize();
                CheckSaxpy(3.0f, hx, hy, output.ToArray(), n, "after the disposed buffer was replaced");

                // A buffer replaced by a raw pointer is no longer checked or referenced.
                var temporary = d.Allocate<float>(n);
                plan.Set(3, temporary);
                plan.Set(3, new IntPtr((long)output.DevicePointer));
                temporary.Dispose();
                plan.Set(0, 4.0f);
                plan.Launch();
                d.Synchronize();
                CheckSaxpy(4.0f, hx, hy, output.ToArray(), n, "a raw pointer in place of a disposed buffer");
            }
        }

        private static void SetInputsAndDrop(Device d, LaunchPlan plan, float[] hx, float[] hy)
        {
            var t = new Thread(() =>
            {
                plan.Set(1, d.AllocateFrom(hx));
                plan.Set(2, d.AllocateFrom(hy));
            });
            t.Start();
            t.Join();
        }

        private static void PlanFinalizer()
        {
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            {
                IntPtr raw = IntPtr.Zero;
                Exception failure = null;
                var t = new Thread(() =>
                {
                    try
                    {
                        var stream = d.CreateStream();
                        LaunchPlan abandoned = k.Prepare(1, 32, stream);
                        abandoned.SetArguments(1.0f, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, 0UL);
                        abandoned.Launch();
                        stream.Synchronize();
                        raw = abandoned.Handle.DangerousGetHandle();
                    }
                    catch (Exception e)
                    {
                        failure = e;
                    }
                });
                t.Start();
                t.Join();
                if (failure != null)
                    throw new TestFailure("making the plan failed: " + failure);
                IntPtr args;
                UIntPtr size;
                var stale = new SafeLaunchPlanHandle(raw, false);
                Assert.Equal(CudaStatus.Success, NativeMethods.cuabi_launch_plan_get_args(stale, out args, out size),
                    "the plan before the collection");
                for (int i = 0; i < 3; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
                Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_launch_plan_get_args(stale, out args, out size),
                    "the abandoned plan's handle after its finalizer ran");
                Assert.Equal(CudaStatus.InvalidHandle, NativeMethods.cuabi_launch_plan_launch(stale),
                    "launching the released plan");
                using (var plan = k.Prepare(1, 32))
                {
                    plan.SetArguments(1.0f, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, 0UL);
                    plan.Launch();
                    d.Synchronize();
                }
            }
        }

        private static void LaunchAcrossConfigurations()
        {
            const int n = 50000;
            float[] hx = Random(n, 19), hy = Random(n, 20);
            var configs = new[] { 32, 64, 96, 128, 256, 512, 1024 };
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var s1 = d.CreateStream())
            using (var s2 = d.CreateStream(StreamFlags.NonBlocking))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(n))
            {
                var streams = new[] { null, s1, s2 };
                var fill = Enumerable.Repeat(-1.0f, n).ToArray();
                // Patterns: each configuration twice in a row (prepared launches
                // made and reused), then all of them in turn (more than the
                // kernel keeps), with every stream.
                var order = new List<int>();
                for (int c = 0; c < configs.Length; c++)
                {
                    order.Add(c);
                    order.Add(c);
                    order.Add(c);
                }
                for (int round = 0; round < 3; round++)
                    for (int c = 0; c < configs.Length; c++)
                        order.Add(c);
                // Two configurations in turn (prepared, then reused).
                for (int round = 0; round < 6; round++)
                    order.Add(round % 2 == 0 ? 1 : 4);
                int step = 0;
                foreach (int c in order)
                {
                    CudaStream s = streams[step % streams.Length];
                    int count = n - 7 * step; // a different n each time
                    float a = 0.25f * step - 3.0f;
                    output.CopyFrom(fill);
                    int threads = configs[c];
                    k.Launch((count + threads - 1) / threads, threads, s, a, x, y, output, (ulong)count);
                    if (s == null)
                        d.Synchronize();
                    else
                        s.Synchronize();
                    CheckSaxpy(a, hx, hy, output.ToArray(), count,
                        "launch " + step + " (block " + threads + ", stream " + (s == null ? "default" : s == s1 ? "s1" : "s2") + ")");
                    step++;
                }
            }
        }

        private static void PreparedLaunchReuse()
        {
            const int n = 4096;
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var x = d.Allocate<float>(n))
            using (var y = d.Allocate<float>(n))
            using (var output = d.Allocate<float>(n))
            {
                var s1 = d.CreateStream();
                var s2 = d.CreateStream();
                object[] args = { 1.0f, x, y, output, (ulong)n };
                k.Launch(n / 256, 256, s1, args);
                Assert.Equal(0, k.PreparedLaunchCount, "prepared after one launch");
                for (int i = 0; i < 5; i++)
                    k.Launch(n / 256, 256, s1, args);
                Assert.Equal(1, k.PreparedLaunchCount, "one configuration launched six times");
                for (int i = 0; i < 6; i++)
                    k.Launch(n / 256, 256, i % 2 == 0 ? s1 : s2, args);
                Assert.Equal(2, k.PreparedLaunchCount, "two streams in turn");
                for (int i = 0; i < 4; i++)
                    k.Launch(n / 128, 128, s2, args);
                Assert.Equal(3, k.PreparedLaunchCount, "another block size");
                // Eight configurations in turn: more than are kept, so none is prepared.
                for (int round = 0; round < 3; round++)
                    for (int t = 1; t <= 8; t++)
                        k.Launch((n + 32 * t - 1) / (32 * t), 32 * t + 1, null, args);
                Assert.Equal(3, k.PreparedLaunchCount, "after eight configurations in turn");
                s1.Synchronize();
                s2.Synchronize();
                d.Synchronize();
                // A disposed stream's prepared launch goes at the next launch that finds none.
                s1.Dispose();
                k.Launch(n / 512, 512, s2, args);
                Assert.Equal(2, k.PreparedLaunchCount, "after s1 was disposed");
                s2.Dispose();
                k.Dispose();
                Assert.Equal(0, k.PreparedLaunchCount, "after the kernel was disposed");
            }
        }

        private static void NoAllocationPerLaunch()
        {
            // GC.GetAllocatedBytesForCurrentThread: public on .NET, present in Mono's runtime library.
            var method = typeof(GC).GetMethod("GetAllocatedBytesForCurrentThread", Type.EmptyTypes);
            if (method == null)
                throw new SkipException("this runtime cannot count the bytes a thread allocated");
            var allocated = (Func<long>)Delegate.CreateDelegate(typeof(Func<long>), method);
            const int n = 4096, launches = 1000;
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var stream = d.CreateStream())
            using (var x = d.Allocate<float>(n))
            using (var y = d.Allocate<float>(n))
            using (var output = d.Allocate<float>(n))
            using (var plan = k.Prepare(n / 256, 256, stream))
            {
                var config = new LaunchConfig(n / 256, 256);
                object[] args = { 2.0f, x, y, output, (ulong)n };
                for (int i = 0; i < 10; i++) // prepares the launch, fills the writer caches, compiles the code
                {
                    k.Launch(config, stream, args);
                    plan.Set(0, 2.0f);
                    plan.Set(1, x);
                    plan.Set(2, y);
                    plan.Set(3, output);
                    plan.Set(4, (ulong)n);
                    plan.Launch();
                }
                stream.Synchronize();

                long before = allocated();
                for (int i = 0; i < launches; i++)
                    k.Launch(config, stream, args);
                long generic = allocated() - before;
                stream.Synchronize();

                before = allocated();
                for (int i = 0; i < launches; i++)
                {
                    plan.Set(0, 3.0f);
                    plan.Set(1, x);
                    plan.Set(4, (ulong)n);
                    plan.Launch();
                }
                long prepared = allocated() - before;
                stream.Synchronize();
                Assert.Equal(0L, generic, "bytes allocated by " + launches + " Kernel.Launch calls");
                Assert.Equal(0L, prepared, "bytes allocated by " + launches + " rounds of plan setters and Launch");
            }
        }

        private static void LaunchFromThreads()
        {
            const int n = 4096, workers = 8, rounds = 200;
            float[] hx = Random(n, 21), hy = Random(n, 22);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var k = m.GetKernel("saxpy"))
            using (var shared = d.CreateStream())
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            {
                var outputs = Enumerable.Range(0, workers).Select(_ => d.Allocate<float>(n)).ToArray();
                var failures = new List<string>();
                var start = new ManualResetEvent(false);
                var threads = Enumerable.Range(0, workers).Select(w => new Thread(() =>
                {
                    try
                    {
                        start.WaitOne();
                        var got = new float[n];
                        for (int r = 0; r < rounds; r++)
                        {
                            float a = w * 100 + r;
                            // The same kernel, configuration and stream on every thread.
                            k.Launch(n / 256, 256, shared, a, x, y, outputs[w], (ulong)n);
                            shared.Synchronize();
                            outputs[w].CopyTo(got);
                            for (int i = 0; i < n; i += 37)
                            {
                                float want = a * hx[i] + hy[i];
                                double scale = Math.Abs(a * hx[i]) + Math.Abs(hy[i]);
                                if (Math.Abs(got[i] - want) > 1e-6 * scale + 1e-8)
                                    throw new TestFailure("thread " + w + ", round " + r + ": out[" + i + "] = " + got[i] +
                                                          ", expected " + want + " (another thread's arguments?)");
                            }
                        }
                    }
                    catch (Exception e)
                    {
                        lock (failures)
                            failures.Add(e.Message);
                    }
                })).ToArray();
                foreach (var t in threads)
                    t.Start();
                start.Set();
                foreach (var t in threads)
                    t.Join();
                foreach (var o in outputs)
                    o.Dispose();
                Assert.True(failures.Count == 0, string.Join("\n", failures));
            }
        }

        private static void LaunchAfterDispose()
        {
            const int n = 1024;
            float[] hx = Random(n, 23), hy = Random(n, 24);
            using (var d = Device.Get(0))
            using (var m = d.Compile(NoGpuTests.SaxpySource))
            using (var x = d.AllocateFrom(hx))
            using (var y = d.AllocateFrom(hy))
            using (var output = d.Allocate<float>(n))
            {
                var k = m.GetKernel("saxpy");
                var s = d.CreateStream();
                for (int i = 0; i < 3; i++) // prepared at the second
                    k.Launch(n / 128, 128, s, 1.0f, x, y, output, (ulong)n);
                s.Synchronize();
                s.Dispose();
                Assert.Throws<ObjectDisposedException>(() => k.Launch(n / 128, 128, s, 1.0f, x, y, output, (ulong)n),
                    "a disposed stream whose launch was prepared");
                using (var other = d.CreateStream())
                {
                    for (int i = 0; i < 3; i++)
                        k.Launch(n / 128, 128, other, 2.0f + i, x, y, output, (ulong)n);
                    other.Synchronize();
                    CheckSaxpy(4.0f, hx, hy, output.ToArray(), n, "on another stream");
                }
                k.Dispose();
                var e = Assert.Throws<ObjectDisposedException>(() => k.Launch(n / 128, 128, null, 1.0f, x, y, output, (ulong)n),
                    "a disposed kernel");
                Assert.Contains("Kernel", e.ObjectName, "ObjectName");
                Assert.Throws<ObjectDisposedException>(() => k.Prepare(1, 1), "Prepare on a disposed kernel");
            }
        }
    }
}
