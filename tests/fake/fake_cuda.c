/*
 * The stand-in for the CUDA driver (libcuda.so.1), for every test and
 * benchmark that runs without a GPU: the fault-injection tests (with
 * fake_nvrtc.c, one library cuabi opens as both $CUABI_DRIVER_PATH and
 * $CUABI_NVRTC_PATH), the C++ and binding tests of the same flows, the
 * benchmarks' instruction counts (bench/instructions/fake_driver.c) and the
 * benchmark harness's self-test (bench/selftest.sh, as libcuda.so.1).
 *
 * "Device" memory is host memory; copies are memcpy; streams run work at
 * once, in order; events read the host clock. It knows three kernels by
 * name, with the parameter layouts NVRTC gives them on x86-64: empty2 and
 * empty16 (which do nothing) and saxpy (computed on the host, so results
 * verify). Stream capture records launches into a graph that a graph launch
 * replays; a graph built node by node holds kernel, copy and fill nodes too
 * (its own section below). The entry points are exported under their
 * cuda.h names (so a program linked with -lcuda runs) and through
 * cuGetProcAddress (as cuabi looks them up).
 *
 * Its entry points are cuabi's: cuGetProcAddress answers every entry of
 * capi/core/driver_entry_points.h, with the function exported here under
 * that name or, where there is none, a default that answers
 * CUDA_ERROR_NOT_SUPPORTED (so a new entry of the table needs no edit here
 * until a test needs it to work). Other exported cu* functions (those
 * cuda.core and the benchmarks' peers ask for) are answered too.
 *
 * For the tests it exports (found with dlsym):
 *   fake_live_resources()  contexts retained, modules, allocations, streams,
 *                          events, graphs, graph execs, libraries and
 *                          programs handed out and not yet taken back;
 *   fake_calls(), fake_call_name(i)  the calls counted since fake_reset(),
 *                          and the entry point of each (1-based);
 *   fake_fail_call(n, cu, nvrtc)     fail the nth counted call with `cu` (a
 *                          driver entry point) or `nvrtc` (an NVRTC one);
 *   fake_fail_entry(name, n, cu, nvrtc)  fail the nth call of one entry point;
 *   fake_failed_name()     the entry point that was failed, or NULL.
 * Calls are counted, and failed, once one of fake_reset, fake_fail_call and
 * fake_fail_entry was called; before, the library is a plain stand-in.
 * A failing release (cuMemFree, cuModuleUnload, ...) still takes its resource
 * back. After CUDA_ERROR_LAUNCH_FAILED is injected, every later driver call
 * answers it too, as the real driver does after a sticky fault.
 * cuGetProcAddress, cuGetErrorName/String, cuInit, cuDriverGetVersion and
 * nvrtcGetErrorString are neither counted nor failed.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE /* dladdr */
#include "fake_cuda.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver_entry_points.h"

/* ---- counting and fault injection ---------------------------------------- */

#define MAX_TRACE 100000
HIDDEN int fake_armed;
HIDDEN __thread int fake_nested __attribute__((tls_model("initial-exec")));
HIDDEN long fake_live;
static long calls;
static const char* trace[MAX_TRACE];
static long fail_at;          /* nth counted call to fail; 0: none */
static const char* fail_name; /* or the nth call of this entry point */
static long fail_nth, name_calls;
static int fail_cu, fail_nvrtc;
static const char* failed;
static CUresult sticky;

/* The driver's log (cuLogsRegisterCallback): an injected failure of a
 * driver entry point is logged as the real driver logs one, a line of detail
 * and then "Returning <code> (<name>) from <entry point>", on the calling
 * thread during the call. FAKE_CUDA_NO_LOGS=1 makes it a driver without a
 * log (older than CUDA 12.9). */
static CUlogsCallback log_callback;
static void* log_data;
static void log_failure(const char* name, int code) {
  if (!log_callback) return;
  char line[256];
  snprintf(line, sizeof line, "stand-in: %s fails as told", name);
  log_callback(log_data, CU_LOG_LEVEL_ERROR, line, strlen(line));
  const char* code_name = NULL;
  cuGetErrorName((CUresult)code, &code_name);
  snprintf(line, sizeof line, "Returning %d (%s) from %s", code, code_name ? code_name : "?", name);
  log_callback(log_data, CU_LOG_LEVEL_ERROR, line, strlen(line));
}
EXPORT CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback cb, void* data,
                                               CUlogsCallbackHandle* out) {
  const char* off = getenv("FAKE_CUDA_NO_LOGS");
  if (off && off[0] == '1') return CUDA_ERROR_NOT_SUPPORTED;
  if (!cb) return CUDA_ERROR_INVALID_VALUE;
  log_callback = cb;
  log_data = data;
  if (out) *out = (CUlogsCallbackHandle)&log_callback;
  return CUDA_SUCCESS;
}

EXPORT long fake_live_resources(void) { return fake_live; }
EXPORT long fake_calls(void) { return calls; }
EXPORT const char* fake_call_name(long i) {
  return i >= 1 && i <= calls && i <= MAX_TRACE ? trace[i - 1] : NULL;
}
EXPORT const char* fake_failed_name(void) { return failed; }
EXPORT void fake_reset(void) {
  fake_armed = 1;
  calls = 0;
  fail_at = 0;
  fail_name = NULL;
  fail_nth = name_calls = 0;
  failed = NULL;
  sticky = CUDA_SUCCESS;
}
EXPORT void fake_fail_call(long n, int cu, int nvrtc) {
  fake_armed = 1;
  fail_at = n;
  fail_cu = cu;
  fail_nvrtc = nvrtc;
}
EXPORT void fake_fail_entry(const char* name, long n, int cu, int nvrtc) {
  fake_armed = 1;
  fail_name = name;
  fail_nth = n;
  name_calls = 0;
  fail_cu = cu;
  fail_nvrtc = nvrtc;
}

/* The entry point's name without cuda.h's _v2/_v3 suffix. */
static const char* base_name(const char* fn) {
  static const char* interned[512];
  static size_t count;
  size_t n = strlen(fn);
  if (n > 3 && fn[n - 3] == '_' && fn[n - 2] == 'v') n -= 3;
  for (size_t i = 0; i < count; ++i)
    if (strlen(interned[i]) == n && strncmp(interned[i], fn, n) == 0) return interned[i];
  char* s = strndup(fn, n);
  if (count < 512) interned[count++] = s;
  return s;
}

