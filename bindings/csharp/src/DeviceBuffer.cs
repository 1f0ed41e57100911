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

        /// <summary><paramref name="count"/> elements as the length of <paramref name="what"/> ("an array", "a span"); throws past an int.</summary>
        internal static int Length(long count, string what)
        {
            if (count > int.MaxValue)
                throw new InvalidOperationException("the buffer holds more elements than " + what + " can");
            return (int)count;
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
        /// <paramref name="toArray"/>, else out of it; <paramref name="owner"/>, which holds the
        /// memory, is kept alive until the copy is done.
        /// </summary>
        internal static unsafe void HostCopy(IntPtr address, T[] array, int index, int count, bool toArray, object owner)
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
                GC.KeepAlive(owner);
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
        /// <summary>Refuses a null <paramref name="array"/>, and a range of it that is negative or reaches past its end, naming <paramref name="arrayName"/>.</summary>
        internal static void CheckArray(Array array, int index, int count, string arrayName)
        {
            if (array == null)
                throw new ArgumentNullException(arrayName);
            NotNegative(index, arrayName + "Index");
            NotNegative(count, "count");
            if ((long)index + count > array.Length)
                throw new ArgumentException(string.Format(
                    "{0} elements from index {1} reach past the end of {2} (length {3})", count, index, arrayName, array.Length));
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

        /// <summary>The device pointer as a launch argument; <see cref="ObjectDisposedException"/> once disposed.</summary>
        internal ulong LaunchPointer
        {
            get
            {
                handle.ThrowIfClosed(this);
                return DevicePointer;
            }
        }

        /// <summary>The size in bytes (a growable buffer's grows: <see cref="DeviceBuffer{T}.Grow"/>).</summary>
        public long SizeInBytes { get; internal set; }

        /// <summary>The size of an IPC handle in bytes (CUABI_IPC_HANDLE_SIZE, 128).</summary>
        public const int IpcHandleSize = NativeMethods.CUABI_IPC_HANDLE_SIZE;
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
        internal DeviceBuffer(SafeBufferHandle handle, ulong pointer, long count)
            : base(handle, pointer, count * Element<T>.Size)
        {
            Count = count;
        }

        /// <summary>A buffer over a handle the library just made; its count is its size in whole elements.</summary>
        internal DeviceBuffer(SafeBufferHandle handle) : base(handle)
        {
            Count = SizeInBytes / Element<T>.Require();
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
            SizeInBytes = checked((long)bytes.ToUInt64());
            Count = count;
        }

        /// <summary>Copies <paramref name="count"/> elements from <paramref name="source"/> into the buffer.</summary>
        /// <param name="source">The host values.</param>
        /// <param name="sourceIndex">First element of <paramref name="source"/> to copy.</param>
        /// <param name="destinationIndex">First element of the buffer to write.</param>
        /// <param name="count">Number of elements.</param>
        public void CopyFrom(T[] source, int sourceIndex, long destinationIndex, int count)
        {
            ArrayCopy(source, "source", sourceIndex, destinationIndex, "destinationIndex", count, true, false);
        }

        /// <summary>Copies <paramref name="count"/> elements of the buffer into <paramref name="destination"/>.</summary>
        /// <param name="sourceIndex">First element of the buffer to read.</param>
        /// <param name="destination">The host array to fill.</param>
        /// <param name="destinationIndex">First element of <paramref name="destination"/> to write.</param>
        /// <param name="count">Number of elements.</param>
        public void CopyTo(long sourceIndex, T[] destination, int destinationIndex, int count)
        {
            ArrayCopy(destination, "destination", destinationIndex, sourceIndex, "sourceIndex", count, false, false);
        }

        /// <summary>The whole buffer, copied to a new array.</summary>
        public T[] ToArray()
        {
            var result = new T[Element<T>.Length(Count, "an array")];
            CopyTo(result);
            return result;
        }

        /// <summary>
        /// Copies <paramref name="count"/> elements between the host <paramref name="array"/> from
        /// <paramref name="arrayIndex"/> and the buffer from element <paramref name="index"/> (named
        /// <paramref name="indexName"/> when negative): into the buffer when <paramref name="toBuffer"/>,
        /// else out of it; through managed memory's host view when <paramref name="view"/> (a plain
        /// host copy, the range checked here), else by the library (the array pinned for the call).
        /// </summary>
        private void ArrayCopy(T[] array, string arrayName, int arrayIndex, long index, string indexName, int count, bool toBuffer, bool view)
        {
            Ranges.CheckArray(array, arrayIndex, count, arrayName);
            if (view)
            {
                Ranges.NotNegative(index, indexName);
                // HostPointer is refused by the library for memory that is not managed.
                Element<T>.HostCopy(Element<T>.At(HostPointer, Count, index, count, "managed buffer"), array, arrayIndex, count, !toBuffer, this);
                return;
            }
            var pin = GCHandle.Alloc(array, GCHandleType.Pinned);
            try
            {
                IntPtr host = count == 0 ? IntPtr.Zero : Marshal.UnsafeAddrOfPinnedArrayElement(array, arrayIndex);
                HostCopy(index, indexName, host, count, toBuffer, false, null);
            }
            finally
            {
                pin.Free();
            }
        }

        /// <summary>
        /// The one copy between the buffer and host memory, which every host copy forwards to:
        /// <paramref name="count"/> elements between <paramref name="host"/> and the buffer from element
        /// <paramref name="index"/> (named <paramref name="indexName"/> when negative): into the buffer
        /// when <paramref name="toBuffer"/>, else out of it; in order on <paramref name="stream"/> when
        /// <paramref name="ordered"/>. The library checks the range against the buffer.
        /// </summary>
        private void HostCopy(long index, string indexName, IntPtr host, long count, bool toBuffer, bool ordered, CudaStream stream)
        {
            int size = Element<T>.Size; // a DeviceBuffer<T> is only made for a T that passed Element<T>.Require()
            UIntPtr offset = Ranges.Bytes(index, size, indexName);
            UIntPtr bytes = Ranges.Bytes(count, size, "count");
            var h = Handle;
            if (!ordered)
                Errors.Check(toBuffer ? NativeMethods.cuabi_buffer_copy_from_host(h, offset, host, bytes)
                                      : NativeMethods.cuabi_buffer_copy_to_host(h, offset, host, bytes));
            else
                Errors.Check(toBuffer ? NativeMethods.cuabi_buffer_copy_from_host_async(h, offset, host, bytes, CudaStream.HandleOf(stream))
                                      : NativeMethods.cuabi_buffer_copy_to_host_async(h, offset, host, bytes, CudaStream.HandleOf(stream)));
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
            HostCopy(destinationIndex, "destinationIndex", source.AddressOf(sourceIndex, count), count, true, true, stream);
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
            HostCopy(sourceIndex, "sourceIndex", destination.AddressOf(destinationIndex, count), count, false, true, stream);
        }

#if CUABI_SPAN
        /// <summary>Copies all of <paramref name="source"/> to the start of the buffer.</summary>
        /// <param name="source">The host values.</param>
        public unsafe void CopyFrom(ReadOnlySpan<T> source)
        {
            ReadOnlySpan<byte> bytes = MemoryMarshal.AsBytes(source);
            fixed (byte* p = bytes)
                HostCopy(0, "index", (IntPtr)p, source.Length, true, false, null);
        }

        /// <summary>Copies the start of the buffer into all of <paramref name="destination"/>.</summary>
        /// <param name="destination">The host memory to fill.</param>
        public unsafe void CopyTo(Span<T> destination)
        {
            Span<byte> bytes = MemoryMarshal.AsBytes(destination);
            fixed (byte* p = bytes)
                HostCopy(0, "index", (IntPtr)p, destination.Length, false, false, null);
        }
#endif

        // ------------------------------------------------------------------
        // Fills
        // ------------------------------------------------------------------

        /// <summary>Sets <paramref name="count"/> elements from <paramref name="index"/> to <paramref name="value"/>; see <see cref="Fill(T)"/>.</summary>
        /// <param name="value">The value.</param>
        /// <param name="index">The first element.</param>
        /// <param name="count">How many elements; the library checks the range against the buffer.</param>
        public void Fill(T value, long index, long count)
        {
            FillRange(value, index, count, false, null);
        }

        /// <summary>Sets <paramref name="count"/> elements from <paramref name="index"/> to <paramref name="value"/>, in order on <paramref name="stream"/>.</summary>
        /// <param name="value">The value.</param>
        /// <param name="index">The first element.</param>
        /// <param name="count">How many elements; the library checks the range against the buffer.</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void FillAsync(T value, long index, long count, CudaStream stream)
        {
            FillRange(value, index, count, true, stream);
        }

        /// <summary>The one fill: the value's bytes as the low bits of a 32-bit word; in order on <paramref name="stream"/> when <paramref name="ordered"/>.</summary>
        private unsafe void FillRange(T value, long index, long count, bool ordered, CudaStream stream)
        {
            int size = Element<T>.Size;
            if (size != 1 && size != 2 && size != 4)
                throw new ArgumentException(string.Format(
                    "Fill writes elements of 1, 2 or 4 bytes; {0} is {1} bytes (use Memset for bytes)", typeof(T).FullName, size), "value");
            uint bits = 0;
            Element<T>.HostCopy((IntPtr)(&bits), new[] { value }, 0, 1, false, null); // little-endian: the low bytes
            var h = Handle;
            UIntPtr offset = Ranges.Bytes(index, size, "index");
            UIntPtr elements = Ranges.Bytes(count, 1, "count");
            Errors.Check(ordered ? NativeMethods.cuabi_buffer_fill_async(h, offset, bits, (uint)size, elements, CudaStream.HandleOf(stream))
                                 : NativeMethods.cuabi_buffer_fill(h, offset, bits, (uint)size, elements));
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

        /// <summary>Copies <paramref name="count"/> elements of managed memory into <paramref name="destination"/> through the host view.</summary>
        /// <param name="sourceIndex">First element of the buffer.</param>
        /// <param name="destination">The array to fill.</param>
        /// <param name="destinationIndex">First element of <paramref name="destination"/>.</param>
        /// <param name="count">Number of elements.</param>
        public void ReadHost(long sourceIndex, T[] destination, int destinationIndex, int count)
        {
            ArrayCopy(destination, "destination", destinationIndex, sourceIndex, "index", count, false, true);
        }

        /// <summary>Copies <paramref name="count"/> elements of <paramref name="source"/> into managed memory through the host view.</summary>
        /// <param name="source">The values.</param>
        /// <param name="sourceIndex">First element of <paramref name="source"/>.</param>
        /// <param name="destinationIndex">First element of the buffer.</param>
        /// <param name="count">Number of elements.</param>
        public void WriteHost(T[] source, int sourceIndex, long destinationIndex, int count)
        {
            ArrayCopy(source, "source", sourceIndex, destinationIndex, "index", count, true, true);
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
            return new Span<T>((void*)p, Element<T>.Length(Count, "a span"));
        }
#endif

        /// <summary>"DeviceBuffer&lt;T&gt;[count]".</summary>
        public override string ToString()
        {
            return "DeviceBuffer<" + typeof(T).Name + ">[" + Count + "]";
        }
    }
}
