/* The other process of the IPC tests: opens what the parent exported, checks
 * it and answers through the memory itself.
 *   ipc_child mem   <buffer hex> <event hex> <expect> <write>
 *   ipc_child pool  <buffer hex> <fd> <expect> <write>
 *   ipc_child freed <buffer hex>
 *   ipc_child twice <buffer hex> <expect>
 *   ipc_child nojitlink      (run with CUABI_NVJITLINK_PATH pointing nowhere)
 * Exits 0 when every check held; prints what failed otherwise. */
#include <cuabi/cuabi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int from_hex(const char* hex, unsigned char* out, size_t n) {
  if (strlen(hex) != 2 * n) return 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 1;
    out[i] = (unsigned char)v;
  }
  return 0;
}

static int fail(const char* step) {
  fprintf(stderr, "ipc_child: %s: %s\n", step, cuabi_last_error_message());
  return 1;
}

/* Checks every u32 of `buffer` is `expect`, then fills it with `write`. */
static int check_and_write(cuabi_buffer buffer, uint32_t expect, uint32_t write) {
  size_t size = 0;
  if (cuabi_buffer_get_size(buffer, &size)) return fail("get_size");
  uint32_t* host = (uint32_t*)malloc(size);
  if (!host) return 1;
  if (cuabi_buffer_copy_to_host(buffer, 0, host, size)) return fail("copy_to_host");
  for (size_t i = 0; i < size / 4; ++i) {
    if (host[i] != expect) {
      fprintf(stderr, "ipc_child: element %zu is %u, expected %u\n", i, host[i], expect);
      free(host);
      return 1;
    }
  }
  free(host);
  if (cuabi_buffer_fill(buffer, 0, write, 4, size / 4)) return fail("fill");
  return 0;
}

/* With nvJitLink out of reach: asking for it answers NOT_FOUND naming the
 * path tried; AUTO falls back to the driver's linker, which links. */
