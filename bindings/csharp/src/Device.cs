using System;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A CUDA device and its primary context (the one the CUDA runtime,
    /// CuPy and PyTorch use). Objects made from it keep the context alive on
    /// their own, so the device may be disposed before them.
    /// </summary>
    public sealed partial class Device : IDisposable
    {
        // Get(ordinal), the constructor and Ordinal (read once) are generated (Objects.g.cs).

        /// <summary>
        /// Compiles CUDA C++ for this device and loads it: the one call from
        /// source to a module. Compiled images go through cuabi's on-disk cache.
        /// </summary>
        /// <param name="source">CUDA C++ source.</param>
        /// <param name="options">
        /// Typed and raw NVRTC options, name, headers, name expressions, output kind and cache use;
        /// null for the defaults. Without an architecture the device's own is used.
        /// </param>
        /// <exception cref="ArgumentException">A string C cannot take.</exception>
        /// <exception cref="CudaException"><see cref="CudaStatus.Compile"/> with <see cref="CudaException.CompileLog"/> when NVRTC rejects the code.</exception>
        public CudaModule Compile(string source, CompileOptions options = null)
        {
            using (var strings = new NativeStrings())
            {
                var desc = Describe(source, options, strings);
                return new CudaModule(CompileCore(Handle, ref desc));
            }
        }

        /// <summary>
        /// <see cref="Compile"/> on the thread pool: the calling thread goes on
        /// while NVRTC compiles and the module loads. Bad arguments throw at
        /// once (the options are read before this returns, so changing them
        /// afterwards changes nothing); the task carries a compile failure
        /// (<see cref="CudaException"/>). The device may be disposed before the
        /// task ends.
        /// </summary>
        /// <param name="source">CUDA C++ source.</param>
        /// <param name="options">As for <see cref="Compile"/>.</param>
        public Task<CudaModule> CompileAsync(string source, CompileOptions options = null)
        {
            return Background.Run(Handle, strings => Describe(source, options, strings),
                (raw, desc) => new CudaModule(CompileCore(new SafeDeviceHandle(raw, false), ref desc)));
        }

        private static SafeModuleHandle CompileCore(SafeDeviceHandle device, ref CompileDescNative desc)
        {
            SafeModuleHandle module;
            Errors.Check(NativeMethods.cuabi_module_compile(device, ref desc, out module));
            return module;
        }

        // The compile descriptor of `source` and `options`, its strings in `strings`.
        private static CompileDescNative Describe(string source, CompileOptions options, NativeStrings strings)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            var o = options ?? new CompileOptions();
            var desc = CompileDescNative.Create();
            desc.source = strings.String(source, "source");
            desc.name = strings.String(o.Name, "options.Name");
            o.Fill(ref desc, strings, "options.");
            desc.num_headers = strings.Headers(o.Headers, "options.Headers", out desc.header_names, out desc.header_sources);
            desc.name_expressions = strings.Array(o.NameExpressions, "options.NameExpressions");
            desc.num_name_expressions = (UIntPtr)(uint)o.NameExpressions.Count;
            if (o.Output.HasValue)
                desc.output = o.Output.Value;
            if (!o.UseCache)
                desc.flags |= CompileFlags.NoCache;
            return desc;
        }

        /// <summary>Loads CUBIN, PTX or fatbin bytes, e.g. <see cref="Program.Cubin"/>.</summary>
        /// <param name="image">The image bytes (not empty).</param>
        /// <exception cref="ArgumentException"><paramref name="image"/> is empty.</exception>
        public CudaModule LoadModule(byte[] image)
        {
            if (image == null)
                throw new ArgumentNullException("image");
            if (image.Length == 0)
                throw new ArgumentException("is empty: a module image has at least one byte", "image");
            return CudaModule.LoadData(this, image);
        }

        /// <summary>Loads PTX text, e.g. <see cref="Program.Ptx"/>; the driver JIT-compiles it for this device.</summary>
        /// <param name="ptx">The PTX source.</param>
        public CudaModule LoadModule(string ptx)
        {
            if (ptx == null)
                throw new ArgumentNullException("ptx");
            return LoadModule(Utf8.Encode(ptx, "ptx"));
        }

        /// <summary>Allocates device memory and copies <paramref name="source"/> into it.</summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="source">The values to copy (not empty).</param>
        public DeviceBuffer<T> AllocateFrom<T>(T[] source) where T : struct
        {
            if (source == null)
                throw new ArgumentNullException("source");
            var buffer = Allocate<T>(source.Length);
            try
            {
                buffer.CopyFrom(source);
            }
            catch
            {
                buffer.Dispose();
                throw;
            }
            return buffer;
        }

        // ------------------------------------------------------------------
        // Stream-ordered allocation and memory pools
        // ------------------------------------------------------------------

        /// <summary>A new memory pool of this device's memory.</summary>
        /// <param name="options">Its properties; null for the defaults.</param>
        public MemoryPool CreateMemoryPool(MemoryPoolOptions options = null)
        {
            if (options == null)
                return MemoryPool.Create(this);
            var desc = MemoryPoolDesc.Default();
            desc.MaxBytes = Ranges.Bytes(options.MaxBytes, 1, "options.MaxBytes").ToUInt64();
            desc.ReleaseThreshold = Ranges.Bytes(options.ReleaseThreshold, 1, "options.ReleaseThreshold").ToUInt64();
            desc.Flags = options.Flags;
            return MemoryPool.Create(this, desc);
        }

        // ------------------------------------------------------------------
        // Pitched memory (AllocateManaged<T> is generated: Objects.g.cs)
        // ------------------------------------------------------------------

        /// <summary>
        /// Allocates <paramref name="height"/> rows of <paramref name="width"/>
        /// elements, each row padded so that rows stay aligned for the device
        /// (cuMemAllocPitch). The row pitch in bytes is the buffer's
        /// <see cref="DeviceMemory.Pitch"/>; its size is pitch * height, and its
        /// <see cref="DeviceBuffer{T}.Count"/> that size in whole elements.
        /// Copy rows in and out with <see cref="Copy3D"/>; a kernel reads row
        /// y at byte y * pitch.
        /// </summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="width">Elements per row.</param>
        /// <param name="height">Rows.</param>
        /// <param name="accessSize">
        /// The size of the device's reads and writes the rows are aligned for:
        /// 4, 8 or 16 (checked by the library). 0 (the default): the largest of
        /// 16, 8 and 4 that divides the element's size, else 4.
        /// </param>
        public DeviceBuffer<T> AllocatePitched<T>(long width, long height, int accessSize = 0) where T : struct
        {
            int size = Element<T>.Require();
            UIntPtr widthBytes = Ranges.Bytes(width, size, "width");
            Ranges.NotNegative(height, "height");
            Ranges.NotNegative(accessSize, "accessSize");
            if (accessSize == 0)
                accessSize = size % 16 == 0 ? 16 : size % 8 == 0 ? 8 : 4;
            SafeBufferHandle h;
            Errors.Check(NativeMethods.cuabi_buffer_alloc_pitched(Handle, widthBytes, (UIntPtr)(ulong)height, (uint)accessSize, out h));
            return new DeviceBuffer<T>(h);
        }

        /// <summary>"Device ordinal".</summary>
        public override string ToString()
        {
            return "Device " + Ordinal;
        }
    }
}
