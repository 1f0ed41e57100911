#include "vmm.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "driver_log.hpp"

namespace cuabi {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// "[a, b)" for `bytes` from `offset`.
std::string span(size_t offset, size_t bytes) {
  return "[" + str(offset) + ", " + str(offset + bytes) + ")";
}

CUmemAllocationProp props_for(const Device& device, bool exportable) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device.device;
  prop.requestedHandleTypes =
      exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  return prop;
}

// Refuses a `what` of `value` bytes that is not a multiple of the device's
// granularity (or 0 where `nonzero`).
void need_multiple(const Device& device, size_t value, const char* what, bool nonzero) {
  if (nonzero && value == 0) fail_invalid(std::string(what) + " is 0");
  const size_t g = vm_granularity(device).first;
  if (value % g != 0)
    fail_invalid(std::string(what) + " " + str(value) +
                 " is not a multiple of the virtual memory granularity of device " +
                 std::to_string(device.ordinal) + ", " + str(g) +
                 " bytes (cuabi_device_get_vm_granularity)");
}

void need_within(const AddressRange& r, size_t offset, size_t bytes, const char* what) {
  if (offset > r.size || bytes > r.size - offset)
    fail(CUABI_ERROR_OUT_OF_RANGE, std::string(what) + " " + span(offset, bytes) +
                                       " reaches past the end of the " + str(r.size) +
                                       "-byte range");
}

void check_alloc(CUresult r, const char* call, size_t bytes, const Device& device) {
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(CUABI_ERROR_OUT_OF_MEMORY,
         std::string(call) + " of " + str(bytes) +
             " bytes failed: out of device memory on device " + std::to_string(device.ordinal) +
             driver_log_of_failure(),
         r);
  check(r, call);
}

using Mappings = std::map<size_t, AddressRange::Mapping>;

// The mappings that make up [offset, offset + bytes) of the range, in order;
// the range's mutex is held. Every byte must be mapped; with `whole`, the
// span may not cut a mapping in two either.
std::vector<Mappings::iterator> covering(AddressRange& r, size_t offset, size_t bytes, bool whole,
                                         const char* what) {
  std::vector<Mappings::iterator> found;
  const size_t end = offset + bytes;
  size_t pos = offset;
  while (pos < end) {
    auto it = r.mappings.upper_bound(pos);
    if (it == r.mappings.begin() || std::prev(it)->first + std::prev(it)->second.size <= pos)
      fail_invalid(std::string(what) + " " + span(offset, bytes) + " reaches offset " + str(pos) +
                   " of the range (device address " + hex(r.ptr + pos) +
                   "), which has no memory mapped");
    --it;
    const size_t m_end = it->first + it->second.size;
    if (whole && (it->first < offset || m_end > end))
      fail_invalid(std::string(what) + " " + span(offset, bytes) + " cuts the mapping at " +
                   span(it->first, it->second.size) + " of the range in two; take whole mappings");
    found.push_back(it);
    pos = m_end;
  }
  return found;
}

void forget_mapping(PhysicalMemory& memory, CUdeviceptr range_ptr, size_t offset) {
  std::lock_guard<std::mutex> lock(memory.mutex);
  auto& at = memory.mapped_at;
  for (auto it = at.begin(); it != at.end(); ++it)
    if (it->first == range_ptr && it->second == offset) {
      at.erase(it);
      return;
    }
}

