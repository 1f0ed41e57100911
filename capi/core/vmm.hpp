// Virtual memory: physical memory with no address (cuMemCreate), ranges of
// device addresses with no memory (cuMemAddressReserve), the mappings
// between them, access per device, export and import by file descriptor, and
// the growable buffer built on them.
//
// Ownership: a range holds a reference to every memory mapped into it (the
// driver frees physical memory only once it is unmapped and released), and a
// buffer over a range (CUABI_BUFFER_RANGE, CUABI_BUFFER_GROWABLE) holds the
// range. Every rule (granularity, overlap, unmapped bytes, access, memory
// still mapped) is checked here against this bookkeeping before the driver
// sees a call.
//
// Lock discipline: a range's mutex guards its mappings; a memory's mutex
// guards where it is mapped. A range's mutex may be held while taking a
// memory's, never the other way round.
#pragma once

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "objects.hpp"

namespace cuabi {

class PhysicalMemory : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::PhysicalMemory;
  PhysicalMemory(Ref<Device> device, CUmemGenericAllocationHandle handle, size_t bytes,
                 bool exportable)
      : DeviceChild(kKind, std::move(device)),
        handle(handle),
        size(bytes),
        exportable(exportable) {}
  ~PhysicalMemory() override;
  const CUmemGenericAllocationHandle handle;
  const size_t size;
  const bool exportable;

  // Where ranges map it, as (range address, offset in the range), for the
  // refusal of a free; and whether cuabi_physical_memory_free took it.
  std::mutex mutex;
  std::vector<std::pair<CUdeviceptr, size_t>> mapped_at;
  bool freed = false;
};

class AddressRange : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::AddressRange;
  AddressRange(Ref<Device> device, CUdeviceptr ptr, size_t bytes)
      : DeviceChild(kKind, std::move(device)), ptr(ptr), size(bytes) {}
  ~AddressRange() override;
  const CUdeviceptr ptr;
  const size_t size;

  struct Mapping {
    size_t size;
    Ref<PhysicalMemory> memory;
    // The access each device was given (cuabi_vm_access), by ordinal.
    std::map<int, int> access;
  };
  std::mutex mutex;
  std::map<size_t, Mapping> mappings;  // by offset in the range
  // Buffers over the range (cuabi_buffer_from_range): unmapping is refused
  // while any lives.
  std::atomic<int> views{0};
};

// The device's minimum and recommended granularity (asked once per device).
std::pair<size_t, size_t> vm_granularity(const Device& device);

Ref<PhysicalMemory> create_physical(Ref<Device> device, size_t bytes, uint32_t flags);
Ref<PhysicalMemory> import_physical(Ref<Device> device, int32_t fd, size_t bytes);
int32_t export_physical(const PhysicalMemory& memory);
// Checks that the memory may be freed now and marks it taken: the caller
// then withdraws its handle, and the last reference releases the memory.
void check_free_physical(PhysicalMemory& memory);

Ref<AddressRange> reserve_range(Ref<Device> device, size_t bytes);
void map_range(AddressRange& range, size_t offset, const Ref<PhysicalMemory>& memory);
void unmap_range(AddressRange& range, size_t offset, size_t bytes);
void set_range_access(AddressRange& range, size_t offset, size_t bytes, const Device& device,
                      cuabi_vm_access access);

// Buffers over virtual memory.
Ref<Buffer> buffer_from_range(Ref<AddressRange> range, Ref<Device> device, size_t offset,
                              size_t bytes);
Ref<Buffer> alloc_growable(Ref<Device> device, size_t bytes, size_t reserve_bytes);
void grow_buffer(Buffer& buffer, size_t bytes);
size_t reserved_size(const Buffer& buffer);

}  // namespace cuabi
