/* What the C tests against the stand-in driver (driver_log_test.c,
 * health_test.c) share: a failure counter with EXPECT, and the stand-in's
 * fake_fail_entry control, found in the library $CUABI_DRIVER_PATH names. */
#ifndef CUABI_TESTS_FAULT_STAND_IN_H
#define CUABI_TESTS_FAULT_STAND_IN_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, "\n");                                  \
      failures++;                                             \
    }                                                         \
  } while (0)

typedef void (*fail_entry_fn)(const char* name, long nth, int cu, int nvrtc);

/* The stand-in's fake_fail_entry, or NULL (said on stderr) when
 * $CUABI_DRIVER_PATH names no stand-in. */
static fail_entry_fn stand_in_fail_entry(void) {
  const char* path = getenv("CUABI_DRIVER_PATH");
  void* fake = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  fail_entry_fn f = fake ? (fail_entry_fn)dlsym(fake, "fake_fail_entry") : NULL;
  if (!f) fprintf(stderr, "CUABI_DRIVER_PATH must name the stand-in driver\n");
  return f;
}

#endif /* CUABI_TESTS_FAULT_STAND_IN_H */
