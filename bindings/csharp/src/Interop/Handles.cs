// One SafeHandle per cuabi handle type. Each releases through the matching
// cuabi_*_release, which never fails, may run on any thread (the finalizer
// thread included) and accepts any release order: objects keep what they
// depend on alive inside the library.

using System;
using System.Runtime.InteropServices;

namespace Cuabi.Interop
{
    /// <summary>
    /// Base of the cuabi handle types: an opaque handle value, released
    /// through the C API when disposed or finalized. A zero value is the C
    /// NULL handle.
    /// </summary>
    public abstract class CuabiSafeHandle : SafeHandle
    {
        /// <summary>An empty (NULL) handle that owns what it will be given.</summary>
        protected CuabiSafeHandle() : base(IntPtr.Zero, true)
        {
        }

        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        protected CuabiSafeHandle(IntPtr existing, bool ownsHandle) : base(IntPtr.Zero, ownsHandle)
        {
            SetHandle(existing);
        }

        /// <summary>True for the NULL handle.</summary>
        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        /// <summary>Throws <see cref="ObjectDisposedException"/> naming <paramref name="owner"/> when closed.</summary>
        internal void ThrowIfClosed(object owner)
        {
            if (IsClosed)
                throw new ObjectDisposedException(owner.GetType().FullName);
        }
    }

    /// <summary>A cuabi_device handle.</summary>
    public sealed class SafeDeviceHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeDeviceHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeDeviceHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_device_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_device_release(handle); return true; }
    }

    /// <summary>A cuabi_program handle.</summary>
    public sealed class SafeProgramHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeProgramHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeProgramHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_program_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_program_release(handle); return true; }
    }

    /// <summary>A cuabi_module handle.</summary>
    public sealed class SafeModuleHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeModuleHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeModuleHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_module_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_module_release(handle); return true; }
    }

    /// <summary>A cuabi_function handle.</summary>
    public sealed class SafeFunctionHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeFunctionHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeFunctionHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_function_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_function_release(handle); return true; }
    }

    /// <summary>A cuabi_buffer handle (device memory).</summary>
    public sealed class SafeBufferHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeBufferHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeBufferHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_buffer_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_buffer_release(handle); return true; }
    }

    /// <summary>A cuabi_host_buffer handle (page-locked host memory).</summary>
    public sealed class SafeHostBufferHandle : CuabiSafeHandle
    {
        // For cuabi_host_buffer_register of a managed array: the pin that keeps the
        // array in place, freed only after the memory was unregistered.
        private GCHandle pin;

        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeHostBufferHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeHostBufferHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }

        /// <summary>Hands over the pin of a registered managed array; it is freed after the release.</summary>
        internal void AdoptPin(GCHandle arrayPin) { pin = arrayPin; }

        /// <summary>Releases through cuabi_host_buffer_release, then unpins a registered array.</summary>
        protected override bool ReleaseHandle()
        {
            NativeMethods.cuabi_host_buffer_release(handle);
            if (pin.IsAllocated)
                pin.Free();
            return true;
        }
    }

    /// <summary>A cuabi_stream handle. A new, empty handle stands for NULL: the default stream.</summary>
    public sealed class SafeStreamHandle : CuabiSafeHandle
    {
        /// <summary>The NULL stream (the device's default stream), shared and never released.</summary>
        internal static readonly SafeStreamHandle Null = new SafeStreamHandle(IntPtr.Zero, false);

        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeStreamHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeStreamHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_stream_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_stream_release(handle); return true; }
    }

    /// <summary>A cuabi_event handle.</summary>
    public sealed class SafeEventHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeEventHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeEventHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_event_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_event_release(handle); return true; }
    }

    /// <summary>A cuabi_graph handle.</summary>
    public sealed class SafeGraphHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeGraphHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeGraphHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_graph_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_graph_release(handle); return true; }
    }

    /// <summary>A cuabi_graph_exec handle.</summary>
    public sealed class SafeGraphExecHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeGraphExecHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeGraphExecHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_graph_exec_release.</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_graph_exec_release(handle); return true; }
    }

    /// <summary>A cuabi_launch_plan handle (a prepared launch and its argument block).</summary>
    public sealed class SafeLaunchPlanHandle : CuabiSafeHandle
    {
        /// <summary>A NULL handle (filled in by the runtime for out-parameters).</summary>
        public SafeLaunchPlanHandle() { }
        /// <summary>Wraps an existing handle value.</summary>
        /// <param name="existing">The raw handle value.</param>
        /// <param name="ownsHandle">Whether disposing this object releases the handle.</param>
        public SafeLaunchPlanHandle(IntPtr existing, bool ownsHandle) : base(existing, ownsHandle) { }
        /// <summary>Releases through cuabi_launch_plan_release (which frees the argument block).</summary>
        protected override bool ReleaseHandle() { NativeMethods.cuabi_launch_plan_release(handle); return true; }
    }
}
