//! Devices: the entry point for memory, streams, events and modules.

use std::ffi::c_void;
use std::fmt;

use cuabi_sys as sys;

use crate::background::Background;
use crate::error::{check, create, Error, Result};
use crate::generated::{EventFlags, StreamFlags};
use crate::link::LinkOptions;
use crate::memory::byte_len;
use crate::program::{Arch, CompileDesc, CompileOptions};
use crate::types::{
    Device, DeviceBuffer, DeviceRepr, Event, Linker, Module, PinnedBuffer, PinnedSlice, Stream,
};

impl Device {
    /// Device `ordinal` (0 for the first);
    /// [`ErrorKind::NoDevice`](crate::ErrorKind::NoDevice) when there is no
    /// such device.
    pub fn get(ordinal: usize) -> Result<Device> {
        let Ok(raw) = i32::try_from(ordinal) else {
            // Past the last device too, but the library takes an i32 and
            // could not name this ordinal.
            let count = Device::count()?;
            return Err(Error::new(
                sys::CUABI_ERROR_NO_DEVICE,
                format!(
                    "Device::get: there is no CUDA device {ordinal} ({count} device{} found)",
                    if count == 1 { "" } else { "s" }
                ),
            ));
        };
        let handle = unsafe { create(|out| sys::cuabi_device_get(raw, out))? };
        Ok(Device { handle, ordinal })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's real architecture, `sm_XY` of its compute capability,
    /// for [`CompileOptions::arch`] when compiling a [`Program`](crate::Program)
    /// for it.
    pub fn arch(&self) -> Result<Arch> {
        let (major, minor) = self.compute_capability()?;
        Ok(Arch::from_capability(major, minor))
    }

    /// Resets the primary context, freeing everything on it. After a sticky
    /// fault ([`ErrorKind::ContextLost`](crate::ErrorKind::ContextLost)) the
    /// driver refuses every device to the process for good and this fails too:
    /// start a new process.
    ///
    /// # Safety
    /// Every object made on this device before the reset becomes unusable
    /// (its calls fail; dropping it stays safe), and the memory of its
    /// [`PinnedBuffer`]s is freed: no `PinnedBuffer` or [`PinnedSlice`] of
    /// this device may be used after the reset.
    pub unsafe fn reset(&self) -> Result<()> {
        check(sys::cuabi_device_reset(self.as_raw()))
    }

    /// `len` elements of uninitialised device memory (any bytes are valid
    /// values of a [`DeviceRepr`] type).
    pub fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = byte_len::<T>(len, "Device::alloc")?;
        unsafe {
            DeviceBuffer::alloc_with(len, |out, ptr| {
                sys::cuabi_buffer_alloc_with_pointer(self.as_raw(), bytes, out, ptr)
            })
        }
    }

