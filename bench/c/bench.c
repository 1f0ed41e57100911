/*
 * The C benchmarks: one measurement code over two backends (backend.h), so
 * the raw driver and cuabi's C ABI are timed by exactly the same loops.
 *
 *   bench_<impl> gpu   [options]   launch overhead, graph replay, copies, compilation
 *   bench_<impl> saxpy [options]   one SAXPY application run (first API call to
 *                                  verified result) and its kernel time
 *   bench_<impl> cpu   [options]   what needs no GPU: NVRTC compile, handle validation
 *   bench_<impl> paired [options]  launches and copies alternating with the raw C
 *                                  reference ($CUABI_BENCH_REFERENCE) in this
 *                                  process (bench/README.md, "Paired figures")
 *
 * Options: --bursts N (launch bursts, default 100), --burst-size N (200),
 * --warmup N (bursts or repetitions before timing, 5), --reps N (timed
 * repetitions of copies and compiles, 30), --kernel-reps N (SAXPY kernel
 * timings after the verified run, 30), --arch sm_XY (CPU mode's target,
 * sm_90), --only NAME[,NAME...] (gpu mode: launch, graph, copy, compile).
 *
 * Each result is one JSON object on a line of stdout; progress and failures
 * go to stderr. Time: clock_gettime(CLOCK_MONOTONIC) around the measured
 * region; synchronisation between launch bursts is outside it.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>

#include "backend.h"

/* ------------------------------------------------------------------------- */
/* Kernels                                                                    */
/* ------------------------------------------------------------------------- */

