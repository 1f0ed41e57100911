#include "memory.hpp"

#include <unistd.h>

#include <string>

#include "driver_log.hpp"
#include "stream.hpp"
#include "structs.hpp"
#include "vmm.hpp"

namespace cuabi {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// The out-of-memory failure of an allocation, or any other driver failure.
void check_alloc(CUresult r, const char* call, size_t bytes, const Device& device) {
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(CUABI_ERROR_OUT_OF_MEMORY,
         std::string(call) + " of " + str(bytes) + " bytes failed: out of device memory on device " +
             std::to_string(device.ordinal) + driver_log_of_failure(),
         r);
  check(r, call);
}

void check_range(const Buffer& b, size_t offset, size_t bytes, const char* which) {
  const size_t size = b.size.load(std::memory_order_acquire);  // a growable buffer's grows
  if (offset > size || bytes > size - offset)
    fail(CUABI_ERROR_OUT_OF_RANGE, std::string(which) + " range [" + str(offset) + ", " +
                                       str(offset) + " + " + str(bytes) +
                                       ") reaches past the end of the " + str(size) +
                                       "-byte buffer");
}

// The synchronous forms return once the device has finished: the driver's
// pageable copies and device-side copies and fills may return earlier.
void finish_default_stream() {
  check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize");
}

const char* kind_text(cuabi_buffer_kind kind) {
  switch (kind) {
    case CUABI_BUFFER_DEVICE: return "a device buffer (cuabi_buffer_alloc)";
    case CUABI_BUFFER_STREAM_ORDERED: return "a stream-ordered buffer";
    case CUABI_BUFFER_MANAGED: return "a managed buffer";
    case CUABI_BUFFER_PITCHED: return "a pitched buffer";
    case CUABI_BUFFER_WRAPPED: return "a wrapped buffer";
    case CUABI_BUFFER_IPC: return "a buffer opened from another process";
    case CUABI_BUFFER_GROWABLE: return "a growable buffer";
    case CUABI_BUFFER_RANGE: return "a buffer over an address range";
    default: return "a buffer";
  }
}

void need_managed(const Buffer& b) {
  if (b.kind != CUABI_BUFFER_MANAGED)
    fail_invalid(std::string("the buffer is ") + kind_text(b.kind) +
                 ", not managed memory (cuabi_buffer_alloc_managed)");
}

// A prefetch or advice location as the driver takes it.
CUmemLocation location_of(int32_t location, const char* what) {
  CUmemLocation loc{};
  if (location == CUABI_LOCATION_HOST) {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
    loc.id = 0;
    return loc;
  }
  if (location < 0 || location >= Device::count())
    fail_invalid(std::string(what) + " " + std::to_string(location) +
                 " is neither CUABI_LOCATION_HOST (-1) nor a device ordinal (this machine has " +
                 std::to_string(Device::count()) + " devices)");
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = location;
  return loc;
}

}  // namespace

// The checks above, for the batches (batch.cpp).
void check_buffer_range(const Buffer& b, size_t offset, size_t bytes, const char* which) {
  check_range(b, offset, bytes, which);
}
void check_managed(const Buffer& b) { need_managed(b); }
CUmemLocation memory_location(int32_t location, const char* what) {
  return location_of(location, what);
}

// ---------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------

Buffer::Buffer(Ref<Device> dev, cuabi_buffer_kind k, CUdeviceptr p, size_t bytes)
    : DeviceChild(kKind, std::move(dev)), ptr(p), size(bytes), kind(k) {}

