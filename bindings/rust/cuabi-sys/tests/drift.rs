//! The committed `src/bindings.rs` equals a fresh bindgen run over
//! `include/cuabi/cuabi.h` with the flags of `regen-sys.sh`, whitespace aside.
//!
//! Without bindgen the test fails and says how to install it: libtest has no
//! runtime skip, and a check that did not run must not count as passed. Set
//! `CUABI_SKIP_DRIFT=1` to leave the test out deliberately (it then fails
//! nothing and says so).

use std::env;
use std::io::Write;
use std::path::Path;
use std::process::Command;

fn skip(reason: &str) {
    // Written past libtest's output capture, so it shows in every run.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: committed_bindings_match_the_header: {reason}"
    );
}

fn without_whitespace(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[test]
fn committed_bindings_match_the_header() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = crate_dir.join("../regen-sys.sh");
    let header = crate_dir.join("../../../include/cuabi/cuabi.h");
    let committed_path = crate_dir.join("src/bindings.rs");
    if !script.is_file() || !header.is_file() {
        skip(&format!(
            "the source tree is not at {} (a copied test binary?)",
            crate_dir.display()
        ));
        return;
    }
    let bindgen = env::var("BINDGEN").unwrap_or_else(|_| "bindgen".to_owned());
    let version = match Command::new(&bindgen).arg("--version").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        _ => {
            if env::var("CUABI_SKIP_DRIFT").as_deref() == Ok("1") {
                skip(&format!(
                    "'{bindgen}' is not installed and CUABI_SKIP_DRIFT=1"
                ));
                return;
            }
            panic!(
                "'{bindgen}' is not installed, so the committed bindings cannot be checked \
                 against the header: apt-get install bindgen (or set CUABI_SKIP_DRIFT=1 to \
                 leave this check out)"
            );
        }
    };

    let out = Command::new("bash")
        .arg(&script)
        .arg("--stdout")
        .env("BINDGEN", &bindgen)
        .output()
        .expect("run bash regen-sys.sh --stdout");
    assert!(
        out.status.success(),
        "regen-sys.sh --stdout failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh = String::from_utf8(out.stdout).expect("bindgen output is UTF-8");
    let committed = std::fs::read_to_string(&committed_path).expect("read src/bindings.rs");

    let (a, b) = (without_whitespace(&committed), without_whitespace(&fresh));
    if a != b {
        let at = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        let around = |s: &str| {
            s.chars()
                .skip(at.saturating_sub(60))
                .take(120)
                .collect::<String>()
        };
        panic!(
            "src/bindings.rs is out of date with include/cuabi/cuabi.h \
             (installed: {version}; committed file says: {:?}).\n\
             first difference, whitespace removed:\n  committed: {}\n  fresh:     {}\n\
             run bindings/rust/regen-sys.sh (bindings/rust/check-sys-drift.sh shows the diff)",
            first_line(&committed),
            around(&a),
            around(&b),
        );
    }
}
