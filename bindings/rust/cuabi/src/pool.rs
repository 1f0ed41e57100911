//! Stream-ordered allocation and memory pools.

use cuabi_sys as sys;

use crate::error::Result;
use crate::memory::byte_len;
use crate::types::{Device, DeviceBuffer, DeviceRepr, MemoryPool, Stream};
use crate::values::MemoryPoolDesc;

/// A new pool's properties: the name this crate gave [`MemoryPoolDesc`], the
/// generated value type of `cuabi_memory_pool_desc`, before it was generated.
///
/// ```
/// use cuabi::{MemoryPoolDesc, MemoryPoolFlags};
/// let desc = MemoryPoolDesc::new().release_threshold(64 << 20).ipc(true);
/// assert_eq!(desc.release_threshold, 64 << 20);
/// assert!(desc.flags.contains(MemoryPoolFlags::IPC));
/// ```
pub type MemoryPoolOptions = MemoryPoolDesc;

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
            DeviceBuffer::alloc_with(len, |out, ptr| {
                sys::cuabi_buffer_alloc_async_with_pointer(
                    self.as_raw(),
                    bytes,
                    pool,
                    stream,
                    out,
                    ptr,
                )
            })
        }
    }

    /// A new memory pool of this device's memory: [`MemoryPool::create`].
    pub fn create_memory_pool(&self, desc: &MemoryPoolDesc) -> Result<MemoryPool> {
        MemoryPool::create(self, desc)
    }
}

#[cfg(test)]
mod tests;
