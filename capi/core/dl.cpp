#include "dl.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include <vector>

namespace cuabi {

std::string loaded_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    return map->l_name;
  return fallback;
}

std::string load_failure(const std::string& candidate) {
  const char* why = dlerror();
  if (!why) return "not loadable";
  std::string text = why;
  if (text.compare(0, candidate.size() + 2, candidate + ": ") == 0)
    text.erase(0, candidate.size() + 2);
  return text;
}

namespace {

// The highest <base>N in `dir`, or "" when there is none.
std::string newest_in(const std::string& dir, const std::string& base) {
  DIR* d = opendir(dir.c_str());
  if (!d) return "";
  std::string best;
  long best_n = -1;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, base.size(), base) != 0) continue;
    char* end = nullptr;
    long n = strtol(name.c_str() + base.size(), &end, 10);
    if (end == name.c_str() + base.size()) continue;
    if (n > best_n) {
      best_n = n;
      best = dir + "/" + name;
    }
  }
  closedir(d);
  return best;
}

// Where pip's NVIDIA wheels put the toolkit's libraries, for a libcuabi that
// is itself installed in a Python environment (site-packages/cuabi/): the
// folders of site-packages/nvidia/ beside it (cu13/lib for CUDA 13 wheels;
// cuda_nvrtc/lib and nvjitlink/lib for CUDA 12's), then conda's lib/.
std::vector<std::string> python_environment_dirs() {
  std::vector<std::string> dirs;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&newest_in), &info) && info.dli_fname) {
    const std::string self = info.dli_fname;  // <site>/cuabi/libcuabi.so
    const size_t slash = self.rfind('/');
    const size_t up = slash == std::string::npos || slash == 0 ? std::string::npos
                                                               : self.rfind('/', slash - 1);
    if (up != std::string::npos) {
      const std::string nvidia = self.substr(0, up) + "/nvidia/";
      for (const char* sub : {"cu13/lib", "cu12/lib", "cuda_nvrtc/lib", "nvjitlink/lib"})
        dirs.push_back(nvidia + sub);
    }
  }
  if (const char* conda = getenv("CONDA_PREFIX"); conda && conda[0])
    dirs.push_back(std::string(conda) + "/lib");
  return dirs;
}

}  // namespace

void* open_toolkit_library(const char* base, const char* env, const int* versions, size_t count,
                           std::string& path, std::string& tried) {
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
  const char* given = getenv(env);
  if (given && given[0]) return attempt(given, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; i < count; ++i)  // already loaded by someone else in this process
    if (void* h = attempt(base + std::to_string(versions[i]), RTLD_NOW | RTLD_NOLOAD)) return h;
  // pip's (or conda's) libraries in this library's own Python environment,
  // before the system's: what the environment was made with.
  for (const std::string& dir : python_environment_dirs()) {
    const std::string candidate = newest_in(dir, base);
    if (!candidate.empty())
      if (void* h = attempt(candidate, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  for (size_t i = 0; i < count; ++i)
    if (void* h = attempt(base + std::to_string(versions[i]), RTLD_NOW | RTLD_LOCAL)) return h;
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = getenv(var); v && v[0]) dirs.push_back(std::string(v) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string& dir : dirs) {
    std::string candidate = newest_in(dir, base);
    if (candidate.empty()) {
      tried += "\n  " + dir + "/" + base + "*: none there";
      continue;
    }
    if (void* h = attempt(candidate, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

}  // namespace cuabi
