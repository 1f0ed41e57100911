/* Entry points of header_c99.c, a translation unit compiled as strict C99. */
#ifndef CUABI_TESTS_C_HEADER_C99_H
#define CUABI_TESTS_C_HEADER_C99_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

size_t cuabi_c99_function_count(void);
const char* cuabi_c99_function_name(size_t index);
int cuabi_c99_function_present(size_t index);
uint32_t cuabi_c99_version_number(void);
const char* cuabi_c99_version_string(void);
int32_t cuabi_c99_version_part(int which);
size_t cuabi_c99_constants(int64_t* out, size_t capacity);
size_t cuabi_c99_layout(size_t* out, size_t capacity);
int cuabi_c99_init_macros(void);
int cuabi_c99_calls(void);

#ifdef __cplusplus
}
#endif

#endif /* CUABI_TESTS_C_HEADER_C99_H */
