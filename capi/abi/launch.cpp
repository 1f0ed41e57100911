// Shims for launches and launch plans.
#include "launch.hpp"
#include "occupancy.hpp"

#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_launch_config_init(cuabi_launch_config* config, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_launch_config defaults = CUABI_LAUNCH_CONFIG_INIT;
    init_struct(config, struct_size, defaults, "config");
  });
}

cuabi_status cuabi_function_launch(cuabi_function function, const cuabi_launch_config* config,
                                   cuabi_stream stream, void* const* params, size_t num_params) {
  return on_stream(__func__, function, "function", stream, [&](Function& f, const Pin<Stream>& s) {
    launch(f, config, s, params, num_params);
  });
}

cuabi_status cuabi_function_launch_sized(cuabi_function function, const cuabi_launch_config* config,
                                         cuabi_stream stream, void* const* params,
                                         const size_t* param_sizes, size_t num_params) {
  return on_stream(__func__, function, "function", stream, [&](Function& f, const Pin<Stream>& s) {
    launch_sized(f, config, s, params, param_sizes, num_params);
  });
}

cuabi_status cuabi_function_launch_packed(cuabi_function function,
                                          const cuabi_launch_config* config, cuabi_stream stream,
                                          const void* args, size_t args_size) {
  return on_stream(__func__, function, "function", stream, [&](Function& f, const Pin<Stream>& s) {
    launch_packed(f, config, s, args, args_size);
  });
}

cuabi_status cuabi_launch_plan_create(cuabi_function function, const cuabi_launch_config* config,
                                      cuabi_stream stream, cuabi_launch_plan* out) {
  return guard(__func__, [&] {
    Ref<Function> f = acquire<Function>(function, "function");
    Ref<Stream> s;
    if (stream) s = acquire<Stream>(stream, "stream");
    need(out, "out");
    *out = publish<cuabi_launch_plan>(make_plan(std::move(f), config, std::move(s)));
  });
}

void cuabi_launch_plan_release(cuabi_launch_plan plan) { release_handle<LaunchPlan>(plan); }

cuabi_status cuabi_launch_plan_get_args(cuabi_launch_plan plan, void** args, size_t* size) {
  return get(__func__, plan, "plan", args, "args", size, "size",
             [](const LaunchPlan& p) { return std::make_pair(p.args, p.args_size); });
}

cuabi_status cuabi_launch_plan_launch(cuabi_launch_plan plan) {
  return with(__func__, plan, "plan", [](LaunchPlan& p) { p.launch(); });
}

cuabi_status cuabi_function_get_active_blocks_per_sm(cuabi_function function, uint32_t block_size,
                                                   size_t dynamic_shared_bytes, uint32_t* blocks) {
  return with(__func__, function, "function", [&](Function& f) {
    need(blocks, "blocks");
    *blocks = active_blocks_per_sm(f, block_size, dynamic_shared_bytes);
  });
}

cuabi_status cuabi_function_suggest_block_size(cuabi_function function,
                                               size_t shared_bytes_per_block,
                                               size_t shared_bytes_per_thread,
                                               uint32_t block_size_limit, uint32_t* block_size,
                                               uint32_t* min_grid_size) {
  return get(__func__, function, "function", block_size, "block_size", min_grid_size,
             "min_grid_size", [&](const Function& f) {
               return suggest_block_size(f, shared_bytes_per_block, shared_bytes_per_thread,
                                         block_size_limit);
             });
}

cuabi_status cuabi_function_suggest_config(cuabi_function function, uint64_t elements,
                                           size_t shared_bytes_per_block,
                                           size_t shared_bytes_per_thread,
                                           cuabi_launch_config* config) {
  return with(__func__, function, "function", [&](Function& f) {
    need(config, "config");
    suggest_config(f, elements, shared_bytes_per_block, shared_bytes_per_thread, config);
  });
}

cuabi_status cuabi_function_get_available_dynamic_shared(cuabi_function function,
                                                         uint32_t blocks_per_sm,
                                                         uint32_t block_size, size_t* bytes) {
  return with(__func__, function, "function", [&](Function& f) {
    need(bytes, "bytes");
    *bytes = available_dynamic_shared(f, blocks_per_sm, block_size);
  });
}

cuabi_status cuabi_function_get_max_cluster_size(cuabi_function function,
                                                 const cuabi_launch_config* config,
                                                 uint32_t* cluster_size) {
  return with(__func__, function, "function", [&](Function& f) {
    need(config, "config");
    need(cluster_size, "cluster_size");
    *cluster_size = max_cluster_size(f, config);
  });
}

cuabi_status cuabi_function_get_max_active_clusters(cuabi_function function,
                                                    const cuabi_launch_config* config,
                                                    uint32_t* clusters) {
  return with(__func__, function, "function", [&](Function& f) {
    need(config, "config");
    need(clusters, "clusters");
    *clusters = max_active_clusters(f, config);
  });
}

}  // extern "C"
