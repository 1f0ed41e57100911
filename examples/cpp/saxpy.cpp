// SAXPY through cuabi's C++ header, the same flow as examples/c/saxpy.c:
// compile CUDA C++ with NVRTC, load it as a module, get the kernel,
// allocate, copy in asynchronously on a stream, launch with typed
// arguments, copy back, synchronise, verify. Every handle is owned by an
// object that releases it; every failure is an exception carrying the
// library's own message.
//
// Exit status: 0 when the result is verified, 1 on any failure, 2 when there
// is no CUDA device (the kernel is still compiled, to PTX, to show NVRTC works).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cuabi/cuabi.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

const char* const kSaxpySource = R"(
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
)";

constexpr uint32_t kThreads = 512;   // threads per block
constexpr uint32_t kBlocks = 32768;  // blocks per grid

// Compiles the SAXPY source with NVRTC for `arch`.
cuabi::program Compile(const std::string& arch) {
  cuabi::program prog = cuabi::program::create(kSaxpySource, "saxpy.cu");
  prog.compile({"--fmad=false", "--gpu-architecture=" + arch});
  return prog;
}

// Why there is no usable device, or "" when device 0 can be used.
std::string NoDevice() {
  try {
    if (cuabi::device::count() == 0) return "the driver reports 0 devices.";
    return "";
  } catch (const cuabi::error& e) {
    return e.message();
  }
}

int Run() {
  const std::string no_device = NoDevice();
  if (!no_device.empty()) {
    const std::string ptx = Compile("compute_75").ptx();
    std::printf("compiled saxpy with NVRTC: %zu bytes of PTX\n", ptx.size() + 1);
    std::fprintf(stderr, "No CUDA device found: %s\n", no_device.c_str());
    return 2;
  }

  // Device 0 and its compute capability: compile CUBIN for exactly it.
  const cuabi::device device = cuabi::device::open(0);
  const cuabi::version_pair cc = device.compute_capability();
  const std::string arch = "sm_" + std::to_string(cc.major) + std::to_string(cc.minor);
  const cuabi::module module = cuabi::module::load_data(device, Compile(arch).cubin());
  const cuabi::function kernel = module.get_function("saxpy");

  // Host data.
  const size_t n = size_t{kThreads} * kBlocks;
  const size_t bytes = n * sizeof(float);
  const float a = 2.0f;
  std::vector<float> x(n), y(n), out(n, 0.0f);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (size_t i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }

  // Device buffers, a stream, and the copies in.
  cuabi::buffer dx = cuabi::buffer::alloc(device, bytes);
  cuabi::buffer dy = cuabi::buffer::alloc(device, bytes);
  cuabi::buffer dout = cuabi::buffer::alloc(device, bytes);
  const cuabi::stream stream = cuabi::stream::create(device);
  const cuabi::event start = cuabi::event::create(device);
  const cuabi::event stop = cuabi::event::create(device);
  dx.copy_from_host_async(0, x.data(), bytes, stream);
  dy.copy_from_host_async(0, y.data(), bytes, stream);

  const cuabi_launch_config config = cuabi::launch_config(kBlocks, kThreads);

  // The overview passes n as a 4-byte uint32 to the size_t parameter; each
  // argument goes with its size, so cuabi refuses that instead of running the
  // kernel with a garbage n.
  try {
    kernel.launch(config, stream, a, dx, dy, dout, static_cast<uint32_t>(n));
    std::fprintf(stderr, "a 4-byte n for a size_t parameter was not refused\n");
    return 1;
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    std::printf("refused as it should be: %s\n", e.message().c_str());
  }

  // Buffers pass their device addresses; n goes as the size_t it is.
  start.record(stream);
  kernel.launch(config, stream, a, dx, dy, dout, n);
  stop.record(stream);
  dout.copy_to_host_async(0, out.data(), bytes, stream);
  stream.synchronize();
  const float ms = cuabi::event::elapsed_ms(start, stop);

  // Verify against the host.
  size_t bad = 0;
  double max_error = 0;
  for (size_t i = 0; i < n; ++i) {
    const double want = static_cast<double>(a) * x[i] + y[i];
    const double err = std::fabs(out[i] - want);
    if (err > max_error) max_error = err;
    if (err > 1e-5 * (1.0 + std::fabs(want))) ++bad;
  }
  std::printf("device: %s (%s)\n", device.name().c_str(), arch.c_str());
  std::printf("saxpy: n = %zu, %u blocks x %u threads, kernel time %.3f ms\n", n, kBlocks, kThreads,
              ms);
  std::printf("check: %s (max abs error %.3g, %zu mismatches)\n", bad ? "FAILED" : "OK", max_error,
              bad);
  return bad ? 1 : 0;
  // Every handle is released here, in any order: cuabi keeps dependencies alive.
}

}  // namespace

int main() {
  try {
    return Run();
  } catch (const cuabi::status_error<CUABI_ERROR_COMPILE>& e) {
    std::fprintf(stderr, "compile failed: %s\n%s\n", e.message().c_str(), e.log().c_str());
  } catch (const cuabi::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  return 1;
}
