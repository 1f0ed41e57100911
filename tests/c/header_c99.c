/*
 * Compiled as strict C99 (-std=c99 -pedantic -Wall -Wextra -Werror): the
 * header must be plain C, and every type, macro and enumerator it defines
 * must be usable from C. The C++ test (header_test.cc) calls in here.
 */
#include "header_c99.h"

#include <cuabi/cuabi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "header_abi.h"

typedef void (*cuabi_c99_any_fn)(void);

#define CUABI_C99_FN(f) \
  { #f, (cuabi_c99_any_fn)f }

static const struct {
  const char* name;
  cuabi_c99_any_fn fn;
} cuabi_c99_functions[] = {
#define CUABI_C99_FN_ITEM(f) CUABI_C99_FN(f),
    CUABI_TEST_FUNCTIONS(CUABI_C99_FN_ITEM)
};

size_t cuabi_c99_function_count(void) {
  return sizeof(cuabi_c99_functions) / sizeof(cuabi_c99_functions[0]);
}

const char* cuabi_c99_function_name(size_t index) {
  return index < cuabi_c99_function_count() ? cuabi_c99_functions[index].name : NULL;
}

int cuabi_c99_function_present(size_t index) {
  return index < cuabi_c99_function_count() && cuabi_c99_functions[index].fn != NULL;
}

uint32_t cuabi_c99_version_number(void) { return CUABI_VERSION_NUMBER; }

const char* cuabi_c99_version_string(void) { return CUABI_VERSION_STRING; }

int32_t cuabi_c99_version_part(int which) {
  switch (which) {
    case 0:
      return CUABI_VERSION_MAJOR;
    case 1:
      return CUABI_VERSION_MINOR;
    default:
      return CUABI_VERSION_PATCH;
  }
}

/* Every enumerator of the header as C sees it, in a fixed order; the C++
 * side compares with its own view so both languages agree on the ABI. */
size_t cuabi_c99_constants(int64_t* out, size_t capacity) {
  const int64_t values[] = {
      CUABI_TEST_CONSTANTS(CUABI_TEST_ELEMENT)
  };
  const size_t count = sizeof(values) / sizeof(values[0]);
  size_t i;
  for (i = 0; i < count && i < capacity; ++i) out[i] = values[i];
  return count;
}

/* Layout of the public structs as the C compiler lays them out. */
size_t cuabi_c99_layout(size_t* out, size_t capacity) {
  const size_t values[] = {
      CUABI_TEST_LAYOUT(CUABI_TEST_ELEMENT)
  };
  const size_t count = sizeof(values) / sizeof(values[0]);
  size_t i;
  for (i = 0; i < count && i < capacity; ++i) out[i] = values[i];
  return count;
}

/* The _INIT macros as C initialisers. Returns 0 when every field holds the
 * documented default. */
int cuabi_c99_init_macros(void) {
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  int bad = 0;
  bad |= config.struct_size != sizeof(cuabi_launch_config);
  bad |= config.grid_x != 1 || config.grid_y != 1 || config.grid_z != 1;
  bad |= config.block_x != 1 || config.block_y != 1 || config.block_z != 1;
  bad |= config.shared_mem_bytes != 0;
  bad |= desc.struct_size != sizeof(cuabi_compile_desc);
  bad |= desc.source != NULL || desc.name != NULL || desc.options != NULL;
  bad |= desc.num_options != 0 || desc.header_sources != NULL || desc.header_names != NULL;
  bad |= desc.num_headers != 0 || desc.name_expressions != NULL;
  bad |= desc.num_name_expressions != 0;
  bad |= desc.output != CUABI_OUTPUT_CUBIN || desc.flags != 0;
  return bad;
}

/* Calls from C that need no device: statuses, versions, the last error and
 * releasing NULL of every kind. Returns 0 on success, else the failing step. */
int cuabi_c99_calls(void) {
  cuabi_device device = NULL;
  cuabi_program program = NULL;
  cuabi_module module = NULL;
  cuabi_function function = NULL;
  cuabi_buffer buffer = NULL;
  cuabi_host_buffer host_buffer = NULL;
  cuabi_stream stream = NULL;
  cuabi_event event = NULL;
  cuabi_graph graph = NULL;
  cuabi_graph_exec graph_exec = NULL;
  cuabi_launch_plan plan = NULL;
  cuabi_status status;
  int32_t ordinal = -7;
  size_t size = 0;
  cuabi_function_attribute attribute = CUABI_FUNC_NUM_REGS;
  cuabi_capture_mode mode = CUABI_CAPTURE_RELAXED;
  cuabi_output output = CUABI_OUTPUT_PTX;

  if (cuabi_version() != CUABI_VERSION_NUMBER) return 1;
  if (strcmp(cuabi_version_string(), CUABI_VERSION_STRING) != 0) return 2;
  if (strcmp(cuabi_status_get_name(CUABI_ERROR_INVALID_HANDLE), "CUABI_ERROR_INVALID_HANDLE") != 0) {
    return 3;
  }

  status = cuabi_device_get_ordinal(device, &ordinal);
  if (status != CUABI_ERROR_INVALID_HANDLE || ordinal != -7) return 4;
  if (cuabi_last_error_status() != CUABI_ERROR_INVALID_HANDLE) return 5;
  if (cuabi_last_error_message()[0] == '\0') return 6;
  if (cuabi_last_error_log(NULL, &size) != CUABI_SUCCESS || size != 1) return 7;

  cuabi_device_release(device);
  cuabi_program_release(program);
  cuabi_module_release(module);
  cuabi_function_release(function);
  cuabi_buffer_release(buffer);
  cuabi_host_buffer_release(host_buffer);
  cuabi_stream_release(stream);
  cuabi_event_release(event);
  cuabi_graph_release(graph);
  cuabi_graph_exec_release(graph_exec);
  cuabi_launch_plan_release(plan);
  if (cuabi_last_error_status() != CUABI_ERROR_INVALID_HANDLE) return 8;

  (void)attribute;
  (void)mode;
  (void)output;
  cuabi_last_error_clear();
  if (cuabi_last_error_status() != CUABI_SUCCESS) return 9;
  if (cuabi_last_error_message()[0] != '\0') return 10;
  if (cuabi_last_error_code() != 0) return 11;
  return 0;
}
