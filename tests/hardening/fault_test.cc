// GPU faults: a kernel that stores to an address it must not. The call that
// sees the fault (the launch or the next synchronize) and every later call
// that touches the device answer CUABI_ERROR_CONTEXT_LOST, naming the way out;
// cuabi_device_reset cannot bring the device back to this process (the
// driver refuses it after a sticky fault) and says so with the same status;
// releasing every object stays safe; and a new process computes SAXPY
// correctly on the same device. A reset without a fault frees everything:
// old objects answer CONTEXT_LOST, new ones work. With two or more devices:
// the faulting process gets clean answers on every device, processes beside
// it keep working on every device, and new processes work.
//
// Its own executable, and each test its own process (ctest), because a fault
// poisons the process.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support.h"

namespace hardening {
namespace {

class GpuFault : public ::testing::Test {
 protected:
  void SetUp() override {
    HARDENING_REQUIRE_GPU();
    HARDENING_ASSERT_OK(cuabi_device_get(0, device_.out()));
  }

  // Launches poke(address) and returns the status of the first call that
  // reports the fault: the launch itself, or the synchronize after it.
  cuabi_status Poke(cuabi_function poke, uint64_t address, std::string* seen_by) {
    int value = 1;
    void* params[] = {&address, &value};
    const size_t sizes[] = {sizeof(address), sizeof(value)};
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    cuabi_status st = cuabi_function_launch_sized(poke, &c, nullptr, params, sizes, 2);
    if (st != CUABI_SUCCESS) {
      *seen_by = "cuabi_function_launch_sized";
      return st;
    }
    *seen_by = "cuabi_device_synchronize";
    return cuabi_device_synchronize(device_);
  }

  // Every call that touches the device answers CONTEXT_LOST and, with
  // `advice`, the last one's message says what to do.
  void ExpectEverythingLost(cuabi_function saxpy, cuabi_buffer buffer, cuabi_stream stream,
                            bool advice = true) {
    std::vector<std::pair<std::string, cuabi_status>> calls;
    char host[64] = {0};
    calls.push_back({"cuabi_device_synchronize", cuabi_device_synchronize(device_)});
    Buffer nb;
    calls.push_back({"cuabi_buffer_alloc", cuabi_buffer_alloc(device_, 64, nb.out())});
    calls.push_back(
        {"cuabi_buffer_copy_from_host", cuabi_buffer_copy_from_host(buffer, 0, host, 64)});
    calls.push_back({"cuabi_buffer_copy_to_host", cuabi_buffer_copy_to_host(buffer, 0, host, 64)});
    calls.push_back({"cuabi_buffer_memset", cuabi_buffer_memset(buffer, 0, 0, 64)});
    calls.push_back({"cuabi_stream_synchronize", cuabi_stream_synchronize(stream)});
    Stream ns;
    calls.push_back({"cuabi_stream_create", cuabi_stream_create(device_, 0, 0, ns.out())});
    Event ne;
    calls.push_back({"cuabi_event_create", cuabi_event_create(device_, 0, ne.out())});
    Module nm;
    calls.push_back({"cuabi_module_compile", CompileModule(device_, kSaxpySource, nm.out())});
    uint64_t p = 0;
    cuabi_buffer_get_pointer(buffer, &p);
    float a = 2;
    size_t n = 16;
    void* params[] = {&a, &p, &p, &p, &n};
    const size_t sizes[] = {4, 8, 8, 8, 8};
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    calls.push_back(
        {"cuabi_function_launch_sized", cuabi_function_launch_sized(saxpy, &c, nullptr, params, sizes, 5)});
    for (auto& [name, st] : calls) {
      EXPECT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(st)) << name;
    }
    if (advice) {
      EXPECT_TRUE(Contains(cuabi_last_error_message(), "new one")) << LastError();
    }
    EXPECT_TRUE(nb.get() == nullptr && ns.get() == nullptr && ne.get() == nullptr &&
                nm.get() == nullptr)
        << "an out-parameter was written by a call that failed";
  }

