// The bad-input corpus of the memory API through the C# binding: pools and
// stream-ordered allocation, managed memory, IPC, peer access, pitched
// memory, fills, 3D copies, arrays, textures and surfaces. Each case is one
// wrong input with the exception it must give and text its message must
// hold, run by the corpus runner of CorpusTests.cs. Two parts: what the
// library or the binding refuses before any driver call (NULL handles, NULL
// and empty descriptors, host boxes past managed arrays), and what needs a
// device.

using System;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class MemoryCorpus
    {
        public static void Register()
        {
            Registry.Add("corpus: bad input to the memory API, the part that needs no GPU", RunCpu);
            Registry.AddGpu("corpus: bad input to the memory API, the part that needs a GPU", RunGpu);
        }

        private static void Check(CudaStatus status)
        {
            Errors.Check(status);
        }

        private static readonly SafeDeviceHandle NoDevice = new SafeDeviceHandle(IntPtr.Zero, false);
        private static readonly SafeBufferHandle NoBuffer = new SafeBufferHandle(IntPtr.Zero, false);
        private static readonly SafeMemoryPoolHandle NoPool = new SafeMemoryPoolHandle(IntPtr.Zero, false);
        private static readonly SafeStreamHandle NoStream = new SafeStreamHandle(IntPtr.Zero, false);
        private static readonly SafeEventHandle NoEvent = new SafeEventHandle(IntPtr.Zero, false);
        private static readonly SafeArrayHandle NoArray = new SafeArrayHandle(IntPtr.Zero, false);
        private static readonly SafeTextureHandle NoTexture = new SafeTextureHandle(IntPtr.Zero, false);
        private static readonly SafeSurfaceHandle NoSurface = new SafeSurfaceHandle(IntPtr.Zero, false);

        // ------------------------------------------------------------------
        // No GPU: NULL handles, descriptors refused before the driver, and
        // what the binding refuses itself
        // ------------------------------------------------------------------

        private static void RunCpu()
        {
            var c = new Corpus();
            NullHandleCases(c);
            DescriptorCases(c);
            BindingCases(c);
            c.RunAndReport("C#, memory");
        }

        private static void NullHandleCases(Corpus c)
        {
            var ipc = new byte[128];
            c.Cuda("NULL buffer: kind", "cuabi_buffer_get_kind", CudaStatus.InvalidHandle, "buffer is NULL", ctx =>
            {
                BufferKind k;
                Check(NativeMethods.cuabi_buffer_get_kind(NoBuffer, out k));
            });
            c.Cuda("NULL device: pool create", "cuabi_memory_pool_create", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                var desc = MemoryPoolDescNative.Create();
                SafeMemoryPoolHandle p;
                Check(NativeMethods.cuabi_memory_pool_create(NoDevice, ref desc, out p));
            });
            c.Cuda("NULL device: default pool", "cuabi_device_get_default_memory_pool", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeMemoryPoolHandle p;
                Check(NativeMethods.cuabi_device_get_default_memory_pool(NoDevice, out p));
            });
            c.Cuda("NULL pool: usage", "cuabi_memory_pool_get_usage", CudaStatus.InvalidHandle, "pool is NULL", ctx =>
            {
                ulong r, u;
                Check(NativeMethods.cuabi_memory_pool_get_usage(NoPool, out r, out u));
            });
            c.Cuda("NULL pool: release threshold", "cuabi_memory_pool_set_release_threshold", CudaStatus.InvalidHandle, "pool is NULL",
                ctx => Check(NativeMethods.cuabi_memory_pool_set_release_threshold(NoPool, 1)));
            c.Cuda("NULL pool: trim", "cuabi_memory_pool_trim", CudaStatus.InvalidHandle, "pool is NULL",
                ctx => Check(NativeMethods.cuabi_memory_pool_trim(NoPool, UIntPtr.Zero)));
            c.Cuda("NULL pool: export", "cuabi_memory_pool_export_fd", CudaStatus.InvalidHandle, "pool is NULL", ctx =>
            {
                int fd;
                Check(NativeMethods.cuabi_memory_pool_export_fd(NoPool, out fd));
            });
            c.Cuda("NULL device: pool import", "cuabi_memory_pool_import_fd", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeMemoryPoolHandle p;
                Check(NativeMethods.cuabi_memory_pool_import_fd(NoDevice, 0, out p));
            });
            c.Cuda("NULL device: stream-ordered allocation", "cuabi_buffer_alloc_async", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeBufferHandle b;
                Check(NativeMethods.cuabi_buffer_alloc_async(NoDevice, (UIntPtr)64u, NoPool, NoStream, out b));
            });
            c.Cuda("NULL buffer: free in stream order", "cuabi_buffer_free_async", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_free_async(NoBuffer, NoStream)));
            c.Cuda("NULL device: managed allocation", "cuabi_buffer_alloc_managed", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeBufferHandle b;
                Check(NativeMethods.cuabi_buffer_alloc_managed(NoDevice, (UIntPtr)64u, ManagedFlags.None, out b));
            });
            c.Cuda("NULL buffer: host pointer", "cuabi_buffer_get_host_pointer", CudaStatus.InvalidHandle, "buffer is NULL", ctx =>
            {
                IntPtr p;
                Check(NativeMethods.cuabi_buffer_get_host_pointer(NoBuffer, out p));
            });
            c.Cuda("NULL buffer: prefetch", "cuabi_buffer_prefetch_async", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_prefetch_async(NoBuffer, UIntPtr.Zero, (UIntPtr)4u, -1, NoStream)));
            c.Cuda("NULL buffer: advise", "cuabi_buffer_advise", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_advise(NoBuffer, UIntPtr.Zero, (UIntPtr)4u, MemoryAdvice.SetReadMostly, -1)));
            c.Cuda("NULL buffer: IPC handle", "cuabi_buffer_get_ipc_handle", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(Ipc.Open(ipc, (p, n) => NativeMethods.cuabi_buffer_get_ipc_handle(NoBuffer, p, n))));
            c.Cuda("NULL device: IPC open", "cuabi_buffer_open_ipc", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeBufferHandle b = null;
                Check(Ipc.Open(ipc, (p, n) => NativeMethods.cuabi_buffer_open_ipc(NoDevice, NoPool, p, n, out b)));
            });
            c.Cuda("NULL event: IPC handle", "cuabi_event_get_ipc_handle", CudaStatus.InvalidHandle, "event is NULL",
                ctx => Check(Ipc.Open(ipc, (p, n) => NativeMethods.cuabi_event_get_ipc_handle(NoEvent, p, n))));
            c.Cuda("NULL device: IPC event open", "cuabi_event_open_ipc", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeEventHandle e = null;
                Check(Ipc.Open(ipc, (p, n) => NativeMethods.cuabi_event_open_ipc(NoDevice, p, n, out e)));
            });
            c.Cuda("NULL devices: can access peer", "cuabi_device_can_access_peer", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                int can;
                Check(NativeMethods.cuabi_device_can_access_peer(NoDevice, NoDevice, out can));
            });
            c.Cuda("NULL devices: enable peer access", "cuabi_device_enable_peer_access", CudaStatus.InvalidHandle, "device is NULL",
                ctx => Check(NativeMethods.cuabi_device_enable_peer_access(NoDevice, NoDevice)));
            c.Cuda("NULL devices: disable peer access", "cuabi_device_disable_peer_access", CudaStatus.InvalidHandle, "device is NULL",
                ctx => Check(NativeMethods.cuabi_device_disable_peer_access(NoDevice, NoDevice)));
            c.Cuda("NULL devices: peer attribute", "cuabi_device_get_peer_attribute", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                int v;
                Check(NativeMethods.cuabi_device_get_peer_attribute(NoDevice, NoDevice, 1, out v));
            });
            c.Cuda("NULL buffers: copy path", "cuabi_buffer_get_copy_path", CudaStatus.InvalidHandle, "dst is NULL", ctx =>
            {
                CopyPath path;
                Check(NativeMethods.cuabi_buffer_get_copy_path(NoBuffer, NoBuffer, out path));
            });
            c.Cuda("NULL device: pitched allocation", "cuabi_buffer_alloc_pitched", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                SafeBufferHandle b;
                Check(NativeMethods.cuabi_buffer_alloc_pitched(NoDevice, (UIntPtr)64u, (UIntPtr)4u, 4, out b));
            });
            c.Cuda("NULL buffer: pitch", "cuabi_buffer_get_pitch", CudaStatus.InvalidHandle, "buffer is NULL", ctx =>
            {
                UIntPtr pitch;
                Check(NativeMethods.cuabi_buffer_get_pitch(NoBuffer, out pitch));
            });
            c.Cuda("NULL buffer: fill", "cuabi_buffer_fill", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_fill(NoBuffer, UIntPtr.Zero, 0, 4, (UIntPtr)1u)));
            c.Cuda("NULL buffer: fill in stream order", "cuabi_buffer_fill_async", CudaStatus.InvalidHandle, "buffer is NULL",
                ctx => Check(NativeMethods.cuabi_buffer_fill_async(NoBuffer, UIntPtr.Zero, 0, 4, (UIntPtr)1u, NoStream)));
            c.Cuda("NULL device: array", "cuabi_array_create", CudaStatus.InvalidHandle, "device is NULL", ctx =>
            {
                var desc = ArrayDescNative.Create();
                desc.width = (UIntPtr)4u;
                SafeArrayHandle a;
                Check(NativeMethods.cuabi_array_create(NoDevice, ref desc, out a));
            });
            c.Cuda("NULL array: shape", "cuabi_array_get_desc", CudaStatus.InvalidHandle, "array is NULL", ctx =>
            {
                var desc = ArrayDescNative.Create();
                Check(NativeMethods.cuabi_array_get_desc(NoArray, ref desc));
            });
            c.Cuda("NULL array: CUarray", "cuabi_array_get_handle", CudaStatus.InvalidHandle, "array is NULL", ctx =>
            {
                ulong a;
                Check(NativeMethods.cuabi_array_get_handle(NoArray, out a));
            });
            c.Cuda("NULL texture: object", "cuabi_texture_get_handle", CudaStatus.InvalidHandle, "texture is NULL", ctx =>
            {
                ulong t;
                Check(NativeMethods.cuabi_texture_get_handle(NoTexture, out t));
            });
            c.Cuda("NULL array: surface", "cuabi_surface_create", CudaStatus.InvalidHandle, "array is NULL", ctx =>
            {
                SafeSurfaceHandle s;
                Check(NativeMethods.cuabi_surface_create(NoArray, out s));
            });
            c.Cuda("NULL surface: object", "cuabi_surface_get_handle", CudaStatus.InvalidHandle, "surface is NULL", ctx =>
            {
                ulong s;
                Check(NativeMethods.cuabi_surface_get_handle(NoSurface, out s));
            });
            c.Cuda("a program's handle as a memory pool", "cuabi_memory_pool_trim", CudaStatus.InvalidHandle, "it is a cuabi_program", ctx =>
            {
                using (var p = new Program("__global__ void k() {}"))
                    Check(NativeMethods.cuabi_memory_pool_trim(new SafeMemoryPoolHandle(p.Handle.DangerousGetHandle(), false), UIntPtr.Zero));
            });
            c.Cuda("a made-up array value", "cuabi_array_get_handle", CudaStatus.InvalidHandle, "array is not a live cuabi_array", ctx =>
            {
                ulong a;
                Check(NativeMethods.cuabi_array_get_handle(new SafeArrayHandle(new IntPtr(0x5A5A5A5A), false), out a));
            });
        }

        private static void DescriptorCases(Corpus c)
        {
            var host = new float[64];
            c.Cuda("a 3D copy with no memory on either side", "cuabi_copy_3d", CudaStatus.InvalidArgument,
                "src: none of src_host, src_buffer, src_array is set", ctx =>
                {
                    var d = Copy3DDescNative.Create();
                    d.width_bytes = (UIntPtr)4u;
                    Check(NativeMethods.cuabi_copy_3d(ref d));
                });
            c.Cuda("a 3D copy between two host memories", "cuabi_copy_3d", CudaStatus.InvalidArgument, "both sides are host memory",
                ctx => new Copy3D(CopyEnd.Host(host), CopyEnd.Host(new float[64]), 16, 2).Copy());
            c.Cuda("a 3D copy whose host pitch is smaller than the row", "cuabi_copy_3d", CudaStatus.InvalidArgument,
                "src pitch 8 is smaller than the row", ctx => new Copy3D(CopyEnd.Host(host, 8), CopyEnd.Host(new float[64]), 16, 2).Copy());
            c.Cuda("a 3D copy with a made-up buffer", "cuabi_copy_3d", CudaStatus.InvalidHandle, "is not a live cuabi_buffer", ctx =>
            {
                var d = Copy3DDescNative.Create();
                d.src_buffer = new IntPtr(0x5A5A5A5A);
                d.dst_buffer = new IntPtr(0x5A5A5A5B);
                d.width_bytes = (UIntPtr)4u;
                Check(NativeMethods.cuabi_copy_3d(ref d));
            });
            c.Cuda("a texture over nothing", "cuabi_texture_create", CudaStatus.InvalidArgument, "desc sets neither array nor buffer", ctx =>
            {
                var d = TextureDescNative.Create();
                SafeTextureHandle t;
                Check(NativeMethods.cuabi_texture_create(ref d, out t));
            });
        }

        private static void BindingCases(Corpus c)
        {
            var small = new float[10];
            var large = new float[100];
            c.Throws<ArgumentNullException>("a copy without a source", "Source", "Source",
                ctx => new Copy3D(null, CopyEnd.Host(large), 4).Copy());
            c.Throws<ArgumentNullException>("a copy without a destination", "Destination", "Destination",
                ctx => new Copy3D(CopyEnd.Host(large), null, 4).Copy());
            c.Throws<ArgumentNullException>("a null managed array as a side", "values", "values", ctx => CopyEnd.Host((float[])null));
            c.Throws<ArgumentNullException>("a null pinned buffer as a side", "values", "values", ctx => CopyEnd.Host((PinnedBuffer<float>)null));
            c.Throws<ArgumentNullException>("null device memory as a side", "memory", "memory", ctx => CopyEnd.Device(null));
            c.Throws<ArgumentNullException>("a null array as a side", "array", "array", ctx => CopyEnd.Array(null));
            c.Throws<ArgumentException>("a source box past the end of a managed array", "Source",
                "reaches byte 48 of the source's host memory, which holds 40 bytes",
                ctx => new Copy3D(CopyEnd.Host(small), CopyEnd.Host(large), 12 * 4).Copy());
            c.Throws<ArgumentException>("a destination box past the end of a managed array", "Destination",
                "reaches byte 80 of the destination's host memory, which holds 40 bytes",
                ctx => new Copy3D(CopyEnd.Host(large), CopyEnd.Host(small), 4 * 4, 5).Copy());
            c.Throws<ArgumentException>("a source box whose offset puts it past a managed array", "Source", "which holds 40 bytes",
                ctx => new Copy3D(CopyEnd.Host(small).At(4, 1), CopyEnd.Host(large), 4 * 4, 2).Copy());
            c.Throws<ArgumentException>("a slice past a managed array", "Source", "which holds 400 bytes",
                ctx => new Copy3D(CopyEnd.Host(large, 40, 5), CopyEnd.Host(new float[1000]), 40, 5, 3).Copy());
            c.Throws<ArgumentException>("an asynchronous copy from a managed array", "Source", "pinned only while a call runs",
                ctx => new Copy3D(CopyEnd.Host(large), CopyEnd.Host(IntPtr.Zero), 4).CopyAsync(null));
            c.Throws<ArgumentException>("an asynchronous copy into a managed array", "Destination", "pinned only while a call runs",
                ctx => new Copy3D(CopyEnd.Host(IntPtr.Zero), CopyEnd.Host(large), 4).CopyAsync(null));
            c.Throws<ArgumentOutOfRangeException>("a negative width", "WidthBytes", "cannot be negative",
                ctx => new Copy3D(CopyEnd.Host(large), CopyEnd.Host(large), -4).Copy());
            c.Throws<ArgumentOutOfRangeException>("a negative row offset", "Y", "cannot be negative",
                ctx => new Copy3D(CopyEnd.Host(large).At(0, -1), CopyEnd.Host(large), 4).Copy());
            c.Throws<ArgumentOutOfRangeException>("a negative pitch", "PitchBytes", "cannot be negative",
                ctx => new Copy3D(CopyEnd.Host(large, -8), CopyEnd.Host(large), 4).Copy());
            c.Throws<ArgumentNullException>("a texture over a null array", "array", "array", ctx => Texture.FromArray(null));
            c.Throws<ArgumentNullException>("a texture over null memory", "memory", "memory",
                ctx => Texture.FromLinear(null, ArrayFormat.F32, 1, 4));
            c.Throws<ArgumentNullException>("a pitched texture over null memory", "memory", "memory",
                ctx => Texture.FromPitched(null, ArrayFormat.F32, 1, 4, 4));
            c.Throws<ArgumentNullException>("a surface over a null array", "array", "array", ctx => Surface.Create(null));
            c.Throws<ArgumentNullException>("the location of a null device", "device", "device", ctx => MemoryLocation.OfDevice((Device)null));
            c.Throws<ArgumentNullException>("opening a buffer on a null device", "device", "device",
                ctx => DeviceBuffer<int>.OpenIpc(null, new byte[128]));
            c.Throws<ArgumentNullException>("opening an event on a null device", "device", "device", ctx => CudaEvent.OpenIpc(null, new byte[128]));
            c.Throws<ArgumentNullException>("importing a pool on a null device", "device", "device", ctx => MemoryPool.ImportFd(null, 3));
        }

        // ------------------------------------------------------------------
        // With a device
        // ------------------------------------------------------------------

        internal const string Kernels = @"
