//! The CUDA toolkit's stub libcuda: recognised and refused as such.
//!
//! One test in its own binary, because the library remembers how the first
//! driver load went for the whole process.

use std::io::Write;
use std::path::PathBuf;

use cuabi::{Device, ErrorKind};

fn stub_driver() -> Option<PathBuf> {
    let homes = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .chain([PathBuf::from("/usr/local/cuda")]);
    homes
        .flat_map(|home| {
            [
                home.join("lib64/stubs/libcuda.so"),
                home.join("targets/x86_64-linux/lib/stubs/libcuda.so"),
            ]
        })
        .find(|p| p.is_file())
}

#[test]
fn the_stub_driver_is_refused_as_a_stub() {
    let Some(stub) = stub_driver() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the_stub_driver_is_refused_as_a_stub: no CUDA toolkit stub libcuda.so found"
        );
        return;
    };
    std::env::set_var("CUABI_DRIVER_PATH", &stub);

    let err = cuabi::init().expect_err("the stub cannot run anything");
    assert_eq!(err.kind(), ErrorKind::StubDriver, "{err}");
    assert_eq!(err.name(), "CUABI_ERROR_STUB_DRIVER");
    let err = Device::count().expect_err("count through the stub");
    assert_eq!(err.kind(), ErrorKind::StubDriver, "{err}");
}
