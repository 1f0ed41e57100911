// Batches of stream memory operations, copies, prefetches and discards.
// Every element of the caller's array is read, its handles resolved and
// every check of the one-at-a-time call made, for all elements, before the
// driver sees any; a refusal's message starts with the element's index
// ("ops[12]: ...") and keeps the single call's status.
#include "batch.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "driver.hpp"
#include "memops.hpp"
#include "memory.hpp"
#include "structs.hpp"

namespace cuabi {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

std::string element(const char* array, size_t i) {
  return std::string(array) + "[" + str(i) + "]";
}

// Runs `body` for element `i` of `array`: a failure's message is prefixed
// with "<array>[i]: ", its status and driver code kept.
template <class F>
void at(const char* array, size_t i, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    fail(e.status(), element(array, i) + ": " + e.message(), e.code());
  }
}

// The caller's array of versioned structs: element 0's struct_size is the
// stride, and every element has that size. Each element is read into a copy
// holding this library's defaults (`defaults`).
template <class T>
std::vector<T> read_array(const T* items, size_t count, const char* array, size_t max_count,
                          const T& defaults) {
  if (count == 0) fail_invalid("count is 0: a batch has at least one element");
  if (count > max_count)
    fail_invalid("count is " + str(count) + "; a batch holds at most " + str(max_count) +
                 " elements");
  if (!items) fail_invalid(std::string(array) + " is NULL");
  const size_t stride = items[0].struct_size;
  check_struct_size<T>(stride, element(array, 0) + ".struct_size");
  std::vector<T> out(count, defaults);
  const auto* base = reinterpret_cast<const unsigned char*>(items);
  for (size_t i = 0; i < count; ++i) {
    const T* given = reinterpret_cast<const T*>(base + i * stride);
    if (given->struct_size != stride)
      fail_invalid(element(array, i) + ".struct_size is " + str(given->struct_size) + "; " +
                   element(array, 0) + "'s is " + str(stride) +
                   " (every element of a batch has the same size)");
    const std::string what = element(array, i);
    read_struct(given, &out[i], what.c_str());
  }
  return out;
}

constexpr size_t kNoLimit = ~size_t{0};

// The memory at one end of a copy or under a memory operation.
struct Memory {
  CUdeviceptr ptr = 0;       // the address at the offset
  Ref<Buffer> buffer;        // a device buffer, or
  Ref<HostBuffer> host;      // pinned host memory, or neither (a plain host pointer)
};

// Exactly one of the three places an end of a copy may be, `end` "dst" or
// "src".
void one_of(const void* buffer, const void* host_buffer, const void* host, const char* end) {
  const int given = (buffer != nullptr) + (host_buffer != nullptr) + (host != nullptr);
  if (given == 1) return;
  const std::string e(end);
  fail_invalid(std::string(given == 0 ? "none" : "more than one") + " of " + e + "_buffer, " + e +
               "_host_buffer and " + e + "_host is set; exactly one names the " +
               (e == "dst" ? "destination" : "source"));
}

void check_host_range(const HostBuffer& h, size_t offset, size_t bytes, const char* which) {
  if (offset > h.size || bytes > h.size - offset)
    fail(CUABI_ERROR_OUT_OF_RANGE, std::string(which) + " range [" + str(offset) + ", " +
                                       str(offset) + " + " + str(bytes) +
                                       ") reaches past the end of the " + str(h.size) +
                                       "-byte pinned host memory");
}

void same_device(const Buffer& b, const Stream& stream, const char* which) {
  if (b.device.get() != stream.device.get())
    fail_invalid(std::string(which) + " buffer is on device " + std::to_string(b.device->ordinal) +
                 ", the stream on device " + std::to_string(stream.device->ordinal));
  b.device->check_epoch(b.epoch);
}

}  // namespace

// ---------------------------------------------------------------------------
// Memory operations
// ---------------------------------------------------------------------------

