// Checks for the strings callers hand over (names, expressions, paths).
#pragma once

#include <cstddef>

namespace cuabi {

// True when the `size` bytes at `s` are well-formed UTF-8.
bool valid_utf8(const char* s, size_t size);
// Throws INVALID_ARGUMENT unless `s` is a non-empty, NUL-terminated UTF-8
// string of at most 64 KiB; the message calls it `what`.
void check_name(const char* s, const char* what);

}  // namespace cuabi
