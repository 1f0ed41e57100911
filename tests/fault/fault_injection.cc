// Fault injection through the C ABI against the stand-in driver and NVRTC
// (tests/fake/), no GPU needed. For each scenario (the SAXPY flow, a graph
// capture and replay, a cached compile done twice) it runs the scenario once
// to count the driver and NVRTC calls, then once per call index with that
// call failing: CUDA_ERROR_OUT_OF_MEMORY and CUDA_ERROR_INVALID_VALUE for
// driver calls, NVRTC_ERROR_COMPILATION and NVRTC_ERROR_OUT_OF_MEMORY for
// NVRTC ones, in this process; CUDA_ERROR_LAUNCH_FAILED (sticky: the process
// cannot recover) for the calls that report asynchronous faults, each in a
// new process (this program run again with --child).
//
// A run is handled when the scenario either fails with a status other than
// SUCCESS and a message naming the failed entry point (CUABI_ERROR_COMPILE
// for a failed compilation, CUABI_ERROR_CONTEXT_LOST after a sticky fault),
// or succeeds with verified results (a failure cuabi deliberately tolerates);
// and then nothing it had is still live in the driver, the same scenario
// passes right after with no fault, and the cache holds no entry of a failed
// compile and no temporary file.
//
// Usage: cuabi_fault_injection [--max-runs N] [--seed S]
//        cuabi_fault_injection --child SCENARIO INDEX CURESULT
#include <cuabi/cuabi.h>
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

// ---- the stand-in's controls ------------------------------------------------

struct Fake {
  long (*live)();
  long (*calls)();
  const char* (*call_name)(long);
  const char* (*failed_name)();
  void (*reset)();
  void (*fail_call)(long, int, int);
} fake;

bool open_fake() {
  const char* path = getenv("CUABI_DRIVER_PATH");
  if (!path) {
    fprintf(stderr, "CUABI_DRIVER_PATH must name the stand-in driver\n");
    return false;
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "cannot open %s: %s\n", path, dlerror());
    return false;
  }
  fake.live = reinterpret_cast<long (*)()>(dlsym(h, "fake_live_resources"));
  fake.calls = reinterpret_cast<long (*)()>(dlsym(h, "fake_calls"));
  fake.call_name = reinterpret_cast<const char* (*)(long)>(dlsym(h, "fake_call_name"));
  fake.failed_name = reinterpret_cast<const char* (*)()>(dlsym(h, "fake_failed_name"));
  fake.reset = reinterpret_cast<void (*)()>(dlsym(h, "fake_reset"));
  fake.fail_call = reinterpret_cast<void (*)(long, int, int)>(dlsym(h, "fake_fail_call"));
  if (!fake.live || !fake.calls || !fake.call_name || !fake.failed_name || !fake.reset ||
      !fake.fail_call) {
    fprintf(stderr, "%s is not the fault-injection stand-in (no fake_* controls)\n", path);
    return false;
  }
  return true;
}

// ---- scenarios ---------------------------------------------------------------

const char* const kSaxpySource =
    "extern \"C\" __global__\n"
    "void saxpy(float a, float *x, float *y, float *out, size_t n)\n"
    "{\n"
    " size_t tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    " if (tid < n) out[tid] = a * x[tid] + y[tid];\n"
    "}\n";

constexpr size_t kN = 256;

struct Outcome {
  cuabi_status status = CUABI_SUCCESS;
  std::string message;
  std::string failed_call;  // the cuabi call that failed
  bool verified = false;    // every result checked (only when status is SUCCESS)
  bool from_cache_second = false;
  bool first_compile_failed = false;
};

#define TRY(call)                                        \
  do {                                                   \
    cuabi_status st_ = (call);                           \
    if (st_ != CUABI_SUCCESS) {                          \
      o.status = st_;                                    \
      o.message = cuabi_last_error_message();            \
      o.failed_call = #call;                             \
      goto done;                                         \
    }                                                    \
  } while (0)

struct Host {
  float x[kN], y[kN], out[kN];
  Host() {
    for (size_t i = 0; i < kN; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = static_cast<float>(2 * i + 1);
      out[i] = -1;
    }
  }
  bool check(float a) const {
    for (size_t i = 0; i < kN; ++i)
      if (out[i] != a * x[i] + y[i]) return false;
    return true;
  }
};

cuabi_status compile(cuabi_device dev, bool cached, cuabi_module* m) {
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  d.source = kSaxpySource;
  d.name = "saxpy.cu";
  if (!cached) d.flags = CUABI_COMPILE_NO_CACHE;
  return cuabi_module_compile(dev, &d, m);
}

