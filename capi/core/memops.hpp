// Stream memory operations: a word written or waited on in a stream's order.
#pragma once

#include "objects.hpp"

namespace cuabi {

// `target` is the word's device address, `what` names the buffer for
// messages; `size` is the buffer's size and `device` the memory's device
// (nullptr: pinned host memory, reachable from any device).
void stream_write_value(Stream& stream, CUdeviceptr base, size_t size, const Device* device,
                        size_t offset, uint64_t value, uint32_t width, uint32_t flags);
void stream_wait_value(Stream& stream, CUdeviceptr base, size_t size, const Device* device,
                       size_t offset, uint64_t value, uint32_t width, int32_t condition,
                       uint32_t flags);
// The checks of the two, before any driver call (the batches check every
// element with them first).
void check_write_value(const Stream& stream, size_t size, const Device* device, size_t offset,
                       uint64_t value, uint32_t width, uint32_t flags);
void check_wait_value(const Stream& stream, size_t size, const Device* device, size_t offset,
                      uint64_t value, uint32_t width, int32_t condition, uint32_t flags);
// The device address of pinned host memory.
CUdeviceptr host_device_pointer(const HostBuffer& buffer);

}  // namespace cuabi
