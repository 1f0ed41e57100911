#include "handle_calls.h"

#include <cstring>

#include "kernels.h"

namespace cuabi_test {

namespace {

// Values out-parameters hold before a call; a failing call must keep them.
constexpr int32_t kI32 = 0x5eed;
constexpr size_t kSize = 0x5eed;
constexpr uint64_t kU64 = 0x5eed;
constexpr float kFloat = 1234.5f;

template <typename T>
T Out() {
  return reinterpret_cast<T>(static_cast<uintptr_t>(0x5eed));
}

template <typename T>
T As(uintptr_t h) {
  return reinterpret_cast<T>(h);
}

// Host memory some calls read or write if they (wrongly) accepted a handle.
unsigned char g_host[256];

std::vector<HandleCall> MakeHandleCalls() {
  std::vector<HandleCall> v;
  auto add = [&v](const char* name, Kind kind, std::function<cuabi_status(uintptr_t, bool*)> call) {
    v.push_back(HandleCall{name, kind, std::move(call)});
  };

  // Devices.
  add("cuabi_device_get_ordinal", Kind::kDevice, [](uintptr_t h, bool* t) {
    int32_t o = kI32;
    cuabi_status s = cuabi_device_get_ordinal(As<cuabi_device>(h), &o);
    *t = o != kI32;
    return s;
  });
  add("cuabi_device_get_name", Kind::kDevice, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_device_get_name(As<cuabi_device>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_device_get_compute_capability", Kind::kDevice, [](uintptr_t h, bool* t) {
    int32_t a = kI32, b = kI32;
    cuabi_status s = cuabi_device_get_compute_capability(As<cuabi_device>(h), &a, &b);
    *t = a != kI32 || b != kI32;
    return s;
  });
  add("cuabi_device_get_total_memory", Kind::kDevice, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_device_get_total_memory(As<cuabi_device>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_device_get_memory_info", Kind::kDevice, [](uintptr_t h, bool* t) {
    size_t a = kSize, b = kSize;
    cuabi_status s = cuabi_device_get_memory_info(As<cuabi_device>(h), &a, &b);
    *t = a != kSize || b != kSize;
    return s;
  });
  add("cuabi_device_get_attribute", Kind::kDevice, [](uintptr_t h, bool* t) {
    int32_t a = kI32;
    cuabi_status s = cuabi_device_get_attribute(As<cuabi_device>(h), 1, &a);
    *t = a != kI32;
    return s;
  });
  add("cuabi_device_get_context", Kind::kDevice, [](uintptr_t h, bool* t) {
    uint64_t c = kU64;
    cuabi_status s = cuabi_device_get_context(As<cuabi_device>(h), &c);
    *t = c != kU64;
    return s;
  });
  add("cuabi_device_synchronize", Kind::kDevice,
      [](uintptr_t h, bool*) { return cuabi_device_synchronize(As<cuabi_device>(h)); });
  add("cuabi_device_get_stream_priority_range", Kind::kDevice, [](uintptr_t h, bool* t) {
    int32_t a = kI32, b = kI32;
    cuabi_status s = cuabi_device_get_stream_priority_range(As<cuabi_device>(h), &a, &b);
    *t = a != kI32 || b != kI32;
    return s;
  });
  add("cuabi_device_reset", Kind::kDevice,
      [](uintptr_t h, bool*) { return cuabi_device_reset(As<cuabi_device>(h)); });
  add("cuabi_device_get_limit", Kind::kDevice, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_device_get_limit(As<cuabi_device>(h), CUABI_LIMIT_STACK_SIZE, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_device_set_limit", Kind::kDevice, [](uintptr_t h, bool*) {
    return cuabi_device_set_limit(As<cuabi_device>(h), CUABI_LIMIT_STACK_SIZE, 1024);
  });
  add("cuabi_device_reset_persisting_l2", Kind::kDevice,
      [](uintptr_t h, bool*) { return cuabi_device_reset_persisting_l2(As<cuabi_device>(h)); });
  add("cuabi_device_set_coredump", Kind::kDevice, [](uintptr_t h, bool*) {
    return cuabi_device_set_coredump(As<cuabi_device>(h), 0, nullptr, 0);
  });
  add("cuabi_device_get_health", Kind::kDevice, [](uintptr_t h, bool*) {
    cuabi_health v;
    return cuabi_device_get_health(As<cuabi_device>(h), &v);
  });
  add("cuabi_device_profiler_start", Kind::kDevice,
      [](uintptr_t h, bool*) { return cuabi_device_profiler_start(As<cuabi_device>(h)); });
  add("cuabi_device_profiler_stop", Kind::kDevice,
      [](uintptr_t h, bool*) { return cuabi_device_profiler_stop(As<cuabi_device>(h)); });
  add("cuabi_module_compile", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
    desc.source = kSaxpySource;
    desc.flags = CUABI_COMPILE_NO_CACHE;
    cuabi_module m = Out<cuabi_module>();
    cuabi_status s = cuabi_module_compile(As<cuabi_device>(h), &desc, &m);
    *t = m != Out<cuabi_module>();
    return s;
  });
  add("cuabi_module_load_data", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_module m = Out<cuabi_module>();
    const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    cuabi_status s = cuabi_module_load_data(As<cuabi_device>(h), ptx, sizeof ptx, &m);
    *t = m != Out<cuabi_module>();
    return s;
  });
  add("cuabi_module_load_file", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_module m = Out<cuabi_module>();
    cuabi_status s = cuabi_module_load_file(As<cuabi_device>(h), "/nonexistent/k.cubin", &m);
    *t = m != Out<cuabi_module>();
    return s;
  });
  add("cuabi_buffer_alloc", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_alloc(As<cuabi_device>(h), 256, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_buffer_wrap", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_wrap(As<cuabi_device>(h), 0x10000, 256, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_host_buffer_alloc", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_host_buffer b = Out<cuabi_host_buffer>();
    cuabi_status s = cuabi_host_buffer_alloc(As<cuabi_device>(h), 256, &b);
    *t = b != Out<cuabi_host_buffer>();
    return s;
  });
  add("cuabi_host_buffer_register", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_host_buffer b = Out<cuabi_host_buffer>();
    cuabi_status s = cuabi_host_buffer_register(As<cuabi_device>(h), g_host, sizeof g_host, &b);
    *t = b != Out<cuabi_host_buffer>();
    return s;
  });
  add("cuabi_stream_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_stream st = Out<cuabi_stream>();
    cuabi_status s = cuabi_stream_create(As<cuabi_device>(h), 0, 0, &st);
    *t = st != Out<cuabi_stream>();
    return s;
  });
  add("cuabi_stream_wrap", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_stream st = Out<cuabi_stream>();
    cuabi_status s = cuabi_stream_wrap(As<cuabi_device>(h), 0x1, &st);
    *t = st != Out<cuabi_stream>();
    return s;
  });
  add("cuabi_event_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_event e = Out<cuabi_event>();
    cuabi_status s = cuabi_event_create(As<cuabi_device>(h), 0, &e);
    *t = e != Out<cuabi_event>();
    return s;
  });

  // Programs.
  add("cuabi_program_add_name_expression", Kind::kProgram, [](uintptr_t h, bool*) {
    return cuabi_program_add_name_expression(As<cuabi_program>(h), "write_scalar<float>");
  });
  add("cuabi_program_compile", Kind::kProgram, [](uintptr_t h, bool*) {
    const char* options[] = {"--gpu-architecture=compute_90"};
    return cuabi_program_compile(As<cuabi_program>(h), 1, options);
  });
  add("cuabi_program_compile_with", Kind::kProgram, [](uintptr_t h, bool*) {
    cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
    desc.arch = "compute_90";
    return cuabi_program_compile_with(As<cuabi_program>(h), &desc);
  });
  add("cuabi_program_get_log", Kind::kProgram, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_program_get_log(As<cuabi_program>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_program_get_ptx", Kind::kProgram, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_program_get_ptx(As<cuabi_program>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_program_get_cubin", Kind::kProgram, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_program_get_cubin(As<cuabi_program>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_program_get_lowered_name", Kind::kProgram, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s =
        cuabi_program_get_lowered_name(As<cuabi_program>(h), "write_scalar<float>", nullptr, &n);
    *t = n != kSize;
    return s;
  });

  // Modules.
  add("cuabi_module_get_from_cache", Kind::kModule, [](uintptr_t h, bool* t) {
    int32_t hit = kI32;
    cuabi_status s = cuabi_module_get_from_cache(As<cuabi_module>(h), &hit);
    *t = hit != kI32;
    return s;
  });
  add("cuabi_module_get_function", Kind::kModule, [](uintptr_t h, bool* t) {
    cuabi_function f = Out<cuabi_function>();
    cuabi_status s = cuabi_module_get_function(As<cuabi_module>(h), "saxpy", &f);
    *t = f != Out<cuabi_function>();
    return s;
  });
  add("cuabi_module_get_lowered_name", Kind::kModule, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s =
        cuabi_module_get_lowered_name(As<cuabi_module>(h), "write_scalar<float>", nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_module_get_global", Kind::kModule, [](uintptr_t h, bool* t) {
    uint64_t p = kU64;
    size_t n = kSize;
    cuabi_status s = cuabi_module_get_global(As<cuabi_module>(h), "counter", &p, &n);
    *t = p != kU64 || n != kSize;
    return s;
  });

  // Functions.
  add("cuabi_function_get_param_count", Kind::kFunction, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_function_get_param_count(As<cuabi_function>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_function_get_params", Kind::kFunction, [](uintptr_t h, bool* t) {
    cuabi_param_info p[2] = {{kSize, kSize}, {kSize, kSize}};
    size_t n = 2, a = kSize;
    cuabi_status s = cuabi_function_get_params(As<cuabi_function>(h), p, &n, &a);
    *t = p[0].offset != kSize || p[0].size != kSize || n != 2 || a != kSize;
    return s;
  });
  add("cuabi_function_check_arg_sizes", Kind::kFunction, [](uintptr_t h, bool* t) {
    const size_t sizes[] = {4, 8};
    *t = false;
    return cuabi_function_check_arg_sizes(As<cuabi_function>(h), sizes, 2);
  });
  add("cuabi_function_check_arg_size", Kind::kFunction, [](uintptr_t h, bool* t) {
    *t = false;
    return cuabi_function_check_arg_size(As<cuabi_function>(h), 0, 4);
  });
  add("cuabi_function_get_args_size", Kind::kFunction, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_function_get_args_size(As<cuabi_function>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_function_get_name", Kind::kFunction, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_function_get_name(As<cuabi_function>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_function_get_attribute", Kind::kFunction, [](uintptr_t h, bool* t) {
    int32_t a = kI32;
    cuabi_status s = cuabi_function_get_attribute(As<cuabi_function>(h), CUABI_FUNC_NUM_REGS, &a);
    *t = a != kI32;
    return s;
  });
  add("cuabi_function_set_attribute", Kind::kFunction, [](uintptr_t h, bool*) {
    return cuabi_function_set_attribute(As<cuabi_function>(h),
                                        CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024);
  });
  add("cuabi_function_launch", Kind::kFunction, [](uintptr_t h, bool*) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    int value = 0;
    void* params[] = {&value};
    return cuabi_function_launch(As<cuabi_function>(h), &config, nullptr, params, 1);
  });
  add("cuabi_function_launch_sized", Kind::kFunction, [](uintptr_t h, bool*) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    int value = 0;
    void* params[] = {&value};
    const size_t sizes[] = {sizeof value};
    return cuabi_function_launch_sized(As<cuabi_function>(h), &config, nullptr, params, sizes, 1);
  });
  add("cuabi_function_launch_packed", Kind::kFunction, [](uintptr_t h, bool*) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    unsigned char args[8] = {0};
    return cuabi_function_launch_packed(As<cuabi_function>(h), &config, nullptr, args, sizeof args);
  });
  add("cuabi_function_get_active_blocks_per_sm", Kind::kFunction, [](uintptr_t h, bool* t) {
    uint32_t n = 0x5eed;
    cuabi_status s = cuabi_function_get_active_blocks_per_sm(As<cuabi_function>(h), 128, 0, &n);
    *t = n != 0x5eed;
    return s;
  });
  add("cuabi_function_suggest_block_size", Kind::kFunction, [](uintptr_t h, bool* t) {
    uint32_t a = 0x5eed, b = 0x5eed;
    cuabi_status s = cuabi_function_suggest_block_size(As<cuabi_function>(h), 0, 0, 0, &a, &b);
    *t = a != 0x5eed || b != 0x5eed;
    return s;
  });
  add("cuabi_function_suggest_config", Kind::kFunction, [](uintptr_t h, bool* t) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    cuabi_status s = cuabi_function_suggest_config(As<cuabi_function>(h), 1000, 0, 0, &config);
    *t = config.grid_x != 1 || config.block_x != 1;
    return s;
  });
  add("cuabi_function_get_available_dynamic_shared", Kind::kFunction, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s =
        cuabi_function_get_available_dynamic_shared(As<cuabi_function>(h), 1, 128, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_function_get_max_cluster_size", Kind::kFunction, [](uintptr_t h, bool* t) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    uint32_t n = 0x5eed;
    cuabi_status s = cuabi_function_get_max_cluster_size(As<cuabi_function>(h), &config, &n);
    *t = n != 0x5eed;
    return s;
  });
  add("cuabi_function_get_max_active_clusters", Kind::kFunction, [](uintptr_t h, bool* t) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    config.grid_x = 2;
    config.cluster_x = config.cluster_y = config.cluster_z = 1;
    uint32_t n = 0x5eed;
    cuabi_status s = cuabi_function_get_max_active_clusters(As<cuabi_function>(h), &config, &n);
    *t = n != 0x5eed;
    return s;
  });

  // Device memory.
  add("cuabi_buffer_get_pointer", Kind::kBuffer, [](uintptr_t h, bool* t) {
    uint64_t p = kU64;
    cuabi_status s = cuabi_buffer_get_pointer(As<cuabi_buffer>(h), &p);
    *t = p != kU64;
    return s;
  });
  add("cuabi_buffer_get_size", Kind::kBuffer, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_buffer_get_size(As<cuabi_buffer>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_buffer_get_device_ordinal", Kind::kBuffer, [](uintptr_t h, bool* t) {
    int32_t o = kI32;
    cuabi_status s = cuabi_buffer_get_device_ordinal(As<cuabi_buffer>(h), &o);
    *t = o != kI32;
    return s;
  });
  add("cuabi_buffer_copy_from_host", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_copy_from_host(As<cuabi_buffer>(h), 0, g_host, 16);
  });
  add("cuabi_buffer_copy_to_host", Kind::kBuffer, [](uintptr_t h, bool* t) {
    unsigned char dst[16];
    std::memset(dst, 0xA5, sizeof dst);
    cuabi_status s = cuabi_buffer_copy_to_host(As<cuabi_buffer>(h), 0, dst, sizeof dst);
    for (unsigned char b : dst) *t = *t || b != 0xA5;
    return s;
  });
  add("cuabi_buffer_copy_from_host_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_copy_from_host_async(As<cuabi_buffer>(h), 0, g_host, 16, nullptr);
  });
  add("cuabi_buffer_copy_to_host_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_copy_to_host_async(As<cuabi_buffer>(h), 0, g_host, 16, nullptr);
  });
  add("cuabi_buffer_copy", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_copy(As<cuabi_buffer>(h), 0, As<cuabi_buffer>(h), 128, 16);
  });
  add("cuabi_buffer_copy_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_copy_async(As<cuabi_buffer>(h), 0, As<cuabi_buffer>(h), 128, 16, nullptr);
  });
  add("cuabi_buffer_memset", Kind::kBuffer,
      [](uintptr_t h, bool*) { return cuabi_buffer_memset(As<cuabi_buffer>(h), 0, 0, 16); });
  add("cuabi_buffer_memset_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_memset_async(As<cuabi_buffer>(h), 0, 0, 16, nullptr);
  });

  // Pinned host memory.
  add("cuabi_host_buffer_get_pointer", Kind::kHostBuffer, [](uintptr_t h, bool* t) {
    void* p = Out<void*>();
    cuabi_status s = cuabi_host_buffer_get_pointer(As<cuabi_host_buffer>(h), &p);
    *t = p != Out<void*>();
    return s;
  });
  add("cuabi_host_buffer_get_size", Kind::kHostBuffer, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_host_buffer_get_size(As<cuabi_host_buffer>(h), &n);
    *t = n != kSize;
    return s;
  });

  // Streams.
  add("cuabi_stream_get_handle", Kind::kStream, [](uintptr_t h, bool* t) {
    uint64_t p = kU64;
    cuabi_status s = cuabi_stream_get_handle(As<cuabi_stream>(h), &p);
    *t = p != kU64;
    return s;
  });
  add("cuabi_stream_get_id", Kind::kStream, [](uintptr_t h, bool* t) {
    uint64_t id = kU64;
    cuabi_status s = cuabi_stream_get_id(As<cuabi_stream>(h), &id);
    *t = id != kU64;
    return s;
  });
  add("cuabi_stream_synchronize", Kind::kStream,
      [](uintptr_t h, bool*) { return cuabi_stream_synchronize(As<cuabi_stream>(h)); });
  add("cuabi_stream_query", Kind::kStream,
      [](uintptr_t h, bool*) { return cuabi_stream_query(As<cuabi_stream>(h)); });
  add("cuabi_stream_wait_event", Kind::kStream,
      [](uintptr_t h, bool*) { return cuabi_stream_wait_event(As<cuabi_stream>(h), nullptr); });
  add("cuabi_stream_get_sync_policy", Kind::kStream, [](uintptr_t h, bool* t) {
    cuabi_sync_policy p = CUABI_SYNC_POLICY_FORCE32;
    cuabi_status s = cuabi_stream_get_sync_policy(As<cuabi_stream>(h), &p);
    *t = p != CUABI_SYNC_POLICY_FORCE32;
    return s;
  });
  add("cuabi_stream_set_sync_policy", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_set_sync_policy(As<cuabi_stream>(h), CUABI_SYNC_POLICY_AUTO);
  });
  add("cuabi_stream_get_priority", Kind::kStream, [](uintptr_t h, bool* t) {
    int32_t p = 12345;
    cuabi_status s = cuabi_stream_get_priority(As<cuabi_stream>(h), &p);
    *t = p != 12345;
    return s;
  });
  add("cuabi_stream_set_priority", Kind::kStream,
      [](uintptr_t h, bool*) { return cuabi_stream_set_priority(As<cuabi_stream>(h), 0); });
  add("cuabi_stream_get_memory_sync_domain", Kind::kStream, [](uintptr_t h, bool* t) {
    cuabi_mem_sync_domain d = CUABI_MEM_SYNC_DOMAIN_FORCE32;
    cuabi_status s = cuabi_stream_get_memory_sync_domain(As<cuabi_stream>(h), &d);
    *t = d != CUABI_MEM_SYNC_DOMAIN_FORCE32;
    return s;
  });
  add("cuabi_stream_set_memory_sync_domain", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_set_memory_sync_domain(As<cuabi_stream>(h), CUABI_MEM_SYNC_DOMAIN_DEFAULT);
  });
  add("cuabi_stream_get_access_policy_window", Kind::kStream, [](uintptr_t h, bool* t) {
    cuabi_access_policy_window w = CUABI_ACCESS_POLICY_WINDOW_INIT;
    w.bytes = 77;
    cuabi_status s = cuabi_stream_get_access_policy_window(As<cuabi_stream>(h), &w);
    *t = w.bytes != 77;
    return s;
  });
  add("cuabi_stream_set_access_policy_window", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_access_policy_window w = CUABI_ACCESS_POLICY_WINDOW_INIT;
    return cuabi_stream_set_access_policy_window(As<cuabi_stream>(h), &w);
  });
  add("cuabi_stream_write_value", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_write_value(As<cuabi_stream>(h), nullptr, 0, 1, 4, 0);
  });
  add("cuabi_stream_wait_value", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_wait_value(As<cuabi_stream>(h), nullptr, 0, 1, 4, CUABI_WAIT_GEQ, 0);
  });
  // Batches: the stream is pinned before any element is read.
  add("cuabi_stream_mem_op_batch", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_mem_op op = CUABI_MEM_OP_INIT;
    return cuabi_stream_mem_op_batch(As<cuabi_stream>(h), &op, 1);
  });
  add("cuabi_stream_copy_batch", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_copy_op op = CUABI_COPY_OP_INIT;
    return cuabi_stream_copy_batch(As<cuabi_stream>(h), &op, 1, 0);
  });
  add("cuabi_stream_copy_3d_batch", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
    return cuabi_stream_copy_3d_batch(As<cuabi_stream>(h), &d, 1, 0);
  });
  add("cuabi_stream_prefetch_batch", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_managed_range r = CUABI_MANAGED_RANGE_INIT;
    return cuabi_stream_prefetch_batch(As<cuabi_stream>(h), &r, 1, 0);
  });
  add("cuabi_stream_discard_batch", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_managed_range r = CUABI_MANAGED_RANGE_INIT;
    return cuabi_stream_discard_batch(As<cuabi_stream>(h), &r, 1);
  });
  add("cuabi_stream_discard_and_prefetch_batch", Kind::kStream, [](uintptr_t h, bool*) {
    const cuabi_managed_range r = CUABI_MANAGED_RANGE_INIT;
    return cuabi_stream_discard_and_prefetch_batch(As<cuabi_stream>(h), &r, 1, 0);
  });
  add("cuabi_stream_write_value_host", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_write_value_host(As<cuabi_stream>(h), nullptr, 0, 1, 4, 0);
  });
  add("cuabi_stream_wait_value_host", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_wait_value_host(As<cuabi_stream>(h), nullptr, 0, 1, 4, CUABI_WAIT_GEQ, 0);
  });
  add("cuabi_stream_launch_host_func", Kind::kStream, [](uintptr_t h, bool* t) {
    static int ran = 0;
    cuabi_status s = cuabi_stream_launch_host_func(
        As<cuabi_stream>(h),
        [](void* data, char*, size_t) -> int32_t {
          ++*static_cast<int*>(data);
          return 0;
        },
        &ran);
    *t = false;
    return s;
  });
  add("cuabi_stream_begin_capture", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_begin_capture(As<cuabi_stream>(h), CUABI_CAPTURE_GLOBAL);
  });
  add("cuabi_stream_end_capture", Kind::kStream, [](uintptr_t h, bool* t) {
    cuabi_graph g = Out<cuabi_graph>();
    cuabi_status s = cuabi_stream_end_capture(As<cuabi_stream>(h), &g);
    *t = g != Out<cuabi_graph>();
    return s;
  });

  // Events.
  add("cuabi_event_record", Kind::kEvent,
      [](uintptr_t h, bool*) { return cuabi_event_record(As<cuabi_event>(h), nullptr); });
  add("cuabi_event_synchronize", Kind::kEvent,
      [](uintptr_t h, bool*) { return cuabi_event_synchronize(As<cuabi_event>(h)); });
  add("cuabi_event_query", Kind::kEvent,
      [](uintptr_t h, bool*) { return cuabi_event_query(As<cuabi_event>(h)); });
  add("cuabi_event_get_elapsed_ms", Kind::kEvent, [](uintptr_t h, bool* t) {
    float ms = kFloat;
    cuabi_status s = cuabi_event_get_elapsed_ms(As<cuabi_event>(h), As<cuabi_event>(h), &ms);
    *t = ms != kFloat;
    return s;
  });

  // Graphs.
  add("cuabi_graph_get_node_count", Kind::kGraph, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_graph_get_node_count(As<cuabi_graph>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_graph_instantiate", Kind::kGraph, [](uintptr_t h, bool* t) {
    cuabi_graph_exec e = Out<cuabi_graph_exec>();
    cuabi_status s = cuabi_graph_instantiate(As<cuabi_graph>(h), &e);
    *t = e != Out<cuabi_graph_exec>();
    return s;
  });
  add("cuabi_graph_exec_launch", Kind::kGraphExec,
      [](uintptr_t h, bool*) { return cuabi_graph_exec_launch(As<cuabi_graph_exec>(h), nullptr); });
  add("cuabi_graph_exec_upload", Kind::kGraphExec,
      [](uintptr_t h, bool*) { return cuabi_graph_exec_upload(As<cuabi_graph_exec>(h), nullptr); });
  add("cuabi_graph_get_kernel_node_count", Kind::kGraph, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_graph_get_kernel_node_count(As<cuabi_graph>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_graph_exec_set_kernel_node_args", Kind::kGraphExec, [](uintptr_t h, bool*) {
    unsigned char args[8] = {0};
    return cuabi_graph_exec_set_kernel_node_args(As<cuabi_graph_exec>(h), 0, nullptr, args,
                                                 sizeof args);
  });
  add("cuabi_graph_exec_update", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_update(As<cuabi_graph_exec>(h), nullptr);
  });
  // Updates in place: the executable graph is checked before the node.
  add("cuabi_graph_exec_set_kernel_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    const cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    unsigned char args[8] = {0};
    return cuabi_graph_exec_set_kernel_node(As<cuabi_graph_exec>(h), nullptr, nullptr, &c, args,
                                            sizeof args);
  });
  add("cuabi_graph_exec_set_copy_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_copy_node(As<cuabi_graph_exec>(h), nullptr, nullptr, 0, nullptr,
                                          0, 16);
  });
  add("cuabi_graph_exec_set_upload_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_upload_node(As<cuabi_graph_exec>(h), nullptr, nullptr, 0,
                                            nullptr, 0, 16);
  });
  add("cuabi_graph_exec_set_download_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_download_node(As<cuabi_graph_exec>(h), nullptr, nullptr, 0,
                                              nullptr, 0, 16);
  });
  add("cuabi_graph_exec_set_fill_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_fill_node(As<cuabi_graph_exec>(h), nullptr, nullptr, 0, 0, 4, 1);
  });
  add("cuabi_graph_exec_set_host_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_host_node(As<cuabi_graph_exec>(h), nullptr, nullptr, nullptr);
  });
  add("cuabi_graph_exec_set_event_node", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_event_node(As<cuabi_graph_exec>(h), nullptr, nullptr);
  });
  add("cuabi_graph_exec_set_node_enabled", Kind::kGraphExec, [](uintptr_t h, bool*) {
    return cuabi_graph_exec_set_node_enabled(As<cuabi_graph_exec>(h), nullptr, 0);
  });
  add("cuabi_graph_exec_get_node_enabled", Kind::kGraphExec, [](uintptr_t h, bool* t) {
    int32_t v = kI32;
    cuabi_status s = cuabi_graph_exec_get_node_enabled(As<cuabi_graph_exec>(h), nullptr, &v);
    *t = v != kI32;
    return s;
  });
  add("cuabi_graph_exec_get_launch_handle", Kind::kGraphExec, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_graph_exec_get_launch_handle(As<cuabi_graph_exec>(h), &v);
    *t = v != kU64;
    return s;
  });

  // Graphs built node by node.
  add("cuabi_graph_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_graph g = Out<cuabi_graph>();
    cuabi_status s = cuabi_graph_create(As<cuabi_device>(h), &g);
    *t = g != Out<cuabi_graph>();
    return s;
  });
