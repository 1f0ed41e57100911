//! Batches: writes and waits in one call (a batch held back by a word the
//! host writes into pinned memory; producer and consumer streams ordered by
//! batched words alone), 1,000 copies of mixed directions in one call, and
//! batched prefetches and discards of managed memory; each refusal naming
//! the element at fault, with nothing queued.

use std::sync::atomic::{fence, Ordering};
use std::thread::sleep;
use std::time::Duration;

use cuabi::{
    CopyBatch, CopyBatchFlags, Device, ErrorKind, Location, ManagedFlags, ManagedRanges,
    MemOpBatch, MemOpFlags, Stream, StreamFlags, WaitCondition,
};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    a_batch_waits_for_the_host_to_write_the_word,
    producer_and_consumer_ordered_by_batched_words_alone,
    a_mem_op_batch_refusal_names_the_element,
    a_thousand_copies_of_mixed_directions_in_one_call,
    a_copy_batch_refusal_names_the_copy_and_queues_nothing,
    managed_ranges_prefetched_and_discarded_in_one_call,
];

/// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS` in cuda.h.
const CONCURRENT_MANAGED_ACCESS: i32 = 89;

fn stream(device: &Device) -> cuabi::Result<Stream> {
    device.create_stream_with(StreamFlags::NON_BLOCKING, 0)
}

/// The call failed with `kind`, its message holding `needle`.
fn refused<T>(result: cuabi::Result<T>, kind: ErrorKind, needle: &str) -> TestResult {
    match result {
        Ok(_) => Err(format!("succeeded, expected {kind:?} holding '{needle}'").into()),
        Err(err) if err.kind() == kind && err.message().contains(needle) => Ok(()),
        Err(err) => Err(format!("expected {kind:?} holding '{needle}', got {err}").into()),
    }
}

fn a_batch_waits_for_the_host_to_write_the_word(device: &Device) -> TestResult {
    let s = stream(device)?;
    let mut words = device.alloc_pinned::<u32>(16)?;
    for w in words.iter_mut() {
        *w = 0;
    }
    let b = device.alloc_zeroed::<u64>(8)?;
    let batch = MemOpBatch::new()
        .wait(&words, 0, 7, 4, WaitCondition::Geq, MemOpFlags::NONE)
        .write(&b, 4, 0xC0DE, 4)
        .write(&b, 8, 0x0102_0304_0506_0708, 8)
        .write(&words, 16, 0x5151, 4);
    s.mem_op_batch(&batch)?;
    drop(batch);
    let at = words.as_mut_ptr();
    let held = (|| -> TestResult {
        sleep(Duration::from_millis(200));
        ensure!(!s.query()?, "the batch ran before the host wrote the word");
        // SAFETY: `at` points into `words`, alive until the end.
        let later = unsafe { at.add(4).read_volatile() };
        ensure!(later == 0, "a write after the wait landed before it");
        Ok(())
    })();
    // SAFETY: as above; the wait ends whatever happened.
    unsafe { at.write_volatile(7) };
    fence(Ordering::SeqCst);
    s.synchronize()?;
    held?;
    ensure!(words[4] == 0x5151, "the pinned word is {:#x}", words[4]);
    let got = b.to_vec()?;
    ensure!(got[0] == 0xC0DE << 32, "word 0 is {:#x}", got[0]);
    ensure!(got[1] == 0x0102_0304_0506_0708, "word 1 is {:#x}", got[1]);
    ensure!(
        got[2..].iter().all(|&w| w == 0),
        "a write spilled past its word"
    );
    Ok(())
}