  // SAXPY in a fresh process on the same device: the recovery there is.
  void ExpectANewProcessWorks(const char* stage) {
    std::vector<RunningChild> one = {
        SpawnProcess(CUABI_HARDENING_WORKER, {"--compile-worker"}, {"CUABI_CACHE=0"})};
    ChildResult r = WaitChildren(one, 300)[0];
    EXPECT_TRUE(r.exited && r.code == 0) << stage << ": " << r.Describe();
    std::printf("%s: a new process ran SAXPY %s\n", stage,
                r.exited && r.code == 0 ? "correctly" : "WRONG");
  }

  Device device_;
};

TEST_F(GpuFault, StoreToAddress0x10) {
  Module util, mod;
  Function poke, saxpy;
  HARDENING_ASSERT_OK(CompileModule(device_, kUtilSource, util.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(util, "poke", poke.out()));
  HARDENING_ASSERT_OK(CompileModule(device_, kSaxpySource, mod.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "saxpy", saxpy.out()));
  ASSERT_EQ("", RunSaxpy(device_, saxpy, nullptr, 1 << 16, 1)) << "before the fault";
  Buffer buffer;
  Stream stream;
  Event event;
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(device_, 4096, buffer.out()));
  HARDENING_ASSERT_OK(cuabi_stream_create(device_, 0, 0, stream.out()));
  HARDENING_ASSERT_OK(cuabi_event_create(device_, 0, event.out()));

  // Health: usable before the fault; lost after it, naming the call that
  // found it, with the callback called once on that call's thread.
  cuabi_health health = CUABI_HEALTH_LOST;
  HARDENING_ASSERT_OK(cuabi_device_get_health(device_, &health));
  EXPECT_EQ(CUABI_HEALTH_USABLE, health);
  static int told = 0;
  static std::string told_message;
  HARDENING_ASSERT_OK(cuabi_set_context_lost_callback(
      [](void*, const char* message) {
        ++told;
        told_message = message;
      },
      nullptr));

  std::string seen_by;
  const cuabi_status st = Poke(poke, 0x10, &seen_by);
  ASSERT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(st)) << seen_by << ": " << LastError();
  EXPECT_TRUE(Contains(cuabi_last_error_message(), seen_by.substr(0, 14))) << LastError();
  std::printf("fault at 0x10 reported by %s: %s\n", seen_by.c_str(), cuabi_last_error_message());
  HARDENING_ASSERT_OK(cuabi_device_get_health(device_, &health));
  EXPECT_EQ(CUABI_HEALTH_LOST, health);
  EXPECT_EQ(1, told);
  EXPECT_EQ(std::string(cuabi_last_error_message()), told_message);
  char lost[2048];
  size_t lost_size = sizeof lost;
  HARDENING_ASSERT_OK(cuabi_context_lost_get_message(lost, &lost_size));
  EXPECT_EQ(told_message, std::string(lost));
  std::printf("health after the fault: lost; the callback ran %d time(s)\n", told);
  ExpectEverythingLost(saxpy, buffer, stream);
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_event_record(event, stream));
  EXPECT_EQ(1, told) << "the callback is called once";
  HARDENING_ASSERT_OK(cuabi_set_context_lost_callback(nullptr, nullptr));

  // A reset cannot bring the device back to this process, and says so.
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_device_reset(device_));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "new one")) << LastError();
  ExpectEverythingLost(saxpy, buffer, stream, /*advice=*/false);

  // Handles stay handles: getters that touch nothing answer.
  size_t size = 0;
  HARDENING_EXPECT_OK(cuabi_buffer_get_size(buffer, &size));
  EXPECT_EQ(4096u, size);

  // Releasing everything is safe, in any order.
  event.reset();
  saxpy.reset();
  buffer.reset();
  mod.reset();
  stream.reset();
  poke.reset();
  util.reset();
  device_.reset();

  ExpectANewProcessWorks("after a fault at 0x10");
}

