/* The other process of the virtual memory tests: receives physical memory
 * another process exported, maps it, checks it and writes it.
 *   vmm_child <socket fd> <bytes> <expect> <write> <device>
 * reads the memory's descriptor from the socket (SCM_RIGHTS), imports
 * `bytes` of it on device 0 (where the parent made it), maps it into a range
 * and gives <device> read and write access there (set-access, when it is
 * another GPU), then through a buffer of <device> over the range checks that
 * every u32 is <expect> and fills it with <write>. Exits 0 when every step
 * held; prints what failed otherwise. */
#include <cuabi/cuabi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fd_passing.h"

static int fail(const char* step) {
  fprintf(stderr, "vmm_child: %s: %s\n", step, cuabi_last_error_message());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: vmm_child <socket fd> <bytes> <expect> <write> <device>\n");
    return 2;
  }
  const int sock = atoi(argv[1]);
  const size_t bytes = (size_t)strtoull(argv[2], NULL, 0);
  const uint32_t expect = (uint32_t)strtoul(argv[3], NULL, 0);
  const uint32_t write = (uint32_t)strtoul(argv[4], NULL, 0);
  const int32_t ordinal = (int32_t)atoi(argv[5]);
  const int fd = cuabi_test_receive_fd(sock);
  close(sock);
  if (fd < 0) {
    fprintf(stderr, "vmm_child: no descriptor came over the socket\n");
    return 1;
  }
  cuabi_device home = NULL, user = NULL;
  if (cuabi_device_get(0, &home) || cuabi_device_get(ordinal, &user)) return fail("device_get");
  cuabi_physical_memory memory = NULL;
  if (cuabi_physical_memory_import_fd(home, fd, bytes, &memory)) return fail("import_fd");
  close(fd);
  cuabi_address_range range = NULL;
  if (cuabi_address_range_reserve(home, bytes, &range)) return fail("reserve");
  if (cuabi_address_range_map(range, 0, memory)) return fail("map");
  /* The range keeps the memory: the handle may go at once. */
  cuabi_physical_memory_release(memory);
  if (ordinal != 0 &&
      cuabi_address_range_set_access(range, 0, bytes, user, CUABI_VM_ACCESS_READWRITE))
    return fail("set_access for the other device");
  cuabi_buffer view = NULL;
  if (cuabi_buffer_from_range(range, user, 0, bytes, &view)) return fail("from_range");
  uint32_t* host = (uint32_t*)malloc(bytes);
  if (!host) return 1;
  if (cuabi_buffer_copy_to_host(view, 0, host, bytes)) return fail("copy_to_host");
  for (size_t i = 0; i < bytes / 4; ++i)
    if (host[i] != expect) {
      fprintf(stderr, "vmm_child: element %zu is %u, expected %u\n", i, host[i], expect);
      return 1;
    }
  free(host);
  if (cuabi_buffer_fill(view, 0, write, 4, bytes / 4)) return fail("fill");
  if (cuabi_device_synchronize(user)) return fail("synchronize");
  printf("vmm_child: device %d read %zu bytes of %u and wrote %u\n", ordinal, bytes, expect, write);
  cuabi_buffer_release(view);
  cuabi_address_range_release(range);
  cuabi_device_release(user);
  cuabi_device_release(home);
  return 0;
}
