/*
 * Growing a buffer, two ways, through cuabi's C ABI:
 *
 *   map     a growable buffer (cuabi_buffer_alloc_growable) grown in place:
 *           each step maps new physical memory after what it has
 *           (cuabi_buffer_grow); nothing is copied, the address stays
 *   copy    what one does without virtual memory: allocate a buffer of the
 *           new size, copy the old contents over, free the old one
 *
 * Each run grows from `--from` MiB to `--to` MiB, doubling; the two ways
 * alternate in rounds, and the median time of a whole growth and of each
 * step (by the size grown to) are printed, in milliseconds, with their
 * ratio, as a table and as JSON lines (`--json`). Both end with the same
 * contents, checked. Exit 2 without a device, 1 on any failure.
 *
 *   bench_vmm [--rounds N] [--from MiB] [--to MiB] [--json]
 */
#define _POSIX_C_SOURCE 200809L
#include <cuabi/cuabi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failed(cuabi_status st, const char* call, int line) {
  fprintf(stderr, "bench_vmm:%d: %s: %s: %s\n", line, call, cuabi_status_get_name(st),
          cuabi_last_error_message());
  return 1;
}
#define CHECK(call)                                                \
  do {                                                             \
    cuabi_status st_ = (call);                                     \
    if (st_ != CUABI_SUCCESS) return failed(st_, #call, __LINE__); \
  } while (0)

#define MAX_STEPS 24

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Checks that the first and last words of `b`'s first `bytes` hold the fill. */
static int check_ends(cuabi_buffer b, size_t bytes) {
  uint32_t w[2] = {0, 0};
  CHECK(cuabi_buffer_copy_to_host(b, 0, &w[0], 4));
  CHECK(cuabi_buffer_copy_to_host(b, bytes - 4, &w[1], 4));
  if (w[0] != 0x600d || w[1] != 0x600d) {
    fprintf(stderr, "bench_vmm: the contents were lost (%x %x)\n", w[0], w[1]);
    return 1;
  }
  return 0;
}

/* One growth by mapping; step_ms[i] is the time of step i. */
static int grow_by_mapping(cuabi_device dev, size_t from, size_t to, double* total_ms,
                           double* step_ms) {
  cuabi_buffer b = NULL;
  const double t0 = now_ms();
  CHECK(cuabi_buffer_alloc_growable(dev, from, to, &b));
  CHECK(cuabi_buffer_fill(b, 0, 0x600d, 4, from / 4));
  int i = 0;
  for (size_t size = from; size < to; size *= 2, ++i) {
    const double s = now_ms();
    CHECK(cuabi_buffer_grow(b, size * 2));
    step_ms[i] = now_ms() - s;
  }
  CHECK(cuabi_device_synchronize(dev));
  *total_ms = now_ms() - t0;
  int bad = check_ends(b, from);
  cuabi_buffer_release(b);
  return bad;
}

/* One growth by allocating a bigger buffer and copying. */
static int grow_by_copying(cuabi_device dev, size_t from, size_t to, double* total_ms,
                           double* step_ms) {
  cuabi_buffer b = NULL;
  const double t0 = now_ms();
  CHECK(cuabi_buffer_alloc(dev, from, &b));
  CHECK(cuabi_buffer_fill(b, 0, 0x600d, 4, from / 4));
  int i = 0;
  for (size_t size = from; size < to; size *= 2, ++i) {
    const double s = now_ms();
    cuabi_buffer bigger = NULL;
    CHECK(cuabi_buffer_alloc(dev, size * 2, &bigger));
    CHECK(cuabi_buffer_copy(bigger, 0, b, 0, size)); /* returns once copied */
    cuabi_buffer_release(b);
    b = bigger;
    step_ms[i] = now_ms() - s;
  }
  CHECK(cuabi_device_synchronize(dev));
  *total_ms = now_ms() - t0;
  int bad = check_ends(b, from);
  cuabi_buffer_release(b);
  return bad;
}

int main(int argc, char** argv) {
  int rounds = 7, json = 0;
  size_t from_mib = 64, to_mib = 4096;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--from") && i + 1 < argc)
      from_mib = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--to") && i + 1 < argc)
      to_mib = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--json"))
      json = 1;
    else {
      fprintf(stderr, "usage: bench_vmm [--rounds N] [--from MiB] [--to MiB] [--json]\n");
      return 1;
    }
  }
  if (rounds < 1 || rounds > 101 || from_mib == 0 || to_mib <= from_mib) {
    fprintf(stderr, "bench_vmm: rounds 1..101, 0 < from < to\n");
    return 1;
  }
  int32_t count = 0;
  if (cuabi_device_get_count(&count) != CUABI_SUCCESS || count == 0) {
    printf("bench_vmm: no CUDA device (%s)\n", cuabi_last_error_message());
    return 2;
  }
  cuabi_device dev = NULL;
  CHECK(cuabi_device_get(0, &dev));
  char name[256];
  size_t name_size = sizeof name;
  CHECK(cuabi_device_get_name(dev, name, &name_size));
  size_t g = 0, rec = 0;
  CHECK(cuabi_device_get_vm_granularity(dev, &g, &rec));
  const size_t from = from_mib << 20, to = to_mib << 20;
  if (from % g || to % g) {
    fprintf(stderr, "bench_vmm: sizes must be multiples of the granularity, %zu bytes\n", g);
    return 1;
  }
  int steps = 0;
  for (size_t s = from; s < to; s *= 2) ++steps;
  if (steps > MAX_STEPS) {
    fprintf(stderr, "bench_vmm: at most %d doublings\n", MAX_STEPS);
    return 1;
  }
  double map_total[101], copy_total[101];
  double map_step[MAX_STEPS][101], copy_step[MAX_STEPS][101], step[MAX_STEPS];
  /* One of each first, untimed: the driver's first allocations of a size. */
  double t;
  if (grow_by_mapping(dev, from, to, &t, step) || grow_by_copying(dev, from, to, &t, step))
    return 1;
  for (int r = 0; r < rounds; ++r) {
    if (grow_by_mapping(dev, from, to, &map_total[r], step)) return 1;
    for (int i = 0; i < steps; ++i) map_step[i][r] = step[i];
    if (grow_by_copying(dev, from, to, &copy_total[r], step)) return 1;
    for (int i = 0; i < steps; ++i) copy_step[i][r] = step[i];
  }
  const double mt = median(map_total, rounds), ct = median(copy_total, rounds);
  printf(
      "growing a buffer from %zu MiB to %zu MiB by doubling on %s (granularity %zu KiB), "
      "median of %d rounds:\n",
      from_mib, to_mib, name, g >> 10, rounds);
  printf("| grown to | map in place (ms) | allocate + copy (ms) | copy / map |\n");
  printf("|---:|---:|---:|---:|\n");
  size_t size = from;
  for (int i = 0; i < steps; ++i, size *= 2) {
    const double m = median(map_step[i], rounds), c = median(copy_step[i], rounds);
    printf("| %zu MiB | %.3f | %.3f | %.2fx |\n", (size * 2) >> 20, m, c, c / m);
    if (json)
      printf("{\"figure\":\"vmm_grow_step\",\"to_mib\":%zu,\"map_ms\":%.4f,\"copy_ms\":%.4f}\n",
             (size * 2) >> 20, m, c);
  }
  printf("| whole growth | %.3f | %.3f | %.2fx |\n", mt, ct, ct / mt);
  printf("mapping in place is %.2fx %s than allocating and copying for the whole growth\n",
         mt < ct ? ct / mt : mt / ct, mt < ct ? "faster" : "slower");
  if (json)
    printf(
        "{\"figure\":\"vmm_grow\",\"from_mib\":%zu,\"to_mib\":%zu,\"rounds\":%d,"
        "\"map_ms\":%.4f,\"copy_ms\":%.4f,\"device\":\"%s\"}\n",
        from_mib, to_mib, rounds, mt, ct, name);
  cuabi_device_release(dev);
  return 0;
}
