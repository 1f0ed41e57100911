//! GPU tests of green contexts and tensor maps, as
//! `tests/c/gpu_green_context_test.cc` and `gpu_tensor_map_test.cc` test
//! them: a kernel recording `%smid` from every block stays on a green
//! context's SMs and reaches more on the primary context; a Hopper kernel
//! copies tiles with `cp.async.bulk.tensor` through a [`TensorMap`] passed
//! by value, checked against the host with and without swizzle and after the
//! map's address is replaced; refusals carry the core's bound.

use std::collections::BTreeSet;

use cuabi::{
    Device, DeviceBuffer, ErrorKind, GreenContext, LaunchConfig, Stream, StreamFlags,
    TensorDataType, TensorInterleave, TensorL2Promotion, TensorMap, TensorOobFill, TensorSwizzle,
};

use super::{CompileOptions, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    green_context_keeps_its_kernel_on_its_sms,
    green_context_refusals_carry_the_bound,
    tensor_map_tiles_match_the_host_then_after_replace,
    tensor_map_refusals_carry_the_bound,
];

const SMID: &str = r#"
extern "C" __global__ void record_smid(unsigned* out, long long spin) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = id;
}
"#;

const TILES: &str = r#"
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

extern "C" __global__ void copy_tiles(const __grid_constant__ TensorMap map, float* out,
                                      int tiles_x) {
  __shared__ __align__(1024) float tile[256];  // one 32 x 8 box
  __shared__ __align__(8) unsigned long long bar;
  const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned mbar = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(mbar), "r"(1u) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int x = static_cast<int>(blockIdx.x % tiles_x) * 32;
    const int y = static_cast<int>(blockIdx.x / tiles_x) * 8;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(mbar), "r"(1024u) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y),
          "r"(mbar)
        : "memory");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(mbar), "r"(0u)
        : "memory");
  }
  out[blockIdx.x * 256 + threadIdx.x] = tile[threadIdx.x];
}
"#;

const BLOCKS: usize = 1024;

fn sms_seen(
    device: &Device,
    out: &DeviceBuffer<u32>,
    stream: &Stream,
) -> cuabi::Result<BTreeSet<u32>> {
    let module = device.compile(SMID, &CompileOptions::new().name("smid.cu"))?;
    let f = module.function("record_smid")?;
    let spin: i64 = 200_000;
    unsafe {
        f.launch(LaunchConfig::new(BLOCKS as u32, 64))
            .stream(stream)
            .arg(out)
            .arg(&spin)
            .run()?;
    }
    stream.synchronize()?;
    Ok(out.to_vec()?.into_iter().collect())
}

fn green_context_keeps_its_kernel_on_its_sms(device: &Device) -> TestResult {
    let all = device.sm_resource()?;
    let total = all.sm_count()?;
    let group = all.split(2, 0, 0)?;
    let n = group.sm_count()?;
    ensure!(n < total, "a group of {n} SMs of {total}");
    let green = GreenContext::create(&group)?;
    ensure!(
        green.sm_count()? == n,
        "the context has {} SMs, not {n}",
        green.sm_count()?
    );
    let gs = green.create_stream(0)?;
    green.check_stream(&gs)?;
    // What the stream was made from stays alive without these.
    drop(green);
    drop(group);
    drop(all);
    let out = device.alloc_zeroed::<u32>(BLOCKS)?;
    device.synchronize()?;
    let on_green = sms_seen(device, &out, &gs)?;
    ensure!(
        on_green.len() as u32 <= n,
        "ran on {} SMs, more than {n}",
        on_green.len()
    );
    let primary = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let on_primary = sms_seen(device, &out, &primary)?;
    ensure!(
        on_primary.len() as u32 > n,
        "the primary context reached only {} SMs",
        on_primary.len()
    );
    Ok(())
}

fn refused<T: std::fmt::Debug>(r: cuabi::Result<T>, piece: &str) -> TestResult {
    match r {
        Ok(v) => Err(format!("accepted ({v:?}); wanted a refusal naming {piece:?}").into()),
        Err(e) => {
            ensure!(e.kind() == ErrorKind::InvalidArgument, "{e}");
            ensure!(
                e.message().contains(piece),
                "{:?} lacks {piece:?}",
                e.message()
            );
            Ok(())
        }
    }
}

fn green_context_refusals_carry_the_bound(device: &Device) -> TestResult {
    let all = device.sm_resource()?;
    let total = all.sm_count()?;
    refused(all.split(0, 0, 0), "group_count is 0")?;
    refused(
        all.split(total + 1, 0, 0),
        &format!("the resource has {total} SMs"),
    )?;
    refused(all.split(1, 0, 2), "index 2 is past group_count 1")?;
    refused(all.split(1, 0, 0)?.split(1, 0, 0), "does not split again")?;
    let g1 = GreenContext::create(&all.split(2, 0, 0)?)?;
    let g2 = GreenContext::create(&all.split(2, 0, 1)?)?;
    refused(
        g1.check_stream(&g2.create_stream(0)?),
        "another green context",
    )?;
    refused(g1.check_stream(&device.create_stream()?), "primary context")?;
    Ok(())
}

