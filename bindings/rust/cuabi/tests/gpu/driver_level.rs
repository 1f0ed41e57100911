//! GPU tests of the driver-level calls of the generated object layer
//! (`objects.rs`), as `tests/python/test_limits.py`,
//! `test_stream_attributes.py` and `test_stream_memops.py` test them:
//!
//! * the primary context's limits ([`Device::limit`], [`Device::set_limit`],
//!   [`Device::reset_persisting_l2`]): round trips that restore the old
//!   value, and the persisting-L2 set-aside within the device's maximum;
//! * a stream's attributes: synchronization policy, priority within
//!   [`Device::stream_priority_range`], memory-sync domain, and the L2
//!   access-policy window (the generated value type [`AccessPolicyWindow`]);
//! * stream memory operations ([`Stream::write_value`],
//!   [`Stream::wait_value`], [`Stream::write_value_host`],
//!   [`Stream::wait_value_host`]; offsets in bytes whatever the buffer's
//!   element type).
//!
//! Each refusal is checked by its error kind and a piece of the core's
//! message (`capi/core/limits.cpp`, `stream_attributes.cpp`, `memops.cpp`).
//! Values a Rust enum cannot hold (an unknown limit, policy, domain,
//! property or wait condition) are not tested here: the C and Python tests
//! pass them.

use std::sync::atomic::{fence, Ordering};
use std::thread::sleep;
use std::time::Duration;

use cuabi::{
    AccessPolicyWindow, AccessProperty, CompileOptions, Device, ErrorKind, LaunchConfig, Limit,
    MemOpFlags, MemSyncDomain, Module, Stream, StreamFlags, SyncPolicy, WaitCondition,
};

use super::{saxpy_mismatch, saxpy_module, skip, Rng, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    limits_round_trip_and_are_restored,
    persisting_l2_within_the_device_maximum,
    sync_policy_round_trips,
    priority_within_the_device_range,
    memory_sync_domain_round_trips,
    access_policy_window_round_trips,
    access_policy_window_refusals,
    a_kernel_computes_on_a_stream_with_a_window,
    a_kernel_waits_for_the_host_to_write_the_word,
    producer_and_consumer_ordered_by_a_word_alone,
    words_of_both_widths_land_where_asked,
    word_checks_are_refused_naming_what_is_wrong,
];

/// `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE` in cuda.h.
const MAX_PERSISTING_L2: i32 = 108;
/// `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE` in cuda.h: the
/// largest window the device takes; 0 where it has none.
const MAX_ACCESS_POLICY_WINDOW_SIZE: i32 = 109;

const KERNELS: &str = r#"
extern "C" __global__ void spin_then_fill(float* x, int n, float v, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = v;
}
extern "C" __global__ void copy(float* y, const float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = x[i];
}
"#;

fn kernels(device: &Device) -> cuabi::Result<Module> {
    device.compile(KERNELS, &CompileOptions::new().name("driver_level.cu"))
}

fn stream(device: &Device) -> cuabi::Result<Stream> {
    device.create_stream_with(StreamFlags::NON_BLOCKING, 0)
}

/// The call failed with `kind`, its message naming the C function `call`
/// (the core's "function: " prefix) and holding `needle`.
fn refused<T>(result: cuabi::Result<T>, kind: ErrorKind, call: &str, needle: &str) -> TestResult {
    match result {
        Ok(_) => Err(format!("{call}: succeeded, expected {kind:?} holding '{needle}'").into()),
        Err(err)
            if err.kind() == kind
                && err.message().starts_with(&format!("{call}: "))
                && err.message().contains(needle) =>
        {
            Ok(())
        }
        Err(err) => Err(format!("{call}: expected {kind:?} holding '{needle}', got {err}").into()),
    }
}

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

fn limits_round_trip_and_are_restored(device: &Device) -> TestResult {
    for limit in [
        Limit::StackSize,
        Limit::PrintfFifoSize,
        Limit::MallocHeapSize,
    ] {
        let before = device.limit(limit)?;
        ensure!(before > 0, "{limit:?} is {before}");
        let want = before * 2 + 4096;
        device.set_limit(limit, want)?;
        let got = device.limit(limit);
        // The old value back before anything is checked.
        device.set_limit(limit, before)?;
        let got = got?;
        // The driver may round up, never down.
        ensure!(got >= want, "{limit:?}: set {want}, read {got}");
        let restored = device.limit(limit)?;
        ensure!(
            restored == before,
            "{limit:?}: {restored} after restoring {before}"
        );
    }
    Ok(())
}

