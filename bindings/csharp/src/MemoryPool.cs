using System;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>Where managed memory is prefetched to, or what advice is about: a device, or the host.</summary>
    public struct MemoryLocation
    {
        private MemoryLocation(int value)
        {
            Value = value;
        }

        /// <summary>The host (CUABI_LOCATION_HOST).</summary>
        public static MemoryLocation Host
        {
            get { return new MemoryLocation(NativeMethods.CUABI_LOCATION_HOST); }
        }

        /// <summary>The device of ordinal <paramref name="ordinal"/>; the library checks it.</summary>
        /// <param name="ordinal">The device ordinal.</param>
        public static MemoryLocation OfDevice(int ordinal)
        {
            return new MemoryLocation(ordinal);
        }

        /// <summary>The device <paramref name="device"/>.</summary>
        /// <param name="device">The device.</param>
        public static MemoryLocation OfDevice(Device device)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            return new MemoryLocation(device.Ordinal);
        }

        /// <summary>True for the host.</summary>
        public bool IsHost
        {
            get { return Value == NativeMethods.CUABI_LOCATION_HOST; }
        }

        /// <summary>The device ordinal, or -1 (CUABI_LOCATION_HOST) for the host: the value the C API takes.</summary>
        public int Value { get; }

        /// <summary>"host" or "device N".</summary>
        public override string ToString()
        {
            return IsHost ? "host" : "device " + Value;
        }
    }

    /// <summary>A new memory pool's properties (<see cref="Device.CreateMemoryPool"/>).</summary>
    public sealed partial class MemoryPoolOptions
    {
        /// <summary>The most the pool may reserve, in bytes; 0 (the default): no limit but the device's.</summary>
        public long MaxBytes { get; set; }

        /// <summary>
        /// Memory the pool keeps reserved when a stream synchronizes instead of
        /// giving it back to the device, in bytes; 0 (the default) gives
        /// everything back. Can be changed later (<see cref="MemoryPool.ReleaseThreshold"/>).
        /// </summary>
        public long ReleaseThreshold { get; set; }

        /// <summary>Every flag at once.</summary>
        public MemoryPoolFlags Flags { get; set; }
    }

    /// <summary>
    /// A pool of device memory for stream-ordered allocation
    /// (<see cref="Device.AllocateAsync{T}"/>): made with
    /// <see cref="Device.CreateMemoryPool"/>, the device's default pool
    /// (<see cref="Device.GetDefaultMemoryPool"/>), or another process's pool
    /// (<see cref="ImportFd"/>).
    /// </summary>
    /// <remarks>
    /// Disposing a pool made here destroys it once every buffer allocated from
    /// it is freed (buffers keep their pool alive); disposing the default
    /// pool's object leaves the pool itself alone.
    /// </remarks>
    public sealed partial class MemoryPool : IDisposable
    {
    }
}
