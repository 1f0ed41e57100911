//! Pitched memory and copies in two and three dimensions.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::{Deref, DerefMut};

use cuabi_sys as sys;

use crate::error::{create, init_struct, out, Error, Result};
use crate::memory::byte_len;
use crate::objects::Copy3dFields;
use crate::types::{Array, Describes, Device, DeviceBuffer, DeviceRepr};

/// `height` rows of `width` elements of `T` on the device, each row padded
/// to the device's alignment: row `y` starts [`pitch`](Self::pitch) bytes
/// after row `y - 1`. Made by [`Device::alloc_pitched`]; freed on drop.
///
/// It dereferences to its [`DeviceBuffer`] (of `pitch * height` bytes) and
/// passes to a kernel as a buffer does: give the kernel the pitch too, and
/// find row `y` at `(char*)ptr + y * pitch`. Rows move to and from the host
/// with [`copy_from_rows`](Self::copy_from_rows) and
/// [`copy_to_rows`](Self::copy_to_rows), or any box with [`Copy3d`].
pub struct PitchedBuffer<T: DeviceRepr> {
    buffer: DeviceBuffer<T>,
    width: usize,
    height: usize,
    pitch: usize,
}

impl Device {
    /// `height` rows of at least `width` elements of `T`, each padded so
    /// that rows stay aligned for the device (`cuMemAllocPitch`, for
    /// accesses of `size_of::<T>()` rounded up to 4, 8 or 16 bytes).
    pub fn alloc_pitched<T: DeviceRepr>(
        &self,
        width: usize,
        height: usize,
    ) -> Result<PitchedBuffer<T>> {
        let width_bytes = byte_len::<T>(width, "Device::alloc_pitched")?;
        let element_size = match size_of::<T>() {
            0..=4 => 4,
            5..=8 => 8,
            _ => 16,
        };
        let handle = unsafe {
            create(|out| {
                sys::cuabi_buffer_alloc_pitched(
                    self.as_raw(),
                    width_bytes,
                    height,
                    element_size,
                    out,
                )
            })?
        };
        let pitch = out(|pitch| unsafe { sys::cuabi_buffer_get_pitch(handle.get(), pitch) })?;
        let bytes = out(|bytes| unsafe { sys::cuabi_buffer_get_size(handle.get(), bytes) })?;
        let len = bytes.checked_div(size_of::<T>()).unwrap_or(0);
        // SAFETY: the buffer holds `bytes` >= len * size_of::<T>() bytes.
        let buffer = unsafe { DeviceBuffer::from_handle(handle, len)? };
        Ok(PitchedBuffer {
            buffer,
            width,
            height,
            pitch,
        })
    }
}

impl<T: DeviceRepr> PitchedBuffer<T> {
    /// Elements per row, as allocated.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The number of rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Bytes from the start of one row to the start of the next (at least
    /// `width() * size_of::<T>()`).
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Copies every row from `src`, whose rows are `src_row_len` elements
    /// apart (at least [`width`](Self::width)); returns once `src` may be
    /// reused. `src` must hold every row: a slice too short is refused with
    /// [`ErrorKind::OutOfRange`](crate::generated::ErrorKind::OutOfRange).
    pub fn copy_from_rows(&mut self, src: &[T], src_row_len: usize) -> Result<()> {
        let (rows, pitch) = self.rows(src_row_len)?;
        let copy = rows.from_host(src).src_layout(pitch, 0);
        copy.to_buffer(&mut self.buffer).run()
    }

    /// Copies every row into `dst`, whose rows are `dst_row_len` elements
    /// apart; returns with the data. The elements between rows in `dst` are
    /// left alone.
    pub fn copy_to_rows(&self, dst: &mut [T], dst_row_len: usize) -> Result<()> {
        let (rows, pitch) = self.rows(dst_row_len)?;
        let copy = rows.from_buffer(&self.buffer).to_host(dst);
        copy.dst_layout(pitch, 0).run()
    }

    /// A copy of every row (its sides still to be named), and a host pitch
    /// of `row_len` elements, in bytes.
    fn rows<'a>(&self, row_len: usize) -> Result<(Copy3d<'a>, usize)> {
        let width = byte_len::<T>(self.width, "PitchedBuffer width")?;
        let pitch = byte_len::<T>(row_len, "host row length")?;
        Ok((Copy3d::new().extent(width, self.height, 1), pitch))
    }
}

impl<T: DeviceRepr> Deref for PitchedBuffer<T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }
}

impl<T: DeviceRepr> DerefMut for PitchedBuffer<T> {
    fn deref_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buffer
    }
}

