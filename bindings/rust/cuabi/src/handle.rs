//! One owner type for every cuabi handle.
//!
//! Each public object holds an [`Owned`] of its raw handle; dropping the owner
//! calls the matching `*_release` exactly once. The header's rules make this
//! simple: release never fails, may run on any thread, and the core keeps
//! what an object depends on alive, so drop order does not matter.

use cuabi_sys as sys;

/// A raw handle type and the C function that gives it back.
pub(crate) trait Release: Copy {
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
}

impl<R: Release> Drop for Owned<R> {
    fn drop(&mut self) {
        // SAFETY: `Owned::new`'s contract; drop runs once.
        unsafe { self.0.release() }
    }
}

macro_rules! release_with {
    ($($raw:ty => $release:path,)*) => {$(
        impl Release for $raw {
            unsafe fn release(self) {
                $release(self)
            }
        }
    )*};
}

release_with! {
    sys::cuabi_device => sys::cuabi_device_release,
    sys::cuabi_program => sys::cuabi_program_release,
    sys::cuabi_module => sys::cuabi_module_release,
    sys::cuabi_function => sys::cuabi_function_release,
    sys::cuabi_buffer => sys::cuabi_buffer_release,
    sys::cuabi_host_buffer => sys::cuabi_host_buffer_release,
    sys::cuabi_stream => sys::cuabi_stream_release,
    sys::cuabi_event => sys::cuabi_event_release,
    sys::cuabi_graph => sys::cuabi_graph_release,
    sys::cuabi_graph_exec => sys::cuabi_graph_exec_release,
    sys::cuabi_launch_plan => sys::cuabi_launch_plan_release,
}

/// Creates an object through a C function with one handle out-parameter.
///
/// # Safety
/// `create` is a cuabi call that writes a new handle to its argument when it
/// succeeds.
pub(crate) unsafe fn create<R>(
    create: impl FnOnce(*mut R) -> sys::cuabi_status,
) -> crate::Result<Owned<R>>
where
    R: Release,
{
    let mut raw = std::mem::MaybeUninit::<R>::uninit();
    crate::error::check(create(raw.as_mut_ptr()))?;
    // SAFETY: the call succeeded, so it wrote the handle, which we now own.
    Ok(Owned::new(raw.assume_init()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RELEASED: [AtomicUsize; 4] = [
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ];

    #[derive(Clone, Copy)]
    struct Fake(usize);

    impl Release for Fake {
        unsafe fn release(self) {
            RELEASED[self.0].fetch_add(1, Ordering::SeqCst);
        }
    }

    fn released(slot: usize) -> usize {
        RELEASED[slot].load(Ordering::SeqCst)
    }

    #[test]
    fn drop_releases_exactly_once() {
        let owned = unsafe { Owned::new(Fake(0)) };
        assert_eq!(released(0), 0);
        drop(owned);
        assert_eq!(released(0), 1);
    }

    #[test]
    fn moving_does_not_release() {
        let owned = unsafe { Owned::new(Fake(1)) };
        let moved = owned;
        let boxed = Box::new(moved);
        assert_eq!(released(1), 0);
        drop(boxed);
        assert_eq!(released(1), 1);
    }

    #[test]
    fn drop_on_another_thread_releases_once() {
        let owned = unsafe { Owned::new(Fake(2)) };
        std::thread::spawn(move || drop(owned)).join().unwrap();
        assert_eq!(released(2), 1);
    }

    #[test]
    fn failed_create_owns_nothing() {
        let result =
            unsafe { create::<Fake>(|_| sys::CUABI_ERROR_INVALID_ARGUMENT as sys::cuabi_status) };
        assert!(result.is_err());
        assert_eq!(released(3), 0);
        let owned = unsafe {
            create::<Fake>(|out| {
                out.write(Fake(3));
                sys::CUABI_SUCCESS as sys::cuabi_status
            })
        }
        .unwrap();
        assert_eq!(owned.get().0, 3);
        drop(owned);
        assert_eq!(released(3), 1);
    }
}
