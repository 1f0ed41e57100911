"""The ctypes low layer: ``include/cuabi/cuabi.h`` one to one.

Every function of the header is declared once, with its C prototype written
next to it, and bound to a loaded library by :func:`bind`. The tests parse
the header and check each declaration, constant and struct layout here
against it, so this file cannot drift from the header unnoticed.

Type conventions: handles are ``c_void_p`` (a Python ``int``, ``None`` for
NULL); ``char*`` buffers are ``c_char_p`` (pass
``ctypes.create_string_buffer(n)``); ``void* const* params`` is ``c_void_p``
so the address of a NumPy array of argument pointers (``args.ctypes.data``)
can be passed as it is; out-parameters are ``POINTER(T)`` (pass
``ctypes.byref(T())``).
"""

from __future__ import annotations

import ctypes
from ctypes import (
    POINTER,
    c_char_p,
    c_float,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
)
from ctypes import c_void_p
from typing import Any, Dict, List, Tuple

from ._constants import *  # noqa: F401,F403  (the header's constants belong to this layer)

# ---------------------------------------------------------------------------
# Scalar typedefs and handles
# ---------------------------------------------------------------------------

# typedef int32_t cuabi_status;
cuabi_status = c_int32
# typedef int32_t cuabi_output;
cuabi_output = c_int32
# typedef int32_t cuabi_function_attribute;
cuabi_function_attribute = c_int32
# typedef int32_t cuabi_capture_mode;
cuabi_capture_mode = c_int32

# typedef struct cuabi_device_s* cuabi_device;
cuabi_device = c_void_p
# typedef struct cuabi_program_s* cuabi_program;
cuabi_program = c_void_p
# typedef struct cuabi_module_s* cuabi_module;
cuabi_module = c_void_p
# typedef struct cuabi_function_s* cuabi_function;
cuabi_function = c_void_p
# typedef struct cuabi_buffer_s* cuabi_buffer;
cuabi_buffer = c_void_p
# typedef struct cuabi_host_buffer_s* cuabi_host_buffer;
cuabi_host_buffer = c_void_p
# typedef struct cuabi_stream_s* cuabi_stream;
cuabi_stream = c_void_p
# typedef struct cuabi_event_s* cuabi_event;
cuabi_event = c_void_p
# typedef struct cuabi_graph_s* cuabi_graph;
cuabi_graph = c_void_p
# typedef struct cuabi_graph_exec_s* cuabi_graph_exec;
cuabi_graph_exec = c_void_p
# typedef struct cuabi_launch_plan_s* cuabi_launch_plan;
cuabi_launch_plan = c_void_p

HANDLE_TYPES: Tuple[str, ...] = (
    "cuabi_device",
    "cuabi_program",
    "cuabi_module",
    "cuabi_function",
    "cuabi_buffer",
    "cuabi_host_buffer",
    "cuabi_stream",
    "cuabi_event",
    "cuabi_graph",
    "cuabi_graph_exec",
    "cuabi_launch_plan",
)

# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------


class cuabi_launch_config(ctypes.Structure):
    """typedef struct cuabi_launch_config {
      size_t struct_size;
      uint32_t grid_x, grid_y, grid_z;
      uint32_t block_x, block_y, block_z;
      uint32_t shared_mem_bytes;
    } cuabi_launch_config;"""

    _fields_ = [
        ("struct_size", c_size_t),
        ("grid_x", c_uint32),
        ("grid_y", c_uint32),
        ("grid_z", c_uint32),
        ("block_x", c_uint32),
        ("block_y", c_uint32),
        ("block_z", c_uint32),
        ("shared_mem_bytes", c_uint32),
    ]


def CUABI_LAUNCH_CONFIG_INIT() -> cuabi_launch_config:
    """#define CUABI_LAUNCH_CONFIG_INIT { sizeof(cuabi_launch_config), 1, 1, 1, 1, 1, 1, 0 }"""
    return cuabi_launch_config(ctypes.sizeof(cuabi_launch_config), 1, 1, 1, 1, 1, 1, 0)


