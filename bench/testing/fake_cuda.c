/*
 * A stand-in for the CUDA driver (libcuda.so.1) that lets the benchmark
 * harness run its GPU mode end to end on a machine without a GPU, to test
 * the harness itself (bench/selftest.sh). Nothing it reports is a GPU
 * figure: its device is named "cuabi-bench fake driver (no GPU)".
 *
 * "Device" memory is host memory; copies are memcpy; streams run work at
 * once, in order; events read the host clock. It knows three kernels by
 * name, with the parameter layouts NVRTC gives them on x86-64: empty2 and
 * empty16 (which do nothing) and saxpy (computed on the host, so results
 * verify). Stream capture records launches into a graph that a graph launch
 * replays. The entry points are exported under their cuda.h names (so a
 * program linked with -lcuda runs) and through cuGetProcAddress (as cuabi
 * looks them up).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

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
  *s = e == CUDA_SUCCESS           ? "CUDA_SUCCESS"
       : e == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND"
                                   : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGetErrorString(CUresult e, const char** s) {
  *s = e == CUDA_SUCCESS ? "no error" : "an error of the fake driver";
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetCount(int* n) {
  *n = 1;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "cuabi-bench fake driver (no GPU)");
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
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
  (void)d;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total) {
  *free_bytes = (size_t)79 << 30;
  *total = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  (void)d;
  *c = &the_context;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  (void)d;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice d) {
  (void)d;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext* c) {
  *c = current;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  current = c;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  *least = 0;
  *greatest = -5;
  return CUDA_SUCCESS;
}

/* ---- modules and functions ---------------------------------------------- */

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* m, const void* image) {
  if (!image) return CUDA_ERROR_INVALID_VALUE;
  *m = calloc(1, sizeof(struct CUmod_st));
  return *m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  free(m);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
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
  (void)p, (void)bytes, (void)m, (void)name;
  return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset,
                                           size_t* size) {
  if (index >= (size_t)f->k->count) return CUDA_ERROR_INVALID_VALUE;
  *offset = f->k->offset[index];
  *size = f->k->size[index];
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction f) {
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
  (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
  if (!code) return CUDA_ERROR_INVALID_VALUE;
  *lib = calloc(1, sizeof(struct CUlib_st));
  return *lib ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary lib) {
  free(lib);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel* k, CUlibrary lib, const char* name) {
  (void)lib;
  CUfunction f;
  CUresult r = cuModuleGetFunction(&f, NULL, name);
  if (r == CUDA_SUCCESS) *k = (CUkernel)f;
  return r;
}
EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction* f, CUkernel k) {
  *f = (CUfunction)k;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuKernelGetAttribute(int* v, CUfunction_attribute a, CUkernel k,
                                             CUdevice d) {
  (void)d;
  return cuFuncGetAttribute(v, a, (CUfunction)k);
}
EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t* offset,
                                             size_t* size) {
  return cuFuncGetParamInfo((CUfunction)k, index, offset, size);
}

/* ---- launches, streams, events, graphs ------------------------------------ */

