//! Virtual memory, by hand where Rust says more than the generated layer:
//! the buffers over virtual memory typed as every [`DeviceBuffer`] is (a
//! growable buffer, and a view of an [`AddressRange`]). The rest
//! ([`PhysicalMemory::create`], [`PhysicalMemory::free`], [`PhysicalMemory::export_fd`],
//! [`PhysicalMemory::import_fd`], [`AddressRange::reserve`],
//! [`AddressRange::map`], [`AddressRange::unmap`],
//! [`AddressRange::set_access`], [`Device::vm_granularity`] ...) is generated.

use cuabi_sys as sys;

use crate::error::{check, create, Result};
use crate::memory::byte_len;
use crate::objects::AddressRange;
use crate::types::{Device, DeviceBuffer, DeviceRepr};

impl AddressRange {
    /// `len` elements of `T` over the range from byte `offset`, used by
    /// `device`, which must have access to every byte
    /// (`cuabi_buffer_from_range`). It keeps the range alive, and the range
    /// cannot be unmapped while it lives.
    pub fn buffer<T: DeviceRepr>(
        &self,
        device: &Device,
        offset: usize,
        len: usize,
    ) -> Result<DeviceBuffer<T>> {
        let bytes = byte_len::<T>(len, "AddressRange::buffer")?;
        unsafe {
            let handle = create(|out| {
                sys::cuabi_buffer_from_range(self.as_raw(), device.as_raw(), offset, bytes, out)
            })?;
            DeviceBuffer::from_handle(handle, len)
        }
    }
}

impl Device {
    /// A buffer that grows in place ([`DeviceBuffer::grow`]): room for
    /// `reserve_len` elements of `T` reserved once, `len` of them mapped now
    /// and more as it grows, so its address and contents stay. Both byte
    /// sizes are multiples of [`Device::vm_granularity`]'s minimum. It is a
    /// [`DeviceBuffer`] like any other.
    pub fn alloc_growable<T: DeviceRepr>(
        &self,
        len: usize,
        reserve_len: usize,
    ) -> Result<DeviceBuffer<T>> {
        let bytes = byte_len::<T>(len, "Device::alloc_growable")?;
        let reserve = byte_len::<T>(reserve_len, "Device::alloc_growable")?;
        unsafe {
            let handle =
                create(|out| sys::cuabi_buffer_alloc_growable(self.as_raw(), bytes, reserve, out))?;
            DeviceBuffer::from_handle(handle, len)
        }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Grows a growable buffer ([`Device::alloc_growable`]) to `len`
    /// elements: its address and contents stay, the new elements are
    /// uninitialised. Past its reservation ([`reserved_size`](Self::reserved_size))
    /// is [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange); another kind of buffer,
    /// a size below the current one or off the granularity,
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument).
    pub fn grow(&mut self, len: usize) -> Result<()> {
        let bytes = byte_len::<T>(len, "DeviceBuffer::grow")?;
        check(unsafe { sys::cuabi_buffer_grow(self.handle.get(), bytes) })?;
        self.len = len;
        Ok(())
    }
}
