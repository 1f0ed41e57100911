//! Stream-ordered allocation and memory pools.

#[cfg(unix)]
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use cuabi_sys as sys;

use crate::error::{check, create, out, Error, Result};
use crate::generated::MemoryPoolFlags;
use crate::memory::byte_len;
use crate::types::{Device, DeviceBuffer, DeviceRepr, MemoryPool, Stream};

/// What a [`MemoryPool`] holds: [`MemoryPool::usage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PoolUsage {
    /// Bytes the pool has reserved from the device.
    pub reserved_bytes: u64,
    /// Of those, the bytes its live allocations use.
    pub used_bytes: u64,
}

/// A new pool's properties, for [`Device::create_memory_pool`]; what is not
/// set keeps the library's default (`cuabi_memory_pool_desc_init`: no limit,
/// threshold 0, no flag).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemoryPoolOptions {
    max_bytes: Option<u64>,
    release_threshold: Option<u64>,
    flags: Option<MemoryPoolFlags>,
}

impl MemoryPoolOptions {
    /// The library's defaults.
    pub fn new() -> MemoryPoolOptions {
        MemoryPoolOptions::default()
    }

    /// The most the pool may reserve, in bytes (0: no limit but the device's).
    pub fn max_bytes(mut self, bytes: u64) -> MemoryPoolOptions {
        self.max_bytes = Some(bytes);
        self
    }

    /// Memory the pool keeps reserved when a stream synchronizes, instead
    /// of giving it back to the device, in bytes.
    pub fn release_threshold(mut self, bytes: u64) -> MemoryPoolOptions {
        self.release_threshold = Some(bytes);
        self
    }

    /// The pool's flags, in place of those set before.
    pub fn flags(mut self, flags: MemoryPoolFlags) -> MemoryPoolOptions {
        self.flags = Some(flags);
        self
    }

    /// Whether the pool can be shared with other processes
    /// ([`MemoryPoolFlags::IPC`]): its file descriptor through
    /// [`MemoryPool::export_fd`], its allocations through
    /// [`DeviceBuffer::ipc_handle`].
    pub fn ipc(mut self, on: bool) -> MemoryPoolOptions {
        let flags = self.flags.unwrap_or_default();
        self.flags = Some(flags.with(MemoryPoolFlags::IPC, on));
        self
    }

    /// The C struct: the library's defaults, then what was set.
    fn raw(&self) -> Result<sys::cuabi_memory_pool_desc> {
        // SAFETY: integers only, for which zero is a value; the library
        // fills in its defaults.
        let mut desc: sys::cuabi_memory_pool_desc = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<sys::cuabi_memory_pool_desc>();
        check(unsafe { sys::cuabi_memory_pool_desc_init(&mut desc, size) })?;
        if let Some(bytes) = self.max_bytes {
            desc.max_bytes = bytes;
        }
        if let Some(bytes) = self.release_threshold {
            desc.release_threshold = bytes;
        }
        if let Some(flags) = self.flags {
            desc.flags = flags.bits();
        }
        Ok(desc)
    }
}

impl MemoryPool {
    /// The bytes the pool has reserved, and of those the bytes in use.
    pub fn usage(&self) -> Result<PoolUsage> {
        let (reserved_bytes, used_bytes) = out(|(reserved, used): &mut (u64, u64)| unsafe {
            sys::cuabi_memory_pool_get_usage(self.as_raw(), reserved, used)
        })?;
        Ok(PoolUsage {
            reserved_bytes,
            used_bytes,
        })
    }

    /// A new file descriptor for the pool, made with
    /// [`MemoryPoolOptions::ipc`], to pass to another process (inherited,
    /// or sent over a Unix socket) for [`Device::import_memory_pool`]. The
    /// descriptor is the caller's and is closed on drop; for a child process
    /// to inherit it, make sure `FD_CLOEXEC` is clear on it before spawning.
    #[cfg(unix)]
    pub fn export_fd(&self) -> Result<OwnedFd> {
        let fd = out(|fd| unsafe { sys::cuabi_memory_pool_export_fd(self.as_raw(), fd) })?;
        if fd < 0 {
            return Err(Error::new(
                sys::CUABI_ERROR_INTERNAL,
                format!("cuabi_memory_pool_export_fd succeeded with descriptor {fd}"),
            ));
        }
        // SAFETY: a new descriptor, owned by the caller (the header's rule).
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

impl Device {
    /// `len` elements of uninitialised device memory, allocated in stream
    /// order on `stream` (`None`: the default stream) from `pool` (`None`:
    /// the device's default pool).
    ///
    /// The memory may be used by work queued on `stream` after this call,
    /// and by other streams once they wait for it (an event). The call is
    /// cheap and does not synchronize the device; inside a stream capture
    /// it adds an allocation node to the graph (free the buffer in the same
    /// capture with [`DeviceBuffer::free_async`], or after the graph ran).
    /// Dropping the buffer frees it in order on the stream it was allocated
    /// on; [`DeviceBuffer::free_async`] frees it on another.
    pub fn alloc_async<T: DeviceRepr>(
        &self,
        len: usize,
        pool: Option<&MemoryPool>,
        stream: Option<&Stream>,
    ) -> Result<DeviceBuffer<T>> {
        let bytes = byte_len::<T>(len, "Device::alloc_async")?;
        let pool = pool.map_or(std::ptr::null_mut(), MemoryPool::as_raw);
        let stream = stream.map_or(std::ptr::null_mut(), Stream::as_raw);
        unsafe {
            let handle = create(|out| {
                sys::cuabi_buffer_alloc_async(self.as_raw(), bytes, pool, stream, out)
            })?;
            DeviceBuffer::from_handle(handle, len)
        }
    }

    /// A new memory pool of this device's memory.
    pub fn create_memory_pool(&self, options: &MemoryPoolOptions) -> Result<MemoryPool> {
        let desc = options.raw()?;
        let handle =
            unsafe { create(|out| sys::cuabi_memory_pool_create(self.as_raw(), &desc, out))? };
        Ok(MemoryPool { handle })
    }

    /// The device's default pool, the one [`Device::alloc_async`] uses when
    /// given none. Dropping the handle leaves the pool alone.
    pub fn default_memory_pool(&self) -> Result<MemoryPool> {
        let handle =
            unsafe { create(|out| sys::cuabi_device_get_default_memory_pool(self.as_raw(), out))? };
        Ok(MemoryPool { handle })
    }

    /// Opens, on this device, a pool another process exported with
    /// [`MemoryPool::export_fd`]. `fd` stays the caller's. Open the pool's
    /// allocations with [`Device::open_ipc_buffer`], giving it this pool.
    #[cfg(unix)]
    pub fn import_memory_pool(&self, fd: impl AsFd) -> Result<MemoryPool> {
        let fd = fd.as_fd().as_raw_fd();
        let handle =
            unsafe { create(|out| sys::cuabi_memory_pool_import_fd(self.as_raw(), fd, out))? };
        Ok(MemoryPool { handle })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_options_set_what_they_name() {
        let options = MemoryPoolOptions::new();
        assert_eq!(options, MemoryPoolOptions::default());
        let options = options.max_bytes(1 << 30).release_threshold(4096).ipc(true);
        assert_eq!(options.max_bytes, Some(1 << 30));
        assert_eq!(options.release_threshold, Some(4096));
        assert_eq!(options.flags, Some(MemoryPoolFlags::IPC));
        assert_eq!(options.ipc(false).flags, Some(MemoryPoolFlags::NONE));
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<MemoryPool>();
        assert_send_sync::<MemoryPoolOptions>();
    }
}