void stream_mem_op_batch(Stream& stream, const cuabi_mem_op* ops, size_t count) {
  const cuabi_mem_op defaults = CUABI_MEM_OP_INIT;
  const std::vector<cuabi_mem_op> given = read_array(ops, count, "ops", 255, defaults);
  std::vector<Memory> memory(count);
  std::vector<CUstreamBatchMemOpParams> params(count);
  for (size_t i = 0; i < count; ++i) {
    at("ops", i, [&] {
      const cuabi_mem_op& op = given[i];
      if (op.kind != CUABI_MEM_OP_WRITE && op.kind != CUABI_MEM_OP_WAIT)
        fail_invalid("kind is " + std::to_string(op.kind) +
                     ", not CUABI_MEM_OP_WRITE (0) or CUABI_MEM_OP_WAIT (1)");
      if ((op.buffer != nullptr) == (op.host_buffer != nullptr))
        fail_invalid(op.buffer ? "both buffer and host_buffer are set; exactly one names the word"
                               : "neither buffer nor host_buffer is set; exactly one names the "
                                 "word");
      Memory& m = memory[i];
      size_t size = 0;
      const Device* device = nullptr;
      if (op.buffer) {
        m.buffer = acquire<Buffer>(op.buffer, "buffer");
        m.buffer->device->check_epoch(m.buffer->epoch);
        size = m.buffer->size;
        device = m.buffer->device.get();
      } else {
        m.host = acquire<HostBuffer>(op.host_buffer, "host_buffer");
        size = m.host->size;
      }
      if (op.kind == CUABI_MEM_OP_WRITE)
        check_write_value(stream, size, device, op.offset, op.value, op.width, op.flags);
      else
        check_wait_value(stream, size, device, op.offset, op.value, op.width,
                         static_cast<int32_t>(op.condition), op.flags);
    });
  }
  // Every element is sound: the addresses, then the driver's array.
  for (size_t i = 0; i < count; ++i) {
    const cuabi_mem_op& op = given[i];
    Memory& m = memory[i];
    const CUdeviceptr base = m.buffer ? m.buffer->ptr : host_device_pointer(*m.host);
    CUstreamBatchMemOpParams& p = params[i];
    std::memset(&p, 0, sizeof p);
    if (op.kind == CUABI_MEM_OP_WRITE) {
      p.writeValue.operation =
          op.width == 4 ? CU_STREAM_MEM_OP_WRITE_VALUE_32 : CU_STREAM_MEM_OP_WRITE_VALUE_64;
      p.writeValue.address = base + op.offset;
      if (op.width == 4)
        p.writeValue.value = static_cast<cuuint32_t>(op.value);
      else
        p.writeValue.value64 = op.value;
      p.writeValue.flags = 0;
    } else {
      p.waitValue.operation =
          op.width == 4 ? CU_STREAM_MEM_OP_WAIT_VALUE_32 : CU_STREAM_MEM_OP_WAIT_VALUE_64;
      p.waitValue.address = base + op.offset;
      if (op.width == 4)
        p.waitValue.value = static_cast<cuuint32_t>(op.value);
      else
        p.waitValue.value64 = op.value;
      unsigned f = static_cast<unsigned>(op.condition);
      if (op.flags & CUABI_MEM_OP_FLUSH) f |= CU_STREAM_WAIT_VALUE_FLUSH;
      p.waitValue.flags = f;
    }
  }
  const DriverApi& d = stream.enter();
  check(d.cuStreamBatchMemOp(stream.stream, static_cast<unsigned>(count), params.data(), 0),
        "cuStreamBatchMemOp");
}

// ---------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------

