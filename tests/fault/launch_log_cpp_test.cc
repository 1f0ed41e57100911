// The launches a sticky fault names, through cuabi.hpp, against the stand-in
// driver: cuabi::error::launches() carries what cuabi_last_error_get_launch*
// give, most recent first, for CONTEXT_LOST and for nothing else.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cuabi/cuabi.hpp>
#include <string>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  ++failures;
}

const char kSource[] = "extern \"C\" __global__ void empty2(int a, double* b) {}";

}  // namespace

int main() {
  const char* path = std::getenv("CUABI_DRIVER_PATH");
  void* fake = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto fail_entry = fake ? reinterpret_cast<void (*)(const char*, long, int, int)>(
                               dlsym(fake, "fake_fail_entry"))
                         : nullptr;
  if (!fail_entry) {
    std::fprintf(stderr, "CUABI_DRIVER_PATH must name the stand-in driver\n");
    return 1;
  }
  const cuabi::device device = cuabi::device::open(0);
  uint64_t stream_id = 0;
  {
    // Released before the fault (the stand-in then frees what it handed
    // out); the stream's launch stays with the device.
    const cuabi::module module =
        cuabi::module::load_data(device, std::string(kSource, sizeof kSource));
    const cuabi::function f = module.get_function("empty2");
    const cuabi::stream s = cuabi::stream::create(device, CUABI_STREAM_NON_BLOCKING);
    stream_id = s.id();
    double* nothing = nullptr;
    f.launch(cuabi::config(2, 32), s, 1, nothing);
    f.launch(cuabi::config(5, 64, 16), nullptr, 1, nothing);
    try {
      cuabi::check(cuabi_stream_get_id(s.get(), nullptr));
      expect(false, "a NULL id was accepted");
    } catch (const cuabi::error& e) {
      expect(e.status() == CUABI_ERROR_INVALID_ARGUMENT && e.launches().empty(),
             "an INVALID_ARGUMENT error carries launches");
    }
  }
  fail_entry("cuCtxSynchronize", 1, CUDA_ERROR_LAUNCH_FAILED, 0);
  try {
    device.synchronize();
    expect(false, "the injected fault was not reported");
  } catch (const cuabi::status_error<CUABI_ERROR_CONTEXT_LOST>& e) {
    const auto& l = e.launches();
    expect(l.size() == 2, "launches: " + std::to_string(l.size()));
    if (l.size() == 2) {
      expect(l[0].kernel == "empty2" && l[0].record.grid_x == 5 && l[0].record.block_x == 64 &&
                 l[0].record.shared_mem_bytes == 16 && l[0].record.stream_id == 0 &&
                 l[0].record.sequence == 1,
             "the default stream's launch, first");
      expect(l[1].kernel == "empty2" && l[1].record.grid_x == 2 && l[1].record.block_x == 32 &&
                 l[1].record.stream_id == stream_id && l[1].record.sequence == 1,
             "the stream's launch, second");
    }
    expect(e.message().find("[2] kernel 'empty2' grid (2, 1, 1) block (32, 1, 1)") !=
               std::string::npos,
           "the message: " + e.message());
  }
  if (failures) return 1;
  std::printf("cuabi::error::launches: all checks passed\n");
  return 0;
}
