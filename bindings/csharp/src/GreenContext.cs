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
