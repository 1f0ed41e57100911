// Shims for device memory and page-locked host memory. The synchronous
// copies hold references (they wait for the device); the asynchronous ones
// pin their handles for the call.
#include "memory.hpp"

#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_buffer_alloc(cuabi_device device, size_t bytes, cuabi_buffer* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return alloc_device(std::move(d), bytes); });
}

cuabi_status cuabi_buffer_wrap(cuabi_device device, uint64_t device_ptr, size_t bytes,
                               cuabi_buffer* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    return wrap_device(std::move(d), static_cast<CUdeviceptr>(device_ptr), bytes);
  });
}

void cuabi_buffer_release(cuabi_buffer buffer) { release_handle<Buffer>(buffer); }

cuabi_status cuabi_buffer_get_pointer(cuabi_buffer buffer, uint64_t* ptr) {
  return get(__func__, buffer, "buffer", ptr, "ptr", &Buffer::ptr);
}

cuabi_status cuabi_buffer_get_size(cuabi_buffer buffer, size_t* bytes) {
  return get(__func__, buffer, "buffer", bytes, "bytes", &Buffer::size);
}

cuabi_status cuabi_buffer_get_device_ordinal(cuabi_buffer buffer, int32_t* ordinal) {
  return get(__func__, buffer, "buffer", ordinal, "ordinal",
             [](const Buffer& b) { return b.device->ordinal; });
}

cuabi_status cuabi_buffer_copy_from_host(cuabi_buffer dst, size_t dst_offset, const void* src,
                                         size_t bytes) {
  return guard(__func__, [&] {
    copy_from_host(*acquire<Buffer>(dst, "dst"), dst_offset, src, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_copy_to_host(cuabi_buffer src, size_t src_offset, void* dst,
                                       size_t bytes) {
  return guard(__func__, [&] {
    copy_to_host(*acquire<Buffer>(src, "src"), src_offset, dst, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_copy_from_host_async(cuabi_buffer dst, size_t dst_offset, const void* src,
                                               size_t bytes, cuabi_stream stream) {
  return on_stream(__func__, dst, "dst", stream, [&](Buffer& b, const Pin<Stream>& s) {
    copy_from_host(b, dst_offset, src, bytes, &s);
  });
}

cuabi_status cuabi_buffer_copy_to_host_async(cuabi_buffer src, size_t src_offset, void* dst,
                                             size_t bytes, cuabi_stream stream) {
  return on_stream(__func__, src, "src", stream, [&](Buffer& b, const Pin<Stream>& s) {
    copy_to_host(b, src_offset, dst, bytes, &s);
  });
}

cuabi_status cuabi_buffer_copy(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
                               size_t src_offset, size_t bytes) {
  return guard(__func__, [&] {
    Ref<Buffer> d = acquire<Buffer>(dst, "dst");
    Ref<Buffer> s = acquire<Buffer>(src, "src");
    copy_device(*d, dst_offset, *s, src_offset, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_copy_async(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
                                     size_t src_offset, size_t bytes, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Buffer> d(dst, "dst");
    Pin<Buffer> s(src, "src");
    Pin<Stream> st(stream, "stream", true);
    copy_device(*d.get(), dst_offset, *s.get(), src_offset, bytes, &st);
  });
}

cuabi_status cuabi_buffer_memset(cuabi_buffer buffer, size_t offset, uint8_t value, size_t bytes) {
  return guard(__func__, [&] {
    memset_device(*acquire<Buffer>(buffer, "buffer"), offset, value, bytes, nullptr);
  });
}

cuabi_status cuabi_buffer_memset_async(cuabi_buffer buffer, size_t offset, uint8_t value,
                                       size_t bytes, cuabi_stream stream) {
  return on_stream(__func__, buffer, "buffer", stream, [&](Buffer& b, const Pin<Stream>& s) {
    memset_device(b, offset, value, bytes, &s);
  });
}

cuabi_status cuabi_buffer_get_kind(cuabi_buffer buffer, cuabi_buffer_kind* kind) {
  return get(__func__, buffer, "buffer", kind, "kind", &Buffer::kind);
}

cuabi_status cuabi_buffer_alloc_async(cuabi_device device, size_t bytes, cuabi_memory_pool pool,
                                      cuabi_stream stream, cuabi_buffer* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    Pin<MemoryPool> p(pool, "pool", true);
    Pin<Stream> s(stream, "stream", true);
    need(out, "out");
    *out = publish<cuabi_buffer>(alloc_async(std::move(d), bytes, p, s));
  });
}

cuabi_status cuabi_buffer_free_async(cuabi_buffer buffer, cuabi_stream stream) {
  return guard(__func__, [&] {
    Ref<Buffer> b = acquire<Buffer>(buffer, "buffer");
    {
      Pin<Stream> s(stream, "stream", true);
      check_free_async(*b, s);
    }
    // The handle goes first, so no other call reaches the memory once its
    // free is queued; the reference kept here frees nothing (freed is set).
    if (!handles::remove(reinterpret_cast<uint64_t>(buffer), Kind::Buffer))
      fail_handle(Kind::Buffer, "buffer", reinterpret_cast<uint64_t>(buffer));
    Pin<Stream> s(stream, "stream", true);
    free_async(*b, s);
  });
}

// -- allocation answering the address too (one call per buffer object) ------

cuabi_status cuabi_buffer_alloc_with_pointer(cuabi_device device, size_t bytes,
                                             cuabi_buffer* out, uint64_t* ptr) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    need(ptr, "ptr");
    Ref<Buffer> b = alloc_device(std::move(d), bytes);
    const uint64_t address = b->ptr;
    *out = publish<cuabi_buffer>(std::move(b));
    *ptr = address;
  });
}

cuabi_status cuabi_buffer_alloc_async_with_pointer(cuabi_device device, size_t bytes,
                                                   cuabi_memory_pool pool, cuabi_stream stream,
                                                   cuabi_buffer* out, uint64_t* ptr) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    Pin<MemoryPool> p(pool, "pool", true);
    Pin<Stream> s(stream, "stream", true);
    need(out, "out");
    need(ptr, "ptr");
    Ref<Buffer> b = alloc_async(std::move(d), bytes, p, s);
    const uint64_t address = b->ptr;
    *out = publish<cuabi_buffer>(std::move(b));
    *ptr = address;
  });
}

cuabi_status cuabi_buffer_alloc_managed(cuabi_device device, size_t bytes,
                                        cuabi_managed_flags flags, cuabi_buffer* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return alloc_managed(std::move(d), bytes, flags); });
}

