// The extern "C" boundary: validate, translate handles, call the core, map
// errors. Nothing here may throw.
#include <cstring>
#include <new>
#include <string>

#include "cuabi/cuabi.h"
#include "launch.hpp"
#include "memory.hpp"
#include "module.hpp"
#include "objects.hpp"
#include "structs.hpp"
#include "text.hpp"

using namespace cuabi;

namespace {

template <class F>
cuabi_status guard(const char* fn, F&& body) noexcept {
  try {
    body();
    return CUABI_SUCCESS;
  } catch (const Error& e) {
    try {
      set_last_error(e.status(), e.code(), std::string(fn) + ": " + e.message(), e.log);
    } catch (...) {
    }
    return e.status();
  } catch (const std::bad_alloc&) {
    try {
      set_last_error(CUABI_ERROR_OUT_OF_MEMORY, 0, std::string(fn) + ": out of host memory", "");
    } catch (...) {
    }
    return CUABI_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    try {
      set_last_error(CUABI_ERROR_INTERNAL, 0, std::string(fn) + ": " + e.what(), "");
    } catch (...) {
    }
    return CUABI_ERROR_INTERNAL;
  } catch (...) {
    try {
      set_last_error(CUABI_ERROR_INTERNAL, 0, std::string(fn) + ": unknown internal error", "");
    } catch (...) {
    }
    return CUABI_ERROR_INTERNAL;
  }
}

template <class T>
void need(T* out, const char* name) {
  if (!out) fail_invalid(std::string(name) + " is NULL");
}

// The two-call pattern: `n` bytes of `data` into `buf` of *size bytes.
void copy_out(const void* data, size_t n, void* buf, size_t* size) {
  need(size, "size");
  if (!buf) {
    *size = n;
    return;
  }
  if (*size < n) {
    size_t have = *size;
    *size = n;
    fail(CUABI_ERROR_INSUFFICIENT_BUFFER, "the buffer holds " + std::to_string(have) +
                                              " bytes; " + std::to_string(n) + " are needed");
  }
  if (n) std::memcpy(buf, data, n);
  *size = n;
}

void copy_string(const std::string& s, char* buf, size_t* size) {
  copy_out(s.c_str(), s.size() + 1, buf, size);
}

// Where a call may answer NOT_READY without it counting as an error.
cuabi_status ready_or_not(const char* fn, CUresult r) {
  if (r == CUDA_ERROR_NOT_READY) return CUABI_ERROR_NOT_READY;
  return guard(fn, [&] { check(r, fn); });
}

}  // namespace

extern "C" {

/* Versions, statuses and the last error --------------------------------- */

uint32_t cuabi_version(void) { return CUABI_VERSION_NUMBER; }
const char* cuabi_version_string(void) { return CUABI_VERSION_STRING; }
const char* cuabi_status_get_name(cuabi_status status) { return status_name(status); }
const char* cuabi_status_get_description(cuabi_status status) { return status_description(status); }
const char* cuabi_last_error_message(void) { return last_error().message.c_str(); }
cuabi_status cuabi_last_error_status(void) { return last_error().status; }
int32_t cuabi_last_error_code(void) { return last_error().code; }

cuabi_status cuabi_last_error_log(char* buf, size_t* size) {
  if (!size) return CUABI_ERROR_INVALID_ARGUMENT;  // leaves the state it reports alone
  const std::string& log = last_error().log;
  size_t n = log.size() + 1;
  if (!buf) {
    *size = n;
    return CUABI_SUCCESS;
  }
  if (*size < n) {
    *size = n;
    return CUABI_ERROR_INSUFFICIENT_BUFFER;
  }
  std::memcpy(buf, log.c_str(), n);
  *size = n;
  return CUABI_SUCCESS;
}

void cuabi_last_error_clear(void) {
  try {
    set_last_error(CUABI_SUCCESS, 0, "", "");
  } catch (...) {
  }
}

/* Loading ----------------------------------------------------------------- */

cuabi_status cuabi_init(void) {
  return guard(__func__, [&] { driver(); });
}

cuabi_status cuabi_driver_get_version(int32_t* version) {
  return guard(__func__, [&] {
    need(version, "version");
    driver();
    *version = driver_version();
  });
}

cuabi_status cuabi_driver_get_path(char* buf, size_t* size) {
  return guard(__func__, [&] {
    driver();
    copy_string(driver_path(), buf, size);
  });
}

cuabi_status cuabi_nvrtc_get_version(int32_t* major, int32_t* minor) {
  return guard(__func__, [&] {
    need(major, "major");
    need(minor, "minor");
    const NvrtcApi& n = nvrtc();
    *major = n.major;
    *minor = n.minor;
  });
}

cuabi_status cuabi_nvrtc_get_path(char* buf, size_t* size) {
  return guard(__func__, [&] { copy_string(nvrtc().path, buf, size); });
}

/* Devices ------------------------------------------------------------------ */

cuabi_status cuabi_device_get_count(int32_t* count) {
  return guard(__func__, [&] {
    need(count, "count");
    *count = Device::count();
  });
}

cuabi_status cuabi_device_get(int32_t ordinal, cuabi_device* out) {
  return guard(__func__, [&] {
    need(out, "out");
    *out = publish<cuabi_device>(Device::get(ordinal));
  });
}

void cuabi_device_release(cuabi_device device) { release_handle<Device>(device); }

cuabi_status cuabi_device_get_ordinal(cuabi_device device, int32_t* ordinal) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(ordinal, "ordinal");
    *ordinal = d->ordinal;
  });
}

