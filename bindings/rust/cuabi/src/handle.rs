//! One owner type for every cuabi handle.
//!
//! Each public object holds an [`Owned`] of its raw handle; dropping the owner
//! calls the matching `*_release` exactly once. The header's rules make this
//! simple: release never fails, may run on any thread, and the core keeps
//! what an object depends on alive, so drop order does not matter.

use std::fmt;

/// A raw handle type and the C function that gives it back (implemented
/// for every handle type in `generated.rs`).
pub(crate) trait Release: Copy + fmt::Debug {
    /// Gives the handle back to the library.
    ///
    /// # Safety
    /// `self` came from a successful cuabi call and is released only once.
    unsafe fn release(self);
}

/// Owns one raw handle and releases it on drop.
pub(crate) struct Owned<R: Release>(R);

// The header: every function is thread-safe, any handle may be used from any
// thread, and release may run on any thread.
unsafe impl<R: Release> Send for Owned<R> {}
unsafe impl<R: Release> Sync for Owned<R> {}

impl<R: Release> Owned<R> {
    /// Takes ownership of `raw`.
    ///
    /// # Safety
    /// `raw` came from a successful cuabi call, and nothing else releases it.
    pub(crate) unsafe fn new(raw: R) -> Self {
        Owned(raw)
    }

    /// The raw handle, still owned by `self`.
    pub(crate) fn get(&self) -> R {
        self.0
    }

    /// Gives up ownership without releasing: the raw handle is the
    /// caller's now (a call that releases it itself, such as
    /// `cuabi_buffer_free_async`, takes it).
    pub(crate) fn into_raw(self) -> R {
        let raw = self.0;
        std::mem::forget(self);
        raw
    }
}

/// Shows the raw handle, so that `#[derive(Debug)]` on an object shows
/// `Stream { handle: 0x... }`.
impl<R: Release> fmt::Debug for Owned<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<R: Release> Drop for Owned<R> {
    fn drop(&mut self) {
        // SAFETY: `Owned::new`'s contract; drop runs once.
        unsafe { self.0.release() }
    }
}

#[cfg(test)]
mod tests;
