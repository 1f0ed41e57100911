/*
 * SAXPY through cuabi's C API, step for step as NVIDIA's CUDA Python overview
 * walks it: compile CUDA C++ with NVRTC, load it as a module, get the kernel,
 * allocate, copy in asynchronously on a stream, launch with an explicit kernel
 * parameter array, copy back, synchronise, verify, free.
 *
 * Exit status: 0 when the result is verified, 1 on any failure, 2 when there
 * is no CUDA device (the kernel is still compiled, to PTX, to show NVRTC works).
 */
#include <cuabi/cuabi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* saxpy_source =
    "extern \"C\" __global__\n"
    "void saxpy(float a, float *x, float *y, float *out, size_t n)\n"
    "{\n"
    " size_t tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    " if (tid < n) {\n"
    "   out[tid] = a * x[tid] + y[tid];\n"
    " }\n"
    "}\n";

#define NUM_THREADS 512u  /* threads per block */
#define NUM_BLOCKS 32768u /* blocks per grid */

/* Reports a failed call with cuabi's own message and leaves. */
#define CHECK(call)                                                                 \
  do {                                                                              \
    cuabi_status status_ = (call);                                                  \
    if (status_ != CUABI_SUCCESS) {                                                 \
      fprintf(stderr, "%s failed: %s\n  %s\n", #call, cuabi_status_get_name(status_),   \
              cuabi_last_error_message());                                          \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

/* Compiles the SAXPY source with NVRTC for `arch` and returns the image. */
static char* compile(const char* arch_option, int want_cubin, size_t* size) {
  cuabi_program prog;
  CHECK(cuabi_program_create(saxpy_source, "saxpy.cu", 0, NULL, NULL, &prog));
  const char* opts[] = {"--fmad=false", arch_option};
  if (cuabi_program_compile(prog, 2, opts) != CUABI_SUCCESS) {
    size_t log_size = 0;
    cuabi_program_get_log(prog, NULL, &log_size);
    char* log = malloc(log_size);
    if (log && cuabi_program_get_log(prog, log, &log_size) == CUABI_SUCCESS)
      fprintf(stderr, "compile failed:\n%s\n", log);
    free(log);
    exit(1);
  }
  char* image = NULL;
  if (want_cubin) {
    CHECK(cuabi_program_get_cubin(prog, NULL, size));
    image = malloc(*size);
    CHECK(cuabi_program_get_cubin(prog, image, size));
  } else {
    CHECK(cuabi_program_get_ptx(prog, NULL, size));
    image = malloc(*size);
    CHECK(cuabi_program_get_ptx(prog, image, size));
  }
  cuabi_program_release(prog);
  return image;
}

int main(void) {
  int32_t count = 0;
  cuabi_status st = cuabi_device_get_count(&count);
  if (st != CUABI_SUCCESS || count == 0) {
    size_t size = 0;
    char* ptx = compile("--gpu-architecture=compute_75", 0, &size);
    printf("compiled saxpy with NVRTC: %zu bytes of PTX\n", size);
    free(ptx);
    if (st != CUABI_SUCCESS)
      fprintf(stderr, "No CUDA device found: %s\n", cuabi_last_error_message());
    else
      fprintf(stderr, "No CUDA device found: the driver reports 0 devices.\n");
    return 2;
  }

  /* Device 0 and its compute capability: compile CUBIN for exactly it. */
  cuabi_device device;
  CHECK(cuabi_device_get(0, &device));
  int32_t major = 0, minor = 0;
  CHECK(cuabi_device_get_compute_capability(device, &major, &minor));
  char name[256];
  size_t name_size = sizeof(name);
  CHECK(cuabi_device_get_name(device, name, &name_size));
  char arch[64];
  snprintf(arch, sizeof(arch), "--gpu-architecture=sm_%d%d", major, minor);
  size_t image_size = 0;
  char* image = compile(arch, 1, &image_size);

  cuabi_module module;
  CHECK(cuabi_module_load_data(device, image, image_size, &module));
  free(image);
  cuabi_function kernel;
  CHECK(cuabi_module_get_function(module, "saxpy", &kernel));

  /* Host data. */
  const size_t n = (size_t)NUM_THREADS * NUM_BLOCKS;
  const size_t buffer_size = n * sizeof(float);
  float a = 2.0f;
  float* hX = malloc(buffer_size);
  float* hY = malloc(buffer_size);
  float* hOut = malloc(buffer_size);
  if (!hX || !hY || !hOut) return 1;
  srand(1234);
  for (size_t i = 0; i < n; ++i) {
    hX[i] = (float)rand() / (float)RAND_MAX;
    hY[i] = (float)rand() / (float)RAND_MAX;
    hOut[i] = 0.0f;
  }

  /* Device buffers, a stream, and the copies in. */
  cuabi_buffer dX, dY, dOut;
  CHECK(cuabi_buffer_alloc(device, buffer_size, &dX));
  CHECK(cuabi_buffer_alloc(device, buffer_size, &dY));
  CHECK(cuabi_buffer_alloc(device, buffer_size, &dOut));
  cuabi_stream stream;
  CHECK(cuabi_stream_create(device, 0, 0, &stream));
  cuabi_event start, stop;
  CHECK(cuabi_event_create(device, 0, &start));
  CHECK(cuabi_event_create(device, 0, &stop));
  CHECK(cuabi_buffer_copy_from_host_async(dX, 0, hX, buffer_size, stream));
  CHECK(cuabi_buffer_copy_from_host_async(dY, 0, hY, buffer_size, stream));

  /* The kernel parameter array: one pointer to each argument's value. */
  uint64_t pX, pY, pOut;
  CHECK(cuabi_buffer_get_pointer(dX, &pX));
  CHECK(cuabi_buffer_get_pointer(dY, &pY));
  CHECK(cuabi_buffer_get_pointer(dOut, &pOut));
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.grid_x = NUM_BLOCKS;
  config.block_x = NUM_THREADS;

  /* The overview passes n as a 4-byte uint32 to the size_t parameter; cuabi
   * refuses that instead of running the kernel with a garbage n. */
  uint32_t n32 = (uint32_t)n;
  void* bad_args[] = {&a, &pX, &pY, &pOut, &n32};
  size_t bad_sizes[] = {sizeof(a), sizeof(pX), sizeof(pY), sizeof(pOut), sizeof(n32)};
  st = cuabi_function_launch_sized(kernel, &config, stream, bad_args, bad_sizes, 5);
  if (st != CUABI_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "a 4-byte n for a size_t parameter was not refused (%s)\n",
            cuabi_status_get_name(st));
    return 1;
  }
  printf("refused as it should be: %s\n", cuabi_last_error_message());

  void* args[] = {&a, &pX, &pY, &pOut, (void*)&n};
  size_t sizes[] = {sizeof(a), sizeof(pX), sizeof(pY), sizeof(pOut), sizeof(n)};
  CHECK(cuabi_event_record(start, stream));
  CHECK(cuabi_function_launch_sized(kernel, &config, stream, args, sizes, 5));
  CHECK(cuabi_event_record(stop, stream));
  CHECK(cuabi_buffer_copy_to_host_async(dOut, 0, hOut, buffer_size, stream));
  CHECK(cuabi_stream_synchronize(stream));
  float ms = 0;
  CHECK(cuabi_event_get_elapsed_ms(start, stop, &ms));

  /* Verify against the host. */
  size_t bad = 0;
  double max_error = 0;
  for (size_t i = 0; i < n; ++i) {
    double want = (double)a * hX[i] + hY[i];
    double err = fabs(hOut[i] - want);
    if (err > max_error) max_error = err;
    if (err > 1e-5 * (1.0 + fabs(want))) ++bad;
  }
  printf("device: %s (sm_%d%d)\n", name, major, minor);
  printf("saxpy: n = %zu, %u blocks x %u threads, kernel time %.3f ms\n", n, NUM_BLOCKS,
         NUM_THREADS, ms);
  printf("check: %s (max abs error %.3g, %zu mismatches)\n", bad ? "FAILED" : "OK", max_error,
         bad);

  /* Free everything (in any order: cuabi keeps dependencies alive). */
  cuabi_event_release(start);
  cuabi_event_release(stop);
  cuabi_stream_release(stream);
  cuabi_buffer_release(dX);
  cuabi_buffer_release(dY);
  cuabi_buffer_release(dOut);
  cuabi_function_release(kernel);
  cuabi_module_release(module);
  cuabi_device_release(device);
  free(hX);
  free(hY);
  free(hOut);
  return bad ? 1 : 0;
}
