/*
 * ipc_peer: two processes, two GPUs, one buffer.
 *
 * The parent, on GPU 0, allocates a buffer, queues a slow kernel and then a
 * kernel that fills the buffer, and records an interprocess event after
 * them, without waiting. It exports the buffer and the event as cuabi IPC
 * handles (128 bytes each) and starts a child process (posix_spawn of this
 * same program, never fork) that gets them as hex on its command line.
 *
 * The child, on GPU 1, opens the event and makes its stream wait on it, so
 * it reads only once the parent's kernels are done. Where GPU 1 can reach
 * GPU 0's memory (peer access) it opens the buffer on GPU 1 and a kernel
 * there reads and rewrites it in place, straight over the link. Where it
 * cannot, it opens the buffer on GPU 0, copies it to GPU 1 and back (the
 * copy path cuabi_buffer_get_copy_path reports: through host memory), with
 * the kernel on GPU 1 in between. The kernel checks every value the parent
 * wrote and writes 2 * x + 1. The parent waits for the child (with a
 * deadline) and checks every value.
 *
 *   ipc_peer [--child-device D] [--elements N] [--timeout S]
 *
 *   --child-device D  the child's GPU (default 1). 0 runs the child on the
 *                     parent's GPU: IPC between processes without a peer
 *                     (a test of the flow on one GPU)
 *   --elements N      buffer length in floats (default 16777216)
 *   --timeout S       seconds the parent waits for the child (default 120)
 *
 * With one device and no --child-device: prints "ipc_peer: needs two
 * devices, found 1" and exits 0. Exit status: see mg_util.h.
 */
#define _POSIX_C_SOURCE 200809L
#define MG_PROG "ipc_peer"
#include "mg_util.h"

static const char* kSource =
    "__device__ float expected(size_t i) { return (float)(i % 1000) * 0.5f; }\n"
    "// One thread spins for `cycles` clock cycles: the work after it waits.\n"
    "extern \"C\" __global__ void delay(long long cycles) {\n"
    "  const long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void fill(float* x, size_t n) {\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    x[i] = expected(i);\n"
    "}\n"
    "// Counts the values that are not what fill wrote, and writes 2x + 1.\n"
    "extern \"C\" __global__ void check_and_transform(float* x, size_t n,\n"
    "                                                 unsigned long long* bad) {\n"
    "  unsigned long long mine = 0;\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x) {\n"
    "    const float v = x[i];\n"
    "    if (v != expected(i)) ++mine;\n"
    "    x[i] = 2.0f * v + 1.0f;\n"
    "  }\n"
    "  if (mine) atomicAdd(bad, mine);\n"
    "}\n";

#define THREADS 256u
#define BLOCKS 2048u

static float expected(size_t i) { return (float)(i % 1000) * 0.5f; }

static long parse_long(const char* flag, const char* text, long min) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || !end || *end || v < min) {
    fprintf(stderr, "%s: %s wants a number >= %ld, not '%s'\n", MG_PROG, flag, min, text);
    exit(MG_EXIT_FAILED);
  }
  return v;
}

/* Launches check_and_transform over `buf` on `stream`; `bad` counts. */
static void launch_check(cuabi_function f, cuabi_buffer buf, size_t n, cuabi_buffer bad,
                         cuabi_stream stream) {
  uint64_t px = 0, pbad = 0;
  MG_CHECK(cuabi_buffer_get_pointer(buf, &px));
  MG_CHECK(cuabi_buffer_get_pointer(bad, &pbad));
  void* args[] = {&px, &n, &pbad};
  const size_t sizes[] = {sizeof px, sizeof n, sizeof pbad};
  const cuabi_launch_config config = mg_config(BLOCKS, THREADS);
  MG_CHECK(cuabi_function_launch_sized(f, &config, stream, args, sizes, 3));
}

