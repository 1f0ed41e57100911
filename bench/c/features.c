/*
 * The launch features side by side, through cuabi's C ABI:
 *
 *   graph   replaying a captured SAXPY with a new `a` each time: the kernel
 *           node's arguments set in the instantiated graph, then a launch,
 *           against capturing, instantiating and launching a new graph
 *   pdl     a producer/consumer kernel pair on one stream: the consumer
 *           launched with programmatic dependent launch (its prologue
 *           overlaps the producer's tail), against a plain launch
 *
 * Each figure alternates the two ways in rounds and prints the median time
 * per iteration of each, in microseconds, and their ratio, as a table and
 * as JSON lines (`--json`). Every result is checked. Exit 2 without a
 * device, 1 on any failure.
 *
 *   bench_features [--rounds N] [--iters N] [--json]
 */
#define _POSIX_C_SOURCE 200809L
#include <cuabi/cuabi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failed(cuabi_status st, const char* call, int line) {
  fprintf(stderr, "bench_features:%d: %s: %s: %s\n", line, call, cuabi_status_get_name(st),
          cuabi_last_error_message());
  return 1;
}
#define CHECK(call)                                                  \
  do {                                                               \
    cuabi_status st_ = (call);                                       \
    if (st_ != CUABI_SUCCESS) return failed(st_, #call, __LINE__);   \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char* kSource =
    "extern \"C\" __global__ void saxpy(float a, const float* x, const float* y, float* out,\n"
    "                                   unsigned long long n) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = a * x[i] + y[i];\n"
    "}\n"
    "// The producer lets a dependent launch start at once (the consumer's\n"
    "// griddepcontrol.wait still waits for all of it), then computes.\n"
    "extern \"C\" __global__ void produce(float* data, unsigned long long n, int work) {\n"
    "  asm volatile(\"griddepcontrol.launch_dependents;\");\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  float v = (float)i;\n"
    "  for (int k = 0; k < work; ++k) v = v * 0.999f + 1.0f;\n"
    "  if (i < n) data[i] = v;\n"
    "}\n"
    "// The consumer does work of its own first, then waits for the producer's\n"
    "// memory and reads it.\n"
    "extern \"C\" __global__ void consume(const float* data, float* out, unsigned long long n,\n"
    "                                     int work) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  float w = 1.0f;\n"
    "  for (int k = 0; k < work; ++k) w = w * 0.999f + 0.5f;\n"
    "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
    "  if (i < n) out[i] = data[i] + w;\n"
    "}\n";

int main(int argc, char** argv) {
  int rounds = 15, iters = 50, json = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json")) json = 1;
    else {
      fprintf(stderr, "usage: bench_features [--rounds N] [--iters N] [--json]\n");
      return 2;
    }
  }
  int32_t count = 0;
  if (cuabi_device_get_count(&count) != CUABI_SUCCESS || count == 0) {
    fprintf(stderr, "bench_features: no CUDA device (%s)\n", cuabi_last_error_message());
    return 2;
  }
  cuabi_device dev;
  CHECK(cuabi_device_get(0, &dev));
  cuabi_compile_desc desc;
  CHECK(cuabi_compile_desc_init(&desc, sizeof desc));
  desc.source = kSource;
  cuabi_module mod;
  CHECK(cuabi_module_compile(dev, &desc, &mod));
  cuabi_function saxpy, produce, consume;
  CHECK(cuabi_module_get_function(mod, "saxpy", &saxpy));
  CHECK(cuabi_module_get_function(mod, "produce", &produce));
  CHECK(cuabi_module_get_function(mod, "consume", &consume));
  cuabi_stream stream;
  CHECK(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &stream));

  const uint64_t n = 1u << 20;
  const size_t bytes = n * sizeof(float);
  float* hx = malloc(bytes);
  float* hy = malloc(bytes);
  float* ho = malloc(bytes);
  if (!hx || !hy || !ho) return 1;
  for (uint64_t i = 0; i < n; ++i) {
    hx[i] = (float)(i % 1000) * 0.5f;
    hy[i] = (float)(i % 7);
  }
  cuabi_buffer bx, by, bo;
  CHECK(cuabi_buffer_alloc(dev, bytes, &bx));
  CHECK(cuabi_buffer_alloc(dev, bytes, &by));
  CHECK(cuabi_buffer_alloc(dev, bytes, &bo));
  CHECK(cuabi_buffer_copy_from_host(bx, 0, hx, bytes));
  CHECK(cuabi_buffer_copy_from_host(by, 0, hy, bytes));
  uint64_t px, py, po;
  CHECK(cuabi_buffer_get_pointer(bx, &px));
  CHECK(cuabi_buffer_get_pointer(by, &py));
  CHECK(cuabi_buffer_get_pointer(bo, &po));

  cuabi_launch_config cfg;
  CHECK(cuabi_launch_config_init(&cfg, sizeof cfg));
  cfg.block_x = 256;
  cfg.grid_x = (uint32_t)((n + 255) / 256);

  /* The packed block: float a at 0, three pointers from 8, n at 32. */
  unsigned char block[40];
  float a = 0.0f;
  memset(block, 0, sizeof block);
  memcpy(block + 8, &px, 8);
  memcpy(block + 16, &py, 8);
  memcpy(block + 24, &po, 8);
  memcpy(block + 32, &n, 8);
  size_t args_size = 0;
  CHECK(cuabi_function_get_args_size(saxpy, &args_size));
  if (args_size != sizeof block) {
    fprintf(stderr, "bench_features: saxpy takes %zu bytes of arguments, not 40\n", args_size);
    return 1;
  }

  /* --- graph: update in place against capture + instantiate ------------- */
  cuabi_graph graph;
  cuabi_graph_exec exec;
  CHECK(cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL));
  CHECK(cuabi_function_launch_packed(saxpy, &cfg, stream, block, sizeof block));
  CHECK(cuabi_stream_end_capture(stream, &graph));
  CHECK(cuabi_graph_instantiate(graph, &exec));
  CHECK(cuabi_graph_exec_upload(exec, stream));
  double* upd = calloc((size_t)rounds, sizeof(double));
  double* cap = calloc((size_t)rounds, sizeof(double));
  if (!upd || !cap) return 1;
  for (int r = 0; r < rounds; ++r) {
    double t0 = now_us();
    for (int k = 0; k < iters; ++k) {
      a = (float)(r * iters + k) * 0.25f;
      memcpy(block, &a, 4);
      CHECK(cuabi_graph_exec_set_kernel_node_args(exec, 0, saxpy, block, sizeof block));
      CHECK(cuabi_graph_exec_launch(exec, stream));
      CHECK(cuabi_stream_synchronize(stream));
    }
    upd[r] = (now_us() - t0) / iters;
    t0 = now_us();
    for (int k = 0; k < iters; ++k) {
      a = (float)(r * iters + k) * 0.5f;
      memcpy(block, &a, 4);
      cuabi_graph g;
      cuabi_graph_exec e;
      CHECK(cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL));
      CHECK(cuabi_function_launch_packed(saxpy, &cfg, stream, block, sizeof block));
      CHECK(cuabi_stream_end_capture(stream, &g));
      CHECK(cuabi_graph_instantiate(g, &e));
      CHECK(cuabi_graph_exec_launch(e, stream));
      CHECK(cuabi_stream_synchronize(stream));
      cuabi_graph_exec_release(e);
      cuabi_graph_release(g);
    }
    cap[r] = (now_us() - t0) / iters;
  }
  /* The last launch wrote a * x + y with the last `a`. */
  CHECK(cuabi_buffer_copy_to_host(bo, 0, ho, bytes));
  for (uint64_t i = 0; i < n; i += 4099) {
    float want = a * hx[i] + hy[i];
    if (fabsf(ho[i] - want) > 1e-3f * fabsf(want) + 1e-3f) {
      fprintf(stderr, "bench_features: saxpy out[%llu] = %g, expected %g\n",
              (unsigned long long)i, ho[i], want);
      return 1;
    }
  }
  /* And an updated graph computes with its own `a`. */
  a = 3.0f;
  memcpy(block, &a, 4);
  CHECK(cuabi_graph_exec_set_kernel_node_args(exec, 0, saxpy, block, sizeof block));
  CHECK(cuabi_graph_exec_launch(exec, stream));
  CHECK(cuabi_stream_synchronize(stream));
  CHECK(cuabi_buffer_copy_to_host(bo, 0, ho, bytes));
  for (uint64_t i = 0; i < n; i += 4099) {
    float want = 3.0f * hx[i] + hy[i];
    if (fabsf(ho[i] - want) > 1e-3f * fabsf(want) + 1e-3f) {
      fprintf(stderr, "bench_features: updated graph out[%llu] = %g, expected %g\n",
              (unsigned long long)i, ho[i], want);
      return 1;
    }
  }
  double m_upd = median(upd, rounds), m_cap = median(cap, rounds);

  /* --- pdl: a producer/consumer pair, with and without PDL --------------- */
  /* Few blocks, so the consumer's blocks find room beside the producer's. */
  const int work = 4000;
  const uint64_t pn = 64 * 128;
  cuabi_launch_config pcfg = cfg;
  pcfg.block_x = 128;
  pcfg.grid_x = 64;
  cuabi_launch_config ccfg = pcfg, plain_cfg = pcfg;
  ccfg.flags = CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION;
  void* pargs[] = {&po, (void*)&pn, (void*)&work};
  void* cargs_plain[] = {&po, &px, (void*)&pn, (void*)&work};
  double* plain = calloc((size_t)rounds, sizeof(double));
  double* pdl = calloc((size_t)rounds, sizeof(double));
  if (!plain || !pdl) return 1;
  /* Warm up both ways once. */
  for (int w = 0; w < 2; ++w) {
    CHECK(cuabi_function_launch(produce, &pcfg, stream, pargs, 3));
    CHECK(cuabi_function_launch(consume, w ? &ccfg : &plain_cfg, stream, cargs_plain, 4));
  }
  CHECK(cuabi_stream_synchronize(stream));
  for (int r = 0; r < rounds; ++r) {
    for (int way = 0; way < 2; ++way) {
      const cuabi_launch_config* c2 = way ? &ccfg : &plain_cfg;
      double t0 = now_us();
      for (int k = 0; k < iters; ++k) {
        CHECK(cuabi_function_launch(produce, &pcfg, stream, pargs, 3));
        CHECK(cuabi_function_launch(consume, c2, stream, cargs_plain, 4));
      }
      CHECK(cuabi_stream_synchronize(stream));
      (way ? pdl : plain)[r] = (now_us() - t0) / iters;
    }
  }
  /* The consumer read what the producer wrote: out = produce(i) + w. */
  CHECK(cuabi_buffer_copy_to_host(bx, 0, ho, bytes));
  {
    float w = 1.0f;
    for (int k = 0; k < work; ++k) w = w * 0.999f + 0.5f;
    for (uint64_t i = 0; i < pn; i += 97) {
      float v = (float)i;
      for (int k = 0; k < work; ++k) v = v * 0.999f + 1.0f;
      float want = v + w;
      if (fabsf(ho[i] - want) > 1e-3f * fabsf(want) + 1e-2f) {
        fprintf(stderr, "bench_features: consumer out[%llu] = %g, expected %g\n",
                (unsigned long long)i, ho[i], want);
        return 1;
      }
    }
  }
  double m_plain = median(plain, rounds), m_pdl = median(pdl, rounds);

  printf("| figure | way | us per iteration (median of %d rounds of %d) |\n", rounds, iters);
  printf("|---|---|---|\n");
  printf("| graph | set kernel node args + launch + sync | %.2f |\n", m_upd);
  printf("| graph | capture + instantiate + launch + sync | %.2f |\n", m_cap);
  printf("| pdl | producer + consumer, plain | %.2f |\n", m_plain);
  printf("| pdl | producer + consumer, programmatic dependent launch | %.2f |\n", m_pdl);
  printf("graph update: %.2fx faster than capture + instantiate\n", m_cap / m_upd);
  printf("pdl pair: %.2fx the plain pair's time\n", m_pdl / m_plain);
  if (json) {
    printf("{\"figure\":\"graph_update\",\"update_us\":%.3f,\"recapture_us\":%.3f}\n", m_upd,
           m_cap);
    printf("{\"figure\":\"pdl_pair\",\"plain_us\":%.3f,\"pdl_us\":%.3f}\n", m_plain, m_pdl);
  }
  cuabi_graph_exec_release(exec);
  cuabi_graph_release(graph);
  cuabi_buffer_release(bx);
  cuabi_buffer_release(by);
  cuabi_buffer_release(bo);
  cuabi_stream_release(stream);
  cuabi_function_release(saxpy);
  cuabi_function_release(produce);
  cuabi_function_release(consume);
  cuabi_module_release(mod);
  cuabi_device_release(dev);
  free(hx);
  free(hy);
  free(ho);
  free(upd);
  free(cap);
  free(plain);
  free(pdl);
  return 0;
}
