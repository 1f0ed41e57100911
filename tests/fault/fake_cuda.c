/*
 * A stand-in for the CUDA driver (libcuda.so.1) and NVRTC (libnvrtc.so) for
 * the fault-injection tests, grown from bench/testing/fake_cuda.c: one shared
 * library that cuabi opens as both ($CUABI_DRIVER_PATH, $CUABI_NVRTC_PATH).
 *
 * "Device" memory is host memory; copies are memcpy; streams run work at
 * once; saxpy is computed on the host, so results verify. NVRTC "compiles"
 * any source that defines saxpy into a small ELF image that cuModuleLoadData
 * accepts (and PTX text); other sources fail with NVRTC_ERROR_COMPILATION.
 *
 * For the tests it exports (see fault_control.h):
 *   fake_live_resources()  contexts retained, modules, allocations, streams,
 *                          events, graphs, graph execs and programs handed out
 *                          and not yet taken back;
 *   fake_calls(), fake_call_name(i)  the calls counted since fake_reset(),
 *                          and the entry point of each (1-based);
 *   fake_fail_call(n, cu, nvrtc)     fail the nth counted call with `cu` (a
 *                          driver entry point) or `nvrtc` (an NVRTC one);
 *   fake_fail_entry(name, n, cu, nvrtc)  fail the nth call of one entry point;
 *   fake_failed_name()     the entry point that was failed, or NULL.
 * A failing release (cuMemFree, cuModuleUnload, ...) still takes its resource
 * back. After CUDA_ERROR_LAUNCH_FAILED is injected, every later call answers
 * it too, as the real driver does after a sticky fault.
 * cuGetProcAddress, cuGetErrorName/String, cuInit, cuDriverGetVersion and
 * nvrtcGetErrorString are neither counted nor failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- counting and fault injection ---------------------------------------- */

#define MAX_TRACE 100000
static long live_resources;
static long calls;
static const char* trace[MAX_TRACE];
static long fail_at;          /* nth counted call to fail; 0: none */
static const char* fail_name; /* or the nth call of this entry point */
static long fail_nth, name_calls;
static int fail_cu, fail_nvrtc;
static const char* failed;
static CUresult sticky;
static __thread int nested; /* > 0 inside a call another entry point made */

#define INNER(e)           \
  ({                       \
    ++nested;              \
    __typeof__(e) r_ = (e); \
    --nested;              \
    r_;                    \
  })

