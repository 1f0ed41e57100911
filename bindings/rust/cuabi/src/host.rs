//! Page-locked (pinned) host memory.

use std::ffi::c_void;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use cuabi_sys as sys;

use crate::error::{check, Error, Result};
use crate::handle::Owned;
use crate::types::{DeviceRepr, PinnedBuffer, PinnedSlice};

impl<T: DeviceRepr> PinnedBuffer<T> {
    /// # Safety
    /// `handle` owns an allocation of at least `len * size_of::<T>()` bytes.
    pub(crate) unsafe fn from_handle(
        handle: Owned<sys::cuabi_host_buffer>,
        len: usize,
    ) -> Result<Self> {
        let ptr = host_ptr("cuabi_host_buffer_get_pointer", "pinned", |raw| {
            sys::cuabi_host_buffer_get_pointer(handle.get(), raw)
        })?;
        // Fresh pinned memory is uninitialised; zero it so that it holds valid `T`s.
        std::ptr::write_bytes(ptr.as_ptr(), 0, len);
        Ok(PinnedBuffer { handle, ptr, len })
    }
}

/// The host address `get` writes (through the library's `call`) as a
/// pointer to `T`s; NULL, or misaligned for `T`, is an internal error.
pub(crate) fn host_ptr<T>(
    call: &str,
    what: &str,
    get: impl FnOnce(*mut *mut c_void) -> sys::cuabi_status,
) -> Result<NonNull<T>> {
    let mut raw: *mut c_void = std::ptr::null_mut();
    check(get(&mut raw))?;
    let element = std::any::type_name::<T>();
    let why = match NonNull::new(raw.cast::<T>()) {
        Some(ptr) if ptr.as_ptr().align_offset(std::mem::align_of::<T>()) == 0 => return Ok(ptr),
        Some(ptr) => format!("{what} memory at {ptr:p} is not aligned for {element}"),
        None => format!("{call} gave NULL"),
    };
    Err(Error::new(sys::CUABI_ERROR_INTERNAL, why))
}

impl<T: DeviceRepr> Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("ptr", &self.ptr)
            .finish()
    }
}

impl<T: DeviceRepr> PinnedSlice<'_, T> {
    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_host_buffer {
        self.handle.get()
    }
}

impl<T: DeviceRepr> Deref for PinnedSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T: DeviceRepr> DerefMut for PinnedSlice<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

impl<T: DeviceRepr> fmt::Debug for PinnedSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedSlice")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.slice.len())
            .field("ptr", &self.slice.as_ptr())
            .finish()
    }
}
