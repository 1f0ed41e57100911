// Worker processes the GPU tests start (fresh executables, since a child
// forked after CUDA initialised cannot use it).
#include <cuabi/cuabi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "support.h"

namespace hardening {

namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Device 0 and SAXPY compiled for it, released together.
struct Saxpy {
  cuabi_device dev = nullptr;
  cuabi_module mod = nullptr;
  cuabi_function fn = nullptr;
  // "" or what failed.
  std::string Open(uint32_t flags) {
    if (cuabi_device_get(0, &dev) || CompileModule(dev, kSaxpySource, &mod, flags) ||
        cuabi_module_get_function(mod, "saxpy", &fn))
      return LastError();
    return "";
  }
  ~Saxpy() {
    cuabi_function_release(fn);
    cuabi_module_release(mod);
    cuabi_device_release(dev);
  }
};

}  // namespace

// --compile-worker: compiles SAXPY through the cache ($CUABI_CACHE_DIR),
// runs it, verifies it and prints "from_cache=0|1". Exit 0: correct;
// 1: wrong or failed; 2: no device.
int CompileWorkerMain(int, char**) {
  alarm(300);
  if (!NoDeviceReason().empty()) {
    std::printf("no device\n");
    return 2;
  }
  Saxpy s;
  const std::string why = s.Open(0);
  if (!why.empty()) {
    std::printf("failed: %s\n", why.c_str());
    return 1;
  }
  int32_t hit = -1;
  cuabi_module_get_from_cache(s.mod, &hit);
  const std::string r = RunSaxpy(s.dev, s.fn, nullptr, 1 << 18, static_cast<uint32_t>(getpid()));
  std::printf("from_cache=%d\n", hit);
  if (!r.empty()) std::printf("wrong: %s\n", r.c_str());
  return r.empty() ? 0 : 1;
}

// --saxpy-until STOP READY: runs SAXPY on device 0 (CUDA_VISIBLE_DEVICES
// picks the GPU) and verifies it, over and over, from before READY is
// created until after STOP appears (at most 120 s). It is the other process
// beside a test that faults a device. Prints "iterations=N". Exit 0: every
// run correct and at least two of them; 1: wrong, failed or timed out;
// 2: no device.
int SaxpyUntilMain(int argc, char** argv) {
  alarm(180);
  if (argc < 4) {
    std::printf("usage: --saxpy-until STOP READY\n");
    return 1;
  }
  const std::string stop = argv[2], ready = argv[3];
  if (!NoDeviceReason().empty()) {
    std::printf("no device\n");
    return 2;
  }
  Saxpy s;
  const std::string why = s.Open(CUABI_COMPILE_NO_CACHE);
  if (!why.empty()) {
    std::printf("failed: %s\n", why.c_str());
    return 1;
  }
  std::string r = RunSaxpy(s.dev, s.fn, nullptr, 1 << 18, 1);
  if (r.empty()) {
    FILE* f = std::fopen(ready.c_str(), "w");
    if (f) std::fclose(f);
  }
  int iterations = 1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool stopped = false;
  while (r.empty()) {
    stopped = Exists(stop);  // one more run after STOP appears
    r = RunSaxpy(s.dev, s.fn, nullptr, 1 << 18, static_cast<uint32_t>(iterations + 1));
    ++iterations;
    if (stopped) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r = "STOP never appeared";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::printf("iterations=%d\n", iterations);
  if (!r.empty()) std::printf("wrong: %s\n", r.c_str());
  return r.empty() && iterations >= 2 ? 0 : 1;
}

}  // namespace hardening
