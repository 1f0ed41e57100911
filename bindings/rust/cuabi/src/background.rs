//! Compiles and links on a thread of their own.

use std::fmt;
use std::thread::JoinHandle;

use cuabi_sys as sys;

use crate::error::{Error, Result};

/// A compile, link or any other cuabi work running on a thread of its own:
/// [`Device::compile_in_background`](crate::Device::compile_in_background),
/// [`Program::compile_in_background`](crate::Program::compile_in_background),
/// [`Linker::link_in_background`](crate::Linker::link_in_background), or
/// [`Background::spawn`] for your own closure.
///
/// NVRTC and the linkers take tens to hundreds of milliseconds; the calling
/// thread keeps running meanwhile and collects the result with
/// [`join`](Self::join). Every cuabi object is `Send`, so what the work
/// makes can come back from its thread, and the library is thread-safe, so
/// the calling thread may use cuabi meanwhile too.
///
/// ```no_run
/// # fn main() -> cuabi::Result<()> {
/// use cuabi::{CompileOptions, Device};
/// let device = Device::get(0)?;
/// let compiling = device.compile_in_background(
///     "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }",
///     &CompileOptions::new().no_cache(),
/// );
/// let data = device.buffer_from_slice(&[0.0f32; 256])?; // meanwhile
/// let module = compiling.join()?;
/// # let _ = (module, data);
/// # Ok(())
/// # }
/// ```
///
/// Dropping a `Background` detaches its thread: the work still finishes,
/// and what it made is dropped there.
pub struct Background<T> {
    // Err: the thread could not be started; join answers it.
    thread: std::result::Result<JoinHandle<Result<T>>, Error>,
}

impl<T: Send + 'static> Background<T> {
    /// Runs `work` on a new thread. A thread the system cannot start is
    /// answered by [`join`](Self::join), as
    /// [`ErrorKind::OutOfMemory`](crate::generated::ErrorKind::OutOfMemory).
    pub fn spawn<F>(work: F) -> Background<T>
    where
        F: FnOnce() -> Result<T> + Send + 'static,
    {
        let thread = std::thread::Builder::new()
            .name("cuabi-background".into())
            .spawn(work)
            .map_err(|err| {
                Error::new(
                    sys::CUABI_ERROR_OUT_OF_MEMORY,
                    format!("Background::spawn: could not start a thread: {err}"),
                )
            });
        Background { thread }
    }
}

impl<T> Background<T> {
    /// `true` once the work has finished (successfully or not), so that
    /// [`join`](Self::join) returns at once.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().map_or(true, JoinHandle::is_finished)
    }

    /// Waits for the work and returns what it made, or its error. A panic
    /// of the work is resumed on the calling thread.
    pub fn join(self) -> Result<T> {
        match self.thread {
            Ok(thread) => match thread.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(err) => Err(err),
        }
    }
}

impl<T> fmt::Debug for Background<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Background")
            .field("finished", &self.is_finished())
            .finish()
    }
}

#[cfg(test)]
mod tests;
