//! Run-time compilation with NVRTC, and compile options as values.

use std::ffi::{c_char, CString};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use cuabi_sys as sys;

use crate::background::Background;
use crate::error::{c_string, check, create, init_struct, Error, Result};
use crate::generated::{CompileFlags, CxxStandard, Output};
use crate::objects::CompileOptionsFields;
use crate::types::Program;

impl Program {
    /// A program from `source`; `name` is the file name its diagnostics use.
    pub fn new(source: &str, name: &str) -> Result<Program> {
        Program::with_headers(source, name, &[])
    }

    /// A program from `source` that may `#include` the given headers, each
    /// given as `(include name, contents)`.
    pub fn with_headers(source: &str, name: &str, headers: &[(&str, &str)]) -> Result<Program> {
        Program::create(source, Some(name), headers)
    }

    /// A program from `source` with the file name, headers and name
    /// expressions of `options` (see [`CompileOptions`]); compile it with
    /// [`Program::compile_with`], which reads the rest.
    ///
    /// ```
    /// # fn main() -> cuabi::Result<()> {
    /// use cuabi::{Arch, CompileOptions, CppStd, Program};
    /// let options = CompileOptions::new()
    ///     .name("scale.cu")
    ///     .header("scale.h", "#define FACTOR 3\n")
    ///     .name_expression("scale<float>")
    ///     .arch(Arch::Compute(90))
    ///     .std(CppStd::Cpp17)
    ///     .define("OFFSET", 1);
    /// let mut program = Program::with_options(
    ///     "#include \"scale.h\"\n\
    ///      template <typename T> __global__ void scale(T *x) { x[0] = x[0] * FACTOR + OFFSET; }\n",
    ///     &options,
    /// )?;
    /// program.compile_with(&options)?;
    /// assert!(program.ptx()?.contains(&program.lowered_name("scale<float>")?));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_options(source: &str, options: &CompileOptions) -> Result<Program> {
        let headers: Vec<(&str, &str)> = options
            .headers
            .iter()
            .map(|(name, contents)| (name.as_str(), contents.as_str()))
            .collect();
        let program = Program::create(source, options.name.as_deref(), &headers)?;
        for expression in &options.name_expressions {
            program.add_name_expression(expression)?;
        }
        Ok(program)
    }

    /// `cuabi_program_create`; `name` `None` is the library's default name.
    fn create(source: &str, name: Option<&str>, headers: &[(&str, &str)]) -> Result<Program> {
        let source = c_string("source", source)?;
        let name = name.map(|name| c_string("name", name)).transpose()?;
        let names = CStrings::new(headers.iter().map(|h| h.0), |i, _| {
            format!("header {i} name")
        })?;
        let contents = headers.iter().map(|h| h.1);
        let contents = CStrings::new(contents, |i, _| {
            format!("contents of header {:?}", headers[i].0)
        })?;
        let name = name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr());
        let handle = unsafe {
            create(|out| {
                sys::cuabi_program_create(
                    source.as_ptr(),
                    name,
                    headers.len(),
                    contents.ptrs.as_ptr(),
                    names.ptrs.as_ptr(),
                    out,
                )
            })?
        };
        Ok(Program { handle })
    }

    /// Compiles with raw NVRTC options (e.g. `"--gpu-architecture=sm_90"`,
    /// `"--std=c++17"`), passed as they are; [`Program::compile_with`] takes
    /// them as values. An `sm_XY` architecture makes CUBIN, `compute_XY`
    /// makes PTX. A program compiles once.
    ///
    /// NVRTC's rejection is an [`ErrorKind::Compile`](crate::generated::ErrorKind::Compile)
    /// error whose [`log`](crate::Error::log) holds the diagnostics;
    /// [`Program::log`] has the log either way.
    pub fn compile<S: AsRef<str>>(&mut self, options: &[S]) -> Result<()> {
        let options = CStrings::new(options.iter().map(S::as_ref), |i, _| format!("option {i}"))?;
        let (count, ptrs) = (options.ptrs.len(), options.ptrs.as_ptr());
        check(unsafe { sys::cuabi_program_compile(self.as_raw(), count, ptrs) })
    }

    /// Compiles with `options` (`cuabi_program_compile_with`): the library
    /// turns its typed options into NVRTC options and checks them, then adds
    /// the raw ones. Its file name, headers and name expressions are the
    /// program's own (given to [`Program::with_options`]); its output and
    /// cache flag concern [`Device::compile`](crate::Device::compile) only.
    /// Without an [`arch`](CompileOptions::arch) (or a raw
    /// `--gpu-architecture`) NVRTC compiles for its default virtual
    /// architecture.
    ///
    /// A value the library refuses (a define that is no macro definition, a
    /// C++ standard it does not know, an empty include path) is an
    /// `InvalidArgument` error naming the field and index
    /// (`desc->defines[1]`), before NVRTC runs; the rule is the library's,
    /// the same in every language.
    pub fn compile_with(&mut self, options: &CompileOptions) -> Result<()> {
        let desc = CompileDesc::options_only(options)?;
        check(unsafe { sys::cuabi_program_compile_with(self.as_raw(), &desc.desc) })
    }

    /// Compiles on a thread of its own and gives the program back through
    /// [`Background::join`], so the calling thread keeps working meanwhile
    /// (a compile takes tens of milliseconds or more). The same as moving
    /// the program to a thread and calling [`Program::compile_with`]; a
    /// failed compile's [`Error`] carries NVRTC's [`log`](Error::log).
    ///
    /// ```no_run
    /// # fn main() -> cuabi::Result<()> {
    /// use cuabi::{Arch, CompileOptions, Program};
    /// let options = CompileOptions::new().arch(Arch::Sm(90));
    /// let program = Program::with_options("extern \"C\" __global__ void k() {}", &options)?;
    /// let compiling = program.compile_in_background(&options);
    /// // ... other work on this thread ...
    /// let cubin = compiling.join()?.cubin()?;
    /// # let _ = cubin;
    /// # Ok(())
    /// # }
    /// ```
    pub fn compile_in_background(mut self, options: &CompileOptions) -> Background<Program> {
        let options = options.clone();
        Background::spawn(move || {
            self.compile_with(&options)?;
            Ok(self)
        })
    }
}

