// DLPack 1.x: a buffer handed out as a managed tensor, a managed tensor taken
// over as a borrowed buffer, and the stream handshake between producer and
// consumer. Every field of a foreign tensor is checked here, with its bound.
#pragma once

#include "objects.hpp"

namespace cuabi {

// A new managed tensor over `buffer`, holding a reference to it; its deleter
// drops the reference and frees the tensor.
cuabi_dlpack_managed_tensor_versioned* export_dlpack(Ref<Buffer> buffer, uint64_t byte_offset,
                                                     const int64_t* shape,
                                                     const int64_t* strides, size_t ndim,
                                                     uint32_t code, uint32_t bits,
                                                     uint32_t lanes, uint64_t flags);
// A wrapped buffer that owns `tensor` (its deleter runs when the buffer
// goes); on a refusal the tensor is untouched.
Ref<Buffer> import_dlpack(cuabi_dlpack_managed_tensor_versioned* tensor, uint32_t flags);
Ref<Buffer> import_dlpack_unversioned(cuabi_dlpack_managed_tensor* tensor, uint32_t flags);
// `waiter` (a raw DLPack stream value) waits for `stream`'s work so far, or
// `stream` waits for the raw stream `producer`.
void dlpack_handoff(const Stream& stream, int64_t consumer_stream);
void dlpack_wait(const Stream& stream, int64_t producer_stream);

}  // namespace cuabi