cuabi_status cuabi_device_get_name(cuabi_device device, char* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    copy_string(d->name, buf, size);
  });
}

cuabi_status cuabi_device_get_compute_capability(cuabi_device device, int32_t* major,
                                                 int32_t* minor) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(major, "major");
    need(minor, "minor");
    *major = d->cc_major;
    *minor = d->cc_minor;
  });
}

cuabi_status cuabi_device_get_total_memory(cuabi_device device, size_t* bytes) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(bytes, "bytes");
    size_t total = 0;
    check(driver().cuDeviceTotalMem(&total, d->device), "cuDeviceTotalMem");
    *bytes = total;
  });
}

cuabi_status cuabi_device_get_memory_info(cuabi_device device, size_t* free_bytes,
                                          size_t* total_bytes) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(free_bytes, "free_bytes");
    need(total_bytes, "total_bytes");
    d->make_current();
    size_t f = 0, t = 0;
    check(driver().cuMemGetInfo(&f, &t), "cuMemGetInfo");
    *free_bytes = f;
    *total_bytes = t;
  });
}

cuabi_status cuabi_device_get_attribute(cuabi_device device, int32_t cu_attribute,
                                        int32_t* value) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(value, "value");
    int v = 0;
    CUresult r = driver().cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(cu_attribute),
                                               d->device);
    if (r == CUDA_ERROR_INVALID_VALUE)
      fail_invalid("cu_attribute " + std::to_string(cu_attribute) +
                   " is not a CUdevice_attribute this driver knows");
    check(r, "cuDeviceGetAttribute");
    *value = v;
  });
}

cuabi_status cuabi_device_get_context(cuabi_device device, uint64_t* cu_context) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(cu_context, "cu_context");
    *cu_context = reinterpret_cast<uint64_t>(d->context());
  });
}

cuabi_status cuabi_device_synchronize(cuabi_device device) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    d->make_current();
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
  });
}

cuabi_status cuabi_device_get_stream_priority_range(cuabi_device device, int32_t* least,
                                                    int32_t* greatest) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    need(least, "least");
    need(greatest, "greatest");
    d->make_current();
    int l = 0, g = 0;
    check(driver().cuCtxGetStreamPriorityRange(&l, &g), "cuCtxGetStreamPriorityRange");
    *least = l;
    *greatest = g;
  });
}

cuabi_status cuabi_device_reset(cuabi_device device) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    d->reset();
  });
}

/* Programs ----------------------------------------------------------------- */

cuabi_status cuabi_program_create(const char* source, const char* name, size_t num_headers,
                                  const char* const* header_sources,
                                  const char* const* header_names, cuabi_program* out) {
  return guard(__func__, [&] {
    need(out, "out");
    *out = publish<cuabi_program>(
        make<Program>(source, name, num_headers, header_sources, header_names));
  });
}

