// Checks for the strings callers hand over (names, expressions, paths).
#pragma once

#include <cstddef>
#include <string>

namespace cuabi {

// True when the `size` bytes at `s` are well-formed UTF-8.
bool valid_utf8(const char* s, size_t size);
// `s` with every byte sequence that is not UTF-8 replaced by U+FFFD, so that
// text from elsewhere (NVRTC's log echoing a source line) stays UTF-8.
std::string to_utf8(const std::string& s);
// Throws INVALID_ARGUMENT unless `s` is a non-empty, NUL-terminated UTF-8
// string of at most 64 KiB; the message calls it `what`.
void check_name(const char* s, const char* what);

}  // namespace cuabi
