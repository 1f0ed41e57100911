// The bad-input corpus through the C ABI, the part that needs no GPU:
// handles (NULL, released, stale, wrong kind, made up, released twice),
// parameters NVRTC and the core check, compile errors, bad options and
// strings that are not UTF-8.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "corpus.h"
#include "support.h"

namespace hardening {
namespace {

constexpr const char* kTiny = "extern \"C\" __global__ void tiny(int* x) { *x = 42; }\n";
constexpr const char* kTemplate =
    "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n";
constexpr const char* kSm = "--gpu-architecture=sm_90";
constexpr const char* kCompute = "--gpu-architecture=compute_90";

// Handles shared by the cases. Built once; every case that consumes a handle
// makes its own.
struct CpuFixture {
  Program compiled;                  // compiled for sm_90: CUBIN and PTX
  Program ptx_only;                  // compiled for compute_90: PTX only
  Program fresh;                     // created, never compiled
  Program failed;                    // its compile failed
  cuabi_program released = nullptr;  // a value that was a live handle once
  cuabi_program stale = nullptr;     // released, and its slot reused by `reuser`
  Program reuser;

  bool Build(std::string* why) {
    auto make = [&](const char* src, Program* p) {
      return cuabi_program_create(src, "corpus.cu", 0, nullptr, nullptr, p->out()) == CUABI_SUCCESS;
    };
    if (!make(kTemplate, &compiled) || !make(kTiny, &ptx_only) || !make(kTiny, &fresh) ||
        !make("this is not C++", &failed)) {
      *why = "cuabi_program_create: " + LastError();
      return false;
    }
    if (cuabi_program_add_name_expression(compiled, "store<int>") != CUABI_SUCCESS) {
      *why = "add_name_expression: " + LastError();
      return false;
    }
    const char* sm[] = {kSm};
    const char* compute[] = {kCompute};
    if (cuabi_program_compile(compiled, 1, sm) != CUABI_SUCCESS ||
        cuabi_program_compile(ptx_only, 1, compute) != CUABI_SUCCESS) {
      *why = "compile: " + LastError();
      return false;
    }
    cuabi_program_compile(failed, 0, nullptr);  // fails on purpose

    Program gone;
    make(kTiny, &gone);
    released = gone.take();
    cuabi_program_release(released);

    // A released handle whose slot the next program reuses.
    Program s;
    make(kTiny, &s);
    stale = s.take();
    cuabi_program_release(stale);
    make(kTiny, &reuser);
    if ((HandleValue(stale) & 0xFFFFFFu) != (HandleValue(reuser.get()) & 0xFFFFFFu)) {
      *why =
          "the handle table did not reuse the released slot; the stale-handle cases would "
          "test nothing";
      return false;
    }
    return true;
  }
};

// The kind bits of a handle value replaced by `kind` (1 = device ... 10 = graph exec).
uint64_t WithKind(uint64_t handle, uint64_t kind) {
  return (handle & ~(0xFFull << 24)) | (kind << 24);
}

std::vector<Case> CpuCases(CpuFixture& f) {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string call, cuabi_status expected, std::string needle,
                 std::function<cuabi_status(CaseContext&)> run) {
    cases.push_back(
        {std::move(name), std::move(call), expected, std::move(needle), std::move(run)});
  };
  const cuabi_program live = f.compiled.get();
  static size_t size_slot;

  // --- Program handles: NULL, released, stale ------------------------------
  struct ProgramCall {
    const char* call;
    std::function<cuabi_status(cuabi_program)> fn;
  };
  const std::vector<ProgramCall> program_calls = {
      {"cuabi_program_add_name_expression",
       [](cuabi_program p) { return cuabi_program_add_name_expression(p, "store<int>"); }},
      {"cuabi_program_compile",
       [](cuabi_program p) {
         const char* o[] = {kSm};
         return cuabi_program_compile(p, 1, o);
       }},
      {"cuabi_program_get_log",
       [](cuabi_program p) { return cuabi_program_get_log(p, nullptr, &size_slot); }},
      {"cuabi_program_get_ptx",
       [](cuabi_program p) { return cuabi_program_get_ptx(p, nullptr, &size_slot); }},
      {"cuabi_program_get_cubin",
       [](cuabi_program p) { return cuabi_program_get_cubin(p, nullptr, &size_slot); }},
      {"cuabi_program_get_lowered_name",
       [](cuabi_program p) {
         return cuabi_program_get_lowered_name(p, "store<int>", nullptr, &size_slot);
       }},
  };
  for (const ProgramCall& pc : program_calls) {
    auto fn = pc.fn;
    add("NULL program", pc.call, CUABI_ERROR_INVALID_HANDLE, "program is NULL",
        [fn](CaseContext&) -> cuabi_status { return fn(nullptr); });
    add("released program", pc.call, CUABI_ERROR_INVALID_HANDLE,
        "program is not a live cuabi_program",
        [fn, &f](CaseContext&) -> cuabi_status { return fn(f.released); });
    add("stale program (slot reused by a live one)", pc.call, CUABI_ERROR_INVALID_HANDLE,
        "program is not a live cuabi_program", [fn, &f](CaseContext& ctx) -> cuabi_status {
          cuabi_status st = fn(f.stale);
          // The live program in the same slot must be untouched.
          size_t n = 0;
          if (cuabi_program_get_log(f.reuser, nullptr, &n) != CUABI_SUCCESS)
            ctx.Problem("the live program that reused the slot stopped working");
          return st;
        });
  }

