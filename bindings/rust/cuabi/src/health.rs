//! The context-lost callback (`cuabi_set_context_lost_callback`) as a Rust
//! closure. The rest of health is generated: [`Device::health`] answers a
//! [`Health`] and [`context_lost_message`] the message of the call that
//! found the context lost.
//!
//! [`Device::health`]: crate::types::Device::health
//! [`Health`]: crate::generated::Health
//! [`context_lost_message`]: crate::objects::context_lost_message

use std::ffi::{c_char, c_void, CStr};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use cuabi_sys as sys;

use crate::error::{check, Result};

type Callback = Arc<dyn Fn(&str) + Send + Sync + 'static>;

/// The process's closure. The library holds only [`trampoline`] (with no
/// user data), which reads this slot each time it is called.
static SLOT: Mutex<Option<Callback>> = Mutex::new(None);

/// Calls `f` with the message of the call that first finds the CUDA context
/// lost (`ErrorKind::ContextLost`: a sticky fault, after which the driver
/// fails every CUDA call of the process). Replaces an earlier closure.
///
/// `f` runs once per process, on the thread of that call, after the call
/// has failed and before it returns its [`Error`](crate::Error); no cuabi
/// lock is held, so `f` may call cuabi (which answers CUDA work with
/// `ErrorKind::ContextLost`). Registered after the context was lost, `f` is
/// called at once, on this thread, before this returns. The message is the
/// same text as [`context_lost_message`](crate::objects::context_lost_message).
///
/// A panic in `f` never unwinds into the library: it is caught where the
/// library calls `f` and dropped there. The panic hook reports it as it
/// reports any panic (the default hook prints it to standard error); the
/// failing call still answers its error, and `f` stays registered. A
/// program built with `panic = "abort"` aborts, as with any panic.
///
/// Calls `cuabi_set_context_lost_callback`.
///
/// ```no_run
/// cuabi::on_context_lost(|message| eprintln!("CUDA is lost for this process: {message}"))?;
/// # Ok::<(), cuabi::Error>(())
/// ```
pub fn on_context_lost<F: Fn(&str) + Send + Sync + 'static>(f: F) -> Result<()> {
    // The slot first: a registration after the loss calls the trampoline at once.
    let previous = set_slot(Some(Arc::new(f)));
    // Outside the slot's lock: the library may call the trampoline from here.
    let registered = check(unsafe {
        sys::cuabi_set_context_lost_callback(Some(trampoline), std::ptr::null_mut())
    });
    if registered.is_err() {
        set_slot(previous);
    }
    registered
}

/// Removes the closure of [`on_context_lost`]: nothing is called when the
/// context is found lost.
///
/// Calls `cuabi_set_context_lost_callback` with none.
pub fn clear_context_lost_callback() -> Result<()> {
    // Under the slot's lock, so that the library's registration and the slot
    // agree whichever of this and on_context_lost comes last. Unregistering
    // calls nothing back, and the library calls the trampoline without its
    // own lock held, so holding the slot here waits for nothing that waits
    // for it.
    let mut slot = SLOT.lock().unwrap_or_else(PoisonError::into_inner);
    let unregistered =
        check(unsafe { sys::cuabi_set_context_lost_callback(None, std::ptr::null_mut()) });
    let removed = unregistered.is_ok().then(|| slot.take());
    drop(slot);
    // The closure is dropped outside the lock (its captures' drops may call cuabi).
    drop(removed);
    unregistered
}

/// Puts `callback` in the slot and answers the closure it replaces.
fn set_slot(callback: Option<Callback>) -> Option<Callback> {
    let mut slot = SLOT.lock().unwrap_or_else(PoisonError::into_inner);
    std::mem::replace(&mut *slot, callback)
}

/// What the library calls: the slot's closure with the message as `&str`
/// (invalid UTF-8 replaced), a panic caught.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string valid during the call, as
/// the library passes it.
unsafe extern "C" fn trampoline(_user_data: *mut c_void, message: *const c_char) {
    let text = if message.is_null() {
        std::borrow::Cow::Borrowed("")
    } else {
        CStr::from_ptr(message).to_string_lossy()
    };
    let run = move || {
        // A clone, so that the lock is not held while the closure runs (it may
        // register another one).
        let callback = SLOT.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(f) = callback {
            f(&text);
        }
    };
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(run)) {
        // Dropped with panics caught; the text is not needed.
        crate::stream::panic_text(payload);
    }
}

#[cfg(test)]
mod tests;
