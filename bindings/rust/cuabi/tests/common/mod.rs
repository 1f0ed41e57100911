//! What the integration tests share: the SAXPY source and, for the test
//! binaries with their own runner (`harness = false`), the command line.
#![allow(dead_code)] // each test binary uses its own part

/// SAXPY as the CUDA Python overview writes it, with a `size_t` count.
pub const SAXPY: &str = r#"
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
"#;

/// The command line, read the way libtest reads it where that matters: a
/// name filter, `--list`, `--ignored` (there are no ignored tests here).
pub struct Args {
    pub filter: Option<String>,
    pub list: bool,
    pub ignored_only: bool,
}

pub fn parse_args() -> Args {
    const TAKES_VALUE: &[&str] = &[
        "--test-threads",
        "--skip",
        "--logfile",
        "--format",
        "--color",
        "--shuffle-seed",
        "-Z",
    ];
    let mut args = Args {
        filter: None,
        list: false,
        ignored_only: false,
    };
    let mut argv = std::env::args().skip(1);
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--list" => args.list = true,
            "--ignored" => args.ignored_only = true,
            flag if TAKES_VALUE.contains(&flag) => {
                argv.next();
            }
            flag if flag.starts_with('-') => {}
            name => args.filter = Some(name.to_owned()),
        }
    }
    args
}

/// Set in a child process started by [`run_child`]: the name of the test it
/// runs as the child.
pub const CHILD: &str = "CUABI_TEST_CHILD";

/// Whether this process is the child of test `name` (see [`run_child`]).
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD).is_ok_and(|v| v == name)
}

/// Runs test `name` of this binary again, alone, in a child process with
/// `set` added to the environment and `unset` taken from it; the test sees
/// [`is_child`]`(name)` there and does the child's part. For what must
/// happen in a process of its own: the environment read at a library's
/// first call, a state that lasts as long as the process. Panics with the
/// child's output unless its test passed; answers that output.
pub fn run_child(name: &str, set: &[(&str, &std::ffi::OsStr)], unset: &[&str]) -> String {
    let exe = std::env::current_exe().expect("this test binary's path");
    let mut command = std::process::Command::new(exe);
    command
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name);
    for (key, value) in set {
        command.env(key, value);
    }
    for key in unset {
        command.env_remove(key);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("starting the child of {name}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && text.contains("test result: ok. 1 passed"),
        "the child process of {name} ({}) did not pass:\n{}",
        output.status,
        text.trim_end()
    );
    text
}
