use super::*;
use crate::objects::status_name;

/// A handle type that counts its releases.
#[derive(Clone, Copy, Debug)]
struct Counted(usize);

static RELEASED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Release for Counted {
    unsafe fn release(self) {
        RELEASED.fetch_add(self.0, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn failed_create_owns_nothing() {
    let released = || RELEASED.load(std::sync::atomic::Ordering::SeqCst);
    let result = unsafe { create::<Counted>(|_| sys::CUABI_ERROR_INVALID_ARGUMENT) };
    assert!(result.is_err());
    assert_eq!(released(), 0);
    let owned = unsafe {
        create::<Counted>(|out| {
            out.write(Counted(1));
            sys::CUABI_SUCCESS
        })
    }
    .unwrap();
    assert_eq!(owned.get().0, 1);
    drop(owned);
    assert_eq!(released(), 1);
}

#[test]
fn every_status_the_header_defines_has_a_kind_and_the_librarys_name() {
    for status in 1..sys::CUABI_STATUS_COUNT {
        let (kind, name) = (ErrorKind::from_status(status), status_name(status));
        assert_ne!(kind, ErrorKind::Unknown, "status {status} has no ErrorKind");
        // The variant's name is the C name in CamelCase.
        let camel = name["CUABI_ERROR_".len()..].replace('_', "").to_lowercase();
        assert_eq!(format!("{kind:?}").to_lowercase(), camel, "{name}");
    }
    assert_eq!(
        ErrorKind::from_status(sys::CUABI_SUCCESS),
        ErrorKind::Unknown
    );
    assert_eq!(
        ErrorKind::from_status(sys::CUABI_STATUS_COUNT),
        ErrorKind::Unknown
    );
    assert_eq!(status_name(9999), "CUABI_ERROR_UNKNOWN");
    assert_eq!(status_name(sys::CUABI_SUCCESS), "CUABI_SUCCESS");
}

#[test]
fn nul_bytes_are_refused_with_the_argument_named() {
    let err = c_string("kernel name", "sa\0xpy").unwrap_err();
    assert_eq!(
        (err.kind(), err.name()),
        (ErrorKind::InvalidArgument, "CUABI_ERROR_INVALID_ARGUMENT")
    );
    assert_eq!(err.message(), "kernel name contains a NUL byte at byte 2");
    assert_eq!(err.log(), None);
    assert_eq!(
        err.to_string(),
        format!("CUABI_ERROR_INVALID_ARGUMENT: {}", err.message())
    );
}

#[test]
fn display_shows_the_compile_log_once() {
    let log = "saxpy.cu(3): error: expected a \";\"\n";
    let mut err = Error::new(
        sys::CUABI_ERROR_COMPILE,
        "cuabi_program_compile: NVRTC failed",
    );
    err.log = log.into();
    assert_eq!(
        err.to_string(),
        "CUABI_ERROR_COMPILE: cuabi_program_compile: NVRTC failed\ncompile log:\n\
         saxpy.cu(3): error: expected a \";\""
    );
    assert!((&err as &dyn std::error::Error).source().is_none());
    // A message that holds the log already shows it once.
    err.message = format!("cuabi_program_compile: NVRTC could not compile the source:\n{log}");
    let text = err.to_string();
    assert_eq!(text.matches("expected a").count(), 1, "{text}");
    assert!(!text.contains("compile log:"), "{text}");
}

#[test]
fn two_call_reads_grow_when_the_size_grows() {
    // A value that gets longer between the size query and the fill.
    let mut calls = 0;
    let text = read_string(|buf, size| unsafe {
        calls += 1;
        let value: &[u8] = if calls == 1 { b"ab\0" } else { b"abcdef\0" };
        if buf.is_null() || *size < value.len() {
            let too_small = !buf.is_null();
            *size = value.len();
            return if too_small {
                sys::CUABI_ERROR_INSUFFICIENT_BUFFER
            } else {
                0
            };
        }
        std::ptr::copy_nonoverlapping(value.as_ptr(), buf.cast(), value.len());
        *size = value.len();
        0
    })
    .unwrap();
    assert_eq!((text.as_str(), calls), ("abcdef", 3));
}