static int no_jitlink(cuabi_device device) {
  const char* where = getenv("CUABI_NVJITLINK_PATH");
  cuabi_link_desc desc = CUABI_LINK_DESC_INIT;
  desc.backend = CUABI_LINK_BACKEND_NVJITLINK;
  cuabi_linker linker = NULL;
  if (cuabi_linker_create(device, &desc, &linker) != CUABI_ERROR_NOT_FOUND || !where ||
      !strstr(cuabi_last_error_message(), where) ||
      !strstr(cuabi_last_error_message(), "CUABI_NVJITLINK_PATH"))
    return fail("asking for nvJitLink where it is missing");
  printf("refused: %s\n", cuabi_last_error_message());
  static const char* const sources[2] = {
      "extern \"C\" __device__ float twice(float x);\n"
      "extern \"C\" __global__ void apply(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n",
      "extern \"C\" __device__ float twice(float x) { return 2.0f * x; }\n"};
  int32_t major = 0, minor = 0;
  cuabi_device_get_compute_capability(device, &major, &minor);
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
  const char* options[2] = {arch, "-rdc=true"};
  desc.backend = CUABI_LINK_BACKEND_AUTO;
  if (cuabi_linker_create(device, &desc, &linker)) return fail("linker_create with AUTO");
  cuabi_link_backend backend = CUABI_LINK_BACKEND_AUTO;
  cuabi_linker_get_backend(linker, &backend);
  if (backend != CUABI_LINK_BACKEND_DRIVER) return fail("AUTO did not fall back to the driver");
  for (int i = 0; i < 2; ++i) {
    cuabi_program p = NULL;
    if (cuabi_program_create(sources[i], NULL, 0, NULL, NULL, &p) ||
        cuabi_program_compile(p, 2, options) || cuabi_linker_add_program(linker, p))
      return fail("program");
    cuabi_program_release(p);
  }
  cuabi_module module = NULL;
  cuabi_function f = NULL;
  if (cuabi_linker_link(linker, &module) || cuabi_module_get_function(module, "apply", &f))
    return fail("link through the driver");
  cuabi_buffer b = NULL;
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = (float)i;
  uint64_t p = 0;
  void* params[1] = {&p};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.block_x = 32;
  if (cuabi_buffer_alloc(device, sizeof x, &b) || cuabi_buffer_copy_from_host(b, 0, x, sizeof x) ||
      cuabi_buffer_get_pointer(b, &p) || cuabi_function_launch(f, &c, NULL, params, 1) ||
      cuabi_buffer_copy_to_host(b, 0, x, sizeof x))
    return fail("run the linked kernel");
  for (int i = 0; i < 32; ++i)
    if (x[i] != 2.0f * (float)i) return fail("the linked kernel's result");
  printf("AUTO linked through the driver and the kernel ran\n");
  cuabi_buffer_release(b);
  cuabi_function_release(f);
  cuabi_module_release(module);
  cuabi_linker_release(linker);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  unsigned char handle[CUABI_IPC_HANDLE_SIZE];
  if (argc >= 3 && from_hex(argv[2], handle, sizeof handle)) return fail("the handle is not hex");
  cuabi_device device = NULL;
  if (cuabi_device_get(0, &device)) return fail("device_get");
  cuabi_buffer buffer = NULL;
  int rc = 0;
  if (strcmp(argv[1], "mem") == 0 && argc == 6) {
    unsigned char event_handle[CUABI_IPC_HANDLE_SIZE];
    if (from_hex(argv[3], event_handle, sizeof event_handle)) return fail("event hex");
    cuabi_event event = NULL;
    if (cuabi_event_open_ipc(device, event_handle, sizeof event_handle, &event))
      return fail("event_open_ipc");
    if (cuabi_event_synchronize(event)) return fail("event_synchronize");
    if (cuabi_buffer_open_ipc(device, NULL, handle, sizeof handle, &buffer))
      return fail("buffer_open_ipc");
    cuabi_buffer_kind kind;
    if (cuabi_buffer_get_kind(buffer, &kind) || kind != CUABI_BUFFER_IPC) return fail("kind");
    rc = check_and_write(buffer, (uint32_t)strtoul(argv[4], NULL, 0),
                         (uint32_t)strtoul(argv[5], NULL, 0));
    cuabi_event_release(event);
  } else if (strcmp(argv[1], "pool") == 0 && argc == 6) {
    cuabi_memory_pool pool = NULL;
    if (cuabi_memory_pool_import_fd(device, atoi(argv[3]), &pool)) return fail("pool_import_fd");
    if (cuabi_buffer_open_ipc(device, NULL, handle, sizeof handle, &buffer) !=
            CUABI_ERROR_INVALID_ARGUMENT ||
        !strstr(cuabi_last_error_message(), "pass the pool"))
      return fail("a pool allocation's handle without its pool was not refused");
    if (cuabi_buffer_open_ipc(device, pool, handle, sizeof handle, &buffer))
      return fail("buffer_open_ipc with the pool");
    rc = check_and_write(buffer, (uint32_t)strtoul(argv[4], NULL, 0),
                         (uint32_t)strtoul(argv[5], NULL, 0));
    cuabi_buffer_release(buffer);
    buffer = NULL;
    cuabi_memory_pool_release(pool);
  } else if (strcmp(argv[1], "freed") == 0) {
    const cuabi_status st = cuabi_buffer_open_ipc(device, NULL, handle, sizeof handle, &buffer);
    if (st == CUABI_SUCCESS) {
      fprintf(stderr, "ipc_child: a freed buffer's handle opened\n");
      rc = 1;
    } else if (!strstr(cuabi_last_error_message(), "cuIpcOpenMemHandle")) {
      rc = fail("the refusal does not name cuIpcOpenMemHandle");
    } else {
      printf("refused: %s\n", cuabi_last_error_message());
    }
  } else if (strcmp(argv[1], "twice") == 0 && argc == 4) {
    /* One handle opened twice in one process: both open the same memory
     * (the driver counts the opens), or the second is refused by name. */
    cuabi_buffer second = NULL;
    if (cuabi_buffer_open_ipc(device, NULL, handle, sizeof handle, &buffer))
      return fail("first open");
    const cuabi_status st = cuabi_buffer_open_ipc(device, NULL, handle, sizeof handle, &second);
    const uint32_t expect = (uint32_t)strtoul(argv[3], NULL, 0);
    if (st == CUABI_SUCCESS) {
      uint64_t a = 0, b = 0;
      cuabi_buffer_get_pointer(buffer, &a);
      cuabi_buffer_get_pointer(second, &b);
      printf("twice: both opens succeeded (%s mapping)\n", a == b ? "one" : "two");
      cuabi_buffer_release(buffer);  /* the second stays usable */
      buffer = NULL;
      rc = check_and_write(second, expect, expect);
      cuabi_buffer_release(second);
    } else if (!strstr(cuabi_last_error_message(), "cuIpcOpenMemHandle")) {
      rc = fail("the second open's refusal does not name cuIpcOpenMemHandle");
    } else {
      printf("twice: the second open was refused: %s\n", cuabi_last_error_message());
      rc = check_and_write(buffer, expect, expect);
    }
  } else if (strcmp(argv[1], "nojitlink") == 0) {
    rc = no_jitlink(device);
  } else {
    return 2;
  }
  cuabi_buffer_release(buffer);
  cuabi_device_release(device);
  return rc;
}
