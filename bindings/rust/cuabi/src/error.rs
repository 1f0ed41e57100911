//! Errors: every failing cuabi call becomes an [`Error`].

use std::ffi::{c_char, CStr, CString};
use std::fmt;

use cuabi_sys as sys;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What failed, as one of the C API's statuses.
///
/// [`Error::status`] gives the raw value; a status newer than this crate maps
/// to [`ErrorKind::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `CUABI_ERROR_INVALID_ARGUMENT`: an argument is out of its domain (a
    /// zero or oversized count, a kernel argument of the wrong size, a string
    /// holding a NUL byte); the message names it.
    InvalidArgument,
    /// `CUABI_ERROR_INVALID_HANDLE`: a released, stale or wrong-kind handle.
    InvalidHandle,
    /// `CUABI_ERROR_OUT_OF_MEMORY`: host or device memory could not be allocated.
    OutOfMemory,
    /// `CUABI_ERROR_INSUFFICIENT_BUFFER`: a buffer given to the library was too small.
    InsufficientBuffer,
    /// `CUABI_ERROR_OUT_OF_RANGE`: an offset or length reaches past the end of
    /// a buffer, or an index past the end of a list.
    OutOfRange,
    /// `CUABI_ERROR_NOT_FOUND`: no such kernel, global or name expression.
    NotFound,
    /// `CUABI_ERROR_NOT_SUPPORTED`: the installed driver or NVRTC lacks what
    /// the call needs.
    NotSupported,
    /// `CUABI_ERROR_NOT_READY`: work still in flight.
    NotReady,
    /// `CUABI_ERROR_DRIVER_NOT_FOUND`: libcuda.so.1 could not be loaded; the
    /// message lists every path tried.
    DriverNotFound,
    /// `CUABI_ERROR_STUB_DRIVER`: the loaded libcuda is the toolkit's stub.
    StubDriver,
    /// `CUABI_ERROR_NO_DEVICE`: no CUDA device, or an ordinal past the last one.
    NoDevice,
    /// `CUABI_ERROR_NVRTC_NOT_FOUND`: no libnvrtc could be loaded.
    NvrtcNotFound,
    /// `CUABI_ERROR_COMPILE`: NVRTC rejected the source or the options;
    /// [`Error::log`] has its log.
    Compile,
    /// `CUABI_ERROR_CONTEXT_LOST`: a device hit a sticky fault. The driver
    /// then fails every later CUDA call of the process, on every device; the
    /// recovery it documents is a new process (see
    /// [`Device::reset`](crate::Device::reset)).
    ContextLost,
    /// `CUABI_ERROR_FORKED`: this process forked after CUDA was initialised.
    Forked,
    /// `CUABI_ERROR_CUDA`: another CUDA driver failure; [`Error::code`] is the `CUresult`.
    Cuda,
    /// `CUABI_ERROR_NVRTC`: another NVRTC failure; [`Error::code`] is the `nvrtcResult`.
    Nvrtc,
    /// `CUABI_ERROR_IO`: a file could not be read or written.
    Io,
    /// `CUABI_ERROR_INTERNAL`: a bug in cuabi.
    Internal,
    /// A status this version of the crate does not know.
    Unknown,
}

impl ErrorKind {
    /// The kind of a raw `cuabi_status`; `CUABI_SUCCESS` and unknown values
    /// give [`ErrorKind::Unknown`].
    pub fn from_status(status: i32) -> ErrorKind {
        use ErrorKind::*;
        let Ok(status) = u32::try_from(status) else {
            return Unknown;
        };
        match status {
            sys::CUABI_ERROR_INVALID_ARGUMENT => InvalidArgument,
            sys::CUABI_ERROR_INVALID_HANDLE => InvalidHandle,
            sys::CUABI_ERROR_OUT_OF_MEMORY => OutOfMemory,
            sys::CUABI_ERROR_INSUFFICIENT_BUFFER => InsufficientBuffer,
            sys::CUABI_ERROR_OUT_OF_RANGE => OutOfRange,
            sys::CUABI_ERROR_NOT_FOUND => NotFound,
            sys::CUABI_ERROR_NOT_SUPPORTED => NotSupported,
            sys::CUABI_ERROR_NOT_READY => NotReady,
            sys::CUABI_ERROR_DRIVER_NOT_FOUND => DriverNotFound,
            sys::CUABI_ERROR_STUB_DRIVER => StubDriver,
            sys::CUABI_ERROR_NO_DEVICE => NoDevice,
            sys::CUABI_ERROR_NVRTC_NOT_FOUND => NvrtcNotFound,
            sys::CUABI_ERROR_COMPILE => Compile,
            sys::CUABI_ERROR_CONTEXT_LOST => ContextLost,
            sys::CUABI_ERROR_FORKED => Forked,
            sys::CUABI_ERROR_CUDA => Cuda,
            sys::CUABI_ERROR_NVRTC => Nvrtc,
            sys::CUABI_ERROR_IO => Io,
            sys::CUABI_ERROR_INTERNAL => Internal,
            _ => Unknown,
        }
    }
}

