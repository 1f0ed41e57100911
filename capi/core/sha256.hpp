// SHA-256, for the compile cache's keys and checksums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cuabi {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // Hashes a length prefix, then the bytes: fields can never run together.
  void field(const void* data, size_t size);
  void field(const std::string& s) { field(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t total_ = 0;
};

std::array<uint8_t, 32> sha256(const void* data, size_t size);
std::string hex(const std::array<uint8_t, 32>& digest);

}  // namespace cuabi