/* The child: ipc_peer --child HOME MINE N BUFFER_HEX EVENT_HEX */
static int child_main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "%s child: expected HOME MINE N BUFFER_HEX EVENT_HEX\n", MG_PROG);
    return MG_EXIT_FAILED;
  }
  const int32_t home_ordinal = (int32_t)parse_long("HOME", argv[2], 0);
  const int32_t my_ordinal = (int32_t)parse_long("MINE", argv[3], 0);
  const size_t n = (size_t)parse_long("N", argv[4], 1);
  unsigned char buf_handle[CUABI_IPC_HANDLE_SIZE], ev_handle[CUABI_IPC_HANDLE_SIZE];
  if (mg_from_hex(argv[5], buf_handle, sizeof buf_handle) ||
      mg_from_hex(argv[6], ev_handle, sizeof ev_handle)) {
    fprintf(stderr, "%s child: an IPC handle is not %d bytes of hex\n", MG_PROG,
            CUABI_IPC_HANDLE_SIZE);
    return MG_EXIT_FAILED;
  }

  cuabi_device home = NULL, mine = NULL;
  MG_CHECK(cuabi_device_get(home_ordinal, &home));
  MG_CHECK(cuabi_device_get(my_ordinal, &mine));
  char name[256];
  mg_device_name(mine, name, sizeof name);

  /* The parent's event, opened on the parent's device; my stream waits on it. */
  cuabi_event parent_done = NULL;
  MG_CHECK(cuabi_event_open_ipc(home, ev_handle, sizeof ev_handle, &parent_done));
  cuabi_stream stream = NULL;
  MG_CHECK(cuabi_stream_create(mine, CUABI_STREAM_NON_BLOCKING, 0, &stream));
  MG_CHECK(cuabi_stream_wait_event(stream, parent_done));

  cuabi_module module = mg_compile(mine, kSource, "ipc_peer.cu");
  cuabi_function check = mg_function(module, "check_and_transform");
  cuabi_buffer bad = NULL;
  MG_CHECK(cuabi_buffer_alloc(mine, sizeof(unsigned long long), &bad));
  MG_CHECK(cuabi_buffer_memset_async(bad, 0, 0, sizeof(unsigned long long), stream));

  int32_t peer = 0;
  if (home_ordinal != my_ordinal) MG_CHECK(cuabi_device_can_access_peer(mine, home, &peer));
  const char* how = NULL;
  cuabi_buffer shared = NULL, local = NULL;
  cuabi_stream home_stream = NULL;
  if (home_ordinal == my_ordinal || peer) {
    /* Mapped into my device's context: the kernel reads GPU home's memory
     * directly (the driver enables peer access for the mapping). */
    MG_CHECK(cuabi_buffer_open_ipc(mine, NULL, buf_handle, sizeof buf_handle, &shared));
    launch_check(check, shared, n, bad, stream);
    how = home_ordinal == my_ordinal
              ? "on the same GPU (no peer needed)"
              : "directly over peer access (the IPC mapping on the child's GPU)";
  } else {
    /* No peer access: open it where it lives, copy through the host. */
    MG_CHECK(cuabi_buffer_open_ipc(home, NULL, buf_handle, sizeof buf_handle, &shared));
    MG_CHECK(cuabi_buffer_alloc(mine, n * sizeof(float), &local));
    cuabi_copy_path path = CUABI_COPY_SAME_DEVICE;
    MG_CHECK(cuabi_buffer_get_copy_path(local, shared, &path));
    MG_CHECK(cuabi_buffer_copy_async(local, 0, shared, 0, n * sizeof(float), stream));
    launch_check(check, local, n, bad, stream);
    /* Back to the parent's memory, in order on a stream of its device. */
    cuabi_event transformed = NULL;
    MG_CHECK(cuabi_event_create(mine, CUABI_EVENT_DISABLE_TIMING, &transformed));
    MG_CHECK(cuabi_event_record(transformed, stream));
    MG_CHECK(cuabi_stream_create(home, CUABI_STREAM_NON_BLOCKING, 0, &home_stream));
    MG_CHECK(cuabi_stream_wait_event(home_stream, transformed));
    MG_CHECK(cuabi_buffer_copy_async(shared, 0, local, 0, n * sizeof(float), home_stream));
    MG_CHECK(cuabi_stream_synchronize(home_stream));
    cuabi_event_release(transformed);
    how = path == CUABI_COPY_THROUGH_HOST
              ? "by copies through host memory (no peer access between the GPUs)"
              : "by copies between the GPUs";
  }
  unsigned long long wrong = 0;
  MG_CHECK(cuabi_buffer_copy_to_host_async(bad, 0, &wrong, sizeof wrong, stream));
  MG_CHECK(cuabi_stream_synchronize(stream));
  if (wrong) {
    fprintf(stderr, "%s child: %llu of %zu values were not what the parent wrote\n", MG_PROG, wrong,
            n);
    return MG_EXIT_FAILED;
  }
  printf(
      "%s child (pid %ld, GPU %d, %s): waited on the parent's event, read GPU %d's buffer %s: "
      "%zu values verified, 2x+1 written back\n",
      MG_PROG, (long)getpid(), my_ordinal, name, home_ordinal, how, n);

  cuabi_stream_release(home_stream);
  cuabi_buffer_release(local);
  cuabi_buffer_release(shared);
  cuabi_buffer_release(bad);
  cuabi_function_release(check);
  cuabi_module_release(module);
  cuabi_stream_release(stream);
  cuabi_event_release(parent_done);
  cuabi_device_release(mine);
  cuabi_device_release(home);
  return MG_EXIT_OK;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && strcmp(argv[1], "--child") == 0) return child_main(argc, argv);

  long child_device = -1, timeout = 120;
  size_t n = (size_t)1 << 24;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--child-device") == 0)
      child_device = parse_long(argv[i], argv[i + 1], 0), ++i;
    else if (i + 1 < argc && strcmp(argv[i], "--elements") == 0)
      n = (size_t)parse_long(argv[i], argv[i + 1], 1), ++i;
    else if (i + 1 < argc && strcmp(argv[i], "--timeout") == 0)
      timeout = parse_long(argv[i], argv[i + 1], 1), ++i;
    else {
      fprintf(stderr,
              "usage: %s [--child-device D] [--elements N] [--timeout S]\n"
              "  (unknown or incomplete argument '%s')\n",
              MG_PROG, argv[i]);
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
    fprintf(stderr, "%s: --child-device %ld, but there %s only %d device%s\n", MG_PROG,
            child_device, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
    return MG_EXIT_FAILED;
  }

  cuabi_device dev = NULL;
  MG_CHECK(cuabi_device_get(0, &dev));
  char name[256];
  mg_device_name(dev, name, sizeof name);
  cuabi_module module = mg_compile(dev, kSource, "ipc_peer.cu");
  cuabi_function delay = mg_function(module, "delay");
  cuabi_function fill = mg_function(module, "fill");
  cuabi_stream stream = NULL;
  MG_CHECK(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &stream));
  cuabi_buffer buffer = NULL;
  MG_CHECK(cuabi_buffer_alloc(dev, n * sizeof(float), &buffer));
  cuabi_event done = NULL;
  MG_CHECK(cuabi_event_create(dev, CUABI_EVENT_INTERPROCESS | CUABI_EVENT_DISABLE_TIMING, &done));

  /* A slow kernel (~200 ms), then the fill, then the event: queued, not waited for. */
  int32_t clock_khz = 0; /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE */
  if (cuabi_device_get_attribute(dev, 13, &clock_khz) != CUABI_SUCCESS || clock_khz <= 0)
    clock_khz = 1500000;
  long long cycles = (long long)clock_khz * 200;
  void* delay_args[] = {&cycles};
  const size_t delay_sizes[] = {sizeof cycles};
  const cuabi_launch_config one = mg_config(1, 1);
  MG_CHECK(cuabi_function_launch_sized(delay, &one, stream, delay_args, delay_sizes, 1));
  uint64_t ptr = 0;
  MG_CHECK(cuabi_buffer_get_pointer(buffer, &ptr));
  void* fill_args[] = {&ptr, &n};
  const size_t fill_sizes[] = {sizeof ptr, sizeof n};
  const cuabi_launch_config grid = mg_config(BLOCKS, THREADS);
  MG_CHECK(cuabi_function_launch_sized(fill, &grid, stream, fill_args, fill_sizes, 2));
  MG_CHECK(cuabi_event_record(done, stream));

  unsigned char buf_handle[CUABI_IPC_HANDLE_SIZE], ev_handle[CUABI_IPC_HANDLE_SIZE];
  MG_CHECK(cuabi_buffer_get_ipc_handle(buffer, buf_handle, sizeof buf_handle));
  MG_CHECK(cuabi_event_get_ipc_handle(done, ev_handle, sizeof ev_handle));
  char buf_hex[2 * CUABI_IPC_HANDLE_SIZE + 1], ev_hex[2 * CUABI_IPC_HANDLE_SIZE + 1];
  mg_to_hex(buf_handle, sizeof buf_handle, buf_hex);
  mg_to_hex(ev_handle, sizeof ev_handle, ev_hex);
  char home_text[16], mine_text[16], n_text[32];
  snprintf(home_text, sizeof home_text, "%d", 0);
  snprintf(mine_text, sizeof mine_text, "%ld", child_device);
  snprintf(n_text, sizeof n_text, "%zu", n);
  char child_flag[] = "--child";
  char* child_argv[] = {argv[0], child_flag, home_text, mine_text, n_text, buf_hex, ev_hex, NULL};

  printf(
      "%s: parent (pid %ld, GPU 0, %s) exported a %zu-byte buffer and an interprocess "
      "event; starting the child on GPU %ld\n",
      MG_PROG, (long)getpid(), name, n * sizeof(float), child_device);
  pid_t pid = 0;
  if (mg_spawn_self(child_argv, -1, -1, &pid) != 0) return MG_EXIT_FAILED;
  int status = 0;
  const int waited = mg_wait_deadline(pid, mg_now() + (double)timeout, &status);
  if (waited != 0) {
    if (waited > 0)
      fprintf(stderr, "%s: the child (pid %ld) did not finish within %ld s; killed it\n", MG_PROG,
              (long)pid, timeout);
    return waited > 0 ? MG_EXIT_TIMEOUT : MG_EXIT_FAILED;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char what[128];
    mg_describe_status(status, what, sizeof what);
    fprintf(stderr, "%s: the child (pid %ld, GPU %ld) failed: %s\n", MG_PROG, (long)pid,
            child_device, what);
    return MG_EXIT_PEER_FAILED;
  }

  /* The child is done with the memory: check what it wrote. */
  float* host = (float*)malloc(n * sizeof(float));
  if (!host) return MG_EXIT_FAILED;
  MG_CHECK(cuabi_buffer_copy_to_host(buffer, 0, host, n * sizeof(float)));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float want = 2.0f * expected(i) + 1.0f;
    if (host[i] != want) {
      if (bad < 5)
        fprintf(stderr, "%s: element %zu is %g, expected %g\n", MG_PROG, i, host[i], want);
      ++bad;
    }
  }
  free(host);
  if (bad) {
    fprintf(stderr, "%s: %zu of %zu values are not what the child should have written\n", MG_PROG,
            bad, n);
    return MG_EXIT_FAILED;
  }
  printf("%s: PASSED: the parent read back the child's %zu results (GPU 0 -> GPU %ld -> GPU 0)\n",
         MG_PROG, n, child_device);

  cuabi_event_release(done);
  cuabi_buffer_release(buffer);
  cuabi_stream_release(stream);
  cuabi_function_release(delay);
  cuabi_function_release(fill);
  cuabi_module_release(module);
  cuabi_device_release(dev);
  return MG_EXIT_OK;
}
