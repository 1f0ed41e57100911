// Shims for DLPack: export, import and the stream handshake.
#include "dlpack.hpp"

#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_buffer_export_dlpack(cuabi_buffer buffer, uint64_t byte_offset,
                                        const int64_t* shape, const int64_t* strides,
                                        size_t ndim, uint32_t dtype_code, uint32_t dtype_bits,
                                        uint32_t dtype_lanes, uint64_t flags,
                                        cuabi_dlpack_managed_tensor_versioned** out) {
  return guard(__func__, [&] {
    Ref<Buffer> b = acquire<Buffer>(buffer, "buffer");
    need(out, "out");
    if (ndim > 0) need(shape, "shape");
    *out = export_dlpack(std::move(b), byte_offset, shape, strides, ndim, dtype_code,
                         dtype_bits, dtype_lanes, flags);
  });
}

cuabi_status cuabi_buffer_import_dlpack(cuabi_dlpack_managed_tensor_versioned* tensor,
                                        cuabi_dlpack_import_flags flags, cuabi_buffer* out) {
  return create(__func__, out, [&] {
    need(tensor, "tensor");
    return import_dlpack(tensor, flags);
  });
}

cuabi_status cuabi_buffer_import_dlpack_unversioned(cuabi_dlpack_managed_tensor* tensor,
                                                    cuabi_dlpack_import_flags flags,
                                                    cuabi_buffer* out) {
  return create(__func__, out, [&] {
    need(tensor, "tensor");
    return import_dlpack_unversioned(tensor, flags);
  });
}

cuabi_status cuabi_stream_dlpack_handoff(cuabi_stream stream, int64_t consumer_stream) {
  return with(__func__, stream, "stream",
              [&](Stream& s) { dlpack_handoff(s, consumer_stream); });
}

cuabi_status cuabi_stream_dlpack_wait(cuabi_stream stream, int64_t producer_stream) {
  return with(__func__, stream, "stream",
              [&](Stream& s) { dlpack_wait(s, producer_stream); });
}

}  // extern "C"
