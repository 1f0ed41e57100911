// Batches: stream memory operations (cuStreamBatchMemOp), copies
// (cuMemcpyBatchAsync) and prefetches / discards of managed memory
// (cuMem{Prefetch,Discard,DiscardAndPrefetch}BatchAsync). Each reads the
// caller's array of versioned structs, resolves its handles and checks every
// element before the driver sees any; a refusal names the element.
#pragma once

#include "objects.hpp"

namespace cuabi {

void stream_mem_op_batch(Stream& stream, const cuabi_mem_op* ops, size_t count);
void stream_copy_batch(Stream& stream, const cuabi_copy_op* ops, size_t count, uint32_t flags);
void stream_copy_3d_batch(Stream& stream, const cuabi_copy_3d_desc* copies, size_t count,
                          uint32_t flags);

enum class ManagedBatch { Prefetch, Discard, DiscardAndPrefetch };
void stream_managed_batch(Stream& stream, const cuabi_managed_range* ranges, size_t count,
                          int32_t location, ManagedBatch what);

}  // namespace cuabi
