// The bad-input corpus through the C ABI, the part that needs a GPU:
// allocations (zero, (size_t)-1, huge), copies past the end or overlapping,
// launch configurations and argument lists the kernel or the device rejects,
// unknown names, bad images and files, and a module released while its
// functions are held. Skips without a device.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "corpus.h"
#include "support.h"

namespace hardening {
namespace {

struct GpuFixture {
  Device device;
  Module saxpy_module;
  Function saxpy;
  Module util;
  Function fill_shared;
  Module raised_module;  // fill_shared with its dynamic shared memory limit raised
  Function raised;
  Buffer a, b;  // 4096 bytes each
  Stream stream;
  Event event;
  Event untimed;      // CUABI_EVENT_DISABLE_TIMING
  std::string cubin;  // SAXPY, for the image cases
  size_t total_memory = 0;
  int32_t max_optin_shared = 0;

  bool Build(std::string* why) {
    auto fail = [&](const char* what) {
      *why = std::string(what) + ": " + LastError();
      return false;
    };
    if (cuabi_device_get(0, device.out())) return fail("cuabi_device_get");
    if (CompileModule(device, kSaxpySource, saxpy_module.out())) return fail("compile saxpy");
    if (cuabi_module_get_function(saxpy_module, "saxpy", saxpy.out())) return fail("saxpy");
    if (CompileModule(device, kUtilSource, util.out())) return fail("compile util");
    if (cuabi_module_get_function(util, "fill_shared", fill_shared.out())) return fail("fill");
    if (CompileModule(device, kUtilSource, raised_module.out())) return fail("compile util 2");
    if (cuabi_module_get_function(raised_module, "fill_shared", raised.out())) return fail("fill");
    if (cuabi_buffer_alloc(device, 4096, a.out())) return fail("alloc a");
    if (cuabi_buffer_alloc(device, 4096, b.out())) return fail("alloc b");
    if (cuabi_stream_create(device, 0, 0, stream.out())) return fail("stream");
    if (cuabi_event_create(device, 0, event.out())) return fail("event");
    if (cuabi_event_create(device, CUABI_EVENT_DISABLE_TIMING, untimed.out())) return fail("event");
    if (cuabi_device_get_total_memory(device, &total_memory)) return fail("total memory");
    // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    if (cuabi_device_get_attribute(device, 97, &max_optin_shared)) return fail("attribute 97");
    int32_t major = 0, minor = 0;
    cuabi_device_get_compute_capability(device, &major, &minor);
    Program p;
    const std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
    const char* opts[] = {arch.c_str()};
    if (cuabi_program_create(kSaxpySource, "saxpy.cu", 0, nullptr, nullptr, p.out()) ||
        cuabi_program_compile(p, 1, opts))
      return fail("program for the CUBIN");
    size_t n = 0;
    cuabi_program_get_cubin(p, nullptr, &n);
    cubin.resize(n);
    if (cuabi_program_get_cubin(p, &cubin[0], &n)) return fail("get cubin");
    return true;
  }
};

// SAXPY's parameters: float a, float* x, float* y, float* out, size_t n.
struct SaxpyArgs {
  float a = 2.0f;
  uint64_t x = 0, y = 0, out = 0;
  size_t n = 16;
  void* params[5] = {&a, &x, &y, &out, &n};
  size_t sizes[5] = {sizeof(a), sizeof(x), sizeof(y), sizeof(out), sizeof(n)};
  explicit SaxpyArgs(cuabi_buffer buf) {
    uint64_t p = 0;
    cuabi_buffer_get_pointer(buf, &p);
    x = y = out = p;
  }
};

cuabi_launch_config Config(uint32_t grid, uint32_t block, uint32_t shared = 0) {
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.grid_x = grid;
  c.block_x = block;
  c.shared_mem_bytes = shared;
  return c;
}

// The call bodies of the "gpu" cases of tests/corpus/cases.json, by id.
Bodies GpuBodies(GpuFixture& f) {
  Bodies bodies;
  auto def = [&bodies](const std::string& id, Body body) { bodies.def(id, std::move(body)); };
  const cuabi_device dev = f.device.get();
  const cuabi_function saxpy = f.saxpy.get();
  const cuabi_buffer a = f.a.get(), b = f.b.get();
  static char host[8192];

  // --- Allocations -----------------------------------------------------------
  def("buffer_alloc.zero_bytes", [dev](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    cuabi_status st = cuabi_buffer_alloc(dev, 0, &out);
    if (HandleValue(out) != 0x99) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("buffer_alloc.size_max_bytes", [dev](CaseContext&) -> cuabi_status {
    Buffer out;
    return cuabi_buffer_alloc(dev, static_cast<size_t>(-1), out.out());
  });
  def("buffer_alloc.2pow50_bytes", [dev](CaseContext&) -> cuabi_status {
    Buffer out;
    return cuabi_buffer_alloc(dev, size_t(1) << 50, out.out());
  });
  def("buffer_alloc.twice_the_device_s_memory", [dev, &f](CaseContext&) -> cuabi_status {
    Buffer out;
    return cuabi_buffer_alloc(dev, f.total_memory * 2, out.out());
  });
  def("buffer_alloc.the_process_keeps_working_after_running_out_of_memory",
      [dev, saxpy](CaseContext& ctx) -> cuabi_status {
        Buffer big;
        cuabi_buffer_alloc(dev, size_t(1) << 50, big.out());
        std::string r = RunSaxpy(dev, saxpy, nullptr, 1 << 20, 7);
        if (!r.empty()) ctx.Problem("SAXPY after the failed allocation: " + r);
        Buffer ok;
        return cuabi_buffer_alloc(dev, 1 << 20, ok.out());
      });
  def("buffer_alloc.out_is_null",
      [dev](CaseContext&) -> cuabi_status { return cuabi_buffer_alloc(dev, 16, nullptr); });
  def("host_buffer_alloc.zero_bytes", [dev](CaseContext&) -> cuabi_status {
    HostBuffer out;
    return cuabi_host_buffer_alloc(dev, 0, out.out());
  });
  def("host_buffer_alloc.size_max_bytes", [dev](CaseContext&) -> cuabi_status {
    HostBuffer out;
    return cuabi_host_buffer_alloc(dev, static_cast<size_t>(-1), out.out());
  });
  def("host_buffer_register.register_null", [dev](CaseContext&) -> cuabi_status {
    HostBuffer out;
    return cuabi_host_buffer_register(dev, nullptr, 64, out.out());
  });
  def("host_buffer_register.register_zero_bytes", [dev](CaseContext&) -> cuabi_status {
    HostBuffer out;
    return cuabi_host_buffer_register(dev, host, 0, out.out());
  });
  def("buffer_wrap.wrap_address_0", [dev](CaseContext&) -> cuabi_status {
    Buffer out;
    return cuabi_buffer_wrap(dev, 0, 64, out.out());
  });
  def("buffer_wrap.wrap_zero_bytes", [dev, a](CaseContext&) -> cuabi_status {
    Buffer out;
    uint64_t p = 0;
    cuabi_buffer_get_pointer(a, &p);
    return cuabi_buffer_wrap(dev, p, 0, out.out());
  });
  def("buffer_wrap.wrap_a_range_that_wraps_around_the_address_space",
      [dev](CaseContext&) -> cuabi_status {
        Buffer out;
        return cuabi_buffer_wrap(dev, ~0ull - 15, 64, out.out());
      });

  // --- Copies ----------------------------------------------------------------
  def("buffer_copy_from_host.one_byte_past_the_end",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_from_host(a, 0, host, 4097); });
  def("buffer_copy_from_host.offset_past_the_end",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_from_host(a, 4097, host, 0); });
  def("buffer_copy_from_host.offset_bytes_overflows_size_t", [a](CaseContext&) -> cuabi_status {
    return cuabi_buffer_copy_from_host(a, static_cast<size_t>(-1), host, 2);
  });
  def("buffer_copy_from_host.size_max_bytes", [a](CaseContext&) -> cuabi_status {
    return cuabi_buffer_copy_from_host(a, 0, host, static_cast<size_t>(-1));
  });
  def("buffer_copy_from_host.source_null",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_from_host(a, 0, nullptr, 16); });
  def("buffer_copy_from_host.zero_bytes_from_null", [a](CaseContext&) -> cuabi_status {
    return cuabi_buffer_copy_from_host(a, 4096, nullptr, 0);
  });
  def("buffer_copy_to_host.read_past_the_end", [a](CaseContext& ctx) -> cuabi_status {
    host[0] = 0x5c;
    cuabi_status st = cuabi_buffer_copy_to_host(a, 4000, host, 97);
    if (host[0] != 0x5c) ctx.Problem("the host buffer was written although the copy failed");
    return st;
  });
  def("buffer_copy_to_host.destination_null",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy_to_host(a, 0, nullptr, 16); });
  def("buffer_copy_from_host_async.async_past_the_end", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_copy_from_host_async(a, 1, host, 4096, f.stream);
  });
  def("buffer_copy_to_host_async.async_read_past_the_end", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_copy_to_host_async(a, 4096, host, 1, f.stream);
  });
  def("buffer_copy_from_host_async.async_on_a_released_stream",
      [a, dev](CaseContext&) -> cuabi_status {
        cuabi_stream s = nullptr;
        cuabi_stream_create(dev, 0, 0, &s);
        cuabi_stream_release(s);
        return cuabi_buffer_copy_from_host_async(a, 0, host, 16, s);
      });
  def("buffer_copy_to_host_async.async_on_a_buffer_handle_as_the_stream",
      [a, b](CaseContext&) -> cuabi_status {
        return cuabi_buffer_copy_to_host_async(a, 0, host, 16,
                                               AsHandle<cuabi_stream>(HandleValue(b)));
      });
  def("buffer_copy.device_copy_overlapping_itself",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 4, a, 0, 64); });
  def("buffer_copy.device_copy_onto_itself",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 128, a, 128, 1); });
  def("buffer_copy.device_copy_between_two_wraps_of_the_same_memory",
      [a, dev](CaseContext&) -> cuabi_status {
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        Buffer w1, w2;
        cuabi_buffer_wrap(dev, p, 2048, w1.out());
        cuabi_buffer_wrap(dev, p + 1024, 2048, w2.out());
        return cuabi_buffer_copy(w1, 1074, w2, 0, 100);  // [p+1074, +100) and [p+1024, +100)
      });
  def("buffer_copy_async.async_device_copy_overlapping", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_copy_async(a, 0, a, 8, 16, f.stream);
  });
  def("buffer_copy.device_copy_past_the_destination_s_end",
      [a, b](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 4000, b, 0, 100); });
  def("buffer_copy.device_copy_past_the_source_s_end",
      [a, b](CaseContext&) -> cuabi_status { return cuabi_buffer_copy(a, 0, b, 4095, 2); });
  def("buffer_copy.non_overlapping_halves_of_one_buffer", [a](CaseContext& ctx) -> cuabi_status {
    std::vector<unsigned char> v(4096);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(i * 7);
    cuabi_buffer_copy_from_host(a, 0, v.data(), v.size());
    cuabi_status st = cuabi_buffer_copy(a, 2048, a, 0, 2048);
    std::vector<unsigned char> back(4096);
    cuabi_buffer_copy_to_host(a, 0, back.data(), back.size());
    for (size_t i = 0; i < 2048; ++i)
      if (back[2048 + i] != v[i]) {
        ctx.Problem("byte " + std::to_string(2048 + i) + " differs after the copy");
        break;
      }
    return st;
  });
  def("buffer_memset.memset_past_the_end",
      [a](CaseContext&) -> cuabi_status { return cuabi_buffer_memset(a, 4095, 0, 2); });
  // --- Batches (memory operations, copies, prefetches, discards) ------------
  {
    auto write_op = [](cuabi_buffer buf, size_t offset, uint64_t value, uint32_t width) {
      cuabi_mem_op op = CUABI_MEM_OP_INIT;
      op.buffer = buf;
      op.offset = offset;
      op.value = value;
      op.width = width;
      return op;
    };
    auto h2d = [](cuabi_buffer dst, size_t dst_offset, size_t bytes) {
      cuabi_copy_op op = CUABI_COPY_OP_INIT;
      op.dst_buffer = dst;
      op.dst_offset = dst_offset;
      op.src_host = host;
      op.bytes = bytes;
      return op;
    };
    def("stream_mem_op_batch.count_of_0", [a, &f, write_op](CaseContext&) -> cuabi_status {
      const cuabi_mem_op op = write_op(a, 0, 1, 4);
      return cuabi_stream_mem_op_batch(f.stream, &op, 0);
    });
    def("stream_mem_op_batch.count_past_255", [a, &f, write_op](CaseContext&) -> cuabi_status {
      std::vector<cuabi_mem_op> ops(256, write_op(a, 0, 1, 4));
      return cuabi_stream_mem_op_batch(f.stream, ops.data(), ops.size());
    });
    def("stream_mem_op_batch.null_ops",
        [&f](CaseContext&) -> cuabi_status { return cuabi_stream_mem_op_batch(f.stream, nullptr, 2); });
    def("stream_mem_op_batch.a_misaligned_word_in_ops_2",
        [a, &f, write_op](CaseContext&) -> cuabi_status {
          const cuabi_mem_op ops[] = {write_op(a, 0, 1, 4), write_op(a, 8, 1, 8),
                                      write_op(a, 6, 1, 4)};
          return cuabi_stream_mem_op_batch(f.stream, ops, 3);
        });
    def("stream_mem_op_batch.a_word_past_the_end_in_ops_1",
        [a, &f, write_op](CaseContext&) -> cuabi_status {
          const cuabi_mem_op ops[] = {write_op(a, 0, 1, 4), write_op(a, 4096, 1, 8)};
          return cuabi_stream_mem_op_batch(f.stream, ops, 2);
        });
    def("stream_mem_op_batch.neither_buffer_nor_host_buffer",
        [&f, write_op](CaseContext&) -> cuabi_status {
          const cuabi_mem_op op = write_op(nullptr, 0, 1, 4);
          return cuabi_stream_mem_op_batch(f.stream, &op, 1);
        });
    def("stream_mem_op_batch.a_released_buffer_in_ops_1",
        [a, dev, &f, write_op](CaseContext&) -> cuabi_status {
          cuabi_buffer gone = nullptr;
          cuabi_buffer_alloc(dev, 64, &gone);
          cuabi_buffer_release(gone);
          const cuabi_mem_op ops[] = {write_op(a, 0, 1, 4), write_op(gone, 0, 1, 4)};
          return cuabi_stream_mem_op_batch(f.stream, ops, 2);
        });
    def("stream_mem_op_batch.a_struct_size_unlike_ops_0",
        [a, &f, write_op](CaseContext&) -> cuabi_status {
          cuabi_mem_op ops[] = {write_op(a, 0, 1, 4), write_op(a, 8, 1, 4)};
          ops[1].struct_size = 8;
          return cuabi_stream_mem_op_batch(f.stream, ops, 2);
        });
    def("stream_mem_op_batch.an_unknown_kind", [a, &f, write_op](CaseContext&) -> cuabi_status {
      cuabi_mem_op op = write_op(a, 0, 1, 4);
      op.kind = static_cast<cuabi_mem_op_kind>(7);
      return cuabi_stream_mem_op_batch(f.stream, &op, 1);
    });
    def("stream_mem_op_batch.two_writes_and_a_wait_that_is_met",
        [a, &f, write_op](CaseContext& ctx) -> cuabi_status {
          cuabi_mem_op ops[] = {write_op(a, 0, 0xABCD, 4), write_op(a, 8, 0x1234567890ull, 8),
                                write_op(a, 0, 0xABCD, 4)};
          ops[2].kind = CUABI_MEM_OP_WAIT;
          ops[2].condition = CUABI_WAIT_EQ;
          const cuabi_status st = cuabi_stream_mem_op_batch(f.stream, ops, 3);
          cuabi_stream_synchronize(f.stream);
          uint64_t got[2] = {0, 0};
          cuabi_buffer_copy_to_host(a, 0, got, 16);
          if ((got[0] & 0xFFFFFFFFu) != 0xABCD || got[1] != 0x1234567890ull)
            ctx.Problem("the batch's words did not land");
          return st;
        });
    def("stream_copy_batch.a_destination_past_its_end_in_ops_412",
        [a, &f, h2d](CaseContext&) -> cuabi_status {
          std::vector<cuabi_copy_op> ops(500);
          for (size_t i = 0; i < ops.size(); ++i) ops[i] = h2d(a, i * 8, 8);
          ops[412] = h2d(a, 4000, 200);
          return cuabi_stream_copy_batch(f.stream, ops.data(), ops.size(), 0);
        });
    def("stream_copy_batch.a_source_past_its_end_in_ops_1",
        [a, b, &f, h2d](CaseContext&) -> cuabi_status {
          cuabi_copy_op ops[] = {h2d(a, 0, 8), h2d(a, 0, 100)};
          ops[1].src_host = nullptr;
          ops[1].src_buffer = b;
          ops[1].src_offset = 4000;
          return cuabi_stream_copy_batch(f.stream, ops, 2, 0);
        });
    def("stream_copy_batch.no_destination", [&f, h2d](CaseContext&) -> cuabi_status {
      const cuabi_copy_op op = h2d(nullptr, 0, 8);
      return cuabi_stream_copy_batch(f.stream, &op, 1, 0);
    });
    def("stream_copy_batch.two_sources", [a, b, &f, h2d](CaseContext&) -> cuabi_status {
      cuabi_copy_op op = h2d(a, 0, 8);
      op.src_buffer = b;
      return cuabi_stream_copy_batch(f.stream, &op, 1, 0);
    });
    def("stream_copy_batch.overlapping_ranges_in_ops_3",
        [a, &f, h2d](CaseContext&) -> cuabi_status {
          cuabi_copy_op ops[4] = {h2d(a, 0, 8), h2d(a, 8, 8), h2d(a, 16, 8), h2d(a, 100, 64)};
          ops[3].src_host = nullptr;
          ops[3].src_buffer = a;
          ops[3].src_offset = 120;
          return cuabi_stream_copy_batch(f.stream, ops, 4, 0);
        });
    def("stream_copy_batch.unknown_flags", [a, &f, h2d](CaseContext&) -> cuabi_status {
      const cuabi_copy_op op = h2d(a, 0, 8);
      return cuabi_stream_copy_batch(f.stream, &op, 1, 0x10);
    });
    def("stream_copy_batch.pinned_memory_past_its_end", [a, dev, &f](CaseContext&) -> cuabi_status {
      cuabi_host_buffer pinned = nullptr;
      cuabi_host_buffer_alloc(dev, 64, &pinned);
      cuabi_copy_op op = CUABI_COPY_OP_INIT;
      op.dst_host_buffer = pinned;
      op.dst_offset = 32;
      op.src_buffer = a;
      op.bytes = 64;
      const cuabi_status st = cuabi_stream_copy_batch(f.stream, &op, 1, 0);
      cuabi_host_buffer_release(pinned);
      return st;
    });
    def("stream_copy_batch.a_thousand_host_to_device_copies",
        [a, &f, h2d](CaseContext& ctx) -> cuabi_status {
          for (size_t i = 0; i < 4000; ++i) host[i] = static_cast<char>(i * 7 + 3);
          std::vector<cuabi_copy_op> ops(1000);
          for (size_t i = 0; i < ops.size(); ++i) {
            ops[i] = h2d(a, i * 4, 4);
            ops[i].src_offset = i * 4;
          }
          const cuabi_status st = cuabi_stream_copy_batch(f.stream, ops.data(), ops.size(), 0);
          cuabi_stream_synchronize(f.stream);
          std::vector<char> back(4000);
          cuabi_buffer_copy_to_host(a, 0, back.data(), back.size());
          for (size_t i = 0; i < back.size(); ++i)
            if (back[i] != static_cast<char>(i * 7 + 3)) {
              ctx.Problem("byte " + std::to_string(i) + " of the batch's copies is wrong");
              break;
            }
          return st;
        });
    // 3D batch copies: 16-byte x 16-row boxes of host rows 16 bytes apart
    // into the 4096-byte buffer as rows of 64 bytes.
    auto box = [](cuabi_buffer dst, size_t dst_x, size_t dst_y, size_t src_y) {
      cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
      d.src_host = host;
      d.src_y = src_y;
      d.src_pitch = 16;
      d.dst_buffer = dst;
      d.dst_x_bytes = dst_x;
      d.dst_y = dst_y;
      d.dst_pitch = 64;
      d.width_bytes = 16;
      d.height = 16;
      return d;
    };
    def("stream_copy_3d_batch.a_box_past_the_buffer_s_end_in_copies_2",
        [a, &f, box](CaseContext&) -> cuabi_status {
          const cuabi_copy_3d_desc d[] = {box(a, 0, 0, 0), box(a, 16, 0, 16), box(a, 0, 60, 0)};
          return cuabi_stream_copy_3d_batch(f.stream, d, 3, 0);
        });
    def("stream_copy_3d_batch.a_pitch_smaller_than_the_row_in_copies_1",
        [a, &f, box](CaseContext&) -> cuabi_status {
          cuabi_copy_3d_desc d[] = {box(a, 0, 0, 0), box(a, 0, 0, 0)};
          d[1].dst_pitch = 8;
          return cuabi_stream_copy_3d_batch(f.stream, d, 2, 0);
        });
    def("stream_copy_3d_batch.both_sides_host_memory", [&f, box](CaseContext&) -> cuabi_status {
      static char other[1024];
      cuabi_copy_3d_desc d = box(nullptr, 0, 0, 0);
      d.dst_host = other;
      return cuabi_stream_copy_3d_batch(f.stream, &d, 1, 0);
    });
    def("stream_copy_3d_batch.unknown_flags", [a, &f, box](CaseContext&) -> cuabi_status {
      const cuabi_copy_3d_desc d = box(a, 0, 0, 0);
      return cuabi_stream_copy_3d_batch(f.stream, &d, 1, 0x10);
    });
    def("stream_copy_3d_batch.count_0", [a, &f, box](CaseContext&) -> cuabi_status {
      const cuabi_copy_3d_desc d = box(a, 0, 0, 0);
      return cuabi_stream_copy_3d_batch(f.stream, &d, 0, 0);
    });
    def("stream_copy_3d_batch.three_boxes_host_to_device",
        [a, &f, box](CaseContext& ctx) -> cuabi_status {
          for (size_t i = 0; i < 48 * 16; ++i) host[i] = static_cast<char>(i * 5 + 1);
          cuabi_buffer_memset(a, 0, 0, 4096);
          cuabi_copy_3d_desc d[3];
          for (size_t k = 0; k < 3; ++k) d[k] = box(a, k * 16, 0, k * 16);
          const cuabi_status st = cuabi_stream_copy_3d_batch(f.stream, d, 3, 0);
          cuabi_stream_synchronize(f.stream);
          std::vector<char> back(4096);
          cuabi_buffer_copy_to_host(a, 0, back.data(), back.size());
          for (size_t row = 0; row < 16; ++row)
            for (size_t col = 0; col < 64; ++col) {
              const size_t k = col / 16;
              const char want =
                  k < 3 ? static_cast<char>(((k * 16 + row) * 16 + col % 16) * 5 + 1) : 0;
              if (back[row * 64 + col] != want) {
                ctx.Problem("byte " + std::to_string(col) + " of row " + std::to_string(row) +
                            " of the batch's boxes is wrong");
                return st;
              }
            }
          return st;
        });
    auto managed_ranges = [dev](Buffer& m, cuabi_buffer other) {
      cuabi_buffer_alloc_managed(dev, 4096, 0, m.out());
      std::vector<cuabi_managed_range> r(2, cuabi_managed_range(CUABI_MANAGED_RANGE_INIT));
      r[0].buffer = m;
      r[0].bytes = 2048;
      r[1].buffer = other ? other : m.get();
      r[1].offset = 2048;
      r[1].bytes = 2048;
      return r;
    };
    def("stream_prefetch_batch.a_device_buffer_in_ranges_1",
        [a, &f, managed_ranges](CaseContext&) -> cuabi_status {
          Buffer m;
          auto r = managed_ranges(m, a);
          return cuabi_stream_prefetch_batch(f.stream, r.data(), r.size(), 0);
        });
    def("stream_prefetch_batch.an_unknown_location",
        [&f, managed_ranges](CaseContext&) -> cuabi_status {
          Buffer m;
          auto r = managed_ranges(m, nullptr);
          return cuabi_stream_prefetch_batch(f.stream, r.data(), r.size(), 99);
        });
    def("stream_discard_batch.a_range_past_the_end_in_ranges_1",
        [&f, managed_ranges](CaseContext&) -> cuabi_status {
          Buffer m;
          auto r = managed_ranges(m, nullptr);
          r[1].bytes = 4096;
          return cuabi_stream_discard_batch(f.stream, r.data(), r.size());
        });
    def("stream_discard_and_prefetch_batch.a_range_of_0_bytes",
        [&f, managed_ranges](CaseContext&) -> cuabi_status {
          Buffer m;
          auto r = managed_ranges(m, nullptr);
          r[0].bytes = 0;
          return cuabi_stream_discard_and_prefetch_batch(f.stream, r.data(), r.size(), 0);
        });
  }
  // --- Stream memory operations ---------------------------------------------
  def("stream_write_value.a_width_of_3_bytes", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_write_value(f.stream, a, 0, 1, 3, 0);
  });
  def("stream_write_value.a_word_not_aligned_to_its_width", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_write_value(f.stream, a, 6, 1, 4, 0);
  });
  def("stream_write_value.a_word_past_the_end", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_write_value(f.stream, a, 4096, 1, 8, 0);
  });
  def("stream_write_value.a_value_too_wide_for_4_bytes", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_write_value(f.stream, a, 0, 1ull << 32, 4, 0);
  });
  def("stream_write_value.the_flush_flag_on_a_write", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_write_value(f.stream, a, 0, 1, 4, CUABI_MEM_OP_FLUSH);
  });
  def("stream_wait_value.the_no_barrier_flag_on_a_wait", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_wait_value(f.stream, a, 0, 1, 4, CUABI_WAIT_GEQ,
                                   CUABI_MEM_OP_NO_MEMORY_BARRIER);
  });
  def("stream_wait_value.an_unknown_condition", [a, &f](CaseContext&) -> cuabi_status {
    return cuabi_stream_wait_value(f.stream, a, 0, 1, 4, static_cast<cuabi_wait_condition>(9), 0);
  });
  def("stream_wait_value.null_buffer", [&f](CaseContext&) -> cuabi_status {
    return cuabi_stream_wait_value(f.stream, nullptr, 0, 1, 4, CUABI_WAIT_GEQ, 0);
  });
  def("buffer_memset_async.async_memset_with_size_max_bytes",
      [a, &f](CaseContext&) -> cuabi_status {
        return cuabi_buffer_memset_async(a, 0, 0, static_cast<size_t>(-1), f.stream);
      });

  // --- Launch configurations -------------------------------------------------
  auto launch_cfg = [saxpy, a](const cuabi_launch_config& c) {
    SaxpyArgs args(a);
    return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, args.sizes, 5);
  };
  def("function_launch_sized.block_of_2048_threads_in_x",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(1, 2048)); });
  def("function_launch_sized.block_of_1024_x_2_threads",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 1024);
        c.block_y = 2;
        return launch_cfg(c);
      });
  def("function_launch_sized.block_z_of_128", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 1);
    c.block_z = 128;
    return launch_cfg(c);
  });
  def("function_launch_sized.grid_x_of_zero",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(0, 32)); });
  def("function_launch_sized.grid_z_of_zero", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.grid_z = 0;
    return launch_cfg(c);
  });
  def("function_launch_sized.block_x_of_zero",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(1, 0)); });
  def("function_launch_sized.grid_y_of_2pow32_minus_1", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.grid_y = 0xFFFFFFFFu;
    return launch_cfg(c);
  });
  def("function_launch_sized.1_gib_of_dynamic_shared_memory",
      [launch_cfg](CaseContext&) -> cuabi_status { return launch_cfg(Config(1, 32, 1u << 30)); });
  def("function_launch.shared_memory_above_the_default_limit_within_the_opt_in",
      [&f, a](CaseContext&) -> cuabi_status {
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        void* params[] = {&p};
        cuabi_launch_config c = Config(1, 32, 64 * 1024);
        return cuabi_function_launch(f.fill_shared, &c, nullptr, params, 1);
      });
  def("function_set_attribute.shared_memory_limit_raised_past_the_device_s",
      [&f](CaseContext&) -> cuabi_status {
        return cuabi_function_set_attribute(f.raised, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            f.max_optin_shared + 1);
      });
  def("function_launch.shared_memory_within_a_raised_limit",
      [&f, a](CaseContext& ctx) -> cuabi_status {
        if (cuabi_function_set_attribute(f.raised, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         64 * 1024) != CUABI_SUCCESS)
          ctx.Problem("raising the limit: " + LastError());
        uint64_t p = 0;
        cuabi_buffer_get_pointer(a, &p);
        void* params[] = {&p};
        cuabi_launch_config c = Config(1, 32, 64 * 1024);
        cuabi_status st = cuabi_function_launch(f.raised, &c, nullptr, params, 1);
        int out[32] = {0};
        if (st == CUABI_SUCCESS && cuabi_buffer_copy_to_host(a, 0, out, sizeof(out)) == 0 &&
            (out[0] != 31 || out[31] != 0))
          ctx.Problem("fill_shared gave wrong results");
        return st;
      });
  def("function_launch_sized.config_null", [saxpy, a](CaseContext&) -> cuabi_status {
    SaxpyArgs args(a);
    return cuabi_function_launch_sized(saxpy, nullptr, nullptr, args.params, args.sizes, 5);
  });
  def("function_launch_sized.config_struct_size_0", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.struct_size = 0;
    return launch_cfg(c);
  });
  def("function_launch_packed.config_from_a_newer_header_with_a_field_set",
      [saxpy, a](CaseContext&) -> cuabi_status {
        struct {
          cuabi_launch_config c;
          uint64_t future;
        } big{};
        big.c = Config(1, 32);
        big.c.struct_size = sizeof(big);
        big.future = 1;
        SaxpyArgs args(a);
        std::vector<unsigned char> packed(40, 0);
        return cuabi_function_launch_packed(saxpy, &big.c, nullptr, packed.data(), packed.size());
      });
  def("function_launch_sized.config_from_a_newer_header_new_fields_zero",
      [saxpy, a](CaseContext&) -> cuabi_status {
        struct {
          cuabi_launch_config c;
          uint64_t future;
        } big{};
        big.c = Config(1, 32);
        big.c.struct_size = sizeof(big);
        SaxpyArgs args(a);
        return cuabi_function_launch_sized(saxpy, &big.c, nullptr, args.params, args.sizes, 5);
      });

  // --- Launch attributes (cuabi_launch_config's 0.3 fields) -------------------
  auto launch_on = [saxpy, a](const cuabi_launch_config& c, cuabi_stream s) {
    SaxpyArgs args(a);
    return cuabi_function_launch_sized(saxpy, &c, s, args.params, args.sizes, 5);
  };
  def("function_launch_sized.access_policy_window_past_the_device_maximum",
      [launch_cfg, a, dev](CaseContext&) -> cuabi_status {
        int32_t most = 0;
        cuabi_device_get_attribute(dev, 109, &most);  // MAX_ACCESS_POLICY_WINDOW_SIZE
        cuabi_launch_config c = Config(1, 32);
        cuabi_buffer_get_pointer(a, &c.access_policy_window.base);
        c.access_policy_window.bytes = static_cast<size_t>(most) + 1;
        return launch_cfg(c);
      });
  def("function_launch_sized.access_policy_window_hit_ratio_above_1",
      [launch_cfg, a](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        cuabi_buffer_get_pointer(a, &c.access_policy_window.base);
        c.access_policy_window.bytes = 4096;
        c.access_policy_window.hit_ratio = 1.5f;
        return launch_cfg(c);
      });
  def("function_launch_sized.access_policy_window_hit_ratio_negative",
      [launch_cfg, a](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        cuabi_buffer_get_pointer(a, &c.access_policy_window.base);
        c.access_policy_window.bytes = 4096;
        c.access_policy_window.hit_ratio = -0.25f;
        return launch_cfg(c);
      });
  def("function_launch_sized.access_policy_window_unknown_hit_property",
      [launch_cfg, a](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        cuabi_buffer_get_pointer(a, &c.access_policy_window.base);
        c.access_policy_window.bytes = 4096;
        c.access_policy_window.hit_property = static_cast<cuabi_access_property>(7);
        return launch_cfg(c);
      });
  def("function_launch_sized.access_policy_window_base_0",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.access_policy_window.bytes = 4096;
        return launch_cfg(c);
      });
  def("function_launch_sized.unknown_sync_policy", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.sync_policy = static_cast<cuabi_sync_policy>(9);
    return launch_cfg(c);
  });
  def("function_launch_sized.sync_policy_on_a_launch", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.sync_policy = CUABI_SYNC_POLICY_SPIN;
    return launch_cfg(c);
  });
  def("function_launch_sized.unknown_cluster_scheduling_policy",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.cluster_scheduling_policy = static_cast<cuabi_cluster_scheduling_policy>(7);
        return launch_cfg(c);
      });
  def("function_launch_sized.unknown_mem_sync_domain", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.mem_sync_domain = 2;
    return launch_cfg(c);
  });
  def("function_launch_sized.mem_sync_domain_map_past_the_device_s_domains",
      [launch_cfg, dev](CaseContext&) -> cuabi_status {
        int32_t count = 0;
        cuabi_device_get_attribute(dev, 126, &count);  // MEM_SYNC_DOMAIN_COUNT
        cuabi_launch_config c = Config(1, 32);
        c.mem_sync_domain_map_default = 0;
        c.mem_sync_domain_map_remote = count;
        return launch_cfg(c);
      });
  def("function_launch_sized.mem_sync_domain_map_half_given",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.mem_sync_domain_map_default = 0;
        return launch_cfg(c);
      });
  def("function_launch_sized.shared_carveout_of_101", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.shared_carveout = 101;
    return launch_cfg(c);
  });
  def("function_launch_sized.shared_carveout_of_minus_2",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.shared_carveout = -2;
        return launch_cfg(c);
      });
  def("function_launch_sized.completion_event_that_times",
      [launch_cfg, &f](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.completion_event = f.event;
        return launch_cfg(c);
      });
  def("function_launch_sized.completion_event_released",
      [launch_cfg, dev](CaseContext&) -> cuabi_status {
        cuabi_event e = nullptr;
        cuabi_event_create(dev, CUABI_EVENT_DISABLE_TIMING, &e);
        cuabi_event_release(e);
        cuabi_launch_config c = Config(1, 32);
        c.completion_event = e;
        return launch_cfg(c);
      });
  def("function_launch_sized.device_updatable_node_outside_a_capture",
      [launch_on, &f](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.flags = CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE;
        return launch_on(c, f.stream);
      });
  def("function_launch_sized.device_updatable_node_on_the_default_stream",
      [launch_on](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.flags = CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE;
        return launch_on(c, nullptr);
      });
  def("launch_plan_create.plan_with_a_shared_carveout_of_101",
      [saxpy](CaseContext& ctx) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.shared_carveout = 101;
        cuabi_launch_plan out = AsHandle<cuabi_launch_plan>(0x99);
        const cuabi_status st = cuabi_launch_plan_create(saxpy, &c, nullptr, &out);
        if (HandleValue(out) != 0x99) ctx.Problem("out was written although the call failed");
        return st;
      });
  def("launch_plan_create.plan_with_an_unknown_mem_sync_domain",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.mem_sync_domain = 5;
        cuabi_launch_plan out = nullptr;
        const cuabi_status st = cuabi_launch_plan_create(saxpy, &c, nullptr, &out);
        if (st == CUABI_SUCCESS) cuabi_launch_plan_release(out);
        return st;
      });
  def("launch_plan_launch.device_updatable_plan_outside_a_capture",
      [saxpy, &f](CaseContext& ctx) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.flags = CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE;
        cuabi_launch_plan plan = nullptr;
        if (cuabi_launch_plan_create(saxpy, &c, f.stream, &plan) != CUABI_SUCCESS) {
          ctx.Problem("the plan was refused at creation (the capture is checked at launch)");
          return CUABI_SUCCESS;
        }
        const cuabi_status st = cuabi_launch_plan_launch(plan);
        cuabi_launch_plan_release(plan);
        return st;
      });
  def("function_launch_sized.config_of_the_0_2_size", [launch_cfg](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    c.struct_size = 64;
    c.shared_carveout = 101;  // past an 0.2 struct: not read
    return launch_cfg(c);
  });
  def("function_launch_sized.config_of_a_size_between_versions",
      [launch_cfg](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        c.struct_size = 100;
        return launch_cfg(c);
      });

  // --- Argument lists ----------------------------------------------------------
  def("function_launch.four_arguments_for_five_parameters",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(saxpy, &c, nullptr, args.params, 4);
      });
  def("function_launch.six_arguments_for_five_parameters",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        void* six[] = {args.params[0], args.params[1], args.params[2],
                       args.params[3], args.params[4], args.params[4]};
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch(saxpy, &c, nullptr, six, 6);
      });
  def("function_launch.params_null", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    return cuabi_function_launch(saxpy, &c, nullptr, nullptr, 5);
  });
  def("function_launch.one_argument_pointer_null", [saxpy, a](CaseContext&) -> cuabi_status {
    SaxpyArgs args(a);
    args.params[3] = nullptr;
    cuabi_launch_config c = Config(1, 32);
    return cuabi_function_launch(saxpy, &c, nullptr, args.params, 5);
  });
  def("function_launch_sized.a_4_byte_n_for_a_size_t_parameter_the_overview_s_bug",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        uint32_t n32 = 16;
        args.params[4] = &n32;
        args.sizes[4] = sizeof(n32);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, args.sizes, 5);
      });
  def("function_launch_sized.a_double_for_a_float_parameter",
      [saxpy, a](CaseContext&) -> cuabi_status {
        SaxpyArgs args(a);
        double a64 = 2.0;
        args.params[0] = &a64;
        args.sizes[0] = sizeof(a64);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, args.sizes, 5);
      });
  def("function_launch_sized.param_sizes_null", [saxpy, a](CaseContext&) -> cuabi_status {
    SaxpyArgs args(a);
    cuabi_launch_config c = Config(1, 32);
    return cuabi_function_launch_sized(saxpy, &c, nullptr, args.params, nullptr, 5);
  });
  def("function_launch_sized.no_arguments_at_all", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    return cuabi_function_launch_sized(saxpy, &c, nullptr, nullptr, nullptr, 0);
  });
  def("function_launch_packed.packed_block_of_36_bytes_for_40",
      [saxpy](CaseContext&) -> cuabi_status {
        std::vector<unsigned char> packed(36, 0);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_packed(saxpy, &c, nullptr, packed.data(), packed.size());
      });
  def("function_launch_packed.packed_block_of_size_max_bytes",
      [saxpy](CaseContext&) -> cuabi_status {
        unsigned char one = 0;
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_packed(saxpy, &c, nullptr, &one, static_cast<size_t>(-1));
      });
  def("function_launch_packed.packed_args_null", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    return cuabi_function_launch_packed(saxpy, &c, nullptr, nullptr, 40);
  });
  def("function_launch_sized.a_program_handle_as_the_stream",
      [saxpy, a](CaseContext&) -> cuabi_status {
        Program p;
        cuabi_program_create("int x;", nullptr, 0, nullptr, nullptr, p.out());
        SaxpyArgs args(a);
        cuabi_launch_config c = Config(1, 32);
        return cuabi_function_launch_sized(saxpy, &c, AsHandle<cuabi_stream>(HandleValue(p.get())),
                                           args.params, args.sizes, 5);
      });
  def("function_launch.a_module_handle_as_the_function", [&f](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    return cuabi_function_launch(AsHandle<cuabi_function>(HandleValue(f.saxpy_module.get())), &c,
                                 nullptr, nullptr, 0);
  });

  // --- Launch plans -------------------------------------------------------------
  def("launch_plan_create.plan_with_a_null_config", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_plan p = nullptr;
    return cuabi_launch_plan_create(saxpy, nullptr, nullptr, &p);
  });
  def("launch_plan_create.plan_with_a_block_over_the_limit",
      [saxpy](CaseContext& ctx) -> cuabi_status {
        cuabi_launch_plan p = AsHandle<cuabi_launch_plan>(0x77);
        cuabi_launch_config c = Config(1, 4096);
        cuabi_status st = cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
        if (HandleValue(p) != 0x77) ctx.Problem("out was written although the call failed");
        return st;
      });
  def("launch_plan_create.plan_with_a_zero_grid", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_plan p = nullptr;
    cuabi_launch_config c = Config(0, 32);
    return cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
  });
  def("launch_plan_create.plan_with_config_struct_size_0", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_plan p = nullptr;
    cuabi_launch_config c = Config(1, 32);
    c.struct_size = 0;
    return cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
  });
  def("launch_plan_create.plan_on_a_released_stream", [saxpy, dev](CaseContext&) -> cuabi_status {
    cuabi_stream s = nullptr;
    cuabi_stream_create(dev, 0, 0, &s);
    cuabi_stream_release(s);
    cuabi_launch_plan p = nullptr;
    cuabi_launch_config c = Config(1, 32);
    return cuabi_launch_plan_create(saxpy, &c, s, &p);
  });
  def("launch_plan_create.plan_into_null", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    return cuabi_launch_plan_create(saxpy, &c, nullptr, nullptr);
  });
  def("launch_plan_get_args.plan_arguments_into_null", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(1, 32);
    cuabi_launch_plan p = nullptr;
    cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
    size_t n = 0;
    cuabi_status st = cuabi_launch_plan_get_args(p, nullptr, &n);
    cuabi_launch_plan_release(p);
    return st;
  });
  def("launch_plan_launch.plan_released_twice_then_launched",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1, 32);
        cuabi_launch_plan p = nullptr;
        cuabi_launch_plan_create(saxpy, &c, nullptr, &p);
        cuabi_launch_plan_release(p);
        cuabi_launch_plan_release(p);
        return cuabi_launch_plan_launch(p);
      });
  def("launch_plan_launch.a_plan_outlives_its_module_function_and_stream",
      [dev](CaseContext& ctx) -> cuabi_status {
        Module m;
        Function fn;
        Stream s;
        cuabi_launch_plan plan = nullptr;
        cuabi_launch_config c = Config(4, 256);
        if (CompileModule(dev, kSaxpySource, m.out()) ||
            cuabi_module_get_function(m, "saxpy", fn.out()) ||
            cuabi_stream_create(dev, 0, 0, s.out()) || cuabi_launch_plan_create(fn, &c, s, &plan)) {
          ctx.Problem("setup: " + LastError());
          return CUABI_ERROR_INTERNAL;
        }
        const cuabi_stream stream = s.get();
        m.reset();
        fn.reset();
        s.reset();
        // 1024 elements: x = i, y = 1, out = 2x + y, through the plan's block.
        std::vector<float> x(1024), y(1024, 1.0f), out(1024, 0.0f);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
        Buffer bx, by, bo;
        cuabi_buffer_alloc(dev, 4096, bx.out());
        cuabi_buffer_alloc(dev, 4096, by.out());
        cuabi_buffer_alloc(dev, 4096, bo.out());
        cuabi_buffer_copy_from_host(bx, 0, x.data(), 4096);
        cuabi_buffer_copy_from_host(by, 0, y.data(), 4096);
        void* args = nullptr;
        size_t size = 0;
        if (cuabi_launch_plan_get_args(plan, &args, &size) || size != 40) {
          ctx.Problem("get_args: " + LastError() + ", size " + std::to_string(size));
          cuabi_launch_plan_release(plan);
          return CUABI_ERROR_INTERNAL;
        }
        const float a = 2.0f;
        const size_t n = 1024;
        uint64_t px = 0, py = 0, po = 0;
        cuabi_buffer_get_pointer(bx, &px);
        cuabi_buffer_get_pointer(by, &py);
        cuabi_buffer_get_pointer(bo, &po);
        unsigned char* block = static_cast<unsigned char*>(args);
        std::memcpy(block + 0, &a, 4);
        std::memcpy(block + 8, &px, 8);
        std::memcpy(block + 16, &py, 8);
        std::memcpy(block + 24, &po, 8);
        std::memcpy(block + 32, &n, 8);
        cuabi_status st = cuabi_launch_plan_launch(plan);
        // The plan's stream was released by us; it is still the plan's: wait
        // for everything on the device.
        cuabi_device_synchronize(dev);
        cuabi_buffer_copy_to_host(bo, 0, out.data(), 4096);
        for (size_t i = 0; i < out.size(); ++i)
          if (out[i] != 2.0f * x[i] + 1.0f) {
            ctx.Problem("element " + std::to_string(i) + " is wrong");
            break;
          }
        (void)stream;
        cuabi_launch_plan_release(plan);
        return st;
      });

  // --- Names, attributes, ordinals ------------------------------------------
  def("module_get_function.an_unknown_kernel", [&f](CaseContext& ctx) -> cuabi_status {
    cuabi_function out = AsHandle<cuabi_function>(0x42);
    cuabi_status st = cuabi_module_get_function(f.saxpy_module, "no_such_kernel", &out);
    if (HandleValue(out) != 0x42) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("module_get_function.an_empty_kernel_name", [&f](CaseContext&) -> cuabi_status {
    Function out;
    return cuabi_module_get_function(f.saxpy_module, "", out.out());
  });
  def("module_get_function.a_null_kernel_name", [&f](CaseContext&) -> cuabi_status {
    Function out;
    return cuabi_module_get_function(f.saxpy_module, nullptr, out.out());
  });
  def("module_get_function.a_kernel_name_that_is_not_utf_8", [&f](CaseContext&) -> cuabi_status {
    Function out;
    return cuabi_module_get_function(f.saxpy_module, "sax\xffpy", out.out());
  });
  def("module_get_function.a_template_kernel_without_a_name_expression",
      [&f](CaseContext&) -> cuabi_status {
        Function out;
        return cuabi_module_get_function(f.util, "store<int>", out.out());
      });
  def("module_get_global.an_unknown_global", [&f](CaseContext&) -> cuabi_status {
    uint64_t p = 0;
    size_t n = 0;
    return cuabi_module_get_global(f.util, "no_such_global", &p, &n);
  });
  def("module_get_lowered_name.an_unknown_lowered_name", [&f](CaseContext&) -> cuabi_status {
    size_t n = 0;
    return cuabi_module_get_lowered_name(f.util, "store<long>", nullptr, &n);
  });
  def("function_get_params.parameter_layout_into_too_few_entries",
      [saxpy](CaseContext&) -> cuabi_status {
        cuabi_param_info p[1];
        size_t n = 1;
        return cuabi_function_get_params(saxpy, p, &n, nullptr);
      });
  def("function_check_arg_size.parameter_index_size_max", [saxpy](CaseContext&) -> cuabi_status {
    return cuabi_function_check_arg_size(saxpy, static_cast<size_t>(-1), 8);
  });

  // --- One-call parameter layout and signature checks -------------------------
  def("function_get_params.count_null", [saxpy](CaseContext&) -> cuabi_status {
    cuabi_param_info p[5];
    return cuabi_function_get_params(saxpy, p, nullptr, nullptr);
  });
  def("function_get_params.short_array_writes_nothing", [saxpy](CaseContext& ctx) -> cuabi_status {
    cuabi_param_info p[5];
    std::memset(p, 0xA5, sizeof(p));
    size_t n = 4;
    size_t args = 777;
    cuabi_status st = cuabi_function_get_params(saxpy, p, &n, &args);
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(p);
    for (size_t i = 0; i < sizeof(p); ++i)
      if (bytes[i] != 0xA5) {
        ctx.Problem("a too-short array was written");
        break;
      }
    if (n != 5) ctx.Problem("*count holds " + std::to_string(n) + ", not the 5 needed");
    if (args != 777) ctx.Problem("args_size was written although the call failed");
    return st;
  });
  def("function_get_params.params_null_answers_the_count",
      [saxpy](CaseContext& ctx) -> cuabi_status {
        size_t n = 0, args = 0;
        cuabi_status st = cuabi_function_get_params(saxpy, nullptr, &n, &args);
        if (n != 5 || args != 40)
          ctx.Problem("count " + std::to_string(n) + " and args_size " + std::to_string(args) +
                      ", expected 5 and 40");
        cuabi_param_info p[5];
        if (cuabi_function_get_params(saxpy, p, &n, nullptr) != CUABI_SUCCESS || p[0].offset != 0 ||
            p[0].size != 4 || p[4].offset != 32 || p[4].size != 8)
          ctx.Problem("the layout is not SAXPY's (0:4 ... 32:8)");
        return st;
      });
  def("function_check_arg_sizes.sizes_null", [saxpy](CaseContext&) -> cuabi_status {
    return cuabi_function_check_arg_sizes(saxpy, nullptr, 5);
  });
  def("function_check_arg_sizes.no_sizes_for_five_parameters",
      [saxpy](CaseContext&) -> cuabi_status {
        return cuabi_function_check_arg_sizes(saxpy, nullptr, 0);
      });
  def("function_check_arg_sizes.four_sizes_for_five_parameters",
      [saxpy](CaseContext&) -> cuabi_status {
        const size_t sizes[] = {4, 8, 8, 8};
        return cuabi_function_check_arg_sizes(saxpy, sizes, 4);
      });
  def("function_check_arg_sizes.a_4_byte_n_for_a_size_t_parameter",
      [saxpy](CaseContext&) -> cuabi_status {
        const size_t sizes[] = {4, 8, 8, 8, 4};
        return cuabi_function_check_arg_sizes(saxpy, sizes, 5);
      });
  def("function_check_arg_sizes.the_right_sizes", [saxpy](CaseContext&) -> cuabi_status {
    const size_t sizes[] = {4, 8, 8, 8, 8};
    return cuabi_function_check_arg_sizes(saxpy, sizes, 5);
  });
  def("function_check_arg_size.index_one_past_the_last",
      [saxpy](CaseContext&) -> cuabi_status { return cuabi_function_check_arg_size(saxpy, 5, 8); });
  def("function_check_arg_size.a_double_for_a_float_parameter",
      [saxpy](CaseContext&) -> cuabi_status { return cuabi_function_check_arg_size(saxpy, 0, 8); });
  def("function_get_attribute.an_unknown_function_attribute",
      [saxpy](CaseContext&) -> cuabi_status {
        int32_t v = 0;
        return cuabi_function_get_attribute(saxpy, static_cast<cuabi_function_attribute>(9999), &v);
      });
  def("device_get_attribute.an_unknown_device_attribute", [dev](CaseContext&) -> cuabi_status {
    int32_t v = 0;
    return cuabi_device_get_attribute(dev, 99999, &v);
  });
  def("device_get_limit.an_unknown_limit", [dev](CaseContext&) -> cuabi_status {
    size_t v = 0;
    return cuabi_device_get_limit(dev, static_cast<cuabi_limit>(99), &v);
  });
  def("device_get_limit.null_value", [dev](CaseContext&) -> cuabi_status {
    return cuabi_device_get_limit(dev, CUABI_LIMIT_STACK_SIZE, nullptr);
  });
  def("device_set_limit.an_unknown_limit", [dev](CaseContext&) -> cuabi_status {
    return cuabi_device_set_limit(dev, static_cast<cuabi_limit>(-1), 1);
  });
  def("device_set_limit.persisting_l2_past_the_device_s_maximum",
      [dev](CaseContext&) -> cuabi_status {
        return cuabi_device_set_limit(dev, CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE, SIZE_MAX);
      });
  def("device_get.ordinal_minus_1", [](CaseContext&) -> cuabi_status {
    Device d;
    return cuabi_device_get(-1, d.out());
  });
  def("device_get.ordinal_1000000", [](CaseContext&) -> cuabi_status {
    Device d;
    return cuabi_device_get(1000000, d.out());
  });
  def("stream_create.unknown_stream_flags", [dev](CaseContext&) -> cuabi_status {
    Stream s;
    return cuabi_stream_create(dev, 0x80, 0, s.out());
  });
  def("event_create.unknown_event_flags", [dev](CaseContext&) -> cuabi_status {
    Event e;
    return cuabi_event_create(dev, 0x80, e.out());
  });
  def("stream_begin_capture.an_unknown_capture_mode", [&f](CaseContext&) -> cuabi_status {
    return cuabi_stream_begin_capture(f.stream, static_cast<cuabi_capture_mode>(99));
  });
  def("event_get_elapsed_ms.elapsed_time_of_events_never_recorded",
      [dev](CaseContext&) -> cuabi_status {
        Event e1, e2;
        cuabi_event_create(dev, 0, e1.out());
        cuabi_event_create(dev, 0, e2.out());
        float ms = 0;
        return cuabi_event_get_elapsed_ms(e1, e2, &ms);
      });
  def("event_get_elapsed_ms.elapsed_time_of_an_untimed_event", [&f](CaseContext&) -> cuabi_status {
    cuabi_event_record(f.untimed, nullptr);
    cuabi_event_record(f.event, nullptr);
    cuabi_event_synchronize(f.event);
    float ms = 0;
    return cuabi_event_get_elapsed_ms(f.untimed, f.event, &ms);
  });
  def("stream_wait_event.wait_on_a_released_event", [&f, dev](CaseContext&) -> cuabi_status {
    cuabi_event e = nullptr;
    cuabi_event_create(dev, 0, &e);
    cuabi_event_release(e);
    return cuabi_stream_wait_event(f.stream, e);
  });

  // --- Images, files, compile descriptions ---------------------------------------
  def("module_load_data.image_null", [dev](CaseContext&) -> cuabi_status {
    Module m;
    return cuabi_module_load_data(dev, nullptr, 10, m.out());
  });
  def("module_load_data.image_of_zero_bytes", [dev, &f](CaseContext&) -> cuabi_status {
    Module m;
    return cuabi_module_load_data(dev, f.cubin.data(), 0, m.out());
  });
  def("module_load_data.random_bytes_as_an_image", [dev](CaseContext&) -> cuabi_status {
    std::vector<unsigned char> junk(256);
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<unsigned char>(i * 131 + 7);
    Module m;
    return cuabi_module_load_data(dev, junk.data(), junk.size(), m.out());
  });
  def("module_load_data.ptx_text_that_is_not_ptx", [dev](CaseContext&) -> cuabi_status {
    const char text[] = ".version 99.9\n.target sm_1\nthis is not ptx";
    Module m;
    return cuabi_module_load_data(dev, text, sizeof(text) - 1, m.out());
  });
  def("module_load_data.a_cubin_cut_in_half_zero_padding_after",
      [dev, &f](CaseContext&) -> cuabi_status {
        std::vector<char> half(f.cubin.size() * 2, 0);
        std::copy(f.cubin.begin(), f.cubin.begin() + f.cubin.size() / 2, half.begin());
        Module m;
        return cuabi_module_load_data(dev, half.data(), f.cubin.size() / 2, m.out());
      });
  def("module_load_data.a_cubin_with_its_elf_header_damaged",
      [dev, &f](CaseContext&) -> cuabi_status {
        std::string bad = f.cubin;
        for (size_t i = 16; i < 64 && i < bad.size(); ++i) bad[i] = static_cast<char>(0xFF);
        Module m;
        return cuabi_module_load_data(dev, bad.data(), bad.size(), m.out());
      });
  def("module_load_data.cubin_truncations_ending_at_an_unmapped_page",
      [dev, &f](CaseContext& ctx) -> cuabi_status {
        // Each truncated image ends exactly where a PROT_NONE page begins: a
        // read past the given size would crash here instead of passing unseen.
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const size_t span = (f.cubin.size() / page + 2) * page;
        void* base =
            mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
          ctx.Problem("mmap failed");
          return CUABI_ERROR_INTERNAL;
        }
        char* guard = static_cast<char*>(base) + span;
        mprotect(guard, page, PROT_NONE);
        cuabi_status last = CUABI_ERROR_INTERNAL;
        size_t tried = 0;
        for (size_t len = 1; len < f.cubin.size(); len += (len < 128 ? 1 : 61)) {
          char* start = guard - len;
          std::memcpy(start, f.cubin.data(), len);
          Module m;
          cuabi_status st = cuabi_module_load_data(dev, start, len, m.out());
          ++tried;
          if (st != CUABI_ERROR_INVALID_ARGUMENT) {
            ctx.Problem("a " + std::to_string(len) + "-byte truncation answered " + StatusName(st));
            last = st;
            break;
          }
          last = st;
        }
        munmap(base, span + page);
        if (tried < 100) ctx.Problem("too few truncations tried");
        return last;
      });
  def("module_load_data.an_elf_header_alone", [dev](CaseContext&) -> cuabi_status {
    unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 1, 1};  // 32-bit
    Module m;
    return cuabi_module_load_data(dev, elf, sizeof(elf), m.out());
  });
  def("module_load_data.a_fatbin_header_claiming_2pow40_bytes",
      [dev](CaseContext&) -> cuabi_status {
        unsigned char fat[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 1, 0, 0};
        Module m;
        return cuabi_module_load_data(dev, fat, sizeof(fat), m.out());
      });
  def("module_load_file.a_file_that_does_not_exist", [dev](CaseContext&) -> cuabi_status {
    Module m;
    return cuabi_module_load_file(dev, "/nonexistent/kernel.cubin", m.out());
  });
  def("module_load_file.a_directory_as_the_file", [dev](CaseContext&) -> cuabi_status {
    Module m;
    return cuabi_module_load_file(dev, "/tmp", m.out());
  });
  def("module_load_file.an_empty_file", [dev](CaseContext& ctx) -> cuabi_status {
    char path[] = "/tmp/cuabi-empty-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) ctx.Problem("mkstemp failed");
    close(fd);
    Module m;
    cuabi_status st = cuabi_module_load_file(dev, path, m.out());
    unlink(path);
    return st;
  });
  def("module_load_file.a_path_that_is_not_utf_8", [dev](CaseContext&) -> cuabi_status {
    Module m;
    return cuabi_module_load_file(dev, "/tmp/\xff\xfe.cubin", m.out());
  });
  auto compile_desc = [dev](cuabi_compile_desc d) {
    Module m;
    return cuabi_module_compile(dev, &d, m.out());
  };
  def("module_compile.lto_in_a_module_compile", [compile_desc](CaseContext&) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kSaxpySource;
    d.lto = 1;
    return compile_desc(d);
  });
  def("module_compile.desc_null", [dev](CaseContext&) -> cuabi_status {
    Module m;
    return cuabi_module_compile(dev, nullptr, m.out());
  });
  def("module_compile.desc_struct_size_0", [compile_desc](CaseContext&) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kSaxpySource;
    d.struct_size = 0;
    return compile_desc(d);
  });
  def("module_compile.desc_source_null", [compile_desc](CaseContext&) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    return compile_desc(d);
  });
  def("module_compile.desc_output_7", [compile_desc](CaseContext&) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kSaxpySource;
    d.output = static_cast<cuabi_output>(7);
    return compile_desc(d);
  });
  def("module_compile.desc_flags_unknown", [compile_desc](CaseContext&) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kSaxpySource;
    d.flags = 0x100;
    return compile_desc(d);
  });
  def("module_compile.desc_options_null_with_a_count",
      [compile_desc](CaseContext&) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.num_options = 3;
        return compile_desc(d);
      });
  def("module_compile.desc_options_count_size_max", [compile_desc](CaseContext&) -> cuabi_status {
    static const char* one[] = {"-w"};
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kSaxpySource;
    d.options = one;
    d.num_options = static_cast<size_t>(-1);
    return compile_desc(d);
  });
  def("module_compile.desc_name_expression_null", [compile_desc](CaseContext&) -> cuabi_status {
    static const char* exprs[] = {nullptr};
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kUtilSource;
    d.name_expressions = exprs;
    d.num_name_expressions = 1;
    return compile_desc(d);
  });
  def("module_compile.a_compile_error", [compile_desc](CaseContext& ctx) -> cuabi_status {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = "extern \"C\" __global__ void k(int* x) { *x = undefined_in_module; }";
    d.flags = CUABI_COMPILE_NO_CACHE;
    cuabi_status st = compile_desc(d);
    if (!Contains(LastErrorLog(), "undefined_in_module"))
      ctx.Problem("cuabi_last_error_log does not hold NVRTC's log");
    return st;
  });
  def("module_compile.an_architecture_that_does_not_exist",
      [compile_desc](CaseContext&) -> cuabi_status {
        static const char* opts[] = {"--gpu-architecture=sm_1"};
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = kSaxpySource;
        d.options = opts;
        d.num_options = 1;
        d.flags = CUABI_COMPILE_NO_CACHE;
        return compile_desc(d);
      });
  def("module_compile.a_desc_from_a_newer_header_with_a_field_set",
      [dev](CaseContext&) -> cuabi_status {
        struct {
          cuabi_compile_desc d;
          uint64_t future;
        } big{};
        big.d = CUABI_COMPILE_DESC_INIT;
        big.d.struct_size = sizeof(big);
        big.d.source = kSaxpySource;
        big.future = 3;
        Module m;
        return cuabi_module_compile(dev, &big.d, m.out());
      });

  // --- A module released while its functions are held ------------------------
  def("function_launch_sized.module_released_its_function_still_launches",
      [dev](CaseContext& ctx) -> cuabi_status {
        Module m;
        Function fn;
        if (CompileModule(dev, kSaxpySource, m.out()) ||
            cuabi_module_get_function(m, "saxpy", fn.out())) {
          ctx.Problem("setup: " + LastError());
          return CUABI_ERROR_INTERNAL;
        }
        const cuabi_module gone = m.get();
        m.reset();  // the function keeps the module alive
        Function again;
        if (cuabi_module_get_function(gone, "saxpy", again.out()) != CUABI_ERROR_INVALID_HANDLE)
          ctx.Problem("the released module handle still answers");
        std::string r = RunSaxpy(dev, fn, nullptr, 4096, 3);
        if (!r.empty()) ctx.Problem(r);
        char name[16];
        size_t n = sizeof(name);
        if (cuabi_function_get_name(fn, name, &n) != CUABI_SUCCESS || std::string(name) != "saxpy")
          ctx.Problem("the function lost its name");
        return r.empty() ? CUABI_SUCCESS : CUABI_ERROR_INTERNAL;
      });
  def("module_get_global.module_released_then_its_handle_used",
      [dev](CaseContext&) -> cuabi_status {
        cuabi_module m = nullptr;
        CompileModule(dev, kUtilSource, &m);
        cuabi_module_release(m);
        uint64_t p = 0;
        size_t n = 0;
        return cuabi_module_get_global(m, "hardening_counter", &p, &n);
      });
  def("buffer_memset.buffer_released_twice_then_used", [dev](CaseContext&) -> cuabi_status {
    cuabi_buffer x = nullptr;
    cuabi_buffer_alloc(dev, 64, &x);
    cuabi_buffer_release(x);
    cuabi_buffer_release(x);
    return cuabi_buffer_memset(x, 0, 0, 64);
  });
  def("buffer_copy_to_host.device_handle_released_its_buffer_still_works",
      [](CaseContext& ctx) -> cuabi_status {
        Device d;
        Buffer x;
        cuabi_device_get(0, d.out());
        cuabi_buffer_alloc(d, 64, x.out());
        d.reset();
        unsigned char v[64];
        if (cuabi_buffer_memset(x, 0, 0xAB, 64) != CUABI_SUCCESS) ctx.Problem(LastError());
        cuabi_status st = cuabi_buffer_copy_to_host(x, 0, v, 64);
        if (v[63] != 0xAB) ctx.Problem("wrong data after the device handle was released");
        return st;
      });

  // --- Extended launches and occupancy ---------------------------------------
  def("function_launch.cluster_dims_not_dividing_the_grid", [saxpy, a](CaseContext&) -> cuabi_status {
    cuabi_launch_config c = Config(3, 32);
    c.cluster_x = 2;
    c.cluster_y = c.cluster_z = 1;
    SaxpyArgs args(a);
    return cuabi_function_launch(saxpy, &c, nullptr, args.params, 5);
  });
  def("function_launch.cooperative_grid_larger_than_resident",
      [saxpy, a](CaseContext&) -> cuabi_status {
        cuabi_launch_config c = Config(1u << 24, 1024);
        c.flags = CUABI_LAUNCH_COOPERATIVE;
        SaxpyArgs args(a);
        return cuabi_function_launch(saxpy, &c, nullptr, args.params, 5);
      });
  def("function_get_active_blocks_per_sm.block_size_0", [saxpy](CaseContext&) -> cuabi_status {
    uint32_t n = 0;
    return cuabi_function_get_active_blocks_per_sm(saxpy, 0, 0, &n);
  });
  def("function_suggest_block_size.limit_over_the_kernels_max",
      [saxpy](CaseContext&) -> cuabi_status {
        uint32_t block = 0, grid = 0;
        return cuabi_function_suggest_block_size(saxpy, 0, 0, 1u << 20, &block, &grid);
      });
  def("function_suggest_block_size.no_block_size_fits_the_shared_memory",
      [saxpy](CaseContext&) -> cuabi_status {
        uint32_t block = 0, grid = 0;
        return cuabi_function_suggest_block_size(saxpy, size_t{1} << 30, 0, 0, &block, &grid);
      });

  // --- Host functions and graph node updates ----------------------------------
  def("stream_launch_host_func.null_callback", [dev](CaseContext&) -> cuabi_status {
    Stream s;
    cuabi_stream_create(dev, 0, 0, s.out());
    return cuabi_stream_launch_host_func(s, nullptr, nullptr);
  });
  // A graph of one SAXPY node, instantiated; `body` gets the executable graph.
  auto with_saxpy_graph = [dev, saxpy, a](std::function<cuabi_status(cuabi_graph_exec)> body) {
    Stream s;
    cuabi_stream_create(dev, CUABI_STREAM_NON_BLOCKING, 0, s.out());
    SaxpyArgs args(a);
    cuabi_launch_config c = Config(1, 16);
    cuabi_graph g = nullptr;
    cuabi_graph_exec e = nullptr;
    cuabi_stream_begin_capture(s, CUABI_CAPTURE_THREAD_LOCAL);
    cuabi_function_launch(saxpy, &c, s, args.params, 5);
    if (cuabi_stream_end_capture(s, &g) != CUABI_SUCCESS) return CUABI_ERROR_INTERNAL;
    cuabi_status st = cuabi_graph_instantiate(g, &e);
    if (st == CUABI_SUCCESS) st = body(e);
    cuabi_graph_exec_release(e);
    cuabi_graph_release(g);
    return st;
  };
  def("graph_exec_set_kernel_node_args.node_index_past_the_end",
      [with_saxpy_graph, saxpy](CaseContext&) -> cuabi_status {
        return with_saxpy_graph([saxpy](cuabi_graph_exec e) {
          unsigned char block[40] = {0};
          return cuabi_graph_exec_set_kernel_node_args(e, 1, saxpy, block, sizeof block);
        });
      });
  def("graph_exec_set_kernel_node_args.args_size_mismatch",
      [with_saxpy_graph, saxpy](CaseContext&) -> cuabi_status {
        return with_saxpy_graph([saxpy](cuabi_graph_exec e) {
          unsigned char block[40] = {0};
          return cuabi_graph_exec_set_kernel_node_args(e, 0, saxpy, block, 32);
        });
      });
  def("graph_exec_set_kernel_node_args.another_kernel_than_the_nodes",
      [with_saxpy_graph, dev](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = "extern \"C\" __global__ void other(float* p) { p[0] = 1.0f; }";
        d.flags = CUABI_COMPILE_NO_CACHE;
        cuabi_module m = nullptr;
        cuabi_function other = nullptr;
        if (cuabi_module_compile(dev, &d, &m) != CUABI_SUCCESS ||
            cuabi_module_get_function(m, "other", &other) != CUABI_SUCCESS) {
          ctx.Problem("could not compile the other kernel: " + LastError());
          cuabi_module_release(m);
          return CUABI_ERROR_INTERNAL;
        }
        cuabi_status st = with_saxpy_graph([other](cuabi_graph_exec e) {
          unsigned char block[8] = {0};
          return cuabi_graph_exec_set_kernel_node_args(e, 0, other, block, sizeof block);
        });
        cuabi_function_release(other);
        cuabi_module_release(m);
        return st;
      });

  // --- Memory of every kind (pools, managed, IPC, peers, 3D copies, arrays) ---
  def("buffer_alloc_async.zero_bytes", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_async(dev, 0, nullptr, nullptr, out.out());
  });
  def("buffer_alloc_async.2pow50_bytes", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer out; cuabi_status st = cuabi_buffer_alloc_async(dev, size_t(1) << 50, nullptr, nullptr, out.out()); cuabi_device_synchronize(dev); return st;
  });
  def("buffer_free_async.a_plain_buffer", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_free_async(a, nullptr);
  });
  def("buffer_alloc_pitched.element_size_3", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_pitched(dev, 64, 4, 3, out.out());
  });
  def("buffer_alloc_pitched.zero_height", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_pitched(dev, 64, 0, 4, out.out());
  });
  def("buffer_alloc_managed.unknown_flags", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer out; return cuabi_buffer_alloc_managed(dev, 64, 0x80, out.out());
  });
  def("buffer_get_host_pointer.not_managed", [dev, a, &f](CaseContext&) -> cuabi_status {
    void* p = nullptr; return cuabi_buffer_get_host_pointer(a, &p);
  });
  def("buffer_prefetch_async.not_managed", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_prefetch_async(a, 0, 64, CUABI_LOCATION_HOST, nullptr);
  });
  def("buffer_advise.unknown_advice", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer m; cuabi_buffer_alloc_managed(dev, 64, 0, m.out()); return cuabi_buffer_advise(m, 0, 64, static_cast<cuabi_memory_advice>(42), 0);
  });
  def("buffer_advise.location_minus_two", [dev, a, &f](CaseContext&) -> cuabi_status {
    Buffer m; cuabi_buffer_alloc_managed(dev, 64, 0, m.out()); return cuabi_buffer_advise(m, 0, 64, CUABI_ADVISE_SET_PREFERRED_LOCATION, -2);
  });
  def("buffer_fill.value_too_wide", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_fill(a, 0, 0x10000, 2, 4);
  });
  def("buffer_fill.misaligned_offset", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_fill(a, 2, 1, 4, 4);
  });
  def("buffer_fill.past_the_end", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_fill(a, 0, 1, 4, 1025);
  });
  def("buffer_fill_async.count_overflows", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_buffer_fill_async(a, 0, 1, 4, static_cast<size_t>(-1), nullptr);
  });
  def("copy_3d.box_past_the_buffer", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT; d.src_host = host; d.dst_buffer = a; d.width_bytes = 64; d.height = 65; return cuabi_copy_3d(&d);
  });
  def("copy_3d.pitch_smaller_than_the_row", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT; d.src_host = host; d.src_pitch = 32; d.dst_buffer = a; d.width_bytes = 64; d.height = 2; return cuabi_copy_3d(&d);
  });
  def("copy_3d.huge_depth_overflows", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT; d.src_host = host; d.dst_buffer = a; d.width_bytes = 64; d.height = 4; d.depth = size_t(1) << 62; return cuabi_copy_3d(&d);
  });
  def("array_create.three_channels", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT; d.width = 8; d.channels = 3; Array out; return cuabi_array_create(dev, &d, out.out());
  });
  def("array_create.zero_width", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT; Array out; return cuabi_array_create(dev, &d, out.out());
  });
  def("array_create.unknown_format", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT; d.width = 8; d.format = static_cast<cuabi_array_format>(7); Array out; return cuabi_array_create(dev, &d, out.out());
  });
  def("array_create.wider_than_the_device_allows", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT; d.width = size_t(1) << 40; Array out; return cuabi_array_create(dev, &d, out.out());
  });
  def("texture_create.wrap_without_normalized_coordinates", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_texture_desc d = CUABI_TEXTURE_DESC_INIT; d.buffer = a; d.width = 16; d.address_x = CUABI_ADDRESS_WRAP; Texture t; return cuabi_texture_create(&d, t.out());
  });
  def("texture_create.linear_memory_past_the_end", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_texture_desc d = CUABI_TEXTURE_DESC_INIT; d.buffer = a; d.width = 1025; Texture t; return cuabi_texture_create(&d, t.out());
  });
  def("surface_create.array_without_the_flag", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_array_desc d = CUABI_ARRAY_DESC_INIT; d.width = 8; Array arr; cuabi_array_create(dev, &d, arr.out()); Surface s; return cuabi_surface_create(arr, s.out());
  });
  def("buffer_open_ipc.garbage", [dev, a, &f](CaseContext&) -> cuabi_status {
    unsigned char h[CUABI_IPC_HANDLE_SIZE]; for (size_t i = 0; i < sizeof h; ++i) h[i] = static_cast<unsigned char>(i * 7 + 1); Buffer out; return cuabi_buffer_open_ipc(dev, nullptr, h, sizeof h, out.out());
  });
  def("buffer_open_ipc.from_this_process", [dev, a, &f](CaseContext&) -> cuabi_status {
    unsigned char h[CUABI_IPC_HANDLE_SIZE]; cuabi_buffer_get_ipc_handle(a, h, sizeof h); Buffer out; return cuabi_buffer_open_ipc(dev, nullptr, h, sizeof h, out.out());
  });
  def("buffer_get_ipc_handle.too_small", [dev, a, &f](CaseContext&) -> cuabi_status {
    unsigned char h[64]; return cuabi_buffer_get_ipc_handle(a, h, sizeof h);
  });
  def("event_create.interprocess_with_timing", [dev, a, &f](CaseContext&) -> cuabi_status {
    Event e; return cuabi_event_create(dev, CUABI_EVENT_INTERPROCESS, e.out());
  });
  def("event_get_ipc_handle.not_interprocess", [dev, a, &f](CaseContext&) -> cuabi_status {
    unsigned char h[CUABI_IPC_HANDLE_SIZE]; return cuabi_event_get_ipc_handle(f.event, h, sizeof h);
  });
  def("device_enable_peer_access.itself", [dev, a, &f](CaseContext&) -> cuabi_status {
    return cuabi_device_enable_peer_access(dev, dev);
  });
  def("memory_pool_create.unknown_flags", [dev, a, &f](CaseContext&) -> cuabi_status {
    cuabi_memory_pool_desc d = CUABI_MEMORY_POOL_DESC_INIT; d.flags = 0x40; MemoryPool p; return cuabi_memory_pool_create(dev, &d, p.out());
  });
  def("memory_pool_import_fd.negative_fd", [dev, a, &f](CaseContext&) -> cuabi_status {
    MemoryPool p; return cuabi_memory_pool_import_fd(dev, -1, p.out());
  });

  // --- Linking, libraries and kernel listings ---
  def("linker_add_data.unrecognisable_bytes", [dev, &f](CaseContext&) -> cuabi_status {
    Linker l; cuabi_linker_create(dev, nullptr, l.out()); const char g[] = "\x01\x02 no image"; return cuabi_linker_add_data(l, CUABI_LINK_INPUT_AUTO, g, sizeof g, "g");
  });
  def("linker_add_data.kind_42", [dev, &f](CaseContext&) -> cuabi_status {
    Linker l; cuabi_linker_create(dev, nullptr, l.out()); return cuabi_linker_add_data(l, static_cast<cuabi_link_input>(42), host, 16, nullptr);
  });
  def("linker_add_data.null_data", [dev, &f](CaseContext&) -> cuabi_status {
    Linker l; cuabi_linker_create(dev, nullptr, l.out()); return cuabi_linker_add_data(l, CUABI_LINK_INPUT_PTX, nullptr, 16, nullptr);
  });
  def("linker_add_file.missing_file", [dev, &f](CaseContext&) -> cuabi_status {
    Linker l; cuabi_linker_create(dev, nullptr, l.out()); return cuabi_linker_add_file(l, CUABI_LINK_INPUT_AUTO, "/nonexistent/callee.ptx");
  });
  def("linker_link.nothing_added", [dev, &f](CaseContext&) -> cuabi_status {
    Linker l; cuabi_linker_create(dev, nullptr, l.out()); Module m; return cuabi_linker_link(l, m.out());
  });
  def("linker_create.driver_backend_with_options", [dev, &f](CaseContext&) -> cuabi_status {
    cuabi_link_desc d = CUABI_LINK_DESC_INIT; d.backend = CUABI_LINK_BACKEND_DRIVER; const char* o[] = {"-O3"}; d.options = o; d.num_options = 1; Linker l; return cuabi_linker_create(dev, &d, l.out());
  });
  def("linker_create.driver_backend_with_lto", [dev, &f](CaseContext&) -> cuabi_status {
    cuabi_link_desc d = CUABI_LINK_DESC_INIT; d.backend = CUABI_LINK_BACKEND_DRIVER; d.flags = CUABI_LINK_LTO; Linker l; return cuabi_linker_create(dev, &d, l.out());
  });
  def("linker_create.unknown_backend", [dev, &f](CaseContext&) -> cuabi_status {
    cuabi_link_desc d = CUABI_LINK_DESC_INIT; d.backend = static_cast<cuabi_link_backend>(9); Linker l; return cuabi_linker_create(dev, &d, l.out());
  });
  def("module_get_kernel_name.index_past_the_end", [dev, &f](CaseContext&) -> cuabi_status {
    size_t n = 0; return cuabi_module_get_kernel_name(f.saxpy_module, 1000, CUABI_NAME_SYMBOL, nullptr, &n);
  });
  // --- DLPack: export past the buffer, bad flags and dtypes; the handshake --
  {
    static int64_t one[1] = {1}, s1024[1] = {1024}, rows[2] = {8, 1};
    auto exporting = [a](uint64_t offset, const int64_t* shape, const int64_t* strides,
                         size_t ndim, uint32_t bits, uint32_t lanes, uint64_t flags) -> Body {
      return [=](CaseContext& ctx) -> cuabi_status {
        cuabi_dlpack_managed_tensor_versioned* out = nullptr;
        const cuabi_status st = cuabi_buffer_export_dlpack(a, offset, shape, strides, ndim,
                                                           CUABI_DLPACK_FLOAT, bits, lanes,
                                                           flags, &out);
        if (st != CUABI_SUCCESS && out) ctx.Problem("out was written although the call failed");
        if (out && out->deleter) out->deleter(out);
        return st;
      };
    };
    static int64_t past[1] = {1025};  // 1025 float32 in a 4096-byte buffer
    def("buffer_export_dlpack.past_the_end", exporting(0, past, nullptr, 1, 32, 1, 0));
    def("buffer_export_dlpack.byte_offset_past_the_end", [dev](CaseContext&) -> cuabi_status {
      Buffer small;
      if (cuabi_buffer_alloc(dev, 4, small.out())) return CUABI_ERROR_INTERNAL;
      static int64_t none[1] = {0};
      cuabi_dlpack_managed_tensor_versioned* out = nullptr;
      return cuabi_buffer_export_dlpack(small, 8, none, nullptr, 1, CUABI_DLPACK_FLOAT, 32, 1, 0,
                                        &out);
    });
    // 129 rows of 8 floats, 8 apart: 1032 floats, past the 1024 the buffer holds.
    static int64_t far_rows[2] = {129, 8};
    def("buffer_export_dlpack.strides_past_the_end", exporting(0, far_rows, rows, 2, 32, 1, 0));
    static int64_t two[1] = {2};
    def("buffer_export_dlpack.negative_stride_below_start", [a](CaseContext&) -> cuabi_status {
      static int64_t neg[1] = {-1};
      cuabi_dlpack_managed_tensor_versioned* out = nullptr;
      return cuabi_buffer_export_dlpack(a, 0, two, neg, 1, CUABI_DLPACK_FLOAT, 32, 1, 0, &out);
    });
    def("buffer_export_dlpack.unknown_flags",
        exporting(0, s1024, nullptr, 1, 32, 1, CUABI_DLPACK_FLAG_IS_COPIED));
    def("buffer_export_dlpack.subbyte_bits", exporting(0, one, nullptr, 1, 4, 1, 0));
    def("buffer_export_dlpack.zero_lanes", exporting(0, one, nullptr, 1, 32, 0, 0));
    def("buffer_export_dlpack.too_many_dims", exporting(0, one, nullptr, 65, 32, 1, 0));
    def("buffer_export_dlpack.null_shape", exporting(0, nullptr, nullptr, 1, 32, 1, 0));
    def("buffer_export_dlpack.null_out", [a](CaseContext&) -> cuabi_status {
      return cuabi_buffer_export_dlpack(a, 0, one, nullptr, 1, CUABI_DLPACK_FLOAT, 32, 1, 0,
                                        nullptr);
    });
    def("buffer_import_dlpack.device_id_past_count", [](CaseContext& ctx) -> cuabi_status {
      static int deleted = 0;
      struct Dl {
        static void CUABI_CALL count(cuabi_dlpack_managed_tensor_versioned*) { ++deleted; }
      };
      cuabi_dlpack_managed_tensor_versioned t{};
      t.version.major = CUABI_DLPACK_MAJOR_VERSION;
      t.deleter = &Dl::count;
      t.dl_tensor.data = reinterpret_cast<void*>(uintptr_t{0x100000});
      t.dl_tensor.device.device_type = CUABI_DLPACK_DEVICE_CUDA;
      t.dl_tensor.device.device_id = 4096;
      t.dl_tensor.ndim = 1;
      t.dl_tensor.dtype.code = CUABI_DLPACK_FLOAT;
      t.dl_tensor.dtype.bits = 32;
      t.dl_tensor.dtype.lanes = 1;
      t.dl_tensor.shape = one;
      deleted = 0;
      Buffer out;
      const cuabi_status st = cuabi_buffer_import_dlpack(&t, 0, out.out());
      if (deleted) ctx.Problem("a refused tensor's deleter ran");
      return st;
    });
    const cuabi_stream stream = f.stream.get();
    def("stream_dlpack_handoff.zero_stream", [stream](CaseContext&) -> cuabi_status {
      return cuabi_stream_dlpack_handoff(stream, 0);
    });
    def("stream_dlpack_handoff.negative_stream", [stream](CaseContext&) -> cuabi_status {
      return cuabi_stream_dlpack_handoff(stream, -2);
    });
    def("stream_dlpack_wait.zero_stream", [stream](CaseContext&) -> cuabi_status {
      return cuabi_stream_dlpack_wait(stream, 0);
    });
  }
  // --- Green contexts --------------------------------------------------------
  // The device's SM resource; its count and alignment for the bounds.
  auto sms = [dev](SmResource* all, uint32_t* count, uint32_t* align) {
    cuabi_device_get_sm_resource(dev, all->out());
    cuabi_sm_resource_get_sm_count(*all, count);
    cuabi_sm_resource_get_alignment(*all, align);
  };
  def("sm_resource_split.zero_groups", [sms](CaseContext&) -> cuabi_status {
    SmResource all, out; uint32_t n = 0, a = 0; sms(&all, &n, &a); return cuabi_sm_resource_split(all, 0, 0, 0, out.out());
  });
  def("sm_resource_split.min_count_above_the_sm_count", [sms](CaseContext&) -> cuabi_status {
    SmResource all, out; uint32_t n = 0, a = 0; sms(&all, &n, &a); return cuabi_sm_resource_split(all, 1, n + a, 0, out.out());
  });
  def("sm_resource_split.min_count_off_the_granularity", [sms](CaseContext&) -> cuabi_status {
    SmResource all, out; uint32_t n = 0, a = 0; sms(&all, &n, &a); return cuabi_sm_resource_split(all, 1, a + 1, 0, out.out());
  });
  def("sm_resource_split.more_groups_than_sms", [sms](CaseContext&) -> cuabi_status {
    SmResource all, out; uint32_t n = 0, a = 0; sms(&all, &n, &a); return cuabi_sm_resource_split(all, 100000, 0, 0, out.out());
  });
  def("sm_resource_split.index_past_the_remainder", [sms](CaseContext&) -> cuabi_status {
    SmResource all, out; uint32_t n = 0, a = 0; sms(&all, &n, &a); return cuabi_sm_resource_split(all, 1, 0, 2, out.out());
  });
  def("sm_resource_split.part_split_again", [sms](CaseContext&) -> cuabi_status {
    SmResource all, part, out; uint32_t n = 0, a = 0; sms(&all, &n, &a); cuabi_sm_resource_split(all, 1, 0, 0, part.out()); return cuabi_sm_resource_split(part, 1, 0, 0, out.out());
  });
  def("sm_resource_get_group_count.min_count_above_the_sm_count", [sms](CaseContext&) -> cuabi_status {
    SmResource all; uint32_t n = 0, a = 0, g = 0; sms(&all, &n, &a); return cuabi_sm_resource_get_group_count(all, n + a, &g);
  });
  def("green_context_create_stream.blocking", [sms](CaseContext&) -> cuabi_status {
    SmResource all; GreenContext g; Stream s; uint32_t n = 0, a = 0; sms(&all, &n, &a); cuabi_green_context_create(all, g.out()); return cuabi_green_context_create_stream(g, 0, 0, s.out());
  });
  def("green_context_create_stream.unknown_flags", [sms](CaseContext&) -> cuabi_status {
    SmResource all; GreenContext g; Stream s; uint32_t n = 0, a = 0; sms(&all, &n, &a); cuabi_green_context_create(all, g.out()); return cuabi_green_context_create_stream(g, 0x80 | CUABI_STREAM_NON_BLOCKING, 0, s.out());
  });
  def("green_context_check_stream.other_green_context", [sms](CaseContext&) -> cuabi_status {
    SmResource all, p0, p1; GreenContext g0, g1; Stream s1; uint32_t n = 0, a = 0; sms(&all, &n, &a);
    cuabi_sm_resource_split(all, 2, 0, 0, p0.out()); cuabi_sm_resource_split(all, 2, 0, 1, p1.out());
    cuabi_green_context_create(p0, g0.out()); cuabi_green_context_create(p1, g1.out());
    cuabi_green_context_create_stream(g1, CUABI_STREAM_NON_BLOCKING, 0, s1.out());
    return cuabi_green_context_check_stream(g0, s1);
  });
  def("green_context_check_stream.primary_context_stream", [sms, &f](CaseContext&) -> cuabi_status {
    SmResource all; GreenContext g; uint32_t n = 0, a = 0; sms(&all, &n, &a); cuabi_green_context_create(all, g.out()); return cuabi_green_context_check_stream(g, f.stream);
  });

  // --- Tensor maps -------------------------------------------------------------
  // A float tensor over buffer `a` (4096 bytes), dimension 0 innermost; each
  // case changes one thing of a right 64 x 16 map with a 32 x 8 box.
  struct Tiled {
    size_t offset = 0;
    cuabi_tensor_data_type type = CUABI_TENSOR_FLOAT32;
    size_t rank = 2;
    size_t sizes[6] = {64, 16, 1, 1, 1, 1};
    size_t strides[6] = {4, 256, 4096, 4096, 4096, 4096};
    size_t box[6] = {32, 8, 1, 1, 1, 1};
    size_t num_box = 0;  // 0: rank
    size_t steps[6] = {1, 1, 1, 1, 1, 1};
    cuabi_tensor_interleave interleave = CUABI_TENSOR_INTERLEAVE_NONE;
    cuabi_tensor_swizzle swizzle = CUABI_TENSOR_SWIZZLE_NONE;
    cuabi_tensor_oob_fill oob = CUABI_TENSOR_OOB_FILL_ZERO;
    cuabi_status Encode(cuabi_buffer buffer, TensorMap* map) const {
      return cuabi_tensor_map_encode_tiled(buffer, offset, type, sizes, rank, strides, rank, box,
                                           num_box ? num_box : rank, steps, rank, interleave,
                                           swizzle, CUABI_TENSOR_L2_PROMOTION_NONE, oob,
                                           map->out());
    }
  };
  auto tiled = [a](void (*change)(Tiled&)) {
    Tiled t; change(t); TensorMap m; return t.Encode(a, &m);
  };
  def("tensor_map_encode_tiled.misaligned_address", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.offset = 8; }); });
  def("tensor_map_encode_tiled.rank_6", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.rank = 6; }); });
  def("tensor_map_encode_tiled.rank_0", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.rank = 0; }); });
  def("tensor_map_encode_tiled.stride_not_multiple_of_16", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.strides[1] = 260; }); });
  def("tensor_map_encode_tiled.inner_stride_not_element_size", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.strides[0] = 8; }); });
  def("tensor_map_encode_tiled.stride_below_the_row", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.strides[1] = 128; }); });
  def("tensor_map_encode_tiled.box_257", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.box[1] = 257; }); });
  def("tensor_map_encode_tiled.box_inner_not_16_bytes", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.box[0] = 3; }); });
  def("tensor_map_encode_tiled.swizzle_narrower_than_box", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.box[0] = 64; t.swizzle = CUABI_TENSOR_SWIZZLE_B64; }); });
  def("tensor_map_encode_tiled.size_0", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.sizes[0] = 0; }); });
  def("tensor_map_encode_tiled.past_the_buffer", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.sizes[1] = 64; }); });
  def("tensor_map_encode_tiled.element_stride_9", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.steps[1] = 9; }); });
  def("tensor_map_encode_tiled.nan_fill_on_integers", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.type = CUABI_TENSOR_INT32; t.oob = CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA; }); });
  def("tensor_map_encode_tiled.interleave_rank_2", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.interleave = CUABI_TENSOR_INTERLEAVE_B16; }); });
  def("tensor_map_encode_tiled.interleave_32_without_swizzle_32", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.rank = 3; t.sizes[1] = 4; t.interleave = CUABI_TENSOR_INTERLEAVE_B32; }); });
  def("tensor_map_encode_tiled.unknown_data_type", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.type = static_cast<cuabi_tensor_data_type>(40); }); });
  def("tensor_map_encode_tiled.box_count_off_the_rank", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.num_box = 1; }); });
  def("tensor_map_encode_tiled.unknown_swizzle", [tiled](CaseContext&) { return tiled([](Tiled& t) { t.swizzle = static_cast<cuabi_tensor_swizzle>(9); }); });
  // An NHWC float tensor of 16 channels, 4 x 4 pixels, 2 images (rank 4).
  auto im2col = [a](size_t rank, size_t num_spatial, int32_t lower0, uint32_t channels, uint32_t pixels) {
    const size_t sizes[4] = {16, 4, 4, 2}, strides[4] = {4, 64, 256, 1024};
    const int32_t lower[2] = {lower0, 0}, upper[2] = {0, 0};
    TensorMap m;
    return cuabi_tensor_map_encode_im2col(a, 0, CUABI_TENSOR_FLOAT32, sizes, rank, strides, rank, nullptr, 0, lower, num_spatial, upper, num_spatial, channels, pixels, CUABI_TENSOR_INTERLEAVE_NONE, CUABI_TENSOR_SWIZZLE_NONE, CUABI_TENSOR_L2_PROMOTION_NONE, CUABI_TENSOR_OOB_FILL_ZERO, m.out());
  };
  def("tensor_map_encode_im2col.rank_2", [im2col](CaseContext&) { return im2col(2, 0, 0, 16, 16); });
  def("tensor_map_encode_im2col.corner_out_of_range", [im2col](CaseContext&) { return im2col(4, 2, -200, 16, 16); });
  def("tensor_map_encode_im2col.wrong_corner_count", [im2col](CaseContext&) { return im2col(4, 1, 0, 16, 16); });
  def("tensor_map_encode_im2col.channels_257", [im2col](CaseContext&) { return im2col(4, 2, 0, 257, 16); });
  def("tensor_map_encode_im2col.pixels_1025", [im2col](CaseContext&) { return im2col(4, 2, 0, 16, 1025); });
  def("tensor_map_replace_address.misaligned", [a](CaseContext&) -> cuabi_status {
    Tiled t; TensorMap m; t.Encode(a, &m); return cuabi_tensor_map_replace_address(m, a, 4);
  });
  def("tensor_map_replace_address.too_small_buffer", [a, dev](CaseContext&) -> cuabi_status {
    Tiled t; TensorMap m; t.Encode(a, &m); Buffer small; cuabi_buffer_alloc(dev, 1024, small.out()); return cuabi_tensor_map_replace_address(m, small, 0);
  });
  def("tensor_map_get_bytes.too_small", [a](CaseContext&) -> cuabi_status {
    Tiled t; TensorMap m; t.Encode(a, &m); unsigned char buf[64]; size_t size = sizeof buf; return cuabi_tensor_map_get_bytes(m, buf, &size);
  });
  // --- Virtual memory ----------------------------------------------------------
  // G: the device's granularity; Mapped: a range of four granules with one
  // two-granule memory mapped at granule 1.
  static size_t G = 0;
  auto granule = [dev]() {
    if (!G) { size_t r = 0; cuabi_device_get_vm_granularity(dev, &G, &r); }
    return G;
  };
  struct Mapped {
    PhysicalMemory memory;
    AddressRange range;
    explicit Mapped(cuabi_device d, size_t g) {
      cuabi_physical_memory_create(d, 2 * g, 0, memory.out());
      cuabi_address_range_reserve(d, 4 * g, range.out());
      cuabi_address_range_map(range, g, memory);
    }
  };
  def("device_get_vm_granularity.null_minimum", [dev](CaseContext&) -> cuabi_status {
    size_t r = 0; return cuabi_device_get_vm_granularity(dev, nullptr, &r);
  });
  def("physical_memory_create.bytes_off_the_granularity", [dev, granule](CaseContext&) -> cuabi_status {
    PhysicalMemory m; return cuabi_physical_memory_create(dev, granule() + 4096, 0, m.out());
  });
  def("physical_memory_create.zero_bytes", [dev](CaseContext&) -> cuabi_status {
    PhysicalMemory m; return cuabi_physical_memory_create(dev, 0, 0, m.out());
  });
  def("physical_memory_create.unknown_flags", [dev, granule](CaseContext&) -> cuabi_status {
    PhysicalMemory m; return cuabi_physical_memory_create(dev, granule(), 0x80, m.out());
  });
  def("physical_memory_create.one_granule", [dev, granule](CaseContext&) -> cuabi_status {
    PhysicalMemory m; return cuabi_physical_memory_create(dev, granule(), 0, m.out());
  });
  def("address_range_reserve.bytes_off_the_granularity", [dev](CaseContext&) -> cuabi_status {
    AddressRange r; return cuabi_address_range_reserve(dev, 4096, r.out());
  });
  def("address_range_map.offset_off_the_granularity", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); PhysicalMemory p; cuabi_physical_memory_create(dev, granule(), 0, p.out());
    return cuabi_address_range_map(m.range, 4096, p);
  });
  def("address_range_map.over_a_mapped_range", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); PhysicalMemory p; cuabi_physical_memory_create(dev, granule(), 0, p.out());
    return cuabi_address_range_map(m.range, 2 * granule(), p);
  });
  def("address_range_map.past_the_end", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); return cuabi_address_range_map(m.range, 3 * granule(), m.memory);
  });
  def("address_range_map.freed_memory_handle", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); PhysicalMemory p; cuabi_physical_memory_create(dev, granule(), 0, p.out());
    cuabi_physical_memory_free(p); return cuabi_address_range_map(m.range, 0, p);
  });
  def("address_range_unmap.unmapped_bytes", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); return cuabi_address_range_unmap(m.range, 0, 3 * granule());
  });
  def("address_range_unmap.cutting_a_mapping", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); return cuabi_address_range_unmap(m.range, granule(), granule());
  });
  def("address_range_unmap.while_a_buffer_views_it", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); Buffer v; cuabi_buffer_from_range(m.range, dev, granule(), 64, v.out());
    return cuabi_address_range_unmap(m.range, granule(), 2 * granule());
  });
  def("address_range_set_access.unmapped_address", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule());
    return cuabi_address_range_set_access(m.range, granule(), 3 * granule(), dev, CUABI_VM_ACCESS_READWRITE);
  });
  def("address_range_set_access.unknown_access", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule());
    return cuabi_address_range_set_access(m.range, granule(), 2 * granule(), dev, static_cast<cuabi_vm_access>(2));
  });
  def("address_range_set_access.read_only", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule());
    return cuabi_address_range_set_access(m.range, granule(), 2 * granule(), dev, CUABI_VM_ACCESS_READ);
  });
  def("buffer_from_range.unmapped_address", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); Buffer v; return cuabi_buffer_from_range(m.range, dev, 0, granule() + 8, v.out());
  });
  def("buffer_from_range.past_the_end", [dev, granule](CaseContext&) -> cuabi_status {
    Mapped m(dev, granule()); Buffer v; return cuabi_buffer_from_range(m.range, dev, granule(), 3 * granule() + 1, v.out());
  });
  def("physical_memory_free.still_mapped", [dev, granule](CaseContext&) -> cuabi_status {
    PhysicalMemory p; cuabi_physical_memory_create(dev, granule(), 0, p.out());
    AddressRange r; cuabi_address_range_reserve(dev, granule(), r.out()); cuabi_address_range_map(r, 0, p);
    return cuabi_physical_memory_free(p);
  });
  def("physical_memory_export_fd.not_exportable", [dev, granule](CaseContext&) -> cuabi_status {
    PhysicalMemory p; cuabi_physical_memory_create(dev, granule(), 0, p.out());
    int32_t fd = -1; return cuabi_physical_memory_export_fd(p, &fd);
  });
  def("physical_memory_import_fd.a_pipe", [dev, granule](CaseContext&) -> cuabi_status {
    int fds[2]; if (pipe(fds)) return CUABI_ERROR_INTERNAL;
    PhysicalMemory p; cuabi_status st = cuabi_physical_memory_import_fd(dev, fds[0], granule(), p.out());
    close(fds[0]); close(fds[1]); return st;
  });
  def("physical_memory_import_fd.a_file", [dev, granule](CaseContext&) -> cuabi_status {
    char path[] = "/tmp/cuabi-corpus-XXXXXX"; int fd = mkstemp(path); if (fd < 0) return CUABI_ERROR_INTERNAL;
    PhysicalMemory p; cuabi_status st = cuabi_physical_memory_import_fd(dev, fd, granule(), p.out());
    close(fd); unlink(path); return st;
  });
  def("physical_memory_import_fd.negative_fd", [dev, granule](CaseContext&) -> cuabi_status {
    PhysicalMemory p; return cuabi_physical_memory_import_fd(dev, -1, granule(), p.out());
  });
  def("physical_memory_import_fd.closed_fd", [dev, granule](CaseContext&) -> cuabi_status {
    int fds[2]; if (pipe(fds)) return CUABI_ERROR_INTERNAL; close(fds[0]); close(fds[1]);
    PhysicalMemory p; return cuabi_physical_memory_import_fd(dev, fds[0], granule(), p.out());
  });
  def("buffer_alloc_growable.bytes_past_the_reservation", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; return cuabi_buffer_alloc_growable(dev, 2 * granule(), granule(), g.out());
  });
  def("buffer_alloc_growable.reserve_off_the_granularity", [dev](CaseContext&) -> cuabi_status {
    Buffer g; return cuabi_buffer_alloc_growable(dev, 0, 4096, g.out());
  });
  def("buffer_grow.past_the_reservation", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; cuabi_buffer_alloc_growable(dev, granule(), 2 * granule(), g.out());
    return cuabi_buffer_grow(g, 3 * granule());
  });
  def("buffer_grow.smaller", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; cuabi_buffer_alloc_growable(dev, 2 * granule(), 2 * granule(), g.out());
    return cuabi_buffer_grow(g, granule());
  });
  def("buffer_grow.off_the_granularity", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; cuabi_buffer_alloc_growable(dev, 0, 2 * granule(), g.out());
    return cuabi_buffer_grow(g, granule() + 1);
  });
  def("buffer_grow.not_growable", [a, granule](CaseContext&) -> cuabi_status {
    return cuabi_buffer_grow(a, granule());
  });
  def("buffer_grow.same_size", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; cuabi_buffer_alloc_growable(dev, granule(), 2 * granule(), g.out());
    return cuabi_buffer_grow(g, granule());
  });
  def("buffer_copy_to_host.growable_past_its_size", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; cuabi_buffer_alloc_growable(dev, granule(), 2 * granule(), g.out());
    uint32_t word = 0; return cuabi_buffer_copy_to_host(g, granule(), &word, 4);
  });
  def("buffer_get_ipc_handle.growable", [dev, granule](CaseContext&) -> cuabi_status {
    Buffer g; cuabi_buffer_alloc_growable(dev, granule(), granule(), g.out());
    unsigned char h[CUABI_IPC_HANDLE_SIZE]; return cuabi_buffer_get_ipc_handle(g, h, sizeof h);
  });
  // --- Graphs built node by node ----------------------------------------------
  // A fresh graph of device 0 for each case.
  auto graph = [dev]() {
    Graph g;
    cuabi_graph_create(dev, g.out());
    return g;
  };
  def("graph_add_empty_node.after_a_node_of_another_graph", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph(), other = graph();
    GraphNode foreign, n;
    cuabi_graph_add_empty_node(other, nullptr, foreign.out());
    return cuabi_graph_add_empty_node(g, foreign, n.out());
  });
  def("graph_add_empty_node.after_nothing", [graph](CaseContext& ctx) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    cuabi_status st = cuabi_graph_add_empty_node(g, nullptr, n.out());
    size_t count = 0;
    cuabi_graph_get_node_count(g, &count);
    if (st == CUABI_SUCCESS && count != 1) ctx.Problem("the graph has " + std::to_string(count) + " nodes");
    return st;
  });
  def("graph_node_add_dependency.of_another_graph", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph(), other = graph();
    GraphNode a, b;
    cuabi_graph_add_empty_node(g, nullptr, a.out());
    cuabi_graph_add_empty_node(other, nullptr, b.out());
    return cuabi_graph_node_add_dependency(a, b);
  });
  def("graph_node_add_dependency.cycle", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode a, b, c;
    cuabi_graph_add_empty_node(g, nullptr, a.out());
    cuabi_graph_add_empty_node(g, a, b.out());
    cuabi_graph_add_empty_node(g, b, c.out());
    return cuabi_graph_node_add_dependency(a, c);
  });
  def("graph_node_add_dependency.itself", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode a;
    cuabi_graph_add_empty_node(g, nullptr, a.out());
    return cuabi_graph_node_add_dependency(a, a);
  });
  // SAXPY's packed block: float a, float* x, float* y, float* out, size_t n.
  auto saxpy_block = [a]() {
    std::vector<unsigned char> block(40, 0);
    uint64_t p = 0;
    cuabi_buffer_get_pointer(a, &p);
    float two = 2.0f;
    size_t n = 16;
    std::memcpy(&block[0], &two, 4);
    std::memcpy(&block[8], &p, 8);
    std::memcpy(&block[16], &p, 8);
    std::memcpy(&block[24], &p, 8);
    std::memcpy(&block[32], &n, 8);
    return block;
  };
  def("graph_add_kernel_node.wrong_argument_block_size", [graph, saxpy](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    unsigned char args[12] = {0};
    const cuabi_launch_config c = Config(1, 32);
    return cuabi_graph_add_kernel_node(g, nullptr, saxpy, &c, args, sizeof args, n.out());
  });
  def("graph_exec_set_kernel_node.another_signature",
      [graph, saxpy, saxpy_block, dev](CaseContext& ctx) -> cuabi_status {
        cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
        d.source = "extern \"C\" __global__ void one(float* p) { p[0] = 1.0f; }";
        d.flags = CUABI_COMPILE_NO_CACHE;
        Module m;
        Function one;
        if (cuabi_module_compile(dev, &d, m.out()) != CUABI_SUCCESS ||
            cuabi_module_get_function(m, "one", one.out()) != CUABI_SUCCESS) {
          ctx.Problem("could not compile the other kernel: " + LastError());
          return CUABI_ERROR_INTERNAL;
        }
        Graph g = graph();
        GraphNode n;
        GraphExec e;
        std::vector<unsigned char> args = saxpy_block();
        const cuabi_launch_config c = Config(1, 32);
        if (cuabi_graph_add_kernel_node(g, nullptr, saxpy, &c, args.data(), args.size(),
                                        n.out()) != CUABI_SUCCESS ||
            cuabi_graph_instantiate(g, e.out()) != CUABI_SUCCESS)
          return CUABI_ERROR_INTERNAL;
        unsigned char block[8] = {0};
        return cuabi_graph_exec_set_kernel_node(e, n, one, &c, block, sizeof block);
      });
  def("graph_instantiate_with_flags.device_launch_of_a_host_node", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    if (cuabi_graph_add_host_node(g, nullptr,
                                  [](void*, char*, size_t) -> int32_t { return 0; }, nullptr,
                                  n.out()) != CUABI_SUCCESS)
      return CUABI_ERROR_INTERNAL;
    GraphExec e;
    return cuabi_graph_instantiate_with_flags(g, CUABI_GRAPH_INSTANTIATE_DEVICE_LAUNCH, nullptr,
                                              e.out());
  });
  def("graph_add_copy_node.released_buffer", [graph, dev, a](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    cuabi_buffer gone = nullptr;
    if (cuabi_buffer_alloc(dev, 64, &gone) != CUABI_SUCCESS) return CUABI_ERROR_INTERNAL;
    cuabi_buffer_release(gone);
    return cuabi_graph_add_copy_node(g, nullptr, a, 0, gone, 0, 64, n.out());
  });
  def("graph_add_kernel_node.zero_grid", [graph, saxpy, saxpy_block](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    std::vector<unsigned char> args = saxpy_block();
    const cuabi_launch_config c = Config(0, 32);
    return cuabi_graph_add_kernel_node(g, nullptr, saxpy, &c, args.data(), args.size(), n.out());
  });
  def("graph_add_kernel_node.block_too_large", [graph, saxpy, saxpy_block](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    std::vector<unsigned char> args = saxpy_block();
    const cuabi_launch_config c = Config(1, 1024);
    cuabi_launch_config big = c;
    big.block_y = 2;
    return cuabi_graph_add_kernel_node(g, nullptr, saxpy, &big, args.data(), args.size(), n.out());
  });
  def("graph_add_kernel_node.programmatic_serialization",
      [graph, saxpy, saxpy_block](CaseContext&) -> cuabi_status {
        Graph g = graph();
        GraphNode n;
        std::vector<unsigned char> args = saxpy_block();
        cuabi_launch_config c = Config(1, 32);
        c.flags = CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION;
        return cuabi_graph_add_kernel_node(g, nullptr, saxpy, &c, args.data(), args.size(), n.out());
      });
  def("graph_add_kernel_node.right", [graph, saxpy, saxpy_block](CaseContext& ctx) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    std::vector<unsigned char> args = saxpy_block();
    const cuabi_launch_config c = Config(1, 32);
    cuabi_status st = cuabi_graph_add_kernel_node(g, nullptr, saxpy, &c, args.data(), args.size(),
                                                  n.out());
    cuabi_graph_node_type t = CUABI_GRAPH_NODE_EMPTY;
    if (st == CUABI_SUCCESS && (cuabi_graph_node_get_type(n, &t) || t != CUABI_GRAPH_NODE_KERNEL))
      ctx.Problem("the node is not a kernel node");
    return st;
  });
  def("graph_add_copy_node.past_the_end", [graph, a, b](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_copy_node(g, nullptr, a, 4000, b, 0, 97, n.out());
  });
  def("graph_add_copy_node.overlapping", [graph, a](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_copy_node(g, nullptr, a, 0, a, 8, 64, n.out());
  });
  def("graph_add_copy_node.zero_bytes", [graph, a, b](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_copy_node(g, nullptr, a, 0, b, 0, 0, n.out());
  });
  def("graph_add_upload_node.past_the_host_buffer", [graph, dev, a](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    HostBuffer h;
    cuabi_host_buffer_alloc(dev, 64, h.out());
    return cuabi_graph_add_upload_node(g, nullptr, a, 0, h, 32, 64, n.out());
  });
  def("graph_add_download_node.past_the_buffer", [graph, dev, a](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    HostBuffer h;
    cuabi_host_buffer_alloc(dev, 8192, h.out());
    return cuabi_graph_add_download_node(g, nullptr, h, 0, a, 1, 4096, n.out());
  });
  def("graph_add_fill_node.element_size_3", [graph, a](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_fill_node(g, nullptr, a, 0, 1, 3, 16, n.out());
  });
  def("graph_add_fill_node.past_the_end", [graph, a](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_fill_node(g, nullptr, a, 0, 1, 4, 1025, n.out());
  });
  def("graph_add_copy_3d_node.empty_box", [graph, a, b](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
    d.src_buffer = a;
    d.dst_buffer = b;
    d.width_bytes = 0;
    return cuabi_graph_add_copy_3d_node(g, nullptr, &d, n.out());
  });
  def("graph_add_copy_3d_node.null_desc", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_copy_3d_node(g, nullptr, nullptr, n.out());
  });
  // An executable graph of one copy node (a -> b, 64 bytes) and one empty
  // node, and `update` run on it.
  auto with_exec = [graph, a, b](auto update) -> cuabi_status {
    Graph g = graph();
    GraphNode copy, empty;
    GraphExec e;
    if (cuabi_graph_add_copy_node(g, nullptr, b, 0, a, 0, 64, copy.out()) != CUABI_SUCCESS ||
        cuabi_graph_add_empty_node(g, copy, empty.out()) != CUABI_SUCCESS ||
        cuabi_graph_instantiate(g, e.out()) != CUABI_SUCCESS)
      return CUABI_ERROR_INTERNAL;
    return update(cuabi_graph_exec(e), cuabi_graph_node(copy), cuabi_graph_node(empty));
  };
  def("graph_exec_set_fill_node.a_copy_node", [with_exec, a](CaseContext&) -> cuabi_status {
    return with_exec([a](cuabi_graph_exec e, cuabi_graph_node copy, cuabi_graph_node) {
      return cuabi_graph_exec_set_fill_node(e, copy, a, 0, 1, 4, 4);
    });
  });
  def("graph_exec_set_copy_node.past_the_end", [with_exec, a, b](CaseContext&) -> cuabi_status {
    return with_exec([a, b](cuabi_graph_exec e, cuabi_graph_node copy, cuabi_graph_node) {
      return cuabi_graph_exec_set_copy_node(e, copy, b, 4090, a, 0, 64);
    });
  });
  def("graph_exec_set_copy_node.a_node_of_another_graph",
      [with_exec, graph, a, b](CaseContext&) -> cuabi_status {
        Graph other = graph();
        GraphNode foreign;
        if (cuabi_graph_add_copy_node(other, nullptr, b, 0, a, 0, 64, foreign.out()))
          return CUABI_ERROR_INTERNAL;
        cuabi_graph_node f = foreign;
        return with_exec([a, b, f](cuabi_graph_exec e, cuabi_graph_node, cuabi_graph_node) {
          return cuabi_graph_exec_set_copy_node(e, f, b, 0, a, 0, 64);
        });
      });
  def("graph_exec_set_node_enabled.an_empty_node", [with_exec](CaseContext&) -> cuabi_status {
    return with_exec([](cuabi_graph_exec e, cuabi_graph_node, cuabi_graph_node empty) {
      return cuabi_graph_exec_set_node_enabled(e, empty, 0);
    });
  });
  def("graph_exec_set_node_enabled.a_copy_node", [with_exec](CaseContext&) -> cuabi_status {
    return with_exec([](cuabi_graph_exec e, cuabi_graph_node copy, cuabi_graph_node) {
      return cuabi_graph_exec_set_node_enabled(e, copy, 0);
    });
  });
  def("graph_add_host_node.null_fn", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_host_node(g, nullptr, nullptr, nullptr, n.out());
  });
  def("graph_add_child_graph_node.itself", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_child_graph_node(g, nullptr, g, n.out());
  });
  def("graph_add_mem_alloc_node.zero_bytes", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode n;
    return cuabi_graph_add_mem_alloc_node(g, nullptr, 0, n.out());
  });
  def("graph_add_mem_free_node.not_an_allocation", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode e, n;
    cuabi_graph_add_empty_node(g, nullptr, e.out());
    return cuabi_graph_add_mem_free_node(g, nullptr, e, n.out());
  });
  auto conditional = [graph](cuabi_conditional_type type, uint32_t size, bool foreign) {
    Graph g = graph(), other = graph();
    uint64_t h = 0;
    cuabi_graph_create_conditional_handle(foreign ? other.get() : g.get(), 0, &h);
    GraphNode n;
    return cuabi_graph_add_conditional_node(g, nullptr, h, type, size, n.out());
  };
  def("graph_add_conditional_node.switch_with_0_cases", [conditional](CaseContext&) -> cuabi_status {
    return conditional(CUABI_CONDITIONAL_SWITCH, 0, false);
  });
  def("graph_add_conditional_node.while_with_2_bodies", [conditional](CaseContext&) -> cuabi_status {
    return conditional(CUABI_CONDITIONAL_WHILE, 2, false);
  });
  def("graph_add_conditional_node.if_with_3_bodies", [conditional](CaseContext&) -> cuabi_status {
    return conditional(CUABI_CONDITIONAL_IF, 3, false);
  });
  def("graph_add_conditional_node.handle_of_another_graph", [conditional](CaseContext&) -> cuabi_status {
    return conditional(CUABI_CONDITIONAL_IF, 1, true);
  });
  def("graph_add_conditional_node.unknown_type", [conditional](CaseContext&) -> cuabi_status {
    return conditional(static_cast<cuabi_conditional_type>(9), 1, false);
  });
  def("graph_node_get_body.not_conditional", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph(), body;
    GraphNode e;
    cuabi_graph_add_empty_node(g, nullptr, e.out());
    return cuabi_graph_node_get_body(e, 0, body.out());
  });
  def("graph_node_get_body.past_the_end", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph(), body;
    uint64_t h = 0;
    cuabi_graph_create_conditional_handle(g, 0, &h);
    GraphNode n;
    cuabi_graph_add_conditional_node(g, nullptr, h, CUABI_CONDITIONAL_IF, 2, n.out());
    return cuabi_graph_node_get_body(n, 2, body.out());
  });
  def("graph_node_get_dependency.past_the_end", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode a, b, d;
    cuabi_graph_add_empty_node(g, nullptr, a.out());
    cuabi_graph_add_empty_node(g, a, b.out());
    return cuabi_graph_node_get_dependency(b, 1, d.out());
  });
  def("graph_node_get_address.not_an_allocation", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode e;
    cuabi_graph_add_empty_node(g, nullptr, e.out());
    uint64_t address = 0;
    return cuabi_graph_node_get_address(e, &address);
  });
  def("graph_instantiate_with_flags.undefined_bit", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    GraphNode e;
    cuabi_graph_add_empty_node(g, nullptr, e.out());
    GraphExec x;
    return cuabi_graph_instantiate_with_flags(g, 1u << 12, nullptr, x.out());
  });
  def("graph_instantiate_with_flags.a_body", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph(), body;
    uint64_t h = 0;
    cuabi_graph_create_conditional_handle(g, 0, &h);
    GraphNode n;
    cuabi_graph_add_conditional_node(g, nullptr, h, CUABI_CONDITIONAL_WHILE, 1, n.out());
    cuabi_graph_node_get_body(n, 0, body.out());
    GraphExec x;
    return cuabi_graph_instantiate_with_flags(body, 0, nullptr, x.out());
  });
  def("graph_write_dot.null_path", [graph](CaseContext&) -> cuabi_status {
    Graph g = graph();
    return cuabi_graph_write_dot(g, nullptr);
  });
  def("stream_begin_capture_to_graph.bad_mode", [graph, &f](CaseContext&) -> cuabi_status {
    Graph g = graph();
    return cuabi_stream_begin_capture_to_graph(f.stream, g, nullptr,
                                               static_cast<cuabi_capture_mode>(7));
  });

  // --- Allocation answering the address too (cuabi_buffer_alloc*_with_pointer) --
  // A refused call writes neither out-parameter.
  auto untouched = [](CaseContext& ctx, cuabi_buffer out, uint64_t ptr) {
    if (HandleValue(out) != 0x99) ctx.Problem("out was written although the call failed");
    if (ptr != 0x77) ctx.Problem("ptr was written although the call failed");
  };
  def("buffer_alloc_with_pointer.zero_bytes", [dev, untouched](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    uint64_t ptr = 0x77;
    cuabi_status st = cuabi_buffer_alloc_with_pointer(dev, 0, &out, &ptr);
    untouched(ctx, out, ptr);
    return st;
  });
  def("buffer_alloc_with_pointer.null_ptr", [dev](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    cuabi_status st = cuabi_buffer_alloc_with_pointer(dev, 64, &out, nullptr);
    if (HandleValue(out) != 0x99) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("buffer_alloc_with_pointer.2pow50_bytes", [dev, untouched](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    uint64_t ptr = 0x77;
    cuabi_status st = cuabi_buffer_alloc_with_pointer(dev, size_t(1) << 50, &out, &ptr);
    untouched(ctx, out, ptr);
    return st;
  });
  def("buffer_alloc_with_pointer.the_address_is_the_buffer_s", [dev](CaseContext& ctx) -> cuabi_status {
    Buffer out;
    uint64_t ptr = 0, got = 1;
    cuabi_status st = cuabi_buffer_alloc_with_pointer(dev, 256, out.out(), &ptr);
    if (st == CUABI_SUCCESS) {
      cuabi_buffer_get_pointer(out, &got);
      if (ptr == 0 || ptr != got) ctx.Problem("ptr is not what cuabi_buffer_get_pointer answers");
    }
    return st;
  });
  def("buffer_alloc_async_with_pointer.zero_bytes", [dev, untouched](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    uint64_t ptr = 0x77;
    cuabi_status st = cuabi_buffer_alloc_async_with_pointer(dev, 0, nullptr, nullptr, &out, &ptr);
    untouched(ctx, out, ptr);
    return st;
  });
  def("buffer_alloc_async_with_pointer.null_ptr", [dev, &f](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    cuabi_status st =
        cuabi_buffer_alloc_async_with_pointer(dev, 64, nullptr, f.stream, &out, nullptr);
    if (HandleValue(out) != 0x99) ctx.Problem("out was written although the call failed");
    return st;
  });
  def("buffer_alloc_async_with_pointer.2pow50_bytes", [dev, untouched](CaseContext& ctx) -> cuabi_status {
    cuabi_buffer out = AsHandle<cuabi_buffer>(0x99);
    uint64_t ptr = 0x77;
    cuabi_status st =
        cuabi_buffer_alloc_async_with_pointer(dev, size_t(1) << 50, nullptr, nullptr, &out, &ptr);
    cuabi_device_synchronize(dev);
    untouched(ctx, out, ptr);
    return st;
  });
  def("buffer_alloc_async_with_pointer.the_address_is_the_buffer_s",
      [dev, &f](CaseContext& ctx) -> cuabi_status {
        Buffer out;
        uint64_t ptr = 0, got = 1;
        cuabi_status st =
            cuabi_buffer_alloc_async_with_pointer(dev, 256, nullptr, f.stream, out.out(), &ptr);
        if (st == CUABI_SUCCESS) {
          cuabi_buffer_get_pointer(out, &got);
          if (ptr == 0 || ptr != got) ctx.Problem("ptr is not what cuabi_buffer_get_pointer answers");
          cuabi_stream_synchronize(f.stream);
        }
        return st;
      });
  return bodies;
}

TEST(GpuBadInputCorpus, CApi) {
  HARDENING_REQUIRE_GPU();
  std::vector<Case> all;
  std::string why;
  ASSERT_TRUE(LoadCorpus(&all, &why)) << why;
  GpuFixture fixture;
  ASSERT_TRUE(fixture.Build(&why)) << why;
  const std::vector<Case> cases = InGroup(all, "gpu");
  const CorpusResult result = RunCorpus(cases, GpuBodies(fixture));
  ReportCorpus("C ABI, GPU", result);
  // The context must have survived every case.
  EXPECT_EQ("", RunSaxpy(fixture.device, fixture.saxpy, fixture.stream, 1 << 16, 11));
  EXPECT_EQ(result.cases, result.passed)
      << result.failures.size() << " case(s) failed (listed above)";
  EXPECT_TRUE(result.failures.empty()) << "listed above";
}

// The data and the call bodies of the "gpu" group agree; needs no GPU (the
// bodies are registered, not run), so it runs with the CPU tests.
TEST(BadInputCorpus, GpuCasesAndBodiesMatch) {
  std::vector<Case> all;
  std::string why;
  ASSERT_TRUE(LoadCorpus(&all, &why)) << why;
  GpuFixture unbuilt;
  for (const std::string& problem : Match(InGroup(all, "gpu"), GpuBodies(unbuilt)))
    ADD_FAILURE() << problem;
}

}  // namespace
}  // namespace hardening
