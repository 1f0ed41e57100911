// Kernel launches: the configuration and the arguments are checked against
// what the kernel and the device accept before the driver sees them. Every
// check is a comparison with a value cached when the function was looked up.
#include "launch.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "stream_attributes.hpp"
#include "structs.hpp"

namespace cuabi {

namespace {

[[noreturn]] void fail_config(const std::string& what) {
  fail_invalid("launch configuration: " + what);
}

}  // namespace

void check_config(const Function& f, const cuabi_launch_config& c) {
  if (c.grid_x == 0 || c.grid_y == 0 || c.grid_z == 0)
    fail_config("grid " + dims(c.grid_x, c.grid_y, c.grid_z) + " has a zero dimension");
  if (c.block_x == 0 || c.block_y == 0 || c.block_z == 0)
    fail_config("block " + dims(c.block_x, c.block_y, c.block_z) + " has a zero dimension");
  const Device& d = *f.module->device;
  if (c.block_x > d.max_block[0] || c.block_y > d.max_block[1] || c.block_z > d.max_block[2])
    fail_config("block " + dims(c.block_x, c.block_y, c.block_z) + " exceeds the device's limit " +
                dims(d.max_block[0], d.max_block[1], d.max_block[2]));
  uint64_t threads = uint64_t(c.block_x) * c.block_y * c.block_z;
  if (threads > f.max_threads)
    fail_config("block " + dims(c.block_x, c.block_y, c.block_z) + " has " +
                std::to_string(threads) + " threads; kernel '" + f.name + "' allows at most " +
                std::to_string(f.max_threads));
  if (c.grid_x > d.max_grid[0] || c.grid_y > d.max_grid[1] || c.grid_z > d.max_grid[2])
    fail_config("grid " + dims(c.grid_x, c.grid_y, c.grid_z) + " exceeds the device's limit " +
                dims(d.max_grid[0], d.max_grid[1], d.max_grid[2]));
  uint32_t shared = f.max_dynamic_shared.load(std::memory_order_relaxed);
  if (c.shared_mem_bytes > shared)
    fail_config(std::to_string(c.shared_mem_bytes) + " bytes of dynamic shared memory; kernel '" +
                f.name + "' may use at most " + std::to_string(shared) +
                (shared < d.max_shared_optin ? " (raise it with cuabi_function_set_attribute("
                                               "CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES), up to " +
                                                   std::to_string(d.max_shared_optin) + ")"
                                             : std::string()));
}

namespace {}  // namespace

const cuabi_launch_config& config_of(const cuabi_launch_config* given, cuabi_launch_config* copy) {
  if (!given) fail_invalid("config is NULL");
  if (given->struct_size == sizeof(cuabi_launch_config)) return *given;
  *copy = CUABI_LAUNCH_CONFIG_INIT;
  read_struct(given, copy, "config");
  return *copy;
}

namespace {

void check_count(const Function& f, size_t count) {
  if (f.params_known && count != f.params.size())
    fail_invalid("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                 (f.params.size() == 1 ? " parameter" : " parameters") + ", but " +
                 std::to_string(count) + (count == 1 ? " was" : " were") + " given");
}

void submit(const Function& f, const cuabi_launch_config& c, const Pin<Stream>& stream,
            void** params, void** extra) {
  const Device& device = *f.module->device;
  f.module->enter();
  CUstream s = stream_for(stream, device);
  if (is_plain(c)) {
    check(driver().cuLaunchKernel(f.function, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y,
                                  c.block_z, c.shared_mem_bytes, s, params, extra),
          "cuLaunchKernel");
  } else {
    CUlaunchAttribute attrs[kMaxLaunchAttributes];
    Ref<Event> event, completion;
    if (c.flags & CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE)
      check_device_updatable(c, stream.get());
    CUlaunchConfig lc = extended_config(f, c, attrs, &event, &completion);
    lc.hStream = s;
    check(driver().cuLaunchKernelEx(&lc, f.function, params, extra), "cuLaunchKernelEx");
  }
  Stream* st = stream.get();
  const uint64_t id = st ? st->id : 0;
  (st ? st->launches : device.launches.default_ring).record_in_place([&](LaunchInfo& i) {
    describe_launch(i, f, c, id);
  });
}

}  // namespace

void check_cluster_shape(const Function& f, const cuabi_launch_config& c, uint32_t cluster[3]) {
  const Device& d = *f.module->device;
  const bool any = c.cluster_x || c.cluster_y || c.cluster_z;
  const uint32_t required[3] = {f.required_cluster[0].load(std::memory_order_relaxed),
                                f.required_cluster[1].load(std::memory_order_relaxed),
                                f.required_cluster[2].load(std::memory_order_relaxed)};
  const bool has_required = required[0] || required[1] || required[2];
  cluster[0] = cluster[1] = cluster[2] = 0;
  if (!any) return;
  if (!c.cluster_x || !c.cluster_y || !c.cluster_z)
    fail_config("cluster " + dims(c.cluster_x, c.cluster_y, c.cluster_z) +
                " has a zero dimension (use (0, 0, 0) for no cluster)");
  if (!d.cluster_launch)
    fail_config("cluster " + dims(c.cluster_x, c.cluster_y, c.cluster_z) + ": device " +
                std::to_string(d.ordinal) + " (" + d.name + ", compute capability " +
                std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
                ") cannot launch thread-block clusters (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH is 0; "
                "clusters need compute capability 9.0 or newer)");
  if (has_required &&
      (c.cluster_x != required[0] || c.cluster_y != required[1] || c.cluster_z != required[2]))
    fail_config("cluster " + dims(c.cluster_x, c.cluster_y, c.cluster_z) + " contradicts kernel '" +
                f.name + "''s compile-time cluster dimensions " +
                dims(required[0], required[1], required[2]) +
                " (__cluster_dims__); give those or (0, 0, 0)");
  const uint32_t grid[3] = {c.grid_x, c.grid_y, c.grid_z};
  const uint32_t want[3] = {c.cluster_x, c.cluster_y, c.cluster_z};
  const char* names[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i)
    if (grid[i] % want[i] != 0)
      fail_config("grid " + std::string(names[i]) + " " + std::to_string(grid[i]) +
                  " is not a multiple of cluster " + names[i] + " " + std::to_string(want[i]) +
                  " (grid " + dims(c.grid_x, c.grid_y, c.grid_z) + ", cluster " +
                  dims(c.cluster_x, c.cluster_y, c.cluster_z) + ")");
  const uint64_t size = uint64_t(c.cluster_x) * c.cluster_y * c.cluster_z;
  if (size > kPortableClusterSize) {
    if (!f.non_portable_cluster.load(std::memory_order_relaxed))
      fail_config("cluster " + dims(c.cluster_x, c.cluster_y, c.cluster_z) + " has " +
                  std::to_string(size) + " blocks, more than the portable " +
                  std::to_string(kPortableClusterSize) +
                  "; set CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED to 1 on kernel '" + f.name +
                  "' to ask for more where the device can run them");
    const uint32_t most = max_cluster_size(f, c);
    if (size > most)
      fail_config("cluster " + dims(c.cluster_x, c.cluster_y, c.cluster_z) + " has " +
                  std::to_string(size) + " blocks; device " + std::to_string(d.ordinal) +
                  " runs kernel '" + f.name + "' with at most " + std::to_string(most) +
                  " blocks per cluster for this block size and shared memory "
                  "(cuOccupancyMaxPotentialClusterSize)");
  }
  if (!has_required) {
    cluster[0] = c.cluster_x;
    cluster[1] = c.cluster_y;
    cluster[2] = c.cluster_z;
  }
}

namespace {

// Blocks per multiprocessor for a cooperative launch's check, asked of the
// driver once per kernel, block size and shared memory in a row (a launch
// loop repeats them), not at every launch.
int cooperative_blocks_per_sm(const Function& f, uint64_t threads, uint32_t shared) {
  constexpr uint64_t kValid = uint64_t(1) << 63;
  const bool cacheable = threads < (uint64_t(1) << 11);
  const uint64_t key = kValid | threads << 52 | uint64_t(shared) << 20;
  if (cacheable) {
    const uint64_t cached = f.cooperative_occupancy.load(std::memory_order_acquire);
    if ((cached & ~uint64_t(0xFFFFF)) == key) return static_cast<int>(cached & 0xFFFFF);
  }
  int per_sm = 0;
  check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f.function,
                                                             static_cast<int>(threads), shared),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (cacheable && per_sm >= 0 && per_sm < (1 << 20))
    f.cooperative_occupancy.store(key | uint64_t(per_sm), std::memory_order_release);
  return per_sm;
}

}  // namespace