fn persisting_l2_within_the_device_maximum(device: &Device) -> TestResult {
    let most = device.attribute(MAX_PERSISTING_L2)?;
    if most <= 0 {
        return skip(format!(
            "device {} has no persisting L2 set-aside \
             (CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE is {most})",
            device.ordinal()
        ));
    }
    let most = most as usize;
    let limit = Limit::PersistingL2CacheSize;
    let before = device.limit(limit)?;
    device.set_limit(limit, most / 2)?;
    let got = device.limit(limit);
    let reset = device.reset_persisting_l2();
    let past = device.set_limit(limit, most + 1);
    device.set_limit(limit, before)?;
    let got = got?;
    ensure!(
        most / 2 <= got && got <= most,
        "set {}, read {got} (the maximum is {most})",
        most / 2
    );
    reset?;
    refused(
        past,
        ErrorKind::InvalidArgument,
        "cuabi_device_set_limit",
        &format!(
            "CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE of {} bytes is past device {}'s maximum of \
             {most} bytes (CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)",
            most + 1,
            device.ordinal()
        ),
    )?;
    let restored = device.limit(limit)?;
    ensure!(restored == before, "{restored} after restoring {before}");
    Ok(())
}

// ---------------------------------------------------------------------------
// Stream attributes
// ---------------------------------------------------------------------------

fn sync_policy_round_trips(device: &Device) -> TestResult {
    let s = stream(device)?;
    for policy in [
        SyncPolicy::Spin,
        SyncPolicy::Yield,
        SyncPolicy::BlockingSync,
        SyncPolicy::Auto,
    ] {
        s.set_sync_policy(policy)?;
        let got = s.sync_policy()?;
        ensure!(got == policy, "set {policy:?}, read {got:?}");
    }
    Ok(())
}

fn priority_within_the_device_range(device: &Device) -> TestResult {
    let s = stream(device)?;
    let (least, greatest) = device.stream_priority_range()?;
    for priority in [greatest, least] {
        s.set_priority(priority)?;
        let got = s.priority()?;
        ensure!(got == priority, "set {priority}, read {got}");
    }
    for outside in [greatest - 1, least + 1] {
        refused(
            s.set_priority(outside),
            ErrorKind::InvalidArgument,
            "cuabi_stream_set_priority",
            &format!(
                "priority {outside} is outside device {}'s range, {greatest} (highest) to \
                 {least} (lowest)",
                device.ordinal()
            ),
        )?;
    }
    ensure!(
        s.priority()? == least,
        "a refused priority changed the stream's"
    );
    Ok(())
}

fn memory_sync_domain_round_trips(device: &Device) -> TestResult {
    let s = stream(device)?;
    for domain in [MemSyncDomain::Remote, MemSyncDomain::Default] {
        s.set_memory_sync_domain(domain)?;
        let got = s.memory_sync_domain()?;
        ensure!(got == domain, "set {domain:?}, read {got:?}");
    }
    Ok(())
}

/// The device's largest access-policy window in bytes; the test is skipped
/// where it takes none.
fn max_window(device: &Device) -> Result<usize, Box<dyn std::error::Error>> {
    let most = device.attribute(MAX_ACCESS_POLICY_WINDOW_SIZE)?;
    if most <= 0 {
        return skip(format!(
            "device {} takes no access-policy window \
             (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE is {most})",
            device.ordinal()
        ));
    }
    Ok(most as usize)
}

fn access_policy_window_round_trips(device: &Device) -> TestResult {
    let most = max_window(device)?;
    let s = stream(device)?;
    let none = s.access_policy_window()?;
    ensure!(none.bytes == 0, "a new stream has a window: {none:?}");
    let buf = device.alloc_zeroed::<u8>(1 << 20)?;
    let bytes = buf.size_bytes().min(most);
    // Every field other than the init's, in values a float holds exactly.
    for (hit_ratio, hit_property, miss_property) in [
        (0.75, AccessProperty::Persisting, AccessProperty::Normal),
        (0.25, AccessProperty::Streaming, AccessProperty::Streaming),
    ] {
        let window = AccessPolicyWindow {
            base: buf.device_ptr(),
            bytes,
            hit_ratio,
            hit_property,
            miss_property,
        };
        s.set_access_policy_window(&window)?;
        let got = s.access_policy_window()?;
        ensure!(got == window, "set {window:?}, read {got:?}");
    }
    // The library's defaults for the fields not given.
    let window = AccessPolicyWindow {
        base: buf.device_ptr(),
        bytes: bytes / 2,
        ..AccessPolicyWindow::default()
    };
    s.set_access_policy_window(&window)?;
    let got = s.access_policy_window()?;
    ensure!(got == window, "set {window:?}, read {got:?}");
    // bytes 0: no window.
    s.set_access_policy_window(&AccessPolicyWindow { bytes: 0, ..window })?;
    let got = s.access_policy_window()?;
    ensure!(got.bytes == 0, "bytes 0 left a window: {got:?}");
    Ok(())
}

