//! 3D batch copies ([`Copy3dBatch`], `Stream::copy_3d_batch`): boxes
//! between host memory, plain and pitched device buffers and arrays, several
//! in one call, each checked against the box cut from the host volume; and a
//! refusal naming the copy at fault, after which nothing of the batch ran.

use cuabi::{
    ArrayDesc, ArrayFormat, Copy3d, Copy3dBatch, CopyBatchFlags, Device, ErrorKind, Stream,
    StreamFlags,
};

use super::{Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    boxes_between_host_buffers_pitched_memory_and_arrays_in_one_call,
    a_3d_batch_refusal_names_the_copy_and_queues_nothing,
];

const W: usize = 8;
const H: usize = 6;
const D: usize = 5;

fn value(x: usize, y: usize, z: usize) -> f32 {
    ((z * H + y) * W + x) as f32 * 3.0 + 0.5
}

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

fn boxes_between_host_buffers_pitched_memory_and_arrays_in_one_call(device: &Device) -> TestResult {
    let s = stream(device)?;
    let vol: Vec<f32> = (0..W * H * D)
        .map(|i| value(i % W, i / W % H, i / (W * H)))
        .collect();
    let desc = ArrayDesc::new_3d(ArrayFormat::F32, 1, W, H, D);
    let arr = device.create_array(&desc)?;
    let arr2 = device.create_array(&desc)?;
    let mut pitched = device.alloc_pitched::<f32>(W, H * D)?;
    // Rows of 64 bytes, slices of 10 rows.
    let (row, rows) = (64usize, 10usize);
    let mut plain = device.alloc_zeroed::<u8>(row * rows * D)?;
    let mut tight = device.alloc_zeroed::<f32>(W * H * D)?;
    let up = Copy3dBatch::new()
        .copy(
            Copy3d::new()
                .from_host(&vol)
                .to_array(&arr)
                .extent(W * 4, H, D),
        )?
        .copy(
            Copy3d::new()
                .from_host(&vol)
                .to_buffer(&mut pitched)
                .dst_layout(0, H)
                .extent(W * 4, H, D),
        )?
        // Elements x 1..4, rows 2..4, slices 1..3 at byte 8 of row 1 of slice 1.
        .copy(
            Copy3d::new()
                .from_host(&vol)
                .src_offset(4, 2, 1)
                .src_layout(W * 4, H)
                .to_buffer(&mut plain)
                .dst_offset(8, 1, 1)
                .dst_layout(row, rows)
                .extent(16, 3, 3),
        )?;
    unsafe { s.copy_3d_batch(&up, CopyBatchFlags::NONE)? };
    s.synchronize()?;
    drop(up);
    let mut sub = vec![-1.0f32; 3 * 2 * 2];
    let mut plain_box = vec![-1.0f32; 4 * 3 * 3];
    let mid = Copy3dBatch::new()
        .copy(
            Copy3d::new()
                .from_array(&arr)
                .to_array(&arr2)
                .extent(W * 4, H, D),
        )?
        .copy(
            Copy3d::new()
                .from_buffer(&pitched)
                .src_layout(0, H)
                .to_buffer(&mut tight)
                .extent(W * 4, H, D),
        )?
        .copy(
            Copy3d::new()
                .from_array(&arr)
                .src_offset(8, 1, 1)
                .to_host(&mut sub)
                .extent(12, 2, 2),
        )?
        .copy(
            Copy3d::new()
                .from_buffer(&plain)
                .src_offset(8, 1, 1)
                .src_layout(row, rows)
                .to_host(&mut plain_box)
                .extent(16, 3, 3),
        )?;
    unsafe { s.copy_3d_batch(&mid, CopyBatchFlags::PREFER_OVERLAP)? };
    s.synchronize()?;
    drop(mid);
    let mut back = vec![-1.0f32; W * H * D];
    // Rows 1..4 of slice 2 of the pitched buffer into rows of W + 2 floats.
    let mut wide = vec![-1.0f32; 4 * (W + 2)];
    let down = Copy3dBatch::new()
        .copy(
            Copy3d::new()
                .from_array(&arr2)
                .to_host(&mut back)
                .extent(W * 4, H, D),
        )?
        .copy(
            Copy3d::new()
                .from_buffer(&pitched)
                .src_offset(0, 1, 2)
                .src_layout(0, H)
                .to_host(&mut wide)
                .dst_layout((W + 2) * 4, 0)
                .extent(W * 4, 4, 1),
        )?;
    unsafe { s.copy_3d_batch(&down, CopyBatchFlags::NONE)? };
    s.synchronize()?;
    drop(down);
    ensure!(
        back == vol,
        "array -> array -> host differs from the volume"
    );
    ensure!(
        tight.to_vec()? == vol,
        "host -> pitched -> buffer differs from the volume"
    );
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..3 {
                let (got, want) = (sub[(z * 2 + y) * 3 + x], value(2 + x, 1 + y, 1 + z));
                ensure!(got == want, "array sub-box ({x},{y},{z}): {got} != {want}");
            }
        }
    }
    for z in 0..3 {
        for y in 0..3 {
            for x in 0..4 {
                let (got, want) = (plain_box[(z * 3 + y) * 4 + x], value(1 + x, 2 + y, 1 + z));
                ensure!(got == want, "plain sub-box ({x},{y},{z}): {got} != {want}");
            }
        }
    }
    for y in 0..4 {
        for x in 0..W + 2 {
            let got = wide[y * (W + 2) + x];
            let want = if x < W { value(x, 1 + y, 2) } else { -1.0 };
            ensure!(got == want, "pitched slice ({x},{y}): {got} != {want}");
        }
    }
    let bytes = plain.to_vec()?;
    for z in 0..D {
        for y in 0..rows {
            for xb in (0..row).step_by(4) {
                let at = (z * rows + y) * row + xb;
                let got =
                    f32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
                let inside = (1..4).contains(&z) && (1..4).contains(&y) && (8..24).contains(&xb);
                let want = if inside {
                    value(1 + (xb - 8) / 4, 1 + y, z)
                } else {
                    0.0
                };
                ensure!(
                    got == want,
                    "plain byte {xb} of row {y} of slice {z}: {got} != {want}"
                );
            }
        }
    }
    Ok(())
}