const ROWS: usize = 64;
const COLS: usize = 128;

fn expected(host: &[f32], mask: usize) -> Vec<f32> {
    let tiles_x = COLS / 32;
    let tiles = tiles_x * (ROWS / 8);
    let mut out = vec![0.0f32; tiles * 256];
    for b in 0..tiles {
        let (x0, y0) = ((b % tiles_x) * 32, (b / tiles_x) * 8);
        for r in 0..8 {
            for c in 0..32 {
                let o = (r * 32 + c) * 4;
                let s = o ^ (((o >> 7) & mask) << 4);
                out[b * 256 + s / 4] = host[(y0 + r) * COLS + x0 + c];
            }
        }
    }
    out
}

fn tiled(buf: &DeviceBuffer<f32>, swizzle: TensorSwizzle) -> cuabi::Result<TensorMap> {
    TensorMap::encode_tiled(
        buf,
        0,
        TensorDataType::Float32,
        &[COLS, ROWS],
        &[4, COLS * 4],
        &[32, 8],
        &[],
        TensorInterleave::None,
        swizzle,
        TensorL2Promotion::None,
        TensorOobFill::Zero,
    )
}

fn tensor_map_tiles_match_the_host_then_after_replace(device: &Device) -> TestResult {
    let (major, _) = device.compute_capability()?;
    if major < 9 {
        return super::skip(format!(
            "tensor maps need compute capability 9.0, not {major}.x"
        ));
    }
    let module = device.compile(TILES, &CompileOptions::new().name("tiles.cu"))?;
    let f = module.function("copy_tiles")?;
    let h1: Vec<f32> = (0..ROWS * COLS).map(|i| i as f32).collect();
    let h2: Vec<f32> = (0..ROWS * COLS).map(|i| 5.0 - 0.25 * i as f32).collect();
    let a = device.buffer_from_slice(&h1)?;
    let out = device.alloc_zeroed::<f32>(ROWS * COLS)?;
    let tiles_x = (COLS / 32) as i32;
    for (swizzle, mask) in [(TensorSwizzle::None, 0), (TensorSwizzle::B128, 7)] {
        let map = tiled(&a, swizzle)?;
        let run = |map: &TensorMap| -> cuabi::Result<Vec<f32>> {
            let value = map.value()?;
            unsafe {
                f.launch(LaunchConfig::new(((COLS / 32) * (ROWS / 8)) as u32, 256))
                    .arg(&value)
                    .arg(&out)
                    .arg(&tiles_x)
                    .run()?;
            }
            device.synchronize()?;
            out.to_vec()
        };
        ensure!(
            run(&map)? == expected(&h1, mask),
            "tiles differ (swizzle mask {mask})"
        );
        let b = device.buffer_from_slice(&h2)?;
        map.replace_address(&b, 0)?;
        drop(b); // the map keeps it
        ensure!(
            run(&map)? == expected(&h2, mask),
            "tiles differ after replace (mask {mask})"
        );
    }
    Ok(())
}

fn tensor_map_refusals_carry_the_bound(device: &Device) -> TestResult {
    let buf = device.alloc_zeroed::<f32>(1 << 14)?;
    let enc = |sizes: &[usize], strides: &[usize], bx: &[usize], swizzle| {
        TensorMap::encode_tiled(
            &buf,
            0,
            TensorDataType::Float32,
            sizes,
            strides,
            bx,
            &[],
            TensorInterleave::None,
            swizzle,
            TensorL2Promotion::None,
            TensorOobFill::Zero,
        )
    };
    refused(
        enc(&[64, 64], &[4, 260], &[32, 8], TensorSwizzle::None),
        "not a multiple of 16",
    )?;
    refused(
        enc(&[64, 64], &[4, 256], &[32, 257], TensorSwizzle::None),
        "box[1] is 257, not within 1 to 256",
    )?;
    refused(
        enc(&[64, 64], &[4, 256], &[64, 8], TensorSwizzle::B64),
        "more than the 64-byte span",
    )?;
    refused(
        enc(&[64, 1 << 20], &[4, 256], &[32, 8], TensorSwizzle::None),
        "past the buffer's",
    )?;
    let map = enc(&[64, 64], &[4, 256], &[32, 8], TensorSwizzle::None)?;
    refused(map.replace_address(&buf, 4), "16-byte aligned")?;
    Ok(())
}
