//! Texture objects and surface objects: kernel arguments over arrays and
//! buffers.

use std::fmt;
use std::marker::PhantomData;

use cuabi_sys as sys;

use crate::error::{create, init_struct, out, Result};
use crate::generated::{AddressMode, ArrayFormat};
use crate::objects::{TextureOptionsFields, TextureSourceFields};
use crate::types::{Array, DeviceBuffer, DeviceRepr, Surface, Texture};

/// How a [`Texture`] samples: address modes, filtering, what a fetch
/// returns, coordinates and border colour. What is not set keeps the
/// library's default (`cuabi_texture_desc_init`): clamped, point-filtered,
/// element-type reads by element index, a border of zeros.
///
/// ```
/// use cuabi::{AddressMode, FilterMode, TextureOptions};
/// let smooth = TextureOptions::new()
///     .normalized_coords(true)
///     .filter(FilterMode::Linear)
///     .address_mode(AddressMode::Wrap);
/// # let _ = smooth;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TextureOptions {
    pub(crate) fields: TextureOptionsFields,
}

impl TextureOptions {
    /// The library's defaults.
    pub fn new() -> TextureOptions {
        TextureOptions::default()
    }

    /// The same address mode in every dimension.
    pub fn address_mode(self, mode: AddressMode) -> TextureOptions {
        self.address_modes(mode, mode, mode)
    }
}

/// The memory a [`Texture`] reads: an [`Array`], or a device buffer read as
/// linear or pitched 2D memory. A source over a buffer borrows it for `'a`;
/// one over an array holds a clone of it (`'static`).
pub struct TextureSource<'a> {
    array: Option<Array>,
    buffer: sys::cuabi_buffer,
    pub(crate) fields: TextureSourceFields,
    _buffer: PhantomData<&'a ()>,
}

impl<'a> TextureSource<'a> {
    /// An array, read in its own format; the texture keeps it alive.
    pub fn array(array: &Array) -> TextureSource<'static> {
        TextureSource {
            array: Some(array.clone()),
            buffer: std::ptr::null_mut(),
            fields: TextureSourceFields::default(),
            _buffer: PhantomData,
        }
    }

    /// `width` elements of linear memory in `buffer` (fetched with
    /// `tex1Dfetch`), each `channels` values of `format`.
    pub fn linear<T: DeviceRepr>(
        buffer: &'a DeviceBuffer<T>,
        format: ArrayFormat,
        channels: u32,
        width: usize,
    ) -> TextureSource<'a> {
        TextureSource::pitched(buffer, format, channels, width, 0, 0)
    }

    /// `height` rows of `width` elements in `buffer`, `pitch` bytes apart
    /// (0: the buffer's pitch, for a [`PitchedBuffer`](crate::PitchedBuffer)
    /// through `&*`), each element `channels` values of `format`. `height`
    /// 0 is linear memory, as [`linear`](Self::linear) makes.
    pub fn pitched<T: DeviceRepr>(
        buffer: &'a DeviceBuffer<T>,
        format: ArrayFormat,
        channels: u32,
        width: usize,
        height: usize,
        pitch: usize,
    ) -> TextureSource<'a> {
        let mut fields = TextureSourceFields::default();
        (fields.width, fields.height, fields.pitch) = (width, height, pitch);
        (fields.format, fields.channels) = (format, channels);
        TextureSource {
            array: None,
            buffer: buffer.as_raw(),
            fields,
            _buffer: PhantomData,
        }
    }
}

impl fmt::Debug for TextureSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextureSource")
            .field("array", &self.array)
            .field("buffer", &self.buffer)
            .field("fields", &self.fields)
            .finish()
    }
}

impl<'a> Texture<'a> {
    /// A texture object over `source`, sampled as `options` say.
    pub fn new(source: TextureSource<'a>, options: &TextureOptions) -> Result<Texture<'a>> {
        let mut desc: sys::cuabi_texture_desc = init_struct()?;
        if let Some(array) = &source.array {
            desc.array = array.as_raw();
        }
        desc.buffer = source.buffer;
        source.fields.write(&mut desc);
        options.fields.write(&mut desc);
        let handle = unsafe { create(|out| sys::cuabi_texture_create(&desc, out))? };
        let object = out(|object| unsafe { sys::cuabi_texture_get_handle(handle.get(), object) })?;
        Ok(Texture {
            handle,
            object,
            _array: source.array,
            _buffer: PhantomData,
        })
    }

    /// The `CUtexObject` (`cudaTextureObject_t`) value, valid while `self`
    /// lives.
    pub fn object(&self) -> u64 {
        self.object
    }
}

impl fmt::Debug for Texture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Texture")
            .field("handle", &self.as_raw())
            .field("object", &format_args!("{:#x}", self.object))
            .finish()
    }
}

impl Surface {
    /// A surface object over `array`; an array made without
    /// `SURFACE_LOAD_STORE` is refused by the library, naming the flag.
    pub fn new(array: &Array) -> Result<Surface> {
        let handle = unsafe { create(|out| sys::cuabi_surface_create(array.as_raw(), out))? };
        let object = out(|object| unsafe { sys::cuabi_surface_get_handle(handle.get(), object) })?;
        Ok(Surface {
            handle,
            object,
            _array: array.clone(),
        })
    }

    /// The `CUsurfObject` (`cudaSurfaceObject_t`) value, valid while `self`
    /// lives.
    pub fn object(&self) -> u64 {
        self.object
    }
}

impl fmt::Debug for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Surface")
            .field("handle", &self.as_raw())
            .field("object", &format_args!("{:#x}", self.object))
            .finish()
    }
}

#[cfg(test)]
mod tests;
