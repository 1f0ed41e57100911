// Handle values: arbitrary 64-bit values, and near misses of live handles
// (other kind bits, other generations, other slots, released values), into
// every C API call that takes a handle and every *_release. A value that is
// not a live handle of the call's kind must answer CUABI_ERROR_INVALID_HANDLE
// and a release of it must change nothing; nothing may crash.
//
// Without a GPU only programs can be live; the oracle knows which values are.
#include <cuabi/cuabi.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

enum Kind {
  kDevice = 1,
  kProgram,
  kModule,
  kFunction,
  kBuffer,
  kHostBuffer,
  kStream,
  kEvent,
  kGraph,
  kGraphExec,
  kLaunchPlan
};

template <typename H>
H As(uint64_t v) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(v));
}

struct Call {
  const char* name;
  Kind kind;
  std::function<cuabi_status(uint64_t)> run;
};

const std::vector<Call>& Calls() {
  static char buf[256];
  static size_t size;
  static uint64_t u64;
  static int32_t i32, j32;
  static size_t sz, sz2;
  static float ms;
  static void* ptr;
  static const std::vector<Call> calls = {
      // Devices
      {"cuabi_device_get_ordinal", kDevice,
       [](uint64_t v) { return cuabi_device_get_ordinal(As<cuabi_device>(v), &i32); }},
      {"cuabi_device_get_name", kDevice,
       [](uint64_t v) {
         size = sizeof(buf);
         return cuabi_device_get_name(As<cuabi_device>(v), buf, &size);
       }},
      {"cuabi_device_get_compute_capability", kDevice,
       [](uint64_t v) {
         return cuabi_device_get_compute_capability(As<cuabi_device>(v), &i32, &j32);
       }},
      {"cuabi_device_get_total_memory", kDevice,
       [](uint64_t v) { return cuabi_device_get_total_memory(As<cuabi_device>(v), &sz); }},
      {"cuabi_device_get_memory_info", kDevice,
       [](uint64_t v) { return cuabi_device_get_memory_info(As<cuabi_device>(v), &sz, &sz2); }},
      {"cuabi_device_get_attribute", kDevice,
       [](uint64_t v) { return cuabi_device_get_attribute(As<cuabi_device>(v), 1, &i32); }},
      {"cuabi_device_get_context", kDevice,
       [](uint64_t v) { return cuabi_device_get_context(As<cuabi_device>(v), &u64); }},
      {"cuabi_device_synchronize", kDevice,
       [](uint64_t v) { return cuabi_device_synchronize(As<cuabi_device>(v)); }},
      {"cuabi_device_get_stream_priority_range", kDevice,
       [](uint64_t v) {
         return cuabi_device_get_stream_priority_range(As<cuabi_device>(v), &i32, &j32);
       }},
      {"cuabi_device_reset", kDevice,
       [](uint64_t v) { return cuabi_device_reset(As<cuabi_device>(v)); }},
      {"cuabi_buffer_alloc", kDevice,
       [](uint64_t v) {
         cuabi_buffer b = nullptr;
         return cuabi_buffer_alloc(As<cuabi_device>(v), 16, &b);
       }},
      {"cuabi_buffer_wrap", kDevice,
       [](uint64_t v) {
         cuabi_buffer b = nullptr;
         return cuabi_buffer_wrap(As<cuabi_device>(v), 4096, 16, &b);
       }},
      {"cuabi_host_buffer_alloc", kDevice,
       [](uint64_t v) {
         cuabi_host_buffer b = nullptr;
         return cuabi_host_buffer_alloc(As<cuabi_device>(v), 16, &b);
       }},
      {"cuabi_host_buffer_register", kDevice,
       [](uint64_t v) {
         cuabi_host_buffer b = nullptr;
         return cuabi_host_buffer_register(As<cuabi_device>(v), buf, 16, &b);
       }},
      {"cuabi_stream_create", kDevice,
       [](uint64_t v) {
         cuabi_stream s = nullptr;
         return cuabi_stream_create(As<cuabi_device>(v), 0, 0, &s);
       }},
      {"cuabi_stream_wrap", kDevice,
       [](uint64_t v) {
         cuabi_stream s = nullptr;
         return cuabi_stream_wrap(As<cuabi_device>(v), 0, &s);
       }},
      {"cuabi_event_create", kDevice,
       [](uint64_t v) {
         cuabi_event e = nullptr;
         return cuabi_event_create(As<cuabi_device>(v), 0, &e);
       }},
      {"cuabi_module_compile", kDevice,
       [](uint64_t v) {
         cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
         d.source = "int x;";
         cuabi_module m = nullptr;
         return cuabi_module_compile(As<cuabi_device>(v), &d, &m);
       }},
      {"cuabi_module_load_data", kDevice,
       [](uint64_t v) {
         cuabi_module m = nullptr;
         return cuabi_module_load_data(As<cuabi_device>(v), "x", 1, &m);
       }},
      {"cuabi_module_load_file", kDevice,
       [](uint64_t v) {
         cuabi_module m = nullptr;
         return cuabi_module_load_file(As<cuabi_device>(v), "/nonexistent", &m);
       }},
      // Programs
      {"cuabi_program_add_name_expression", kProgram,
       [](uint64_t v) { return cuabi_program_add_name_expression(As<cuabi_program>(v), "k"); }},
      {"cuabi_program_compile", kProgram,
       [](uint64_t v) {
         const char* o[] = {"--gpu-architecture=compute_90"};
         return cuabi_program_compile(As<cuabi_program>(v), 1, o);
       }},
      {"cuabi_program_get_log", kProgram,
       [](uint64_t v) {
         size = sizeof(buf);
         return cuabi_program_get_log(As<cuabi_program>(v), buf, &size);
       }},
      {"cuabi_program_get_ptx", kProgram,
       [](uint64_t v) {
         size = 0;
         return cuabi_program_get_ptx(As<cuabi_program>(v), nullptr, &size);
       }},
      {"cuabi_program_get_cubin", kProgram,
       [](uint64_t v) {
         size = 0;
         return cuabi_program_get_cubin(As<cuabi_program>(v), nullptr, &size);
       }},
      {"cuabi_program_get_lowered_name", kProgram,
       [](uint64_t v) {
         size = sizeof(buf);
         return cuabi_program_get_lowered_name(As<cuabi_program>(v), "k", buf, &size);
       }},
      // Modules
      {"cuabi_module_get_from_cache", kModule,
       [](uint64_t v) { return cuabi_module_get_from_cache(As<cuabi_module>(v), &i32); }},
      {"cuabi_module_get_function", kModule,
       [](uint64_t v) {
         cuabi_function f = nullptr;
         return cuabi_module_get_function(As<cuabi_module>(v), "k", &f);
       }},
      {"cuabi_module_get_lowered_name", kModule,
       [](uint64_t v) {
         size = sizeof(buf);
         return cuabi_module_get_lowered_name(As<cuabi_module>(v), "k", buf, &size);
       }},
      {"cuabi_module_get_global", kModule,
       [](uint64_t v) { return cuabi_module_get_global(As<cuabi_module>(v), "g", &u64, &sz); }},
      // Functions
      {"cuabi_function_get_param_count", kFunction,
       [](uint64_t v) { return cuabi_function_get_param_count(As<cuabi_function>(v), &sz); }},
      {"cuabi_function_get_params", kFunction,
       [](uint64_t v) { return cuabi_function_get_params(As<cuabi_function>(v), nullptr, &sz, &sz2); }},
      {"cuabi_function_get_args_size", kFunction,
       [](uint64_t v) { return cuabi_function_get_args_size(As<cuabi_function>(v), &sz); }},
      {"cuabi_function_get_name", kFunction,
       [](uint64_t v) {
         size = sizeof(buf);
         return cuabi_function_get_name(As<cuabi_function>(v), buf, &size);
       }},
      {"cuabi_function_get_attribute", kFunction,
       [](uint64_t v) { return cuabi_function_get_attribute(As<cuabi_function>(v), CUABI_FUNC_MAX_THREADS_PER_BLOCK, &i32); }},
      {"cuabi_function_set_attribute", kFunction,
       [](uint64_t v) { return cuabi_function_set_attribute(As<cuabi_function>(v), CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0); }},
      {"cuabi_function_launch", kFunction,
       [](uint64_t v) {
         cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
         return cuabi_function_launch(As<cuabi_function>(v), &c, nullptr, nullptr, 0);
       }},
      {"cuabi_function_launch_sized", kFunction,
       [](uint64_t v) {
         cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
         return cuabi_function_launch_sized(As<cuabi_function>(v), &c, nullptr, nullptr, nullptr, 0);
       }},
      {"cuabi_function_launch_packed", kFunction,
       [](uint64_t v) {
         cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
         return cuabi_function_launch_packed(As<cuabi_function>(v), &c, nullptr, nullptr, 0);
       }},
      // Buffers
      {"cuabi_buffer_get_pointer", kBuffer,
       [](uint64_t v) { return cuabi_buffer_get_pointer(As<cuabi_buffer>(v), &u64); }},
      {"cuabi_buffer_get_size", kBuffer,
       [](uint64_t v) { return cuabi_buffer_get_size(As<cuabi_buffer>(v), &sz); }},
      {"cuabi_buffer_get_device_ordinal", kBuffer,
       [](uint64_t v) { return cuabi_buffer_get_device_ordinal(As<cuabi_buffer>(v), &i32); }},
      {"cuabi_buffer_copy_from_host", kBuffer,
       [](uint64_t v) { return cuabi_buffer_copy_from_host(As<cuabi_buffer>(v), 0, buf, 16); }},
      {"cuabi_buffer_copy_to_host", kBuffer,
       [](uint64_t v) { return cuabi_buffer_copy_to_host(As<cuabi_buffer>(v), 0, buf, 16); }},
      {"cuabi_buffer_copy_from_host_async", kBuffer,
       [](uint64_t v) {
         return cuabi_buffer_copy_from_host_async(As<cuabi_buffer>(v), 0, buf, 16, nullptr);
       }},
      {"cuabi_buffer_copy_to_host_async", kBuffer,
       [](uint64_t v) {
         return cuabi_buffer_copy_to_host_async(As<cuabi_buffer>(v), 0, buf, 16, nullptr);
       }},
      {"cuabi_buffer_copy", kBuffer,
       [](uint64_t v) {
         return cuabi_buffer_copy(As<cuabi_buffer>(v), 0, As<cuabi_buffer>(v), 64, 16);
       }},
      {"cuabi_buffer_copy_async", kBuffer,
       [](uint64_t v) {
         return cuabi_buffer_copy_async(As<cuabi_buffer>(v), 0, As<cuabi_buffer>(v), 64, 16,
                                        nullptr);
       }},
      {"cuabi_buffer_memset", kBuffer,
       [](uint64_t v) { return cuabi_buffer_memset(As<cuabi_buffer>(v), 0, 0, 16); }},
      {"cuabi_buffer_memset_async", kBuffer,
       [](uint64_t v) {
         return cuabi_buffer_memset_async(As<cuabi_buffer>(v), 0, 0, 16, nullptr);
       }},
      // Pinned host buffers
      {"cuabi_host_buffer_get_pointer", kHostBuffer,
       [](uint64_t v) { return cuabi_host_buffer_get_pointer(As<cuabi_host_buffer>(v), &ptr); }},
      {"cuabi_host_buffer_get_size", kHostBuffer,
       [](uint64_t v) { return cuabi_host_buffer_get_size(As<cuabi_host_buffer>(v), &sz); }},
      // Streams
      {"cuabi_stream_get_handle", kStream,
       [](uint64_t v) { return cuabi_stream_get_handle(As<cuabi_stream>(v), &u64); }},
      {"cuabi_stream_synchronize", kStream,
       [](uint64_t v) { return cuabi_stream_synchronize(As<cuabi_stream>(v)); }},
      {"cuabi_stream_query", kStream,
       [](uint64_t v) { return cuabi_stream_query(As<cuabi_stream>(v)); }},
      {"cuabi_stream_wait_event", kStream,
       [](uint64_t v) { return cuabi_stream_wait_event(As<cuabi_stream>(v), As<cuabi_event>(v)); }},
      {"cuabi_stream_begin_capture", kStream,
       [](uint64_t v) { return cuabi_stream_begin_capture(As<cuabi_stream>(v), CUABI_CAPTURE_GLOBAL); }},
      {"cuabi_stream_end_capture", kStream,
       [](uint64_t v) {
         cuabi_graph g = nullptr;
         return cuabi_stream_end_capture(As<cuabi_stream>(v), &g);
       }},
      // Events
      {"cuabi_event_record", kEvent,
       [](uint64_t v) { return cuabi_event_record(As<cuabi_event>(v), nullptr); }},
      {"cuabi_event_synchronize", kEvent,
       [](uint64_t v) { return cuabi_event_synchronize(As<cuabi_event>(v)); }},
      {"cuabi_event_query", kEvent,
       [](uint64_t v) { return cuabi_event_query(As<cuabi_event>(v)); }},
      {"cuabi_event_get_elapsed_ms", kEvent,
       [](uint64_t v) {
         return cuabi_event_get_elapsed_ms(As<cuabi_event>(v), As<cuabi_event>(v), &ms);
       }},
      // Launch plans
      {"cuabi_launch_plan_create", kFunction,
       [](uint64_t v) {
         cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
         cuabi_launch_plan p = nullptr;
         return cuabi_launch_plan_create(As<cuabi_function>(v), &c, nullptr, &p);
       }},
      {"cuabi_launch_plan_get_args", kLaunchPlan,
       [](uint64_t v) { return cuabi_launch_plan_get_args(As<cuabi_launch_plan>(v), &ptr, &sz); }},
      {"cuabi_launch_plan_launch", kLaunchPlan,
       [](uint64_t v) { return cuabi_launch_plan_launch(As<cuabi_launch_plan>(v)); }},
      // Graphs
      {"cuabi_graph_get_node_count", kGraph,
       [](uint64_t v) { return cuabi_graph_get_node_count(As<cuabi_graph>(v), &sz); }},
      {"cuabi_graph_instantiate", kGraph,
       [](uint64_t v) {
         cuabi_graph_exec e = nullptr;
         return cuabi_graph_instantiate(As<cuabi_graph>(v), &e);
       }},
      {"cuabi_graph_exec_launch", kGraphExec,
       [](uint64_t v) { return cuabi_graph_exec_launch(As<cuabi_graph_exec>(v), nullptr); }},
  };
  return calls;
}