#define CUABI_TEST_ADD_NODE(fn, ...)                                  \
  add(#fn, Kind::kGraph, [](uintptr_t h, bool* t) {                   \
    cuabi_graph_node n = Out<cuabi_graph_node>();                     \
    cuabi_status s = fn(As<cuabi_graph>(h), nullptr, __VA_ARGS__, &n); \
    *t = n != Out<cuabi_graph_node>();                                \
    return s;                                                         \
  })
  add("cuabi_graph_add_empty_node", Kind::kGraph, [](uintptr_t h, bool* t) {
    cuabi_graph_node n = Out<cuabi_graph_node>();
    cuabi_status s = cuabi_graph_add_empty_node(As<cuabi_graph>(h), nullptr, &n);
    *t = n != Out<cuabi_graph_node>();
    return s;
  });
  add("cuabi_graph_add_kernel_node", Kind::kGraph, [](uintptr_t h, bool* t) {
    cuabi_graph_node n = Out<cuabi_graph_node>();
    const cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    cuabi_status s = cuabi_graph_add_kernel_node(As<cuabi_graph>(h), nullptr, nullptr, &c,
                                                 nullptr, 0, &n);
    *t = n != Out<cuabi_graph_node>();
    return s;
  });
  CUABI_TEST_ADD_NODE(cuabi_graph_add_copy_node, nullptr, 0, nullptr, 0, 4);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_upload_node, nullptr, 0, nullptr, 0, 4);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_download_node, nullptr, 0, nullptr, 0, 4);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_fill_node, nullptr, 0, 0, 4, 1);
  add("cuabi_graph_add_copy_3d_node", Kind::kGraph, [](uintptr_t h, bool* t) {
    cuabi_graph_node n = Out<cuabi_graph_node>();
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
    d.src_host = g_host;
    d.dst_host = g_host + 128;
    d.width_bytes = 16;
    cuabi_status s = cuabi_graph_add_copy_3d_node(As<cuabi_graph>(h), nullptr, &d, &n);
    *t = n != Out<cuabi_graph_node>();
    return s;
  });
  CUABI_TEST_ADD_NODE(cuabi_graph_add_host_node, nullptr, nullptr);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_event_record_node, nullptr);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_event_wait_node, nullptr);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_child_graph_node, nullptr);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_mem_alloc_node, size_t(64));
  CUABI_TEST_ADD_NODE(cuabi_graph_add_mem_free_node, nullptr);
  CUABI_TEST_ADD_NODE(cuabi_graph_add_conditional_node, uint64_t(1), CUABI_CONDITIONAL_IF, 1u);
