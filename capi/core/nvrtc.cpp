#include "nvrtc.hpp"

#include <dirent.h>
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

// The highest libnvrtc.so.N in `dir`, or "" when there is none.
std::string newest_in(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return "";
  std::string best;
  long best_n = -1;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    const std::string prefix = "libnvrtc.so.";
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    long n = strtol(name.c_str() + prefix.size(), &end, 10);
    if (end == name.c_str() + prefix.size()) continue;
    if (n > best_n) {
      best_n = n;
      best = dir + "/" + name;
    }
  }
  closedir(d);
  return best;
}

void* open_nvrtc(std::string& path, std::string& tried) {
  auto attempt = [&](const std::string& candidate, int flags) -> void* {
    dlerror();
    void* h = dlopen(candidate.c_str(), flags);
    if (h) {
      path = loaded_path(h, candidate);
      return h;
    }
    if (!(flags & RTLD_NOLOAD)) tried += "\n  " + candidate + ": " + load_failure(candidate);
    return nullptr;
  };
  const char* env = getenv("CUABI_NVRTC_PATH");
  if (env && env[0]) return attempt(env, RTLD_NOW | RTLD_LOCAL);
  for (int n : kSonameVersions)  // already loaded by someone else in this process
    if (void* h = attempt("libnvrtc.so." + std::to_string(n), RTLD_NOW | RTLD_NOLOAD))
      return h;
  for (int n : kSonameVersions)
    if (void* h = attempt("libnvrtc.so." + std::to_string(n), RTLD_NOW | RTLD_LOCAL)) return h;
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = getenv(var); v && v[0]) dirs.push_back(std::string(v) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string& dir : dirs) {
    std::string candidate = newest_in(dir);
    if (candidate.empty()) {
      tried += "\n  " + dir + "/libnvrtc.so.*: none there";
      continue;
    }
    if (void* h = attempt(candidate, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
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