fn access_policy_window_refusals(device: &Device) -> TestResult {
    let most = max_window(device)?;
    let s = stream(device)?;
    let buf = device.alloc_zeroed::<u8>(1 << 16)?;
    let kept = AccessPolicyWindow {
        base: buf.device_ptr(),
        bytes: buf.size_bytes().min(most),
        hit_ratio: 0.5,
        hit_property: AccessProperty::Persisting,
        miss_property: AccessProperty::Normal,
    };
    s.set_access_policy_window(&kept)?;
    let set = |window: AccessPolicyWindow, needle: &str| {
        refused(
            s.set_access_policy_window(&window),
            ErrorKind::InvalidArgument,
            "cuabi_stream_set_access_policy_window",
            needle,
        )
    };
    let small = AccessPolicyWindow { bytes: 256, ..kept };
    // Bytes past the device's maximum window.
    set(
        AccessPolicyWindow {
            bytes: most + 1,
            ..kept
        },
        &format!(
            "window->bytes is {}, past device {}'s maximum window of {most} bytes \
             (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)",
            most + 1,
            device.ordinal()
        ),
    )?;
    // A hit ratio outside [0, 1] (std::to_string's six decimals).
    set(
        AccessPolicyWindow {
            hit_ratio: 1.5,
            ..small
        },
        "window->hit_ratio is 1.500000; it is from 0 to 1",
    )?;
    set(
        AccessPolicyWindow {
            hit_ratio: -0.25,
            ..small
        },
        "window->hit_ratio is -0.250000; it is from 0 to 1",
    )?;
    set(
        AccessPolicyWindow {
            hit_ratio: f32::NAN,
            ..small
        },
        "; it is from 0 to 1",
    )?;
    // A base of 0 with bytes.
    set(
        AccessPolicyWindow { base: 0, ..small },
        "window->base is 0 for a window of 256 bytes",
    )?;
    // Nothing refused reached the stream.
    let got = s.access_policy_window()?;
    ensure!(
        got == kept,
        "after the refusals the window is {got:?}, not {kept:?}"
    );
    Ok(())
}

