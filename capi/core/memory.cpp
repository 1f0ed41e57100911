#include "memory.hpp"

#include <string>

namespace cuabi {

Buffer::Buffer(Ref<Device> dev, size_t bytes) : DeviceChild(kKind, std::move(dev)) {
  if (bytes == 0) fail_invalid("bytes is 0: a device buffer needs at least one byte");
  enter();
  CUdeviceptr p = 0;
  CUresult r = driver().cuMemAlloc(&p, bytes);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(CUABI_ERROR_OUT_OF_MEMORY,
         "cuMemAlloc of " + std::to_string(bytes) + " bytes failed: out of device memory on device " +
             std::to_string(device->ordinal),
         r);
  check(r, "cuMemAlloc");
  ptr = p;
  size = bytes;
  owned = true;
}

Buffer::Buffer(Ref<Device> dev, CUdeviceptr p, size_t bytes)
    : DeviceChild(kKind, std::move(dev)), ptr(p), size(bytes), owned(false) {
  if (p == 0) fail_invalid("device_ptr is 0");
  if (bytes == 0) fail_invalid("bytes is 0: a wrapped buffer needs at least one byte");
  if (p + bytes < p) fail_invalid("device_ptr + bytes overflows the address space");
}

Buffer::~Buffer() {
  if (owned && enter_quietly(*this)) driver().cuMemFree(ptr);
}

HostBuffer::HostBuffer(Ref<Device> dev, size_t bytes) : DeviceChild(kKind, std::move(dev)) {
  if (bytes == 0) fail_invalid("bytes is 0: a pinned buffer needs at least one byte");
  enter();
  void* p = nullptr;
  CUresult r = driver().cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(CUABI_ERROR_OUT_OF_MEMORY,
         "cuMemHostAlloc of " + std::to_string(bytes) + " bytes failed: out of pinnable host memory",
         r);
  check(r, "cuMemHostAlloc");
  ptr = p;
  size = bytes;
}

HostBuffer::HostBuffer(Ref<Device> dev, void* p, size_t bytes)
    : DeviceChild(kKind, std::move(dev)) {
  if (!p) fail_invalid("ptr is NULL");
  if (bytes == 0) fail_invalid("bytes is 0: nothing to pin");
  enter();
  check(driver().cuMemHostRegister(p, bytes, CU_MEMHOSTREGISTER_PORTABLE), "cuMemHostRegister");
  ptr = p;
  size = bytes;
  registered = true;
}

HostBuffer::~HostBuffer() {
  if (!enter_quietly(*this)) return;
  if (registered)
    driver().cuMemHostUnregister(ptr);
  else
    driver().cuMemFreeHost(ptr);
}

namespace {

void check_range(const Buffer& b, size_t offset, size_t bytes, const char* which) {
  if (offset > b.size || bytes > b.size - offset)
    fail(CUABI_ERROR_OUT_OF_RANGE, std::string(which) + " range [" + std::to_string(offset) +
                                       ", " + std::to_string(offset) + " + " +
                                       std::to_string(bytes) + ") reaches past the end of the " +
                                       std::to_string(b.size) + "-byte buffer");
}

// The synchronous forms return once the device has finished: the driver's
// pageable copies and device-side copies and fills may return earlier.
void finish_default_stream() {
  check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize");
}

}  // namespace

void copy_from_host(const Buffer& dst, size_t offset, const void* src, size_t bytes,
                    const Pin<Stream>* stream) {
  check_range(dst, offset, bytes, "destination");
  if (bytes == 0) return;
  if (!src) fail_invalid("src is NULL");
  dst.enter();
  if (stream) {
    CUstream s = stream_for(*stream, *dst.device);
    check(driver().cuMemcpyHtoDAsync(dst.ptr + offset, src, bytes, s), "cuMemcpyHtoDAsync");
  } else {
    check(driver().cuMemcpyHtoD(dst.ptr + offset, src, bytes), "cuMemcpyHtoD");
    finish_default_stream();
  }
}

void copy_to_host(const Buffer& src, size_t offset, void* dst, size_t bytes,
                  const Pin<Stream>* stream) {
  check_range(src, offset, bytes, "source");
  if (bytes == 0) return;
  if (!dst) fail_invalid("dst is NULL");
  src.enter();
  if (stream) {
    CUstream s = stream_for(*stream, *src.device);
    check(driver().cuMemcpyDtoHAsync(dst, src.ptr + offset, bytes, s), "cuMemcpyDtoHAsync");
  } else {
    check(driver().cuMemcpyDtoH(dst, src.ptr + offset, bytes), "cuMemcpyDtoH");
  }
}

void copy_device(const Buffer& dst, size_t dst_offset, const Buffer& src, size_t src_offset,
                 size_t bytes, const Pin<Stream>* stream) {
  check_range(dst, dst_offset, bytes, "destination");
  check_range(src, src_offset, bytes, "source");
  if (bytes == 0) return;
  CUdeviceptr d = dst.ptr + dst_offset, s = src.ptr + src_offset;
  if (d < s + bytes && s < d + bytes)
    fail_invalid("the source and destination ranges overlap (" + std::to_string(bytes) +
                 " bytes at device addresses " + std::to_string(s) + " and " + std::to_string(d) +
                 "); copies between overlapping ranges are undefined");
  dst.enter();
  if (dst.device.get() != src.device.get()) src.device->check_epoch(src.epoch);
  if (stream) {
    CUstream cs = stream_for(*stream, *dst.device);
    check(driver().cuMemcpyDtoDAsync(d, s, bytes, cs), "cuMemcpyDtoDAsync");
  } else {
    check(driver().cuMemcpyDtoD(d, s, bytes), "cuMemcpyDtoD");
    finish_default_stream();
  }
}

void memset_device(const Buffer& dst, size_t offset, uint8_t value, size_t bytes,
                   const Pin<Stream>* stream) {
  check_range(dst, offset, bytes, "memset");
  if (bytes == 0) return;
  dst.enter();
  if (stream) {
    CUstream s = stream_for(*stream, *dst.device);
    check(driver().cuMemsetD8Async(dst.ptr + offset, value, bytes, s), "cuMemsetD8Async");
  } else {
    check(driver().cuMemsetD8(dst.ptr + offset, value, bytes), "cuMemsetD8");
    finish_default_stream();
  }
}

}  // namespace cuabi
