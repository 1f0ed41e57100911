//! Run-time compilation with NVRTC.

use std::ffi::{c_char, CString};
use std::fmt;

use cuabi_sys as sys;

use crate::error::{c_string, check, read_blob, read_string, Result};
use crate::handle::{create, Owned};

/// An NVRTC program: CUDA C++ source compiled at run time to PTX or CUBIN.
///
/// Compiling needs NVRTC but no GPU. Load the result with
/// [`Device::load_ptx`](crate::Device::load_ptx) or
/// [`Device::load_module`](crate::Device::load_module), or go from source to
/// a module in one call, through the on-disk cache, with
/// [`Device::compile`](crate::Device::compile).
///
/// ```no_run
/// # fn main() -> cuabi::Result<()> {
/// let mut program = cuabi::Program::new(
///     "extern \"C\" __global__ void fill(float *p) { p[threadIdx.x] = 1.0f; }",
///     "fill.cu",
/// )?;
/// program.compile(&["--gpu-architecture=compute_90"])?;
/// let ptx = program.ptx()?;
/// assert!(ptx.contains(".entry fill"));
/// # Ok(())
/// # }
/// ```
pub struct Program {
    handle: Owned<sys::cuabi_program>,
}

impl Program {
    /// A program from `source`; `name` is the file name its diagnostics use.
    pub fn new(source: &str, name: &str) -> Result<Program> {
        Program::with_headers(source, name, &[])
    }

    /// A program from `source` that may `#include` the given headers, each
    /// given as `(include name, contents)`.
    pub fn with_headers(source: &str, name: &str, headers: &[(&str, &str)]) -> Result<Program> {
        let source = c_string("source", source)?;
        let name = c_string("name", name)?;
        let names = headers
            .iter()
            .enumerate()
            .map(|(i, (n, _))| c_string(&format!("header {i} name"), n))
            .collect::<Result<Vec<_>>>()?;
        let contents = headers
            .iter()
            .map(|(n, s)| c_string(&format!("contents of header {n:?}"), s))
            .collect::<Result<Vec<_>>>()?;
        let name_ptrs = pointers(&names);
        let content_ptrs = pointers(&contents);
        let handle = unsafe {
            create(|out| {
                sys::cuabi_program_create(
                    source.as_ptr(),
                    name.as_ptr(),
                    headers.len(),
                    content_ptrs.as_ptr(),
                    name_ptrs.as_ptr(),
                    out,
                )
            })?
        };
        Ok(Program { handle })
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_program {
        self.handle.get()
    }

    /// Registers a name expression (e.g. `"scale<float>"`) before compiling,
    /// so that [`Program::lowered_name`] can give its mangled name afterwards.
    pub fn add_name_expression(&mut self, expression: &str) -> Result<()> {
        let expression = c_string("name expression", expression)?;
        check(unsafe { sys::cuabi_program_add_name_expression(self.as_raw(), expression.as_ptr()) })
    }

    /// Compiles with NVRTC options (e.g. `"--gpu-architecture=sm_90"`,
    /// `"-std=c++17"`). An `sm_XY` architecture makes CUBIN, `compute_XY`
    /// makes PTX. A program compiles once.
    ///
    /// NVRTC's rejection is an [`ErrorKind::Compile`](crate::ErrorKind::Compile)
    /// error whose [`log`](crate::Error::log) holds the diagnostics;
    /// [`Program::log`] has the log either way.
    pub fn compile<S: AsRef<str>>(&mut self, options: &[S]) -> Result<()> {
        let options = options
            .iter()
            .enumerate()
            .map(|(i, o)| c_string(&format!("option {i}"), o.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let ptrs = pointers(&options);
        check(unsafe { sys::cuabi_program_compile(self.as_raw(), ptrs.len(), ptrs.as_ptr()) })
    }

    /// NVRTC's log of the compile (warnings, errors); empty before compiling.
    pub fn log(&self) -> Result<String> {
        read_string(|buf, size| unsafe { sys::cuabi_program_get_log(self.as_raw(), buf, size) })
    }

    /// The PTX; [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) when the
    /// compile made CUBIN instead (an `sm_XY` target).
    pub fn ptx(&self) -> Result<String> {
        read_string(|buf, size| unsafe { sys::cuabi_program_get_ptx(self.as_raw(), buf, size) })
    }

    /// The CUBIN; [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) when the
    /// compile made PTX instead (a `compute_XY` target).
    pub fn cubin(&self) -> Result<Vec<u8>> {
        read_blob(|buf, size| unsafe { sys::cuabi_program_get_cubin(self.as_raw(), buf, size) })
    }

    /// The lowered (mangled) name of an expression registered with
    /// [`Program::add_name_expression`], after compiling.
    pub fn lowered_name(&self, expression: &str) -> Result<String> {
        let expression = c_string("name expression", expression)?;
        read_string(|buf, size| unsafe {
            sys::cuabi_program_get_lowered_name(self.as_raw(), expression.as_ptr(), buf, size)
        })
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("handle", &self.as_raw())
            .finish()
    }
}

/// What [`Device::compile`](crate::Device::compile) produces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Output {
    /// Machine code for the device's own `sm_XY`; nothing is JIT-compiled at load.
    #[default]
    Cubin,
    /// PTX for `compute_XY`; the driver JIT-compiles it at load.
    Ptx,
}

/// What to compile with [`Device::compile`](crate::Device::compile), besides
/// the source: a builder.
///
/// ```
/// let options = cuabi::CompileOptions::new()
///     .name("saxpy.cu")
///     .option("--fmad=false")
///     .header("params.h", "#define BLOCK 512\n")
///     .name_expression("scale<float>")
///     .output(cuabi::Output::Ptx);
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    pub(crate) name: Option<String>,
    pub(crate) options: Vec<String>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) name_expressions: Vec<String>,
    pub(crate) output: Output,
    pub(crate) no_cache: bool,
}

