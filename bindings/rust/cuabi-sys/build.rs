//! Finds or builds libcuabi and tells rustc how to link it.
//!
//! * `CUABI_LIB_DIR` set (an absolute path): link the library in that folder.
//! * otherwise: build this repository's CMake project (the folder three levels
//!   above this crate) into `OUT_DIR` with `cmake`, tests off, and link that.
//!
//! Dependents that name `cuabi-sys` directly read the folder from
//! `DEP_CUABI_LIB_DIR` (and the header folder from `DEP_CUABI_INCLUDE`).

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CUABI_LIB_DIR");
    println!("cargo:rerun-if-env-changed=CMAKE");

    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.join("..").join("..").join("..");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let lib_file = library_file_name(&target_os);

    let lib_dir = match env::var_os("CUABI_LIB_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => given_library(PathBuf::from(dir), lib_file),
        None => build_with_cmake(&repo, lib_file),
    };
    let lib_dir = fs::canonicalize(&lib_dir).unwrap_or(lib_dir);

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=cuabi");
    println!("cargo:lib_dir={}", lib_dir.display());
    let include = repo.join("include");
    let include = fs::canonicalize(&include).unwrap_or(include);
    println!("cargo:include={}", include.display());

    // This crate's own test binaries (the layout tests) find the library
    // without LD_LIBRARY_PATH. RUNPATH, not RPATH: LD_LIBRARY_PATH still wins.
    match target_os.as_str() {
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" => {
            println!(
                "cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{}",
                lib_dir.display()
            );
        }
        "macos" | "ios" => println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display()),
        _ => {}
    }
}

/// The file the linker needs: the shared library, or its import library on Windows.
fn library_file_name(target_os: &str) -> &'static str {
    match target_os {
        "windows" => "cuabi.lib",
        "macos" | "ios" => "libcuabi.dylib",
        _ => "libcuabi.so",
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

fn build_with_cmake(repo: &Path, lib_file: &str) -> PathBuf {
    if !repo.join("CMakeLists.txt").is_file() || !repo.join("include/cuabi/cuabi.h").is_file() {
        panic!(
            "cannot build libcuabi: {} is not the cuabi source tree; set CUABI_LIB_DIR \
             to the folder that holds {}",
            repo.display(),
            lib_file
        );
    }
    for watched in ["CMakeLists.txt", "capi", "include", "cmake"] {
        let path = repo.join(watched);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let build_dir = out_dir.join("cuabi-cmake");
    let cmake = env::var_os("CMAKE").unwrap_or_else(|| OsString::from("cmake"));

    let mut configure = Command::new(&cmake);
    configure
        .arg("-S")
        .arg(repo)
        .arg("-B")
        .arg(&build_dir)
        .arg("-DCMAKE_BUILD_TYPE=Release")
        .arg("-DCUABI_BUILD_TESTS=OFF");
    run(&mut configure, "configure");

    let mut build = Command::new(&cmake);
    build
        .arg("--build")
        .arg(&build_dir)
        .arg("--config")
        .arg("Release");
    if let Ok(jobs) = env::var("NUM_JOBS") {
        build.arg("--parallel").arg(jobs);
    }
    run(&mut build, "build");

    match find_file(&build_dir, lib_file, 4) {
        Some(file) => file.parent().expect("a file has a parent").to_path_buf(),
        None => panic!(
            "cmake built {} but no {} appeared in it",
            build_dir.display(),
            lib_file
        ),
    }
}

fn run(command: &mut Command, what: &str) {
    let status = command.status().unwrap_or_else(|err| {
        panic!(
            "cannot run {:?} to {} libcuabi: {} (install cmake, or set CUABI_LIB_DIR \
             to a folder holding a built libcuabi)",
            command.get_program(),
            what,
            err
        )
    });
    if !status.success() {
        panic!(
            "{:?} failed ({}) while trying to {} libcuabi",
            command, status, what
        );
    }
}

/// Breadth-first, so the build folder's own copy wins over deeper ones.
fn find_file(root: &Path, name: &str, max_depth: usize) -> Option<PathBuf> {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..=max_depth {
        let mut next = Vec::new();
        for dir in level {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                if path.file_name().is_some_and(|n| n == name) && path.is_file() {
                    return Some(path);
                }
                if path.is_dir() && !path.ends_with("CMakeFiles") {
                    next.push(path);
                }
            }
        }
        level = next;
    }
    None
}