struct Release {
  const char* name;
  Kind kind;
  void (*run)(uint64_t);
};

const Release kReleases[] = {
    {"cuabi_device_release", kDevice,
     [](uint64_t v) { cuabi_device_release(As<cuabi_device>(v)); }},
    {"cuabi_program_release", kProgram,
     [](uint64_t v) { cuabi_program_release(As<cuabi_program>(v)); }},
    {"cuabi_module_release", kModule,
     [](uint64_t v) { cuabi_module_release(As<cuabi_module>(v)); }},
    {"cuabi_function_release", kFunction,
     [](uint64_t v) { cuabi_function_release(As<cuabi_function>(v)); }},
    {"cuabi_buffer_release", kBuffer,
     [](uint64_t v) { cuabi_buffer_release(As<cuabi_buffer>(v)); }},
    {"cuabi_host_buffer_release", kHostBuffer,
     [](uint64_t v) { cuabi_host_buffer_release(As<cuabi_host_buffer>(v)); }},
    {"cuabi_stream_release", kStream,
     [](uint64_t v) { cuabi_stream_release(As<cuabi_stream>(v)); }},
    {"cuabi_event_release", kEvent, [](uint64_t v) { cuabi_event_release(As<cuabi_event>(v)); }},
    {"cuabi_graph_release", kGraph, [](uint64_t v) { cuabi_graph_release(As<cuabi_graph>(v)); }},
    {"cuabi_graph_exec_release", kGraphExec,
     [](uint64_t v) { cuabi_graph_exec_release(As<cuabi_graph_exec>(v)); }},
    {"cuabi_launch_plan_release", kLaunchPlan,
     [](uint64_t v) { cuabi_launch_plan_release(As<cuabi_launch_plan>(v)); }},
};

