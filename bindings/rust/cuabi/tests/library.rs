//! Loading and library information; runs with or without a GPU.

use cuabi::sys;
use cuabi::{
    CaptureMode, DeviceBuffer, DeviceRepr, ErrorKind, Event, EventFlags, Function,
    FunctionAttribute, Graph, GraphExec, LaunchFlags, LaunchPlan, Module, PinnedBuffer, Program,
    Stream, StreamFlags,
};
use cuabi::{Device, Output};

#[test]
fn the_loaded_library_is_the_headers_version() {
    assert_eq!(cuabi::version(), cuabi::HEADER_VERSION);
    let (major, minor, patch) = (
        sys::CUABI_VERSION_MAJOR,
        sys::CUABI_VERSION_MINOR,
        sys::CUABI_VERSION_PATCH,
    );
    assert_eq!(cuabi::version_string(), format!("{major}.{minor}.{patch}"));
    assert_eq!(major * 10000 + minor * 100 + patch, cuabi::version());
    // The crates carry the header's version (scripts/regen stamps it).
    assert_eq!(env!("CARGO_PKG_VERSION"), cuabi::version_string());
}

#[test]
fn enums_and_flags_carry_the_headers_values() {
    assert_eq!(
        StreamFlags::NON_BLOCKING.bits(),
        sys::CUABI_STREAM_NON_BLOCKING
    );
    assert_eq!(StreamFlags::default(), StreamFlags::NONE);
    let both = EventFlags::DISABLE_TIMING | EventFlags::BLOCKING_SYNC;
    let bits = sys::CUABI_EVENT_DISABLE_TIMING | sys::CUABI_EVENT_BLOCKING_SYNC;
    assert_eq!(both.bits(), bits);
    assert_eq!(CaptureMode::Relaxed.raw(), sys::CUABI_CAPTURE_RELAXED);
    assert_eq!(CaptureMode::default().raw(), sys::CUABI_CAPTURE_GLOBAL);
    assert_eq!(Output::default().raw(), sys::CUABI_OUTPUT_CUBIN);
    assert_eq!(FunctionAttribute::NumRegs.raw(), sys::CUABI_FUNC_NUM_REGS);
    assert_eq!(FunctionAttribute::Raw(9).raw(), 9);
    assert_eq!(ErrorKind::from_status(sys::CUABI_ERROR_IO), ErrorKind::Io);
    assert_eq!(
        ErrorKind::from_status(sys::CUABI_ERROR_HOST_FUNCTION),
        ErrorKind::HostFunction
    );
    let launch = LaunchFlags::COOPERATIVE | LaunchFlags::PROGRAMMATIC_SERIALIZATION;
    assert_eq!(
        launch.bits(),
        sys::CUABI_LAUNCH_COOPERATIVE | sys::CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION
    );
    assert!(launch.contains(LaunchFlags::COOPERATIVE));
    assert!(!launch.contains(LaunchFlags::PROGRAMMATIC_EVENT_AT_BLOCK_START));
    assert_eq!(
        launch.with(LaunchFlags::COOPERATIVE, false),
        LaunchFlags::PROGRAMMATIC_SERIALIZATION
    );
    assert_eq!(
        FunctionAttribute::NonPortableClusterSizeAllowed.raw(),
        sys::CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    );
}

#[test]
fn objects_are_send_and_sync_and_numbers_are_device_repr() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<(Device, Program, Module, Function, LaunchPlan, Stream, Event)>();
    assert_send_sync::<(Graph, GraphExec, DeviceBuffer<f32>, PinnedBuffer<f64>)>();
    fn assert_plain<T: DeviceRepr>() {}
    assert_plain::<f32>();
    assert_plain::<u64>();
    assert_plain::<[[i8; 3]; 2]>();
}

#[test]
fn nvrtc_is_found_and_reports_its_version() {
    let (major, minor) = cuabi::nvrtc_version().expect("NVRTC version");
    assert!(major >= 11, "NVRTC {major}.{minor}");
    assert!(minor >= 0);
    let path = cuabi::nvrtc_path().expect("NVRTC path");
    assert!(path.contains("nvrtc"), "{path}");
    assert!(
        std::path::Path::new(&path).exists() || !path.starts_with('/'),
        "{path}"
    );
}

