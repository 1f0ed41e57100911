// Module images: cuabi::check_image, the check cuabi_module_load_data runs
// before the driver (whose cuModuleLoadData takes no length) reads a CUBIN or
// fatbin. The bytes sit in a buffer of exactly their size, so any read past
// it is an AddressSanitizer report. An image the check lets through must have
// every header, section and segment inside the given size (verified here
// independently); a prefix of either magic shorter than the magic is refused
// as truncated; anything else is refused with INVALID_ARGUMENT or taken as
// PTX text (neither ELF nor fatbin magic).
#include <cstring>
#include <memory>
#include <string>

#include "error.hpp"
#include "fuzz_common.h"
#include "module.hpp"

namespace {

const unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
const unsigned char kFatbinMagic[4] = {0x50, 0xED, 0x55, 0xBA};  // 0xBA55ED50, little-endian

uint64_t Le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool Inside(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

// What an ELF reader following the headers would touch, all inside `size`?
bool ElfExtentsInside(const unsigned char* p, size_t size, std::string* why) {
  if (size < 64) return *why = "shorter than an ELF header", false;
  const uint64_t phoff = Le(p + 0x20, 8), shoff = Le(p + 0x28, 8);
  const uint64_t phentsize = Le(p + 0x36, 2), phnum = Le(p + 0x38, 2);
  const uint64_t shentsize = Le(p + 0x3A, 2), shnum = Le(p + 0x3C, 2);
  if (phnum && (phentsize < 56 || !Inside(phoff, phentsize * phnum, size)))
    return *why = "program headers outside", false;
  if (shnum && (shentsize < 64 || !Inside(shoff, shentsize * shnum, size)))
    return *why = "section headers outside", false;
  for (uint64_t i = 0; i < shnum; ++i) {
    const unsigned char* sh = p + shoff + i * shentsize;
    if (Le(sh + 4, 4) != 8 && !Inside(Le(sh + 0x18, 8), Le(sh + 0x20, 8), size))
      return *why = "section " + std::to_string(i) + " outside", false;
  }
  for (uint64_t i = 0; i < phnum; ++i) {
    const unsigned char* ph = p + phoff + i * phentsize;
    if (!Inside(Le(ph + 8, 8), Le(ph + 0x20, 8), size))
      return *why = "segment " + std::to_string(i) + " outside", false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // Exactly `size` bytes on the heap: one byte more is a reported overflow.
  std::unique_ptr<unsigned char[]> image(new unsigned char[size]);
  std::memcpy(image.get(), data, size);
  const bool elf = size >= 4 && std::memcmp(image.get(), kElfMagic, 4) == 0;
  const bool fatbin = size >= 4 && Le(image.get(), 4) == 0xBA55ED50u;
  bool binary = false;
  cuabi_status st = CUABI_SUCCESS;
  std::string message;
  try {
    binary = cuabi::check_image(image.get(), size);
  } catch (const cuabi::Error& e) {
    st = e.status();
    message = e.message();
  }
  // Fewer than 4 bytes that begin either magic: a truncated header.
  const bool magic_prefix = size < 4 && (std::memcmp(image.get(), kElfMagic, size) == 0 ||
                                         std::memcmp(image.get(), kFatbinMagic, size) == 0);
  if (st != CUABI_SUCCESS) {
    FUZZ_CHECK(st == CUABI_ERROR_INVALID_ARGUMENT, "check_image threw another status: " + message);
    FUZZ_CHECK(elf || fatbin || magic_prefix,
               "an image that is neither ELF nor fatbin was refused: " + message);
    FUZZ_CHECK(message.find("truncated") != std::string::npos, "message: " + message);
    FUZZ_CHECK(cuabi_fuzz::IsUtf8(message), "message is not UTF-8");
    return 0;
  }
  FUZZ_CHECK(!magic_prefix, "a truncated magic was taken as PTX text");
  FUZZ_CHECK(binary == (elf || fatbin),
             "ELF or fatbin magic not recognised, or PTX taken as binary");
  if (elf) {
    std::string why;
    FUZZ_CHECK(ElfExtentsInside(image.get(), size, &why),
               "an ELF image passed the check but " + why);
    FUZZ_CHECK(image[4] == 2 && image[5] == 1, "a non-64-bit or big-endian ELF passed the check");
  }
  if (fatbin) {
    FUZZ_CHECK(size >= 16 && Inside(Le(image.get() + 6, 2), Le(image.get() + 8, 8), size),
               "a fatbin whose header points outside passed the check");
  }
  return 0;
}