// The live programs, and values that were live once.
struct State {
  std::vector<uint64_t> live;
  std::vector<uint64_t> dead;
  unsigned calls_on_live = 0;

  uint64_t Create() {
    cuabi_program p = nullptr;
    cuabi_status st =
        cuabi_program_create("__device__ int fuzz_target;", "h.cu", 0, nullptr, nullptr, &p);
    FUZZ_CHECK(st == CUABI_SUCCESS,
               std::string("cuabi_program_create: ") + cuabi_last_error_message());
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  }
  State() {
    for (int i = 0; i < 4; ++i) live.push_back(Create());
  }
  bool IsLive(uint64_t v) const { return std::find(live.begin(), live.end(), v) != live.end(); }
  void Died(uint64_t v) {
    live.erase(std::find(live.begin(), live.end(), v));
    if (dead.size() < 64) dead.push_back(v);
    live.push_back(Create());
  }
  // Every live program still answers, with its own (uncompiled or compiled) state.
  void CheckAlive(const char* after) {
    for (uint64_t v : live) {
      size_t n = 0;
      cuabi_status st = cuabi_program_get_log(As<cuabi_program>(v), nullptr, &n);
      FUZZ_CHECK(st == CUABI_SUCCESS, std::string("a live program died after ") + after + ": " +
                                          cuabi_last_error_message());
    }
  }
};