HIDDEN int fake_gate(const char* fn) {
  if (fake_nested) return 0;
  const char* name = base_name(fn);
  ++calls;
  if (calls <= MAX_TRACE) trace[calls - 1] = name;
  int is_nvrtc = strncmp(name, "nvrtc", 5) == 0;
  if (sticky && !is_nvrtc) return sticky;
  int hit = (fail_at && calls == fail_at) ||
            (fail_name && strcmp(fail_name, name) == 0 && ++name_calls == fail_nth);
  if (!hit) return 0;
  failed = name;
  if (!is_nvrtc && fail_cu == CUDA_ERROR_LAUNCH_FAILED) sticky = CUDA_ERROR_LAUNCH_FAILED;
  if (!is_nvrtc) log_failure(name, fail_cu);
  return is_nvrtc ? fail_nvrtc : fail_cu;
}

/* A resource handed out (NULL: out of memory), counted while it lives. */
static CUresult handed_out(void* p) {
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  ++fake_live;
  return CUDA_SUCCESS;
}
/* A release: the resource is taken back even when the call is failed (`f`). */
static CUresult taken_back(void* p, int f) {
  if (p) --fake_live;
  free(p);
  return (CUresult)f;
}

typedef struct {
  const char* name;
  int count;
  size_t offset[16], size[16];
  size_t block; /* bytes of the packed argument block */
} kernel_info;

static kernel_info kernels[3];

static void init_kernels(void) {
  if (kernels[0].name) return;
  kernels[0] = (kernel_info){"empty2", 2, {0, 8}, {4, 8}, 16};
  kernel_info k16 = {"empty16", 16, {0}, {0}, 128};
  static const size_t off[4] = {0, 8, 16, 24}, sz[4] = {4, 8, 4, 8};
  for (int i = 0; i < 16; ++i) {
    k16.offset[i] = 32 * (size_t)(i / 4) + off[i % 4];
    k16.size[i] = sz[i % 4];
  }
  kernels[1] = k16;
  kernels[2] = (kernel_info){"saxpy", 5, {0, 8, 16, 24, 32}, {4, 8, 8, 8, 8}, 40};
}

struct CUctx_st {
  int unused;
};
struct CUmod_st {
  int unused;
};
struct CUfunc_st {
  const kernel_info* k;
};
struct CUevent_st {
  double ms;
};

typedef struct {
  const kernel_info* k;
  unsigned threads;
  unsigned char args[128];
} launch_rec;

struct CUgraph_st {
  launch_rec* recs;
  size_t n, cap;
};
struct CUstream_st {
  struct CUgraph_st* capture; /* the graph being captured into, or NULL */
};
struct CUgraphExec_st {
  launch_rec* recs;
  size_t n;
};

static struct CUctx_st the_context;
static CUcontext current;
static struct CUstream_st default_stream;
static struct CUfunc_st functions[3];

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int run_built_node(const launch_rec* r); /* graphs built node by node, below */