// The SAXPY flow: compile, load, get the kernel, buffers, copies, then each
// way to launch (parameter array, sized, packed, a launch plan), each verified.
Outcome saxpy() {
  Outcome o;
  Host h;
  cuabi_device dev = nullptr;
  cuabi_module mod = nullptr;
  cuabi_function fn = nullptr;
  cuabi_buffer bx = nullptr, by = nullptr, bout = nullptr;
  cuabi_stream stream = nullptr;
  cuabi_launch_plan plan = nullptr;
  uint64_t px = 0, py = 0, pout = 0;
  size_t n = kN, args_size = 0;
  float a = 2.0f;
  void* params[] = {&a, &px, &py, &pout, &n};
  const size_t sizes[] = {4, 8, 8, 8, 8};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = 2;
  c.block_x = kN / 2;
  bool ok = true;
  unsigned char packed[40];
  void* plan_args = nullptr;
  size_t plan_size = 0;
  TRY(cuabi_device_get(0, &dev));
  TRY(compile(dev, false, &mod));
  TRY(cuabi_module_get_function(mod, "saxpy", &fn));
  TRY(cuabi_buffer_alloc(dev, sizeof h.x, &bx));
  TRY(cuabi_buffer_alloc(dev, sizeof h.y, &by));
  TRY(cuabi_buffer_alloc(dev, sizeof h.out, &bout));
  TRY(cuabi_stream_create(dev, 0, 0, &stream));
  TRY(cuabi_buffer_copy_from_host_async(bx, 0, h.x, sizeof h.x, stream));
  TRY(cuabi_buffer_copy_from_host(by, 0, h.y, sizeof h.y));
  TRY(cuabi_buffer_get_pointer(bx, &px));
  TRY(cuabi_buffer_get_pointer(by, &py));
  TRY(cuabi_buffer_get_pointer(bout, &pout));

  TRY(cuabi_buffer_memset_async(bout, 0, 0, sizeof h.out, stream));
  TRY(cuabi_function_launch(fn, &c, stream, params, 5));
  TRY(cuabi_buffer_copy_to_host_async(bout, 0, h.out, sizeof h.out, stream));
  TRY(cuabi_stream_synchronize(stream));
  ok = ok && h.check(a);

  a = 3.0f;
  TRY(cuabi_buffer_memset(bout, 0, 0, sizeof h.out));
  TRY(cuabi_function_launch_sized(fn, &c, stream, params, sizes, 5));
  TRY(cuabi_stream_synchronize(stream));
  TRY(cuabi_buffer_copy_to_host(bout, 0, h.out, sizeof h.out));
  ok = ok && h.check(a);

  a = 4.0f;
  TRY(cuabi_function_get_args_size(fn, &args_size));
  if (args_size != sizeof packed) {
    o.status = CUABI_ERROR_INTERNAL;
    o.message = "saxpy's argument block is " + std::to_string(args_size) + " bytes";
    goto done;
  }
  memcpy(packed, &a, 4);
  memset(packed + 4, 0, 4);
  memcpy(packed + 8, &px, 8);
  memcpy(packed + 16, &py, 8);
  memcpy(packed + 24, &pout, 8);
  memcpy(packed + 32, &n, 8);
  TRY(cuabi_function_launch_packed(fn, &c, stream, packed, sizeof packed));
  TRY(cuabi_buffer_copy_to_host_async(bout, 0, h.out, sizeof h.out, stream));
  TRY(cuabi_stream_synchronize(stream));
  ok = ok && h.check(a);

  a = 5.0f;
  memcpy(packed, &a, 4);
  TRY(cuabi_launch_plan_create(fn, &c, stream, &plan));
  TRY(cuabi_launch_plan_get_args(plan, &plan_args, &plan_size));
  memcpy(plan_args, packed, sizeof packed);
  TRY(cuabi_launch_plan_launch(plan));
  TRY(cuabi_buffer_copy_to_host_async(bout, 0, h.out, sizeof h.out, stream));
  TRY(cuabi_device_synchronize(dev));
  ok = ok && h.check(a);
  o.verified = ok;
done:
  cuabi_launch_plan_release(plan);
  cuabi_stream_release(stream);
  cuabi_buffer_release(bout);
  cuabi_buffer_release(by);
  cuabi_buffer_release(bx);
  cuabi_function_release(fn);
  cuabi_module_release(mod);
  cuabi_device_release(dev);
  return o;
}

