// Shims for device memory and page-locked host memory. The synchronous
// copies hold references (they wait for the device); the asynchronous ones
// pin their handles for the call.
#include "memory.hpp"

#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_buffer_alloc(cuabi_device device, size_t bytes, cuabi_buffer* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return make<Buffer>(std::move(d), bytes); });
}

cuabi_status cuabi_buffer_wrap(cuabi_device device, uint64_t device_ptr, size_t bytes,
                               cuabi_buffer* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    return make<Buffer>(std::move(d), static_cast<CUdeviceptr>(device_ptr), bytes);
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
