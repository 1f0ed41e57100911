//! Gives this crate's tests and examples an rpath to libcuabi, and passes the
//! folder on to dependents as `DEP_CUABI_RS_LIB_DIR`.

use std::env;

fn main() {
    // Set by cuabi-sys's build script (its `links = "cuabi"`).
    let Some(lib_dir) = env::var_os("DEP_CUABI_LIB_DIR") else {
        return;
    };
    let lib_dir = lib_dir.to_string_lossy();
    println!("cargo:lib_dir={lib_dir}");
    match env::var("CARGO_CFG_TARGET_OS").unwrap_or_default().as_str() {
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" => {
            // RUNPATH, so LD_LIBRARY_PATH still takes precedence.
            println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{lib_dir}");
        }
        "macos" | "ios" => println!("cargo:rustc-link-arg=-Wl,-rpath,{lib_dir}"),
        _ => {}
    }
}
