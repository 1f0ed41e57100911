// Handles with a device: every kind used as every other kind, released
// handles of every kind, bad handles in second positions, a forked child,
// and a lost context (which only a new process recovers from).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_support.h"
#include "handle_calls.h"

extern char** environ;

namespace cuabi_test {
namespace {

class HandleKindsTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // One live object of every kind.
    cuabi_device device = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(0, &device));
    Keep(Kind::kDevice, device);
    cuabi_program program = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_program_create(kSaxpySource, nullptr, 0, nullptr, nullptr, &program));
    Keep(Kind::kProgram, program);
    cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
    desc.source = kUtilSource;
    desc.flags = CUABI_COMPILE_NO_CACHE;
    cuabi_module module = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_module_compile(device_, &desc, &module)) << LastError();
    Keep(Kind::kModule, module);
    cuabi_function function = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_function(module, "add_scalar", &function));
    Keep(Kind::kFunction, function);
    cuabi_buffer buffer = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device_, 1024, &buffer));
    Keep(Kind::kBuffer, buffer);
    cuabi_host_buffer host_buffer = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, 1024, &host_buffer));
    Keep(Kind::kHostBuffer, host_buffer);
    cuabi_stream stream = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, &stream));
    Keep(Kind::kStream, stream);
    cuabi_event event = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, &event));
    Keep(Kind::kEvent, event);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL))
        << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset_async(buffer, 0, 0, 1024, stream)) << LastError();
    cuabi_graph graph = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(stream, &graph)) << LastError();
    Keep(Kind::kGraph, graph);
    cuabi_graph_exec exec = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(graph, &exec)) << LastError();
    Keep(Kind::kGraphExec, exec);
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    cuabi_launch_plan plan = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_create(function, &config, stream, &plan))
        << LastError();
    Keep(Kind::kLaunchPlan, plan);
    cuabi_memory_pool pool = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_memory_pool_create(device_, nullptr, &pool)) << LastError();
    Keep(Kind::kMemoryPool, pool);
    cuabi_array_desc array_desc = CUABI_ARRAY_DESC_INIT;
    array_desc.width = 16;
    array_desc.height = 4;
    array_desc.flags = CUABI_ARRAY_SURFACE_LOAD_STORE;
    cuabi_array array = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_array_create(device_, &array_desc, &array)) << LastError();
    Keep(Kind::kArray, array);
    cuabi_texture_desc texture_desc = CUABI_TEXTURE_DESC_INIT;
    texture_desc.array = array;
    cuabi_texture texture = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_texture_create(&texture_desc, &texture)) << LastError();
    Keep(Kind::kTexture, texture);
    cuabi_surface surface = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_surface_create(array, &surface)) << LastError();
    Keep(Kind::kSurface, surface);
    cuabi_linker linker = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_create(device_, nullptr, &linker)) << LastError();
    Keep(Kind::kLinker, linker);
    Program image_program;
    const std::string arch = "--gpu-architecture=" + Arch("sm_");
    const char* options[] = {arch.c_str()};
    ASSERT_EQ(CUABI_SUCCESS, cuabi_program_create(kSaxpySource, nullptr, 0, nullptr, nullptr,
                                                  image_program.out()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile(image_program, 1, options)) << LastError();
    std::vector<char> cubin = FetchAll([&](void* buf, size_t* size) {
      return cuabi_program_get_cubin(image_program, buf, size);
    });
    cuabi_library library = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_library_load_data(cubin.data(), cubin.size(), &library))
        << LastError();
    Keep(Kind::kLibrary, library);
    // Green contexts and tensor maps.
    cuabi_sm_resource sm_resource = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_sm_resource(device_, &sm_resource)) << LastError();
    Keep(Kind::kSmResource, sm_resource);
    cuabi_green_context green_context = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_create(sm_resource, &green_context))
        << LastError();
    Keep(Kind::kGreenContext, green_context);
    const size_t tm_sizes[1] = {64}, tm_strides[1] = {4}, tm_box[1] = {16};
    cuabi_tensor_map tensor_map = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_tensor_map_encode_tiled(
                  buffer, 0, CUABI_TENSOR_FLOAT32, tm_sizes, 1, tm_strides, 1, tm_box, 1, nullptr,
                  0, CUABI_TENSOR_INTERLEAVE_NONE, CUABI_TENSOR_SWIZZLE_NONE,
                  CUABI_TENSOR_L2_PROMOTION_NONE, CUABI_TENSOR_OOB_FILL_ZERO, &tensor_map))
        << LastError();
    Keep(Kind::kTensorMap, tensor_map);
    // Virtual memory.
    size_t granularity = 0, recommended = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_vm_granularity(device_, &granularity, &recommended));
    cuabi_physical_memory physical = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_create(device_, granularity, 0, &physical))
        << LastError();
    Keep(Kind::kPhysicalMemory, physical);
    cuabi_address_range range = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_reserve(device_, granularity, &range))
        << LastError();
    Keep(Kind::kAddressRange, range);
    // A node of the captured graph.
    cuabi_graph_node node = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_add_empty_node(graph, nullptr, &node)) << LastError();
    Keep(Kind::kGraphNode, node);
    for (Kind k : AllKinds()) ASSERT_NE(0u, live_[k]) << KindName(k);
  }

  void TearDown() override {
    cuabi_device_synchronize(device_);
    for (auto& [kind, handle] : live_) ReleaseAny(kind, handle);
  }

  template <typename Handle>
  void Keep(Kind kind, Handle h) {
    live_[kind] = reinterpret_cast<uintptr_t>(h);
  }

  cuabi_stream stream() { return reinterpret_cast<cuabi_stream>(live_[Kind::kStream]); }
  cuabi_buffer buffer() { return reinterpret_cast<cuabi_buffer>(live_[Kind::kBuffer]); }
  cuabi_event event() { return reinterpret_cast<cuabi_event>(live_[Kind::kEvent]); }
  cuabi_function function() { return reinterpret_cast<cuabi_function>(live_[Kind::kFunction]); }
  cuabi_graph_exec graph_exec() {
    return reinterpret_cast<cuabi_graph_exec>(live_[Kind::kGraphExec]);
  }

  std::map<Kind, uintptr_t> live_;
};

