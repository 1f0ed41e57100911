/*
 * A small C program over the paths that need no driver, for valgrind
 * (run-sanitizers.sh runs it under memcheck): statuses and versions, the
 * driver that cannot be loaded (CUABI_DRIVER_PATH points nowhere, or at the
 * toolkit's stub), handle errors, NVRTC compiles that work and that fail,
 * the two-call getters, name expressions, last errors on several threads,
 * and every release.
 *
 * Exit status 0 when every check held; it prints what failed otherwise.
 */
#include <cuabi/cuabi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond, what)                                                                        \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "FAILED: %s (line %d): %s\n", what, __LINE__, cuabi_last_error_message()); \
      ++failures;                                                                                \
    }                                                                                            \
  } while (0)

static const char* kSource =
    "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n"
    "extern \"C\" __global__ void saxpy(float a, float* x, float* y, float* out, size_t n)\n"
    "{ size_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a * x[i] + y[i]; }\n";

/* Fetches a string through cuabi_program_get_log / _get_ptx style getters. */
static char* fetch(cuabi_status (*get)(cuabi_program, char*, size_t*), cuabi_program p) {
  size_t n = 0;
  if (get(p, NULL, &n) != CUABI_SUCCESS) return NULL;
  char* buf = (char*)malloc(n);
  if (!buf) return NULL;
  if (get(p, buf, &n) != CUABI_SUCCESS) {
    free(buf);
    return NULL;
  }
  return buf;
}

static void driver_paths(void) {
  int32_t count = 7, version = 0;
  cuabi_device dev = NULL;
  const char* path = getenv("CUABI_DRIVER_PATH");
  cuabi_status expected =
      path && strstr(path, "stubs") ? CUABI_ERROR_STUB_DRIVER : CUABI_ERROR_DRIVER_NOT_FOUND;
  CHECK(cuabi_init() == expected, "cuabi_init fails as expected");
  CHECK(cuabi_init() == expected, "cuabi_init fails the same way twice");
  CHECK(cuabi_device_get_count(&count) == expected && count == 7, "device_count");
  CHECK(cuabi_device_get(0, &dev) == expected && dev == NULL, "device_get");
  CHECK(cuabi_driver_get_version(&version) == expected, "driver_version");
  CHECK(strlen(cuabi_last_error_message()) > 0, "a message");
}

static void handles(void) {
  cuabi_buffer b = (cuabi_buffer)(uintptr_t)0xdeadbeef;
  size_t size = 0;
  CHECK(cuabi_buffer_get_size(b, &size) == CUABI_ERROR_INVALID_HANDLE, "made-up buffer");
  CHECK(cuabi_program_get_log(NULL, NULL, &size) == CUABI_ERROR_INVALID_HANDLE, "NULL program");
  cuabi_buffer_release(b);
  cuabi_program_release(NULL);
  cuabi_module_release((cuabi_module)(uintptr_t)1);
}

static void compiles(void) {
  cuabi_program p = NULL, bad = NULL;
  const char* opts[] = {"--gpu-architecture=sm_90", "-std=c++17"};
  char* ptx;
  char* log;
  void* cubin;
  size_t n = 0;
  int32_t major = 0, minor = 0;

  CHECK(cuabi_nvrtc_get_version(&major, &minor) == CUABI_SUCCESS && major >= 11, "nvrtc_version");
  CHECK(cuabi_program_create(kSource, "probe.cu", 0, NULL, NULL, &p) == CUABI_SUCCESS, "create");
  CHECK(cuabi_program_add_name_expression(p, "store<int>") == CUABI_SUCCESS, "name expression");
  CHECK(cuabi_program_compile(p, 2, opts) == CUABI_SUCCESS, "compile");
  ptx = fetch(cuabi_program_get_ptx, p);
  CHECK(ptx && strstr(ptx, "saxpy"), "PTX names saxpy");
  free(ptx);
  CHECK(cuabi_program_get_cubin(p, NULL, &n) == CUABI_SUCCESS && n > 0, "CUBIN size");
  cubin = malloc(n);
  CHECK(cubin && cuabi_program_get_cubin(p, cubin, &n) == CUABI_SUCCESS, "CUBIN");
  free(cubin);
  {
    char small[2];
    n = sizeof(small);
    CHECK(cuabi_program_get_lowered_name(p, "store<int>", small, &n) ==
                  CUABI_ERROR_INSUFFICIENT_BUFFER &&
              n > 2,
          "lowered name into a small buffer");
  }
  CHECK(cuabi_program_compile(p, 0, NULL) == CUABI_ERROR_INVALID_ARGUMENT, "compiled twice");
  cuabi_program_release(p);
  cuabi_program_release(p);

  CHECK(cuabi_program_create("__global__ void k( {", NULL, 0, NULL, NULL, &bad) == CUABI_SUCCESS,
        "create bad");
  CHECK(cuabi_program_compile(bad, 0, NULL) == CUABI_ERROR_COMPILE, "compile error");
  log = fetch(cuabi_program_get_log, bad);
  CHECK(log && strstr(log, "error"), "the log has the error");
  free(log);
  n = 0;
  CHECK(cuabi_last_error_log(NULL, &n) == CUABI_SUCCESS && n > 1, "last error log");
  cuabi_program_release(bad);

  CHECK(cuabi_program_create("int x;", NULL, 0, NULL, NULL, &bad) == CUABI_SUCCESS, "create");
  {
    const char* wrong[] = {"--no-such-option"};
    CHECK(cuabi_program_compile(bad, 1, wrong) == CUABI_ERROR_COMPILE, "bad option");
  }
  cuabi_program_release(bad);
}

static void* thread_errors(void* arg) {
  char expr[64];
  size_t n = 0;
  cuabi_program p = (cuabi_program)arg;
  int i;
  for (i = 0; i < 50; ++i) {
    snprintf(expr, sizeof(expr), "missing_%d", i);
    if (cuabi_program_get_lowered_name(p, expr, NULL, &n) != CUABI_ERROR_NOT_FOUND ||
        !strstr(cuabi_last_error_message(), expr))
      return (void*)1;
  }
  return NULL;
}

static void threads(void) {
  cuabi_program p = NULL;
  pthread_t t[4];
  int i;
  CHECK(cuabi_program_create("__device__ int t;", NULL, 0, NULL, NULL, &p) == CUABI_SUCCESS,
        "create");
  for (i = 0; i < 4; ++i) pthread_create(&t[i], NULL, thread_errors, p);
  for (i = 0; i < 4; ++i) {
    void* r = NULL;
    pthread_join(t[i], &r);
    CHECK(r == NULL, "per-thread last errors");
  }
  cuabi_program_release(p);
}

int main(void) {
  CHECK(cuabi_version() == CUABI_VERSION_NUMBER, "version");
  CHECK(strcmp(cuabi_status_get_name(CUABI_ERROR_FORKED), "CUABI_ERROR_FORKED") == 0, "status name");
  CHECK(strcmp(cuabi_status_get_name(12345), "CUABI_ERROR_UNKNOWN") == 0, "unknown status");
  driver_paths();
  handles();
  compiles();
  threads();
  cuabi_last_error_clear();
  CHECK(cuabi_last_error_status() == CUABI_SUCCESS, "cleared");
  if (failures) {
    fprintf(stderr, "probe: %d check(s) failed\n", failures);
    return 1;
  }
  printf("probe: every check held\n");
  return 0;
}
