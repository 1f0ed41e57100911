using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// The memory under a word of a <see cref="MemOpBatch"/>, or one end of a copy of a
    /// <see cref="CopyBatch"/>: device memory, pinned host memory, or (for copies) a host array.
    /// Converts implicitly from <see cref="DeviceMemory"/>, <see cref="PinnedBuffer{T}"/> and
    /// arrays.
    /// </summary>
    public struct BatchMemory
    {
        internal readonly SafeHandle Handle;
        internal readonly bool IsPinned;
        internal readonly Array HostArray;

        private BatchMemory(SafeHandle handle, bool pinned, Array array)
        {
            Handle = handle;
            IsPinned = pinned;
            HostArray = array;
        }

        /// <summary>Device memory (a device or managed buffer).</summary>
        public static BatchMemory Device(DeviceMemory buffer)
        {
            if (buffer == null) throw new ArgumentNullException(nameof(buffer));
            return new BatchMemory(buffer.Handle, false, null);
        }

        /// <summary>Pinned host memory.</summary>
        public static BatchMemory Pinned<T>(PinnedBuffer<T> buffer) where T : struct
        {
            if (buffer == null) throw new ArgumentNullException(nameof(buffer));
            return new BatchMemory(buffer.Handle, true, null);
        }

        /// <summary>A host array of blittable elements, pinned while the batch is queued and
        /// until the caller synchronizes (it must stay untouched until then).</summary>
        public static BatchMemory Host(Array array)
        {
            if (array == null) throw new ArgumentNullException(nameof(array));
            return new BatchMemory(null, false, array);
        }

        /// <summary>Device memory.</summary>
        public static implicit operator BatchMemory(DeviceMemory buffer) => Device(buffer);

        /// <summary>A host array.</summary>
        public static implicit operator BatchMemory(Array array) => Host(array);

        /// <summary>Writes <paramref name="m"/> as the buffer, pinned host buffer or host address of an element, held by <paramref name="lease"/>.</summary>
        internal static void Fill(BatchLease lease, BatchMemory m, ref IntPtr buffer, ref IntPtr hostBuffer, ref IntPtr host)
        {
            if (m.Handle != null)
            {
                IntPtr h = lease.Hold(m.Handle);
                if (m.IsPinned) hostBuffer = h; else buffer = h;
            }
            else if (m.HostArray != null)
            {
                host = lease.Pin(m.HostArray);
            }
        }
    }

    /// <summary>What a batch holds while it is queued: handles referenced and arrays pinned;
    /// released by <see cref="Dispose"/>, after the stream has reached the batch.</summary>
    public sealed class BatchLease : IDisposable
    {
        private readonly List<SafeHandle> held = new List<SafeHandle>();
        private readonly List<GCHandle> pins = new List<GCHandle>();
        private readonly Dictionary<Array, IntPtr> pinned = new Dictionary<Array, IntPtr>();
        private readonly List<object> kept = new List<object>();

        internal IntPtr Hold(SafeHandle h)
        {
            bool added = false;
            h.DangerousAddRef(ref added);
            held.Add(h);
            return h.DangerousGetHandle();
        }

        internal IntPtr Pin(Array a)
        {
            if (pinned.TryGetValue(a, out IntPtr p)) return p;
            GCHandle pin = GCHandle.Alloc(a, GCHandleType.Pinned);
            pins.Add(pin);
            p = pin.AddrOfPinnedObject();
            pinned[a] = p;
            return p;
        }

        /// <summary>Keeps <paramref name="o"/> (what holds pinned memory) reachable until disposal; answers <paramref name="p"/>.</summary>
        internal IntPtr Keep(object o, IntPtr p)
        {
            kept.Add(o);
            return p;
        }

        /// <summary>Lets go of the handles and the pinned arrays.</summary>
        public void Dispose()
        {
            foreach (GCHandle pin in pins) pin.Free();
            pins.Clear();
            pinned.Clear();
            foreach (SafeHandle h in held) h.DangerousRelease();
            held.Clear();
            GC.KeepAlive(kept);
            kept.Clear();
        }
    }

    /// <summary>Writes and waits queued on a stream in one call
    /// (<see cref="CudaStream.MemOpBatch"/>, 1 to 255 of them), in order.</summary>
    public sealed class MemOpBatch : IDescribesEach<MemOpNative>
    {
        internal readonly List<MemOpNative> Ops = new List<MemOpNative>();
        internal readonly List<BatchMemory> Memory = new List<BatchMemory>();

        /// <summary>How many writes and waits the batch holds.</summary>
        public int Count => Ops.Count;

        private static MemOpNative Op(MemOpKind kind, ulong offset, ulong value, uint width)
        {
            MemOpNative op = MemOpNative.Create();
            op.kind = kind;
            op.offset = (UIntPtr)offset;
            op.value = value;
            op.width = width;
            return op;
        }

        /// <summary>Writes <paramref name="value"/> as the <paramref name="width"/>-byte word (4 or 8)
        /// at byte <paramref name="offset"/> of <paramref name="memory"/> (device or pinned memory).</summary>
        public MemOpBatch Write(BatchMemory memory, ulong offset, ulong value, uint width = 4)
        {
            Ops.Add(Op(MemOpKind.Write, offset, value, width));
            Memory.Add(memory);
            return this;
        }

        /// <summary>Holds the stream's later work until the word meets <paramref name="condition"/>
        /// against <paramref name="value"/>.</summary>
        public MemOpBatch Wait(BatchMemory memory, ulong offset, ulong value, uint width = 4,
                               WaitCondition condition = WaitCondition.Geq, MemOpFlags flags = 0)
        {
            MemOpNative op = Op(MemOpKind.Wait, offset, value, width);
            op.condition = condition;
            op.flags = flags;
            Ops.Add(op);
            Memory.Add(memory);
            return this;
        }

        MemOpNative IDescribesEach<MemOpNative>.Describe(BatchLease lease, int i)
        {
            MemOpNative op = Ops[i];
            IntPtr host = IntPtr.Zero; // a mem op takes no host array: one given leaves the op without memory
            BatchMemory.Fill(lease, Memory[i], ref op.buffer, ref op.host_buffer, ref host);
            return op;
        }
    }

    /// <summary>Copies of any direction queued on a stream in one call
    /// (<see cref="CudaStream.CopyBatch"/>); they may run in any order among themselves.</summary>
    public sealed class CopyBatch : IDescribesEach<CopyOpNative>
    {
        internal readonly List<CopyOpNative> Ops = new List<CopyOpNative>();
        internal readonly List<BatchMemory> Dst = new List<BatchMemory>();
        internal readonly List<BatchMemory> Src = new List<BatchMemory>();

        /// <summary>How many copies the batch holds.</summary>
        public int Count => Ops.Count;

        /// <summary>Adds a copy of <paramref name="bytes"/> bytes from byte <paramref name="srcOffset"/>
        /// of <paramref name="src"/> to byte <paramref name="dstOffset"/> of <paramref name="dst"/>.</summary>
        public CopyBatch Copy(BatchMemory dst, ulong dstOffset, BatchMemory src, ulong srcOffset, ulong bytes)
        {
            CopyOpNative op = CopyOpNative.Create();
            op.dst_offset = (UIntPtr)dstOffset;
            op.src_offset = (UIntPtr)srcOffset;
            op.bytes = (UIntPtr)bytes;
            Ops.Add(op);
            Dst.Add(dst);
            Src.Add(src);
            return this;
        }

        CopyOpNative IDescribesEach<CopyOpNative>.Describe(BatchLease lease, int i)
        {
            CopyOpNative op = Ops[i];
            BatchMemory.Fill(lease, Dst[i], ref op.dst_buffer, ref op.dst_host_buffer, ref op.dst_host);
            BatchMemory.Fill(lease, Src[i], ref op.src_buffer, ref op.src_host_buffer, ref op.src_host);
            return op;
        }
    }

    /// <summary>Ranges of managed buffers for <see cref="CudaStream.PrefetchBatch"/> and the discards.</summary>
    public sealed class ManagedRanges : IDescribesEach<ManagedRangeNative>
    {
        internal readonly List<ManagedRangeNative> Ranges = new List<ManagedRangeNative>();
        internal readonly List<DeviceMemory> Buffers = new List<DeviceMemory>();

        /// <summary>How many ranges there are.</summary>
        public int Count => Ranges.Count;

        /// <summary>Adds <paramref name="bytes"/> bytes from byte <paramref name="offset"/> of the
        /// managed buffer <paramref name="buffer"/>.</summary>
        public ManagedRanges Add(DeviceMemory buffer, ulong offset, ulong bytes)
        {
            if (buffer == null) throw new ArgumentNullException(nameof(buffer));
            ManagedRangeNative r = ManagedRangeNative.Create();
            r.offset = (UIntPtr)offset;
            r.bytes = (UIntPtr)bytes;
            Ranges.Add(r);
            Buffers.Add(buffer);
            return this;
        }

        ManagedRangeNative IDescribesEach<ManagedRangeNative>.Describe(BatchLease lease, int i)
        {
            ManagedRangeNative r = Ranges[i];
            r.buffer = lease.Hold(Buffers[i].Handle);
            return r;
        }
    }

    public sealed partial class CudaStream
    {
        private delegate CudaStatus BatchCall<TNative>(ref TNative first, UIntPtr count);

        /// <summary>
        /// Queues <paramref name="count"/> elements, each laid out by <paramref name="describe"/>,
        /// in one <paramref name="call"/>. What they name is held by a lease: returned when
        /// <paramref name="keep"/> (the caller releases it later), else released after the call.
        /// </summary>
        private static BatchLease Queue<TNative>(int count, Func<BatchLease, int, TNative> describe,
            BatchCall<TNative> call, bool keep) where TNative : struct
        {
            // An empty batch still passes an element (the library refuses the count, reading none).
            var items = new TNative[Math.Max(count, 1)];
            var lease = new BatchLease();
            try
            {
                for (int i = 0; i < count; i++)
                    items[i] = describe(lease, i);
                Errors.Check(call(ref items[0], (UIntPtr)(uint)count));
            }
            catch
            {
                lease.Dispose();
                throw;
            }
            if (keep)
                return lease;
            lease.Dispose();
            return null;
        }
    }
}