CUlaunchConfig driver_config(const cuabi_launch_config& c) {
  CUlaunchConfig lc{};
  lc.gridDimX = c.grid_x;
  lc.gridDimY = c.grid_y;
  lc.gridDimZ = c.grid_z;
  lc.blockDimX = c.block_x;
  lc.blockDimY = c.block_y;
  lc.blockDimZ = c.block_z;
  lc.sharedMemBytes = c.shared_mem_bytes;
  return lc;
}

void check_device_updatable(const cuabi_launch_config& c, const Stream* stream) {
  if (!(c.flags & CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE)) return;
  if (!stream || stream->capture_tick.load(std::memory_order_relaxed) == 0)
    fail_config(std::string("CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE asks for a graph kernel "
                            "node, but ") +
                (stream ? "the stream is not capturing a graph"
                        : "the launch is on the default stream, which does not capture") +
                " (begin a capture with cuabi_stream_begin_capture)");
}

namespace {

// The launch attributes of 0.3, checked and written after attrs[n].
unsigned add_launch_attributes(const Function& f, const cuabi_launch_config& c,
                               CUlaunchAttribute* attrs, unsigned n, Ref<Event>* completion) {
  const Device& d = *f.module->device;
  // Built only for a refusal's message.
  auto dev = [&d] { return "device " + std::to_string(d.ordinal); };
  if (c.access_policy_window.bytes) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
    attrs[n].value.accessPolicyWindow = checked_access_policy_window(
        d, c.access_policy_window, "launch configuration: access_policy_window.");
    ++n;
  }
  if (c.sync_policy) {
    if (c.sync_policy < CUABI_SYNC_POLICY_AUTO || c.sync_policy > CUABI_SYNC_POLICY_BLOCKING_SYNC)
      fail_config("sync_policy is " + std::to_string(c.sync_policy) +
                  ", not 0 (the stream's) or one of CUABI_SYNC_POLICY_AUTO (1), _SPIN (2), "
                  "_YIELD (3), _BLOCKING_SYNC (4)");
    // CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY is valid for streams only:
    // cuLaunchKernelEx answers CUDA_ERROR_INVALID_VALUE for it.
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "launch configuration: sync_policy " + std::to_string(c.sync_policy) +
             ": the driver takes a synchronization policy for a stream, not for a launch "
             "(CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY is valid for streams only); set it on "
             "the stream with cuabi_stream_set_sync_policy");
  }
  if (c.cluster_scheduling_policy) {
    if (c.cluster_scheduling_policy < CUABI_CLUSTER_SCHEDULING_DEFAULT ||
        c.cluster_scheduling_policy > CUABI_CLUSTER_SCHEDULING_LOAD_BALANCING)
      fail_config("cluster_scheduling_policy is " + std::to_string(c.cluster_scheduling_policy) +
                  ", not one of CUABI_CLUSTER_SCHEDULING_DEFAULT (0), _SPREAD (1), "
                  "_LOAD_BALANCING (2)");
    if (!d.cluster_launch)
      fail_config("cluster_scheduling_policy " + std::to_string(c.cluster_scheduling_policy) +
                  ": " + dev() + " (" + d.name + ", compute capability " +
                  std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
                  ") cannot launch thread-block clusters (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH is "
                  "0; clusters need compute capability 9.0 or newer)");
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attrs[n].value.clusterSchedulingPolicyPreference =
        static_cast<CUclusterSchedulingPolicy>(c.cluster_scheduling_policy);
    ++n;
  }
  if (c.mem_sync_domain != -1) {
    if (c.mem_sync_domain != CUABI_MEM_SYNC_DOMAIN_DEFAULT &&
        c.mem_sync_domain != CUABI_MEM_SYNC_DOMAIN_REMOTE)
      fail_config("mem_sync_domain is " + std::to_string(c.mem_sync_domain) +
                  ", not -1 (the stream's) or one of CUABI_MEM_SYNC_DOMAIN_DEFAULT (0), "
                  "_REMOTE (1)");
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
    attrs[n].value.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(c.mem_sync_domain);
    ++n;
  }
  if (c.mem_sync_domain_map_default != -1 || c.mem_sync_domain_map_remote != -1) {
    if (c.mem_sync_domain_map_default == -1 || c.mem_sync_domain_map_remote == -1)
      fail_config(
          "mem_sync_domain_map_default is " + std::to_string(c.mem_sync_domain_map_default) +
          " and mem_sync_domain_map_remote " + std::to_string(c.mem_sync_domain_map_remote) +
          "; give both or neither (-1, -1: the stream's map)");
    const int count = d.mem_sync_domain_count();
    const int32_t ids[2] = {c.mem_sync_domain_map_default, c.mem_sync_domain_map_remote};
    const char* names[2] = {"mem_sync_domain_map_default", "mem_sync_domain_map_remote"};
    for (int i = 0; i < 2; ++i)
      if (ids[i] < 0 || ids[i] >= count)
        fail_config(std::string(names[i]) + " is " + std::to_string(ids[i]) + ", outside " + dev() +
                    "'s memory-synchronisation domains 0 to " + std::to_string(count - 1) +
                    " (CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT is " + std::to_string(count) +
                    ")");
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP;
    attrs[n].value.memSyncDomainMap.default_ = static_cast<unsigned char>(ids[0]);
    attrs[n].value.memSyncDomainMap.remote = static_cast<unsigned char>(ids[1]);
    ++n;
  }
  if (c.shared_carveout != -1) {
    if (c.shared_carveout < 0 || c.shared_carveout > 100)
      fail_config("shared_carveout is " + std::to_string(c.shared_carveout) +
                  ", outside 0 to 100 percent (-1: the kernel's)");
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
    attrs[n].value.sharedMemCarveout = static_cast<unsigned>(c.shared_carveout);
    ++n;
  }
  if (c.completion_event) {
    Pin<Event> e(c.completion_event, "config->completion_event");
    if (e->device.get() != &d)
      fail_config("completion_event belongs to device " + std::to_string(e->device->ordinal) +
                  ", the kernel to device " + std::to_string(d.ordinal));
    if (e->timing)
      fail_config(
          "completion_event was made without CUABI_EVENT_DISABLE_TIMING, which a launch "
          "completion event needs");
    if (e->interprocess)
      fail_config(
          "completion_event is an interprocess event, which a launch completion event "
          "may not be");
    d.check_epoch(e->epoch);
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    attrs[n].value.launchCompletionEvent.event = e->event;
    attrs[n].value.launchCompletionEvent.flags = 0;
    ++n;
    if (completion) *completion = Ref<Event>::share(e.get());
  }
  if (c.flags & CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
    attrs[n].value.deviceUpdatableKernelNode.deviceUpdatable = 1;
    attrs[n].value.deviceUpdatableKernelNode.devNode = nullptr;
    ++n;
  }
  return n;
}

}  // namespace

