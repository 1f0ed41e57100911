// The objects behind cuabi's handles. Each embeds references to what it
// depends on, so that if a handle exists its resource is valid, and release
// order never matters.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver.hpp"
#include "handles.hpp"
#include "launch_log.hpp"
#include "nvrtc.hpp"

namespace cuabi {

// A device and its retained primary context. One object per ordinal lives
// while anything refers to it.
class Device : public Object {
 public:
  static constexpr Kind kKind = Kind::Device;
  static Ref<Device> get(int ordinal);
  static int count();
  ~Device() override;

  // Makes the primary context current on the calling thread (no-op when it
  // already is); throws CONTEXT_LOST once the device is lost to the process.
  // Objects made before a reset are refused by check_epoch (DeviceChild::enter).
  // Answers the driver table, so a caller need not look it up again.
  const DriverApi& make_current() const;
  void check_epoch(uint32_t epoch) const {
    if (epoch != epoch_.load(std::memory_order_acquire)) fail_stale();
  }
  // True once a reset found the device refused to this process: after a
  // sticky fault the driver fails every later call of the process, the reset
  // included, and only a new process can use the GPU again.
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  uint32_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  void reset();

  int ordinal;
  CUdevice device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  uint32_t max_block[3] = {0, 0, 0};
  uint32_t max_grid[3] = {0, 0, 0};
  uint32_t max_threads_per_block = 0;
  uint32_t max_shared_optin = 0;
  uint32_t multiprocessors = 0;
  bool cooperative_launch = false;  // CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH
  // The stream priority range (least, greatest), a constant of the device:
  // asked of the driver once, with the context current.
  void stream_priority_range(int* least, int* greatest) const;
  bool cluster_launch = false;  // CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH (0 on drivers without it)

  CUcontext context() const { return context_.load(std::memory_order_acquire); }
  // A CUdevice_attribute of this device, asked of the driver.
  int get_attribute(CUdevice_attribute attribute) const;
  // CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, a constant of the device:
  // asked of the driver once.
  int mem_sync_domain_count() const;

  // Peer access this process enabled from this device's context to others'
  // (cuabi_device_enable_peer_access), by ordinal.
  void set_peer_enabled(int peer, bool enabled);
  bool peer_enabled(int peer) const;

  // The launches recorded on the device's streams (launch_log.hpp).
  mutable LaunchLog launches;

 private:
  explicit Device(int ordinal);
  [[noreturn]] void fail_stale() const;
  [[noreturn]] void fail_lost() const;
  std::atomic<CUcontext> context_{nullptr};
  std::atomic<uint32_t> epoch_{0};
  std::atomic<bool> lost_{false};
  std::mutex reset_mutex_;
  mutable std::mutex peer_mutex_;
  std::vector<int> peers_;
  static constexpr int64_t kNoPriorityRange = INT64_MIN;
  mutable std::atomic<int64_t> priority_range_{kNoPriorityRange};
  mutable std::atomic<int> mem_sync_domains_{-1};
};

// Something made in a device's context: keeps the device alive and knows the
// context generation it was made in.
class DeviceChild : public Object {
 public:
  DeviceChild(Kind kind, Ref<Device> device)
      : Object(kind), device(std::move(device)), epoch(this->device->epoch()) {}
  // Makes the context current and checks this object survived no reset.
  const DriverApi& enter() const {
    device->check_epoch(epoch);
    return device->make_current();
  }
  // True when the resource still exists and may be freed.
  bool alive() const { return device->epoch() == epoch; }

  Ref<Device> device;
  uint32_t epoch;
};

// Makes `child`'s context current for a destructor, which must not throw:
// false (and nothing done) when the driver is gone or `child` is from before
// a reset, whose resource the reset already destroyed.
bool enter_quietly(const DeviceChild& child);

class Program : public Object {
 public:
  static constexpr Kind kKind = Kind::Program;
  Program(const char* source, const char* name, size_t num_headers, const char* const* sources,
          const char* const* names);
  ~Program() override;
  void add_name_expression(const char* expression);
  // Compiles once, keeping the log either way. Code or options NVRTC rejects
  // throw COMPILE carrying the log; other NVRTC failures throw NVRTC.
  void compile(size_t num_options, const char* const* options);

