// fork(): a child forked after cuabi initialised CUDA gets CUABI_ERROR_FORKED
// from every call that would touch CUDA, quickly, not a hang or a crash; the
// paths that need no driver (NVRTC, handles, last errors) keep working in the
// child; and a driver that failed to load fails the same way in the child.
//
// Every child runs with an alarm and the parent waits with a deadline, so a
// hang fails the test instead of hanging the run.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support.h"

namespace hardening {
namespace {

constexpr const char* kTiny = "extern \"C\" __global__ void tiny(int* x) { *x = 7; }\n";

// Compiles kTiny for sm_90 in this process; "" on success, else the error.
std::string CompileTiny(std::string* ptx) {
  cuabi_program p = nullptr;
  cuabi_status st = cuabi_program_create(kTiny, "tiny.cu", 0, nullptr, nullptr, &p);
  if (st) return "create: " + LastError();
  const char* opts[] = {"--gpu-architecture=sm_90"};
  st = cuabi_program_compile(p, 1, opts);
  if (st) {
    cuabi_program_release(p);
    return "compile: " + LastError();
  }
  size_t n = 0;
  cuabi_program_get_ptx(p, nullptr, &n);
  std::string out(n, '\0');
  st = cuabi_program_get_ptx(p, &out[0], &n);
  cuabi_program_release(p);
  if (st) return "get_ptx: " + LastError();
  if (ptx) *ptx = out;
  return "";
}

// In the child: the CUDA-free paths still work.
int CheckNvrtcInChild(const std::string& expected_ptx) {
  std::string ptx;
  std::string err = CompileTiny(&ptx);
  if (!err.empty()) {
    ChildSay("NVRTC in the child: " + err);
    return 1;
  }
  if (ptx != expected_ptx) {
    ChildSay("the child's PTX differs from the parent's");
    return 2;
  }
  return 0;
}

// A failed driver load is remembered: the parent and a child forked after it
// answer the same status and message, and NVRTC keeps working in both.
void ExpectSameDriverFailureInChild(cuabi_status expected) {
  const cuabi_status parent = cuabi_init();
  ASSERT_EQ(StatusName(expected), StatusName(parent)) << LastError();
  const std::string parent_message = cuabi_last_error_message();
  std::string ptx;
  ASSERT_EQ("", CompileTiny(&ptx));

  ChildResult r = RunInChild([&] {
    const cuabi_status st = cuabi_init();
    if (st != expected) {
      ChildSay(std::string("cuabi_init answered ") + cuabi_status_get_name(st) + ": " +
               cuabi_last_error_message());
      return 1;
    }
    if (parent_message != cuabi_last_error_message()) {
      ChildSay(std::string("a different message: ") + cuabi_last_error_message());
      return 2;
    }
    int32_t count = -1;
    if (cuabi_device_get_count(&count) != expected || count != -1) {
      ChildSay("cuabi_device_get_count did not answer the same failure");
      return 3;
    }
    cuabi_device d = nullptr;
    if (cuabi_device_get(0, &d) != expected || d != nullptr) {
      ChildSay("cuabi_device_get did not answer the same failure");
      return 4;
    }
    return 10 + CheckNvrtcInChild(ptx);
  });
  EXPECT_TRUE(r.exited && r.code == 10) << r.Describe();
}

TEST(ForkNoDriver, ChildAnswersTheSameDriverNotFound) {
  const char* path = std::getenv("CUABI_DRIVER_PATH");
  if (!path || std::string(path).find("/nonexistent/") == std::string::npos)
    GTEST_SKIP() << "runs with CUABI_DRIVER_PATH=/nonexistent/libcuda.so.1 (ctest "
                    "hardening.fork_no_driver)";
  ExpectSameDriverFailureInChild(CUABI_ERROR_DRIVER_NOT_FOUND);
}

TEST(ForkStubDriver, ChildAnswersTheSameStubDriver) {
  const char* path = std::getenv("CUABI_DRIVER_PATH");
  if (!path || std::string(path).find("stubs") == std::string::npos)
    GTEST_SKIP() << "runs with CUABI_DRIVER_PATH set to the toolkit's stub libcuda (ctest "
                    "hardening.fork_stub_driver)";
  if (access(path, R_OK) != 0) GTEST_SKIP() << path << " is not there";
  ExpectSameDriverFailureInChild(CUABI_ERROR_STUB_DRIVER);
}

TEST(ForkCpu, NvrtcAndHandlesWorkInAChild) {
  // The parent used NVRTC (its library is loaded, maybe with threads of its own).
  std::string ptx;
  ASSERT_EQ("", CompileTiny(&ptx));
  Program held;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_create(kTiny, "held.cu", 0, nullptr, nullptr, held.out()));
  const char* opts[] = {"--gpu-architecture=sm_90"};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile(held, 1, opts)) << LastError();
  const cuabi_program h = held.get();