State& state() {
  static State* s = new State();
  return *s;
}

uint64_t Pick(cuabi_fuzz::Input& in, State& s) {
  const uint8_t mode = in.u8();
  const uint64_t raw = in.u64();
  const uint64_t base = s.live[raw % s.live.size()];
  switch (mode % 8) {
    case 0:
      return raw;
    case 1:
      return base ^ (raw & 0xFF);  // nearby slots
    case 2:
      return (base & ~(0xFFull << 24)) | ((raw & 0xFF) << 24);  // other kind bits
    case 3:
      return base + ((raw & 0xF) << 32) - (8ull << 32);  // other generations
    case 4:
      return base & 0xFFFFFFFFull;  // generation 0
    case 5:
      return s.dead.empty() ? raw : s.dead[raw % s.dead.size()];  // released values
    case 6:
      return base;  // the live value itself
    default:
      return raw & 0xFFFFFFFFFFull;  // small values
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuabi_fuzz::Input in(data, size);
  State& s = state();
  const std::vector<Call>& calls = Calls();
  for (int op = 0; op < 64 && in.left() > 0; ++op) {
    const uint8_t which = in.u8();
    const uint64_t v = Pick(in, s);
    if (which & 0x80) {  // a release
      const Release& r = kReleases[(which & 0x7F) % (sizeof(kReleases) / sizeof(kReleases[0]))];
      const bool kills = r.kind == kProgram && s.IsLive(v);
      cuabi_last_error_clear();
      r.run(v);
      FUZZ_CHECK(cuabi_last_error_status() == CUABI_SUCCESS,
                 std::string(r.name) + " touched the last-error state");
      if (kills) {
        size_t n = 0;
        FUZZ_CHECK(
            cuabi_program_get_log(As<cuabi_program>(v), nullptr, &n) == CUABI_ERROR_INVALID_HANDLE,
            "a released program still answers");
        s.Died(v);
      }
      s.CheckAlive(r.name);
      continue;
    }
    const Call& c = calls[which % calls.size()];
    const bool live = c.kind == kProgram && s.IsLive(v);
    if (live && ++s.calls_on_live % 512 == 0) {
      // Programs accumulate name expressions; recycle one now and then.
      cuabi_program_release(As<cuabi_program>(v));
      s.Died(v);
      continue;
    }
    const cuabi_status st = c.run(v);
    if (!live) {
      FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
                 std::string(c.name) + " answered " + cuabi_status_get_name(st) + " for the value " +
                     std::to_string(v) + ": " + cuabi_last_error_message());
      FUZZ_CHECK(cuabi_last_error_status() == CUABI_ERROR_INVALID_HANDLE, "last error status");
      FUZZ_CHECK(cuabi_fuzz::IsUtf8(cuabi_last_error_message()), "message is not UTF-8");
    } else {
      FUZZ_CHECK(st != CUABI_ERROR_INVALID_HANDLE,
                 std::string(c.name) + " refused a live program: " + cuabi_last_error_message());
    }
  }
  return 0;
}
