// Small helpers around dlopen shared by the driver and NVRTC loaders.
#pragma once

#include <string>

namespace cuabi {

// The full path the loader resolved `handle` to, or `fallback`.
std::string loaded_path(void* handle, const std::string& fallback);
// dlerror()'s reason for the last failed dlopen of `candidate`, without the
// candidate's name repeated in front.
std::string load_failure(const std::string& candidate);

// Opens a CUDA toolkit library such as "libnvrtc.so.": $<env> alone when set;
// otherwise <base>N already loaded in the process, then the newest <base>N
// of pip's NVIDIA wheels beside this library in its Python environment
// (site-packages/nvidia/cu13/lib, ...) and of $CONDA_PREFIX/lib, then through
// the loader's search path, then the newest <base>N in $CUDA_HOME/lib64,
// $CUDA_PATH/lib64 and /usr/local/cuda/lib64, for N among `versions` (newest
// first). Sets
// `path` to where it was found, appends every failed attempt to `tried`, and
// answers nullptr when nothing loads.
void* open_toolkit_library(const char* base, const char* env, const int* versions, size_t count,
                           std::string& path, std::string& tried);

}  // namespace cuabi
