// The soak: mixed work from several threads for a while (compile from the
// cache, allocate from the device and from pools in stream order, copy,
// launch, capture and replay graphs, release in random order), sampling
// every second the process's resident memory, the device's used memory and
// cuabi's live handle count. After the warm-up the three must stay flat:
// the run fails when the last minute's mean exceeds the warm-up's by more
// than the tolerance printed.
//
//   cuabi_soak [--seconds N] [--threads N] [--warmup N]
//
// Exit 0: flat; 1: grew or a check failed; 77: no device.
#include <cuabi/cuabi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "handles.hpp"

namespace {

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
)";

std::atomic<bool> g_stop{false};
std::atomic<long> g_ops{0};
std::atomic<long> g_failures{0};
std::mutex g_print;

void failed(const char* what) {
  g_failures.fetch_add(1);
  std::lock_guard<std::mutex> lock(g_print);
  std::fprintf(stderr, "soak: %s failed: %s\n", what, cuabi_last_error_message());
}

#define CHECK(call)           \
  do {                        \
    if ((call) != CUABI_SUCCESS) { \
      failed(#call);          \
      return;                 \
    }                         \
  } while (0)

size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

struct Held {  // a handle this thread holds, released later in random order
  int kind;    // 0 buffer, 1 module, 2 function, 3 graph exec, 4 host buffer
  void* handle;
};

void release(const Held& h) {
  switch (h.kind) {
    case 0: cuabi_buffer_release(static_cast<cuabi_buffer>(h.handle)); break;
    case 1: cuabi_module_release(static_cast<cuabi_module>(h.handle)); break;
    case 2: cuabi_function_release(static_cast<cuabi_function>(h.handle)); break;
    case 3: cuabi_graph_exec_release(static_cast<cuabi_graph_exec>(h.handle)); break;
    default: cuabi_host_buffer_release(static_cast<cuabi_host_buffer>(h.handle)); break;
  }
}

void worker(cuabi_device dev, cuabi_memory_pool pool, unsigned seed) {
  std::mt19937 rng(seed);
  cuabi_stream stream = nullptr;
  if (cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &stream)) return failed("stream");
  std::vector<Held> held;
  const size_t n = 4096;
  std::vector<float> x(n), y(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = float(i % 97);
    y[i] = float(i % 13);
  }
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = kSaxpy;
  auto one = [&]() {
    const int op = static_cast<int>(rng() % 6);
    if (op == 0) {  // compile (from the cache after the first) and keep the module a while
      cuabi_module m = nullptr;
      cuabi_function f = nullptr;
      CHECK(cuabi_module_compile(dev, &desc, &m));
      CHECK(cuabi_module_get_function(m, "saxpy", &f));
      held.push_back({1, m});
      held.push_back({2, f});
    } else if (op <= 2) {  // allocate, copy, launch, verify; the buffers live on a while
      cuabi_module m = nullptr;
      cuabi_function f = nullptr;
      CHECK(cuabi_module_compile(dev, &desc, &m));
      held.push_back({1, m});
      CHECK(cuabi_module_get_function(m, "saxpy", &f));
      held.push_back({2, f});
      cuabi_buffer b[3] = {};
      for (auto& buf : b) {
        const int how = static_cast<int>(rng() % 3);
        cuabi_status st = how == 0   ? cuabi_buffer_alloc(dev, n * 4, &buf)
                          : how == 1 ? cuabi_buffer_alloc_async(dev, n * 4, nullptr, stream, &buf)
                                     : cuabi_buffer_alloc_async(dev, n * 4, pool, stream, &buf);
        if (st) return failed("alloc");
        held.push_back({0, buf});
      }
      CHECK(cuabi_buffer_copy_from_host_async(b[0], 0, x.data(), n * 4, stream));
      CHECK(cuabi_buffer_copy_from_host_async(b[1], 0, y.data(), n * 4, stream));
      uint64_t p[3];
      for (int i = 0; i < 3; ++i) cuabi_buffer_get_pointer(b[i], &p[i]);
      float a = float(rng() % 5);
      size_t count = n;
      void* params[] = {&a, &p[0], &p[1], &p[2], &count};
      cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
      c.grid_x = n / 256;
      c.block_x = 256;
      CHECK(cuabi_function_launch(f, &c, stream, params, 5));
      CHECK(cuabi_buffer_copy_to_host_async(b[2], 0, out.data(), n * 4, stream));
      CHECK(cuabi_stream_synchronize(stream));
      for (size_t i = 0; i < n; i += 97)
        if (out[i] != a * x[i] + y[i]) return failed("saxpy result");
    } else if (op == 3) {  // capture, instantiate, replay, release in random order
      cuabi_module m = nullptr;
      cuabi_function f = nullptr;
      CHECK(cuabi_module_compile(dev, &desc, &m));
      held.push_back({1, m});
      CHECK(cuabi_module_get_function(m, "saxpy", &f));
      held.push_back({2, f});
      cuabi_buffer o = nullptr;
      CHECK(cuabi_buffer_alloc(dev, n * 4, &o));
      held.push_back({0, o});
      uint64_t po = 0;
      cuabi_buffer_get_pointer(o, &po);
      float a = 1.0f;
      size_t count = n;
      void* params[] = {&a, &po, &po, &po, &count};
      cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
      c.grid_x = n / 256;
      c.block_x = 256;
      CHECK(cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL));
      cuabi_buffer tmp = nullptr;
      cuabi_status st = cuabi_buffer_alloc_async(dev, 1024, nullptr, stream, &tmp);
      if (st == CUABI_SUCCESS) st = cuabi_buffer_fill_async(tmp, 0, 7, 4, 256, stream);
      if (st == CUABI_SUCCESS) st = cuabi_function_launch(f, &c, stream, params, 5);
      if (st == CUABI_SUCCESS) st = cuabi_buffer_free_async(tmp, stream);
      cuabi_graph g = nullptr;
      const cuabi_status end = cuabi_stream_end_capture(stream, &g);
      if (st || end) return failed("capture");
      cuabi_graph_exec e = nullptr;
      st = cuabi_graph_instantiate(g, &e);
      if (rng() % 2) cuabi_graph_release(g);
      if (st) return failed("instantiate");
      for (int r = 0; r < 3; ++r) CHECK(cuabi_graph_exec_launch(e, stream));
      CHECK(cuabi_stream_synchronize(stream));
      cuabi_graph_release(g);
      held.push_back({3, e});
    } else if (op == 4) {  // pinned host memory
      cuabi_host_buffer h = nullptr;
      CHECK(cuabi_host_buffer_alloc(dev, 1 << 16, &h));
      held.push_back({4, h});
    } else {  // release a random half of what is held, in random order
      std::shuffle(held.begin(), held.end(), rng);
      const size_t keep = held.size() / 2;
      cuabi_stream_synchronize(stream);
      while (held.size() > keep) {
        release(held.back());
        held.pop_back();
      }
    }
    g_ops.fetch_add(1, std::memory_order_relaxed);
  };
  while (!g_stop.load(std::memory_order_relaxed)) {
    one();
    if (held.size() > 64) {
      cuabi_stream_synchronize(stream);
      std::shuffle(held.begin(), held.end(), rng);
      while (held.size() > 32) {
        release(held.back());
        held.pop_back();
      }
    }
  }
  cuabi_stream_synchronize(stream);
  std::shuffle(held.begin(), held.end(), rng);
  for (const Held& h : held) release(h);
  cuabi_stream_release(stream);
}