class cuabi_compile_desc(ctypes.Structure):
    """typedef struct cuabi_compile_desc {
      size_t struct_size;
      const char* source;
      const char* name;
      const char* const* options;
      size_t num_options;
      const char* const* header_sources;
      const char* const* header_names;
      size_t num_headers;
      const char* const* name_expressions;
      size_t num_name_expressions;
      cuabi_output output;
      uint32_t flags;
    } cuabi_compile_desc;"""

    _fields_ = [
        ("struct_size", c_size_t),
        ("source", c_char_p),
        ("name", c_char_p),
        ("options", POINTER(c_char_p)),
        ("num_options", c_size_t),
        ("header_sources", POINTER(c_char_p)),
        ("header_names", POINTER(c_char_p)),
        ("num_headers", c_size_t),
        ("name_expressions", POINTER(c_char_p)),
        ("num_name_expressions", c_size_t),
        ("output", cuabi_output),
        ("flags", c_uint32),
    ]


def CUABI_COMPILE_DESC_INIT() -> cuabi_compile_desc:
    """#define CUABI_COMPILE_DESC_INIT { sizeof(cuabi_compile_desc), NULL, NULL, NULL, 0,
    NULL, NULL, 0, NULL, 0, CUABI_OUTPUT_CUBIN, 0 }"""
    return cuabi_compile_desc(
        ctypes.sizeof(cuabi_compile_desc),
        None,
        None,
        None,
        0,
        None,
        None,
        0,
        None,
        0,
        CUABI_OUTPUT_CUBIN,  # noqa: F405
        0,
    )


# ---------------------------------------------------------------------------
# Functions: (name, restype, argtypes), each under its C prototype
# ---------------------------------------------------------------------------

DECLARATIONS: List[Tuple[str, Any, List[Any]]] = []


def _decl(name: str, restype: Any, *argtypes: Any) -> None:
    DECLARATIONS.append((name, restype, list(argtypes)))


# Versions

# uint32_t cuabi_version(void);
_decl("cuabi_version", c_uint32)
# const char* cuabi_version_string(void);
_decl("cuabi_version_string", c_char_p)

# Status codes and the last error

# const char* cuabi_status_get_name(cuabi_status status);
_decl("cuabi_status_get_name", c_char_p, cuabi_status)
# const char* cuabi_status_get_description(cuabi_status status);
_decl("cuabi_status_get_description", c_char_p, cuabi_status)
# const char* cuabi_last_error_message(void);
_decl("cuabi_last_error_message", c_char_p)
# cuabi_status cuabi_last_error_status(void);
_decl("cuabi_last_error_status", cuabi_status)
# int32_t cuabi_last_error_code(void);
_decl("cuabi_last_error_code", c_int32)
# cuabi_status cuabi_last_error_log(char* buf, size_t* size);
_decl("cuabi_last_error_log", cuabi_status, c_char_p, POINTER(c_size_t))
# void cuabi_last_error_clear(void);
_decl("cuabi_last_error_clear", None)

# Loading and library information

# cuabi_status cuabi_init(void);
_decl("cuabi_init", cuabi_status)
# cuabi_status cuabi_driver_get_version(int32_t* version);
_decl("cuabi_driver_get_version", cuabi_status, POINTER(c_int32))
# cuabi_status cuabi_driver_get_path(char* buf, size_t* size);
_decl("cuabi_driver_get_path", cuabi_status, c_char_p, POINTER(c_size_t))
# cuabi_status cuabi_nvrtc_get_version(int32_t* major, int32_t* minor);
_decl("cuabi_nvrtc_get_version", cuabi_status, POINTER(c_int32), POINTER(c_int32))
# cuabi_status cuabi_nvrtc_get_path(char* buf, size_t* size);
_decl("cuabi_nvrtc_get_path", cuabi_status, c_char_p, POINTER(c_size_t))

# Devices