    /// `len` elements of device memory, every byte zero.
    pub fn alloc_zeroed<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let mut buffer = self.alloc(len)?;
        buffer.fill_bytes(0)?;
        Ok(buffer)
    }

    /// A new device buffer holding a copy of `data`.
    pub fn buffer_from_slice<T: DeviceRepr>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buffer = self.alloc(data.len())?;
        buffer.copy_from(data)?;
        Ok(buffer)
    }

    /// Wraps `len` elements of device memory owned by someone else (CuPy,
    /// PyTorch, the CUDA runtime); dropping the buffer frees nothing.
    ///
    /// # Safety
    /// `device_ptr` must be device memory of this device holding at least
    /// `len` elements of `T`, and its owner must keep it allocated while the
    /// buffer is used.
    pub unsafe fn wrap_buffer<T: DeviceRepr>(
        &self,
        device_ptr: u64,
        len: usize,
    ) -> Result<DeviceBuffer<T>> {
        let bytes = byte_len::<T>(len, "Device::wrap_buffer")?;
        let handle = create(|out| sys::cuabi_buffer_wrap(self.as_raw(), device_ptr, bytes, out))?;
        DeviceBuffer::from_handle(handle, len)
    }

    /// `len` zeroed elements of page-locked host memory.
    pub fn alloc_pinned<T: DeviceRepr>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        let bytes = byte_len::<T>(len, "Device::alloc_pinned")?;
        unsafe {
            let handle = create(|out| sys::cuabi_host_buffer_alloc(self.as_raw(), bytes, out))?;
            PinnedBuffer::from_handle(handle, len)
        }
    }

    /// Pins `data` in place until the returned [`PinnedSlice`] is dropped.
    pub fn register_host<'a, T: DeviceRepr>(
        &self,
        data: &'a mut [T],
    ) -> Result<PinnedSlice<'a, T>> {
        let bytes = byte_len::<T>(data.len(), "Device::register_host")?;
        let ptr = data.as_mut_ptr().cast::<c_void>();
        let handle = unsafe {
            create(|out| sys::cuabi_host_buffer_register(self.as_raw(), ptr, bytes, out))?
        };
        Ok(PinnedSlice {
            handle,
            slice: data,
        })
    }

    /// A new stream with default flags and priority.
    pub fn create_stream(&self) -> Result<Stream> {
        self.create_stream_with(StreamFlags::NONE, 0)
    }

    /// Wraps a `CUstream` (a `cudaStream_t`) owned by someone else; dropping
    /// the [`Stream`] does not destroy it.
    ///
    /// # Safety
    /// `cu_stream` must be a live stream of this device's primary context,
    /// kept alive by its owner while the `Stream` is used.
    pub unsafe fn wrap_stream(&self, cu_stream: u64) -> Result<Stream> {
        let handle = create(|out| sys::cuabi_stream_wrap(self.as_raw(), cu_stream, out))?;
        Ok(Stream { handle })
    }

    /// A new timing event.
    pub fn create_event(&self) -> Result<Event> {
        self.create_event_with(EventFlags::NONE)
    }

    /// Compiles `source` for this device and loads it: from CUDA C++ to a
    /// [`Module`] in one call.
    ///
    /// Unless the options name an architecture, the device's own is used
    /// (CUBIN for `sm_XY`, or PTX for `compute_XY` with [`Output::Ptx`](crate::Output::Ptx)).
    /// Compiled images go through the library's on-disk cache, keyed on
    /// everything that affects them ([`Module::from_cache`] tells whether it
    /// was used): `$CUABI_CACHE_DIR`, else `$XDG_CACHE_HOME/cuabi`, else
    /// `~/.cache/cuabi`; `CUABI_CACHE=0` or [`CompileOptions::no_cache`]
    /// turn it off. NVRTC's rejection is an
    /// [`ErrorKind::Compile`](crate::ErrorKind::Compile) error with the log.
    pub fn compile(&self, source: &str, options: &CompileOptions) -> Result<Module> {
        let desc = CompileDesc::new(source, options)?;
        let handle =
            unsafe { create(|out| sys::cuabi_module_compile(self.as_raw(), &desc.desc, out))? };
        Ok(Module { handle })
    }

    /// [`compile`](Self::compile) on a thread of its own: the calling thread
    /// keeps running while NVRTC works, and [`Background::join`] gives the
    /// module (or the error, with NVRTC's log). The source and options are
    /// copied to the thread.
    pub fn compile_in_background(
        &self,
        source: impl Into<String>,
        options: &CompileOptions,
    ) -> Background<Module> {
        let (source, options, ordinal) = (source.into(), options.clone(), self.ordinal);
        Background::spawn(move || Device::get(ordinal)?.compile(&source, &options))
    }

    /// A [`Linker`] for this device: add programs, files and bytes, then
    /// [`link`](Linker::link) them into one module.
    pub fn create_linker(&self, options: &LinkOptions) -> Result<Linker> {
        Linker::new(self, options)
    }

    /// Loads PTX text (e.g. from [`Program::ptx`](crate::Program::ptx)); the
    /// driver JIT-compiles it for this device.
    pub fn load_ptx(&self, ptx: &str) -> Result<Module> {
        self.load_module(ptx.as_bytes())
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ordinal)
            .finish()
    }
}
