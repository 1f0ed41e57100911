// Writes one compile-cache entry into a folder through the core's own cache
// code (capi/core/cache.cpp), and prints its path: the cuabi command's test
// then counts and clears an entry exactly as the library writes it, with no
// GPU needed to compile one.
//   cuabi_test_cache_writer FOLDER
#include <cstdio>
#include <string>

#include "cache.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  cuabi::CacheKey key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i * 7 + 1);
  cuabi::CacheEntry entry;
  entry.output = 1;
  entry.image = std::string(1500, 'x');
  entry.lowered["f<int>"] = "_Z1fIiEvv";
  cuabi::cache_store(argv[1], key, entry);
  auto back = cuabi::cache_load(argv[1], key);
  if (!back || back->image != entry.image) {
    std::fprintf(stderr, "cache_writer: the entry written to %s did not load back\n", argv[1]);
    return 1;
  }
  std::printf("%s\n", cuabi::cache_file(argv[1], key).c_str());
  return 0;
}
