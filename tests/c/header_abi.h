/* The header's enumerators and public struct layout, listed once. The C99
 * and C++ test sources expand these lists with their own compilers and the
 * tests compare the results, so both languages agree on the ABI. */
#ifndef CUABI_TESTS_C_HEADER_ABI_H
#define CUABI_TESTS_C_HEADER_ABI_H

/* Every enumerator, in a fixed order. */
#define CUABI_TEST_CONSTANTS(X) \
  X(CUABI_SUCCESS) \
  X(CUABI_ERROR_INVALID_ARGUMENT) \
  X(CUABI_ERROR_INVALID_HANDLE) \
  X(CUABI_ERROR_OUT_OF_MEMORY) \
  X(CUABI_ERROR_INSUFFICIENT_BUFFER) \
  X(CUABI_ERROR_OUT_OF_RANGE) \
  X(CUABI_ERROR_NOT_FOUND) \
  X(CUABI_ERROR_NOT_SUPPORTED) \
  X(CUABI_ERROR_NOT_READY) \
  X(CUABI_ERROR_DRIVER_NOT_FOUND) \
  X(CUABI_ERROR_STUB_DRIVER) \
  X(CUABI_ERROR_NO_DEVICE) \
  X(CUABI_ERROR_NVRTC_NOT_FOUND) \
  X(CUABI_ERROR_COMPILE) \
  X(CUABI_ERROR_CONTEXT_LOST) \
  X(CUABI_ERROR_FORKED) \
  X(CUABI_ERROR_CUDA) \
  X(CUABI_ERROR_NVRTC) \
  X(CUABI_ERROR_IO) \
  X(CUABI_ERROR_INTERNAL) \
  X(CUABI_STATUS_COUNT) \
  X(CUABI_FUNC_MAX_THREADS_PER_BLOCK) \
  X(CUABI_FUNC_SHARED_SIZE_BYTES) \
  X(CUABI_FUNC_CONST_SIZE_BYTES) \
  X(CUABI_FUNC_LOCAL_SIZE_BYTES) \
  X(CUABI_FUNC_NUM_REGS) \
  X(CUABI_FUNC_PTX_VERSION) \
  X(CUABI_FUNC_BINARY_VERSION) \
  X(CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES) \
  X(CUABI_OUTPUT_CUBIN) \
  X(CUABI_OUTPUT_PTX) \
  X(CUABI_COMPILE_NO_CACHE) \
  X(CUABI_STREAM_NON_BLOCKING) \
  X(CUABI_EVENT_DISABLE_TIMING) \
  X(CUABI_EVENT_BLOCKING_SYNC) \
  X(CUABI_CAPTURE_GLOBAL) \
  X(CUABI_CAPTURE_THREAD_LOCAL) \
  X(CUABI_CAPTURE_RELAXED)

/* Sizes and offsets of the public structs and enum types. */
#define CUABI_TEST_LAYOUT(X) \
  X(sizeof(cuabi_launch_config)) \
  X(offsetof(cuabi_launch_config, struct_size)) \
  X(offsetof(cuabi_launch_config, grid_x)) \
  X(offsetof(cuabi_launch_config, grid_y)) \
  X(offsetof(cuabi_launch_config, grid_z)) \
  X(offsetof(cuabi_launch_config, block_x)) \
  X(offsetof(cuabi_launch_config, block_y)) \
  X(offsetof(cuabi_launch_config, block_z)) \
  X(offsetof(cuabi_launch_config, shared_mem_bytes)) \
  X(sizeof(cuabi_compile_desc)) \
  X(offsetof(cuabi_compile_desc, struct_size)) \
  X(offsetof(cuabi_compile_desc, source)) \
  X(offsetof(cuabi_compile_desc, name)) \
  X(offsetof(cuabi_compile_desc, options)) \
  X(offsetof(cuabi_compile_desc, num_options)) \
  X(offsetof(cuabi_compile_desc, header_sources)) \
  X(offsetof(cuabi_compile_desc, header_names)) \
  X(offsetof(cuabi_compile_desc, num_headers)) \
  X(offsetof(cuabi_compile_desc, name_expressions)) \
  X(offsetof(cuabi_compile_desc, num_name_expressions)) \
  X(offsetof(cuabi_compile_desc, output)) \
  X(offsetof(cuabi_compile_desc, flags)) \
  X(sizeof(cuabi_status)) \
  X(sizeof(cuabi_output)) \
  X(sizeof(cuabi_function_attribute)) \
  X(sizeof(cuabi_capture_mode))

/* Expands one list item as an array element. */
#define CUABI_TEST_ELEMENT(value) value,

#endif /* CUABI_TESTS_C_HEADER_ABI_H */