impl CompileOptions {
    /// No options: CUBIN for the device's architecture, through the cache.
    pub fn new() -> CompileOptions {
        CompileOptions::default()
    }

    /// The file name diagnostics use (default `cuabi_program.cu`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds one NVRTC option, e.g. `"-std=c++17"`. Without an
    /// `--gpu-architecture` option the device's own architecture is used.
    pub fn option(mut self, option: impl Into<String>) -> Self {
        self.options.push(option.into());
        self
    }

    /// Adds several NVRTC options.
    pub fn options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.extend(options.into_iter().map(Into::into));
        self
    }

    /// Adds a header the source may `#include` by `include_name`.
    pub fn header(mut self, include_name: impl Into<String>, contents: impl Into<String>) -> Self {
        self.headers.push((include_name.into(), contents.into()));
        self
    }

    /// Adds a name expression (e.g. `"scale<float>"`); the module then finds
    /// the kernel by it ([`Module::function`](crate::Module::function)).
    pub fn name_expression(mut self, expression: impl Into<String>) -> Self {
        self.name_expressions.push(expression.into());
        self
    }

    /// CUBIN (the default) or PTX.
    pub fn output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }

    /// Neither reads nor writes the on-disk cache for this compile.
    pub fn no_cache(mut self) -> Self {
        self.no_cache = true;
        self
    }
}

/// The C strings of a [`CompileOptions`], alive while the descriptor is used.
pub(crate) struct CompileDesc {
    _strings: Vec<CString>,
    _arrays: [Vec<*const c_char>; 4],
    pub(crate) desc: sys::cuabi_compile_desc,
}

