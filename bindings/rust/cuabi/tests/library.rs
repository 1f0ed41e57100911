//! Loading and library information; runs with or without a GPU.

use cuabi::{Device, ErrorKind};

#[test]
fn the_loaded_library_is_the_headers_version() {
    assert_eq!(cuabi::version(), cuabi::HEADER_VERSION);
    let header = std::str::from_utf8(cuabi::sys::CUABI_VERSION_STRING)
        .unwrap()
        .trim_end_matches('\0');
    assert_eq!(cuabi::version_string(), header);
    let parts: Vec<u32> = header.split('.').map(|p| p.parse().unwrap()).collect();
    assert_eq!(
        parts[0] * 10000 + parts[1] * 100 + parts[2],
        cuabi::version()
    );
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
    assert_eq!(cuabi::status_name(-5), "CUABI_ERROR_UNKNOWN");
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
