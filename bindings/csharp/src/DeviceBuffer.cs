using System;
using System.Reflection;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>The in-memory size of an element type, and the check that it may be copied as raw bytes.</summary>
    internal static class Element<T> where T : struct
    {
        /// <summary>Bytes per element, measured as the stride of a pinned array; 0 when T holds references.</summary>
        internal static readonly int Size = Measure();

        private static int Measure()
        {
            if (!IsPlainData(typeof(T)))
                return 0;
            var probe = new T[2];
            GCHandle pin;
            try
            {
                pin = GCHandle.Alloc(probe, GCHandleType.Pinned);
            }
            catch (ArgumentException)
            {
                return 0; // holds references or is otherwise not blittable
            }
            try
            {
                return (int)((long)Marshal.UnsafeAddrOfPinnedArrayElement(probe, 1) -
                             (long)Marshal.UnsafeAddrOfPinnedArrayElement(probe, 0));
            }
            finally
            {
                pin.Free();
            }
        }

        // Primitives, enums, pointers, and structs made only of those: what
        // may be copied as raw bytes. (Mono pins arrays of any struct, so
        // pinning alone does not tell.)
        private static bool IsPlainData(Type t)
        {
            return PlainData.Is(t);
        }

        /// <summary>Bytes per element; throws when T cannot be copied as raw bytes.</summary>
        internal static int Require()
        {
            if (Size <= 0)
                throw new ArgumentException(typeof(T).FullName +
                    " cannot be copied to or from the device: it holds references; use a value type made of numbers, enums, pointers and such structs");
            return Size;
        }
    }

    /// <summary>Which types are plain data: numbers, enums, pointers and structs made only of those.</summary>
    internal static class PlainData
    {
        internal static bool Is(Type t)
        {
            if (t.IsPrimitive || t.IsEnum || t.IsPointer)
                return true;
            if (!t.IsValueType)
                return false;
            foreach (var f in t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
                if (!Is(f.FieldType))
                    return false;
            return true;
        }
    }

    /// <summary>Helpers shared by the buffer types.</summary>
    internal static class Ranges
    {
        internal static void CheckArray(int arrayLength, int index, int count, string arrayName)
        {
            if (index < 0)
                throw new ArgumentOutOfRangeException(arrayName + "Index", index, "cannot be negative");
            if (count < 0)
                throw new ArgumentOutOfRangeException("count", count, "cannot be negative");
            if ((long)index + count > arrayLength)
                throw new ArgumentException(string.Format(
                    "{0} elements from index {1} reach past the end of {2} (length {3})", count, index, arrayName, arrayLength));
        }

        internal static UIntPtr Bytes(long elements, int elementSize, string what)
        {
            if (elements < 0)
                throw new ArgumentOutOfRangeException(what, elements, "cannot be negative");
            if (elementSize > 0 && (ulong)elements > ulong.MaxValue / (ulong)elementSize)
                throw new ArgumentOutOfRangeException(what, elements, string.Format(
                    "{0} elements of {1} bytes are more bytes than a 64-bit size can hold", elements, elementSize));
            return (UIntPtr)checked((ulong)elements * (ulong)elementSize);
        }
    }

    /// <summary>
    /// Device memory as the launch sees it: a handle and its device address.
    /// A <see cref="DeviceMemory"/> passed to <see cref="Kernel.Launch(LaunchConfig, CudaStream, object[])"/>
    /// becomes its 8-byte device pointer.
    /// </summary>
    public abstract class DeviceMemory : IDisposable
    {
        private readonly SafeBufferHandle handle;

        internal DeviceMemory(SafeBufferHandle handle)
        {
            this.handle = handle;
            try
            {
                ulong ptr;
                UIntPtr bytes;
                Errors.Check(NativeMethods.cuabi_buffer_get_pointer(handle, out ptr));
                Errors.Check(NativeMethods.cuabi_buffer_get_size(handle, out bytes));
                DevicePointer = ptr;
                SizeInBytes = (long)bytes.ToUInt64();
            }
            catch
            {
                handle.Dispose();
                throw;
            }
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeBufferHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>The raw CUdeviceptr, for interop.</summary>
        public ulong DevicePointer { get; private set; }

        /// <summary>The device pointer as a launch argument; <see cref="ObjectDisposedException"/> once disposed.</summary>
        internal ulong LaunchPointer
        {
            get
            {
                handle.ThrowIfClosed(this);
                return DevicePointer;
            }
        }

        /// <summary>Whether the memory was disposed (or released by its finalizer).</summary>
        internal bool IsDisposed
        {
            get { return handle.IsClosed; }
        }

        /// <summary>The size in bytes.</summary>
        public long SizeInBytes { get; private set; }

        /// <summary>The ordinal of the device the memory lives on.</summary>
        public int DeviceOrdinal
        {
            get
            {
                int ordinal;
                Errors.Check(NativeMethods.cuabi_buffer_get_device_ordinal(Handle, out ordinal));
                return ordinal;
            }
        }

        /// <summary>Sets every byte to <paramref name="value"/>.</summary>
        /// <param name="value">The byte value.</param>
        public void Memset(byte value)
        {
            Errors.Check(NativeMethods.cuabi_buffer_memset(Handle, UIntPtr.Zero, value, (UIntPtr)(ulong)SizeInBytes));
        }

        /// <summary>Sets every byte to <paramref name="value"/>, ordered on <paramref name="stream"/>.</summary>
        /// <param name="value">The byte value.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void MemsetAsync(byte value, CudaStream stream)
        {
            Errors.Check(NativeMethods.cuabi_buffer_memset_async(Handle, UIntPtr.Zero, value, (UIntPtr)(ulong)SizeInBytes,
                CudaStream.HandleOf(stream)));
        }

        /// <summary>Frees the memory (for wrapped memory: forgets it).</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
    }

    /// <summary>
    /// Device memory holding elements of <typeparamref name="T"/>. Copies are
    /// checked against the buffer's size by the library (a range past the end
    /// throws <see cref="CudaException"/> with <see cref="CudaStatus.OutOfRange"/>).
    /// </summary>
    /// <typeparam name="T">A blittable value type (float, int, a struct of such, ...).</typeparam>
    public sealed class DeviceBuffer<T> : DeviceMemory where T : struct
    {
        internal DeviceBuffer(Device device, long count) : base(Allocate(device, count))
        {
            Count = count;
        }

        private DeviceBuffer(SafeBufferHandle handle, long count) : base(handle)
        {
            Count = count;
        }

        /// <summary>
        /// Wraps device memory owned by someone else (CuPy, PyTorch, the CUDA
        /// runtime) without taking ownership; the owner keeps it alive.
        /// </summary>
        /// <param name="device">The device the memory belongs to.</param>
        /// <param name="devicePointer">The raw CUdeviceptr.</param>
        /// <param name="count">Number of elements.</param>
        public static DeviceBuffer<T> Wrap(Device device, ulong devicePointer, long count)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            UIntPtr bytes = Ranges.Bytes(count, Element<T>.Require(), "count");
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_wrap(device.Handle, devicePointer, bytes, out h));
            return new DeviceBuffer<T>(h, count);
        }

        /// <summary>Number of elements.</summary>
        public long Count { get; private set; }

        /// <summary>Copies all of <paramref name="source"/> to the start of the buffer.</summary>
        /// <param name="source">The host values.</param>
        public void CopyFrom(T[] source)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            CopyFrom(source, 0, 0, source.Length);
        }

        /// <summary>Copies <paramref name="count"/> elements from <paramref name="source"/> into the buffer.</summary>
        /// <param name="source">The host values.</param>
        /// <param name="sourceIndex">First element of <paramref name="source"/> to copy.</param>
        /// <param name="destinationIndex">First element of the buffer to write.</param>
        /// <param name="count">Number of elements.</param>
        public void CopyFrom(T[] source, int sourceIndex, long destinationIndex, int count)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            int size = Element<T>.Require();
            Ranges.CheckArray(source.Length, sourceIndex, count, "source");
            UIntPtr offset = Ranges.Bytes(destinationIndex, size, "destinationIndex");
            var h = Handle;
            var pin = GCHandle.Alloc(source, GCHandleType.Pinned);
            try
            {
                IntPtr src = count == 0 ? IntPtr.Zero : Marshal.UnsafeAddrOfPinnedArrayElement(source, sourceIndex);
                Errors.Check(NativeMethods.cuabi_buffer_copy_from_host(h, offset, src, Ranges.Bytes(count, size, "count")));
            }
            finally
            {
                pin.Free();
            }
        }

        /// <summary>Copies the start of the buffer into all of <paramref name="destination"/>.</summary>
        /// <param name="destination">The host array to fill.</param>
        public void CopyTo(T[] destination)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            CopyTo(0, destination, 0, destination.Length);
        }

        /// <summary>Copies <paramref name="count"/> elements of the buffer into <paramref name="destination"/>.</summary>
        /// <param name="sourceIndex">First element of the buffer to read.</param>
        /// <param name="destination">The host array to fill.</param>
        /// <param name="destinationIndex">First element of <paramref name="destination"/> to write.</param>
        /// <param name="count">Number of elements.</param>
        public void CopyTo(long sourceIndex, T[] destination, int destinationIndex, int count)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            int size = Element<T>.Require();
            Ranges.CheckArray(destination.Length, destinationIndex, count, "destination");
            UIntPtr offset = Ranges.Bytes(sourceIndex, size, "sourceIndex");
            var h = Handle;
            var pin = GCHandle.Alloc(destination, GCHandleType.Pinned);
            try
            {
                IntPtr dst = count == 0 ? IntPtr.Zero : Marshal.UnsafeAddrOfPinnedArrayElement(destination, destinationIndex);
                Errors.Check(NativeMethods.cuabi_buffer_copy_to_host(h, offset, dst, Ranges.Bytes(count, size, "count")));
            }
            finally
            {
                pin.Free();
            }
        }

        /// <summary>The whole buffer, copied to a new array.</summary>
        public T[] ToArray()
        {
            if (Count > int.MaxValue)
                throw new InvalidOperationException("the buffer holds more elements than an array can");
            var result = new T[Count];
            CopyTo(result);
            return result;
        }

        /// <summary>Copies pinned host memory into the buffer, ordered on <paramref name="stream"/> (asynchronous).</summary>
        /// <param name="source">Pinned host memory; it must stay alive until the stream reaches the copy.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void CopyFromAsync(PinnedBuffer<T> source, CudaStream stream)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            CopyFromAsync(source, 0, 0, source.Count, stream);
        }

        /// <summary>Copies a range of pinned host memory into the buffer, ordered on <paramref name="stream"/>.</summary>
        /// <param name="source">Pinned host memory; it must stay alive until the stream reaches the copy.</param>
        /// <param name="sourceIndex">First element of <paramref name="source"/>.</param>
        /// <param name="destinationIndex">First element of the buffer.</param>
        /// <param name="count">Number of elements.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void CopyFromAsync(PinnedBuffer<T> source, long sourceIndex, long destinationIndex, long count, CudaStream stream)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            int size = Element<T>.Require();
            IntPtr src = source.AddressOf(sourceIndex, count);
            Errors.Check(NativeMethods.cuabi_buffer_copy_from_host_async(Handle, Ranges.Bytes(destinationIndex, size, "destinationIndex"),
                src, Ranges.Bytes(count, size, "count"), CudaStream.HandleOf(stream)));
        }

        /// <summary>Copies the buffer into pinned host memory, ordered on <paramref name="stream"/> (asynchronous).</summary>
        /// <param name="destination">Pinned host memory; read it after the stream reached the copy.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void CopyToAsync(PinnedBuffer<T> destination, CudaStream stream)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            CopyToAsync(0, destination, 0, destination.Count, stream);
        }

        /// <summary>Copies a range of the buffer into pinned host memory, ordered on <paramref name="stream"/>.</summary>
        /// <param name="sourceIndex">First element of the buffer.</param>
        /// <param name="destination">Pinned host memory; read it after the stream reached the copy.</param>
        /// <param name="destinationIndex">First element of <paramref name="destination"/>.</param>
        /// <param name="count">Number of elements.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void CopyToAsync(long sourceIndex, PinnedBuffer<T> destination, long destinationIndex, long count, CudaStream stream)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            int size = Element<T>.Require();
            IntPtr dst = destination.AddressOf(destinationIndex, count);
            Errors.Check(NativeMethods.cuabi_buffer_copy_to_host_async(Handle, Ranges.Bytes(sourceIndex, size, "sourceIndex"),
                dst, Ranges.Bytes(count, size, "count"), CudaStream.HandleOf(stream)));
        }

        /// <summary>Copies all of another device buffer to the start of this one.</summary>
        /// <param name="source">The device buffer to copy.</param>
        public void CopyFrom(DeviceBuffer<T> source)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            Errors.Check(NativeMethods.cuabi_buffer_copy(Handle, UIntPtr.Zero, source.Handle, UIntPtr.Zero,
                (UIntPtr)(ulong)source.SizeInBytes));
        }

        /// <summary>Copies all of another device buffer to the start of this one, ordered on <paramref name="stream"/>.</summary>
        /// <param name="source">The device buffer to copy.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void CopyFromAsync(DeviceBuffer<T> source, CudaStream stream)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            Errors.Check(NativeMethods.cuabi_buffer_copy_async(Handle, UIntPtr.Zero, source.Handle, UIntPtr.Zero,
                (UIntPtr)(ulong)source.SizeInBytes, CudaStream.HandleOf(stream)));
        }

