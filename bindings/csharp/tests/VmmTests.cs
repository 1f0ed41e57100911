// Virtual memory through the C# binding: a growable buffer grown from
// 64 MiB to 4 GiB with a kernel checking its contents after each step;
// physical memory mapped into a range and used through typed buffers;
// memory exported to a child process whose descriptor goes over a Unix
// socket (FdPassing.cs), written there and read back here; across two GPUs
// through set-access where there are two; and the refusals of these calls.

using System;
using System.Collections.Generic;
using System.Globalization;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class VmmTests
    {
        private const long MiB = 1L << 20;

        private const string Source = @"
__device__ unsigned value_at(unsigned long long i, unsigned salt)
{
    return (unsigned)(i * 2654435761ull) ^ salt;
}
extern ""C"" __global__ void pattern(unsigned* p, unsigned long long from, unsigned long long to, unsigned salt)
{
    for (unsigned long long i = from + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < to; i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = value_at(i, salt);
}
extern ""C"" __global__ void verify(const unsigned* p, unsigned long long n, unsigned salt, unsigned long long* bad)
{
    unsigned long long wrong = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        wrong += p[i] != value_at(i, salt);
    if (wrong) atomicAdd(bad, wrong);
}
";

        public static void Register()
        {
            Registry.AddGpu("vmm: a growable buffer grows from 64 MiB to 4 GiB keeping its address and contents (a kernel checks each step)", GrowTo4GiB);
            Registry.AddGpu("vmm: physical memory mapped into a range, used through typed buffers, unmapped, remapped, freed", MappedRange);
            Registry.AddGpu("vmm: physical memory exported by fd over a Unix socket to a child, written there, read back here", ExportToChild);
            Registry.AddGpu("vmm: memory of GPU 0 used by GPU 1 through set-access, here and in a child (two GPUs)", TwoGpus);
            Registry.AddGpu("vmm: off the granularity, over a mapping, unmapped addresses, mapped memory freed, a pipe imported, growth refused", Refusals);
        }

        private static uint ValueAt(ulong i, uint salt)
        {
            return unchecked((uint)(i * 2654435761UL)) ^ salt;
        }

        private static long Granularity(Device d)
        {
            long minimum, recommended;
            d.GetVmGranularity(out minimum, out recommended);
            return minimum;
        }

        private static void GrowTo4GiB()
        {
            const long reserve = 4096 * MiB;
            using (var d = Device.Get(0))
            {
                long free, total;
                d.GetMemoryInfo(out free, out total);
                if (free < reserve + 512 * MiB)
                    throw new SkipException("the device has less than 4.5 GiB free", true);
                const uint salt = 0x5eed;
                using (var module = d.Compile(Source, new CompileOptions { Name = "vmm.cu" }))
                using (var bad = d.Allocate<ulong>(1))
                using (var buffer = d.AllocateGrowable<uint>(64 * MiB / 4, reserve / 4))
                {
                    Kernel pattern = module.GetKernel("pattern"), verify = module.GetKernel("verify");
                    Assert.Equal(BufferKind.Growable, buffer.Kind, "kind");
                    Assert.Equal(reserve, buffer.ReservedSize, "reserved size");
                    ulong address = buffer.DevicePointer;
                    Func<ulong, ulong> wrong = n =>
                    {
                        bad.Memset(0);
                        verify.Launch(1024, 256, null, buffer, n, salt, bad);
                        return bad.ToArray()[0];
                    };
                    pattern.Launch(1024, 256, null, buffer, 0UL, (ulong)(64 * MiB / 4), salt);
                    for (long size = 64 * MiB; size < reserve; size *= 2)
                    {
                        long size1 = size;
                        Assert.ThrowsCuda(CudaStatus.OutOfRange, () => buffer.CopyTo(size1 / 4, new uint[1], 0, 1), "a read past the mapped size");
                        buffer.Grow(size * 2 / 4);
                        Assert.Equal(address, buffer.DevicePointer, "the address after growing to " + size * 2);
                        Assert.Equal(size * 2, buffer.SizeInBytes, "the size");
                        Assert.Equal(0UL, wrong((ulong)(size / 4)), "words changed when growing to " + size * 2);
                        pattern.Launch(1024, 256, null, buffer, (ulong)(size / 4), (ulong)(size * 2 / 4), salt);
                        Assert.Equal(0UL, wrong((ulong)(size * 2 / 4)), "words wrong at " + size * 2);
                        var seam = new uint[2];
                        buffer.CopyTo(size / 4 - 1, seam, 0, 2);
                        Assert.Equal(ValueAt((ulong)(size / 4 - 1), salt), seam[0], "the word before the seam");
                        Assert.Equal(ValueAt((ulong)(size / 4), salt), seam[1], "the word after the seam");
                    }
                    var e = Assert.ThrowsCuda(CudaStatus.OutOfRange, () => buffer.Grow(reserve / 4 + 64 * MiB / 4), "growing past the reservation");
                    Assert.Contains("reservation", e.Message, "message");
                }
            }
        }

        private static void MappedRange()
        {
            using (var d = Device.Get(0))
            {
                long g = Granularity(d);
                using (var a = PhysicalMemory.Create(d, g, PhysicalMemoryFlags.None))
                using (var c = PhysicalMemory.Create(d, 2 * g, PhysicalMemoryFlags.None))
                using (var range = AddressRange.Reserve(d, 4 * g))
                {
                    Assert.Equal(2 * g, c.Size, "size");
                    range.Map(0, a);
                    range.Map(g, c);
                    using (var view = range.Buffer<int>(d, 0, 3 * g / 4))
                    {
                        Assert.Equal(BufferKind.Range, view.Kind, "kind");
                        Assert.Equal(range.Pointer, view.DevicePointer, "address");
                        view.Fill(7);
                        Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => range.Unmap(0, g), "unmapping a viewed range");
                    }
                    var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => c.Free(), "freeing mapped memory");
                    Assert.Contains("still mapped", e.Message, "message");
                    range.Unmap(g, 2 * g);
                    range.Map(2 * g, c);
                    using (var moved = range.Buffer<int>(d, 2 * g, 2 * g / 4))
                        foreach (int v in moved.ToArray())
                            if (v != 7)
                                throw new TestFailure("the memory lost its contents when mapped elsewhere");
                    range.Unmap(2 * g, 2 * g);
                    c.Free();
                    a.Dispose(); // the range keeps it
                    using (var first = range.Buffer<int>(d, 0, 4))
                        Assert.Equal(7, first.ToArray()[3], "memory whose handle went");
                }
            }
        }

        private static void Export(Device home, Device user, int ordinal)
        {
            long g = Granularity(home);
            long bytes = 8 * g;
            PhysicalMemory exportable;
            try
            {
                exportable = PhysicalMemory.Create(home, bytes, PhysicalMemoryFlags.Exportable);
            }
            catch (CudaException e) when (e.Status == CudaStatus.NotSupported)
            {
                throw new SkipException("memory cannot be exported here: " + e.Message, true);
            }
            using (var memory = exportable)
            using (var range = AddressRange.Reserve(home, bytes))
            {
                range.Map(0, memory);
                if (ordinal != 0)
                    range.SetAccess(0, bytes, user, VmAccess.Readwrite);
                using (var view = range.Buffer<uint>(user, 0, bytes / 4))
                {
                    view.Fill(5);
                    user.Synchronize();
                    int fd = memory.ExportFd();
                    try
                    {
                        Child.Result r;
                        using (var offer = new FdOffer(fd))
                        {
                            r = Child.Run("vmm-import", new Dictionary<string, string>(), offer.Name,
                                bytes.ToString(CultureInfo.InvariantCulture), "5", "9", ordinal.ToString(CultureInfo.InvariantCulture));
                            Assert.True(offer.Sent, "the memory's descriptor was not sent: " + (offer.Error ?? "the child never connected") + "\n" + r);
                        }
                        if (r.ExitCode != 0 || !r.Stdout.Contains("\nOK"))
                            throw new TestFailure("the child process failed: " + r);
                    }
                    finally
                    {
                        Posix.close(fd);
                    }
                    foreach (uint v in view.ToArray())
                        if (v != 9)
                            throw new TestFailure("the child's writes are not here");
                }
            }
        }

        private static void ExportToChild()
        {
            using (var d = Device.Get(0))
                Export(d, d, 0);
        }

        private static void TwoGpus()
        {
            if (Device.Count < 2)
                throw new SkipException("needs two devices", true);
            using (var d = Device.Get(0))
            using (var other = Device.Get(1))
            {
                long g = Granularity(d);
                using (var memory = PhysicalMemory.Create(d, 4 * g, PhysicalMemoryFlags.None))
                using (var range = AddressRange.Reserve(d, 4 * g))
                {
                    range.Map(0, memory);
                    Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => range.Buffer<uint>(other, 0, 4), "a buffer of a device without access");
                    range.SetAccess(0, 4 * g, other, VmAccess.Readwrite);
                    using (var module = other.Compile(Source, new CompileOptions { Name = "vmm.cu" }))
                    using (var there = range.Buffer<uint>(other, 0, 4 * g / 4))
                    using (var here = range.Buffer<uint>(d, 0, 4 * g / 4))
                    {
                        module.GetKernel("pattern").Launch(64, 256, null, there, 0UL, (ulong)(4 * g / 4), 77u);
                        other.Synchronize();
                        uint[] got = here.ToArray();
                        for (int i = 0; i < got.Length; i += 97)
                            Assert.Equal(ValueAt((ulong)i, 77), got[i], "element " + i + " written by device 1");
                    }
                }
                Export(d, other, 1);
            }
        }

        private static void Refusals()
        {
            using (var d = Device.Get(0))
            {
                long g = Granularity(d);
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => PhysicalMemory.Create(d, g + 4096, PhysicalMemoryFlags.None), "memory off the granularity");
                Assert.Contains("is not a multiple of the virtual memory granularity", e.Message, "message");
                Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => AddressRange.Reserve(d, 4096), "a range off the granularity");
                using (var memory = PhysicalMemory.Create(d, 2 * g, PhysicalMemoryFlags.None))
                using (var other = PhysicalMemory.Create(d, g, PhysicalMemoryFlags.None))
                using (var range = AddressRange.Reserve(d, 4 * g))
                {
                    range.Map(g, memory);
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => range.Map(2 * g, other), "mapping over a mapped range");
                    Assert.Contains("overlaps the memory already at", e.Message, "message");
                    Assert.ThrowsCuda(CudaStatus.OutOfRange, () => range.Map(3 * g, memory), "a mapping past the end");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => range.SetAccess(0, 4 * g, d, VmAccess.Readwrite), "access to an unmapped address");
                    Assert.Contains("which has no memory mapped", e.Message, "message");
                    Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => range.Buffer<byte>(d, 0, 8), "a buffer over an unmapped address");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => memory.Free(), "freeing mapped memory");
                    Assert.Contains("is still mapped at offset", e.Message, "message");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => other.ExportFd(), "exporting memory made without the flag");
                    Assert.Contains("without CUABI_PHYSICAL_MEMORY_EXPORTABLE", e.Message, "message");
                }
                var fds = new int[2];
                Assert.True(Posix.pipe(fds) == 0, "pipe failed");
                try
                {
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => PhysicalMemory.ImportFd(d, fds[0], g), "importing a pipe");
                    Assert.Contains("is a pipe", e.Message, "message");
                }
                finally
                {
                    Posix.close(fds[0]);
                    Posix.close(fds[1]);
                }
                using (var plain = d.Allocate<uint>(64))
                    Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => plain.Grow(g / 4), "growing a plain buffer");
                using (var grown = d.AllocateGrowable<uint>(g / 4, 2 * g / 4))
                {
                    Assert.ThrowsCuda(CudaStatus.OutOfRange, () => grown.Grow(3 * g / 4), "growing past the reservation");
                    e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => grown.Grow(0), "a shrink");
                    Assert.Contains("does not shrink", e.Message, "message");
                    Assert.Equal(g / 4, grown.Count, "the count after refusals");
                }
            }
        }

        /// <summary>Serves the child mode of this file; -1 when the mode is not its.</summary>
        internal static int ServeChild(string mode, string[] args)
        {
            if (mode != "vmm-import")
                return -1;
            int fd = FdPassing.Receive(args[0]);
            long bytes = long.Parse(args[1], CultureInfo.InvariantCulture);
            uint expect = uint.Parse(args[2], CultureInfo.InvariantCulture);
            uint write = uint.Parse(args[3], CultureInfo.InvariantCulture);
            int ordinal = int.Parse(args[4], CultureInfo.InvariantCulture);
            using (var home = Device.Get(0))
            using (var user = Device.Get(ordinal))
            {
                PhysicalMemory memory;
                try
                {
                    memory = PhysicalMemory.ImportFd(home, fd, bytes);
                }
                finally
                {
                    Posix.close(fd); // the caller's to close, imported or not
                }
                using (var range = AddressRange.Reserve(home, bytes))
                {
                    using (memory)
                        range.Map(0, memory); // the range keeps it
                    if (ordinal != 0)
                        range.SetAccess(0, bytes, user, VmAccess.Readwrite);
                    using (var view = range.Buffer<uint>(user, 0, bytes / 4))
                    {
                        foreach (uint v in view.ToArray())
                            if (v != expect)
                            {
                                Console.Error.WriteLine("an element is " + v + ", expected " + expect);
                                return 6;
                            }
                        view.Fill(write);
                        user.Synchronize();
                    }
                }
            }
            Console.WriteLine("OK");
            return 0;
        }
    }
}