  std::mutex mutex;
  nvrtcProgram program = nullptr;
  bool compiled = false;
  bool succeeded = false;
  std::string log;
  std::string ptx;  // with its NUL
  std::string cubin;
  std::string lto_ir;  // compiled with -dlto
  std::vector<std::string> expressions;
  std::map<std::string, std::string> lowered;
};

class Module : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Module;
  Module(Ref<Device> device, const void* image, size_t size);
  ~Module() override;

  // A library's module in this device's context (cuLibraryGetModule): not
  // unloaded here; `library` keeps the library loaded.
  Module(Ref<Device> device, CUmodule borrowed, Ref<Object> library);

  CUmodule module = nullptr;
  Ref<Object> library;
  bool from_cache = false;
  std::string compile_log;                     // NVRTC's log of the compile that made it
  std::map<std::string, std::string> lowered;  // name expression -> lowered name
};

struct ParamInfo {
  size_t offset;
  size_t size;
};

class Function : public Object {
 public:
  static constexpr Kind kKind = Kind::Function;
  Function(Ref<Module> module, std::string name, CUfunction function);

  Ref<Module> module;
  std::string name;
  const char* interned_name;  // the same text, for the launch records
  int32_t device_ordinal;     // its module's device's, for the launch records
  CUfunction function;
  bool params_known = false;
  std::vector<ParamInfo> params;
  size_t args_size = 0;
  uint32_t max_threads = 0;
  std::atomic<uint32_t> max_dynamic_shared{0};
  // The compile-time cluster dimensions (__cluster_dims__, or set through
  // cuabi_function_set_attribute); 0, 0, 0 for none.
  std::atomic<uint32_t> required_cluster[3] = {{0}, {0}, {0}};
  // CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED.
  std::atomic<bool> non_portable_cluster{false};
  // The last occupancy a cooperative launch asked the driver for, packed as
  // valid (bit 63) | threads per block (11 bits) | dynamic shared bytes (32)
  // | blocks per multiprocessor (20); 0 when none. Cleared when an attribute
  // is set, since attributes change occupancy.
  mutable std::atomic<uint64_t> cooperative_occupancy{0};
};

class MemoryPool;
class Stream;
class Graph;
// A mapping of another process's memory (cuIpcOpenMemHandle), shared by every
// buffer opened from the same handle on the same device: the driver maps a
// handle once per context, and the last buffer released closes it.
struct IpcMapping;
class AddressRange;  // vmm.hpp

class Buffer : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Buffer;
  // Takes over `ptr` of `bytes`, obtained as `kind` says (which decides how
  // the destructor frees it).
  Buffer(Ref<Device> device, cuabi_buffer_kind kind, CUdeviceptr ptr, size_t bytes);
  ~Buffer() override;
  CUdeviceptr ptr = 0;
  // Atomic: a growable buffer's size grows (cuabi_buffer_grow) while other
  // threads check ranges against it; it never shrinks.
  std::atomic<size_t> size{0};
  cuabi_buffer_kind kind = CUABI_BUFFER_DEVICE;
  size_t pitch = 0;      // CUABI_BUFFER_PITCHED
  Ref<MemoryPool> pool;  // CUABI_BUFFER_STREAM_ORDERED from a pool; IPC from a pool
  Ref<Stream>
      alloc_stream;  // CUABI_BUFFER_STREAM_ORDERED: freed in order there (empty: NULL stream)
  std::shared_ptr<IpcMapping> ipc_mapping;  // CUABI_BUFFER_IPC opened by cuIpcOpenMemHandle
  // CUABI_BUFFER_GROWABLE: its own reservation, mapped as it grows;
  // CUABI_BUFFER_RANGE: the range it views (counted in its views).
  Ref<AddressRange> range;
  // Set once cuabi_buffer_free_async queued the free: the destructor frees nothing.
  std::atomic<bool> freed{false};
  // Texture objects reading this buffer (a stream-ordered free is refused meanwhile).
  std::atomic<int> users{0};
  // A buffer taken over from a DLPack tensor (cuabi_buffer_import_dlpack):
  // holds the tensor, whose deleter runs when this goes.
  std::shared_ptr<void> dlpack_owner;
};

class HostBuffer : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::HostBuffer;
  HostBuffer(Ref<Device> device, size_t bytes);             // allocates pinned memory
  HostBuffer(Ref<Device> device, void* ptr, size_t bytes);  // pins existing memory
  ~HostBuffer() override;
  void* ptr = nullptr;
  size_t size = 0;
  bool registered = false;
};

