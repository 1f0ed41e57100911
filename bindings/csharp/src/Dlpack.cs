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
        public unsafe IntPtr Pointer
        {
            get { return (IntPtr)Live(); }
        }

        /// <summary>The device address of the allocation (DLPack's <c>data</c>).</summary>
        public unsafe ulong Data
        {
            get { return (ulong)Live()->dl_tensor.data.ToInt64(); }
        }

        /// <summary>Bytes from <see cref="Data"/> to the first element.</summary>
        public unsafe ulong ByteOffset
        {
            get { return Live()->dl_tensor.byte_offset; }
        }

        /// <summary>The DLPack flags (<c>CUABI_DLPACK_FLAG_*</c>).</summary>
        public unsafe ulong Flags
        {
            get { return Live()->flags; }
        }

        /// <summary>The extents.</summary>
        public long[] Shape
        {
            get { return Longs(false); }
        }

        /// <summary>The strides in elements; null for compact row-major.</summary>
        public unsafe long[] Strides
        {
            get { return Live()->dl_tensor.strides == IntPtr.Zero ? null : Longs(true); }
        }

        private unsafe long[] Longs(bool strides)
        {
            DlpackTensorNative* t = &Live()->dl_tensor;
            long[] values = new long[Math.Max(t->ndim, 0)];
            IntPtr p = strides ? t->strides : t->shape;
            if (p != IntPtr.Zero && values.Length > 0)
                Marshal.Copy(p, values, 0, values.Length);
            return values;
        }

        /// <summary>The tensor, read through the header's layout; <see cref="ObjectDisposedException"/> once deleted or handed over.</summary>
        private unsafe DlpackManagedTensorVersionedNative* Live()
        {
            if (tensor == IntPtr.Zero)
                throw new ObjectDisposedException("DlpackTensor", "the tensor was deleted or handed over");
            return (DlpackManagedTensorVersionedNative*)tensor;
        }

        /// <summary>Gives the tensor up (to a consumer, which must call its deleter).</summary>
        public unsafe IntPtr Release()
        {
            IntPtr t = (IntPtr)Live();
            tensor = IntPtr.Zero;
            return t;
        }

        /// <summary>Calls the tensor's deleter, once.</summary>
        public unsafe void Dispose()
        {
            IntPtr t = tensor;
            tensor = IntPtr.Zero;
            if (t == IntPtr.Zero)
                return;
            IntPtr deleter = ((DlpackManagedTensorVersionedNative*)t)->deleter;
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
        public static unsafe DeviceBuffer<T> Import<T>(DlpackTensor tensor, bool readOnly = false) where T : struct
        {
            if (tensor == null)
                throw new ArgumentNullException("tensor");
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_import_dlpack(ref *(DlpackManagedTensorVersionedNative*)tensor.Pointer,
                readOnly ? DlpackImportFlags.ReadOnly : 0, out h));
            tensor.Release();
            return new DeviceBuffer<T>(h);
        }

        /// <summary>
        /// <see cref="Import{T}"/> for an unversioned (DLPack before 1.0)
        /// managed tensor at <paramref name="tensor"/>, taken as writable.
        /// On success the buffer owns it; on a refusal it stays the caller's.
        /// </summary>
        public static unsafe DeviceBuffer<T> ImportUnversioned<T>(IntPtr tensor, bool readOnly = false) where T : struct
        {
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_import_dlpack_unversioned(ref *(DlpackManagedTensorNative*)tensor,
                readOnly ? DlpackImportFlags.ReadOnly : 0, out h));
            return new DeviceBuffer<T>(h);
        }
    }
}