# cuabi_status cuabi_device_get_count(int32_t* count);
_decl("cuabi_device_get_count", cuabi_status, POINTER(c_int32))
# cuabi_status cuabi_device_get(int32_t ordinal, cuabi_device* out);
_decl("cuabi_device_get", cuabi_status, c_int32, POINTER(cuabi_device))
# void cuabi_device_release(cuabi_device device);
_decl("cuabi_device_release", None, cuabi_device)
# cuabi_status cuabi_device_get_ordinal(cuabi_device device, int32_t* ordinal);
_decl("cuabi_device_get_ordinal", cuabi_status, cuabi_device, POINTER(c_int32))
# cuabi_status cuabi_device_get_name(cuabi_device device, char* buf, size_t* size);
_decl("cuabi_device_get_name", cuabi_status, cuabi_device, c_char_p, POINTER(c_size_t))
# cuabi_status cuabi_device_get_compute_capability(cuabi_device device, int32_t* major,
#                                                  int32_t* minor);
_decl(
    "cuabi_device_get_compute_capability",
    cuabi_status,
    cuabi_device,
    POINTER(c_int32),
    POINTER(c_int32),
)
# cuabi_status cuabi_device_get_total_memory(cuabi_device device, size_t* bytes);
_decl("cuabi_device_get_total_memory", cuabi_status, cuabi_device, POINTER(c_size_t))
# cuabi_status cuabi_device_get_memory_info(cuabi_device device, size_t* free_bytes,
#                                           size_t* total_bytes);
_decl(
    "cuabi_device_get_memory_info",
    cuabi_status,
    cuabi_device,
    POINTER(c_size_t),
    POINTER(c_size_t),
)
# cuabi_status cuabi_device_get_attribute(cuabi_device device, int32_t cu_attribute,
#                                         int32_t* value);
_decl(
    "cuabi_device_get_attribute", cuabi_status, cuabi_device, c_int32, POINTER(c_int32)
)
# cuabi_status cuabi_device_get_context(cuabi_device device, uint64_t* cu_context);
_decl("cuabi_device_get_context", cuabi_status, cuabi_device, POINTER(c_uint64))
# cuabi_status cuabi_device_synchronize(cuabi_device device);
_decl("cuabi_device_synchronize", cuabi_status, cuabi_device)
# cuabi_status cuabi_device_get_stream_priority_range(cuabi_device device, int32_t* least,
#                                                     int32_t* greatest);
_decl(
    "cuabi_device_get_stream_priority_range",
    cuabi_status,
    cuabi_device,
    POINTER(c_int32),
    POINTER(c_int32),
)
# cuabi_status cuabi_device_reset(cuabi_device device);
_decl("cuabi_device_reset", cuabi_status, cuabi_device)

# Programs (NVRTC)

# cuabi_status cuabi_program_create(const char* source, const char* name, size_t num_headers,
#                                   const char* const* header_sources,
#                                   const char* const* header_names, cuabi_program* out);
_decl(
    "cuabi_program_create",
    cuabi_status,
    c_char_p,
    c_char_p,
    c_size_t,
    POINTER(c_char_p),
    POINTER(c_char_p),
    POINTER(cuabi_program),
)
# void cuabi_program_release(cuabi_program program);
_decl("cuabi_program_release", None, cuabi_program)
# cuabi_status cuabi_program_add_name_expression(cuabi_program program, const char* expression);
_decl("cuabi_program_add_name_expression", cuabi_status, cuabi_program, c_char_p)
# cuabi_status cuabi_program_compile(cuabi_program program, size_t num_options,
#                                    const char* const* options);
_decl("cuabi_program_compile", cuabi_status, cuabi_program, c_size_t, POINTER(c_char_p))
# cuabi_status cuabi_program_get_log(cuabi_program program, char* buf, size_t* size);
_decl("cuabi_program_get_log", cuabi_status, cuabi_program, c_char_p, POINTER(c_size_t))
# cuabi_status cuabi_program_get_ptx(cuabi_program program, char* buf, size_t* size);
_decl("cuabi_program_get_ptx", cuabi_status, cuabi_program, c_char_p, POINTER(c_size_t))
# cuabi_status cuabi_program_get_cubin(cuabi_program program, void* buf, size_t* size);
_decl(
    "cuabi_program_get_cubin", cuabi_status, cuabi_program, c_void_p, POINTER(c_size_t)
)
# cuabi_status cuabi_program_get_lowered_name(cuabi_program program, const char* expression,
#                                             char* buf, size_t* size);
_decl(
    "cuabi_program_get_lowered_name",
    cuabi_status,
    cuabi_program,
    c_char_p,
    c_char_p,
    POINTER(c_size_t),
)

