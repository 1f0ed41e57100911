//! NVTX through the crate, no GPU: the generated scope guard
//! ([`cuabi::nvtx_range`] answers an [`NvtxRange`]) and free functions,
//! recorded by the test NVTX tool `tests/nvtx/record_nvtx.c` (CMake target
//! `cuabi_record_nvtx`), named by `$CUABI_TEST_NVTX_TOOL` (set by
//! `run-tests.sh` and the CTest entry; without it the recorded test FAILS).
//!
//! NVTX reads `NVTX_INJECTION64_PATH` once, at a process's first
//! annotation, and the tool writes to `$CUABI_NVTX_RECORD`: so the
//! annotations are made in a child process (this binary again, see
//! `common::run_child`) started with both, and this process compares what
//! the tool recorded, line by line: guards closing in reverse order, also
//! when `?` leaves their scope; `end()` closing one early and reporting a
//! failure that a drop ignores; the default domain (`-`) and named ones,
//! each created once; colours; marks; a started range ended on another
//! thread. The refusals are the core's (`capi/core/nvtx.cpp`), the same
//! with the tool attached or none (the second test).

mod common;

use std::ffi::OsStr;
use std::path::PathBuf;

use cuabi::{ErrorKind, NvtxRange};

const RECORDED: &str = "annotations_are_recorded_by_the_nvtx_tool";
const NO_TOOL: &str = "annotations_and_refusals_are_the_same_without_a_tool";

/// What the tool records for [`annotate`], in order.
const WANT: &[&str] = &[
    "push - - outer",
    "create cuabi.rust",
    "push cuabi.rust ff0000ff inner",
    "mark cuabi.rust - inside",
    "pop cuabi.rust",
    // Two guards of one scope close in reverse order.
    "push - 80102030 first",
    "push cuabi.rust - second",
    "pop cuabi.rust",
    "pop -",
    // end() closes early; the guard's drop then does nothing.
    "push cuabi.rust 0000ff00 early",
    "pop cuabi.rust",
    // `?` leaves the guard's scope: the range is closed on the way out.
    "push - - failing step",
    "pop -",
    "push - - good step",
    "pop -",
    "start cuabi.rust 00abcdef async",
    "end cuabi.rust",
    // outer's scope ends.
    "pop -",
    // Ranges popped behind their guards' backs: end() reports it, the drop
    // ignores it; neither records anything more.
    "push cuabi.rust - popped",
    "pop cuabi.rust",
    "push cuabi.rust - dropped",
    "pop cuabi.rust",
    "create cuabi.other",
    "mark cuabi.other - once",
    "mark cuabi.other - twice",
];

/// Asserts that `result` is the core's refusal: `ErrorKind::InvalidArgument`
/// with `text` in its message.
#[track_caller]
fn refused<T: std::fmt::Debug>(result: cuabi::Result<T>, text: &str) {
    let err = result.expect_err(text);
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.message().contains(text),
        "'{}' lacks '{text}'",
        err.message()
    );
}

/// A step whose range the guard closes however the step ends.
fn step(name: &str, fail: bool) -> cuabi::Result<u32> {
    let _range = cuabi::nvtx_range(None, name, 0)?;
    if fail {
        cuabi::nvtx_range_end(0)?; // refused: leaves through `?`
    }
    Ok(7)
}

