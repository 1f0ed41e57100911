#include "text.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "error.hpp"

namespace cuabi {

namespace {

// The length of the well-formed UTF-8 sequence at s[i], or 0 if there is none.
size_t sequence_length(const unsigned char* s, size_t i, size_t size) {
  unsigned char c = s[i];
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 1;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (size - i <= n) return 0;
  for (size_t k = 1; k <= n; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
  if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
      (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
    return 0;
  return n + 1;
}

}  // namespace

std::string to_utf8(const std::string& text) {
  const unsigned char* s = reinterpret_cast<const unsigned char*>(text.data());
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = sequence_length(s, i, text.size());
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

bool valid_utf8(const char* str, size_t size) {
  const unsigned char* s = reinterpret_cast<const unsigned char*>(str);
  for (size_t i = 0; i < size;) {
    size_t n = sequence_length(s, i, size);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void check_name(const char* s, const char* what) {
  if (!s) fail_invalid(std::string(what) + " is NULL");
  size_t size = strnlen(s, 65537);
  if (size == 0) fail_invalid(std::string(what) + " is empty");
  if (size > 65536) fail_invalid(std::string(what) + " is longer than 64 KiB");
  if (!valid_utf8(s, size)) fail_invalid(std::string(what) + " is not valid UTF-8");
}

}  // namespace cuabi