/// What to compile: NVRTC's options as typed values and as raw strings,
/// and, for [`Device::compile`](crate::Device::compile) and
/// [`Program::with_options`], the file name, headers and name expressions. A
/// builder.
///
/// ```
/// use cuabi::{Arch, CompileOptions, CppStd};
/// let options = CompileOptions::new()
///     .name("saxpy.cu")
///     .arch(Arch::Sm(90))
///     .std(CppStd::Cpp17)
///     .define("BLOCK", 512)
///     .define_flag("USE_FMA")
///     .define("SQUARE(x)", "((x)*(x))")
///     .include_path("/opt/include")
///     .fast_math(true)
///     .line_info(true)
///     .rdc(true)
///     .option("--fmad=false") // any NVRTC option, as a string
///     .header("params.h", "#define SCALE 2\n")
///     .name_expression("scale<float>")
///     .output(cuabi::Output::Cubin);
/// ```
///
/// Each typed option is handed to its field of the library's compile
/// description (`cuabi_compile_desc`): the library spells the NVRTC option
/// and decides which values are valid, the same in every language, and
/// refuses a bad one with an `InvalidArgument` error naming the field and
/// index (`desc->defines[0] "2X=1" is no macro definition: ...`). The raw
/// options follow the typed ones. What NVRTC itself refuses is a
/// `Compile` error with its log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    pub(crate) name: Option<String>,
    pub(crate) options: Vec<String>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) name_expressions: Vec<String>,
    pub(crate) output: Output,
    pub(crate) flags: CompileFlags,
    arch: Option<Arch>,
    std: Option<CppStd>,
    defines: Vec<(String, Option<String>)>,
    include_paths: Vec<PathBuf>,
    pub(crate) fields: CompileOptionsFields,
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

    /// The architecture to compile for: [`Arch::Sm`] makes CUBIN,
    /// [`Arch::Compute`] PTX. Without one,
    /// [`Device::compile`](crate::Device::compile) targets the device's own.
    pub fn arch(mut self, arch: Arch) -> Self {
        self.arch = Some(arch);
        self
    }

    /// The C++ standard ([`CppStd::Cpp17`], or the generated
    /// [`CxxStandard`](crate::CxxStandard)); NVRTC's default without it.
    pub fn std(mut self, std: impl Into<CppStd>) -> Self {
        self.std = Some(std.into());
        self
    }

    /// Defines the macro `name` as `value` (`name=value`): `define("N", 256)`,
    /// `define("T", "float")`. `name` may be a function-like macro's,
    /// `"SQUARE(x)"` or `"LOG(...)"`; the library checks it.
    pub fn define(mut self, name: impl Into<String>, value: impl fmt::Display) -> Self {
        self.defines.push((name.into(), Some(value.to_string())));
        self
    }

    /// Defines the macro `name` without a value, for `#ifdef name`.
    pub fn define_flag(mut self, name: impl Into<String>) -> Self {
        self.defines.push((name.into(), None));
        self
    }

    /// Adds a folder `#include` searches, after the
    /// headers given with [`header`](Self::header).
    pub fn include_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.include_paths.push(path.into());
        self
    }

    /// Adds one NVRTC option as a string, e.g. `"--fmad=false"`, after the
    /// typed ones. Without an `--gpu-architecture` option (or an
    /// [`arch`](Self::arch)) [`Device::compile`](crate::Device::compile)
    /// uses the device's own architecture.
    pub fn option(mut self, option: impl Into<String>) -> Self {
        self.options.push(option.into());
        self
    }

    /// Adds several NVRTC options as strings.
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

    /// CUBIN (the default) or PTX, for [`Device::compile`](crate::Device::compile)
    /// when no architecture is given.
    pub fn output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }
}

