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
            if (!PlainData.Is(typeof(T)))
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

        /// <summary>Bytes per element; throws when T cannot be copied as raw bytes.</summary>
        internal static int Require()
        {
            if (Size <= 0)
                throw new ArgumentException(typeof(T).FullName +
                    " cannot be copied to or from the device: it holds references; use a value type made of numbers, enums, pointers and such structs");
            return Size;
        }

        /// <summary>
        /// The address of element <paramref name="index"/> of the <paramref name="total"/> elements
        /// from <paramref name="start"/>, once <paramref name="count"/> elements from it are known
        /// to fit; <paramref name="what"/> names the memory in the message.
        /// </summary>
        internal static IntPtr At(IntPtr start, long total, long index, long count, string what)
        {
            if (index + count > total)
                throw new ArgumentException(string.Format(
                    "{0} elements from index {1} reach past the end of the {2} ({3} elements)", count, index, what, total));
            return new IntPtr(start.ToInt64() + index * Size);
        }

        /// <summary>
        /// Copies <paramref name="count"/> elements between host memory at
        /// <paramref name="address"/> and <paramref name="array"/> from
        /// <paramref name="index"/> (checked by the caller): into the array when
        /// <paramref name="toArray"/>, else out of it. The caller keeps the memory alive.
        /// </summary>
        internal static unsafe void HostCopy(IntPtr address, T[] array, int index, int count, bool toArray)
        {
            if (count == 0)
                return;
            long bytes = (long)count * Size;
            var pin = GCHandle.Alloc(array, GCHandleType.Pinned);
            try
            {
                void* managed = (void*)Marshal.UnsafeAddrOfPinnedArrayElement(array, index);
                if (toArray)
                    Buffer.MemoryCopy((void*)address, managed, bytes, bytes);
                else
                    Buffer.MemoryCopy(managed, (void*)address, bytes, bytes);
            }
            finally
            {
                pin.Free();
            }
        }
    }

    /// <summary>Which types are plain data: numbers, enums, pointers and structs made only of those.</summary>
    /// <remarks>What may be copied as raw bytes. (Mono pins arrays of any struct, so pinning alone does not tell.)</remarks>
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
            NotNegative(index, arrayName + "Index");
            NotNegative(count, "count");
            if ((long)index + count > arrayLength)
                throw new ArgumentException(string.Format(
                    "{0} elements from index {1} reach past the end of {2} (length {3})", count, index, arrayName, arrayLength));
        }

        /// <summary><paramref name="value"/>, refused with an <see cref="ArgumentOutOfRangeException"/> for <paramref name="name"/> when negative.</summary>
        internal static long NotNegative(long value, string name)
        {
            if (value < 0)
                throw new ArgumentOutOfRangeException(name, value, "cannot be negative");
            return value;
        }

        internal static UIntPtr Bytes(long elements, int elementSize, string what)
        {
            NotNegative(elements, what);
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
    public abstract partial class DeviceMemory : IDisposable, IArgumentObject
    {
        internal DeviceMemory(SafeBufferHandle handle)
        {
            this.handle = handle;
            try
            {
                DevicePointer = Pointer;
                SizeInBytes = Size;
            }
            catch
            {
                handle.Dispose();
                throw;
            }
        }

        /// <summary>Memory whose address and size come with the handle (allocated in one call, or wrapped).</summary>
        internal DeviceMemory(SafeBufferHandle handle, ulong pointer, long bytes)
        {
            this.handle = handle;
            DevicePointer = pointer;
            SizeInBytes = bytes;
        }

        /// <summary>The raw CUdeviceptr, for interop.</summary>
        public ulong DevicePointer { get; private set; }

        /// <summary>A growable buffer grew to <paramref name="bytes"/>.</summary>
        internal void Resized(long bytes)
        {
            SizeInBytes = bytes;
        }

        /// <summary>The device pointer as a launch argument; <see cref="ObjectDisposedException"/> once disposed.</summary>
        internal ulong LaunchPointer
        {
            get
            {
                handle.ThrowIfClosed(this);
                return DevicePointer;
            }
        }

        /// <summary>The size in bytes.</summary>
        public long SizeInBytes { get; private set; }

        /// <summary>The size of an IPC handle in bytes (CUABI_IPC_HANDLE_SIZE, 128).</summary>
        public const int IpcHandleSize = NativeMethods.CUABI_IPC_HANDLE_SIZE;

        /// <summary>
        /// How a copy from <paramref name="source"/> into this memory travels now:
        /// on one device, directly between two devices (peer access enabled), or
        /// through host memory. Copies between devices work either way.
        /// </summary>
        /// <param name="source">The memory copied from.</param>
        public CopyPath GetCopyPathFrom(DeviceMemory source)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            return GetCopyPath(source);
        }
    }

    /// <summary>Reads an IPC handle through a (pointer, size) call, and passes bytes (an IPC handle's, an image's) to one.</summary>
    internal static class Ipc
    {
        private static readonly byte[] Empty = new byte[1];

        internal delegate CudaStatus Writer(IntPtr handle, UIntPtr size);

        internal static unsafe byte[] Handle(Writer write)
        {
            var bytes = new byte[NativeMethods.CUABI_IPC_HANDLE_SIZE];
            fixed (byte* p = bytes)
                Errors.Check(write((IntPtr)p, (UIntPtr)(uint)bytes.Length));
            return bytes;
        }

        /// <summary>Calls <paramref name="open"/> with the bytes pinned; their length is the library's to check. Null is refused naming <paramref name="name"/>.</summary>
        internal static unsafe CudaStatus Open(byte[] handle, Writer open, string name = "handle")
        {
            if (handle == null)
                throw new ArgumentNullException(name);
            // An empty array is passed as a real address of 0 bytes, so that
            // the library's refusal names the size, not a NULL.
            fixed (byte* p = handle.Length == 0 ? Empty : handle)
                return open((IntPtr)p, (UIntPtr)(uint)handle.Length);
        }
    }

    /// <summary>
    /// Device memory holding elements of <typeparamref name="T"/>. Copies are
    /// checked against the buffer's size by the library (a range past the end
    /// throws <see cref="CudaException"/> with <see cref="CudaStatus.OutOfRange"/>).
    /// </summary>
    /// <typeparam name="T">A blittable value type (float, int, a struct of such, ...).</typeparam>
    public sealed partial class DeviceBuffer<T> : DeviceMemory where T : struct
    {
        private DeviceBuffer(SafeBufferHandle handle, ulong pointer, long count)
            : base(handle, pointer, count * Element<T>.Size)
        {
            Count = count;
        }

        /// <summary>A buffer over a handle the library just made; its count is its size in whole elements.</summary>
        internal DeviceBuffer(SafeBufferHandle handle) : base(handle)
        {
            Count = SizeInBytes / Element<T>.Require();
        }

        /// <summary>
        /// Opens, in this process, device memory another process exported with
        /// <see cref="DeviceMemory.GetIpcHandle"/>. Disposing the buffer unmaps
        /// the memory; the exporting process owns it and must keep it alive
        /// meanwhile. <see cref="Count"/> is the exported size in whole elements.
        /// </summary>
        /// <param name="device">The device to map the memory on.</param>
        /// <param name="handle">The handle's bytes, as <see cref="DeviceMemory.GetIpcHandle"/> gave them.</param>
        /// <param name="pool">
        /// For memory allocated from a memory pool: that pool, imported in this
        /// process with <see cref="MemoryPool.ImportFd"/>; otherwise null.
        /// </param>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.InvalidArgument"/> naming why for a handle from
        /// this very process (use the buffer itself), a damaged or foreign one
        /// (not <see cref="DeviceMemory.IpcHandleSize"/> bytes, a bad checksum,
        /// an event's handle); a CUDA error when the memory was freed or its
        /// process ended.
        /// </exception>
        public static DeviceBuffer<T> OpenIpc(Device device, byte[] handle, MemoryPool pool = null)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            Element<T>.Require();
            SafeDeviceHandle d = device.Handle;
            SafeMemoryPoolHandle p = MemoryPool.HandleOf(pool);
            SafeBufferHandle h = null;
            Errors.Check(Ipc.Open(handle, delegate(IntPtr bytes, UIntPtr size)
            {
                return NativeMethods.cuabi_buffer_open_ipc(d, p, bytes, size, out h);
            }));
            return new DeviceBuffer<T>(h);
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
            return new DeviceBuffer<T>(h, devicePointer, count); // the address and size it wraps
        }

        /// <summary>Number of elements.</summary>
        public long Count { get; private set; }

        /// <summary>
        /// Grows a growable buffer (<see cref="Device.AllocateGrowable{T}"/>) to
        /// <paramref name="count"/> elements in place: its address and contents
        /// stay, the new elements are uninitialised, and <see cref="Count"/>
        /// follows. Past its reservation (<see cref="DeviceMemory.ReservedSize"/>)
        /// throws <see cref="CudaStatus.OutOfRange"/>; another kind of buffer, a
        /// smaller size or one off the granularity, <see cref="CudaStatus.InvalidArgument"/>.
        /// </summary>
        /// <param name="count">The new number of elements.</param>
        public void Grow(long count)
        {
            UIntPtr bytes = Ranges.Bytes(count, Element<T>.Require(), "count");
            Errors.Check(NativeMethods.cuabi_buffer_grow(Handle, bytes));
            Resized(checked((long)bytes.ToUInt64()));
            Count = count;
        }

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
            ArrayCopy(source, "source", sourceIndex, destinationIndex, "destinationIndex", count, true);
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
            ArrayCopy(destination, "destination", destinationIndex, sourceIndex, "sourceIndex", count, false);
        }

        /// <summary>
        /// Copies <paramref name="count"/> elements between the host <paramref name="array"/> from
        /// <paramref name="arrayIndex"/> (pinned for the call) and the buffer from element
        /// <paramref name="index"/>: into the buffer when <paramref name="toBuffer"/>, else out of it.
        /// </summary>
        private void ArrayCopy(T[] array, string arrayName, int arrayIndex, long index, string indexName, int count, bool toBuffer)
        {
            if (array == null)
                throw new ArgumentNullException(arrayName);
            int size = Element<T>.Require();
            Ranges.CheckArray(array.Length, arrayIndex, count, arrayName);
            UIntPtr offset = Ranges.Bytes(index, size, indexName);
            var h = Handle;
            var pin = GCHandle.Alloc(array, GCHandleType.Pinned);
            try
            {
                IntPtr host = count == 0 ? IntPtr.Zero : Marshal.UnsafeAddrOfPinnedArrayElement(array, arrayIndex);
                UIntPtr bytes = Ranges.Bytes(count, size, "count");
                Errors.Check(toBuffer ? NativeMethods.cuabi_buffer_copy_from_host(h, offset, host, bytes)
                                      : NativeMethods.cuabi_buffer_copy_to_host(h, offset, host, bytes));
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

        // ------------------------------------------------------------------
        // Fills
        // ------------------------------------------------------------------

        /// <summary>
        /// Sets every element to <paramref name="value"/>. Elements of 1, 2 or
        /// 4 bytes (byte, ushort, short, int, uint, float, ...): the value's
        /// bytes are repeated. For bytes of other element types see
        /// <see cref="DeviceMemory.Memset(byte)"/>.
        /// </summary>
        /// <param name="value">The value.</param>
        /// <exception cref="ArgumentException"><typeparamref name="T"/> is not 1, 2 or 4 bytes.</exception>
        public void Fill(T value)
        {
            Fill(value, 0, Count);
        }

        /// <summary>Sets <paramref name="count"/> elements from <paramref name="index"/> to <paramref name="value"/>; see <see cref="Fill(T)"/>.</summary>
        /// <param name="value">The value.</param>
        /// <param name="index">The first element.</param>
        /// <param name="count">How many elements; the library checks the range against the buffer.</param>
        public void Fill(T value, long index, long count)
        {
            uint size;
            uint bits = FillBits(value, out size);
            Errors.Check(NativeMethods.cuabi_buffer_fill(Handle, Ranges.Bytes(index, (int)size, "index"), bits, size,
                Ranges.Bytes(count, 1, "count")));
        }

        /// <summary>Sets every element to <paramref name="value"/>, in order on <paramref name="stream"/>; see <see cref="Fill(T)"/>.</summary>
        /// <param name="value">The value.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void FillAsync(T value, CudaStream stream)
        {
            FillAsync(value, 0, Count, stream);
        }

        /// <summary>Sets <paramref name="count"/> elements from <paramref name="index"/> to <paramref name="value"/>, in order on <paramref name="stream"/>.</summary>
        /// <param name="value">The value.</param>
        /// <param name="index">The first element.</param>
        /// <param name="count">How many elements; the library checks the range against the buffer.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void FillAsync(T value, long index, long count, CudaStream stream)
        {
            uint size;
            uint bits = FillBits(value, out size);
            Errors.Check(NativeMethods.cuabi_buffer_fill_async(Handle, Ranges.Bytes(index, (int)size, "index"), bits, size,
                Ranges.Bytes(count, 1, "count"), CudaStream.HandleOf(stream)));
        }

        /// <summary>The value's bytes as the low bits of a 32-bit word, and its size.</summary>
        private static unsafe uint FillBits(T value, out uint size)
        {
            int s = Element<T>.Require();
            if (s != 1 && s != 2 && s != 4)
                throw new ArgumentException(string.Format(
                    "Fill writes elements of 1, 2 or 4 bytes; {0} is {1} bytes (use Memset for bytes)", typeof(T).FullName, s), "value");
            var one = new[] { value };
            uint bits = 0;
            var pin = GCHandle.Alloc(one, GCHandleType.Pinned);
            try
            {
                Buffer.MemoryCopy((void*)pin.AddrOfPinnedObject(), &bits, 4, s); // little-endian: the low bytes
            }
            finally
            {
                pin.Free();
            }
            size = (uint)s;
            return bits;
        }

        // ------------------------------------------------------------------
        // Managed memory: the host view, prefetches and advice
        // ------------------------------------------------------------------

        /// <summary>Reads element <paramref name="index"/> of managed memory through the host view (a plain host read).</summary>
        /// <param name="index">Element index.</param>
        public T ReadHost(long index)
        {
            var one = new T[1];
            ReadHost(index, one, 0, 1);
            return one[0];
        }

        /// <summary>Writes element <paramref name="index"/> of managed memory through the host view (a plain host write).</summary>
        /// <param name="index">Element index.</param>
        /// <param name="value">The value.</param>
        public void WriteHost(long index, T value)
        {
            WriteHost(new[] { value }, 0, index, 1);
        }

        /// <summary>Copies the start of managed memory into all of <paramref name="destination"/> through the host view (no driver copy).</summary>
        /// <param name="destination">The array to fill.</param>
        public void ReadHost(T[] destination)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            ReadHost(0, destination, 0, destination.Length);
        }

        /// <summary>Copies <paramref name="count"/> elements of managed memory into <paramref name="destination"/> through the host view.</summary>
        /// <param name="sourceIndex">First element of the buffer.</param>
        /// <param name="destination">The array to fill.</param>
        /// <param name="destinationIndex">First element of <paramref name="destination"/>.</param>
        /// <param name="count">Number of elements.</param>
        public void ReadHost(long sourceIndex, T[] destination, int destinationIndex, int count)
        {
            if (destination == null)
                throw new ArgumentNullException("destination");
            Ranges.CheckArray(destination.Length, destinationIndex, count, "destination");
            Element<T>.HostCopy(HostAddress(sourceIndex, count), destination, destinationIndex, count, true);
            GC.KeepAlive(this);
        }

        /// <summary>Copies all of <paramref name="source"/> to the start of managed memory through the host view (no driver copy).</summary>
        /// <param name="source">The values.</param>
        public void WriteHost(T[] source)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            WriteHost(source, 0, 0, source.Length);
        }

        /// <summary>Copies <paramref name="count"/> elements of <paramref name="source"/> into managed memory through the host view.</summary>
        /// <param name="source">The values.</param>
        /// <param name="sourceIndex">First element of <paramref name="source"/>.</param>
        /// <param name="destinationIndex">First element of the buffer.</param>
        /// <param name="count">Number of elements.</param>
        public void WriteHost(T[] source, int sourceIndex, long destinationIndex, int count)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            Ranges.CheckArray(source.Length, sourceIndex, count, "source");
            Element<T>.HostCopy(HostAddress(destinationIndex, count), source, sourceIndex, count, false);
            GC.KeepAlive(this);
        }