fn a_kernel_computes_on_a_stream_with_a_window(device: &Device) -> TestResult {
    let most = max_window(device)?;
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 20;
    let mut rng = Rng(5);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let out = device.alloc_zeroed::<f32>(n)?;
    device.synchronize()?;
    let s = stream(device)?;
    let window = AccessPolicyWindow {
        base: x.device_ptr(),
        bytes: x.size_bytes().min(most),
        hit_ratio: 0.5, // a float the driver holds exactly
        hit_property: AccessProperty::Persisting,
        miss_property: AccessProperty::Streaming,
    };
    // Some L2 set aside for the persisting accesses, where the device has it.
    let set_aside = device.attribute(MAX_PERSISTING_L2)?;
    let before = device.limit(Limit::PersistingL2CacheSize)?;
    if set_aside > 0 {
        let bytes = (set_aside as usize).min(window.bytes);
        device.set_limit(Limit::PersistingL2CacheSize, bytes)?;
    }
    let a = 2.5f32;
    let ran = (|| -> TestResult {
        s.set_access_policy_window(&window)?;
        // SAFETY: saxpy reads n elements of x and y and writes n of out, all
        // alive until the stream is synchronized below.
        unsafe {
            saxpy
                .launch(LaunchConfig::new(n.div_ceil(256) as u32, 256))
                .stream(&s)
                .arg(&a)
                .arg(&x)
                .arg(&y)
                .arg(&out)
                .arg(&n)
                .run()?;
        }
        s.synchronize()?;
        let got = s.access_policy_window()?;
        ensure!(
            got == window,
            "after the launch the window is {got:?}, not {window:?}"
        );
        Ok(())
    })();
    device.reset_persisting_l2()?;
    device.set_limit(Limit::PersistingL2CacheSize, before)?;
    ran?;
    let got = out.to_vec()?;
    if let Some(i) = saxpy_mismatch(a, &hx, &hy, &got) {
        return Err(format!("element {i}: {} is not {a} * {} + {}", got[i], hx[i], hy[i]).into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Stream memory operations
// ---------------------------------------------------------------------------

fn a_kernel_waits_for_the_host_to_write_the_word(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let fill = module.function("spin_then_fill")?;
    let s = stream(device)?;
    let mut word = device.alloc_pinned::<u32>(16)?;
    word[0] = 0;
    let n = 1i32 << 16;
    let x = device.alloc_zeroed::<f32>(n as usize)?;
    device.synchronize()?;
    s.wait_value_host(&word, 0, 7, 4, WaitCondition::Geq, MemOpFlags::NONE)?;
    // From here the host writes the word as the device would see a write
    // from elsewhere: through a volatile pointer, fenced.
    let at = word.as_mut_ptr();
    let write = |value: u32| {
        // SAFETY: `at` is the first element of `word`, alive until the end
        // of this function; no reference to it is held meanwhile.
        unsafe { at.write_volatile(value) };
        fence(Ordering::SeqCst);
    };
    let held = (|| -> TestResult {
        let (v, cycles) = (3.5f32, 0i64);
        // SAFETY: spin_then_fill writes n floats of x, alive until the
        // stream is synchronized below.
        unsafe {
            fill.launch(LaunchConfig::new(64, 256))
                .stream(&s)
                .arg(&x)
                .arg(&n)
                .arg(&v)
                .arg(&cycles)
                .run()?;
        }
        sleep(Duration::from_millis(200));
        ensure!(!s.query()?, "the kernel ran before the host wrote the word");
        write(6);
        sleep(Duration::from_millis(100));
        ensure!(
            !s.query()?,
            "the kernel ran after the word became 6, short of 7"
        );
        Ok(())
    })();
    // Whatever happened, the wait ends before anything is dropped.
    write(7);
    s.synchronize()?;
    held?;
    let got = x.to_vec()?;
    ensure!(
        got.iter().all(|&v| v == 3.5),
        "x holds {:?}, not 3.5",
        got.iter().find(|&&v| v != 3.5)
    );
    Ok(())
}

fn producer_and_consumer_ordered_by_a_word_alone(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let fill = module.function("spin_then_fill")?;
    let copy = module.function("copy")?;
    let producer = stream(device)?;
    let consumer = stream(device)?;
    let n = 1i32 << 20;
    let x = device.alloc_zeroed::<f32>(n as usize)?;
    let y = device.alloc_zeroed::<f32>(n as usize)?;
    let flag = device.alloc_zeroed::<u64>(1)?;
    device.synchronize()?;
    let config = LaunchConfig::new(64, 256);
    for round in 1..=3u64 {
        consumer.wait_value(&flag, 0, round, 8, WaitCondition::Eq, MemOpFlags::NONE)?;
        let v = (round * 10) as f32;
        // The producer's kernel spins first, so that a consumer not held by
        // the word would copy the old values.
        let cycles = 50_000_000i64;
        // SAFETY: copy reads n floats of x and writes n of y, fill writes n
        // of x; all alive until both streams are synchronized.
        unsafe {
            copy.launch(config)
                .stream(&consumer)
                .arg(&y)
                .arg(&x)
                .arg(&n)
                .run()?;
            fill.launch(config)
                .stream(&producer)
                .arg(&x)
                .arg(&n)
                .arg(&v)
                .arg(&cycles)
                .run()?;
        }
        producer.write_value(&flag, 0, round, 8, MemOpFlags::NONE)?;
        consumer.synchronize()?;
        let got = y.to_vec()?;
        ensure!(
            got.iter().all(|&g| g == v),
            "round {round}: the consumer read before the word ({:?}, not {v})",
            got.iter().find(|&&g| g != v)
        );
    }
    producer.synchronize()?;
    let last = flag.to_vec()?;
    ensure!(last == [3], "the word is {last:?}, not [3]");
    Ok(())
}

fn words_of_both_widths_land_where_asked(device: &Device) -> TestResult {
    let s = stream(device)?;
    // 64 bytes as 8 u64s: the offsets are bytes, not elements.
    let b = device.alloc_zeroed::<u64>(8)?;
    device.synchronize()?;
    s.write_value(&b, 4, 0x0102_0304, 4, MemOpFlags::NONE)?;
    refused(
        s.write_value(&b, 16, 1, 8, MemOpFlags::NO_MEMORY_BARRIER),
        ErrorKind::NotSupported,
        "cuabi_stream_write_value",
        "CUABI_MEM_OP_NO_MEMORY_BARRIER",
    )?;
    s.write_value(&b, 16, 0x1122_3344_5566_7788, 8, MemOpFlags::NONE)?;
    s.wait_value(&b, 16, 0x8, 8, WaitCondition::And, MemOpFlags::NONE)?;
    // The same into pinned host memory, 16 u32s.
    let mut pinned = device.alloc_pinned::<u32>(16)?;
    pinned.fill(0);
    s.write_value_host(&pinned, 4, 0xA1B2_C3D4, 4, MemOpFlags::NONE)?;
    s.write_value_host(&pinned, 8, 0x0A0B_0C0D_0E0F_1011, 8, MemOpFlags::NONE)?;
    s.wait_value_host(&pinned, 8, 0x1011, 8, WaitCondition::And, MemOpFlags::NONE)?;
    s.synchronize()?;

    let raw: Vec<u8> = b.to_vec()?.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let word4 = u32::from_ne_bytes(raw[4..8].try_into()?);
    let word8 = u64::from_ne_bytes(raw[16..24].try_into()?);
    ensure!(word4 == 0x0102_0304, "the 4-byte word at 4 is {word4:#x}");
    ensure!(
        word8 == 0x1122_3344_5566_7788,
        "the 8-byte word at 16 is {word8:#x}"
    );
    ensure!(
        raw[..4]
            .iter()
            .chain(&raw[8..16])
            .chain(&raw[24..])
            .all(|&v| v == 0),
        "bytes outside the words changed: {raw:?}"
    );

    let raw: Vec<u8> = pinned.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let word4 = u32::from_ne_bytes(raw[4..8].try_into()?);
    let word8 = u64::from_ne_bytes(raw[8..16].try_into()?);
    ensure!(
        word4 == 0xA1B2_C3D4,
        "the pinned 4-byte word at 4 is {word4:#x}"
    );
    ensure!(
        word8 == 0x0A0B_0C0D_0E0F_1011,
        "the pinned 8-byte word at 8 is {word8:#x}"
    );
    ensure!(
        raw[..4].iter().chain(&raw[16..]).all(|&v| v == 0),
        "pinned bytes outside the words changed: {raw:?}"
    );
    Ok(())
}

fn word_checks_are_refused_naming_what_is_wrong(device: &Device) -> TestResult {
    use ErrorKind::{InvalidArgument, OutOfRange};
    let s = stream(device)?;
    let b = device.alloc_zeroed::<u64>(8)?; // 64 bytes
    let pinned = device.alloc_pinned::<u32>(16)?; // 64 bytes
    let write = "cuabi_stream_write_value";
    let cases: [(usize, u64, u32, MemOpFlags, ErrorKind, &str); 5] = [
        (
            0,
            1,
            3,
            MemOpFlags::NONE,
            InvalidArgument,
            "width is 3; a word is 4 or 8 bytes",
        ),
        (
            6,
            1,
            4,
            MemOpFlags::NONE,
            InvalidArgument,
            "offset 6 is not a multiple of the width (4 bytes): the word must be aligned",
        ),
        (
            64,
            1,
            8,
            MemOpFlags::NONE,
            OutOfRange,
            "the 8-byte word at offset 64 reaches past the end of the 64-byte buffer",
        ),
        (
            0,
            1 << 32,
            4,
            MemOpFlags::NONE,
            InvalidArgument,
            "value 4294967296 does not fit in a 4-byte word",
        ),
        (
            0,
            1,
            4,
            MemOpFlags::FLUSH,
            InvalidArgument,
            "CUABI_MEM_OP_FLUSH is for a wait, not a write",
        ),
    ];
    for (offset, value, width, flags, kind, needle) in cases {
        refused(
            s.write_value(&b, offset, value, width, flags),
            kind,
            write,
            needle,
        )?;
    }
    // The checks of the wait and of pinned memory are the same.
    refused(
        s.wait_value(
            &b,
            0,
            1,
            4,
            WaitCondition::Geq,
            MemOpFlags::NO_MEMORY_BARRIER,
        ),
        InvalidArgument,
        "cuabi_stream_wait_value",
        "CUABI_MEM_OP_NO_MEMORY_BARRIER is for a write, not a wait",
    )?;
    refused(
        s.write_value_host(&pinned, 60, 1, 8, MemOpFlags::NONE),
        InvalidArgument,
        "cuabi_stream_write_value_host",
        "offset 60 is not a multiple of the width (8 bytes)",
    )?;
    refused(
        s.wait_value_host(&pinned, 64, 1, 4, WaitCondition::Eq, MemOpFlags::NONE),
        OutOfRange,
        "cuabi_stream_wait_value_host",
        "the 4-byte word at offset 64 reaches past the end of the 64-byte buffer",
    )?;
    // Nothing was queued: the stream is idle.
    s.synchronize()?;
    ensure!(s.query()?, "the stream is busy after refused operations");
    ensure!(
        b.to_vec()? == [0u64; 8],
        "a refused write reached the buffer"
    );
    Ok(())
}
