// Copies and fills, bounds-checked against the buffers before the driver sees
// them. A null `stream` pointer means synchronous; a Pin holding no stream
// means the default stream.
#pragma once

#include "objects.hpp"

namespace cuabi {

void copy_from_host(const Buffer& dst, size_t offset, const void* src, size_t bytes,
                    const Pin<Stream>* stream);
void copy_to_host(const Buffer& src, size_t offset, void* dst, size_t bytes,
                  const Pin<Stream>* stream);
void copy_device(const Buffer& dst, size_t dst_offset, const Buffer& src, size_t src_offset,
                 size_t bytes, const Pin<Stream>* stream);
void memset_device(const Buffer& dst, size_t offset, uint8_t value, size_t bytes,
                   const Pin<Stream>* stream);

}  // namespace cuabi