CUlaunchConfig extended_config(const Function& f, const cuabi_launch_config& c,
                               CUlaunchAttribute* attrs, Ref<Event>* event,
                               Ref<Event>* completion) {
  const Device& d = *f.module->device;
  const uint32_t known = CUABI_LAUNCH_COOPERATIVE | CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION |
                         CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START |
                         CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE;
  if (c.flags & ~known)
    fail_config("flags has bits this version does not define: " + std::to_string(c.flags));
  if ((c.flags & CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START) && !c.programmatic_event)
    fail_config(
        "CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START is set but programmatic_event "
        "is NULL");
  unsigned n = 0;
  uint32_t cluster[3];
  check_cluster_shape(f, c, cluster);
  if (cluster[0]) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = cluster[0];
    attrs[n].value.clusterDim.y = cluster[1];
    attrs[n].value.clusterDim.z = cluster[2];
    ++n;
  }
  if (c.flags & CUABI_LAUNCH_COOPERATIVE) {
    if (!d.cooperative_launch)
      fail_config("a cooperative launch: device " + std::to_string(d.ordinal) + " (" + d.name +
                  ") does not support cooperative launches "
                  "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)");
    const uint64_t threads = uint64_t(c.block_x) * c.block_y * c.block_z;
    const int per_sm = cooperative_blocks_per_sm(f, threads, c.shared_mem_bytes);
    const uint64_t resident = uint64_t(per_sm > 0 ? per_sm : 0) * d.multiprocessors;
    const uint64_t blocks = uint64_t(c.grid_x) * c.grid_y * c.grid_z;
    if (blocks > resident)
      fail_config("a cooperative grid of " + std::to_string(blocks) +
                  " blocks is larger than the " + std::to_string(resident) + " device " +
                  std::to_string(d.ordinal) + " keeps resident: " + std::to_string(per_sm) +
                  " blocks per multiprocessor (kernel '" + f.name + "', " +
                  std::to_string(threads) + " threads and " + std::to_string(c.shared_mem_bytes) +
                  " bytes of dynamic shared memory per "
                  "block) x " +
                  std::to_string(d.multiprocessors) + " multiprocessors");
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n].value.cooperative = 1;
    ++n;
  }
  if (c.flags & CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (c.priority != 0) {
    int least = 0, greatest = 0;
    d.stream_priority_range(&least, &greatest);
    if (c.priority > least || c.priority < greatest)
      fail_config("priority " + std::to_string(c.priority) + " is outside device " +
                  std::to_string(d.ordinal) + "'s stream priority range [" +
                  std::to_string(greatest) + ", " + std::to_string(least) +
                  "] (greatest to least; 0 keeps the stream's)");
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attrs[n].value.priority = c.priority;
    ++n;
  }
  if (c.programmatic_event) {
    Pin<Event> e(c.programmatic_event, "config->programmatic_event");
    if (e->device.get() != &d)
      fail_config("programmatic_event belongs to device " + std::to_string(e->device->ordinal) +
                  ", the kernel to device " + std::to_string(d.ordinal));
    d.check_epoch(e->epoch);
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
    attrs[n].value.programmaticEvent.event = e->event;
    attrs[n].value.programmaticEvent.flags = 0;
    attrs[n].value.programmaticEvent.triggerAtBlockStart =
        (c.flags & CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START) ? 1 : 0;
    ++n;
    if (event) *event = Ref<Event>::share(e.get());
  }
  if (has_launch_attributes(c) || (c.flags & CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE))
    n = add_launch_attributes(f, c, attrs, n, completion);
  CUlaunchConfig lc = driver_config(c);
  lc.hStream = nullptr;
  lc.attrs = n ? attrs : nullptr;
  lc.numAttrs = n;
  return lc;
}

