// A UTF-8 check for the C++ tests and the fuzz targets, independent of the
// core's own: what the library hands back (messages, logs, names) must pass.
#ifndef CUABI_TESTS_COMMON_UTF8_H
#define CUABI_TESTS_COMMON_UTF8_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuabi_test {

// Well-formed UTF-8: no stray continuation bytes, no truncated sequences, no
// overlong forms, no surrogates, nothing past U+10FFFF.
inline bool IsUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return false;
    i += len;
  }
  return true;
}

}  // namespace cuabi_test

#endif  // CUABI_TESTS_COMMON_UTF8_H
