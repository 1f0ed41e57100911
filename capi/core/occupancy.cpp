// Occupancy questions, answered by the driver's cuOccupancy* calls for the
// kernel's own resources. The block-size search runs here, so no callback
// crosses the ABI.
#include "occupancy.hpp"

#include <string>

#include "launch.hpp"
#include "structs.hpp"

namespace cuabi {

namespace {

void check_block_size(const Function& f, uint32_t block_size, const char* what) {
  if (block_size == 0) fail_invalid(std::string(what) + " is 0");
  if (block_size > f.max_threads)
    fail_invalid(std::string(what) + " " + std::to_string(block_size) + " exceeds kernel '" +
                 f.name + "''s limit of " + std::to_string(f.max_threads) +
                 " threads per block");
}

int blocks_per_sm(const Function& f, uint32_t block_size, size_t shared) {
  int n = 0;
  check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &n, f.function, static_cast<int>(block_size), shared),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return n > 0 ? n : 0;
}

// The dynamic shared memory of a block of `block_size` threads; false when it
// overflows or exceeds what the kernel may use.
bool shared_for(const Function& f, size_t per_block, size_t per_thread, uint32_t block_size,
                size_t* bytes) {
  if (per_thread != 0 && block_size > (SIZE_MAX - per_block) / per_thread) return false;
  const size_t total = per_block + per_thread * block_size;
  if (total > f.max_dynamic_shared.load(std::memory_order_relaxed)) return false;
  *bytes = total;
  return true;
}

}  // namespace

uint32_t active_blocks_per_sm(const Function& f, uint32_t block_size, size_t dynamic_shared) {
  check_block_size(f, block_size, "block_size");
  const uint32_t most = f.max_dynamic_shared.load(std::memory_order_relaxed);
  if (dynamic_shared > most)
    fail_invalid("dynamic_shared_bytes " + std::to_string(dynamic_shared) + " exceeds the " +
                 std::to_string(most) + " bytes kernel '" + f.name + "' may use");
  f.module->enter();
  return static_cast<uint32_t>(blocks_per_sm(f, block_size, dynamic_shared));
}

std::pair<uint32_t, uint32_t> suggest_block_size(const Function& f, size_t shared_per_block,
                                                 size_t shared_per_thread, uint32_t limit) {
  if (limit > f.max_threads)
    fail_invalid("block_size_limit " + std::to_string(limit) + " exceeds kernel '" + f.name +
                 "''s limit of " + std::to_string(f.max_threads) +
                 " threads per block (0 asks for the kernel's own limit)");
  if (limit == 0) limit = f.max_threads;
  const Device& d = *f.module->device;
  f.module->enter();
  int warp = 0;
  check(driver().cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d.device),
        "cuDeviceGetAttribute");
  if (warp <= 0) warp = 32;
  // Candidates: the limit itself, then every warp multiple below it, from the
  // largest down. The best is the one with the most resident threads per
  // multiprocessor; on a tie the larger block wins (it is tried first and
  // only a strictly better one replaces it), as cuOccupancyMaxPotentialBlockSize
  // does.
  uint32_t best = 0, best_blocks = 0;
  uint64_t best_threads = 0;
  const uint32_t step = static_cast<uint32_t>(warp);
  uint32_t size = limit;
  while (size > 0) {
    size_t shared = 0;
    if (shared_for(f, shared_per_block, shared_per_thread, size, &shared)) {
      const int n = blocks_per_sm(f, size, shared);
      const uint64_t threads = uint64_t(n) * size;
      if (n > 0 && threads > best_threads) {
        best = size;
        best_blocks = static_cast<uint32_t>(n);
        best_threads = threads;
      }
    }
    // The next warp multiple below `size`.
    size = size % step ? size - size % step : size - step;
  }
  if (best == 0)
    fail_invalid("no block size up to " + std::to_string(limit) + " fits kernel '" + f.name +
                 "' with " + std::to_string(shared_per_block) + " bytes of shared memory per "
                 "block plus " + std::to_string(shared_per_thread) + " per thread (it may use " +
                 std::to_string(f.max_dynamic_shared.load(std::memory_order_relaxed)) +
                 " bytes)");
  return {best, best_blocks * d.multiprocessors};
}

void suggest_config(const Function& f, uint64_t elements, size_t shared_per_block,
                    size_t shared_per_thread, cuabi_launch_config* config) {
  if (!config) fail_invalid("config is NULL");
  const size_t size = config->struct_size;
  check_struct_size<cuabi_launch_config>(size, "config->struct_size");
  if (elements == 0) fail_invalid("elements is 0");
  const uint32_t block = suggest_block_size(f, shared_per_block, shared_per_thread, 0).first;
  const Device& d = *f.module->device;
  uint64_t grid = (elements + block - 1) / block;
  if (grid > d.max_grid[0]) grid = d.max_grid[0];
  const size_t shared = shared_per_block + shared_per_thread * block;  // fits: checked above
  cuabi_launch_config out = CUABI_LAUNCH_CONFIG_INIT;
  out.grid_x = static_cast<uint32_t>(grid);
  out.block_x = block;
  out.shared_mem_bytes = static_cast<uint32_t>(shared);
  init_struct(config, size, out, "config");
}

size_t available_dynamic_shared(const Function& f, uint32_t blocks_per_sm, uint32_t block_size) {
  if (blocks_per_sm == 0) fail_invalid("blocks_per_sm is 0");
  check_block_size(f, block_size, "block_size");
  f.module->enter();
  size_t bytes = 0;
  check(driver().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f.function,
                                                         static_cast<int>(blocks_per_sm),
                                                         static_cast<int>(block_size)),
        "cuOccupancyAvailableDynamicSMemPerBlock");
  return bytes;
}

uint32_t max_cluster_size(const Function& f, const cuabi_launch_config* config) {
  cuabi_launch_config copy;
  cuabi_launch_config c = config_of(config, &copy);
  c.cluster_x = c.cluster_y = c.cluster_z = 0;
  check_config(f, c);
  f.module->enter();
  return max_cluster_size(f, c);
}

uint32_t max_active_clusters(const Function& f, const cuabi_launch_config* config) {
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(f, c);
  const bool required = f.required_cluster[0].load(std::memory_order_relaxed) != 0;
  if (!c.cluster_x && !c.cluster_y && !c.cluster_z && !required)
    fail_invalid("config names no cluster (cluster_x, cluster_y and cluster_z are 0) and kernel '" +
                 f.name + "' has no compile-time cluster dimensions");
  f.module->enter();
  uint32_t cluster[3];
  check_cluster_shape(f, c, cluster);
  CUlaunchAttribute attr;
  CUlaunchConfig lc = driver_config(c);
  if (cluster[0]) {
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster[0];
    attr.value.clusterDim.y = cluster[1];
    attr.value.clusterDim.z = cluster[2];
    lc.attrs = &attr;
    lc.numAttrs = 1;
  }
  int n = 0;
  check(driver().cuOccupancyMaxActiveClusters(&n, f.function, &lc),
        "cuOccupancyMaxActiveClusters");
  return n > 0 ? static_cast<uint32_t>(n) : 0;
}

}  // namespace cuabi