# Modules and functions

# cuabi_status cuabi_module_compile(cuabi_device device, const cuabi_compile_desc* desc,
#                                   cuabi_module* out);
_decl(
    "cuabi_module_compile",
    cuabi_status,
    cuabi_device,
    POINTER(cuabi_compile_desc),
    POINTER(cuabi_module),
)
# cuabi_status cuabi_module_load_data(cuabi_device device, const void* image, size_t size,
#                                     cuabi_module* out);
_decl(
    "cuabi_module_load_data",
    cuabi_status,
    cuabi_device,
    c_void_p,
    c_size_t,
    POINTER(cuabi_module),
)
# cuabi_status cuabi_module_load_file(cuabi_device device, const char* path, cuabi_module* out);
_decl(
    "cuabi_module_load_file",
    cuabi_status,
    cuabi_device,
    c_char_p,
    POINTER(cuabi_module),
)
# void cuabi_module_release(cuabi_module module);
_decl("cuabi_module_release", None, cuabi_module)
# cuabi_status cuabi_module_get_from_cache(cuabi_module module, int32_t* hit);
_decl("cuabi_module_get_from_cache", cuabi_status, cuabi_module, POINTER(c_int32))
# cuabi_status cuabi_module_get_function(cuabi_module module, const char* name,
#                                        cuabi_function* out);
_decl(
    "cuabi_module_get_function",
    cuabi_status,
    cuabi_module,
    c_char_p,
    POINTER(cuabi_function),
)
# cuabi_status cuabi_module_get_lowered_name(cuabi_module module, const char* expression,
#                                            char* buf, size_t* size);
_decl(
    "cuabi_module_get_lowered_name",
    cuabi_status,
    cuabi_module,
    c_char_p,
    c_char_p,
    POINTER(c_size_t),
)
# cuabi_status cuabi_module_get_global(cuabi_module module, const char* name,
#                                      uint64_t* device_ptr, size_t* bytes);
_decl(
    "cuabi_module_get_global",
    cuabi_status,
    cuabi_module,
    c_char_p,
    POINTER(c_uint64),
    POINTER(c_size_t),
)
# void cuabi_function_release(cuabi_function function);
_decl("cuabi_function_release", None, cuabi_function)
# cuabi_status cuabi_function_get_param_count(cuabi_function function, size_t* count);
_decl("cuabi_function_get_param_count", cuabi_status, cuabi_function, POINTER(c_size_t))
# cuabi_status cuabi_function_get_param_info(cuabi_function function, size_t index,
#                                            size_t* offset, size_t* size);
_decl(
    "cuabi_function_get_param_info",
    cuabi_status,
    cuabi_function,
    c_size_t,
    POINTER(c_size_t),
    POINTER(c_size_t),
)
# cuabi_status cuabi_function_get_args_size(cuabi_function function, size_t* size);
_decl("cuabi_function_get_args_size", cuabi_status, cuabi_function, POINTER(c_size_t))
# cuabi_status cuabi_function_get_name(cuabi_function function, char* buf, size_t* size);
_decl(
    "cuabi_function_get_name", cuabi_status, cuabi_function, c_char_p, POINTER(c_size_t)
)
# cuabi_status cuabi_function_get_attribute(cuabi_function function,
#                                           cuabi_function_attribute attribute, int32_t* value);
_decl(
    "cuabi_function_get_attribute",
    cuabi_status,
    cuabi_function,
    cuabi_function_attribute,
    POINTER(c_int32),
)
# cuabi_status cuabi_function_set_attribute(cuabi_function function,
#                                           cuabi_function_attribute attribute, int32_t value);
_decl(
    "cuabi_function_set_attribute",
    cuabi_status,
    cuabi_function,
    cuabi_function_attribute,
    c_int32,
)