TEST_F(HandleKindsTest, EveryKindUsedAsEveryOtherKind) {
  for (const HandleCall& call : HandleCalls()) {
    for (Kind k : AllKinds()) {
      if (k == call.kind) continue;
      cuabi_last_error_clear();
      bool touched = false;
      const cuabi_status st = call.call(live_[k], &touched);
      EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_HANDLE), StatusName(st))
          << call.name << " given a " << KindName(k) << " handle: " << cuabi_last_error_message();
      EXPECT_FALSE(touched) << call.name << " given a " << KindName(k) << " handle";
    }
  }
  // Wrong-kind releases are ignored: every object still works.
  for (const ReleaseCall& r : ReleaseCalls()) {
    for (Kind k : AllKinds()) {
      if (k != r.kind) r.release(live_[k]);
    }
  }
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(buffer(), &size)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(graph_exec(), stream())) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_record(event(), stream())) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream())) << LastError();
  int32_t ordinal = -1;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_ordinal(
                               reinterpret_cast<cuabi_device>(live_[Kind::kDevice]), &ordinal))
      << LastError();
}

TEST_F(HandleKindsTest, ReleasedHandlesOfEveryKind) {
  std::map<Kind, uintptr_t> released = live_;
  for (auto& [kind, handle] : released) ReleaseAny(kind, handle);
  live_.clear();
  for (const HandleCall& call : HandleCalls()) {
    cuabi_last_error_clear();
    bool touched = false;
    const cuabi_status st = call.call(released[call.kind], &touched);
    EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_HANDLE), StatusName(st))
        << call.name << " given a released " << KindName(call.kind);
    EXPECT_FALSE(touched) << call.name;
  }
  // Releasing again, and releasing made-up values, is harmless and leaves
  // the last error alone.
  cuabi_last_error_clear();
  for (auto& [kind, handle] : released) ReleaseAny(kind, handle);
  for (uintptr_t v : GarbageHandleValues()) {
    for (Kind k : AllKinds()) ReleaseAny(k, v);
  }
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_status());
  EXPECT_STREQ("", cuabi_last_error_message());
}

