//! Finds or builds libcuabi and tells rustc how to link it.
//!
//! * `CUABI_LIB_DIR` set (an absolute path): link the library in that folder.
//! * otherwise: build the C library from `libcuabi/` in this crate with
//!   `cmake` into `OUT_DIR` (the library alone: no tests, examples or tools)
//!   and link it statically (`libcuabi_static.a`, with the C++ runtime): a
//!   program built this way needs no libcuabi.so at run time and runs from
//!   any folder, with only the CUDA driver (and NVRTC to compile) installed. In the repository `libcuabi/` holds links to its
//!   `CMakeLists.txt`, `capi/`, `include/` and `cmake/`; `cargo package`
//!   stores the files themselves, so the packaged crate builds anywhere with
//!   CMake, a C++17 compiler and the CUDA toolkit's headers.
//!
//! Dependents that name `cuabi-sys` directly read the folder from
//! `DEP_CUABI_LIB_DIR` (and the header folder from `DEP_CUABI_INCLUDE`).

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the crate carries of the C library, relative to its `libcuabi/`.
const SOURCES: [&str; 4] = ["CMakeLists.txt", "capi", "include", "cmake"];

fn main() {
    println!("cargo:rerun-if-env-changed=CUABI_LIB_DIR");
    println!("cargo:rerun-if-env-changed=CMAKE");

    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let sources = manifest_dir.join("libcuabi");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // The file the linker needs: the shared library, or its import library.
    let lib_file = match target_os.as_str() {
        "windows" => "cuabi.lib",
        "macos" | "ios" => "libcuabi.dylib",
        _ => "libcuabi.so",
    };

    let given = env::var_os("CUABI_LIB_DIR").filter(|dir| !dir.is_empty());
    let static_link = given.is_none() && target_os == "linux";
    let lib_dir = match given {
        Some(dir) => given_library(PathBuf::from(dir), lib_file),
        None => build_with_cmake(&sources, lib_file, static_link),
    };
    let lib_dir = fs::canonicalize(&lib_dir).unwrap_or(lib_dir);

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    if static_link {
        println!("cargo:rustc-link-lib=static=cuabi_static");
        for system in ["stdc++", "dl", "pthread"] {
            println!("cargo:rustc-link-lib=dylib={system}");
        }
    } else {
        println!("cargo:rustc-link-lib=dylib=cuabi");
    }
    println!("cargo:lib_dir={}", lib_dir.display());
    let include = sources.join("include");
    let include = fs::canonicalize(&include).unwrap_or(include);
    println!("cargo:include={}", include.display());

    // This crate's own test binaries (the layout tests) find the library
    // without LD_LIBRARY_PATH. RUNPATH, not RPATH: LD_LIBRARY_PATH still wins.
    match target_os.as_str() {
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" => {
            let dir = lib_dir.display();
            println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{dir}");
        }
        "macos" | "ios" => println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display()),
        _ => {}
    }
}

fn given_library(dir: PathBuf, lib_file: &str) -> PathBuf {
    if dir.is_relative() {
        // Build scripts run in the package folder, not where cargo was started.
        panic!(
            "CUABI_LIB_DIR must be an absolute path, not {}",
            dir.display()
        );
    }
    let file = dir.join(lib_file);
    if !file.is_file() {
        panic!(
            "CUABI_LIB_DIR is {}, but {} is not there; build the core first \
             (cmake -S . -B build && cmake --build build) or unset CUABI_LIB_DIR \
             to let this crate build it",
            dir.display(),
            file.display()
        );
    }
    println!("cargo:rerun-if-changed={}", file.display());
    dir
}

fn build_with_cmake(sources: &Path, lib_file: &str, static_link: bool) -> PathBuf {
    let missing: Vec<&str> = SOURCES
        .iter()
        .copied()
        .filter(|item| !sources.join(item).exists())
        .collect();
    if !missing.is_empty() || !sources.join("include/cuabi/cuabi.h").is_file() {
        panic!(
            "cannot build libcuabi: {} lacks the C library's sources ({}); set CUABI_LIB_DIR \
             to the folder that holds a built {lib_file}",
            sources.display(),
            if missing.is_empty() {
                "include/cuabi/cuabi.h".to_string()
            } else {
                missing.join(", ")
            }
        );
    }
    // The real paths: in the repository libcuabi/ holds links.
    let sources = fs::canonicalize(sources.join("CMakeLists.txt"))
        .ok()
        .and_then(|file| file.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| sources.to_path_buf());
    for watched in SOURCES {
        println!("cargo:rerun-if-changed={}", sources.join(watched).display());
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let build_dir = out_dir.join("cuabi-cmake");
    let cmake = env::var_os("CMAKE").unwrap_or_else(|| OsString::from("cmake"));
    let source = [
        OsString::from("-S"),
        sources.into(),
        "-B".into(),
        build_dir.clone().into(),
    ];
    let options = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCUABI_BUILD_TESTS=OFF",
        "-DCUABI_BUILD_EXAMPLES=OFF",
        "-DCUABI_BUILD_TOOLS=OFF",
        "-DCUABI_WERROR=OFF",
        "-DCUABI_BUILD_STATIC=ON",
    ];
    run(Command::new(&cmake).args(source).args(options), "configure");
    let mut build = Command::new(&cmake);
    build
        .arg("--build")
        .arg(&build_dir)
        .args(["--target", "cuabi"]);
    if static_link {
        build.arg("cuabi_static");
    }
    build.args(["--config", "Release"]);
    if let Ok(jobs) = env::var("NUM_JOBS") {
        build.arg("--parallel").arg(jobs);
    }
    run(&mut build, "build");

    // The project puts the library in the build folder; a multi-configuration
    // generator adds the configuration's folder.
    let dirs = [build_dir.clone(), build_dir.join("Release")];
    match dirs.into_iter().find(|dir| dir.join(lib_file).is_file()) {
        Some(dir) => dir,
        None => panic!(
            "cmake built {} but no {lib_file} appeared in it",
            build_dir.display()
        ),
    }
}

fn run(command: &mut Command, what: &str) {
    let status = command.status().unwrap_or_else(|err| {
        panic!(
            "cannot run {:?} to {what} libcuabi: {err} (install cmake, or set CUABI_LIB_DIR \
             to a folder holding a built libcuabi)",
            command.get_program()
        )
    });
    if !status.success() {
        panic!("{command:?} failed ({status}) while trying to {what} libcuabi");
    }
}