// A graph: capture a launch on a stream, instantiate, replay twice.
Outcome graph() {
  Outcome o;
  Host h;
  cuabi_device dev = nullptr;
  cuabi_module mod = nullptr;
  cuabi_function fn = nullptr;
  cuabi_buffer bx = nullptr, by = nullptr, bout = nullptr;
  cuabi_stream stream = nullptr;
  cuabi_graph g = nullptr;
  cuabi_graph_exec exec = nullptr;
  uint64_t px = 0, py = 0, pout = 0;
  size_t n = kN, nodes = 0;
  float a = 2.5f;
  void* params[] = {&a, &px, &py, &pout, &n};
  const size_t sizes[] = {4, 8, 8, 8, 8};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.block_x = kN;
  TRY(cuabi_device_get(0, &dev));
  TRY(compile(dev, false, &mod));
  TRY(cuabi_module_get_function(mod, "saxpy", &fn));
  TRY(cuabi_buffer_alloc(dev, sizeof h.x, &bx));
  TRY(cuabi_buffer_alloc(dev, sizeof h.y, &by));
  TRY(cuabi_buffer_alloc(dev, sizeof h.out, &bout));
  TRY(cuabi_stream_create(dev, 0, 0, &stream));
  TRY(cuabi_buffer_copy_from_host_async(bx, 0, h.x, sizeof h.x, stream));
  TRY(cuabi_buffer_copy_from_host_async(by, 0, h.y, sizeof h.y, stream));
  TRY(cuabi_buffer_get_pointer(bx, &px));
  TRY(cuabi_buffer_get_pointer(by, &py));
  TRY(cuabi_buffer_get_pointer(bout, &pout));
  TRY(cuabi_stream_begin_capture(stream, CUABI_CAPTURE_THREAD_LOCAL));
  {
    cuabi_status st = cuabi_function_launch_sized(fn, &c, stream, params, sizes, 5);
    if (st != CUABI_SUCCESS) {
      o.status = st;
      o.message = cuabi_last_error_message();
      o.failed_call = "cuabi_function_launch_sized (capturing)";
      cuabi_graph dropped = nullptr;
      cuabi_stream_end_capture(stream, &dropped);  // leave no capture open
      cuabi_graph_release(dropped);
      goto done;
    }
  }
  TRY(cuabi_stream_end_capture(stream, &g));
  TRY(cuabi_graph_get_node_count(g, &nodes));
  TRY(cuabi_graph_instantiate(g, &exec));
  TRY(cuabi_graph_exec_launch(exec, stream));
  TRY(cuabi_graph_exec_launch(exec, stream));
  TRY(cuabi_buffer_copy_to_host_async(bout, 0, h.out, sizeof h.out, stream));
  TRY(cuabi_stream_synchronize(stream));
  o.verified = nodes == 1 && h.check(a);
done:
  cuabi_graph_exec_release(exec);
  cuabi_graph_release(g);
  cuabi_stream_release(stream);
  cuabi_buffer_release(bout);
  cuabi_buffer_release(by);
  cuabi_buffer_release(bx);
  cuabi_function_release(fn);
  cuabi_module_release(mod);
  cuabi_device_release(dev);
  return o;
}

std::string cache_folder;

void clear_cache() {
  if (DIR* d = opendir(cache_folder.c_str())) {
    while (dirent* e = readdir(d)) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      unlink((cache_folder + "/" + e->d_name).c_str());
    }
    closedir(d);
  }
}

// Entries in the cache folder; `temporary` counts the .tmp- files.
size_t cache_files(size_t* temporary) {
  size_t n = 0;
  *temporary = 0;
  if (DIR* d = opendir(cache_folder.c_str())) {
    while (dirent* e = readdir(d)) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      if (!strncmp(e->d_name, ".tmp", 4))
        ++*temporary;
      else
        ++n;
    }
    closedir(d);
  }
  return n;
}

// A cached compile: the first compiles and stores, the second loads the entry.
Outcome cached() {
  Outcome o;
  cuabi_device dev = nullptr;
  cuabi_module m1 = nullptr, m2 = nullptr;
  cuabi_function fn = nullptr;
  int32_t hit1 = -1, hit2 = -1;
  TRY(cuabi_device_get(0, &dev));
  o.first_compile_failed = true;
  TRY(compile(dev, true, &m1));
  o.first_compile_failed = false;
  TRY(cuabi_module_get_from_cache(m1, &hit1));
  cuabi_module_release(m1);
  m1 = nullptr;
  TRY(compile(dev, true, &m2));
  TRY(cuabi_module_get_from_cache(m2, &hit2));
  TRY(cuabi_module_get_function(m2, "saxpy", &fn));
  o.verified = hit1 == 0 && hit2 == 1;
done:
  cuabi_function_release(fn);
  cuabi_module_release(m2);
  cuabi_module_release(m1);
  cuabi_device_release(dev);
  return o;
}