TEST_F(HandleKindsTest, MadeUpValuesForEveryKind) {
  for (uintptr_t v : GarbageHandleValues()) {
    for (const HandleCall& call : HandleCalls()) {
      bool touched = false;
      EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_HANDLE), StatusName(call.call(v, &touched)))
          << call.name << " given 0x" << std::hex << v;
    }
  }
}

// Bad handles where a second handle is expected, with a valid first one.
TEST_F(HandleKindsTest, BadHandlesInSecondPositions) {
  Buffer dead_buffer = Alloc(64);
  const uintptr_t dead_b = reinterpret_cast<uintptr_t>(dead_buffer.get());
  dead_buffer.reset();
  Stream dead_stream;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, dead_stream.out()));
  const uintptr_t dead_s = reinterpret_cast<uintptr_t>(dead_stream.get());
  dead_stream.reset();
  Event dead_event;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, dead_event.out()));
  const uintptr_t dead_e = reinterpret_cast<uintptr_t>(dead_event.get());
  dead_event.reset();

  std::vector<std::pair<std::string, uintptr_t>> bad_buffers = {
      {"released buffer", dead_b},
      {"made-up 0x12345678", 0x12345678},
      {"stream as buffer", live_[Kind::kStream]},
      {"NULL", 0}};
  std::vector<std::pair<std::string, uintptr_t>> bad_streams = {
      {"released stream", dead_s},
      {"made-up 0x12345678", 0x12345678},
      {"event as stream", live_[Kind::kEvent]},
      {"buffer as stream", live_[Kind::kBuffer]}};
  std::vector<std::pair<std::string, uintptr_t>> bad_events = {
      {"released event", dead_e},
      {"made-up 0x12345678", 0x12345678},
      {"stream as event", live_[Kind::kStream]},
      {"NULL", 0}};

  unsigned char host[64] = {0};
  const std::string want = StatusName(CUABI_ERROR_INVALID_HANDLE);
  for (const auto& [what, h] : bad_buffers) {
    const cuabi_buffer b = AsHandle<cuabi_buffer>(h);
    EXPECT_EQ(want, StatusName(cuabi_buffer_copy(buffer(), 0, b, 0, 16))) << what;
    EXPECT_EQ(want, StatusName(cuabi_buffer_copy_async(buffer(), 0, b, 0, 16, stream()))) << what;
  }
  for (const auto& [what, h] : bad_streams) {
    const cuabi_stream s = AsHandle<cuabi_stream>(h);
    EXPECT_EQ(want, StatusName(cuabi_buffer_copy_from_host_async(buffer(), 0, host, 16, s)))
        << what;
    EXPECT_EQ(want, StatusName(cuabi_buffer_copy_to_host_async(buffer(), 0, host, 16, s))) << what;
    EXPECT_EQ(want, StatusName(cuabi_buffer_copy_async(buffer(), 0, buffer(), 512, 16, s))) << what;
    EXPECT_EQ(want, StatusName(cuabi_buffer_memset_async(buffer(), 0, 0, 16, s))) << what;
    EXPECT_EQ(want, StatusName(cuabi_event_record(event(), s))) << what;
    EXPECT_EQ(want, StatusName(cuabi_graph_exec_launch(graph_exec(), s))) << what;
    uint64_t p = 0;
    int v = 1;
    unsigned n = 1;
    void* params[] = {&p, &v, &n};
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    EXPECT_EQ(want, StatusName(cuabi_function_launch(function(), &config, s, params, 3))) << what;
  }
  for (const auto& [what, h] : bad_events) {
    const cuabi_event e = AsHandle<cuabi_event>(h);
    EXPECT_EQ(want, StatusName(cuabi_stream_wait_event(stream(), e))) << what;
    float ms = 0;
    EXPECT_EQ(want, StatusName(cuabi_event_get_elapsed_ms(event(), e, &ms))) << what;
  }
  // Nothing above ran anything.
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream())) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
}

