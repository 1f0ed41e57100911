/*
 * ipc_matrix: every way of opening another process's buffer, event and pool
 * allocation across two GPUs, each checked for a working result or a status
 * that names the devices; never a crash.
 *
 * The parent, on GPU 0 (home), makes a buffer, an IPC pool with one
 * allocation, and an interprocess event recorded after a slow kernel and
 * the fill of both, without waiting. It starts itself as a child (the pool's
 * file descriptor as the child's descriptor 3, the handles as hex), which
 * runs each case below and prints one line per case:
 *
 *   event.home_wait_other   the event opened on home, waited on by a stream
 *                           of the other GPU (the driver crashes on this by
 *                           itself; cuabi reopens the event there)
 *   event.other             the event opened on the other GPU
 *   event.twice             the event opened twice on one device
 *   buffer.other_lazy       the buffer opened on the other GPU, peer access
 *                           not enabled by anyone (the mapping enables it)
 *   buffer.other_current    the same while home's context is current
 *   buffer.other_peer       peer access enabled first, then opened
 *   buffer.twice            opened twice on one device; one released, the
 *                           other still reads right
 *   buffer.home             opened on home, copied to the other GPU
 *   pool.home               the pool imported on home, its allocation opened
 *   pool.wrong_device       the pool imported on the other GPU: refused,
 *                           naming both devices
 *
 * The child writes 2x + 1 into the buffer and the pool allocation through
 * the other GPU, and the parent checks every value. Then the exporter-gone
 * case: a child exports a buffer and an event and exits; the parent opens
 * them and must get a status (not a crash) saying the exporter has ended.
 *
 *   ipc_matrix [--child-device D]
 *
 * With one device and no --child-device: "needs two devices, found 1", exit
 * 0; --child-device 0 runs the cases that need no second GPU on one.
 */
#define _POSIX_C_SOURCE 200809L
#define MG_PROG "ipc_matrix"
#include "mg_util.h"

static const char* kSource =
    "extern \"C\" __global__ void delay(long long cycles) {\n"
    "  const long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void fill(float* x, size_t n, float base) {\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    x[i] = base + (float)(i % 1000);\n"
    "}\n"
    "// Counts values that are not base + i % 1000, then writes 2x + 1.\n"
    "extern \"C\" __global__ void check(float* x, size_t n, float base,\n"
    "                                  unsigned long long* bad, int transform) {\n"
    "  unsigned long long mine = 0;\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x) {\n"
    "    const float v = x[i];\n"
    "    if (v != base + (float)(i % 1000)) ++mine;\n"
    "    if (transform) x[i] = 2.0f * v + 1.0f;\n"
    "  }\n"
    "  if (mine) atomicAdd(bad, mine);\n"
    "}\n";

#define N ((size_t)1 << 20)
#define BASE_BUF 0.0f
#define BASE_POOL 5000.0f

static int failures = 0;

static void report(const char* name, int ok, const char* detail) {
  printf("%s %-24s %s\n", ok ? "ok  " : "FAIL", name, detail);
  if (!ok) ++failures;
}

/* Runs `check` over `buf` on `stream` (a stream of buf's device) and returns
 * the number of wrong values. */
static unsigned long long run_check(cuabi_device dev, cuabi_module module, cuabi_buffer buf,
                                    float base, int transform, cuabi_stream stream) {
  cuabi_function f = mg_function(module, "check");
  cuabi_buffer bad = NULL;
  MG_CHECK(cuabi_buffer_alloc(dev, sizeof(unsigned long long), &bad));
  MG_CHECK(cuabi_buffer_memset_async(bad, 0, 0, sizeof(unsigned long long), stream));
  uint64_t px = 0, pbad = 0;
  MG_CHECK(cuabi_buffer_get_pointer(buf, &px));
  MG_CHECK(cuabi_buffer_get_pointer(bad, &pbad));
  size_t n = N;
  int32_t t = transform;
  void* args[] = {&px, &n, &base, &pbad, &t};
  const cuabi_launch_config config = mg_config(512, 256);
  MG_CHECK(cuabi_function_launch(f, &config, stream, args, 5));
  unsigned long long wrong = 0;
  MG_CHECK(cuabi_buffer_copy_to_host_async(bad, 0, &wrong, sizeof wrong, stream));
  MG_CHECK(cuabi_stream_synchronize(stream));
  cuabi_buffer_release(bad);
  cuabi_function_release(f);
  return wrong;
}

