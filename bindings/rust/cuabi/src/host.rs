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
        let mut raw: *mut c_void = std::ptr::null_mut();
        check(sys::cuabi_host_buffer_get_pointer(handle.get(), &mut raw))?;
        let ptr = NonNull::new(raw.cast::<T>())
            .ok_or_else(|| Error::invalid("cuabi_host_buffer_get_pointer gave NULL"))?;
        if ptr.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
            let element = std::any::type_name::<T>();
            let why = format!("pinned memory at {ptr:p} is not aligned for {element}");
            return Err(Error::invalid(why));
        }
        // Fresh pinned memory is uninitialised; zero it so that it holds valid `T`s.
        std::ptr::write_bytes(ptr.as_ptr(), 0, len);
        Ok(PinnedBuffer { handle, ptr, len })
    }
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