static CUstream stream_of(CUstream s) { return s ? s : &default_stream; }

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                       CUstream s, void** params, void** extra) {
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
  return cuLaunchKernel(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                        c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra);
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int flags) {
  (void)flags;
  *s = calloc(1, sizeof(struct CUstream_st));
  return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* s, unsigned int flags, int prio) {
  (void)prio;
  return cuStreamCreate(s, flags);
}
EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  if (s && s->capture) {
    free(s->capture->recs);
    free(s->capture);
  }
  free(s);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamQuery(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  (void)s, (void)e, (void)flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  (void)mode;
  if (!s) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (s->capture) return CUDA_ERROR_ILLEGAL_STATE;
  s->capture = calloc(1, sizeof(struct CUgraph_st));
  return s->capture ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph* g) {
  if (!s || !s->capture) return CUDA_ERROR_ILLEGAL_STATE;
  *g = s->capture;
  s->capture = NULL;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* status) {
  *status = s && s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus* status,
                                               cuuint64_t* id, CUgraph* graph,
                                               const CUgraphNode** deps,
                                               const CUgraphEdgeData** edges, size_t* ndeps) {
  cuStreamIsCapturing(s, status);
  if (id) *id = 1;
  if (graph) *graph = s ? s->capture : NULL;
  if (deps) *deps = NULL;
  if (edges) *edges = NULL;
  if (ndeps) *ndeps = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph g, CUgraphNode* nodes, size_t* count) {
  if (nodes)
    for (size_t i = 0; i < *count && i < g->n; ++i) nodes[i] = (CUgraphNode)(g->recs + i);
  *count = g->n;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g,
                                                    unsigned long long flags) {
  (void)flags;
  *e = calloc(1, sizeof(struct CUgraphExec_st));
  if (!*e) return CUDA_ERROR_OUT_OF_MEMORY;
  (*e)->recs = malloc((g->n ? g->n : 1) * sizeof(launch_rec));
  if (!(*e)->recs) return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy((*e)->recs, g->recs, g->n * sizeof(launch_rec));
  (*e)->n = g->n;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* e, CUgraph g,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  if (p) {
    p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    p->hErrNode_out = NULL;
  }
  return cuGraphInstantiateWithFlags(e, g, p ? p->flags : 0);
}
EXPORT CUresult CUDAAPI cuGraphUpload(CUgraphExec e, CUstream s) {
  (void)e, (void)s;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
  (void)s;
  for (size_t i = 0; i < e->n; ++i) run(&e->recs[i]);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph g) {
  if (g) free(g->recs);
  free(g);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) {
  if (e) free(e->recs);
  free(e);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned int flags) {
  (void)flags;
  *e = calloc(1, sizeof(struct CUevent_st));
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  (void)s;
  e->ms = now_ms();
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventQuery(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  *ms = (float)(end->ms - start->ms);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventDestroy(CUevent e) {
  free(e);
  return CUDA_SUCCESS;
}

/* ---- memory --------------------------------------------------------------- */

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  void* m = NULL;
  if (posix_memalign(&m, 256, bytes ? bytes : 1)) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  free((void*)(uintptr_t)p);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) {
  memset((void*)(uintptr_t)p, v, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
  (void)s;
  return cuMemsetD8(p, v, n);
}
EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void* h, size_t n) {
  memcpy((void*)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyDtoH(void* h, CUdeviceptr d, size_t n) {
  memcpy(h, (void*)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void* h, size_t n, CUstream s) {
  (void)s;
  return cuMemcpyHtoD(d, h, n);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void* h, CUdeviceptr d, size_t n, CUstream s) {
  (void)s;
  return cuMemcpyDtoH(h, d, n);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  (void)s;
  return cuMemcpyDtoD(d, src, n);
}
EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  (void)st;
  return cuMemcpy(d, s, n);
}
/* One memory pool that allocates like cuMemAlloc. */
struct CUmemPoolHandle_st {
  int unused;
};
static struct CUmemPoolHandle_st the_pool;
EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice d) {
  (void)d;
  *pool = &the_pool;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice d) {
  return cuDeviceGetMemPool(pool, d);
}
EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void* v) {
  (void)pool, (void)a, (void)v;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void* v) {
  (void)pool, (void)a;
  memset(v, 0, sizeof(cuuint64_t));
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t bytes, CUmemoryPool pool,
                                                CUstream s) {
  (void)pool, (void)s;
  return cuMemAlloc(p, bytes);
}
EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream s) {
  (void)s;
  return cuMemAlloc(p, bytes);
}
EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  (void)s;
  return cuMemFree(p);
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void** p, size_t bytes, unsigned int flags) {
  (void)flags;
  if (posix_memalign(p, 4096, bytes ? bytes : 1)) return CUDA_ERROR_OUT_OF_MEMORY;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemAllocHost(void** p, size_t bytes) {
  return cuMemHostAlloc(p, bytes, 0);
}
EXPORT CUresult CUDAAPI cuMemFreeHost(void* p) {
  free(p);
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  (void)p, (void)bytes, (void)flags;
  return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemHostUnregister(void* p) {
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
