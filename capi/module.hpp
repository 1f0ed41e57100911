// Loading and compiling modules; looking up functions.
#pragma once

#include "objects.hpp"

namespace cuabi {

Ref<Module> load_module_file(Ref<Device> device, const char* path);
Ref<Module> compile_module(Ref<Device> device, const cuabi_compile_desc* desc);
Ref<Function> get_function(const Module& module, const char* name);

}  // namespace cuabi
