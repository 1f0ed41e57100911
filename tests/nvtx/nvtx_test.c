/* NVTX annotations through the C API, recorded by record_nvtx.c (named by
 * NVTX_INJECTION64_PATH; CUABI_NVTX_RECORD names the file it writes): the
 * order, domains, colours and messages the tool receives, and the refusals
 * the core makes with a tool attached or not. No device is needed.
 *
 *   nvtx_test            expects the tool (checks what it recorded)
 *   nvtx_test --no-tool  expects none: the same calls and refusals */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuabi/cuabi.h"

static int failures;

#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      failures++;                                          \
    }                                                      \
  } while (0)

static void expect_ok(cuabi_status s, const char* what) {
  EXPECT(s == CUABI_SUCCESS, "%s: %s: %s", what, cuabi_status_get_name(s),
         cuabi_last_error_message());
}

static void expect_refused(cuabi_status s, const char* what, const char* needle) {
  EXPECT(s == CUABI_ERROR_INVALID_ARGUMENT, "%s answered %s, not CUABI_ERROR_INVALID_ARGUMENT",
         what, cuabi_status_get_name(s));
  EXPECT(strstr(cuabi_last_error_message(), needle) != NULL, "%s: message '%s' lacks '%s'", what,
         cuabi_last_error_message(), needle);
}

static void* other_thread(void* arg) {
  /* Ranges are per thread: this thread has none of the main thread's open. */
  cuabi_status s = cuabi_nvtx_range_pop("cuabi.test");
  *(cuabi_status*)arg = s;
  /* A started range ends on any thread. */
  return NULL;
}

int main(int argc, char** argv) {
  const int with_tool = !(argc > 1 && strcmp(argv[1], "--no-tool") == 0);
  const char* record = getenv("CUABI_NVTX_RECORD");
  if (with_tool && !record) {
    fprintf(stderr, "CUABI_NVTX_RECORD is not set\n");
    return 1;
  }
  /* The tool opens the file at the first annotation, to append. */
  if (record) remove(record);

  expect_ok(cuabi_nvtx_range_push(NULL, "outer", 0), "push default");
  expect_ok(cuabi_nvtx_range_push("cuabi.test", "inner", 0xFF00FF00u), "push named");
  expect_ok(cuabi_nvtx_mark("cuabi.test", "tick", 0), "mark");
  uint64_t id = 0;
  expect_ok(cuabi_nvtx_range_start("cuabi.test", "async", 0x80102030u, &id), "start");
  EXPECT(id != 0, "range id is 0");

  cuabi_status from_thread = CUABI_SUCCESS;
  pthread_t t;
  pthread_create(&t, NULL, other_thread, &from_thread);
  pthread_join(t, NULL);
  EXPECT(from_thread == CUABI_ERROR_INVALID_ARGUMENT,
         "a pop on a thread with no open range answered %s", cuabi_status_get_name(from_thread));

  /* Pops are per domain: the default domain's range is still open below the
   * named one. */
  expect_ok(cuabi_nvtx_range_pop(NULL), "pop default");
  expect_ok(cuabi_nvtx_range_pop("cuabi.test"), "pop named");
  expect_ok(cuabi_nvtx_range_end(id), "end");

  /* Refusals, the same with a tool or without. */
  expect_refused(cuabi_nvtx_range_pop("cuabi.test"), "pop with none open",
                 "no range of domain 'cuabi.test' is open on this thread");
  expect_refused(cuabi_nvtx_range_pop(NULL), "pop default with none open",
                 "no range of NVTX's default domain is open on this thread");
  expect_refused(cuabi_nvtx_range_end(id), "end twice", "is not open");
  expect_refused(cuabi_nvtx_range_end(0), "end 0", "range 0 is not open");
  expect_refused(cuabi_nvtx_range_push("", "x", 0), "empty domain", "domain is an empty name");
  expect_refused(cuabi_nvtx_range_push(NULL, NULL, 0), "NULL message", "message is NULL");
  expect_refused(cuabi_nvtx_mark(NULL, NULL, 0), "NULL mark message", "message is NULL");
  expect_refused(cuabi_nvtx_range_start(NULL, "x", 0, NULL), "NULL id", "id is NULL");
  expect_refused(cuabi_nvtx_range_start(NULL, NULL, 0, &id), "NULL start message",
                 "message is NULL");
  /* A second domain, used twice: created once. */
  expect_ok(cuabi_nvtx_mark("cuabi.other", "once", 0), "mark other");
  expect_ok(cuabi_nvtx_mark("cuabi.other", "twice", 0), "mark other again");

  if (with_tool) {
    static const char* const want[] = {
        "push - - outer",
        "create cuabi.test",
        "push cuabi.test ff00ff00 inner",
        "mark cuabi.test - tick",
        "start cuabi.test 80102030 async",
        "pop -",
        "pop cuabi.test",
        "end cuabi.test",
        "create cuabi.other",
        "mark cuabi.other - once",
        "mark cuabi.other - twice",
    };
    const size_t n = sizeof want / sizeof want[0];
    FILE* f = fopen(record, "r");
    EXPECT(f != NULL, "the tool wrote no %s (was NVTX_INJECTION64_PATH honoured?)", record);
    if (f) {
      char buf[512];
      size_t i = 0;
      while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        if (i < n) EXPECT(strcmp(buf, want[i]) == 0, "line %zu: '%s', want '%s'", i + 1, buf, want[i]);
        else EXPECT(0, "line %zu: '%s' is more than expected", i + 1, buf);
        i++;
      }
      EXPECT(i == n, "the tool recorded %zu lines, want %zu", i, n);
      fclose(f);
    }
  }
  if (failures) return 1;
  printf("nvtx: %s, every annotation and refusal as expected\n",
         with_tool ? "recorded by the test tool" : "no tool attached");
  return 0;
}