  // --- Wrong kind: a live program handle where another kind is expected ----
  const uint64_t pv = HandleValue(live);
  add("program handle as a device", "cuabi_device_get_name", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        return cuabi_device_get_name(AsHandle<cuabi_device>(pv), nullptr, &size_slot);
      });
  add("program handle as a module", "cuabi_module_get_function", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext& ctx) -> cuabi_status {
        cuabi_function out = AsHandle<cuabi_function>(0x5a5a);
        cuabi_status st = cuabi_module_get_function(AsHandle<cuabi_module>(pv), "tiny", &out);
        if (HandleValue(out) != 0x5a5a) ctx.Problem("out was written although the call failed");
        return st;
      });
  add("program handle as a function", "cuabi_function_get_name", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        return cuabi_function_get_name(AsHandle<cuabi_function>(pv), nullptr, &size_slot);
      });
  add("program handle as a buffer", "cuabi_buffer_get_size", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext& ctx) -> cuabi_status {
        size_t bytes = 777;
        cuabi_status st = cuabi_buffer_get_size(AsHandle<cuabi_buffer>(pv), &bytes);
        if (bytes != 777) ctx.Problem("bytes was written although the call failed");
        return st;
      });
  add("program handle as a host buffer", "cuabi_host_buffer_get_size", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        size_t bytes = 0;
        return cuabi_host_buffer_get_size(AsHandle<cuabi_host_buffer>(pv), &bytes);
      });
  add("program handle as a stream", "cuabi_stream_synchronize", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        return cuabi_stream_synchronize(AsHandle<cuabi_stream>(pv));
      });
  add("program handle as an event", "cuabi_event_query", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program",
      [pv](CaseContext&) -> cuabi_status { return cuabi_event_query(AsHandle<cuabi_event>(pv)); });
  add("program handle as a graph", "cuabi_graph_get_node_count", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_graph_get_node_count(AsHandle<cuabi_graph>(pv), &n);
      });
  add("program handle as a graph exec", "cuabi_graph_exec_launch", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        return cuabi_graph_exec_launch(AsHandle<cuabi_graph_exec>(pv), nullptr);
      });
  add("program handle as the launch's function", "cuabi_function_launch_packed", CUABI_ERROR_INVALID_HANDLE,
      "function is not a live cuabi_function", [pv](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
        return cuabi_function_launch_packed(AsHandle<cuabi_function>(pv), &c, nullptr, nullptr, 0);
      });
  add("program handle as the compile's device", "cuabi_module_compile", CUABI_ERROR_INVALID_HANDLE,
      "device is not a live cuabi_device", [pv](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kTiny;
        cuabi_module m = nullptr;
        return cuabi_module_compile(AsHandle<cuabi_device>(pv), &d, &m);
      });
  add("program handle with its kind bits forged to a module", "cuabi_module_get_function",
      CUABI_ERROR_INVALID_HANDLE, "module is not a live cuabi_module",
      [pv](CaseContext&) -> cuabi_status {
        cuabi_function out = nullptr;
        return cuabi_module_get_function(AsHandle<cuabi_module>(WithKind(pv, 3)), "tiny", &out);
      });

  // --- NULL handles of every other kind -------------------------------------
  add("NULL device", "cuabi_device_get_ordinal", CUABI_ERROR_INVALID_HANDLE, "device is NULL",
      [](CaseContext&) -> cuabi_status {
        int32_t o = 0;
        return cuabi_device_get_ordinal(nullptr, &o);
      });
  add("NULL device", "cuabi_device_reset", CUABI_ERROR_INVALID_HANDLE, "device is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_device_reset(nullptr); });
  add("NULL device", "cuabi_buffer_alloc", CUABI_ERROR_INVALID_HANDLE, "device is NULL",
      [](CaseContext&) -> cuabi_status {
        cuabi_buffer b = nullptr;
        return cuabi_buffer_alloc(nullptr, 16, &b);
      });
  add("NULL device", "cuabi_module_load_data", CUABI_ERROR_INVALID_HANDLE, "device is NULL",
      [](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        return cuabi_module_load_data(nullptr, "x", 1, &m);
      });
  add("NULL module", "cuabi_module_get_function", CUABI_ERROR_INVALID_HANDLE, "module is NULL",
      [](CaseContext&) -> cuabi_status {
        cuabi_function fn = nullptr;
        return cuabi_module_get_function(nullptr, "tiny", &fn);
      });
  add("NULL function", "cuabi_function_get_param_count", CUABI_ERROR_INVALID_HANDLE,
      "function is NULL", [](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_function_get_param_count(nullptr, &n);
      });
  add("NULL function", "cuabi_function_launch", CUABI_ERROR_INVALID_HANDLE, "function is NULL",
      [](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
        return cuabi_function_launch(nullptr, &c, nullptr, nullptr, 0);
      });
  add("NULL buffer", "cuabi_buffer_get_pointer", CUABI_ERROR_INVALID_HANDLE, "buffer is NULL",
      [](CaseContext&) -> cuabi_status {
        uint64_t p = 0;
        return cuabi_buffer_get_pointer(nullptr, &p);
      });
  add("NULL destination buffer", "cuabi_buffer_copy", CUABI_ERROR_INVALID_HANDLE, "dst is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(nullptr, 0, nullptr, 0, 4); });
  add("NULL source buffer", "cuabi_buffer_copy_to_host", CUABI_ERROR_INVALID_HANDLE, "src is NULL",
      [](CaseContext&) -> cuabi_status {
        char b[4];
        return cuabi_buffer_copy_to_host(nullptr, 0, b, 4);
      });
  add("NULL host buffer", "cuabi_host_buffer_get_pointer", CUABI_ERROR_INVALID_HANDLE,
      "buffer is NULL", [](CaseContext&) -> cuabi_status {
        void* p = nullptr;
        return cuabi_host_buffer_get_pointer(nullptr, &p);
      });
  add("NULL stream", "cuabi_stream_query", CUABI_ERROR_INVALID_HANDLE, "stream is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_stream_query(nullptr); });
  add("NULL stream", "cuabi_stream_wait_event", CUABI_ERROR_INVALID_HANDLE, "stream is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_stream_wait_event(nullptr, nullptr); });
  add("NULL event", "cuabi_event_synchronize", CUABI_ERROR_INVALID_HANDLE, "event is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_event_synchronize(nullptr); });
  add("NULL start event", "cuabi_event_get_elapsed_ms", CUABI_ERROR_INVALID_HANDLE, "start is NULL",
      [](CaseContext&) -> cuabi_status {
        float ms = 0;
        return cuabi_event_get_elapsed_ms(nullptr, nullptr, &ms);
      });
  add("NULL graph", "cuabi_graph_instantiate", CUABI_ERROR_INVALID_HANDLE, "graph is NULL",
      [](CaseContext&) -> cuabi_status {
        cuabi_graph_exec e = nullptr;
        return cuabi_graph_instantiate(nullptr, &e);
      });
  add("NULL plan", "cuabi_launch_plan_get_args", CUABI_ERROR_INVALID_HANDLE, "plan is NULL",
      [](CaseContext& ctx) -> cuabi_status {
        void* args = &size_slot;
        size_t n = 77;
        cuabi_status st = cuabi_launch_plan_get_args(nullptr, &args, &n);
        if (args != &size_slot || n != 77) ctx.Problem("out-parameters written on failure");
        return st;
      });
  add("NULL plan", "cuabi_launch_plan_launch", CUABI_ERROR_INVALID_HANDLE, "plan is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_launch_plan_launch(nullptr); });
  add("program handle as a plan", "cuabi_launch_plan_launch", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        return cuabi_launch_plan_launch(AsHandle<cuabi_launch_plan>(pv));
      });
  add("made-up plan", "cuabi_launch_plan_get_args", CUABI_ERROR_INVALID_HANDLE,
      "plan is not a live cuabi_launch_plan", [](CaseContext&) -> cuabi_status {
        void* args = nullptr;
        size_t n = 0;
        return cuabi_launch_plan_get_args(AsHandle<cuabi_launch_plan>((1ull << 32) | (11ull << 24)),
                                          &args, &n);
      });
  add("plan of a NULL function", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_HANDLE,
      "function is NULL", [](CaseContext& ctx) -> cuabi_status {
        cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
        cuabi_launch_plan out = AsHandle<cuabi_launch_plan>(0x31);
        cuabi_status st = cuabi_launch_plan_create(nullptr, &c, nullptr, &out);
        if (HandleValue(out) != 0x31) ctx.Problem("out was written although the call failed");
        return st;
      });
  add("plan of a program handle", "cuabi_launch_plan_create", CUABI_ERROR_INVALID_HANDLE,
      "it is a cuabi_program", [pv](CaseContext&) -> cuabi_status {
        cuabi_launch_plan out = nullptr;
        return cuabi_launch_plan_create(AsHandle<cuabi_function>(pv), nullptr, nullptr, &out);
      });
  add("NULL graph exec", "cuabi_graph_exec_launch", CUABI_ERROR_INVALID_HANDLE, "exec is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_graph_exec_launch(nullptr, nullptr); });

  // --- Made-up handle values -------------------------------------------------
  struct Fake {
    const char* what;
    uint64_t value;
  };
  const std::vector<Fake> fakes = {
      {"the value 1", 1},
      {"0xdeadbeef", 0xdeadbeefull},
      {"all bits set", ~0ull},
      {"generation 0 with the program kind", 2ull << 24},
      {"a never-used slot index", (1ull << 32) | (2ull << 24) | 0xFFFFFEull},
      {"a live handle's generation plus one", pv + (1ull << 32)},
      {"a host pointer", static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&size_slot))},
  };
  for (const Fake& fk : fakes) {
    const uint64_t v = fk.value;
    add(std::string("made-up program handle: ") + fk.what, "cuabi_program_get_log",
        CUABI_ERROR_INVALID_HANDLE, "program is not a live cuabi_program",
        [v](CaseContext&) -> cuabi_status {
          return cuabi_program_get_log(AsHandle<cuabi_program>(v), nullptr, &size_slot);
        });
  }

  // --- Release: twice, wrong kind, NULL, made up -----------------------------
  add("program released twice, then used", "cuabi_program_get_log", CUABI_ERROR_INVALID_HANDLE,
      "program is not a live cuabi_program", [](CaseContext& ctx) -> cuabi_status {
        cuabi_program p = nullptr;
        if (cuabi_program_create(kTiny, nullptr, 0, nullptr, nullptr, &p) != CUABI_SUCCESS) {
          ctx.Problem("create: " + LastError());
          return CUABI_ERROR_INTERNAL;
        }
        cuabi_program_release(p);
        cuabi_last_error_clear();
        cuabi_program_release(p);  // detected and ignored
        if (cuabi_last_error_status() != CUABI_SUCCESS)
          ctx.Problem("a second release touched the last-error state");
        return cuabi_program_get_log(p, nullptr, &size_slot);
      });
  add("a live program released through every other kind's release", "cuabi_program_get_log",
      CUABI_SUCCESS, "", [pv](CaseContext& ctx) -> cuabi_status {
        cuabi_device_release(AsHandle<cuabi_device>(pv));
        cuabi_module_release(AsHandle<cuabi_module>(pv));
        cuabi_function_release(AsHandle<cuabi_function>(pv));
        cuabi_buffer_release(AsHandle<cuabi_buffer>(pv));
        cuabi_host_buffer_release(AsHandle<cuabi_host_buffer>(pv));
        cuabi_stream_release(AsHandle<cuabi_stream>(pv));
        cuabi_event_release(AsHandle<cuabi_event>(pv));
        cuabi_graph_release(AsHandle<cuabi_graph>(pv));
        cuabi_graph_exec_release(AsHandle<cuabi_graph_exec>(pv));
        cuabi_launch_plan_release(AsHandle<cuabi_launch_plan>(pv));
        // The same slot and generation with forged kind bits.
        for (uint64_t k = 1; k <= 11; ++k)
          if (k != 2) cuabi_module_release(AsHandle<cuabi_module>(WithKind(pv, k)));
        cuabi_status st = cuabi_program_get_log(AsHandle<cuabi_program>(pv), nullptr, &size_slot);
        if (st != CUABI_SUCCESS) ctx.Problem("the program died: " + LastError());
        return st;
      });
  add("NULL to every release, last error untouched", "cuabi_*_release", CUABI_SUCCESS, "",
      [](CaseContext& ctx) -> cuabi_status {
        cuabi_program_get_log(nullptr, nullptr, nullptr);  // plant an error
        const std::string before = cuabi_last_error_message();
        cuabi_device_release(nullptr);
        cuabi_program_release(nullptr);
        cuabi_module_release(nullptr);
        cuabi_function_release(nullptr);
        cuabi_buffer_release(nullptr);
        cuabi_host_buffer_release(nullptr);
        cuabi_stream_release(nullptr);
        cuabi_event_release(nullptr);
        cuabi_graph_release(nullptr);
        cuabi_graph_exec_release(nullptr);
        cuabi_launch_plan_release(nullptr);
        if (before != cuabi_last_error_message()) ctx.Problem("a release changed the last error");
        return CUABI_SUCCESS;
      });
  add("made-up values to every release", "cuabi_*_release", CUABI_SUCCESS, "",
      [&f](CaseContext& ctx) -> cuabi_status {
        const uint64_t values[] = {1,
                                   0xdeadbeefull,
                                   ~0ull,
                                   (1ull << 32) | (2ull << 24) | 77,
                                   HandleValue(f.released),
                                   HandleValue(f.stale)};
        for (uint64_t v : values) {
          cuabi_device_release(AsHandle<cuabi_device>(v));
          cuabi_program_release(AsHandle<cuabi_program>(v));
          cuabi_module_release(AsHandle<cuabi_module>(v));
          cuabi_function_release(AsHandle<cuabi_function>(v));
          cuabi_buffer_release(AsHandle<cuabi_buffer>(v));
          cuabi_host_buffer_release(AsHandle<cuabi_host_buffer>(v));
          cuabi_stream_release(AsHandle<cuabi_stream>(v));
          cuabi_event_release(AsHandle<cuabi_event>(v));
          cuabi_graph_release(AsHandle<cuabi_graph>(v));
          cuabi_graph_exec_release(AsHandle<cuabi_graph_exec>(v));
          cuabi_launch_plan_release(AsHandle<cuabi_launch_plan>(v));
        }
        // The stale value's slot belongs to a live program now: still alive.
        if (cuabi_program_get_log(f.reuser, nullptr, &size_slot) != CUABI_SUCCESS)
          ctx.Problem("releasing a stale value released the live program in its slot");
        return CUABI_SUCCESS;
      });

  // --- Program creation ------------------------------------------------------
  add("source is NULL", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT, "source is NULL",
      [](CaseContext& ctx) -> cuabi_status {
        cuabi_program p = AsHandle<cuabi_program>(0x77);
        cuabi_status st = cuabi_program_create(nullptr, nullptr, 0, nullptr, nullptr, &p);
        if (HandleValue(p) != 0x77) ctx.Problem("out was written although the call failed");
        return st;
      });
  add("out is NULL", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT, "out is NULL",
      [](CaseContext&) -> cuabi_status {
        return cuabi_program_create(kTiny, nullptr, 0, nullptr, nullptr, nullptr);
      });
  add("headers counted but arrays NULL", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT,
      "num_headers is 2", [](CaseContext&) -> cuabi_status {
        cuabi_program p = nullptr;
        return cuabi_program_create(kTiny, nullptr, 2, nullptr, nullptr, &p);
      });
  add("a header's name is NULL", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT,
      "header_names[1] is NULL", [](CaseContext&) -> cuabi_status {
        const char* src[] = {"int a;", "int b;"};
        const char* names[] = {"a.h", nullptr};
        cuabi_program p = nullptr;
        return cuabi_program_create(kTiny, nullptr, 2, src, names, &p);
      });
  add("num_headers is (size_t)-1", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT,
      "num_headers is 18446744073709551615, implausibly large", [](CaseContext&) -> cuabi_status {
        // Arrays long enough that no read goes past them whatever the order
        // of the checks; the count must be refused as implausible.
        static std::vector<const char*> src(5000, "int a;");
        static std::vector<const char*> names(5000, "a.h");
        src.back() = nullptr;
        names.back() = nullptr;
        cuabi_program p = nullptr;
        cuabi_status st = cuabi_program_create(kTiny, nullptr, static_cast<size_t>(-1), src.data(),
                                               names.data(), &p);
        cuabi_program_release(p);
        return st;
      });

  // --- Compile: options, state, errors ---------------------------------------
  auto fresh_program = [](CaseContext& ctx, const char* src = kTiny) {
    cuabi_program p = nullptr;
    if (cuabi_program_create(src, "corpus.cu", 0, nullptr, nullptr, &p) != CUABI_SUCCESS)
      ctx.Problem("create: " + LastError());
    return p;
  };
  add("options NULL with a count", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "num_options is 2", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        return cuabi_program_compile(p, 2, nullptr);
      });
  add("an option is NULL", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "options[1] is NULL", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {kSm, nullptr};
        return cuabi_program_compile(p, 2, o);
      });
  add("num_options is (size_t)-1", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "num_options is 18446744073709551615, implausibly large",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        static std::vector<const char*> opts(5000, "-w");
        opts.back() = nullptr;
        Program p(fresh_program(ctx));
        return cuabi_program_compile(p, static_cast<size_t>(-1), opts.data());
      });
  add("an empty option", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "options[0] is empty", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {""};
        return cuabi_program_compile(p, 1, o);
      });
  add("an option of 100 KiB", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "options[1] is longer than 64 KiB", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        static const std::string huge = "-D" + std::string(100 * 1024, 'X');
        const char* o[] = {"-w", huge.c_str()};
        return cuabi_program_compile(p, 2, o);
      });
  add("a header's source is NULL", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT,
      "header_sources[0] is NULL", [](CaseContext&) -> cuabi_status {
        const char* src[] = {nullptr};
        const char* names[] = {"a.h"};
        cuabi_program p = nullptr;
        return cuabi_program_create(kTiny, nullptr, 1, src, names, &p);
      });
  add("compiled twice", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT, "already compiled",
      [live](CaseContext&) -> cuabi_status {
        const char* o[] = {kSm};
        return cuabi_program_compile(live, 1, o);
      });
  add("an unknown option", "cuabi_program_compile", CUABI_ERROR_COMPILE, "--no-such-option",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--no-such-option"};
        cuabi_status st = cuabi_program_compile(p, 1, o);
        if (!Contains(ProgramLog(p), "--no-such-option"))
          ctx.Problem("the program's log does not name the option");
        return st;
      });
  add("an architecture that does not exist", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "--gpu-architecture", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--gpu-architecture=sm_1"};
        return cuabi_program_compile(p, 1, o);
      });
  add("an option missing its value", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "NVRTC rejected the options", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--gpu-architecture"};
        return cuabi_program_compile(p, 1, o);
      });
  add("a syntax error", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "could not compile the source", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "extern \"C\" __global__ void k( {"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!Contains(LastErrorLog(), "error")) ctx.Problem("cuabi_last_error_log has no error");
        return st;
      });
  add("an undefined identifier", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "undefined_identifier_xyz", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(
            ctx, "extern \"C\" __global__ void k(int* x) { *x = undefined_identifier_xyz; }"));
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("a missing include", "cuabi_program_compile", CUABI_ERROR_COMPILE, "missing_header.h",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "#include \"missing_header.h\"\n"));
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("an #error directive", "cuabi_program_compile", CUABI_ERROR_COMPILE, "custom failure marker",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "#error custom failure marker\n"));
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("an error inside a given header", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "bad_header.h", [](CaseContext& ctx) -> cuabi_status {
        const char* src[] = {"int broken(;\n"};
        const char* names[] = {"bad_header.h"};
        Program p;
        if (cuabi_program_create("#include \"bad_header.h\"\n", nullptr, 1, src, names, p.out()) !=
            CUABI_SUCCESS)
          ctx.Problem("create: " + LastError());
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("a name expression naming nothing", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "no_such_template", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        cuabi_program_add_name_expression(p, "no_such_template<int>");
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("an empty source", "cuabi_program_compile", CUABI_SUCCESS, "",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, ""));
        return cuabi_program_compile(p, 0, nullptr);
      });

  // --- Name expressions and lowered names ------------------------------------
  add("expression is NULL", "cuabi_program_add_name_expression", CUABI_ERROR_INVALID_ARGUMENT,
      "expression", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        return cuabi_program_add_name_expression(p, nullptr);
      });
  add("expression is empty", "cuabi_program_add_name_expression", CUABI_ERROR_INVALID_ARGUMENT,
      "expression", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        return cuabi_program_add_name_expression(p, "");
      });
  add("expression added after compiling", "cuabi_program_add_name_expression",
      CUABI_ERROR_INVALID_ARGUMENT, "before the program is compiled",
      [live](CaseContext&) -> cuabi_status {
        return cuabi_program_add_name_expression(live, "store<float>");
      });
  add("lowered name of an expression never added", "cuabi_program_get_lowered_name",
      CUABI_ERROR_NOT_FOUND, "store<double>", [live](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_lowered_name(live, "store<double>", nullptr, &n);
      });
  add("lowered name of a NULL expression", "cuabi_program_get_lowered_name",
      CUABI_ERROR_INVALID_ARGUMENT, "expression", [live](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_lowered_name(live, nullptr, nullptr, &n);
      });
  add("lowered name into a 1-byte buffer", "cuabi_program_get_lowered_name",
      CUABI_ERROR_INSUFFICIENT_BUFFER, "are needed", [live](CaseContext& ctx) -> cuabi_status {
        char b[1] = {'#'};
        size_t n = 1;
        cuabi_status st = cuabi_program_get_lowered_name(live, "store<int>", b, &n);
        if (b[0] != '#') ctx.Problem("a too-small buffer was written");
        if (n <= 1) ctx.Problem("*size does not hold the size needed");
        return st;
      });

  // --- Outputs and two-call sizes ---------------------------------------------
  add("log with size NULL", "cuabi_program_get_log", CUABI_ERROR_INVALID_ARGUMENT, "size is NULL",
      [live](CaseContext&) -> cuabi_status {
        return cuabi_program_get_log(live, nullptr, nullptr);
      });
  add("PTX with size NULL", "cuabi_program_get_ptx", CUABI_ERROR_INVALID_ARGUMENT, "size is NULL",
      [live](CaseContext&) -> cuabi_status {
        return cuabi_program_get_ptx(live, nullptr, nullptr);
      });
  add("PTX into a 0-byte buffer", "cuabi_program_get_ptx", CUABI_ERROR_INSUFFICIENT_BUFFER,
      "are needed", [live](CaseContext& ctx) -> cuabi_status {
        char buf[4] = {'#'};
        size_t n = 0;
        cuabi_status st = cuabi_program_get_ptx(live, buf, &n);
        if (buf[0] != '#') ctx.Problem("a too-small buffer was written");
        return st;
      });
  add("PTX before compiling", "cuabi_program_get_ptx", CUABI_ERROR_NOT_FOUND, "compiled",
      [&f](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_ptx(f.fresh, nullptr, &n);
      });
  add("CUBIN after a failed compile", "cuabi_program_get_cubin", CUABI_ERROR_NOT_FOUND, "compiled",
      [&f](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_cubin(f.failed, nullptr, &n);
      });
  add("CUBIN of a compute_XY compile", "cuabi_program_get_cubin", CUABI_ERROR_NOT_FOUND, "CUBIN",
      [&f](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_cubin(f.ptx_only, nullptr, &n);
      });
  add("last error log with size NULL", "cuabi_last_error_log", CUABI_ERROR_INVALID_ARGUMENT, "",
      [](CaseContext&) -> cuabi_status { return cuabi_last_error_log(nullptr, nullptr); });
  cases.back().records_error = false;
  add("NVRTC version into NULL", "cuabi_nvrtc_get_version", CUABI_ERROR_INVALID_ARGUMENT,
      "major is NULL", [](CaseContext&) -> cuabi_status {
        int32_t minor = 0;
        return cuabi_nvrtc_get_version(nullptr, &minor);
      });
  add("NVRTC path with size NULL", "cuabi_nvrtc_get_path", CUABI_ERROR_INVALID_ARGUMENT, "size is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_nvrtc_get_path(nullptr, nullptr); });
  add("driver version into NULL", "cuabi_driver_get_version", CUABI_ERROR_INVALID_ARGUMENT,
      "version is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_driver_get_version(nullptr); });
  add("device count into NULL", "cuabi_device_get_count", CUABI_ERROR_INVALID_ARGUMENT, "count is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_device_get_count(nullptr); });
  add("device into NULL", "cuabi_device_get", CUABI_ERROR_INVALID_ARGUMENT, "out is NULL",
      [](CaseContext&) -> cuabi_status { return cuabi_device_get(0, nullptr); });

  // --- Strings that are not UTF-8 ---------------------------------------------
  add("invalid UTF-8 inside a comment", "cuabi_program_compile", CUABI_SUCCESS, "",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "// \xff\xfe\xc0\xaf comment\n__device__ int x;\n"));
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("invalid UTF-8 inside an identifier", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "could not compile", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "__global__ void k\xff\xfe(int* x) { *x = 1; }\n"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  add("invalid UTF-8 inside a string literal", "cuabi_program_compile", CUABI_ERROR_COMPILE,
      "could not compile", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(
            ctx, "__global__ void k(char* x) { const char* s = \"\xff\xfe\"; *x = s[0]; }\n"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  add("a source of nothing but invalid bytes (NVRTC skips them)", "cuabi_program_compile",
      CUABI_SUCCESS, "", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "\xff\xfe\xfd\x80\x81\xc0\xc1\xf5\xf8\xfc"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  add("a surrogate (CESU) and an overlong NUL in an #error", "cuabi_program_compile",
      CUABI_ERROR_COMPILE, "could not compile", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "#error bad \xed\xa0\x80 and \xc0\x80 here\n"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  add("invalid UTF-8 in a header's content (a comment)", "cuabi_program_compile", CUABI_SUCCESS, "",
      [](CaseContext& ctx) -> cuabi_status {
        const char* src[] = {"// \xff\xfe\n__device__ int from_header;\n"};
        const char* names[] = {"h.cuh"};
        Program p;
        if (cuabi_program_create("#include \"h.cuh\"\n", nullptr, 1, src, names, p.out()) !=
            CUABI_SUCCESS)
          ctx.Problem("create: " + LastError());
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("valid non-ASCII UTF-8 in a comment and a name", "cuabi_program_compile", CUABI_SUCCESS, "",
      [](CaseContext& ctx) -> cuabi_status {
        Program p;
        if (cuabi_program_create(
                "// caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n__device__ int y;\n",
                "k\xc3\xa9rnel.cu", 0, nullptr, nullptr, p.out()) != CUABI_SUCCESS)
          ctx.Problem("create: " + LastError());
        return cuabi_program_compile(p, 0, nullptr);
      });
  add("a program name that is not UTF-8", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT,
      "name is not valid UTF-8", [](CaseContext& ctx) -> cuabi_status {
        cuabi_program p = nullptr;
        cuabi_status st =
            cuabi_program_create("int x", "bad\xff\xfename.cu", 0, nullptr, nullptr, &p);
        if (st == CUABI_SUCCESS) {
          // Accepted: the name then reaches NVRTC's log and from there the message.
          st = cuabi_program_compile(p, 0, nullptr);
          if (!IsUtf8(cuabi_last_error_message()))
            ctx.Problem("accepted by create; the compile's message then is not UTF-8");
          cuabi_program_release(p);
        }
        return st;
      });
  add("a header name that is not UTF-8", "cuabi_program_create", CUABI_ERROR_INVALID_ARGUMENT,
      "header_names[0] is not valid UTF-8", [](CaseContext& ctx) -> cuabi_status {
        const char* src[] = {"int broken(;\n"};
        const char* names[] = {"bad\xff.h"};
        cuabi_program p = nullptr;
        cuabi_status st =
            cuabi_program_create("#include \"bad\xff.h\"\n", nullptr, 1, src, names, &p);
        if (st == CUABI_SUCCESS) {
          st = cuabi_program_compile(p, 0, nullptr);
          if (!IsUtf8(cuabi_last_error_message()))
            ctx.Problem("accepted by create; the compile's message then is not UTF-8");
          cuabi_program_release(p);
        }
        return st;
      });
  add("an option that is not UTF-8", "cuabi_program_compile", CUABI_ERROR_INVALID_ARGUMENT,
      "options[0] is not valid UTF-8", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"-D\xff\xfe=1"};
        return cuabi_program_compile(p, 1, o);
      });
  add("an architecture value that is not UTF-8", "cuabi_program_compile",
      CUABI_ERROR_INVALID_ARGUMENT, "options[0] is not valid UTF-8",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--gpu-architecture=sm_\xff"};
        return cuabi_program_compile(p, 1, o);
      });
  add("a name expression that is not UTF-8", "cuabi_program_add_name_expression",
      CUABI_ERROR_INVALID_ARGUMENT, "UTF-8", [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        return cuabi_program_add_name_expression(p, "store<\xff>");
      });
  add("a lowered-name query that is not UTF-8", "cuabi_program_get_lowered_name",
      CUABI_ERROR_INVALID_ARGUMENT, "UTF-8", [live](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_lowered_name(live, "store<\xc0\x80>", nullptr, &n);
      });
  add("a kernel name that is not UTF-8 (module handle checked first)", "cuabi_module_get_function",
      CUABI_ERROR_INVALID_HANDLE, "module is NULL", [](CaseContext&) -> cuabi_status {
        cuabi_function fn = nullptr;
        return cuabi_module_get_function(nullptr, "k\xff", &fn);
      });
  add("a module path that is not UTF-8 (device handle checked first)", "cuabi_module_load_file",
      CUABI_ERROR_INVALID_HANDLE, "device is NULL", [](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        return cuabi_module_load_file(nullptr, "/tmp/\xff.cubin", &m);
      });

  // --- Launch validation without a live function ------------------------------
  add("sized launch on a made-up function", "cuabi_function_launch_sized", CUABI_ERROR_INVALID_HANDLE,
      "function is not a live cuabi_function", [](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
        float a = 1;
        void* params[] = {&a};
        size_t sizes[] = {sizeof(a)};
        return cuabi_function_launch_sized(AsHandle<cuabi_function>((1ull << 32) | (4ull << 24) | 3), &c,
                                  nullptr, params, sizes, 1);
      });
  add("launch with every pointer NULL", "cuabi_function_launch", CUABI_ERROR_INVALID_HANDLE,
      "function is NULL", [](CaseContext&) -> cuabi_status {
        return cuabi_function_launch(nullptr, nullptr, nullptr, nullptr, 5);
      });
  add("packed launch, NULL config and args on a made-up function", "cuabi_function_launch_packed",
      CUABI_ERROR_INVALID_HANDLE, "function", [](CaseContext&) -> cuabi_status {
        return cuabi_function_launch_packed(AsHandle<cuabi_function>(0xdeadbeef), nullptr, nullptr, nullptr,
                                   static_cast<size_t>(-1));
      });
  add("compile into a NULL device with a NULL desc", "cuabi_module_compile",
      CUABI_ERROR_INVALID_HANDLE, "device is NULL", [](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        return cuabi_module_compile(nullptr, nullptr, &m);
      });
  return cases;
}

TEST(BadInputCorpus, CApiWithoutGpu) {
  CpuFixture fixture;
  std::string why;
  ASSERT_TRUE(fixture.Build(&why)) << why;
  const std::vector<Case> cases = CpuCases(fixture);
  const CorpusResult result = RunCorpus(cases);
  ReportCorpus("C ABI, no GPU needed", result);
  EXPECT_GT(result.cases, 100u);
  EXPECT_EQ(result.cases, result.passed)
      << result.failures.size() << " case(s) failed (listed above)";
}

}  // namespace
}  // namespace hardening
