//! Page-locked (pinned) host memory.

use std::ffi::c_void;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use cuabi_sys as sys;

use crate::error::{check, Error, Result};
use crate::handle::Owned;
use crate::memory::DeviceRepr;

/// `len` elements of `T` in page-locked host memory, allocated by the library
/// (`cuabi_host_buffer_alloc`), zeroed, and freed on drop.
///
/// It dereferences to `[T]`. Copies between pinned memory and the device run
/// asynchronously (see [`DeviceBuffer::copy_from_async`](crate::DeviceBuffer::copy_from_async)).
/// Made by [`Device::alloc_pinned`](crate::Device::alloc_pinned).
pub struct PinnedBuffer<T: DeviceRepr> {
    handle: Owned<sys::cuabi_host_buffer>,
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the buffer owns its memory like a Vec<T> does; the handle is
// thread-safe (see handle.rs).
unsafe impl<T: DeviceRepr + Send> Send for PinnedBuffer<T> {}
unsafe impl<T: DeviceRepr + Sync> Sync for PinnedBuffer<T> {}

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

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_host_buffer {
        self.handle.get()
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

/// A slice of ordinary host memory, pinned in place (`cuabi_host_buffer_register`)
/// for as long as this value lives; dropping it unpins the memory.
///
/// It borrows the slice mutably and dereferences to it, so the memory
/// outlives the pinning. Made by [`Device::register_host`](crate::Device::register_host).
pub struct PinnedSlice<'a, T: DeviceRepr> {
    // Declared first: unpinned before the borrow ends.
    pub(crate) handle: Owned<sys::cuabi_host_buffer>,
    pub(crate) slice: &'a mut [T],
}

impl<'a, T: DeviceRepr> PinnedSlice<'a, T> {
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