class Stream : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Stream;
  Stream(Ref<Device> device, uint32_t flags, int priority);
  Stream(Ref<Device> device, CUstream wrapped);
  ~Stream() override;
  // Called by a host function's trampoline (a driver thread) when the host
  // function reported a failure. Never throws.
  void record_host_failure(int32_t result, const char* message) noexcept;
  // Throws HOST_FUNCTION (and forgets them) when host functions failed since
  // the last call.
  void take_host_failures();
  // A stream-ordered buffer released while this stream captured a graph: its
  // free may not join the graph, so it waits here until the capture ends.
  void defer_free(CUdeviceptr ptr);
  // Queues the deferred frees on the stream (after a capture ended). Never throws.
  void flush_deferred_frees() noexcept;

  CUstream stream = nullptr;
  bool owned = false;
  const uint64_t id;  // cuabi_stream_get_id
  // Its last launches (launch_log.hpp), listed in its device's LaunchLog
  // while the stream lives.
  LaunchRing launches;
  // When the capture in progress began (launch_tick), else 0.
  std::atomic<uint64_t> capture_tick{0};
  // The graph a capture into an existing graph fills
  // (cuabi_stream_begin_capture_to_graph), until the capture ends.
  Ref<Graph> capture_target;
  // A stream of cuabi_green_context_create_stream: its green context (a
  // GreenContext, green_context.hpp), kept alive while the stream lives.
  Ref<Object> green_context;

 private:
  std::mutex host_mutex_;
  std::vector<CUdeviceptr> deferred_frees_;
  size_t host_failures_ = 0;
  std::string first_host_failure_;
};

class Event : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Event;
  Event(Ref<Device> device, uint32_t flags);
  // Takes over an event opened by IPC from `handle` on `device`.
  Event(Ref<Device> device, CUevent opened, const CUipcEventHandle& handle);
  ~Event() override;
  // The event as a stream of `on` may wait on it. An event opened from
  // another process belongs to the context it was opened in, and the driver
  // cannot make a stream of another device wait on it (it crashes): such an
  // event is opened again, once, on each device that waits on it. Every
  // other event is answered as it is (the driver orders across devices).
  CUevent event_for(const Device& on);
  CUevent event = nullptr;
  bool interprocess = false;
  bool ipc_opened = false;  // opened from another process's handle
  bool timing = false;      // made without CUABI_EVENT_DISABLE_TIMING

 private:
  CUipcEventHandle ipc_handle_{};
  std::mutex reopened_mutex_;
  std::vector<std::pair<Ref<Device>, CUevent>> reopened_;
};

class Graph : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Graph;
  Graph(Ref<Device> device, CUgraph graph) : DeviceChild(kKind, std::move(device)), graph(graph) {}
  ~Graph() override;
  // The graph's kernel nodes in the order cuGraphGetNodes gives them, which
  // is the order they were added (captured). Looked up once: cuabi adds no
  // nodes to a graph after capture. The context must be current.
  const std::vector<CUgraphNode>& kernel_nodes();
  CUgraph graph;

  // Graphs built node by node (graph_nodes.cpp). A conditional node's body
  // is not owned: the driver destroys it with its graph; `owner` (the node)
  // keeps that graph alive, and `parent` is the graph holding the node.
  bool owned = true;
  Ref<Object> owner;
  Ref<Graph> parent;
  // The graph at the top of the body chain, which keeps what its nodes use.
  Graph& root() { return parent ? parent->root() : *this; }
  // Forgets the kernel nodes looked up, after a node was added.
  void nodes_changed() {
    std::lock_guard<std::mutex> lock(nodes_mutex_);
    nodes_known_ = false;
  }
  // Guards the fields below (held on the root).
  std::mutex build_mutex;
  // What the nodes use (kernels, buffers, events, child graphs), and blocks
  // the driver's node parameters point to (host node calls): kept as long as
  // the graph.
  std::vector<Ref<Object>> uses;
  std::vector<std::shared_ptr<void>> blocks;
  // Where the host nodes of the graph (and of its children) report failures.
  std::vector<std::shared_ptr<void>> host_failures;
  // The conditional handles made on this graph, the bodies of its
  // conditional nodes and the addresses of its allocation nodes.
  std::vector<uint64_t> conditional_handles;
  std::map<CUgraphNode, std::vector<CUgraph>> bodies;
  std::map<CUgraphNode, CUdeviceptr> allocations;

 private:
  std::mutex nodes_mutex_;
  bool nodes_known_ = false;
  std::vector<CUgraphNode> kernel_nodes_;
};