#undef CUABI_TEST_ADD_NODE
  add("cuabi_graph_create_conditional_handle", Kind::kGraph, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_graph_create_conditional_handle(As<cuabi_graph>(h), 0, &v);
    *t = v != kU64;
    return s;
  });
  add("cuabi_graph_clone", Kind::kGraph, [](uintptr_t h, bool* t) {
    cuabi_graph g = Out<cuabi_graph>();
    cuabi_status s = cuabi_graph_clone(As<cuabi_graph>(h), &g);
    *t = g != Out<cuabi_graph>();
    return s;
  });
  add("cuabi_graph_write_dot", Kind::kGraph, [](uintptr_t h, bool*) {
    return cuabi_graph_write_dot(As<cuabi_graph>(h), "/nonexistent/graph.dot");
  });
  add("cuabi_graph_instantiate_with_flags", Kind::kGraph, [](uintptr_t h, bool* t) {
    cuabi_graph_exec e = Out<cuabi_graph_exec>();
    cuabi_status s = cuabi_graph_instantiate_with_flags(As<cuabi_graph>(h), 0, nullptr, &e);
    *t = e != Out<cuabi_graph_exec>();
    return s;
  });
  add("cuabi_stream_begin_capture_to_graph", Kind::kStream, [](uintptr_t h, bool*) {
    return cuabi_stream_begin_capture_to_graph(As<cuabi_stream>(h), nullptr, nullptr,
                                               CUABI_CAPTURE_GLOBAL);
  });
  add("cuabi_graph_node_add_dependency", Kind::kGraphNode, [](uintptr_t h, bool*) {
    return cuabi_graph_node_add_dependency(As<cuabi_graph_node>(h), As<cuabi_graph_node>(h));
  });
  add("cuabi_graph_node_get_type", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    cuabi_graph_node_type v = static_cast<cuabi_graph_node_type>(77);
    cuabi_status s = cuabi_graph_node_get_type(As<cuabi_graph_node>(h), &v);
    *t = v != static_cast<cuabi_graph_node_type>(77);
    return s;
  });
  add("cuabi_graph_node_get_dependency_count", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_graph_node_get_dependency_count(As<cuabi_graph_node>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_graph_node_get_dependent_count", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_graph_node_get_dependent_count(As<cuabi_graph_node>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_graph_node_get_dependency", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    cuabi_graph_node n = Out<cuabi_graph_node>();
    cuabi_status s = cuabi_graph_node_get_dependency(As<cuabi_graph_node>(h), 0, &n);
    *t = n != Out<cuabi_graph_node>();
    return s;
  });
  add("cuabi_graph_node_get_dependent", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    cuabi_graph_node n = Out<cuabi_graph_node>();
    cuabi_status s = cuabi_graph_node_get_dependent(As<cuabi_graph_node>(h), 0, &n);
    *t = n != Out<cuabi_graph_node>();
    return s;
  });
  add("cuabi_graph_node_get_address", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_graph_node_get_address(As<cuabi_graph_node>(h), &v);
    *t = v != kU64;
    return s;
  });
  add("cuabi_graph_node_get_body", Kind::kGraphNode, [](uintptr_t h, bool* t) {
    cuabi_graph g = Out<cuabi_graph>();
    cuabi_status s = cuabi_graph_node_get_body(As<cuabi_graph_node>(h), 0, &g);
    *t = g != Out<cuabi_graph>();
    return s;
  });

  // Launch plans.
  add("cuabi_launch_plan_create", Kind::kFunction, [](uintptr_t h, bool* t) {
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    cuabi_launch_plan p = Out<cuabi_launch_plan>();
    cuabi_status s = cuabi_launch_plan_create(As<cuabi_function>(h), &config, nullptr, &p);
    *t = p != Out<cuabi_launch_plan>();
    return s;
  });
  add("cuabi_launch_plan_get_args", Kind::kLaunchPlan, [](uintptr_t h, bool* t) {
    void* args = Out<void*>();
    size_t n = kSize;
    cuabi_status s = cuabi_launch_plan_get_args(As<cuabi_launch_plan>(h), &args, &n);
    *t = args != Out<void*>() || n != kSize;
    return s;
  });
  add("cuabi_launch_plan_launch", Kind::kLaunchPlan,
      [](uintptr_t h, bool*) { return cuabi_launch_plan_launch(As<cuabi_launch_plan>(h)); });

  // Memory of every kind, pools, IPC and peers.
  add("cuabi_buffer_get_kind", Kind::kBuffer, [](uintptr_t h, bool* t) {
    cuabi_buffer_kind k = static_cast<cuabi_buffer_kind>(kI32);
    cuabi_status s = cuabi_buffer_get_kind(As<cuabi_buffer>(h), &k);
    *t = k != static_cast<cuabi_buffer_kind>(kI32);
    return s;
  });
  // DLPack: export and the stream handshake.
  add("cuabi_buffer_export_dlpack", Kind::kBuffer, [](uintptr_t h, bool* t) {
    static const int64_t shape[1] = {1};
    cuabi_dlpack_managed_tensor_versioned* out = Out<cuabi_dlpack_managed_tensor_versioned*>();
    cuabi_status s = cuabi_buffer_export_dlpack(As<cuabi_buffer>(h), 0, shape, nullptr, 1,
                                                CUABI_DLPACK_FLOAT, 32, 1, 0, &out);
    *t = out != Out<cuabi_dlpack_managed_tensor_versioned*>();
    return s;
  });
  add("cuabi_stream_dlpack_handoff", Kind::kStream,
      [](uintptr_t h, bool*) { return cuabi_stream_dlpack_handoff(As<cuabi_stream>(h), 1); });
  add("cuabi_stream_dlpack_wait", Kind::kStream,
      [](uintptr_t h, bool*) { return cuabi_stream_dlpack_wait(As<cuabi_stream>(h), 1); });
  add("cuabi_memory_pool_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_memory_pool p = Out<cuabi_memory_pool>();
    cuabi_status s = cuabi_memory_pool_create(As<cuabi_device>(h), nullptr, &p);
    *t = p != Out<cuabi_memory_pool>();
    return s;
  });
  add("cuabi_device_get_default_memory_pool", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_memory_pool p = Out<cuabi_memory_pool>();
    cuabi_status s = cuabi_device_get_default_memory_pool(As<cuabi_device>(h), &p);
    *t = p != Out<cuabi_memory_pool>();
    return s;
  });
  add("cuabi_memory_pool_set_release_threshold", Kind::kMemoryPool, [](uintptr_t h, bool*) {
    return cuabi_memory_pool_set_release_threshold(As<cuabi_memory_pool>(h), 0);
  });
  add("cuabi_memory_pool_get_release_threshold", Kind::kMemoryPool, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_memory_pool_get_release_threshold(As<cuabi_memory_pool>(h), &v);
    *t = v != kU64;
    return s;
  });
  add("cuabi_memory_pool_trim", Kind::kMemoryPool, [](uintptr_t h, bool*) {
    return cuabi_memory_pool_trim(As<cuabi_memory_pool>(h), 0);
  });
  add("cuabi_memory_pool_get_usage", Kind::kMemoryPool, [](uintptr_t h, bool* t) {
    uint64_t a = kU64, b = kU64;
    cuabi_status s = cuabi_memory_pool_get_usage(As<cuabi_memory_pool>(h), &a, &b);
    *t = a != kU64 || b != kU64;
    return s;
  });
  add("cuabi_memory_pool_export_fd", Kind::kMemoryPool, [](uintptr_t h, bool* t) {
    int32_t fd = kI32;
    cuabi_status s = cuabi_memory_pool_export_fd(As<cuabi_memory_pool>(h), &fd);
    *t = fd != kI32;
    return s;
  });
  add("cuabi_memory_pool_import_fd", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_memory_pool p = Out<cuabi_memory_pool>();
    cuabi_status s = cuabi_memory_pool_import_fd(As<cuabi_device>(h), 0, &p);
    *t = p != Out<cuabi_memory_pool>();
    return s;
  });
  add("cuabi_buffer_alloc_async", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_alloc_async(As<cuabi_device>(h), 64, nullptr, nullptr, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_buffer_free_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_free_async(As<cuabi_buffer>(h), nullptr);
  });
  // Allocation answering the address too: neither out-parameter written.
  add("cuabi_buffer_alloc_with_pointer", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    uint64_t p = Out<uint64_t>();
    cuabi_status s = cuabi_buffer_alloc_with_pointer(As<cuabi_device>(h), 64, &b, &p);
    *t = b != Out<cuabi_buffer>() || p != Out<uint64_t>();
    return s;
  });
  add("cuabi_buffer_alloc_async_with_pointer", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    uint64_t p = Out<uint64_t>();
    cuabi_status s =
        cuabi_buffer_alloc_async_with_pointer(As<cuabi_device>(h), 64, nullptr, nullptr, &b, &p);
    *t = b != Out<cuabi_buffer>() || p != Out<uint64_t>();
    return s;
  });
  add("cuabi_buffer_alloc_managed", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_alloc_managed(As<cuabi_device>(h), 64, 0, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_buffer_get_host_pointer", Kind::kBuffer, [](uintptr_t h, bool* t) {
    void* p = Out<void*>();
    cuabi_status s = cuabi_buffer_get_host_pointer(As<cuabi_buffer>(h), &p);
    *t = p != Out<void*>();
    return s;
  });
  add("cuabi_buffer_prefetch_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_prefetch_async(As<cuabi_buffer>(h), 0, 0, CUABI_LOCATION_HOST, nullptr);
  });
  add("cuabi_buffer_advise", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_advise(As<cuabi_buffer>(h), 0, 0, CUABI_ADVISE_SET_READ_MOSTLY, 0);
  });
  add("cuabi_buffer_get_ipc_handle", Kind::kBuffer, [](uintptr_t h, bool* t) {
    unsigned char handle[CUABI_IPC_HANDLE_SIZE];
    std::memset(handle, 0x5e, sizeof handle);
    cuabi_status s = cuabi_buffer_get_ipc_handle(As<cuabi_buffer>(h), handle, sizeof handle);
    *t = handle[0] != 0x5e;
    return s;
  });
  add("cuabi_buffer_open_ipc", Kind::kDevice, [](uintptr_t h, bool* t) {
    unsigned char handle[CUABI_IPC_HANDLE_SIZE] = {0};
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s =
        cuabi_buffer_open_ipc(As<cuabi_device>(h), nullptr, handle, sizeof handle, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_event_get_ipc_handle", Kind::kEvent, [](uintptr_t h, bool* t) {
    unsigned char handle[CUABI_IPC_HANDLE_SIZE];
    std::memset(handle, 0x5e, sizeof handle);
    cuabi_status s = cuabi_event_get_ipc_handle(As<cuabi_event>(h), handle, sizeof handle);
    *t = handle[0] != 0x5e;
    return s;
  });
  add("cuabi_event_open_ipc", Kind::kDevice, [](uintptr_t h, bool* t) {
    unsigned char handle[CUABI_IPC_HANDLE_SIZE] = {0};
    cuabi_event e = Out<cuabi_event>();
    cuabi_status s = cuabi_event_open_ipc(As<cuabi_device>(h), handle, sizeof handle, &e);
    *t = e != Out<cuabi_event>();
    return s;
  });
  add("cuabi_device_can_access_peer", Kind::kDevice, [](uintptr_t h, bool* t) {
    int32_t v = kI32;
    cuabi_status s = cuabi_device_can_access_peer(As<cuabi_device>(h), As<cuabi_device>(h), &v);
    *t = v != kI32;
    return s;
  });
  add("cuabi_device_enable_peer_access", Kind::kDevice, [](uintptr_t h, bool*) {
    return cuabi_device_enable_peer_access(As<cuabi_device>(h), As<cuabi_device>(h));
  });
  add("cuabi_device_disable_peer_access", Kind::kDevice, [](uintptr_t h, bool*) {
    return cuabi_device_disable_peer_access(As<cuabi_device>(h), As<cuabi_device>(h));
  });
  add("cuabi_device_get_peer_attribute", Kind::kDevice, [](uintptr_t h, bool* t) {
    int32_t v = kI32;
    cuabi_status s =
        cuabi_device_get_peer_attribute(As<cuabi_device>(h), As<cuabi_device>(h), 1, &v);
    *t = v != kI32;
    return s;
  });
  add("cuabi_buffer_get_copy_path", Kind::kBuffer, [](uintptr_t h, bool* t) {
    cuabi_copy_path p = static_cast<cuabi_copy_path>(kI32);
    cuabi_status s = cuabi_buffer_get_copy_path(As<cuabi_buffer>(h), As<cuabi_buffer>(h), &p);
    *t = p != static_cast<cuabi_copy_path>(kI32);
    return s;
  });
  add("cuabi_buffer_alloc_pitched", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_alloc_pitched(As<cuabi_device>(h), 64, 4, 4, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_buffer_get_pitch", Kind::kBuffer, [](uintptr_t h, bool* t) {
    size_t p = kSize;
    cuabi_status s = cuabi_buffer_get_pitch(As<cuabi_buffer>(h), &p);
    *t = p != kSize;
    return s;
  });
  add("cuabi_buffer_fill", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_fill(As<cuabi_buffer>(h), 0, 7, 4, 1);
  });
  add("cuabi_buffer_fill_async", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_fill_async(As<cuabi_buffer>(h), 0, 7, 2, 1, nullptr);
  });
  add("cuabi_array_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT;
    d.width = 16;
    cuabi_array a = Out<cuabi_array>();
    cuabi_status s = cuabi_array_create(As<cuabi_device>(h), &d, &a);
    *t = a != Out<cuabi_array>();
    return s;
  });
  add("cuabi_array_get_desc", Kind::kArray, [](uintptr_t h, bool* t) {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT;
    d.width = kSize;
    cuabi_status s = cuabi_array_get_desc(As<cuabi_array>(h), &d);
    *t = d.width != kSize;
    return s;
  });
  add("cuabi_array_get_element_size", Kind::kArray, [](uintptr_t h, bool* t) {
    size_t v = kSize;
    cuabi_status s = cuabi_array_get_element_size(As<cuabi_array>(h), &v);
    *t = v != kSize;
    return s;
  });
  add("cuabi_array_get_handle", Kind::kArray, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_array_get_handle(As<cuabi_array>(h), &v);
    *t = v != kU64;
    return s;
  });
  add("cuabi_texture_get_handle", Kind::kTexture, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_texture_get_handle(As<cuabi_texture>(h), &v);
    *t = v != kU64;
    return s;
  });
  add("cuabi_surface_create", Kind::kArray, [](uintptr_t h, bool* t) {
    cuabi_surface x = Out<cuabi_surface>();
    cuabi_status s = cuabi_surface_create(As<cuabi_array>(h), &x);
    *t = x != Out<cuabi_surface>();
    return s;
  });
  add("cuabi_surface_get_handle", Kind::kSurface, [](uintptr_t h, bool* t) {
    uint64_t v = kU64;
    cuabi_status s = cuabi_surface_get_handle(As<cuabi_surface>(h), &v);
    *t = v != kU64;
    return s;
  });

  // Linking, libraries and module listings.
  add("cuabi_program_get_lto_ir", Kind::kProgram, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_program_get_lto_ir(As<cuabi_program>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_module_get_compile_log", Kind::kModule, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_module_get_compile_log(As<cuabi_module>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_module_get_kernel_count", Kind::kModule, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_module_get_kernel_count(As<cuabi_module>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_module_get_kernel_name", Kind::kModule, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s =
        cuabi_module_get_kernel_name(As<cuabi_module>(h), 0, CUABI_NAME_SYMBOL, nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_linker_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_linker l = Out<cuabi_linker>();
    cuabi_status s = cuabi_linker_create(As<cuabi_device>(h), nullptr, &l);
    *t = l != Out<cuabi_linker>();
    return s;
  });
  add("cuabi_linker_get_backend", Kind::kLinker, [](uintptr_t h, bool* t) {
    cuabi_link_backend b = static_cast<cuabi_link_backend>(kI32);
    cuabi_status s = cuabi_linker_get_backend(As<cuabi_linker>(h), &b);
    *t = b != static_cast<cuabi_link_backend>(kI32);
    return s;
  });
  add("cuabi_linker_add_data", Kind::kLinker, [](uintptr_t h, bool*) {
    return cuabi_linker_add_data(As<cuabi_linker>(h), CUABI_LINK_INPUT_PTX, g_host, 16, nullptr);
  });
  add("cuabi_linker_add_file", Kind::kLinker, [](uintptr_t h, bool*) {
    return cuabi_linker_add_file(As<cuabi_linker>(h), CUABI_LINK_INPUT_AUTO, "/nonexistent.ptx");
  });
  add("cuabi_linker_add_program", Kind::kLinker, [](uintptr_t h, bool*) {
    return cuabi_linker_add_program(As<cuabi_linker>(h), nullptr);
  });
  add("cuabi_linker_link", Kind::kLinker, [](uintptr_t h, bool* t) {
    cuabi_module m = Out<cuabi_module>();
    cuabi_status s = cuabi_linker_link(As<cuabi_linker>(h), &m);
    *t = m != Out<cuabi_module>();
    return s;
  });
  add("cuabi_linker_get_log", Kind::kLinker, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_linker_get_log(As<cuabi_linker>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_linker_get_image", Kind::kLinker, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_linker_get_image(As<cuabi_linker>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_library_get_module", Kind::kLibrary, [](uintptr_t h, bool* t) {
    cuabi_module m = Out<cuabi_module>();
    cuabi_status s = cuabi_library_get_module(As<cuabi_library>(h), nullptr, &m);
    *t = m != Out<cuabi_module>();
    return s;
  });

  // Green contexts and their SM resources.
  add("cuabi_device_get_sm_resource", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_sm_resource r = Out<cuabi_sm_resource>();
    cuabi_status s = cuabi_device_get_sm_resource(As<cuabi_device>(h), &r);
    *t = r != Out<cuabi_sm_resource>();
    return s;
  });
  add("cuabi_sm_resource_get_sm_count", Kind::kSmResource, [](uintptr_t h, bool* t) {
    uint32_t n = kI32;
    cuabi_status s = cuabi_sm_resource_get_sm_count(As<cuabi_sm_resource>(h), &n);
    *t = n != static_cast<uint32_t>(kI32);
    return s;
  });
  add("cuabi_sm_resource_get_min_partition_size", Kind::kSmResource, [](uintptr_t h, bool* t) {
    uint32_t n = kI32;
    cuabi_status s = cuabi_sm_resource_get_min_partition_size(As<cuabi_sm_resource>(h), &n);
    *t = n != static_cast<uint32_t>(kI32);
    return s;
  });
  add("cuabi_sm_resource_get_alignment", Kind::kSmResource, [](uintptr_t h, bool* t) {
    uint32_t n = kI32;
    cuabi_status s = cuabi_sm_resource_get_alignment(As<cuabi_sm_resource>(h), &n);
    *t = n != static_cast<uint32_t>(kI32);
    return s;
  });
  add("cuabi_sm_resource_get_group_count", Kind::kSmResource, [](uintptr_t h, bool* t) {
    uint32_t n = kI32;
    cuabi_status s = cuabi_sm_resource_get_group_count(As<cuabi_sm_resource>(h), 0, &n);
    *t = n != static_cast<uint32_t>(kI32);
    return s;
  });
  add("cuabi_sm_resource_split", Kind::kSmResource, [](uintptr_t h, bool* t) {
    cuabi_sm_resource r = Out<cuabi_sm_resource>();
    cuabi_status s = cuabi_sm_resource_split(As<cuabi_sm_resource>(h), 1, 0, 0, &r);
    *t = r != Out<cuabi_sm_resource>();
    return s;
  });
  add("cuabi_green_context_create", Kind::kSmResource, [](uintptr_t h, bool* t) {
    cuabi_green_context c = Out<cuabi_green_context>();
    cuabi_status s = cuabi_green_context_create(As<cuabi_sm_resource>(h), &c);
    *t = c != Out<cuabi_green_context>();
    return s;
  });
  add("cuabi_green_context_get_sm_count", Kind::kGreenContext, [](uintptr_t h, bool* t) {
    uint32_t n = kI32;
    cuabi_status s = cuabi_green_context_get_sm_count(As<cuabi_green_context>(h), &n);
    *t = n != static_cast<uint32_t>(kI32);
    return s;
  });
  add("cuabi_green_context_get_sm_resource", Kind::kGreenContext, [](uintptr_t h, bool* t) {
    cuabi_sm_resource r = Out<cuabi_sm_resource>();
    cuabi_status s = cuabi_green_context_get_sm_resource(As<cuabi_green_context>(h), &r);
    *t = r != Out<cuabi_sm_resource>();
    return s;
  });
  add("cuabi_green_context_create_stream", Kind::kGreenContext, [](uintptr_t h, bool* t) {
    cuabi_stream st = Out<cuabi_stream>();
    cuabi_status s = cuabi_green_context_create_stream(As<cuabi_green_context>(h),
                                                       CUABI_STREAM_NON_BLOCKING, 0, &st);
    *t = st != Out<cuabi_stream>();
    return s;
  });
  add("cuabi_green_context_check_stream", Kind::kGreenContext, [](uintptr_t h, bool*) {
    return cuabi_green_context_check_stream(As<cuabi_green_context>(h), nullptr);
  });

  // Tensor maps.
  add("cuabi_tensor_map_encode_tiled", Kind::kBuffer, [](uintptr_t h, bool* t) {
    const size_t sizes[1] = {64}, strides[1] = {4}, box[1] = {16};
    cuabi_tensor_map m = Out<cuabi_tensor_map>();
    cuabi_status s = cuabi_tensor_map_encode_tiled(
        As<cuabi_buffer>(h), 0, CUABI_TENSOR_FLOAT32, sizes, 1, strides, 1, box, 1, nullptr, 0,
        CUABI_TENSOR_INTERLEAVE_NONE, CUABI_TENSOR_SWIZZLE_NONE, CUABI_TENSOR_L2_PROMOTION_NONE,
        CUABI_TENSOR_OOB_FILL_ZERO, &m);
    *t = m != Out<cuabi_tensor_map>();
    return s;
  });
  add("cuabi_tensor_map_encode_im2col", Kind::kBuffer, [](uintptr_t h, bool* t) {
    const size_t sizes[3] = {16, 8, 2}, strides[3] = {4, 64, 512};
    const int32_t lower[1] = {0}, upper[1] = {0};
    cuabi_tensor_map m = Out<cuabi_tensor_map>();
    cuabi_status s = cuabi_tensor_map_encode_im2col(
        As<cuabi_buffer>(h), 0, CUABI_TENSOR_FLOAT32, sizes, 3, strides, 3, nullptr, 0, lower, 1,
        upper, 1, 16, 8, CUABI_TENSOR_INTERLEAVE_NONE, CUABI_TENSOR_SWIZZLE_NONE,
        CUABI_TENSOR_L2_PROMOTION_NONE, CUABI_TENSOR_OOB_FILL_ZERO, &m);
    *t = m != Out<cuabi_tensor_map>();
    return s;
  });
  add("cuabi_tensor_map_replace_address", Kind::kTensorMap, [](uintptr_t h, bool*) {
    return cuabi_tensor_map_replace_address(As<cuabi_tensor_map>(h), nullptr, 0);
  });
  add("cuabi_tensor_map_get_bytes", Kind::kTensorMap, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_tensor_map_get_bytes(As<cuabi_tensor_map>(h), nullptr, &n);
    *t = n != kSize;
    return s;
  });

  // Virtual memory.
  add("cuabi_device_get_vm_granularity", Kind::kDevice, [](uintptr_t h, bool* t) {
    size_t a = kSize, b = kSize;
    cuabi_status s = cuabi_device_get_vm_granularity(As<cuabi_device>(h), &a, &b);
    *t = a != kSize || b != kSize;
    return s;
  });
  add("cuabi_physical_memory_create", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_physical_memory m = Out<cuabi_physical_memory>();
    cuabi_status s = cuabi_physical_memory_create(As<cuabi_device>(h), 2 << 20, 0, &m);
    *t = m != Out<cuabi_physical_memory>();
    return s;
  });
  add("cuabi_physical_memory_import_fd", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_physical_memory m = Out<cuabi_physical_memory>();
    cuabi_status s = cuabi_physical_memory_import_fd(As<cuabi_device>(h), 0, 2 << 20, &m);
    *t = m != Out<cuabi_physical_memory>();
    return s;
  });
  add("cuabi_physical_memory_free", Kind::kPhysicalMemory, [](uintptr_t h, bool*) {
    return cuabi_physical_memory_free(As<cuabi_physical_memory>(h));
  });
  add("cuabi_physical_memory_get_size", Kind::kPhysicalMemory, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_physical_memory_get_size(As<cuabi_physical_memory>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_physical_memory_get_device_ordinal", Kind::kPhysicalMemory, [](uintptr_t h, bool* t) {
    int32_t o = kI32;
    cuabi_status s = cuabi_physical_memory_get_device_ordinal(As<cuabi_physical_memory>(h), &o);
    *t = o != kI32;
    return s;
  });
  add("cuabi_physical_memory_export_fd", Kind::kPhysicalMemory, [](uintptr_t h, bool* t) {
    int32_t fd = kI32;
    cuabi_status s = cuabi_physical_memory_export_fd(As<cuabi_physical_memory>(h), &fd);
    *t = fd != kI32;
    return s;
  });
  add("cuabi_address_range_reserve", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_address_range r = Out<cuabi_address_range>();
    cuabi_status s = cuabi_address_range_reserve(As<cuabi_device>(h), 2 << 20, &r);
    *t = r != Out<cuabi_address_range>();
    return s;
  });
  add("cuabi_address_range_get_pointer", Kind::kAddressRange, [](uintptr_t h, bool* t) {
    uint64_t p = kU64;
    cuabi_status s = cuabi_address_range_get_pointer(As<cuabi_address_range>(h), &p);
    *t = p != kU64;
    return s;
  });
  add("cuabi_address_range_get_size", Kind::kAddressRange, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_address_range_get_size(As<cuabi_address_range>(h), &n);
    *t = n != kSize;
    return s;
  });
  add("cuabi_address_range_map", Kind::kAddressRange, [](uintptr_t h, bool*) {
    return cuabi_address_range_map(As<cuabi_address_range>(h), 0, nullptr);
  });
  add("cuabi_address_range_unmap", Kind::kAddressRange, [](uintptr_t h, bool*) {
    return cuabi_address_range_unmap(As<cuabi_address_range>(h), 0, 2 << 20);
  });
  add("cuabi_address_range_set_access", Kind::kAddressRange, [](uintptr_t h, bool*) {
    return cuabi_address_range_set_access(As<cuabi_address_range>(h), 0, 2 << 20, nullptr,
                                          CUABI_VM_ACCESS_READWRITE);
  });
  add("cuabi_buffer_from_range", Kind::kAddressRange, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_from_range(As<cuabi_address_range>(h), nullptr, 0, 64, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_buffer_alloc_growable", Kind::kDevice, [](uintptr_t h, bool* t) {
    cuabi_buffer b = Out<cuabi_buffer>();
    cuabi_status s = cuabi_buffer_alloc_growable(As<cuabi_device>(h), 0, 2 << 20, &b);
    *t = b != Out<cuabi_buffer>();
    return s;
  });
  add("cuabi_buffer_grow", Kind::kBuffer, [](uintptr_t h, bool*) {
    return cuabi_buffer_grow(As<cuabi_buffer>(h), 2 << 20);
  });
  add("cuabi_buffer_get_reserved_size", Kind::kBuffer, [](uintptr_t h, bool* t) {
    size_t n = kSize;
    cuabi_status s = cuabi_buffer_get_reserved_size(As<cuabi_buffer>(h), &n);
    *t = n != kSize;
    return s;
  });
  return v;
}

