//! Gives this program an rpath to libcuabi, so it runs without
//! LD_LIBRARY_PATH. `cuabi` passes the folder as DEP_CUABI_RS_LIB_DIR.

fn main() {
    if let Some(dir) = std::env::var_os("DEP_CUABI_RS_LIB_DIR") {
        if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
            println!(
                "cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{}",
                dir.to_string_lossy()
            );
        }
    }
}
