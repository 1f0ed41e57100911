using System;
using System.Collections.ObjectModel;
using System.Runtime.CompilerServices;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>Grid or block dimensions.</summary>
    public struct Dim3
    {
        /// <summary>Creates dimensions.</summary>
        /// <param name="x">X extent.</param>
        /// <param name="y">Y extent.</param>
        /// <param name="z">Z extent.</param>
        public Dim3(uint x, uint y = 1, uint z = 1)
        {
            X = x;
            Y = y;
            Z = z;
        }

        /// <summary>X extent.</summary>
        public uint X { get; private set; }
        /// <summary>Y extent.</summary>
        public uint Y { get; private set; }
        /// <summary>Z extent.</summary>
        public uint Z { get; private set; }

        /// <summary>A one-dimensional extent.</summary>
        /// <param name="x">X extent (negative values are refused).</param>
        public static implicit operator Dim3(int x)
        {
            if (x < 0)
                throw new ArgumentOutOfRangeException("x", x, "a dimension cannot be negative");
            return new Dim3((uint)x);
        }

        /// <summary>"(x, y, z)".</summary>
        public override string ToString()
        {
            return "(" + X + ", " + Y + ", " + Z + ")";
        }
    }

    /// <summary>
    /// How a kernel is launched: grid, block and dynamic shared memory, and the
    /// extended options (a cooperative launch, thread-block clusters,
    /// programmatic dependent launch, a priority). Every launch form and
    /// <see cref="Kernel.Prepare(LaunchConfig, CudaStream)"/> take it; the
    /// library checks it and names what it refuses.
    /// </summary>
    /// <example>
    /// <code>
    /// var config = new LaunchConfig(8, 128) { Cluster = new Dim3(2, 1, 1) };
    /// kernel.Launch(config, stream, data, n);
    /// </code>
    /// </example>
    public partial struct LaunchConfig
    {
        /// <summary>Creates a launch configuration (no extended options).</summary>
        /// <param name="grid">Blocks in the grid.</param>
        /// <param name="block">Threads in a block.</param>
        /// <param name="sharedMemoryBytes">Dynamic shared memory per block.</param>
        public LaunchConfig(Dim3 grid, Dim3 block, uint sharedMemoryBytes = 0)
            : this()
        {
            Grid = grid;
            Block = block;
            SharedMemoryBytes = sharedMemoryBytes;
        }

        // Its fields (one property each, the launch attributes in a holder
        // that stays null while none is set), ToNative, KeepAlive, FromNative,
        // SameAs and IsExtended are generated (Objects.g.cs) from cuabi_launch_config.

        /// <summary>"grid x block", with the extended options that are set.</summary>
        public override string ToString()
        {
            string s = Grid + " x " + Block;
            if (SharedMemoryBytes != 0)
                s += ", " + SharedMemoryBytes + " bytes shared";
            if (flags != LaunchFlags.None)
                s += ", " + flags;
            Dim3 c = Cluster;
            if (c.X != 0 || c.Y != 0 || c.Z != 0)
                s += ", cluster " + c;
            if (Priority != 0)
                s += ", priority " + Priority;
            if (ProgrammaticEvent != null)
                s += ", programmatic event";
            if (AccessPolicyWindow.HasValue)
                s += ", access-policy window of " + AccessPolicyWindow.Value.Bytes + " bytes";
            if (SyncPolicy.HasValue)
                s += ", sync policy " + SyncPolicy.Value;
            if (ClusterScheduling != ClusterSchedulingPolicy.Default)
                s += ", cluster scheduling " + ClusterScheduling;
            if (MemSyncDomain.HasValue)
                s += ", memory-sync domain " + MemSyncDomain.Value;
            if (MemSyncDomainMapDefault.HasValue || MemSyncDomainMapRemote.HasValue)
                s += ", domain map (" + MemSyncDomainMapDefault + ", " + MemSyncDomainMapRemote + ")";
            if (SharedCarveout.HasValue)
                s += ", shared carve-out " + SharedCarveout.Value + "%";
            if (CompletionEvent != null)
                s += ", completion event";
            return s;
        }
    }

    /// <summary>One kernel parameter as the driver reports it: where it sits in the argument block and its size.</summary>
    public struct KernelParameter
    {
        /// <summary>Creates a parameter description.</summary>
        /// <param name="index">Position in the kernel's signature.</param>
        /// <param name="offset">Byte offset in the packed argument block.</param>
        /// <param name="size">Size in bytes.</param>
        public KernelParameter(int index, int offset, int size)
        {
            Index = index;
            Offset = offset;
            Size = size;
        }

        /// <summary>Position in the kernel's signature, from 0.</summary>
        public int Index { get; private set; }
        /// <summary>Byte offset in the packed argument block.</summary>
        public int Offset { get; private set; }
        /// <summary>Size in bytes.</summary>
        public int Size { get; private set; }

        /// <summary>"#index: size bytes at offset".</summary>
        public override string ToString()
        {
            return "#" + Index + ": " + Size + " bytes at " + Offset;
        }
    }

    /// <summary>
    /// A kernel of a module. <see cref="Launch(LaunchConfig, CudaStream, object[])"/>
    /// launches it with typed arguments; <see cref="Prepare(Dim3, Dim3, CudaStream, uint)"/>
    /// makes a <see cref="LaunchPlan"/>, the fastest way to launch it many times.
    /// </summary>
    /// <remarks>
    /// Every member is thread-safe. The kernel keeps a prepared launch (a
    /// <see cref="LaunchPlan"/>) for each of the last few configurations and
    /// streams it was launched with, so that a launch repeated with the same
    /// grid, block, shared memory and stream writes its arguments in place and
    /// makes one native call of one argument. A configuration is prepared when
    /// it is seen again among the last few launches that found none, and up to
    /// four are kept. Such a prepared launch holds its stream until the kernel
    /// is disposed or the entry is replaced by another configuration; a
    /// disposed stream's entry is dropped at the next launch that finds no
    /// prepared launch.
    /// </remarks>
    public sealed partial class Kernel : IDisposable
    {
        // Above this the argument block of an unprepared launch is taken from
        // the heap instead of the stack.
        private const int StackBlockLimit = 1024;
        // Prepared launches kept per kernel.
        private const int PlanSlots = 4;

        private readonly LaunchPlan[] plans = new LaunchPlan[PlanSlots];
        private volatile ArgumentLayout layout;
        // Set by Dispose. The handle itself closes only once the plans holding
        // it (LaunchPlan keeps its kernel's handle for the argument checks)
        // are released too.
        private volatile bool disposed;
        private int nextVictim;
        // The configurations of the last launches that found no prepared
        // launch: one seen again among them is prepared, so that up to
        // PlanSlots configurations used in turn all get prepared, and more
        // than that never make plans only to throw them away. A hint only,
        // written without locks: a torn entry at worst prepares a launch.
        private readonly MissKey[] misses = new MissKey[PlanSlots];
        private int nextMiss;

        private struct MissKey
        {
            internal LaunchConfig Config;
            internal IntPtr Stream;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeFunctionHandle Handle
        {
            get
            {
                if (disposed)
                    throw new ObjectDisposedException(GetType().FullName);
                return handle;
            }
        }

        /// <summary>The kernel's parameters, as the driver reports them (driver 12.4 or newer).</summary>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotSupported"/> with an older driver.</exception>
        public ReadOnlyCollection<KernelParameter> Parameters
        {
            get { return Array.AsReadOnly(GetLayout().Parameters); }
        }

        /// <summary>The byte length of the packed argument block.</summary>
        public int ArgumentBlockSize
        {
            get { return GetLayout().BlockSize; }
        }

        /// <summary>Launches the kernel.</summary>
        /// <param name="grid">Blocks in the grid.</param>
        /// <param name="block">Threads in a block.</param>
        /// <param name="stream">The stream, or null for the device's default stream.</param>
        /// <param name="args">One argument per kernel parameter; see <see cref="Launch(LaunchConfig, CudaStream, object[])"/>.</param>
        public void Launch(Dim3 grid, Dim3 block, CudaStream stream, params object[] args)
        {
            Launch(new LaunchConfig(grid, block), stream, args);
        }

        /// <summary>
        /// Launches the kernel. Each argument must have exactly the size of
        /// its parameter: float, double, sbyte/byte, short/ushort, int/uint,
        /// long/ulong (for size_t), bool (1 byte), char (2 bytes),
        /// IntPtr/UIntPtr, enums (their underlying type), a
        /// <see cref="DeviceBuffer{T}"/> (its 8-byte device pointer), a
        /// <see cref="Texture"/> or <see cref="Surface"/> (its 8-byte object), or a
        /// struct made only of such values (its marshalled layout; declare it
        /// [StructLayout(LayoutKind.Sequential)] to match the C struct).
        /// </summary>
        /// <remarks>
        /// Thread-safe. The library checks the argument types' sizes
        /// (cuabi_function_check_arg_sizes) the first time they come, and not
        /// again while they repeat. Nothing is allocated per launch: the arguments are
        /// written into the argument block of a prepared launch kept for this
        /// configuration and stream (made when they come again soon after a
        /// launch that found none), or of a block on the stack. Passing the arguments as an
        /// <c>object[]</c> made once saves boxing them at every call; for the
        /// least work per launch, use <see cref="Prepare(Dim3, Dim3, CudaStream, uint)"/>.
        /// </remarks>
        /// <param name="config">Grid, block and dynamic shared memory.</param>
        /// <param name="stream">The stream, or null for the device's default stream.</param>
        /// <param name="args">One argument per kernel parameter.</param>
        /// <exception cref="ArgumentException">
        /// The argument count differs from the parameter count, or an argument's
        /// size differs from its parameter's (e.g. a 4-byte uint for a size_t):
        /// the library's message names the kernel and the parameter. Or an
        /// argument's type cannot be passed. Nothing is launched.
        /// </exception>
        /// <exception cref="ObjectDisposedException">The kernel, the stream, or a device buffer, texture or surface among the arguments was disposed.</exception>
        /// <exception cref="CudaException">The library refused or the driver failed the launch.</exception>
        public void Launch(LaunchConfig config, CudaStream stream, params object[] args)
        {
            if (disposed)
                throw new ObjectDisposedException(GetType().FullName);
            // CudaStream.HandleOf written out: called here, it costs the hot path a call.
            SafeStreamHandle s = stream == null ? SafeStreamHandle.Null : stream.Handle;
            ArgumentLayout l = layout ?? GetLayout();
            int slot;
            LaunchPlan plan = RentPlan(ref config, s, out slot);
            CudaStatus status = plan != null ? LaunchWith(plan, slot, l, args) : LaunchUnprepared(ref config, s, l, args);
            // The arguments (device buffers among them) stay reachable until the call returned.
            GC.KeepAlive(args);
            GC.KeepAlive(config.ProgrammaticEvent);
            GC.KeepAlive(config.CompletionEvent);
            if (status != CudaStatus.Success)
                throw Errors.FromLastError(status);
        }

        /// <summary>
        /// Prepares launches of this kernel with one configuration on one
        /// stream: the configuration is checked once, and the plan's
        /// arguments are then set one by one, in place, and launched as often
        /// as needed.
        /// </summary>
        /// <param name="grid">Blocks in the grid.</param>
        /// <param name="block">Threads in a block.</param>
        /// <param name="stream">The stream, or null for the device's default stream.</param>
        /// <param name="sharedMemoryBytes">Dynamic shared memory per block, in bytes.</param>
        /// <returns>A new plan, to be disposed; its arguments start as zero bytes.</returns>
        /// <exception cref="CudaException">
        /// The library refused the configuration (<see cref="CudaStatus.InvalidArgument"/>, the message says which part).
        /// </exception>
        public LaunchPlan Prepare(Dim3 grid, Dim3 block, CudaStream stream = null, uint sharedMemoryBytes = 0)
        {
            return Prepare(new LaunchConfig(grid, block, sharedMemoryBytes), stream);
        }

        /// <summary>Prepares launches of this kernel with one configuration on one stream; see <see cref="Prepare(Dim3, Dim3, CudaStream, uint)"/>.</summary>
        /// <param name="config">Grid, block and dynamic shared memory.</param>
        /// <param name="stream">The stream, or null for the device's default stream.</param>
        /// <returns>A new plan, to be disposed; its arguments start as zero bytes.</returns>
        public LaunchPlan Prepare(LaunchConfig config, CudaStream stream = null)
        {
            SafeStreamHandle s = CudaStream.HandleOf(stream);
            return LaunchPlan.Create(this, GetLayout(), config, s, Name);
        }

        /// <summary>Releases the kernel handle and the launches it prepared for itself (plans made by <see cref="Prepare(LaunchConfig, CudaStream)"/> live on).</summary>
        public void Dispose()
        {
            disposed = true;
            handle.Dispose();
            DropPlans();
        }

        /// <summary>The kernel's name.</summary>
        public override string ToString()
        {
            return disposed ? "Kernel (disposed)" : "Kernel " + Name;
        }

        /// <summary>How many prepared launches the kernel keeps now (idle ones; for tests).</summary>
        internal int PreparedLaunchCount
        {
            get
            {
                int n = 0;
                for (int i = 0; i < plans.Length; i++)
                    if (Volatile.Read(ref plans[i]) != null)
                        n++;
                return n;
            }
        }

        internal ArgumentLayout GetLayout()
        {
            ArgumentLayout l = layout;
            if (l != null)
                return l;
            // The whole layout in one call; a second only for more than 16 parameters.
            var h = Handle;
            var info = new ParamInfoNative[16];
            UIntPtr count = (UIntPtr)(uint)info.Length, blockSize;
            CudaStatus status = NativeMethods.cuabi_function_get_params(h, info, ref count, out blockSize);
            if (status == CudaStatus.InsufficientBuffer)
            {
                info = new ParamInfoNative[checked((int)count.ToUInt64())];
                status = NativeMethods.cuabi_function_get_params(h, info, ref count, out blockSize);
            }
            Errors.Check(status);
            var parameters = new KernelParameter[checked((int)count.ToUInt64())];
            for (int i = 0; i < parameters.Length; i++)
                parameters[i] = new KernelParameter(i, checked((int)info[i].offset.ToUInt64()), checked((int)info[i].size.ToUInt64()));
            l = new ArgumentLayout(h, parameters, checked((int)blockSize.ToUInt64()));
            layout = l;
            return l;
        }

        // ------------------------------------------------------------------
        // Prepared launches kept by the kernel. A plan in a slot is idle; a
        // launch takes it out of its slot (so no other thread writes its
        // block meanwhile) and puts it back afterwards.
        // ------------------------------------------------------------------

        private LaunchPlan RentPlan(ref LaunchConfig config, SafeStreamHandle stream, out int slot)
        {
            LaunchPlan[] p = plans;
            for (int i = 0; i < p.Length; i++)
            {
                LaunchPlan candidate = Volatile.Read(ref p[i]);
                if (candidate != null && candidate.Matches(ref config, stream) &&
                    Interlocked.CompareExchange(ref p[i], null, candidate) == candidate)
                {
                    slot = i;
                    return candidate;
                }
            }
            slot = -1;
            return null;
        }

        private void ReturnPlan(LaunchPlan plan, int slot)
        {
            if (slot < 0 || Interlocked.CompareExchange(ref plans[slot], plan, null) != null)
                Place(plan);
            if (disposed)
                DropPlans(); // disposed meanwhile: this plan may have come back after the sweep
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void Place(LaunchPlan plan)
        {
            for (int i = 0; i < plans.Length; i++)
                if (Interlocked.CompareExchange(ref plans[i], plan, null) == null)
                    return;
            int victim = (Interlocked.Increment(ref nextVictim) & int.MaxValue) % plans.Length;
            LaunchPlan old = Interlocked.Exchange(ref plans[victim], plan);
            if (old != null)
                old.Dispose();
        }

        /// <summary>Disposes the idle prepared launches: all of them, or those of disposed streams alone.</summary>
        private void DropPlans(bool closedStreamsOnly = false)
        {
            for (int i = 0; i < plans.Length; i++)
            {
                LaunchPlan p = Volatile.Read(ref plans[i]);
                if (p != null && (!closedStreamsOnly || p.StreamHandle.IsClosed) &&
                    Interlocked.CompareExchange(ref plans[i], null, p) == p)
                    p.Dispose();
            }
        }

        /// <summary>Writes the arguments into <paramref name="plan"/>'s block and launches it, then puts the plan back (in <paramref name="slot"/>, or anywhere for -1).</summary>
        private unsafe CudaStatus LaunchWith(LaunchPlan plan, int slot, ArgumentLayout l, object[] args)
        {
            try
            {
                l.Write(args, plan.Block);
                return FastNativeMethods.cuabi_launch_plan_launch(plan.RawHandle);
            }
            finally
            {
                ReturnPlan(plan, slot);
            }
        }

        /// <summary>
        /// A launch with no idle prepared launch for its configuration:
        /// prepares one when the configuration was seen among the last launches
        /// that found none (and keeps it), otherwise packs the arguments on the
        /// stack (on the heap past <see cref="StackBlockLimit"/>) and launches
        /// with cuabi_function_launch_packed.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private unsafe CudaStatus LaunchUnprepared(ref LaunchConfig config, SafeStreamHandle stream, ArgumentLayout l, object[] args)
        {
            if (MissedBefore(ref config, stream))
                return LaunchWith(LaunchPlan.Create(this, l, config, stream, null), -1, l, args);
            var native = config.ToNative();
            int size = l.BlockSize;
            byte[] heap = size > StackBlockLimit ? new byte[size] : null;
            byte* stack = stackalloc byte[heap == null ? Math.Max(size, 1) : 1];
            fixed (byte* onHeap = heap)
            {
                byte* block = heap == null ? stack : onHeap;
                for (int i = 0; heap == null && i < size; i++)
                    block[i] = 0;
                l.Write(args, block);
                CudaStatus status = FastNativeMethods.cuabi_function_launch_packed(handle.DangerousGetHandle(), ref native,
                    stream.DangerousGetHandle(), size == 0 ? IntPtr.Zero : (IntPtr)block, (UIntPtr)(uint)size);
                // The raw handle values are checked by the library; these keep
                // their owners from being finalized before the call returned.
                GC.KeepAlive(this);
                GC.KeepAlive(stream);
                return status;
            }
        }

        /// <summary>
        /// Whether one of the last launches that found no prepared launch had
        /// this configuration and stream (then forgotten); remembers it otherwise.
        /// </summary>
        private bool MissedBefore(ref LaunchConfig c, SafeStreamHandle stream)
        {
            // Plans of disposed streams are dropped here, so that they do not
            // keep those streams alive.
            DropPlans(true);
            var key = new MissKey { Config = c, Stream = stream.DangerousGetHandle() };
            for (int i = 0; i < misses.Length; i++)
            {
                MissKey m = misses[i];
                if (m.Stream == key.Stream && m.Config.SameAs(ref key.Config))
                {
                    misses[i] = default(MissKey); // a block is never 0 wide: matches no launch
                    return !disposed;
                }
            }
            misses[(Interlocked.Increment(ref nextMiss) & int.MaxValue) % misses.Length] = key;
            return false;
        }
    }
}