fn producer_and_consumer_ordered_by_batched_words_alone(device: &Device) -> TestResult {
    let producer = stream(device)?;
    let consumer = stream(device)?;
    let n = 1usize << 20;
    let x = device.alloc_zeroed::<u8>(n)?;
    let y = device.alloc_zeroed::<u8>(n)?;
    let flags = device.alloc_zeroed::<u64>(2)?;
    let mut fills = Vec::new();
    for round in 1u64..=3 {
        let waits = MemOpBatch::new()
            .wait(&flags, 0, round, 4, WaitCondition::Eq, MemOpFlags::NONE)
            .wait(
                &flags,
                8,
                round << 40,
                8,
                WaitCondition::Geq,
                MemOpFlags::NONE,
            );
        consumer.mem_op_batch(&waits)?;
        // SAFETY: device memory only.
        unsafe {
            consumer.copy_batch(
                &CopyBatch::new().copy(&y, 0, &x, 0, n),
                CopyBatchFlags::NONE,
            )?
        };
        fills.push(vec![(round * 11) as u8; n]);
        let fill: &[u8] = fills.last().unwrap();
        // SAFETY: `fills` keeps the host source alive until the end.
        unsafe {
            producer.copy_batch(
                &CopyBatch::new().copy(&x, 0, fill, 0, n),
                CopyBatchFlags::NONE,
            )?
        };
        let writes = MemOpBatch::new()
            .write(&flags, 0, round, 4)
            .write(&flags, 8, round << 40, 8);
        producer.mem_op_batch(&writes)?;
        consumer.synchronize()?;
        producer.synchronize()?;
        let got = y.to_vec()?;
        ensure!(
            got.iter().all(|&v| u64::from(v) == round * 11),
            "round {round}: the consumer read before the words"
        );
    }
    Ok(())
}

fn a_mem_op_batch_refusal_names_the_element(device: &Device) -> TestResult {
    let s = stream(device)?;
    let b = device.alloc_zeroed::<u64>(8)?;
    let batch = MemOpBatch::new()
        .write(&b, 0, 1, 4)
        .write(&b, 8, 2, 8)
        .write(&b, 6, 3, 4);
    refused(
        s.mem_op_batch(&batch),
        ErrorKind::InvalidArgument,
        "ops[2]: offset 6 is not a multiple",
    )?;
    let mut many = MemOpBatch::new();
    for _ in 0..256 {
        many = many.write(&b, 0, 1, 4);
    }
    refused(
        s.mem_op_batch(&many),
        ErrorKind::InvalidArgument,
        "a batch holds at most 255",
    )?;
    s.synchronize()?;
    ensure!(
        b.to_vec()?.iter().all(|&w| w == 0),
        "ops[0] ran although ops[2] was refused"
    );
    Ok(())
}

fn a_thousand_copies_of_mixed_directions_in_one_call(device: &Device) -> TestResult {
    let s = stream(device)?;
    let (copies, slot) = (1000usize, 256usize);
    let bytes = copies * slot;
    let mut dev = device.alloc::<u8>(bytes)?;
    dev.copy_from(&vec![0x5A; bytes])?;
    let src_pattern: Vec<u8> = (0..bytes).map(|i| (i * 13 + 5) as u8).collect();
    let mut dev_src = device.alloc::<u8>(bytes)?;
    dev_src.copy_from(&src_pattern)?;
    let plain: Vec<u8> = (0..bytes).map(|i| (i * 7 + 1) as u8).collect();
    let mut pinned = device.alloc_pinned::<u8>(bytes)?;
    for (i, v) in pinned.iter_mut().enumerate() {
        *v = (i * 3 + 2) as u8;
    }
    let mut back = vec![0xEEu8; bytes];
    let len = |i: usize| 4 + (i * 37) % (slot - 4);
    {
        // One destination slice per device-to-host copy, split from `back`.
        let mut rest: &mut [u8] = &mut back;
        let mut batch = CopyBatch::new();
        for i in 0..copies {
            let at = i * slot;
            let (here, tail) = std::mem::take(&mut rest).split_at_mut(slot);
            rest = tail;
            batch = match i % 4 {
                0 => batch.copy(&dev, at, &plain[..], at, len(i)),
                1 => batch.copy(here, 0, &dev_src, at, len(i)),
                2 => batch.copy(&dev, at, &dev_src, at, len(i)),
                _ => batch.copy(&dev, at, &pinned, at, len(i)),
            };
        }
        ensure!(
            batch.len() == copies,
            "the batch holds {} copies",
            batch.len()
        );
        // SAFETY: every host memory named outlives the synchronize below.
        unsafe { s.copy_batch(&batch, CopyBatchFlags::NONE)? };
        s.synchronize()?;
    }
    let got = dev.to_vec()?;
    for i in 0..copies {
        let at = i * slot;
        for k in 0..slot {
            let j = at + k;
            let inside = k < len(i);
            let (have, want) = match i % 4 {
                0 => (got[j], if inside { plain[j] } else { 0x5A }),
                1 => (back[j], if inside { src_pattern[j] } else { 0xEE }),
                2 => (got[j], if inside { src_pattern[j] } else { 0x5A }),
                _ => (got[j], if inside { pinned[j] } else { 0x5A }),
            };
            ensure!(
                have == want,
                "copy {i} byte {k}: {have:#x}, expected {want:#x}"
            );
        }
    }
    Ok(())
}

