// Reading a caller's struct that starts with its own size (see the header's
// "Structs" convention).
#pragma once

#include <cstring>
#include <string>

#include "error.hpp"

namespace cuabi {

// Copies the fields this library knows from `given` into `out` (which holds
// the defaults). A smaller struct_size than the first version's is refused; a
// larger one is accepted when the unknown tail is zero.
template <class T>
void read_struct(const T* given, T* out, const char* what) {
  size_t size = given->struct_size;
  if (size == sizeof(T)) {
    *out = *given;
    return;
  }
  if (size < sizeof(T))
    fail_invalid(std::string(what) + "->struct_size is " + std::to_string(size) + "; expected " +
                 std::to_string(sizeof(T)) + " (initialise it with sizeof or the _INIT macro)");
  if (size > sizeof(T) + 4096)
    fail_invalid(std::string(what) + "->struct_size is " + std::to_string(size) +
                 ", implausibly large (expected " + std::to_string(sizeof(T)) + ")");
  const unsigned char* tail = reinterpret_cast<const unsigned char*>(given) + sizeof(T);
  for (size_t i = 0; i < size - sizeof(T); ++i)
    if (tail[i] != 0)
      fail(CUABI_ERROR_NOT_SUPPORTED,
           std::string(what) + " sets fields newer than this library (cuabi " +
               CUABI_VERSION_STRING + " knows the first " + std::to_string(sizeof(T)) +
               " bytes)");
  std::memcpy(out, given, sizeof(T));
  out->struct_size = sizeof(T);
}

// Fills a caller's struct of `size` bytes with `defaults` (the cuabi_*_init
// functions): a struct of exactly this library's size gets every field, a
// larger one (a newer header) zeros past the fields this library knows.
template <class T>
void init_struct(T* out, size_t size, const T& defaults, const char* what) {
  if (!out) fail_invalid(std::string(what) + " is NULL");
  if (size < sizeof(T))
    fail_invalid("struct_size " + std::to_string(size) + " is smaller than this library's " +
                 std::to_string(sizeof(T)) + "-byte " + what);
  if (size > sizeof(T) + 4096)
    fail_invalid("struct_size " + std::to_string(size) + " is implausibly large (expected " +
                 std::to_string(sizeof(T)) + ")");
  std::memset(out, 0, size);
  std::memcpy(out, &defaults, sizeof(T));
  out->struct_size = size;
}

}  // namespace cuabi
