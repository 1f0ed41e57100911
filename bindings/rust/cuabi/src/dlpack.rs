//! DLPack 1.x: a device buffer handed to another library as a managed tensor
//! ([`DeviceBuffer::to_dlpack`]), and another library's tensor taken over as
//! a device buffer ([`DeviceBuffer::from_dlpack`]). The library checks every
//! field (against the buffer's size, or the foreign tensor's device, version,
//! dtype, strides and read-only flag) and owns the deleters; the stream
//! handshake is [`Stream::dlpack_handoff`](crate::Stream::dlpack_handoff) and
//! [`Stream::dlpack_wait`](crate::Stream::dlpack_wait).

use std::mem::size_of;

use cuabi_sys as sys;

use crate::error::{check, create, Error, Result};
use crate::types::{DeviceBuffer, DeviceRepr};

/// What an imported tensor's buffer is, in the error when its bytes are no
/// whole number of elements.
const SPANS: &str = "DeviceBuffer::from_dlpack: the tensor spans";

/// The DLPack element type of a Rust number: its type code
/// (`CUABI_DLPACK_INT`, `UINT`, `FLOAT`, `BOOL`) and bits.
pub trait DlpackElement: DeviceRepr {
    /// The DLPack type code.
    const CODE: u32;
}

macro_rules! dlpack_elements {
    ($code:ident: $($t:ty),*) => {
        $(impl DlpackElement for $t { const CODE: u32 = sys::$code as u32; })*
    };
}
dlpack_elements!(CUABI_DLPACK_INT: i8, i16, i32, i64);
dlpack_elements!(CUABI_DLPACK_UINT: u8, u16, u32, u64);
dlpack_elements!(CUABI_DLPACK_FLOAT: f32, f64);

/// An owned DLPack 1.x managed tensor: its deleter runs once, on drop,
/// unless [`into_raw`](Self::into_raw) handed it to a consumer (which then
/// calls it).
pub struct DlpackTensor {
    raw: *mut sys::cuabi_dlpack_managed_tensor_versioned,
}

// SAFETY: a managed tensor may be deleted from any thread (DLPack's rule,
// and the library's deleter takes no thread's state).
unsafe impl Send for DlpackTensor {}

impl DlpackTensor {
    /// Owns `raw`, a managed tensor whose deleter this will call once.
    ///
    /// # Safety
    /// `raw` is a valid DLPack 1.x managed tensor nobody else deletes.
    pub unsafe fn from_raw(raw: *mut sys::cuabi_dlpack_managed_tensor_versioned) -> DlpackTensor {
        DlpackTensor { raw }
    }

    /// The tensor, still owned by this.
    pub fn as_ptr(&self) -> *mut sys::cuabi_dlpack_managed_tensor_versioned {
        self.raw
    }

    /// Gives the tensor up (to a consumer, which must call its deleter).
    pub fn into_raw(self) -> *mut sys::cuabi_dlpack_managed_tensor_versioned {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }

    fn tensor(&self) -> &sys::cuabi_dlpack_tensor {
        // SAFETY: `raw` is valid while this lives.
        unsafe { &(*self.raw).dl_tensor }
    }

    /// The device address of the allocation (DLPack's `data`).
    pub fn data(&self) -> u64 {
        self.tensor().data as u64
    }

    /// Bytes from [`data`](Self::data) to the first element.
    pub fn byte_offset(&self) -> u64 {
        self.tensor().byte_offset
    }