  ChildResult r = RunInChild([&] {
    int rc = CheckNvrtcInChild(ptx);
    if (rc) return rc;
    // A handle made by the parent is usable and releasable in the child.
    size_t n = 0;
    if (cuabi_program_get_ptx(h, nullptr, &n) != CUABI_SUCCESS || n != ptx.size()) {
      ChildSay("the parent's program is not usable in the child: " + LastError());
      return 3;
    }
    cuabi_program_release(h);
    if (cuabi_program_get_ptx(h, nullptr, &n) != CUABI_ERROR_INVALID_HANDLE) {
      ChildSay("the released handle still answers in the child");
      return 4;
    }
    // Last errors are per thread and work in the child.
    cuabi_program_get_log(nullptr, nullptr, nullptr);
    if (cuabi_last_error_status() != CUABI_ERROR_INVALID_HANDLE) return 5;
    return 0;
  });
  EXPECT_TRUE(r.exited && r.code == 0) << r.Describe();
  // The child's release did not touch the parent's handle.
  size_t n = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_ptx(h, nullptr, &n)) << LastError();
}

TEST(ForkCpu, ManyChildrenCompileAtOnce) {
  std::string ptx;
  ASSERT_EQ("", CompileTiny(&ptx));
  constexpr int kChildren = 4;
  // All children run at once, each compiling several times.
  std::vector<ChildResult> results = RunInChildren(kChildren, [&](int) {
    for (int k = 0; k < 5; ++k)
      if (int rc = CheckNvrtcInChild(ptx)) return rc;
    return 0;
  });
  for (int i = 0; i < kChildren; ++i)
    EXPECT_TRUE(results[i].exited && results[i].code == 0)
        << "child " << i << ": " << results[i].Describe();
}

// ---------------------------------------------------------------------------
// GPU: the real FORKED path
// ---------------------------------------------------------------------------

