// The bad-input corpus through the C ABI, the part that needs no GPU:
// handles (NULL, released, stale, wrong kind, made up, released twice),
// parameters NVRTC and the core check, compile errors, bad options and
// strings that are not UTF-8.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
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
    released = gone.detach();
    cuabi_program_release(released);

    // A released handle whose slot the next program reuses.
    Program s;
    make(kTiny, &s);
    stale = s.detach();
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

// The kind bits of a handle value replaced by `kind` (its number: kKindNames).
uint64_t WithKind(uint64_t handle, uint64_t kind) {
  return (handle & ~(0xFFull << 24)) | (kind << 24);
}

// The call bodies of the "cpu" cases of tests/corpus/cases.json, by id.
Bodies CpuBodies(CpuFixture& f) {
  Bodies b;
  auto def = [&b](const std::string& id, Body body) { b.def(id, std::move(body)); };
  const cuabi_program live = f.compiled.get();
  static size_t size_slot;

  // --- Program handles: NULL, released, stale ------------------------------
  struct ProgramCall {
    const char* id;  // the function, without cuabi_
    std::function<cuabi_status(cuabi_program)> fn;
  };
  const std::vector<ProgramCall> program_calls = {
      {"program_add_name_expression",
       [](cuabi_program p) { return cuabi_program_add_name_expression(p, "store<int>"); }},
      {"program_compile",
       [](cuabi_program p) {
         const char* o[] = {kSm};
         return cuabi_program_compile(p, 1, o);
       }},
      {"program_get_log",
       [](cuabi_program p) { return cuabi_program_get_log(p, nullptr, &size_slot); }},
      {"program_get_ptx",
       [](cuabi_program p) { return cuabi_program_get_ptx(p, nullptr, &size_slot); }},
      {"program_get_cubin",
       [](cuabi_program p) { return cuabi_program_get_cubin(p, nullptr, &size_slot); }},
      {"program_get_lowered_name",
       [](cuabi_program p) {
         return cuabi_program_get_lowered_name(p, "store<int>", nullptr, &size_slot);
       }},
  };
  for (const ProgramCall& pc : program_calls) {
    auto fn = pc.fn;
    const std::string call = pc.id;
    def(call + ".null_program", [fn](CaseContext&) -> cuabi_status { return fn(nullptr); });
    def(call + ".released_program",
        [fn, &f](CaseContext&) -> cuabi_status { return fn(f.released); });
    def(call + ".stale_program_slot_reused_by_a_live_one",
        [fn, &f](CaseContext& ctx) -> cuabi_status {
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
  def("device_get_name.program_handle_as_a_device", [pv](CaseContext&) -> cuabi_status {
    return cuabi_device_get_name(AsHandle<cuabi_device>(pv), nullptr, &size_slot);
  });
  def("module_get_function.program_handle_as_a_module", [pv](CaseContext& ctx) -> cuabi_status {
    cuabi_function out = AsHandle<cuabi_function>(0x5a5a);
    cuabi_status st = cuabi_module_get_function(AsHandle<cuabi_module>(pv), "tiny", &out);
    if (HandleValue(out) != 0x5a5a) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("function_get_name.program_handle_as_a_function", [pv](CaseContext&) -> cuabi_status {
    return cuabi_function_get_name(AsHandle<cuabi_function>(pv), nullptr, &size_slot);
  });
  def("buffer_get_size.program_handle_as_a_buffer", [pv](CaseContext& ctx) -> cuabi_status {
    size_t bytes = 777;
    cuabi_status st = cuabi_buffer_get_size(AsHandle<cuabi_buffer>(pv), &bytes);
    if (bytes != 777) ctx.Problem("bytes was written although the call failed");
    return st;
  });
  def("host_buffer_get_size.program_handle_as_a_host_buffer", [pv](CaseContext&) -> cuabi_status {
    size_t bytes = 0;
    return cuabi_host_buffer_get_size(AsHandle<cuabi_host_buffer>(pv), &bytes);
  });
  def("stream_synchronize.program_handle_as_a_stream", [pv](CaseContext&) -> cuabi_status {
    return cuabi_stream_synchronize(AsHandle<cuabi_stream>(pv));
  });
  def("event_query.program_handle_as_an_event",
      [pv](CaseContext&) -> cuabi_status { return cuabi_event_query(AsHandle<cuabi_event>(pv)); });
  def("graph_get_node_count.program_handle_as_a_graph", [pv](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_graph_get_node_count(AsHandle<cuabi_graph>(pv), &n);
  });
  def("graph_exec_launch.program_handle_as_a_graph_exec", [pv](CaseContext&) -> cuabi_status {
    return cuabi_graph_exec_launch(AsHandle<cuabi_graph_exec>(pv), nullptr);
  });
  def("function_launch_packed.program_handle_as_the_launch_s_function",
      [pv](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
        return cuabi_function_launch_packed(AsHandle<cuabi_function>(pv), &c, nullptr, nullptr, 0);
      });
  def("module_compile.program_handle_as_the_compile_s_device", [pv](CaseContext&) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kTiny;
    cuabi_module m = nullptr;
    return cuabi_module_compile(AsHandle<cuabi_device>(pv), &d, &m);
  });
  def("module_get_function.program_handle_with_its_kind_bits_forged_to_a_module",
      [pv](CaseContext&) -> cuabi_status {
        cuabi_function out = nullptr;
        return cuabi_module_get_function(AsHandle<cuabi_module>(WithKind(pv, 3)), "tiny", &out);
      });

  // --- NULL handles of every other kind -------------------------------------
  def("device_get_ordinal.null_device", [](CaseContext&) -> cuabi_status {
    int32_t o = 0;
    return cuabi_device_get_ordinal(nullptr, &o);
  });
  def("device_reset.null_device",
      [](CaseContext&) -> cuabi_status { return cuabi_device_reset(nullptr); });
  // --- Batches ----------------------------------------------------------------
  def("stream_mem_op_batch.null_stream", [](CaseContext&) -> cuabi_status {
    const cuabi_mem_op op = CUABI_MEM_OP_INIT;
    return cuabi_stream_mem_op_batch(nullptr, &op, 1);
  });
  def("stream_copy_batch.null_stream", [](CaseContext&) -> cuabi_status {
    const cuabi_copy_op op = CUABI_COPY_OP_INIT;
    return cuabi_stream_copy_batch(nullptr, &op, 1, 0);
  });
  def("stream_copy_3d_batch.null_stream", [](CaseContext&) -> cuabi_status {
    const cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
    return cuabi_stream_copy_3d_batch(nullptr, &d, 1, 0);
  });
  def("stream_prefetch_batch.null_stream", [](CaseContext&) -> cuabi_status {
    const cuabi_managed_range r = CUABI_MANAGED_RANGE_INIT;
    return cuabi_stream_prefetch_batch(nullptr, &r, 1, 0);
  });
  def("stream_discard_batch.null_stream", [](CaseContext&) -> cuabi_status {
    const cuabi_managed_range r = CUABI_MANAGED_RANGE_INIT;
    return cuabi_stream_discard_batch(nullptr, &r, 1);
  });
  def("stream_discard_and_prefetch_batch.null_stream", [](CaseContext&) -> cuabi_status {
    const cuabi_managed_range r = CUABI_MANAGED_RANGE_INIT;
    return cuabi_stream_discard_and_prefetch_batch(nullptr, &r, 1, 0);
  });
  def("mem_op_init.struct_size_too_small", [](CaseContext&) -> cuabi_status {
    cuabi_mem_op op;
    return cuabi_mem_op_init(&op, 4);
  });
  def("copy_op_init.null_op",
      [](CaseContext&) -> cuabi_status { return cuabi_copy_op_init(nullptr, sizeof(cuabi_copy_op)); });
  def("stream_write_value.null_stream", [](CaseContext&) -> cuabi_status {
    return cuabi_stream_write_value(nullptr, nullptr, 0, 1, 4, 0);
  });
  def("stream_wait_value_host.null_stream", [](CaseContext&) -> cuabi_status {
    return cuabi_stream_wait_value_host(nullptr, nullptr, 0, 1, 4, CUABI_WAIT_GEQ, 0);
  });
  def("device_get_limit.null_device", [](CaseContext&) -> cuabi_status {
    size_t v = 0;
    return cuabi_device_get_limit(nullptr, CUABI_LIMIT_STACK_SIZE, &v);
  });
  def("device_set_limit.null_device", [](CaseContext&) -> cuabi_status {
    return cuabi_device_set_limit(nullptr, CUABI_LIMIT_STACK_SIZE, 4096);
  });
  def("device_reset_persisting_l2.null_device",
      [](CaseContext&) -> cuabi_status { return cuabi_device_reset_persisting_l2(nullptr); });
  def("buffer_alloc.null_device", [](CaseContext&) -> cuabi_status {
    cuabi_buffer b = nullptr;
    return cuabi_buffer_alloc(nullptr, 16, &b);
  });
  def("module_load_data.null_device", [](CaseContext&) -> cuabi_status {
    cuabi_module m = nullptr;
    return cuabi_module_load_data(nullptr, "x", 1, &m);
  });
  def("module_get_function.null_module", [](CaseContext&) -> cuabi_status {
    cuabi_function fn = nullptr;
    return cuabi_module_get_function(nullptr, "tiny", &fn);
  });
  def("function_get_param_count.null_function", [](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_function_get_param_count(nullptr, &n);
  });
  def("function_launch.null_function", [](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    return cuabi_function_launch(nullptr, &c, nullptr, nullptr, 0);
  });
  def("buffer_get_pointer.null_buffer", [](CaseContext&) -> cuabi_status {
    uint64_t p = 0;
    return cuabi_buffer_get_pointer(nullptr, &p);
  });
  def("buffer_copy.null_destination_buffer",
      [](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(nullptr, 0, nullptr, 0, 4); });
  def("buffer_copy_to_host.null_source_buffer", [](CaseContext&) -> cuabi_status {
    char b[4];
    return cuabi_buffer_copy_to_host(nullptr, 0, b, 4);
  });
  def("host_buffer_get_pointer.null_host_buffer", [](CaseContext&) -> cuabi_status {
    void* p = nullptr;
    return cuabi_host_buffer_get_pointer(nullptr, &p);
  });
  def("stream_query.null_stream",
      [](CaseContext&) -> cuabi_status { return cuabi_stream_query(nullptr); });
  def("stream_wait_event.null_stream",
      [](CaseContext&) -> cuabi_status { return cuabi_stream_wait_event(nullptr, nullptr); });
  def("event_synchronize.null_event",
      [](CaseContext&) -> cuabi_status { return cuabi_event_synchronize(nullptr); });
  def("event_get_elapsed_ms.null_start_event", [](CaseContext&) -> cuabi_status {
    float ms = 0;
    return cuabi_event_get_elapsed_ms(nullptr, nullptr, &ms);
  });
  def("graph_instantiate.null_graph", [](CaseContext&) -> cuabi_status {
    cuabi_graph_exec e = nullptr;
    return cuabi_graph_instantiate(nullptr, &e);
  });
  def("launch_plan_get_args.null_plan", [](CaseContext& ctx) -> cuabi_status {
    void* args = &size_slot;
    size_t n = 77;
    cuabi_status st = cuabi_launch_plan_get_args(nullptr, &args, &n);
    if (args != &size_slot || n != 77) ctx.Problem("out-parameters written on failure");
    return st;
  });
  def("launch_plan_launch.null_plan",
      [](CaseContext&) -> cuabi_status { return cuabi_launch_plan_launch(nullptr); });
  def("launch_plan_launch.program_handle_as_a_plan", [pv](CaseContext&) -> cuabi_status {
    return cuabi_launch_plan_launch(AsHandle<cuabi_launch_plan>(pv));
  });
  def("launch_plan_get_args.made_up_plan", [](CaseContext&) -> cuabi_status {
    void* args = nullptr;
    size_t n = 0;
    return cuabi_launch_plan_get_args(AsHandle<cuabi_launch_plan>((1ull << 32) | (11ull << 24)),
                                      &args, &n);
  });
  def("launch_plan_create.plan_of_a_null_function", [](CaseContext& ctx) -> cuabi_status {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    cuabi_launch_plan out = AsHandle<cuabi_launch_plan>(0x31);
    cuabi_status st = cuabi_launch_plan_create(nullptr, &c, nullptr, &out);
    if (HandleValue(out) != 0x31) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("launch_plan_create.plan_of_a_program_handle", [pv](CaseContext&) -> cuabi_status {
    cuabi_launch_plan out = nullptr;
    return cuabi_launch_plan_create(AsHandle<cuabi_function>(pv), nullptr, nullptr, &out);
  });
  def("graph_exec_launch.null_graph_exec",
      [](CaseContext&) -> cuabi_status { return cuabi_graph_exec_launch(nullptr, nullptr); });

  // --- Made-up handle values -------------------------------------------------
  struct Fake {
    const char* id;
    uint64_t value;
  };
  const std::vector<Fake> fakes = {
      {"the_value_1", 1},
      {"0xdeadbeef", 0xdeadbeefull},
      {"all_bits_set", ~0ull},
      {"generation_0_with_the_program_kind", 2ull << 24},
      {"a_never_used_slot_index", (1ull << 32) | (2ull << 24) | 0xFFFFFEull},
      {"a_live_handle_s_generation_plus_one", pv + (1ull << 32)},
      {"a_host_pointer", static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&size_slot))},
  };
  for (const Fake& fk : fakes) {
    const uint64_t v = fk.value;
    def(std::string("program_get_log.made_up_program_handle_") + fk.id,
        [v](CaseContext&) -> cuabi_status {
          return cuabi_program_get_log(AsHandle<cuabi_program>(v), nullptr, &size_slot);
        });
  }

  // --- Release: twice, wrong kind, NULL, made up -----------------------------
  def("program_get_log.program_released_twice_then_used", [](CaseContext& ctx) -> cuabi_status {
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
  def("program_get_log.a_live_program_released_through_every_other_kind_s_release",
      [pv](CaseContext& ctx) -> cuabi_status {
        ReleaseAsEveryKind(pv, "program");
        // The same slot and generation with forged kind bits.
        for (uint64_t k = 1; k <= kKindCount; ++k)
          if (std::strcmp(kKindNames[k - 1], "program") != 0)
            cuabi_module_release(AsHandle<cuabi_module>(WithKind(pv, k)));
        cuabi_status st = cuabi_program_get_log(AsHandle<cuabi_program>(pv), nullptr, &size_slot);
        if (st != CUABI_SUCCESS) ctx.Problem("the program died: " + LastError());
        return st;
      });
  def("every_release.null_to_every_release_last_error_untouched",
      [](CaseContext& ctx) -> cuabi_status {
        cuabi_program_get_log(nullptr, nullptr, nullptr);  // plant an error
        const std::string before = cuabi_last_error_message();
        ReleaseAsEveryKind(0);
        if (before != cuabi_last_error_message()) ctx.Problem("a release changed the last error");
        return CUABI_SUCCESS;
      });
  def("every_release.made_up_values_to_every_release", [&f](CaseContext& ctx) -> cuabi_status {
    const uint64_t values[] = {1,
                               0xdeadbeefull,
                               ~0ull,
                               (1ull << 32) | (2ull << 24) | 77,
                               HandleValue(f.released),
                               HandleValue(f.stale)};
    for (uint64_t v : values) ReleaseAsEveryKind(v);
    // The stale value's slot belongs to a live program now: still alive.
    if (cuabi_program_get_log(f.reuser, nullptr, &size_slot) != CUABI_SUCCESS)
      ctx.Problem("releasing a stale value released the live program in its slot");
    return CUABI_SUCCESS;
  });

  // --- Program creation ------------------------------------------------------
  def("program_create.source_is_null", [](CaseContext& ctx) -> cuabi_status {
    cuabi_program p = AsHandle<cuabi_program>(0x77);
    cuabi_status st = cuabi_program_create(nullptr, nullptr, 0, nullptr, nullptr, &p);
    if (HandleValue(p) != 0x77) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("program_create.out_is_null", [](CaseContext&) -> cuabi_status {
    return cuabi_program_create(kTiny, nullptr, 0, nullptr, nullptr, nullptr);
  });
  def("program_create.headers_counted_but_arrays_null", [](CaseContext&) -> cuabi_status {
    cuabi_program p = nullptr;
    return cuabi_program_create(kTiny, nullptr, 2, nullptr, nullptr, &p);
  });
  def("program_create.a_header_s_name_is_null", [](CaseContext&) -> cuabi_status {
    const char* src[] = {"int a;", "int b;"};
    const char* names[] = {"a.h", nullptr};
    cuabi_program p = nullptr;
    return cuabi_program_create(kTiny, nullptr, 2, src, names, &p);
  });
  def("program_create.num_headers_is_size_max", [](CaseContext&) -> cuabi_status {
    // Arrays long enough that no read goes past them whatever the order
    // of the checks; the count must be refused as implausible.
    static std::vector<const char*> src(5000, "int a;");
    static std::vector<const char*> names(5000, "a.h");
    src.back() = nullptr;
    names.back() = nullptr;
    cuabi_program p = nullptr;
    cuabi_status st =
        cuabi_program_create(kTiny, nullptr, static_cast<size_t>(-1), src.data(), names.data(), &p);
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
  def("program_compile.options_null_with_a_count",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        return cuabi_program_compile(p, 2, nullptr);
      });
  def("program_compile.an_option_is_null", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx));
    const char* o[] = {kSm, nullptr};
    return cuabi_program_compile(p, 2, o);
  });
  def("program_compile.num_options_is_size_max", [fresh_program](CaseContext& ctx) -> cuabi_status {
    static std::vector<const char*> opts(5000, "-w");
    opts.back() = nullptr;
    Program p(fresh_program(ctx));
    return cuabi_program_compile(p, static_cast<size_t>(-1), opts.data());
  });
  def("program_compile.an_empty_option", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx));
    const char* o[] = {""};
    return cuabi_program_compile(p, 1, o);
  });
  def("program_compile.an_option_of_100_kib", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx));
    static const std::string huge = "-D" + std::string(100 * 1024, 'X');
    const char* o[] = {"-w", huge.c_str()};
    return cuabi_program_compile(p, 2, o);
  });
  // --- Compile with typed options (cuabi_program_compile_with) ----------------
  // The wrong values are the cases' "compile_options" data, which every
  // binding runs through its own typed options too.
  auto compile_with = [fresh_program](CaseContext& ctx, const cuabi_compile_desc& d) {
    Program p(fresh_program(ctx));
    return cuabi_program_compile_with(p, &d);
  };
  auto with_defines = [compile_with](CaseContext& ctx, std::vector<const char*> defines) {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.arch = "compute_90";
    d.defines = defines.data();
    d.num_defines = defines.size();
    return compile_with(ctx, d);
  };
  const std::pair<const char*, std::vector<const char*>> define_cases[] = {
      {"a_define_starting_with_a_digit", {"OK", "2X=1"}},
      {"a_define_holding_whitespace", {"A B"}},
      {"a_define_of_a_character_no_name_holds", {"A-B=1"}},
      {"an_empty_define", {""}},
      {"a_define_without_a_name", {"=1"}},
      {"a_function_like_define_with_a_space_in_its_parameters", {"F(a, b)=a"}},
      {"a_function_like_define_repeating_a_parameter", {"F(a,a)=a"}},
      {"a_function_like_define_with_dots_before_a_parameter", {"F(...,a)=a"}},
      {"a_define_value_of_two_lines", {"N=1\n#define M 2"}},
      {"function_like_and_variadic_defines",
       {"F(a,b)=((a)+(b))", "V(...)=__VA_ARGS__", "E()=0", "N"}},
  };
  for (const auto& [what, defines] : define_cases)
    def(std::string("program_compile_with.") + what,
        [with_defines, defines = defines](CaseContext& ctx) -> cuabi_status {
          return with_defines(ctx, defines);
        });
  def("program_compile_with.an_unknown_cxx_standard",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.cxx_standard = static_cast<cuabi_cxx_standard>(18);
        return compile_with(ctx, d);
      });
  def("program_compile_with.a_malformed_architecture",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.arch = "sm9";
        return compile_with(ctx, d);
      });
  def("program_compile_with.an_architecture_named_twice",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        const char* raw[] = {"-arch=sm_80"};
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.arch = "sm_90";
        d.options = raw;
        d.num_options = 1;
        return compile_with(ctx, d);
      });
  def("program_compile_with.an_empty_include_path",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        const char* paths[] = {"/usr/include", ""};
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.include_paths = paths;
        d.num_include_paths = 2;
        return compile_with(ctx, d);
      });
  def("program_compile_with.fast_math_of_2", [compile_with](CaseContext& ctx) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.fast_math = 2;
    return compile_with(ctx, d);
  });
  def("program_compile_with.device_debug_of_minus_1",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.device_debug = -1;
        return compile_with(ctx, d);
      });
  def("program_compile_with.defines_null_with_a_count",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.num_defines = 2;
        return compile_with(ctx, d);
      });
  def("program_compile_with.the_program_s_source_in_the_description",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kTiny;
        return compile_with(ctx, d);
      });
  def("program_compile_with.a_null_description", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx));
    return cuabi_program_compile_with(p, nullptr);
  });
  def("program_compile_with.a_description_between_two_versions",
      [compile_with](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.struct_size = 100;
        return compile_with(ctx, d);
      });
  def("program_compile_with.a_description_of_the_first_version",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        // A 0.1 caller's 88 bytes, followed by bytes that are no fields of it.
        struct {
          cuabi_compile_desc d;
          unsigned char after[64];
        } old;
        std::memset(&old, 0xA5, sizeof(old));
        const char* raw[] = {kCompute};
        old.d.struct_size = 88;
        old.d.source = nullptr;
        old.d.name = nullptr;
        old.d.options = raw;
        old.d.num_options = 1;
        old.d.header_sources = nullptr;
        old.d.header_names = nullptr;
        old.d.num_headers = 0;
        old.d.name_expressions = nullptr;
        old.d.num_name_expressions = 0;
        old.d.output = CUABI_OUTPUT_CUBIN;
        old.d.flags = 0;
        Program p(fresh_program(ctx));
        return cuabi_program_compile_with(p, &old.d);
      });
  def("program_create.a_header_s_source_is_null", [](CaseContext&) -> cuabi_status {
    const char* src[] = {nullptr};
    const char* names[] = {"a.h"};
    cuabi_program p = nullptr;
    return cuabi_program_create(kTiny, nullptr, 1, src, names, &p);
  });
  def("program_compile.compiled_twice", [live](CaseContext&) -> cuabi_status {
    const char* o[] = {kSm};
    return cuabi_program_compile(live, 1, o);
  });
  def("program_compile.an_unknown_option", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx));
    const char* o[] = {"--no-such-option"};
    cuabi_status st = cuabi_program_compile(p, 1, o);
    if (!Contains(ProgramLog(p), "--no-such-option"))
      ctx.Problem("the program's log does not name the option");
    return st;
  });
  def("program_compile.an_architecture_that_does_not_exist",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--gpu-architecture=sm_1"};
        return cuabi_program_compile(p, 1, o);
      });
  def("program_compile.an_option_missing_its_value",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--gpu-architecture"};
        return cuabi_program_compile(p, 1, o);
      });
  def("program_compile.a_syntax_error", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx, "extern \"C\" __global__ void k( {"));
    cuabi_status st = cuabi_program_compile(p, 0, nullptr);
    if (!Contains(LastErrorLog(), "error")) ctx.Problem("cuabi_last_error_log has no error");
    return st;
  });
  def("program_compile.an_undefined_identifier", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(
        ctx, "extern \"C\" __global__ void k(int* x) { *x = undefined_identifier_xyz; }"));
    return cuabi_program_compile(p, 0, nullptr);
  });
  def("program_compile.a_missing_include", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx, "#include \"missing_header.h\"\n"));
    return cuabi_program_compile(p, 0, nullptr);
  });
  def("program_compile.an_error_directive", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx, "#error custom failure marker\n"));
    return cuabi_program_compile(p, 0, nullptr);
  });
  def("program_compile.an_error_inside_a_given_header", [](CaseContext& ctx) -> cuabi_status {
    const char* src[] = {"int broken(;\n"};
    const char* names[] = {"bad_header.h"};
    Program p;
    if (cuabi_program_create("#include \"bad_header.h\"\n", nullptr, 1, src, names, p.out()) !=
        CUABI_SUCCESS)
      ctx.Problem("create: " + LastError());
    return cuabi_program_compile(p, 0, nullptr);
  });
  def("program_compile.a_name_expression_naming_nothing",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        cuabi_program_add_name_expression(p, "no_such_template<int>");
        return cuabi_program_compile(p, 0, nullptr);
      });
  def("program_compile.an_empty_source", [fresh_program](CaseContext& ctx) -> cuabi_status {
    Program p(fresh_program(ctx, ""));
    return cuabi_program_compile(p, 0, nullptr);
  });

  // --- Name expressions and lowered names ------------------------------------
  def("program_add_name_expression.expression_is_null",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        return cuabi_program_add_name_expression(p, nullptr);
      });
  def("program_add_name_expression.expression_is_empty",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        return cuabi_program_add_name_expression(p, "");
      });
  def("program_add_name_expression.expression_added_after_compiling",
      [live](CaseContext&) -> cuabi_status {
        return cuabi_program_add_name_expression(live, "store<float>");
      });
  def("program_get_lowered_name.lowered_name_of_an_expression_never_added",
      [live](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_lowered_name(live, "store<double>", nullptr, &n);
      });
  def("program_get_lowered_name.lowered_name_of_a_null_expression",
      [live](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_lowered_name(live, nullptr, nullptr, &n);
      });
  def("program_get_lowered_name.lowered_name_into_a_1_byte_buffer",
      [live](CaseContext& ctx) -> cuabi_status {
        char b[1] = {'#'};
        size_t n = 1;
        cuabi_status st = cuabi_program_get_lowered_name(live, "store<int>", b, &n);
        if (b[0] != '#') ctx.Problem("a too-small buffer was written");
        if (n <= 1) ctx.Problem("*size does not hold the size needed");
        return st;
      });

  // --- Outputs and two-call sizes ---------------------------------------------
  def("program_get_log.log_with_size_null", [live](CaseContext&) -> cuabi_status {
    return cuabi_program_get_log(live, nullptr, nullptr);
  });
  def("program_get_ptx.ptx_with_size_null", [live](CaseContext&) -> cuabi_status {
    return cuabi_program_get_ptx(live, nullptr, nullptr);
  });
  def("program_get_ptx.ptx_into_a_0_byte_buffer", [live](CaseContext& ctx) -> cuabi_status {
    char buf[4] = {'#'};
    size_t n = 0;
    cuabi_status st = cuabi_program_get_ptx(live, buf, &n);
    if (buf[0] != '#') ctx.Problem("a too-small buffer was written");
    return st;
  });
  def("program_get_ptx.ptx_before_compiling", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_program_get_ptx(f.fresh, nullptr, &n);
  });
  def("program_get_cubin.cubin_after_a_failed_compile", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_program_get_cubin(f.failed, nullptr, &n);
  });
  def("program_get_cubin.cubin_of_a_compute_xy_compile", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_program_get_cubin(f.ptx_only, nullptr, &n);
  });
  def("last_error_log.last_error_log_with_size_null",
      [](CaseContext&) -> cuabi_status { return cuabi_last_error_log(nullptr, nullptr); });
  def("nvrtc_get_version.nvrtc_version_into_null", [](CaseContext&) -> cuabi_status {
    int32_t minor = 0;
    return cuabi_nvrtc_get_version(nullptr, &minor);
  });
  def("nvrtc_get_path.nvrtc_path_with_size_null",
      [](CaseContext&) -> cuabi_status { return cuabi_nvrtc_get_path(nullptr, nullptr); });
  def("driver_get_version.driver_version_into_null",
      [](CaseContext&) -> cuabi_status { return cuabi_driver_get_version(nullptr); });
  def("device_get_count.device_count_into_null",
      [](CaseContext&) -> cuabi_status { return cuabi_device_get_count(nullptr); });
  def("device_get.device_into_null",
      [](CaseContext&) -> cuabi_status { return cuabi_device_get(0, nullptr); });

  // --- Strings that are not UTF-8 ---------------------------------------------
  def("program_compile.invalid_utf_8_inside_a_comment",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "// \xff\xfe\xc0\xaf comment\n__device__ int x;\n"));
        return cuabi_program_compile(p, 0, nullptr);
      });
  def("program_compile.invalid_utf_8_inside_an_identifier",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "__global__ void k\xff\xfe(int* x) { *x = 1; }\n"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  def("program_compile.invalid_utf_8_inside_a_string_literal",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(
            ctx, "__global__ void k(char* x) { const char* s = \"\xff\xfe\"; *x = s[0]; }\n"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  def("program_compile.a_source_of_nothing_but_invalid_bytes_nvrtc_skips_them",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "\xff\xfe\xfd\x80\x81\xc0\xc1\xf5\xf8\xfc"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  def("program_compile.a_surrogate_cesu_and_an_overlong_nul_in_an_error",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, "#error bad \xed\xa0\x80 and \xc0\x80 here\n"));
        cuabi_status st = cuabi_program_compile(p, 0, nullptr);
        if (!IsUtf8(ProgramLog(p))) ctx.Problem("the compile log is not UTF-8");
        return st;
      });
  def("program_compile.invalid_utf_8_in_a_header_s_content_a_comment",
      [](CaseContext& ctx) -> cuabi_status {
        const char* src[] = {"// \xff\xfe\n__device__ int from_header;\n"};
        const char* names[] = {"h.cuh"};
        Program p;
        if (cuabi_program_create("#include \"h.cuh\"\n", nullptr, 1, src, names, p.out()) !=
            CUABI_SUCCESS)
          ctx.Problem("create: " + LastError());
        return cuabi_program_compile(p, 0, nullptr);
      });
  def("program_compile.valid_non_ascii_utf_8_in_a_comment_and_a_name",
      [](CaseContext& ctx) -> cuabi_status {
        Program p;
        if (cuabi_program_create(
                "// caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n__device__ int y;\n",
                "k\xc3\xa9rnel.cu", 0, nullptr, nullptr, p.out()) != CUABI_SUCCESS)
          ctx.Problem("create: " + LastError());
        return cuabi_program_compile(p, 0, nullptr);
      });
  def("program_create.a_program_name_that_is_not_utf_8", [](CaseContext& ctx) -> cuabi_status {
    cuabi_program p = nullptr;
    cuabi_status st = cuabi_program_create("int x", "bad\xff\xfename.cu", 0, nullptr, nullptr, &p);
    if (st == CUABI_SUCCESS) {
      // Accepted: the name then reaches NVRTC's log and from there the message.
      st = cuabi_program_compile(p, 0, nullptr);
      if (!IsUtf8(cuabi_last_error_message()))
        ctx.Problem("accepted by create; the compile's message then is not UTF-8");
      cuabi_program_release(p);
    }
    return st;
  });
  def("program_create.a_header_name_that_is_not_utf_8", [](CaseContext& ctx) -> cuabi_status {
    const char* src[] = {"int broken(;\n"};
    const char* names[] = {"bad\xff.h"};
    cuabi_program p = nullptr;
    cuabi_status st = cuabi_program_create("#include \"bad\xff.h\"\n", nullptr, 1, src, names, &p);
    if (st == CUABI_SUCCESS) {
      st = cuabi_program_compile(p, 0, nullptr);
      if (!IsUtf8(cuabi_last_error_message()))
        ctx.Problem("accepted by create; the compile's message then is not UTF-8");
      cuabi_program_release(p);
    }
    return st;
  });
  def("program_compile.an_option_that_is_not_utf_8",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"-D\xff\xfe=1"};
        return cuabi_program_compile(p, 1, o);
      });
  def("program_compile.an_architecture_value_that_is_not_utf_8",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx));
        const char* o[] = {"--gpu-architecture=sm_\xff"};
        return cuabi_program_compile(p, 1, o);
      });
  def("program_add_name_expression.a_name_expression_that_is_not_utf_8",
      [fresh_program](CaseContext& ctx) -> cuabi_status {
        Program p(fresh_program(ctx, kTemplate));
        return cuabi_program_add_name_expression(p, "store<\xff>");
      });
  def("program_get_lowered_name.a_lowered_name_query_that_is_not_utf_8",
      [live](CaseContext&) -> cuabi_status {
        size_t n = 0;
        return cuabi_program_get_lowered_name(live, "store<\xc0\x80>", nullptr, &n);
      });
  def("module_get_function.a_kernel_name_that_is_not_utf_8_module_handle_checked_first",
      [](CaseContext&) -> cuabi_status {
        cuabi_function fn = nullptr;
        return cuabi_module_get_function(nullptr, "k\xff", &fn);
      });
  def("module_load_file.a_module_path_that_is_not_utf_8_device_handle_checked_first",
      [](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        return cuabi_module_load_file(nullptr, "/tmp/\xff.cubin", &m);
      });

  // --- Launch validation without a live function ------------------------------
  def("function_launch_sized.sized_launch_on_a_made_up_function", [](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    float a = 1;
    void* params[] = {&a};
    size_t sizes[] = {sizeof(a)};
    return cuabi_function_launch_sized(AsHandle<cuabi_function>((1ull << 32) | (4ull << 24) | 3),
                                       &c, nullptr, params, sizes, 1);
  });
  def("function_launch.launch_with_every_pointer_null", [](CaseContext&) -> cuabi_status {
    return cuabi_function_launch(nullptr, nullptr, nullptr, nullptr, 5);
  });
  def("function_launch_packed.packed_launch_null_config_and_args_on_a_made_up_function",
      [](CaseContext&) -> cuabi_status {
        return cuabi_function_launch_packed(AsHandle<cuabi_function>(0xdeadbeef), nullptr, nullptr,
                                            nullptr, static_cast<size_t>(-1));
      });
  def("module_compile.compile_into_a_null_device_with_a_null_desc",
      [](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        return cuabi_module_compile(nullptr, nullptr, &m);
      });

  // --- The one-call layout and the signature checks without a live function --
  def("function_get_params.null_function", [](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_function_get_params(nullptr, nullptr, &n, nullptr);
  });
  def("function_check_arg_sizes.null_function", [](CaseContext&) -> cuabi_status {
    const size_t sizes[] = {4};
    return cuabi_function_check_arg_sizes(nullptr, sizes, 1);
  });
  def("function_check_arg_size.program_handle_as_the_function", [pv](CaseContext&) -> cuabi_status {
    return cuabi_function_check_arg_size(AsHandle<cuabi_function>(pv), 0, 4);
  });

  // --- Struct initialisers: NULL, too small, from a newer header ---------------
  // A struct from a newer header: this library's fields, then more.
  struct NewerConfig {
    cuabi_launch_config c;
    uint64_t future[3];
  };
  struct NewerDesc {
    cuabi_compile_desc d;
    uint64_t future[3];
  };
  // The fields CUABI_LAUNCH_CONFIG_INIT gives, compared one by one (padding
  // is no field).
  auto config_defaults = [](const cuabi_launch_config& c, size_t size) {
    return c.struct_size == size && c.grid_x == 1 && c.grid_y == 1 && c.grid_z == 1 &&
           c.block_x == 1 && c.block_y == 1 && c.block_z == 1 && c.shared_mem_bytes == 0;
  };
  auto desc_defaults = [](const cuabi_compile_desc& d, size_t size) {
    return d.struct_size == size && !d.source && !d.name && !d.options && d.num_options == 0 &&
           !d.header_sources && !d.header_names && d.num_headers == 0 && !d.name_expressions &&
           d.num_name_expressions == 0 && d.output == CUABI_OUTPUT_CUBIN && d.flags == 0;
  };
  def("launch_config_init.config_null", [](CaseContext&) -> cuabi_status {
    return cuabi_launch_config_init(nullptr, sizeof(cuabi_launch_config));
  });
  def("launch_config_init.struct_size_smaller_than_this_library_s",
      [](CaseContext& ctx) -> cuabi_status {
        NewerConfig big;
        std::memset(&big, 0xA5, sizeof(big));
        cuabi_status st = cuabi_launch_config_init(&big.c, 8);
        const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&big);
        for (size_t i = 0; i < sizeof(big); ++i)
          if (bytes[i] != 0xA5) {
            ctx.Problem("the struct was written although the call failed");
            break;
          }
        return st;
      });
  def("launch_config_init.struct_size_implausibly_large", [](CaseContext&) -> cuabi_status {
    static unsigned char room[16384];
    return cuabi_launch_config_init(reinterpret_cast<cuabi_launch_config*>(room), sizeof(room));
  });
  def("launch_config_init.exact_size_gives_the_init_macro_s_fields",
      [config_defaults](CaseContext& ctx) -> cuabi_status {
        cuabi_launch_config c;
        std::memset(&c, 0xA5, sizeof(c));
        cuabi_status st = cuabi_launch_config_init(&c, sizeof(c));
        if (!config_defaults(c, sizeof(c))) ctx.Problem("a field differs from the _INIT macro's");
        return st;
      });
  def("launch_config_init.a_larger_struct_gets_zeros_past_the_known_fields",
      [config_defaults](CaseContext& ctx) -> cuabi_status {
        NewerConfig big;
        std::memset(&big, 0xA5, sizeof(big));
        cuabi_status st = cuabi_launch_config_init(&big.c, sizeof(big));
        if (!config_defaults(big.c, sizeof(big)))
          ctx.Problem(
              "a known field differs from the _INIT macro's, or struct_size is not the "
              "size given");
        if (big.future[0] || big.future[1] || big.future[2])
          ctx.Problem("the tail past the known fields is not zero");
        return st;
      });
  def("compile_desc_init.desc_null", [](CaseContext&) -> cuabi_status {
    return cuabi_compile_desc_init(nullptr, sizeof(cuabi_compile_desc));
  });
  def("compile_desc_init.struct_size_smaller_than_this_library_s",
      [](CaseContext& ctx) -> cuabi_status {
        NewerDesc big;
        std::memset(&big, 0xA5, sizeof(big));
        cuabi_status st = cuabi_compile_desc_init(&big.d, sizeof(size_t) * 2);
        const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&big);
        for (size_t i = 0; i < sizeof(big); ++i)
          if (bytes[i] != 0xA5) {
            ctx.Problem("the struct was written although the call failed");
            break;
          }
        return st;
      });
  def("compile_desc_init.struct_size_implausibly_large", [](CaseContext&) -> cuabi_status {
    static unsigned char room[16384];
    return cuabi_compile_desc_init(reinterpret_cast<cuabi_compile_desc*>(room), sizeof(room));
  });
  def("compile_desc_init.a_larger_struct_gets_zeros_past_the_known_fields",
      [desc_defaults](CaseContext& ctx) -> cuabi_status {
        NewerDesc big;
        std::memset(&big, 0xA5, sizeof(big));
        cuabi_status st = cuabi_compile_desc_init(&big.d, sizeof(big));
        if (!desc_defaults(big.d, sizeof(big)))
          ctx.Problem(
              "a known field differs from the _INIT macro's, or struct_size is not the "
              "size given");
        if (big.future[0] || big.future[1] || big.future[2])
          ctx.Problem("the tail past the known fields is not zero");
        return st;
      });

  // --- Host functions ---------------------------------------------------------
  def("stream_launch_host_func.null_stream", [](CaseContext&) -> cuabi_status {
    return cuabi_stream_launch_host_func(
        nullptr, [](void*, char*, size_t) -> int32_t { return 0; }, nullptr);
  });

  // --- Memory of every kind (pools, managed, IPC, peers, 3D copies, arrays) ---
  def("buffer_alloc_async.null_device", [](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_async(nullptr, 64, nullptr, nullptr, out.out());
  });
  def("buffer_free_async.null_buffer", [](CaseContext&) -> cuabi_status {
    return cuabi_buffer_free_async(nullptr, nullptr);
  });
  def("buffer_alloc_managed.null_device", [](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_managed(nullptr, 64, 0, out.out());
  });
  def("buffer_alloc_pitched.null_device", [](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_pitched(nullptr, 64, 4, 4, out.out());
  });
  def("memory_pool_create.null_device", [](CaseContext&) -> cuabi_status {
    cuabi_memory_pool p = nullptr; cuabi_status st = cuabi_memory_pool_create(nullptr, nullptr, &p); cuabi_memory_pool_release(p); return st;
  });
  def("memory_pool_desc_init.null_desc", [](CaseContext&) -> cuabi_status {
    return cuabi_memory_pool_desc_init(nullptr, sizeof(cuabi_memory_pool_desc));
  });
  def("memory_pool_desc_init.struct_size_too_small", [](CaseContext&) -> cuabi_status {
    cuabi_memory_pool_desc d; return cuabi_memory_pool_desc_init(&d, 8);
  });
  def("copy_3d_desc_init.struct_size_too_small", [](CaseContext&) -> cuabi_status {
    cuabi_copy_3d_desc d; return cuabi_copy_3d_desc_init(&d, 16);
  });
  def("array_desc_init.null_desc", [](CaseContext&) -> cuabi_status {
    return cuabi_array_desc_init(nullptr, sizeof(cuabi_array_desc));
  });
  def("texture_desc_init.struct_size_too_small", [](CaseContext&) -> cuabi_status {
    cuabi_texture_desc d; return cuabi_texture_desc_init(&d, 4);
  });
  def("copy_3d.null_desc", [](CaseContext&) -> cuabi_status {
    return cuabi_copy_3d(nullptr);
  });
  def("copy_3d.struct_size_zero", [](CaseContext&) -> cuabi_status {
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT; d.struct_size = 0; return cuabi_copy_3d(&d);
  });
  def("copy_3d.two_host_sides", [](CaseContext&) -> cuabi_status {
    static char h1[64], h2[64]; cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT; d.src_host = h1; d.dst_host = h2; d.width_bytes = 16; return cuabi_copy_3d(&d);
  });
  def("copy_3d_async.no_source", [](CaseContext&) -> cuabi_status {
    static char h[64]; cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT; d.dst_host = h; d.width_bytes = 16; return cuabi_copy_3d_async(&d, nullptr);
  });
  def("texture_create.null_desc", [](CaseContext&) -> cuabi_status {
    Texture t; return cuabi_texture_create(nullptr, t.out());
  });
  def("texture_create.no_memory", [](CaseContext&) -> cuabi_status {
    cuabi_texture_desc d = CUABI_TEXTURE_DESC_INIT; Texture t; return cuabi_texture_create(&d, t.out());
  });
  def("texture_create.released_array", [](CaseContext&) -> cuabi_status {
    cuabi_texture_desc d = CUABI_TEXTURE_DESC_INIT; d.array = AsHandle<cuabi_array>(0x0000000700000009ull); Texture t; return cuabi_texture_create(&d, t.out());
  });
  def("surface_create.null_array", [](CaseContext&) -> cuabi_status {
    Surface s; return cuabi_surface_create(nullptr, s.out());
  });
  def("buffer_open_ipc.null_device", [](CaseContext&) -> cuabi_status {
    unsigned char h[CUABI_IPC_HANDLE_SIZE] = {0}; Buffer out; return cuabi_buffer_open_ipc(nullptr, nullptr, h, sizeof h, out.out());
  });
  def("device_can_access_peer.null_peer", [](CaseContext&) -> cuabi_status {
    int32_t v = 0; return cuabi_device_can_access_peer(nullptr, nullptr, &v);
  });

  // --- Linking, libraries and kernel listings ---
  def("linker_create.null_device", [&f](CaseContext&) -> cuabi_status {
    Linker l; return cuabi_linker_create(nullptr, nullptr, l.out());
  });
  def("link_desc_init.struct_size_too_small", [&f](CaseContext&) -> cuabi_status {
    cuabi_link_desc d; return cuabi_link_desc_init(&d, 8);
  });
  def("library_load_data.null_image", [&f](CaseContext&) -> cuabi_status {
    Library l; return cuabi_library_load_data(nullptr, 16, l.out());
  });
  def("library_load_file.missing_file", [&f](CaseContext&) -> cuabi_status {
    Library l; return cuabi_library_load_file("/nonexistent/k.cubin", l.out());
  });
  def("library_get_module.null_library", [&f](CaseContext&) -> cuabi_status {
    Module m; return cuabi_library_get_module(nullptr, nullptr, m.out());
  });
  def("module_get_kernel_count.null_module", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0; return cuabi_module_get_kernel_count(nullptr, &n);
  });
  def("module_get_compile_log.null_module", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0; return cuabi_module_get_compile_log(nullptr, nullptr, &n);
  });
  def("program_get_lto_ir.compiled_without_dlto", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0; return cuabi_program_get_lto_ir(f.compiled, nullptr, &n);
  });
  def("program_get_lto_ir.never_compiled", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0; return cuabi_program_get_lto_ir(f.fresh, nullptr, &n);
  });
  def("linker_add_program.null_linker", [&f](CaseContext&) -> cuabi_status {
    return cuabi_linker_add_program(nullptr, f.compiled);
  });
  def("library_load_data.garbage_image", [](CaseContext&) -> cuabi_status {
    const char g[] = "not PTX, not CUBIN"; Library l; return cuabi_library_load_data(g, sizeof g, l.out());
  });
  // --- DLPack import: each refusal, before the driver is needed -----------
  // A valid one-dimensional float32 tensor of 16 elements, changed by `edit`;
  // a refusal must leave it the caller's (its deleter not run) and `out` alone.
  {
    static int64_t shape16[1] = {16};
    static int64_t neg_strides[1] = {-1};
    static int deleted = 0;
    struct Dl {
      static void CUABI_CALL count(cuabi_dlpack_managed_tensor_versioned*) { ++deleted; }
      static void CUABI_CALL count_unversioned(cuabi_dlpack_managed_tensor*) { ++deleted; }
    };
    auto versioned = [](std::function<void(cuabi_dlpack_managed_tensor_versioned&)> edit,
                        uint32_t flags) -> Body {
      return [edit, flags](CaseContext& c) -> cuabi_status {
        cuabi_dlpack_managed_tensor_versioned t{};
        t.version.major = CUABI_DLPACK_MAJOR_VERSION;
        t.version.minor = CUABI_DLPACK_MINOR_VERSION;
        t.deleter = &Dl::count;
        t.dl_tensor.data = reinterpret_cast<void*>(uintptr_t{0x100000});
        t.dl_tensor.device.device_type = CUABI_DLPACK_DEVICE_CUDA;
        t.dl_tensor.ndim = 1;
        t.dl_tensor.dtype.code = CUABI_DLPACK_FLOAT;
        t.dl_tensor.dtype.bits = 32;
        t.dl_tensor.dtype.lanes = 1;
        t.dl_tensor.shape = shape16;
        edit(t);
        deleted = 0;
        cuabi_buffer out = reinterpret_cast<cuabi_buffer>(uintptr_t{0x1234});
        const cuabi_status st = cuabi_buffer_import_dlpack(&t, flags, &out);
        if (st != CUABI_SUCCESS && deleted != 0) c.Problem("a refused tensor's deleter ran");
        if (st != CUABI_SUCCESS && out != reinterpret_cast<cuabi_buffer>(uintptr_t{0x1234}))
          c.Problem("out was written");
        return st;
      };
    };
    using T = cuabi_dlpack_managed_tensor_versioned;
    def("buffer_import_dlpack.null_tensor", [](CaseContext&) -> cuabi_status {
      cuabi_buffer out = nullptr;
      return cuabi_buffer_import_dlpack(nullptr, 0, &out);
    });
    def("buffer_import_dlpack.null_out", [](CaseContext&) -> cuabi_status {
      cuabi_dlpack_managed_tensor_versioned t{};
      return cuabi_buffer_import_dlpack(&t, 0, nullptr);
    });
    def("buffer_import_dlpack.unknown_flags", versioned([](T&) {}, 6));
    def("buffer_import_dlpack.major_version_0", versioned([](T& t) { t.version.major = 0; }, 0));
    def("buffer_import_dlpack.major_version_2", versioned([](T& t) { t.version.major = 2; }, 0));
    def("buffer_import_dlpack.read_only_without_flag",
        versioned([](T& t) { t.flags = CUABI_DLPACK_FLAG_READ_ONLY; }, 0));
    def("buffer_import_dlpack.subbyte_padded",
        versioned([](T& t) { t.flags = CUABI_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED; }, 0));
    def("buffer_import_dlpack.cpu_device",
        versioned([](T& t) { t.dl_tensor.device.device_type = 1; }, 0));
    def("buffer_import_dlpack.rocm_device",
        versioned([](T& t) { t.dl_tensor.device.device_type = 10; }, 0));
    def("buffer_import_dlpack.zero_bits", versioned([](T& t) { t.dl_tensor.dtype.bits = 0; }, 0));
    def("buffer_import_dlpack.zero_lanes", versioned([](T& t) { t.dl_tensor.dtype.lanes = 0; }, 0));
    def("buffer_import_dlpack.subbyte_bits", versioned([](T& t) { t.dl_tensor.dtype.bits = 4; }, 0));
    def("buffer_import_dlpack.unknown_type_code",
        versioned([](T& t) { t.dl_tensor.dtype.code = 200; }, 0));
    def("buffer_import_dlpack.negative_ndim", versioned([](T& t) { t.dl_tensor.ndim = -1; }, 0));
    def("buffer_import_dlpack.too_many_dims", versioned([](T& t) { t.dl_tensor.ndim = 65; }, 0));
    def("buffer_import_dlpack.null_shape", versioned([](T& t) { t.dl_tensor.shape = nullptr; }, 0));
    def("buffer_import_dlpack.negative_extent", versioned([](T& t) {
          static int64_t bad[1] = {-3};
          t.dl_tensor.shape = bad;
        }, 0));
    def("buffer_import_dlpack.no_elements", versioned([](T& t) {
          static int64_t none[1] = {0};
          t.dl_tensor.shape = none;
        }, 0));
    def("buffer_import_dlpack.negative_stride",
        versioned([](T& t) { t.dl_tensor.strides = neg_strides; }, 0));
    def("buffer_import_dlpack.null_data", versioned([](T& t) { t.dl_tensor.data = nullptr; }, 0));
    def("buffer_import_dlpack.negative_device_id",
        versioned([](T& t) { t.dl_tensor.device.device_id = -1; }, 0));
    def("buffer_import_dlpack_unversioned.cpu_device", [](CaseContext& c) -> cuabi_status {
      cuabi_dlpack_managed_tensor t{};
      t.deleter = &Dl::count_unversioned;
      t.dl_tensor.data = reinterpret_cast<void*>(uintptr_t{0x100000});
      t.dl_tensor.device.device_type = 1;
      t.dl_tensor.ndim = 1;
      t.dl_tensor.dtype.code = CUABI_DLPACK_FLOAT;
      t.dl_tensor.dtype.bits = 32;
      t.dl_tensor.dtype.lanes = 1;
      t.dl_tensor.shape = shape16;
      deleted = 0;
      cuabi_buffer out = nullptr;
      const cuabi_status st = cuabi_buffer_import_dlpack_unversioned(&t, 0, &out);
      if (deleted != 0) c.Problem("a refused tensor's deleter ran");
      return st;
    });
    def("buffer_import_dlpack_unversioned.null_tensor", [](CaseContext&) -> cuabi_status {
      cuabi_buffer out = nullptr;
      return cuabi_buffer_import_dlpack_unversioned(nullptr, 0, &out);
    });
    def("buffer_export_dlpack.null_buffer", [](CaseContext&) -> cuabi_status {
      cuabi_dlpack_managed_tensor_versioned* out = nullptr;
      return cuabi_buffer_export_dlpack(nullptr, 0, shape16, nullptr, 1, CUABI_DLPACK_FLOAT, 32, 1,
                                        0, &out);
    });
    def("stream_dlpack_handoff.null_stream", [](CaseContext&) -> cuabi_status {
      return cuabi_stream_dlpack_handoff(nullptr, 1);
    });
  }
  // --- Virtual memory: NULL handles ------------------------------------------
  def("physical_memory_create.null_device", [](CaseContext&) -> cuabi_status {
    PhysicalMemory m; return cuabi_physical_memory_create(nullptr, 2 << 20, 0, m.out());
  });
  def("physical_memory_free.null_memory", [](CaseContext&) -> cuabi_status {
    return cuabi_physical_memory_free(nullptr);
  });
  def("address_range_reserve.null_device", [](CaseContext&) -> cuabi_status {
    AddressRange r; return cuabi_address_range_reserve(nullptr, 2 << 20, r.out());
  });
  def("address_range_map.null_range", [](CaseContext&) -> cuabi_status {
    return cuabi_address_range_map(nullptr, 0, nullptr);
  });
  def("buffer_grow.null_buffer", [](CaseContext&) -> cuabi_status {
    return cuabi_buffer_grow(nullptr, 2 << 20);
  });
  def("buffer_alloc_growable.null_device", [](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_growable(nullptr, 0, 2 << 20, out.out());
  });
  // Allocation answering the address too.
  def("buffer_alloc_with_pointer.null_device", [](CaseContext&) -> cuabi_status {
    Buffer out; uint64_t ptr = 0;
    return cuabi_buffer_alloc_with_pointer(nullptr, 64, out.out(), &ptr);
  });
  def("buffer_alloc_async_with_pointer.null_device", [](CaseContext&) -> cuabi_status {
    Buffer out; uint64_t ptr = 0;
    return cuabi_buffer_alloc_async_with_pointer(nullptr, 64, nullptr, nullptr, out.out(), &ptr);
  });
  return b;
}