# Launch

# cuabi_status cuabi_function_launch(cuabi_function function, const cuabi_launch_config* config,
#                           cuabi_stream stream, void* const* params, size_t num_params);
_decl(
    "cuabi_function_launch",
    cuabi_status,
    cuabi_function,
    POINTER(cuabi_launch_config),
    cuabi_stream,
    c_void_p,
    c_size_t,
)
# cuabi_status cuabi_function_launch_sized(cuabi_function function, const cuabi_launch_config* config,
#                                 cuabi_stream stream, void* const* params,
#                                 const size_t* param_sizes, size_t num_params);
_decl(
    "cuabi_function_launch_sized",
    cuabi_status,
    cuabi_function,
    POINTER(cuabi_launch_config),
    cuabi_stream,
    c_void_p,
    POINTER(c_size_t),
    c_size_t,
)
# cuabi_status cuabi_function_launch_packed(cuabi_function function, const cuabi_launch_config* config,
#                                  cuabi_stream stream, const void* args, size_t args_size);
_decl(
    "cuabi_function_launch_packed",
    cuabi_status,
    cuabi_function,
    POINTER(cuabi_launch_config),
    cuabi_stream,
    c_void_p,
    c_size_t,
)

# cuabi_status cuabi_launch_plan_create(cuabi_function function,
#                                       const cuabi_launch_config* config, cuabi_stream stream,
#                                       cuabi_launch_plan* out);
_decl(
    "cuabi_launch_plan_create",
    cuabi_status,
    cuabi_function,
    POINTER(cuabi_launch_config),
    cuabi_stream,
    POINTER(cuabi_launch_plan),
)
# void cuabi_launch_plan_release(cuabi_launch_plan plan);
_decl("cuabi_launch_plan_release", None, cuabi_launch_plan)
# cuabi_status cuabi_launch_plan_get_args(cuabi_launch_plan plan, void** args, size_t* size);
_decl(
    "cuabi_launch_plan_get_args",
    cuabi_status,
    cuabi_launch_plan,
    POINTER(c_void_p),
    POINTER(c_size_t),
)
# cuabi_status cuabi_launch_plan_launch(cuabi_launch_plan plan);
_decl("cuabi_launch_plan_launch", cuabi_status, cuabi_launch_plan)

# Device memory

