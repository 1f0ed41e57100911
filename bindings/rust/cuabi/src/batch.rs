//! Batches: writes and waits ([`MemOpBatch`]), copies of any direction
//! ([`CopyBatch`]), boxes of [`Copy3d`] ([`Copy3dBatch`]) and prefetches
//! and discards of managed memory ([`ManagedRanges`]), each queued on a
//! [`Stream`](crate::Stream) in one call by the generated method that takes
//! it.
//!
//! The batches only lay out the C arrays the calls take, borrowing the
//! memory they name for their lifetime; every check, with the index of the
//! element at fault in the message (`ops[412]: ...`), is the library's.

use std::ffi::c_void;
use std::marker::PhantomData;

use cuabi_sys as sys;

use crate::copy::Copy3d;
use crate::error::Result;
use crate::generated::{MemOpFlags, WaitCondition};
use crate::types::{Describes, DescribesEach, DeviceBuffer, DeviceRepr, PinnedBuffer};

/// The memory under a word of a [`MemOpBatch`], or one end of a copy of a
/// [`CopyBatch`]: a device buffer, pinned host memory, or (for copies) plain
/// host memory. Made with `From` from `&DeviceBuffer<T>`, `&PinnedBuffer<T>`,
/// and, for copies, `&[T]` (a source) or `&mut [T]` (a destination).
#[derive(Clone, Copy, Debug)]
pub struct BatchMemory<'a> {
    buffer: sys::cuabi_buffer,
    host_buffer: sys::cuabi_host_buffer,
    host: *mut c_void,
    _borrow: PhantomData<&'a ()>,
}

/// `From` each kind of memory, setting the one field that names it.
macro_rules! batch_memory_from {
    ($($from:ty, |$m:ident| $field:ident: $value:expr;)*) => {$(
        impl<'a, T: DeviceRepr> From<$from> for BatchMemory<'a> {
            fn from($m: $from) -> Self {
                BatchMemory {
                    $field: $value,
                    ..BatchMemory::none()
                }
            }
        }
    )*};
}

batch_memory_from! {
    &'a DeviceBuffer<T>, |b| buffer: b.as_raw();
    &'a PinnedBuffer<T>, |b| host_buffer: b.as_raw();
    &'a [T], |s| host: s.as_ptr() as *mut c_void;
    &'a mut [T], |s| host: s.as_mut_ptr().cast();
}

impl BatchMemory<'_> {
    fn none() -> Self {
        BatchMemory {
            buffer: std::ptr::null_mut(),
            host_buffer: std::ptr::null_mut(),
            host: std::ptr::null_mut(),
            _borrow: PhantomData,
        }
    }
}

/// Writes and waits queued in one call
/// ([`Stream::mem_op_batch`](crate::Stream::mem_op_batch), 1 to 255 of
/// them), in order.
#[derive(Default)]
pub struct MemOpBatch<'a> {
    ops: Vec<sys::cuabi_mem_op>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> MemOpBatch<'a> {
    fn op(memory: BatchMemory<'a>, offset: usize, value: u64, width: u32) -> sys::cuabi_mem_op {
        sys::cuabi_mem_op {
            struct_size: std::mem::size_of::<sys::cuabi_mem_op>(),
            kind: sys::CUABI_MEM_OP_WRITE,
            width,
            buffer: memory.buffer,
            host_buffer: memory.host_buffer,
            offset,
            value,
            condition: sys::CUABI_WAIT_GEQ,
            flags: 0,
        }
    }

    /// Writes `value` as the `width`-byte word (4 or 8) at byte `offset` of
    /// `memory` (a device buffer or pinned host memory).
    pub fn write(
        mut self,
        memory: impl Into<BatchMemory<'a>>,
        offset: usize,
        value: u64,
        width: u32,
    ) -> Self {
        self.ops.push(Self::op(memory.into(), offset, value, width));
        self
    }

    /// Holds the stream's later work until the word meets `condition`
    /// against `value`; `flags` may hold [`MemOpFlags::FLUSH`].
    pub fn wait(
        mut self,
        memory: impl Into<BatchMemory<'a>>,
        offset: usize,
        value: u64,
        width: u32,
        condition: WaitCondition,
        flags: MemOpFlags,
    ) -> Self {
        let mut op = Self::op(memory.into(), offset, value, width);
        op.kind = sys::CUABI_MEM_OP_WAIT;
        op.condition = condition.raw();
        op.flags = flags.bits();
        self.ops.push(op);
        self
    }
}

