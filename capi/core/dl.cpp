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
