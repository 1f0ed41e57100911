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
    assert_eq!(err.kind(), crate::generated::ErrorKind::InvalidArgument);
    assert!(err.message().contains("option 1"), "{err}");
}
