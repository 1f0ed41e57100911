/* The other process of the IPC tests: opens what the parent exported, checks
 * it and answers through the memory itself.
 *   ipc_child mem   <buffer hex> <event hex> <expect> <write>
 *   ipc_child pool  <buffer hex> <fd> <expect> <write>
 *   ipc_child freed <buffer hex>
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

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  unsigned char handle[CUABI_IPC_HANDLE_SIZE];
  if (from_hex(argv[2], handle, sizeof handle)) return fail("the handle is not hex");
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
  } else {
    return 2;
  }
  cuabi_buffer_release(buffer);
  cuabi_device_release(device);
  return rc;
}