// Maps `memory` at `offset` with its device given read and write access;
// the range's mutex is held.
void map_locked(AddressRange& r, size_t offset, const Ref<PhysicalMemory>& memory) {
  const Device& home = *memory->device;
  need_multiple(home, offset, "offset", false);
  need_within(r, offset, memory->size, "the mapping");
  auto next = r.mappings.lower_bound(offset);
  if (next != r.mappings.end() && next->first < offset + memory->size)
    fail_invalid("the mapping " + span(offset, memory->size) + " overlaps the memory already at " +
                 span(next->first, next->second.size) + " of the range; unmap that first");
  if (next != r.mappings.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > offset)
      fail_invalid("the mapping " + span(offset, memory->size) +
                   " overlaps the memory already at " + span(prev->first, prev->second.size) +
                   " of the range; unmap that first");
  }
  std::lock_guard<std::mutex> lock(memory->mutex);
  if (memory->freed) fail_invalid("the memory was freed (cuabi_physical_memory_free)");
  home.check_epoch(memory->epoch);
  const DriverApi& d = r.enter();
  const CUdeviceptr at = r.ptr + offset;
  check(d.cuMemMap(at, memory->size, 0, memory->handle, 0), "cuMemMap");
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = home.device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const CUresult r2 = d.cuMemSetAccess(at, memory->size, &access, 1);
  if (r2 != CUDA_SUCCESS) {
    d.cuMemUnmap(at, memory->size);
    check(r2, "cuMemSetAccess");
  }
  AddressRange::Mapping m{memory->size, memory, {}};
  m.access[home.ordinal] = CUABI_VM_ACCESS_READWRITE;
  memory->mapped_at.emplace_back(r.ptr, offset);
  r.mappings.emplace(offset, std::move(m));
}

void check_descriptor(int32_t fd) {
  const std::string name = "fd " + std::to_string(fd);
  if (fd < 0) fail_invalid(name + " is no file descriptor");
  struct stat st {};
  if (fstat(fd, &st) != 0)
    fail_invalid(name + " is not open in this process (" + std::strerror(errno) + ")");
  const char* what = nullptr;
  if (S_ISDIR(st.st_mode))
    what = "a directory";
  else if (S_ISFIFO(st.st_mode))
    what = "a pipe";
  else if (S_ISSOCK(st.st_mode))
    what = "a socket";
  else if (S_ISBLK(st.st_mode))
    what = "a block device";
  else if (S_ISREG(st.st_mode) && st.st_nlink > 0)
    what = "a file";
  if (what)
    fail_invalid(name + " is " + what + ", not memory exported by cuabi_physical_memory_export_fd");
}

}  // namespace

std::pair<size_t, size_t> vm_granularity(const Device& device) {
  // Asked once per device: a constant of the device, read by every check.
  static std::mutex mutex;
  static std::map<int, std::pair<size_t, size_t>> known;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = known.find(device.ordinal);
    if (it != known.end()) return it->second;
  }
  const DriverApi& d = driver();
  const CUmemAllocationProp prop = props_for(device, true);
  size_t minimum = 0, recommended = 0;
  check(d.cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM)");
  check(d.cuMemGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
        "cuMemGetAllocationGranularity(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)");
  if (minimum == 0) fail(CUABI_ERROR_INTERNAL, "the driver gave a granularity of 0 bytes");
  std::lock_guard<std::mutex> lock(mutex);
  known[device.ordinal] = {minimum, recommended};
  return {minimum, recommended};
}

// ---------------------------------------------------------------------------
// Physical memory
// ---------------------------------------------------------------------------

PhysicalMemory::~PhysicalMemory() {
  if (enter_quietly(*this)) driver().cuMemRelease(handle);
}

Ref<PhysicalMemory> create_physical(Ref<Device> dev, size_t bytes, uint32_t flags) {
  if (flags & ~static_cast<uint32_t>(CUABI_PHYSICAL_MEMORY_EXPORTABLE))
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  need_multiple(*dev, bytes, "bytes", true);
  const bool exportable = (flags & CUABI_PHYSICAL_MEMORY_EXPORTABLE) != 0;
  const DriverApi& d = dev->make_current();
  if (exportable &&
      dev->get_attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "device " + std::to_string(dev->ordinal) +
             " cannot export memory as a file descriptor here "
             "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED is 0)");
  const CUmemAllocationProp prop = props_for(*dev, exportable);
  CUmemGenericAllocationHandle h = 0;
  check_alloc(d.cuMemCreate(&h, bytes, &prop, 0), "cuMemCreate", bytes, *dev);
  try {
    return make<PhysicalMemory>(std::move(dev), h, bytes, exportable);
  } catch (...) {
    d.cuMemRelease(h);
    throw;
  }
}