/// A failed cuabi call: its status, the library's message and, after a
/// failed compile, NVRTC's log.
///
/// `Display` prints `NAME: message`, followed by the compile log when there
/// is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: i32,
    message: String,
    code: i32,
    log: String,
}

impl Error {
    /// The raw `cuabi_status` (never `CUABI_SUCCESS`).
    pub fn status(&self) -> i32 {
        self.status
    }

    /// The status as an [`ErrorKind`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from_status(self.status)
    }

    /// The status's symbolic name, e.g. `"CUABI_ERROR_COMPILE"`.
    pub fn name(&self) -> &'static str {
        status_name(self.status)
    }

    /// One sentence describing the status in general (the library's
    /// `cuabi_status_get_description`); [`Error::message`] is about this failure.
    pub fn status_description(&self) -> &'static str {
        // SAFETY: returns a static NUL-terminated string, never NULL.
        unsafe { static_str(sys::cuabi_status_get_description(self.status)) }
    }

    /// What failed: the call, the argument or parameter at fault and, for
    /// CUDA or NVRTC failures, their error name and explanation.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `CUresult` or `nvrtcResult` behind a CUDA or NVRTC failure, else 0.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// NVRTC's log after a failed compile ([`ErrorKind::Compile`]); `None`
    /// when the failure left no log.
    pub fn log(&self) -> Option<&str> {
        if self.log.is_empty() {
            None
        } else {
            Some(&self.log)
        }
    }

    /// The calling thread's last error, after a call answered `status`.
    pub(crate) fn last(status: sys::cuabi_status) -> Error {
        // SAFETY: the last-error readers take no arguments, never fail and
        // return NUL-terminated strings valid until the next cuabi call on
        // this thread; the message is copied before anything else is called.
        let (last_status, message, code) = unsafe {
            let message = CStr::from_ptr(sys::cuabi_last_error_message())
                .to_string_lossy()
                .into_owned();
            (
                sys::cuabi_last_error_status(),
                message,
                sys::cuabi_last_error_code(),
            )
        };
        let (message, code) = if last_status == status && !message.is_empty() {
            (message, code)
        } else {
            // The call did not record this failure (NOT_READY does not, for
            // one); the thread's state may describe an older error.
            (Error::describe(status), 0)
        };
        let log = if status == sys::CUABI_ERROR_COMPILE as i32 {
            read_string(|buf, size| unsafe { sys::cuabi_last_error_log(buf, size) })
                .unwrap_or_default()
        } else {
            String::new()
        };
        Error {
            status,
            message,
            code,
            log,
        }
    }

    /// An error found on this side of the boundary (a string with a NUL byte,
    /// a length that overflows), in the library's terms.
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::with_status(sys::CUABI_ERROR_INVALID_ARGUMENT, message)
    }

    /// An error found on this side of the boundary, with the library's
    /// `status` (a `CUABI_ERROR_*` value) and a message naming what failed.
    pub(crate) fn with_status(status: u32, message: impl Into<String>) -> Error {
        Error {
            status: status as i32,
            message: message.into(),
            code: 0,
            log: String::new(),
        }
    }

    fn describe(status: i32) -> String {
        // SAFETY: returns a static NUL-terminated string, never NULL.
        unsafe { static_str(sys::cuabi_status_get_description(status)) }.to_owned()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name(), self.message)?;
        // The library's message usually holds the log already; show it once.
        if let Some(log) = self.log() {
            let log = log.trim_end();
            if !self.message.contains(log) {
                write!(f, "\ncompile log:\n{}", log)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// The symbolic name of a raw `cuabi_status`, e.g. `"CUABI_ERROR_NOT_FOUND"`,
/// or `"CUABI_ERROR_UNKNOWN"` for a value the library does not define.
pub fn status_name(status: i32) -> &'static str {
    // SAFETY: returns a static NUL-terminated string, never NULL.
    unsafe { static_str(sys::cuabi_status_get_name(status)) }
}

/// # Safety
/// `ptr` is NULL or a NUL-terminated string that lives as long as the library.
unsafe fn static_str(ptr: *const c_char) -> &'static str {
    if ptr.is_null() {
        return "";
    }
    CStr::from_ptr(ptr).to_str().unwrap_or("")
}

/// `Ok` for `CUABI_SUCCESS`, else the thread's last error.
#[inline]
pub(crate) fn check(status: sys::cuabi_status) -> Result<()> {
    if status == sys::CUABI_SUCCESS as sys::cuabi_status {
        Ok(())
    } else {
        Err(failed(status))
    }
}

/// The error of a failed call, kept out of line: launches inline [`check`].
#[cold]
#[inline(never)]
fn failed(status: sys::cuabi_status) -> Error {
    Error::last(status)
}

/// `Ok(true)` when done, `Ok(false)` for `CUABI_ERROR_NOT_READY` (which is no
/// failure), else the error: the answer of a stream or event query.
pub(crate) fn check_ready(status: sys::cuabi_status) -> Result<bool> {
    if status == sys::CUABI_ERROR_NOT_READY as sys::cuabi_status {
        Ok(false)
    } else {
        check(status).map(|()| true)
    }
}