/* Whether the last error's message names both devices. */
static int names_devices(int32_t a, int32_t b) {
  char da[32], db[32];
  snprintf(da, sizeof da, "device %d", a);
  snprintf(db, sizeof db, "device %d", b);
  const char* m = cuabi_last_error_message();
  return strstr(m, da) && strstr(m, db);
}

static int child_main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "%s child: expected HOME OTHER BUF EVENT POOLBUF\n", MG_PROG);
    return MG_EXIT_FAILED;
  }
  const int32_t h = atoi(argv[2]), o = atoi(argv[3]);
  unsigned char buf_handle[CUABI_IPC_HANDLE_SIZE], ev_handle[CUABI_IPC_HANDLE_SIZE],
      pool_handle[CUABI_IPC_HANDLE_SIZE];
  if (mg_from_hex(argv[4], buf_handle, sizeof buf_handle) ||
      mg_from_hex(argv[5], ev_handle, sizeof ev_handle) ||
      mg_from_hex(argv[6], pool_handle, sizeof pool_handle)) {
    fprintf(stderr, "%s child: a handle is not %d bytes of hex\n", MG_PROG, CUABI_IPC_HANDLE_SIZE);
    return MG_EXIT_FAILED;
  }
  const int pool_fd = 3;
  cuabi_device home = NULL, other = NULL;
  MG_CHECK(cuabi_device_get(h, &home));
  MG_CHECK(cuabi_device_get(o, &other));
  cuabi_module module_o = mg_compile(other, kSource, "ipc_matrix.cu");
  cuabi_stream so = NULL, sh = NULL;
  MG_CHECK(cuabi_stream_create(other, CUABI_STREAM_NON_BLOCKING, 0, &so));
  MG_CHECK(cuabi_stream_create(home, CUABI_STREAM_NON_BLOCKING, 0, &sh));
  char detail[256];

  /* Events. The first wait orders everything after it behind the parent's
   * fill, so the buffer cases below read finished data. */
  cuabi_event ev_home = NULL, ev_other = NULL, ev_twice = NULL;
  MG_CHECK(cuabi_event_open_ipc(home, ev_handle, sizeof ev_handle, &ev_home));
  cuabi_status st = cuabi_stream_wait_event(so, ev_home);
  if (st == CUABI_SUCCESS) st = cuabi_stream_synchronize(so);
  snprintf(detail, sizeof detail, "%s %s", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "(stream of the other GPU waited on it)");
  report("event.home_wait_other", st == CUABI_SUCCESS, detail);
  st = cuabi_event_open_ipc(other, ev_handle, sizeof ev_handle, &ev_other);
  if (st == CUABI_SUCCESS) st = cuabi_stream_wait_event(so, ev_other);
  if (st == CUABI_SUCCESS) st = cuabi_event_synchronize(ev_other);
  snprintf(detail, sizeof detail, "%s %s", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "");
  report("event.other", st == CUABI_SUCCESS, detail);
  st = cuabi_event_open_ipc(other, ev_handle, sizeof ev_handle, &ev_twice);
  if (st == CUABI_SUCCESS) st = cuabi_stream_wait_event(sh, ev_twice);
  if (st == CUABI_SUCCESS) st = cuabi_stream_synchronize(sh);
  snprintf(detail, sizeof detail, "%s %s", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "(and waited on from the home GPU's stream)");
  report("event.twice", st == CUABI_SUCCESS, detail);

  /* Buffers. */
  cuabi_buffer lazy = NULL, twice = NULL, on_home = NULL;
  st = cuabi_buffer_open_ipc(other, NULL, buf_handle, sizeof buf_handle, &lazy);
  unsigned long long wrong = st ? 0 : run_check(other, module_o, lazy, BASE_BUF, 0, so);
  snprintf(detail, sizeof detail, "%s %s%llu wrong", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "", wrong);
  report("buffer.other_lazy", st == CUABI_SUCCESS && wrong == 0, detail);

  MG_CHECK(cuabi_device_synchronize(home)); /* home's context current on this thread */
  st = cuabi_buffer_open_ipc(other, NULL, buf_handle, sizeof buf_handle, &twice);
  wrong = st ? 0 : run_check(other, module_o, twice, BASE_BUF, 0, so);
  snprintf(detail, sizeof detail, "%s %s%llu wrong (the same mapping as the first open)",
           cuabi_status_get_name(st), st ? cuabi_last_error_message() : "", wrong);
  report("buffer.other_current", st == CUABI_SUCCESS && wrong == 0, detail);

  /* Released in either order, the other still maps the memory. */
  cuabi_buffer_release(lazy);
  lazy = NULL;
  wrong = twice ? run_check(other, module_o, twice, BASE_BUF, 0, so) : 1;
  snprintf(detail, sizeof detail, "%llu wrong after the first of two opens was released", wrong);
  report("buffer.twice", twice && wrong == 0, detail);

  int32_t peer = 0;
  if (h != o) MG_CHECK(cuabi_device_can_access_peer(other, home, &peer));
  if (peer) {
    st = cuabi_device_enable_peer_access(other, home);
    cuabi_buffer explicit_peer = NULL;
    if (st == CUABI_SUCCESS)
      st = cuabi_buffer_open_ipc(other, NULL, buf_handle, sizeof buf_handle, &explicit_peer);
    /* Transforms in place: the parent checks 2x + 1 afterwards. */
    wrong = st ? 0 : run_check(other, module_o, explicit_peer, BASE_BUF, 1, so);
    snprintf(detail, sizeof detail, "%s %s%llu wrong, 2x+1 written over the link",
             cuabi_status_get_name(st), st ? cuabi_last_error_message() : "", wrong);
    report("buffer.other_peer", st == CUABI_SUCCESS && wrong == 0, detail);
    cuabi_buffer_release(explicit_peer);
  } else {
    /* Same GPU, or no peer: transform through the twice-opened mapping. */
    wrong = twice ? run_check(other, module_o, twice, BASE_BUF, 1, so) : 1;
    report("buffer.other_peer", wrong == 0,
           h == o ? "same GPU: no peer; 2x+1 written through the mapping"
                  : "no peer access between the GPUs; 2x+1 written through the mapping");
  }
  cuabi_buffer_release(twice);

  st = cuabi_buffer_open_ipc(home, NULL, buf_handle, sizeof buf_handle, &on_home);
  cuabi_buffer local = NULL;
  MG_CHECK(cuabi_buffer_alloc(other, N * sizeof(float), &local));
  if (st == CUABI_SUCCESS) st = cuabi_buffer_copy(local, 0, on_home, 0, N * sizeof(float));
  /* The parent's values were transformed above: 2 * (i % 1000) + 1. */
  float sample[3] = {0, 0, 0};
  if (st == CUABI_SUCCESS) st = cuabi_buffer_copy_to_host(local, 999 * sizeof(float), sample, 12);
  snprintf(detail, sizeof detail, "%s %s values %g %g %g", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "", sample[0], sample[1], sample[2]);
  report("buffer.home",
         st == CUABI_SUCCESS && sample[0] == 1999.0f && sample[1] == 1.0f && sample[2] == 3.0f,
         detail);
  cuabi_buffer_release(local);
  cuabi_buffer_release(on_home);

  /* Pool allocations. */
  cuabi_memory_pool pool_home = NULL, pool_other = NULL;
  cuabi_buffer from_pool = NULL, refused = NULL;
  st = cuabi_memory_pool_import_fd(home, pool_fd, &pool_home);
  if (st == CUABI_SUCCESS)
    st = cuabi_buffer_open_ipc(home, pool_home, pool_handle, sizeof pool_handle, &from_pool);
  if (st == CUABI_SUCCESS) {
    cuabi_module module_h = mg_compile(home, kSource, "ipc_matrix.cu");
    wrong = run_check(home, module_h, from_pool, BASE_POOL, 1, sh);
    cuabi_module_release(module_h);
  }
  snprintf(detail, sizeof detail, "%s %s%llu wrong, 2x+1 written", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "", wrong);
  report("pool.home", st == CUABI_SUCCESS && wrong == 0, detail);
  cuabi_buffer_release(from_pool);
  if (h != o) {
    st = cuabi_memory_pool_import_fd(other, pool_fd, &pool_other);
    if (st == CUABI_SUCCESS)
      st = cuabi_buffer_open_ipc(other, pool_other, pool_handle, sizeof pool_handle, &refused);
    snprintf(detail, sizeof detail, "%s: %s", cuabi_status_get_name(st),
             st ? cuabi_last_error_message() : "opened (expected a refusal)");
    report("pool.wrong_device", st == CUABI_ERROR_INVALID_ARGUMENT && names_devices(h, o), detail);
    cuabi_buffer_release(refused);
    cuabi_memory_pool_release(pool_other);
  }
  cuabi_memory_pool_release(pool_home);
  close(pool_fd);

  cuabi_event_release(ev_home);
  cuabi_event_release(ev_other);
  cuabi_event_release(ev_twice);
  cuabi_stream_release(so);
  cuabi_stream_release(sh);
  cuabi_module_release(module_o);
  cuabi_device_release(home);
  cuabi_device_release(other);
  printf("child: %d case%s failed\n", failures, failures == 1 ? "" : "s");
  return failures ? MG_EXIT_FAILED : MG_EXIT_OK;
}

