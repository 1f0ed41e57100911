// Shims for kernels: parameter layout, argument checks, attributes.
#include "driver_log.hpp"
#include "launch.hpp"
#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

void cuabi_function_release(cuabi_function function) { release_handle<Function>(function); }

cuabi_status cuabi_function_get_param_count(cuabi_function function, size_t* count) {
  return get(__func__, function, "function", count, "count", [](const Function& f) {
    need_params(f);
    return f.params.size();
  });
}

cuabi_status cuabi_function_get_params(cuabi_function function, cuabi_param_info* params,
                                       size_t* count, size_t* args_size) {
  return with(__func__, function, "function", [&](Function& f) {
    need(count, "count");
    need_params(f);
    const size_t n = f.params.size();
    if (params && *count < n) {
      const size_t have = *count;
      *count = n;
      fail(CUABI_ERROR_INSUFFICIENT_BUFFER, "params holds " + std::to_string(have) +
                                                " entries; kernel '" + f.name + "' has " +
                                                std::to_string(n) + " parameters");
    }
    if (params)
      for (size_t i = 0; i < n; ++i) params[i] = {f.params[i].offset, f.params[i].size};
    *count = n;
    if (args_size) *args_size = f.args_size;
  });
}

cuabi_status cuabi_function_check_arg_sizes(cuabi_function function, const size_t* sizes,
                                            size_t count) {
  return with(__func__, function, "function",
              [&](Function& f) { check_arg_sizes(f, sizes, count, "sizes"); });
}

cuabi_status cuabi_function_check_arg_size(cuabi_function function, size_t index, size_t size) {
  return with(__func__, function, "function", [&](Function& f) { check_arg_size(f, index, size); });
}

cuabi_status cuabi_function_get_args_size(cuabi_function function, size_t* size) {
  return get(__func__, function, "function", size, "size", [](const Function& f) {
    need_params(f);
    return f.args_size;
  });
}

cuabi_status cuabi_function_get_name(cuabi_function function, char* buf, size_t* size) {
  return get_string(__func__, function, "function", buf, size, &Function::name);
}

cuabi_status cuabi_function_get_attribute(cuabi_function function,
                                          cuabi_function_attribute attribute, int32_t* value) {
  return get(__func__, function, "function", value, "value", [&](const Function& f) {
    f.module->enter();
    int v = 0;
    CUresult r =
        driver().cuFuncGetAttribute(&v, static_cast<CUfunction_attribute>(attribute), f.function);
    if (r == CUDA_ERROR_INVALID_VALUE)
      fail_invalid("attribute " + std::to_string(attribute) +
                   " is not a CUfunction_attribute this driver knows");
    check(r, "cuFuncGetAttribute");
    return v;
  });
}

cuabi_status cuabi_function_set_attribute(cuabi_function function,
                                          cuabi_function_attribute attribute, int32_t value) {
  return with(__func__, function, "function", [&](Function& f) {
    f.module->enter();
    CUresult r = driver().cuFuncSetAttribute(f.function,
                                             static_cast<CUfunction_attribute>(attribute), value);
    if (r == CUDA_ERROR_INVALID_VALUE)
      fail_invalid("attribute " + std::to_string(attribute) + " cannot be set to " +
                   std::to_string(value) + driver_log_of_failure());
    check(r, "cuFuncSetAttribute");
    // What the launch checks compare with follows the driver's value.
    const uint32_t v = value > 0 ? static_cast<uint32_t>(value) : 0;
    f.cooperative_occupancy.store(0, std::memory_order_release);
    switch (attribute) {
      case CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        f.max_dynamic_shared.store(v, std::memory_order_relaxed);
        break;
      case CUABI_FUNC_REQUIRED_CLUSTER_WIDTH:
        f.required_cluster[0].store(v, std::memory_order_relaxed);
        break;
      case CUABI_FUNC_REQUIRED_CLUSTER_HEIGHT:
        f.required_cluster[1].store(v, std::memory_order_relaxed);
        break;
      case CUABI_FUNC_REQUIRED_CLUSTER_DEPTH:
        f.required_cluster[2].store(v, std::memory_order_relaxed);
        break;
      case CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        f.non_portable_cluster.store(value != 0, std::memory_order_relaxed);
        break;
      default:
        break;
    }
  });
}

}  // extern "C"