/// A `CString` for a C argument, or an error naming `what` when `text` holds
/// a NUL byte.
pub(crate) fn c_string(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|err| {
        Error::invalid_argument(format!(
            "{what} contains a NUL byte at byte {}",
            err.nul_position()
        ))
    })
}

/// Reads a string through the C API's two-call pattern.
pub(crate) fn read_string(
    call: impl FnMut(*mut c_char, *mut usize) -> sys::cuabi_status,
) -> Result<String> {
    let mut bytes = read_blob(call)?;
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()))
}

/// Reads bytes through the C API's two-call pattern: ask the size, then fill.
pub(crate) fn read_blob<B>(
    mut call: impl FnMut(*mut B, *mut usize) -> sys::cuabi_status,
) -> Result<Vec<u8>> {
    let insufficient = sys::CUABI_ERROR_INSUFFICIENT_BUFFER as sys::cuabi_status;
    let mut size = 0usize;
    let status = call(std::ptr::null_mut(), &mut size);
    if status != insufficient {
        check(status)?;
    }
    // The size may grow between the calls (another thread); ask again then.
    loop {
        if size == 0 {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; size];
        let mut filled = size;
        let status = call(buf.as_mut_ptr().cast(), &mut filled);
        if status == insufficient && filled > size {
            size = filled;
            continue;
        }
        check(status)?;
        buf.truncate(filled.min(size));
        return Ok(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_the_header_defines_has_a_kind_and_a_name() {
        for status in 1..sys::CUABI_STATUS_COUNT as i32 {
            let kind = ErrorKind::from_status(status);
            assert_ne!(kind, ErrorKind::Unknown, "status {status} has no ErrorKind");
            let name = status_name(status);
            assert!(name.starts_with("CUABI_ERROR_"), "status {status}: {name}");
            assert_ne!(name, "CUABI_ERROR_UNKNOWN", "status {status}");
            // The variant's name is the C name in CamelCase.
            let camel: String = name["CUABI_ERROR_".len()..]
                .split('_')
                .map(|w| w[..1].to_owned() + &w[1..].to_lowercase())
                .collect();
            assert_eq!(
                format!("{kind:?}").to_lowercase(),
                camel.to_lowercase(),
                "{name}"
            );
        }
    }

    #[test]
    fn unknown_statuses_map_to_unknown() {
        assert_eq!(ErrorKind::from_status(0), ErrorKind::Unknown);
        assert_eq!(ErrorKind::from_status(-1), ErrorKind::Unknown);
        assert_eq!(
            ErrorKind::from_status(sys::CUABI_STATUS_COUNT as i32),
            ErrorKind::Unknown
        );
        assert_eq!(status_name(9999), "CUABI_ERROR_UNKNOWN");
        assert_eq!(status_name(0), "CUABI_SUCCESS");
    }

    #[test]
    fn nul_bytes_are_refused_with_the_argument_named() {
        let err = c_string("kernel name", "sa\0xpy").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert_eq!(err.name(), "CUABI_ERROR_INVALID_ARGUMENT");
        assert!(err.message().contains("kernel name"), "{err}");
        assert!(err.message().contains("byte 2"), "{err}");
        assert_eq!(err.log(), None);
        assert_eq!(
            err.to_string(),
            format!("CUABI_ERROR_INVALID_ARGUMENT: {}", err.message())
        );
    }

    #[test]
    fn display_appends_the_compile_log() {
        let err = Error {
            status: sys::CUABI_ERROR_COMPILE as i32,
            message: "cuabi_program_compile: NVRTC failed".into(),
            code: 6,
            log: "saxpy.cu(3): error: expected a \";\"\n".into(),
        };
        assert_eq!(
            err.to_string(),
            "CUABI_ERROR_COMPILE: cuabi_program_compile: NVRTC failed\ncompile log:\n\
             saxpy.cu(3): error: expected a \";\""
        );
        let as_std: &dyn std::error::Error = &err;
        assert!(as_std.source().is_none());
    }

    #[test]
    fn display_shows_a_log_the_message_already_holds_once() {
        let log = "saxpy.cu(3): error: expected a \";\"\n";
        let err = Error {
            status: sys::CUABI_ERROR_COMPILE as i32,
            message: format!("cuabi_program_compile: NVRTC could not compile the source:\n{log}"),
            code: 6,
            log: log.into(),
        };
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
                let answer = if buf.is_null() {
                    0
                } else {
                    sys::CUABI_ERROR_INSUFFICIENT_BUFFER
                };
                *size = value.len();
                return answer as sys::cuabi_status;
            }
            std::ptr::copy_nonoverlapping(value.as_ptr(), buf.cast(), value.len());
            *size = value.len();
            0
        })
        .unwrap();
        assert_eq!(text, "abcdef");
        assert_eq!(calls, 3);
    }
}
