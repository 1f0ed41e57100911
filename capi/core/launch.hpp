// Checked kernel launches.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "objects.hpp"

namespace cuabi {

// The checks a binding runs once per argument signature; the launches run
// the same ones, so every binding reports a mismatch in the same words.
void need_params(const Function& f);
void check_arg_size(const Function& f, size_t index, size_t size);
void check_arg_sizes(const Function& f, const size_t* sizes, size_t count, const char* what);
// A packed argument block of `args_size` bytes against the kernel's layout
// (which must be known): the check of launch_packed and of kernel nodes.
void check_packed_args(const Function& f, const void* args, size_t args_size);

void launch(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
            void* const* params, size_t num_params);
void launch_sized(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                  void* const* params, const size_t* sizes, size_t num_params);
void launch_packed(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                   const void* args, size_t args_size);

// The caller's config, read through its struct_size (`copy` holds it when it
// is not of this library's size).
const cuabi_launch_config& config_of(const cuabi_launch_config* given, cuabi_launch_config* copy);
// The grid, block and shared-memory checks every launch runs.
void check_config(const Function& f, const cuabi_launch_config& c);

inline std::string dims(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

// True when no field past shared_mem_bytes asks for anything: such a launch
// goes through cuLaunchKernel, the rest through cuLaunchKernelEx.
// The launch attributes (0.3) are tested in two words: the ones whose unset
// value is 0 (window bytes, sync and cluster-scheduling policies, completion
// event) or'd together, and the four whose unset value is -1 (domain, map,
// carve-out) and'ed together.
inline bool has_launch_attributes(const cuabi_launch_config& c) {
  static_assert(offsetof(cuabi_launch_config, cluster_scheduling_policy) ==
                    offsetof(cuabi_launch_config, sync_policy) + 4 &&
                    offsetof(cuabi_launch_config, mem_sync_domain) ==
                    offsetof(cuabi_launch_config, sync_policy) + 8 &&
                    offsetof(cuabi_launch_config, shared_carveout) ==
                    offsetof(cuabi_launch_config, mem_sync_domain) + 12,
                "the launch attributes' layout moved");
  uint64_t policies, minus[2];
  std::memcpy(&policies, &c.sync_policy, sizeof policies);
  std::memcpy(minus, &c.mem_sync_domain, sizeof minus);
  const uint64_t zeros = uint64_t(c.access_policy_window.bytes) | policies |
                         reinterpret_cast<uintptr_t>(c.completion_event);
  return zeros != 0 || (minus[0] & minus[1]) != ~uint64_t(0);
}
inline bool is_plain(const cuabi_launch_config& c) {
  return c.flags == 0 && c.cluster_x == 0 && c.cluster_y == 0 && c.cluster_z == 0 &&
         c.priority == 0 && c.programmatic_event == nullptr && !has_launch_attributes(c);
}
// Cluster, cooperative, serialization, priority, programmatic event and the
// eight launch attributes.
constexpr unsigned kMaxLaunchAttributes = 13;
constexpr uint32_t kPortableClusterSize = 8;
// `c`'s grid, block and dynamic shared memory as the driver's extended
// configuration: no stream, no attributes.
CUlaunchConfig driver_config(const cuabi_launch_config& c);
// Checks the extended fields of `c` (after check_config) against the kernel
// and the device and answers the cuLaunchKernelEx configuration (hStream
// NULL) whose attributes are written to `attrs` (kMaxLaunchAttributes
// entries). `event`, when given, receives a reference to the programmatic
// event. The kernel's context must be current.
CUlaunchConfig extended_config(const Function& f, const cuabi_launch_config& c,
                               CUlaunchAttribute* attrs, Ref<Event>* event,
                               Ref<Event>* completion = nullptr);
// A launch with CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE needs a stream that
// is capturing a graph (checked at each launch: a plan's stream may start
// and end captures).
void check_device_updatable(const cuabi_launch_config& c, const Stream* stream);
// Checks `c`'s cluster dimensions; `cluster` receives the dimensions to give
// the driver (0, 0, 0 for none, also when the kernel's compile-time
// dimensions apply).
void check_cluster_shape(const Function& f, const cuabi_launch_config& c, uint32_t cluster[3]);
// cuOccupancyMaxPotentialClusterSize for c's grid, block and shared memory.
uint32_t max_cluster_size(const Function& f, const cuabi_launch_config& c);

// Writes what the launch records keep of a launch of `f` with `c` on the
// stream `stream_id` (0: the default stream) to `i`.
inline void describe_launch(LaunchInfo& i, const Function& f, const cuabi_launch_config& c,
                            uint64_t stream_id) {
  i.kernel = f.interned_name;
  i.stream_id = stream_id;
  static_assert(offsetof(cuabi_launch_config, cluster_z) - offsetof(cuabi_launch_config, grid_x) ==
                    offsetof(LaunchInfo, cluster) + 2 * sizeof(uint32_t) - offsetof(LaunchInfo, grid),
                "LaunchInfo's grid..cluster mirror cuabi_launch_config's");
  std::memcpy(i.grid, &c.grid_x, offsetof(LaunchInfo, device) - offsetof(LaunchInfo, grid));
  i.device = f.device_ordinal;
}

Ref<LaunchPlan> make_plan(Ref<Function> function, const cuabi_launch_config* config,
                          Ref<Stream> stream);

}  // namespace cuabi
