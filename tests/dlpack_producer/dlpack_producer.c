/* A DLPack producer for the tests of every language: a library that knows
 * nothing of cuabi. It allocates device memory through the CUDA driver
 * (opened from $CUABI_DRIVER_PATH, else libcuda.so.1), fills it with
 * start, start + 1, ... as float32, and hands it out as a DLPack 1.x managed
 * tensor (or an unversioned one) whose deleter frees the memory and counts
 * its calls. Its structs are its own, laid out as DLPack says. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#define PRODUCER_API __attribute__((visibility("default")))

typedef struct { uint32_t major, minor; } producer_version;
typedef struct { int32_t device_type, device_id; } producer_device;
typedef struct { uint8_t code, bits; uint16_t lanes; } producer_dtype;
typedef struct {
  void* data;
  producer_device device;
  int32_t ndim;
  producer_dtype dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} producer_tensor;
typedef struct producer_versioned {
  producer_version version;
  void* manager_ctx;
  void (*deleter)(struct producer_versioned*);
  uint64_t flags;
  producer_tensor dl_tensor;
} producer_versioned;
typedef struct producer_unversioned {
  producer_tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct producer_unversioned*);
} producer_unversioned;

typedef int (*init_fn)(unsigned);
typedef int (*device_get_fn)(int*, int);
typedef int (*retain_fn)(void**, int);
typedef int (*set_current_fn)(void*);
typedef int (*alloc_fn)(uint64_t*, size_t);
typedef int (*free_fn)(uint64_t);
typedef int (*htod_fn)(uint64_t, const void*, size_t);

static struct {
  void* lib;
  init_fn init;
  device_get_fn device_get;
  retain_fn retain;
  set_current_fn set_current;
  alloc_fn alloc;
  free_fn free_;
  htod_fn htod;
} cu;

static int deleted;   /* deleter calls so far */
static int freed_ok;  /* deleter calls whose cuMemFree succeeded */

static void* sym(const char* v2, const char* plain) {
  void* f = v2 ? dlsym(cu.lib, v2) : NULL;
  return f ? f : dlsym(cu.lib, plain);
}

static int load(void) {
  const char* path;
  if (cu.lib) return 0;
  path = getenv("CUABI_DRIVER_PATH");
  cu.lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu.lib) return -1;
  cu.init = (init_fn)sym(NULL, "cuInit");
  cu.device_get = (device_get_fn)sym(NULL, "cuDeviceGet");
  cu.retain = (retain_fn)sym(NULL, "cuDevicePrimaryCtxRetain");
  cu.set_current = (set_current_fn)sym(NULL, "cuCtxSetCurrent");
  cu.alloc = (alloc_fn)sym("cuMemAlloc_v2", "cuMemAlloc");
  cu.free_ = (free_fn)sym("cuMemFree_v2", "cuMemFree");
  cu.htod = (htod_fn)sym("cuMemcpyHtoD_v2", "cuMemcpyHtoD");
  if (!cu.init || !cu.device_get || !cu.retain || !cu.set_current || !cu.alloc || !cu.free_ ||
      !cu.htod)
    return -2;
  return cu.init(0) ? -3 : 0;
}

/* What a tensor owns besides itself. */
typedef struct {
  int device;
  uint64_t ptr;
  int64_t shape[1];
} owned;

static void release_owned(owned* o) {
  void* ctx = NULL;
  int dev = 0;
  ++deleted;
  if (cu.device_get(&dev, o->device) == 0 && cu.retain(&ctx, dev) == 0 &&
      cu.set_current(ctx) == 0 && cu.free_(o->ptr) == 0)
    ++freed_ok;
  free(o);
}

static void delete_versioned(producer_versioned* self) {
  release_owned((owned*)self->manager_ctx);
  free(self);
}

static void delete_unversioned(producer_unversioned* self) {
  release_owned((owned*)self->manager_ctx);
  free(self);
}

/* n float32 values start, start + 1, ... on device `device` as a
 * one-dimensional tensor; `flags` its DLPack flags. Answers 0, or a negative
 * step that failed. `*ptr` receives the device address. */
static int make(int device, int64_t n, float start, owned** out) {
  void* ctx = NULL;
  int dev = 0, r;
  float* host;
  int64_t i;
  owned* o;
  if ((r = load()) != 0) return r;
  if (cu.device_get(&dev, device) || cu.retain(&ctx, dev) || cu.set_current(ctx)) return -4;
  o = (owned*)calloc(1, sizeof *o);
  host = (float*)malloc((size_t)n * sizeof(float));
  if (!o || !host) return -5;
  for (i = 0; i < n; ++i) host[i] = start + (float)i;
  o->device = device;
  o->shape[0] = n;
  if (cu.alloc(&o->ptr, (size_t)n * sizeof(float))) return -6;
  r = cu.htod(o->ptr, host, (size_t)n * sizeof(float));
  free(host);
  if (r) return -7;
  *out = o;
  return 0;
}

static void describe(producer_tensor* t, owned* o, int device) {
  t->data = (void*)(uintptr_t)o->ptr;
  t->device.device_type = 2; /* CUDA */
  t->device.device_id = device;
  t->ndim = 1;
  t->dtype.code = 2; /* float */
  t->dtype.bits = 32;
  t->dtype.lanes = 1;
  t->shape = o->shape;
  t->strides = NULL;
  t->byte_offset = 0;
}

PRODUCER_API int dlpack_producer_make(int device, int64_t n, float start, uint64_t flags,
                                      void** tensor, uint64_t* ptr) {
  owned* o = NULL;
  producer_versioned* t;
  int r = make(device, n, start, &o);
  if (r) return r;
  t = (producer_versioned*)calloc(1, sizeof *t);
  if (!t) return -5;
  t->version.major = 1;
  t->version.minor = 1;
  t->manager_ctx = o;
  t->deleter = delete_versioned;
  t->flags = flags;
  describe(&t->dl_tensor, o, device);
  *tensor = t;
  *ptr = o->ptr;
  return 0;
}

PRODUCER_API int dlpack_producer_make_unversioned(int device, int64_t n, float start,
                                                  void** tensor, uint64_t* ptr) {
  owned* o = NULL;
  producer_unversioned* t;
  int r = make(device, n, start, &o);
  if (r) return r;
  t = (producer_unversioned*)calloc(1, sizeof *t);
  if (!t) return -5;
  t->manager_ctx = o;
  t->deleter = delete_unversioned;
  describe(&t->dl_tensor, o, device);
  *tensor = t;
  *ptr = o->ptr;
  return 0;
}

/* How many times a deleter ran, and how many of those freed the memory. */
PRODUCER_API int dlpack_producer_deleted(void) { return deleted; }
PRODUCER_API int dlpack_producer_freed(void) { return freed_ok; }
PRODUCER_API void dlpack_producer_reset(void) { deleted = freed_ok = 0; }
