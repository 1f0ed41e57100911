//! Typed device memory.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;

use cuabi_sys as sys;

use crate::error::{check, out, Error, Result};
use crate::handle::Owned;
use crate::stream::Stream;

/// Plain data that may be copied to and from the device byte for byte and
/// passed to a kernel by value.
///
/// Implemented for the primitive integer and floating-point types and for
/// arrays of `DeviceRepr` types. Implement it for your own `#[repr(C)]`
/// structs whose fields are all `DeviceRepr`, to match a struct the kernel
/// takes by value or an element type of a buffer:
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
/// }
///
/// // SAFETY: repr(C), every field is DeviceRepr, every bit pattern is valid.
/// unsafe impl cuabi::DeviceRepr for Particle {}
/// ```
///
/// # Safety
///
/// The type's layout must be what the device code expects (`#[repr(C)]` or
/// `#[repr(transparent)]`, fields in the same order with the same sizes), it
/// must hold no references or host pointers, and every bit pattern must be a
/// valid value, because the device may write any bytes into it. `bool`,
/// `char`, references and enums therefore do not qualify.
pub unsafe trait DeviceRepr: Copy + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive number; every bit pattern is a valid value.
        unsafe impl DeviceRepr for $t {}
    )*};
}
device_repr!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);

// SAFETY: an array of plain data is plain data, with no padding between elements.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

/// The byte length of `len` elements of `T`, or an error naming `what`.
pub(crate) fn byte_len<T>(len: usize, what: &str) -> Result<usize> {
    let size = size_of::<T>();
    len.checked_mul(size).ok_or_else(|| {
        Error::invalid(format!(
            "{what}: {len} elements of {size} bytes overflow usize"
        ))
    })
}

/// `len` elements of `T` in device memory, freed on drop.
///
/// Made by [`Device::alloc`](crate::Device::alloc),
/// [`Device::alloc_zeroed`](crate::Device::alloc_zeroed),
/// [`Device::buffer_from_slice`](crate::Device::buffer_from_slice) or
/// [`Device::wrap_buffer`](crate::Device::wrap_buffer). Pass it to a kernel
/// with [`Launch::arg`](crate::Launch::arg), which passes its device address.
///
/// Every copy names its range in elements of `T`; a range past the end is
/// refused by the library with [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange)
/// before anything is copied. The `_async` forms are `unsafe`, because the
/// host memory must outlive a copy that has not run yet.
///
/// The forms without a stream follow CUDA's rules for synchronous copies:
/// they go through the device's default stream, so they are ordered after
/// work on it and on streams made without
/// [`StreamFlags::NON_BLOCKING`](crate::StreamFlags::NON_BLOCKING), but not
/// after work on non-blocking streams (synchronize those first, and
/// [`Device::synchronize`](crate::Device::synchronize) before a non-blocking
/// stream uses what they wrote). [`copy_to`](DeviceBuffer::copy_to) and
/// [`to_vec`](DeviceBuffer::to_vec) return with the data;
/// [`copy_from`](DeviceBuffer::copy_from) returns once `src` may be reused;
/// [`fill_bytes`](DeviceBuffer::fill_bytes) and
/// [`copy_from_buffer`](DeviceBuffer::copy_from_buffer) may return before the
/// device has finished them.
pub struct DeviceBuffer<T: DeviceRepr> {
    handle: Owned<sys::cuabi_buffer>,
    // The device address, kept here so a launch can point at it.
    ptr: u64,
    len: usize,
    _element: PhantomData<T>,
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

    /// The ordinal of the device that holds the memory.
    pub fn device_ordinal(&self) -> Result<usize> {
        let ordinal = out(|ordinal: &mut i32| unsafe {
            sys::cuabi_buffer_get_device_ordinal(self.handle.get(), ordinal)
        })?;
        Ok(usize::try_from(ordinal).unwrap_or(0))
    }

