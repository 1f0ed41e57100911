/*
 * Checks the stand-in driver itself (fake_cuda.c with fake_nvrtc.c, the
 * library named on the command line): every entry point of cuabi's table
 * (capi/core/driver_entry_points.h) resolves through cuGetProcAddress, to the
 * exported function where there is one and otherwise to a default answering
 * CUDA_ERROR_NOT_SUPPORTED; and the fault controls count, fail the nth call,
 * keep a sticky fault, leave inner calls uncounted and take a resource back
 * when its release fails.
 *
 *   cuabi_fake_cuda_test LIBRARY
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "driver_entry_points.h"

static int failures;
#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond)) {                                \
      ++failures;                                 \
      fprintf(stderr, "FAILED (%d): ", __LINE__); \
      fprintf(stderr, __VA_ARGS__);               \
      fprintf(stderr, "\n");                      \
    }                                             \
  } while (0)

#define STRING(x) #x
#define EXPANDED_STRING(x) STRING(x)
static const struct {
  const char* name;
  const char* symbol;
} table[] = {
#define ROW(name, version) {#name, EXPANDED_STRING(name)},
    CUABI_DRIVER_ENTRY_POINTS(ROW)
#undef ROW
};

typedef CUresult (*proc_fn)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*no_args_fn)(void);
typedef CUresult (*count_fn)(int*);
typedef CUresult (*alloc_fn)(CUdeviceptr*, size_t);
typedef CUresult (*alloc_async_fn)(CUdeviceptr*, size_t, CUstream);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*load_fn)(CUmodule*, const void*);
typedef CUresult (*unload_fn)(CUmodule);
typedef int (*nvrtc_version_fn)(int*, int*);

static void* lib;
static proc_fn proc;
static long (*live)(void);
static long (*calls)(void);
static const char* (*call_name)(long);
static const char* (*failed_name)(void);
static void (*reset)(void);
static void (*fail_call)(long, int, int);
static void (*fail_entry)(const char*, long, int, int);

static void* entry(const char* name) {
  void* fn = NULL;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
  CUresult r = proc(name, &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  CHECK(r == CUDA_SUCCESS && fn && status == CU_GET_PROC_ADDRESS_SUCCESS,
        "cuGetProcAddress(%s) answered %d, status %d", name, (int)r, (int)status);
  return fn;
}

static int same(const char* a, const char* b) { return a && b && strcmp(a, b) == 0; }

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cuabi_fake_cuda_test LIBRARY\n");
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cannot open %s: %s\n", argv[1], dlerror());
    return 1;
  }
  *(void**)&proc = dlsym(lib, "cuGetProcAddress_v2");
  *(void**)&live = dlsym(lib, "fake_live_resources");
  *(void**)&calls = dlsym(lib, "fake_calls");
  *(void**)&call_name = dlsym(lib, "fake_call_name");
  *(void**)&failed_name = dlsym(lib, "fake_failed_name");
  *(void**)&reset = dlsym(lib, "fake_reset");
  *(void**)&fail_call = dlsym(lib, "fake_fail_call");
  *(void**)&fail_entry = dlsym(lib, "fake_fail_entry");
  if (!proc || !live || !calls || !call_name || !failed_name || !reset || !fail_call ||
      !fail_entry) {
    fprintf(stderr, "%s lacks cuGetProcAddress_v2 or a fake_* control\n", argv[1]);
    return 1;
  }
  count_fn device_count = (count_fn)entry("cuDeviceGetCount");
  int n = 0;

  /* Before any control is called, nothing is counted. */
  CHECK(device_count(&n) == CUDA_SUCCESS && n == 1, "cuDeviceGetCount");
  CHECK(calls() == 0, "a call was counted before the controls were used");

  /* Every entry of the table: the exported function, or the default. */
  size_t implemented = 0, defaults = 0;
  const char* a_default = NULL;
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
    void* fn = entry(table[i].name);
    void* exported = dlsym(lib, table[i].symbol);
    if (exported) {
      CHECK(fn == exported, "%s is not answered with the exported %s", table[i].name,
            table[i].symbol);
      ++implemented;
    } else if (fn) {
      /* The default takes no parameters; called as it is defined. */
      CHECK(((no_args_fn)fn)() == CUDA_ERROR_NOT_SUPPORTED,
            "%s, not implemented, does not answer CUDA_ERROR_NOT_SUPPORTED", table[i].name);
      if (!a_default) a_default = table[i].name;
      ++defaults;
    }
  }
  printf(
      "stand-in driver: %zu entry points of cuabi's table implemented, %zu answer "
      "CUDA_ERROR_NOT_SUPPORTED\n",
      implemented, defaults);
  CHECK(implemented >= 60, "only %zu entry points implemented", implemented);

  /* Names outside the table: exported ones under their cuda.h name, and
   * nothing for a name the stand-in lacks. */
  CHECK(entry("cuLibraryGetKernel") == dlsym(lib, "cuLibraryGetKernel"), "cuLibraryGetKernel");
  CHECK(entry("cuMemAllocHost") == dlsym(lib, "cuMemAllocHost_v2"), "cuMemAllocHost");
  void* fn = (void*)&n;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  CHECK(proc("cuNoSuchEntryPoint", &fn, 13000, 0, &status) == CUDA_ERROR_NOT_FOUND && !fn &&
            status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
        "an unknown name is found");

  /* The nth call fails, once, and is named. */
  reset();
  fail_call(2, CUDA_ERROR_OUT_OF_MEMORY, 0);
  CHECK(device_count(&n) == CUDA_SUCCESS, "call 1");
  CHECK(device_count(&n) == CUDA_ERROR_OUT_OF_MEMORY, "call 2 not failed");
  CHECK(device_count(&n) == CUDA_SUCCESS, "call 3");
  CHECK(calls() == 3 && same(call_name(2), "cuDeviceGetCount") &&
            same(failed_name(), "cuDeviceGetCount"),
        "counted %ld calls, failed %s", calls(), failed_name() ? failed_name() : "none");

  /* A default is counted and can be failed like any entry point. */
  if (a_default) {
    no_args_fn missing = (no_args_fn)entry(a_default);
    reset();
    CHECK(missing() == CUDA_ERROR_NOT_SUPPORTED && calls() == 1 && same(call_name(1), a_default),
          "%s: not counted", a_default);
    fail_entry(a_default, 1, CUDA_ERROR_INVALID_VALUE, 0);
    CHECK(missing() == CUDA_ERROR_INVALID_VALUE, "%s: not failed", a_default);
  }

  /* An entry point calling another counts once; resources are counted. */
  alloc_fn alloc = (alloc_fn)entry("cuMemAlloc");
  alloc_async_fn alloc_async = (alloc_async_fn)entry("cuMemAllocAsync");
  free_fn mem_free = (free_fn)entry("cuMemFree");
  free_async_fn free_async = (free_async_fn)entry("cuMemFreeAsync");
  const long before = live();
  CUdeviceptr p = 0;
  reset();
  CHECK(alloc_async(&p, 16, NULL) == CUDA_SUCCESS && p, "cuMemAllocAsync");
  CHECK(calls() == 1 && same(call_name(1), "cuMemAllocAsync"),
        "cuMemAllocAsync counted as %ld calls", calls());
  CHECK(live() == before + 1, "the allocation is not counted");
  CHECK(free_async(p, NULL) == CUDA_SUCCESS && live() == before, "cuMemFreeAsync");

  /* A failed release still takes its resource back. */
  CHECK(alloc(&p, 16) == CUDA_SUCCESS && live() == before + 1, "cuMemAlloc");
  fail_entry("cuMemFree", 1, CUDA_ERROR_INVALID_VALUE, 0);
  CHECK(mem_free(p) == CUDA_ERROR_INVALID_VALUE, "cuMemFree not failed");
  CHECK(live() == before, "a failed cuMemFree kept its allocation");

  /* A sticky fault: every later driver call answers it, NVRTC's do not. */
  nvrtc_version_fn nvrtc_version = (nvrtc_version_fn)dlsym(lib, "nvrtcVersion");
  reset();
  fail_call(1, CUDA_ERROR_LAUNCH_FAILED, 0);
  CHECK(device_count(&n) == CUDA_ERROR_LAUNCH_FAILED, "the sticky fault");
  CHECK(device_count(&n) == CUDA_ERROR_LAUNCH_FAILED, "a call after the sticky fault");
  int major = 0, minor = 0;
  CHECK(nvrtc_version && nvrtc_version(&major, &minor) == 0, "NVRTC after a sticky fault");
  reset();
  CHECK(device_count(&n) == CUDA_SUCCESS, "a call after fake_reset");

  /* Images: ELF, PTX and CUDA C++ source load; anything else does not. */
  load_fn load = (load_fn)entry("cuModuleLoadData");
  unload_fn unload = (unload_fn)entry("cuModuleUnload");
  const char* images[] = {"\177ELF\2\1\1", "//\n.version 8.0\n", ".version 8.0\n",
                          "extern \"C\" __global__ void empty2(int a, void* b) {}"};
  for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); ++i) {
    CUmodule m = NULL;
    CHECK(load(&m, images[i]) == CUDA_SUCCESS && m, "image %zu refused", i);
    if (m) unload(m);
  }
  CUmodule m = NULL;
  CHECK(load(&m, "not an image") == CUDA_ERROR_INVALID_IMAGE && !m, "a made-up image loads");
  CHECK(live() == before, "modules left live");

  if (failures) {
    printf("%d checks failed\n", failures);
    return 1;
  }
  printf("stand-in driver: all checks passed\n");
  return 0;
}
