using System;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// One side of a <see cref="Copy3D"/>: host memory (a managed array, pinned
    /// memory or a raw address), device memory, or a <see cref="CudaArray"/>,
    /// with where the box starts in it.
    /// </summary>
    /// <remarks>
    /// Host memory and device memory are rows <see cref="PitchBytes"/> apart
    /// (0: the memory's own <see cref="DeviceMemory.Pitch"/> if it is pitched,
    /// else the copy's width) and slices <see cref="SliceHeight"/> rows apart
    /// (0: the copy's height). An array's pitch and slice height are its own.
    /// </remarks>
    public sealed class CopyEnd
    {
        private readonly Array managed;        // a managed array, pinned for the call
        // Other host memory's address, read at each call: a PinnedBuffer<T>'s (checked for
        // disposal; the delegate keeps the buffer reachable while a call runs) or the caller's.
        private readonly Func<IntPtr> hostAddress;
        private readonly long hostBytes;       // the bytes of a managed array or pinned buffer (-1: unknown)
        private readonly DeviceMemory memory;
        private readonly CudaArray array;

        private CopyEnd(Array managed, Func<IntPtr> hostAddress, long hostBytes, DeviceMemory memory, CudaArray array,
            long pitchBytes, long sliceHeight)
        {
            this.managed = managed;
            this.hostAddress = hostAddress;
            this.hostBytes = hostBytes;
            this.memory = memory;
            this.array = array;
            PitchBytes = pitchBytes;
            SliceHeight = sliceHeight;
        }

        /// <summary>
        /// A managed array, pinned only while <see cref="Copy3D.Copy"/> runs
        /// (so not for <see cref="Copy3D.CopyAsync"/>). The box must lie inside
        /// the array: the binding checks that, the library the device side.
        /// </summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="values">The array.</param>
        /// <param name="pitchBytes">Bytes from one row to the next; 0: the copy's width.</param>
        /// <param name="sliceHeight">Rows from one slice to the next; 0: the copy's height.</param>
        public static CopyEnd Host<T>(T[] values, long pitchBytes = 0, long sliceHeight = 0) where T : struct
        {
            if (values == null)
                throw new ArgumentNullException("values");
            long bytes = (long)Ranges.Bytes(values.Length, Element<T>.Require(), "values.Length").ToUInt64();
            return new CopyEnd(values, null, bytes, null, null, pitchBytes, sliceHeight);
        }

        /// <summary>Pinned host memory (usable by <see cref="Copy3D.CopyAsync"/>); the box must lie inside it.</summary>
        /// <typeparam name="T">The element type.</typeparam>
        /// <param name="values">The pinned memory; keep it alive until the stream reached the copy.</param>
        /// <param name="pitchBytes">Bytes from one row to the next; 0: the copy's width.</param>
        /// <param name="sliceHeight">Rows from one slice to the next; 0: the copy's height.</param>
        public static CopyEnd Host<T>(PinnedBuffer<T> values, long pitchBytes = 0, long sliceHeight = 0) where T : struct
        {
            if (values == null)
                throw new ArgumentNullException("values");
            return new CopyEnd(null, () => values.Pointer, values.SizeInBytes, null, null, pitchBytes, sliceHeight);
        }

        /// <summary>
        /// Host memory at a raw address, which the caller keeps valid (and, for
        /// <see cref="Copy3D.CopyAsync"/>, pinned) until the copy is done;
        /// nothing can check its extent.
        /// </summary>
        /// <param name="address">The address of the memory's first byte (the box's offsets count from it).</param>
        /// <param name="pitchBytes">Bytes from one row to the next; 0: the copy's width.</param>
        /// <param name="sliceHeight">Rows from one slice to the next; 0: the copy's height.</param>
        public static CopyEnd Host(IntPtr address, long pitchBytes = 0, long sliceHeight = 0)
        {
            return new CopyEnd(null, () => address, -1, null, null, pitchBytes, sliceHeight);
        }

        /// <summary>Device memory (any kind: pitched, stream-ordered, managed, ...); the library checks the box against it.</summary>
        /// <param name="memory">The memory.</param>
        /// <param name="pitchBytes">Bytes from one row to the next; 0: its <see cref="DeviceMemory.Pitch"/> if pitched, else the copy's width.</param>
        /// <param name="sliceHeight">Rows from one slice to the next; 0: the copy's height.</param>
        public static CopyEnd Device(DeviceMemory memory, long pitchBytes = 0, long sliceHeight = 0)
        {
            if (memory == null)
                throw new ArgumentNullException("memory");
            return new CopyEnd(null, null, -1, memory, null, pitchBytes, sliceHeight);
        }

        /// <summary>A CUDA array; offsets and the copy's width are in bytes of whole elements, checked against its extent by the library.</summary>
        /// <param name="array">The array.</param>
        public static CopyEnd Array(CudaArray array)
        {
            if (array == null)
                throw new ArgumentNullException("array");
            return new CopyEnd(null, null, -1, null, array, 0, 0);
        }

        /// <summary>Where the box starts in a row, in bytes.</summary>
        public long XBytes { get; set; }

        /// <summary>The row the box starts at.</summary>
        public long Y { get; set; }

        /// <summary>The slice the box starts at.</summary>
        public long Z { get; set; }

        /// <summary>Bytes from one row to the next (host and device memory); 0 for the default.</summary>
        public long PitchBytes { get; set; }

        /// <summary>Rows from one slice to the next (host and device memory); 0 for the default.</summary>
        public long SliceHeight { get; set; }

        /// <summary>Sets where the box starts and returns this side, for chaining.</summary>
        /// <param name="xBytes">Byte in the row.</param>
        /// <param name="y">Row.</param>
        /// <param name="z">Slice.</param>
        public CopyEnd At(long xBytes, long y = 0, long z = 0)
        {
            XBytes = xBytes;
            Y = y;
            Z = z;
            return this;
        }

        internal bool IsManagedArray
        {
            get { return managed != null; }
        }

        /// <summary>
        /// Writes this side into the descriptor, pinning a managed array and
        /// holding the handles it names, in <paramref name="lease"/>; disposing it undoes that.
        /// </summary>
        internal void Apply(ref Copy3DDescNative d, bool destination, Copy3D copy, BatchLease lease)
        {
            UIntPtr x = Ranges.Bytes(XBytes, 1, "XBytes"), y = Ranges.Bytes(Y, 1, "Y"), z = Ranges.Bytes(Z, 1, "Z");
            UIntPtr pitch = Ranges.Bytes(PitchBytes, 1, "PitchBytes"), height = Ranges.Bytes(SliceHeight, 1, "SliceHeight");
            IntPtr host = IntPtr.Zero, buffer = IntPtr.Zero, arr = IntPtr.Zero;
            if (memory != null)
                buffer = lease.Hold(memory.Handle);
            else if (array != null)
                arr = lease.Hold(array.Handle);
            else
            {
                CheckHostExtent(copy, destination);
                host = managed != null ? lease.Pin(managed) : lease.Keep(hostAddress, hostAddress()); // a disposed buffer throws
            }
            d.SetEnd(destination, host, buffer, arr, x, y, z, pitch, height);
        }

        /// <summary>
        /// The box must lie inside a managed array or pinned buffer: host
        /// memory the library cannot see. A pitch smaller than the row is left
        /// for the library to refuse.
        /// </summary>
        private void CheckHostExtent(Copy3D copy, bool destination)
        {
            if (hostBytes < 0)
                return;
            long width = copy.WidthBytes;
            long rows = Math.Max(copy.Height, 1), slices = Math.Max(copy.Depth, 1);
            long pitch = PitchBytes == 0 ? width : PitchBytes;
            long sliceRows = SliceHeight == 0 ? rows : SliceHeight;
            if (width <= 0 || pitch < width)
                return;
            string side = destination ? "destination" : "source";
            try
            {
                long last = checked(((Z + slices - 1) * sliceRows + (Y + rows - 1)) * pitch + XBytes + width);
                if (last > hostBytes)
                    throw new ArgumentException(string.Format(
                        "the box reaches byte {0} of the {1}'s host memory, which holds {2} bytes " +
                        "(start x {3} bytes, y {4}, z {5}; {6} x {7} x {8}; pitch {9}, slice height {10})",
                        last, side, hostBytes, XBytes, Y, Z, width, rows, slices, pitch, sliceRows), destination ? "Destination" : "Source");
            }
            catch (OverflowException)
            {
                throw new ArgumentException("the box's extent in the " + side + "'s host memory overflows 64 bits",
                    destination ? "Destination" : "Source");
            }
        }
    }

    /// <summary>
    /// A copy of a box of <see cref="WidthBytes"/> x <see cref="Height"/> rows x
    /// <see cref="Depth"/> slices between any two of host memory, device memory
    /// (pitched or not) and CUDA arrays: 2D copies are the boxes of depth 1.
    /// The library checks every range before the driver sees it (a box past a
    /// buffer's end or an array's extent: <see cref="CudaStatus.OutOfRange"/>
    /// naming the side and the dimension).
    /// </summary>
    /// <example>
    /// <code>
    /// // rows of 100 floats from a packed host array into pitched device memory
    /// var copy = new Copy3D(CopyEnd.Host(rows), CopyEnd.Device(pitched), 100 * sizeof(float), 64);
    /// copy.Copy();
    /// </code>
    /// </example>
    public sealed partial class Copy3D : IDescribes<Copy3DDescNative>
    {
        /// <summary>A copy from <paramref name="source"/> to <paramref name="destination"/>.</summary>
        /// <param name="source">Where the box is read.</param>
        /// <param name="destination">Where the box is written.</param>
        /// <param name="widthBytes">Bytes per row (of whole elements for an array).</param>
        /// <param name="height">Rows (0 counts as 1).</param>
        /// <param name="depth">Slices (0 counts as 1).</param>
        public Copy3D(CopyEnd source, CopyEnd destination, long widthBytes, long height = 1, long depth = 1)
        {
            Source = source;
            Destination = destination;
            WidthBytes = widthBytes;
            Height = height;
            Depth = depth;
        }

        /// <summary>Where the box is read.</summary>
        public CopyEnd Source { get; set; }

        /// <summary>Where the box is written.</summary>
        public CopyEnd Destination { get; set; }

        /// <summary>Bytes per row (of whole elements for an array).</summary>
        public long WidthBytes { get; set; }

        /// <summary>Rows (0 counts as 1).</summary>
        public long Height { get; set; }

        /// <summary>Slices (0 counts as 1).</summary>
        public long Depth { get; set; }

        Copy3DDescNative IDescribes<Copy3DDescNative>.Describe(string what, bool lasting, out IDisposable lease)
        {
            return Describe(what + ".", lasting ? "the library uses this copy's host memory after the call returns " +
                "(CopyEnd.Host(PinnedBuffer<T>))" : null, out lease);
        }

        /// <summary>
        /// The C struct of this copy, its host sides checked, what it names
        /// pinned and held in <paramref name="lease"/> (released by the caller
        /// after the call): <see cref="Copy"/>'s, <see cref="CopyAsync"/>'s and
        /// a generated member's. A side that is a managed array is refused,
        /// saying why after "pinned only while a call runs; ", when
        /// <paramref name="lasting"/> says why (the library uses the memory
        /// after the call); <paramref name="what"/> prefixes the sides' names.
        /// </summary>
        private Copy3DDescNative Describe(string what, string lasting, out IDisposable lease)
        {
            if (Source == null)
                throw new ArgumentNullException(what + "Source");
            if (Destination == null)
                throw new ArgumentNullException(what + "Destination");
            if (lasting != null && (Source.IsManagedArray || Destination.IsManagedArray))
                throw new ArgumentException("a managed array is pinned only while a call runs; " + lasting,
                    what + (Source.IsManagedArray ? "Source" : "Destination"));
            var held = new BatchLease();
            try
            {
                Copy3DDescNative d = Describe(held);
                lease = held;
                return d;
            }
            catch
            {
                held.Dispose();
                throw;
            }
        }

        Copy3DDescNative IDescribes<Copy3DDescNative>.DescribeIn(string batch, int index, BatchLease lease)
        {
            string what = batch + "[" + index + "]";
            if (Source == null)
                throw new ArgumentNullException(batch, what + ".Source is null");
            if (Destination == null)
                throw new ArgumentNullException(batch, what + ".Destination is null");
            if (Source.IsManagedArray || Destination.IsManagedArray)
                throw new ArgumentException(what + " names a managed array, pinned only while a call runs; a batch needs " +
                    "host memory that stays put (CopyEnd.Host(PinnedBuffer<T>))", batch);
            return Describe(lease);
        }

        private Copy3DDescNative Describe(BatchLease lease)
        {
            var d = Copy3DDescNative.Create();
            d.width_bytes = Ranges.Bytes(WidthBytes, 1, "WidthBytes");
            d.height = Ranges.Bytes(Height, 1, "Height");
            d.depth = Ranges.Bytes(Depth, 1, "Depth");
            Source.Apply(ref d, false, this, lease);
            Destination.Apply(ref d, true, this, lease);
            return d;
        }
    }
}
