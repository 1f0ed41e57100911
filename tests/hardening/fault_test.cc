// GPU faults: a kernel that stores to an address it must not. The call that
// sees the fault (the launch or the next synchronize) and every later call
// that touches the device answer CUABI_ERROR_CONTEXT_LOST, naming the way out;
// cuabi_device_reset cannot bring the device back to this process (the
// driver refuses it after a sticky fault) and says so with the same status;
// releasing every object stays safe; and a new process computes SAXPY
// correctly on the same device. A reset without a fault frees everything:
// old objects answer CONTEXT_LOST, new ones work.
//
// Its own executable, and each test its own process (ctest), because a fault
// poisons the process for that device.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

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
    cuabi_status st = cuabi_launch_sized(poke, &c, nullptr, params, sizes, 2);
    if (st != CUABI_SUCCESS) {
      *seen_by = "cuabi_launch_sized";
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
        {"cuabi_launch_sized", cuabi_launch_sized(saxpy, &c, nullptr, params, sizes, 5)});
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

  std::string seen_by;
  const cuabi_status st = Poke(poke, 0x10, &seen_by);
  ASSERT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(st)) << seen_by << ": " << LastError();
  EXPECT_TRUE(Contains(cuabi_last_error_message(), seen_by.substr(0, 14))) << LastError();
  std::printf("fault at 0x10 reported by %s: %s\n", seen_by.c_str(), cuabi_last_error_message());
  ExpectEverythingLost(saxpy, buffer, stream);
  HARDENING_EXPECT_STATUS(CUABI_ERROR_CONTEXT_LOST, cuabi_event_record(event, stream));

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

}  // namespace
}  // namespace hardening
