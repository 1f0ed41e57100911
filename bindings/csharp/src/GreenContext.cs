using System;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A set of a device's SMs (cuabi_sm_resource): all of a device's
    /// (<c>device.GetSmResource()</c>), a green context's, or one part of a
    /// split (<c>Split(groupCount, minSmCount, index)</c>, the remainder at
    /// index == groupCount). It keeps what it was made from alive.
    /// </summary>
    public sealed partial class SmResource : IDisposable
    {
    }

    /// <summary>
    /// A context whose kernels run on one set of SMs (cuabi_green_context).
    /// Its streams (<c>CreateStream(CudaStreamFlags.NonBlocking, 0)</c>) are
    /// ordinary <see cref="CudaStream"/>s; each keeps the context alive.
    /// </summary>
    public sealed partial class GreenContext : IDisposable
    {
    }

    /// <summary>
    /// A TMA descriptor over a device buffer (cuabi_tensor_map). Pass it to a
    /// kernel's <c>const __grid_constant__ CUtensorMap</c> parameter by value
    /// as <see cref="Value"/> (its 128 bytes, a <see cref="TensorMapValue"/>).
    /// It keeps its buffer alive.
    /// </summary>
    public sealed partial class TensorMap : IDisposable
    {
        /// <summary>The map as a kernel argument: its 128 bytes by value.</summary>
        public unsafe TensorMapValue Value
        {
            get
            {
                byte[] b = Bytes;
                TensorMapValue v = default(TensorMapValue);
                for (int i = 0; i < TensorMapValue.Size && i < b.Length; i++)
                    v.bytes[i] = b[i];
                return v;
            }
        }

        /// <summary>
        /// A tiled map (cuabi_tensor_map_encode_tiled) over <paramref name="buffer"/>
        /// from byte <paramref name="offset"/>: one entry per dimension in
        /// <paramref name="sizes"/> (elements), <paramref name="strides"/> (bytes,
        /// strides[0] the element size) and <paramref name="box"/>;
        /// <paramref name="elementStrides"/> empty or null for every step 1.
        /// Dimension 0 is the innermost. The core checks every bound.
        /// </summary>
        /// <param name="buffer">The tensor's memory.</param>
        /// <param name="offset">The tensor's first byte in the buffer.</param>
        /// <param name="dataType">The element type.</param>
        /// <param name="sizes">Each dimension's element count.</param>
        /// <param name="strides">Each dimension's stride in bytes.</param>
        /// <param name="box">The box one copy moves, in elements.</param>
        /// <param name="elementStrides">The traversal steps, or null.</param>
        /// <param name="interleave">The interleaved layout.</param>
        /// <param name="swizzle">The shared-memory swizzle.</param>
        /// <param name="l2Promotion">The L2 fetch size.</param>
        /// <param name="oobFill">What fills elements outside the tensor.</param>
        public static TensorMap EncodeTiled(DeviceMemory buffer, long offset, TensorDataType dataType,
            long[] sizes, long[] strides, long[] box, long[] elementStrides = null,
            TensorInterleave interleave = TensorInterleave.None, TensorSwizzle swizzle = TensorSwizzle.None,
            TensorL2Promotion l2Promotion = TensorL2Promotion.None, TensorOobFill oobFill = TensorOobFill.Zero)
        {
            if (buffer == null)
                throw new ArgumentNullException("buffer");
            UIntPtr[] s = Sizes(sizes, "sizes"), st = Sizes(strides, "strides"), b = Sizes(box, "box");
            UIntPtr[] e = Sizes(elementStrides ?? new long[0], "elementStrides");
            SafeTensorMapHandle h;
            Errors.Check(NativeMethods.cuabi_tensor_map_encode_tiled(buffer.Handle, Ranges.Bytes(offset, 1, "offset"), dataType,
                s, (UIntPtr)(uint)s.Length, st, (UIntPtr)(uint)st.Length, b, (UIntPtr)(uint)b.Length,
                e, (UIntPtr)(uint)e.Length, interleave, swizzle, l2Promotion, oobFill, out h));
            return new TensorMap(h);
        }

        /// <summary>
        /// An im2col map (cuabi_tensor_map_encode_im2col): rank 3 to 5, the
        /// arguments as <see cref="EncodeTiled"/>, with the bounding box's
        /// corners in the rank - 2 spatial dimensions and the pixels' channels
        /// and count.
        /// </summary>
        /// <param name="buffer">The tensor's memory.</param>
        /// <param name="offset">The tensor's first byte in the buffer.</param>
        /// <param name="dataType">The element type.</param>
        /// <param name="sizes">Each dimension's element count.</param>
        /// <param name="strides">Each dimension's stride in bytes.</param>
        /// <param name="lowerCorner">The box's lower corner offsets.</param>
        /// <param name="upperCorner">The box's upper corner offsets.</param>
        /// <param name="channelsPerPixel">Channels a pixel gives.</param>
        /// <param name="pixelsPerColumn">Pixels a column gives.</param>
        /// <param name="elementStrides">The traversal steps, or null.</param>
        /// <param name="swizzle">The shared-memory swizzle.</param>
        public static TensorMap EncodeIm2col(DeviceMemory buffer, long offset, TensorDataType dataType,
            long[] sizes, long[] strides, int[] lowerCorner, int[] upperCorner, uint channelsPerPixel,
            uint pixelsPerColumn, long[] elementStrides = null, TensorSwizzle swizzle = TensorSwizzle.None)
        {
            if (buffer == null)
                throw new ArgumentNullException("buffer");
            if (lowerCorner == null)
                throw new ArgumentNullException("lowerCorner");
            if (upperCorner == null)
                throw new ArgumentNullException("upperCorner");
            UIntPtr[] s = Sizes(sizes, "sizes"), st = Sizes(strides, "strides");
            UIntPtr[] e = Sizes(elementStrides ?? new long[0], "elementStrides");
            SafeTensorMapHandle h;
            Errors.Check(NativeMethods.cuabi_tensor_map_encode_im2col(buffer.Handle, Ranges.Bytes(offset, 1, "offset"), dataType,
                s, (UIntPtr)(uint)s.Length, st, (UIntPtr)(uint)st.Length, e, (UIntPtr)(uint)e.Length,
                lowerCorner, (UIntPtr)(uint)lowerCorner.Length, upperCorner, (UIntPtr)(uint)upperCorner.Length,
                channelsPerPixel, pixelsPerColumn, TensorInterleave.None, swizzle, TensorL2Promotion.None,
                TensorOobFill.Zero, out h));
            return new TensorMap(h);
        }

        private static UIntPtr[] Sizes(long[] values, string name)
        {
            if (values == null)
                throw new ArgumentNullException(name);
            UIntPtr[] r = new UIntPtr[values.Length];
            for (int i = 0; i < values.Length; i++)
                r[i] = Ranges.Bytes(values[i], 1, name + "[" + i + "]");
            return r;
        }
    }

    /// <summary>A tensor map's 128 bytes, the value of a <c>CUtensorMap</c> kernel parameter.</summary>
    [System.Runtime.InteropServices.StructLayout(System.Runtime.InteropServices.LayoutKind.Sequential, Size = 128)]
    public unsafe struct TensorMapValue
    {
        /// <summary>The size in bytes (CUABI_TENSOR_MAP_BYTES).</summary>
        public const int Size = 128;

        /// <summary>The map, opaque.</summary>
        public fixed byte bytes[Size];
    }
}