void stream_copy_batch(Stream& stream, const cuabi_copy_op* ops, size_t count, uint32_t flags) {
  if (flags & ~static_cast<uint32_t>(CUABI_COPY_BATCH_PREFER_OVERLAP))
    fail_invalid("flags has bits this version does not define: " + str(flags));
  const cuabi_copy_op defaults = CUABI_COPY_OP_INIT;
  const std::vector<cuabi_copy_op> given = read_array(ops, count, "ops", kNoLimit, defaults);
  std::vector<Memory> dst(count), src(count);
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<size_t> sizes;
  dsts.reserve(count);
  srcs.reserve(count);
  sizes.reserve(count);
  // One end: resolved, its range checked; `m.ptr` its address.
  auto resolve = [&](Memory& m, cuabi_buffer buffer, cuabi_host_buffer host_buffer,
                     const void* host, size_t offset, size_t bytes, const char* which,
                     const char* name) {
    one_of(buffer, host_buffer, host, name);
    if (buffer) {
      m.buffer = acquire<Buffer>(buffer, (std::string(name) + "_buffer").c_str());
      same_device(*m.buffer, stream, which);
      check_buffer_range(*m.buffer, offset, bytes, which);
      m.ptr = m.buffer->ptr + offset;
    } else if (host_buffer) {
      m.host = acquire<HostBuffer>(host_buffer, (std::string(name) + "_host_buffer").c_str());
      check_host_range(*m.host, offset, bytes, which);
      m.ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(m.host->ptr)) + offset;
    } else {
      m.ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(host)) + offset;
    }
  };
  for (size_t i = 0; i < count; ++i) {
    at("ops", i, [&] {
      const cuabi_copy_op& op = given[i];
      resolve(dst[i], op.dst_buffer, op.dst_host_buffer, op.dst_host, op.dst_offset, op.bytes,
              "destination", "dst");
      resolve(src[i], op.src_buffer, op.src_host_buffer, op.src_host, op.src_offset, op.bytes,
              "source", "src");
      const CUdeviceptr d = dst[i].ptr, s = src[i].ptr;
      if (op.bytes && d < s + op.bytes && s < d + op.bytes)
        fail_invalid("the source and destination ranges overlap (" + str(op.bytes) +
                     " bytes at addresses " + str(s) + " and " + str(d) +
                     "); copies between overlapping ranges are undefined");
      if (op.bytes == 0) return;  // as a single copy of 0 bytes: nothing to do
      dsts.push_back(d);
      srcs.push_back(s);
      sizes.push_back(op.bytes);
    });
  }
  if (sizes.empty()) return;
  // CUDA 12.8 and 12.9 have an older cuMemcpyBatchAsync (with a failIdx
  // parameter) under the same name; cuabi calls the CUDA 13.0 form only.
  if (driver_version() < 13000)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "cuMemcpyBatchAsync: the driver is CUDA " + std::to_string(driver_version() / 1000) + "." +
             std::to_string(driver_version() % 1000 / 10) +
             "; batched copies need CUDA 13.0 or later");
  CUmemcpyAttributes attr{};
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attr.srcLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
  attr.srcLocHint.id = stream.device->ordinal;
  attr.dstLocHint = attr.srcLocHint;
  attr.flags = (flags & CUABI_COPY_BATCH_PREFER_OVERLAP) ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
                                                         : CU_MEMCPY_FLAG_DEFAULT;
  size_t attr_index = 0;
  const DriverApi& drv = stream.enter();
  check(drv.cuMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), sizes.size(), &attr,
                               &attr_index, 1, stream.stream),
        "cuMemcpyBatchAsync");
}

// ---------------------------------------------------------------------------
// Copies in three dimensions
// ---------------------------------------------------------------------------