    /// The extents.
    pub fn shape(&self) -> &[i64] {
        let t = self.tensor();
        if t.ndim <= 0 || t.shape.is_null() {
            return &[];
        }
        // SAFETY: DLPack's shape holds ndim extents.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }

    /// The strides in elements; `None`: compact row-major.
    pub fn strides(&self) -> Option<&[i64]> {
        let t = self.tensor();
        if t.strides.is_null() {
            return None;
        }
        // SAFETY: non-NULL strides hold ndim values.
        Some(unsafe { std::slice::from_raw_parts(t.strides, t.ndim.max(0) as usize) })
    }

    /// The DLPack flags (`CUABI_DLPACK_FLAG_*`).
    pub fn flags(&self) -> u64 {
        // SAFETY: `raw` is valid while this lives.
        unsafe { (*self.raw).flags }
    }
}

impl Drop for DlpackTensor {
    fn drop(&mut self) {
        // SAFETY: owned, so ours to delete, once.
        unsafe {
            if self.raw.is_null() {
                return;
            }
            if let Some(deleter) = (*self.raw).deleter {
                deleter(self.raw);
            }
        }
    }
}

impl<T: DlpackElement> DeviceBuffer<T> {
    /// This buffer as a DLPack tensor of `shape` elements of `T`, `strides`
    /// in elements (`None`: compact row-major), from byte `byte_offset`
    /// (`cuabi_buffer_export_dlpack`, which refuses a tensor reaching past
    /// the buffer with [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange)).
    /// The tensor holds the buffer's memory until its deleter runs.
    pub fn to_dlpack(
        &self,
        shape: &[i64],
        strides: Option<&[i64]>,
        byte_offset: u64,
        read_only: bool,
    ) -> Result<DlpackTensor> {
        if let Some(s) = strides {
            if s.len() != shape.len() {
                return Err(Error::invalid(format!(
                    "DeviceBuffer::to_dlpack: {} strides for {} dimensions",
                    s.len(),
                    shape.len()
                )));
            }
        }
        let flags = u64::from(read_only) * u64::from(sys::CUABI_DLPACK_FLAG_READ_ONLY);
        let mut raw: *mut sys::cuabi_dlpack_managed_tensor_versioned = std::ptr::null_mut();
        check(unsafe {
            sys::cuabi_buffer_export_dlpack(
                self.as_raw(),
                byte_offset,
                shape.as_ptr(),
                strides.map_or(std::ptr::null(), <[i64]>::as_ptr),
                shape.len(),
                T::CODE,
                (size_of::<T>() * 8) as u32,
                1,
                flags,
                &mut raw,
            )
        })?;
        // SAFETY: the library made it for us to own.
        Ok(unsafe { DlpackTensor::from_raw(raw) })
    }

    /// Takes `tensor` over as a borrowed buffer of the elements it spans
    /// (`cuabi_buffer_import_dlpack`): the buffer keeps it alive and its
    /// deleter runs once, when the buffer goes. `read_only` accepts a
    /// read-only tensor. On a refusal (its device, version, dtype, strides,
    /// read-only flag, each named) the tensor comes back with the error
    /// (`None` only when it was taken but spans no whole number of `T`, and
    /// went with the buffer).
    pub fn from_dlpack(
        tensor: DlpackTensor,
        read_only: bool,
    ) -> std::result::Result<DeviceBuffer<T>, (Error, Option<DlpackTensor>)> {
        let flags = u32::from(read_only) * sys::CUABI_DLPACK_IMPORT_READ_ONLY;
        // SAFETY: a valid tensor; on success the buffer owns it.
        let owned = match unsafe {
            create(|out| sys::cuabi_buffer_import_dlpack(tensor.as_ptr(), flags, out))
        } {
            Ok(owned) => owned,
            Err(e) => return Err((e, Some(tensor))),
        };
        let _ = tensor.into_raw();
        Self::whole(owned, SPANS).map_err(|e| (e, None))
    }

    /// [`from_dlpack`](Self::from_dlpack) for an unversioned (DLPack
    /// before 1.0) tensor, taken as writable unless `read_only`.
    ///
    /// # Safety
    /// `tensor` is a valid unversioned managed tensor the caller owns; on
    /// `Ok` the buffer owns it, on `Err` it stays the caller's.
    pub unsafe fn from_dlpack_unversioned(
        tensor: *mut sys::cuabi_dlpack_managed_tensor,
        read_only: bool,
    ) -> Result<DeviceBuffer<T>> {
        let flags = u32::from(read_only) * sys::CUABI_DLPACK_IMPORT_READ_ONLY;
        let owned = create(|out| sys::cuabi_buffer_import_dlpack_unversioned(tensor, flags, out))?;
        Self::whole(owned, SPANS)
    }
}
