//! A driver path that does not exist: every device call answers
//! DRIVER_NOT_FOUND naming the path, and compiling still works.
//!
//! One test in its own binary, because the library remembers how the first
//! driver load went for the whole process.

use cuabi::{Device, ErrorKind, Program};

#[test]
fn a_missing_driver_is_reported_with_the_path_tried() {
    let path = "/nonexistent/cuabi-test/libcuda.so.1";
    std::env::set_var("CUABI_DRIVER_PATH", path);

    let err = cuabi::init().expect_err("no driver at that path");
    assert_eq!(err.kind(), ErrorKind::DriverNotFound, "{err}");
    assert_eq!(err.name(), "CUABI_ERROR_DRIVER_NOT_FOUND");
    assert!(
        err.message().contains(path),
        "the message names the path: {err}"
    );
    assert_eq!(err.log(), None);

    for err in [
        Device::count().expect_err("count"),
        Device::get(0).expect_err("get"),
        cuabi::driver_version().expect_err("driver version"),
    ] {
        assert_eq!(err.kind(), ErrorKind::DriverNotFound, "{err}");
        assert!(err.message().contains(path), "{err}");
    }

    // NVRTC needs no driver.
    let mut program = Program::new("extern \"C\" __global__ void k() {}", "k.cu").unwrap();
    program.compile(&["--gpu-architecture=compute_75"]).unwrap();
    assert!(program.ptx().unwrap().contains(".entry k"));
}
