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
