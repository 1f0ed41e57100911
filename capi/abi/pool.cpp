// Shims for memory pools, sharing events with other processes, and peer
// access between devices.
#include "memory.hpp"

#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_memory_pool_desc_init(cuabi_memory_pool_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_memory_pool_desc defaults = CUABI_MEMORY_POOL_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

cuabi_status cuabi_memory_pool_create(cuabi_device device, const cuabi_memory_pool_desc* desc,
                                      cuabi_memory_pool* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return create_pool(std::move(d), desc); });
}

cuabi_status cuabi_device_get_default_memory_pool(cuabi_device device, cuabi_memory_pool* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return default_pool(std::move(d)); });
}

void cuabi_memory_pool_release(cuabi_memory_pool pool) { release_handle<MemoryPool>(pool); }

cuabi_status cuabi_memory_pool_set_release_threshold(cuabi_memory_pool pool, uint64_t bytes) {
  return with(__func__, pool, "pool",
              [&](MemoryPool& p) { set_release_threshold(p, bytes); });
}

cuabi_status cuabi_memory_pool_get_release_threshold(cuabi_memory_pool pool, uint64_t* bytes) {
  return get(__func__, pool, "pool", bytes, "bytes",
             [](const MemoryPool& p) { return release_threshold(p); });
}

cuabi_status cuabi_memory_pool_trim(cuabi_memory_pool pool, size_t keep_bytes) {
  return with(__func__, pool, "pool", [&](MemoryPool& p) { trim_pool(p, keep_bytes); });
}

cuabi_status cuabi_memory_pool_get_usage(cuabi_memory_pool pool, uint64_t* reserved_bytes,
                                         uint64_t* used_bytes) {
  return get(__func__, pool, "pool", reserved_bytes, "reserved_bytes", used_bytes, "used_bytes",
             [](const MemoryPool& p) { return pool_usage(p); });
}

cuabi_status cuabi_memory_pool_export_fd(cuabi_memory_pool pool, int32_t* fd) {
  return get(__func__, pool, "pool", fd, "fd",
             [](const MemoryPool& p) { return export_pool(p); });
}

cuabi_status cuabi_memory_pool_import_fd(cuabi_device device, int32_t fd, cuabi_memory_pool* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return import_pool(std::move(d), fd); });
}

cuabi_status cuabi_event_get_ipc_handle(cuabi_event event, void* handle, size_t handle_size) {
  return with(__func__, event, "event",
              [&](Event& e) { event_ipc_handle(e, handle, handle_size); });
}

cuabi_status cuabi_event_open_ipc(cuabi_device device, const void* handle, size_t handle_size,
                                  cuabi_event* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    return open_ipc_event(std::move(d), handle, handle_size);
  });
}

cuabi_status cuabi_device_can_access_peer(cuabi_device device, cuabi_device peer,
                                          int32_t* can_access) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    Pin<Device> p(peer, "peer");
    need(can_access, "can_access");
    *can_access = can_access_peer(*d.get(), *p.get());
  });
}

cuabi_status cuabi_device_enable_peer_access(cuabi_device device, cuabi_device peer) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    Pin<Device> p(peer, "peer");
    enable_peer_access(*d.get(), *p.get());
  });
}

cuabi_status cuabi_device_disable_peer_access(cuabi_device device, cuabi_device peer) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    Pin<Device> p(peer, "peer");
    disable_peer_access(*d.get(), *p.get());
  });
}

cuabi_status cuabi_device_get_peer_attribute(cuabi_device device, cuabi_device peer,
                                             int32_t cu_p2p_attribute, int32_t* value) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    Pin<Device> p(peer, "peer");
    need(value, "value");
    *value = peer_attribute(*d.get(), *p.get(), cu_p2p_attribute);
  });
}

}  // extern "C"
