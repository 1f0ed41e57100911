/* The driver's log through the C API, against the stand-in driver (which
 * logs an injected failure as the real driver does): a failing call's
 * message ends with the lines the driver logged during it, and only those;
 * cuabi_driver_log_read gives the kept lines (all, or the last N) and
 * cuabi_driver_log_dump writes them to a file; bad paths are refused.
 *   driver_log_test            the stand-in keeps a log
 *   driver_log_test --no-logs  it keeps none (FAKE_CUDA_NO_LOGS=1) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "cuabi/cuabi.h"
#include "stand_in.h"

static char* read_log(size_t last) {
  size_t size = 0;
  if (cuabi_driver_log_read(last, NULL, &size) != CUABI_SUCCESS) return NULL;
  char* buf = malloc(size);
  if (!buf || cuabi_driver_log_read(last, buf, &size) != CUABI_SUCCESS) {
    free(buf);
    return NULL;
  }
  return buf;
}

static size_t count_lines(const char* s) {
  size_t n = 0;
  for (; *s; ++s) n += *s == '\n';
  return n;
}

int main(int argc, char** argv) {
  const int no_logs = argc > 1 && strcmp(argv[1], "--no-logs") == 0;
  fail_entry_fn fail_entry = stand_in_fail_entry();
  if (!fail_entry) return 1;
  cuabi_device dev = NULL;
  if (cuabi_device_get(0, &dev) != CUABI_SUCCESS) {
    fprintf(stderr, "no device on the stand-in: %s\n", cuabi_last_error_message());
    return 1;
  }
  cuabi_buffer b = NULL;

  if (no_logs) {
    size_t size = 0;
    cuabi_status st = cuabi_driver_log_read(0, NULL, &size);
    EXPECT(st == CUABI_ERROR_NOT_SUPPORTED, "read answered %s", cuabi_status_get_name(st));
    EXPECT(strstr(cuabi_last_error_message(), "keeps no log; CUDA 12.9 drivers and later do"),
           "message: %s", cuabi_last_error_message());
    EXPECT(cuabi_driver_log_dump("/tmp/unused") == CUABI_ERROR_NOT_SUPPORTED, "dump");
    fail_entry("cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 0);
    st = cuabi_buffer_alloc(dev, 1024, &b);
    EXPECT(st == CUABI_ERROR_OUT_OF_MEMORY, "alloc answered %s", cuabi_status_get_name(st));
    EXPECT(!strstr(cuabi_last_error_message(), "the driver logged"), "message: %s",
           cuabi_last_error_message());
  } else {
    char* before = read_log(0);
    EXPECT(before && before[0] == 0, "the log is not empty before any failure: %s",
           before ? before : "(read failed)");
    free(before);

    fail_entry("cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 0);
    cuabi_status st = cuabi_buffer_alloc(dev, 1024, &b);
    EXPECT(st == CUABI_ERROR_OUT_OF_MEMORY, "alloc answered %s", cuabi_status_get_name(st));
    EXPECT(strstr(cuabi_last_error_message(),
                  "; the driver logged: stand-in: cuMemAlloc fails as told | Returning 2 "
                  "(CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc"),
           "message: %s", cuabi_last_error_message());

    /* The next failure carries its own lines, not the previous call's. */
    EXPECT(cuabi_buffer_alloc(dev, 1024, &b) == CUABI_SUCCESS, "alloc: %s",
           cuabi_last_error_message());
    fail_entry("cuMemsetD8", 1, CUDA_ERROR_INVALID_VALUE, 0);
    st = cuabi_buffer_fill(b, 0, 0, 1, 16);
    EXPECT(st == CUABI_ERROR_INVALID_ARGUMENT, "fill answered %s: %s", cuabi_status_get_name(st),
           cuabi_last_error_message());
    EXPECT(strstr(cuabi_last_error_message(), "the driver logged: stand-in: cuMemsetD8 fails"),
           "message: %s", cuabi_last_error_message());
    EXPECT(!strstr(cuabi_last_error_message(), "cuMemAlloc"), "message repeats an older call: %s",
           cuabi_last_error_message());

    char* all = read_log(0);
    EXPECT(all && count_lines(all) == 4, "kept lines: %s", all ? all : "(read failed)");
    EXPECT(all && strstr(all, "][E] stand-in: cuMemAlloc fails as told\n"), "kept: %s", all);
    char* last = read_log(1);
    EXPECT(last && count_lines(last) == 1 &&
               strstr(last, "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemsetD8\n"),
           "last line: %s", last ? last : "(read failed)");

    char path[] = "/tmp/cuabi-driver-log-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    close(fd);
    EXPECT(cuabi_driver_log_dump(path) == CUABI_SUCCESS, "dump: %s", cuabi_last_error_message());
    FILE* f = fopen(path, "r");
    char text[4096] = {0};
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    unlink(path);
    EXPECT(all && n == strlen(all) && memcmp(text, all, n) == 0, "the dump differs: %s", text);
    free(all);
    free(last);

    st = cuabi_driver_log_dump("/nonexistent-folder/log.txt");
    EXPECT(st == CUABI_ERROR_IO, "dump to a missing folder answered %s", cuabi_status_get_name(st));
    EXPECT(strstr(cuabi_last_error_message(), "cannot open /nonexistent-folder/log.txt"),
           "message: %s", cuabi_last_error_message());
    EXPECT(cuabi_driver_log_dump(NULL) == CUABI_ERROR_INVALID_ARGUMENT, "dump(NULL)");
    cuabi_buffer_release(b);
  }
  cuabi_device_release(dev);
  if (failures) return 1;
  printf("driver log: %s\n", no_logs ? "a driver without a log is reported, nothing added"
                                     : "failures carry their own lines; read and dump agree");
  return 0;
}
