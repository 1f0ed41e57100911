//! GPU tests of two graph patterns, as `tests/python/test_graph_patterns.py`
//! and `tests/c/gpu_graph_patterns_test.cc` test them: a WHILE node running a
//! Jacobi iteration until the residual computed on the device falls below a
//! tolerance, checked against the same iteration on the host; and a
//! hand-built graph of 1,000 kernel nodes in chained diamonds, replayed and
//! checked against the host's recurrence.

use std::error::Error as StdError;

use cuabi::{CompileOptions, ConditionalType, Device, Function, Graph, GraphNode, LaunchConfig};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    a_while_node_runs_jacobi_until_the_residual_on_the_device_is_small,
    a_thousand_nodes_of_chained_diamonds_replay_in_order,
];

/// `jacobi`: one Jacobi step of 4 x_i - x_{i-1} - x_{i+1} = b_i (one block,
/// n <= 256 threads), then the residual max |b - A x| of the new x; below
/// tol it clears the loop's condition. `combine`: v[out] = v[a] + 2 v[b] + 1.
/// `cudaGraphSetConditional` is a device builtin the driver resolves: the
/// program declares it.
const SOURCE: &str = r#"
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void jacobi(float* x, const float* b, int n, float tol,
                                  int* iterations, cudaGraphConditionalHandle h) {
  __shared__ float xs[256];
  __shared__ float rs[256];
  int i = threadIdx.x;
  if (i < n) xs[i] = x[i];
  __syncthreads();
  float xn = 0.0f;
  if (i < n) xn = (b[i] + (i > 0 ? xs[i - 1] : 0.0f) + (i < n - 1 ? xs[i + 1] : 0.0f)) / 4.0f;
  __syncthreads();
  if (i < n) { xs[i] = xn; x[i] = xn; }
  __syncthreads();
  if (i < n) {
    float ax = 4.0f * xs[i] - (i > 0 ? xs[i - 1] : 0.0f) - (i < n - 1 ? xs[i + 1] : 0.0f);
    rs[i] = fabsf(b[i] - ax);
  } else rs[i] = 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (i < s) rs[i] = fmaxf(rs[i], rs[i + s]);
    __syncthreads();
  }
  if (i == 0) {
    *iterations += 1;
    if (rs[0] < tol) cudaGraphSetConditional(h, 0);
  }
}
extern "C" __global__ void combine(int* v, int out, int a, int b) {
  if (threadIdx.x == 0 && blockIdx.x == 0) v[out] = v[a] + 2 * v[b] + 1;
}
"#;

fn module(device: &Device) -> Result<cuabi::Module, Box<dyn StdError>> {
    if cuabi::driver_version()? < 12040 {
        return skip("conditional nodes need a driver of CUDA 12.4 or later");
    }
    Ok(device.compile(SOURCE, &CompileOptions::new().name("graph_patterns.cu"))?)
}

/// The device's iteration on the host, in the same `f32` operations in the
/// same order: the new x and the number of steps it took.
fn jacobi_host(b: &[f32], tol: f32) -> Result<(Vec<f32>, i32), Box<dyn StdError>> {
    let n = b.len();
    let left = |x: &[f32], i: usize| if i > 0 { x[i - 1] } else { 0.0f32 };
    let right = |x: &[f32], i: usize| if i + 1 < n { x[i + 1] } else { 0.0f32 };
    let mut x = vec![0.0f32; n];
    let mut steps = 0;
    loop {
        x = (0..n)
            .map(|i| ((b[i] + left(&x, i)) + right(&x, i)) / 4.0f32)
            .collect();
        steps += 1;
        let residual = (0..n)
            .map(|i| (b[i] - ((4.0f32 * x[i] - left(&x, i)) - right(&x, i))).abs())
            .fold(0.0f32, f32::max);
        if residual < tol {
            return Ok((x, steps));
        }
        ensure!(steps < 10000, "the host iteration does not converge");
    }
}

