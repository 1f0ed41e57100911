//! CUDA arrays: 1D, 2D, 3D and layered, for textures and surfaces.

use std::sync::Arc;

use cuabi_sys as sys;

use crate::copy::Copy3d;
use crate::error::{create, Error, Result};
use crate::generated::{ArrayFlags, ArrayFormat};
use crate::types::{Array, Device, DeviceRepr};
use crate::values::ArrayDesc;

/// Shapes of [`ArrayDesc`], the generated value type of `cuabi_array_desc`:
/// the library checks one against the device's limits when the array is
/// made ([`Device::create_array`]) and names what is wrong.
///
/// ```
/// use cuabi::{ArrayDesc, ArrayFlags, ArrayFormat};
/// let image = ArrayDesc::new_2d(ArrayFormat::U8, 4, 640, 480)
///     .with_flags(ArrayFlags::SURFACE_LOAD_STORE);
/// assert_eq!((image.width, image.height, image.depth), (640, 480, 0));
/// let stack = ArrayDesc::new_layered(ArrayFormat::F32, 1, 64, 64, 8);
/// assert!(stack.flags.contains(ArrayFlags::LAYERED));
/// ```
impl ArrayDesc {
    /// A 1D array of `width` elements.
    pub fn new_1d(format: ArrayFormat, channels: u32, width: usize) -> ArrayDesc {
        ArrayDesc::new_3d(format, channels, width, 0, 0)
    }

    /// A 2D array of `height` rows of `width` elements.
    pub fn new_2d(format: ArrayFormat, channels: u32, width: usize, height: usize) -> ArrayDesc {
        ArrayDesc::new_3d(format, channels, width, height, 0)
    }

    /// A 3D array of `depth` slices of `height` rows of `width` elements.
    pub fn new_3d(
        format: ArrayFormat,
        channels: u32,
        width: usize,
        height: usize,
        depth: usize,
    ) -> ArrayDesc {
        ArrayDesc {
            width,
            height,
            depth,
            format,
            channels,
            ..ArrayDesc::default()
        }
    }

    /// A layered array: `layers` 2D arrays of `height` rows of `width`
    /// elements (`height` 0: layers of 1D arrays).
    pub fn new_layered(
        format: ArrayFormat,
        channels: u32,
        width: usize,
        height: usize,
        layers: usize,
    ) -> ArrayDesc {
        ArrayDesc::new_3d(format, channels, width, height, layers).with_flags(ArrayFlags::LAYERED)
    }

    /// The same shape with these flags added.
    pub fn with_flags(mut self, flags: ArrayFlags) -> ArrayDesc {
        self.flags |= flags;
        self
    }

    /// Bytes of one element: `channels` values of `format`.
    pub fn element_bytes(&self) -> usize {
        let value = match self.format {
            ArrayFormat::U8 | ArrayFormat::S8 => 1,
            ArrayFormat::U16 | ArrayFormat::S16 | ArrayFormat::F16 => 2,
            ArrayFormat::U32 | ArrayFormat::S32 | ArrayFormat::F32 => 4,
        };
        value * self.channels as usize
    }
}

impl Device {
    /// A new array of `desc`'s shape on this device.
    pub fn create_array(&self, desc: &ArrayDesc) -> Result<Array> {
        let raw = sys::cuabi_array_desc::from(*desc);
        let handle = unsafe { create(|out| sys::cuabi_array_create(self.as_raw(), &raw, out))? };
        Ok(Array {
            handle: Arc::new(handle),
        })
    }
}

impl Array {
    /// Fills the whole array from `src`, elements packed row after row and
    /// slice (or layer) after slice; returns once `src` may be reused. `src`
    /// must hold at least the array's bytes (else
    /// [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange)).
    pub fn copy_from_host<T: DeviceRepr>(&self, src: &[T]) -> Result<()> {
        self.whole()?.from_host(src).to_array(self).run()
    }

    /// Reads the whole array into `dst`, packed as
    /// [`copy_from_host`](Self::copy_from_host) takes it; returns with the
    /// data.
    pub fn copy_to_host<T: DeviceRepr>(&self, dst: &mut [T]) -> Result<()> {
        self.whole()?.from_array(self).to_host(dst).run()
    }

    /// A copy of the whole array's box (bytes per row, rows, slices), its
    /// sides still to be named.
    fn whole<'a>(&self) -> Result<Copy3d<'a>> {
        let desc = self.desc()?;
        let (width, element) = (desc.width, desc.element_bytes());
        let row = width.checked_mul(element).ok_or_else(|| {
            Error::new(
                sys::CUABI_ERROR_OUT_OF_RANGE,
                format!("Array: a row of {width} elements of {element} bytes overflows usize"),
            )
        })?;
        Ok(Copy3d::new().extent(row, desc.height.max(1), desc.depth.max(1)))
    }
}

#[cfg(test)]
mod tests;
