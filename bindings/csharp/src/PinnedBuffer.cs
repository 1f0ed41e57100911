using System;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// Page-locked host memory holding elements of <typeparamref name="T"/>:
    /// the host side of asynchronous copies. Either allocated by the driver
    /// (<see cref="Device.AllocatePinned{T}"/>) or a managed array pinned and
    /// registered in place (<see cref="Register"/>).
    /// </summary>
    /// <typeparam name="T">A blittable value type.</typeparam>
    public sealed partial class PinnedBuffer<T> : IDisposable where T : struct
    {
        private readonly IntPtr pointer;

        /// <summary>Memory of <paramref name="count"/> elements the library just allocated, or registered (<paramref name="array"/>'s).</summary>
        internal PinnedBuffer(SafeHostBufferHandle handle, long count, T[] array = null)
        {
            this.handle = handle;
            pointer = PointerOf(handle);
            Array = array;
            Count = count;
        }

        /// <summary>
        /// Pins <paramref name="array"/> in place and registers it with the
        /// driver, so that async copies use it directly. The array stays pinned
        /// until this object is disposed or finalized.
        /// </summary>
        /// <param name="device">A device (the memory is usable from every context).</param>
        /// <param name="array">The array to pin (not empty).</param>
        /// <exception cref="ArgumentException"><paramref name="array"/> is empty.</exception>
        public static PinnedBuffer<T> Register(Device device, T[] array)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            if (array == null)
                throw new ArgumentNullException("array");
            if (array.Length == 0)
                throw new ArgumentException("is empty: there is nothing to pin", "array");
            UIntPtr bytes = Ranges.Bytes(array.Length, Element<T>.Require(), "array.Length");
            var pin = GCHandle.Alloc(array, GCHandleType.Pinned);
            SafeHostBufferHandle h = null;
            try
            {
                Errors.Check(NativeMethods.cuabi_host_buffer_register(device.Handle, pin.AddrOfPinnedObject(), bytes, out h));
                h.AdoptPin(pin); // from here on the handle unpins after unregistering
            }
            catch
            {
                if (h == null || h.IsInvalid)
                    pin.Free();
                throw;
            }
            return new PinnedBuffer<T>(h, array.Length, array);
        }

        /// <summary>Number of elements.</summary>
        public long Count { get; private set; }

        /// <summary>The size in bytes.</summary>
        public long SizeInBytes
        {
            get { return Count * Element<T>.Size; }
        }

        /// <summary>The host address of the first element (valid until disposal).</summary>
        public IntPtr Pointer
        {
            get { handle.ThrowIfClosed(this); return pointer; }
        }

        /// <summary>The registered array, or null for memory from <see cref="Device.AllocatePinned{T}"/>.</summary>
        public T[] Array { get; }

        /// <summary>One element (reads and writes host memory; not for bulk use: see <see cref="CopyFrom(T[])"/>).</summary>
        /// <param name="index">Element index.</param>
        public T this[long index]
        {
            get
            {
                var one = new T[1];
                HostCopy(index, one, true);
                return one[0];
            }
            set { HostCopy(index, new[] { value }, false); }
        }

        /// <summary>Copies <paramref name="source"/> to the start of this memory (a plain host copy).</summary>
        /// <param name="source">The values to copy.</param>
        public void CopyFrom(T[] source)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            HostCopy(0, source, false);
        }

        /// <summary>Copies the start of this memory into all of <paramref name="destination"/> (a plain host copy).</summary>
        /// <param name="destination">The array to fill.</param>
        public void CopyTo(T[] destination)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            HostCopy(0, destination, true);
        }

        /// <summary>All elements, copied to a new array.</summary>
        public T[] ToArray()
        {
            var result = new T[Element<T>.Length(Count, "an array")];
            CopyTo(result);
            return result;
        }

        /// <summary>The one host copy: all of <paramref name="array"/> and this memory from element <paramref name="index"/>, into the array when <paramref name="toArray"/>, else out of it.</summary>
        private void HostCopy(long index, T[] array, bool toArray)
        {
            Element<T>.HostCopy(AddressOf(index, array.Length), array, 0, array.Length, toArray, this);
        }

#if CUABI_SPAN
        /// <summary>The memory as a span (valid until disposal).</summary>
        public unsafe Span<T> AsSpan()
        {
            return new Span<T>((void*)Pointer, Element<T>.Length(Count, "a span"));
        }
#endif

        /// <summary>The address of element <paramref name="index"/>, after checking that <paramref name="count"/> elements from it fit.</summary>
        internal IntPtr AddressOf(long index, long count)
        {
            handle.ThrowIfClosed(this);
            Ranges.NotNegative(index, "index");
            Ranges.NotNegative(count, "count");
            return Element<T>.At(pointer, Count, index, count, "pinned buffer");
        }

        private static IntPtr PointerOf(SafeHostBufferHandle h)
        {
            IntPtr p;
            CudaStatus status = NativeMethods.cuabi_host_buffer_get_pointer(h, out p);
            if (status != CudaStatus.Success)
            {
                var e = Errors.FromLastError(status);
                h.Dispose();
                throw e;
            }
            return p;
        }
    }
}
