// Reading a caller's struct that starts with its own size (see the header's
// "Structs" convention).
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "error.hpp"

namespace cuabi {

// Each versioned struct's history: the size of its first version
// (`first_size`, the smallest struct_size accepted) and how many leading bytes
// that version defines (`first_fields`; the rest of first_size is padding
// there, which an older caller may have left uninitialised). A struct that
// never grew has one version, sizeof(T).
template <class T>
struct StructHistory {
  static constexpr size_t first_size = sizeof(T);
  static constexpr size_t first_fields = sizeof(T);
};
// How many leading bytes a caller's struct of `size` bytes defines, for a
// size below sizeof(T): that of a version between the first and this one
// (0: no version has that size). Specialised for a struct that grew more
// than once, with its sizes in `versions_text`.
template <class T>
constexpr size_t middle_version_fields(size_t) { return 0; }
template <class T>
inline const char* middle_versions_text() { return ""; }

// 0.1: struct_size, grid, block, shared_mem_bytes (36 bytes, padded to 40).
// 0.2 added flags, cluster_x/y/z, priority and programmatic_event (64).
// 0.3 added the launch attributes, access_policy_window to completion_event.
template <>
struct StructHistory<cuabi_launch_config> {
  static constexpr size_t first_size = 40;
  static constexpr size_t first_fields = offsetof(cuabi_launch_config, flags);
};
template <>
constexpr size_t middle_version_fields<cuabi_launch_config>(size_t size) {
  return size == offsetof(cuabi_launch_config, access_policy_window) ? size : 0;
}
template <>
inline const char* middle_versions_text<cuabi_launch_config>() { return ", 64,"; }
static_assert(offsetof(cuabi_launch_config, flags) == 36, "the 0.1 launch config layout moved");
static_assert(offsetof(cuabi_launch_config, access_policy_window) == 64,
              "the 0.2 launch config layout moved");
static_assert(sizeof(cuabi_launch_config) == 136, "the 0.3 launch config layout moved");

// 0.1: struct_size to flags (88 bytes). 0.3 added the typed options, arch
// to relocatable.
template <>
struct StructHistory<cuabi_compile_desc> {
  static constexpr size_t first_size = 88;
  static constexpr size_t first_fields = offsetof(cuabi_compile_desc, arch);
};
static_assert(offsetof(cuabi_compile_desc, arch) == 88, "the 0.1 compile desc layout moved");
static_assert(sizeof(cuabi_compile_desc) == 152, "the 0.3 compile desc layout moved");

// The sizes a caller's struct may have: one of its versions' sizes, or larger.
template <class T>
void check_struct_size(size_t size, const std::string& what) {
  using H = StructHistory<T>;
  if (size < H::first_size)
    fail_invalid(what + " is " + std::to_string(size) + "; expected " +
                 std::to_string(sizeof(T)) +
                 (H::first_size != sizeof(T) ? " (or " + std::to_string(H::first_size) +
                                                   " for a struct of the first version)"
                                             : std::string()) +
                 " (initialise it with sizeof or the _INIT macro)");
  if (size > H::first_size && size < sizeof(T) && middle_version_fields<T>(size) == 0)
    fail_invalid(what + " is " + std::to_string(size) + ", the size of no version of this struct "
                 "(expected " + std::to_string(H::first_size) + middle_versions_text<T>() +
                 " or " + std::to_string(sizeof(T)) + ")");
  if (size > sizeof(T) + 4096)
    fail_invalid(what + " is " + std::to_string(size) + ", implausibly large (expected " +
                 std::to_string(sizeof(T)) + ")");
}

// Copies the fields this library knows from `given` into `out` (which holds
// the defaults). A struct of the first version gives the fields it has (the
// later ones keep their defaults); a smaller struct_size than the first
// version's is refused; a larger one is accepted when the unknown tail is
// zero. out->struct_size is sizeof(T) afterwards.
template <class T>
void read_struct(const T* given, T* out, const char* what) {
  size_t size = given->struct_size;
  if (size == sizeof(T)) {
    *out = *given;
    return;
  }
  check_struct_size<T>(size, std::string(what) + "->struct_size");
  if (size < sizeof(T)) {
    const size_t middle = middle_version_fields<T>(size);
    std::memcpy(static_cast<void*>(out), given,
                middle ? middle : StructHistory<T>::first_fields);
    out->struct_size = sizeof(T);
    return;
  }
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
// functions): a struct of exactly this library's size gets every field, one
// of an older version the fields it has (its first `size` bytes), a larger
// one (a newer header) zeros past the fields this library knows.
template <class T>
void init_struct(T* out, size_t size, const T& defaults, const char* what) {
  if (!out) fail_invalid(std::string(what) + " is NULL");
  if (size < StructHistory<T>::first_size)
    fail_invalid("struct_size " + std::to_string(size) + " is smaller than this library's " +
                 std::to_string(StructHistory<T>::first_size) + "-byte " + what +
                 (StructHistory<T>::first_size != sizeof(T)
                      ? " of the first version (" + std::to_string(sizeof(T)) + " bytes now)"
                      : std::string()));
  check_struct_size<T>(size, "struct_size");
  std::memset(static_cast<void*>(out), 0, size);
  std::memcpy(static_cast<void*>(out), &defaults, size < sizeof(T) ? size : sizeof(T));
  out->struct_size = size;
}

}  // namespace cuabi