Buffer::~Buffer() {
  // Virtual memory: the range (a member) unmaps and frees, once no buffer
  // holds it.
  if (kind == CUABI_BUFFER_RANGE && range) range->views.fetch_sub(1, std::memory_order_acq_rel);
  if (kind == CUABI_BUFFER_GROWABLE || kind == CUABI_BUFFER_RANGE) return;
  if (kind == CUABI_BUFFER_WRAPPED || freed.load(std::memory_order_acquire)) return;
  if (!enter_quietly(*this)) return;
  const DriverApi& d = driver();
  switch (kind) {
    case CUABI_BUFFER_STREAM_ORDERED: {
      CUstream s = alloc_stream ? alloc_stream->stream : nullptr;
      if (s) {
        CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
        if (d.cuStreamIsCapturing(s, &capturing) == CUDA_SUCCESS &&
            capturing != CU_STREAM_CAPTURE_STATUS_NONE) {
          alloc_stream->defer_free(ptr);
          return;
        }
      }
      d.cuMemFreeAsync(ptr, s);
      return;
    }
    case CUABI_BUFFER_IPC:
      if (ipc_mapping) {
        ipc_mapping.reset();  // the last buffer of the mapping closes it
      } else {
        // A pointer imported from another process's pool: freed in stream
        // order, as the pool's own allocations are, and waited for here.
        d.cuMemFreeAsync(ptr, nullptr);
        d.cuStreamSynchronize(nullptr);
      }
      return;
    default:
      d.cuMemFree(ptr);
      return;
  }
}

Ref<Buffer> alloc_device(Ref<Device> dev, size_t bytes) {
  if (bytes == 0) fail_invalid("bytes is 0: a device buffer needs at least one byte");
  dev->make_current();
  CUdeviceptr p = 0;
  check_alloc(driver().cuMemAlloc(&p, bytes), "cuMemAlloc", bytes, *dev);
  return make<Buffer>(std::move(dev), CUABI_BUFFER_DEVICE, p, bytes);
}

Ref<Buffer> wrap_device(Ref<Device> dev, CUdeviceptr p, size_t bytes) {
  if (p == 0) fail_invalid("device_ptr is 0");
  if (bytes == 0) fail_invalid("bytes is 0: a wrapped buffer needs at least one byte");
  if (p + bytes < p) fail_invalid("device_ptr + bytes overflows the address space");
  return make<Buffer>(std::move(dev), CUABI_BUFFER_WRAPPED, p, bytes);
}

Ref<Buffer> alloc_pitched(Ref<Device> dev, size_t width_bytes, size_t height,
                          uint32_t element_size) {
  if (width_bytes == 0) fail_invalid("width_bytes is 0: a row needs at least one byte");
  if (height == 0) fail_invalid("height is 0: a pitched buffer needs at least one row");
  if (element_size != 4 && element_size != 8 && element_size != 16)
    fail_invalid("element_size is " + std::to_string(element_size) + "; expected 4, 8 or 16");
  dev->make_current();
  CUdeviceptr p = 0;
  size_t pitch = 0;
  const CUresult r = driver().cuMemAllocPitch(&p, &pitch, width_bytes, height, element_size);
  check_alloc(r, "cuMemAllocPitch", width_bytes * height, *dev);
  Ref<Buffer> b = make<Buffer>(std::move(dev), CUABI_BUFFER_PITCHED, p, pitch * height);
  b->pitch = pitch;
  return b;
}

Ref<Buffer> alloc_managed(Ref<Device> dev, size_t bytes, uint32_t flags) {
  if (bytes == 0) fail_invalid("bytes is 0: a managed buffer needs at least one byte");
  if (flags & ~static_cast<uint32_t>(CUABI_MANAGED_ATTACH_HOST))
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  dev->make_current();
  CUdeviceptr p = 0;
  const unsigned cu_flags =
      (flags & CUABI_MANAGED_ATTACH_HOST) ? CU_MEM_ATTACH_HOST : CU_MEM_ATTACH_GLOBAL;
  check_alloc(driver().cuMemAllocManaged(&p, bytes, cu_flags), "cuMemAllocManaged", bytes, *dev);
  return make<Buffer>(std::move(dev), CUABI_BUFFER_MANAGED, p, bytes);
}

