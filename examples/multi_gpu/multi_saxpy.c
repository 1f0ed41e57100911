/*
 * multi_saxpy: one process drives every GPU of the machine through cuabi.
 *
 *   1. SAXPY (out = a * x + y) split over all devices: each device gets its
 *      own stream, module (compiled at run time for its architecture) and
 *      buffers, and computes its part.
 *   2. Peer access between every pair of devices is enabled where the
 *      hardware allows it; each pair is reported as direct or through host.
 *   3. The parts are gathered on device 0 with device-to-device copies, each
 *      ordered after its device's kernel by an event (device 0 waits on
 *      events recorded on the others), then copied to the host and verified.
 *   4. Event ordering the other way: device 1 waits on an event recorded on
 *      device 0 after a deliberately slow kernel there, then copies device
 *      0's data; every value must be the finished one.
 *   5. The bandwidth of a 256 MiB copy from device 0 to device 1 and back,
 *      timed with events, with the path cuabi_buffer_get_copy_path reports.
 *
 * With one device it runs step 1 (and the gather) on that device, verifies
 * it, prints "multi_saxpy: needs two devices, found 1" and exits 0.
 *
 *   multi_saxpy [--devices N] [--elements N] [--copy-mib M] [--repeats R]
 *
 *   --devices N   use N logical devices, logical device i on GPU i % count;
 *                 N larger than the GPU count runs every step on shared GPUs
 *                 (a test of the flow; the copies are then within one GPU)
 *   --elements N  SAXPY length (default 33554432)
 *   --copy-mib M  size of the timed copy (default 256)
 *   --repeats R   timed copies per direction (default 10)
 *
 * Exit status: see mg_util.h (0 verified or one device, 1 failure,
 * 3 no CUDA device).
 */
#define _POSIX_C_SOURCE 200809L
#define MG_PROG "multi_saxpy"
#include <math.h>

#include "mg_util.h"

static const char* kSource =
    "extern \"C\" __global__ void saxpy(float a, const float* x, const float* y, float* out,\n"
    "                                   size_t n) {\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    out[i] = a * x[i] + y[i];\n"
    "}\n"
    "// Writes base + (i % 1024); the first thread first spins for `cycles`\n"
    "// clock cycles, so the kernel ends that much later.\n"
    "extern \"C\" __global__ void slow_fill(float* x, size_t n, float base, long long cycles) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) {\n"
    "    const long long t0 = clock64();\n"
    "    while (clock64() - t0 < cycles) {\n"
    "    }\n"
    "  }\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    x[i] = base + (float)(i % 1024);\n"
    "}\n";

#define THREADS 256u
#define MAX_BLOCKS 4096u

typedef struct {
  int32_t ordinal; /* the GPU this logical device runs on */
  cuabi_device dev;
  cuabi_stream stream;
  cuabi_module module;
  cuabi_function saxpy, slow_fill;
  cuabi_buffer x, y, out;
  cuabi_event done; /* recorded after this part's kernel */
  size_t offset, count;
  char name[256];
} part_t;

static uint32_t blocks_for(size_t n) {
  const size_t b = (n + THREADS - 1) / THREADS;
  return b == 0 ? 1u : b > MAX_BLOCKS ? MAX_BLOCKS : (uint32_t)b;
}

static void launch_saxpy(part_t* p, float a) {
  uint64_t px = 0, py = 0, pout = 0;
  MG_CHECK(cuabi_buffer_get_pointer(p->x, &px));
  MG_CHECK(cuabi_buffer_get_pointer(p->y, &py));
  MG_CHECK(cuabi_buffer_get_pointer(p->out, &pout));
  size_t n = p->count;
  void* args[] = {&a, &px, &py, &pout, &n};
  const size_t sizes[] = {sizeof a, sizeof px, sizeof py, sizeof pout, sizeof n};
  const cuabi_launch_config config = mg_config(blocks_for(n), THREADS);
  MG_CHECK(cuabi_function_launch_sized(p->saxpy, &config, p->stream, args, sizes, 5));
}

static const char* path_name(cuabi_copy_path path) {
  switch (path) {
    case CUABI_COPY_SAME_DEVICE:
      return "within one device";
    case CUABI_COPY_PEER:
      return "direct (peer access)";
    case CUABI_COPY_THROUGH_HOST:
      return "through host memory";
    default:
      return "unknown path";
  }
}