void cuabi_program_release(cuabi_program program) { release_handle<Program>(program); }

cuabi_status cuabi_program_add_name_expression(cuabi_program program, const char* expression) {
  return guard(__func__, [&] {
    Pin<Program> p(program, "program");
    p->add_name_expression(expression);
  });
}

cuabi_status cuabi_program_compile(cuabi_program program, size_t num_options,
                                   const char* const* options) {
  return guard(__func__, [&] {
    Ref<Program> p = acquire<Program>(program, "program");
    p->compile(num_options, options);
  });
}

cuabi_status cuabi_program_get_log(cuabi_program program, char* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<Program> p(program, "program");
    std::lock_guard<std::mutex> lock(p->mutex);
    copy_string(p->log, buf, size);
  });
}

cuabi_status cuabi_program_get_ptx(cuabi_program program, char* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<Program> p(program, "program");
    std::lock_guard<std::mutex> lock(p->mutex);
    need(size, "size");
    if (!p->succeeded) fail(CUABI_ERROR_NOT_FOUND, "the program has not been compiled successfully");
    if (p->ptx.empty())
      fail(CUABI_ERROR_NOT_FOUND, "NVRTC made no PTX for this program");
    copy_out(p->ptx.data(), p->ptx.size(), buf, size);
  });
}

cuabi_status cuabi_program_get_cubin(cuabi_program program, void* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<Program> p(program, "program");
    std::lock_guard<std::mutex> lock(p->mutex);
    need(size, "size");
    if (!p->succeeded) fail(CUABI_ERROR_NOT_FOUND, "the program has not been compiled successfully");
    if (p->cubin.empty())
      fail(CUABI_ERROR_NOT_FOUND,
           "the compile made no CUBIN (a compute_XY target makes PTX; use sm_XY)");
    copy_out(p->cubin.data(), p->cubin.size(), buf, size);
  });
}

cuabi_status cuabi_program_get_lowered_name(cuabi_program program, const char* expression,
                                            char* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<Program> p(program, "program");
    check_name(expression, "expression");
    std::lock_guard<std::mutex> lock(p->mutex);
    auto it = p->lowered.find(expression);
    if (it == p->lowered.end())
      fail(CUABI_ERROR_NOT_FOUND, std::string("no lowered name for '") + expression +
                                      "': add it with cuabi_program_add_name_expression before "
                                      "compiling");
    copy_string(it->second, buf, size);
  });
}

/* Modules and functions ---------------------------------------------------- */

cuabi_status cuabi_module_compile(cuabi_device device, const cuabi_compile_desc* desc,
                                  cuabi_module* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_module>(compile_module(d, desc));
  });
}

cuabi_status cuabi_module_load_data(cuabi_device device, const void* image, size_t size,
                                    cuabi_module* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_module>(make<Module>(d, image, size));
  });
}

cuabi_status cuabi_module_load_file(cuabi_device device, const char* path, cuabi_module* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_module>(load_module_file(d, path));
  });
}

void cuabi_module_release(cuabi_module module) { release_handle<Module>(module); }

cuabi_status cuabi_module_get_from_cache(cuabi_module module, int32_t* hit) {
  return guard(__func__, [&] {
    Pin<Module> m(module, "module");
    need(hit, "hit");
    *hit = m->from_cache ? 1 : 0;
  });
}

cuabi_status cuabi_module_get_function(cuabi_module module, const char* name,
                                       cuabi_function* out) {
  return guard(__func__, [&] {
    Pin<Module> m(module, "module");
    need(out, "out");
    *out = publish<cuabi_function>(get_function(*m.get(), name));
  });
}

cuabi_status cuabi_module_get_lowered_name(cuabi_module module, const char* expression, char* buf,
                                           size_t* size) {
  return guard(__func__, [&] {
    Pin<Module> m(module, "module");
    check_name(expression, "expression");
    auto it = m->lowered.find(expression);
    if (it == m->lowered.end())
      fail(CUABI_ERROR_NOT_FOUND, std::string("'") + expression +
                                      "' was not given as a name expression when compiling");
    copy_string(it->second, buf, size);
  });
}

