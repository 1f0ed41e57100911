// Cache files: cuabi::cache_decode on
//   0: arbitrary bytes (as found on disk);
//   1: arbitrary fields behind a correct magic, key and checksum, so the
//      parser itself is exercised (the checksum cannot be forged by chance);
//   2: mutations of a valid encoded entry (flips, truncations, insertions,
//      overwrites, splices).
// A decoded entry must be well formed (output 0 or 1, a non-empty image) and
// survive re-encoding; a mutated entry must never be accepted unless the
// mutation left the bytes identical, and never under another key.
#include <cstring>
#include <string>

#include "cache.hpp"
#include "fuzz_common.h"
#include "sha256.hpp"

namespace {

cuabi::CacheKey KeyOf(const std::string& seed) { return cuabi::sha256(seed.data(), seed.size()); }

void CheckWellFormed(const cuabi::CacheEntry& e, const cuabi::CacheKey& key) {
  FUZZ_CHECK(e.output <= 1, "an entry with output " + std::to_string(e.output) + " was accepted");
  FUZZ_CHECK(!e.image.empty(), "an entry with an empty image was accepted");
  std::optional<cuabi::CacheEntry> again = cuabi::cache_decode(cuabi::cache_encode(key, e), key);
  FUZZ_CHECK(again.has_value(), "a decoded entry does not survive re-encoding");
  FUZZ_CHECK(again->output == e.output && again->image == e.image && again->lowered == e.lowered,
             "re-encoding changed an entry");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuabi_fuzz::Input in(data, size);
  const cuabi::CacheKey key = KeyOf("fuzzed kernel");
  const cuabi::CacheKey other = KeyOf("another kernel");
  switch (in.u8() % 3) {
    case 0: {
      const std::string bytes = in.rest();
      if (std::optional<cuabi::CacheEntry> e = cuabi::cache_decode(bytes, key))
        CheckWellFormed(*e, key);
      break;
    }
    case 1: {
      std::string body("CUABICA1", 8);
      body.append(reinterpret_cast<const char*>(key.data()), key.size());
      body += in.rest();
      auto digest = cuabi::sha256(body.data(), body.size());
      const std::string sealed =
          body + std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
      if (std::optional<cuabi::CacheEntry> e = cuabi::cache_decode(sealed, key))
        CheckWellFormed(*e, key);
      FUZZ_CHECK(!cuabi::cache_decode(sealed, other), "an entry was accepted under another key");
      break;
    }
    default: {
      // A valid entry built from the input, then mutated by it.
      cuabi::CacheEntry entry;
      entry.output = in.u8() & 1;
      const unsigned names = in.u8() % 4;
      for (unsigned i = 0; i < names; ++i) {
        std::string expr = in.cstr(24);
        entry.lowered[expr] = in.cstr(24);
      }
      entry.image = in.cstr(256);
      if (entry.image.empty()) entry.image = "x";
      const std::string original = cuabi::cache_encode(key, entry);
      std::optional<cuabi::CacheEntry> back = cuabi::cache_decode(original, key);
      FUZZ_CHECK(back && back->image == entry.image && back->lowered == entry.lowered &&
                     back->output == entry.output,
                 "a valid entry did not round-trip");
      FUZZ_CHECK(!cuabi::cache_decode(original, other), "an entry was accepted under another key");

      std::string m = original;
      const unsigned steps = 1 + in.u8() % 8;
      for (unsigned s = 0; s < steps && in.left() > 0; ++s) {
        const uint32_t at = m.empty() ? 0 : in.u32() % m.size();
        switch (in.u8() % 6) {
          case 0:
            if (!m.empty()) m[at] ^= static_cast<char>(1u << (in.u8() % 8));
            break;
          case 1:
            m.resize(m.empty() ? 0 : in.u32() % m.size());
            break;
          case 2:
            m.insert(at, in.bytes(1 + in.u8() % 16));
            break;
          case 3:
            if (!m.empty()) m[at] = static_cast<char>(in.u8());
            break;
          case 4:
            m.erase(at, 1 + in.u8() % 16);
            break;
          default:
            m += in.bytes(in.u8() % 64);
            break;
        }
      }
      std::optional<cuabi::CacheEntry> got = cuabi::cache_decode(m, key);
      if (m == original) {
        FUZZ_CHECK(got.has_value(), "an unchanged entry was refused");
      } else {
        FUZZ_CHECK(!got.has_value(), "a mutated entry was accepted (" + std::to_string(m.size()) +
                                         " bytes, original " + std::to_string(original.size()) +
                                         ")");
      }
      break;
    }
  }
  return 0;
}