# cuabi_status cuabi_buffer_alloc(cuabi_device device, size_t bytes, cuabi_buffer* out);
_decl("cuabi_buffer_alloc", cuabi_status, cuabi_device, c_size_t, POINTER(cuabi_buffer))
# cuabi_status cuabi_buffer_wrap(cuabi_device device, uint64_t device_ptr, size_t bytes,
#                                cuabi_buffer* out);
_decl(
    "cuabi_buffer_wrap",
    cuabi_status,
    cuabi_device,
    c_uint64,
    c_size_t,
    POINTER(cuabi_buffer),
)
# void cuabi_buffer_release(cuabi_buffer buffer);
_decl("cuabi_buffer_release", None, cuabi_buffer)
# cuabi_status cuabi_buffer_get_pointer(cuabi_buffer buffer, uint64_t* ptr);
_decl("cuabi_buffer_get_pointer", cuabi_status, cuabi_buffer, POINTER(c_uint64))
# cuabi_status cuabi_buffer_get_size(cuabi_buffer buffer, size_t* bytes);
_decl("cuabi_buffer_get_size", cuabi_status, cuabi_buffer, POINTER(c_size_t))
# cuabi_status cuabi_buffer_get_device_ordinal(cuabi_buffer buffer, int32_t* ordinal);
_decl("cuabi_buffer_get_device_ordinal", cuabi_status, cuabi_buffer, POINTER(c_int32))
# cuabi_status cuabi_buffer_copy_from_host(cuabi_buffer dst, size_t dst_offset,
#                                          const void* src, size_t bytes);
_decl(
    "cuabi_buffer_copy_from_host",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    c_void_p,
    c_size_t,
)
# cuabi_status cuabi_buffer_copy_to_host(cuabi_buffer src, size_t src_offset, void* dst,
#                                        size_t bytes);
_decl(
    "cuabi_buffer_copy_to_host",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    c_void_p,
    c_size_t,
)
# cuabi_status cuabi_buffer_copy_from_host_async(cuabi_buffer dst, size_t dst_offset,
#                                                const void* src, size_t bytes,
#                                                cuabi_stream stream);
_decl(
    "cuabi_buffer_copy_from_host_async",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    c_void_p,
    c_size_t,
    cuabi_stream,
)
# cuabi_status cuabi_buffer_copy_to_host_async(cuabi_buffer src, size_t src_offset, void* dst,
#                                              size_t bytes, cuabi_stream stream);
_decl(
    "cuabi_buffer_copy_to_host_async",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    c_void_p,
    c_size_t,
    cuabi_stream,
)
# cuabi_status cuabi_buffer_copy(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
#                                size_t src_offset, size_t bytes);
_decl(
    "cuabi_buffer_copy",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    cuabi_buffer,
    c_size_t,
    c_size_t,
)
# cuabi_status cuabi_buffer_copy_async(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
#                                      size_t src_offset, size_t bytes, cuabi_stream stream);
_decl(
    "cuabi_buffer_copy_async",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    cuabi_buffer,
    c_size_t,
    c_size_t,
    cuabi_stream,
)
# cuabi_status cuabi_buffer_memset(cuabi_buffer buffer, size_t offset, uint8_t value,
#                                  size_t bytes);
_decl("cuabi_buffer_memset", cuabi_status, cuabi_buffer, c_size_t, c_uint8, c_size_t)
# cuabi_status cuabi_buffer_memset_async(cuabi_buffer buffer, size_t offset, uint8_t value,
#                                        size_t bytes, cuabi_stream stream);
_decl(
    "cuabi_buffer_memset_async",
    cuabi_status,
    cuabi_buffer,
    c_size_t,
    c_uint8,
    c_size_t,
    cuabi_stream,
)

# Page-locked host memory

# cuabi_status cuabi_host_buffer_alloc(cuabi_device device, size_t bytes, cuabi_host_buffer* out);
_decl(
    "cuabi_host_buffer_alloc", cuabi_status, cuabi_device, c_size_t, POINTER(cuabi_host_buffer)
)
# cuabi_status cuabi_host_buffer_register(cuabi_device device, void* ptr, size_t bytes,
#                                  cuabi_host_buffer* out);
_decl(
    "cuabi_host_buffer_register",
    cuabi_status,
    cuabi_device,
    c_void_p,
    c_size_t,
    POINTER(cuabi_host_buffer),
)
# void cuabi_host_buffer_release(cuabi_host_buffer buffer);
_decl("cuabi_host_buffer_release", None, cuabi_host_buffer)
# cuabi_status cuabi_host_buffer_get_pointer(cuabi_host_buffer buffer, void** ptr);
_decl(
    "cuabi_host_buffer_get_pointer", cuabi_status, cuabi_host_buffer, POINTER(c_void_p)
)
# cuabi_status cuabi_host_buffer_get_size(cuabi_host_buffer buffer, size_t* bytes);
_decl("cuabi_host_buffer_get_size", cuabi_status, cuabi_host_buffer, POINTER(c_size_t))

# Streams