uint32_t max_cluster_size(const Function& f, const cuabi_launch_config& c) {
  CUlaunchConfig lc = driver_config(c);
  int most = 0;
  check(driver().cuOccupancyMaxPotentialClusterSize(&most, f.function, &lc),
        "cuOccupancyMaxPotentialClusterSize");
  return most > 0 ? static_cast<uint32_t>(most) : 0;
}

void launch(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
            void* const* params, size_t num_params) {
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(f, c);
  check_count(f, num_params);
  if (num_params > 0 && !params)
    fail_invalid("params is NULL but num_params is " + std::to_string(num_params));
  for (size_t i = 0; i < num_params; ++i)
    if (!params[i]) fail_invalid("params[" + std::to_string(i) + "] is NULL");
  submit(f, c, stream, const_cast<void**>(params), nullptr);
}

void need_params(const Function& f) {
  if (!f.params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "the driver does not report kernel parameters (cuFuncGetParamInfo needs CUDA 12.4)");
}

void check_arg_size(const Function& f, size_t index, size_t size) {
  need_params(f);
  if (index >= f.params.size())
    fail_invalid("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                 (f.params.size() == 1 ? " parameter" : " parameters") +
                 "; there is no parameter " + std::to_string(index));
  if (size != f.params[index].size)
    fail_invalid("kernel '" + f.name + "' parameter " + std::to_string(index) + " is " +
                 std::to_string(f.params[index].size) + " bytes, but the argument given is " +
                 std::to_string(size) + " bytes");
}

