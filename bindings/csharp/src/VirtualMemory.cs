using System;

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
    }
}
