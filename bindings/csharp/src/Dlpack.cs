using System;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// An owned DLPack 1.x managed tensor (<c>DLManagedTensorVersioned*</c>):
    /// its deleter runs once, on <see cref="Dispose"/>, unless
    /// <see cref="Release"/> handed it to a consumer, which then calls it.
    /// </summary>
    public sealed class DlpackTensor : IDisposable
    {
        // DLManagedTensorVersioned: deleter @16, flags @24, dl_tensor @32
        // (data @32, ndim @48, shape @56, strides @64, byte_offset @72).
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        private delegate void Deleter(IntPtr self);

        private IntPtr tensor;

        private DlpackTensor(IntPtr tensor)
        {
            this.tensor = tensor;
        }

        /// <summary>Owns <paramref name="tensor"/>, a DLPack 1.x managed tensor nobody else deletes.</summary>
        public static DlpackTensor FromPointer(IntPtr tensor)
        {
            if (tensor == IntPtr.Zero)
                throw new ArgumentNullException("tensor");
            return new DlpackTensor(tensor);
        }

        /// <summary>The tensor's address, still owned by this.</summary>
        public IntPtr Pointer
        {
            get { return Live(); }
        }

        /// <summary>The device address of the allocation (DLPack's <c>data</c>).</summary>
        public ulong Data
        {
            get { return (ulong)Marshal.ReadInt64(Live(), 32); }
        }

        /// <summary>Bytes from <see cref="Data"/> to the first element.</summary>
        public ulong ByteOffset
        {
            get { return (ulong)Marshal.ReadInt64(Live(), 72); }
        }

        /// <summary>The DLPack flags (<c>CUABI_DLPACK_FLAG_*</c>).</summary>
        public ulong Flags
        {
            get { return (ulong)Marshal.ReadInt64(Live(), 24); }
        }

        /// <summary>The extents.</summary>
        public long[] Shape
        {
            get { return Longs(56); }
        }

        /// <summary>The strides in elements; null for compact row-major.</summary>
        public long[] Strides
        {
            get { return Marshal.ReadIntPtr(Live(), 64) == IntPtr.Zero ? null : Longs(64); }
        }

        private long[] Longs(int field)
        {
            IntPtr t = Live();
            int ndim = Marshal.ReadInt32(t, 48);
            long[] values = new long[Math.Max(ndim, 0)];
            IntPtr p = Marshal.ReadIntPtr(t, field);
            if (p != IntPtr.Zero && values.Length > 0)
                Marshal.Copy(p, values, 0, values.Length);
            return values;
        }

        private IntPtr Live()
        {
            if (tensor == IntPtr.Zero)
                throw new ObjectDisposedException("DlpackTensor", "the tensor was deleted or handed over");
            return tensor;
        }

        /// <summary>Gives the tensor up (to a consumer, which must call its deleter).</summary>
        public IntPtr Release()
        {
            IntPtr t = Live();
            tensor = IntPtr.Zero;
            return t;
        }

        /// <summary>Calls the tensor's deleter, once.</summary>
        public void Dispose()
        {
            IntPtr t = tensor;
            tensor = IntPtr.Zero;
            if (t == IntPtr.Zero)
                return;
            IntPtr deleter = Marshal.ReadIntPtr(t, 16);
            if (deleter == IntPtr.Zero)
                return;
            // Mono answers the original delegate for a pointer made from one
            // (a deleter written in C#), whatever type is asked: call it as a Delegate.
            Delegate d = Marshal.GetDelegateForFunctionPointer(deleter, typeof(Deleter));
            Deleter typed = d as Deleter;
            if (typed != null)
                typed(t);
            else
                d.DynamicInvoke(t);
        }
    }

    /// <summary>
    /// DLPack through the core: a buffer handed to another library as a
    /// tensor (<c>cuabi_buffer_export_dlpack</c>, checked against the buffer's
    /// size) and another library's tensor taken over as a buffer
    /// (<c>cuabi_buffer_import_dlpack</c>, which checks its device, version,
    /// dtype, strides and read-only flag and names what it refuses). The
    /// stream handshake is <c>CudaStream.DlpackHandoff</c> / <c>DlpackWait</c>.
    /// </summary>
    public static class Dlpack
    {
        [DllImport(NativeMethods.LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_import_dlpack")]
        private static extern CudaStatus ImportVersioned(IntPtr tensor, DlpackImportFlags flags, out SafeBufferHandle buffer);

        [DllImport(NativeMethods.LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_import_dlpack_unversioned")]
        private static extern CudaStatus ImportUnversioned(IntPtr tensor, DlpackImportFlags flags, out SafeBufferHandle buffer);

        private static void TypeOf(Type t, out uint code, out uint bits)
        {
            code = 2; // float
            if (t == typeof(float)) bits = 32;
            else if (t == typeof(double)) bits = 64;
            else
            {
                bits = (uint)(Marshal.SizeOf(t) * 8);
                if (t == typeof(sbyte) || t == typeof(short) || t == typeof(int) || t == typeof(long)) code = 0;
                else if (t == typeof(byte) || t == typeof(ushort) || t == typeof(uint) || t == typeof(ulong)) code = 1;
                else throw new ArgumentException("DLPack has no element type for " + t.Name, "T");
            }
        }

        /// <summary>
        /// <paramref name="buffer"/> as a tensor of <paramref name="shape"/>
        /// elements, <paramref name="strides"/> in elements (null: compact
        /// row-major), from byte <paramref name="byteOffset"/>. The tensor
        /// holds the buffer's memory until its deleter runs.
        /// </summary>
        /// <exception cref="CudaException">OutOfRange when it reaches past the buffer, naming the reach.</exception>
        public static DlpackTensor Export<T>(DeviceBuffer<T> buffer, long[] shape, long[] strides = null,
                                             ulong byteOffset = 0, bool readOnly = false) where T : struct
        {
            if (buffer == null)
                throw new ArgumentNullException("buffer");
            if (shape == null)
                throw new ArgumentNullException("shape");
            if (strides != null && strides.Length != shape.Length)
                throw new ArgumentException("strides and shape differ in length", "strides");
            uint code, bits;
            TypeOf(typeof(T), out code, out bits);
            IntPtr t;
            Errors.Check(NativeMethods.cuabi_buffer_export_dlpack(buffer.Handle, byteOffset, shape, strides,
                (UIntPtr)shape.Length, code, bits, 1, readOnly ? 1UL : 0UL, out t));
            return DlpackTensor.FromPointer(t);
        }

        /// <summary>
        /// Takes <paramref name="tensor"/> over as a borrowed buffer of the
        /// elements it spans: on success the buffer owns it (its deleter runs
        /// once, when the buffer's last reference goes) and
        /// <paramref name="tensor"/> is emptied; on a refusal (thrown) it stays
        /// the caller's. <paramref name="readOnly"/> accepts a read-only tensor.
        /// </summary>
        public static DeviceBuffer<T> Import<T>(DlpackTensor tensor, bool readOnly = false) where T : struct
        {
            if (tensor == null)
                throw new ArgumentNullException("tensor");
            SafeBufferHandle h;
            Errors.Check(ImportVersioned(tensor.Pointer, readOnly ? DlpackImportFlags.ReadOnly : 0, out h));
            tensor.Release();
            return new DeviceBuffer<T>(h);
        }

        /// <summary>
        /// <see cref="Import{T}"/> for an unversioned (DLPack before 1.0)
        /// managed tensor at <paramref name="tensor"/>, taken as writable.
        /// On success the buffer owns it; on a refusal it stays the caller's.
        /// </summary>
        public static DeviceBuffer<T> ImportUnversioned<T>(IntPtr tensor, bool readOnly = false) where T : struct
        {
            SafeBufferHandle h;
            Errors.Check(ImportUnversioned(tensor, readOnly ? DlpackImportFlags.ReadOnly : 0, out h));
            return new DeviceBuffer<T>(h);
        }
    }
}