// A child forked after CUDA was initialised cannot use it: FORKED, no crash,
// and releasing handles stays safe.
TEST_F(HandleKindsTest, ForkedChildAnswersForked) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 0;
    int32_t count = -1;
    if (cuabi_device_get_count(&count) != CUABI_ERROR_FORKED) code |= 1;
    cuabi_buffer b = nullptr;
    if (cuabi_buffer_alloc(device_, 64, &b) != CUABI_ERROR_FORKED) code |= 2;
    if (cuabi_stream_synchronize(stream()) != CUABI_ERROR_FORKED) code |= 4;
    unsigned char host[16];
    if (cuabi_buffer_copy_to_host(buffer(), 0, host, 16) != CUABI_ERROR_FORKED) code |= 8;
    if (cuabi_last_error_status() != CUABI_ERROR_FORKED) code |= 16;
    // Compiling needs no GPU.
    cuabi_program p = nullptr;
    if (cuabi_program_create(kSaxpySource, nullptr, 0, nullptr, nullptr, &p) != CUABI_SUCCESS) {
      code |= 32;
    }
    cuabi_program_release(p);
    for (auto& [kind, handle] : live_) ReleaseAny(kind, handle);
    _exit(code);
  }
  int wstatus = 0;
  ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
  ASSERT_TRUE(WIFEXITED(wstatus)) << "the forked child crashed (signal "
                                  << (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0) << ")";
  const int code = WEXITSTATUS(wstatus);
  EXPECT_EQ(0, code) << "child: 1 device_count, 2 buffer_alloc, 4 stream_synchronize, 8 copy, "
                        "16 last error, 32 program_create did not behave";
  // The parent is unaffected.
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(buffer(), &size));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream())) << LastError();
}

using ContextLostTest = GpuTest;

// A kernel trap poisons the context for the rest of the process: every later
// call on the device, cuabi_device_reset included, answers CONTEXT_LOST and
// says the process must be restarted; objects from before stay safe to
// release; and a new process uses the device normally (the recovery the
// driver documents).
TEST_F(ContextLostTest, StickyFaultNeedsANewProcess) {
  Module m = Compile(kUtilSource);
  Function trap = GetFunction(m, "trap_kernel");
  Buffer before = Alloc(256);
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  const cuabi_status launched = cuabi_function_launch(trap, &config, nullptr, nullptr, 0);
  ASSERT_TRUE(launched == CUABI_SUCCESS || launched == CUABI_ERROR_CONTEXT_LOST) << LastError();
  EXPECT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(cuabi_device_synchronize(device_)));
  EXPECT_NE(std::string::npos, LastError().find("start a new one")) << LastError();
  cuabi_buffer none = nullptr;
  EXPECT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST),
            StatusName(cuabi_buffer_alloc(device_, 256, &none)));
  EXPECT_EQ(nullptr, none);
  EXPECT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST), StatusName(cuabi_device_reset(device_)));
  unsigned char host[16];
  EXPECT_EQ(StatusName(CUABI_ERROR_CONTEXT_LOST),
            StatusName(cuabi_buffer_copy_to_host(before, 0, host, sizeof host)));
  before.reset();
  trap.reset();
  m.reset();

  // A fresh process (spawned, not forked) runs and verifies SAXPY.
  const char* argv[] = {CUABI_SAXPY_EXAMPLE, nullptr};
  pid_t pid = 0;
  ASSERT_EQ(0, posix_spawn(&pid, CUABI_SAXPY_EXAMPLE, nullptr, nullptr,
                           const_cast<char* const*>(argv), environ));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the SAXPY example failed in a fresh process";
}

}  // namespace
}  // namespace cuabi_test