fn a_copy_batch_refusal_names_the_copy_and_queues_nothing(device: &Device) -> TestResult {
    let s = stream(device)?;
    let dev = device.alloc_zeroed::<u8>(4096)?;
    let host = vec![9u8; 4096];
    let batch = |bad: usize, bytes: usize| {
        let mut b = CopyBatch::new();
        for i in 0..500 {
            b = if i == bad {
                b.copy(&dev, 4000, &host[..], 0, bytes)
            } else {
                b.copy(&dev, i * 8, &host[..], 0, 8)
            };
        }
        b
    };
    // SAFETY: refused before the driver sees any copy.
    refused(
        unsafe { s.copy_batch(&batch(412, 200), CopyBatchFlags::NONE) },
        ErrorKind::OutOfRange,
        "ops[412]: destination range [4000, 4000 + 200)",
    )?;
    s.synchronize()?;
    ensure!(
        dev.to_vec()?.iter().all(|&v| v == 0),
        "a copy ran although the batch was refused"
    );
    Ok(())
}

fn managed_ranges_prefetched_and_discarded_in_one_call(device: &Device) -> TestResult {
    if device.attribute(CONCURRENT_MANAGED_ACCESS)? == 0 {
        return skip("the device has no concurrent managed access");
    }
    let s = stream(device)?;
    let (count, size) = (64usize, 64 * 1024usize);
    let mut m = device.alloc_managed::<u32>(count * size / 4, ManagedFlags::NONE)?;
    let expect: Vec<u32> = (0..count * size / 4)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761))
        .collect();
    m.host_view()?.copy_from_slice(&expect);
    let plain = device.alloc_zeroed::<u32>(size / 4)?;
    let copy = device.alloc_zeroed::<u32>(count * size / 4)?;
    {
        let mut ranges = ManagedRanges::new();
        for i in 0..count {
            ranges = ranges.range(&m, i * size, size);
        }
        s.prefetch_batch(&ranges, Location::Device(device.ordinal()))?;
        // SAFETY: device and managed memory only.
        unsafe {
            s.copy_batch(
                &CopyBatch::new().copy(&copy, 0, &*m, 0, count * size),
                CopyBatchFlags::NONE,
            )?
        };
        s.prefetch_batch(&ranges, Location::Host)?;
        s.synchronize()?;
        ensure!(
            copy.to_vec()? == expect,
            "the device read other words than the host wrote"
        );
        s.discard_batch(&ranges)?;
        s.discard_and_prefetch_batch(&ranges, Location::Device(device.ordinal()))?;
        s.synchronize()?;
    }
    let mut bad = ManagedRanges::new();
    for i in 0..count {
        bad = if i == 5 {
            bad.range(&plain, 0, size)
        } else {
            bad.range(&m, i * size, size)
        };
    }
    refused(
        s.prefetch_batch(&bad, Location::Host),
        ErrorKind::InvalidArgument,
        "ranges[5]: the buffer is a device buffer",
    )?;
    Ok(())
}
