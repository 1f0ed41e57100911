//! Errors: every failing cuabi call becomes an [`Error`]. Its kinds,
//! [`ErrorKind`](crate::generated::ErrorKind), are generated from the header's
//! `cuabi_status` (`generated.rs`).

use std::ffi::{c_char, CStr, CString};
use std::fmt;

use cuabi_sys as sys;

use crate::generated::{ErrorKind, Versioned};
use crate::handle::{Owned, Release};
use crate::values::LaunchRecord;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed cuabi call: its status, the library's message, after a failed
/// compile NVRTC's log and, after a sticky fault
/// ([`ErrorKind::ContextLost`]), the launches not seen complete
/// ([`Error::launches`]).
///
/// `Display` prints `NAME: message`, followed by the compile log when there
/// is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: sys::cuabi_status,
    message: String,
    code: i32,
    log: String,
    launches: Vec<FaultedLaunch>,
}

/// A launch that a sticky fault's [`Error`] names: one not seen complete
/// (no successful synchronize or query of its stream or device since) when
/// the fault surfaced, as `cuabi_last_error_get_launch` and
/// `cuabi_last_error_get_launch_kernel` give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultedLaunch {
    /// The kernel's name.
    pub kernel: String,
    /// The rest of what the library recorded: grid, block, dynamic shared
    /// memory, cluster, the stream's id ([`Stream::id`](crate::Stream::id);
    /// 0 for the device's default stream), the launch's number on its
    /// stream, the device, and whether the driver's log named the kernel.
    pub record: LaunchRecord,
}

impl Error {
    /// The raw `cuabi_status` (never `CUABI_SUCCESS`).
    pub fn status(&self) -> sys::cuabi_status {
        self.status
    }

    /// The status as an [`ErrorKind`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from_status(self.status)
    }

    /// The status's symbolic name, e.g. `"CUABI_ERROR_COMPILE"`.
    pub fn name(&self) -> &'static str {
        // SAFETY: returns a static NUL-terminated string, never NULL.
        unsafe { static_str(sys::cuabi_status_get_name(self.status)) }
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
        Some(self.log.as_str()).filter(|log| !log.is_empty())
    }

    /// After a sticky fault ([`ErrorKind::ContextLost`]), the launches not
    /// seen complete when it surfaced, most recent first: those the message
    /// names, read when the error was made. Empty for every other error, and
    /// for a lost context where the library remembered no launch.
    pub fn launches(&self) -> &[FaultedLaunch] {
        &self.launches
    }

    /// The calling thread's last error, after a call answered `status`;
    /// kept out of line: launches inline [`check`].
    #[cold]
    #[inline(never)]
    pub(crate) fn last(status: sys::cuabi_status) -> Error {
        // SAFETY: the last-error readers take no arguments, never fail and
        // return NUL-terminated strings valid until the next cuabi call on
        // this thread; the message is copied before anything else is called.
        let message = unsafe { CStr::from_ptr(sys::cuabi_last_error_message()) };
        let message = message.to_string_lossy().into_owned();
        let last_status = unsafe { sys::cuabi_last_error_status() };
        let mut error = if last_status == status && !message.is_empty() {
            let code = unsafe { sys::cuabi_last_error_code() };
            let launches = if status == sys::CUABI_ERROR_CONTEXT_LOST {
                last_launches()
            } else {
                Vec::new()
            };
            Error {
                code,
                launches,
                ..Error::new(status, message)
            }
        } else {
            // The call did not record this failure (NOT_READY does not, for
            // one); the thread's state may describe an older error.
            // SAFETY: returns a static NUL-terminated string, never NULL.
            let general = unsafe { static_str(sys::cuabi_status_get_description(status)) };
            Error::new(status, general)
        };
        if status == sys::CUABI_ERROR_COMPILE {
            let log = read_string(|buf, size| unsafe { sys::cuabi_last_error_log(buf, size) });
            error.log = log.unwrap_or_default();
        }
        error
    }

    /// An error found on this side of the boundary (a string with a NUL
    /// byte, a length that overflows `usize`), with the library's `status`
    /// and a message naming what failed.
    pub(crate) fn new(status: sys::cuabi_status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
            code: 0,
            log: String::new(),
            launches: Vec::new(),
        }
    }

    /// [`Error::new`] with `CUABI_ERROR_INVALID_ARGUMENT`.
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(sys::CUABI_ERROR_INVALID_ARGUMENT, message)
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

/// The launches the calling thread's last error names
/// (`cuabi_last_error_get_launch_count` of them, most recent first). The
/// readers leave the last error as it is.
fn last_launches() -> Vec<FaultedLaunch> {
    // SAFETY: takes no arguments and never fails.
    let count = unsafe { sys::cuabi_last_error_get_launch_count() };
    let mut launches = Vec::with_capacity(count);
    for index in 0..count {
        // Neither call touches the last error when it succeeds.
        let Ok(mut raw) = init_struct::<sys::cuabi_launch_record>() else {
            break;
        };
        // SAFETY: `raw` is a record of this header's size, initialised.
        if unsafe { sys::cuabi_last_error_get_launch(index, &mut raw) } != sys::CUABI_SUCCESS {
            break;
        }
        let Ok(kernel) = read_string(|buf, size| unsafe {
            sys::cuabi_last_error_get_launch_kernel(index, buf, size)
        }) else {
            break;
        };
        launches.push(FaultedLaunch {
            kernel,
            record: LaunchRecord::read(&raw),
        });
    }
    launches
}

