// The base of the generated SafeHandle classes (Handles.g.cs), and the parts
// of three of them that own more than the native handle.

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

    public sealed partial class SafeHostBufferHandle
    {
        // For cuabi_host_buffer_register of a managed array: the pin that keeps the
        // array in place, freed only after the memory was unregistered.
        private GCHandle pin;

        /// <summary>Hands over the pin of a registered managed array; it is freed after the release.</summary>
        internal void AdoptPin(GCHandle arrayPin)
        {
            pin = arrayPin;
        }

        partial void Released()
        {
            if (pin.IsAllocated)
                pin.Free();
        }
    }

    public sealed partial class SafeLaunchPlanHandle
    {
        // The function the plan launches, held (DangerousAddRef) so that its
        // handle stays valid for the library's argument checks after the
        // Kernel object is disposed; let go after the plan's release.
        private SafeFunctionHandle function;

        /// <summary>Holds <paramref name="kernel"/>'s handle until this plan is released.</summary>
        internal void Hold(SafeFunctionHandle kernel)
        {
            bool added = false;
            kernel.DangerousAddRef(ref added);
            if (added)
                function = kernel;
        }

        partial void Released()
        {
            if (function != null)
                function.DangerousRelease();
        }
    }
}