std::vector<ReleaseCall> MakeReleaseCalls() {
  return {
#define CUABI_TEST_RELEASE(Name, name)       \
  {"cuabi_" #name "_release", Kind::k##Name, \
   [](uintptr_t h) { cuabi_##name##_release(As<cuabi_##name>(h)); }},
      CUABI_HANDLE_KINDS(CUABI_TEST_RELEASE)
#undef CUABI_TEST_RELEASE
  };
}

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
#define CUABI_TEST_KIND_NAME(Name, name) \
  case Kind::k##Name:                    \
    return #name;
    CUABI_HANDLE_KINDS(CUABI_TEST_KIND_NAME)
#undef CUABI_TEST_KIND_NAME
  }
  return "?";
}

std::vector<Kind> AllKinds() {
  return {
#define CUABI_TEST_KIND_VALUE(Name, name) Kind::k##Name,
      CUABI_HANDLE_KINDS(CUABI_TEST_KIND_VALUE)
#undef CUABI_TEST_KIND_VALUE
  };
}

const std::vector<HandleCall>& HandleCalls() {
  static const std::vector<HandleCall> calls = MakeHandleCalls();
  return calls;
}

const std::vector<ReleaseCall>& ReleaseCalls() {
  static const std::vector<ReleaseCall> calls = MakeReleaseCalls();
  return calls;
}

void ReleaseAny(Kind kind, uintptr_t handle) {
  for (const ReleaseCall& r : ReleaseCalls()) {
    if (r.kind == kind) r.release(handle);
  }
}

}  // namespace cuabi_test
