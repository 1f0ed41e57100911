// Occupancy: how many blocks a multiprocessor keeps resident, the block size
// that maximises it, and the cluster limits.
#pragma once

#include <utility>

#include "objects.hpp"

namespace cuabi {

uint32_t active_blocks_per_sm(const Function& f, uint32_t block_size, size_t dynamic_shared);
// {block size, smallest grid that fills the device at that size}.
std::pair<uint32_t, uint32_t> suggest_block_size(const Function& f, size_t shared_per_block,
                                                 size_t shared_per_thread, uint32_t limit);
// Fills `config` (its struct_size set by the caller) for `elements` items.
void suggest_config(const Function& f, uint64_t elements, size_t shared_per_block,
                    size_t shared_per_thread, cuabi_launch_config* config);
size_t available_dynamic_shared(const Function& f, uint32_t blocks_per_sm, uint32_t block_size);
uint32_t max_cluster_size(const Function& f, const cuabi_launch_config* config);
uint32_t max_active_clusters(const Function& f, const cuabi_launch_config* config);

}  // namespace cuabi
