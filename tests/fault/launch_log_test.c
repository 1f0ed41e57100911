/* The launches a sticky fault names, through the C API, against the stand-in
 * driver: launches on two streams and the default stream (plain and through
 * a plan, the plan and one stream released before the fault), a stream
 * synchronized in between (its earlier launches are not named), then a
 * sticky fault injected into cuCtxSynchronize. The message names the
 * launches not seen complete, most recent first, with kernel, grid, block,
 * shared memory, stream and number; cuabi_last_error_get_launch* give the
 * same as data; every later CONTEXT_LOST failure names them again; the
 * readers refuse bad input without touching the last error. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "cuabi/cuabi.h"
#include "stand_in.h"

static const char kSource[] = "extern \"C\" __global__ void empty2(int a, double* b) {}";

static cuabi_launch_config config(uint32_t grid, uint32_t block, uint32_t shared) {
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = grid;
  c.block_x = block;
  c.shared_mem_bytes = shared;
  return c;
}

static cuabi_status launch(cuabi_function f, uint32_t grid, uint32_t block, uint32_t shared,
                           cuabi_stream s) {
  int a = 1;
  double* b = NULL;
  void* params[] = {&a, &b};
  cuabi_launch_config c = config(grid, block, shared);
  return cuabi_function_launch(f, &c, s, params, 2);
}

static uint64_t id_of(cuabi_stream s) {
  uint64_t id = 0;
  if (cuabi_stream_get_id(s, &id) != CUABI_SUCCESS) return 0;
  return id;
}

int main(void) {
  fail_entry_fn fail_entry = stand_in_fail_entry();
  if (!fail_entry) return 1;
  cuabi_device dev = NULL;
  cuabi_module mod = NULL;
  cuabi_function f = NULL;
  cuabi_stream a = NULL, b = NULL, gone = NULL;
  if (cuabi_device_get(0, &dev) != CUABI_SUCCESS ||
      cuabi_module_load_data(dev, kSource, sizeof kSource, &mod) != CUABI_SUCCESS ||
      cuabi_module_get_function(mod, "empty2", &f) != CUABI_SUCCESS ||
      cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &a) != CUABI_SUCCESS ||
      cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &b) != CUABI_SUCCESS ||
      cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &gone) != CUABI_SUCCESS) {
    fprintf(stderr, "set-up failed: %s\n", cuabi_last_error_message());
    return 1;
  }
  const uint64_t ida = id_of(a), idb = id_of(b), idgone = id_of(gone);
  EXPECT(ida && idb && idgone && ida != idb && idb != idgone, "stream ids %llu %llu %llu",
         (unsigned long long)ida, (unsigned long long)idb, (unsigned long long)idgone);
  uint64_t id = 0;
  EXPECT(cuabi_stream_get_id(a, NULL) == CUABI_ERROR_INVALID_ARGUMENT &&
             strstr(cuabi_last_error_message(), "id is NULL"),
         "NULL id: %s", cuabi_last_error_message());
  EXPECT(cuabi_stream_get_id(NULL, &id) == CUABI_ERROR_INVALID_HANDLE, "NULL stream");

  /* Seen complete: stream a's first launch, synchronized. */
  EXPECT(launch(f, 1, 1, 0, a) == CUABI_SUCCESS, "launch 1 on a");
  EXPECT(cuabi_stream_synchronize(a) == CUABI_SUCCESS, "synchronize a");
  /* Not seen: in launch order. */
  EXPECT(launch(f, 2, 32, 0, b) == CUABI_SUCCESS, "launch 1 on b");            /* oldest */
  EXPECT(launch(f, 3, 64, 128, gone) == CUABI_SUCCESS, "launch 1 on gone");
  cuabi_stream_release(gone); /* its launch is kept */
  cuabi_launch_config pc = config(5, 96, 0);
  cuabi_launch_plan plan = NULL;
  EXPECT(cuabi_launch_plan_create(f, &pc, b, &plan) == CUABI_SUCCESS, "plan on b: %s",
         cuabi_last_error_message());
  EXPECT(cuabi_launch_plan_launch(plan) == CUABI_SUCCESS, "plan launch");   /* b's 2nd */
  cuabi_launch_plan_release(plan); /* its launch is kept */
  EXPECT(launch(f, 7, 128, 0, NULL) == CUABI_SUCCESS, "launch on the default stream");
  EXPECT(launch(f, 11, 256, 64, a) == CUABI_SUCCESS, "launch 2 on a");      /* newest */
  /* Captured into a graph, not run: not named. */
  cuabi_graph graph = NULL;
  EXPECT(cuabi_stream_begin_capture(b, CUABI_CAPTURE_GLOBAL) == CUABI_SUCCESS, "begin capture: %s",
         cuabi_last_error_message());
  EXPECT(launch(f, 13, 16, 0, b) == CUABI_SUCCESS, "a launch captured");
  EXPECT(cuabi_stream_end_capture(b, &graph) == CUABI_SUCCESS, "end capture: %s",
         cuabi_last_error_message());
  cuabi_graph_release(graph);

  /* Released before the fault (the stand-in then frees what it handed out):
   * the streams' launches not seen complete stay with the device. */
  EXPECT(cuabi_stream_get_id(a, NULL) == CUABI_ERROR_INVALID_ARGUMENT &&
             cuabi_last_error_get_launch_count() == 0,
         "an INVALID_ARGUMENT failure carries %zu launches", cuabi_last_error_get_launch_count());
  cuabi_stream_release(a);
  cuabi_stream_release(b);
  cuabi_function_release(f);
  cuabi_module_release(mod);

  fail_entry("cuCtxSynchronize", 1, CUDA_ERROR_LAUNCH_FAILED, 0);
  cuabi_status st = cuabi_device_synchronize(dev);
  EXPECT(st == CUABI_ERROR_CONTEXT_LOST, "synchronize answered %s", cuabi_status_get_name(st));
  const char* m = cuabi_last_error_message();
  char expect[2048];
  snprintf(expect, sizeof expect,
           "; launches not seen complete, most recent first: "
           "[1] kernel 'empty2' grid (11, 1, 1) block (256, 1, 1) shared 64 bytes, launch 2 on stream %llu of device 0; "
           "[2] kernel 'empty2' grid (7, 1, 1) block (128, 1, 1) shared 0 bytes, launch 1 on the default stream of device 0; "
           "[3] kernel 'empty2' grid (5, 1, 1) block (96, 1, 1) shared 0 bytes, launch 2 on stream %llu of device 0; "
           "[4] kernel 'empty2' grid (3, 1, 1) block (64, 1, 1) shared 128 bytes, launch 1 on stream %llu of device 0; "
           "[5] kernel 'empty2' grid (2, 1, 1) block (32, 1, 1) shared 0 bytes, launch 1 on stream %llu of device 0; "
           "the driver's log names none of these kernels; the driver now fails",
           (unsigned long long)ida, (unsigned long long)idb, (unsigned long long)idgone,
           (unsigned long long)idb);
  EXPECT(strstr(m, expect) != NULL, "the message:\n  %s\nlacks:\n  %s", m, expect);
  EXPECT(strstr(m, "grid (1, 1, 1)") == NULL, "a launch seen complete is named: %s", m);
  EXPECT(strstr(m, "grid (13, 1, 1)") == NULL, "a captured launch is named: %s", m);

  /* The same as data. */
  EXPECT(cuabi_last_error_get_launch_count() == 5, "%zu launches",
         cuabi_last_error_get_launch_count());
  const uint32_t grids[5] = {11, 7, 5, 3, 2}, blocks[5] = {256, 128, 96, 64, 32};
  const uint32_t shared[5] = {64, 0, 0, 128, 0};
  const uint64_t streams[5] = {ida, 0, idb, idgone, idb}, seqs[5] = {2, 1, 2, 1, 1};
  for (size_t i = 0; i < 5; ++i) {
    cuabi_launch_record r = CUABI_LAUNCH_RECORD_INIT;
    EXPECT(cuabi_last_error_get_launch(i, &r) == CUABI_SUCCESS, "record %zu", i);
    EXPECT(r.grid_x == grids[i] && r.grid_y == 1 && r.grid_z == 1 && r.block_x == blocks[i] &&
               r.shared_mem_bytes == shared[i] && r.stream_id == streams[i] &&
               r.sequence == seqs[i] && r.device == 0 && r.cluster_x == 0 &&
               r.named_by_driver_log == 0 && r.struct_size == sizeof r,
           "record %zu: grid %u block %u shared %u stream %llu sequence %llu", i, r.grid_x,
           r.block_x, r.shared_mem_bytes, (unsigned long long)r.stream_id,
           (unsigned long long)r.sequence);
    char name[64];
    size_t size = sizeof name;
    EXPECT(cuabi_last_error_get_launch_kernel(i, name, &size) == CUABI_SUCCESS &&
               strcmp(name, "empty2") == 0 && size == 7,
           "kernel %zu", i);
  }
  /* Bad input: a bare status, and the last error left as it was. */
  char before[4096];
  snprintf(before, sizeof before, "%s", cuabi_last_error_message());
  cuabi_launch_record r = CUABI_LAUNCH_RECORD_INIT;
  EXPECT(cuabi_last_error_get_launch(5, &r) == CUABI_ERROR_OUT_OF_RANGE, "index 5");
  EXPECT(cuabi_last_error_get_launch(0, NULL) == CUABI_ERROR_INVALID_ARGUMENT, "NULL record");
  r.struct_size = 4;
  EXPECT(cuabi_last_error_get_launch(0, &r) == CUABI_ERROR_INVALID_ARGUMENT, "struct_size 4");
  r.struct_size = offsetof(cuabi_launch_record, stream_id); /* an older, shorter struct */
  r.stream_id = 12345;
  EXPECT(cuabi_last_error_get_launch(0, &r) == CUABI_SUCCESS && r.sequence == 2 &&
             r.stream_id == 12345 && r.struct_size == offsetof(cuabi_launch_record, stream_id),
         "a shorter struct gets its fields only");
  size_t size = 3;
  char small[3];
  EXPECT(cuabi_last_error_get_launch_kernel(0, small, &size) == CUABI_ERROR_INSUFFICIENT_BUFFER &&
             size == 7,
         "a short buffer: size %zu", size);
  EXPECT(cuabi_last_error_get_launch_kernel(0, NULL, NULL) == CUABI_ERROR_INVALID_ARGUMENT,
         "NULL size");
  EXPECT(cuabi_last_error_get_launch_kernel(9, NULL, &size) == CUABI_ERROR_OUT_OF_RANGE, "index 9");
  EXPECT(strcmp(before, cuabi_last_error_message()) == 0 &&
             cuabi_last_error_status() == CUABI_ERROR_CONTEXT_LOST,
         "the readers changed the last error: %s", cuabi_last_error_message());
  EXPECT(cuabi_launch_record_init(&r, 3) == CUABI_ERROR_INVALID_ARGUMENT, "init with size 3");
  EXPECT(cuabi_launch_record_init(&r, sizeof r) == CUABI_SUCCESS && r.sequence == 0 &&
             r.struct_size == sizeof r,
         "init");

  /* A later CONTEXT_LOST failure names the same launches. */
  cuabi_buffer buf = NULL;
  st = cuabi_buffer_alloc(dev, 64, &buf);
  EXPECT(st == CUABI_ERROR_CONTEXT_LOST, "an allocation after the fault answered %s",
         cuabi_status_get_name(st));
  EXPECT(strstr(cuabi_last_error_message(), "[5] kernel 'empty2' grid (2, 1, 1)") &&
             cuabi_last_error_get_launch_count() == 5,
         "a later failure: %s", cuabi_last_error_message());
  cuabi_device_release(dev);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("launch records: all checks passed\n");
  return 0;
}