void check_arg_sizes(const Function& f, const size_t* sizes, size_t count, const char* what) {
  need_params(f);
  if (count > 0 && !sizes) fail_invalid(std::string(what) + " is NULL");
  check_count(f, count);
  for (size_t i = 0; i < count; ++i) check_arg_size(f, i, sizes[i]);
}

void launch_sized(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                  void* const* params, const size_t* sizes, size_t num_params) {
  check_arg_sizes(f, sizes, num_params, "param_sizes");
  launch(f, config, stream, params, num_params);
}

void check_packed_args(const Function& f, const void* args, size_t args_size) {
  if (args_size != f.args_size)
    fail_invalid("kernel '" + f.name + "' takes a " + std::to_string(f.args_size) +
                 "-byte argument block (" + std::to_string(f.params.size()) + " parameters), but " +
                 std::to_string(args_size) + " bytes were given");
  if (args_size > 0 && !args) fail_invalid("args is NULL");
}

void launch_packed(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                   const void* args, size_t args_size) {
  if (!f.params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "packed launches need the kernel's parameter layout, which the driver does not report "
         "(cuFuncGetParamInfo needs CUDA 12.4)");
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(f, c);
  check_packed_args(f, args, args_size);
  if (args_size == 0) {
    submit(f, c, stream, nullptr, nullptr);
    return;
  }
  size_t size = args_size;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(args),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  submit(f, c, stream, nullptr, extra);
}