Ref<PhysicalMemory> import_physical(Ref<Device> dev, int32_t fd, size_t bytes) {
  check_descriptor(fd);
  need_multiple(*dev, bytes, "bytes", true);
  const DriverApi& d = dev->make_current();
  CUmemGenericAllocationHandle h = 0;
  const CUresult r =
      d.cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_HANDLE)
    fail(CUABI_ERROR_INVALID_ARGUMENT,
         "cuMemImportFromShareableHandle refused fd " + std::to_string(fd) +
             ": it is not memory exported by cuabi_physical_memory_export_fd (" + describe(r) +
             ")" + driver_log_of_failure(),
         r);
  check(r, "cuMemImportFromShareableHandle");
  try {
    CUmemAllocationProp prop{};
    check(d.cuMemGetAllocationPropertiesFromHandle(&prop, h),
          "cuMemGetAllocationPropertiesFromHandle");
    if (prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop.location.id != dev->device)
      fail_invalid("the memory is on device " + std::to_string(prop.location.id) + ", not device " +
                   std::to_string(dev->ordinal) +
                   ": import it there, and reach it from here through a range "
                   "(cuabi_address_range_set_access)");
    return make<PhysicalMemory>(std::move(dev), h, bytes, true);
  } catch (...) {
    d.cuMemRelease(h);
    throw;
  }
}