/// A GPU architecture to compile for: [`CompileOptions::arch`].
///
/// The number is the compute capability as `major * 10 + minor`: 90 for
/// 9.0, 120 for 12.0. `"sm_90".parse::<Arch>()` reads NVRTC's spelling;
/// architecture-specific targets (`sm_90a`, `sm_100f`) are given as raw
/// options (`CompileOptions::option("--gpu-architecture=sm_90a")`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Machine code for a real architecture, `sm_XY`: NVRTC makes CUBIN,
    /// which loads without JIT on devices of that compute capability.
    Sm(u32),
    /// A virtual architecture, `compute_XY`: NVRTC makes PTX, which the
    /// driver JIT-compiles at load for any device of that capability or newer.
    Compute(u32),
}

impl Arch {
    /// The real architecture of compute capability `major.minor`, as
    /// [`Device::compute_capability`](crate::Device::compute_capability)
    /// answers it: `Arch::from_capability(9, 0)` is `sm_90`.
    pub fn from_capability(major: i32, minor: i32) -> Arch {
        let number = major.max(0) as u32 * 10 + minor.max(0) as u32;
        Arch::Sm(number)
    }

    /// The compute capability number (`major * 10 + minor`).
    pub fn number(self) -> u32 {
        match self {
            Arch::Sm(n) | Arch::Compute(n) => n,
        }
    }
}

/// `sm_90`, `compute_90`: the architecture's name.
impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arch::Sm(n) => write!(f, "sm_{n}"),
            Arch::Compute(n) => write!(f, "compute_{n}"),
        }
    }
}

/// Reads `sm_XY` or `compute_XY` (two or more digits); anything else is
/// [`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument) naming
/// the text.
impl FromStr for Arch {
    type Err = Error;

    fn from_str(text: &str) -> Result<Arch> {
        let parsed = if let Some(digits) = text.strip_prefix("sm_") {
            Some((Arch::Sm as fn(u32) -> Arch, digits))
        } else {
            text.strip_prefix("compute_")
                .map(|digits| (Arch::Compute as fn(u32) -> Arch, digits))
        };
        let arch = parsed.and_then(|(make, digits)| {
            let all_digits = digits.len() >= 2 && digits.bytes().all(|b| b.is_ascii_digit());
            all_digits.then(|| digits.parse().ok().map(make)).flatten()
        });
        arch.ok_or_else(|| {
            Error::invalid(format!(
                "architecture {text:?} is not sm_XY or compute_XY (e.g. sm_90); give \
                 architecture-specific targets such as sm_90a as a raw option"
            ))
        })
    }
}

/// A C++ standard for [`CompileOptions::std`]: the standard's year, as the
/// library's `cuabi_cxx_standard` takes it (17 for C++17).
///
/// The library decides which standards exist: a value it does not know
/// (`"c++18".parse::<CppStd>()`, `CppStd(23)`) is refused when a compile
/// reads it, with an `InvalidArgument` error naming `desc->cxx_standard`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CppStd(pub i32);

impl From<CxxStandard> for CppStd {
    fn from(std: CxxStandard) -> CppStd {
        CppStd(std.raw() as i32)
    }
}

/// `c++17`.
impl fmt::Display for CppStd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c++{:02}", self.0)
    }
}

/// Reads `c++NN` as the standard NN, whether the library knows it or not
/// (it says so when a compile reads it); text of another form is
/// `InvalidArgument` naming it.
impl FromStr for CppStd {
    type Err = Error;

