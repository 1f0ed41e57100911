// Shared by the fuzz targets: reading structured values out of the fuzzer's
// bytes, and a check that aborts with a message (libFuzzer records the input
// as a crash; the replay runner fails).
#ifndef CUABI_FUZZ_COMMON_H
#define CUABI_FUZZ_COMMON_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cuabi_fuzz {

// Takes values from the front of the input; past its end everything is zero.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t left() const { return size_ - pos_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(u8()) << (8 * i);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(u8()) << (8 * i);
    return v;
  }
  // Up to `max` bytes, ending at the next NUL byte (consumed) or the end.
  std::string cstr(size_t max) {
    std::string s;
    while (pos_ < size_ && s.size() < max) {
      char c = static_cast<char>(data_[pos_++]);
      if (c == '\0') break;
      s += c;
    }
    return s;
  }
  std::string bytes(size_t n) {
    n = n < left() ? n : left();
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::string rest() { return bytes(left()); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

[[noreturn]] inline void Fail(const char* file, int line, const char* cond,
                              const std::string& why) {
  std::fprintf(stderr, "\n%s:%d: check failed: %s\n  %s\n", file, line, cond, why.c_str());
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_CHECK(cond, why)                                          \
  do {                                                                 \
    if (!(cond)) ::cuabi_fuzz::Fail(__FILE__, __LINE__, #cond, (why)); \
  } while (0)

inline bool IsUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned c = p[i];
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

}  // namespace cuabi_fuzz

#endif  // CUABI_FUZZ_COMMON_H