impl CompileDesc {
    pub(crate) fn new(source: &str, opts: &CompileOptions) -> Result<CompileDesc> {
        let source = c_string("source", source)?;
        let name = opts
            .name
            .as_deref()
            .map(|n| c_string("name", n))
            .transpose()?;
        let list = |what: &str, items: &mut dyn Iterator<Item = &String>| {
            items
                .enumerate()
                .map(|(i, s)| c_string(&format!("{what} {i}"), s))
                .collect::<Result<Vec<_>>>()
        };
        let options = list("option", &mut opts.options.iter())?;
        let header_names = list("header name", &mut opts.headers.iter().map(|(n, _)| n))?;
        let header_sources = list("header contents", &mut opts.headers.iter().map(|(_, s)| s))?;
        let expressions = list("name expression", &mut opts.name_expressions.iter())?;

        let arrays = [
            pointers(&options),
            pointers(&header_sources),
            pointers(&header_names),
            pointers(&expressions),
        ];
        let mut desc = sys::cuabi_compile_desc_init();
        desc.source = source.as_ptr();
        desc.name = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        desc.options = arrays[0].as_ptr();
        desc.num_options = arrays[0].len();
        desc.header_sources = arrays[1].as_ptr();
        desc.header_names = arrays[2].as_ptr();
        desc.num_headers = arrays[1].len();
        desc.name_expressions = arrays[3].as_ptr();
        desc.num_name_expressions = arrays[3].len();
        desc.output = match opts.output {
            Output::Cubin => sys::CUABI_OUTPUT_CUBIN,
            Output::Ptx => sys::CUABI_OUTPUT_PTX,
        } as sys::cuabi_output;
        desc.flags = if opts.no_cache {
            sys::CUABI_COMPILE_NO_CACHE
        } else {
            0
        };

        // The CStrings' heap buffers do not move when the CStrings are moved.
        let mut strings = vec![source];
        strings.extend(name);
        for group in [options, header_names, header_sources, expressions] {
            strings.extend(group);
        }
        Ok(CompileDesc {
            _strings: strings,
            _arrays: arrays,
            desc,
        })
    }
}

fn pointers(strings: &[CString]) -> Vec<*const c_char> {
    strings.iter().map(|s| s.as_ptr()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    unsafe fn strings(ptrs: *const *const c_char, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| CStr::from_ptr(*ptrs.add(i)).to_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn compile_desc_carries_every_option() {
        let opts = CompileOptions::new()
            .name("k.cu")
            .options(["-std=c++17", "--fmad=false"])
            .header("a.h", "#define A 1")
            .header("b.h", "#define B 2")
            .name_expression("scale<float>")
            .output(Output::Ptx)
            .no_cache();
        let d = CompileDesc::new("__global__ void k() {}", &opts).unwrap();
        let desc = &d.desc;
        assert_eq!(
            desc.struct_size,
            std::mem::size_of::<sys::cuabi_compile_desc>()
        );
        unsafe {
            assert_eq!(
                CStr::from_ptr(desc.source).to_str().unwrap(),
                "__global__ void k() {}"
            );
            assert_eq!(CStr::from_ptr(desc.name).to_str().unwrap(), "k.cu");
            assert_eq!(
                strings(desc.options, desc.num_options),
                ["-std=c++17", "--fmad=false"]
            );
            assert_eq!(strings(desc.header_names, desc.num_headers), ["a.h", "b.h"]);
            assert_eq!(
                strings(desc.header_sources, desc.num_headers),
                ["#define A 1", "#define B 2"]
            );
            assert_eq!(
                strings(desc.name_expressions, desc.num_name_expressions),
                ["scale<float>"]
            );
        }
        assert_eq!(desc.output, sys::CUABI_OUTPUT_PTX as i32);
        assert_eq!(desc.flags, sys::CUABI_COMPILE_NO_CACHE);
    }

    #[test]
    fn compile_desc_defaults() {
        let d = CompileDesc::new("x", &CompileOptions::new()).unwrap();
        assert!(d.desc.name.is_null());
        assert_eq!(d.desc.num_options, 0);
        assert_eq!(d.desc.num_headers, 0);
        assert_eq!(d.desc.output, sys::CUABI_OUTPUT_CUBIN as i32);
        assert_eq!(d.desc.flags, 0);
    }

    #[test]
    fn compile_desc_names_a_bad_string() {
        let opts = CompileOptions::new().option("-O3").option("-D\0X");
        let Err(err) = CompileDesc::new("x", &opts) else {
            panic!("a NUL byte in an option was accepted");
        };
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(err.message().contains("option 1"), "{err}");
    }
}
