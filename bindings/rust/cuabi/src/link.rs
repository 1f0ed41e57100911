//! Linking device code into one image, and libraries loaded once for every
//! device.

use cuabi_sys as sys;

use crate::background::Background;
use crate::error::{create, init_struct, Result};
use crate::objects::LinkOptionsFields;
use crate::program::CStrings;
use crate::types::{Device, Library, Linker, Module};

/// How a [`Linker`] links: [`Device::create_linker`]. A builder; what is
/// not set keeps the library's default (`cuabi_link_desc_init`: either
/// backend, no link-time optimisation, the cache on, no options).
///
/// ```
/// use cuabi::{LinkBackend, LinkOptions};
/// let options = LinkOptions::new()
///     .backend(LinkBackend::Nvjitlink)
///     .lto(true)
///     .option("-O3")
///     .no_cache();
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkOptions {
    pub(crate) fields: LinkOptionsFields,
    options: Vec<String>,
}

impl LinkOptions {
    /// The library's defaults.
    pub fn new() -> LinkOptions {
        LinkOptions::default()
    }

    /// Adds one nvJitLink option (`"-O3"`, `"-lineinfo"`,
    /// `"-maxrregcount=64"`); `-arch=sm_XY` of the linker's device is added
    /// unless one is given. The driver's linker takes none: the library
    /// refuses options with [`LinkBackend::Driver`](crate::LinkBackend::Driver), or with
    /// [`LinkBackend::Auto`](crate::LinkBackend::Auto) where nvJitLink is missing.
    pub fn option(mut self, option: impl Into<String>) -> Self {
        self.options.push(option.into());
        self
    }

    /// Adds several nvJitLink options.
    pub fn options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.extend(options.into_iter().map(Into::into));
        self
    }
}

impl Linker {
    /// A linker for `device`, the same as [`Device::create_linker`].
    /// [`LinkBackend::Nvjitlink`](crate::LinkBackend::Nvjitlink) where nvJitLink cannot be loaded is
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) listing every
    /// path tried.
    pub fn new(device: &Device, options: &LinkOptions) -> Result<Linker> {
        let option_strings = options.options.iter().map(String::as_str);
        let strings = CStrings::new(option_strings, |i, _| format!("link option {i}"))?;
        let mut desc: sys::cuabi_link_desc = init_struct()?;
        options.fields.write(&mut desc);
        (desc.options, desc.num_options) = (strings.ptrs.as_ptr(), strings.ptrs.len());
        let handle =
            unsafe { create(|out| sys::cuabi_linker_create(device.as_raw(), &desc, out))? };
        Ok(Linker { handle })
    }

    /// Links what was added and loads the result on the linker's device.
    /// A second call is refused: make a new linker to link again.
    pub fn link(&mut self) -> Result<Module> {
        let handle = unsafe { create(|out| sys::cuabi_linker_link(self.as_raw(), out))? };
        Ok(Module { handle })
    }

    /// [`link`](Self::link) on a thread of its own; [`Background::join`]
    /// gives the module and the linker back (for its [`log`](Self::log) and
    /// [`image`](Self::image)).
    pub fn link_in_background(mut self) -> Background<(Module, Linker)> {
        Background::spawn(move || {
            let module = self.link()?;
            Ok((module, self))
        })
    }
}

impl Library {
    /// Loads a CUBIN, PTX or fatbin image (from [`Program::cubin`](crate::types::Program::cubin),
    /// [`Linker::image`], a file's bytes).
    pub fn load(image: &[u8]) -> Result<Library> {
        Library::load_data(image)
    }
}

#[cfg(test)]
mod tests;