// Virtual memory: physical memory mapped into a range and used through a
// buffer over it, exported by fd and imported again into a second range,
// unmapped and freed; then a growable buffer grown twice, contents checked.
Outcome virtual_memory() {
  Outcome o;
  cuabi_device dev = nullptr;
  cuabi_physical_memory mem = nullptr, imported = nullptr;
  cuabi_address_range range = nullptr, second = nullptr;
  cuabi_buffer view = nullptr, again = nullptr, grown = nullptr;
  size_t g = 0, recommended = 0;
  int32_t fd = -1;
  uint32_t in[64], out[64];
  for (uint32_t i = 0; i < 64; ++i) in[i] = i * 7 + 1;
  bool ok = true;
  TRY(cuabi_device_get(0, &dev));
  TRY(cuabi_device_get_vm_granularity(dev, &g, &recommended));
  TRY(cuabi_physical_memory_create(dev, g, CUABI_PHYSICAL_MEMORY_EXPORTABLE, &mem));
  TRY(cuabi_address_range_reserve(dev, 2 * g, &range));
  TRY(cuabi_address_range_map(range, g, mem));
  TRY(cuabi_address_range_set_access(range, g, g, dev, CUABI_VM_ACCESS_READWRITE));
  TRY(cuabi_buffer_from_range(range, dev, g, g, &view));
  TRY(cuabi_buffer_copy_from_host(view, 0, in, sizeof in));
  TRY(cuabi_physical_memory_export_fd(mem, &fd));
  TRY(cuabi_physical_memory_import_fd(dev, fd, g, &imported));
  TRY(cuabi_address_range_reserve(dev, g, &second));
  TRY(cuabi_address_range_map(second, 0, imported));
  TRY(cuabi_buffer_from_range(second, dev, 0, g, &again));
  TRY(cuabi_buffer_copy_to_host(again, 0, out, sizeof out));
  ok = ok && memcmp(in, out, sizeof in) == 0;
  cuabi_buffer_release(view);
  view = nullptr;
  TRY(cuabi_address_range_unmap(range, g, g));
  TRY(cuabi_physical_memory_free(mem));
  mem = nullptr;
  TRY(cuabi_buffer_alloc_growable(dev, g, 4 * g, &grown));
  TRY(cuabi_buffer_copy_from_host(grown, g - sizeof in, in, sizeof in));
  TRY(cuabi_buffer_grow(grown, 2 * g));
  TRY(cuabi_buffer_grow(grown, 4 * g));
  TRY(cuabi_buffer_copy_from_host(grown, 4 * g - sizeof in, in, sizeof in));
  TRY(cuabi_buffer_copy_to_host(grown, g - sizeof in, out, sizeof out));
  ok = ok && memcmp(in, out, sizeof in) == 0;
  TRY(cuabi_buffer_copy_to_host(grown, 4 * g - sizeof in, out, sizeof out));
  ok = ok && memcmp(in, out, sizeof in) == 0;
  o.verified = ok;
done:
  if (fd >= 0) close(fd);
  cuabi_buffer_release(grown);
  cuabi_buffer_release(again);
  cuabi_buffer_release(view);
  cuabi_address_range_release(second);
  cuabi_address_range_release(range);
  cuabi_physical_memory_release(imported);
  cuabi_physical_memory_release(mem);
  cuabi_device_release(dev);
  return o;
}

// Batches: writes and a met wait in one call (device and pinned memory),
// then copies of every direction in one call, each result verified.
Outcome batches() {
  Outcome o;
  cuabi_device dev = nullptr;
  cuabi_stream s = nullptr;
  cuabi_buffer a = nullptr, b = nullptr;
  cuabi_host_buffer pinned = nullptr;
  void* hp = nullptr;
  uint32_t in[64], out[64];
  uint64_t words[2] = {0, 0};
  for (uint32_t i = 0; i < 64; ++i) in[i] = i * 11 + 3;
  bool ok = true;
  cuabi_mem_op ops[4] = {CUABI_MEM_OP_INIT, CUABI_MEM_OP_INIT, CUABI_MEM_OP_INIT,
                         CUABI_MEM_OP_INIT};
  cuabi_copy_op copies[4] = {CUABI_COPY_OP_INIT, CUABI_COPY_OP_INIT, CUABI_COPY_OP_INIT,
                             CUABI_COPY_OP_INIT};
  // Two boxes of the buffer read as 8 rows of 32 bytes, in one 3D batch.
  cuabi_copy_3d_desc boxes[2] = {CUABI_COPY_3D_DESC_INIT, CUABI_COPY_3D_DESC_INIT};
  unsigned char box_out[256] = {0};
  TRY(cuabi_device_get(0, &dev));
  TRY(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &s));
  TRY(cuabi_buffer_alloc(dev, sizeof in, &a));
  TRY(cuabi_buffer_alloc(dev, sizeof in, &b));
  TRY(cuabi_host_buffer_alloc(dev, sizeof in, &pinned));
  TRY(cuabi_host_buffer_get_pointer(pinned, &hp));
  memset(hp, 0, sizeof in);
  ops[0].buffer = a;
  ops[0].value = 0xC0DE;
  ops[1].buffer = a;
  ops[1].offset = 8;
  ops[1].width = 8;
  ops[1].value = 0x0102030405060708ull;
  ops[2].host_buffer = pinned;
  ops[2].offset = 4;
  ops[2].value = 7;
  ops[3].kind = CUABI_MEM_OP_WAIT;
  ops[3].host_buffer = pinned;
  ops[3].offset = 4;
  ops[3].value = 7;
  ops[3].condition = CUABI_WAIT_EQ;
  TRY(cuabi_stream_mem_op_batch(s, ops, 4));
  TRY(cuabi_stream_synchronize(s));
  TRY(cuabi_buffer_copy_to_host(a, 0, words, sizeof words));
  ok = ok && (words[0] & 0xFFFFFFFFu) == 0xC0DE && words[1] == 0x0102030405060708ull &&
       static_cast<uint32_t*>(hp)[1] == 7;
  copies[0].dst_buffer = a;          // host to device
  copies[0].src_host = in;
  copies[0].bytes = sizeof in;
  copies[1].dst_host_buffer = pinned;  // host to pinned host
  copies[1].src_host = in;
  copies[1].bytes = sizeof in;
  TRY(cuabi_stream_copy_batch(s, copies, 2, 0));
  copies[2].dst_buffer = b;          // device to device
  copies[2].src_buffer = a;
  copies[2].bytes = sizeof in;
  TRY(cuabi_stream_copy_batch(s, &copies[2], 1, 0));
  copies[3].dst_host = out;          // device to host
  copies[3].src_buffer = b;
  copies[3].bytes = sizeof out;
  TRY(cuabi_stream_copy_batch(s, &copies[3], 1, CUABI_COPY_BATCH_PREFER_OVERLAP));
  TRY(cuabi_stream_synchronize(s));
  ok = ok && memcmp(in, out, sizeof in) == 0 && memcmp(in, hp, sizeof in) == 0;
  for (cuabi_copy_3d_desc& box : boxes) {
    box.src_buffer = b;
    box.src_pitch = 32;
    box.dst_host = box_out;
    box.dst_pitch = 32;
    box.height = 4;
  }
  boxes[0].width_bytes = 32;  // rows 0..3 whole
  boxes[1].src_x_bytes = boxes[1].dst_x_bytes = 16;
  boxes[1].src_y = boxes[1].dst_y = 4;
  boxes[1].width_bytes = 16;  // the right halves of rows 4..7
  TRY(cuabi_stream_copy_3d_batch(s, boxes, 2, 0));
  TRY(cuabi_stream_synchronize(s));
  for (size_t i = 0; i < sizeof box_out; ++i) {
    const bool copied = i < 128 || i % 32 >= 16;
    ok = ok && box_out[i] == (copied ? reinterpret_cast<const unsigned char*>(in)[i] : 0);
  }
  o.verified = ok;