/// Copies of any direction queued in one call
/// ([`Stream::copy_batch`](crate::Stream::copy_batch)); they may run in any
/// order among themselves.
#[derive(Default)]
pub struct CopyBatch<'a> {
    ops: Vec<sys::cuabi_copy_op>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> CopyBatch<'a> {
    /// Adds a copy of `bytes` bytes from byte `src_offset` of `src` to byte
    /// `dst_offset` of `dst`.
    pub fn copy(
        mut self,
        dst: impl Into<BatchMemory<'a>>,
        dst_offset: usize,
        src: impl Into<BatchMemory<'a>>,
        src_offset: usize,
        bytes: usize,
    ) -> Self {
        let (d, s) = (dst.into(), src.into());
        self.ops.push(sys::cuabi_copy_op {
            struct_size: std::mem::size_of::<sys::cuabi_copy_op>(),
            dst_buffer: d.buffer,
            dst_host_buffer: d.host_buffer,
            dst_host: d.host,
            dst_offset,
            src_buffer: s.buffer,
            src_host_buffer: s.host_buffer,
            src_host: s.host,
            src_offset,
            bytes,
        });
        self
    }
}

/// Box copies ([`Copy3d`]: host memory, buffers, pitched buffers and arrays
/// in any combination) queued in one call
/// ([`Stream::copy_3d_batch`](crate::Stream::copy_3d_batch)); they may run in
/// any order among themselves. The batch borrows what each copy borrows, the
/// destinations mutably, for its lifetime.
#[derive(Default)]
pub struct Copy3dBatch<'a> {
    copies: Vec<sys::cuabi_copy_3d_desc>,
    _borrows: PhantomData<&'a mut ()>,
}

impl<'a> Copy3dBatch<'a> {
    /// Adds `copy`, laid out as [`Copy3d::run`] lays it out. A host side
    /// the box reaches past is refused here, as [`Copy3d::run`] refuses it;
    /// every other check is the library's, when the batch is queued.
    pub fn copy(mut self, copy: Copy3d<'a>) -> Result<Self> {
        self.copies.push(copy.describe()?);
        Ok(self)
    }
}

/// Ranges of managed buffers for
/// [`Stream::prefetch_batch`](crate::Stream::prefetch_batch) and the discards.
#[derive(Default)]
pub struct ManagedRanges<'a> {
    ranges: Vec<sys::cuabi_managed_range>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> ManagedRanges<'a> {
    /// Adds `bytes` bytes from byte `offset` of `buffer` (a managed buffer:
    /// pass `&*managed`).
    pub fn range<T: DeviceRepr>(
        mut self,
        buffer: &'a DeviceBuffer<T>,
        offset: usize,
        bytes: usize,
    ) -> Self {
        self.ranges.push(sys::cuabi_managed_range {
            struct_size: std::mem::size_of::<sys::cuabi_managed_range>(),
            buffer: buffer.as_raw(),
            offset,
            bytes,
        });
        self
    }
}

/// What every batch has: `new` (empty), `len`, `is_empty`, `Debug`
/// showing the length, and the C array of its entries (`$field`, of
/// `$raw`, which the docs call `$what`) for the generated call that takes
/// it ([`DescribesEach`]).
macro_rules! batch {
    ($($t:ident.$field:ident: $raw:ty, $what:literal;)*) => {$(
        // SAFETY: the entries name the batch's borrowed memory and live
        // objects only.
        unsafe impl DescribesEach<$raw> for $t<'_> {
            fn entries(&self) -> &[$raw] {
                &self.$field
            }
        }

        impl $t<'_> {
            #[doc = concat!("An empty batch: no ", $what, " yet.")]
            pub fn new() -> Self {
                Self::default()
            }

            #[doc = concat!("How many ", $what, " the batch holds.")]
            pub fn len(&self) -> usize {
                self.$field.len()
            }

            #[doc = concat!("Whether it holds no ", $what, ".")]
            pub fn is_empty(&self) -> bool {
                self.$field.is_empty()
            }
        }

        impl std::fmt::Debug for $t<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t)).field("len", &self.len()).finish()
            }
        }
    )*};
}

batch! {
    MemOpBatch.ops: sys::cuabi_mem_op, "writes and waits";
    CopyBatch.ops: sys::cuabi_copy_op, "copies";
    Copy3dBatch.copies: sys::cuabi_copy_3d_desc, "copies";
    ManagedRanges.ranges: sys::cuabi_managed_range, "ranges";
}
