using System;
using System.Collections.ObjectModel;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A prepared launch of one kernel with one configuration on one stream
    /// (<see cref="Kernel.Prepare(Dim3, Dim3, CudaStream, uint)"/>): the
    /// configuration was checked once, the arguments live in an argument
    /// block owned by the plan, and <see cref="Launch"/> launches with the
    /// block as it is. The fastest way to launch a kernel many times.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The arguments start as zero bytes. <see cref="Set{T}(int, T)"/> writes
    /// one argument in place, its size checked against its parameter's by the
    /// library (cuabi_function_check_arg_size) the first time a type comes for
    /// that parameter, not at every call; the others keep their values, so a
    /// launch loop sets only what changes:
    /// </para>
    /// <code>
    /// using (LaunchPlan plan = saxpy.Prepare(n / 512, 512, stream))
    /// {
    ///     plan.SetArguments(2.0f, x, y, output, (ulong)n);
    ///     plan.Launch();
    ///     plan.Set(0, 3.0f);   // a = 3, the rest unchanged
    ///     plan.Launch();
    /// }
    /// </code>
    /// <para>
    /// Lifetimes: the plan keeps its kernel and stream alive inside the library,
    /// so it may outlive the <see cref="Kernel"/>, <see cref="CudaModule"/> and
    /// <see cref="CudaStream"/> objects it was made from. A device buffer set as
    /// an argument is referenced by the plan (the garbage collector does not free
    /// it while the plan may still launch with its address); disposing that
    /// buffer makes <see cref="Launch"/> throw <see cref="ObjectDisposedException"/>
    /// naming the parameter, until the parameter is set again.
    /// </para>
    /// <para>
    /// Threads: a plan is not thread-safe. One thread at a time may call its
    /// members (<see cref="Set{T}(int, T)"/>, <see cref="SetArguments"/>,
    /// <see cref="Launch"/> and <see cref="Dispose"/> included): a launch reads
    /// the block as it is at the call, and a write from another thread at that
    /// moment would launch a mix of old and new arguments. Plans are cheap: make
    /// one per thread. <see cref="Kernel.Launch(LaunchConfig, CudaStream, object[])"/>
    /// is thread-safe.
    /// </para>
    /// </remarks>
    public sealed partial class LaunchPlan : IDisposable
    {
        /// <summary>The plan's handle value, for the launches (the kernel's included).</summary>
        internal readonly IntPtr RawHandle;
        /// <summary>The layout, whose accepted writers the setters share with the kernel.</summary>
        internal readonly ArgumentLayout Layout;
        private readonly LaunchConfig config;
        internal readonly SafeStreamHandle StreamHandle;
        // The argument block, owned by the library; null once disposed.
        private unsafe byte* block;
        // The device memory, texture or surface set as each argument (null where none), and how many.
        private IArgumentObject[] buffers;
        private int bufferCount;
        // Their handles, packed: held[0 .. bufferCount), what Launch checks (IsClosed, a field read each).
        private SafeHandle[] held;

        private unsafe LaunchPlan(SafeLaunchPlanHandle handle, IntPtr block, ArgumentLayout layout, LaunchConfig config,
            SafeStreamHandle stream, string kernelName)
        {
            this.handle = handle;
            RawHandle = handle.DangerousGetHandle();
            this.block = (byte*)block;
            Layout = layout;
            this.config = config;
            StreamHandle = stream;
            KernelName = kernelName;
        }

        internal static LaunchPlan Create(Kernel kernel, ArgumentLayout layout, LaunchConfig config, SafeStreamHandle stream,
            string kernelName)
        {
            var native = config.ToNative();
            SafeLaunchPlanHandle h;
            CudaStatus status = NativeMethods.cuabi_launch_plan_create(kernel.Handle, ref native, stream, out h);
            config.KeepAlive();
            Errors.Check(status);
            try
            {
                h.Hold(layout.Function);
                IntPtr args;
                UIntPtr size;
                Errors.Check(NativeMethods.cuabi_launch_plan_get_args(h, out args, out size));
                return new LaunchPlan(h, args, layout, config, stream, kernelName);
            }
            catch
            {
                h.Dispose();
                throw;
            }
        }

        /// <summary>
        /// A plan over a caller's block with NULL plan and function handles,
        /// for testing the setters without a device: the library refuses the
        /// NULL function for any type not in <see cref="ArgumentLayout.Accepted"/>,
        /// and launching answers InvalidHandle. The caller frees the block
        /// after disposing the plan.
        /// </summary>
        internal static LaunchPlan OverBlock(KernelParameter[] parameters, int blockSize, IntPtr block, string kernelName)
        {
            var layout = new ArgumentLayout(new SafeFunctionHandle(IntPtr.Zero, false), parameters, blockSize);
            return new LaunchPlan(new SafeLaunchPlanHandle(IntPtr.Zero, false), block, layout, new LaunchConfig(1, 1),
                SafeStreamHandle.Null, kernelName);
        }

        /// <summary>The name of the kernel the plan launches.</summary>
        public string KernelName { get; }

        /// <summary>The configuration of every launch of the plan (grid, block, shared memory and the extended options).</summary>
        public LaunchConfig Config
        {
            get { return config; }
        }

        /// <summary>The kernel's parameters: where each argument sits in the block and its size.</summary>
        public ReadOnlyCollection<KernelParameter> Parameters
        {
            get { return Array.AsReadOnly(Layout.Parameters); }
        }

        /// <summary>The byte length of the argument block.</summary>
        public int ArgumentBlockSize
        {
            get { return Layout.BlockSize; }
        }

        /// <summary>
        /// Sets argument <paramref name="index"/> to <paramref name="value"/>,
        /// written in place into the plan's argument block. The type must have
        /// exactly the parameter's size: float, double, sbyte/byte,
        /// short/ushort, int/uint, long/ulong (for size_t), bool (1 byte), char
        /// (2 bytes), IntPtr/UIntPtr (IntPtr.Zero for a NULL pointer), an enum
        /// (its underlying type) or a struct (its marshalled layout). Primitive
        /// types are written without allocating; enums and other structs are
        /// boxed once per call.
        /// </summary>
        /// <typeparam name="T">The argument's type.</typeparam>
        /// <param name="index">The parameter's position in the kernel's signature, from 0.</param>
        /// <param name="value">The value.</param>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not a parameter of the kernel.</exception>
        /// <exception cref="ArgumentException">
        /// The value's size differs from the parameter's (e.g. a 4-byte uint for
        /// a size_t; the library's message names the kernel and the parameter),
        /// or the type cannot be passed; the plan's arguments are unchanged.
        /// </exception>
        /// <exception cref="ObjectDisposedException">The plan was disposed.</exception>
        public unsafe void Set<T>(int index, T value) where T : struct
        {
            byte* dst = Slot(index, typeof(T));
            if (typeof(T) == typeof(float))
                *(float*)dst = __refvalue(__makeref(value), float);
            else if (typeof(T) == typeof(ulong))
                *(ulong*)dst = __refvalue(__makeref(value), ulong);
            else if (typeof(T) == typeof(long))
                *(long*)dst = __refvalue(__makeref(value), long);
            else if (typeof(T) == typeof(int))
                *(int*)dst = __refvalue(__makeref(value), int);
            else if (typeof(T) == typeof(uint))
                *(uint*)dst = __refvalue(__makeref(value), uint);
            else if (typeof(T) == typeof(double))
                *(double*)dst = __refvalue(__makeref(value), double);
            else if (typeof(T) == typeof(IntPtr))
                *(IntPtr*)dst = __refvalue(__makeref(value), IntPtr);
            else if (typeof(T) == typeof(UIntPtr))
                *(UIntPtr*)dst = __refvalue(__makeref(value), UIntPtr);
            else if (typeof(T) == typeof(short))
                *(short*)dst = __refvalue(__makeref(value), short);
            else if (typeof(T) == typeof(ushort))
                *(ushort*)dst = __refvalue(__makeref(value), ushort);
            else if (typeof(T) == typeof(sbyte))
                *(sbyte*)dst = __refvalue(__makeref(value), sbyte);
            else if (typeof(T) == typeof(byte))
                *dst = __refvalue(__makeref(value), byte);
            else if (typeof(T) == typeof(bool))
                *dst = __refvalue(__makeref(value), bool) ? (byte)1 : (byte)0;
            else if (typeof(T) == typeof(char))
                *(char*)dst = __refvalue(__makeref(value), char);
            else
                Argument<T>.Writer.Write(value, dst); // enums and structs: boxed
            if (buffers != null && buffers[index] != null)
                SetBuffer(index, null);
            GC.KeepAlive(this); // the block is not freed by a finalizer before the write
        }

        private unsafe void SetObject(int index, IArgumentObject value, string name, string hint = "")
        {
            if (value == null)
                throw new ArgumentNullException(name, "argument " + index + " is null" + hint);
            byte* dst = Slot(index, value.GetType());
            *(ulong*)dst = value.LaunchValue;
            SetBuffer(index, value);
            GC.KeepAlive(this);
        }

        /// <summary>
        /// Sets every argument at once, with the types and rules of
        /// <see cref="Kernel.Launch(LaunchConfig, CudaStream, object[])"/>.
        /// All are checked before any is written: on an exception the plan's
        /// arguments are unchanged.
        /// </summary>
        /// <param name="args">One argument per kernel parameter.</param>
        /// <exception cref="ArgumentException">The count, a type or a size does not fit; the message names the parameter.</exception>
        /// <exception cref="ObjectDisposedException">The plan, or device memory among the arguments, was disposed.</exception>
        public unsafe void SetArguments(params object[] args)
        {
            byte* b = Block;
            ArgumentWriter[] writers = Layout.Check(args);
            for (int i = 0; i < writers.Length; i++)
            {
                var o = args[i] as IArgumentObject;
                if (o != null && o.Lifetime.IsClosed)
                    throw new ObjectDisposedException(args[i].GetType().FullName, "argument " + i + " is " + Article(o.What) + " that was disposed");
            }
            for (int i = 0; i < writers.Length; i++)
            {
                writers[i].Write(args[i], b + Layout.Offsets[i]);
                SetBuffer(i, args[i] as IArgumentObject);
            }
            GC.KeepAlive(this);
        }

        /// <summary>
        /// Launches the kernel with the arguments as they are now, on the
        /// plan's stream. Asynchronous, like every launch: the arguments are
        /// read during the call, so they may be changed as soon as it returns.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The plan, or a device buffer set as an argument, was disposed.</exception>
        /// <exception cref="CudaException">The driver failed the launch.</exception>
        public unsafe void Launch()
        {
            if (block == null && handle.IsClosed)
                throw new ObjectDisposedException(GetType().FullName);
            int n = bufferCount;
            if (n != 0)
            {
                SafeHandle[] h = held;
                for (int i = 0; i < n; i++)
                    if (h[i].IsClosed)
                        ThrowDisposedBuffer();
            }
            CudaStatus status = FastNativeMethods.cuabi_launch_plan_launch(RawHandle);
            GC.KeepAlive(this); // neither the plan nor its buffers are finalized during the call
            if (status != CudaStatus.Success)
                throw Errors.FromLastError(status);
        }

        /// <summary>Releases the plan and its argument block (launches already made still run).</summary>
        public unsafe void Dispose()
        {
            block = null;
            bufferCount = 0;
            buffers = null;
            held = null;
            handle.Dispose();
        }

        /// <summary>"LaunchPlan kernel grid x block".</summary>
        public override string ToString()
        {
            return "LaunchPlan " + (KernelName ?? "") + " " + config.Grid + " x " + config.Block +
                   (handle.IsClosed ? " (disposed)" : "");
        }

        // ------------------------------------------------------------------

        /// <summary>The block, for the writes of <see cref="Kernel.Launch(LaunchConfig, CudaStream, object[])"/>.</summary>
        internal unsafe byte* Block
        {
            get
            {
                byte* b = block;
                if (b == null && handle.IsClosed)
                    throw new ObjectDisposedException(GetType().FullName);
                return b;
            }
        }

        /// <summary>Whether this plan launches with <paramref name="c"/> on <paramref name="s"/>.</summary>
        internal bool Matches(ref LaunchConfig c, SafeStreamHandle s)
        {
            return ReferenceEquals(StreamHandle, s) && config.SameAs(ref c);
        }

        /// <summary>The address of argument <paramref name="index"/>, once the library accepted a <paramref name="type"/> for it.</summary>
        private unsafe byte* Slot(int index, Type type)
        {
            byte* b = Block;
            ArgumentWriter[] accepted = Layout.Accepted;
            ArgumentWriter w = (uint)index < (uint)accepted.Length ? accepted[index] : null;
            if (w == null || !ReferenceEquals(w.Type, type))
                Layout.Accept(index, type);
            return b + Layout.Offsets[index];
        }

        /// <summary>"device memory", "a texture object", "a surface object".</summary>
        private static string Article(string what)
        {
            return what == "device memory" ? what : "a " + what;
        }

        /// <summary>Records <paramref name="buffer"/> (null: none) as what argument <paramref name="index"/> names.</summary>
        private void SetBuffer(int index, IArgumentObject buffer)
        {
            if (buffers == null)
            {
                if (buffer == null)
                    return;
                buffers = new IArgumentObject[Layout.Parameters.Length];
                held = new SafeHandle[buffers.Length];
            }
            if (ReferenceEquals(buffers[index], buffer))
                return; // set again: nothing changes
            buffers[index] = buffer;
            Pack();
        }

        /// <summary>Refills <see cref="held"/> and <see cref="bufferCount"/> from <see cref="buffers"/>.</summary>
        private void Pack()
        {
            IArgumentObject[] b = buffers;
            SafeHandle[] h = held;
            int n = 0;
            for (int i = 0; i < b.Length; i++)
                if (b[i] != null)
                    h[n++] = b[i].Lifetime;
            for (int i = n; i < h.Length; i++)
                h[i] = null;
            bufferCount = n;
        }

        /// <summary>The exception of a launch with disposed device memory, a texture or a surface among the arguments, naming the first.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowDisposedBuffer()
        {
            IArgumentObject[] b = buffers;
            for (int i = 0; i < b.Length; i++)
                if (b[i] != null && b[i].Lifetime.IsClosed)
                    throw new ObjectDisposedException(b[i].GetType().FullName, string.Format(
                        "kernel '{0}': the {1} set as argument {2} was disposed; set the parameter again before launching",
                        KernelName, b[i].What, i));
            throw new ObjectDisposedException(GetType().FullName, "kernel '" + KernelName + "': an argument was disposed");
        }

        /// <summary>The writer of <typeparamref name="T"/>, found once, for the enums and structs of <see cref="Set{T}(int, T)"/>.</summary>
        private static class Argument<T>
        {
            internal static readonly ArgumentWriter Writer = ArgumentWriter.For(typeof(T));
        }
    }
}