/// # Safety
/// `ptr` is NULL or a NUL-terminated string that lives as long as the library.
pub(crate) unsafe fn static_str(ptr: *const c_char) -> &'static str {
    if ptr.is_null() {
        return "";
    }
    CStr::from_ptr(ptr).to_str().unwrap_or("")
}

/// `Ok` for `CUABI_SUCCESS`, else the thread's last error.
#[inline]
pub(crate) fn check(status: sys::cuabi_status) -> Result<()> {
    if status == sys::CUABI_SUCCESS {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}

/// The value a call writes through its out-parameter(s): `call` gets a
/// zeroed `T` to fill (a tuple for several), and its status is checked.
#[inline]
pub(crate) fn out<T: Default>(call: impl FnOnce(&mut T) -> sys::cuabi_status) -> Result<T> {
    let mut value = T::default();
    check(call(&mut value))?;
    Ok(value)
}

/// A new descriptor `call` answered, owned by the caller (the header's
/// rule); a negative one, which no call that succeeds answers, is an
/// internal error naming `call`.
#[cfg(unix)]
pub(crate) fn owned_fd(call: &str, fd: i32) -> Result<std::os::fd::OwnedFd> {
    if fd < 0 {
        return Err(Error::new(
            sys::CUABI_ERROR_INTERNAL,
            format!("{call} succeeded with descriptor {fd}"),
        ));
    }
    // SAFETY: a new descriptor, owned by the caller.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

/// A value a newer library answers that this crate does not name.
pub(crate) fn unknown(call: &str, what: &str, raw: u32) -> Error {
    Error::new(
        sys::CUABI_ERROR_NOT_SUPPORTED,
        format!("{call} answered {what} {raw}, which this version of the crate does not know"),
    )
}

/// A versioned struct of the header as its `_init` fills it: the library's
/// defaults, `struct_size` this header's.
pub(crate) fn init_struct<T: Versioned>() -> Result<T> {
    // SAFETY: zero is a value of every field (Versioned's rule); the init
    // writes the defaults over it, into a struct of the size it is told.
    let mut raw: T = unsafe { std::mem::zeroed() };
    check(unsafe { T::init(&mut raw, std::mem::size_of::<T>()) })?;
    Ok(raw)
}

/// Creates an object through a C function with one handle out-parameter.
///
/// # Safety
/// `create` is a cuabi call that writes a new handle to its argument when it
/// succeeds.
pub(crate) unsafe fn create<R>(create: impl FnOnce(*mut R) -> sys::cuabi_status) -> Result<Owned<R>>
where
    R: Release,
{
    let mut raw = std::mem::MaybeUninit::<R>::uninit();
    check(create(raw.as_mut_ptr()))?;
    // SAFETY: the call succeeded, so it wrote the handle, which we now own.
    Ok(Owned::new(raw.assume_init()))
}

/// `Ok(true)` when done, `Ok(false)` for `CUABI_ERROR_NOT_READY` (which is no
/// failure), else the error: the answer of a stream or event query.
pub(crate) fn check_ready(status: sys::cuabi_status) -> Result<bool> {
    if status == sys::CUABI_ERROR_NOT_READY {
        Ok(false)
    } else {
        check(status).map(|()| true)
    }
}

/// A `CString` for a C argument, or an error naming `what` when `text` holds
/// a NUL byte.
pub(crate) fn c_string(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|err| {
        let at = err.nul_position();
        Error::invalid(format!("{what} contains a NUL byte at byte {at}"))
    })
}

/// A `CString` of a path for a C argument: refused, naming it, when it is
/// not UTF-8 (the header's strings are) or holds a NUL byte.
pub(crate) fn c_path(path: &std::path::Path) -> Result<CString> {
    let text = path
        .to_str()
        .ok_or_else(|| Error::invalid(format!("path {path:?} is not UTF-8")))?;
    c_string("path", text)
}

/// Reads a string through the C API's two-call pattern.
pub(crate) fn read_string(
    mut call: impl FnMut(*mut c_char, *mut usize) -> sys::cuabi_status,
) -> Result<String> {
    let mut bytes = read_list(0u8, 0, |buf, size| call(buf.cast(), size))?;
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()))
}

/// Reads a list through the C API's two-call pattern: `call(buf, &mut n)`
/// with room for `n` elements at `buf` (NULL for none) fills them, or
/// answers the number needed in `n`. The first call offers room for `guess`
/// elements; the size may grow between calls (another thread), and the
/// list is asked for again then.
pub(crate) fn read_list<E: Copy>(
    zero: E,
    guess: usize,
    mut call: impl FnMut(*mut E, *mut usize) -> sys::cuabi_status,
) -> Result<Vec<E>> {
    let mut buf = vec![zero; guess];
    loop {
        let mut n = buf.len();
        let ptr = if buf.is_empty() {
            std::ptr::null_mut()
        } else {
            buf.as_mut_ptr()
        };
        let status = call(ptr, &mut n);
        let sized = matches!(
            status,
            sys::CUABI_SUCCESS | sys::CUABI_ERROR_INSUFFICIENT_BUFFER
        );
        if sized && n > buf.len() {
            buf.resize(n, zero);
            continue;
        }
        check(status)?;
        buf.truncate(n);
        return Ok(buf);
    }
}

#[cfg(test)]
mod tests;
