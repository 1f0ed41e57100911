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
            return EncodeIm2col(buffer, offset, dataType, sizes, strides, elementStrides ?? new long[0], lowerCorner,
                upperCorner, channelsPerPixel, pixelsPerColumn, TensorInterleave.None, swizzle, TensorL2Promotion.None,
                TensorOobFill.Zero);
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