namespace {

// One side of a box copy as the 3D batch takes it. `type`, the address or
// array and the layout come from the single copy's checked parameters; a
// pointer operand starts at the box's first byte (the batch has no x, y, z
// for pointers) and counts its rows in elements of `element` bytes.
CUmemcpy3DOperand operand(CUmemorytype type, CUdeviceptr device, const void* host, CUarray array,
                          size_t x_bytes, size_t y, size_t z, size_t pitch, size_t rows,
                          size_t depth, size_t element, const Array* held, const Stream& stream,
                          const char* name) {
  CUmemcpy3DOperand o;
  std::memset(&o, 0, sizeof o);
  if (type == CU_MEMORYTYPE_ARRAY) {
    o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    o.op.array.array = array;
    o.op.array.offset.x = x_bytes / held->element_size();
    o.op.array.offset.y = y;
    o.op.array.offset.z = z;
    return o;
  }
  if (pitch % element)
    fail_invalid(std::string(name) + " pitch " + str(pitch) + " is not whole elements of the " +
                 "array's " + str(element) +
                 " bytes; a batched copy with an array counts rows in elements");
  const CUdeviceptr base = type == CU_MEMORYTYPE_DEVICE
                               ? device
                               : static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(host));
  o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  // The single copy's checks bound this for a buffer; host memory is the
  // caller's and addressed as cuMemcpy3D would.
  o.op.ptr.ptr = base + x_bytes + y * pitch + z * pitch * rows;
  o.op.ptr.rowLength = pitch / element;
  o.op.ptr.layerHeight = depth > 1 ? rows : 0;
  o.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
  o.op.ptr.locHint.id = stream.device->ordinal;
  return o;
}

}  // namespace

void stream_copy_3d_batch(Stream& stream, const cuabi_copy_3d_desc* copies, size_t count,
                          uint32_t flags) {
  if (flags & ~static_cast<uint32_t>(CUABI_COPY_BATCH_PREFER_OVERLAP))
    fail_invalid("flags has bits this version does not define: " + str(flags));
  const cuabi_copy_3d_desc defaults = CUABI_COPY_3D_DESC_INIT;
  const std::vector<cuabi_copy_3d_desc> given =
      read_array(copies, count, "copies", kNoLimit, defaults);
  // The handles each element names, held until the call is made.
  struct Held {
    Ref<Buffer> src_buffer, dst_buffer;
    Ref<Array> src_array, dst_array;
  };
  std::vector<Held> held(count);
  std::vector<CUDA_MEMCPY3D_BATCH_OP> ops;
  ops.reserve(count);
  const unsigned op_flags = (flags & CUABI_COPY_BATCH_PREFER_OVERLAP)
                                ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
                                : CU_MEMCPY_FLAG_DEFAULT;
  for (size_t i = 0; i < count; ++i) {
    at("copies", i, [&] {
      const cuabi_copy_3d_desc& d = given[i];
      Held& h = held[i];
      if (d.src_buffer) h.src_buffer = acquire<Buffer>(d.src_buffer, "src_buffer");
      if (d.dst_buffer) h.dst_buffer = acquire<Buffer>(d.dst_buffer, "dst_buffer");
      if (d.src_array) h.src_array = acquire<Array>(d.src_array, "src_array");
      if (d.dst_array) h.dst_array = acquire<Array>(d.dst_array, "dst_array");
      const CopySide src{"src", d.src_host, h.src_buffer.get(), h.src_array.get(),
                         d.src_x_bytes, d.src_y, d.src_z, d.src_pitch, d.src_height};
      const CopySide dst{"dst", d.dst_host, h.dst_buffer.get(), h.dst_array.get(),
                         d.dst_x_bytes, d.dst_y, d.dst_z, d.dst_pitch, d.dst_height};
      // Every check of cuabi_copy_3d, then the batch's own.
      const Copy3dPlan plan = plan_copy_3d(src, dst, d.width_bytes, d.height, d.depth);
      for (const DeviceChild* side : {plan.src_side, plan.dst_side}) {
        if (!side) continue;
        if (side->device.get() != stream.device.get())
          fail_invalid(std::string(side == plan.src_side ? "src" : "dst") + " is on device " +
                       std::to_string(side->device->ordinal) + ", the stream on device " +
                       std::to_string(stream.device->ordinal));
        side->device->check_epoch(side->epoch);
      }
      const CUDA_MEMCPY3D& p = plan.params;
      const Array* sa = h.src_array.get();
      const Array* da = h.dst_array.get();
      if (sa && da && sa->element_size() != da->element_size())
        fail_invalid("the src array's elements are " + str(sa->element_size()) +
                     " bytes and the dst array's " + str(da->element_size()) +
                     "; a batched copy between arrays needs equal element sizes");
      const size_t element = sa ? sa->element_size() : da ? da->element_size() : 1;
      if (p.WidthInBytes == 0) return;  // as a single copy of 0 bytes: nothing to do
      CUDA_MEMCPY3D_BATCH_OP op;
      std::memset(&op, 0, sizeof op);
      op.src = operand(p.srcMemoryType, p.srcDevice, p.srcHost, p.srcArray, p.srcXInBytes, p.srcY,
                       p.srcZ, p.srcPitch, p.srcHeight, p.Depth, element, sa, stream, "src");
      op.dst = operand(p.dstMemoryType, p.dstDevice, p.dstHost, p.dstArray, p.dstXInBytes, p.dstY,
                       p.dstZ, p.dstPitch, p.dstHeight, p.Depth, element, da, stream, "dst");
      op.extent.width = p.WidthInBytes / element;
      op.extent.height = p.Height;
      op.extent.depth = p.Depth;
      op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
      op.flags = op_flags;
      ops.push_back(op);
    });
  }
  if (ops.empty()) return;
  // CUDA 12.8 and 12.9 have an older cuMemcpy3DBatchAsync (with a failIdx
  // parameter) under the same name; cuabi calls the CUDA 13.0 form only.
  if (driver_version() < 13000)
    fail(CUABI_ERROR_NOT_SUPPORTED, "cuMemcpy3DBatchAsync: the driver is CUDA " +
                                        std::to_string(driver_version() / 1000) + "." +
                                        std::to_string(driver_version() % 1000 / 10) +
                                        "; batched 3D copies need CUDA 13.0 or later");
  const DriverApi& drv = stream.enter();
  check(drv.cuMemcpy3DBatchAsync(ops.size(), ops.data(), 0, stream.stream), "cuMemcpy3DBatchAsync");
}

