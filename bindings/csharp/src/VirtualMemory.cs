using System;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// Device memory with no address yet (cuabi_physical_memory): map it into
    /// an <see cref="AddressRange"/> to use it. Its size is a multiple of the
    /// device's granularity (<c>device.GetVmGranularity(out min, out rec)</c>).
    /// Made by <c>PhysicalMemory.Create(device, bytes, PhysicalMemoryFlags.Exportable)</c>,
    /// or by <c>PhysicalMemory.ImportFd(device, fd, bytes)</c> in the process
    /// another one sent <see cref="ExportFd"/>'s descriptor to (over a Unix socket).
    /// </summary>
    public sealed partial class PhysicalMemory : IDisposable
    {
    }

    /// <summary>
    /// Reserved device addresses with no memory behind them
    /// (cuabi_address_range): <c>Map</c> physical memory into it,
    /// <c>SetAccess</c> for other devices, and use it through
    /// <see cref="Buffer{T}"/>. It keeps what is mapped into it alive.
    /// </summary>
    public sealed partial class AddressRange : IDisposable
    {
        /// <summary>
        /// A buffer of <paramref name="count"/> elements over the range from byte
        /// <paramref name="offset"/>, used by <paramref name="device"/>, which
        /// must have access to every byte (cuabi_buffer_from_range). It keeps the
        /// range alive, and the range cannot be unmapped while it lives.
        /// </summary>
        /// <param name="device">The device whose work uses the buffer.</param>
        /// <param name="offset">Where the buffer starts, in bytes from the range's start.</param>
        /// <param name="count">Number of elements.</param>
        public DeviceBuffer<T> Buffer<T>(Device device, long offset, long count) where T : struct
        {
            if (device == null)
                throw new ArgumentNullException("device");
            Ranges.NotNegative(offset, "offset");
            UIntPtr bytes = Ranges.Bytes(count, Element<T>.Require(), "count");
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_from_range(Handle, device.Handle, (UIntPtr)(ulong)offset, bytes, out h));
            return new DeviceBuffer<T>(h);
        }
    }

    public sealed partial class Device
    {
        /// <summary>
        /// A buffer that grows in place (<see cref="DeviceBuffer{T}.Grow"/>):
        /// room for <paramref name="reserveCount"/> elements reserved once,
        /// <paramref name="count"/> of them mapped now and more as it grows, so
        /// its address and contents stay. Both byte sizes are multiples of the
        /// device's minimum granularity. It is a <see cref="DeviceBuffer{T}"/>
        /// like any other (copies, kernels, range checks).
        /// </summary>
        /// <param name="count">Elements mapped now (0 allowed).</param>
        /// <param name="reserveCount">The most elements it can grow to.</param>
        public DeviceBuffer<T> AllocateGrowable<T>(long count, long reserveCount) where T : struct
        {
            int size = Element<T>.Require();
            UIntPtr bytes = Ranges.Bytes(count, size, "count");
            UIntPtr reserve = Ranges.Bytes(reserveCount, size, "reserveCount");
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_alloc_growable(Handle, bytes, reserve, out h));
            return new DeviceBuffer<T>(h);
        }
    }
}
