// Shims for launches and launch plans.
#include "launch.hpp"

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

}  // extern "C"