TEST(GpuFork, ChildGetsForkedFromEveryCudaCall) {
  HARDENING_REQUIRE_GPU();
  Device dev;
  HARDENING_ASSERT_OK(cuabi_device_get(0, dev.out()));
  Module mod;
  Function saxpy;
  HARDENING_ASSERT_OK(CompileModule(dev, kSaxpySource, mod.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "saxpy", saxpy.out()));
  ASSERT_EQ("", RunSaxpy(dev, saxpy, nullptr, 1 << 16, 1));
  Buffer buf;
  HARDENING_ASSERT_OK(cuabi_buffer_alloc(dev, 4096, buf.out()));
  Stream stream;
  HARDENING_ASSERT_OK(cuabi_stream_create(dev, 0, 0, stream.out()));
  Event event;
  HARDENING_ASSERT_OK(cuabi_event_create(dev, 0, event.out()));
  std::string ptx;
  ASSERT_EQ("", CompileTiny(&ptx));

  const cuabi_device d = dev.get();
  const cuabi_buffer b = buf.get();
  const cuabi_stream s = stream.get();
  const cuabi_event e = event.get();
  const cuabi_function fn = saxpy.get();
  const cuabi_module m = mod.get();

  ChildResult r = RunInChild([&] {
    int failures = 0;
    auto expect_forked = [&](const char* what, cuabi_status st) {
      if (st != CUABI_ERROR_FORKED) {
        ChildSay(std::string(what) + " answered " + cuabi_status_get_name(st) + ": " +
                 cuabi_last_error_message());
        ++failures;
      } else if (std::string(cuabi_last_error_message()).find("fork") == std::string::npos) {
        ChildSay(std::string(what) +
                 ": the message does not mention fork: " + cuabi_last_error_message());
        ++failures;
      }
    };
    int32_t count = 0;
    expect_forked("cuabi_init", cuabi_init());
    expect_forked("cuabi_device_get_count", cuabi_device_get_count(&count));
    cuabi_device d2 = nullptr;
    expect_forked("cuabi_device_get", cuabi_device_get(0, &d2));
    expect_forked("cuabi_device_synchronize", cuabi_device_synchronize(d));
    size_t fr = 0, tot = 0;
    expect_forked("cuabi_device_get_memory_info", cuabi_device_get_memory_info(d, &fr, &tot));
    cuabi_buffer nb = nullptr;
    expect_forked("cuabi_buffer_alloc", cuabi_buffer_alloc(d, 64, &nb));
    char host[64] = {0};
    expect_forked("cuabi_buffer_copy_from_host", cuabi_buffer_copy_from_host(b, 0, host, 64));
    expect_forked("cuabi_buffer_copy_to_host", cuabi_buffer_copy_to_host(b, 0, host, 64));
    expect_forked("cuabi_buffer_memset", cuabi_buffer_memset(b, 0, 1, 64));
    expect_forked("cuabi_stream_synchronize", cuabi_stream_synchronize(s));
    expect_forked("cuabi_event_record", cuabi_event_record(e, s));
    cuabi_stream ns = nullptr;
    expect_forked("cuabi_stream_create", cuabi_stream_create(d, 0, 0, &ns));
    cuabi_module nm = nullptr;
    expect_forked("cuabi_module_load_data",
                  cuabi_module_load_data(d, ptx.c_str(), ptx.size(), &nm));
    expect_forked("cuabi_module_compile", CompileModule(d, kSaxpySource, &nm));
    cuabi_function nf = nullptr;
    expect_forked("cuabi_module_get_function", cuabi_module_get_function(m, "saxpy", &nf));
    uint64_t px = 0;
    cuabi_buffer_get_pointer(b, &px);
    float a = 2;
    size_t n = 16;
    void* params[] = {&a, &px, &px, &px, &n};
    const size_t sizes[] = {4, 8, 8, 8, 8};
    cuabi_launch_config cfg = CUABI_LAUNCH_CONFIG_INIT;
    expect_forked("cuabi_function_launch_sized", cuabi_function_launch_sized(fn, &cfg, nullptr, params, sizes, 5));
    if (nb || ns || nm || nf || d2) {
      ChildSay("an out-parameter was written by a call that answered FORKED");
      ++failures;
    }
    // Releasing what the parent made must neither crash nor hang.
    cuabi_event_release(e);
    cuabi_stream_release(s);
    cuabi_buffer_release(b);
    cuabi_function_release(fn);
    cuabi_module_release(m);
    cuabi_device_release(d);
    // NVRTC needs no driver: it still works.
    if (int rc = CheckNvrtcInChild(ptx)) return 100 + rc;
    return failures;
  });
  EXPECT_TRUE(r.exited && r.code == 0) << r.Describe();
  // The parent is unaffected.
  EXPECT_EQ("", RunSaxpy(dev, saxpy, stream, 1 << 16, 2));
}

}  // namespace
}  // namespace hardening
