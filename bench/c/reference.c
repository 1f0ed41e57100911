/*
 * libcuabi_bench_reference.so: raw C driver calls, timed in C, for paired
 * measurement (bench/README.md, "Paired figures").
 *
 * Every benchmark program, in whatever language, loads this library and
 * alternates bursts of its cuLaunchKernel calls (the common reference, "raw
 * C") with bursts of its own launches in the same process, on the same
 * stream, with the same kernel. One call here times a whole burst, so the
 * language's cost of calling in is paid once per burst, not per launch.
 *
 * All functions return 0 (or a non-negative time in nanoseconds) on success
 * and a negative value on failure, with the message in benchref_error().
 * Values cross as uint64_t (CUcontext, CUfunction, CUstream, CUdeviceptr), as
 * cuabi's own *_get_handle / *_get_context / *_get_pointer answer them.
 */
#include <cuda.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

static _Thread_local char last_error[2048];

EXPORT const char* benchref_error(void) { return last_error; }

static int cu_fail(CUresult r, const char* call) {
  const char* name = NULL;
  cuGetErrorName(r, &name);
  snprintf(last_error, sizeof(last_error), "%s: %s (%d)", call, name ? name : "?", (int)r);
  return -1;
}

#define CU(call)                                       \
  do {                                                 \
    CUresult r_ = (call);                              \
    if (r_ != CUDA_SUCCESS) return cu_fail(r_, #call); \
  } while (0)

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int make_current(uint64_t context) {
  CU(cuInit(0));
  if (context) {
    CU(cuCtxSetCurrent((CUcontext)(uintptr_t)context));
  } else {
    CUcontext c = NULL;
    CU(cuCtxGetCurrent(&c));
    if (!c) {
      CUdevice d;
      CU(cuDeviceGet(&d, 0));
      CU(cuDevicePrimaryCtxRetain(&c, d));
      CU(cuCtxSetCurrent(c));
    }
  }
  return 0;
}

/* Compiles `source` with NVRTC for `arch` (e.g. "sm_90"), loads the CUBIN
 * into `context` (0: the current context, or device 0's primary context when
 * none is current) and answers the CUfunction of `name`, an extern "C"
 * kernel. The module stays loaded until the process ends. */
EXPORT int benchref_load_kernel(uint64_t context, const char* source, const char* name,
                                const char* arch, uint64_t* function) {
  if (!source || !name || !arch || !function) {
    snprintf(last_error, sizeof(last_error), "benchref_load_kernel: a NULL argument");
    return -1;
  }
  if (make_current(context)) return -1;
  if (getenv("CUABI_BENCH_REFERENCE_STANDIN")) {
    /* Against the stand-in driver of the instruction counts, which loads any
     * image and knows its kernels by name: no NVRTC compile (under callgrind
     * it would cost more than the rest of the run). */
    CUmodule module;
    CU(cuModuleLoadData(&module, source));
    CUfunction f;
    CU(cuModuleGetFunction(&f, module, name));
    *function = (uint64_t)(uintptr_t)f;
    return 0;
  }
  char opt[64];
  snprintf(opt, sizeof(opt), "--gpu-architecture=%s", arch);
  const char* opts[] = {opt};
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, source, "reference.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    snprintf(last_error, sizeof(last_error), "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
    return -1;
  }
  r = nvrtcCompileProgram(prog, 1, opts);
  size_t size = 0;
  if (r == NVRTC_SUCCESS) r = nvrtcGetCUBINSize(prog, &size);
  char* cubin = r == NVRTC_SUCCESS ? malloc(size) : NULL;
  if (r == NVRTC_SUCCESS && !cubin) r = NVRTC_ERROR_OUT_OF_MEMORY;
  if (r == NVRTC_SUCCESS) r = nvrtcGetCUBIN(prog, cubin);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS) {
    free(cubin);
    snprintf(last_error, sizeof(last_error), "NVRTC: %s", nvrtcGetErrorString(r));
    return -1;
  }
  CUmodule module;
  CUresult cr = cuModuleLoadData(&module, cubin);
  free(cubin);
  if (cr != CUDA_SUCCESS) return cu_fail(cr, "cuModuleLoadData");
  CUfunction f;
  CU(cuModuleGetFunction(&f, module, name));
  *function = (uint64_t)(uintptr_t)f;
  return 0;
}

/* `count` launches of `function` (grid 1, block 1, no shared memory) on
 * `stream` with `params` (one pointer per argument, as cuLaunchKernel takes
 * them); the nanoseconds the launches took, or -1. The caller synchronises
 * the stream between bursts, outside the timed region. */
EXPORT int64_t benchref_launch_burst(uint64_t function, uint64_t stream, void** params,
                                     uint32_t count) {
  CUfunction f = (CUfunction)(uintptr_t)function;
  CUstream s = (CUstream)(uintptr_t)stream;
  int64_t t0 = now_ns();
  for (uint32_t i = 0; i < count; ++i) {
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
    if (r != CUDA_SUCCESS) return cu_fail(r, "cuLaunchKernel");
  }
  return now_ns() - t0;
}

/* One synchronous copy of `bytes` from host to device: its nanoseconds. */
EXPORT int64_t benchref_copy_to_device(uint64_t dst, const void* src, size_t bytes) {
  int64_t t0 = now_ns();
  CU(cuMemcpyHtoD((CUdeviceptr)dst, src, bytes));
  return now_ns() - t0;
}

/* One synchronous copy of `bytes` from device to host: its nanoseconds. */
EXPORT int64_t benchref_copy_to_host(void* dst, uint64_t src, size_t bytes) {
  int64_t t0 = now_ns();
  CU(cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes));
  return now_ns() - t0;
}

/* `count` allocations of `bytes` each freed at once: `ordered` nonzero,
 * cuMemAllocAsync + cuMemFreeAsync on `stream` (the device's default pool);
 * zero, cuMemAlloc + cuMemFree. The nanoseconds the burst took, or -1. The
 * caller synchronises the stream between bursts, outside the timed region. */
EXPORT int64_t benchref_alloc_burst(uint64_t stream, size_t bytes, int ordered, uint32_t count) {
  CUstream s = (CUstream)(uintptr_t)stream;
  int64_t t0 = now_ns();
  for (uint32_t i = 0; i < count; ++i) {
    CUdeviceptr p = 0;
    if (ordered) {
      CU(cuMemAllocAsync(&p, bytes, s));
      CU(cuMemFreeAsync(p, s));
    } else {
      CU(cuMemAlloc(&p, bytes));
      CU(cuMemFree(p));
    }
  }
  return now_ns() - t0;
}

/* Waits for `stream` (outside any timed region). */
EXPORT int benchref_stream_sync(uint64_t stream) {
  CU(cuStreamSynchronize((CUstream)(uintptr_t)stream));
  return 0;
}
