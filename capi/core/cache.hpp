// The on-disk cache of compiled images. An entry is found by the SHA-256 of
// everything that determines the image, carries that key and a checksum of its
// own bytes, is written to a temporary file and renamed into place, and is
// discarded (never served) when anything about it does not check out.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cuabi {

using CacheKey = std::array<uint8_t, 32>;

struct CacheEntry {
  uint32_t output = 0;  // cuabi_output
  std::string image;
  std::map<std::string, std::string> lowered;  // name expression -> lowered name
};

// The cache folder to use now, or "" when the cache is off or unusable
// (CUABI_CACHE=0, no home, a folder owned by someone else or writable by others).
std::string cache_dir();

// Serialises an entry with its key and checksum, and parses one back; parsing
// answers nothing for bytes that are not a whole, intact entry for `key`.
std::string cache_encode(const CacheKey& key, const CacheEntry& entry);
std::optional<CacheEntry> cache_decode(const std::string& bytes, const CacheKey& key);

// Reads the entry for `key`; a corrupt or foreign file is removed.
std::optional<CacheEntry> cache_load(const std::string& dir, const CacheKey& key);
// Writes atomically; failures are ignored (a cache never fails a compile).
void cache_store(const std::string& dir, const CacheKey& key, const CacheEntry& entry);

std::string cache_file(const std::string& dir, const CacheKey& key);

}  // namespace cuabi