int32_t export_physical(const PhysicalMemory& m) {
  if (!m.exportable)
    fail_invalid(
        "the memory was made without CUABI_PHYSICAL_MEMORY_EXPORTABLE and cannot be exported");
  const DriverApi& d = m.enter();
  int fd = -1;
  check(d.cuMemExportToShareableHandle(&fd, m.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemExportToShareableHandle");
  return fd;
}

void check_free_physical(PhysicalMemory& m) {
  std::lock_guard<std::mutex> lock(m.mutex);
  if (!m.mapped_at.empty()) {
    const auto& at = m.mapped_at.front();
    fail_invalid("the memory is still mapped at offset " + str(at.second) +
                 " of the range at device address " + hex(at.first) +
                 (m.mapped_at.size() > 1
                      ? " (and " + std::to_string(m.mapped_at.size() - 1) + " more place(s))"
                      : std::string()) +
                 "; unmap it first (cuabi_address_range_unmap), or release the handle and let "
                 "the last mapping give it back");
  }
  m.freed = true;
}

// ---------------------------------------------------------------------------
// Address ranges
// ---------------------------------------------------------------------------

AddressRange::~AddressRange() {
  const bool live = enter_quietly(*this);
  for (auto& [offset, m] : mappings) {
    if (live) driver().cuMemUnmap(ptr + offset, m.size);
    forget_mapping(*m.memory, ptr, offset);
  }
  mappings.clear();  // the last reference to a memory releases it
  if (live) driver().cuMemAddressFree(ptr, size);
}

Ref<AddressRange> reserve_range(Ref<Device> dev, size_t bytes) {
  need_multiple(*dev, bytes, "bytes", true);
  const DriverApi& d = dev->make_current();
  CUdeviceptr p = 0;
  check_alloc(d.cuMemAddressReserve(&p, bytes, 0, 0, 0), "cuMemAddressReserve", bytes, *dev);
  try {
    return make<AddressRange>(std::move(dev), p, bytes);
  } catch (...) {
    d.cuMemAddressFree(p, bytes);
    throw;
  }
}

void map_range(AddressRange& r, size_t offset, const Ref<PhysicalMemory>& memory) {
  std::lock_guard<std::mutex> lock(r.mutex);
  map_locked(r, offset, memory);
}

void unmap_range(AddressRange& r, size_t offset, size_t bytes) {
  need_within(r, offset, bytes, "the span");
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(r.mutex);
  const int views = r.views.load(std::memory_order_acquire);
  if (views > 0)
    fail_invalid(std::to_string(views) +
                 " buffer(s) view the range (cuabi_buffer_from_range); release them before "
                 "unmapping");
  const auto found = covering(r, offset, bytes, true, "the span");
  const DriverApi& d = r.enter();
  for (auto it : found) {
    check(d.cuMemUnmap(r.ptr + it->first, it->second.size), "cuMemUnmap");
    forget_mapping(*it->second.memory, r.ptr, it->first);
    r.mappings.erase(it);
  }
}

void set_range_access(AddressRange& r, size_t offset, size_t bytes, const Device& device,
                      cuabi_vm_access access) {
  if (access != CUABI_VM_ACCESS_READ && access != CUABI_VM_ACCESS_READWRITE)
    fail_invalid("access " + std::to_string(access) +
                 " is not a cuabi_vm_access (CUABI_VM_ACCESS_READ 1, CUABI_VM_ACCESS_READWRITE 3)");
  need_multiple(*r.device, offset, "offset", false);
  need_multiple(*r.device, bytes, "bytes", false);
  need_within(r, offset, bytes, "the span");
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto found = covering(r, offset, bytes, true, "the span");
  device.make_current();
  const DriverApi& d = r.enter();
  CUmemAccessDesc desc{};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = device.device;
  desc.flags = access == CUABI_VM_ACCESS_READ ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                              : CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check(d.cuMemSetAccess(r.ptr + offset, bytes, &desc, 1), "cuMemSetAccess");
  for (auto it : found) it->second.access[device.ordinal] = access;
}

// ---------------------------------------------------------------------------
// Buffers over virtual memory
// ---------------------------------------------------------------------------

Ref<Buffer> buffer_from_range(Ref<AddressRange> range, Ref<Device> dev, size_t offset,
                              size_t bytes) {
  if (bytes == 0) fail_invalid("bytes is 0: a buffer needs at least one byte");
  need_within(*range, offset, bytes, "the buffer");
  std::lock_guard<std::mutex> lock(range->mutex);
  for (auto it : covering(*range, offset, bytes, false, "the buffer")) {
    auto a = it->second.access.find(dev->ordinal);
    if (a == it->second.access.end())
      fail_invalid("device " + std::to_string(dev->ordinal) + " has no access to the mapping at " +
                   span(it->first, it->second.size) +
                   " of the range; give it with cuabi_address_range_set_access");
  }
  range->enter();
  dev->make_current();
  Ref<Buffer> b = make<Buffer>(dev, CUABI_BUFFER_RANGE, range->ptr + offset, bytes);
  range->views.fetch_add(1, std::memory_order_acq_rel);
  b->range = std::move(range);
  return b;
}

Ref<Buffer> alloc_growable(Ref<Device> dev, size_t bytes, size_t reserve_bytes) {
  need_multiple(*dev, reserve_bytes, "reserve_bytes", true);
  need_multiple(*dev, bytes, "bytes", false);
  if (bytes > reserve_bytes)
    fail(CUABI_ERROR_OUT_OF_RANGE,
         "bytes " + str(bytes) + " is more than reserve_bytes " + str(reserve_bytes));
  Ref<AddressRange> range = reserve_range(dev, reserve_bytes);
  Ref<Buffer> b = make<Buffer>(std::move(dev), CUABI_BUFFER_GROWABLE, range->ptr, 0);
  b->range = std::move(range);
  if (bytes) grow_buffer(*b, bytes);
  return b;
}

void grow_buffer(Buffer& b, size_t bytes) {
  if (b.kind != CUABI_BUFFER_GROWABLE || !b.range)
    fail_invalid("the buffer is not growable (cuabi_buffer_alloc_growable makes one)");
  AddressRange& r = *b.range;
  need_multiple(*b.device, bytes, "bytes", false);
  std::lock_guard<std::mutex> lock(r.mutex);
  const size_t now = b.size.load(std::memory_order_acquire);
  if (bytes > r.size)
    fail(CUABI_ERROR_OUT_OF_RANGE, "bytes " + str(bytes) + " is past the buffer's reservation of " +
                                       str(r.size) +
                                       " bytes (cuabi_buffer_alloc_growable's reserve_bytes), "
                                       "which it cannot grow beyond");
  if (bytes < now)
    fail_invalid("bytes " + str(bytes) + " is below the buffer's size, " + str(now) +
                 " bytes: a growable buffer does not shrink");
  if (bytes == now) return;
  Ref<PhysicalMemory> chunk = create_physical(b.device, bytes - now, 0);
  map_locked(r, now, chunk);
  b.size.store(bytes, std::memory_order_release);
}

size_t reserved_size(const Buffer& b) {
  if (b.kind == CUABI_BUFFER_GROWABLE && b.range) return b.range->size;
  return b.size.load(std::memory_order_acquire);
}

}  // namespace cuabi
