/*
 * The raw backend: the CUDA driver API and NVRTC, called directly. This is
 * the reference every other implementation is compared with. It uses the
 * device's primary context, as cuabi, the CUDA runtime and CuPy do.
 */
#include <cuda.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static _Thread_local char last_error[2048];
static CUdevice device;
static CUcontext context;

const char* bk_impl(void) { return "c_raw"; }
const char* bk_error(void) { return last_error; }

static int cu_fail(CUresult r, const char* call) {
  const char* name = NULL;
  const char* text = NULL;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  snprintf(last_error, sizeof(last_error), "%s: %s (%d): %s", call, name ? name : "?", (int)r,
           text ? text : "");
  return -1;
}

#define CU(call)                                       \
  do {                                                 \
    CUresult r_ = (call);                              \
    if (r_ != CUDA_SUCCESS) return cu_fail(r_, #call); \
  } while (0)

int bk_init(char* name, size_t name_size, int* major, int* minor) {
  CU(cuInit(0));
  CU(cuDeviceGet(&device, 0));
  if (!context) CU(cuDevicePrimaryCtxRetain(&context, device));
  CU(cuCtxSetCurrent(context));
  CU(cuDeviceGetName(name, (int)name_size, device));
  CU(cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CU(cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  return 0;
}

int bk_versions(int* driver, int* nvrtc_major, int* nvrtc_minor) {
  CU(cuDriverGetVersion(driver));
  nvrtcVersion(nvrtc_major, nvrtc_minor);
  return 0;
}

int bk_compile(const char* source, const char* name, const char* const* options, int num_options,
               int cubin, void** image, size_t* size) {
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    snprintf(last_error, sizeof(last_error), "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
    return -1;
  }
  r = nvrtcCompileProgram(prog, num_options, options);
  if (r != NVRTC_SUCCESS) {
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    char* log = malloc(log_size + 1);
    if (log) {
      log[0] = 0;
      nvrtcGetProgramLog(prog, log);
    }
    snprintf(last_error, sizeof(last_error), "nvrtcCompileProgram: %s\n%s", nvrtcGetErrorString(r),
             log ? log : "");
    free(log);
    nvrtcDestroyProgram(&prog);
    return -1;
  }
  r = cubin ? nvrtcGetCUBINSize(prog, size) : nvrtcGetPTXSize(prog, size);
  char* out = r == NVRTC_SUCCESS ? malloc(*size) : NULL;
  if (out) r = cubin ? nvrtcGetCUBIN(prog, out) : nvrtcGetPTX(prog, out);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS || !out) {
    snprintf(last_error, sizeof(last_error), "nvrtcGet%s: %s", cubin ? "CUBIN" : "PTX",
             out ? nvrtcGetErrorString(r) : "out of memory");
    free(out);
    return -1;
  }
  *image = out;
  return 0;
}

int bk_module_load(const void* image, size_t size, void** module) {
  (void)size;
  CUmodule m;
  CU(cuModuleLoadData(&m, image));
  *module = m;
  return 0;
}

int bk_module_compile_cached(const char* source, const char* const* options, int num_options,
                             void** module, int* hit) {
  (void)source, (void)options, (void)num_options, (void)module, (void)hit;
  snprintf(last_error, sizeof(last_error), "the driver API has no compile cache");
  return BK_UNSUPPORTED;
}

void bk_module_unload(void* module) { cuModuleUnload((CUmodule)module); }

int bk_module_function(void* module, const char* name, void** function) {
  CUfunction f;
  CU(cuModuleGetFunction(&f, (CUmodule)module, name));
  *function = f;
  return 0;
}

int bk_stream_create(void** stream) {
  CUstream s;
  CU(cuStreamCreate(&s, CU_STREAM_DEFAULT));
  *stream = s;
  return 0;
}
int bk_raw_context(uint64_t* out) {
  *out = (uint64_t)(uintptr_t)context;
  return 0;
}
int bk_raw_stream(void* stream, uint64_t* out) {
  *out = (uint64_t)(uintptr_t)stream;
  return 0;
}
int bk_stream_sync(void* stream) {
  CU(cuStreamSynchronize((CUstream)stream));
  return 0;
}
void bk_stream_destroy(void* stream) { cuStreamDestroy((CUstream)stream); }

int bk_event_create(void** event) {
  CUevent e;
  CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  *event = e;
  return 0;
}
int bk_event_record(void* event, void* stream) {
  CU(cuEventRecord((CUevent)event, (CUstream)stream));
  return 0;
}
int bk_event_elapsed_ms(void* start, void* stop, float* ms) {
  CU(cuEventElapsedTime(ms, (CUevent)start, (CUevent)stop));
  return 0;
}
void bk_event_destroy(void* event) { cuEventDestroy((CUevent)event); }

int bk_alloc(size_t bytes, void** buffer, uint64_t* ptr) {
  CUdeviceptr p;
  CU(cuMemAlloc(&p, bytes));
  *buffer = (void*)(uintptr_t)p;
  *ptr = p;
  return 0;
}
void bk_free(void* buffer) { cuMemFree((CUdeviceptr)(uintptr_t)buffer); }

int bk_copy_to_device(void* buffer, const void* src, size_t bytes) {
  CU(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)buffer, src, bytes));
  return 0;
}
int bk_copy_to_host(void* dst, void* buffer, size_t bytes) {
  CU(cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)buffer, bytes));
  return 0;
}
int bk_copy_to_device_async(void* buffer, const void* src, size_t bytes, void* stream) {
  CU(cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)buffer, src, bytes, (CUstream)stream));
  return 0;
}
int bk_copy_to_host_async(void* dst, void* buffer, size_t bytes, void* stream) {
  CU(cuMemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)buffer, bytes, (CUstream)stream));
  return 0;
}

int bk_host_alloc(size_t bytes, void** host, void** ptr) {
  void* p;
  CU(cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE));
  *host = p;
  *ptr = p;
  return 0;
}
void bk_host_free(void* host) { cuMemFreeHost(host); }

int bk_launch_variants(void) { return 1; }
const char* bk_launch_variant_name(int variant) {
  (void)variant;
  return "";
}
int bk_launch_prepare(bk_launch* launch) {
  launch->prepared = NULL;
  return 0;
}
void bk_launch_release(bk_launch* launch) { (void)launch; }

int bk_launch_submit(int variant, const bk_launch* la) {
  (void)variant;
  CU(cuLaunchKernel((CUfunction)la->function, la->grid, 1, 1, la->block, 1, 1, 0,
                    (CUstream)la->stream, la->params, NULL));
  return 0;
}

int bk_capture_begin(void* stream) {
  CU(cuStreamBeginCapture((CUstream)stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  return 0;
}
int bk_capture_end(void* stream, void** graph_exec) {
  CUgraph graph;
  CUgraphExec exec;
  CU(cuStreamEndCapture((CUstream)stream, &graph));
  CUresult r = cuGraphInstantiate(&exec, graph, 0);
  cuGraphDestroy(graph);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuGraphInstantiate");
  *graph_exec = exec;
  return 0;
}
int bk_graph_launch(void* graph_exec, void* stream) {
  CU(cuGraphLaunch((CUgraphExec)graph_exec, (CUstream)stream));
  return 0;
}
void bk_graph_destroy(void* graph_exec) { cuGraphExecDestroy((CUgraphExec)graph_exec); }

int bk_invalid_handle_setup(void) { return BK_UNSUPPORTED; }
int bk_call_released_handle(void) { return BK_UNSUPPORTED; }
int bk_call_null_handle(void) { return BK_UNSUPPORTED; }
void bk_invalid_handle_teardown(void) {}