fn a_3d_batch_refusal_names_the_copy_and_queues_nothing(device: &Device) -> TestResult {
    let s = stream(device)?;
    let mut a = device.alloc_zeroed::<u8>(4096)?;
    let mut b = device.alloc_zeroed::<u8>(4096)?;
    let mut c = device.alloc_zeroed::<u8>(4096)?;
    let host = vec![0x11u8; 16 * 16];
    // A box of 16 bytes x 16 rows into rows of 64 bytes.
    let boxed = |x: usize, y: usize| {
        Copy3d::new()
            .from_host(&host)
            .src_layout(16, 0)
            .dst_offset(x, y, 0)
            .dst_layout(64, 0)
            .extent(16, 16, 1)
    };
    {
        // The third box starts at row 60 and reaches past its buffer's end.
        let bad = Copy3dBatch::new()
            .copy(boxed(0, 0).to_buffer(&mut a))?
            .copy(boxed(16, 0).to_buffer(&mut b))?
            .copy(boxed(0, 60).to_buffer(&mut c))?;
        refused(
            unsafe { s.copy_3d_batch(&bad, CopyBatchFlags::NONE) },
            ErrorKind::OutOfRange,
            "copies[2]: dst box reaches byte 4816 of the 4096-byte buffer",
        )?;
    }
    refused(
        unsafe { s.copy_3d_batch(&Copy3dBatch::new(), CopyBatchFlags::NONE) },
        ErrorKind::InvalidArgument,
        "count is 0",
    )?;
    let f32s = device.create_array(&ArrayDesc::new_3d(ArrayFormat::F32, 1, W, H, D))?;
    let f32x4 = device.create_array(&ArrayDesc::new_3d(ArrayFormat::F32, 4, W, H, D))?;
    ensure!(
        (f32s.element_size()?, f32x4.element_size()?) == (4, 16),
        "element sizes {:?}, expected (4, 16)",
        (f32s.element_size()?, f32x4.element_size()?)
    );
    {
        let mixed = Copy3dBatch::new()
            .copy(boxed(0, 0).to_buffer(&mut a))?
            .copy(
                Copy3d::new()
                    .from_array(&f32s)
                    .to_array(&f32x4)
                    .extent(16, 1, 1),
            )?;
        refused(
            unsafe { s.copy_3d_batch(&mixed, CopyBatchFlags::NONE) },
            ErrorKind::InvalidArgument,
            "copies[1]: the src array's elements are 4 bytes and the dst array's 16",
        )?;
    }
    s.synchronize()?;
    for (name, buf) in [("a", &a), ("b", &b), ("c", &c)] {
        ensure!(
            buf.to_vec()?.iter().all(|&v| v == 0),
            "a copy into {name} ran although its batch was refused"
        );
    }
    // The first two boxes alone run.
    {
        let good = Copy3dBatch::new()
            .copy(boxed(0, 0).to_buffer(&mut a))?
            .copy(boxed(16, 0).to_buffer(&mut b))?;
        unsafe { s.copy_3d_batch(&good, CopyBatchFlags::NONE)? };
        s.synchronize()?;
    }
    for (buf, x0) in [(&a, 0usize), (&b, 16usize)] {
        let got = buf.to_vec()?;
        for y in 0..64 {
            for x in 0..64 {
                let want = if y < 16 && (x0..x0 + 16).contains(&x) {
                    0x11
                } else {
                    0
                };
                ensure!(
                    got[y * 64 + x] == want,
                    "byte {x} of row {y}: {}",
                    got[y * 64 + x]
                );
            }
        }
    }
    Ok(())
}