fn a_while_node_runs_jacobi_until_the_residual_on_the_device_is_small(
    device: &Device,
) -> TestResult {
    let m = module(device)?;
    let jacobi = m.function("jacobi")?;
    let (n, tol) = (64usize, 1e-4f32);
    let b: Vec<f32> = (0..n).map(|i| ((i * 7) % 11) as f32 - 3.0).collect();
    let x = device.alloc_zeroed::<f32>(n)?;
    let bb = device.buffer_from_slice(&b)?;
    let iterations = device.buffer_from_slice(&[0i32])?;
    let graph = Graph::create(device)?;
    let handle = graph.create_conditional_handle(1)?;
    let looped = graph.add_conditional_node(None, handle, ConditionalType::While, 1)?;
    let body = looped.body(0)?;
    let count = n as i32;
    body.add_kernel_node(
        None,
        &jacobi,
        &LaunchConfig::new(1, n as u32),
        (&x, &bb, &count, &tol, &iterations, &handle),
    )?;
    let exec = graph.instantiate()?;
    let s = device.create_stream()?;
    // SAFETY: the buffers outlive the synchronize.
    unsafe { exec.launch(&s)? };
    s.synchronize()?;
    device.synchronize()?;
    let (want, steps) = jacobi_host(&b, tol)?;
    ensure!(steps > 5, "the host converged in {steps} steps");
    let ran = iterations.to_vec()?[0];
    ensure!(
        ran == steps,
        "the device ran {ran} iterations, the host {steps}"
    );
    let got = x.to_vec()?;
    if let Some(i) = (0..n).find(|&i| got[i].is_nan() || (got[i] - want[i]).abs() > 1e-5) {
        return Err(format!("x[{i}] is {}, the host's {}", got[i], want[i]).into());
    }
    Ok(())
}

/// A `combine` node writing slot `k` from slots `a` and `b`, after `after`.
fn add_combine(
    graph: &Graph,
    combine: &Function,
    v: &cuabi::DeviceBuffer<u32>,
    (k, a, b): (i32, i32, i32),
    after: Option<&GraphNode>,
) -> Result<GraphNode, Box<dyn StdError>> {
    graph
        .add_kernel_node(after, combine, &LaunchConfig::new(1, 1), (v, &k, &a, &b))
        .map_err(|e| format!("node {k}: {e}").into())
}

fn a_thousand_nodes_of_chained_diamonds_replay_in_order(device: &Device) -> TestResult {
    let m = module(device)?;
    let combine = m.function("combine")?;
    // 333 diamonds: top -> (left, right) -> bottom, each bottom the next top;
    // with the first top, 1 + 333 * 3 = 1000 kernel nodes. Node k writes v[k]
    // from its dependencies' slots (the first top from slot 0 itself).
    let diamonds = 333usize;
    let nodes = 1 + 3 * diamonds;
    let mut v = device.alloc_zeroed::<u32>(nodes)?;
    let graph = Graph::create(device)?;
    let mut reads: Vec<(usize, usize)> = Vec::with_capacity(nodes);
    let mut made: Vec<GraphNode> = Vec::with_capacity(nodes);
    reads.push((0, 0));
    made.push(add_combine(&graph, &combine, &v, (0, 0, 0), None)?);
    let mut top = 0usize;
    for d in 0..diamonds {
        let (left, right, bottom) = (1 + 3 * d, 2 + 3 * d, 3 + 3 * d);
        let node = add_combine(
            &graph,
            &combine,
            &v,
            (left as i32, top as i32, top as i32),
            Some(&made[top]),
        )?;
        reads.push((top, top));
        made.push(node);
        let node = add_combine(
            &graph,
            &combine,
            &v,
            (right as i32, top as i32, left as i32),
            Some(&made[top]),
        )?;
        reads.push((top, left));
        made.push(node);
        // The right node reads left's slot: it must run after left too.
        made[right].add_dependency(&made[left])?;
        let node = add_combine(
            &graph,
            &combine,
            &v,
            (bottom as i32, left as i32, right as i32),
            Some(&made[left]),
        )?;
        reads.push((left, right));
        made.push(node);
        made[bottom].add_dependency(&made[right])?;
        top = bottom;
    }
    ensure!(
        graph.node_count()? == nodes,
        "{} nodes, not {nodes}",
        graph.node_count()?
    );
    ensure!(
        made[3].dependency_count()? == 2,
        "the first bottom has {} dependencies",
        made[3].dependency_count()?
    );
    // The host's answer, modulo 2^32 as the device's ints wrap.
    let mut want = vec![0u32; nodes];
    for (k, &(a, b)) in reads.iter().enumerate() {
        want[k] = want[a]
            .wrapping_add(2u32.wrapping_mul(want[b]))
            .wrapping_add(1);
    }
    let exec = graph.instantiate()?;
    let s = device.create_stream()?;
    for replay in 0..3 {
        v.fill_bytes(0)?;
        device.synchronize()?;
        // SAFETY: v outlives the synchronize.
        unsafe { exec.launch(&s)? };
        s.synchronize()?;
        let got = v.to_vec()?;
        if let Some(k) = (0..nodes).find(|&k| got[k] != want[k]) {
            return Err(format!(
                "replay {replay}: v[{k}] is {}, the host's {}",
                got[k], want[k]
            )
            .into());
        }
    }
    Ok(())
}