TEST(BadInputCorpus, CApiWithoutGpu) {
  std::vector<Case> all;
  std::string why;
  ASSERT_TRUE(LoadCorpus(&all, &why)) << why;
  CpuFixture fixture;
  ASSERT_TRUE(fixture.Build(&why)) << why;
  const std::vector<Case> cases = InGroup(all, "cpu");
  const CorpusResult result = RunCorpus(cases, CpuBodies(fixture));
  ReportCorpus("C ABI, no GPU needed", result);
  EXPECT_GT(result.cases, 100u);
  EXPECT_EQ(result.cases, result.passed)
      << result.failures.size() << " case(s) failed (listed above)";
  EXPECT_TRUE(result.failures.empty()) << "listed above";
}

// The data and the call bodies agree: every "cpu" case has a body and every
// body a case (the GPU group's are checked in corpus_gpu_test.cc).
TEST(BadInputCorpus, CpuCasesAndBodiesMatch) {
  std::vector<Case> all;
  std::string why;
  ASSERT_TRUE(LoadCorpus(&all, &why)) << why;
  CpuFixture unbuilt;  // the bodies are registered, not run
  for (const std::string& problem : Match(InGroup(all, "cpu"), CpuBodies(unbuilt)))
    ADD_FAILURE() << problem;
}

}  // namespace
}  // namespace hardening
