// Kernel launches: the configuration and the arguments are checked against
// what the kernel and the device accept before the driver sees them. Every
// check is a comparison with a value cached when the function was looked up.
#include "launch.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "structs.hpp"

namespace cuabi {

namespace {

[[noreturn]] void fail_config(const std::string& what) { fail_invalid("launch configuration: " + what); }

std::string dims(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

void check_config(const Function& f, const cuabi_launch_config& c) {
  if (c.grid_x == 0 || c.grid_y == 0 || c.grid_z == 0)
    fail_config("grid " + dims(c.grid_x, c.grid_y, c.grid_z) + " has a zero dimension");
  if (c.block_x == 0 || c.block_y == 0 || c.block_z == 0)
    fail_config("block " + dims(c.block_x, c.block_y, c.block_z) + " has a zero dimension");
  const Device& d = *f.module->device;
  if (c.block_x > d.max_block[0] || c.block_y > d.max_block[1] || c.block_z > d.max_block[2])
    fail_config("block " + dims(c.block_x, c.block_y, c.block_z) + " exceeds the device's limit " +
                dims(d.max_block[0], d.max_block[1], d.max_block[2]));
  uint64_t threads = uint64_t(c.block_x) * c.block_y * c.block_z;
  if (threads > f.max_threads)
    fail_config("block " + dims(c.block_x, c.block_y, c.block_z) + " has " +
                std::to_string(threads) + " threads; kernel '" + f.name + "' allows at most " +
                std::to_string(f.max_threads));
  if (c.grid_x > d.max_grid[0] || c.grid_y > d.max_grid[1] || c.grid_z > d.max_grid[2])
    fail_config("grid " + dims(c.grid_x, c.grid_y, c.grid_z) + " exceeds the device's limit " +
                dims(d.max_grid[0], d.max_grid[1], d.max_grid[2]));
  uint32_t shared = f.max_dynamic_shared.load(std::memory_order_relaxed);
  if (c.shared_mem_bytes > shared)
    fail_config(std::to_string(c.shared_mem_bytes) + " bytes of dynamic shared memory; kernel '" +
                f.name + "' may use at most " + std::to_string(shared) +
                (shared < d.max_shared_optin
                     ? " (raise it with cuabi_function_set_attribute("
                       "CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES), up to " +
                           std::to_string(d.max_shared_optin) + ")"
                     : std::string()));
}

inline const cuabi_launch_config& config_of(const cuabi_launch_config* given,
                                            cuabi_launch_config* copy) {
  if (!given) fail_invalid("config is NULL");
  if (given->struct_size == sizeof(cuabi_launch_config)) return *given;
  *copy = CUABI_LAUNCH_CONFIG_INIT;
  read_struct(given, copy, "config");
  return *copy;
}

void check_count(const Function& f, size_t count) {
  if (f.params_known && count != f.params.size())
    fail_invalid("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                 (f.params.size() == 1 ? " parameter" : " parameters") + ", but " +
                 std::to_string(count) + (count == 1 ? " was" : " were") + " given");
}

void submit(const Function& f, const cuabi_launch_config& c, const Pin<Stream>& stream,
            void** params, void** extra) {
  const Device& device = *f.module->device;
  f.module->enter();
  CUstream s = stream_for(stream, device);
  check(driver().cuLaunchKernel(f.function, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y,
                                c.block_z, c.shared_mem_bytes, s, params, extra),
        "cuLaunchKernel");
}

}  // namespace

void launch(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
            void* const* params, size_t num_params) {
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(f, c);
  check_count(f, num_params);
  if (num_params > 0 && !params) fail_invalid("params is NULL but num_params is " +
                                              std::to_string(num_params));
  for (size_t i = 0; i < num_params; ++i)
    if (!params[i]) fail_invalid("params[" + std::to_string(i) + "] is NULL");
  submit(f, c, stream, const_cast<void**>(params), nullptr);
}

void need_params(const Function& f) {
  if (!f.params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "the driver does not report kernel parameters (cuFuncGetParamInfo needs CUDA 12.4)");
}

void check_arg_size(const Function& f, size_t index, size_t size) {
  need_params(f);
  if (index >= f.params.size())
    fail_invalid("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                 (f.params.size() == 1 ? " parameter" : " parameters") + "; there is no parameter " +
                 std::to_string(index));
  if (size != f.params[index].size)
    fail_invalid("kernel '" + f.name + "' parameter " + std::to_string(index) + " is " +
                 std::to_string(f.params[index].size) + " bytes, but the argument given is " +
                 std::to_string(size) + " bytes");
}

void check_arg_sizes(const Function& f, const size_t* sizes, size_t count, const char* what) {
  need_params(f);
  if (count > 0 && !sizes) fail_invalid(std::string(what) + " is NULL");
  check_count(f, count);
  for (size_t i = 0; i < count; ++i) check_arg_size(f, i, sizes[i]);
}

void launch_sized(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                  void* const* params, const size_t* sizes, size_t num_params) {
  check_arg_sizes(f, sizes, num_params, "param_sizes");
  launch(f, config, stream, params, num_params);
}

void launch_packed(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                   const void* args, size_t args_size) {
  if (!f.params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "packed launches need the kernel's parameter layout, which the driver does not report "
         "(cuFuncGetParamInfo needs CUDA 12.4)");
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(f, c);
  if (args_size != f.args_size)
    fail_invalid("kernel '" + f.name + "' takes a " + std::to_string(f.args_size) +
                 "-byte argument block (" + std::to_string(f.params.size()) +
                 " parameters), but " + std::to_string(args_size) + " bytes were given");
  if (args_size > 0 && !args) fail_invalid("args is NULL");
  if (args_size == 0) {
    submit(f, c, stream, nullptr, nullptr);
    return;
  }
  size_t size = args_size;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(args),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  submit(f, c, stream, nullptr, extra);
}

LaunchPlan::LaunchPlan(Ref<Function> fn, const cuabi_launch_config& cfg, Ref<Stream> s)
    : Object(kKind), function(std::move(fn)), stream(std::move(s)), config(cfg) {
  if (!function->params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "launch plans need the kernel's parameter layout, which the driver does not report "
         "(cuFuncGetParamInfo needs CUDA 12.4)");
  check_config(*function, config);
  const Device& device = *function->module->device;
  if (stream && stream->device.get() != &device)
    fail_invalid("the stream belongs to device " + std::to_string(stream->device->ordinal) +
                 ", the kernel to device " + std::to_string(device.ordinal));
  args_size = function->args_size;
  // 64-byte aligned (one cache line) and at least one line long, so a binding
  // may view it as any parameter type.
  size_t capacity = (args_size + 63) & ~size_t(63);
  if (capacity == 0) capacity = 64;
  args = std::aligned_alloc(64, capacity);
  if (!args) throw std::bad_alloc();
  std::memset(args, 0, capacity);
  extra_size_ = args_size;
  extra_[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
  extra_[1] = args;
  extra_[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
  extra_[3] = &extra_size_;
  extra_[4] = CU_LAUNCH_PARAM_END;
}

LaunchPlan::~LaunchPlan() { std::free(args); }

void LaunchPlan::launch() {
  const Function& f = *function;
  f.module->enter();
  CUstream s = nullptr;
  if (stream) {
    f.module->device->check_epoch(stream->epoch);
    s = stream->stream;
  }
  const cuabi_launch_config& c = config;
  check(driver().cuLaunchKernel(f.function, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y,
                                c.block_z, c.shared_mem_bytes, s, nullptr,
                                args_size ? extra_ : nullptr),
        "cuLaunchKernel");
}

Ref<LaunchPlan> make_plan(Ref<Function> function, const cuabi_launch_config* config,
                          Ref<Stream> stream) {
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  cuabi_launch_config owned = c;
  owned.struct_size = sizeof(cuabi_launch_config);
  return make<LaunchPlan>(std::move(function), owned, std::move(stream));
}

}  // namespace cuabi