TEST_F(GpuFault, StoreFarPastAnAllocation) {
  Module util, mod;
  Function poke, saxpy;
  HARDENING_ASSERT_OK(CompileModule(device_, kUtilSource, util.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(util, "poke", poke.out()));
  HARDENING_ASSERT_OK(CompileModule(device_, kSaxpySource, mod.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "saxpy", saxpy.out()));
  Buffer buffer;
  Stream stream;
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(device_, 1 << 20, buffer.out()));
  HARDENING_ASSERT_OK(cuabi_stream_create(device_, 0, 0, stream.out()));
  ASSERT_EQ("", RunSaxpy(device_, saxpy, stream, 1 << 16, 10));
  uint64_t base = 0;
  HARDENING_ASSERT_OK(cuabi_buffer_get_pointer(buffer, &base));

  std::string seen_by;
  const cuabi_status st = Poke(poke, base + (1ull << 40), &seen_by);
  ASSERT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(st)) << seen_by << ": " << LastError();
  std::printf("fault 1 TiB past an allocation reported by %s\n", seen_by.c_str());
  ExpectEverythingLost(saxpy, buffer, stream);

  // A second device handle taken now sees the same lost device.
  Device second;
  cuabi_status got = cuabi_device_get(0, second.out());
  if (got == CUABI_SUCCESS) {
    Buffer b;
    HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_buffer_alloc(second, 64, b.out()));
  } else {
    EXPECT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(got)) << LastError();
  }
  ExpectANewProcessWorks("after a fault far past an allocation");
}

// Three launches on two streams after one seen complete; the second writes
// far out of bounds. The call that finds the fault (the third launch or the
// synchronize) names the launches not seen complete, most recent first: the
// out-of-bounds kernel with its grid, block and stream among them, the
// launch seen complete not; the last error gives them as data.
TEST_F(GpuFault, TheMessageNamesTheLaunchesNotSeenComplete) {
  static const char kSource[] = R"(
extern "C" __global__ void fill(float* x, unsigned n, float v) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
extern "C" __global__ void write_far(float* x, unsigned long long far) {
  x[far + threadIdx.x] = 1.0f;
}
)";
  Module mod;
  Function fill, write_far;
  HARDENING_ASSERT_OK(CompileModule(device_, kSource, mod.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "fill", fill.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "write_far", write_far.out()));
  Buffer buffer;
  Stream a, b;
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(device_, 1 << 20, buffer.out()));
  HARDENING_ASSERT_OK(cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, a.out()));
  HARDENING_ASSERT_OK(cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, b.out()));
  uint64_t ida = 0, idb = 0, x = 0;
  HARDENING_ASSERT_OK(cuabi_stream_get_id(a, &ida));
  HARDENING_ASSERT_OK(cuabi_stream_get_id(b, &idb));
  HARDENING_ASSERT_OK(cuabi_buffer_get_pointer(buffer, &x));
  unsigned n = (1 << 20) / 4;
  float v = 1;
  unsigned long long far = 1ull << 38;  // 1 TiB past the buffer, in floats
  void* fill_params[] = {&x, &n, &v};
  void* far_params[] = {&x, &far};
  auto config = [](uint32_t grid, uint32_t block) {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = grid;
    c.block_x = block;
    return c;
  };
  cuabi_launch_config seen = config(4, 128), first = config(8, 256), second = config(3, 64),
                      third = config(16, 32);
  HARDENING_ASSERT_OK(cuabi_function_launch(fill, &seen, a, fill_params, 3));
  HARDENING_ASSERT_OK(cuabi_stream_synchronize(a));
  HARDENING_ASSERT_OK(cuabi_function_launch(fill, &first, a, fill_params, 3));
  HARDENING_ASSERT_OK(cuabi_function_launch(write_far, &second, b, far_params, 2));
  std::string seen_by = "cuabi_function_launch";
  cuabi_status st = cuabi_function_launch(fill, &third, a, fill_params, 3);
  const bool third_ran = st == CUABI_SUCCESS;
  if (third_ran) {
    seen_by = "cuabi_device_synchronize";
    st = cuabi_device_synchronize(device_);
  }
  ASSERT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(st)) << seen_by << ": " << LastError();
  const std::string m = cuabi_last_error_message();
  std::printf("the fault, as %s reported it:\n  %s\n", seen_by.c_str(), m.c_str());
  const std::string bad = "kernel 'write_far' grid (3, 1, 1) block (64, 1, 1) shared 0 bytes, launch 1 on stream " +
                          std::to_string(idb) + " of device 0";
  EXPECT_TRUE(Contains(m, bad)) << m;
  EXPECT_TRUE(Contains(m, "kernel 'fill' grid (8, 1, 1) block (256, 1, 1) shared 0 bytes, launch 2 on stream " +
                              std::to_string(ida)))
      << m;
  EXPECT_FALSE(Contains(m, "grid (4, 1, 1)")) << "the launch seen complete is named: " << m;
  EXPECT_TRUE(Contains(m, "; the driver logged: ") ||
              Contains(m, "the driver logged nothing during the failing call"))
      << m;
  std::printf("the driver's log during that call: %s\n",
              Contains(m, "; the driver logged: ") ? "lines carried in the message" : "none");
  // As data: the most recent first; the third launch only where it ran.
  const size_t count = cuabi_last_error_get_launch_count();
  ASSERT_EQ(third_ran ? 3u : 2u, count) << m;
  std::vector<std::string> kernels;
  std::vector<cuabi_launch_record> records;
  for (size_t i = 0; i < count; ++i) {
    cuabi_launch_record r = CUABI_LAUNCH_RECORD_INIT;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_last_error_get_launch(i, &r));
    char name[64];
    size_t size = sizeof name;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_last_error_get_launch_kernel(i, name, &size));
    kernels.push_back(name);
    records.push_back(r);
  }
  const size_t w = third_ran ? 1 : 0;  // where write_far is
  EXPECT_EQ("write_far", kernels[w]);
  EXPECT_EQ(3u, records[w].grid_x);
  EXPECT_EQ(64u, records[w].block_x);
  EXPECT_EQ(idb, records[w].stream_id);
  EXPECT_EQ(1u, records[w].sequence);
  EXPECT_EQ("fill", kernels[w + 1]);
  EXPECT_EQ(8u, records[w + 1].grid_x);
  EXPECT_EQ(2u, records[w + 1].sequence);
  if (third_ran) {
    EXPECT_EQ(16u, records[0].grid_x);
    EXPECT_EQ(3u, records[0].sequence);
  }
  // A later call names the same launches.
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_stream_synchronize(a));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), bad)) << LastError();
  EXPECT_EQ(count, cuabi_last_error_get_launch_count());
}

