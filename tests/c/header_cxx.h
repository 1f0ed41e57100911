// Entry points of header_cxx.cc, a translation unit compiled as strict C++11.
#ifndef CUABI_TESTS_C_HEADER_CXX_H
#define CUABI_TESTS_C_HEADER_CXX_H

#include <cstddef>

std::size_t cuabi_cxx_layout(std::size_t* out, std::size_t capacity);
int cuabi_cxx_init_macros();

#endif  // CUABI_TESTS_C_HEADER_CXX_H