cuabi_status cuabi_module_get_global(cuabi_module module, const char* name, uint64_t* device_ptr,
                                     size_t* bytes) {
  return guard(__func__, [&] {
    Pin<Module> m(module, "module");
    check_name(name, "name");
    need(device_ptr, "device_ptr");
    need(bytes, "bytes");
    m->enter();
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r = driver().cuModuleGetGlobal(&p, &n, m->module, name);
    if (r == CUDA_ERROR_NOT_FOUND)
      fail(CUABI_ERROR_NOT_FOUND, std::string("the module has no global named '") + name + "'", r);
    check(r, "cuModuleGetGlobal");
    *device_ptr = p;
    *bytes = n;
  });
}

void cuabi_function_release(cuabi_function function) { release_handle<Function>(function); }

cuabi_status cuabi_function_get_param_count(cuabi_function function, size_t* count) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    need(count, "count");
    need_params(*f.get());
    *count = f->params.size();
  });
}

cuabi_status cuabi_function_get_params(cuabi_function function, cuabi_param_info* params,
                                       size_t* count, size_t* args_size) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    need(count, "count");
    need_params(*f.get());
    size_t n = f->params.size();
    if (params && *count < n) {
      size_t have = *count;
      *count = n;
      fail(CUABI_ERROR_INSUFFICIENT_BUFFER, "params holds " + std::to_string(have) +
                                                " entries; kernel '" + f->name + "' has " +
                                                std::to_string(n) + " parameters");
    }
    if (params)
      for (size_t i = 0; i < n; ++i) params[i] = {f->params[i].offset, f->params[i].size};
    *count = n;
    if (args_size) *args_size = f->args_size;
  });
}

cuabi_status cuabi_function_check_arg_sizes(cuabi_function function, const size_t* sizes,
                                            size_t count) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    check_arg_sizes(*f.get(), sizes, count, "sizes");
  });
}

cuabi_status cuabi_function_check_arg_size(cuabi_function function, size_t index, size_t size) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    check_arg_size(*f.get(), index, size);
  });
}

cuabi_status cuabi_function_get_args_size(cuabi_function function, size_t* size) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    need(size, "size");
    need_params(*f.get());
    *size = f->args_size;
  });
}

cuabi_status cuabi_function_get_name(cuabi_function function, char* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    copy_string(f->name, buf, size);
  });
}

cuabi_status cuabi_function_get_attribute(cuabi_function function,
                                          cuabi_function_attribute attribute, int32_t* value) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    need(value, "value");
    f->module->enter();
    int v = 0;
    CUresult r = driver().cuFuncGetAttribute(&v, static_cast<CUfunction_attribute>(attribute),
                                             f->function);
    if (r == CUDA_ERROR_INVALID_VALUE)
      fail_invalid("attribute " + std::to_string(attribute) +
                   " is not a CUfunction_attribute this driver knows");
    check(r, "cuFuncGetAttribute");
    *value = v;
  });
}

cuabi_status cuabi_function_set_attribute(cuabi_function function,
                                          cuabi_function_attribute attribute, int32_t value) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    f->module->enter();
    CUresult r = driver().cuFuncSetAttribute(f->function,
                                             static_cast<CUfunction_attribute>(attribute), value);
    if (r == CUDA_ERROR_INVALID_VALUE)
      fail_invalid("attribute " + std::to_string(attribute) + " cannot be set to " +
                   std::to_string(value));
    check(r, "cuFuncSetAttribute");
    if (attribute == CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES)
      f->max_dynamic_shared.store(static_cast<uint32_t>(value), std::memory_order_relaxed);
  });
}

/* Launch --------------------------------------------------------------------- */

cuabi_status cuabi_launch_config_init(cuabi_launch_config* config, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_launch_config defaults = CUABI_LAUNCH_CONFIG_INIT;
    init_struct(config, struct_size, defaults, "config");
  });
}

cuabi_status cuabi_function_launch(cuabi_function function, const cuabi_launch_config* config,
                          cuabi_stream stream, void* const* params, size_t num_params) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    Pin<Stream> s(stream, "stream", true);
    launch(*f.get(), config, s, params, num_params);
  });
}