TEST_F(GpuFault, ResetWithoutAFaultInvalidatesOldObjectsOnly) {
  Module mod;
  Function saxpy;
  HARDENING_ASSERT_OK(CompileModule(device_, kSaxpySource, mod.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "saxpy", saxpy.out()));
  Buffer old;
  Stream old_stream;
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(device_, 256, old.out()));
  HARDENING_ASSERT_OK(cuabi_stream_create(device_, 0, 0, old_stream.out()));
  cuabi_launch_plan plan = nullptr;
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  HARDENING_ASSERT_OK(cuabi_launch_plan_create(saxpy, &config, old_stream, &plan));
  HARDENING_ASSERT_OK(cuabi_device_reset(device_));
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_launch_plan_launch(plan));
  cuabi_launch_plan_release(plan);
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_buffer_memset(old, 0, 0, 256));
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_stream_synchronize(old_stream));
  Function again;
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST,
                          cuabi_module_get_function(mod, "saxpy", again.out()));
  EXPECT_NE("", RunSaxpy(device_, saxpy, nullptr, 1024, 5))
      << "a function from before the reset ran";
  Module fresh;
  Function fresh_saxpy;
  HARDENING_ASSERT_OK(CompileModule(device_, kSaxpySource, fresh.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(fresh, "saxpy", fresh_saxpy.out()));
  EXPECT_EQ("", RunSaxpy(device_, fresh_saxpy, nullptr, 1 << 20, 6));
  EXPECT_EQ("", RunSaxpy(device_, fresh_saxpy, nullptr, 512 * 32768, 7)) << "full-size SAXPY";
  // Releasing the old objects after the reset is safe and changes nothing.
  old.reset();
  old_stream.reset();
  saxpy.reset();
  mod.reset();
  EXPECT_EQ("", RunSaxpy(device_, fresh_saxpy, nullptr, 1 << 16, 8));
}