Ref<Buffer> alloc_async(Ref<Device> dev, size_t bytes, const Pin<MemoryPool>& pool,
                        const Pin<Stream>& stream) {
  if (bytes == 0) fail_invalid("bytes is 0: a device buffer needs at least one byte");
  if (pool) {
    if (pool->device.get() != dev.get())
      fail_invalid("the pool belongs to device " + std::to_string(pool->device->ordinal) +
                   ", the allocation to device " + std::to_string(dev->ordinal));
    if (pool->imported)
      fail_invalid("the pool was imported from another process: it opens that process's "
                   "allocations (cuabi_buffer_open_ipc) and cannot allocate");
    dev->check_epoch(pool->epoch);
  }
  dev->make_current();
  CUstream s = stream_for(stream, *dev);
  CUdeviceptr p = 0;
  if (pool)
    check_alloc(driver().cuMemAllocFromPoolAsync(&p, bytes, pool->pool, s),
                "cuMemAllocFromPoolAsync", bytes, *dev);
  else
    check_alloc(driver().cuMemAllocAsync(&p, bytes, s), "cuMemAllocAsync", bytes, *dev);
  Ref<Buffer> b = make<Buffer>(std::move(dev), CUABI_BUFFER_STREAM_ORDERED, p, bytes);
  if (pool) b->pool = Ref<MemoryPool>::share(pool.get());
  if (stream) b->alloc_stream = Ref<Stream>::share(stream.get());
  return b;
}

void check_free_async(const Buffer& b, const Pin<Stream>& stream) {
  if (b.kind != CUABI_BUFFER_STREAM_ORDERED)
    fail_invalid(std::string("the buffer is ") + kind_text(b.kind) +
                 ", not stream-ordered (cuabi_buffer_alloc_async): release it instead");
  const int users = b.users.load(std::memory_order_acquire);
  if (users > 0)
    fail_invalid("the buffer is still read by " + std::to_string(users) +
                 " texture object(s); release them first");
  b.enter();
  stream_for(stream, *b.device);
}

void free_async(Buffer& b, const Pin<Stream>& stream) {
  CUstream s = stream_for(stream, *b.device);
  check(driver().cuMemFreeAsync(b.ptr, s), "cuMemFreeAsync");
  b.freed.store(true, std::memory_order_release);
}

void* host_pointer(const Buffer& b) {
  need_managed(b);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(b.ptr));
}

void prefetch(const Buffer& b, size_t offset, size_t bytes, int32_t location,
              const Pin<Stream>& stream) {
  need_managed(b);
  check_range(b, offset, bytes, "prefetch");
  const CUmemLocation loc = location_of(location, "location");
  if (bytes == 0) return;
  b.enter();
  CUstream s = stream_for(stream, *b.device);
  check(driver().cuMemPrefetchAsync(b.ptr + offset, bytes, loc, 0, s), "cuMemPrefetchAsync");
}

void advise(const Buffer& b, size_t offset, size_t bytes, cuabi_memory_advice advice,
            int32_t location) {
  need_managed(b);
  if (advice < CUABI_ADVISE_SET_READ_MOSTLY || advice > CUABI_ADVISE_UNSET_ACCESSED_BY)
    fail_invalid("advice " + std::to_string(advice) + " is not a cuabi_memory_advice");
  check_range(b, offset, bytes, "advice");
  CUmemLocation loc{};
  if (advice == CUABI_ADVISE_SET_READ_MOSTLY || advice == CUABI_ADVISE_UNSET_READ_MOSTLY) {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;  // not read for these
    loc.id = b.device->ordinal;
  } else {
    loc = location_of(location, "location");
  }
  if (bytes == 0) return;
  b.enter();
  check(driver().cuMemAdvise(b.ptr + offset, bytes, static_cast<CUmem_advise>(advice), loc),
        "cuMemAdvise");
}

// ---------------------------------------------------------------------------
// Memory pools
// ---------------------------------------------------------------------------

MemoryPool::~MemoryPool() {
  if (owned && enter_quietly(*this)) driver().cuMemPoolDestroy(pool);
}

