//! Typed device memory.

use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;

use cuabi_sys as sys;

use crate::error::{check, create, out, Error, Result};
use crate::handle::Owned;
use crate::types::{DeviceBuffer, DeviceRepr};

/// The byte length of `len` elements of `T`, or an error naming `what`.
pub(crate) fn byte_len<T>(len: usize, what: &str) -> Result<usize> {
    let size = size_of::<T>();
    len.checked_mul(size).ok_or_else(|| {
        Error::invalid(format!(
            "{what}: {len} elements of {size} bytes overflow usize"
        ))
    })
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Wraps a buffer handle holding `len` elements.
    ///
    /// # Safety
    /// `handle` owns a buffer of at least `len * size_of::<T>()` bytes.
    pub(crate) unsafe fn from_handle(handle: Owned<sys::cuabi_buffer>, len: usize) -> Result<Self> {
        let ptr = out(|ptr| sys::cuabi_buffer_get_pointer(handle.get(), ptr))?;
        Ok(DeviceBuffer {
            handle,
            ptr,
            len,
            _element: PhantomData,
        })
    }

    /// A new buffer of `len` elements that `alloc` makes, answering its
    /// handle and its device address in one call
    /// (`cuabi_buffer_alloc_with_pointer` and its stream-ordered form).
    ///
    /// # Safety
    /// `alloc` makes a buffer of at least `len * size_of::<T>()` bytes.
    pub(crate) unsafe fn alloc_with(
        len: usize,
        alloc: impl FnOnce(*mut sys::cuabi_buffer, *mut u64) -> sys::cuabi_status,
    ) -> Result<Self> {
        let mut ptr = 0;
        let handle = create(|out| alloc(out, &mut ptr))?;
        Ok(DeviceBuffer {
            handle,
            ptr,
            len,
            _element: PhantomData,
        })
    }

    /// A buffer of every element of `T` the buffer `handle` holds; refused
    /// when its bytes are no whole number of elements, with a message that
    /// starts with `what` (the call and the memory, to which it adds "N
    /// bytes").
    pub(crate) fn whole(handle: Owned<sys::cuabi_buffer>, what: &str) -> Result<Self> {
        let bytes = out(|bytes| unsafe { sys::cuabi_buffer_get_size(handle.get(), bytes) })?;
        let size = size_of::<T>();
        if size != 0 && bytes % size != 0 {
            return Err(Error::invalid(format!(
                "{what} {bytes} bytes, not a whole number of {size}-byte {}",
                std::any::type_name::<T>()
            )));
        }
        let len = bytes.checked_div(size).unwrap_or(0);
        // SAFETY: the buffer holds `bytes` >= len * size bytes.
        unsafe { DeviceBuffer::from_handle(handle, len) }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the buffer holds no elements (only a wrapped buffer can).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size in bytes: `len() * size_of::<T>()`.
    pub fn size_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The raw `CUdeviceptr`, for interop with other CUDA code.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The whole buffer, copied into a new `Vec`.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len);
        let bytes = self.size_bytes();
        check(unsafe {
            sys::cuabi_buffer_copy_to_host(self.handle.get(), 0, out.as_mut_ptr().cast(), bytes)
        })?;
        // SAFETY: the copy wrote all `len` elements; any bit pattern is a
        // valid `T` (DeviceRepr).
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    /// Elements `offset..offset + len` as a byte offset and length; the
    /// library checks them against the buffer. A range whose bytes overflow
    /// `usize` is past the end of any buffer, and refused as such here.
    pub(crate) fn range(&self, which: &str, offset: usize, len: usize) -> Result<(usize, usize)> {
        match (
            offset.checked_mul(size_of::<T>()),
            len.checked_mul(size_of::<T>()),
        ) {
            (Some(offset), Some(bytes)) => Ok((offset, bytes)),
            _ => Err(Error::new(
                sys::CUABI_ERROR_OUT_OF_RANGE,
                format!(
                    "{which} range of elements [{offset}, {offset} + {len}) reaches past the \
                     end of the {}-element buffer",
                    self.len
                ),
            )),
        }
    }
}

impl<T: DeviceRepr> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("device_ptr", &format_args!("{:#x}", self.ptr))
            .finish()
    }
}

#[cfg(test)]
mod tests;