EXPORT long fake_live_resources(void) { return live_resources; }
EXPORT long fake_calls(void) { return calls; }
EXPORT const char* fake_call_name(long i) {
  return i >= 1 && i <= calls && i <= MAX_TRACE ? trace[i - 1] : NULL;
}
EXPORT const char* fake_failed_name(void) { return failed; }
EXPORT void fake_reset(void) {
  calls = 0;
  fail_at = 0;
  fail_name = NULL;
  fail_nth = name_calls = 0;
  failed = NULL;
  sticky = CUDA_SUCCESS;
}
EXPORT void fake_fail_call(long n, int cu, int nvrtc) {
  fail_at = n;
  fail_cu = cu;
  fail_nvrtc = nvrtc;
}
EXPORT void fake_fail_entry(const char* name, long n, int cu, int nvrtc) {
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

/* Counts a call; answers the error to fail it with, or 0. */
static int gate(const char* fn) {
  if (nested) return 0;
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
  return is_nvrtc ? fail_nvrtc : fail_cu;
}
#define FAULT()                        \
  do {                                 \
    int f_ = gate(__func__);           \
    if (f_) return (__typeof__(f_))f_; \
  } while (0)

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
  *s = e == CUDA_SUCCESS                 ? "CUDA_SUCCESS"
       : e == CUDA_ERROR_NOT_FOUND       ? "CUDA_ERROR_NOT_FOUND"
       : e == CUDA_ERROR_OUT_OF_MEMORY   ? "CUDA_ERROR_OUT_OF_MEMORY"
       : e == CUDA_ERROR_INVALID_VALUE   ? "CUDA_ERROR_INVALID_VALUE"
       : e == CUDA_ERROR_LAUNCH_FAILED   ? "CUDA_ERROR_LAUNCH_FAILED"
       : e == CUDA_ERROR_INVALID_IMAGE   ? "CUDA_ERROR_INVALID_IMAGE"
                                         : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGetErrorString(CUresult e, const char** s) {
  *s = e == CUDA_SUCCESS ? "no error" : "an error of the fake driver";
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetCount(int* n) {
  FAULT();
  *n = 1;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  FAULT();
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  FAULT();
  (void)d;
  snprintf(name, (size_t)len, "cuabi fault-injection fake driver (no GPU)");
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  FAULT();
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
    default:
      *v = 0;
      break;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice d) {
  FAULT();
  (void)d;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total) {
  FAULT();
  *free_bytes = (size_t)79 << 30;
  *total = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  FAULT();
  (void)d;
  *c = &the_context;
  ++live_resources;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  int f_ = gate(__func__);
  (void)d;
  --live_resources;
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice d) {
  FAULT();
  (void)d;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext* c) {
  FAULT();
  *c = current;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  FAULT();
  current = c;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSynchronize(void) {
  FAULT(); return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  FAULT();
  *least = 0;
  *greatest = -5;
  return CUDA_SUCCESS;
}

/* ---- modules and functions ---------------------------------------------- */

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* m, const void* image) {
  FAULT();
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  /* What the fake NVRTC makes: an ELF image or PTX text. */
  if (memcmp(image, "\x7f" "ELF", 4) != 0 && strncmp(image, "//", 2) != 0 &&
      strncmp(image, ".version", 8) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  *m = calloc(1, sizeof(struct CUmod_st));
  if (*m) ++live_resources;
  return *m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  int f_ = gate(__func__);
  if (m) --live_resources;
  free(m);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  FAULT();
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
  FAULT();
  (void)p, (void)bytes, (void)m, (void)name;
  return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset,
                                           size_t* size) {
  FAULT();
  if (index >= (size_t)f->k->count) return CUDA_ERROR_INVALID_VALUE;
  *offset = f->k->offset[index];
  *size = f->k->size[index];
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction f) {
  FAULT();
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
  FAULT();
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
  FAULT();
  (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
  if (!code) return CUDA_ERROR_INVALID_VALUE;
  *lib = calloc(1, sizeof(struct CUlib_st));
  if (*lib) ++live_resources;
  return *lib ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary lib) {
  int f_ = gate(__func__);
  if (lib) --live_resources;
  free(lib);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel* k, CUlibrary lib, const char* name) {
  FAULT();
  (void)lib;
  CUfunction f;
  CUresult r = INNER(cuModuleGetFunction(&f, NULL, name));
  if (r == CUDA_SUCCESS) *k = (CUkernel)f;
  return r;
}
EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction* f, CUkernel k) {
  FAULT();
  *f = (CUfunction)k;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuKernelGetAttribute(int* v, CUfunction_attribute a, CUkernel k,
                                             CUdevice d) {
  FAULT();
  (void)d;
  return INNER(cuFuncGetAttribute(v, a, (CUfunction)k));
}
EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t* offset,
                                             size_t* size) {
  FAULT();
  return INNER(cuFuncGetParamInfo((CUfunction)k, index, offset, size));
}

/* ---- launches, streams, events, graphs ------------------------------------ */

static CUstream stream_of(CUstream s) { return s ? s : &default_stream; }

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                       CUstream s, void** params, void** extra) {
  FAULT();
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
  FAULT();
  return INNER(cuLaunchKernel(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                        c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra));
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int flags) {
  FAULT();
  (void)flags;
  *s = calloc(1, sizeof(struct CUstream_st));
  if (*s) ++live_resources;
  return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* s, unsigned int flags, int prio) {
  FAULT();
  (void)prio;
  return INNER(cuStreamCreate(s, flags));
}
EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  int f_ = gate(__func__);
  if (s) --live_resources;
  if (s && s->capture) {
    --live_resources;
    free(s->capture->recs);
    free(s->capture);
  }
  free(s);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  FAULT();
  (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamQuery(CUstream s) {
  FAULT();
  (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  FAULT();
  (void)s, (void)e, (void)flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  FAULT();
  (void)mode;
  if (!s) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (s->capture) return CUDA_ERROR_ILLEGAL_STATE;
  s->capture = calloc(1, sizeof(struct CUgraph_st));
  if (s->capture) ++live_resources;
  return s->capture ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph* g) {
  FAULT();
  if (!s || !s->capture) return CUDA_ERROR_ILLEGAL_STATE;
  *g = s->capture;
  s->capture = NULL;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* status) {
  FAULT();
  *status = s && s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus* status,
                                               cuuint64_t* id, CUgraph* graph,
                                               const CUgraphNode** deps,
                                               const CUgraphEdgeData** edges, size_t* ndeps) {
  FAULT();
  cuStreamIsCapturing(s, status);
  if (id) *id = 1;
  if (graph) *graph = s ? s->capture : NULL;
  if (deps) *deps = NULL;
  if (edges) *edges = NULL;
  if (ndeps) *ndeps = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph g, CUgraphNode* nodes, size_t* count) {
  FAULT();
  if (nodes)
    for (size_t i = 0; i < *count && i < g->n; ++i) nodes[i] = (CUgraphNode)(g->recs + i);
  *count = g->n;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g,
                                                    unsigned long long flags) {
  FAULT();
  (void)flags;
  *e = calloc(1, sizeof(struct CUgraphExec_st));
  if (!*e) return CUDA_ERROR_OUT_OF_MEMORY;
  (*e)->recs = malloc((g->n ? g->n : 1) * sizeof(launch_rec));
  if (!(*e)->recs) {
    free(*e);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ++live_resources;
  memcpy((*e)->recs, g->recs, g->n * sizeof(launch_rec));
  (*e)->n = g->n;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* e, CUgraph g,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  FAULT();
  if (p) {
    p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    p->hErrNode_out = NULL;
  }
  return INNER(cuGraphInstantiateWithFlags(e, g, p ? p->flags : 0));
}
EXPORT CUresult CUDAAPI cuGraphUpload(CUgraphExec e, CUstream s) {
  FAULT();
  (void)e, (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
  FAULT();
  (void)s;
  for (size_t i = 0; i < e->n; ++i) run(&e->recs[i]);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph g) {
  int f_ = gate(__func__);
  if (g) free(g->recs);
  if (g) --live_resources;
  free(g);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) {
  int f_ = gate(__func__);
  if (e) free(e->recs);
  if (e) --live_resources;
  free(e);
  return (CUresult)f_;
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned int flags) {
  FAULT();
  (void)flags;
  *e = calloc(1, sizeof(struct CUevent_st));
  if (*e) ++live_resources;
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  FAULT();
  (void)s;
  e->ms = now_ms();
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  FAULT();
  (void)e;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventQuery(CUevent e) {
  FAULT();
  (void)e;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  FAULT();
  *ms = (float)(end->ms - start->ms);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventDestroy(CUevent e) {
  int f_ = gate(__func__);
  if (e) --live_resources;
  free(e);
  return (CUresult)f_;
}

/* ---- memory --------------------------------------------------------------- */

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  FAULT();
  void* m = NULL;
  if (posix_memalign(&m, 256, bytes ? bytes : 1)) return CUDA_ERROR_OUT_OF_MEMORY;
  ++live_resources;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  int f_ = gate(__func__);
  if (p) --live_resources;
  free((void*)(uintptr_t)p);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) {
  FAULT();
  memset((void*)(uintptr_t)p, v, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
  FAULT();
  (void)s;
  return INNER(cuMemsetD8(p, v, n));
}
EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void* h, size_t n) {
  FAULT();
  memcpy((void*)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyDtoH(void* h, CUdeviceptr d, size_t n) {
  FAULT();
  memcpy(h, (void*)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  FAULT();
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  FAULT();
  (void)s;
  return INNER(cuMemcpyHtoD(d, h, n));
}
EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void* h, CUdeviceptr d, size_t n, CUstream s) {
  FAULT();
  (void)s;
  return INNER(cuMemcpyDtoH(h, d, n));
}
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  FAULT();
  (void)s;
  return INNER(cuMemcpyDtoD(d, src, n));
}
EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
  FAULT();
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  FAULT();
  (void)st;
  return INNER(cuMemcpy(d, s, n));
}
/* One memory pool that allocates like cuMemAlloc. */
struct CUmemPoolHandle_st {
  int unused;
};
static struct CUmemPoolHandle_st the_pool;
EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice d) {
  FAULT();
  (void)d;
  *pool = &the_pool;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice d) {
  FAULT();
  return INNER(cuDeviceGetMemPool(pool, d));
}
EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void* v) {
  FAULT();
  (void)pool, (void)a, (void)v;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void* v) {
  FAULT();
  (void)pool, (void)a;
  memset(v, 0, sizeof(cuuint64_t));
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t bytes, CUmemoryPool pool,
                                                CUstream s) {
  FAULT();
  (void)pool, (void)s;
  return INNER(cuMemAlloc(p, bytes));
}
EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream s) {
  FAULT();
  (void)s;
  return INNER(cuMemAlloc(p, bytes));
}
EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  int f_ = gate(__func__);
  (void)s;
  CUresult r = INNER(cuMemFree(p));
  return f_ ? (CUresult)f_ : r;
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void** p, size_t bytes, unsigned int flags) {
  FAULT();
  (void)flags;
  if (posix_memalign(p, 4096, bytes ? bytes : 1)) return CUDA_ERROR_OUT_OF_MEMORY;
  ++live_resources;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAllocHost(void** p, size_t bytes) {
  FAULT();
  return INNER(cuMemHostAlloc(p, bytes, 0));
}
EXPORT CUresult CUDAAPI cuMemFreeHost(void* p) {
  int f_ = gate(__func__);
  if (p) --live_resources;
  free(p);
  return (CUresult)f_;
}
EXPORT CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  FAULT();
  (void)p, (void)bytes, (void)flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemHostUnregister(void* p) {
  FAULT();
  (void)p;
  return CUDA_SUCCESS;
}

/* NVRTC opens libcuda.so.1 itself and asks it for internal tables; the fake
 * has none, and says so. */
EXPORT CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid* id) {
  (void)id;
  *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- cuGetProcAddress ----------------------------------------------------- */

#define ENTRY(name) \
  { #name, (void*)&name }
static const struct {
  const char* name;
  void* fn;
} entries[] = {
    ENTRY(cuInit),
    ENTRY(cuDriverGetVersion),
    ENTRY(cuGetErrorName),
    ENTRY(cuGetErrorString),
    ENTRY(cuDeviceGetCount),
    ENTRY(cuDeviceGet),
    ENTRY(cuDeviceGetName),
    ENTRY(cuDeviceGetAttribute),
    ENTRY(cuDeviceTotalMem),
    ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuDevicePrimaryCtxRelease),
    ENTRY(cuDevicePrimaryCtxReset),
    ENTRY(cuCtxGetCurrent),
    ENTRY(cuCtxSetCurrent),
    ENTRY(cuCtxSynchronize),
    ENTRY(cuCtxGetStreamPriorityRange),
    ENTRY(cuMemGetInfo),
    ENTRY(cuModuleLoadData),
    ENTRY(cuModuleUnload),
    ENTRY(cuModuleGetFunction),
    ENTRY(cuModuleGetGlobal),
    ENTRY(cuFuncGetParamInfo),
    ENTRY(cuFuncGetAttribute),
    ENTRY(cuFuncSetAttribute),
    ENTRY(cuLaunchKernel),
    ENTRY(cuMemAlloc),
    ENTRY(cuMemFree),
    ENTRY(cuMemsetD8),
    ENTRY(cuMemsetD8Async),
    ENTRY(cuMemcpyHtoD),
    ENTRY(cuMemcpyDtoH),
    ENTRY(cuMemcpyDtoD),
    ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoHAsync),
    ENTRY(cuMemcpyDtoDAsync),
    ENTRY(cuMemHostAlloc),
    ENTRY(cuMemFreeHost),
    ENTRY(cuMemHostRegister),
    ENTRY(cuMemHostUnregister),
    ENTRY(cuStreamCreate),
    ENTRY(cuStreamCreateWithPriority),
    ENTRY(cuStreamDestroy),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuStreamQuery),
    ENTRY(cuStreamWaitEvent),
    ENTRY(cuStreamBeginCapture),
    ENTRY(cuStreamEndCapture),
    ENTRY(cuEventCreate),
    ENTRY(cuEventRecord),
    ENTRY(cuEventSynchronize),
    ENTRY(cuEventQuery),
    ENTRY(cuEventElapsedTime),
    ENTRY(cuEventDestroy),
    ENTRY(cuGraphGetNodes),
    ENTRY(cuGraphInstantiateWithFlags),
    ENTRY(cuGraphLaunch),
    ENTRY(cuGraphDestroy),
    ENTRY(cuGraphExecDestroy),
    ENTRY(cuLibraryLoadData),
    ENTRY(cuLibraryUnload),
    ENTRY(cuLibraryGetKernel),
    ENTRY(cuKernelGetFunction),
    ENTRY(cuKernelGetAttribute),
    ENTRY(cuKernelGetParamInfo),
    ENTRY(cuLaunchKernelEx),
    ENTRY(cuMemcpy),
    ENTRY(cuMemcpyAsync),
    ENTRY(cuDeviceGetMemPool),
    ENTRY(cuDeviceGetDefaultMemPool),
    ENTRY(cuMemPoolSetAttribute),
    ENTRY(cuMemPoolGetAttribute),
    ENTRY(cuMemAllocFromPoolAsync),
    ENTRY(cuMemAllocAsync),
    ENTRY(cuMemFreeAsync),
    ENTRY(cuMemAllocHost),
    ENTRY(cuStreamIsCapturing),
    ENTRY(cuStreamGetCaptureInfo),
    ENTRY(cuGraphInstantiateWithParams),
    ENTRY(cuGraphUpload),
};

/* ENTRY's #name is the macro's expansion for names cuda.h maps to a _v2
 * (cuMemAlloc -> "cuMemAlloc_v2"); lookups come by the base name. */
static int same_base(const char* want, const char* have) {
  size_t n = strlen(want);
  if (strncmp(want, have, n) != 0) return 0;
  return have[n] == 0 || strcmp(have + n, "_v2") == 0;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  (void)version, (void)flags;
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); ++i)
    if (same_base(symbol, entries[i].name)) {
      *pfn = entries[i].fn;
      if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *pfn = NULL;
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

/* ---- NVRTC ------------------------------------------------------------------ */

struct _nvrtcProgram {
  char* source;
  int compiled; /* 1: compiled, -1: failed */
  char log[128];
};

/* A CUBIN as far as cuabi looks at one: a 64-bit little-endian ELF header
 * with no sections or segments, then a tag. */
static const unsigned char* fake_cubin(size_t* size) {
  static unsigned char image[80];
  memset(image, 0, sizeof(image));
  memcpy(image, "\x7f" "ELF", 4);
  image[4] = 2; /* ELFCLASS64 */
  image[5] = 1; /* little-endian */
  image[6] = 1;
  image[0x34] = 64; /* e_ehsize */
  memcpy(image + 64, "fake cubin saxpy", 16);
  *size = sizeof(image);
  return image;
}
static const char kFakePtx[] = "// fake PTX\n.version 8.0\n.target sm_90\n.entry saxpy\n";

EXPORT const char* nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
    case NVRTC_SUCCESS:
      return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_COMPILATION:
      return "NVRTC_ERROR_COMPILATION";
    case NVRTC_ERROR_INVALID_INPUT:
      return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM:
      return "NVRTC_ERROR_INVALID_PROGRAM";
    default:
      return "NVRTC_ERROR_FAKE";
  }
}
EXPORT nvrtcResult nvrtcVersion(int* major, int* minor) {
  FAULT();
  *major = 12;
  *minor = 8;
  return NVRTC_SUCCESS;
}
static const int kArchs[] = {75, 80, 86, 89, 90};
EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int* n) {
  FAULT();
  *n = (int)(sizeof(kArchs) / sizeof(kArchs[0]));
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetSupportedArchs(int* archs) {
  FAULT();
  memcpy(archs, kArchs, sizeof(kArchs));
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name,
                                      int num_headers, const char* const* headers,
                                      const char* const* include_names) {
  FAULT();
  (void)name, (void)num_headers, (void)headers, (void)include_names;
  if (!prog || !src) return NVRTC_ERROR_INVALID_INPUT;
  struct _nvrtcProgram* p = calloc(1, sizeof(*p));
  if (!p || !(p->source = strdup(src))) {
    free(p);
    return NVRTC_ERROR_OUT_OF_MEMORY;
  }
  ++live_resources;
  *prog = p;
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  int f_ = gate(__func__);
  if (!prog || !*prog) return f_ ? (nvrtcResult)f_ : NVRTC_ERROR_INVALID_PROGRAM;
  --live_resources;
  free((*prog)->source);
  free(*prog);
  *prog = NULL;
  return (nvrtcResult)f_;
}
EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char* const* options) {
  FAULT();
  (void)n, (void)options;
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (strstr(p->source, "saxpy")) {
    p->compiled = 1;
    p->log[0] = 0;
    return NVRTC_SUCCESS;
  }
  p->compiled = -1;
  snprintf(p->log, sizeof(p->log), "fake.cu(1): error: the fake NVRTC compiles saxpy only\n");
  return NVRTC_ERROR_COMPILATION;
}
#define NEED_COMPILED(p) \
  if (!(p) || (p)->compiled != 1) return NVRTC_ERROR_INVALID_PROGRAM
EXPORT nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t* size) {
  FAULT();
  NEED_COMPILED(p);
  *size = sizeof(kFakePtx);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram p, char* out) {
  FAULT();
  NEED_COMPILED(p);
  memcpy(out, kFakePtx, sizeof(kFakePtx));
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t* size) {
  FAULT();
  NEED_COMPILED(p);
  fake_cubin(size);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char* out) {
  FAULT();
  NEED_COMPILED(p);
  size_t size = 0;
  const unsigned char* image = fake_cubin(&size);
  memcpy(out, image, size);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t* size) {
  FAULT();
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  *size = strlen(p->log) + 1;
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char* out) {
  FAULT();
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  memcpy(out, p->log, strlen(p->log) + 1);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcAddNameExpression(nvrtcProgram p, const char* expr) {
  FAULT();
  (void)expr;
  return p ? NVRTC_SUCCESS : NVRTC_ERROR_INVALID_PROGRAM;
}
EXPORT nvrtcResult nvrtcGetLoweredName(nvrtcProgram p, const char* expr, const char** lowered) {
  FAULT();
  NEED_COMPILED(p);
  *lowered = expr;
  return NVRTC_SUCCESS;
}