cuabi_status cuabi_buffer_get_host_pointer(cuabi_buffer buffer, void** ptr) {
  return get(__func__, buffer, "buffer", ptr, "ptr",
             [](const Buffer& b) { return host_pointer(b); });
}

cuabi_status cuabi_buffer_prefetch_async(cuabi_buffer buffer, size_t offset, size_t bytes,
                                         int32_t location, cuabi_stream stream) {
  return on_stream(__func__, buffer, "buffer", stream, [&](Buffer& b, const Pin<Stream>& s) {
    prefetch(b, offset, bytes, location, s);
  });
}

cuabi_status cuabi_buffer_advise(cuabi_buffer buffer, size_t offset, size_t bytes,
                                 cuabi_memory_advice advice, int32_t location) {
  return with(__func__, buffer, "buffer",
              [&](Buffer& b) { advise(b, offset, bytes, advice, location); });
}

cuabi_status cuabi_buffer_get_copy_path(cuabi_buffer dst, cuabi_buffer src, cuabi_copy_path* path) {
  return guard(__func__, [&] {
    Pin<Buffer> d(dst, "dst");
    Pin<Buffer> s(src, "src");
    need(path, "path");
    *path = copy_path(*d.get(), *s.get());
  });
}

cuabi_status cuabi_buffer_alloc_pitched(cuabi_device device, size_t width_bytes, size_t height,
                                        uint32_t element_size, cuabi_buffer* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    return alloc_pitched(std::move(d), width_bytes, height, element_size);
  });
}

cuabi_status cuabi_buffer_get_pitch(cuabi_buffer buffer, size_t* pitch) {
  return get(__func__, buffer, "buffer", pitch, "pitch", &Buffer::pitch);
}

cuabi_status cuabi_buffer_fill(cuabi_buffer buffer, size_t offset, uint32_t value,
                               uint32_t element_size, size_t count) {
  return guard(__func__, [&] {
    fill_device(*acquire<Buffer>(buffer, "buffer"), offset, value, element_size, count, nullptr);
  });
}

cuabi_status cuabi_buffer_fill_async(cuabi_buffer buffer, size_t offset, uint32_t value,
                                     uint32_t element_size, size_t count, cuabi_stream stream) {
  return on_stream(__func__, buffer, "buffer", stream, [&](Buffer& b, const Pin<Stream>& s) {
    fill_device(b, offset, value, element_size, count, &s);
  });
}

cuabi_status cuabi_buffer_get_ipc_handle(cuabi_buffer buffer, void* handle, size_t handle_size) {
  return with(__func__, buffer, "buffer",
              [&](Buffer& b) { buffer_ipc_handle(b, handle, handle_size); });
}

cuabi_status cuabi_buffer_open_ipc(cuabi_device device, cuabi_memory_pool pool, const void* handle,
                                   size_t handle_size, cuabi_buffer* out) {
  return guard(__func__, [&] {
    Ref<Device> d = acquire<Device>(device, "device");
    Pin<MemoryPool> p(pool, "pool", true);
    need(out, "out");
    *out = publish<cuabi_buffer>(open_ipc_buffer(std::move(d), p, handle, handle_size));
  });
}

cuabi_status cuabi_host_buffer_alloc(cuabi_device device, size_t bytes, cuabi_host_buffer* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return make<HostBuffer>(std::move(d), bytes); });
}

cuabi_status cuabi_host_buffer_register(cuabi_device device, void* ptr, size_t bytes,
                                        cuabi_host_buffer* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return make<HostBuffer>(std::move(d), ptr, bytes); });
}

void cuabi_host_buffer_release(cuabi_host_buffer buffer) { release_handle<HostBuffer>(buffer); }

cuabi_status cuabi_host_buffer_get_pointer(cuabi_host_buffer buffer, void** ptr) {
  return get(__func__, buffer, "buffer", ptr, "ptr", &HostBuffer::ptr);
}

cuabi_status cuabi_host_buffer_get_size(cuabi_host_buffer buffer, size_t* bytes) {
  return get(__func__, buffer, "buffer", bytes, "bytes", &HostBuffer::size);
}

}  // extern "C"
