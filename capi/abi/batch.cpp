// Shims for the batches: stream memory operations, copies, prefetches and
// discards (capi/core/batch.cpp reads and checks the arrays).
#include "batch.hpp"
#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_mem_op_init(cuabi_mem_op* op, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_mem_op defaults = CUABI_MEM_OP_INIT;
    init_struct(op, struct_size, defaults, "op");
  });
}

cuabi_status cuabi_copy_op_init(cuabi_copy_op* op, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_copy_op defaults = CUABI_COPY_OP_INIT;
    init_struct(op, struct_size, defaults, "op");
  });
}

cuabi_status cuabi_managed_range_init(cuabi_managed_range* range, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_managed_range defaults = CUABI_MANAGED_RANGE_INIT;
    init_struct(range, struct_size, defaults, "range");
  });
}

cuabi_status cuabi_stream_mem_op_batch(cuabi_stream stream, const cuabi_mem_op* ops,
                                       size_t count) {
  return with(__func__, stream, "stream",
              [&](Stream& s) { stream_mem_op_batch(s, ops, count); });
}

cuabi_status cuabi_stream_copy_batch(cuabi_stream stream, const cuabi_copy_op* ops, size_t count,
                                     cuabi_copy_batch_flags flags) {
  return with(__func__, stream, "stream",
              [&](Stream& s) { stream_copy_batch(s, ops, count, flags); });
}

cuabi_status cuabi_stream_copy_3d_batch(cuabi_stream stream, const cuabi_copy_3d_desc* copies,
                                        size_t count, cuabi_copy_batch_flags flags) {
  return with(__func__, stream, "stream",
              [&](Stream& s) { stream_copy_3d_batch(s, copies, count, flags); });
}

cuabi_status cuabi_stream_prefetch_batch(cuabi_stream stream, const cuabi_managed_range* ranges,
                                         size_t count, int32_t location) {
  return with(__func__, stream, "stream", [&](Stream& s) {
    stream_managed_batch(s, ranges, count, location, ManagedBatch::Prefetch);
  });
}

cuabi_status cuabi_stream_discard_batch(cuabi_stream stream, const cuabi_managed_range* ranges,
                                        size_t count) {
  return with(__func__, stream, "stream", [&](Stream& s) {
    stream_managed_batch(s, ranges, count, 0, ManagedBatch::Discard);
  });
}

cuabi_status cuabi_stream_discard_and_prefetch_batch(cuabi_stream stream,
                                                     const cuabi_managed_range* ranges,
                                                     size_t count, int32_t location) {
  return with(__func__, stream, "stream", [&](Stream& s) {
    stream_managed_batch(s, ranges, count, location, ManagedBatch::DiscardAndPrefetch);
  });
}

}  // extern "C"
