/*
 * Counts the instructions each launch path of cuabi's C ABI executes per
 * call, against the benchmark stand-in driver (fake_driver.c), under
 * callgrind. Run it through run.py, which starts valgrind, reads the dumps
 * and prints the table; on its own (outside valgrind) it only checks that
 * every path succeeds.
 *
 *   cuabi_instructions N M
 *
 * For every path it runs a few warm-up calls, then N calls and N+M calls,
 * each loop with collection switched on and dumped under the label
 * "path=<name> n=<count>" (CALLGRIND_DUMP_STATS_AT). run.py takes
 * (instructions(N+M) - instructions(N)) / M, so what every loop costs once
 * (the first calls, the loop's set-up, the dump) drops out. Every call goes
 * through the same kind of function pointer; the path "loop" (a function
 * that does nothing) is that overhead, which run.py subtracts.
 *
 * $CUABI_DRIVER_PATH names the stand-in; the raw calls are its own entry
 * points, found with dlsym in the very library cuabi opened.
 */
#include <cuabi/cuabi.h>
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

typedef CUresult(CUDAAPI* launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void**, void**);
typedef CUresult(CUDAAPI* query_fn)(CUstream);
typedef CUresult(CUDAAPI* proc_fn)(const char*, void**, int, cuuint64_t,
                                   CUdriverProcAddressQueryResult*);

/* One kernel set up both ways: the stand-in's own handles for the raw call,
 * cuabi's for the rest. */
typedef struct {
  const char* name;
  CUfunction raw_function;
  cuabi_function function;
  cuabi_launch_config config;
  void* params[16];
  size_t sizes[16];
  size_t num_params;
  void* block;
  size_t block_size;
  cuabi_launch_plan plan;
} kernel;

static launch_fn raw_launch;
static query_fn raw_query;
static CUstream raw_stream;
static cuabi_stream stream;

/* The arguments: float, float*, int, size_t (x4 for 16). */
static float f_args[4] = {1, 2, 3, 4};
static CUdeviceptr p_arg = 256;
static int i_args[4] = {5, 6, 7, 8};
static size_t n_args[4] = {9, 10, 11, 12};

