using System;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// An object a kernel takes by its 8-byte value (device memory's pointer,
    /// a texture or surface object), which launches and plans check for
    /// disposal and keep reachable.
    /// </summary>
    internal interface IArgumentObject
    {
        /// <summary>The 8-byte argument; <see cref="ObjectDisposedException"/> once disposed.</summary>
        ulong LaunchValue { get; }

        /// <summary>The handle, closed once the object was disposed (or released by its finalizer): what plans check per launch.</summary>
        SafeHandle Lifetime { get; }

        /// <summary>What the object is, for messages: "device memory", "texture object", "surface object".</summary>
        string What { get; }
    }

    /// <summary>
    /// A CUDA array (1D, 2D, 3D or layered; <see cref="Device.CreateArray"/>):
    /// memory laid out for texture and surface reads. Fill and read it with
    /// <see cref="Copy3D"/>; read it in kernels through a <see cref="Texture"/>
    /// or a <see cref="Surface"/>. The library frees it once it is disposed and
    /// no texture or surface object uses it.
    /// </summary>
    /// <remarks>Its shape is read once, when made; its properties (Width to Flags) are generated (Objects.g.cs).</remarks>
    public sealed partial class CudaArray : IDisposable
    {
        /// <summary>"CudaArray width x height x depth format xN".</summary>
        public override string ToString()
        {
            return "CudaArray " + Width + " x " + Height + " x " + Depth + " " + Format + " x" + Channels;
        }
    }

    /// <summary>How a <see cref="Texture"/> reads: addressing, filtering, read mode, coordinates, border colour.</summary>
    /// <remarks>Its properties, one per field of cuabi_texture_desc from address_x to border_a, are generated (Objects.g.cs).</remarks>
    public sealed partial class TextureOptions
    {
        /// <summary>The defaults: clamped, point-filtered element reads by index.</summary>
        public TextureOptions()
        {
            AddressX = AddressMode.Clamp;
            AddressY = AddressMode.Clamp;
            AddressZ = AddressMode.Clamp;
        }

        /// <summary>Sets <see cref="AddressX"/>, <see cref="AddressY"/> and <see cref="AddressZ"/> at once.</summary>
        public AddressMode Address
        {
            set
            {
                AddressX = value;
                AddressY = value;
                AddressZ = value;
            }
        }
    }

    /// <summary>
    /// A texture object over a <see cref="CudaArray"/> or over device memory
    /// (linear or pitched). A kernel takes it as a <c>cudaTextureObject_t</c>
    /// parameter: pass the <see cref="Texture"/> itself to
    /// <see cref="Kernel.Launch(LaunchConfig, CudaStream, object[])"/>, a
    /// <see cref="LaunchPlan"/> or a graph node update (its 8-byte
    /// <see cref="NativeHandle"/>). It keeps its array or memory alive, in the
    /// library and as a reference (<see cref="Source"/>).
    /// </summary>
    /// <example>
    /// <code>
    /// using (CudaArray a = device.CreateArray(ArrayFormat.F32, 1, 64, 64))
    /// using (Texture t = Texture.FromArray(a, new TextureOptions { Filter = FilterMode.Linear }))
    ///     kernel.Launch(1, 64, null, t, output);
    /// </code>
    /// </example>
    public sealed partial class Texture : IDisposable, IArgumentObject
    {
        private Texture(SafeTextureHandle handle, object source)
        {
            this.handle = handle;
            Source = source;
        }

        /// <summary>A texture over all of <paramref name="array"/>; its element type is the array's.</summary>
        /// <param name="array">The array.</param>
        /// <param name="options">How it reads; null for the defaults.</param>
        /// <exception cref="CudaException">The library refused the options (e.g. wrap addressing without normalised coordinates); the message says which.</exception>
        public static Texture FromArray(CudaArray array, TextureOptions options = null)
        {
            if (array == null)
                throw new ArgumentNullException("array");
            var d = TextureDescNative.Create();
            SafeArrayHandle a = array.Handle;
            d.array = a.DangerousGetHandle();
            (options ?? new TextureOptions()).WriteTo(ref d);
            return Create(ref d, a, array);
        }

        /// <summary>
        /// A texture over <paramref name="width"/> elements of linear memory
        /// from byte <paramref name="offsetBytes"/> (a multiple of the device's
        /// texture alignment), read with <c>tex1Dfetch</c>.
        /// </summary>
        /// <param name="memory">The device memory.</param>
        /// <param name="format">The channel type of its elements.</param>
        /// <param name="channels">Values per element: 1, 2 or 4.</param>
        /// <param name="width">Elements.</param>
        /// <param name="offsetBytes">Where the elements start.</param>
        /// <param name="options">How it reads; null for the defaults.</param>
        /// <exception cref="CudaException">The library refused the range or the options; the message says which.</exception>
        public static Texture FromLinear(DeviceMemory memory, ArrayFormat format, int channels, long width, long offsetBytes = 0,
            TextureOptions options = null)
        {
            return FromPitched(memory, format, channels, width, 0, 0, offsetBytes, options);
        }

        /// <summary>
        /// A texture over <paramref name="height"/> rows of <paramref name="width"/>
        /// elements, <paramref name="pitchBytes"/> apart, from byte
        /// <paramref name="offsetBytes"/> of <paramref name="memory"/>; read
        /// with <c>tex2D</c>.
        /// </summary>
        /// <param name="memory">The device memory, e.g. from <see cref="Device.AllocatePitched{T}"/>.</param>
        /// <param name="format">The channel type of its elements.</param>
        /// <param name="channels">Values per element: 1, 2 or 4.</param>
        /// <param name="width">Elements per row.</param>
        /// <param name="height">Rows (&gt; 0).</param>
        /// <param name="pitchBytes">Bytes from one row to the next; 0: the memory's own <see cref="DeviceMemory.Pitch"/>.</param>
        /// <param name="offsetBytes">Where the first row starts.</param>
        /// <param name="options">How it reads; null for the defaults.</param>
        public static Texture FromPitched(DeviceMemory memory, ArrayFormat format, int channels, long width, long height,
            long pitchBytes = 0, long offsetBytes = 0, TextureOptions options = null)
        {
            if (memory == null)
                throw new ArgumentNullException("memory");
            Ranges.NotNegative(channels, "channels");
            var d = TextureDescNative.Create();
            SafeBufferHandle b = memory.Handle;
            d.buffer = b.DangerousGetHandle();
            d.format = format;
            d.channels = (uint)channels;
            d.width = Ranges.Bytes(width, 1, "width");
            d.height = Ranges.Bytes(height, 1, "height");
            d.pitch = Ranges.Bytes(pitchBytes, 1, "pitchBytes");
            d.offset = Ranges.Bytes(offsetBytes, 1, "offsetBytes");
            (options ?? new TextureOptions()).WriteTo(ref d);
            return Create(ref d, b, memory);
        }

        private static Texture Create(ref TextureDescNative d, SafeHandle memory, object source)
        {
            SafeTextureHandle h;
            CudaStatus status = NativeMethods.cuabi_texture_create(ref d, out h);
            GC.KeepAlive(memory); // the raw handle value in the struct stays valid until the call returned
            Errors.Check(status);
            return new Texture(h, source);
        }

        /// <summary>What the texture reads: the <see cref="CudaArray"/> or <see cref="DeviceMemory"/> it was made over.</summary>
        public object Source { get; }
    }

    /// <summary>
    /// A surface object over a <see cref="CudaArray"/> made with
    /// <see cref="ArrayFlags.SurfaceLoadStore"/>: kernels read and write the
    /// array through it (<c>surf2Dread</c>, <c>surf2Dwrite</c>, ...). A kernel
    /// takes it as a <c>cudaSurfaceObject_t</c> parameter: pass the
    /// <see cref="Surface"/> itself, in every launch form (its 8-byte
    /// <see cref="NativeHandle"/>). It keeps its array alive.
    /// </summary>
    public sealed partial class Surface : IDisposable, IArgumentObject
    {
        private Surface(SafeSurfaceHandle handle, CudaArray array)
        {
            this.handle = handle;
            Array = array;
        }

        /// <summary>The array the surface reads and writes.</summary>
        public CudaArray Array { get; }
    }
}
