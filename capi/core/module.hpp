// Loading and compiling modules; looking up functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "objects.hpp"

namespace cuabi {

// For a CUBIN (ELF) or fatbin image, throws INVALID_ARGUMENT unless all its
// headers point inside `size` bytes, and answers true; false for anything else
// (taken as PTX text).
bool check_image(const void* image, size_t size);
Ref<Module> load_module_file(Ref<Device> device, const char* path);
Ref<Module> compile_module(Ref<Device> device, const cuabi_compile_desc* desc);
Ref<Function> get_function(const Module& module, const char* name);
// Every kernel of the module as (symbol, demangled), in the driver's order;
// none where the driver cannot list them (before CUDA 12.4).
std::vector<std::pair<std::string, std::string>> module_kernels(const Module& module);
// The module's kernel count; NOT_SUPPORTED before CUDA 12.4.
size_t kernel_count(const Module& module);
// Kernel `index`'s symbol or demangled name; OUT_OF_RANGE past the end.
std::string kernel_name(const Module& module, size_t index, cuabi_name_form form);

}  // namespace cuabi