done:
  cuabi_host_buffer_release(pinned);
  cuabi_buffer_release(b);
  cuabi_buffer_release(a);
  cuabi_stream_release(s);
  cuabi_device_release(dev);
  return o;
}

// Green contexts and tensor maps: a device's SMs split, a green context of a
// group and a stream on it, a copy ordered there, a tensor map encoded over a
// buffer, read, and pointed at another buffer.
Outcome green_tensor() {
  Outcome o;
  cuabi_device dev = nullptr;
  cuabi_sm_resource all = nullptr, group = nullptr;
  cuabi_green_context green = nullptr;
  cuabi_stream s = nullptr;
  cuabi_buffer a = nullptr, b = nullptr;
  cuabi_tensor_map map = nullptr;
  uint32_t in[64], out[64], sms = 0, green_sms = 0;
  for (uint32_t i = 0; i < 64; ++i) in[i] = i * 7 + 1;
  const size_t sizes[2] = {16, 4}, strides[2] = {4, 64}, box[2] = {16, 2};
  unsigned char bytes[CUABI_TENSOR_MAP_BYTES];
  size_t nbytes = sizeof bytes;
  uint64_t pb = 0, first = 0;
  TRY(cuabi_device_get(0, &dev));
  TRY(cuabi_device_get_sm_resource(dev, &all));
  TRY(cuabi_sm_resource_split(all, 2, 0, 0, &group));
  TRY(cuabi_sm_resource_get_sm_count(group, &sms));
  TRY(cuabi_green_context_create(group, &green));
  TRY(cuabi_green_context_get_sm_count(green, &green_sms));
  TRY(cuabi_green_context_create_stream(green, CUABI_STREAM_NON_BLOCKING, 0, &s));
  TRY(cuabi_buffer_alloc(dev, sizeof in, &a));
  TRY(cuabi_buffer_alloc(dev, sizeof in, &b));
  TRY(cuabi_buffer_copy_from_host_async(a, 0, in, sizeof in, s));
  TRY(cuabi_buffer_copy_to_host_async(a, 0, out, sizeof out, s));
  TRY(cuabi_stream_synchronize(s));
  TRY(cuabi_tensor_map_encode_tiled(a, 0, CUABI_TENSOR_UINT32, sizes, 2, strides, 2, box, 2,
                                    nullptr, 0, CUABI_TENSOR_INTERLEAVE_NONE,
                                    CUABI_TENSOR_SWIZZLE_NONE, CUABI_TENSOR_L2_PROMOTION_NONE,
                                    CUABI_TENSOR_OOB_FILL_ZERO, &map));
  TRY(cuabi_tensor_map_replace_address(map, b, 0));
  TRY(cuabi_tensor_map_get_bytes(map, bytes, &nbytes));
  TRY(cuabi_buffer_get_pointer(b, &pb));
  memcpy(&first, bytes, sizeof first);
  o.verified = memcmp(in, out, sizeof in) == 0 && sms > 0 && green_sms == sms &&
               nbytes == CUABI_TENSOR_MAP_BYTES && first == pb;
done:
  cuabi_tensor_map_release(map);
  cuabi_buffer_release(b);
  cuabi_buffer_release(a);
  cuabi_stream_release(s);
  cuabi_green_context_release(green);
  cuabi_sm_resource_release(group);
  cuabi_sm_resource_release(all);
  cuabi_device_release(dev);
  return o;
}

