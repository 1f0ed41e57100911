using System;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>A compute capability, e.g. 9.0.</summary>
    public struct ComputeCapability
    {
        /// <summary>Creates a compute capability.</summary>
        /// <param name="major">The major version.</param>
        /// <param name="minor">The minor version.</param>
        public ComputeCapability(int major, int minor)
        {
            Major = major;
            Minor = minor;
        }

        /// <summary>The major version.</summary>
        public int Major { get; private set; }

        /// <summary>The minor version.</summary>
        public int Minor { get; private set; }

        /// <summary>"major.minor".</summary>
        public override string ToString()
        {
            return Major + "." + Minor;
        }
    }

    /// <summary>
    /// A CUDA device and its primary context (the one the CUDA runtime,
    /// CuPy and PyTorch use). Objects made from it keep the context alive on
    /// their own, so the device may be disposed before them.
    /// </summary>
    public sealed partial class Device : IDisposable
    {
        // Get(ordinal), the constructor and Ordinal (read once) are generated (Objects.g.cs).

        /// <summary>Free and total device memory in bytes, as the driver sees them now.</summary>
        /// <param name="free">Free bytes.</param>
        /// <param name="total">Total bytes.</param>
        public void GetMemoryInfo(out long free, out long total)
        {
            UIntPtr f, t;
            Errors.Check(NativeMethods.cuabi_device_get_memory_info(Handle, out f, out t));
            free = (long)f.ToUInt64();
            total = (long)t.ToUInt64();
        }

        /// <summary>The primary context as a raw CUcontext value, for interop.</summary>
        public ulong NativeContext
        {
            get { return Context; }
        }

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

        /// <summary>Loads a CUBIN, PTX or fatbin file.</summary>
        /// <param name="path">The file's path.</param>
        public CudaModule LoadModuleFile(string path)
        {
            return CudaModule.LoadFile(this, path);
        }

        /// <summary>Allocates device memory for <paramref name="count"/> elements of <typeparamref name="T"/>.</summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="count">Number of elements (&gt; 0).</param>
        public DeviceBuffer<T> Allocate<T>(long count) where T : struct
        {
            return DeviceBuffer<T>.Allocate(this, count);
        }

        /// <summary>Allocates device memory and copies <paramref name="source"/> into it.</summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="source">The values to copy (not empty).</param>
        public DeviceBuffer<T> AllocateFrom<T>(T[] source) where T : struct
        {
            if (source == null)
                throw new ArgumentNullException("source");
            var buffer = DeviceBuffer<T>.Allocate(this, source.Length);
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

        /// <summary>Allocates page-locked host memory for <paramref name="count"/> elements, usable by async copies.</summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="count">Number of elements (&gt; 0).</param>
        public PinnedBuffer<T> AllocatePinned<T>(long count) where T : struct
        {
            return new PinnedBuffer<T>(this, count);
        }

        // ------------------------------------------------------------------
        // Stream-ordered allocation and memory pools
        // ------------------------------------------------------------------

        /// <summary>
        /// Allocates device memory for <paramref name="count"/> elements in
        /// stream order on <paramref name="stream"/>, from <paramref name="pool"/>:
        /// work on <paramref name="stream"/> queued after this call may use it,
        /// and other streams once they wait for it (an event). Cheap, does not
        /// synchronise the device, and can be captured into a graph (an
        /// allocation node; free it in the same capture with
        /// <see cref="DeviceMemory.FreeAsync"/>, or after the graph ran).
        /// </summary>
        /// <remarks>
        /// Free it with <see cref="DeviceMemory.FreeAsync"/> on the stream of
        /// your choice; disposing it (or its finalizer) frees it in order on
        /// the stream it was allocated on, which the buffer keeps alive. Work on
        /// other streams that uses it must be ordered before that stream or be
        /// finished.
        /// </remarks>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="count">Number of elements (&gt; 0).</param>
        /// <param name="stream">The stream, or null for the default stream.</param>
        /// <param name="pool">The pool, or null for the device's default pool.</param>
        public DeviceBuffer<T> AllocateAsync<T>(long count, CudaStream stream, MemoryPool pool = null) where T : struct
        {
            return DeviceBuffer<T>.Allocate(this, count, true, stream, pool);
        }

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

        /// <summary>
        /// The device's default pool: the one <see cref="AllocateAsync{T}"/>
        /// uses when given no pool, shared with the CUDA runtime's
        /// cudaMallocAsync and the stream-ordered allocators of CuPy and
        /// PyTorch. Each call returns a new object to dispose; disposing it
        /// leaves the pool alone.
        /// </summary>
        public MemoryPool GetDefaultMemoryPool()
        {
            return DefaultMemoryPool;
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

        // ------------------------------------------------------------------
        // Arrays
        // ------------------------------------------------------------------

        /// <summary>
        /// A new CUDA array of <paramref name="width"/> elements, <paramref name="height"/>
        /// rows (0 for 1D) and <paramref name="depth"/> slices (0 for 1D and 2D;
        /// with <see cref="ArrayFlags.Layered"/>, the number of layers), each
        /// element <paramref name="channels"/> values of <paramref name="format"/>.
        /// The shape is checked against the device's limits by the library.
        /// Fill and read it with <see cref="Copy3D"/>.
        /// </summary>
        /// <param name="format">The channel type.</param>
        /// <param name="channels">Values per element: 1, 2 or 4.</param>
        /// <param name="width">Elements per row (&gt; 0).</param>
        /// <param name="height">Rows; 0 for a 1D array.</param>
        /// <param name="depth">Slices or layers; 0 for 1D and 2D arrays.</param>
        /// <param name="flags">Layered, surface load/store, texture gather.</param>
        public CudaArray CreateArray(ArrayFormat format, int channels, long width, long height = 0, long depth = 0,
            ArrayFlags flags = ArrayFlags.None)
        {
            var desc = ArrayDesc.Default();
            desc.Format = format;
            desc.Channels = (uint)Ranges.NotNegative(channels, "channels");
            desc.Width = Ranges.NotNegative(width, "width");
            desc.Height = Ranges.NotNegative(height, "height");
            desc.Depth = Ranges.NotNegative(depth, "depth");
            desc.Flags = flags;
            return CudaArray.Create(this, desc);
        }

        /// <summary>Creates a stream.</summary>
        /// <param name="flags">Stream flags.</param>
        /// <param name="priority">0 is the default; see <see cref="GetStreamPriorityRange"/>.</param>
        public CudaStream CreateStream(StreamFlags flags = StreamFlags.None, int priority = 0)
        {
            return CudaStream.Create(this, flags, priority);
        }

        /// <summary>Creates an event.</summary>
        /// <param name="flags">Event flags; the default records timing.</param>
        public CudaEvent CreateEvent(EventFlags flags = EventFlags.None)
        {
            return CudaEvent.Create(this, flags);
        }

        /// <summary>"Device ordinal".</summary>
        public override string ToString()
        {
            return "Device " + Ordinal;
        }
    }
}