    /// Where the device address is stored, for a launch to point at.
    pub(crate) fn ptr_field(&self) -> *const u64 {
        &self.ptr
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_buffer {
        self.handle.get()
    }

    /// Copies `src` into the buffer's first `src.len()` elements; returns once
    /// `src` may be reused.
    pub fn copy_from(&mut self, src: &[T]) -> Result<()> {
        self.copy_from_at(0, src)
    }

    /// Copies `src` into the buffer from element `offset` on; returns once
    /// `src` may be reused.
    pub fn copy_from_at(&mut self, offset: usize, src: &[T]) -> Result<()> {
        let (offset, bytes) = self.range("destination", offset, src.len())?;
        check(unsafe {
            sys::cuabi_buffer_copy_from_host(self.handle.get(), offset, src.as_ptr().cast(), bytes)
        })
    }

    /// Fills `dst` from the buffer's first `dst.len()` elements; returns with
    /// the data.
    pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {
        self.copy_to_at(0, dst)
    }

    /// Fills `dst` from the buffer's elements from `offset` on; returns with
    /// the data.
    pub fn copy_to_at(&self, offset: usize, dst: &mut [T]) -> Result<()> {
        let (offset, bytes) = self.range("source", offset, dst.len())?;
        check(unsafe {
            sys::cuabi_buffer_copy_to_host(
                self.handle.get(),
                offset,
                dst.as_mut_ptr().cast(),
                bytes,
            )
        })
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

    /// Queues a copy of `src` into the buffer's first `src.len()` elements on
    /// `stream` and returns at once. The copy runs asynchronously only when
    /// `src` is pinned ([`PinnedBuffer`](crate::PinnedBuffer),
    /// [`PinnedSlice`](crate::PinnedSlice)).
    ///
    /// # Safety
    /// `src` must stay alive and unchanged until `stream` has reached the
    /// copy (e.g. until [`Stream::synchronize`] returns).
    pub unsafe fn copy_from_async(&mut self, src: &[T], stream: &Stream) -> Result<()> {
        let (_, bytes) = self.range("destination", 0, src.len())?;
        check(sys::cuabi_buffer_copy_from_host_async(
            self.handle.get(),
            0,
            src.as_ptr().cast(),
            bytes,
            stream.as_raw(),
        ))
    }

    /// Queues a copy of the buffer's first `dst.len()` elements into `dst` on
    /// `stream` and returns at once. The copy runs asynchronously only when
    /// `dst` is pinned.
    ///
    /// # Safety
    /// `dst` must stay alive, and must be neither read nor written, until
    /// `stream` has reached the copy.
    pub unsafe fn copy_to_async(&self, dst: &mut [T], stream: &Stream) -> Result<()> {
        let (_, bytes) = self.range("source", 0, dst.len())?;
        check(sys::cuabi_buffer_copy_to_host_async(
            self.handle.get(),
            0,
            dst.as_mut_ptr().cast::<c_void>(),
            bytes,
            stream.as_raw(),
        ))
    }

    /// Copies all of `src`, device to device, into the start of this buffer.
    pub fn copy_from_buffer(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        let bytes = src.size_bytes();
        check(unsafe { sys::cuabi_buffer_copy(self.handle.get(), 0, src.handle.get(), 0, bytes) })
    }

    /// Queues a device-to-device copy of all of `src` into the start of this
    /// buffer on `stream`.
    ///
    /// # Safety
    /// Neither buffer may be dropped before `stream` has reached the copy.
    pub unsafe fn copy_from_buffer_async(
        &mut self,
        src: &DeviceBuffer<T>,
        stream: &Stream,
    ) -> Result<()> {
        check(sys::cuabi_buffer_copy_async(
            self.handle.get(),
            0,
            src.handle.get(),
            0,
            src.size_bytes(),
            stream.as_raw(),
        ))
    }

    /// Sets every byte of the buffer to `value` (0 gives zeros of every
    /// numeric type).
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        check(unsafe { sys::cuabi_buffer_memset(self.handle.get(), 0, value, self.size_bytes()) })
    }

    /// Queues setting every byte of the buffer to `value` on `stream`.
    ///
    /// # Safety
    /// The buffer may not be dropped before `stream` has reached the memset.
    pub unsafe fn fill_bytes_async(&mut self, value: u8, stream: &Stream) -> Result<()> {
        check(sys::cuabi_buffer_memset_async(
            self.handle.get(),
            0,
            value,
            self.size_bytes(),
            stream.as_raw(),
        ))
    }

    /// Elements `offset..offset + len` as a byte offset and length; the
    /// library checks them against the buffer. A range whose bytes overflow
    /// `usize` is past the end of any buffer, and refused as such here.
    fn range(&self, which: &str, offset: usize, len: usize) -> Result<(usize, usize)> {
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
mod tests {
    use super::*;

    #[test]
    fn byte_lengths_overflow_into_an_error() {
        assert_eq!(byte_len::<f64>(3, "length").unwrap(), 24);
        let err = byte_len::<u32>(usize::MAX / 2, "length").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(err.message().starts_with("length:"), "{err}");
    }
}
