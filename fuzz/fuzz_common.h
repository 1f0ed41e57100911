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

#include "../tests/common/utf8.h"

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

using cuabi_test::IsUtf8;

}  // namespace cuabi_fuzz

#endif  // CUABI_FUZZ_COMMON_H
