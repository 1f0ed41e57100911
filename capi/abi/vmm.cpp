// Shims for virtual memory: granularity, physical memory, address ranges,
// and the buffers built on them (a view of a range, a growable buffer).
#include "vmm.hpp"

#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_device_get_vm_granularity(cuabi_device device, size_t* minimum,
                                             size_t* recommended) {
  return get(__func__, device, "device", minimum, "minimum", recommended, "recommended",
             [](const Device& d) { return vm_granularity(d); });
}

cuabi_status cuabi_physical_memory_create(cuabi_device device, size_t bytes,
                                          cuabi_physical_memory_flags flags,
                                          cuabi_physical_memory* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return create_physical(std::move(d), bytes, flags); });
}

cuabi_status cuabi_physical_memory_import_fd(cuabi_device device, int32_t fd, size_t bytes,
                                             cuabi_physical_memory* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return import_physical(std::move(d), fd, bytes); });
}

void cuabi_physical_memory_release(cuabi_physical_memory memory) {
  release_handle<PhysicalMemory>(memory);
}

cuabi_status cuabi_physical_memory_free(cuabi_physical_memory memory) {
  return guard(__func__, [&] {
    Ref<PhysicalMemory> m = acquire<PhysicalMemory>(memory, "memory");
    check_free_physical(*m);
    // The handle goes; the reference held here is then the last one, and
    // gives the memory back as it goes.
    if (!handles::remove(reinterpret_cast<uint64_t>(memory), Kind::PhysicalMemory))
      fail_handle(Kind::PhysicalMemory, "memory", reinterpret_cast<uint64_t>(memory));
  });
}

cuabi_status cuabi_physical_memory_get_size(cuabi_physical_memory memory, size_t* bytes) {
  return get(__func__, memory, "memory", bytes, "bytes", &PhysicalMemory::size);
}

cuabi_status cuabi_physical_memory_get_device_ordinal(cuabi_physical_memory memory,
                                                      int32_t* ordinal) {
  return get(__func__, memory, "memory", ordinal, "ordinal",
             [](const PhysicalMemory& m) { return m.device->ordinal; });
}

cuabi_status cuabi_physical_memory_export_fd(cuabi_physical_memory memory, int32_t* fd) {
  return get(__func__, memory, "memory", fd, "fd",
             [](const PhysicalMemory& m) { return export_physical(m); });
}

cuabi_status cuabi_address_range_reserve(cuabi_device device, size_t bytes,
                                         cuabi_address_range* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return reserve_range(std::move(d), bytes); });
}

void cuabi_address_range_release(cuabi_address_range range) { release_handle<AddressRange>(range); }

cuabi_status cuabi_address_range_get_pointer(cuabi_address_range range, uint64_t* ptr) {
  return get(__func__, range, "range", ptr, "ptr", &AddressRange::ptr);
}

cuabi_status cuabi_address_range_get_size(cuabi_address_range range, size_t* bytes) {
  return get(__func__, range, "range", bytes, "bytes", &AddressRange::size);
}

cuabi_status cuabi_address_range_map(cuabi_address_range range, size_t offset,
                                     cuabi_physical_memory memory) {
  return guard(__func__, [&] {
    Pin<AddressRange> r(range, "range");
    Ref<PhysicalMemory> m = acquire<PhysicalMemory>(memory, "memory");
    map_range(*r.get(), offset, m);
  });
}

cuabi_status cuabi_address_range_unmap(cuabi_address_range range, size_t offset, size_t bytes) {
  return with(__func__, range, "range", [&](AddressRange& r) { unmap_range(r, offset, bytes); });
}

cuabi_status cuabi_address_range_set_access(cuabi_address_range range, size_t offset, size_t bytes,
                                            cuabi_device device, cuabi_vm_access access) {
  return guard(__func__, [&] {
    Pin<AddressRange> r(range, "range");
    Pin<Device> d(device, "device");
    set_range_access(*r.get(), offset, bytes, *d.get(), access);
  });
}

cuabi_status cuabi_buffer_from_range(cuabi_address_range range, cuabi_device device, size_t offset,
                                     size_t bytes, cuabi_buffer* out) {
  return guard(__func__, [&] {
    Ref<AddressRange> r = acquire<AddressRange>(range, "range");
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_buffer>(buffer_from_range(std::move(r), std::move(d), offset, bytes));
  });
}

cuabi_status cuabi_buffer_alloc_growable(cuabi_device device, size_t bytes, size_t reserve_bytes,
                                         cuabi_buffer* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return alloc_growable(std::move(d), bytes, reserve_bytes); });
}

cuabi_status cuabi_buffer_grow(cuabi_buffer buffer, size_t bytes) {
  // A reference, not a pin: creating and mapping much memory takes a while.
  return guard(__func__, [&] { grow_buffer(*acquire<Buffer>(buffer, "buffer"), bytes); });
}

cuabi_status cuabi_buffer_get_reserved_size(cuabi_buffer buffer, size_t* bytes) {
  return get(__func__, buffer, "buffer", bytes, "bytes",
             [](const Buffer& b) { return reserved_size(b); });
}

}  // extern "C"
