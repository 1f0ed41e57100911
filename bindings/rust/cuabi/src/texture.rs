//! Texture objects and surface objects: kernel arguments over arrays and
//! buffers.

use std::fmt;
use std::marker::PhantomData;

use cuabi_sys as sys;

use crate::error::{create, init_struct, out, Result};
use crate::generated::{AddressMode, ArrayFormat};
use crate::objects::TextureDescFields;
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
    pub(crate) fields: TextureDescFields,
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

    /// An address mode per dimension. [`AddressMode::Wrap`] and
    /// [`AddressMode::Mirror`] need normalised coordinates.
    pub fn address_modes(
        mut self,
        x: AddressMode,
        y: AddressMode,
        z: AddressMode,
    ) -> TextureOptions {
        let f = &mut self.fields;
        (f.address_x, f.address_y, f.address_z) = (x, y, z);
        self
    }

    /// The colour [`AddressMode::Border`] answers, as red, green, blue, alpha.
    pub fn border_color(mut self, rgba: [f32; 4]) -> TextureOptions {
        let f = &mut self.fields;
        [f.border_r, f.border_g, f.border_b, f.border_a] = rgba;
        self
    }
}

/// The memory a [`Texture`] reads: an [`Array`], or a device buffer read as
/// linear or pitched 2D memory. A source over a buffer borrows it for `'a`;
/// one over an array holds a clone of it (`'static`).
pub struct TextureSource<'a> {
    array: Option<Array>,
    buffer: sys::cuabi_buffer,
    offset: usize,
    width: usize,
    height: usize,
    pitch: usize,
    format: Option<(ArrayFormat, u32)>,
    _buffer: PhantomData<&'a ()>,
}

impl<'a> TextureSource<'a> {
    /// An array, read in its own format; the texture keeps it alive.
    pub fn array(array: &Array) -> TextureSource<'static> {
        TextureSource {
            array: Some(array.clone()),
            buffer: std::ptr::null_mut(),
            offset: 0,
            width: 0,
            height: 0,
            pitch: 0,
            format: None,
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
        TextureSource {
            array: None,
            buffer: buffer.as_raw(),
            offset: 0,
            width,
            height,
            pitch,
            format: Some((format, channels)),
            _buffer: PhantomData,
        }
    }

    /// Starts reading a buffer at byte `offset`, a multiple of the device's
    /// texture alignment.
    pub fn offset(mut self, offset: usize) -> TextureSource<'a> {
        self.offset = offset;
        self
    }
}

impl fmt::Debug for TextureSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextureSource")
            .field("array", &self.array)
            .field("buffer", &self.buffer)
            .field("offset", &self.offset)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .field("format", &self.format)
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
        desc.offset = source.offset;
        (desc.width, desc.height, desc.pitch) = (source.width, source.height, source.pitch);
        if let Some((format, channels)) = source.format {
            (desc.format, desc.channels) = (format.raw(), channels);
        }
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