static size_t parse_size(const char* flag, const char* text) {
  char* end = NULL;
  errno = 0;
  const unsigned long long v = strtoull(text, &end, 10);
  if (errno || !end || *end || v == 0) {
    fprintf(stderr, "%s: %s wants a positive number, not '%s'\n", MG_PROG, flag, text);
    exit(MG_EXIT_FAILED);
  }
  return (size_t)v;
}

/* Times `repeats` copies of `bytes` from `src` into `dst` on `stream` (of
 * dst's device) with events of that device; returns GB/s (1e9 bytes/s). */
static double time_copy(cuabi_device dst_dev, cuabi_stream stream, cuabi_buffer dst,
                        cuabi_buffer src, size_t bytes, int repeats, double* ms_each) {
  cuabi_event start = NULL, stop = NULL;
  MG_CHECK(cuabi_event_create(dst_dev, 0, &start));
  MG_CHECK(cuabi_event_create(dst_dev, 0, &stop));
  MG_CHECK(cuabi_buffer_copy_async(dst, 0, src, 0, bytes, stream)); /* warm-up */
  MG_CHECK(cuabi_stream_synchronize(stream));
  MG_CHECK(cuabi_event_record(start, stream));
  for (int i = 0; i < repeats; ++i)
    MG_CHECK(cuabi_buffer_copy_async(dst, 0, src, 0, bytes, stream));
  MG_CHECK(cuabi_event_record(stop, stream));
  MG_CHECK(cuabi_stream_synchronize(stream));
  float ms = 0;
  MG_CHECK(cuabi_event_get_elapsed_ms(start, stop, &ms));
  cuabi_event_release(start);
  cuabi_event_release(stop);
  *ms_each = (double)ms / repeats;
  return (double)bytes * repeats / ((double)ms * 1e-3) / 1e9;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  size_t want_devices = 0, n = (size_t)1 << 25, copy_mib = 256, repeats = 10;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--devices") == 0)
      want_devices = parse_size(argv[i], argv[i + 1]), ++i;
    else if (i + 1 < argc && strcmp(argv[i], "--elements") == 0)
      n = parse_size(argv[i], argv[i + 1]), ++i;
    else if (i + 1 < argc && strcmp(argv[i], "--copy-mib") == 0)
      copy_mib = parse_size(argv[i], argv[i + 1]), ++i;
    else if (i + 1 < argc && strcmp(argv[i], "--repeats") == 0)
      repeats = parse_size(argv[i], argv[i + 1]), ++i;
    else {
      fprintf(stderr,
              "usage: %s [--devices N] [--elements N] [--copy-mib M] [--repeats R]\n"
              "  (unknown or incomplete argument '%s')\n",
              MG_PROG, argv[i]);
      return MG_EXIT_FAILED;
    }
  }

  const int32_t count = mg_device_count();
  if (count == 0) return MG_EXIT_NO_DEVICE;
  const int ndev = want_devices ? (int)(want_devices > 64 ? 64 : want_devices) : count;
  if (n < (size_t)ndev) n = (size_t)ndev;
  printf("%s: %d CUDA device%s; using %d logical device%s%s\n", MG_PROG, count,
         count == 1 ? "" : "s", ndev, ndev == 1 ? "" : "s",
         ndev > count ? " (more than there are GPUs: logical device i runs on GPU i % count)" : "");

  /* Per device: handle, stream, module, buffers for its part. */
  part_t* parts = (part_t*)calloc((size_t)ndev, sizeof *parts);
  if (!parts) return MG_EXIT_FAILED;
  for (int i = 0; i < ndev; ++i) {
    part_t* p = &parts[i];
    p->ordinal = i % count;
    MG_CHECK(cuabi_device_get(p->ordinal, &p->dev));
    mg_device_name(p->dev, p->name, sizeof p->name);
    MG_CHECK(cuabi_stream_create(p->dev, CUABI_STREAM_NON_BLOCKING, 0, &p->stream));
    p->module = mg_compile(p->dev, kSource, "multi_saxpy.cu");
    p->saxpy = mg_function(p->module, "saxpy");
    p->slow_fill = mg_function(p->module, "slow_fill");
    p->count = n / (size_t)ndev + ((size_t)i < n % (size_t)ndev ? 1 : 0);
    p->offset = i == 0 ? 0 : parts[i - 1].offset + parts[i - 1].count;
    MG_CHECK(cuabi_buffer_alloc(p->dev, p->count * sizeof(float), &p->x));
    MG_CHECK(cuabi_buffer_alloc(p->dev, p->count * sizeof(float), &p->y));
    MG_CHECK(cuabi_buffer_alloc(p->dev, p->count * sizeof(float), &p->out));
    MG_CHECK(cuabi_event_create(p->dev, CUABI_EVENT_DISABLE_TIMING, &p->done));
    printf("  logical device %d: GPU %d (%s), elements [%zu, %zu)\n", i, p->ordinal, p->name,
           p->offset, p->offset + p->count);
  }

  /* Peer access between every two distinct GPUs in use, where possible. */
  const int gpus = ndev < count ? ndev : count;
  int direct_pairs = 0, host_pairs = 0;
  for (int i = 0; i < gpus; ++i) {
    for (int j = 0; j < gpus; ++j) {
      if (i == j) continue;
      int32_t can = 0;
      MG_CHECK(cuabi_device_can_access_peer(parts[i].dev, parts[j].dev, &can));
      if (can) {
        MG_CHECK(cuabi_device_enable_peer_access(parts[i].dev, parts[j].dev));
        ++direct_pairs;
      } else {
        ++host_pairs;
      }
      printf("  peer access GPU %d -> GPU %d: %s\n", i, j,
             can ? "enabled" : "not possible (copies go through host memory)");
    }
  }

  /* Host data, pinned so every device's copies run asynchronously. */
  const size_t bytes = n * sizeof(float);
  cuabi_host_buffer hx_buf = NULL, hy_buf = NULL, hout_buf = NULL;
  MG_CHECK(cuabi_host_buffer_alloc(parts[0].dev, bytes, &hx_buf));
  MG_CHECK(cuabi_host_buffer_alloc(parts[0].dev, bytes, &hy_buf));
  MG_CHECK(cuabi_host_buffer_alloc(parts[0].dev, bytes, &hout_buf));
  float *hx = NULL, *hy = NULL, *hout = NULL;
  MG_CHECK(cuabi_host_buffer_get_pointer(hx_buf, (void**)&hx));
  MG_CHECK(cuabi_host_buffer_get_pointer(hy_buf, (void**)&hy));
  MG_CHECK(cuabi_host_buffer_get_pointer(hout_buf, (void**)&hout));
  uint32_t seed = 12345u;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    hx[i] = (float)(seed >> 8) / 16777216.0f;
    seed = seed * 1664525u + 1013904223u;
    hy[i] = (float)(seed >> 8) / 16777216.0f;
    hout[i] = -1.0f;
  }
  const float a = 2.5f;

  /* 1. Every device: copy its part in, SAXPY, record "done". */
  const double t0 = mg_now();
  for (int i = 0; i < ndev; ++i) {
    part_t* p = &parts[i];
    const size_t pb = p->count * sizeof(float);
    MG_CHECK(cuabi_buffer_copy_from_host_async(p->x, 0, hx + p->offset, pb, p->stream));
    MG_CHECK(cuabi_buffer_copy_from_host_async(p->y, 0, hy + p->offset, pb, p->stream));
    launch_saxpy(p, a);
    MG_CHECK(cuabi_event_record(p->done, p->stream));
  }

  /* 3. Gather on device 0: its stream waits on each device's event, then
   *    copies that part over (peer, through host, or within device 0). */
  cuabi_buffer gathered = NULL;
  MG_CHECK(cuabi_buffer_alloc(parts[0].dev, bytes, &gathered));
  int paths[3] = {0, 0, 0};
  for (int i = 0; i < ndev; ++i) {
    part_t* p = &parts[i];
    cuabi_copy_path path = CUABI_COPY_SAME_DEVICE;
    MG_CHECK(cuabi_buffer_get_copy_path(gathered, p->out, &path));
    if ((int)path >= 0 && (int)path < 3) ++paths[path];
    MG_CHECK(cuabi_stream_wait_event(parts[0].stream, p->done));
    MG_CHECK(cuabi_buffer_copy_async(gathered, p->offset * sizeof(float), p->out, 0,
                                     p->count * sizeof(float), parts[0].stream));
  }
  MG_CHECK(cuabi_buffer_copy_to_host_async(gathered, 0, hout, bytes, parts[0].stream));
  MG_CHECK(cuabi_stream_synchronize(parts[0].stream));
  const double t1 = mg_now();
  size_t bad = 0;
  double max_err = 0;
  for (size_t i = 0; i < n; ++i) {
    const double want = (double)a * hx[i] + hy[i];
    const double err = fabs((double)hout[i] - want);
    if (err > max_err) max_err = err;
    if (err > 1e-5 * (1.0 + fabs(want))) {
      if (bad < 5)
        fprintf(stderr, "%s: element %zu is %g, expected %g\n", MG_PROG, i, hout[i], want);
      ++bad;
    }
  }
  printf(
      "%s: SAXPY of %zu elements on %d device%s, gathered on device 0 (%d part%s within "
      "device 0, %d direct, %d through host) in %.1f ms: %s (max abs error %.3g)\n",
      MG_PROG, n, ndev, ndev == 1 ? "" : "s", paths[CUABI_COPY_SAME_DEVICE],
      paths[CUABI_COPY_SAME_DEVICE] == 1 ? "" : "s", paths[CUABI_COPY_PEER],
      paths[CUABI_COPY_THROUGH_HOST], (t1 - t0) * 1e3, bad ? "FAILED" : "verified", max_err);
  if (bad) {
    fprintf(stderr, "%s: %zu of %zu elements are wrong\n", MG_PROG, bad, n);
    return MG_EXIT_FAILED;
  }

  int rc = MG_EXIT_OK;
  if (ndev < 2) {
    if (want_devices)
      printf("%s: only 1 device asked for (--devices 1); the steps across devices need two\n",
             MG_PROG);
    else
      printf("%s: needs two devices, found %d\n", MG_PROG, count);
  } else {
    part_t* d0 = &parts[0];
    part_t* d1 = &parts[1];
    const int shared = d0->ordinal == d1->ordinal;

    /* 4. Device 1 waits on an event recorded on device 0 after a slow
     *    kernel there; its copy of device 0's data must see the result. */
    const size_t m = (size_t)1 << 20;
    cuabi_buffer a0 = NULL, a1 = NULL;
    MG_CHECK(cuabi_buffer_alloc(d0->dev, m * sizeof(float), &a0));
    MG_CHECK(cuabi_buffer_alloc(d1->dev, m * sizeof(float), &a1));
    MG_CHECK(cuabi_buffer_memset_async(a0, 0, 0, m * sizeof(float), d0->stream));
    MG_CHECK(cuabi_buffer_memset_async(a1, 0, 0xFF, m * sizeof(float), d1->stream));
    MG_CHECK(cuabi_stream_synchronize(d0->stream));
    MG_CHECK(cuabi_stream_synchronize(d1->stream));
    int32_t clock_khz = 0; /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE */
    if (cuabi_device_get_attribute(d0->dev, 13, &clock_khz) != CUABI_SUCCESS || clock_khz <= 0)
      clock_khz = 1500000;
    long long cycles = (long long)clock_khz * 50; /* about 50 ms */
    uint64_t pa0 = 0;
    MG_CHECK(cuabi_buffer_get_pointer(a0, &pa0));
    float base = 1000.0f;
    size_t mm = m;
    void* args[] = {&pa0, &mm, &base, &cycles};
    const size_t sizes[] = {sizeof pa0, sizeof mm, sizeof base, sizeof cycles};
    const cuabi_launch_config config = mg_config(blocks_for(m), THREADS);
    cuabi_event ready = NULL;
    MG_CHECK(cuabi_event_create(d0->dev, CUABI_EVENT_DISABLE_TIMING, &ready));
    MG_CHECK(cuabi_function_launch_sized(d0->slow_fill, &config, d0->stream, args, sizes, 4));
    MG_CHECK(cuabi_event_record(ready, d0->stream));
    MG_CHECK(cuabi_stream_wait_event(d1->stream, ready));
    MG_CHECK(cuabi_buffer_copy_async(a1, 0, a0, 0, m * sizeof(float), d1->stream));
    MG_CHECK(cuabi_buffer_copy_to_host_async(a1, 0, hout, m * sizeof(float), d1->stream));
    MG_CHECK(cuabi_stream_synchronize(d1->stream));
    size_t stale = 0;
    for (size_t i = 0; i < m; ++i)
      if (hout[i] != base + (float)(i % 1024)) ++stale;
    printf(
        "%s: device 1's stream waited on an event recorded on device 0 after a ~50 ms "
        "kernel; its copy of device 0's %zu values: %s\n",
        MG_PROG, m, stale ? "FAILED" : "all finished values");
    if (stale) {
      fprintf(stderr, "%s: %zu values were read before device 0 had written them\n", MG_PROG,
              stale);
      rc = MG_EXIT_FAILED;
    }
    cuabi_event_release(ready);
    cuabi_buffer_release(a0);
    cuabi_buffer_release(a1);

    /* 5. Copy bandwidth between device 0 and device 1, both directions. */
    const size_t cb = copy_mib << 20;
    cuabi_buffer b0 = NULL, b1 = NULL;
    MG_CHECK(cuabi_buffer_alloc(d0->dev, cb, &b0));
    MG_CHECK(cuabi_buffer_alloc(d1->dev, cb, &b1));
    MG_CHECK(cuabi_buffer_memset(b0, 0, 1, cb));
    MG_CHECK(cuabi_buffer_memset(b1, 0, 2, cb));
    cuabi_copy_path fwd = CUABI_COPY_SAME_DEVICE, back = CUABI_COPY_SAME_DEVICE;
    MG_CHECK(cuabi_buffer_get_copy_path(b1, b0, &fwd));
    MG_CHECK(cuabi_buffer_get_copy_path(b0, b1, &back));
    double ms = 0;
    const double gbs_fwd = time_copy(d1->dev, d1->stream, b1, b0, cb, (int)repeats, &ms);
    printf(
        "%s: copy device 0 -> device 1 (GPU %d -> GPU %d), %zu MiB, %s: %.3f ms each, "
        "%.1f GB/s\n",
        MG_PROG, d0->ordinal, d1->ordinal, copy_mib, path_name(fwd), ms, gbs_fwd);
    MG_CHECK(cuabi_buffer_memset(b1, 0, 2, cb)); /* what the copies back must bring */
    const double gbs_back = time_copy(d0->dev, d0->stream, b0, b1, cb, (int)repeats, &ms);
    printf(
        "%s: copy device 1 -> device 0 (GPU %d -> GPU %d), %zu MiB, %s: %.3f ms each, "
        "%.1f GB/s\n",
        MG_PROG, d1->ordinal, d0->ordinal, copy_mib, path_name(back), ms, gbs_back);
    if (shared)
      printf(
          "%s: note: logical devices 0 and 1 share GPU %d, so these are copies within one "
          "GPU, not peer copies\n",
          MG_PROG, d0->ordinal);
    /* The copies 1 -> 0 brought b1's 2s into b0 (which held 1s): check the end. */
    unsigned char probe[16];
    MG_CHECK(cuabi_buffer_copy_to_host(b0, cb - sizeof probe, probe, sizeof probe));
    for (size_t i = 0; i < sizeof probe; ++i) {
      if (probe[i] != 2) {
        fprintf(stderr, "%s: the copy from device 1 did not arrive on device 0\n", MG_PROG);
        rc = MG_EXIT_FAILED;
        break;
      }
    }
    cuabi_buffer_release(b0);
    cuabi_buffer_release(b1);
    if (rc == MG_EXIT_OK)
      printf("%s: PASSED on %d devices (%d peer pair%s direct, %d through host)\n", MG_PROG, ndev,
             direct_pairs, direct_pairs == 1 ? "" : "s", host_pairs);
  }

  /* Everything back, in any order (handles keep what they need alive). */
  cuabi_buffer_release(gathered);
  cuabi_host_buffer_release(hx_buf);
  cuabi_host_buffer_release(hy_buf);
  cuabi_host_buffer_release(hout_buf);
  for (int i = 0; i < ndev; ++i) {
    part_t* p = &parts[i];
    cuabi_event_release(p->done);
    cuabi_buffer_release(p->x);
    cuabi_buffer_release(p->y);
    cuabi_buffer_release(p->out);
    cuabi_function_release(p->saxpy);
    cuabi_function_release(p->slow_fill);
    cuabi_module_release(p->module);
    cuabi_stream_release(p->stream);
    cuabi_device_release(p->dev);
  }
  free(parts);
  return rc;
}