static void run(const launch_rec* r) {
  if (strcmp(r->k->name, "saxpy") != 0) return;
  float a;
  float *x, *y, *out;
  size_t n;
  memcpy(&a, r->args, 4);
  memcpy(&x, r->args + 8, 8);
  memcpy(&y, r->args + 16, 8);
  memcpy(&out, r->args + 24, 8);
  memcpy(&n, r->args + 32, 8);
  if (n > r->threads) n = r->threads;
  for (size_t i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}

/* ---- init, device, context ---------------------------------------------- */

EXPORT CUresult CUDAAPI cuInit(unsigned int flags) {
  (void)flags;
  init_kernels();
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDriverGetVersion(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGetErrorName(CUresult e, const char** s) {
  *s = e == CUDA_SUCCESS               ? "CUDA_SUCCESS"
       : e == CUDA_ERROR_NOT_FOUND     ? "CUDA_ERROR_NOT_FOUND"
       : e == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
       : e == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : e == CUDA_ERROR_LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED"
       : e == CUDA_ERROR_INVALID_IMAGE ? "CUDA_ERROR_INVALID_IMAGE"
       : e == CUDA_ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED"
                                       : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGetErrorString(CUresult e, const char** s) {
  *s = e == CUDA_SUCCESS               ? "no error"
       : e == CUDA_ERROR_NOT_SUPPORTED ? "the stand-in driver does not implement this entry point"
                                       : "an error of the stand-in driver";
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetCount(int* n) {
  FAULT(cuDeviceGetCount, (n));
  *n = 1;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  FAULT(cuDeviceGet, (d, ordinal));
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  FAULT(cuDeviceGetName, (name, len, d));
  (void)d;
  snprintf(name, (size_t)len, "cuabi stand-in driver (no GPU)");
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  FAULT(cuDeviceGetAttribute, (v, a, d));
  (void)d;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *v = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *v = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *v = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      *v = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      *v = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *v = 64;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *v = 2147483647;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      *v = 65535;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *v = 65535;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *v = 49152;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = 232448;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *v = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *v = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *v = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT:  /* an H200's */
      *v = 4;
      break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      *v = 1;
      break;
    default:
      *v = 0;
      break;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice d) {
  FAULT(cuDeviceTotalMem, (bytes, d));
  (void)d;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total) {
  FAULT(cuMemGetInfo, (free_bytes, total));
  *free_bytes = (size_t)79 << 30;
  *total = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  FAULT(cuDevicePrimaryCtxRetain, (c, d));
  (void)d;
  *c = &the_context;
  ++fake_live;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  int f_ = FAKE_GATE(__func__);
  (void)d;
  --fake_live;
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice d) {
  FAULT(cuDevicePrimaryCtxReset, (d));
  (void)d;
  return CUDA_SUCCESS;
}
/* On the benchmarks' counted paths (cuabi asks for the current context on
 * every launch and query): see HOT_ENTRY. */
HOT_ENTRY(cuCtxGetCurrent, (CUcontext * c), (c)) {
  *c = current;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  FAULT(cuCtxSetCurrent, (c));
  current = c;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSynchronize(void) {
  FAULT(cuCtxSynchronize, ());
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  FAULT(cuCtxGetStreamPriorityRange, (least, greatest));
  *least = 0;
  *greatest = -5;
  return CUDA_SUCCESS;
}

/* ---- modules and functions ---------------------------------------------- */

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* m, const void* image) {
  FAULT(cuModuleLoadData, (m, image));
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  /* An ELF image or PTX text (what NVRTC makes, the real one or
   * fake_nvrtc.c), or CUDA C++ source handed straight over (the benchmarks'
   * reference library skips NVRTC against the stand-in); nothing else. */
  if (memcmp(image, "\177ELF", 4) != 0 && strncmp(image, "//", 2) != 0 &&
      strncmp(image, ".version", 8) != 0 && !strstr(image, "__global__"))
    return CUDA_ERROR_INVALID_IMAGE;
  *m = calloc(1, sizeof(struct CUmod_st));
  return handed_out(*m);
}
EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule m) { return taken_back(m, FAKE_GATE(__func__)); }
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  FAULT(cuModuleGetFunction, (f, m, name));
  (void)m;
  init_kernels();
  for (int i = 0; i < 3; ++i)
    if (strcmp(kernels[i].name, name) == 0) {
      functions[i].k = &kernels[i];
      *f = &functions[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* p, size_t* bytes, CUmodule m,
                                          const char* name) {
  FAULT(cuModuleGetGlobal, (p, bytes, m, name));
  (void)p, (void)bytes, (void)m, (void)name;
  return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset,
                                           size_t* size) {
  FAULT(cuFuncGetParamInfo, (f, index, offset, size));
  if (index >= (size_t)f->k->count) return CUDA_ERROR_INVALID_VALUE;
  *offset = f->k->offset[index];
  *size = f->k->size[index];
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction f) {
  FAULT(cuFuncGetAttribute, (v, a, f));
  (void)f;
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *v = 1024;
      break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *v = 49152;
      break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *v = 16;
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      *v = 90;
      break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *v = 90;
      break;
    default:
      *v = 0;
      break;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  FAULT(cuFuncSetAttribute, (f, a, v));
  (void)f, (void)a, (void)v;
  return CUDA_SUCCESS;
}

/* Libraries and kernels (context-independent loading, as cuda.core uses it). */
struct CUlib_st {
  int unused;
};
EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary* lib, const void* code, CUjit_option* jo,
                                          void** jv, unsigned int nj, CUlibraryOption* lo,
                                          void** lv, unsigned int nl) {
  FAULT(cuLibraryLoadData, (lib, code, jo, jv, nj, lo, lv, nl));
  (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
  if (!code) return CUDA_ERROR_INVALID_VALUE;
  *lib = calloc(1, sizeof(struct CUlib_st));
  return handed_out(*lib);
}
EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary lib) {
  return taken_back(lib, FAKE_GATE(__func__));
}
EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel* k, CUlibrary lib, const char* name) {
  FAULT(cuLibraryGetKernel, (k, lib, name));
  (void)lib;
  CUfunction f;
  CUresult r = INNER(cuModuleGetFunction(&f, NULL, name));
  if (r == CUDA_SUCCESS) *k = (CUkernel)f;
  return r;
}
EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction* f, CUkernel k) {
  FAULT(cuKernelGetFunction, (f, k));
  *f = (CUfunction)k;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuKernelGetAttribute(int* v, CUfunction_attribute a, CUkernel k,
                                             CUdevice d) {
  FAULT(cuKernelGetAttribute, (v, a, k, d));
  (void)d;
  return INNER(cuFuncGetAttribute(v, a, (CUfunction)k));
}
EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t* offset,
                                             size_t* size) {
  FAULT(cuKernelGetParamInfo, (k, index, offset, size));
  return INNER(cuFuncGetParamInfo((CUfunction)k, index, offset, size));
}

/* ---- launches, streams, events, graphs ------------------------------------ */

static CUstream stream_of(CUstream s) { return s ? s : &default_stream; }

/* The call the benchmarks' instruction counts measure: see HOT_ENTRY. */
HOT_ENTRY(cuLaunchKernel,
          (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
           unsigned bz, unsigned shmem, CUstream s, void** params, void** extra),
          (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra)) {
  (void)shmem;
  if (!f || !gx || !gy || !gz || !bx || !by || !bz) return CUDA_ERROR_INVALID_VALUE;
  launch_rec r;
  memset(&r, 0, sizeof(r));
  r.k = f->k;
  r.threads = gx * gy * gz * bx * by * bz;
  if (params) {
    for (int i = 0; i < f->k->count; ++i)
      memcpy(r.args + f->k->offset[i], params[i], f->k->size[i]);
  } else if (extra) {
    const void* buf = NULL;
    size_t size = 0;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t*)extra[i + 1];
    }
    if (!buf || size != f->k->block) return CUDA_ERROR_INVALID_VALUE;
    memcpy(r.args, buf, size);
  } else if (f->k->count) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUgraph g = stream_of(s)->capture;
  if (g) {
    if (g->n == g->cap) {
      size_t cap = g->cap ? 2 * g->cap : 256;
      launch_rec* grown = realloc(g->recs, cap * sizeof(launch_rec));
      if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
      g->recs = grown;
      g->cap = cap;
    }
    g->recs[g->n++] = r;
    return CUDA_SUCCESS;
  }
  run(&r);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params,
                                         void** extra) {
  FAULT(cuLaunchKernelEx, (c, f, params, extra));
  return INNER(cuLaunchKernel(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                              c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra));
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int flags) {
  FAULT(cuStreamCreate, (s, flags));
  (void)flags;
  *s = calloc(1, sizeof(struct CUstream_st));
  return handed_out(*s);
}
EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* s, unsigned int flags, int prio) {
  FAULT(cuStreamCreateWithPriority, (s, flags, prio));
  (void)prio;
  return INNER(cuStreamCreate(s, flags));
}
EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  int f_ = FAKE_GATE(__func__);
  if (s) --fake_live;
  if (s && s->capture) {
    --fake_live;
    free(s->capture->recs);
    free(s->capture);
  }
  free(s);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  FAULT(cuStreamSynchronize, (s));
  (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamQuery(CUstream s) {
  FAULT(cuStreamQuery, (s));
  (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  FAULT(cuStreamWaitEvent, (s, e, flags));
  (void)s, (void)e, (void)flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  FAULT(cuStreamBeginCapture, (s, mode));
  (void)mode;
  if (!s) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (s->capture) return CUDA_ERROR_ILLEGAL_STATE;
  s->capture = calloc(1, sizeof(struct CUgraph_st));
  if (s->capture) ++fake_live;
  return s->capture ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph* g) {
  FAULT(cuStreamEndCapture, (s, g));
  if (!s || !s->capture) return CUDA_ERROR_ILLEGAL_STATE;
  *g = s->capture;
  s->capture = NULL;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* status) {
  FAULT(cuStreamIsCapturing, (s, status));
  *status = s && s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus* status,
                                               cuuint64_t* id, CUgraph* graph,
                                               const CUgraphNode** deps,
                                               const CUgraphEdgeData** edges, size_t* ndeps) {
  FAULT(cuStreamGetCaptureInfo, (s, status, id, graph, deps, edges, ndeps));
  (void)INNER(cuStreamIsCapturing(s, status));
  if (id) *id = 1;
  if (graph) *graph = s ? s->capture : NULL;
  if (deps) *deps = NULL;
  if (edges) *edges = NULL;
  if (ndeps) *ndeps = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph g, CUgraphNode* nodes, size_t* count) {
  FAULT(cuGraphGetNodes, (g, nodes, count));
  if (nodes)
    for (size_t i = 0; i < *count && i < g->n; ++i) nodes[i] = (CUgraphNode)(g->recs + i);
  *count = g->n;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g,
                                                    unsigned long long flags) {
  FAULT(cuGraphInstantiateWithFlags, (e, g, flags));
  (void)flags;
  *e = calloc(1, sizeof(struct CUgraphExec_st));
  if (!*e) return CUDA_ERROR_OUT_OF_MEMORY;
  (*e)->recs = malloc((g->n ? g->n : 1) * sizeof(launch_rec));
  if (!(*e)->recs) {
    free(*e);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ++fake_live;
  memcpy((*e)->recs, g->recs, g->n * sizeof(launch_rec));
  (*e)->n = g->n;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* e, CUgraph g,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  FAULT(cuGraphInstantiateWithParams, (e, g, p));
  if (p) {
    p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    p->hErrNode_out = NULL;
  }
  return INNER(cuGraphInstantiateWithFlags(e, g, p ? p->flags : 0));
}
EXPORT CUresult CUDAAPI cuGraphUpload(CUgraphExec e, CUstream s) {
  FAULT(cuGraphUpload, (e, s));
  (void)e, (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
  FAULT(cuGraphLaunch, (e, s));
  (void)s;
  /* A graph's records are captured launches, or nodes built one by one. */
  for (size_t i = 0; i < e->n; ++i)
    if (!run_built_node(&e->recs[i])) run(&e->recs[i]);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph g) {
  int f_ = FAKE_GATE(__func__);
  if (g) free(g->recs);
  if (g) --fake_live;
  free(g);
  return (CUresult)f_;
}
/* Graphs built node by node: an empty graph and conditional handles, for
 * the core's checks before any node reaches the driver. */
EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph* g, unsigned int flags) {
  FAULT(cuGraphCreate, (g, flags));
  (void)flags;
  *g = calloc(1, sizeof(struct CUgraph_st));
  if (!*g) return CUDA_ERROR_OUT_OF_MEMORY;
  ++fake_live;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphConditionalHandleCreate(CUgraphConditionalHandle* h, CUgraph g,
                                                       CUcontext ctx, unsigned int value,
                                                       unsigned int flags) {
  static unsigned long long next = 0x100;
  FAULT(cuGraphConditionalHandleCreate, (h, g, ctx, value, flags));
  (void)g, (void)ctx, (void)value, (void)flags;
  *h = next++;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) {
  int f_ = FAKE_GATE(__func__);
  if (e) free(e->recs);
  if (e) --fake_live;
  free(e);
  return (CUresult)f_;
}

/* ---- graphs built node by node: kernel, copy and fill nodes ---------------
 * For the node-built graphs of the binding fault suites
 * (cuabi_graph_add_kernel_node, _copy_node, _upload_node, _download_node,
 * _fill_node). A node is a record of the graph, as a captured launch is,
 * and its handle points at the record (as cuGraphGetNodes answers it); a
 * graph launch runs the records in the order they were added, which is an
 * order of the edges `after` makes (the dependencies are not kept
 * otherwise). A copy node copies a box between host and "device" pointers
 * (an array side answers CUDA_ERROR_NOT_SUPPORTED); a fill node sets
 * `height` rows of `width` elements of 1, 2 or 4 bytes. */

static const kernel_info copy_node_info = {"(copy node)", 0, {0}, {0}, 0};
static const kernel_info fill_node_info = {"(fill node)", 0, {0}, {0}, 0};

typedef struct {
  char* dst;
  const char* src;
  size_t width, height, depth;
  size_t dst_pitch, dst_layer, src_pitch, src_layer; /* in bytes */
} copy_node_args;

typedef struct {
  char* dst;
  size_t pitch, width, height;
  unsigned value, element_size;
} fill_node_args;

/* Runs `r` when it is a copy or fill node (answering 1), else answers 0. */
static int run_built_node(const launch_rec* r) {
  if (r->k == &copy_node_info) {
    copy_node_args c;
    memcpy(&c, r->args, sizeof c);
    for (size_t z = 0; z < c.depth; ++z)
      for (size_t y = 0; y < c.height; ++y)
        memmove(c.dst + z * c.dst_layer + y * c.dst_pitch,
                c.src + z * c.src_layer + y * c.src_pitch, c.width);
    return 1;
  }
  if (r->k == &fill_node_info) {
    fill_node_args f;
    memcpy(&f, r->args, sizeof f);
    for (size_t y = 0; y < f.height; ++y)
      for (size_t i = 0; i < f.width; ++i) {
        char* at = f.dst + y * f.pitch + i * f.element_size;
        if (f.element_size == 1) {
          uint8_t v = (uint8_t)f.value;
          memcpy(at, &v, 1);
        } else if (f.element_size == 2) {
          uint16_t v = (uint16_t)f.value;
          memcpy(at, &v, 2);
        } else {
          memcpy(at, &f.value, 4);
        }
      }
    return 1;
  }
  return 0;
}

static CUresult node_added(CUgraph g, const launch_rec* r, CUgraphNode* out) {
  if (g->n == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 256;
    launch_rec* grown = realloc(g->recs, cap * sizeof(launch_rec));
    if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
    g->recs = grown;
    g->cap = cap;
  }
  g->recs[g->n] = *r;
  *out = (CUgraphNode)(g->recs + g->n);
  ++g->n;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                             size_t ndeps, const CUDA_KERNEL_NODE_PARAMS* p) {
  FAULT(cuGraphAddKernelNode, (out, g, deps, ndeps, p));
  (void)deps, (void)ndeps;
  if (!out || !g || !p || !p->func || !p->gridDimX || !p->gridDimY || !p->gridDimZ ||
      !p->blockDimX || !p->blockDimY || !p->blockDimZ)
    return CUDA_ERROR_INVALID_VALUE;
  const kernel_info* k = p->func->k;
  launch_rec r;
  memset(&r, 0, sizeof(r));
  r.k = k;
  r.threads = p->gridDimX * p->gridDimY * p->gridDimZ * p->blockDimX * p->blockDimY * p->blockDimZ;
  if (p->kernelParams) {
    for (int i = 0; i < k->count; ++i)
      memcpy(r.args + k->offset[i], p->kernelParams[i], k->size[i]);
  } else if (k->count) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return node_added(g, &r, out);
}

/* A side of a CUDA_MEMCPY3D as a pointer and strides, or NULL (an array). */
static char* copy_side(CUmemorytype type, const void* host, CUdeviceptr device, size_t x, size_t y,
                       size_t z, size_t pitch, size_t height) {
  char* base;
  if (type == CU_MEMORYTYPE_HOST)
    base = (char*)(uintptr_t)host;
  else if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED)
    base = (char*)(uintptr_t)device;
  else
    return NULL;
  return base ? base + x + (z * height + y) * pitch : NULL;
}

EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                             size_t ndeps, const CUDA_MEMCPY3D* c, CUcontext ctx) {
  FAULT(cuGraphAddMemcpyNode, (out, g, deps, ndeps, c, ctx));
  (void)deps, (void)ndeps, (void)ctx;
  if (!out || !g || !c || !c->WidthInBytes || !c->Height || !c->Depth)
    return CUDA_ERROR_INVALID_VALUE;
  if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
    return CUDA_ERROR_NOT_SUPPORTED;
  copy_node_args a;
  memset(&a, 0, sizeof a);
  a.width = c->WidthInBytes;
  a.height = c->Height;
  a.depth = c->Depth;
  a.src_pitch = c->srcPitch ? c->srcPitch : c->WidthInBytes;
  a.dst_pitch = c->dstPitch ? c->dstPitch : c->WidthInBytes;
  a.src_layer = a.src_pitch * (c->srcHeight ? c->srcHeight : c->Height);
  a.dst_layer = a.dst_pitch * (c->dstHeight ? c->dstHeight : c->Height);
  if (a.src_pitch < a.width || a.dst_pitch < a.width) return CUDA_ERROR_INVALID_VALUE;
  a.src = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
                    a.src_pitch, a.src_layer / a.src_pitch);
  a.dst = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
                    a.dst_pitch, a.dst_layer / a.dst_pitch);
  if (!a.src || !a.dst) return CUDA_ERROR_INVALID_VALUE;
  launch_rec r;
  memset(&r, 0, sizeof(r));
  r.k = &copy_node_info;
  memcpy(r.args, &a, sizeof a);
  return node_added(g, &r, out);
}

EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                             size_t ndeps, const CUDA_MEMSET_NODE_PARAMS* p,
                                             CUcontext ctx) {
  FAULT(cuGraphAddMemsetNode, (out, g, deps, ndeps, p, ctx));
  (void)deps, (void)ndeps, (void)ctx;
  if (!out || !g || !p || !p->dst || !p->width || !p->height ||
      (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
      (p->height > 1 && p->pitch < p->width * p->elementSize))
    return CUDA_ERROR_INVALID_VALUE;
  fill_node_args f;
  memset(&f, 0, sizeof f);
  f.dst = (char*)(uintptr_t)p->dst;
  f.pitch = p->pitch;
  f.width = p->width;
  f.height = p->height;
  f.value = p->value;
  f.element_size = p->elementSize;
  launch_rec r;
  memset(&r, 0, sizeof(r));
  r.k = &fill_node_info;
  memcpy(r.args, &f, sizeof f);
  return node_added(g, &r, out);
}
/* ---- end of graphs built node by node ---------------------------------------- */

EXPORT CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned int flags) {
  FAULT(cuEventCreate, (e, flags));
  (void)flags;
  *e = calloc(1, sizeof(struct CUevent_st));
  return handed_out(*e);
}
EXPORT CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  FAULT(cuEventRecord, (e, s));
  (void)s;
  e->ms = now_ms();
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  FAULT(cuEventSynchronize, (e));
  (void)e;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventQuery(CUevent e) {
  FAULT(cuEventQuery, (e));
  (void)e;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  FAULT(cuEventElapsedTime, (ms, start, end));
  *ms = (float)(end->ms - start->ms);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventDestroy(CUevent e) { return taken_back(e, FAKE_GATE(__func__)); }

/* ---- memory --------------------------------------------------------------- */

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  FAULT(cuMemAlloc, (p, bytes));
  void* m = NULL;
  if (posix_memalign(&m, 256, bytes ? bytes : 1)) return CUDA_ERROR_OUT_OF_MEMORY;
  ++fake_live;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  int f_ = FAKE_GATE(__func__);
  if (p) --fake_live;
  free((void*)(uintptr_t)p);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) {
  FAULT(cuMemsetD8, (p, v, n));
  memset((void*)(uintptr_t)p, v, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
  FAULT(cuMemsetD8Async, (p, v, n, s));
  (void)s;
  return INNER(cuMemsetD8(p, v, n));
}
EXPORT CUresult CUDAAPI cuMemsetD32(CUdeviceptr p, unsigned int v, size_t n) {
  FAULT(cuMemsetD32, (p, v, n));
  unsigned int* q = (unsigned int*)(uintptr_t)p;
  for (size_t i = 0; i < n; ++i) q[i] = v;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) {
  FAULT(cuMemsetD32Async, (p, v, n, s));
  (void)s;
  return INNER(cuMemsetD32(p, v, n));
}
EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void* h, size_t n) {
  FAULT(cuMemcpyHtoD, (d, h, n));
  memcpy((void*)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyDtoH(void* h, CUdeviceptr d, size_t n) {
  FAULT(cuMemcpyDtoH, (h, d, n));
  memcpy(h, (void*)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  FAULT(cuMemcpyDtoD, (d, s, n));
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  FAULT(cuMemcpyHtoDAsync, (d, h, n, s));
  (void)s;
  return INNER(cuMemcpyHtoD(d, h, n));
}
EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void* h, CUdeviceptr d, size_t n, CUstream s) {
  FAULT(cuMemcpyDtoHAsync, (h, d, n, s));
  (void)s;
  return INNER(cuMemcpyDtoH(h, d, n));
}
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  FAULT(cuMemcpyDtoDAsync, (d, src, n, s));
  (void)s;
  return INNER(cuMemcpyDtoD(d, src, n));
}
EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
  FAULT(cuMemcpy, (d, s, n));
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  FAULT(cuMemcpyAsync, (d, s, n, st));
  (void)st;
  return INNER(cuMemcpy(d, s, n));
}
/* One memory pool that allocates like cuMemAlloc. */
struct CUmemPoolHandle_st {
  int unused;
};
static struct CUmemPoolHandle_st the_pool;
EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice d) {
  FAULT(cuDeviceGetMemPool, (pool, d));
  (void)d;
  *pool = &the_pool;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice d) {
  FAULT(cuDeviceGetDefaultMemPool, (pool, d));
  return INNER(cuDeviceGetMemPool(pool, d));
}
EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void* v) {
  FAULT(cuMemPoolSetAttribute, (pool, a, v));
  (void)pool, (void)a, (void)v;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void* v) {
  FAULT(cuMemPoolGetAttribute, (pool, a, v));
  (void)pool, (void)a;
  memset(v, 0, sizeof(cuuint64_t));
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t bytes, CUmemoryPool pool,
                                                CUstream s) {
  FAULT(cuMemAllocFromPoolAsync, (p, bytes, pool, s));
  (void)pool, (void)s;
  return INNER(cuMemAlloc(p, bytes));
}
EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream s) {
  FAULT(cuMemAllocAsync, (p, bytes, s));
  (void)s;
  return INNER(cuMemAlloc(p, bytes));
}
EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  int f_ = FAKE_GATE(__func__);
  (void)s;
  CUresult r = INNER(cuMemFree(p));
  return f_ ? (CUresult)f_ : r;
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void** p, size_t bytes, unsigned int flags) {
  FAULT(cuMemHostAlloc, (p, bytes, flags));
  (void)flags;
  if (posix_memalign(p, 4096, bytes ? bytes : 1)) return CUDA_ERROR_OUT_OF_MEMORY;
  ++fake_live;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAllocHost(void** p, size_t bytes) {
  FAULT(cuMemAllocHost, (p, bytes));
  return INNER(cuMemHostAlloc(p, bytes, 0));
}
EXPORT CUresult CUDAAPI cuMemFreeHost(void* p) { return taken_back(p, FAKE_GATE(__func__)); }
EXPORT CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  FAULT(cuMemHostRegister, (p, bytes, flags));
  (void)p, (void)bytes, (void)flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemHostUnregister(void* p) {
  FAULT(cuMemHostUnregister, (p));
  (void)p;
  return CUDA_SUCCESS;
}

/* Virtual memory: a range is an inaccessible host mapping (PROT_NONE),
 * physical memory a memfd, mapping it maps the file there (MAP_SHARED) and
 * access opens the pages (mprotect). A memfd goes to another process as a
 * descriptor, as the driver's memory does, so the export and import tests
 * run here too: both processes see the same pages. Granularity 2 MiB. */
#define FAKE_VM_GRANULARITY ((size_t)2 << 20)
typedef struct {
  int fd;
  size_t size;
  int device;
} fake_physical;
EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* g, const CUmemAllocationProp* prop,
                                                      CUmemAllocationGranularity_flags option) {
  FAULT(cuMemGetAllocationGranularity, (g, prop, option));
  (void)prop, (void)option;
  *g = FAKE_VM_GRANULARITY;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* p, size_t size, size_t align,
                                            CUdeviceptr addr, unsigned long long flags) {
  FAULT(cuMemAddressReserve, (p, size, align, addr, flags));
  (void)addr, (void)flags;
  if (align < FAKE_VM_GRANULARITY) align = FAKE_VM_GRANULARITY;
  size_t whole = size + align;
  char* m = mmap(NULL, whole, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  char* start = (char*)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
  if (start > m) munmap(m, (size_t)(start - m));
  if (start + size < m + whole) munmap(start + size, (size_t)(m + whole - (start + size)));
  ++fake_live;
  *p = (CUdeviceptr)(uintptr_t)start;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr p, size_t size) {
  int f_ = FAKE_GATE(__func__);
  if (p) --fake_live;
  munmap((void*)(uintptr_t)p, size);
  return (CUresult)f_;
}
static CUresult fake_physical_of(int fd, size_t size, int device, CUmemGenericAllocationHandle* h) {
  fake_physical* m = malloc(sizeof *m);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *m = (fake_physical){fd, size, device};
  ++fake_live;
  *h = (CUmemGenericAllocationHandle)(uintptr_t)m;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* h, size_t size,
                                    const CUmemAllocationProp* prop, unsigned long long flags) {
  FAULT(cuMemCreate, (h, size, prop, flags));
  (void)flags;
  if (size == 0 || size % FAKE_VM_GRANULARITY) return CUDA_ERROR_INVALID_VALUE;
  int fd = memfd_create("fake-cuda-vm", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, (off_t)size) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUresult r = fake_physical_of(fd, size, prop->location.id, h);
  if (r) close(fd);
  return r;
}
EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle h) {
  int f_ = FAKE_GATE(__func__);
  fake_physical* m = (fake_physical*)(uintptr_t)h;
  if (m) {
    close(m->fd);  /* mappings keep the pages */
    free(m);
    --fake_live;
  }
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr p, size_t size, size_t offset,
                                 CUmemGenericAllocationHandle h, unsigned long long flags) {
  FAULT(cuMemMap, (p, size, offset, h, flags));
  (void)flags;
  fake_physical* m = (fake_physical*)(uintptr_t)h;
  if (offset + size > m->size) return CUDA_ERROR_INVALID_VALUE;
  void* at = mmap((void*)(uintptr_t)p, size, PROT_NONE, MAP_SHARED | MAP_FIXED, m->fd, (off_t)offset);
  return at == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr p, size_t size) {
  FAULT(cuMemUnmap, (p, size));
  void* at = mmap((void*)(uintptr_t)p, size, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  return at == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc* desc,
                                       size_t count) {
  FAULT(cuMemSetAccess, (p, size, desc, count));
  int prot = PROT_NONE;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].flags & CU_MEM_ACCESS_FLAGS_PROT_READ) prot |= PROT_READ;
    if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) prot |= PROT_READ | PROT_WRITE;
  }
  return mprotect((void*)(uintptr_t)p, size, prot) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemExportToShareableHandle(void* out, CUmemGenericAllocationHandle h,
                                                     CUmemAllocationHandleType type,
                                                     unsigned long long flags) {
  FAULT(cuMemExportToShareableHandle, (out, h, type, flags));
  (void)flags;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  int fd = dup(((fake_physical*)(uintptr_t)h)->fd);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *(int*)out = fd;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* h, void* os,
                                                       CUmemAllocationHandleType type) {
  FAULT(cuMemImportFromShareableHandle, (h, os, type));
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  int given = (int)(intptr_t)os;
  /* Only a memfd of this stand-in is its memory. */
  char link[64], target[128];
  snprintf(link, sizeof link, "/proc/self/fd/%d", given);
  ssize_t n = readlink(link, target, sizeof target - 1);
  struct stat st;
  if (n < 0 || fstat(given, &st) != 0) return CUDA_ERROR_INVALID_VALUE;
  target[n] = 0;
  if (strncmp(target, "/memfd:fake-cuda-vm", 19) != 0) return CUDA_ERROR_INVALID_VALUE;
  int fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = fake_physical_of(fd, (size_t)st.st_size, 0, h);
  if (r) close(fd);
  return r;
}
EXPORT CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                               CUmemGenericAllocationHandle h) {
  FAULT(cuMemGetAllocationPropertiesFromHandle, (prop, h));
  memset(prop, 0, sizeof *prop);
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = ((fake_physical*)(uintptr_t)h)->device;
  prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return CUDA_SUCCESS;
}

