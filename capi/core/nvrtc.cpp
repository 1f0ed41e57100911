#include "nvrtc.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <mutex>

#include "dl.hpp"

namespace cuabi {

namespace {

struct NvrtcState {
  std::once_flag once;
  NvrtcApi api;
  bool ok = false;
  cuabi_status status = CUABI_SUCCESS;
  std::string message;
};

NvrtcState& state() {
  static NvrtcState* s = new NvrtcState();  // never destroyed: used until exit
  return *s;
}

// Versions of libnvrtc.so.N looked for by soname, newest first.
const int kSonameVersions[] = {14, 13, 12, 11};

void* open_nvrtc(std::string& path, std::string& tried) {
  return open_toolkit_library("libnvrtc.so.", "CUABI_NVRTC_PATH", kSonameVersions,
                              sizeof kSonameVersions / sizeof kSonameVersions[0], path, tried);
}

void load(NvrtcState& s) {
  std::string tried;
  void* lib = open_nvrtc(s.api.path, tried);
  if (!lib) {
    s.status = CUABI_ERROR_NVRTC_NOT_FOUND;
    s.message = "NVRTC could not be loaded (set CUABI_NVRTC_PATH to libnvrtc.so's path). Tried:" +
                tried;
    return;
  }
#define CUABI_LOAD(name)                                                          \
  s.api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));            \
  if (!s.api.name) {                                                              \
    s.status = CUABI_ERROR_NVRTC_NOT_FOUND;                                       \
    s.message = s.api.path + " lacks " #name ": it is not a usable NVRTC library"; \
    return;                                                                       \
  }
  CUABI_NVRTC_ENTRY_POINTS(CUABI_LOAD)
#undef CUABI_LOAD
  s.api.nvrtcGetLTOIRSize =
      reinterpret_cast<decltype(&::nvrtcGetLTOIRSize)>(dlsym(lib, "nvrtcGetLTOIRSize"));
  s.api.nvrtcGetLTOIR = reinterpret_cast<decltype(&::nvrtcGetLTOIR)>(dlsym(lib, "nvrtcGetLTOIR"));
  s.api.nvrtcVersion(&s.api.major, &s.api.minor);
  int count = 0;
  if (s.api.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    s.api.archs.resize(static_cast<size_t>(count));
    if (s.api.nvrtcGetSupportedArchs(s.api.archs.data()) != NVRTC_SUCCESS) s.api.archs.clear();
    std::sort(s.api.archs.begin(), s.api.archs.end());
  }
  s.ok = true;
}

}  // namespace

const NvrtcApi& nvrtc() {
  NvrtcState& s = state();
  std::call_once(s.once, [&] { load(s); });
  if (!s.ok) fail(s.status, s.message);
  return s.api;
}

void check_nvrtc(nvrtcResult result, const char* what) {
  if (result == NVRTC_SUCCESS) return;
  const char* text = state().api.nvrtcGetErrorString ? state().api.nvrtcGetErrorString(result)
                                                    : "unknown NVRTC error";
  cuabi_status status =
      result == NVRTC_ERROR_OUT_OF_MEMORY ? CUABI_ERROR_OUT_OF_MEMORY : CUABI_ERROR_NVRTC;
  fail(status, std::string(what) + " failed: " + text, static_cast<int32_t>(result));
}

}  // namespace cuabi