/// The child's part: the annotations, and the checks of what each answers.
fn annotate() {
    {
        let _outer = cuabi::nvtx_range(None, "outer", 0).expect("outer");
        {
            let _inner =
                cuabi::nvtx_range(Some("cuabi.rust"), "inner", 0xFF00_00FF).expect("inner");
            cuabi::nvtx_mark(Some("cuabi.rust"), "inside", 0).expect("mark");
        }
        {
            let _first = cuabi::nvtx_range(None, "first", 0x8010_2030).expect("first");
            let _second = cuabi::nvtx_range(Some("cuabi.rust"), "second", 0).expect("second");
        }
        let early: NvtxRange =
            cuabi::nvtx_range(Some("cuabi.rust"), "early", 0x0000_FF00).expect("early");
        early.end().expect("end() of an open range");

        refused(step("failing step", true), "range 0 is not open");
        assert_eq!(step("good step", false).expect("the good step"), 7);

        let id = cuabi::nvtx_range_start(Some("cuabi.rust"), "async", 0x00AB_CDEF).expect("start");
        assert_ne!(id, 0, "a started range's id is never 0");
        // Ended on another thread; ranges of push and pop are per thread.
        std::thread::spawn(move || {
            cuabi::nvtx_range_end(id).expect("end on another thread");
            refused(
                cuabi::nvtx_range_pop(None),
                "no range of NVTX's default domain is open on this thread",
            );
        })
        .join()
        .expect("the other thread");
        refused(
            cuabi::nvtx_range_end(id),
            &format!(
                "range {id} is not open (not started by cuabi_nvtx_range_start, or ended already)"
            ),
        );
    }

    // Refusals: nothing is recorded for them.
    refused(
        cuabi::nvtx_range_pop(Some("cuabi.rust")),
        "no range of domain 'cuabi.rust' is open on this thread \
         (cuabi_nvtx_range_push opens one)",
    );
    refused(
        cuabi::nvtx_range_pop(None),
        "no range of NVTX's default domain is open on this thread \
         (cuabi_nvtx_range_push opens one)",
    );
    refused(
        cuabi::nvtx_range_end(0),
        "range 0 is not open (not started by cuabi_nvtx_range_start, or ended already)",
    );
    let empty = "domain is an empty name; NULL names NVTX's default domain";
    refused(cuabi::nvtx_range(Some(""), "x", 0), empty);
    refused(cuabi::nvtx_range_push(Some(""), "x", 0), empty);
    refused(cuabi::nvtx_range_start(Some(""), "x", 0), empty);
    refused(cuabi::nvtx_mark(Some(""), "x", 0), empty);
    refused(cuabi::nvtx_range_pop(Some("")), empty);
    // A NUL byte is refused by the crate, naming the parameter.
    refused(
        cuabi::nvtx_range(None, "a\0b", 0),
        "message contains a NUL byte at byte 1",
    );
    refused(
        cuabi::nvtx_mark(Some("x\0"), "m", 0),
        "domain contains a NUL byte at byte 1",
    );

    let popped = cuabi::nvtx_range(Some("cuabi.rust"), "popped", 0).expect("popped");
    cuabi::nvtx_range_pop(Some("cuabi.rust")).expect("the pop behind the guard's back");
    refused(
        popped.end(),
        "no range of domain 'cuabi.rust' is open on this thread",
    );
    {
        let _dropped = cuabi::nvtx_range(Some("cuabi.rust"), "dropped", 0).expect("dropped");
        cuabi::nvtx_range_pop(Some("cuabi.rust")).expect("the pop behind the guard's back");
    } // the drop's pop is refused, and ignored

    // A second domain, used twice: created once.
    cuabi::nvtx_mark(Some("cuabi.other"), "once", 0).expect("mark once");
    cuabi::nvtx_mark(Some("cuabi.other"), "twice", 0).expect("mark twice");
}

/// The test NVTX tool: `$CUABI_TEST_NVTX_TOOL`, which must name a file.
fn tool() -> PathBuf {
    let Some(tool) = std::env::var_os("CUABI_TEST_NVTX_TOOL").map(PathBuf::from) else {
        panic!(
            "CUABI_TEST_NVTX_TOOL is not set: it names the test NVTX tool, \
             libcuabi_record_nvtx.so (CMake target cuabi_record_nvtx, built in \
             build/tests/nvtx/); run-tests.sh sets it from its LIB_DIR, the CTest entry \
             rust_binding always"
        );
    };
    assert!(
        tool.is_file(),
        "CUABI_TEST_NVTX_TOOL names {}, which does not exist (build the CMake target \
         cuabi_record_nvtx)",
        tool.display()
    );
    tool
}

#[test]
fn annotations_are_recorded_by_the_nvtx_tool() {
    if common::is_child(RECORDED) {
        annotate();
        return;
    }
    let tool = tool();
    let record = std::env::temp_dir().join(format!("cuabi-rust-nvtx-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&record); // the tool appends
    common::run_child(
        RECORDED,
        &[
            ("NVTX_INJECTION64_PATH", tool.as_os_str()),
            ("CUABI_NVTX_RECORD", record.as_os_str()),
        ],
        &[],
    );
    let text = std::fs::read_to_string(&record).unwrap_or_else(|e| {
        panic!(
            "the tool wrote no {} ({e}): was NVTX_INJECTION64_PATH honoured?",
            record.display()
        )
    });
    let _ = std::fs::remove_file(&record);
    let got: Vec<&str> = text.lines().collect();
    for (i, (got, want)) in got.iter().zip(WANT).enumerate() {
        assert_eq!(
            got,
            want,
            "line {} of what the tool recorded:\n{text}",
            i + 1
        );
    }
    assert_eq!(
        got.len(),
        WANT.len(),
        "the tool recorded {} lines, want {}:\n{text}",
        got.len(),
        WANT.len()
    );
}

#[test]
fn annotations_and_refusals_are_the_same_without_a_tool() {
    if common::is_child(NO_TOOL) {
        annotate();
        return;
    }
    let unused = OsStr::new("/nonexistent/cuabi-rust-nvtx-no-tool.txt");
    common::run_child(
        NO_TOOL,
        &[("CUABI_NVTX_RECORD", unused)],
        &["NVTX_INJECTION64_PATH"],
    );
}
