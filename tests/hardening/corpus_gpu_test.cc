// The bad-input corpus through the C ABI, the part that needs a GPU:
// allocations (zero, (size_t)-1, huge), copies past the end or overlapping,
// launch configurations and argument lists the kernel or the device rejects,
// unknown names, bad images and files, and a module released while its
// functions are held. Skips without a device.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "corpus.h"
#include "support.h"

namespace hardening {
namespace {

struct GpuFixture {
  Device device;
  Module saxpy_module;
  Function saxpy;
  Module util;
  Function fill_shared;
  Module raised_module;  // fill_shared with its dynamic shared memory limit raised
  Function raised;
  Buffer a, b;  // 4096 bytes each
  Stream stream;
  Event event;
  Event untimed;      // CUABI_EVENT_DISABLE_TIMING
  std::string cubin;  // SAXPY, for the image cases
  size_t total_memory = 0;
  int32_t max_optin_shared = 0;

  bool Build(std::string* why) {
    auto fail = [&](const char* what) {
      *why = std::string(what) + ": " + LastError();
      return false;
    };
    if (cuabi_device_get(0, device.out())) return fail("cuabi_device_get");
    if (CompileModule(device, kSaxpySource, saxpy_module.out())) return fail("compile saxpy");
    if (cuabi_module_get_function(saxpy_module, "saxpy", saxpy.out())) return fail("saxpy");
    if (CompileModule(device, kUtilSource, util.out())) return fail("compile util");
    if (cuabi_module_get_function(util, "fill_shared", fill_shared.out())) return fail("fill");
    if (CompileModule(device, kUtilSource, raised_module.out())) return fail("compile util 2");
    if (cuabi_module_get_function(raised_module, "fill_shared", raised.out())) return fail("fill");
    if (cuabi_buffer_alloc(device, 4096, a.out())) return fail("alloc a");
    if (cuabi_buffer_alloc(device, 4096, b.out())) return fail("alloc b");
    if (cuabi_stream_create(device, 0, 0, stream.out())) return fail("stream");
    if (cuabi_event_create(device, 0, event.out())) return fail("event");
    if (cuabi_event_create(device, CUABI_EVENT_DISABLE_TIMING, untimed.out())) return fail("event");
    if (cuabi_device_get_total_memory(device, &total_memory)) return fail("total memory");
    // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    if (cuabi_device_get_attribute(device, 97, &max_optin_shared)) return fail("attribute 97");
    int32_t major = 0, minor = 0;
    cuabi_device_get_compute_capability(device, &major, &minor);
    Program p;
    const std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
    const char* opts[] = {arch.c_str()};
    if (cuabi_program_create(kSaxpySource, "saxpy.cu", 0, nullptr, nullptr, p.out()) ||
        cuabi_program_compile(p, 1, opts))
      return fail("program for the CUBIN");
    size_t n = 0;
    cuabi_program_get_cubin(p, nullptr, &n);
    cubin.resize(n);
    if (cuabi_program_get_cubin(p, &cubin[0], &n)) return fail("get cubin");
    return true;
  }
};

// SAXPY's parameters: float a, float* x, float* y, float* out, size_t n.
struct SaxpyArgs {
  float a = 2.0f;
  uint64_t x = 0, y = 0, out = 0;
  size_t n = 16;
  void* params[5] = {&a, &x, &y, &out, &n};
  size_t sizes[5] = {sizeof(a), sizeof(x), sizeof(y), sizeof(out), sizeof(n)};
  explicit SaxpyArgs(cuabi_buffer buf) {
    uint64_t p = 0;
    cuabi_buffer_get_pointer(buf, &p);
    x = y = out = p;
  }
};

cuabi_launch_config Config(uint32_t grid, uint32_t block, uint32_t shared = 0) {
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = grid;
  c.block_x = block;
  c.shared_mem_bytes = shared;
  return c;
}

std::vector<Case> GpuCases(GpuFixture& f) {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string call, cuabi_status expected, std::string needle,
                 std::function<cuabi_status(CaseContext&)> run) {
    cases.push_back(
        {std::move(name), std::move(call), expected, std::move(needle), std::move(run)});
  };
  const cuabi_device dev = f.device.get();
  const cuabi_function saxpy = f.saxpy.get();
  const cuabi_buffer a = f.a.get(), b = f.b.get();
  static char host[8192];