static const char* const saxpy_source =
    "extern \"C\" __global__\n"
    "void saxpy(float a, float *x, float *y, float *out, size_t n)\n"
    "{\n"
    " size_t tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    " if (tid < n) {\n"
    "   out[tid] = a * x[tid] + y[tid];\n"
    " }\n"
    "}\n";

/* Empty kernels for launch overhead: 2 and 16 arguments of mixed sizes. */
static const char* const empty_source =
    "extern \"C\" __global__ void empty2(float a, float *p) {}\n"
    "extern \"C\" __global__ void empty16(float a0, float *p1, int i2, size_t n3,\n"
    "    float a4, float *p5, int i6, size_t n7, float a8, float *p9, int i10, size_t n11,\n"
    "    float a12, float *p13, int i14, size_t n15) {}\n";

#define SAXPY_THREADS 512u
#define SAXPY_BLOCKS 32768u
#define COPY_BYTES ((size_t)64 << 20)
#define GRAPH_KERNELS 1000

/* ------------------------------------------------------------------------- */
/* Settings, time, statistics, output                                         */
/* ------------------------------------------------------------------------- */

static struct {
  int bursts, burst_size, warmup, reps, kernel_reps;
  const char* arch;
  const char* only;
  int pairs, copy_pairs;
} opt = {100, 200, 5, 30, 30, "sm_90", NULL, 100, 30};

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

typedef struct {
  double median, p10, p90, min, max;
  int n;
} stats;

static stats summarize(double* v, int n) {
  stats s = {0, 0, 0, 0, 0, n};
  if (n <= 0) return s;
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  s.median = (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.p10 = v[(int)floor(0.1 * (n - 1) + 0.5)];
  s.p90 = v[(int)floor(0.9 * (n - 1) + 0.5)];
  s.min = v[0];
  s.max = v[n - 1];
  return s;
}

static void json_string(const char* s) {
  putchar('"');
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c == '\n')
      fputs("\\n", stdout);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void emit_head(const char* bench) {
  fputs("{\"impl\":", stdout);
  json_string(bk_impl());
  fputs(",\"bench\":", stdout);
  json_string(bench);
}

/* One figure from samples: value is the median; `extra` is a JSON fragment
 * (",\"k\":v") or NULL. */
static void emit_stats(const char* bench, const char* unit, double* v, int n, const char* extra) {
  stats s = summarize(v, n);
  emit_head(bench);
  printf(
      ",\"unit\":\"%s\",\"value\":%.6g,\"median\":%.6g,\"p10\":%.6g,\"p90\":%.6g,"
      "\"min\":%.6g,\"max\":%.6g,\"n\":%d%s}\n",
      unit, s.median, s.median, s.p10, s.p90, s.min, s.max, s.n, extra ? extra : "");
  fflush(stdout);
}

static void emit_value(const char* bench, const char* unit, double value, const char* extra) {
  emit_head(bench);
  printf(",\"unit\":\"%s\",\"value\":%.6g,\"n\":1%s}\n", unit, value, extra ? extra : "");
  fflush(stdout);
}

static void emit_error(const char* bench, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  emit_head(bench);
  fputs(",\"error\":", stdout);
  json_string(msg);
  puts("}");
  fflush(stdout);
  fprintf(stderr, "[%s] %s: %s\n", bk_impl(), bench, msg);
}

static void emit_skip(const char* bench, const char* why) {
  emit_head(bench);
  fputs(",\"skipped\":", stdout);
  json_string(why);
  puts("}");
  fflush(stdout);
}

static int wanted(const char* name) {
  if (!opt.only || !*opt.only) return 1;
  size_t len = strlen(name);
  for (const char* p = opt.only; *p;) {
    const char* end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, name, n) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* xorshift32 in [0, 1): the same cheap generator in every language. */
static void fill_random(float* v, size_t n, uint32_t* state) {
  uint32_t s = *state;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    v[i] = (float)(s >> 8) * (1.0f / 16777216.0f);
  }
  *state = s;
}

/* ------------------------------------------------------------------------- */
/* GPU figures                                                                */
/* ------------------------------------------------------------------------- */

/* The 16 arguments of empty16, (float, pointer, int, size_t) x 4, as
 * cuLaunchKernel takes them; `dptr` must outlive the launches. */
typedef struct {
  float f[4];
  int32_t i[4];
  size_t n[4];
  void* params[16];
  size_t sizes[16];
} args16;

static void args16_init(args16* a, uint64_t* dptr) {
  for (int k = 0; k < 4; ++k) {
    a->f[k] = 1.0f + (float)k;
    a->i[k] = 1 + k;
    a->n[k] = 10 * (size_t)(k + 1);
    a->params[4 * k + 0] = &a->f[k];
    a->sizes[4 * k + 0] = sizeof(float);
    a->params[4 * k + 1] = dptr;
    a->sizes[4 * k + 1] = sizeof(*dptr);
    a->params[4 * k + 2] = &a->i[k];
    a->sizes[4 * k + 2] = sizeof(int32_t);
    a->params[4 * k + 3] = &a->n[k];
    a->sizes[4 * k + 3] = sizeof(size_t);
  }
}

/* Median host time per launch over bursts of `burst_size` launches, with
 * the stream synchronised between bursts outside the timed region. */
static void bench_launch_one(const char* bench, bk_launch* la) {
  double* samples = malloc(sizeof(double) * (size_t)opt.bursts);
  if (!samples) return;
  for (int v = 0; v < bk_launch_variants(); ++v) {
    char name[128];
    snprintf(name, sizeof(name), "%s%s", bench, bk_launch_variant_name(v));
    int failed = 0;
    for (int b = 0; b < opt.warmup && !failed; ++b) {
      for (int i = 0; i < opt.burst_size; ++i)
        if (bk_launch_submit(v, la)) {
          failed = 1;
          break;
        }
      if (!failed && bk_stream_sync(la->stream)) failed = 1;
    }
    for (int b = 0; b < opt.bursts && !failed; ++b) {
      double t0 = now_ns();
      for (int i = 0; i < opt.burst_size; ++i) failed |= bk_launch_submit(v, la);
      double t1 = now_ns();
      if (bk_stream_sync(la->stream)) failed = 1;
      samples[b] = (t1 - t0) / opt.burst_size / 1000.0;
    }
    if (failed) {
      emit_error(name, "%s", bk_error());
      continue;
    }
    char extra[128];
    snprintf(extra, sizeof(extra), ",\"burst\":%d,\"args\":%zu", opt.burst_size, la->num_params);
    emit_stats(name, "us", samples, opt.bursts, extra);
  }
  free(samples);
}

static void bench_launch(void* module, void* stream, uint64_t dptr) {
  void* f2 = NULL;
  void* f16 = NULL;
  if (bk_module_function(module, "empty2", &f2)) {
    emit_error("launch_2args", "%s", bk_error());
  } else {
    float a = 2.0f;
    void* params[] = {&a, &dptr};
    size_t sizes[] = {sizeof(a), sizeof(dptr)};
    bk_launch la = {f2, 1, 1, stream, params, sizes, 2, NULL};
    if (bk_launch_prepare(&la))
      emit_error("launch_2args", "%s", bk_error());
    else
      bench_launch_one("launch_2args", &la);
    bk_launch_release(&la);
  }
  if (bk_module_function(module, "empty16", &f16)) {
    emit_error("launch_16args", "%s", bk_error());
    return;
  }
  args16 a;
  args16_init(&a, &dptr);
  bk_launch la = {f16, 1, 1, stream, a.params, a.sizes, 16, NULL};
  if (bk_launch_prepare(&la))
    emit_error("launch_16args", "%s", bk_error());
  else
    bench_launch_one("launch_16args", &la);
  bk_launch_release(&la);
}

/* Per-kernel cost of replaying a captured graph of GRAPH_KERNELS launches:
 * (graph launch + synchronize) / GRAPH_KERNELS, median over repetitions. */
static void bench_graph(void* module, void* stream, uint64_t dptr) {
  void* f2 = NULL;
  if (bk_module_function(module, "empty2", &f2)) {
    emit_error("graph_replay", "%s", bk_error());
    return;
  }
  float a = 2.0f;
  void* params[] = {&a, &dptr};
  size_t sizes[] = {sizeof(a), sizeof(dptr)};
  bk_launch la = {f2, 1, 1, stream, params, sizes, 2, NULL};
  void* exec = NULL;
  if (bk_launch_prepare(&la) || bk_capture_begin(stream)) {
    emit_error("graph_replay", "%s", bk_error());
    bk_launch_release(&la);
    return;
  }
  int failed = 0;
  for (int k = 0; k < GRAPH_KERNELS; ++k) failed |= bk_launch_submit(0, &la);
  char captured_error[1024] = "";
  if (failed) snprintf(captured_error, sizeof(captured_error), "%s", bk_error());
  if (bk_capture_end(stream, &exec) || failed) {
    emit_error("graph_replay", "%s", failed ? captured_error : bk_error());
    bk_launch_release(&la);
    return;
  }
  bk_launch_release(&la);
  int reps = opt.reps < 50 ? 50 : opt.reps;
  double* per_kernel = malloc(sizeof(double) * (size_t)reps);
  double* host = malloc(sizeof(double) * (size_t)reps);
  for (int w = 0; w < opt.warmup && !failed; ++w)
    failed |= bk_graph_launch(exec, stream) || bk_stream_sync(stream);
  for (int r = 0; r < reps && !failed; ++r) {
    double t0 = now_ns();
    failed |= bk_graph_launch(exec, stream);
    double t1 = now_ns();
    failed |= bk_stream_sync(stream);
    double t2 = now_ns();
    per_kernel[r] = (t2 - t0) / GRAPH_KERNELS / 1000.0;
    host[r] = (t1 - t0) / 1000.0;
  }
  if (failed) {
    emit_error("graph_replay", "%s", bk_error());
  } else {
    char extra[64];
    snprintf(extra, sizeof(extra), ",\"kernels\":%d", GRAPH_KERNELS);
    emit_stats("graph_replay", "us", per_kernel, reps, extra);
    emit_stats("graph_launch_call", "us", host, reps, extra);
  }
  free(per_kernel);
  free(host);
  bk_graph_destroy(exec);
}

/* One copy direction and host memory kind: median time of `reps` copies. */
static void bench_copy_one(const char* bench, void* buffer, void* host, int to_device) {
  double* t = malloc(sizeof(double) * (size_t)opt.reps);
  int failed = 0;
  for (int w = 0; w < opt.warmup && !failed; ++w)
    failed = to_device ? bk_copy_to_device(buffer, host, COPY_BYTES)
                       : bk_copy_to_host(host, buffer, COPY_BYTES);
  for (int r = 0; r < opt.reps && !failed; ++r) {
    double t0 = now_ns();
    failed = to_device ? bk_copy_to_device(buffer, host, COPY_BYTES)
                       : bk_copy_to_host(host, buffer, COPY_BYTES);
    t[r] = (now_ns() - t0) / 1e6;
  }
  if (failed) {
    emit_error(bench, "%s", bk_error());
  } else {
    stats s = summarize(t, opt.reps);
    char extra[160];
    snprintf(extra, sizeof(extra), ",\"median_ms\":%.6g,\"bytes\":%zu,\"n\":%d", s.median,
             (size_t)COPY_BYTES, s.n);
    /* GB/s = 1e9 bytes per second, from the median time. */
    emit_head(bench);
    printf(",\"unit\":\"GB/s\",\"value\":%.6g,\"best\":%.6g%s}\n", COPY_BYTES / (s.median * 1e6),
           COPY_BYTES / (s.min * 1e6), extra);
    fflush(stdout);
  }
  free(t);
}

static void bench_copies(void) {
  void* buffer = NULL;
  uint64_t dptr = 0;
  if (bk_alloc(COPY_BYTES, &buffer, &dptr)) {
    emit_error("copy_h2d_pageable", "%s", bk_error());
    return;
  }
  char* pageable = malloc(COPY_BYTES);
  if (pageable) {
    memset(pageable, 1, COPY_BYTES);
    bench_copy_one("copy_h2d_pageable", buffer, pageable, 1);
    bench_copy_one("copy_d2h_pageable", buffer, pageable, 0);
    free(pageable);
  }
  void* host = NULL;
  void* pinned = NULL;
  if (bk_host_alloc(COPY_BYTES, &host, &pinned)) {
    emit_error("copy_h2d_pinned", "%s", bk_error());
  } else {
    memset(pinned, 1, COPY_BYTES);
    bench_copy_one("copy_h2d_pinned", buffer, pinned, 1);
    bench_copy_one("copy_d2h_pinned", buffer, pinned, 0);
    bk_host_free(host);
  }
  bk_free(buffer);
}

/* NVRTC compile of the SAXPY source to `arch`: median of opt.reps/3 runs. */
static void bench_nvrtc(const char* arch) {
  char arch_option[64];
  snprintf(arch_option, sizeof(arch_option), "--gpu-architecture=%s", arch);
  const char* options[] = {"--fmad=false", arch_option};
  int reps = opt.reps / 3 < 5 ? 5 : opt.reps / 3;
  double* t = malloc(sizeof(double) * (size_t)reps);
  int failed = 0;
  for (int r = -1; r < reps && !failed; ++r) { /* r = -1: warm-up (NVRTC's first load) */
    void* image = NULL;
    size_t size = 0;
    double t0 = now_ns();
    failed = bk_compile(saxpy_source, "saxpy.cu", options, 2, 1, &image, &size);
    if (r >= 0) t[r] = (now_ns() - t0) / 1e6;
    free(image);
  }
  if (failed) {
    emit_error("compile_nvrtc", "%s", bk_error());
  } else {
    char extra[96];
    snprintf(extra, sizeof(extra), ",\"arch\":\"%s\"", arch);
    emit_stats("compile_nvrtc", "ms", t, reps, extra);
  }
  free(t);
}

static void bench_compile(const char* arch) {
  bench_nvrtc(arch);

  /* Cache hit: the one call from source to module, served from the cache. */
  const char* options[] = {"--fmad=false"};
  void* module = NULL;
  int hit = 0;
  int st = bk_module_compile_cached(saxpy_source, options, 1, &module, &hit);
  if (st == BK_UNSUPPORTED) {
    emit_skip("compile_cache_hit", "no compile cache in this implementation");
  } else if (st) {
    emit_error("compile_cache_hit", "%s", bk_error());
  } else {
    bk_module_unload(module);
    int reps = opt.reps < 20 ? 20 : opt.reps;
    double* t = malloc(sizeof(double) * (size_t)reps);
    int failed = 0, misses = 0;
    for (int r = 0; r < reps && !failed; ++r) {
      double t0 = now_ns();
      failed = bk_module_compile_cached(saxpy_source, options, 1, &module, &hit);
      t[r] = (now_ns() - t0) / 1e6;
      if (!failed) {
        misses += !hit;
        bk_module_unload(module);
      }
    }
    if (failed)
      emit_error("compile_cache_hit", "%s", bk_error());
    else if (misses)
      emit_error("compile_cache_hit",
                 "%d of %d compiles missed a warm cache (is the cache "
                 "folder writable? CUABI_CACHE_DIR)",
                 misses, reps);
    else
      emit_stats("compile_cache_hit", "ms", t, reps, NULL);
    free(t);
  }

  /* Module load: CUBIN (no JIT) against PTX (the driver JITs it). */
  for (int cubin = 1; cubin >= 0; --cubin) {
    const char* bench = cubin ? "load_cubin" : "load_ptx";
    char arch_option[64];
    snprintf(arch_option, sizeof(arch_option), "--gpu-architecture=%s%s",
             cubin ? "sm_" : "compute_", arch + 3);
    const char* copts[] = {"--fmad=false", arch_option};
    void* image = NULL;
    size_t size = 0;
    if (bk_compile(saxpy_source, "saxpy.cu", copts, 2, cubin, &image, &size)) {
      emit_error(bench, "%s", bk_error());
      continue;
    }
    int reps = opt.reps / 3 < 10 ? 10 : opt.reps / 3;
    double* t = malloc(sizeof(double) * (size_t)reps);
    int failed = 0;
    for (int r = -1; r < reps && !failed; ++r) {
      double t0 = now_ns();
      failed = bk_module_load(image, size, &module);
      if (r >= 0) t[r] = (now_ns() - t0) / 1e6;
      if (!failed) bk_module_unload(module);
    }
    if (failed)
      emit_error(bench, "%s", bk_error());
    else
      emit_stats(bench, "ms", t, reps, NULL);
    free(t);
    free(image);
  }
}

static int run_gpu(void) {
  char name[256] = "";
  int major = 0, minor = 0;
  if (bk_init(name, sizeof(name), &major, &minor)) {
    emit_error("init", "%s", bk_error());
    return 1;
  }
  int driver = 0, nv_major = 0, nv_minor = 0;
  bk_versions(&driver, &nv_major, &nv_minor);
  emit_head("info");
  fputs(",\"device\":", stdout);
  json_string(name);
  printf(",\"cc\":\"%d.%d\",\"driver\":%d,\"nvrtc\":\"%d.%d\"}\n", major, minor, driver, nv_major,
         nv_minor);
  fflush(stdout);
  char arch[32];
  snprintf(arch, sizeof(arch), "sm_%d%d", major, minor);

  if (wanted("launch") || wanted("graph")) {
    char arch_option[64];
    snprintf(arch_option, sizeof(arch_option), "--gpu-architecture=%s", arch);
    const char* options[] = {arch_option};
    void* image = NULL;
    size_t size = 0;
    void* module = NULL;
    void* stream = NULL;
    void* buffer = NULL;
    uint64_t dptr = 0;
    if (bk_compile(empty_source, "empty.cu", options, 1, 1, &image, &size) ||
        bk_module_load(image, size, &module) || bk_stream_create(&stream) ||
        bk_alloc(256, &buffer, &dptr)) {
      emit_error("launch_2args", "setup: %s", bk_error());
    } else {
      if (wanted("launch")) bench_launch(module, stream, dptr);
      if (wanted("graph")) bench_graph(module, stream, dptr);
    }
    free(image);
    if (buffer) bk_free(buffer);
    if (stream) bk_stream_destroy(stream);
    if (module) bk_module_unload(module);
  }
  if (wanted("copy")) bench_copies();
  if (wanted("compile")) bench_compile(arch);
  return 0;
}

/* ------------------------------------------------------------------------- */
/* Paired figures                                                             */
/* ------------------------------------------------------------------------- */

/* The reference library's entry points (bench/c/reference.c). */
static struct {
  int (*load_kernel)(uint64_t, const char*, const char*, const char*, uint64_t*);
  int64_t (*launch_burst)(uint64_t, uint64_t, void**, uint32_t);
  int64_t (*copy_to_device)(uint64_t, const void*, size_t);
  int64_t (*copy_to_host)(void*, uint64_t, size_t);
  const char* (*error)(void);
} ref;

static int load_reference(char* why, size_t why_size) {
  const char* path = getenv("CUABI_BENCH_REFERENCE");
  if (!path || !*path) {
    snprintf(why, why_size, "CUABI_BENCH_REFERENCE is not set (bench/run.sh sets it)");
    return -1;
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(why, why_size, "cannot load the reference library: %s", dlerror());
    return -1;
  }
  *(void**)&ref.load_kernel = dlsym(h, "benchref_load_kernel");
  *(void**)&ref.launch_burst = dlsym(h, "benchref_launch_burst");
  *(void**)&ref.copy_to_device = dlsym(h, "benchref_copy_to_device");
  *(void**)&ref.copy_to_host = dlsym(h, "benchref_copy_to_host");
  *(void**)&ref.error = dlsym(h, "benchref_error");
  if (!ref.load_kernel || !ref.launch_burst || !ref.copy_to_device || !ref.copy_to_host ||
      !ref.error) {
    snprintf(why, why_size, "%s lacks a benchref_* function", path);
    return -1;
  }
  return 0;
}

/* One series of a paired record: a name and one sample per round. */
typedef struct {
  char name[32];
  double* v;
} series_t;

static void emit_paired(const char* bench, series_t* s, int count, int rounds, const char* head,
                        const char* extra) {
  emit_head(bench);
  printf(",\"kind\":\"paired\",\"unit\":\"us\",\"pairs\":%d,\"headline\":\"%s\"%s,\"series\":{",
         rounds, head, extra ? extra : "");
  for (int k = 0; k < count; ++k) {
    printf("%s\"%s\":[", k ? "," : "", s[k].name);
    for (int r = 0; r < rounds; ++r) printf("%s%.5g", r ? "," : "", s[k].v[r]);
    putchar(']');
  }
  puts("}}");
  fflush(stdout);
}

/* Why the last paired sample failed. */
static char paired_why[1024];

/* Series 0 is the reference's burst; series 1.. the backend's variants. */
static int paired_sample(int k, bk_launch* la, uint64_t ref_fn, uint64_t ref_stream,
                         double* us) {
  if (bk_stream_sync(la->stream)) {
    snprintf(paired_why, sizeof(paired_why), "%s", bk_error());
    return -1;
  }
  if (k == 0) {
    int64_t ns = ref.launch_burst(ref_fn, ref_stream, la->params, (uint32_t)opt.burst_size);
    if (ns < 0) {
      snprintf(paired_why, sizeof(paired_why), "benchref_launch_burst: %s", ref.error());
      return -1;
    }
    *us = (double)ns / opt.burst_size / 1000.0;
    return 0;
  }
  int failed = 0;
  double t0 = now_ns();
  for (int i = 0; i < opt.burst_size; ++i) failed |= bk_launch_submit(k - 1, la);
  double t1 = now_ns();
  *us = (t1 - t0) / opt.burst_size / 1000.0;
  if (failed) snprintf(paired_why, sizeof(paired_why), "%s", bk_error());
  return failed ? -1 : 0;
}

static void paired_launch(const char* bench, bk_launch* la, uint64_t ref_fn, uint64_t ref_stream) {
  int count = 1 + bk_launch_variants();
  series_t s[16];
  if (count > 16) count = 16;
  int failed = 0;
  for (int k = 0; k < count; ++k) {
    const char* vn = k ? bk_launch_variant_name(k - 1) : "";
    snprintf(s[k].name, sizeof(s[k].name), "%s",
             k == 0 ? "c_ref" : (*vn == '_' ? vn + 1 : (*vn ? vn : "launch")));
    s[k].v = calloc((size_t)opt.pairs, sizeof(double));
    if (!s[k].v) failed = 1;
  }
  for (int r = -opt.warmup; r < opt.pairs && !failed; ++r) {
    int start = ((r % count) + count) % count;
    for (int j = 0; j < count && !failed; ++j) {
      int k = (start + j) % count;
      double us = 0;
      if (paired_sample(k, la, ref_fn, ref_stream, &us)) failed = 1;
      if (r >= 0) s[k].v[r] = us;
    }
  }
  if (!failed && bk_stream_sync(la->stream)) {
    failed = 1;
    snprintf(paired_why, sizeof(paired_why), "%s", bk_error());
  }
  if (failed) {
    emit_error(bench, "%s", paired_why);
  } else {
    char extra[96];
    snprintf(extra, sizeof(extra), ",\"burst\":%d,\"args\":%zu", opt.burst_size, la->num_params);
    /* The headline: the plan launch where the backend has one, else its first variant. */
    const char* head = s[1].name;
    for (int k = 1; k < count; ++k)
      if (!strcmp(s[k].name, "plan")) head = "plan";
    emit_paired(bench, s, count, opt.pairs, head, extra);
  }
  for (int k = 0; k < count; ++k) free(s[k].v);
}

/* Copies of COPY_BYTES, each direction, pageable and pinned host memory. */
static void paired_copies(void* buffer, uint64_t dptr) {
  const size_t bytes = COPY_BYTES;
  void* pageable = malloc(bytes);
  void* pinned_handle = NULL;
  void* pinned = NULL;
  if (!pageable || bk_host_alloc(bytes, &pinned_handle, &pinned)) {
    emit_error("paired_copy_to_device_pageable", "setup: %s", pageable ? bk_error() : "no memory");
    free(pageable);
    return;
  }
  memset(pageable, 1, bytes);
  memset(pinned, 2, bytes);
  static const char* const names[4] = {
      "paired_copy_to_device_pageable", "paired_copy_to_host_pageable",
      "paired_copy_to_device_pinned", "paired_copy_to_host_pinned"};
  for (int kind = 0; kind < 4; ++kind) {
    void* host = kind < 2 ? pageable : pinned;
    int to_device = kind % 2 == 0;
    series_t s[2] = {{"c_ref", calloc((size_t)opt.copy_pairs, sizeof(double))},
                     {"copy", calloc((size_t)opt.copy_pairs, sizeof(double))}};
    int failed = !s[0].v || !s[1].v;
    for (int r = -2; r < opt.copy_pairs && !failed; ++r) {
      for (int j = 0; j < 2 && !failed; ++j) {
        int k = (((r % 2) + 2) % 2 + j) % 2;
        double us;
        if (k == 0) {
          int64_t ns = to_device ? ref.copy_to_device(dptr, host, bytes)
                                 : ref.copy_to_host(host, dptr, bytes);
          if (ns < 0) {
            failed = 1;
            emit_error(names[kind], "reference: %s", ref.error());
            break;
          }
          us = (double)ns / 1000.0;
        } else {
          double t0 = now_ns();
          int rc = to_device ? bk_copy_to_device(buffer, host, bytes)
                             : bk_copy_to_host(host, buffer, bytes);
          us = (now_ns() - t0) / 1000.0;
          if (rc) {
            failed = 1;
            emit_error(names[kind], "%s", bk_error());
            break;
          }
        }
        if (r >= 0) s[k].v[r] = us;
      }
    }
    if (!failed) emit_paired(names[kind], s, 2, opt.copy_pairs, "copy", ",\"bytes\":67108864");
    free(s[0].v);
    free(s[1].v);
  }
  bk_host_free(pinned_handle);
  free(pageable);
}

static int run_paired(void) {
  char name[256] = "", why[512];
  int major = 0, minor = 0;
  if (opt.pairs < 30) {
    fprintf(stderr, "--pairs must be at least 30\n");
    return 2;
  }
  if (bk_init(name, sizeof(name), &major, &minor)) {
    emit_error("paired_launch_2args", "init: %s", bk_error());
    return 1;
  }
  if (load_reference(why, sizeof(why))) {
    emit_error("paired_launch_2args", "%s", why);
    return 1;
  }
  char arch[32], arch_option[64];
  snprintf(arch, sizeof(arch), "sm_%d%d", major, minor);
  snprintf(arch_option, sizeof(arch_option), "--gpu-architecture=%s", arch);
  const char* options[] = {arch_option};
  void *image = NULL, *module = NULL, *stream = NULL, *buffer = NULL, *f2 = NULL, *f16 = NULL;
  uint64_t dptr = 0, context = 0, cu_stream = 0, ref2 = 0, ref16 = 0;
  size_t size = 0;
  if (bk_compile(empty_source, "empty.cu", options, 1, 1, &image, &size) ||
      bk_module_load(image, size, &module) || bk_stream_create(&stream) ||
      bk_alloc(COPY_BYTES, &buffer, &dptr) || bk_module_function(module, "empty2", &f2) ||
      bk_module_function(module, "empty16", &f16) || bk_raw_context(&context) ||
      bk_raw_stream(stream, &cu_stream)) {
    emit_error("paired_launch_2args", "setup: %s", bk_error());
  } else if (ref.load_kernel(context, empty_source, "empty2", arch, &ref2) ||
             ref.load_kernel(context, empty_source, "empty16", arch, &ref16)) {
    emit_error("paired_launch_2args", "reference: %s", ref.error());
  } else {
    float a = 1.0f;
    void* params2[] = {&a, &dptr};
    size_t sizes2[] = {sizeof(float), sizeof(uint64_t)};
    bk_launch la2 = {f2, 1, 1, stream, params2, sizes2, 2, NULL};
    if (bk_launch_prepare(&la2))
      emit_error("paired_launch_2args", "%s", bk_error());
    else
      paired_launch("paired_launch_2args", &la2, ref2, cu_stream);
    bk_launch_release(&la2);

    args16 a16;
    args16_init(&a16, &dptr);
    bk_launch la16 = {f16, 1, 1, stream, a16.params, a16.sizes, 16, NULL};
    if (bk_launch_prepare(&la16))
      emit_error("paired_launch_16args", "%s", bk_error());
    else
      paired_launch("paired_launch_16args", &la16, ref16, cu_stream);
    bk_launch_release(&la16);
    paired_copies(buffer, dptr);
  }
  free(image);
  if (buffer) bk_free(buffer);
  if (stream) bk_stream_destroy(stream);
  if (module) bk_module_unload(module);
  return 0;
}

/* ------------------------------------------------------------------------- */
/* SAXPY application                                                          */
/* ------------------------------------------------------------------------- */

static int run_saxpy(void) {
  const size_t n = (size_t)SAXPY_THREADS * SAXPY_BLOCKS;
  const size_t bytes = n * sizeof(float);
  float* hx = malloc(bytes);
  float* hy = malloc(bytes);
  float* hout = malloc(bytes);
  if (!hx || !hy || !hout) {
    emit_error("saxpy_app", "out of host memory");
    return 1;
  }
  uint32_t state = 1234;
  fill_random(hx, n, &state);
  fill_random(hy, n, &state);
  memset(hout, 0, bytes);
  float a = 2.0f;

  /* The application: first API call to verified result. */
  double t0 = now_ns();
  char name[256];
  int major = 0, minor = 0, hit = 0, cached = 1;
  void *module = NULL, *function = NULL, *stream = NULL, *start = NULL, *stop = NULL;
  void *bx = NULL, *by = NULL, *bout = NULL;
  uint64_t px = 0, py = 0, pout = 0;
  const char* where = "init";
  if (bk_init(name, sizeof(name), &major, &minor)) goto fail;
  where = "compile";
  const char* options[] = {"--fmad=false"};
  int st = bk_module_compile_cached(saxpy_source, options, 1, &module, &hit);
  if (st == BK_UNSUPPORTED) { /* no cache: NVRTC every run, then load */
    cached = 0;
    char arch_option[64];
    snprintf(arch_option, sizeof(arch_option), "--gpu-architecture=sm_%d%d", major, minor);
    const char* copts[] = {"--fmad=false", arch_option};
    void* image = NULL;
    size_t size = 0;
    if (bk_compile(saxpy_source, "saxpy.cu", copts, 2, 1, &image, &size)) goto fail;
    st = bk_module_load(image, size, &module);
    free(image);
  }
  if (st) goto fail;
  where = "setup";
  if (bk_module_function(module, "saxpy", &function) || bk_alloc(bytes, &bx, &px) ||
      bk_alloc(bytes, &by, &py) || bk_alloc(bytes, &bout, &pout) || bk_stream_create(&stream) ||
      bk_event_create(&start) || bk_event_create(&stop))
    goto fail;
  where = "run";
  void* params[] = {&a, &px, &py, &pout, (void*)&n};
  size_t sizes[] = {sizeof(a), sizeof(px), sizeof(py), sizeof(pout), sizeof(n)};
  bk_launch la = {function, SAXPY_BLOCKS, SAXPY_THREADS, stream, params, sizes, 5, NULL};
  if (bk_launch_prepare(&la) || bk_copy_to_device_async(bx, hx, bytes, stream) ||
      bk_copy_to_device_async(by, hy, bytes, stream) || bk_event_record(start, stream) ||
      bk_launch_submit(0, &la) || bk_event_record(stop, stream) ||
      bk_copy_to_host_async(hout, bout, bytes, stream) || bk_stream_sync(stream))
    goto fail;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    float want = a * hx[i] + hy[i];
    if (fabsf(hout[i] - want) > 1e-5f * (1.0f + fabsf(want))) ++bad;
  }
  double app_ms = (now_ns() - t0) / 1e6;
  float first_ms = 0;
  bk_event_elapsed_ms(start, stop, &first_ms);
  if (bad) {
    emit_error("saxpy_app", "%zu of %zu results differ from the host's", bad, n);
    return 1;
  }
  char extra[128];
  snprintf(extra, sizeof(extra), ",\"cache\":\"%s\",\"verified\":true",
           cached ? (hit ? "hit" : "miss") : "none");
  emit_value("saxpy_app", "ms", app_ms, extra);

  /* Kernel time: events around each of kernel_reps further launches. An
   * untimed SAXPY first keeps the stream busy while the timed one is enqueued,
   * so the interval holds GPU work only, not the host's launch latency. */
  double* k = malloc(sizeof(double) * (size_t)opt.kernel_reps);
  int failed = 0;
  for (int r = 0; r < opt.kernel_reps && !failed; ++r) {
    float ms = 0;
    failed = bk_launch_submit(0, &la) || bk_event_record(start, stream) ||
             bk_launch_submit(0, &la) || bk_event_record(stop, stream) || bk_stream_sync(stream) ||
             bk_event_elapsed_ms(start, stop, &ms);
    k[r] = ms;
  }
  if (failed) {
    emit_error("saxpy_kernel", "%s", bk_error());
  } else {
    snprintf(extra, sizeof(extra), ",\"first_ms\":%.6g,\"elements\":%zu", (double)first_ms, n);
    emit_stats("saxpy_kernel", "ms", k, opt.kernel_reps, extra);
  }
  free(k);
  bk_launch_release(&la);
  bk_event_destroy(start);
  bk_event_destroy(stop);
  bk_stream_destroy(stream);
  bk_free(bx);
  bk_free(by);
  bk_free(bout);
  bk_module_unload(module);
  free(hx);
  free(hy);
  free(hout);
  return 0;

fail:
  emit_error("saxpy_app", "%s: %s", where, bk_error());
  return 1;
}

/* ------------------------------------------------------------------------- */
/* CPU-only figures                                                           */
/* ------------------------------------------------------------------------- */

/* ns per call of `call`, which must fail: median over 50 rounds of 2000. */
static void bench_failing_call(const char* bench, int (*call)(void)) {
  enum { ROUNDS = 50, CALLS = 2000 };
  double t[ROUNDS];
  int unexpected = 0;
  for (int i = 0; i < CALLS; ++i) unexpected |= call() == 0; /* warm-up */
  for (int r = 0; r < ROUNDS; ++r) {
    double t0 = now_ns();
    for (int i = 0; i < CALLS; ++i) unexpected |= call() == 0;
    t[r] = (now_ns() - t0) / CALLS;
  }
  if (unexpected)
    emit_error(bench, "the call on an invalid handle succeeded");
  else
    emit_stats(bench, "ns", t, ROUNDS, NULL);
}

static int run_cpu(void) {
  bench_nvrtc(opt.arch);
  int st = bk_invalid_handle_setup();
  if (st == BK_UNSUPPORTED) {
    emit_skip("invalid_handle_released", "no handles in this implementation");
    return 0;
  }
  if (st) {
    emit_error("invalid_handle_released", "setup: %s", bk_error());
    return 0;
  }
  bench_failing_call("invalid_handle_released", bk_call_released_handle);
  bench_failing_call("invalid_handle_null", bk_call_null_handle);
  bk_invalid_handle_teardown();
  return 0;
}

/* ------------------------------------------------------------------------- */

static int int_arg(const char* value, const char* name) {
  char* end = NULL;
  long v = value ? strtol(value, &end, 10) : 0;
  if (!value || *end || v <= 0 || v > 1000000) {
    fprintf(stderr, "%s needs a positive number\n", name);
    exit(2);
  }
  return (int)v;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s gpu|saxpy|cpu|paired [--bursts N] [--burst-size N] [--warmup N] "
            "[--reps N] [--kernel-reps N] [--arch sm_XY] [--only a,b]\n",
            argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--bursts"))
      opt.bursts = int_arg(v, a), ++i;
    else if (!strcmp(a, "--burst-size"))
      opt.burst_size = int_arg(v, a), ++i;
    else if (!strcmp(a, "--warmup"))
      opt.warmup = int_arg(v, a), ++i;
    else if (!strcmp(a, "--reps"))
      opt.reps = int_arg(v, a), ++i;
    else if (!strcmp(a, "--kernel-reps"))
      opt.kernel_reps = int_arg(v, a), ++i;
    else if (!strcmp(a, "--arch") && v)
      opt.arch = v, ++i;
    else if (!strcmp(a, "--only") && v)
      opt.only = v, ++i;
    else if (!strcmp(a, "--pairs"))
      opt.pairs = int_arg(v, a), ++i;
    else if (!strcmp(a, "--copy-pairs"))
      opt.copy_pairs = int_arg(v, a), ++i;
    else {
      fprintf(stderr, "unknown option %s\n", a);
      return 2;
    }
  }
  if (!strcmp(argv[1], "gpu")) return run_gpu();
  if (!strcmp(argv[1], "saxpy")) return run_saxpy();
  if (!strcmp(argv[1], "cpu")) return run_cpu();
  if (!strcmp(argv[1], "paired")) return run_paired();
  fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