#if CUABI_SPAN
        /// <summary>Copies all of <paramref name="source"/> to the start of the buffer.</summary>
        /// <param name="source">The host values.</param>
        public unsafe void CopyFrom(ReadOnlySpan<T> source)
        {
            int size = Element<T>.Require();
            var h = Handle;
            ReadOnlySpan<byte> bytes = MemoryMarshal.AsBytes(source);
            fixed (byte* p = bytes)
                Errors.Check(NativeMethods.cuabi_buffer_copy_from_host(h, UIntPtr.Zero, (IntPtr)p,
                    Ranges.Bytes(source.Length, size, "source.Length")));
        }

        /// <summary>Copies the start of the buffer into all of <paramref name="destination"/>.</summary>
        /// <param name="destination">The host memory to fill.</param>
        public unsafe void CopyTo(Span<T> destination)
        {
            int size = Element<T>.Require();
            var h = Handle;
            Span<byte> bytes = MemoryMarshal.AsBytes(destination);
            fixed (byte* p = bytes)
                Errors.Check(NativeMethods.cuabi_buffer_copy_to_host(h, UIntPtr.Zero, (IntPtr)p,
                    Ranges.Bytes(destination.Length, size, "destination.Length")));
        }
#endif

        /// <summary>"DeviceBuffer&lt;T&gt;[count]".</summary>
        public override string ToString()
        {
            return "DeviceBuffer<" + typeof(T).Name + ">[" + Count + "]";
        }

        private static SafeBufferHandle Allocate(Device device, long count)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            UIntPtr bytes = Ranges.Bytes(count, Element<T>.Require(), "count");
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_alloc(device.Handle, bytes, out h));
            return h;
        }
    }
}
