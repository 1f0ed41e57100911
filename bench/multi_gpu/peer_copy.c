/*
 * peer_copy: a copy between two GPUs through cuabi against the same copy
 * through the driver directly, for every ordered pair of devices.
 *
 * For each pair (a -> b): a 256 MiB buffer on each device, peer access
 * enabled both ways, one stream on b (cuabi_buffer_copy_async orders a copy
 * on the destination's stream). Each round times, with events on that
 * stream, one cuabi_buffer_copy_async and one cuMemcpyPeerAsync of the same
 * bytes between the same pointers on the same stream (the raw call
 * resolved from the driver cuabi loaded), the order alternating between
 * rounds. One JSON line per round:
 *   {"src": a, "dst": b, "bytes": N, "path": "peer", "round": r,
 *    "cuabi_ms": x, "raw_ms": y}
 * bench/multi_gpu/report.py turns them into GB/s, medians and the paired
 * interval of the ratio.
 *
 *   peer_copy [--mib M] [--rounds R]
 */
#define _GNU_SOURCE
#include <cuabi/cuabi.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*memcpy_peer_async_fn)(uint64_t dst, void* dst_ctx, uint64_t src, void* src_ctx,
                                    size_t bytes, void* stream);

#define CHECK(call)                                                                         \
  do {                                                                                      \
    cuabi_status st_ = (call);                                                              \
    if (st_ != CUABI_SUCCESS) {                                                             \
      fprintf(stderr, "peer_copy: %s failed: %s\n", #call, cuabi_last_error_message());     \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

int main(int argc, char** argv) {
  size_t mib = 256;
  int rounds = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--mib") == 0) mib = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
  }
  int32_t n = 0;
  if (cuabi_device_get_count(&n) != CUABI_SUCCESS || n == 0) {
    fprintf(stderr, "peer_copy: no CUDA device (%s)\n", cuabi_last_error_message());
    return 3;
  }
  if (n < 2) {
    printf("peer_copy: needs two devices, found %d\n", n);
    return 0;
  }
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!libcuda) libcuda = dlopen("libcuda.so.1", RTLD_NOW);
  memcpy_peer_async_fn raw = libcuda ? (memcpy_peer_async_fn)dlsym(libcuda, "cuMemcpyPeerAsync") : NULL;
  if (!raw) {
    fprintf(stderr, "peer_copy: cuMemcpyPeerAsync not found in libcuda.so.1\n");
    return 1;
  }
  const size_t bytes = mib << 20;
  cuabi_device* dev = calloc((size_t)n, sizeof *dev);
  cuabi_buffer* buf = calloc((size_t)n, sizeof *buf);
  uint64_t* ctx = calloc((size_t)n, sizeof *ctx);
  for (int32_t i = 0; i < n; ++i) {
    CHECK(cuabi_device_get(i, &dev[i]));
    CHECK(cuabi_buffer_alloc(dev[i], bytes, &buf[i]));
    CHECK(cuabi_buffer_memset(buf[i], 0, (uint8_t)(i + 1), bytes));
    CHECK(cuabi_device_get_context(dev[i], &ctx[i]));
  }
  for (int32_t a = 0; a < n; ++a)
    for (int32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      int32_t can = 0;
      CHECK(cuabi_device_can_access_peer(dev[b], dev[a], &can));
      if (can) CHECK(cuabi_device_enable_peer_access(dev[b], dev[a]));
    }
  for (int32_t a = 0; a < n; ++a)
    for (int32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      cuabi_stream s = NULL;
      cuabi_event e0 = NULL, e1 = NULL;
      CHECK(cuabi_stream_create(dev[b], CUABI_STREAM_NON_BLOCKING, 0, &s));
      CHECK(cuabi_event_create(dev[b], 0, &e0));
      CHECK(cuabi_event_create(dev[b], 0, &e1));
      uint64_t raw_stream = 0, src = 0, dst = 0;
      CHECK(cuabi_stream_get_handle(s, &raw_stream));
      CHECK(cuabi_buffer_get_pointer(buf[a], &src));
      CHECK(cuabi_buffer_get_pointer(buf[b], &dst));
      cuabi_copy_path path = CUABI_COPY_SAME_DEVICE;
      CHECK(cuabi_buffer_get_copy_path(buf[b], buf[a], &path));
      /* Warm-up: both once. */
      CHECK(cuabi_buffer_copy_async(buf[b], 0, buf[a], 0, bytes, s));
      if (raw(dst, (void*)(uintptr_t)ctx[b], src, (void*)(uintptr_t)ctx[a], bytes,
              (void*)(uintptr_t)raw_stream) != 0) {
        fprintf(stderr, "peer_copy: cuMemcpyPeerAsync failed\n");
        return 1;
      }
      CHECK(cuabi_stream_synchronize(s));
      for (int r = 0; r < rounds; ++r) {
        float ms[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
          const int use_raw = (k + r) % 2; /* alternate which goes first */
          CHECK(cuabi_event_record(e0, s));
          if (use_raw) {
            if (raw(dst, (void*)(uintptr_t)ctx[b], src, (void*)(uintptr_t)ctx[a], bytes,
                    (void*)(uintptr_t)raw_stream) != 0) {
              fprintf(stderr, "peer_copy: cuMemcpyPeerAsync failed\n");
              return 1;
            }
          } else {
            CHECK(cuabi_buffer_copy_async(buf[b], 0, buf[a], 0, bytes, s));
          }
          CHECK(cuabi_event_record(e1, s));
          CHECK(cuabi_event_synchronize(e1));
          CHECK(cuabi_event_get_elapsed_ms(e0, e1, &ms[use_raw]));
        }
        printf("{\"src\": %d, \"dst\": %d, \"bytes\": %zu, \"path\": \"%s\", \"round\": %d, "
               "\"cuabi_ms\": %.5f, \"raw_ms\": %.5f}\n",
               a, b, bytes,
               path == CUABI_COPY_PEER ? "peer" : path == CUABI_COPY_THROUGH_HOST ? "host" : "same",
               r, ms[0], ms[1]);
      }
      /* The destination holds the source's bytes. */
      unsigned char probe[2] = {0, 0};
      CHECK(cuabi_buffer_copy_to_host(buf[b], bytes - 2, probe, 2));
      if (probe[0] != (unsigned char)(a + 1) || probe[1] != (unsigned char)(a + 1)) {
        fprintf(stderr, "peer_copy: device %d holds %u, not device %d's %u\n", b, probe[0], a,
                a + 1);
        return 1;
      }
      CHECK(cuabi_buffer_memset(buf[b], 0, (uint8_t)(b + 1), bytes));
      cuabi_event_release(e0);
      cuabi_event_release(e1);
      cuabi_stream_release(s);
    }
  for (int32_t i = 0; i < n; ++i) {
    cuabi_buffer_release(buf[i]);
    cuabi_device_release(dev[i]);
  }
  free(dev);
  free(buf);
  free(ctx);
  return 0;
}
