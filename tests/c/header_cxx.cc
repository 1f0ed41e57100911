// Compiled as strict C++11 (-std=c++11 -pedantic -Wall -Wextra -Werror): the
// header must also be valid C++ with its C linkage block and _INIT macros.
#include "header_cxx.h"

#include <cuabi/cuabi.h>

#include <cstddef>
#include <type_traits>

#include "header_abi.h"

// Every enum is a named type 32 bits wide (its _FORCE32 enumerator sees to it).
#define CUABI_CXX_ENUM_IS_32_BITS(t) \
  static_assert(std::is_enum<t>::value && sizeof(t) == 4, #t " is a 32-bit enum");
CUABI_TEST_ENUM_TYPES(CUABI_CXX_ENUM_IS_32_BITS)
static_assert(std::is_same<cuabi_stream_flags, uint32_t>::value, "flag sets are uint32_t");
static_assert(std::is_same<cuabi_event_flags, uint32_t>::value, "flag sets are uint32_t");
static_assert(std::is_same<cuabi_compile_flags, uint32_t>::value, "flag sets are uint32_t");
static_assert(std::is_standard_layout<cuabi_launch_config>::value, "C layout");
static_assert(std::is_standard_layout<cuabi_compile_desc>::value, "C layout");
static_assert(offsetof(cuabi_launch_config, struct_size) == 0, "struct_size comes first");
static_assert(offsetof(cuabi_compile_desc, struct_size) == 0, "struct_size comes first");
static_assert(CUABI_VERSION_NUMBER ==
                  CUABI_VERSION_MAJOR * 10000 + CUABI_VERSION_MINOR * 100 + CUABI_VERSION_PATCH,
              "version number formula");

std::size_t cuabi_cxx_layout(std::size_t* out, std::size_t capacity) {
  const std::size_t values[] = {
      CUABI_TEST_LAYOUT(CUABI_TEST_ELEMENT)
  };
  const std::size_t count = sizeof(values) / sizeof(values[0]);
  for (std::size_t i = 0; i < count && i < capacity; ++i) out[i] = values[i];
  return count;
}

int cuabi_cxx_init_macros() {
  const cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  const cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  int bad = 0;
  bad |= config.struct_size != sizeof(cuabi_launch_config);
  bad |= config.grid_x != 1 || config.grid_y != 1 || config.grid_z != 1;
  bad |= config.block_x != 1 || config.block_y != 1 || config.block_z != 1;
  bad |= config.shared_mem_bytes != 0;
  bad |= desc.struct_size != sizeof(cuabi_compile_desc);
  bad |= desc.source != nullptr || desc.name != nullptr || desc.options != nullptr;
  bad |= desc.num_options != 0 || desc.header_sources != nullptr || desc.header_names != nullptr;
  bad |= desc.num_headers != 0 || desc.name_expressions != nullptr;
  bad |= desc.num_name_expressions != 0;
  bad |= desc.output != CUABI_OUTPUT_CUBIN || desc.flags != 0;
  return bad;
}