cuabi_status cuabi_function_launch_sized(cuabi_function function, const cuabi_launch_config* config,
                                cuabi_stream stream, void* const* params,
                                const size_t* param_sizes, size_t num_params) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    Pin<Stream> s(stream, "stream", true);
    launch_sized(*f.get(), config, s, params, param_sizes, num_params);
  });
}

cuabi_status cuabi_function_launch_packed(cuabi_function function, const cuabi_launch_config* config,
                                 cuabi_stream stream, const void* args, size_t args_size) {
  return guard(__func__, [&] {
    Pin<Function> f(function, "function");
    Pin<Stream> s(stream, "stream", true);
    launch_packed(*f.get(), config, s, args, args_size);
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
  return guard(__func__, [&] {
    Pin<LaunchPlan> p(plan, "plan");
    need(args, "args");
    need(size, "size");
    *args = p->args;
    *size = p->args_size;
  });
}

cuabi_status cuabi_launch_plan_launch(cuabi_launch_plan plan) {
  return guard(__func__, [&] {
    Pin<LaunchPlan> p(plan, "plan");
    p->launch();
  });
}

cuabi_status cuabi_compile_desc_init(cuabi_compile_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_compile_desc defaults = CUABI_COMPILE_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

/* Device memory -------------------------------------------------------------- */

cuabi_status cuabi_buffer_alloc(cuabi_device device, size_t bytes, cuabi_buffer* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_buffer>(make<Buffer>(d, bytes));
  });
}

cuabi_status cuabi_buffer_wrap(cuabi_device device, uint64_t device_ptr, size_t bytes,
                               cuabi_buffer* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_buffer>(make<Buffer>(d, static_cast<CUdeviceptr>(device_ptr), bytes));
  });
}

void cuabi_buffer_release(cuabi_buffer buffer) { release_handle<Buffer>(buffer); }

cuabi_status cuabi_buffer_get_pointer(cuabi_buffer buffer, uint64_t* ptr) {
  return guard(__func__, [&] {
    Pin<Buffer> b(buffer, "buffer");
    need(ptr, "ptr");
    *ptr = b->ptr;
  });
}

cuabi_status cuabi_buffer_get_size(cuabi_buffer buffer, size_t* bytes) {
  return guard(__func__, [&] {
    Pin<Buffer> b(buffer, "buffer");
    need(bytes, "bytes");
    *bytes = b->size;
  });
}

cuabi_status cuabi_buffer_get_device_ordinal(cuabi_buffer buffer, int32_t* ordinal) {
  return guard(__func__, [&] {
    Pin<Buffer> b(buffer, "buffer");
    need(ordinal, "ordinal");
    *ordinal = b->device->ordinal;
  });
}