/* The exporter that leaves: exports a buffer and an event, prints them, and
 * exits without releasing anything. */
static int exporter_main(void) {
  cuabi_device dev = NULL;
  MG_CHECK(cuabi_device_get(0, &dev));
  cuabi_buffer buffer = NULL;
  cuabi_event event = NULL;
  MG_CHECK(cuabi_buffer_alloc(dev, 1 << 20, &buffer));
  MG_CHECK(cuabi_event_create(dev, CUABI_EVENT_INTERPROCESS | CUABI_EVENT_DISABLE_TIMING, &event));
  unsigned char b[CUABI_IPC_HANDLE_SIZE], e[CUABI_IPC_HANDLE_SIZE];
  MG_CHECK(cuabi_buffer_get_ipc_handle(buffer, b, sizeof b));
  MG_CHECK(cuabi_event_get_ipc_handle(event, e, sizeof e));
  char hex[2 * CUABI_IPC_HANDLE_SIZE + 1];
  mg_to_hex(b, sizeof b, hex);
  printf("%s\n", hex);
  mg_to_hex(e, sizeof e, hex);
  printf("%s\n", hex);
  fflush(stdout);
  return 0;
}

static void exporter_gone(int32_t open_on) {
  int fds[2];
  if (mg_pipe(fds) != 0) exit(MG_EXIT_FAILED);
  char flag[] = "--exporter";
  char* argv[] = {(char*)MG_PROG, flag, NULL};
  pid_t pid = 0;
  /* The exporter's standard output is the pipe. */
  const int saved = dup(1);
  dup2(fds[1], 1);
  const int spawned = mg_spawn_self(argv, -1, -1, &pid);
  dup2(saved, 1);
  close(saved);
  close(fds[1]);
  if (spawned != 0) exit(MG_EXIT_FAILED);
  char text[2 * (2 * CUABI_IPC_HANDLE_SIZE + 1) + 1];
  const int got = mg_read_full(fds[0], text, sizeof text - 1, mg_now() + 120);
  close(fds[0]);
  int status = 0;
  if (got != 0 || mg_wait_deadline(pid, mg_now() + 60, &status) != 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    report("exporter_gone", 0, "the exporter did not run to its end");
    return;
  }
  unsigned char b[CUABI_IPC_HANDLE_SIZE], e[CUABI_IPC_HANDLE_SIZE];
  text[2 * CUABI_IPC_HANDLE_SIZE] = 0;
  text[sizeof text - 2] = 0;
  if (mg_from_hex(text, b, sizeof b) ||
      mg_from_hex(text + 2 * CUABI_IPC_HANDLE_SIZE + 1, e, sizeof e)) {
    report("exporter_gone", 0, "the exporter's handles did not arrive");
    return;
  }
  cuabi_device dev = NULL;
  MG_CHECK(cuabi_device_get(open_on, &dev));
  cuabi_buffer buffer = NULL;
  cuabi_event event = NULL;
  char detail[512];
  cuabi_status st = cuabi_buffer_open_ipc(dev, NULL, b, sizeof b, &buffer);
  snprintf(detail, sizeof detail, "%s: %s", cuabi_status_get_name(st),
           st ? cuabi_last_error_message() : "opened");
  report("buffer.exporter_gone", st != CUABI_SUCCESS && strstr(cuabi_last_error_message(), "ended"),
         detail);
  st = cuabi_event_open_ipc(dev, e, sizeof e, &event);
  snprintf(
      detail, sizeof detail, "%s: %s", cuabi_status_get_name(st),
      st ? cuabi_last_error_message() : "opened (the driver keeps a departed process's events)");
  /* The driver may open an event whose exporter left (its memory is the
   * importer's too); what matters is a status and no crash. */
  report("event.exporter_gone", st == CUABI_SUCCESS || strstr(cuabi_last_error_message(), "ended"),
         detail);
  cuabi_buffer_release(buffer);
  cuabi_event_release(event);
  cuabi_device_release(dev);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && strcmp(argv[1], "--child") == 0) return child_main(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "--exporter") == 0) return exporter_main();
  long child_device = -1;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--child-device") == 0)
      child_device = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--child-device D]\n", MG_PROG);
      return MG_EXIT_FAILED;
    }
  }
  const int32_t count = mg_device_count();
  if (count == 0) return MG_EXIT_NO_DEVICE;
  if (child_device < 0) {
    if (count < 2) {
      printf("%s: needs two devices, found %d\n", MG_PROG, count);
      return MG_EXIT_OK;
    }
    child_device = 1;
  }
  if (child_device >= count) {
    fprintf(stderr, "%s: --child-device %ld, but there are %d devices\n", MG_PROG, child_device,
            count);
    return MG_EXIT_FAILED;
  }

  cuabi_device dev = NULL;
  MG_CHECK(cuabi_device_get(0, &dev));
  cuabi_module module = mg_compile(dev, kSource, "ipc_matrix.cu");
  cuabi_function delay = mg_function(module, "delay");
  cuabi_function fill = mg_function(module, "fill");
  cuabi_stream stream = NULL;
  MG_CHECK(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &stream));
  cuabi_buffer buffer = NULL, pooled = NULL;
  MG_CHECK(cuabi_buffer_alloc(dev, N * sizeof(float), &buffer));
  cuabi_memory_pool_desc desc = CUABI_MEMORY_POOL_DESC_INIT;
  desc.flags = CUABI_MEMORY_POOL_IPC;
  cuabi_memory_pool pool = NULL;
  MG_CHECK(cuabi_memory_pool_create(dev, &desc, &pool));
  MG_CHECK(cuabi_buffer_alloc_async(dev, N * sizeof(float), pool, stream, &pooled));
  cuabi_event done = NULL;
  MG_CHECK(cuabi_event_create(dev, CUABI_EVENT_INTERPROCESS | CUABI_EVENT_DISABLE_TIMING, &done));

  int32_t clock_khz = 0; /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE */
  if (cuabi_device_get_attribute(dev, 13, &clock_khz) != CUABI_SUCCESS || clock_khz <= 0)
    clock_khz = 1500000;
  long long cycles = (long long)clock_khz * 200; /* ~200 ms */
  void* delay_args[] = {&cycles};
  const cuabi_launch_config one = mg_config(1, 1);
  MG_CHECK(cuabi_function_launch(delay, &one, stream, delay_args, 1));
  const cuabi_launch_config grid = mg_config(512, 256);
  uint64_t p1 = 0, p2 = 0;
  size_t n = N;
  float b1 = BASE_BUF, b2 = BASE_POOL;
  MG_CHECK(cuabi_buffer_get_pointer(buffer, &p1));
  MG_CHECK(cuabi_buffer_get_pointer(pooled, &p2));
  void* fill1[] = {&p1, &n, &b1};
  void* fill2[] = {&p2, &n, &b2};
  MG_CHECK(cuabi_function_launch(fill, &grid, stream, fill1, 3));
  MG_CHECK(cuabi_function_launch(fill, &grid, stream, fill2, 3));
  MG_CHECK(cuabi_event_record(done, stream));

  unsigned char hb[CUABI_IPC_HANDLE_SIZE], he[CUABI_IPC_HANDLE_SIZE], hp[CUABI_IPC_HANDLE_SIZE];
  MG_CHECK(cuabi_buffer_get_ipc_handle(buffer, hb, sizeof hb));
  MG_CHECK(cuabi_event_get_ipc_handle(done, he, sizeof he));
  MG_CHECK(cuabi_buffer_get_ipc_handle(pooled, hp, sizeof hp));
  int32_t fd = -1;
  MG_CHECK(cuabi_memory_pool_export_fd(pool, &fd));
  fd = mg_private_fd(fd);
  if (fd < 0) return MG_EXIT_FAILED;
  char xb[2 * CUABI_IPC_HANDLE_SIZE + 1], xe[sizeof xb], xp[sizeof xb];
  mg_to_hex(hb, sizeof hb, xb);
  mg_to_hex(he, sizeof he, xe);
  mg_to_hex(hp, sizeof hp, xp);
  char home_text[] = "0", other_text[16];
  snprintf(other_text, sizeof other_text, "%ld", child_device);
  char flag[] = "--child";
  char* child_argv[] = {argv[0], flag, home_text, other_text, xb, xe, xp, NULL};
  printf(
      "%s: parent on GPU 0 exported a buffer, a pool allocation and an event; child on GPU %ld\n",
      MG_PROG, child_device);
  pid_t pid = 0;
  if (mg_spawn_self(child_argv, -1, fd, &pid) != 0) return MG_EXIT_FAILED;
  close(fd);
  int status = 0;
  const int waited = mg_wait_deadline(pid, mg_now() + 300, &status);
  if (waited != 0) return waited > 0 ? MG_EXIT_TIMEOUT : MG_EXIT_FAILED;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char what[128];
    mg_describe_status(status, what, sizeof what);
    fprintf(stderr, "%s: the child (pid %ld, GPU %ld) failed: %s\n", MG_PROG, (long)pid,
            child_device, what);
    return MG_EXIT_PEER_FAILED;
  }

  /* The child wrote 2x + 1 into both. */
  float* host = (float*)malloc(N * sizeof(float));
  if (!host) return MG_EXIT_FAILED;
  size_t bad = 0;
  MG_CHECK(cuabi_buffer_copy_to_host(buffer, 0, host, N * sizeof(float)));
  for (size_t i = 0; i < N; ++i) bad += host[i] != 2.0f * (BASE_BUF + (float)(i % 1000)) + 1.0f;
  MG_CHECK(cuabi_stream_synchronize(stream));
  MG_CHECK(cuabi_buffer_copy_to_host(pooled, 0, host, N * sizeof(float)));
  for (size_t i = 0; i < N; ++i) bad += host[i] != 2.0f * (BASE_POOL + (float)(i % 1000)) + 1.0f;
  free(host);
  char detail[96];
  snprintf(detail, sizeof detail, "%zu of %zu values not what the child wrote", bad, 2 * N);
  report("parent.readback", bad == 0, detail);

  exporter_gone(0);
  if (child_device != 0) exporter_gone((int32_t)child_device);

  cuabi_event_release(done);
  cuabi_buffer_release(pooled);
  cuabi_buffer_release(buffer);
  cuabi_memory_pool_release(pool);
  cuabi_stream_release(stream);
  cuabi_function_release(delay);
  cuabi_function_release(fill);
  cuabi_module_release(module);
  cuabi_device_release(dev);
  if (failures) {
    fprintf(stderr, "%s: %d case%s failed\n", MG_PROG, failures, failures == 1 ? "" : "s");
    return MG_EXIT_FAILED;
  }
  printf("%s: PASSED: every case opened and verified, or refused naming the devices\n", MG_PROG);
  return MG_EXIT_OK;
}