class GraphExec : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::GraphExec;
  GraphExec(Ref<Graph> graph, CUgraphExec exec);
  ~GraphExec() override;
  // Replaces kernel node `index`'s arguments with the block `args`.
  void set_kernel_node_args(size_t index, const Function& function, const void* args,
                            size_t args_size);
  // cuGraphExecUpdate from `graph`; afterwards node updates start from its
  // node parameters.
  void update(Ref<Graph> graph);
  // The graph instantiated from.
  const Ref<Graph>& origin() const { return origin_; }

  CUgraphExec exec;
  // What each node updated in place uses now (kernels, buffers, events),
  // replaced by its next update, so that updating in a loop holds no more;
  // and the blocks host node updates point to (a launch under way may still
  // call an earlier one), kept as long as the executable graph. Guarded by
  // updates_mutex (graph_nodes.cpp).
  std::mutex updates_mutex;
  std::map<CUgraphNode, std::vector<Ref<Object>>> node_uses;
  std::vector<std::shared_ptr<void>> blocks;

 private:
  std::mutex mutex_;
  // The graph instantiated from: its nodes name the executable graph's nodes
  // for the driver, whatever updates happened since.
  Ref<Graph> origin_;
  // The graph of the latest update (or origin_): the parameters a node update
  // starts from.
  Ref<Graph> current_;
};

// A stream-ordered memory pool: the device's default one (not destroyed),
// one made here, or one imported from another process.
class MemoryPool : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::MemoryPool;
  MemoryPool(Ref<Device> device, CUmemoryPool pool, bool owned, bool ipc, bool imported)
      : DeviceChild(kKind, std::move(device)),
        pool(pool),
        owned(owned),
        ipc(ipc),
        imported(imported) {}
  ~MemoryPool() override;
  CUmemoryPool pool;
  bool owned;
  bool ipc;       // exportable (CUABI_MEMORY_POOL_IPC)
  bool imported;  // from another process: no allocations, pointers opened from it
};

class Array : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Array;
  Array(Ref<Device> device, CUarray array, const cuabi_array_desc& desc)
      : DeviceChild(kKind, std::move(device)), array(array), desc(desc) {}
  ~Array() override;
  // Bytes per element: channels x the format's size.
  size_t element_size() const;
  CUarray array = nullptr;
  cuabi_array_desc desc;
};

class Texture : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Texture;
  Texture(Ref<Device> device, CUtexObject texture, Ref<Array> array, Ref<Buffer> buffer);
  ~Texture() override;
  CUtexObject texture = 0;
  Ref<Array> array;  // what it reads: one of the two
  Ref<Buffer> buffer;
};

class Surface : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Surface;
  Surface(Ref<Array> array, CUsurfObject surface);
  ~Surface() override;
  CUsurfObject surface = 0;
  Ref<Array> array;
};

// Bytes of one channel of `format`; 0 for a value that is no format.
size_t format_size(cuabi_array_format format);

// A prepared launch: everything checked once, an argument block owned here.
class LaunchPlan : public Object {
 public:
  static constexpr Kind kKind = Kind::LaunchPlan;
  LaunchPlan(Ref<Function> function, const cuabi_launch_config& config, Ref<Stream> stream);
  ~LaunchPlan() override;
  void launch();

  Ref<Function> function;
  Ref<Stream> stream;  // empty: the default stream
  cuabi_launch_config config;
  void* args = nullptr;
  size_t args_size = 0;

 private:
  size_t extra_size_ = 0;
  void* extra_[5] = {};
  // A configuration with extended fields goes through cuLaunchKernelEx with
  // these, prepared once.
  bool extended_ = false;
  CUlaunchConfig ex_config_{};
  CUlaunchAttribute ex_attrs_[13] = {};  // kMaxLaunchAttributes
  Ref<Event> ex_event_;
  Ref<Event> ex_completion_;  // config.completion_event
  // Prepared at creation: the stream handle (the stream and the kernel were
  // checked to share the device's epoch then, so checking the kernel's
  // suffices at launch), where the launch is recorded and what it records.
  CUstream cu_stream_ = nullptr;
  LaunchRing* ring_ = nullptr;
  LaunchInfo info_;
};

// Calls `f` for every device object alive, under the registry's lock.
void for_each_device(const std::function<void(const Device&)>& f);

// The CUstream of an optional stream for work on `device` (NULL: the default
// stream); refuses a stream of another device.
CUstream stream_for(const Pin<Stream>& stream, const Device& device);

}  // namespace cuabi