// DLPack: a buffer exported as a tensor and taken back as a buffer (its
// deleter run by the release), and the stream handshake both ways between
// two streams, a copy ordered after it.
Outcome dlpack() {
  Outcome o;
  cuabi_device dev = nullptr;
  cuabi_stream producer = nullptr, consumer = nullptr;
  cuabi_buffer a = nullptr, back = nullptr;
  cuabi_dlpack_managed_tensor_versioned* t = nullptr;
  uint32_t in[64], out[64];
  for (uint32_t i = 0; i < 64; ++i) in[i] = i * 3 + 1;
  const int64_t shape[1] = {64};
  uint64_t raw_consumer = 0, raw_producer = 0, pa = 0, pb = 0;
  TRY(cuabi_device_get(0, &dev));
  TRY(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &producer));
  TRY(cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, &consumer));
  TRY(cuabi_stream_get_handle(producer, &raw_producer));
  TRY(cuabi_stream_get_handle(consumer, &raw_consumer));
  TRY(cuabi_buffer_alloc(dev, sizeof in, &a));
  TRY(cuabi_buffer_copy_from_host_async(a, 0, in, sizeof in, producer));
  TRY(cuabi_stream_dlpack_handoff(producer, static_cast<int64_t>(raw_consumer)));
  TRY(cuabi_stream_dlpack_wait(consumer, static_cast<int64_t>(raw_producer)));
  TRY(cuabi_buffer_export_dlpack(a, 0, shape, nullptr, 1, CUABI_DLPACK_UINT, 32, 1, 0, &t));
  TRY(cuabi_buffer_import_dlpack(t, 0, &back));
  t = nullptr;  // the buffer owns it now
  TRY(cuabi_buffer_copy_to_host_async(back, 0, out, sizeof out, consumer));
  TRY(cuabi_stream_synchronize(consumer));
  TRY(cuabi_buffer_get_pointer(a, &pa));
  TRY(cuabi_buffer_get_pointer(back, &pb));
  o.verified = memcmp(in, out, sizeof in) == 0 && pa == pb;
done:
  if (t && t->deleter) t->deleter(t);
  cuabi_buffer_release(back);
  cuabi_buffer_release(a);
  cuabi_stream_release(consumer);
  cuabi_stream_release(producer);
  cuabi_device_release(dev);
  return o;
}

struct Scenario {
  const char* name;
  Outcome (*run)();
  bool uses_cache;
};
const Scenario kScenarios[] = {
    {"saxpy", saxpy, false},
    {"graph", graph, false},
    {"cached_compile", cached, true},
    {"virtual_memory", virtual_memory, false},
    {"batches", batches, false},
    {"green_tensor", green_tensor, false},
    {"dlpack", dlpack, false}};

const Scenario* find_scenario(const char* name) {
  for (const Scenario& s : kScenarios)
    if (!strcmp(s.name, name)) return &s;
  return nullptr;
}

Outcome run_scenario(const Scenario& s) {
  if (s.uses_cache) clear_cache();
  return s.run();
}

// ---- checks ------------------------------------------------------------------

bool is_nvrtc(const std::string& name) { return name.compare(0, 5, "nvrtc") == 0; }

// Driver calls that report asynchronous (sticky) faults.
bool reports_async_faults(const std::string& name) {
  static const char* const names[] = {
      "cuLaunchKernel",      "cuLaunchKernelEx",   "cuStreamSynchronize", "cuCtxSynchronize",
      "cuEventSynchronize",  "cuGraphLaunch",      "cuMemcpyDtoH",        "cuMemcpyHtoD",
      "cuMemcpyDtoHAsync",   "cuMemcpyHtoDAsync",  "cuMemsetD8",          "cuMemsetD8Async",
      "cuMemcpy",            "cuMemcpyAsync"};
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

const char* code_name(bool nvrtc, int code) {
  if (nvrtc) return code == NVRTC_ERROR_COMPILATION ? "NVRTC_ERROR_COMPILATION"
                                                    : "NVRTC_ERROR_OUT_OF_MEMORY";
  switch (code) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_INVALID_VALUE:
      return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_LAUNCH_FAILED:
      return "CUDA_ERROR_LAUNCH_FAILED";
  }
  return "?";
}

// Whether a failed run reported `failed` properly; "" when it did, else why not.
std::string judge_report(const Outcome& o, const std::string& failed, bool nvrtc, int code) {
  if (o.status == CUABI_SUCCESS) {
    if (!o.verified) return "succeeded with wrong results";
    return "";  // tolerated, and the results are right
  }
  if (o.message.find(failed) != std::string::npos) return "";
  if (nvrtc && code == NVRTC_ERROR_COMPILATION && failed == "nvrtcCompileProgram" &&
      o.status == CUABI_ERROR_COMPILE)
    return "";  // a compile error: the status says so and the log is kept
  if (!nvrtc && code == CUDA_ERROR_LAUNCH_FAILED && o.status == CUABI_ERROR_CONTEXT_LOST &&
      o.message.find("cu") != std::string::npos)
    return "";  // a later call of the lost context, naming its own entry point
  return std::string("status ") + cuabi_status_get_name(o.status) + " from " + o.failed_call +
         " with a message that does not name " + failed + ": \"" + o.message + "\"";
}