// ---------------------------------------------------------------------------
// Prefetches and discards of managed memory
// ---------------------------------------------------------------------------

void stream_managed_batch(Stream& stream, const cuabi_managed_range* ranges, size_t count,
                          int32_t location, ManagedBatch what) {
  const cuabi_managed_range defaults = CUABI_MANAGED_RANGE_INIT;
  const std::vector<cuabi_managed_range> given =
      read_array(ranges, count, "ranges", kNoLimit, defaults);
  CUmemLocation loc{};
  if (what != ManagedBatch::Discard) loc = memory_location(location, "location");
  std::vector<Ref<Buffer>> buffers(count);
  std::vector<CUdeviceptr> ptrs(count);
  std::vector<size_t> sizes(count);
  const char* range_name = what == ManagedBatch::Prefetch ? "prefetch" : "discard";
  for (size_t i = 0; i < count; ++i) {
    at("ranges", i, [&] {
      const cuabi_managed_range& r = given[i];
      buffers[i] = acquire<Buffer>(r.buffer, "buffer");
      const Buffer& b = *buffers[i];
      check_managed(b);
      b.device->check_epoch(b.epoch);
      if (r.bytes == 0)
        fail_invalid("bytes is 0: each range of a batch has at least one byte");
      check_buffer_range(b, r.offset, r.bytes, range_name);
      ptrs[i] = b.ptr + r.offset;
      sizes[i] = r.bytes;
    });
  }
  const DriverApi& d = stream.enter();
  size_t loc_index = 0;
  switch (what) {
    case ManagedBatch::Prefetch:
      check(d.cuMemPrefetchBatchAsync(ptrs.data(), sizes.data(), count, &loc, &loc_index, 1, 0,
                                      stream.stream),
            "cuMemPrefetchBatchAsync");
      return;
    case ManagedBatch::Discard:
      check(d.cuMemDiscardBatchAsync(ptrs.data(), sizes.data(), count, 0, stream.stream),
            "cuMemDiscardBatchAsync");
      return;
    case ManagedBatch::DiscardAndPrefetch:
      check(d.cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), count, &loc,
                                                &loc_index, 1, 0, stream.stream),
            "cuMemDiscardAndPrefetchBatchAsync");
      return;
  }
}

}  // namespace cuabi