LaunchPlan::LaunchPlan(Ref<Function> fn, const cuabi_launch_config& cfg, Ref<Stream> s)
    : Object(kKind), function(std::move(fn)), stream(std::move(s)), config(cfg) {
  if (!function->params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "launch plans need the kernel's parameter layout, which the driver does not report "
         "(cuFuncGetParamInfo needs CUDA 12.4)");
  check_config(*function, config);
  const Device& device = *function->module->device;
  if (stream && stream->device.get() != &device)
    fail_invalid("the stream belongs to device " + std::to_string(stream->device->ordinal) +
                 ", the kernel to device " + std::to_string(device.ordinal));
  // Both made in the device's current context, so that the launch need check
  // only the kernel's.
  function->module->enter();
  if (stream) {
    device.check_epoch(stream->epoch);
    cu_stream_ = stream->stream;
  }
  ring_ = stream ? &stream->launches : &device.launches.default_ring;
  describe_launch(info_, *function, config, stream ? stream->id : 0);
  args_size = function->args_size;
  // 64-byte aligned (one cache line) and at least one line long, so a binding
  // may view it as any parameter type.
  size_t capacity = (args_size + 63) & ~size_t(63);
  if (capacity == 0) capacity = 64;
  args = std::aligned_alloc(64, capacity);
  if (!args) throw std::bad_alloc();
  std::memset(args, 0, capacity);
  extra_size_ = args_size;
  extra_[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
  extra_[1] = args;
  extra_[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
  extra_[3] = &extra_size_;
  extra_[4] = CU_LAUNCH_PARAM_END;
  if (!is_plain(config)) {
    function->module->enter();
    ex_config_ = extended_config(*function, config, ex_attrs_, &ex_event_, &ex_completion_);
    ex_config_.hStream = stream ? stream->stream : nullptr;
    extended_ = true;
  }
}

LaunchPlan::~LaunchPlan() {
  ring_->detach(&info_);
  std::free(args);
}

void LaunchPlan::launch() {
  const Function& f = *function;
  const DriverApi& d = f.module->enter();
  if (extended_) {
    if (config.flags & CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE)
      check_device_updatable(config, stream.get());
    check(d.cuLaunchKernelEx(&ex_config_, f.function, nullptr, args_size ? extra_ : nullptr),
          "cuLaunchKernelEx");
  } else {
    const cuabi_launch_config& c = config;
    check(
        d.cuLaunchKernel(f.function, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,
                         c.shared_mem_bytes, cu_stream_, nullptr, args_size ? extra_ : nullptr),
        "cuLaunchKernel");
  }
  ring_->record(&info_);
}

Ref<LaunchPlan> make_plan(Ref<Function> function, const cuabi_launch_config* config,
                          Ref<Stream> stream) {
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  cuabi_launch_config owned = c;
  owned.struct_size = sizeof(cuabi_launch_config);
  return make<LaunchPlan>(std::move(function), owned, std::move(stream));
}

}  // namespace cuabi