Ref<MemoryPool> create_pool(Ref<Device> dev, const cuabi_memory_pool_desc* given) {
  cuabi_memory_pool_desc desc = CUABI_MEMORY_POOL_DESC_INIT;
  if (given) read_struct(given, &desc, "desc");
  if (desc.flags & ~static_cast<uint32_t>(CUABI_MEMORY_POOL_IPC))
    fail_invalid("desc->flags has bits this version does not define: " +
                 std::to_string(desc.flags));
  dev->make_current();
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = (desc.flags & CUABI_MEMORY_POOL_IPC) ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                                           : CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev->ordinal;
  props.maxSize = static_cast<size_t>(desc.max_bytes);
  CUmemoryPool pool = nullptr;
  check(driver().cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  Ref<MemoryPool> p = make<MemoryPool>(std::move(dev), pool, true,
                                       (desc.flags & CUABI_MEMORY_POOL_IPC) != 0, false);
  if (p->ipc) {
    // The driver exports a pool's allocations (cuMemPoolExportPointer) only
    // once the pool itself was exported: do that once here.
    int fd = -1;
    check(driver().cuMemPoolExportToShareableHandle(&fd, pool,
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemPoolExportToShareableHandle");
    close(fd);
  }
  if (desc.release_threshold) set_release_threshold(*p, desc.release_threshold);
  return p;
}

Ref<MemoryPool> default_pool(Ref<Device> dev) {
  dev->make_current();
  CUmemoryPool pool = nullptr;
  check(driver().cuDeviceGetDefaultMemPool(&pool, dev->device), "cuDeviceGetDefaultMemPool");
  return make<MemoryPool>(std::move(dev), pool, false, false, false);
}

void set_release_threshold(const MemoryPool& pool, uint64_t bytes) {
  pool.enter();
  cuuint64_t value = bytes;
  check(driver().cuMemPoolSetAttribute(pool.pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value),
        "cuMemPoolSetAttribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)");
}

uint64_t release_threshold(const MemoryPool& pool) {
  pool.enter();
  cuuint64_t value = 0;
  check(driver().cuMemPoolGetAttribute(pool.pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value),
        "cuMemPoolGetAttribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)");
  return value;
}

void trim_pool(const MemoryPool& pool, size_t keep_bytes) {
  pool.enter();
  check(driver().cuMemPoolTrimTo(pool.pool, keep_bytes), "cuMemPoolTrimTo");
}

std::pair<uint64_t, uint64_t> pool_usage(const MemoryPool& pool) {
  pool.enter();
  cuuint64_t reserved = 0, used = 0;
  check(driver().cuMemPoolGetAttribute(pool.pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved),
        "cuMemPoolGetAttribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)");
  check(driver().cuMemPoolGetAttribute(pool.pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used),
        "cuMemPoolGetAttribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)");
  return {reserved, used};
}

// ---------------------------------------------------------------------------
// Peer access
// ---------------------------------------------------------------------------

namespace {

void need_two(const Device& device, const Device& peer) {
  if (&device == &peer)
    fail_invalid("device and peer are both device " + std::to_string(device.ordinal) +
                 "; a device is not its own peer");
}

}  // namespace

int32_t can_access_peer(const Device& device, const Device& peer) {
  if (&device == &peer) return 0;
  int value = 0;
  check(driver().cuDeviceCanAccessPeer(&value, device.device, peer.device),
        "cuDeviceCanAccessPeer");
  return value;
}

void enable_peer_access(Device& device, const Device& peer) {
  need_two(device, peer);
  if (!can_access_peer(device, peer))
    fail(CUABI_ERROR_NOT_SUPPORTED, "device " + std::to_string(device.ordinal) +
                                        " cannot access the memory of device " +
                                        std::to_string(peer.ordinal) +
                                        " (cuDeviceCanAccessPeer answers 0)");
  peer.make_current();  // the peer's primary context must exist
  device.make_current();
  const CUresult r = driver().cuCtxEnablePeerAccess(peer.context(), 0);
  if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) check(r, "cuCtxEnablePeerAccess");
  device.set_peer_enabled(peer.ordinal, true);
}

void disable_peer_access(Device& device, const Device& peer) {
  need_two(device, peer);
  device.make_current();
  const CUresult r = driver().cuCtxDisablePeerAccess(peer.context());
  if (r != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) check(r, "cuCtxDisablePeerAccess");
  device.set_peer_enabled(peer.ordinal, false);
}

int32_t peer_attribute(const Device& device, const Device& peer, int32_t attribute) {
  need_two(device, peer);
  int value = 0;
  check(driver().cuDeviceGetP2PAttribute(&value, static_cast<CUdevice_P2PAttribute>(attribute),
                                         device.device, peer.device),
        "cuDeviceGetP2PAttribute");
  return value;
}

cuabi_copy_path copy_path(const Buffer& dst, const Buffer& src) {
  if (dst.device.get() == src.device.get()) return CUABI_COPY_SAME_DEVICE;
  if (dst.device->peer_enabled(src.device->ordinal) || src.device->peer_enabled(dst.device->ordinal))
    return CUABI_COPY_PEER;
  return CUABI_COPY_THROUGH_HOST;
}

// ---------------------------------------------------------------------------
// Copies and fills
// ---------------------------------------------------------------------------

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
    fail_invalid("the source and destination ranges overlap (" + str(bytes) +
                 " bytes at device addresses " + str(s) + " and " + str(d) +
                 "); copies between overlapping ranges are undefined");
  dst.enter();
  const bool peer = dst.device.get() != src.device.get();
  if (peer) src.device->check_epoch(src.epoch);
  const DriverApi& drv = driver();
  if (stream) {
    CUstream cs = stream_for(*stream, *dst.device);
    if (peer)
      check(drv.cuMemcpyPeerAsync(d, dst.device->context(), s, src.device->context(), bytes, cs),
            "cuMemcpyPeerAsync");
    else
      check(drv.cuMemcpyDtoDAsync(d, s, bytes, cs), "cuMemcpyDtoDAsync");
  } else {
    if (peer)
      check(drv.cuMemcpyPeer(d, dst.device->context(), s, src.device->context(), bytes),
            "cuMemcpyPeer");
    else
      check(drv.cuMemcpyDtoD(d, s, bytes), "cuMemcpyDtoD");
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

void fill_device(const Buffer& dst, size_t offset, uint32_t value, uint32_t element_size,
                 size_t count, const Pin<Stream>* stream) {
  if (element_size != 1 && element_size != 2 && element_size != 4)
    fail_invalid("element_size is " + std::to_string(element_size) + "; expected 1, 2 or 4");
  if (element_size < 4 && (value >> (8 * element_size)) != 0)
    fail_invalid("value " + std::to_string(value) + " does not fit in " +
                 std::to_string(element_size) + " byte(s)");
  if ((dst.ptr + offset) % element_size != 0)
    fail_invalid("offset " + str(offset) + " does not put the fill on a " +
                 std::to_string(element_size) + "-byte boundary");
  if (count > SIZE_MAX / element_size)
    fail(CUABI_ERROR_OUT_OF_RANGE, "count " + str(count) + " x element_size overflows");
  check_range(dst, offset, count * element_size, "fill");
  if (count == 0) return;
  dst.enter();
  const DriverApi& d = driver();
  const CUdeviceptr p = dst.ptr + offset;
  if (stream) {
    CUstream s = stream_for(*stream, *dst.device);
    if (element_size == 1)
      check(d.cuMemsetD8Async(p, static_cast<unsigned char>(value), count, s), "cuMemsetD8Async");
    else if (element_size == 2)
      check(d.cuMemsetD16Async(p, static_cast<unsigned short>(value), count, s), "cuMemsetD16Async");
    else
      check(d.cuMemsetD32Async(p, value, count, s), "cuMemsetD32Async");
  } else {
    if (element_size == 1)
      check(d.cuMemsetD8(p, static_cast<unsigned char>(value), count), "cuMemsetD8");
    else if (element_size == 2)
      check(d.cuMemsetD16(p, static_cast<unsigned short>(value), count), "cuMemsetD16");
    else
      check(d.cuMemsetD32(p, value, count), "cuMemsetD32");
    finish_default_stream();
  }
}

// ---------------------------------------------------------------------------
// Page-locked host memory
// ---------------------------------------------------------------------------

HostBuffer::HostBuffer(Ref<Device> dev, size_t bytes) : DeviceChild(kKind, std::move(dev)) {
  if (bytes == 0) fail_invalid("bytes is 0: a pinned buffer needs at least one byte");
  enter();
  void* p = nullptr;
  CUresult r = driver().cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(CUABI_ERROR_OUT_OF_MEMORY,
         "cuMemHostAlloc of " + str(bytes) + " bytes failed: out of pinnable host memory", r);
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

}  // namespace cuabi
