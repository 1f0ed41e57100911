/* The faulting process of the core-dump test: sets device core dumps for
 * the contexts it will create (on or off, lightweight, no abort), then
 * writes to address 0x10 from a kernel and checks the fault is reported.
 *   coredump_child on|off <path>
 * Exits 77 when the driver cannot write dumps here (cuabi_coredump_set
 * answered CUABI_ERROR_NOT_SUPPORTED). Exits 0 when the fault was reported as CUABI_ERROR_CONTEXT_LOST, or, with
 * dumps on, whatever the driver answered (the dump file is the test). */
#include <cuabi/cuabi.h>

#include <stdio.h>
#include <string.h>

static int fail(const char* step) {
  fprintf(stderr, "coredump_child: %s: %s\n", step, cuabi_last_error_message());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int on = strcmp(argv[1], "on") == 0;
  const cuabi_status set =
      cuabi_coredump_set(on, argv[2], CUABI_COREDUMP_LIGHTWEIGHT | CUABI_COREDUMP_SKIP_ABORT);
  if (set == CUABI_ERROR_NOT_SUPPORTED) {
    printf("coredump_child: %s\n", cuabi_last_error_message());
    return 77; /* no dumps on this machine: the parent says so */
  }
  if (set) return fail("cuabi_coredump_set");
  cuabi_device dev = NULL;
  if (cuabi_device_get(0, &dev)) return fail("cuabi_device_get");
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  d.source = "extern \"C\" __global__ void poke(unsigned long long a) { *(int*)a = 1; }\n";
  d.name = "poke.cu";
  cuabi_module m = NULL;
  if (cuabi_module_compile(dev, &d, &m)) return fail("cuabi_module_compile");
  cuabi_function f = NULL;
  if (cuabi_module_get_function(m, "poke", &f)) return fail("cuabi_module_get_function");
  unsigned long long address = 0x10;
  void* params[] = {&address};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  cuabi_status st = cuabi_function_launch(f, &c, NULL, params, 1);
  if (st == CUABI_SUCCESS) st = cuabi_device_synchronize(dev);
  /* With dumps on, the driver may hand the exception to the dump and answer
   * the synchronize as it pleases; the parent judges by the dump file. */
  printf("coredump_child (%s): the fault answered %s: %s\n", argv[1], cuabi_status_get_name(st),
         st == CUABI_SUCCESS ? "" : cuabi_last_error_message());
  if (st != CUABI_ERROR_CONTEXT_LOST && !on) return 1;
  return 0;
}
