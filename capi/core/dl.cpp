#include "dl.hpp"

#include <dlfcn.h>
#include <link.h>

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

}  // namespace cuabi