extern ""C"" __global__ void fetch1d(cudaTextureObject_t tex, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}
extern ""C"" __global__ void touch(cudaSurfaceObject_t surf, int x)
{
  surf2Dwrite(1.0f, surf, x * 4, 0);
}
";

        private sealed class Fixture : IDisposable
        {
            public readonly Device Device;
            public readonly CudaStream Stream;
            public readonly CudaModule Module;
            public readonly Kernel Fetch, Touch;
            public readonly DeviceBuffer<float> Plain;     // 64 floats
            public readonly DeviceBuffer<float> Managed;   // 64 floats
            public readonly MemoryPool Pool;               // without IPC
            public readonly CudaArray Array2D;             // 8 x 4 floats
            public readonly CudaArray SurfaceArray;        // 8 x 4 floats, surface load/store
            public readonly CudaEvent TimedEvent, SharedEvent;

            public Fixture()
            {
                Device = Device.Get(0);
                Stream = Device.CreateStream();
                Module = Device.Compile(Kernels, new CompileOptions { Name = "memory_corpus.cu" });
                Fetch = Module.GetKernel("fetch1d");
                Touch = Module.GetKernel("touch");
                Plain = Device.Allocate<float>(64);
                Managed = Device.AllocateManaged<float>(64);
                Pool = Device.CreateMemoryPool();
                Array2D = Device.CreateArray(ArrayFormat.F32, 1, 8, 4);
                SurfaceArray = Device.CreateArray(ArrayFormat.F32, 1, 8, 4, 0, ArrayFlags.SurfaceLoadStore);
                TimedEvent = Device.CreateEvent();
                SharedEvent = Device.CreateEvent(EventFlags.Interprocess | EventFlags.DisableTiming);
            }

            public void Dispose()
            {
                SharedEvent.Dispose();
                TimedEvent.Dispose();
                SurfaceArray.Dispose();
                Array2D.Dispose();
                Pool.Dispose();
                Managed.Dispose();
                Plain.Dispose();
                Touch.Dispose();
                Fetch.Dispose();
                Module.Dispose();
                Stream.Dispose();
                Device.Dispose();
            }
        }

        private static void RunGpu()
        {
            using (var f = new Fixture())
            {
                var c = new Corpus();
                PoolCases(c, f);
                ManagedCases(c, f);
                IpcCases(c, f);
                PeerCases(c, f);
                PitchFillCases(c, f);
                CopyCases(c, f);
                ArrayTextureCases(c, f);
                c.RunAndReport("C#, memory, GPU");
                // The fixture's memory must have survived every case.
                f.Plain.Fill(3.0f);
                if (f.Plain.ToArray()[63] != 3.0f)
                    throw new TestFailure("the device memory is wrong after the corpus");
            }
        }

        private static void StillUsable(CaseContext ctx, DeviceBuffer<float> b, Device d)
        {
            b.Fill(4.5f);
            d.Synchronize();
            ctx.Expect(b.ToArray()[(int)b.Count - 1] == 4.5f, "the buffer is not usable after the refusal");
        }

        private static void PoolCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            DeviceBuffer<float> kept = null;
            c.Cuda("freeing device memory in stream order", "cuabi_buffer_free_async", CudaStatus.InvalidArgument,
                "not stream-ordered (cuabi_buffer_alloc_async): release it instead",
                ctx => (kept = d.Allocate<float>(16)).FreeAsync(f.Stream), ctx => { StillUsable(ctx, kept, d); kept.Dispose(); });
            c.Cuda("freeing managed memory in stream order", "cuabi_buffer_free_async", CudaStatus.InvalidArgument,
                "the buffer is a managed buffer", ctx => f.Managed.FreeAsync(null));
            c.Throws<ObjectDisposedException>("FreeAsync twice", null, "DeviceBuffer", ctx =>
            {
                var b = d.AllocateAsync<float>(16, f.Stream);
                b.FreeAsync(f.Stream);
                b.FreeAsync(f.Stream);
            });
            c.Fine("Dispose after FreeAsync does nothing", ctx =>
            {
                var b = d.AllocateAsync<float>(16, f.Stream);
                b.FreeAsync(f.Stream);
                b.Dispose();
                b.Dispose();
                f.Stream.Synchronize();
            });
            c.Cuda("a stream-ordered allocation of 0 elements", "cuabi_buffer_alloc_async_with_pointer", CudaStatus.InvalidArgument, "bytes is 0",
                ctx => d.AllocateAsync<float>(0, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("a stream-ordered allocation of -1 elements", "count", "cannot be negative",
                ctx => d.AllocateAsync<float>(-1, f.Stream));
            c.Throws<ObjectDisposedException>("allocating from a disposed pool", null, "Cuabi.MemoryPool", ctx =>
            {
                var p = d.CreateMemoryPool();
                p.Dispose();
                d.AllocateAsync<float>(4, f.Stream, p);
            });
            c.Throws<ObjectDisposedException>("allocating on a disposed stream", null, "Cuabi.CudaStream", ctx =>
            {
                var s = d.CreateStream();
                s.Dispose();
                d.AllocateAsync<float>(4, s);
            });
            c.Throws<ArgumentOutOfRangeException>("a negative release threshold", "value", "cannot be negative",
                ctx => f.Pool.ReleaseThreshold = -1);
            c.Throws<ArgumentOutOfRangeException>("trimming to a negative size", "keepBytes", "cannot be negative", ctx => f.Pool.Trim(-1));
            c.Throws<ArgumentOutOfRangeException>("a pool of at most -1 bytes", "options.MaxBytes", "cannot be negative",
                ctx => d.CreateMemoryPool(new MemoryPoolOptions { MaxBytes = -1 }));
            c.Cuda("a pool flag this version does not define", "cuabi_memory_pool_create", CudaStatus.InvalidArgument,
                "desc->flags has bits this version does not define",
                ctx => d.CreateMemoryPool(new MemoryPoolOptions { Flags = (MemoryPoolFlags)8 }));
            c.Cuda("exporting a pool made without IPC", "cuabi_memory_pool_export_fd", CudaStatus.InvalidArgument,
                "made without CUABI_MEMORY_POOL_IPC", ctx => f.Pool.ExportFd());
            c.Cuda("importing descriptor -1", "cuabi_memory_pool_import_fd", CudaStatus.InvalidArgument, "fd is -1, not a file descriptor",
                ctx => MemoryPool.ImportFd(d, -1));
        }

        private static void ManagedCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            c.Cuda("the host pointer of device memory", "cuabi_buffer_get_host_pointer", CudaStatus.InvalidArgument,
                "not managed memory (cuabi_buffer_alloc_managed)", ctx => { var p = f.Plain.HostPointer; });
            c.Cuda("reading device memory through the host view", "cuabi_buffer_get_host_pointer", CudaStatus.InvalidArgument,
                "not managed memory", ctx => f.Plain.ReadHost(0));
            c.Throws<ArgumentException>("a host read past the end of managed memory", null, "reach past the end of the managed buffer (64 elements)",
                ctx => f.Managed.ReadHost(60, new float[8], 0, 8));
            c.Throws<ArgumentException>("a host write past the end of managed memory", null, "reach past the end of the managed buffer",
                ctx => f.Managed.WriteHost(new float[65]));
            c.Throws<ArgumentException>("a host read into a too-small array", null, "reach past the end of destination",
                ctx => f.Managed.ReadHost(0, new float[4], 2, 4));
            c.Throws<ArgumentOutOfRangeException>("a host read at index -1", "index", "cannot be negative", ctx => f.Managed.ReadHost(-1));
            c.Throws<ArgumentNullException>("a host write of a null array", "source", "source", ctx => f.Managed.WriteHost((float[])null));
            c.Cuda("an unknown managed flag", "cuabi_buffer_alloc_managed", CudaStatus.InvalidArgument, "flags has bits this version does not define",
                ctx => d.AllocateManaged<float>(4, (ManagedFlags)4));
            c.Cuda("prefetching device memory", "cuabi_buffer_prefetch_async", CudaStatus.InvalidArgument, "not managed memory",
                ctx => f.Plain.PrefetchAsync(MemoryLocation.Host, f.Stream));
            c.Cuda("prefetching to device 99", "cuabi_buffer_prefetch_async", CudaStatus.InvalidArgument,
                "99 is neither CUABI_LOCATION_HOST (-1) nor a device ordinal", ctx => f.Managed.PrefetchAsync(MemoryLocation.OfDevice(99), f.Stream));
            c.Cuda("prefetching past the end", "cuabi_buffer_prefetch_async", CudaStatus.OutOfRange, "reaches past the end of the 256-byte buffer",
                ctx => f.Managed.PrefetchAsync(60, 8, MemoryLocation.Host, f.Stream));
            c.Cuda("advice 99", "cuabi_buffer_advise", CudaStatus.InvalidArgument, "advice 99 is not a cuabi_memory_advice",
                ctx => f.Managed.Advise((MemoryAdvice)99, MemoryLocation.Host));
            c.Cuda("advice on device memory", "cuabi_buffer_advise", CudaStatus.InvalidArgument, "not managed memory",
                ctx => f.Plain.Advise(MemoryAdvice.SetReadMostly, MemoryLocation.Host));
            c.Cuda("advice for device -5", "cuabi_buffer_advise", CudaStatus.InvalidArgument, "-5 is neither CUABI_LOCATION_HOST",
                ctx => f.Managed.Advise(MemoryAdvice.SetPreferredLocation, MemoryLocation.OfDevice(-5)));
        }

        private static void IpcCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            byte[] own = f.Plain.GetIpcHandle();
            byte[] ownEvent = f.SharedEvent.GetIpcHandle();
            c.Cuda("the IPC handle of managed memory", "cuabi_buffer_get_ipc_handle", CudaStatus.InvalidArgument,
                "can be shared; this one is managed memory", ctx => f.Managed.GetIpcHandle());
            c.Cuda("the IPC handle of an allocation from a pool without IPC", "cuabi_buffer_get_ipc_handle", CudaStatus.InvalidArgument,
                "from a pool made without CUABI_MEMORY_POOL_IPC", ctx =>
                {
                    var b = d.AllocateAsync<float>(16, f.Stream, f.Pool);
                    try
                    {
                        b.GetIpcHandle();
                    }
                    finally
                    {
                        b.FreeAsync(f.Stream);
                    }
                });
            c.Cuda("the IPC handle of an event made without Interprocess", "cuabi_event_get_ipc_handle", CudaStatus.InvalidArgument,
                "made without CUABI_EVENT_INTERPROCESS", ctx => f.TimedEvent.GetIpcHandle());
            c.Cuda("an interprocess event that records timing", "cuabi_event_create", CudaStatus.InvalidArgument,
                "CUABI_EVENT_INTERPROCESS needs CUABI_EVENT_DISABLE_TIMING", ctx => d.CreateEvent(EventFlags.Interprocess));
            c.Throws<ArgumentNullException>("opening a null handle", "handle", "handle", ctx => DeviceBuffer<float>.OpenIpc(d, null));
            c.Throws<ArgumentNullException>("opening a null event handle", "handle", "handle", ctx => CudaEvent.OpenIpc(d, null));
            c.Cuda("opening an empty handle", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument, "handle_size is 0; an IPC handle is 128 bytes",
                ctx => DeviceBuffer<float>.OpenIpc(d, new byte[0]));
            c.Cuda("opening 64 bytes", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument, "handle_size is 64",
                ctx => DeviceBuffer<float>.OpenIpc(d, new byte[64]));
            c.Cuda("opening 129 bytes", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument, "handle_size is 129",
                ctx => DeviceBuffer<float>.OpenIpc(d, new byte[129]));
            c.Cuda("opening 128 zero bytes", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument, "not a cuabi IPC handle",
                ctx => DeviceBuffer<float>.OpenIpc(d, new byte[128]));
            c.Cuda("opening a damaged handle", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument, "checksum does not match", ctx =>
            {
                var h = (byte[])own.Clone();
                h[40] ^= 1;
                DeviceBuffer<float>.OpenIpc(d, h);
            });
            c.Cuda("opening this process's handle", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument, "exported by this process",
                ctx => DeviceBuffer<float>.OpenIpc(d, own));
            c.Cuda("opening an event's handle as a buffer", "cuabi_buffer_open_ipc", CudaStatus.InvalidArgument,
                "an event's handle, not a buffer's", ctx => DeviceBuffer<float>.OpenIpc(d, ownEvent));
            c.Cuda("opening a buffer's handle as an event", "cuabi_event_open_ipc", CudaStatus.InvalidArgument,
                "a buffer's handle, not an event's", ctx => CudaEvent.OpenIpc(d, own));
            c.Cuda("opening this process's event handle", "cuabi_event_open_ipc", CudaStatus.InvalidArgument, "exported by this process",
                ctx => CudaEvent.OpenIpc(d, ownEvent));
            c.Throws<ObjectDisposedException>("opening with a disposed pool", null, "Cuabi.MemoryPool", ctx =>
            {
                var p = d.CreateMemoryPool();
                p.Dispose();
                DeviceBuffer<float>.OpenIpc(d, own, p);
            });
        }

        private static void PeerCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            c.Cuda("enabling peer access to itself", "cuabi_device_enable_peer_access", CudaStatus.InvalidArgument,
                "a device is not its own peer", ctx => d.EnablePeerAccess(d));
            c.Cuda("disabling peer access to itself", "cuabi_device_disable_peer_access", CudaStatus.InvalidArgument,
                "a device is not its own peer", ctx => d.DisablePeerAccess(d));
            c.Cuda("a peer attribute of a device and itself", "cuabi_device_get_peer_attribute", CudaStatus.InvalidArgument,
                "a device is not its own peer", ctx => d.GetPeerAttribute(d, 1));
            c.Throws<ArgumentNullException>("peer access to a null device", "peer", "peer", ctx => d.CanAccessPeer(null));
            c.Throws<ArgumentNullException>("enabling peer access to a null device", "peer", "peer", ctx => d.EnablePeerAccess(null));
            c.Throws<ArgumentNullException>("the copy path from null memory", "source", "source", ctx => f.Plain.GetCopyPathFrom(null));
            c.Throws<ObjectDisposedException>("the copy path from disposed memory", null, "DeviceBuffer", ctx =>
            {
                var b = d.Allocate<float>(4);
                b.Dispose();
                f.Plain.GetCopyPathFrom(b);
            });
        }

        private static void PitchFillCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            c.Cuda("a pitched allocation for 3-byte accesses", "cuabi_buffer_alloc_pitched", CudaStatus.InvalidArgument,
                "element_size is 3; expected 4, 8 or 16", ctx => d.AllocatePitched<float>(16, 4, 3));
            c.Cuda("a pitched allocation of 0 rows", "cuabi_buffer_alloc_pitched", CudaStatus.InvalidArgument, "height is 0",
                ctx => d.AllocatePitched<float>(16, 0));
            c.Cuda("a pitched allocation of 0-element rows", "cuabi_buffer_alloc_pitched", CudaStatus.InvalidArgument, "width_bytes is 0",
                ctx => d.AllocatePitched<float>(0, 4));
            c.Throws<ArgumentOutOfRangeException>("a pitched allocation of -1 rows", "height", "cannot be negative",
                ctx => d.AllocatePitched<float>(16, -1));
            c.Throws<ArgumentException>("filling 8-byte elements", "value", "Fill writes elements of 1, 2 or 4 bytes; System.Double is 8 bytes",
                ctx =>
                {
                    using (var b = d.Allocate<double>(4))
                        b.Fill(1.0);
                });
            c.Cuda("a fill past the end", "cuabi_buffer_fill", CudaStatus.OutOfRange, "fill range [240, 240 + 20) reaches past the end of the 256-byte buffer",
                ctx => f.Plain.Fill(1.0f, 60, 5));
            c.Cuda("an asynchronous fill past the end", "cuabi_buffer_fill_async", CudaStatus.OutOfRange, "reaches past the end",
                ctx => f.Plain.FillAsync(1.0f, 0, 65, f.Stream));
            c.Throws<ArgumentOutOfRangeException>("a fill of -1 elements", "count", "cannot be negative", ctx => f.Plain.Fill(1.0f, 0, -1));
            c.Cuda("a raw fill off its element boundary", "cuabi_buffer_fill", CudaStatus.InvalidArgument,
                "offset 1 does not put the fill on a 2-byte boundary",
                ctx => Check(NativeMethods.cuabi_buffer_fill(f.Plain.Handle, (UIntPtr)1u, 7, 2, (UIntPtr)1u)));
            c.Cuda("a raw fill value wider than its element", "cuabi_buffer_fill", CudaStatus.InvalidArgument,
                "value 65536 does not fit in 2 byte(s)",
                ctx => Check(NativeMethods.cuabi_buffer_fill(f.Plain.Handle, UIntPtr.Zero, 65536, 2, (UIntPtr)1u)));
            c.Cuda("a raw fill of 8-byte elements", "cuabi_buffer_fill", CudaStatus.InvalidArgument, "element_size is 8; expected 1, 2 or 4",
                ctx => Check(NativeMethods.cuabi_buffer_fill(f.Plain.Handle, UIntPtr.Zero, 0, 8, (UIntPtr)1u)));
        }

        private static void CopyCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            var host = new float[1024];
            c.Cuda("a box past the end of device memory", "cuabi_copy_3d", CudaStatus.OutOfRange,
                "dst box reaches byte 320 of the 256-byte buffer", ctx => new Copy3D(CopyEnd.Host(host), CopyEnd.Device(f.Plain), 64, 5).Copy());
            c.Cuda("a box past the end of pitched memory", "cuabi_copy_3d", CudaStatus.OutOfRange, "src box reaches byte", ctx =>
            {
                using (var p = d.AllocatePitched<float>(16, 4))
                    new Copy3D(CopyEnd.Device(p), CopyEnd.Host(host), 64, 5).Copy();
            });
            c.Cuda("device memory with a pitch smaller than the row", "cuabi_copy_3d", CudaStatus.InvalidArgument,
                "dst pitch 16 is smaller than the row", ctx => new Copy3D(CopyEnd.Host(host), CopyEnd.Device(f.Plain, 16), 32, 2).Copy());
            c.Cuda("rows past an array's height", "cuabi_copy_3d", CudaStatus.OutOfRange, "dst box's rows [2, 6) exceed the array's height of 4",
                ctx => new Copy3D(CopyEnd.Host(host), CopyEnd.Array(f.Array2D).At(0, 2), 32, 4).Copy());
            c.Cuda("a row past an array's width", "cuabi_copy_3d", CudaStatus.OutOfRange, "src box's x range [4, 12) exceeds the array's width of 8",
                ctx => new Copy3D(CopyEnd.Array(f.Array2D).At(16), CopyEnd.Host(host), 32, 1).Copy());
            c.Cuda("a slice past a 2D array", "cuabi_copy_3d", CudaStatus.OutOfRange, "exceed the array's depth of 1",
                ctx => new Copy3D(CopyEnd.Host(host), CopyEnd.Array(f.Array2D), 32, 4, 2).Copy());
            c.Cuda("part of an array element", "cuabi_copy_3d", CudaStatus.InvalidArgument, "must be whole elements of the array's 4 bytes",
                ctx => new Copy3D(CopyEnd.Host(host), CopyEnd.Array(f.Array2D), 6, 1).Copy());
            c.Cuda("a pitch for an array", "cuabi_copy_3d", CudaStatus.InvalidArgument, "dst_pitch and dst_height must be 0 for an array",
                ctx => new Copy3D(CopyEnd.Host(host), new CopyEndWithPitch(f.Array2D).End, 32, 1).Copy());
            c.Throws<ObjectDisposedException>("a copy into disposed memory", null, "DeviceBuffer", ctx =>
            {
                var b = d.Allocate<float>(4);
                var side = CopyEnd.Device(b);
                b.Dispose();
                new Copy3D(CopyEnd.Host(host), side, 16).Copy();
            });
            c.Throws<ObjectDisposedException>("a copy from a disposed array", null, "CudaArray", ctx =>
            {
                var a = d.CreateArray(ArrayFormat.F32, 1, 4);
                var side = CopyEnd.Array(a);
                a.Dispose();
                new Copy3D(side, CopyEnd.Host(host), 16).Copy();
            });
            c.Throws<ObjectDisposedException>("a copy from disposed pinned memory", null, "PinnedBuffer", ctx =>
            {
                var p = d.AllocatePinned<float>(16);
                var side = CopyEnd.Host(p);
                p.Dispose();
                new Copy3D(side, CopyEnd.Device(f.Plain), 64).CopyAsync(f.Stream);
            });
            c.Throws<ArgumentException>("a box past pinned memory", "Source", "which holds 64 bytes", ctx =>
            {
                using (var p = d.AllocatePinned<float>(16))
                    new Copy3D(CopyEnd.Host(p), CopyEnd.Device(f.Plain), 64, 2).CopyAsync(f.Stream);
            });
            c.Throws<ArgumentException>("a box past a managed array beside device memory", "Destination", "which holds 32 bytes",
                ctx => new Copy3D(CopyEnd.Device(f.Plain), CopyEnd.Host(new float[8]), 64).Copy());
        }

        /// <summary>An array side with a pitch set, which the library refuses.</summary>
        private sealed class CopyEndWithPitch
        {
            public readonly CopyEnd End;

            public CopyEndWithPitch(CudaArray array)
            {
                End = CopyEnd.Array(array);
                End.PitchBytes = 32;
            }
        }

        private static void ArrayTextureCases(Corpus c, Fixture f)
        {
            Device d = f.Device;
            c.Cuda("an array of 3 channels", "cuabi_array_create", CudaStatus.InvalidArgument, "channels is 3",
                ctx => d.CreateArray(ArrayFormat.F32, 3, 8));
            c.Cuda("an array of width 0", "cuabi_array_create", CudaStatus.InvalidArgument, "desc->width is 0",
                ctx => d.CreateArray(ArrayFormat.F32, 1, 0));
            c.Cuda("a layered array of no layers", "cuabi_array_create", CudaStatus.InvalidArgument, "a layered array needs desc->depth >= 1",
                ctx => d.CreateArray(ArrayFormat.F32, 1, 8, 8, 0, ArrayFlags.Layered));
            c.Cuda("an array format that does not exist", "cuabi_array_create", CudaStatus.InvalidArgument, "format 7",
                ctx => d.CreateArray((ArrayFormat)7, 1, 8));
            c.Cuda("texture gather on a 1D array", "cuabi_array_create", CudaStatus.InvalidArgument, "CUABI_ARRAY_TEXTURE_GATHER applies to 2D arrays only",
                ctx => d.CreateArray(ArrayFormat.F32, 1, 8, 0, 0, ArrayFlags.TextureGather));
            c.Cuda("a cubemap of faces that are not square", "cuabi_array_create", CudaStatus.InvalidArgument,
                "a cubemap has square faces (width 4, height 8) and depth 6",
                ctx => d.CreateArray(ArrayFormat.F32, 1, 4, 8, 6, ArrayFlags.Cubemap));
            c.Cuda("a cubemap of 5 faces", "cuabi_array_create", CudaStatus.InvalidArgument,
                "and depth 6, or a multiple of 6 when layered (depth 5)",
                ctx => d.CreateArray(ArrayFormat.F32, 1, 8, 8, 5, ArrayFlags.Cubemap));
            c.Cuda("a layered cubemap of 9 faces", "cuabi_array_create", CudaStatus.InvalidArgument,
                "or a multiple of 6 when layered (depth 9)",
                ctx => d.CreateArray(ArrayFormat.F32, 1, 8, 8, 9, ArrayFlags.Cubemap | ArrayFlags.Layered));
            c.Throws<ArgumentOutOfRangeException>("an array of width -1", "width", "cannot be negative",
                ctx => d.CreateArray(ArrayFormat.F32, 1, -1));
            c.Cuda("a surface over an array made without load/store", "cuabi_surface_create", CudaStatus.InvalidArgument,
                "made without CUABI_ARRAY_SURFACE_LOAD_STORE", ctx => f.Array2D.CreateSurface());
            c.Cuda("wrap addressing by element index", "cuabi_texture_create", CudaStatus.InvalidArgument,
                "desc->address_x wraps or mirrors, which needs normalized_coords = 1",
                ctx => Texture.FromArray(f.Array2D, new TextureOptions { AddressX = AddressMode.Wrap }));
            c.Cuda("an address mode that does not exist", "cuabi_texture_create", CudaStatus.InvalidArgument,
                "desc->address_y 9 is not a cuabi_address_mode", ctx => Texture.FromArray(f.Array2D, new TextureOptions { AddressY = (AddressMode)9 }));
            c.Cuda("normalised-float reads of float elements", "cuabi_texture_create", CudaStatus.InvalidArgument,
                "applies to 8- and 16-bit integer formats only",
                ctx => Texture.FromArray(f.Array2D, new TextureOptions { ReadMode = ReadMode.NormalizedFloat }));
            c.Cuda("linear filtering of integer elements read as integers", "cuabi_texture_create", CudaStatus.InvalidArgument,
                "linear filtering of integer elements needs read_mode CUABI_READ_NORMALIZED_FLOAT", ctx =>
                {
                    using (var a = d.CreateArray(ArrayFormat.U8, 1, 8, 8))
                        Texture.FromArray(a, new TextureOptions { Filter = FilterMode.Linear });
                });
            c.Cuda("a linear texture past the end of its memory", "cuabi_texture_create", CudaStatus.OutOfRange,
                "the texture's 65 elements of 4 bytes from offset 0 reach past the end of the 256-byte buffer",
                ctx => Texture.FromLinear(f.Plain, ArrayFormat.F32, 1, 65));
            c.Cuda("a linear texture with linear filtering", "cuabi_texture_create", CudaStatus.InvalidArgument,
                "it takes neither linear filtering nor normalized coordinates",
                ctx => Texture.FromLinear(f.Plain, ArrayFormat.F32, 1, 64, 0, new TextureOptions { Filter = FilterMode.Linear }));
            c.Cuda("a linear texture of 3 channels", "cuabi_texture_create", CudaStatus.InvalidArgument, "channels is 3",
                ctx => Texture.FromLinear(f.Plain, ArrayFormat.F32, 3, 4));
            c.Cuda("a pitched texture over memory without a pitch", "cuabi_texture_create", CudaStatus.InvalidArgument,
                "desc->pitch is 0 and the buffer is not pitched", ctx => Texture.FromPitched(f.Plain, ArrayFormat.F32, 1, 8, 8));
            c.Throws<ObjectDisposedException>("a texture over a disposed array", null, "CudaArray", ctx =>
            {
                var a = d.CreateArray(ArrayFormat.F32, 1, 8);
                a.Dispose();
                Texture.FromArray(a);
            });
            c.Throws<ObjectDisposedException>("a surface over a disposed array", null, "CudaArray", ctx =>
            {
                var a = d.CreateArray(ArrayFormat.F32, 1, 8, 8, 0, ArrayFlags.SurfaceLoadStore);
                a.Dispose();
                a.CreateSurface();
            });
            c.Throws<ArgumentException>("a texture for a 4-byte parameter", "args", "parameter 2 is 4 bytes, but the argument given is 8 bytes",
                ctx =>
                {
                    using (var t = Texture.FromLinear(f.Plain, ArrayFormat.F32, 1, 64))
                        f.Fetch.Launch(1, 64, null, t, f.Plain, t);
                });
            c.Throws<ArgumentException>("a plan given a surface for a 4-byte parameter", "value", "parameter 1 is 4 bytes", ctx =>
            {
                using (var s = f.SurfaceArray.CreateSurface())
                using (var plan = f.Touch.Prepare(1, 1))
                    plan.Set(1, s);
            });
            c.Throws<ArgumentNullException>("a plan given a null texture", "texture", "argument 0 is null", ctx =>
            {
                using (var plan = f.Fetch.Prepare(1, 64))
                    plan.Set(0, (Texture)null);
            });
            c.Throws<ObjectDisposedException>("a plan launched after its texture was disposed", null,
                "kernel 'fetch1d': the texture object set as argument 0 was disposed", ctx =>
                {
                    var t = Texture.FromLinear(f.Plain, ArrayFormat.F32, 1, 64);
                    using (var plan = f.Fetch.Prepare(1, 64))
                    {
                        plan.Set(0, t);
                        plan.Set(1, f.Plain);
                        plan.Set(2, 64);
                        t.Dispose();
                        plan.Launch();
                    }
                });
            c.Throws<ObjectDisposedException>("SetArguments with a disposed surface", null, "argument 0 is a surface object that was disposed", ctx =>
            {
                var s = f.SurfaceArray.CreateSurface();
                s.Dispose();
                using (var plan = f.Touch.Prepare(1, 1))
                    plan.SetArguments(s, 0);
            });
            c.Throws<ObjectDisposedException>("a launch with a disposed surface", null, "Cuabi.Surface", ctx =>
            {
                var s = f.SurfaceArray.CreateSurface();
                s.Dispose();
                f.Touch.Launch(1, 1, null, s, 0);
            });
            c.Throws<ObjectDisposedException>("a graph node update with a disposed texture", null, "Cuabi.Texture", ctx =>
            {
                var t = Texture.FromLinear(f.Plain, ArrayFormat.F32, 1, 64);
                f.Stream.BeginCapture();
                f.Fetch.Launch(1, 64, f.Stream, t, f.Plain, 64);
                using (var g = f.Stream.EndCapture())
                using (var exec = g.Instantiate())
                {
                    t.Dispose();
                    exec.SetKernelNodeArgs(0, f.Fetch, t, f.Plain, 64);
                }
            });
            c.Cuda("freeing in stream order memory a texture reads", "cuabi_buffer_free_async", CudaStatus.InvalidArgument,
                "the buffer is still read by 1 texture object(s); release them first", ctx =>
                {
                    // The first allocation of a new pool: its address is aligned for textures.
                    using (var pool = d.CreateMemoryPool())
                    {
                        var b = d.AllocateAsync<float>(128, f.Stream, pool);
                        var t = Texture.FromLinear(b, ArrayFormat.F32, 1, 128);
                        try
                        {
                            b.FreeAsync(f.Stream);
                        }
                        finally
                        {
                            t.Dispose();
                            b.FreeAsync(f.Stream);
                            f.Stream.Synchronize();
                        }
                    }
                });
        }
    }
}
