using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
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
    public sealed class Device : IDisposable
    {
        private readonly SafeDeviceHandle handle;

        private Device(SafeDeviceHandle handle)
        {
            this.handle = handle;
            Ordinal = OrdinalCore(handle);
        }

        /// <summary>The number of CUDA devices (0 where the driver sees none).</summary>
        /// <exception cref="CudaException">No usable driver (<see cref="CudaStatus.DriverNotFound"/>, <see cref="CudaStatus.StubDriver"/>).</exception>
        public static int Count
        {
            get { CuabiLibrary.Load(); return CountCore(); }
        }

        /// <summary>Device <paramref name="ordinal"/>; each call returns a new object to dispose.</summary>
        /// <param name="ordinal">0 for the first device.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.NoDevice"/> for an ordinal out of range, or no usable driver.</exception>
        public static Device Get(int ordinal)
        {
            CuabiLibrary.Load();
            return GetCore(ordinal);
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeDeviceHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>The device's ordinal.</summary>
        public int Ordinal { get; private set; }

        /// <summary>The device's name, e.g. "NVIDIA H100 80GB HBM3".</summary>
        public string Name
        {
            get { var h = Handle; return Errors.ReadString(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_device_get_name(h, b, ref s); }); }
        }

        /// <summary>The device's compute capability.</summary>
        public ComputeCapability ComputeCapability
        {
            get
            {
                int major, minor;
                Errors.Check(NativeMethods.cuabi_device_get_compute_capability(Handle, out major, out minor));
                return new ComputeCapability(major, minor);
            }
        }

        /// <summary>The device's total memory in bytes.</summary>
        public long TotalMemory
        {
            get
            {
                UIntPtr bytes;
                Errors.Check(NativeMethods.cuabi_device_get_total_memory(Handle, out bytes));
                return (long)bytes.ToUInt64();
            }
        }

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

        /// <summary>Any CUdevice_attribute of the driver, by its numeric value (see cuda.h).</summary>
        /// <param name="cuAttribute">The CUdevice_attribute value.</param>
        public int GetAttribute(int cuAttribute)
        {
            int value;
            Errors.Check(NativeMethods.cuabi_device_get_attribute(Handle, cuAttribute, out value));
            return value;
        }

        /// <summary>The primary context as a raw CUcontext value, for interop.</summary>
        public ulong NativeContext
        {
            get
            {
                ulong ctx;
                Errors.Check(NativeMethods.cuabi_device_get_context(Handle, out ctx));
                return ctx;
            }
        }

        /// <summary>Lowest and highest stream priorities (numerically lower is higher priority).</summary>
        /// <param name="least">The lowest priority (the default, 0).</param>
        /// <param name="greatest">The highest priority.</param>
        public void GetStreamPriorityRange(out int least, out int greatest)
        {
            Errors.Check(NativeMethods.cuabi_device_get_stream_priority_range(Handle, out least, out greatest));
        }

        /// <summary>Waits for all work on the device's primary context.</summary>
        public void Synchronize()
        {
            Errors.Check(NativeMethods.cuabi_device_synchronize(Handle));
        }

        /// <summary>
        /// Resets the primary context, freeing everything on it (also what the
        /// CUDA runtime and other libraries made there). Every object made on
        /// this device before is then unusable; recreate what you need. After a
        /// sticky fault (<see cref="CudaStatus.ContextLost"/>) the driver
        /// refuses the device to the process for good and this throws too:
        /// start a new process.
        /// </summary>
        public void Reset()
        {
            Errors.Check(NativeMethods.cuabi_device_reset(Handle));
        }

        /// <summary>
        /// Compiles CUDA C++ for this device and loads it: the one call from
        /// source to a module. Compiled images go through cuabi's on-disk cache.
        /// </summary>
        /// <param name="source">CUDA C++ source.</param>
        /// <param name="options">Name, NVRTC options, headers, name expressions, output kind and cache use; null for the defaults.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.Compile"/> with <see cref="CudaException.CompileLog"/> when NVRTC rejects the code.</exception>
        public CudaModule Compile(string source, CompileOptions options = null)
        {
            if (source == null)
                throw new ArgumentNullException("source");
            var o = options ?? new CompileOptions();
            using (var strings = new NativeStrings())
            {
                var desc = CompileDescNative.Create();
                desc.source = strings.String(source, "source");
                desc.name = strings.String(o.Name, "options.Name");
                desc.options = strings.Array(o.Options, "options.Options");
                desc.num_options = (UIntPtr)(uint)o.Options.Count;
                var names = new List<string>();
                var contents = new List<string>();
                foreach (var header in o.Headers)
                {
                    names.Add(header.Key);
                    contents.Add(header.Value);
                }
                desc.header_names = strings.Array(names, "options.Headers (name)");
                desc.header_sources = strings.Array(contents, "options.Headers (source)");
                desc.num_headers = (UIntPtr)(uint)names.Count;
                desc.name_expressions = strings.Array(o.NameExpressions, "options.NameExpressions");
                desc.num_name_expressions = (UIntPtr)(uint)o.NameExpressions.Count;
                if (o.Output.HasValue)
                    desc.output = o.Output.Value;
                if (!o.UseCache)
                    desc.flags |= CompileFlags.NoCache;
                SafeModuleHandle module;
                Errors.Check(NativeMethods.cuabi_module_compile(Handle, ref desc, out module));
                return new CudaModule(module);
            }
        }

        /// <summary>Loads CUBIN, PTX or fatbin bytes, e.g. <see cref="Program.Cubin"/>.</summary>
        /// <param name="image">The image bytes (not empty).</param>
        /// <exception cref="ArgumentException"><paramref name="image"/> is empty.</exception>
        public unsafe CudaModule LoadModule(byte[] image)
        {
            if (image == null)
                throw new ArgumentNullException("image");
            if (image.Length == 0)
                throw new ArgumentException("is empty: a module image has at least one byte", "image");
            SafeModuleHandle module;
            fixed (byte* p = image)
                Errors.Check(NativeMethods.cuabi_module_load_data(Handle, (IntPtr)p, (UIntPtr)(uint)image.Length, out module));
            return new CudaModule(module);
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
            if (path == null)
                throw new ArgumentNullException("path");
            SafeModuleHandle module;
            Errors.Check(NativeMethods.cuabi_module_load_file(Handle, Utf8.Encode(path, "path"), out module));
            return new CudaModule(module);
        }

        /// <summary>Allocates device memory for <paramref name="count"/> elements of <typeparamref name="T"/>.</summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="count">Number of elements (&gt; 0).</param>
        public DeviceBuffer<T> Allocate<T>(long count) where T : struct
        {
            return new DeviceBuffer<T>(this, count);
        }

        /// <summary>Allocates device memory and copies <paramref name="source"/> into it.</summary>
        /// <typeparam name="T">A blittable value type.</typeparam>
        /// <param name="source">The values to copy (not empty).</param>
        public DeviceBuffer<T> AllocateFrom<T>(T[] source) where T : struct
        {
            if (source == null)
                throw new ArgumentNullException("source");
            var buffer = new DeviceBuffer<T>(this, source.Length);
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

        /// <summary>Creates a stream.</summary>
        /// <param name="flags">Stream flags.</param>
        /// <param name="priority">0 is the default; see <see cref="GetStreamPriorityRange"/>.</param>
        public CudaStream CreateStream(StreamFlags flags = StreamFlags.None, int priority = 0)
        {
            SafeStreamHandle stream;
            Errors.Check(NativeMethods.cuabi_stream_create(Handle, flags, priority, out stream));
            return new CudaStream(stream);
        }

        /// <summary>Creates an event.</summary>
        /// <param name="flags">Event flags; the default records timing.</param>
        public CudaEvent CreateEvent(EventFlags flags = EventFlags.None)
        {
            SafeEventHandle ev;
            Errors.Check(NativeMethods.cuabi_event_create(Handle, flags, out ev));
            return new CudaEvent(ev);
        }

        /// <summary>Releases the device handle; objects made from it stay usable.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }

        /// <summary>"Device ordinal".</summary>
        public override string ToString()
        {
            return "Device " + Ordinal;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int CountCore()
        {
            int count;
            Errors.Check(NativeMethods.cuabi_device_get_count(out count));
            return count;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static Device GetCore(int ordinal)
        {
            SafeDeviceHandle h;
            Errors.Check(NativeMethods.cuabi_device_get(ordinal, out h));
            return new Device(h);
        }

        private static int OrdinalCore(SafeDeviceHandle h)
        {
            int ordinal;
            Errors.Check(NativeMethods.cuabi_device_get_ordinal(h, out ordinal));
            return ordinal;
        }
    }
}