    fn from_str(text: &str) -> Result<CppStd> {
        let year = text
            .strip_prefix("c++")
            .filter(|d| !d.is_empty() && d.len() <= 4 && d.bytes().all(|b| b.is_ascii_digit()));
        year.and_then(|d| d.parse().ok())
            .map(CppStd)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "C++ standard {text:?}: a standard is written c++NN (e.g. c++17)"
                ))
            })
    }
}

/// C strings and the array of their pointers, alive together.
pub(crate) struct CStrings {
    // The CStrings' heap buffers do not move when the CStrings are moved.
    _strings: Vec<CString>,
    pub(crate) ptrs: Vec<*const c_char>,
}

impl CStrings {
    /// The C strings of `items`, or an error naming item `i` by `what(i, item)`
    /// when it holds a NUL byte.
    pub(crate) fn new<'s>(
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
    _strings: Vec<CStrings>,
    _text: Vec<CString>,
    pub(crate) desc: sys::cuabi_compile_desc,
}

impl CompileDesc {
    /// The description of compiling `source` with `opts`, for
    /// [`Device::compile`](crate::Device::compile).
    pub(crate) fn new(source: &str, opts: &CompileOptions) -> Result<CompileDesc> {
        let source = c_string("source", source)?;
        let name = opts.name.as_deref().map(|n| c_string("name", n));
        let name = name.transpose()?;
        let numbered = |what: &'static str| move |i, _: &str| format!("{what} {i}");
        let headers = opts.headers.iter();
        let names = CStrings::new(
            headers.clone().map(|h| h.0.as_str()),
            numbered("header name"),
        )?;
        let sources = headers.map(|h| h.1.as_str());
        let sources = CStrings::new(sources, numbered("header contents"))?;
        let expressions = opts.name_expressions.iter().map(String::as_str);
        let expressions = CStrings::new(expressions, numbered("name expression"))?;
        let mut desc = CompileDesc::options_only(opts)?;
        let d = &mut desc.desc;
        d.source = source.as_ptr();
        d.name = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        d.header_sources = sources.ptrs.as_ptr();
        d.header_names = names.ptrs.as_ptr();
        d.num_headers = names.ptrs.len();
        d.name_expressions = expressions.ptrs.as_ptr();
        d.num_name_expressions = expressions.ptrs.len();
        d.output = opts.output.raw();
        d.flags = opts.flags.bits();
        desc._strings.extend([names, sources, expressions]);
        desc._text.push(source);
        desc._text.extend(name);
        Ok(desc)
    }

    /// The description holding only the options of `opts` (the typed
    /// fields and the raw options), for
    /// [`Program::compile_with`]. The values are handed over as they are:
    /// the library checks them.
    pub(crate) fn options_only(opts: &CompileOptions) -> Result<CompileDesc> {
        let numbered = |what: &'static str| move |i, _: &str| format!("{what} {i}");
        let options = CStrings::new(opts.options.iter().map(String::as_str), numbered("option"))?;
        let defines: Vec<String> = opts
            .defines
            .iter()
            .map(|(name, value)| match value {
                Some(value) => format!("{name}={value}"),
                None => name.clone(),
            })
            .collect();
        let defines = CStrings::new(defines.iter().map(String::as_str), |i, _| {
            format!("define {:?}", opts.defines[i].0)
        })?;
        let paths = opts
            .include_paths
            .iter()
            .map(|p| {
                p.to_str()
                    .ok_or_else(|| Error::invalid(format!("include path {p:?} is not UTF-8")))
            })
            .collect::<Result<Vec<&str>>>()?;
        let paths = CStrings::new(paths, |_, p| format!("include path {p:?}"))?;
        let arch = opts.arch.map(|a| c_string("architecture", &a.to_string()));
        let arch = arch.transpose()?;

        let mut desc: sys::cuabi_compile_desc = init_struct()?;
        (desc.options, desc.num_options) = (options.ptrs.as_ptr(), options.ptrs.len());
        desc.arch = arch.as_ref().map_or(std::ptr::null(), |a| a.as_ptr());
        desc.cxx_standard = opts
            .std
            .map_or(sys::CUABI_STD_DEFAULT, |s| s.0 as sys::cuabi_cxx_standard);
        (desc.defines, desc.num_defines) = (defines.ptrs.as_ptr(), defines.ptrs.len());
        desc.include_paths = paths.ptrs.as_ptr();
        desc.num_include_paths = paths.ptrs.len();
        opts.fields.write(&mut desc);
        Ok(CompileDesc {
            _strings: vec![options, defines, paths],
            _text: arch.into_iter().collect(),
            desc,
        })
    }
}

#[cfg(test)]
mod tests;