// Several devices. The driver documents a sticky fault as leaving the whole
// process unusable for CUDA, and it behaves so: after a fault on one device,
// calls on the others in the same process fail too. What must hold:
// - every call on every device of the faulting process answers a clean
//   CUABI_ERROR_CONTEXT_LOST naming the way out, or (should a driver keep
//   other devices apart) works correctly: never another status, wrong data,
//   a hang or a crash;
// - other processes are unaffected: a neighbour process on each device,
//   the faulted one included, verifies SAXPY before, during and after the
//   fault;
// - a new process then works on every device.
// Skips with fewer than two devices.
class GpuFaultOtherDevices : public ::testing::TestWithParam<int> {};
struct DeviceKit {
  Device device;
  Module saxpy_module, util;
  Function saxpy, poke;
  Buffer kept;  // holds a pattern written before the fault
  Stream stream;
  Event event;
  cuabi_launch_plan plan = nullptr;
  Buffer plan_x, plan_y, plan_out;
  std::vector<float> pattern;
  ~DeviceKit() { cuabi_launch_plan_release(plan); }
};

constexpr size_t kPlanN = 1 << 16;

// Builds everything on `ordinal` and checks it works once.
void BuildKit(int ordinal, DeviceKit* k) {
  HARDENING_ASSERT_OK(cuabi_device_get(ordinal, k->device.out()));
  HARDENING_ASSERT_OK(CompileModule(k->device, kSaxpySource, k->saxpy_module.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(k->saxpy_module, "saxpy", k->saxpy.out()));
  HARDENING_ASSERT_OK(CompileModule(k->device, kUtilSource, k->util.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(k->util, "poke", k->poke.out()));
  HARDENING_ASSERT_OK(cuabi_stream_create(k->device, 0, 0, k->stream.out()));
  HARDENING_ASSERT_OK(cuabi_event_create(k->device, 0, k->event.out()));
  k->pattern.resize(4096);
  for (size_t i = 0; i < k->pattern.size(); ++i)
    k->pattern[i] = static_cast<float>(i) * 0.5f + static_cast<float>(ordinal);
  const size_t bytes = k->pattern.size() * sizeof(float);
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(k->device, bytes, k->kept.out()));
  HARDENING_ASSERT_OK(cuabi_buffer_copy_from_host(k->kept, 0, k->pattern.data(), bytes));
  // A launch plan over three buffers: out = 2 * x + y with x = 1, y = ordinal.
  const size_t plan_bytes = kPlanN * sizeof(float);
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(k->device, plan_bytes, k->plan_x.out()));
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(k->device, plan_bytes, k->plan_y.out()));
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(k->device, plan_bytes, k->plan_out.out()));
  std::vector<float> ones(kPlanN, 1.0f), ys(kPlanN, static_cast<float>(ordinal));
  HARDENING_ASSERT_OK(cuabi_buffer_copy_from_host(k->plan_x, 0, ones.data(), plan_bytes));
  HARDENING_ASSERT_OK(cuabi_buffer_copy_from_host(k->plan_y, 0, ys.data(), plan_bytes));
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  config.grid_x = static_cast<uint32_t>(kPlanN / 256);
  HARDENING_ASSERT_OK(cuabi_launch_plan_create(k->saxpy, &config, k->stream, &k->plan));
  void* block = nullptr;
  size_t block_bytes = 0;
  HARDENING_ASSERT_OK(cuabi_launch_plan_get_args(k->plan, &block, &block_bytes));
  ASSERT_EQ(40u, block_bytes);
  float a = 2.0f;
  uint64_t px = 0, py = 0, pout = 0;
  size_t n = kPlanN;
  cuabi_buffer_get_pointer(k->plan_x, &px);
  cuabi_buffer_get_pointer(k->plan_y, &py);
  cuabi_buffer_get_pointer(k->plan_out, &pout);
  char* b = static_cast<char*>(block);
  std::memcpy(b, &a, 4);
  std::memcpy(b + 8, &px, 8);
  std::memcpy(b + 16, &py, 8);
  std::memcpy(b + 24, &pout, 8);
  std::memcpy(b + 32, &n, 8);
  ASSERT_EQ("", RunSaxpy(k->device, k->saxpy, k->stream, 1 << 16, 20 + ordinal));
}

