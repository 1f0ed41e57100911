//! Sharing device memory, memory pools and events with other processes.

use std::fmt;

use cuabi_sys as sys;

use crate::error::{create, Error, Result};
use crate::types::{Device, DeviceBuffer, DeviceRepr, IpcHandle, MemoryPool};
use crate::values::IPC_HANDLE_SIZE;

impl IpcHandle {
    /// The size of a handle in bytes.
    pub const SIZE: usize = IPC_HANDLE_SIZE;

    /// The handle's bytes.
    pub fn as_bytes(&self) -> &[u8; IPC_HANDLE_SIZE] {
        &self.0
    }

    /// The handle of `bytes`, which must be exactly [`SIZE`](Self::SIZE)
    /// long (else an [`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument)
    /// error saying how long they are). Whether they are a handle is the
    /// library's to say, when they are opened.
    pub fn from_bytes(bytes: &[u8]) -> Result<IpcHandle> {
        let array = <[u8; IPC_HANDLE_SIZE]>::try_from(bytes).map_err(|_| {
            Error::invalid(format!(
                "IPC handle: {} bytes given, a handle is {IPC_HANDLE_SIZE}",
                bytes.len()
            ))
        })?;
        Ok(IpcHandle(array))
    }

    /// The handle as 256 lowercase hexadecimal digits.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = String::with_capacity(2 * IPC_HANDLE_SIZE);
        for byte in self.0 {
            text.push(char::from(DIGITS[usize::from(byte >> 4)]));
            text.push(char::from(DIGITS[usize::from(byte & 15)]));
        }
        text
    }

    /// The handle [`to_hex`](Self::to_hex) wrote (either case; surrounding
    /// whitespace is ignored). Anything else is an
    /// [`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument)
    /// error naming what is wrong.
    pub fn from_hex(text: &str) -> Result<IpcHandle> {
        let text = text.trim();
        if text.len() != 2 * IPC_HANDLE_SIZE {
            return Err(Error::invalid(format!(
                "IPC handle: {} hex digits given, a handle is {}",
                text.len(),
                2 * IPC_HANDLE_SIZE
            )));
        }
        let mut bytes = [0u8; IPC_HANDLE_SIZE];
        for (i, pair) in text.as_bytes().chunks_exact(2).enumerate() {
            let digit = |at: usize| {
                char::from(pair[at]).to_digit(16).ok_or_else(|| {
                    Error::invalid(format!(
                        "IPC handle: character {} is not a hex digit",
                        2 * i + at
                    ))
                })
            };
            // Two hex digits: at most 255.
            bytes[i] = (digit(0)? * 16 + digit(1)?) as u8;
        }
        Ok(IpcHandle(bytes))
    }
}

impl From<[u8; IPC_HANDLE_SIZE]> for IpcHandle {
    fn from(bytes: [u8; IPC_HANDLE_SIZE]) -> IpcHandle {
        IpcHandle(bytes)
    }
}

impl TryFrom<&[u8]> for IpcHandle {
    type Error = Error;
    fn try_from(bytes: &[u8]) -> Result<IpcHandle> {
        IpcHandle::from_bytes(bytes)
    }
}

impl AsRef<[u8]> for IpcHandle {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Shows the first bytes in hex.
impl fmt::Debug for IpcHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IpcHandle({}...)", &self.to_hex()[..16])
    }
}

impl Device {
    /// Opens on this device a buffer another process exported
    /// ([`DeviceBuffer::ipc_handle`]), as elements of `T`. A handle of a
    /// pool allocation needs `pool`: that pool, imported here with
    /// [`Device::import_memory_pool`]; other handles take `None`.
    ///
    /// The buffer ([`BufferKind::Ipc`](crate::BufferKind::Ipc)) has the
    /// exported size, which must be a whole number of `T`s (else an
    /// [`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument)
    /// error naming both sizes). Dropping it unmaps the memory, which the
    /// exporting process still owns and must keep alive meanwhile. A handle
    /// from this very process (use the buffer itself) or a damaged one is
    /// refused by the library, naming why; the driver refuses one whose
    /// memory was freed or whose process ended.
    pub fn open_ipc_buffer<T: DeviceRepr>(
        &self,
        handle: &IpcHandle,
        pool: Option<&MemoryPool>,
    ) -> Result<DeviceBuffer<T>> {
        let pool = pool.map_or(std::ptr::null_mut(), MemoryPool::as_raw);
        let owned = unsafe {
            create(|out| {
                sys::cuabi_buffer_open_ipc(
                    self.as_raw(),
                    pool,
                    handle.0.as_ptr().cast(),
                    IPC_HANDLE_SIZE,
                    out,
                )
            })?
        };
        DeviceBuffer::whole(owned, "Device::open_ipc_buffer: the exported buffer holds")
    }
}

#[cfg(test)]
mod tests;
