// The faulting process of gpu_fault_child_test.cc, through cuabi.hpp: three
// launches on two streams after one seen complete, the second writing far
// out of bounds. Prints what the C++ error carries, one fact per line:
//   stream a <id> / stream b <id>
//   caught <status name> from <call>
//   message <what the library said>
//   launch <i> <kernel> grid <x> block <x> stream <id> sequence <n>
//   health <0|1|2> (cuabi_health of the device after the fault)
// Exits 0 when the fault was caught as cuabi::status_error<CONTEXT_LOST>, 2
// when there is no device, 1 otherwise.
#include <cstdio>
#include <cuabi/cuabi.hpp>
#include <string>

namespace {

const char* const kSource = R"(
extern "C" __global__ void fill(float* x, unsigned n, float v) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
extern "C" __global__ void write_far(float* x, unsigned long long far) {
  x[far + threadIdx.x] = 1.0f;
}
)";

}  // namespace

int main() {
  if (cuabi::device::count() == 0) return 2;
  const cuabi::device device = cuabi::device::open(0);
  const cuabi::module module = cuabi::module::compile(device, kSource);
  const cuabi::function fill = module.get_function("fill");
  const cuabi::function write_far = module.get_function("write_far");
  const cuabi::buffer x = cuabi::buffer::alloc(device, 1 << 20);
  const cuabi::stream a = cuabi::stream::create(device, CUABI_STREAM_NON_BLOCKING);
  const cuabi::stream b = cuabi::stream::create(device, CUABI_STREAM_NON_BLOCKING);
  std::printf("stream a %llu\nstream b %llu\n", static_cast<unsigned long long>(a.id()),
              static_cast<unsigned long long>(b.id()));
  const uint64_t p = x.pointer();
  const unsigned n = (1 << 20) / 4;
  fill.launch(cuabi::config(4, 128), a, p, n, 1.0f);
  a.synchronize();
  std::string call = "function::launch";
  try {
    fill.launch(cuabi::config(8, 256), a, p, n, 2.0f);
    write_far.launch(cuabi::config(3, 64), b, p, 1ull << 38);
    fill.launch(cuabi::config(16, 32), a, p, n, 3.0f);
    call = "device::synchronize";
    device.synchronize();
    std::printf("no fault was reported\n");
    return 1;
  } catch (const cuabi::status_error<CUABI_ERROR_CONTEXT_LOST>& e) {
    std::printf("caught %s from %s\nmessage %s\n", e.status_name(), call.c_str(),
                e.message().c_str());
    for (size_t i = 0; i < e.launches().size(); ++i) {
      const cuabi::faulted_launch& l = e.launches()[i];
      std::printf("launch %zu %s grid %u block %u stream %llu sequence %llu\n", i,
                  l.kernel.c_str(), l.record.grid_x, l.record.block_x,
                  static_cast<unsigned long long>(l.record.stream_id),
                  static_cast<unsigned long long>(l.record.sequence));
    }
  }
  std::printf("health %d\n", static_cast<int>(device.health()));
  std::fflush(stdout);
  return 0;
}