  // --- Allocations -----------------------------------------------------------
  add("zero bytes", "cuabi_buffer_alloc", CUABI_ERROR_INVALID_ARGUMENT, "bytes is 0",
      [dev](CaseContext& ctx) -> cuabi_status {
        cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
        cuabi_status st = cuabi_buffer_alloc(dev, 0, &out);
        if (HandleValue(out) != 0x99) ctx.Problem("out was written although the call failed");
        return st;
      });
  add("(size_t)-1 bytes", "cuabi_buffer_alloc", CUABI_ERROR_OUT_OF_MEMORY, "18446744073709551615",
      [dev](CaseContext&) -> cuabi_status {
        Buffer out;
        return cuabi_buffer_alloc(dev, static_cast<size_t>(-1), out.out());
      });
  add("2^50 bytes", "cuabi_buffer_alloc", CUABI_ERROR_OUT_OF_MEMORY, "out of device memory",
      [dev](CaseContext&) -> cuabi_status {
        Buffer out;
        return cuabi_buffer_alloc(dev, size_t(1) << 50, out.out());
      });
  add("twice the device's memory", "cuabi_buffer_alloc", CUABI_ERROR_OUT_OF_MEMORY,
      "out of device memory", [dev, &f](CaseContext&) -> cuabi_status {
        Buffer out;
        return cuabi_buffer_alloc(dev, f.total_memory * 2, out.out());
      });
  add("the process keeps working after running out of memory", "cuabi_buffer_alloc", CUABI_SUCCESS,
      "", [dev, saxpy](CaseContext& ctx) -> cuabi_status {
        Buffer big;
        cuabi_buffer_alloc(dev, size_t(1) << 50, big.out());
        std::string r = RunSaxpy(dev, saxpy, nullptr, 1 << 20, 7);
        if (!r.empty()) ctx.Problem("SAXPY after the failed allocation: " + r);
        Buffer ok;
        return cuabi_buffer_alloc(dev, 1 << 20, ok.out());
      });
  add("out is NULL", "cuabi_buffer_alloc", CUABI_ERROR_INVALID_ARGUMENT, "out is NULL",
      [dev](CaseContext&) -> cuabi_status { return cuabi_buffer_alloc(dev, 16, nullptr); });
  add("zero bytes", "cuabi_host_buffer_alloc", CUABI_ERROR_INVALID_ARGUMENT, "bytes is 0",
      [dev](CaseContext&) -> cuabi_status {
        HostBuffer out;
        return cuabi_host_buffer_alloc(dev, 0, out.out());
      });
  add("(size_t)-1 bytes", "cuabi_host_buffer_alloc", CUABI_ERROR_OUT_OF_MEMORY, "cuMemHostAlloc",
      [dev](CaseContext&) -> cuabi_status {
        HostBuffer out;
        return cuabi_host_buffer_alloc(dev, static_cast<size_t>(-1), out.out());
      });
  add("register NULL", "cuabi_host_buffer_register", CUABI_ERROR_INVALID_ARGUMENT, "ptr is NULL",
      [dev](CaseContext&) -> cuabi_status {
        HostBuffer out;
        return cuabi_host_buffer_register(dev, nullptr, 64, out.out());
      });
  add("register zero bytes", "cuabi_host_buffer_register", CUABI_ERROR_INVALID_ARGUMENT, "bytes is 0",
      [dev](CaseContext&) -> cuabi_status {
        HostBuffer out;
        return cuabi_host_buffer_register(dev, host, 0, out.out());
      });
  add("wrap address 0", "cuabi_buffer_wrap", CUABI_ERROR_INVALID_ARGUMENT, "device_ptr is 0",
      [dev](CaseContext&) -> cuabi_status {
        Buffer out;
        return cuabi_buffer_wrap(dev, 0, 64, out.out());
      });
  add("wrap zero bytes", "cuabi_buffer_wrap", CUABI_ERROR_INVALID_ARGUMENT, "bytes is 0",
      [dev, a](CaseContext&) -> cuabi_status {
        Buffer out;
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        return cuabi_buffer_wrap(dev, p, 0, out.out());
      });
  add("wrap a range that wraps around the address space", "cuabi_buffer_wrap",
      CUABI_ERROR_INVALID_ARGUMENT, "overflows", [dev](CaseContext&) -> cuabi_status {
        Buffer out;
        return cuabi_buffer_wrap(dev, ~0ull - 15, 64, out.out());
      });