impl<T: DeviceRepr> fmt::Debug for PitchedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PitchedBuffer")
            .field("element", &std::any::type_name::<T>())
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .field(
                "device_ptr",
                &format_args!("{:#x}", self.buffer.device_ptr()),
            )
            .finish()
    }
}

/// One side of a copy.
#[derive(Clone, Copy, Debug)]
enum Side {
    None,
    /// Host memory of `bytes` bytes.
    Host(*const c_void, usize),
    Buffer(sys::cuabi_buffer),
    Array(sys::cuabi_array),
}

/// Where a side's box starts and how its memory is laid out.
#[derive(Clone, Copy, Debug)]
struct Place {
    x_bytes: usize,
    y: usize,
    z: usize,
    pitch: usize,
    height: usize,
}

impl Place {
    /// The place of `[x_bytes, y, z, pitch, height]`: a side's fields.
    fn new([x_bytes, y, z, pitch, height]: [usize; 5]) -> Place {
        Place {
            x_bytes,
            y,
            z,
            pitch,
            height,
        }
    }
}

/// A copy of a box of `width_bytes` x `height` rows x `depth` slices
/// between host memory, device buffers and [`Array`]s, in any combination
/// (`cuabi_copy_3d`).
///
/// Each side is one memory: [`from_host`](Self::from_host),
/// [`from_buffer`](Self::from_buffer) or [`from_array`](Self::from_array),
/// and [`to_host`](Self::to_host), [`to_buffer`](Self::to_buffer) or
/// [`to_array`](Self::to_array) (setting a side again replaces it). The box
/// starts at byte `x_bytes` of row `y` of slice `z` of each side
/// ([`src_offset`](Self::src_offset), [`dst_offset`](Self::dst_offset)).
/// For host memory and buffers, rows are `pitch` bytes apart (0: the
/// buffer's pitch if it is a [`PitchedBuffer`], else the box's width) and
/// slices `height` rows apart (0: the box's height; for a box of one slice,
/// the rows it reaches, `y + height`)
/// ([`src_layout`](Self::src_layout), [`dst_layout`](Self::dst_layout)); an
/// array's layout is its own. Every unit is bytes or rows, as in the C
/// struct: an array's x and width count bytes of whole elements.
///
/// The library checks every buffer and array range before the driver sees
/// it and names the side and dimension at fault
/// ([`ErrorKind::OutOfRange`](crate::generated::ErrorKind::OutOfRange)), as it refuses
/// a pitch smaller than the row or a side with no memory
/// ([`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument)).
/// Host memory is the crate's to check: a box that reaches past a host
/// slice is refused with `OutOfRange` before anything is copied.
///
/// The builder borrows every memory it names, the destination mutably, for
/// as long as it lives: [`run`](Self::run) returns when the copy is done;
/// [`run_async`](Self::run_async) is `unsafe` because the memory must
/// outlive the queued copy.
///
/// ```no_run
/// # fn f(device: &cuabi::Device) -> cuabi::Result<()> {
/// use cuabi::{ArrayDesc, ArrayFormat, Copy3d};
/// // A 64 x 32 x 4 float volume into an array and back.
/// let (w, h, d) = (64usize, 32usize, 4usize);
/// let volume: Vec<f32> = (0..w * h * d).map(|i| i as f32).collect();
/// let array = device.create_array(&ArrayDesc::new_3d(ArrayFormat::F32, 1, w, h, d))?;
/// let row = w * 4;
/// Copy3d::new().from_host(&volume).to_array(&array).extent(row, h, d).run()?;
/// let mut back = vec![0.0f32; w * h * d];
/// Copy3d::new().from_array(&array).to_host(&mut back).extent(row, h, d).run()?;
/// assert_eq!(back, volume);
/// # Ok(())
/// # }
/// ```
pub struct Copy3d<'a> {
    src: Side,
    dst: Side,
    pub(crate) fields: Copy3dFields,
    /// Borrows every memory named (the destination mutably) for 'a.
    _borrows: PhantomData<&'a mut ()>,
}

impl Default for Copy3d<'_> {
    fn default() -> Self {
        Copy3d::new()
    }
}