// Everything made on the kit's device before the fault, and new objects,
// still work. Returns "" or what failed.
std::string CheckKitWorks(int ordinal, DeviceKit* k) {
  auto fail = [](const std::string& what, cuabi_status st) {
    return what + ": " + cuabi_status_get_name(st) + ": " + cuabi_last_error_message();
  };
  cuabi_status st;
  if ((st = cuabi_device_synchronize(k->device))) return fail("device synchronize", st);
  std::vector<float> back(k->pattern.size(), -1.0f);
  if ((st = cuabi_buffer_copy_to_host(k->kept, 0, back.data(), back.size() * sizeof(float))))
    return fail("read back the buffer written before the fault", st);
  if (back != k->pattern) return "a buffer written before the fault lost its contents";
  std::string r = RunSaxpy(k->device, k->saxpy, k->stream, 1 << 20, 30 + ordinal);
  if (!r.empty()) return "the function compiled before the fault: " + r;
  if ((st = cuabi_buffer_memset(k->plan_out, 0, 0, kPlanN * sizeof(float))))
    return fail("memset", st);
  if ((st = cuabi_event_record(k->event, k->stream))) return fail("event record", st);
  if ((st = cuabi_launch_plan_launch(k->plan))) return fail("launch plan made before the fault", st);
  if ((st = cuabi_stream_synchronize(k->stream))) return fail("stream synchronize", st);
  if ((st = cuabi_event_synchronize(k->event))) return fail("event synchronize", st);
  std::vector<float> out(kPlanN, 0.0f);
  if ((st = cuabi_buffer_copy_to_host(k->plan_out, 0, out.data(), kPlanN * sizeof(float))))
    return fail("plan result", st);
  const float want = 2.0f + static_cast<float>(ordinal);
  for (size_t i = 0; i < kPlanN; ++i)
    if (out[i] != want)
      return "launch plan: element " + std::to_string(i) + " is " + std::to_string(out[i]);
  Module fresh;
  Function fresh_saxpy;
  if ((st = CompileModule(k->device, kSaxpySource, fresh.out()))) return fail("new compile", st);
  if ((st = cuabi_module_get_function(fresh, "saxpy", fresh_saxpy.out())))
    return fail("new function", st);
  r = RunSaxpy(k->device, fresh_saxpy, nullptr, 512 * 32768, 40 + ordinal);
  if (!r.empty()) return "a module compiled after the fault, full-size SAXPY: " + r;
  return "";
}

// "" when `r` (from CheckKitWorks) is one of the two clean outcomes, else
// what is wrong with it.
std::string CleanOutcome(const std::string& r) {
  if (r.empty()) return "";
  if (Contains(r, "CUABI_ERROR_CONTEXT_LOST") && Contains(r, "new one")) return "";
  return r;
}

bool WaitForFile(const std::string& path, int timeout_s) {
  for (int i = 0; i < timeout_s * 20; ++i) {
    if (access(path.c_str(), F_OK) == 0) return true;
    usleep(50 * 1000);
  }
  return false;
}

