// The on-disk cache of compiled images. An entry is found by the SHA-256 of
// everything that determines the image, carries that key and a checksum of its
// own bytes, is written to a temporary file and renamed into place, and is
// discarded (never served) when anything about it does not check out.
#pragma once

#include <cuabi/cuabi.h>

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

// Where the cache folder is and whether compiles use it, from the
// environment now; creates nothing. `dir` is "" for CUABI_CACHE_STATE_NO_FOLDER.
struct CacheLocation {
  std::string dir;
  cuabi_cache_state state = CUABI_CACHE_STATE_NO_FOLDER;
  cuabi_cache_state folder = CUABI_CACHE_STATE_NO_FOLDER;  // the state were the cache on
};
CacheLocation cache_location();

// The cache folder to use now, created if missing, or "" when the cache is off
// or unusable (CUABI_CACHE=0, no home, a folder owned by someone else or
// writable by others).
std::string cache_dir_in_use();

// The entries in `dir` (files named <64 hex digits>.cubin-cache) and their
// bytes. With `clear`, each entry and unfinished write (".tmp-*") is removed
// and the counts are what was removed. A folder that does not exist counts
// 0 and 0. Throws IO when `dir` cannot be read or a file cannot be removed.
struct CacheUsage {
  uint64_t entries = 0;
  uint64_t bytes = 0;
};
CacheUsage cache_scan(const std::string& dir, bool clear);

// Throws NOT_FOUND for CUABI_CACHE_STATE_NO_FOLDER.
void need_cache_folder(const CacheLocation& loc);

// The public calls' view: throws NOT_FOUND without a folder, and for `clear`
// IO when the folder is not one compiles would use.
CacheUsage read_cache_usage();
CacheUsage clear_cache_folder();

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