static void fail(const char* what, cuabi_status st) {
  fprintf(stderr, "cuabi_instructions: %s: %s: %s\n", what, cuabi_status_get_name(st),
          cuabi_last_error_message());
  exit(1);
}
#define CHECK(call)                             \
  do {                                          \
    cuabi_status st_ = (call);                  \
    if (st_ != CUABI_SUCCESS) fail(#call, st_); \
  } while (0)

/* Each path: one call, 0 when it answered as expected. */
static int path_loop(kernel* k) { return k == NULL; }
static int path_raw(kernel* k) {
  return raw_launch(k->raw_function, 1, 1, 1, 1, 1, 1, 0, raw_stream, k->params, NULL) !=
         CUDA_SUCCESS;
}
static int path_launch(kernel* k) {
  return cuabi_function_launch(k->function, &k->config, stream, k->params, k->num_params) !=
         CUABI_SUCCESS;
}
static int path_sized(kernel* k) {
  return cuabi_function_launch_sized(k->function, &k->config, stream, k->params, k->sizes,
                                     k->num_params) != CUABI_SUCCESS;
}
static int path_packed(kernel* k) {
  return cuabi_function_launch_packed(k->function, &k->config, stream, k->block, k->block_size) !=
         CUABI_SUCCESS;
}
static int path_plan(kernel* k) { return cuabi_launch_plan_launch(k->plan) != CUABI_SUCCESS; }
static int path_raw_query_ready(kernel* k) {
  (void)k;
  return raw_query(raw_stream) != CUDA_SUCCESS;
}
static int path_raw_query_not_ready(kernel* k) {
  (void)k;
  return raw_query(raw_stream) != CUDA_ERROR_NOT_READY;
}
static int path_query_ready(kernel* k) {
  (void)k;
  return cuabi_stream_query(stream) != CUABI_SUCCESS;
}
static int path_query_not_ready(kernel* k) {
  (void)k;
  return cuabi_stream_query(stream) != CUABI_ERROR_NOT_READY;
}

/* An NVTX range opened and closed with no tool attached. */
static int path_nvtx_default(kernel* k) {
  (void)k;
  return (cuabi_nvtx_range_push(NULL, "range", 0) | cuabi_nvtx_range_pop(NULL)) != CUABI_SUCCESS;
}
static int path_nvtx_named(kernel* k) {
  (void)k;
  return (cuabi_nvtx_range_push("cuabi.instructions", "range", 0) |
          cuabi_nvtx_range_pop("cuabi.instructions")) != CUABI_SUCCESS;
}

/* Runs `count` calls; the number that did not answer as expected. */
static long __attribute__((noinline)) calls(int (*path)(kernel*), kernel* k, long count) {
  long bad = 0;
  for (long i = 0; i < count; ++i) bad += path(k);
  return bad;
}

static long measure(const char* name, int (*path)(kernel*), kernel* k, long n, long m) {
  long bad = calls(path, k, 16); /* warm-up: lazy binding, first-use state */
  long counts[2] = {n, n + m};
  for (int r = 0; r < 2; ++r) {
    char label[128];
    snprintf(label, sizeof label, "path=%s n=%ld", name, counts[r]);
    CALLGRIND_TOGGLE_COLLECT;
    bad += calls(path, k, counts[r]);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(label);
  }
  if (bad) fprintf(stderr, "cuabi_instructions: %s: %ld calls answered wrongly\n", name, bad);
  return bad;
}

static void setup_kernel(kernel* k, const char* name, size_t num_params, cuabi_module module,
                         CUmodule raw_module,
                         CUresult(CUDAAPI* get_function)(CUfunction*, CUmodule, const char*)) {
  k->name = name;
  k->num_params = num_params;
  for (size_t i = 0; i < num_params; ++i) {
    size_t q = i / 4;
    switch (i % 4) {
      case 0:
        k->params[i] = &f_args[q], k->sizes[i] = sizeof(float);
        break;
      case 1:
        k->params[i] = &p_arg, k->sizes[i] = sizeof(p_arg);
        break;
      case 2:
        k->params[i] = &i_args[q], k->sizes[i] = sizeof(int);
        break;
      default:
        k->params[i] = &n_args[q], k->sizes[i] = sizeof(size_t);
        break;
    }
  }
  if (get_function(&k->raw_function, raw_module, name) != CUDA_SUCCESS) {
    fprintf(stderr, "cuabi_instructions: the stand-in has no kernel %s\n", name);
    exit(1);
  }
  CHECK(cuabi_module_get_function(module, name, &k->function));
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  k->config = c;
  CHECK(cuabi_function_get_args_size(k->function, &k->block_size));
  k->block = calloc(1, k->block_size ? k->block_size : 1);
  cuabi_param_info layout[16];
  size_t count = 16;
  CHECK(cuabi_function_get_params(k->function, layout, &count, NULL));
  if (!k->block || count != num_params) {
    fprintf(stderr, "cuabi_instructions: %s: %zu parameters, expected %zu\n", name, count,
            num_params);
    exit(1);
  }
  for (size_t i = 0; i < num_params; ++i)
    memcpy((char*)k->block + layout[i].offset, k->params[i], k->sizes[i]);
  CHECK(cuabi_launch_plan_create(k->function, &k->config, stream, &k->plan));
  void* plan_block = NULL;
  size_t plan_size = 0;
  CHECK(cuabi_launch_plan_get_args(k->plan, &plan_block, &plan_size));
  memcpy(plan_block, k->block, plan_size);
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 200, m = argc > 2 ? atol(argv[2]) : 2000;
  const char* path = getenv("CUABI_DRIVER_PATH");
  if (!path || !*path) {
    fprintf(stderr, "cuabi_instructions: set CUABI_DRIVER_PATH to the stand-in driver\n");
    return 2;
  }
  cuabi_device device;
  CHECK(cuabi_device_get(0, &device));
  /* The library cuabi opened (same path: the same handle). */
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cuabi_instructions: %s\n", dlerror());
    return 1;
  }
  void (*set_query)(int) = (void (*)(int))dlsym(lib, "instructions_fake_set_stream_query");
  proc_fn proc = (proc_fn)dlsym(lib, "cuGetProcAddress_v2");
  raw_launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
  CUresult(CUDAAPI * load)(CUmodule*, const void*) =
      (CUresult(CUDAAPI*)(CUmodule*, const void*))dlsym(lib, "cuModuleLoadData");
  CUresult(CUDAAPI * get_function)(CUfunction*, CUmodule, const char*) =
      (CUresult(CUDAAPI*)(CUfunction*, CUmodule, const char*))dlsym(lib, "cuModuleGetFunction");
  CUresult(CUDAAPI * create_stream)(CUstream*, unsigned) =
      (CUresult(CUDAAPI*)(CUstream*, unsigned))dlsym(lib, "cuStreamCreate");
  if (!set_query || !proc || !raw_launch || !load || !get_function || !create_stream ||
      proc("cuStreamQuery", (void**)&raw_query, 12000, 0, NULL) != CUDA_SUCCESS) {
    fprintf(stderr,
            "cuabi_instructions: %s is not the instruction-count stand-in "
            "(bench/instructions/fake_driver.c)\n",
            path);
    return 1;
  }

  /* The image: the stand-in takes any bytes and knows its kernels by name. */
  static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
  cuabi_module module;
  CHECK(cuabi_module_load_data(device, ptx, sizeof ptx, &module));
  CUmodule raw_module;
  if (load(&raw_module, ptx) != CUDA_SUCCESS || create_stream(&raw_stream, 0) != CUDA_SUCCESS) {
    fprintf(stderr, "cuabi_instructions: the stand-in refused a module or a stream\n");
    return 1;
  }
  CHECK(cuabi_stream_create(device, 0, 0, &stream));

  kernel k2, k16;
  memset(&k2, 0, sizeof k2);
  memset(&k16, 0, sizeof k16);
  setup_kernel(&k2, "empty2", 2, module, raw_module, get_function);
  setup_kernel(&k16, "empty16", 16, module, raw_module, get_function);

  static const struct {
    const char* name;
    int (*fn)(kernel*);
  } launches[] = {{"raw", path_raw},
                  {"launch", path_launch},
                  {"sized", path_sized},
                  {"packed", path_packed},
                  {"plan", path_plan}};
  long bad = measure("loop", path_loop, &k2, n, m);
  for (int a = 0; a < 2; ++a) {
    kernel* k = a ? &k16 : &k2;
    for (size_t i = 0; i < sizeof launches / sizeof launches[0]; ++i) {
      char name[64];
      snprintf(name, sizeof name, "%s/%zu", launches[i].name, k->num_params);
      bad += measure(name, launches[i].fn, k, n, m);
    }
  }
  set_query(0);
  bad += measure("raw_query/success", path_raw_query_ready, NULL, n, m);
  bad += measure("query/success", path_query_ready, NULL, n, m);
  set_query(1);
  bad += measure("raw_query/not_ready", path_raw_query_not_ready, NULL, n, m);
  bad += measure("query/not_ready", path_query_not_ready, NULL, n, m);
  set_query(0);
  bad += measure("nvtx/default", path_nvtx_default, NULL, n, m);
  bad += measure("nvtx/named", path_nvtx_named, NULL, n, m);

  cuabi_launch_plan_release(k2.plan);
  cuabi_launch_plan_release(k16.plan);
  cuabi_function_release(k2.function);
  cuabi_function_release(k16.function);
  free(k2.block);
  free(k16.block);
  cuabi_stream_release(stream);
  cuabi_module_release(module);
  dlclose(lib);
  if (bad) return 1;
  printf("cuabi_instructions: every path answered as expected\n");
  return 0;
}
