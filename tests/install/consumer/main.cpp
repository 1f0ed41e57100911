// A C++ program that uses an installed cuabi through cuabi.hpp.
#include <cstdio>
#include <cstring>
#include <cuabi/cuabi.hpp>
#include <string>

int main() {
  if (cuabi::version() != CUABI_VERSION_NUMBER) {
    std::fprintf(stderr, "header %u, library %u\n", static_cast<unsigned>(CUABI_VERSION_NUMBER),
                 cuabi::version());
    return 1;
  }
  // A failed call is an exception of its status, carrying the library's message.
  cuabi::program none;
  try {
    none.log();
    std::fprintf(stderr, "a NULL program was not refused\n");
    return 1;
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_HANDLE>& e) {
    if (e.message().rfind("cuabi_program_get_log: program is NULL", 0) != 0 ||
        std::strcmp(e.status_name(), "CUABI_ERROR_INVALID_HANDLE") != 0) {
      std::fprintf(stderr, "unexpected error: %s\n", e.what());
      return 1;
    }
  }
  std::printf("C++ consumer linked cuabi %s\n", cuabi::version_string());
  return 0;
}