  // --- Copies ----------------------------------------------------------------
  add("one byte past the end", "cuabi_buffer_copy_from_host", CUABI_ERROR_OUT_OF_RANGE,
      "destination range",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_from_host(a, 0, host, 4097); });
  add("offset past the end", "cuabi_buffer_copy_from_host", CUABI_ERROR_OUT_OF_RANGE,
      "4096-byte buffer",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_from_host(a, 4097, host, 0); });
  add("offset + bytes overflows size_t", "cuabi_buffer_copy_from_host", CUABI_ERROR_OUT_OF_RANGE,
      "destination range", [a](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_from_host(a, static_cast<size_t>(-1), host, 2);
      });
  add("(size_t)-1 bytes", "cuabi_buffer_copy_from_host", CUABI_ERROR_OUT_OF_RANGE,
      "destination range", [a](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_from_host(a, 0, host, static_cast<size_t>(-1));
      });
  add("source NULL", "cuabi_buffer_copy_from_host", CUABI_ERROR_INVALID_ARGUMENT, "src is NULL",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_from_host(a, 0, nullptr, 16); });
  add("zero bytes from NULL", "cuabi_buffer_copy_from_host", CUABI_SUCCESS, "",
      [a](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_from_host(a, 4096, nullptr, 0);
      });
  add("read past the end", "cuabi_buffer_copy_to_host", CUABI_ERROR_OUT_OF_RANGE, "source range",
      [a](CaseContext& ctx) -> cuabi_status {
        host[0] = 0x5c;
        cuabi_status st = cuabi_buffer_copy_to_host(a, 4000, host, 97);
        if (host[0] != 0x5c) ctx.Problem("the host buffer was written although the copy failed");
        return st;
      });
  add("destination NULL", "cuabi_buffer_copy_to_host", CUABI_ERROR_INVALID_ARGUMENT, "dst is NULL",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_to_host(a, 0, nullptr, 16); });
  add("async past the end", "cuabi_buffer_copy_from_host_async", CUABI_ERROR_OUT_OF_RANGE,
      "destination range", [a, &f](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_from_host_async(a, 1, host, 4096, f.stream);
      });
  add("async read past the end", "cuabi_buffer_copy_to_host_async", CUABI_ERROR_OUT_OF_RANGE,
      "source range", [a, &f](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_to_host_async(a, 4096, host, 1, f.stream);
      });
  add("async on a released stream", "cuabi_buffer_copy_from_host_async", CUABI_ERROR_INVALID_HANDLE,
      "stream is not a live cuabi_stream", [a, dev](CaseContext&) -> cuabi_status {
        cuabi_stream s = nullptr;
        cuabi_stream_create(dev, 0, 0, &s);
        cuabi_stream_release(s);
        return cuabi_buffer_copy_from_host_async(a, 0, host, 16, s);
      });
  add("async on a buffer handle as the stream", "cuabi_buffer_copy_to_host_async",
      CUABI_ERROR_INVALID_HANDLE, "it is a cuabi_buffer", [a, b](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_to_host_async(a, 0, host, 16,
                                               AsHandle<cuabi_stream>(HandleValue(b)));
      });
  add("device copy overlapping itself", "cuabi_buffer_copy", CUABI_ERROR_INVALID_ARGUMENT,
      "overlap", [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 4, a, 0, 64); });
  add("device copy onto itself", "cuabi_buffer_copy", CUABI_ERROR_INVALID_ARGUMENT, "overlap",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 128, a, 128, 1); });
  add("device copy between two wraps of the same memory", "cuabi_buffer_copy",
      CUABI_ERROR_INVALID_ARGUMENT, "overlap", [a, dev](CaseContext&) -> cuabi_status {
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        Buffer w1, w2;
        cuabi_buffer_wrap(dev, p, 2048, w1.out());
        cuabi_buffer_wrap(dev, p + 1024, 2048, w2.out());
        return cuabi_buffer_copy(w1, 1074, w2, 0, 100);  // [p+1074, +100) and [p+1024, +100)
      });
  add("async device copy overlapping", "cuabi_buffer_copy_async", CUABI_ERROR_INVALID_ARGUMENT,
      "overlap", [a, &f](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_async(a, 0, a, 8, 16, f.stream);
      });
  add("device copy past the destination's end", "cuabi_buffer_copy", CUABI_ERROR_OUT_OF_RANGE,
      "destination range",
      [a, b](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 4000, b, 0, 100); });
  add("device copy past the source's end", "cuabi_buffer_copy", CUABI_ERROR_OUT_OF_RANGE,
      "source range",
      [a, b](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 0, b, 4095, 2); });
  add("non-overlapping halves of one buffer", "cuabi_buffer_copy", CUABI_SUCCESS, "",
      [a](CaseContext& ctx) -> cuabi_status {
        std::vector<unsigned char> v(4096);
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(i * 7);
        cuabi_buffer_copy_from_host(a, 0, v.data(), v.size());
        cuabi_status st = cuabi_buffer_copy(a, 2048, a, 0, 2048);
        std::vector<unsigned char> back(4096);
        cuabi_buffer_copy_to_host(a, 0, back.data(), back.size());
        for (size_t i = 0; i < 2048; ++i)
          if (back[2048 + i] != v[i]) {
            ctx.Problem("byte " + std::to_string(2048 + i) + " differs after the copy");
            break;
          }
        return st;
      });
  add("memset past the end", "cuabi_buffer_memset", CUABI_ERROR_OUT_OF_RANGE, "memset range",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_memset(a, 4095, 0, 2); });
  add("async memset with (size_t)-1 bytes", "cuabi_buffer_memset_async", CUABI_ERROR_OUT_OF_RANGE,
      "memset range", [a, &f](CaseContext&) -> cuabi_status {
        return cuabi_buffer_memset_async(a, 0, 0, static_cast<size_t>(-1), f.stream);
      });

  // --- Launch configurations -------------------------------------------------
  auto launch_cfg = [saxpy, a](const cuabi_launch_config& c) {
    SaxpyArgs args(a);
    return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, args.sizes, 5);
  };
  add("block of 2048 threads in x", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "exceeds the device's limit",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(1, 2048)); });
  add("block of 1024 x 2 threads", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "allows at most", [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 1024);
        c.block_y = 2;
        return launch_cfg(c);
      });
  add("block z of 128", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "exceeds the device's limit", [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 1);
        c.block_z = 128;
        return launch_cfg(c);
      });
  add("grid x of zero", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT, "zero dimension",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(0, 32)); });
  add("grid z of zero", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT, "zero dimension",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.grid_z = 0;
        return launch_cfg(c);
      });
  add("block x of zero", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT, "zero dimension",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(1, 0)); });
  add("grid y of 2^32-1", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "exceeds the device's limit", [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.grid_y = 0xFFFFFFFFu;
        return launch_cfg(c);
      });
  add("1 GiB of dynamic shared memory", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "dynamic shared memory",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(1, 32, 1u << 30)); });
  add("shared memory above the default limit, within the opt-in", "cuabi_function_launch",
      CUABI_ERROR_INVALID_ARGUMENT, "CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES",
      [&f, a](CaseContext&) -> cuabi_status {
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        void* params[] = {&p};
        cuabi_launch_config c = Config(1, 32, 64 * 1024);
        return cuabi_function_launch(f.fill_shared, &c, nullptr, params, 1);
      });
  add("shared memory limit raised past the device's", "cuabi_function_set_attribute",
      CUABI_ERROR_INVALID_ARGUMENT, "cannot be set to", [&f](CaseContext&) -> cuabi_status {
        return cuabi_function_set_attribute(f.raised, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            f.max_optin_shared + 1);
      });
  add("shared memory within a raised limit", "cuabi_function_launch", CUABI_SUCCESS, "",
      [&f, a](CaseContext& ctx) -> cuabi_status {
        if (cuabi_function_set_attribute(f.raised, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         64 * 1024) != CUABI_SUCCESS)
          ctx.Problem("raising the limit: " + LastError());
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        void* params[] = {&p};
        cuabi_launch_config c = Config(1, 32, 64 * 1024);
        cuabi_status st = cuabi_function_launch(f.raised, &c, nullptr, params, 1);
        int out[32] = {0};
        if (st == CUABI_SUCCESS && cuabi_buffer_copy_to_host(a, 0, out, sizeof(out)) == 0 &&
            (out[0] != 31 || out[31] != 0))
          ctx.Problem("fill_shared gave wrong results");
        return st;
      });
  add("config NULL", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT, "config is NULL",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        return cuabi_function_launch_sized(saxpy, nullptr, nullptr, args.params, args.sizes, 5);
      });
  add("config struct_size 0", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "config->struct_size is 0", [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.struct_size = 0;
        return launch_cfg(c);
      });
  add("config from a newer header with a field set", "cuabi_function_launch_packed",
      CUABI_ERROR_NOT_SUPPORTED, "newer than this library",
      [saxpy, a](CaseContext&) -> cuabi_status {
        struct {
          cuabi_launch_config c;
          uint64_t future;
        } big{};
        big.c = Config(1, 32);
        big.c.struct_size = sizeof(big);
        big.future = 1;
        SaxpyArgs args(a);
        std::vector<unsigned char> packed(40, 0);
        return cuabi_function_launch_packed(saxpy, &big.c, nullptr, packed.data(), packed.size());
      });
  add("config from a newer header, new fields zero", "cuabi_function_launch_sized", CUABI_SUCCESS, "",
      [saxpy, a](CaseContext&) -> cuabi_status {
        struct {
          cuabi_launch_config c;
          uint64_t future;
        } big{};
        big.c = Config(1, 32);
        big.c.struct_size = sizeof(big);
        SaxpyArgs args(a);
        return cuabi_function_launch_sized(saxpy, &big.c, nullptr, args.params, args.sizes, 5);
      });

  // --- Argument lists ----------------------------------------------------------
  add("four arguments for five parameters", "cuabi_function_launch", CUABI_ERROR_INVALID_ARGUMENT,
      "takes 5 parameters, but 4 were given", [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(saxpy, &c, nullptr, args.params, 4);
      });
  add("six arguments for five parameters", "cuabi_function_launch", CUABI_ERROR_INVALID_ARGUMENT,
      "6 were given", [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        void* six[] = {args.params[0], args.params[1], args.params[2],
                       args.params[3], args.params[4], args.params[4]};
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(saxpy, &c, nullptr, six, 6);
      });
  add("params NULL", "cuabi_function_launch", CUABI_ERROR_INVALID_ARGUMENT, "params is NULL",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(saxpy, &c, nullptr, nullptr, 5);
      });
  add("one argument pointer NULL", "cuabi_function_launch", CUABI_ERROR_INVALID_ARGUMENT,
      "params[3] is NULL", [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        args.params[3] = nullptr;
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(saxpy, &c, nullptr, args.params, 5);
      });
  add("a 4-byte n for a size_t parameter (the overview's bug)", "cuabi_function_launch_sized",
      CUABI_ERROR_INVALID_ARGUMENT, "parameter 4 is 8 bytes, but the argument given is 4 bytes",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        uint32_t n32 = 16;
        args.params[4] = &n32;
        args.sizes[4] = sizeof(n32);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, args.sizes, 5);
      });
  add("a double for a float parameter", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT,
      "parameter 0 is 4 bytes", [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        double a64 = 2.0;
        args.params[0] = &a64;
        args.sizes[0] = sizeof(a64);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, args.sizes, 5);
      });
  add("param_sizes NULL", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT, "param_sizes is NULL",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, nullptr, 5);
      });
  add("no arguments at all", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_ARGUMENT, "but 0 were given",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, nullptr, nullptr, nullptr, 0);
      });
  add("packed block of 36 bytes for 40", "cuabi_function_launch_packed", CUABI_ERROR_INVALID_ARGUMENT,
      "40-byte argument block", [saxpy](CaseContext&) -> cuabi_status {
        std::vector<unsigned char> packed(36, 0);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_packed(saxpy, &c, nullptr, packed.data(), packed.size());
      });
  add("packed block of (size_t)-1 bytes", "cuabi_function_launch_packed", CUABI_ERROR_INVALID_ARGUMENT,
      "18446744073709551615 bytes were given", [saxpy](CaseContext&) -> cuabi_status {
        unsigned char one = 0;
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_packed(saxpy, &c, nullptr, &one, static_cast<size_t>(-1));
      });
  add("packed args NULL", "cuabi_function_launch_packed", CUABI_ERROR_INVALID_ARGUMENT, "args is NULL",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_packed(saxpy, &c, nullptr, nullptr, 40);
      });
  add("a program handle as the stream", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_HANDLE,
      "stream is not a live cuabi_stream", [saxpy, a](CaseContext&) -> cuabi_status {
        Program p;
        cuabi_program_create("int x;", nullptr, 0, nullptr, nullptr, p.out());
        SaxpyArgs args(a);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, AsHandle<cuabi_stream>(HandleValue(p.get())),
                                  args.params, args.sizes, 5);
      });
  add("a module handle as the function", "cuabi_function_launch", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_module", [&f](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(AsHandle<cuabi_function>(HandleValue(f.saxpy_module.get())), &c,
                            nullptr, nullptr, 0);
      });

  // --- Launch plans -------------------------------------------------------------
  add("plan with a NULL config", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_ARGUMENT,
      "config is NULL", [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_plan p = nullptr;
        return cuabi_launch_plan_create(saxpy, nullptr, nullptr, &p);
      });
  add("plan with a block over the limit", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_ARGUMENT,
      "exceeds the device's limit", [saxpy](CaseContext& ctx) -> cuabi_status {
        cuabi_launch_plan p = AsHandle<cuabi_launch_plan>(0x77);
        cuabi_launch_config c = Config(1, 4096);
        cuabi_status st = cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
        if (HandleValue(p) != 0x77) ctx.Problem("out was written although the call failed");
        return st;
      });
  add("plan with a zero grid", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_ARGUMENT,
      "zero dimension", [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_plan p = nullptr;
        cuabi_launch_config c = Config(0, 32);
        return cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
      });
  add("plan with config struct_size 0", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_ARGUMENT,
      "struct_size is 0", [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_plan p = nullptr;
        cuabi_launch_config c = Config(1, 32);
        c.struct_size = 0;
        return cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
      });
  add("plan on a released stream", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_HANDLE,
      "stream is not a live cuabi_stream", [saxpy, dev](CaseContext&) -> cuabi_status {
        cuabi_stream s = nullptr;
        cuabi_stream_create(dev, 0, 0, &s);
        cuabi_stream_release(s);
        cuabi_launch_plan p = nullptr;
        cuabi_launch_config c = Config(1, 32);
        return cuabi_launch_plan_create(saxpy, &c, s, &p);
      });
  add("plan into NULL", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_ARGUMENT, "out is NULL",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        return cuabi_launch_plan_create(saxpy, &c, nullptr, nullptr);
      });
  add("plan arguments into NULL", "cuabi_launch_plan_get_args", CUABI_ERROR_INVALID_ARGUMENT,
      "args is NULL", [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        cuabi_launch_plan p = nullptr;
        cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
        size_t n = 0;
        cuabi_status st = cuabi_launch_plan_get_args(p, nullptr, &n);
        cuabi_launch_plan_release(p);
        return st;
      });
  add("plan released twice, then launched", "cuabi_launch_plan_launch", CUABI_ERROR_INVALID_HANDLE,
      "plan is not a live cuabi_launch_plan", [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        cuabi_launch_plan p = nullptr;
        cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
        cuabi_launch_plan_release(p);
        cuabi_launch_plan_release(p);
        return cuabi_launch_plan_launch(p);
      });
  add("a plan outlives its module, function and stream", "cuabi_launch_plan_launch", CUABI_SUCCESS,
      "", [dev](CaseContext& ctx) -> cuabi_status {
        Module m;
        Function fn;
        Stream s;
        cuabi_launch_plan plan = nullptr;
        cuabi_launch_config c = Config(4, 256);
        if (CompileModule(dev, kSaxpySource, m.out()) ||
            cuabi_module_get_function(m, "saxpy", fn.out()) ||
            cuabi_stream_create(dev, 0, 0, s.out()) || cuabi_launch_plan_create(fn, &c, s, &plan)) {
          ctx.Problem("setup: " + LastError());
          return CUABI_ERROR_INTERNAL;
        }
        const cuabi_stream stream = s.get();
        m.reset();
        fn.reset();
        s.reset();
        // 1024 elements: x = i, y = 1, out = 2x + y, through the plan's block.
        std::vector<float> x(1024), y(1024, 1.0f), out(1024, 0.0f);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
        Buffer bx, by, bo;
        cuabi_buffer_alloc(dev, 4096, bx.out());
        cuabi_buffer_alloc(dev, 4096, by.out());
        cuabi_buffer_alloc(dev, 4096, bo.out());
        cuabi_buffer_copy_from_host(bx, 0, x.data(), 4096);
        cuabi_buffer_copy_from_host(by, 0, y.data(), 4096);
        void* args = nullptr;
        size_t size = 0;
        if (cuabi_launch_plan_get_args(plan, &args, &size) || size != 40) {
          ctx.Problem("get_args: " + LastError() + ", size " + std::to_string(size));
          cuabi_launch_plan_release(plan);
          return CUABI_ERROR_INTERNAL;
        }
        const float a = 2.0f;
        const size_t n = 1024;
        uint64_t px = 0, py = 0, po = 0;
        cuabi_buffer_get_pointer(bx, &px);
        cuabi_buffer_get_pointer(by, &py);
        cuabi_buffer_get_pointer(bo, &po);
        unsigned char* block = static_cast<unsigned char*>(args);
        std::memcpy(block + 0, &a, 4);
        std::memcpy(block + 8, &px, 8);
        std::memcpy(block + 16, &py, 8);
        std::memcpy(block + 24, &po, 8);
        std::memcpy(block + 32, &n, 8);
        cuabi_status st = cuabi_launch_plan_launch(plan);
        // The plan's stream was released by us; it is still the plan's: wait
        // for everything on the device.
        cuabi_device_synchronize(dev);
        cuabi_buffer_copy_to_host(bo, 0, out.data(), 4096);
        for (size_t i = 0; i < out.size(); ++i)
          if (out[i] != 2.0f * x[i] + 1.0f) {
            ctx.Problem("element " + std::to_string(i) + " is wrong");
            break;
          }
        (void)stream;
        cuabi_launch_plan_release(plan);
        return st;
      });

  // --- Names, attributes, ordinals ------------------------------------------
  add("an unknown kernel", "cuabi_module_get_function", CUABI_ERROR_NOT_FOUND,
      "no kernel named 'no_such_kernel'", [&f](CaseContext& ctx) -> cuabi_status {
        cuabi_function out = AsHandle<cuabi_function>(0x42);
        cuabi_status st = cuabi_module_get_function(f.saxpy_module, "no_such_kernel", &out);
        if (HandleValue(out) != 0x42) ctx.Problem("out was written although the call failed");
        return st;
      });
  add("an empty kernel name", "cuabi_module_get_function", CUABI_ERROR_INVALID_ARGUMENT, "name",
      [&f](CaseContext&) -> cuabi_status {
        Function out;
        return cuabi_module_get_function(f.saxpy_module, "", out.out());
      });
  add("a NULL kernel name", "cuabi_module_get_function", CUABI_ERROR_INVALID_ARGUMENT, "name",
      [&f](CaseContext&) -> cuabi_status {
        Function out;
        return cuabi_module_get_function(f.saxpy_module, nullptr, out.out());
      });
  add("a kernel name that is not UTF-8", "cuabi_module_get_function", CUABI_ERROR_INVALID_ARGUMENT,
      "UTF-8", [&f](CaseContext&) -> cuabi_status {
        Function out;
        return cuabi_module_get_function(f.saxpy_module, "sax\xffpy", out.out());
      });
  add("a template kernel without a name expression", "cuabi_module_get_function",
      CUABI_ERROR_NOT_FOUND, "name expression", [&f](CaseContext&) -> cuabi_status {
        Function out;
        return cuabi_module_get_function(f.util, "store<int>", out.out());
      });
  add("an unknown global", "cuabi_module_get_global", CUABI_ERROR_NOT_FOUND,
      "no global named 'no_such_global'", [&f](CaseContext&) -> cuabi_status {
        uint64_t p = 0;
        size_t n = 0;
        return cuabi_module_get_global(f.util, "no_such_global", &p, &n);
      });
  add("an unknown lowered name", "cuabi_module_get_lowered_name", CUABI_ERROR_NOT_FOUND,
      "store<long>", [&f](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_module_get_lowered_name(f.util, "store<long>", nullptr, &n);
      });
  add("parameter layout into too few entries", "cuabi_function_get_params",
      CUABI_ERROR_INSUFFICIENT_BUFFER, "params holds 1 entries; kernel 'saxpy' has 5",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_param_info p[1];
        size_t n = 1;
        return cuabi_function_get_params(saxpy, p, &n, nullptr);
      });
  add("parameter index (size_t)-1", "cuabi_function_check_arg_size", CUABI_ERROR_INVALID_ARGUMENT,
      "there is no parameter 18446744073709551615", [saxpy](CaseContext&) -> cuabi_status {
        return cuabi_function_check_arg_size(saxpy, static_cast<size_t>(-1), 8);
      });
  add("an unknown function attribute", "cuabi_function_get_attribute", CUABI_ERROR_INVALID_ARGUMENT,
      "attribute 9999", [saxpy](CaseContext&) -> cuabi_status {
        int32_t v = 0;
        return cuabi_function_get_attribute(saxpy, static_cast<cuabi_function_attribute>(9999), &v);
      });
  add("an unknown device attribute", "cuabi_device_get_attribute", CUABI_ERROR_INVALID_ARGUMENT,
      "cu_attribute 99999", [dev](CaseContext&) -> cuabi_status {
        int32_t v = 0;
        return cuabi_device_get_attribute(dev, 99999, &v);
      });
  add("ordinal -1", "cuabi_device_get", CUABI_ERROR_NO_DEVICE, "no CUDA device -1",
      [](CaseContext&) -> cuabi_status {
        Device d;
        return cuabi_device_get(-1, d.out());
      });
  add("ordinal 1000000", "cuabi_device_get", CUABI_ERROR_NO_DEVICE, "no CUDA device 1000000",
      [](CaseContext&) -> cuabi_status {
        Device d;
        return cuabi_device_get(1000000, d.out());
      });
  add("unknown stream flags", "cuabi_stream_create", CUABI_ERROR_INVALID_ARGUMENT, "flags",
      [dev](CaseContext&) -> cuabi_status {
        Stream s;
        return cuabi_stream_create(dev, 0x80, 0, s.out());
      });
  add("unknown event flags", "cuabi_event_create", CUABI_ERROR_INVALID_ARGUMENT, "flags",
      [dev](CaseContext&) -> cuabi_status {
        Event e;
        return cuabi_event_create(dev, 0x80, e.out());
      });
  add("an unknown capture mode", "cuabi_stream_begin_capture", CUABI_ERROR_INVALID_ARGUMENT,
      "mode 99",
      [&f](CaseContext&) -> cuabi_status { return cuabi_stream_begin_capture(f.stream, static_cast<cuabi_capture_mode>(99)); });
  add("elapsed time of events never recorded", "cuabi_event_get_elapsed_ms",
      CUABI_ERROR_INVALID_ARGUMENT, "never recorded", [dev](CaseContext&) -> cuabi_status {
        Event e1, e2;
        cuabi_event_create(dev, 0, e1.out());
        cuabi_event_create(dev, 0, e2.out());
        float ms = 0;
        return cuabi_event_get_elapsed_ms(e1, e2, &ms);
      });
  add("elapsed time of an untimed event", "cuabi_event_get_elapsed_ms", CUABI_ERROR_INVALID_ARGUMENT,
      "DISABLE_TIMING", [&f](CaseContext&) -> cuabi_status {
        cuabi_event_record(f.untimed, nullptr);
        cuabi_event_record(f.event, nullptr);
        cuabi_event_synchronize(f.event);
        float ms = 0;
        return cuabi_event_get_elapsed_ms(f.untimed, f.event, &ms);
      });
  add("wait on a released event", "cuabi_stream_wait_event", CUABI_ERROR_INVALID_HANDLE,
      "event is not a live cuabi_event", [&f, dev](CaseContext&) -> cuabi_status {
        cuabi_event e = nullptr;
        cuabi_event_create(dev, 0, &e);
        cuabi_event_release(e);
        return cuabi_stream_wait_event(f.stream, e);
      });

  // --- Images, files, compile descriptions ---------------------------------------
  add("image NULL", "cuabi_module_load_data", CUABI_ERROR_INVALID_ARGUMENT, "image is NULL",
      [dev](CaseContext&) -> cuabi_status {
        Module m;
        return cuabi_module_load_data(dev, nullptr, 10, m.out());
      });
  add("image of zero bytes", "cuabi_module_load_data", CUABI_ERROR_INVALID_ARGUMENT, "size is 0",
      [dev, &f](CaseContext&) -> cuabi_status {
        Module m;
        return cuabi_module_load_data(dev, f.cubin.data(), 0, m.out());
      });
  add("random bytes as an image", "cuabi_module_load_data", CUABI_ERROR_CUDA, "cuModuleLoadData",
      [dev](CaseContext&) -> cuabi_status {
        std::vector<unsigned char> junk(256);
        for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<unsigned char>(i * 131 + 7);
        Module m;
        return cuabi_module_load_data(dev, junk.data(), junk.size(), m.out());
      });
  add("PTX text that is not PTX", "cuabi_module_load_data", CUABI_ERROR_CUDA, "cuModuleLoadData",
      [dev](CaseContext&) -> cuabi_status {
        const char text[] = ".version 99.9\n.target sm_1\nthis is not ptx";
        Module m;
        return cuabi_module_load_data(dev, text, sizeof(text) - 1, m.out());
      });
  add("a CUBIN cut in half (zero padding after)", "cuabi_module_load_data",
      CUABI_ERROR_INVALID_ARGUMENT, "truncated or malformed",
      [dev, &f](CaseContext&) -> cuabi_status {
        std::vector<char> half(f.cubin.size() * 2, 0);
        std::copy(f.cubin.begin(), f.cubin.begin() + f.cubin.size() / 2, half.begin());
        Module m;
        return cuabi_module_load_data(dev, half.data(), f.cubin.size() / 2, m.out());
      });
  add("a CUBIN with its ELF header damaged", "cuabi_module_load_data", CUABI_ERROR_INVALID_ARGUMENT,
      "truncated or malformed", [dev, &f](CaseContext&) -> cuabi_status {
        std::string bad = f.cubin;
        for (size_t i = 16; i < 64 && i < bad.size(); ++i) bad[i] = static_cast<char>(0xFF);
        Module m;
        return cuabi_module_load_data(dev, bad.data(), bad.size(), m.out());
      });
  add("CUBIN truncations ending at an unmapped page", "cuabi_module_load_data",
      CUABI_ERROR_INVALID_ARGUMENT, "truncated or malformed",
      [dev, &f](CaseContext& ctx) -> cuabi_status {
        // Each truncated image ends exactly where a PROT_NONE page begins: a
        // read past the given size would crash here instead of passing unseen.
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const size_t span = (f.cubin.size() / page + 2) * page;
        void* base =
            mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
          ctx.Problem("mmap failed");
          return CUABI_ERROR_INTERNAL;
        }
        char* guard = static_cast<char*>(base) + span;
        mprotect(guard, page, PROT_NONE);
        cuabi_status last = CUABI_ERROR_INTERNAL;
        size_t tried = 0;
        for (size_t len = 1; len < f.cubin.size(); len += (len < 128 ? 1 : 61)) {
          char* start = guard - len;
          std::memcpy(start, f.cubin.data(), len);
          Module m;
          cuabi_status st = cuabi_module_load_data(dev, start, len, m.out());
          ++tried;
          if (st != CUABI_ERROR_INVALID_ARGUMENT) {
            ctx.Problem("a " + std::to_string(len) + "-byte truncation answered " + StatusName(st));
            last = st;
            break;
          }
          last = st;
        }
        munmap(base, span + page);
        if (tried < 100) ctx.Problem("too few truncations tried");
        return last;
      });
  add("an ELF header alone", "cuabi_module_load_data", CUABI_ERROR_INVALID_ARGUMENT,
      "truncated or malformed", [dev](CaseContext&) -> cuabi_status {
        unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 1, 1};  // 32-bit
        Module m;
        return cuabi_module_load_data(dev, elf, sizeof(elf), m.out());
      });
  add("a fatbin header claiming 2^40 bytes", "cuabi_module_load_data", CUABI_ERROR_INVALID_ARGUMENT,
      "fatbin image is truncated", [dev](CaseContext&) -> cuabi_status {
        unsigned char fat[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 1, 0, 0};
        Module m;
        return cuabi_module_load_data(dev, fat, sizeof(fat), m.out());
      });
  add("a file that does not exist", "cuabi_module_load_file", CUABI_ERROR_IO,
      "/nonexistent/kernel.cubin", [dev](CaseContext&) -> cuabi_status {
        Module m;
        return cuabi_module_load_file(dev, "/nonexistent/kernel.cubin", m.out());
      });
  add("a directory as the file", "cuabi_module_load_file", CUABI_ERROR_IO, "/tmp",
      [dev](CaseContext&) -> cuabi_status {
        Module m;
        return cuabi_module_load_file(dev, "/tmp", m.out());
      });
  add("an empty file", "cuabi_module_load_file", CUABI_ERROR_INVALID_ARGUMENT, "is empty",
      [dev](CaseContext& ctx) -> cuabi_status {
        char path[] = "/tmp/cuabi-empty-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0) ctx.Problem("mkstemp failed");
        close(fd);
        Module m;
        cuabi_status st = cuabi_module_load_file(dev, path, m.out());
        unlink(path);
        return st;
      });
  add("a path that is not UTF-8", "cuabi_module_load_file", CUABI_ERROR_INVALID_ARGUMENT, "UTF-8",
      [dev](CaseContext&) -> cuabi_status {
        Module m;
        return cuabi_module_load_file(dev, "/tmp/\xff\xfe.cubin", m.out());
      });
  auto compile_desc = [dev](cuabi_compile_desc d) {
    Module m;
    return cuabi_module_compile(dev, &d, m.out());
  };
  add("desc NULL", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT, "desc is NULL",
      [dev](CaseContext&) -> cuabi_status {
        Module m;
        return cuabi_module_compile(dev, nullptr, m.out());
      });
  add("desc struct_size 0", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "desc->struct_size is 0", [compile_desc](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.struct_size = 0;
        return compile_desc(d);
      });
  add("desc source NULL", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "desc->source is NULL", [compile_desc](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        return compile_desc(d);
      });
  add("desc output 7", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT, "desc->output is 7",
      [compile_desc](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.output = static_cast<cuabi_output>(7);
        return compile_desc(d);
      });
  add("desc flags unknown", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT, "desc->flags",
      [compile_desc](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.flags = 0x100;
        return compile_desc(d);
      });
  add("desc options NULL with a count", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "desc->options", [compile_desc](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.num_options = 3;
        return compile_desc(d);
      });
  add("desc options count (size_t)-1", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "implausibly large", [compile_desc](CaseContext&) -> cuabi_status {
        static const char* one[] = {"-w"};
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.options = one;
        d.num_options = static_cast<size_t>(-1);
        return compile_desc(d);
      });
  add("desc name expression NULL", "cuabi_module_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "desc->name_expressions[0] is NULL", [compile_desc](CaseContext&) -> cuabi_status {
        static const char* exprs[] = {nullptr};
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kUtilSource;
        d.name_expressions = exprs;
        d.num_name_expressions = 1;
        return compile_desc(d);
      });
  add("a compile error", "cuabi_module_compile", CUABI_ERROR_COMPILE, "undefined_in_module",
      [compile_desc](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = "extern \"C\" __global__ void k(int* x) { *x = undefined_in_module; }";
        d.flags = CUABI_COMPILE_NO_CACHE;
        cuabi_status st = compile_desc(d);
        if (!Contains(LastErrorLog(), "undefined_in_module"))
          ctx.Problem("cuabi_last_error_log does not hold NVRTC's log");
        return st;
      });
  add("an architecture that does not exist", "cuabi_module_compile", CUABI_ERROR_COMPILE,
      "--gpu-architecture", [compile_desc](CaseContext&) -> cuabi_status {
        static const char* opts[] = {"--gpu-architecture=sm_1"};
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.options = opts;
        d.num_options = 1;
        d.flags = CUABI_COMPILE_NO_CACHE;
        return compile_desc(d);
      });
  add("a desc from a newer header with a field set", "cuabi_module_compile",
      CUABI_ERROR_NOT_SUPPORTED, "newer than this library", [dev](CaseContext&) -> cuabi_status {
        struct {
          cuabi_compile_desc d;
          uint64_t future;
        } big{};
        big.d = CUABI_COMPILE_DESC_INIT;
        big.d.struct_size = sizeof(big);
        big.d.source = kSaxpySource;
        big.future = 3;
        Module m;
        return cuabi_module_compile(dev, &big.d, m.out());
      });

  // --- A module released while its functions are held ------------------------
  add("module released, its function still launches", "cuabi_function_launch_sized", CUABI_SUCCESS, "",
      [dev](CaseContext& ctx) -> cuabi_status {
        Module m;
        Function fn;
        if (CompileModule(dev, kSaxpySource, m.out()) ||
            cuabi_module_get_function(m, "saxpy", fn.out())) {
          ctx.Problem("setup: " + LastError());
          return CUABI_ERROR_INTERNAL;
        }
        const cuabi_module gone = m.get();
        m.reset();  // the function keeps the module alive
        Function again;
        if (cuabi_module_get_function(gone, "saxpy", again.out()) != CUABI_ERROR_INVALID_HANDLE)
          ctx.Problem("the released module handle still answers");
        std::string r = RunSaxpy(dev, fn, nullptr, 4096, 3);
        if (!r.empty()) ctx.Problem(r);
        char name[16];
        size_t n = sizeof(name);
        if (cuabi_function_get_name(fn, name, &n) != CUABI_SUCCESS || std::string(name) != "saxpy")
          ctx.Problem("the function lost its name");
        return r.empty() ? CUABI_SUCCESS : CUABI_ERROR_INTERNAL;
      });
  add("module released, then its handle used", "cuabi_module_get_global",
      CUABI_ERROR_INVALID_HANDLE, "module is not a live cuabi_module",
      [dev](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        CompileModule(dev, kUtilSource, &m);
        cuabi_module_release(m);
        uint64_t p = 0;
        size_t n = 0;
        return cuabi_module_get_global(m, "hardening_counter", &p, &n);
      });
  add("buffer released twice, then used", "cuabi_buffer_memset", CUABI_ERROR_INVALID_HANDLE,
      "buffer is not a live cuabi_buffer", [dev](CaseContext&) -> cuabi_status {
        cuabi_buffer x = nullptr;
        cuabi_buffer_alloc(dev, 64, &x);
        cuabi_buffer_release(x);
        cuabi_buffer_release(x);
        return cuabi_buffer_memset(x, 0, 0, 64);
      });
  add("device handle released, its buffer still works", "cuabi_buffer_copy_to_host", CUABI_SUCCESS,
      "", [](CaseContext& ctx) -> cuabi_status {
        Device d;
        Buffer x;
        cuabi_device_get(0, d.out());
        cuabi_buffer_alloc(d, 64, x.out());
        d.reset();
        unsigned char v[64];
        if (cuabi_buffer_memset(x, 0, 0xAB, 64) != CUABI_SUCCESS) ctx.Problem(LastError());
        cuabi_status st = cuabi_buffer_copy_to_host(x, 0, v, 64);
        if (v[63] != 0xAB) ctx.Problem("wrong data after the device handle was released");
        return st;
      });
  return cases;
}

TEST(GpuBadInputCorpus, CApi) {
  HARDENING_REQUIRE_GPU();
  GpuFixture fixture;
  std::string why;
  ASSERT_TRUE(fixture.Build(&why)) << why;
  const std::vector<Case> cases = GpuCases(fixture);
  const CorpusResult result = RunCorpus(cases);
  ReportCorpus("C ABI, GPU", result);
  // The context must have survived every case.
  EXPECT_EQ("", RunSaxpy(fixture.device, fixture.saxpy, fixture.stream, 1 << 16, 11));
  EXPECT_EQ(result.cases, result.passed)
      << result.failures.size() << " case(s) failed (listed above)";
}

}  // namespace
}  // namespace hardening
