/*
 * The cuabi backend: the same operations through cuabi's C ABI
 * (include/cuabi/cuabi.h). Launches are timed three ways: cuabi_function_launch (the
 * driver's own argument convention, the headline figure), cuabi_function_launch_sized
 * (each argument's size checked), cuabi_function_launch_packed (one argument block) and
 * cuabi_launch_plan_launch (a prepared launch; its arguments written once).
 */
#include <cuabi/cuabi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static _Thread_local char last_error[2048];
static cuabi_device device;

const char* bk_impl(void) { return "c_cuabi"; }
const char* bk_error(void) { return last_error; }

static int ca_fail(cuabi_status st, const char* call) {
  snprintf(last_error, sizeof(last_error), "%s: %s: %s", call, cuabi_status_get_name(st),
           cuabi_last_error_message());
  return -1;
}

#define CA(call)                                          \
  do {                                                    \
    cuabi_status st_ = (call);                            \
    if (st_ != CUABI_SUCCESS) return ca_fail(st_, #call); \
  } while (0)

int bk_init(char* name, size_t name_size, int* major, int* minor) {
  if (!device) CA(cuabi_device_get(0, &device));
  size_t size = name_size;
  CA(cuabi_device_get_name(device, name, &size));
  int32_t ma = 0, mi = 0;
  CA(cuabi_device_get_compute_capability(device, &ma, &mi));
  *major = ma;
  *minor = mi;
  return 0;
}

int bk_versions(int* driver, int* nvrtc_major, int* nvrtc_minor) {
  int32_t d = 0, ma = 0, mi = 0;
  CA(cuabi_driver_get_version(&d));
  cuabi_nvrtc_get_version(&ma, &mi);
  *driver = d;
  *nvrtc_major = ma;
  *nvrtc_minor = mi;
  return 0;
}

int bk_compile(const char* source, const char* name, const char* const* options, int num_options,
               int cubin, void** image, size_t* size) {
  cuabi_program prog;
  CA(cuabi_program_create(source, name, 0, NULL, NULL, &prog));
  cuabi_status st = cuabi_program_compile(prog, (size_t)num_options, options);
  if (st != CUABI_SUCCESS) {
    ca_fail(st, "cuabi_program_compile");
    cuabi_program_release(prog);
    return -1;
  }
  size_t n = 0;
  st = cubin ? cuabi_program_get_cubin(prog, NULL, &n) : cuabi_program_get_ptx(prog, NULL, &n);
  char* out = st == CUABI_SUCCESS ? malloc(n ? n : 1) : NULL;
  if (out)
    st = cubin ? cuabi_program_get_cubin(prog, out, &n) : cuabi_program_get_ptx(prog, out, &n);
  if (st != CUABI_SUCCESS || !out) {
    if (st != CUABI_SUCCESS)
      ca_fail(st, cubin ? "cuabi_program_get_cubin" : "cuabi_program_get_ptx");
    else
      snprintf(last_error, sizeof(last_error), "out of memory");
    free(out);
    cuabi_program_release(prog);
    return -1;
  }
  cuabi_program_release(prog);
  *image = out;
  *size = n;
  return 0;
}

int bk_module_load(const void* image, size_t size, void** module) {
  cuabi_module m;
  CA(cuabi_module_load_data(device, image, size, &m));
  *module = m;
  return 0;
}

int bk_module_compile_cached(const char* source, const char* const* options, int num_options,
                             void** module, int* hit) {
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = source;
  desc.name = "saxpy.cu";
  desc.options = options;
  desc.num_options = (size_t)num_options;
  cuabi_module m;
  CA(cuabi_module_compile(device, &desc, &m));
  int32_t h = 0;
  cuabi_module_get_from_cache(m, &h);
  *module = m;
  *hit = h;
  return 0;
}

void bk_module_unload(void* module) { cuabi_module_release((cuabi_module)module); }

int bk_module_function(void* module, const char* name, void** function) {
  cuabi_function f;
  CA(cuabi_module_get_function((cuabi_module)module, name, &f));
  *function = f;
  return 0;
}

int bk_stream_create(void** stream) {
  cuabi_stream s;
  CA(cuabi_stream_create(device, 0, 0, &s));
  *stream = s;
  return 0;
}
int bk_stream_sync(void* stream) {
  CA(cuabi_stream_synchronize((cuabi_stream)stream));
  return 0;
}
void bk_stream_destroy(void* stream) { cuabi_stream_release((cuabi_stream)stream); }

int bk_event_create(void** event) {
  cuabi_event e;
  CA(cuabi_event_create(device, 0, &e));
  *event = e;
  return 0;
}
int bk_event_record(void* event, void* stream) {
  CA(cuabi_event_record((cuabi_event)event, (cuabi_stream)stream));
  return 0;
}
int bk_event_elapsed_ms(void* start, void* stop, float* ms) {
  CA(cuabi_event_get_elapsed_ms((cuabi_event)start, (cuabi_event)stop, ms));
  return 0;
}
void bk_event_destroy(void* event) { cuabi_event_release((cuabi_event)event); }

int bk_alloc(size_t bytes, void** buffer, uint64_t* ptr) {
  cuabi_buffer b;
  CA(cuabi_buffer_alloc(device, bytes, &b));
  cuabi_status st = cuabi_buffer_get_pointer(b, ptr);
  if (st != CUABI_SUCCESS) {
    cuabi_buffer_release(b);
    return ca_fail(st, "cuabi_buffer_get_pointer");
  }
  *buffer = b;
  return 0;
}
void bk_free(void* buffer) { cuabi_buffer_release((cuabi_buffer)buffer); }

int bk_raw_context(uint64_t* out) {
  CA(cuabi_device_get_context(device, out));
  return 0;
}
int bk_raw_stream(void* stream, uint64_t* out) {
  CA(cuabi_stream_get_handle((cuabi_stream)stream, out));
  return 0;
}

int bk_copy_to_device(void* buffer, const void* src, size_t bytes) {
  CA(cuabi_buffer_copy_from_host((cuabi_buffer)buffer, 0, src, bytes));
  return 0;
}
int bk_copy_to_host(void* dst, void* buffer, size_t bytes) {
  CA(cuabi_buffer_copy_to_host((cuabi_buffer)buffer, 0, dst, bytes));
  return 0;
}
int bk_copy_to_device_async(void* buffer, const void* src, size_t bytes, void* stream) {
  CA(cuabi_buffer_copy_from_host_async((cuabi_buffer)buffer, 0, src, bytes, (cuabi_stream)stream));
  return 0;
}
int bk_copy_to_host_async(void* dst, void* buffer, size_t bytes, void* stream) {
  CA(cuabi_buffer_copy_to_host_async((cuabi_buffer)buffer, 0, dst, bytes, (cuabi_stream)stream));
  return 0;
}

int bk_host_alloc(size_t bytes, void** host, void** ptr) {
  cuabi_host_buffer h;
  CA(cuabi_host_buffer_alloc(device, bytes, &h));
  cuabi_status st = cuabi_host_buffer_get_pointer(h, ptr);
  if (st != CUABI_SUCCESS) {
    cuabi_host_buffer_release(h);
    return ca_fail(st, "cuabi_host_buffer_get_pointer");
  }
  *host = h;
  return 0;
}
void bk_host_free(void* host) { cuabi_host_buffer_release((cuabi_host_buffer)host); }

/* What a prepared launch keeps: the configuration and the packed block. */
typedef struct {
  cuabi_launch_config config;
  void* block;
  size_t block_size;
  cuabi_launch_plan plan; /* the same launch prepared once, arguments in its block */
} prepared;

int bk_launch_variants(void) { return 4; }
const char* bk_launch_variant_name(int variant) {
  static const char* const names[] = {"", "_sized", "_packed", "_plan"};
  return variant >= 0 && variant < 4 ? names[variant] : "?";
}

int bk_launch_prepare(bk_launch* la) {
  prepared* p = calloc(1, sizeof(prepared));
  if (!p) {
    snprintf(last_error, sizeof(last_error), "out of memory");
    return -1;
  }
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = la->grid;
  c.block_x = la->block;
  p->config = c;
  la->prepared = p;
  cuabi_function f = (cuabi_function)la->function;
  CA(cuabi_function_get_args_size(f, &p->block_size));
  p->block = calloc(1, p->block_size ? p->block_size : 1);
  if (!p->block) {
    snprintf(last_error, sizeof(last_error), "out of memory");
    return -1;
  }
  cuabi_param_info layout[64];
  size_t count = 64;
  CA(cuabi_function_get_params(f, layout, &count, NULL));
  if (count != la->num_params) {
    snprintf(last_error, sizeof(last_error), "%zu parameters, %zu arguments", count, la->num_params);
    return -1;
  }
  for (size_t i = 0; i < la->num_params; ++i) {
    size_t offset = layout[i].offset, size = layout[i].size;
    if (size != la->sizes[i] || offset + size > p->block_size) {
      snprintf(last_error, sizeof(last_error), "parameter %zu: %zu bytes at %zu, argument %zu", i,
               size, offset, la->sizes[i]);
      return -1;
    }
    memcpy((char*)p->block + offset, la->params[i], size);
  }
  CA(cuabi_launch_plan_create(f, &p->config, (cuabi_stream)la->stream, &p->plan));
  void* plan_block = NULL;
  size_t plan_size = 0;
  CA(cuabi_launch_plan_get_args(p->plan, &plan_block, &plan_size));
  if (plan_size != p->block_size) {
    snprintf(last_error, sizeof(last_error), "plan block %zu bytes, expected %zu", plan_size,
             p->block_size);
    return -1;
  }
  if (plan_size) memcpy(plan_block, p->block, plan_size);
  return 0;
}

void bk_launch_release(bk_launch* la) {
  prepared* p = la->prepared;
  if (p) {
    cuabi_launch_plan_release(p->plan);
    free(p->block);
  }
  free(p);
  la->prepared = NULL;
}

int bk_launch_submit(int variant, const bk_launch* la) {
  const prepared* p = la->prepared;
  cuabi_function f = (cuabi_function)la->function;
  cuabi_stream s = (cuabi_stream)la->stream;
  switch (variant) {
    case 0:
      CA(cuabi_function_launch(f, &p->config, s, la->params, la->num_params));
      return 0;
    case 1:
      CA(cuabi_function_launch_sized(f, &p->config, s, la->params, la->sizes, la->num_params));
      return 0;
    case 2:
      CA(cuabi_function_launch_packed(f, &p->config, s, p->block, p->block_size));
      return 0;
    default:
      CA(cuabi_launch_plan_launch(p->plan));
      return 0;
  }
}

int bk_capture_begin(void* stream) {
  CA(cuabi_stream_begin_capture((cuabi_stream)stream, CUABI_CAPTURE_GLOBAL));
  return 0;
}
int bk_capture_end(void* stream, void** graph_exec) {
  cuabi_graph graph;
  cuabi_graph_exec exec;
  CA(cuabi_stream_end_capture((cuabi_stream)stream, &graph));
  cuabi_status st = cuabi_graph_instantiate(graph, &exec);
  cuabi_graph_release(graph);
  if (st != CUABI_SUCCESS) return ca_fail(st, "cuabi_graph_instantiate");
  *graph_exec = exec;
  return 0;
}
int bk_graph_launch(void* graph_exec, void* stream) {
  CA(cuabi_graph_exec_launch((cuabi_graph_exec)graph_exec, (cuabi_stream)stream));
  return 0;
}
void bk_graph_destroy(void* graph_exec) { cuabi_graph_exec_release((cuabi_graph_exec)graph_exec); }

/* Handle validation needs no GPU: programs are NVRTC objects. */
static cuabi_program released;

int bk_invalid_handle_setup(void) {
  cuabi_program p;
  CA(cuabi_program_create("extern \"C\" __global__ void k() {}", NULL, 0, NULL, NULL, &p));
  cuabi_program_release(p);
  released = p;
  return 0;
}

int bk_call_released_handle(void) {
  size_t size = 0;
  cuabi_status st = cuabi_program_get_log(released, NULL, &size);
  return st == CUABI_ERROR_INVALID_HANDLE ? -1 : 0; /* 0 (unexpected) unless refused as stale */
}

int bk_call_null_handle(void) {
  size_t count = 0;
  cuabi_status st = cuabi_function_get_param_count(NULL, &count);
  return st == CUABI_ERROR_INVALID_HANDLE ? -1 : 0;
}

void bk_invalid_handle_teardown(void) { released = NULL; }
