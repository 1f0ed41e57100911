//! Green contexts and tensor maps: what the generated layer leaves out. A
//! green context's streams (always non-blocking), and a tensor map's value
//! as a kernel argument ([`TensorMapValue`], 128 bytes aligned to 64, for a
//! `const __grid_constant__ CUtensorMap` parameter).

use cuabi_sys as sys;

use crate::error::{create, Result};
use crate::generated::StreamFlags;
use crate::objects::{GreenContext, TensorMap};
use crate::types::{DeviceRepr, Stream};
use crate::values::TENSOR_MAP_BYTES;

/// A tensor map's value, passed by value to a kernel's `const
/// __grid_constant__ CUtensorMap` parameter: `launch.args((&map.value()?, &out))`.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapValue(pub [u8; TENSOR_MAP_BYTES]);

// SAFETY: plain bytes, of the parameter's size and alignment.
unsafe impl DeviceRepr for TensorMapValue {}

impl TensorMap {
    /// The map's bytes as a kernel argument.
    pub fn value(&self) -> Result<TensorMapValue> {
        let mut v = TensorMapValue([0; TENSOR_MAP_BYTES]);
        let mut size = TENSOR_MAP_BYTES;
        crate::error::check(unsafe {
            sys::cuabi_tensor_map_get_bytes(self.as_raw(), v.0.as_mut_ptr().cast(), &mut size)
        })?;
        Ok(v)
    }
}

impl GreenContext {
    /// A new non-blocking stream whose work runs in this context, an ordinary
    /// [`Stream`] (`cuabi_green_context_create_stream`).
    pub fn create_stream(&self, priority: i32) -> Result<Stream> {
        let handle = unsafe {
            create(|out| {
                sys::cuabi_green_context_create_stream(
                    self.as_raw(),
                    StreamFlags::NON_BLOCKING.bits(),
                    priority,
                    out,
                )
            })?
        };
        Ok(Stream { handle })
    }
}