struct Sample {
  double t;
  double rss_mib, device_mib;
  size_t handles;
};

}  // namespace

int main(int argc, char** argv) {
  int seconds = 600, threads = 8, warmup = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
  }
  if (warmup >= seconds) warmup = seconds / 3;
  cuabi_device dev = nullptr;
  if (cuabi_device_get(0, &dev) != CUABI_SUCCESS) {
    std::printf("soak: SKIPPED: no device (%s)\n", cuabi_last_error_message());
    return 77;
  }
  cuabi_memory_pool pool = nullptr;
  if (cuabi_memory_pool_create(dev, nullptr, &pool)) {
    std::fprintf(stderr, "soak: pool: %s\n", cuabi_last_error_message());
    return 1;
  }
  std::printf("soak: %d threads for %d s (warm-up %d s), sampling every second\n", threads,
              seconds, warmup);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) workers.emplace_back(worker, dev, pool, 1234u + unsigned(i));
  std::vector<Sample> samples;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 1; s <= seconds; ++s) {
    std::this_thread::sleep_until(start + std::chrono::seconds(s));
    size_t free_b = 0, total = 0;
    cuabi_device_get_memory_info(dev, &free_b, &total);
    Sample x{double(s), resident_bytes() / 1048576.0, (total - free_b) / 1048576.0,
             cuabi::handles::live_count()};
    samples.push_back(x);
    if (s % 10 == 0 || s == 1)
      std::printf("t=%4d s  rss %8.1f MiB  device used %9.1f MiB  live handles %6zu  ops %ld\n",
                  s, x.rss_mib, x.device_mib, x.handles, g_ops.load());
    std::fflush(stdout);
  }
  g_stop = true;
  for (auto& w : workers) w.join();
  cuabi_memory_pool_release(pool);
  // Flatness: the mean of the last minute (or third) against the mean of the
  // minute (or third) after the warm-up.
  const size_t window = std::min<size_t>(60, samples.size() / 3);
  auto mean = [&](size_t from, double Sample::*field) {
    double sum = 0;
    for (size_t i = from; i < from + window; ++i) sum += samples[i].*field;
    return sum / double(window);
  };
  auto mean_h = [&](size_t from) {
    double sum = 0;
    for (size_t i = from; i < from + window; ++i) sum += double(samples[i].handles);
    return sum / double(window);
  };
  const size_t a = size_t(warmup), b = samples.size() - window;
  const double rss0 = mean(a, &Sample::rss_mib), rss1 = mean(b, &Sample::rss_mib);
  const double dev0 = mean(a, &Sample::device_mib), dev1 = mean(b, &Sample::device_mib);
  const double h0 = mean_h(a), h1 = mean_h(b);
  const double rss_tol = 32, dev_tol = 256, h_tol = 64.0 * threads;
  std::printf("soak summary (%ld operations, %ld failures):\n", g_ops.load(), g_failures.load());
  std::printf("  resident memory: %.1f -> %.1f MiB (tolerance +%.0f MiB)\n", rss0, rss1, rss_tol);
  std::printf("  device used:     %.1f -> %.1f MiB (tolerance +%.0f MiB)\n", dev0, dev1, dev_tol);
  std::printf("  live handles:    %.0f -> %.0f (tolerance +%.0f)\n", h0, h1, h_tol);
  const size_t left = cuabi::handles::live_count();
  std::printf("  live handles after every thread released what it held: %zu (the device)\n", left);
  cuabi_device_release(dev);
  const bool flat = rss1 <= rss0 + rss_tol && dev1 <= dev0 + dev_tol && h1 <= h0 + h_tol;
  const bool ok = flat && g_failures.load() == 0 && left == 1;
  std::printf("soak: %s\n", ok ? "flat" : "FAILED");
  return ok ? 0 : 1;
}