int child(const char* scenario, long index, int code) {
  const Scenario* s = find_scenario(scenario);
  if (!s || !open_fake()) return 3;
  if (s->uses_cache) clear_cache();
  Outcome warm = s->run();  // loads the driver and NVRTC
  if (warm.status != CUABI_SUCCESS) {
    fprintf(stderr, "child: clean run failed: %s\n", warm.message.c_str());
    return 3;
  }
  fake.reset();
  fake.fail_call(index, code, NVRTC_ERROR_OUT_OF_MEMORY);
  Outcome o = run_scenario(*s);
  const char* failed = fake.failed_name();
  if (!failed) return 0;  // not reached
  std::string why = judge_report(o, failed, false, code);
  if (o.status == CUABI_SUCCESS) why = "a sticky fault went unreported";
  if (!why.empty()) {
    fprintf(stderr, "child: %s call %ld (%s) %s: %s\n", scenario, index, failed,
            code_name(false, code), why.c_str());
    return 1;
  }
  // The context is lost: every later call must say so, not hang or crash.
  cuabi_device dev = nullptr;
  cuabi_buffer b = nullptr;
  cuabi_status st = cuabi_device_get(0, &dev);
  if (st == CUABI_SUCCESS) st = cuabi_buffer_alloc(dev, 64, &b);
  cuabi_buffer_release(b);
  cuabi_device_release(dev);
  if (st == CUABI_SUCCESS) {
    fprintf(stderr, "child: %s call %ld (%s): an allocation after a sticky fault succeeded\n",
            scenario, index, failed);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  char tmpl[] = "/tmp/cuabi-fault-cache-XXXXXX";
  const char* made = getenv("CUABI_FAULT_CACHE_DIR");
  std::string made_here;
  if (!made) {
    if (!mkdtemp(tmpl)) {
      perror("mkdtemp");
      return 1;
    }
    made_here = tmpl;
    made = tmpl;
  }
  cache_folder = made;
  setenv("CUABI_CACHE_DIR", made, 1);
  setenv("CUABI_FAULT_CACHE_DIR", made, 1);
  unsetenv("CUABI_CACHE");

  if (argc == 5 && !strcmp(argv[1], "--child"))
    return child(argv[2], atol(argv[3]), atoi(argv[4]));

  long max_runs = 400;  // per scenario and error; beyond it, indices are sampled
  unsigned seed = static_cast<unsigned>(time(nullptr));
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--max-runs")) max_runs = atol(argv[i + 1]);
    if (!strcmp(argv[i], "--seed")) seed = static_cast<unsigned>(atol(argv[i + 1]));
  }
  if (const char* s = getenv("CUABI_FAULT_SEED")) seed = static_cast<unsigned>(atol(s));
  printf("fault injection (C): seed %u\n", seed);
  std::mt19937 rng(seed);
  if (!open_fake()) return 1;

  std::set<std::string> tolerated;
  long total_failed = 0, total_handled = 0, total_tolerated = 0;
  std::vector<std::string> problems;
  for (const Scenario& s : kScenarios) {
    Outcome warm = run_scenario(s);  // loads the driver and NVRTC, fills the device state
    long baseline = fake.live();
    fake.reset();
    Outcome counted = run_scenario(s);
    long calls = fake.calls();
    std::vector<std::string> names;
    for (long i = 1; i <= calls; ++i) names.push_back(fake.call_name(i) ? fake.call_name(i) : "?");
    if (warm.status != CUABI_SUCCESS || counted.status != CUABI_SUCCESS || !counted.verified ||
        fake.live() != baseline) {
      problems.push_back(std::string(s.name) + ": the clean run fails: " +
                         (counted.status != CUABI_SUCCESS
                              ? counted.message + " (" + counted.failed_call + ")"
                              : !counted.verified ? std::string("wrong results")
                                                  : "leaks " + std::to_string(fake.live() - baseline) +
                                                        " driver resources"));
      continue;
    }
    long failed_here = 0, handled_here = 0, tolerated_here = 0;
    struct Case {
      long index;
      int code;
    };
    std::vector<Case> in_process, in_child;
    for (long i = 1; i <= calls; ++i) {
      const std::string& name = names[i - 1];
      if (is_nvrtc(name)) {
        in_process.push_back({i, NVRTC_ERROR_COMPILATION});
        in_process.push_back({i, NVRTC_ERROR_OUT_OF_MEMORY});
      } else {
        in_process.push_back({i, CUDA_ERROR_OUT_OF_MEMORY});
        // INVALID_VALUE is how cuFuncGetParamInfo says the index is past
        // the last parameter: failing it with that only shortens the list.
        if (name != "cuFuncGetParamInfo") in_process.push_back({i, CUDA_ERROR_INVALID_VALUE});
        if (reports_async_faults(name)) in_child.push_back({i, CUDA_ERROR_LAUNCH_FAILED});
      }
    }
    auto sample = [&](std::vector<Case>& v, size_t most) {
      if (v.size() <= most) return;
      std::shuffle(v.begin(), v.end(), rng);
      v.resize(most);
      std::sort(v.begin(), v.end(), [](const Case& a, const Case& b) {
        return a.index < b.index || (a.index == b.index && a.code < b.code);
      });
    };
    sample(in_process, static_cast<size_t>(max_runs));
    sample(in_child, static_cast<size_t>(max_runs / 8 + 1));

    for (const Case& c : in_process) {
      const std::string& expected = names[c.index - 1];
      bool nvrtc = is_nvrtc(expected);
      fake.reset();
      fake.fail_call(c.index, nvrtc ? CUDA_SUCCESS : c.code, nvrtc ? c.code : CUDA_SUCCESS);
      Outcome o = run_scenario(s);
      const char* failed = fake.failed_name();
      fake.reset();
      if (!failed) continue;  // the run made fewer calls this time
      ++failed_here;
      std::string where = std::string(s.name) + " call " + std::to_string(c.index) + " (" +
                          failed + ", " + code_name(nvrtc, c.code) + "): ";
      std::vector<std::string> why;
      std::string report = judge_report(o, failed, nvrtc, c.code);
      if (!report.empty()) why.push_back(report);
      if (fake.live() != baseline)
        why.push_back("leaked " + std::to_string(fake.live() - baseline) + " driver resources");
      if (s.uses_cache) {
        size_t temporary = 0, entries = cache_files(&temporary);
        if (temporary) why.push_back(std::to_string(temporary) + " temporary files left in the cache");
        if (o.first_compile_failed && entries)
          why.push_back("a failed compile left " + std::to_string(entries) + " cache entries");
      }
      long before = fake.live();
      Outcome again = run_scenario(s);
      if (again.status != CUABI_SUCCESS || !again.verified)
        why.push_back("the same scenario then fails with no fault: " + again.message);
      if (fake.live() != before) why.push_back("the clean run after it leaks");
      if (why.empty()) {
        ++handled_here;
        if (o.status == CUABI_SUCCESS) {
          ++tolerated_here;
          tolerated.insert(failed);
        }
      } else {
        std::string all;
        for (const std::string& w : why) all += (all.empty() ? "" : "; ") + w;
        problems.push_back(where + all);
      }
    }

    for (const Case& c : in_child) {
      fflush(stdout);
      pid_t pid = fork();
      if (pid == 0) {
        std::string index = std::to_string(c.index), code = std::to_string(c.code);
        // After a sticky fault the driver keeps what it handed out until the
        // process ends (cuabi cannot give it back), and the stand-in's
        // "device" memory is ordinary heap: LeakSanitizer would report the
        // stand-in's memory, not cuabi's. The child's live count is not
        // checked for the same reason; the in-process runs check both.
        const char* asan = getenv("ASAN_OPTIONS");
        std::string options = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") +
                              "detect_leaks=0";
        setenv("ASAN_OPTIONS", options.c_str(), 1);
        execl("/proc/self/exe", argv[0], "--child", s.name, index.c_str(), code.c_str(),
              static_cast<char*>(nullptr));
        _exit(127);
      }
      int wstatus = 0;
      waitpid(pid, &wstatus, 0);
      ++failed_here;
      if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
        ++handled_here;
      } else {
        problems.push_back(std::string(s.name) + " call " + std::to_string(c.index) + " (" +
                           names[c.index - 1] + ", CUDA_ERROR_LAUNCH_FAILED, own process): " +
                           (WIFSIGNALED(wstatus) ? "killed by signal " +
                                                       std::to_string(WTERMSIG(wstatus))
                                                 : "exit " + std::to_string(WEXITSTATUS(wstatus))));
      }
    }
    printf("  %-15s %ld calls; %ld failed in turn (%zu of them with CUDA_ERROR_LAUNCH_FAILED, "
           "each in its own process), %ld handled (%ld tolerated with correct results)\n",
           s.name, calls, failed_here, in_child.size(), handled_here, tolerated_here);
    total_failed += failed_here;
    total_handled += handled_here;
    total_tolerated += tolerated_here;
  }
  clear_cache();
  if (!made_here.empty()) rmdir(made_here.c_str());
  printf("fault injection (C): %ld calls failed in turn, %ld handled\n", total_failed,
         total_handled);
  std::string list;
  for (const std::string& t : tolerated) list += " " + t;
  printf("  failures tolerated with correct results:%s\n", list.c_str());
  for (const std::string& p : problems) printf("NOT HANDLED: %s\n", p.c_str());
  (void)total_tolerated;
  return problems.empty() ? 0 : 1;
}