impl<'a> Copy3d<'a> {
    /// A copy with no memory yet, and a box of 0 bytes x 1 row x 1 slice.
    pub fn new() -> Copy3d<'a> {
        Copy3d {
            src: Side::None,
            dst: Side::None,
            fields: Copy3dFields::default(),
            _borrows: PhantomData,
        }
    }

    /// Copies from host memory.
    pub fn from_host<T: DeviceRepr>(mut self, src: &'a [T]) -> Self {
        self.src = Side::Host(src.as_ptr().cast(), std::mem::size_of_val(src));
        self
    }

    /// Copies from a device buffer (a [`PitchedBuffer`] or
    /// [`ManagedBuffer`](crate::ManagedBuffer) too, through `&*`).
    pub fn from_buffer<T: DeviceRepr>(mut self, src: &'a DeviceBuffer<T>) -> Self {
        self.src = Side::Buffer(src.as_raw());
        self
    }

    /// Copies from an array.
    pub fn from_array(mut self, src: &'a Array) -> Self {
        self.src = Side::Array(src.as_raw());
        self
    }

    /// Copies into host memory.
    pub fn to_host<T: DeviceRepr>(mut self, dst: &'a mut [T]) -> Self {
        self.dst = Side::Host(
            dst.as_mut_ptr().cast_const().cast(),
            std::mem::size_of_val(dst),
        );
        self
    }

    /// Copies into a device buffer.
    pub fn to_buffer<T: DeviceRepr>(mut self, dst: &'a mut DeviceBuffer<T>) -> Self {
        self.dst = Side::Buffer(dst.as_raw());
        self
    }

    /// Copies into an array.
    pub fn to_array(mut self, dst: &'a Array) -> Self {
        self.dst = Side::Array(dst.as_raw());
        self
    }
}

/// Checks that the box lies within `bytes` bytes of host memory laid out as
/// `place` says: the library cannot see how long a host slice is. Its last
/// byte is at the box's last row of its last slice.
fn host_range(
    which: &str,
    bytes: usize,
    place: &Place,
    (width, height, depth): (usize, usize, usize),
) -> Result<()> {
    let (height, depth) = (height.max(1), depth.max(1));
    let pitch = if place.pitch == 0 { width } else { place.pitch };
    // Slices are `height` rows apart by default; for a box of one slice the
    // library counts the rows it reaches (`y + height`), which can only
    // place a slice further: count that, the larger.
    let rows_per_slice = match (place.height, depth) {
        (0, 1) => place.y.saturating_add(height),
        (0, _) => height,
        (rows, _) => rows,
    };
    let end = (|| {
        let last_slice = place.z.checked_add(depth - 1)?;
        let last_row = last_slice
            .checked_mul(rows_per_slice)?
            .checked_add(place.y)?
            .checked_add(height - 1)?;
        last_row
            .checked_mul(pitch)?
            .checked_add(place.x_bytes)?
            .checked_add(width)
    })();
    match end {
        Some(end) if end <= bytes => Ok(()),
        end => Err(Error::new(
            sys::CUABI_ERROR_OUT_OF_RANGE,
            format!(
                "Copy3d: the {which} box ({width} bytes x {height} rows x {depth} slices at \
                 byte {} of row {} of slice {}, rows {pitch} bytes apart, slices \
                 {rows_per_slice} rows apart) reaches {} of the {which} host memory's {bytes} \
                 bytes",
                place.x_bytes,
                place.y,
                place.z,
                end.map_or_else(|| "past usize::MAX".to_owned(), |e| format!("byte {e}"))
            ),
        )),
    }
}

impl fmt::Debug for Copy3d<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Copy3d")
            .field("src", &self.src)
            .field("dst", &self.dst)
            .field("fields", &self.fields)
            .finish()
    }
}

// SAFETY: the struct names the value's borrowed memory and live objects
// only, host sides checked against their slices.
unsafe impl Describes<sys::cuabi_copy_3d_desc> for Copy3d<'_> {
    /// The C struct, from the library's defaults; host sides checked (also
    /// an element of a `Copy3dBatch`).
    fn describe(&self) -> Result<sys::cuabi_copy_3d_desc> {
        let f = &self.fields;
        let extent = (f.width_bytes, f.height, f.depth);
        if let Side::Host(_, bytes) = self.src {
            let place = Place::new([f.src_x_bytes, f.src_y, f.src_z, f.src_pitch, f.src_height]);
            host_range("source", bytes, &place, extent)?;
        }
        if let Side::Host(_, bytes) = self.dst {
            let place = Place::new([f.dst_x_bytes, f.dst_y, f.dst_z, f.dst_pitch, f.dst_height]);
            host_range("destination", bytes, &place, extent)?;
        }
        let mut desc: sys::cuabi_copy_3d_desc = init_struct()?;
        match self.src {
            Side::None => {}
            Side::Host(ptr, _) => desc.src_host = ptr,
            Side::Buffer(buffer) => desc.src_buffer = buffer,
            Side::Array(array) => desc.src_array = array,
        }
        match self.dst {
            Side::None => {}
            Side::Host(ptr, _) => desc.dst_host = ptr.cast_mut(),
            Side::Buffer(buffer) => desc.dst_buffer = buffer,
            Side::Array(array) => desc.dst_array = array,
        }
        f.write(&mut desc);
        Ok(desc)
    }
}

#[cfg(test)]
mod tests;