#[test]
fn status_names_are_the_headers() {
    assert_eq!(cuabi::status_name(0), "CUABI_SUCCESS");
    assert_eq!(cuabi::status_name(13), "CUABI_ERROR_COMPILE");
    assert_eq!(cuabi::status_name(u32::MAX), "CUABI_ERROR_UNKNOWN");
    assert_eq!(ErrorKind::from_status(11), ErrorKind::NoDevice);
}

/// Where the driver is missing the answer names it; where it is present the
/// count is a count.
#[test]
fn device_count_is_a_count_or_a_named_error() {
    match Device::count() {
        Ok(count) => {
            // A driver is installed: every ordinal below the count opens,
            // the one past it does not.
            for ordinal in 0..count {
                let device = Device::get(ordinal).expect("a counted device opens");
                assert_eq!(device.ordinal(), ordinal);
            }
            let err = Device::get(count).expect_err("an ordinal past the last device");
            assert_eq!(err.kind(), ErrorKind::NoDevice, "{err}");
        }
        Err(err) => {
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::DriverNotFound | ErrorKind::StubDriver
                ),
                "{err}"
            );
            assert!(!err.message().is_empty());
            assert_eq!(err.name(), cuabi::status_name(err.status()));
            assert!(err.to_string().starts_with(err.name()), "{err}");
            // Device calls give the same answer, remembered.
            let again = Device::get(0).expect_err("no driver, no device");
            assert_eq!(again.kind(), err.kind());
            assert_eq!(
                cuabi::init().expect_err("init fails the same way").kind(),
                err.kind()
            );
        }
    }
}

#[test]
fn errors_are_std_errors_and_send() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}
    assert_error::<cuabi::Error>();
    let err = Device::get(usize::MAX).expect_err("no device has that ordinal");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err.clone());
    assert_eq!(boxed.to_string(), err.to_string());
}

/// The observing calls are reachable from the crate root with their types,
/// and what core dumps refuse before the driver is asked is refused by name.
#[test]
fn core_dump_settings_are_refused_by_name() {
    use cuabi::{CoredumpFlags, Health, NvtxRange};
    use std::path::Path;
    let _: fn(i32, Option<&Path>, CoredumpFlags) -> cuabi::Result<()> = cuabi::coredump_set;
    let _: fn(Option<&str>, &str, u32) -> cuabi::Result<NvtxRange> = cuabi::nvtx_range;
    let _: fn(usize) -> cuabi::Result<String> = cuabi::driver_log_read;
    let _: fn() -> cuabi::Result<String> = cuabi::context_lost_message;
    let _: fn() -> cuabi::Result<()> = cuabi::clear_context_lost_callback;
    assert_eq!(Health::from_raw(sys::CUABI_HEALTH_LOST), Some(Health::Lost));
    assert_eq!(
        CoredumpFlags::LIGHTWEIGHT.bits(),
        (CoredumpFlags::SKIP_NONRELOCATED_ELF_IMAGES
            | CoredumpFlags::SKIP_GLOBAL_MEMORY
            | CoredumpFlags::SKIP_SHARED_MEMORY
            | CoredumpFlags::SKIP_LOCAL_MEMORY)
            .bits()
    );

    let err = cuabi::coredump_set(1, None, CoredumpFlags::from_bits(1 << 20))
        .expect_err("a flag that is none of cuabi_coredump_flag_bits");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.message()
            .contains("flags 0x100000 hold bits that are no cuabi_coredump_flag_bits"),
        "{err}"
    );
    let long = "c".repeat(1024);
    let err = cuabi::coredump_set(1, Some(Path::new(&long)), CoredumpFlags::LIGHTWEIGHT)
        .expect_err("a path longer than the driver takes");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.message()
            .contains("path is 1024 bytes long; the driver takes at most 1023"),
        "{err}"
    );
    let err = cuabi::coredump_set(1, Some(Path::new("core\0")), CoredumpFlags::NONE)
        .expect_err("a NUL in the path");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}
