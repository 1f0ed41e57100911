// Loading and compiling modules; looking up functions.
#pragma once

#include "objects.hpp"

namespace cuabi {

// For a CUBIN (ELF) or fatbin image, throws INVALID_ARGUMENT unless all its
// headers point inside `size` bytes, and answers true; false for anything else
// (taken as PTX text).
bool check_image(const void* image, size_t size);
Ref<Module> load_module_file(Ref<Device> device, const char* path);
Ref<Module> compile_module(Ref<Device> device, const cuabi_compile_desc* desc);
Ref<Function> get_function(const Module& module, const char* name);

}  // namespace cuabi
