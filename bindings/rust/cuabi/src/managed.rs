//! Managed (unified) memory: one address for the host and every device.

use std::fmt;
use std::ops::{Deref, DerefMut};

use cuabi_sys as sys;

use crate::error::{create, Error, Result};
use crate::generated::ManagedFlags;
use crate::host::host_ptr;
use crate::memory::byte_len;
use crate::types::{Device, DeviceBuffer, DeviceRepr, Location, ManagedBuffer};

/// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`: 1 when the host may touch
/// managed memory while kernels run.
const CONCURRENT_MANAGED_ACCESS: i32 = 89;

impl From<&Device> for Location {
    fn from(device: &Device) -> Location {
        Location::Device(device.ordinal())
    }
}

impl Device {
    /// `len` elements of managed memory (see [`ManagedBuffer`]), every byte
    /// zero. [`ManagedFlags::ATTACH_HOST`] attaches it to the host at first
    /// (only the host and streams it is attached to may touch it); without
    /// it every stream may.
    pub fn alloc_managed<T: DeviceRepr>(
        &self,
        len: usize,
        flags: ManagedFlags,
    ) -> Result<ManagedBuffer<T>> {
        let bytes = byte_len::<T>(len, "Device::alloc_managed")?;
        let mut buffer = unsafe {
            let handle = create(|out| {
                sys::cuabi_buffer_alloc_managed(self.as_raw(), bytes, flags.bits(), out)
            })?;
            DeviceBuffer::from_handle(handle, len)?
        };
        let host = host_ptr("cuabi_buffer_get_host_pointer", "managed", |raw| unsafe {
            sys::cuabi_buffer_get_host_pointer(buffer.as_raw(), raw)
        })?;
        // Defined contents: zeros, written by the device before any view
        // (a view synchronizes first).
        buffer.fill_bytes(0)?;
        let concurrent = self.attribute(CONCURRENT_MANAGED_ACCESS)? == 1;
        let device = Device::get(self.ordinal())?;
        Ok(ManagedBuffer {
            buffer,
            host,
            device,
            concurrent,
        })
    }
}

impl<T: DeviceRepr> ManagedBuffer<T> {
    /// `true` when the buffer's device has concurrent managed access, so
    /// that [`host_view`](Self::host_view) is allowed.
    pub fn concurrent_access(&self) -> bool {
        self.concurrent
    }

    /// The host address of the memory (the same value as its device
    /// address).
    pub fn host_ptr(&self) -> *mut T {
        self.host.as_ptr()
    }

    /// The buffer's memory as a host slice, safely: waits for all work on
    /// the buffer's device, then lends the memory for as long as the
    /// returned view lives. While it does, the buffer cannot be passed to a
    /// launch, copied, filled, prefetched or viewed otherwise.
    ///
    /// Work on *other* devices that uses this buffer is not waited for:
    /// it must have finished (its launch's safety conditions say so).
    /// Refused with [`ErrorKind::NotSupported`](crate::generated::ErrorKind::NotSupported)
    /// on a device without concurrent managed access (see
    /// [`ManagedBuffer`]).
    pub fn host_view(&mut self) -> Result<ManagedView<'_, T>> {
        if !self.concurrent {
            return Err(Error::new(
                sys::CUABI_ERROR_NOT_SUPPORTED,
                format!(
                    "ManagedBuffer::host_view: device {} has no concurrent managed access \
                     (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0), so the host may touch \
                     managed memory only while no kernel runs on it; synchronize the device and \
                     use the unsafe as_host_slice(_mut) instead",
                    self.device.ordinal()
                ),
            ));
        }
        self.device.synchronize()?;
        Ok(ManagedView { buffer: self })
    }

    /// The buffer's memory as a host slice, without waiting for anything.
    ///
    /// # Safety
    /// The header's rule ([`ManagedBuffer`]) holds for as long as the slice
    /// lives: no kernel, copy or fill writes the buffer meanwhile, what
    /// they wrote before has finished (synchronize), and on a device
    /// without concurrent managed access no kernel runs on the device at
    /// all.
    pub unsafe fn as_host_slice(&self) -> &[T] {
        std::slice::from_raw_parts(self.host.as_ptr(), self.buffer.len())
    }

    /// The buffer's memory as a mutable host slice, without waiting.
    ///
    /// # Safety
    /// As for [`as_host_slice`](Self::as_host_slice), and no kernel, copy
    /// or fill reads the buffer meanwhile either.
    pub unsafe fn as_host_slice_mut(&mut self) -> &mut [T] {
        std::slice::from_raw_parts_mut(self.host.as_ptr(), self.buffer.len())
    }
}

impl<T: DeviceRepr> Deref for ManagedBuffer<T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }
}

impl<T: DeviceRepr> fmt::Debug for ManagedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedBuffer")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.buffer.len())
            .field("ptr", &self.host)
            .field("concurrent_access", &self.concurrent)
            .finish()
    }
}

/// A [`ManagedBuffer`]'s memory lent to the host
/// ([`ManagedBuffer::host_view`]): it dereferences to `[T]`.
pub struct ManagedView<'a, T: DeviceRepr> {
    buffer: &'a mut ManagedBuffer<T>,
}

impl<T: DeviceRepr> Deref for ManagedView<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `host_view` waited for the device, and the buffer stays
        // mutably borrowed, so nothing reaches the memory but this view.
        unsafe { self.buffer.as_host_slice() }
    }
}

impl<T: DeviceRepr> DerefMut for ManagedView<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`.
        unsafe { self.buffer.as_host_slice_mut() }
    }
}

impl<T: DeviceRepr> fmt::Debug for ManagedView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedView")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests;