/* NVRTC opens libcuda.so.1 itself and asks it for internal tables; the fake
 * has none, and says so. */
EXPORT CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid* id) {
  (void)id;
  *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- Batches: memory operations and copies --------------------------------- */

/* Pinned host memory is host memory here: its device address is itself. */
EXPORT CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* d, void* p, unsigned int flags) {
  FAULT(cuMemHostGetDevicePointer, (d, p, flags));
  if (!d || !p || flags) return CUDA_ERROR_INVALID_VALUE;
  *d = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

/* Writes land at once; a wait must already be met (nothing runs beside the
 * caller to end it), else CUDA_ERROR_NOT_SUPPORTED. */
EXPORT CUresult CUDAAPI cuStreamBatchMemOp(CUstream s, unsigned int count,
                                           CUstreamBatchMemOpParams* ops, unsigned int flags) {
  FAULT(cuStreamBatchMemOp, (s, count, ops, flags));
  (void)s;
  if (!ops || count == 0 || count >= 256 || flags) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < count; ++i) {
    const CUstreamBatchMemOpParams* op = &ops[i];
    switch (op->operation) {
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        *(volatile cuuint32_t*)(uintptr_t)op->writeValue.address = op->writeValue.value;
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        *(volatile cuuint64_t*)(uintptr_t)op->writeValue.address = op->writeValue.value64;
        break;
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      case CU_STREAM_MEM_OP_WAIT_VALUE_64: {
        const int wide = op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64;
        const cuuint64_t word = wide ? *(volatile cuuint64_t*)(uintptr_t)op->waitValue.address
                                     : *(volatile cuuint32_t*)(uintptr_t)op->waitValue.address;
        const cuuint64_t value = wide ? op->waitValue.value64 : op->waitValue.value;
        int met = 0;
        switch (op->waitValue.flags & 3u) {
          case CU_STREAM_WAIT_VALUE_GEQ:
            met = wide ? (int64_t)(word - value) >= 0 : (int32_t)(uint32_t)(word - value) >= 0;
            break;
          case CU_STREAM_WAIT_VALUE_EQ: met = word == value; break;
          case CU_STREAM_WAIT_VALUE_AND: met = (word & value) != 0; break;
          default: met = (wide ? ~(word | value) : (uint32_t)~(word | value)) != 0; break;
        }
        if (!met) return CUDA_ERROR_NOT_SUPPORTED;
        break;
      }
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

/* Every address is a host address here: each copy is a memmove. */
EXPORT CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
                                           size_t count, CUmemcpyAttributes* attrs,
                                           size_t* attr_idxs, size_t num_attrs, CUstream s) {
  FAULT(cuMemcpyBatchAsync, (dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, s));
  (void)s;
  if (!dsts || !srcs || !sizes || count == 0 || !attrs || !attr_idxs || num_attrs == 0 ||
      num_attrs > count || attr_idxs[0] != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i)
    memmove((void*)(uintptr_t)dsts[i], (const void*)(uintptr_t)srcs[i], sizes[i]);
  return CUDA_SUCCESS;
}

/* 3D batch copies: pointer operands only (there are no arrays here), element
 * size 1; each box copied row by row with the operands' row and layer
 * strides (0: tightly packed). An array operand answers NOT_SUPPORTED. */
EXPORT CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t count, CUDA_MEMCPY3D_BATCH_OP* ops,
                                             unsigned long long flags, CUstream s) {
  FAULT(cuMemcpy3DBatchAsync, (count, ops, flags, s));
  (void)s;
  if (!ops || count == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    const CUDA_MEMCPY3D_BATCH_OP* o = &ops[i];
    if (o->src.type != CU_MEMCPY_OPERAND_TYPE_POINTER ||
        o->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER)
      return CUDA_ERROR_NOT_SUPPORTED;
    if (o->srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_INVALID) return CUDA_ERROR_INVALID_VALUE;
    const size_t w = o->extent.width, h = o->extent.height, d = o->extent.depth;
    if (!w || !h || !d) return CUDA_ERROR_INVALID_VALUE;
    const size_t sr = o->src.op.ptr.rowLength ? o->src.op.ptr.rowLength : w;
    const size_t sl = o->src.op.ptr.layerHeight ? o->src.op.ptr.layerHeight : h;
    const size_t dr = o->dst.op.ptr.rowLength ? o->dst.op.ptr.rowLength : w;
    const size_t dl = o->dst.op.ptr.layerHeight ? o->dst.op.ptr.layerHeight : h;
    if (sr < w || dr < w || sl < h || dl < h) return CUDA_ERROR_INVALID_VALUE;
    for (size_t z = 0; z < d; ++z)
      for (size_t y = 0; y < h; ++y)
        memmove((void*)(uintptr_t)(o->dst.op.ptr.ptr + (z * dl + y) * dr),
                (const void*)(uintptr_t)(o->src.op.ptr.ptr + (z * sl + y) * sr), w);
  }
  return CUDA_SUCCESS;
}

/* ---- green contexts and tensor maps ---------------------------------------- */

/* A device of 16 SMs split in pairs; a green context remembers its SMs. A
 * resource descriptor has no destroy call in the driver: each is a slot of a
 * small ring here, not counted as live. A tensor map keeps the address it was
 * given in its first 8 bytes. */
#define FAKE_SMS 16u
#define FAKE_SM_GRANULE 2u
struct CUgreenCtx_st {
  unsigned sms;
};
struct CUdevResourceDesc_st {
  CUdevResource resource;
};
static struct CUdevResourceDesc_st fake_descs[16];
static unsigned fake_next_desc;

static void fake_sm_resource(CUdevResource* r, unsigned sms) {
  memset(r, 0, sizeof *r);
  r->type = CU_DEV_RESOURCE_TYPE_SM;
  r->sm.smCount = sms;
  r->sm.minSmPartitionSize = FAKE_SM_GRANULE;
  r->sm.smCoscheduledAlignment = FAKE_SM_GRANULE;
}

EXPORT CUresult CUDAAPI cuDeviceGetDevResource(CUdevice d, CUdevResource* r, CUdevResourceType t) {
  FAULT(cuDeviceGetDevResource, (d, r, t));
  (void)d;
  if (t != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  fake_sm_resource(r, FAKE_SMS);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevSmResourceSplitByCount(CUdevResource* result, unsigned* n,
                                                    const CUdevResource* in, CUdevResource* rest,
                                                    unsigned flags, unsigned min) {
  FAULT(cuDevSmResourceSplitByCount, (result, n, in, rest, flags, min));
  (void)flags;
  unsigned m = min < FAKE_SM_GRANULE ? FAKE_SM_GRANULE : min;
  m = (m + FAKE_SM_GRANULE - 1) / FAKE_SM_GRANULE * FAKE_SM_GRANULE;
  unsigned groups = in->sm.smCount / m;
  if (!result) {
    *n = groups;
    return CUDA_SUCCESS;
  }
  unsigned made = *n < groups ? *n : groups;
  for (unsigned i = 0; i < made; ++i) fake_sm_resource(&result[i], m);
  if (rest) fake_sm_resource(rest, in->sm.smCount - made * m);
  *n = made;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevResourceGenerateDesc(CUdevResourceDesc* desc, CUdevResource* r,
                                                  unsigned n) {
  FAULT(cuDevResourceGenerateDesc, (desc, r, n));
  if (n != 1) return CUDA_ERROR_INVALID_VALUE;
  struct CUdevResourceDesc_st* slot = &fake_descs[fake_next_desc++ % 16u];
  slot->resource = r[0];
  *desc = slot;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGreenCtxCreate(CUgreenCtx* g, CUdevResourceDesc desc, CUdevice d,
                                         unsigned flags) {
  FAULT(cuGreenCtxCreate, (g, desc, d, flags));
  (void)d;
  if (!(flags & CU_GREEN_CTX_DEFAULT_STREAM)) return CUDA_ERROR_INVALID_VALUE;
  *g = calloc(1, sizeof(struct CUgreenCtx_st));
  if (*g) (*g)->sms = desc->resource.sm.smCount;
  return handed_out(*g);
}
EXPORT CUresult CUDAAPI cuGreenCtxDestroy(CUgreenCtx g) {
  return taken_back(g, FAKE_GATE(__func__));
}
EXPORT CUresult CUDAAPI cuGreenCtxGetDevResource(CUgreenCtx g, CUdevResource* r,
                                                 CUdevResourceType t) {
  FAULT(cuGreenCtxGetDevResource, (g, r, t));
  if (t != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  fake_sm_resource(r, g->sms);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGreenCtxStreamCreate(CUstream* s, CUgreenCtx g, unsigned flags,
                                               int prio) {
  FAULT(cuGreenCtxStreamCreate, (s, g, flags, prio));
  (void)g;
  (void)prio;
  if (!(flags & CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  return INNER(cuStreamCreate(s, flags));
}
EXPORT CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType t,
                                               cuuint32_t rank, void* address,
                                               const cuuint64_t* dims, const cuuint64_t* strides,
                                               const cuuint32_t* box, const cuuint32_t* steps,
                                               CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                               CUtensorMapL2promotion l2,
                                               CUtensorMapFloatOOBfill oob) {
  FAULT(cuTensorMapEncodeTiled,
        (map, t, rank, address, dims, strides, box, steps, il, sw, l2, oob));
  memset(map, 0, sizeof *map);
  map->opaque[0] = (cuuint64_t)(uintptr_t)address;
  map->opaque[1] = rank;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuTensorMapEncodeIm2col(
    CUtensorMap* map, CUtensorMapDataType t, cuuint32_t rank, void* address,
    const cuuint64_t* dims, const cuuint64_t* strides, const int* lower, const int* upper,
    cuuint32_t channels, cuuint32_t pixels, const cuuint32_t* steps, CUtensorMapInterleave il,
    CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  FAULT(cuTensorMapEncodeIm2col, (map, t, rank, address, dims, strides, lower, upper, channels,
                                  pixels, steps, il, sw, l2, oob));
  memset(map, 0, sizeof *map);
  map->opaque[0] = (cuuint64_t)(uintptr_t)address;
  map->opaque[1] = rank;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuTensorMapReplaceAddress(CUtensorMap* map, void* address) {
  FAULT(cuTensorMapReplaceAddress, (map, address));
  map->opaque[0] = (cuuint64_t)(uintptr_t)address;
  return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress ----------------------------------------------------- */

/* For each entry of cuabi's table, a default for when this file does not
 * export the entry point: counted (and failed) like any other call, then
 * CUDA_ERROR_NOT_SUPPORTED. It takes no parameters: the callers' arguments,
 * whatever the entry point's signature, are left where the calling
 * convention put them and never read. */
#define FAKE_NOT_IMPLEMENTED(name, version)              \
  static CUresult CUDAAPI not_implemented_##name(void) { \
    int f_ = FAKE_GATE(#name);                           \
    return f_ ? f_ : CUDA_ERROR_NOT_SUPPORTED;           \
  }
CUABI_DRIVER_ENTRY_POINTS(FAKE_NOT_IMPLEMENTED)
#undef FAKE_NOT_IMPLEMENTED

#define FAKE_STRING(x) #x
#define FAKE_EXPANDED_STRING(x) FAKE_STRING(x)
static const struct {
  const char* name;   /* as cuabi asks for it: "cuMemAlloc" */
  const char* symbol; /* as cuda.h names the function: "cuMemAlloc_v2" */
  CUresult(CUDAAPI* not_implemented)(void);
} table[] = {
#define FAKE_ROW(name, version) {#name, FAKE_EXPANDED_STRING(name), &not_implemented_##name},
    CUABI_DRIVER_ENTRY_POINTS(FAKE_ROW)
#undef FAKE_ROW
};

/* An exported function of this very library, by its symbol name, or NULL. */
static void* own_symbol(const char* symbol) {
  static void* self;
  if (!self) {
    Dl_info info;
    if (!dladdr((void*)&own_symbol, &info) || !info.dli_fname) return NULL;
    self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!self) return NULL;
  }
  return dlsym(self, symbol);
}

static void* lookup(const char* name) {
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (strcmp(name, table[i].name) == 0) {
      void* fn = own_symbol(table[i].symbol);
      return fn ? fn : (void*)table[i].not_implemented;
    }
  /* Not cuabi's: an exported cu* function under the name or a _vN of it. */
  if (strncmp(name, "cu", 2) != 0 || strlen(name) > 120) return NULL;
  static const char* const suffixes[] = {"", "_v2", "_v3"};
  for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); ++i) {
    char symbol[128];
    snprintf(symbol, sizeof(symbol), "%s%s", name, suffixes[i]);
    void* fn = own_symbol(symbol);
    if (fn) return fn;
  }
  return NULL;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  (void)version, (void)flags;
  *pfn = symbol ? lookup(symbol) : NULL;
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
