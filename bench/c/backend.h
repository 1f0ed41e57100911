/*
 * The measurement code in bench.c runs unchanged over two backends:
 *
 *   raw_driver.c  the CUDA driver API and NVRTC called directly (cuLaunchKernel
 *                 and friends), linked with -lcuda -lnvrtc;
 *   cuabi_c.c     cuabi's C ABI (include/cuabi/cuabi.h), linked with -lcuabi.
 *
 * Every backend function returns 0 on success and -1 on failure, with a
 * message for bk_error(). A function a backend cannot do returns -2
 * (BK_UNSUPPORTED). Handles are opaque pointers owned by the backend.
 */
#ifndef CUABI_BENCH_BACKEND_H
#define CUABI_BENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define BK_UNSUPPORTED (-2)

/* The implementation's id in the results ("c_raw", "c_cuabi"). */
const char* bk_impl(void);
/* The message of the last failure on this thread. */
const char* bk_error(void);

/* Opens device 0: its name and compute capability. */
int bk_init(char* name, size_t name_size, int* major, int* minor);
/* Versions for the record: driver (e.g. 13000), NVRTC major/minor. */
int bk_versions(int* driver, int* nvrtc_major, int* nvrtc_minor);

/* NVRTC: compiles `source` with `options` and returns the CUBIN (cubin=1)
 * or PTX (cubin=0) in a malloc'ed block (the caller frees it). Needs no GPU. */
int bk_compile(const char* source, const char* name, const char* const* options, int num_options,
               int cubin, void** image, size_t* size);

/* Loads an image (CUBIN or PTX) as a module. */
int bk_module_load(const void* image, size_t size, void** module);
/* Source to module in one call through the backend's own cache, if it has
 * one (BK_UNSUPPORTED otherwise). `hit` says whether the cache served it. */
int bk_module_compile_cached(const char* source, const char* const* options, int num_options,
                             void** module, int* hit);
void bk_module_unload(void* module);
int bk_module_function(void* module, const char* name, void** function);

int bk_stream_create(void** stream);
/* Raw values for the paired figures' reference library: the CUcontext the
 * backend launches in and a stream's CUstream. */
int bk_raw_context(uint64_t* context);
int bk_raw_stream(void* stream, uint64_t* cu_stream);
int bk_stream_sync(void* stream);
void bk_stream_destroy(void* stream);

int bk_event_create(void** event);
int bk_event_record(void* event, void* stream);
int bk_event_elapsed_ms(void* start, void* stop, float* ms);
void bk_event_destroy(void* event);

/* Device memory; `ptr` is the raw device address for kernel arguments. */
int bk_alloc(size_t bytes, void** buffer, uint64_t* ptr);
void bk_free(void* buffer);
int bk_copy_to_device(void* buffer, const void* src, size_t bytes);
int bk_copy_to_host(void* dst, void* buffer, size_t bytes);
int bk_copy_to_device_async(void* buffer, const void* src, size_t bytes, void* stream);
int bk_copy_to_host_async(void* dst, void* buffer, size_t bytes, void* stream);
/* Page-locked host memory. */
int bk_host_alloc(size_t bytes, void** host, void** ptr);
void bk_host_free(void* host);

/* One kernel launch, prepared once and submitted many times. */
typedef struct bk_launch {
  void* function;
  unsigned grid, block;
  void* stream;
  void** params;       /* one pointer per argument, as cuLaunchKernel takes them */
  const size_t* sizes; /* each argument's size in bytes */
  size_t num_params;
  void* prepared; /* backend data made by bk_launch_prepare */
} bk_launch;

/* The ways this backend can launch; variant 0 is the headline figure. Names
 * are suffixes of the benchmark's name ("" for variant 0). */
int bk_launch_variants(void);
const char* bk_launch_variant_name(int variant);
int bk_launch_prepare(bk_launch* launch);
void bk_launch_release(bk_launch* launch);
int bk_launch_submit(int variant, const bk_launch* launch);

/* Stream capture into a graph, and its replay. */
int bk_capture_begin(void* stream);
int bk_capture_end(void* stream, void** graph_exec);
int bk_graph_launch(void* graph_exec, void* stream);
void bk_graph_destroy(void* graph_exec);

/* Handle validation, for the CPU-only figures (BK_UNSUPPORTED where the
 * backend has no handles to validate): one call of a function on a released
 * handle, and one on a NULL handle; each must fail. */
int bk_invalid_handle_setup(void);
int bk_call_released_handle(void);
int bk_call_null_handle(void);
void bk_invalid_handle_teardown(void);

#endif