TEST_P(GpuFaultOtherDevices, AFaultStaysInItsProcess) {
  HARDENING_REQUIRE_GPU();
  int32_t count = 0;
  HARDENING_ASSERT_OK(cuabi_device_get_count(&count));
  if (count < 2) GTEST_SKIP() << "needs two CUDA devices; the driver reports " << count;
  const int faulted = GetParam();

  // A neighbour process on every device, running SAXPY until told to stop.
  char dir_template[] = "/tmp/cuabi-fault-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir_template));
  const std::string dir = dir_template;
  const std::string stop = dir + "/stop";
  std::vector<RunningChild> neighbours;
  for (int i = 0; i < count; ++i)
    neighbours.push_back(SpawnProcess(
        CUABI_HARDENING_WORKER, {"--saxpy-until", stop, dir + "/ready" + std::to_string(i)},
        {"CUDA_VISIBLE_DEVICES=" + std::to_string(i), "CUABI_CACHE=0"}));
  for (int i = 0; i < count; ++i)
    ASSERT_TRUE(WaitForFile(dir + "/ready" + std::to_string(i), 120))
        << "the neighbour process on device " << i << " never got going";

  std::vector<DeviceKit> kits(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    BuildKit(i, &kits[static_cast<size_t>(i)]);
    if (HasFatalFailure()) return;
  }

  // The fault: a store to 0x10 on device `faulted`.
  DeviceKit& bad = kits[static_cast<size_t>(faulted)];
  uint64_t address = 0x10;
  int value = 1;
  void* params[] = {&address, &value};
  const size_t sizes[] = {sizeof(address), sizeof(value)};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  cuabi_status st = cuabi_function_launch_sized(bad.poke, &c, nullptr, params, sizes, 2);
  if (st == CUABI_SUCCESS) st = cuabi_device_synchronize(bad.device);
  ASSERT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(st)) << LastError();

  // The other devices of this process: a clean outcome, whichever it is.
  for (int i = 0; i < count; ++i) {
    if (i == faulted) continue;
    const std::string r = CheckKitWorks(i, &kits[static_cast<size_t>(i)]);
    EXPECT_EQ("", CleanOutcome(r)) << "device " << i << " after a fault on device " << faulted;
    std::printf("device %d after a fault on device %d, same process: %s\n", i, faulted,
                r.empty() ? "works (old objects and new)"
                          : (Contains(r, "CUABI_ERROR_CONTEXT_LOST")
                                 ? "CUABI_ERROR_CONTEXT_LOST (the driver fails the whole process)"
                                 : r.c_str()));
  }
  // The faulted device stays lost.
  Buffer nb;
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_buffer_alloc(bad.device, 64, nb.out()));
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_launch_plan_launch(bad.plan));
  // Releasing everything, in any order, is safe.
  for (int i = count - 1; i >= 0; --i) {
    DeviceKit& k = kits[static_cast<size_t>(i)];
    cuabi_launch_plan_release(k.plan);
    k.plan = nullptr;
    k.saxpy_module.reset();
    k.kept.reset();
    k.event.reset();
    k.stream.reset();
  }
  kits.clear();

  // Other processes were unaffected: each neighbour verified every SAXPY,
  // including those run after the fault.
  {
    FILE* f = std::fopen(stop.c_str(), "w");
    ASSERT_NE(nullptr, f);
    std::fclose(f);
  }
  std::vector<ChildResult> results = WaitChildren(neighbours, 180);
  for (int i = 0; i < count; ++i) {
    const ChildResult& r = results[static_cast<size_t>(i)];
    EXPECT_TRUE(r.exited && r.code == 0)
        << "the neighbour process on device " << i << ": " << r.Describe();
    std::printf("neighbour process on device %d%s: %s, %s", i, i == faulted ? " (faulted)" : "",
                r.exited && r.code == 0 ? "unaffected" : "AFFECTED", r.output.c_str());
  }
  // A new process works on every device.
  std::vector<RunningChild> fresh;
  for (int i = 0; i < count; ++i)
    fresh.push_back(SpawnProcess(CUABI_HARDENING_WORKER, {"--compile-worker"},
                                 {"CUDA_VISIBLE_DEVICES=" + std::to_string(i), "CUABI_CACHE=0"}));
  results = WaitChildren(fresh, 300);
  for (int i = 0; i < count; ++i) {
    const ChildResult& r = results[static_cast<size_t>(i)];
    EXPECT_TRUE(r.exited && r.code == 0) << "a new process on device " << i << ": " << r.Describe();
    std::printf("a new process on device %d after the fault: %s\n", i,
                r.exited && r.code == 0 ? "SAXPY correct" : "WRONG");
  }
  unlink(stop.c_str());
  for (int i = 0; i < count; ++i) unlink((dir + "/ready" + std::to_string(i)).c_str());
  rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(FaultedDevice, GpuFaultOtherDevices, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "Device" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace hardening
