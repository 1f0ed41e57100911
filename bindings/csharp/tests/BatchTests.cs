// Batches on a GPU: writes and waits in one call (a batch held back by a
// word the host writes into pinned memory; producer and consumer streams
// ordered by batched words alone), 1,000 copies of mixed directions in one
// call, and batched prefetches and discards of managed memory; each refusal
// names the element at fault (ops[i], ranges[i]) and queues nothing. They
// follow tests/python/test_batch.py.

using System;
using System.Linq;
using System.Threading;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class BatchTests
    {
        // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS in cuda.h.
        private const int ConcurrentManagedAccess = 89;

        public static void Register()
        {
            Registry.AddGpu("batches: a batch of writes waits for the host to write a pinned word", HostHoldsABatch);
            Registry.AddGpu("batches: producer and consumer streams ordered by batched words alone", ProducerConsumer);
            Registry.AddGpu("batches: a memory-operation refusal names the element and queues nothing", MemOpRefusal);
            Registry.AddGpu("batches: 1,000 copies of mixed directions in one call", ThousandCopies);
            Registry.AddGpu("batches: a copy refusal names the copy and queues nothing", CopyRefusal);
            Registry.AddGpu("batches: managed ranges prefetched and discarded in one call", ManagedRangesBatch);
        }

        private static void Quiesce()
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        private static void HostHoldsABatch()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var host = d.AllocatePinned<uint>(16))
            using (var b = d.Allocate<ulong>(8))
            {
                for (int i = 0; i < 16; i++) host[i] = 0;
                b.Memset(0);
                d.Synchronize();
                Quiesce();
                var batch = new MemOpBatch()
                    .Wait(BatchMemory.Pinned(host), 0, 7, 4, WaitCondition.Geq)
                    .Write(b, 4, 0xC0DE, 4)
                    .Write(b, 8, 0x0102030405060708UL, 8)
                    .Write(BatchMemory.Pinned(host), 16, 0x5151, 4);
                stream.MemOpBatch(batch);
                try
                {
                    Thread.Sleep(200);
                    Assert.True(!stream.Query(), "the batch ran before the host wrote the word");
                    Assert.Equal(0u, host[4], "a write after the wait, before the word");
                }
                finally
                {
                    host[0] = 7; // never leave the stream waiting
                    stream.Synchronize();
                }
                Assert.Equal(0x5151u, host[4], "the pinned word written by the batch");
                ulong[] got = b.ToArray();
                Assert.Equal(0xC0DEUL << 32, got[0], "the 4-byte word at byte 4");
                Assert.Equal(0x0102030405060708UL, got[1], "the 8-byte word at byte 8");
                Assert.True(got.Skip(2).All(w => w == 0), "words past the writes");
            }
        }

        private static void ProducerConsumer()
        {
            const int n = 1 << 20;
            using (var d = Device.Get(0))
            using (var producer = d.CreateStream(StreamFlags.NonBlocking))
            using (var consumer = d.CreateStream(StreamFlags.NonBlocking))
            using (var x = d.Allocate<byte>(n))
            using (var y = d.Allocate<byte>(n))
            using (var flags = d.Allocate<ulong>(2))
            {
                x.Memset(0);
                y.Memset(0);
                flags.Memset(0);
                d.Synchronize();
                for (int round = 1; round <= 3; round++)
                {
                    Quiesce();
                    consumer.MemOpBatch(new MemOpBatch()
                        .Wait(flags, 0, (ulong)round, 4, WaitCondition.Eq)
                        .Wait(flags, 8, (ulong)round << 40, 8, WaitCondition.Geq));
                    using (consumer.CopyBatch(new CopyBatch().Copy(y, 0, x, 0, n)))
                    {
                        var fill = Enumerable.Repeat((byte)(round * 11), n).ToArray();
                        using (producer.CopyBatch(new CopyBatch().Copy(x, 0, fill, 0, n)))
                        {
                            producer.MemOpBatch(new MemOpBatch()
                                .Write(flags, 0, (ulong)round, 4)
                                .Write(flags, 8, (ulong)round << 40, 8));
                            consumer.Synchronize();
                            producer.Synchronize();
                        }
                    }
                    byte[] got = y.ToArray();
                    Assert.True(got.All(v => v == round * 11), "round " + round + ": the consumer read before the words");
                }
            }
        }

        private static void MemOpRefusal()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var b = d.Allocate<ulong>(8))
            {
                b.Memset(0);
                d.Synchronize();
                var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                    () => stream.MemOpBatch(new MemOpBatch().Write(b, 0, 1).Write(b, 8, 2, 8).Write(b, 6, 3)),
                    "a misaligned third word");
                Assert.Contains("ops[2]: offset 6 is not a multiple of the width", e.Message, "the message");
                var many = new MemOpBatch();
                for (int i = 0; i < 256; i++) many.Write(b, 0, 1);
                e = Assert.ThrowsCuda(CudaStatus.InvalidArgument, () => stream.MemOpBatch(many), "256 operations");
                Assert.Contains("a batch holds at most 255", e.Message, "the message");
                stream.Synchronize();
                Assert.True(b.ToArray().All(w => w == 0), "ops[0] ran although ops[2] was refused");
            }
        }

        private static void ThousandCopies()
        {
            const int copies = 1000, slot = 256, bytes = copies * slot;
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var dev = d.Allocate<byte>(bytes))
            using (var devSrc = d.Allocate<byte>(bytes))
            using (var pinned = d.AllocatePinned<byte>(bytes))
            {
                var srcPattern = new byte[bytes];
                var plain = new byte[bytes];
                var back = Enumerable.Repeat((byte)0xEE, bytes).ToArray();
                for (int i = 0; i < bytes; i++)
                {
                    srcPattern[i] = (byte)(i * 13 + 5);
                    plain[i] = (byte)(i * 7 + 1);
                    pinned[i] = (byte)(i * 3 + 2);
                }
                devSrc.CopyFrom(srcPattern);
                dev.CopyFrom(Enumerable.Repeat((byte)0x5A, bytes).ToArray());
                Func<int, int> len = i => 4 + (i * 37) % (slot - 4);
                var batch = new CopyBatch();
                for (int i = 0; i < copies; i++)
                {
                    ulong at = (ulong)(i * slot), n = (ulong)len(i);
                    switch (i % 4)
                    {
                        case 0: batch.Copy(dev, at, plain, at, n); break;
                        case 1: batch.Copy(back, at, devSrc, at, n); break;
                        case 2: batch.Copy(dev, at, devSrc, at, n); break;
                        default: batch.Copy(dev, at, BatchMemory.Pinned(pinned), at, n); break;
                    }
                }
                Assert.Equal(copies, batch.Count, "the batch's copies");
                using (stream.CopyBatch(batch))
                    stream.Synchronize();
                byte[] got = dev.ToArray();
                for (int i = 0; i < copies; i++)
                    for (int k = 0; k < slot; k++)
                    {
                        int j = i * slot + k;
                        bool inside = k < len(i);
                        switch (i % 4)
                        {
                            case 0: Check(got[j], inside ? plain[j] : (byte)0x5A, i, k); break;
                            case 1: Check(back[j], inside ? srcPattern[j] : (byte)0xEE, i, k); break;
                            case 2: Check(got[j], inside ? srcPattern[j] : (byte)0x5A, i, k); break;
                            default: Check(got[j], inside ? pinned[j] : (byte)0x5A, i, k); break;
                        }
                    }
            }
        }

        private static void Check(byte got, byte want, int copy, int k)
        {
            if (got != want)
                throw new TestFailure("copy " + copy + " byte " + k + ": " + got + ", expected " + want);
        }

        private static void CopyRefusal()
        {
            using (var d = Device.Get(0))
            using (var stream = d.CreateStream(StreamFlags.NonBlocking))
            using (var dev = d.Allocate<byte>(4096))
            {
                dev.Memset(0);
                d.Synchronize();
                var host = Enumerable.Repeat((byte)9, 4096).ToArray();
                var batch = new CopyBatch();
                for (int i = 0; i < 500; i++)
                    if (i == 412) batch.Copy(dev, 4000, host, 0, 200);
                    else batch.Copy(dev, (ulong)(i * 8), host, 0, 8);
                var e = Assert.ThrowsCuda(CudaStatus.OutOfRange, () => stream.CopyBatch(batch).Dispose(), "copy 412 past the end");
                Assert.Contains("ops[412]: destination range [4000, 4000 + 200)", e.Message, "the message");
                stream.Synchronize();
                Assert.True(dev.ToArray().All(v => v == 0), "a copy ran although the batch was refused");
            }
        }

        private static void ManagedRangesBatch()
        {
            using (var d = Device.Get(0))
            {
                if (d.GetAttribute(ConcurrentManagedAccess) == 0)
                    throw new SkipException("device 0 has no concurrent managed access");
                const int count = 64, size = 64 * 1024;
                using (var stream = d.CreateStream(StreamFlags.NonBlocking))
                using (var m = d.AllocateManaged<uint>(count * size / 4))
                using (var copy = d.Allocate<uint>(count * size / 4))
                using (var plain = d.Allocate<uint>(size / 4))
                {
                    var expect = new uint[count * size / 4];
                    for (int i = 0; i < expect.Length; i++) expect[i] = unchecked((uint)i * 2654435761u);
                    m.CopyFrom(expect);
                    d.Synchronize();
                    var ranges = new ManagedRanges();
                    for (int i = 0; i < count; i++) ranges.Add(m, (ulong)(i * size), size);
                    stream.PrefetchBatch(ranges, MemoryLocation.OfDevice(d.Ordinal));
                    using (stream.CopyBatch(new CopyBatch().Copy(copy, 0, m, 0, (ulong)(count * size))))
                    {
                        stream.PrefetchBatch(ranges, MemoryLocation.Host);
                        stream.Synchronize();
                    }
                    Assert.True(copy.ToArray().SequenceEqual(expect), "the device read other words than the host wrote");
                    stream.DiscardBatch(ranges);
                    stream.DiscardAndPrefetchBatch(ranges, MemoryLocation.OfDevice(d.Ordinal));
                    stream.Synchronize();
                    var bad = new ManagedRanges();
                    for (int i = 0; i < count; i++)
                        if (i == 5) bad.Add(plain, 0, size);
                        else bad.Add(m, (ulong)(i * size), size);
                    var e = Assert.ThrowsCuda(CudaStatus.InvalidArgument,
                        () => stream.PrefetchBatch(bad, MemoryLocation.Host), "a device buffer among managed ranges");
                    Assert.Contains("ranges[5]: the buffer is a device buffer", e.Message, "the message");
                }
            }
        }
    }
}