cuabi_status cuabi_buffer_copy_from_host(cuabi_buffer dst, size_t dst_offset, const void* src,
                                         size_t bytes) {
  return guard(__func__, [&] {
    Ref<Buffer> b = acquire<Buffer>(dst, "dst");
    copy_from_host(*b, dst_offset, src, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_copy_to_host(cuabi_buffer src, size_t src_offset, void* dst,
                                       size_t bytes) {
  return guard(__func__, [&] {
    Ref<Buffer> b = acquire<Buffer>(src, "src");
    copy_to_host(*b, src_offset, dst, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_copy_from_host_async(cuabi_buffer dst, size_t dst_offset,
                                               const void* src, size_t bytes,
                                               cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Buffer> b(dst, "dst");
    Pin<Stream> s(stream, "stream", true);
    copy_from_host(*b.get(), dst_offset, src, bytes, &s);
  });
}

cuabi_status cuabi_buffer_copy_to_host_async(cuabi_buffer src, size_t src_offset, void* dst,
                                             size_t bytes, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Buffer> b(src, "src");
    Pin<Stream> s(stream, "stream", true);
    copy_to_host(*b.get(), src_offset, dst, bytes, &s);
  });
}

cuabi_status cuabi_buffer_copy(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
                               size_t src_offset, size_t bytes) {
  return guard(__func__, [&] {
    Ref<Buffer> d = acquire<Buffer>(dst, "dst");
    Ref<Buffer> s = acquire<Buffer>(src, "src");
    copy_device(*d, dst_offset, *s, src_offset, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_copy_async(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
                                     size_t src_offset, size_t bytes, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Buffer> d(dst, "dst");
    Pin<Buffer> s(src, "src");
    Pin<Stream> st(stream, "stream", true);
    copy_device(*d.get(), dst_offset, *s.get(), src_offset, bytes, &st);
  });
}

cuabi_status cuabi_buffer_memset(cuabi_buffer buffer, size_t offset, uint8_t value,
                                 size_t bytes) {
  return guard(__func__, [&] {
    Ref<Buffer> b = acquire<Buffer>(buffer, "buffer");
    memset_device(*b, offset, value, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_memset_async(cuabi_buffer buffer, size_t offset, uint8_t value,
                                       size_t bytes, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Buffer> b(buffer, "buffer");
    Pin<Stream> s(stream, "stream", true);
    memset_device(*b.get(), offset, value, bytes, &s);
  });
}

/* Pinned host memory ---------------------------------------------------------- */

cuabi_status cuabi_host_buffer_alloc(cuabi_device device, size_t bytes, cuabi_host_buffer* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_host_buffer>(make<HostBuffer>(d, bytes));
  });
}

cuabi_status cuabi_host_buffer_register(cuabi_device device, void* ptr, size_t bytes,
                                 cuabi_host_buffer* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_host_buffer>(make<HostBuffer>(d, ptr, bytes));
  });
}

void cuabi_host_buffer_release(cuabi_host_buffer buffer) { release_handle<HostBuffer>(buffer); }

cuabi_status cuabi_host_buffer_get_pointer(cuabi_host_buffer buffer, void** ptr) {
  return guard(__func__, [&] {
    Pin<HostBuffer> b(buffer, "buffer");
    need(ptr, "ptr");
    *ptr = b->ptr;
  });
}

cuabi_status cuabi_host_buffer_get_size(cuabi_host_buffer buffer, size_t* bytes) {
  return guard(__func__, [&] {
    Pin<HostBuffer> b(buffer, "buffer");
    need(bytes, "bytes");
    *bytes = b->size;
  });
}

/* Streams ---------------------------------------------------------------------- */

cuabi_status cuabi_stream_create(cuabi_device device, uint32_t flags, int32_t priority,
                                 cuabi_stream* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_stream>(make<Stream>(d, flags, priority));
  });
}

cuabi_status cuabi_stream_wrap(cuabi_device device, uint64_t cu_stream, cuabi_stream* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_stream>(make<Stream>(d, reinterpret_cast<CUstream>(cu_stream)));
  });
}

void cuabi_stream_release(cuabi_stream stream) { release_handle<Stream>(stream); }

cuabi_status cuabi_stream_get_handle(cuabi_stream stream, uint64_t* cu_stream) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    need(cu_stream, "cu_stream");
    *cu_stream = reinterpret_cast<uint64_t>(s->stream);
  });
}

cuabi_status cuabi_stream_synchronize(cuabi_stream stream) {
  return guard(__func__, [&] {
    Ref<Stream> s = acquire<Stream>(stream, "stream");
    s->enter();
    check(driver().cuStreamSynchronize(s->stream), "cuStreamSynchronize");
  });
}

cuabi_status cuabi_stream_query(cuabi_stream stream) {
  CUresult r = CUDA_SUCCESS;
  cuabi_status st = guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    s->enter();
    r = driver().cuStreamQuery(s->stream);
  });
  return st != CUABI_SUCCESS ? st : ready_or_not("cuStreamQuery", r);
}

cuabi_status cuabi_stream_wait_event(cuabi_stream stream, cuabi_event event) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    Pin<Event> e(event, "event");
    s->enter();
    e->device->check_epoch(e->epoch);
    check(driver().cuStreamWaitEvent(s->stream, e->event, 0), "cuStreamWaitEvent");
  });
}

/* Events ----------------------------------------------------------------------- */

cuabi_status cuabi_event_create(cuabi_device device, uint32_t flags, cuabi_event* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_event>(make<Event>(d, flags));
  });
}

void cuabi_event_release(cuabi_event event) { release_handle<Event>(event); }

cuabi_status cuabi_event_record(cuabi_event event, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Event> e(event, "event");
    Pin<Stream> s(stream, "stream", true);
    e->enter();
    check(driver().cuEventRecord(e->event, stream_for(s, *e->device)), "cuEventRecord");
  });
}