# cuabi_status cuabi_stream_create(cuabi_device device, uint32_t flags, int32_t priority,
#                                  cuabi_stream* out);
_decl(
    "cuabi_stream_create",
    cuabi_status,
    cuabi_device,
    c_uint32,
    c_int32,
    POINTER(cuabi_stream),
)
# cuabi_status cuabi_stream_wrap(cuabi_device device, uint64_t cu_stream, cuabi_stream* out);
_decl("cuabi_stream_wrap", cuabi_status, cuabi_device, c_uint64, POINTER(cuabi_stream))
# void cuabi_stream_release(cuabi_stream stream);
_decl("cuabi_stream_release", None, cuabi_stream)
# cuabi_status cuabi_stream_get_handle(cuabi_stream stream, uint64_t* cu_stream);
_decl("cuabi_stream_get_handle", cuabi_status, cuabi_stream, POINTER(c_uint64))
# cuabi_status cuabi_stream_synchronize(cuabi_stream stream);
_decl("cuabi_stream_synchronize", cuabi_status, cuabi_stream)
# cuabi_status cuabi_stream_query(cuabi_stream stream);
_decl("cuabi_stream_query", cuabi_status, cuabi_stream)
# cuabi_status cuabi_stream_wait_event(cuabi_stream stream, cuabi_event event);
_decl("cuabi_stream_wait_event", cuabi_status, cuabi_stream, cuabi_event)

# Events

# cuabi_status cuabi_event_create(cuabi_device device, uint32_t flags, cuabi_event* out);
_decl("cuabi_event_create", cuabi_status, cuabi_device, c_uint32, POINTER(cuabi_event))
# void cuabi_event_release(cuabi_event event);
_decl("cuabi_event_release", None, cuabi_event)
# cuabi_status cuabi_event_record(cuabi_event event, cuabi_stream stream);
_decl("cuabi_event_record", cuabi_status, cuabi_event, cuabi_stream)
# cuabi_status cuabi_event_synchronize(cuabi_event event);
_decl("cuabi_event_synchronize", cuabi_status, cuabi_event)
# cuabi_status cuabi_event_query(cuabi_event event);
_decl("cuabi_event_query", cuabi_status, cuabi_event)
# cuabi_status cuabi_event_get_elapsed_ms(cuabi_event start, cuabi_event end, float* milliseconds);
_decl(
    "cuabi_event_get_elapsed_ms", cuabi_status, cuabi_event, cuabi_event, POINTER(c_float)
)

# Graphs

# cuabi_status cuabi_stream_begin_capture(cuabi_stream stream, cuabi_capture_mode mode);
_decl("cuabi_stream_begin_capture", cuabi_status, cuabi_stream, cuabi_capture_mode)
# cuabi_status cuabi_stream_end_capture(cuabi_stream stream, cuabi_graph* out);
_decl("cuabi_stream_end_capture", cuabi_status, cuabi_stream, POINTER(cuabi_graph))
# void cuabi_graph_release(cuabi_graph graph);
_decl("cuabi_graph_release", None, cuabi_graph)
# cuabi_status cuabi_graph_get_node_count(cuabi_graph graph, size_t* count);
_decl("cuabi_graph_get_node_count", cuabi_status, cuabi_graph, POINTER(c_size_t))
# cuabi_status cuabi_graph_instantiate(cuabi_graph graph, cuabi_graph_exec* out);
_decl("cuabi_graph_instantiate", cuabi_status, cuabi_graph, POINTER(cuabi_graph_exec))
# void cuabi_graph_exec_release(cuabi_graph_exec exec);
_decl("cuabi_graph_exec_release", None, cuabi_graph_exec)
# cuabi_status cuabi_graph_exec_launch(cuabi_graph_exec exec, cuabi_stream stream);
_decl("cuabi_graph_exec_launch", cuabi_status, cuabi_graph_exec, cuabi_stream)


def bind(cdll: ctypes.CDLL) -> Dict[str, str]:
    """Declares argtypes and restype on every function of ``cdll``.

    Returns the functions the library does not export, with the reason; a
    library of the same major version but older than this header may lack
    some, and only those then fail (with AttributeError) when called."""
    missing: Dict[str, str] = {}
    for name, restype, argtypes in DECLARATIONS:
        try:
            fn = getattr(cdll, name)
        except AttributeError as exc:
            missing[name] = str(exc)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    return missing
