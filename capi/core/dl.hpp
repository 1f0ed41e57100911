// Small helpers around dlopen shared by the driver and NVRTC loaders.
#pragma once

#include <string>

namespace cuabi {

// The full path the loader resolved `handle` to, or `fallback`.
std::string loaded_path(void* handle, const std::string& fallback);
// dlerror()'s reason for the last failed dlopen of `candidate`, without the
// candidate's name repeated in front.
std::string load_failure(const std::string& candidate);

}  // namespace cuabi
