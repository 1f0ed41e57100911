// Device memory of every kind, copies and fills, bounds-checked against the
// buffers before the driver sees them. A null `stream` pointer means
// synchronous; a Pin holding no stream means the default stream.
#pragma once

#include "objects.hpp"

namespace cuabi {

// Allocations (each answers a new Buffer).
Ref<Buffer> alloc_device(Ref<Device> device, size_t bytes);
Ref<Buffer> wrap_device(Ref<Device> device, CUdeviceptr ptr, size_t bytes);
Ref<Buffer> alloc_pitched(Ref<Device> device, size_t width_bytes, size_t height,
                          uint32_t element_size);
Ref<Buffer> alloc_managed(Ref<Device> device, size_t bytes, uint32_t flags);
// Stream-ordered, from `pool` (empty: the device's current pool) on `stream`.
Ref<Buffer> alloc_async(Ref<Device> device, size_t bytes, const Pin<MemoryPool>& pool,
                        const Pin<Stream>& stream);
// Checks that `buffer` may be freed in stream order and queues its free on
// `stream`; the caller has already withdrawn its handle.
void check_free_async(const Buffer& buffer, const Pin<Stream>& stream);
void free_async(Buffer& buffer, const Pin<Stream>& stream);

// Memory pools.
Ref<MemoryPool> create_pool(Ref<Device> device, const cuabi_memory_pool_desc* desc);
Ref<MemoryPool> default_pool(Ref<Device> device);
Ref<MemoryPool> import_pool(Ref<Device> device, int32_t fd);
int32_t export_pool(const MemoryPool& pool);
void set_release_threshold(const MemoryPool& pool, uint64_t bytes);
uint64_t release_threshold(const MemoryPool& pool);
void trim_pool(const MemoryPool& pool, size_t keep_bytes);
std::pair<uint64_t, uint64_t> pool_usage(const MemoryPool& pool);

// Managed memory.
void* host_pointer(const Buffer& buffer);
// The range, managed-memory and location checks of the calls below, for the
// batches: OUT_OF_RANGE naming `which` range; INVALID_ARGUMENT for a buffer
// that is not managed; a location's CUmemLocation, or INVALID_ARGUMENT
// naming `what`.
void check_buffer_range(const Buffer& b, size_t offset, size_t bytes, const char* which);
void check_managed(const Buffer& b);
CUmemLocation memory_location(int32_t location, const char* what);
void prefetch(const Buffer& buffer, size_t offset, size_t bytes, int32_t location,
              const Pin<Stream>& stream);
void advise(const Buffer& buffer, size_t offset, size_t bytes, cuabi_memory_advice advice,
            int32_t location);

// IPC.
void buffer_ipc_handle(const Buffer& buffer, void* handle, size_t handle_size);
Ref<Buffer> open_ipc_buffer(Ref<Device> device, const Pin<MemoryPool>& pool, const void* handle,
                            size_t handle_size);
void event_ipc_handle(const Event& event, void* handle, size_t handle_size);
Ref<Event> open_ipc_event(Ref<Device> device, const void* handle, size_t handle_size);

// Peer access.
int32_t can_access_peer(const Device& device, const Device& peer);
void enable_peer_access(Device& device, const Device& peer);
void disable_peer_access(Device& device, const Device& peer);
int32_t peer_attribute(const Device& device, const Device& peer, int32_t attribute);
cuabi_copy_path copy_path(const Buffer& dst, const Buffer& src);

// Copies and fills.
void copy_from_host(const Buffer& dst, size_t offset, const void* src, size_t bytes,
                    const Pin<Stream>* stream);
void copy_to_host(const Buffer& src, size_t offset, void* dst, size_t bytes,
                  const Pin<Stream>* stream);
void copy_device(const Buffer& dst, size_t dst_offset, const Buffer& src, size_t src_offset,
                 size_t bytes, const Pin<Stream>* stream);
void memset_device(const Buffer& dst, size_t offset, uint8_t value, size_t bytes,
                   const Pin<Stream>* stream);
void fill_device(const Buffer& dst, size_t offset, uint32_t value, uint32_t element_size,
                 size_t count, const Pin<Stream>* stream);
// One side of a 3D copy: exactly one of host, buffer, array (the shim
// resolves the handles); position and layout as cuabi_copy_3d_desc says.
struct CopySide {
  const char* name;  // "src" or "dst", for messages
  const void* host = nullptr;
  const Buffer* buffer = nullptr;
  const Array* array = nullptr;
  size_t x_bytes = 0, y = 0, z = 0, pitch = 0, height = 0;
};
void copy_3d(const CopySide& src, const CopySide& dst, size_t width_bytes, size_t height,
             size_t depth, const Pin<Stream>* stream);
// Every check of a 3D copy, without the copy: the driver's parameters (Height
// and Depth 0 made 1; WidthInBytes 0 means nothing to copy) and each side's
// buffer or array, nullptr for host memory. copy_3d and the 3D batch copy
// (batch.cpp) both check through here.
struct Copy3dPlan {
  CUDA_MEMCPY3D params;
  const DeviceChild* src_side = nullptr;
  const DeviceChild* dst_side = nullptr;
};
Copy3dPlan plan_copy_3d(const CopySide& src, const CopySide& dst, size_t width_bytes, size_t height,
                        size_t depth);

// Arrays, textures and surfaces.
Ref<Array> create_array(Ref<Device> device, const cuabi_array_desc* desc);
// `desc` read already; `array` or `buffer` (one of them) resolved from it.
Ref<Texture> create_texture(const cuabi_texture_desc& desc, Ref<Array> array, Ref<Buffer> buffer);
Ref<Surface> create_surface(Ref<Array> array);

}  // namespace cuabi
