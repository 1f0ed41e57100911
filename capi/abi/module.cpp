// Shims for modules: compiling, loading, and what a module holds.
#include "module.hpp"

#include "shim.hpp"
#include "structs.hpp"
#include "text.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_compile_desc_init(cuabi_compile_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_compile_desc defaults = CUABI_COMPILE_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

cuabi_status cuabi_module_compile(cuabi_device device, const cuabi_compile_desc* desc,
                                  cuabi_module* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return compile_module(std::move(d), desc); });
}

cuabi_status cuabi_module_load_data(cuabi_device device, const void* image, size_t size,
                                    cuabi_module* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return make<Module>(std::move(d), image, size); });
}

cuabi_status cuabi_module_load_file(cuabi_device device, const char* path, cuabi_module* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return load_module_file(std::move(d), path); });
}

void cuabi_module_release(cuabi_module module) { release_handle<Module>(module); }

cuabi_status cuabi_module_get_from_cache(cuabi_module module, int32_t* hit) {
  return get(__func__, module, "module", hit, "hit",
             [](const Module& m) { return m.from_cache ? 1 : 0; });
}

cuabi_status cuabi_module_get_compile_log(cuabi_module module, char* buf, size_t* size) {
  return get_string(__func__, module, "module", buf, size,
                    [](const Module& m) { return m.compile_log; });
}

cuabi_status cuabi_module_get_kernel_count(cuabi_module module, size_t* count) {
  return get(__func__, module, "module", count, "count",
             [](const Module& m) { return kernel_count(m); });
}

cuabi_status cuabi_module_get_kernel_name(cuabi_module module, size_t index, cuabi_name_form form,
                                          char* buf, size_t* size) {
  return get_string(__func__, module, "module", buf, size,
                    [&](const Module& m) { return kernel_name(m, index, form); });
}

cuabi_status cuabi_module_get_function(cuabi_module module, const char* name, cuabi_function* out) {
  return create(__func__, module, "module", out,
                [&](Ref<Module> m) { return get_function(*m, name); });
}

cuabi_status cuabi_module_get_lowered_name(cuabi_module module, const char* expression, char* buf,
                                           size_t* size) {
  return with(__func__, module, "module", [&](Module& m) {
    check_name(expression, "expression");
    auto it = m.lowered.find(expression);
    if (it == m.lowered.end())
      fail(CUABI_ERROR_NOT_FOUND,
           std::string("'") + expression + "' was not given as a name expression when compiling");
    copy_string(it->second, buf, size);
  });
}

cuabi_status cuabi_module_get_global(cuabi_module module, const char* name, uint64_t* device_ptr,
                                     size_t* bytes) {
  return with(__func__, module, "module", [&](Module& m) {
    check_name(name, "name");
    need(device_ptr, "device_ptr");
    need(bytes, "bytes");
    m.enter();
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r = driver().cuModuleGetGlobal(&p, &n, m.module, name);
    if (r == CUDA_ERROR_NOT_FOUND)
      fail(CUABI_ERROR_NOT_FOUND, std::string("the module has no global named '") + name + "'", r);
    check(r, "cuModuleGetGlobal");
    *device_ptr = p;
    *bytes = n;
  });
}

}  // extern "C"
