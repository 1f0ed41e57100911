//! Run-time compilation with NVRTC.

use std::ffi::{c_char, CString};

use cuabi_sys as sys;

use crate::error::{c_string, check, read_list, read_string, Result};
use crate::handle::{as_raw, create, Owned};
use crate::{CompileFlags, Output};

as_raw!(Program => sys::cuabi_program);

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
#[derive(Debug)]
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
        let names = CStrings::new(headers.iter().map(|h| h.0), |i, _| {
            format!("header {i} name")
        })?;
        let contents = headers.iter().map(|h| h.1);
        let contents = CStrings::new(contents, |i, _| {
            format!("contents of header {:?}", headers[i].0)
        })?;
        let handle = unsafe {
            create(|out| {
                sys::cuabi_program_create(
                    source.as_ptr(),
                    name.as_ptr(),
                    headers.len(),
                    contents.ptrs.as_ptr(),
                    names.ptrs.as_ptr(),
                    out,
                )
            })?
        };
        Ok(Program { handle })
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
        let options = CStrings::new(options.iter().map(S::as_ref), |i, _| format!("option {i}"))?;
        let (count, ptrs) = (options.ptrs.len(), options.ptrs.as_ptr());
        check(unsafe { sys::cuabi_program_compile(self.as_raw(), count, ptrs) })
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
        read_list(0u8, 0, |buf, size| unsafe {
            sys::cuabi_program_get_cubin(self.as_raw(), buf.cast(), size)
        })
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
    pub(crate) flags: CompileFlags,
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
        self.flags |= CompileFlags::NO_CACHE;
        self
    }
}

/// C strings and the array of their pointers, alive together.
pub(crate) struct CStrings {
    // The CStrings' heap buffers do not move when the CStrings are moved.
    _strings: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStrings {
    /// The C strings of `items`, or an error naming item `i` by `what(i, item)`
    /// when it holds a NUL byte.
    fn new<'s>(
        items: impl IntoIterator<Item = &'s str>,
        what: impl Fn(usize, &str) -> String,
    ) -> Result<CStrings> {
        let items = items.into_iter().enumerate();
        let strings = items
            .map(|(i, s)| c_string(&what(i, s), s))
            .collect::<Result<Vec<_>>>()?;
        let ptrs = strings.iter().map(|s| s.as_ptr()).collect();
        Ok(CStrings {
            _strings: strings,
            ptrs,
        })
    }
}

/// The C strings of a [`CompileOptions`], alive while the descriptor is used.
pub(crate) struct CompileDesc {
    _strings: [CStrings; 4],
    _text: (CString, Option<CString>),
    pub(crate) desc: sys::cuabi_compile_desc,
}

impl CompileDesc {
    pub(crate) fn new(source: &str, opts: &CompileOptions) -> Result<CompileDesc> {
        let source = c_string("source", source)?;
        let name = opts.name.as_deref().map(|n| c_string("name", n));
        let name = name.transpose()?;
        let numbered = |what: &'static str| move |i, _: &str| format!("{what} {i}");
        let options = CStrings::new(opts.options.iter().map(String::as_str), numbered("option"))?;
        let headers = opts.headers.iter();
        let names = CStrings::new(
            headers.clone().map(|h| h.0.as_str()),
            numbered("header name"),
        )?;
        let sources = headers.map(|h| h.1.as_str());
        let sources = CStrings::new(sources, numbered("header contents"))?;
        let expressions = opts.name_expressions.iter().map(String::as_str);
        let expressions = CStrings::new(expressions, numbered("name expression"))?;

        // SAFETY: pointers and integers, for which zero is a value; the
        // library fills in its defaults.
        let mut desc: sys::cuabi_compile_desc = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<sys::cuabi_compile_desc>();
        check(unsafe { sys::cuabi_compile_desc_init(&mut desc, size) })?;
        desc.source = source.as_ptr();
        desc.name = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        (desc.options, desc.num_options) = (options.ptrs.as_ptr(), options.ptrs.len());
        desc.header_sources = sources.ptrs.as_ptr();
        desc.header_names = names.ptrs.as_ptr();
        desc.num_headers = names.ptrs.len();
        desc.name_expressions = expressions.ptrs.as_ptr();
        desc.num_name_expressions = expressions.ptrs.len();
        desc.output = opts.output.raw();
        desc.flags = opts.flags.bits();
        Ok(CompileDesc {
            _strings: [options, names, sources, expressions],
            _text: (source, name),
            desc,
        })
    }
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
        assert_eq!(desc.output, sys::CUABI_OUTPUT_PTX);
        assert_eq!(desc.flags, sys::CUABI_COMPILE_NO_CACHE);
    }

    #[test]
    fn compile_desc_defaults() {
        let d = CompileDesc::new("x", &CompileOptions::new()).unwrap();
        assert!(d.desc.name.is_null());
        assert_eq!(d.desc.num_options, 0);
        assert_eq!(d.desc.num_headers, 0);
        assert_eq!(d.desc.output, sys::CUABI_OUTPUT_CUBIN);
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