#if CUABI_SPAN
        /// <summary>
        /// Managed memory as a span over its host view (valid until disposal;
        /// see <see cref="Device.AllocateManaged{T}"/> for when the host may touch it).
        /// </summary>
        /// <exception cref="CudaException"><see cref="CudaStatus.InvalidArgument"/> for memory of another kind.</exception>
        public unsafe Span<T> AsSpan()
        {
            IntPtr p = HostPointer;
            if (Count > int.MaxValue)
                throw new InvalidOperationException("the buffer holds more elements than a span can");
            return new Span<T>((void*)p, (int)Count);
        }
#endif

        /// <summary>The host address of element <paramref name="index"/>, once <paramref name="count"/> elements from it are known to fit.</summary>
        private IntPtr HostAddress(long index, long count)
        {
            Element<T>.Require();
            Ranges.NotNegative(index, "index");
            Ranges.NotNegative(count, "count");
            // HostPointer is refused by the library for memory that is not managed.
            return Element<T>.At(HostPointer, Count, index, count, "managed buffer");
        }

        /// <summary>"DeviceBuffer&lt;T&gt;[count]".</summary>
        public override string ToString()
        {
            return "DeviceBuffer<" + typeof(T).Name + ">[" + Count + "]";
        }

        /// <summary>
        /// <paramref name="count"/> elements of device memory on <paramref name="device"/>, the handle and
        /// address from one call: in stream order on <paramref name="stream"/> from <paramref name="pool"/>
        /// when <paramref name="streamOrdered"/>, else at once.
        /// </summary>
        internal static DeviceBuffer<T> Allocate(Device device, long count, bool streamOrdered = false,
            CudaStream stream = null, MemoryPool pool = null)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            UIntPtr bytes = Ranges.Bytes(count, Element<T>.Require(), "count");
            SafeBufferHandle h;
            ulong ptr;
            if (streamOrdered)
                Errors.Check(NativeMethods.cuabi_buffer_alloc_async_with_pointer(device.Handle, bytes,
                    MemoryPool.HandleOf(pool), CudaStream.HandleOf(stream), out h, out ptr));
            else
                Errors.Check(NativeMethods.cuabi_buffer_alloc_with_pointer(device.Handle, bytes, out h, out ptr));
            return new DeviceBuffer<T>(h, ptr, count);
        }
    }
}