cuabi_status cuabi_event_synchronize(cuabi_event event) {
  return guard(__func__, [&] {
    Ref<Event> e = acquire<Event>(event, "event");
    e->enter();
    check(driver().cuEventSynchronize(e->event), "cuEventSynchronize");
  });
}

cuabi_status cuabi_event_query(cuabi_event event) {
  CUresult r = CUDA_SUCCESS;
  cuabi_status st = guard(__func__, [&] {
    Pin<Event> e(event, "event");
    e->enter();
    r = driver().cuEventQuery(e->event);
  });
  return st != CUABI_SUCCESS ? st : ready_or_not("cuEventQuery", r);
}

cuabi_status cuabi_event_get_elapsed_ms(cuabi_event start, cuabi_event end, float* milliseconds) {
  return guard(__func__, [&] {
    Pin<Event> a(start, "start");
    Pin<Event> b(end, "end");
    need(milliseconds, "milliseconds");
    a->enter();
    b->device->check_epoch(b->epoch);
    float ms = 0;
    CUresult r = driver().cuEventElapsedTime(&ms, a->event, b->event);
    if (r == CUDA_ERROR_INVALID_HANDLE)
      fail_invalid("an event was created with CUABI_EVENT_DISABLE_TIMING or was never recorded");
    if (r == CUDA_ERROR_NOT_READY)
      fail(CUABI_ERROR_NOT_READY, "an event has not completed yet", r);
    check(r, "cuEventElapsedTime");
    *milliseconds = ms;
  });
}

/* Graphs ------------------------------------------------------------------------ */

cuabi_status cuabi_stream_begin_capture(cuabi_stream stream, cuabi_capture_mode mode) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    if (mode != CUABI_CAPTURE_GLOBAL && mode != CUABI_CAPTURE_THREAD_LOCAL &&
        mode != CUABI_CAPTURE_RELAXED)
      fail_invalid("mode " + std::to_string(mode) + " is not a cuabi_capture_mode");
    s->enter();
    check(driver().cuStreamBeginCapture(s->stream, static_cast<CUstreamCaptureMode>(mode)),
          "cuStreamBeginCapture");
  });
}

cuabi_status cuabi_stream_end_capture(cuabi_stream stream, cuabi_graph* out) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    need(out, "out");
    s->enter();
    CUgraph g = nullptr;
    check(driver().cuStreamEndCapture(s->stream, &g), "cuStreamEndCapture");
    Ref<Graph> graph = Ref<Graph>::adopt(new Graph(s->device, g));
    *out = publish<cuabi_graph>(graph);
  });
}

void cuabi_graph_release(cuabi_graph graph) { release_handle<Graph>(graph); }

cuabi_status cuabi_graph_get_node_count(cuabi_graph graph, size_t* count) {
  return guard(__func__, [&] {
    Pin<Graph> g(graph, "graph");
    need(count, "count");
    g->enter();
    size_t n = 0;
    check(driver().cuGraphGetNodes(g->graph, nullptr, &n), "cuGraphGetNodes");
    *count = n;
  });
}

cuabi_status cuabi_graph_instantiate(cuabi_graph graph, cuabi_graph_exec* out) {
  return guard(__func__, [&] {
    Ref<Graph> g = acquire<Graph>(graph, "graph");
    need(out, "out");
    g->enter();
    CUgraphExec e = nullptr;
    check(driver().cuGraphInstantiateWithFlags(&e, g->graph, 0), "cuGraphInstantiateWithFlags");
    *out = publish<cuabi_graph_exec>(Ref<GraphExec>::adopt(new GraphExec(g->device, e)));
  });
}

void cuabi_graph_exec_release(cuabi_graph_exec exec) { release_handle<GraphExec>(exec); }

cuabi_status cuabi_graph_exec_launch(cuabi_graph_exec exec, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<GraphExec> e(exec, "exec");
    Pin<Stream> s(stream, "stream", true);
    e->enter();
    check(driver().cuGraphLaunch(e->exec, stream_for(s, *e->device)), "cuGraphLaunch");
  });
}

}  // extern "C"
