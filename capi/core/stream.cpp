// Streams, host functions, events and graphs.
#include "stream.hpp"

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "launch.hpp"
#include "text.hpp"

namespace cuabi {

namespace {

uint64_t next_stream_id() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

Stream::Stream(Ref<Device> dev, uint32_t flags, int priority)
    : DeviceChild(kKind, std::move(dev)), id(next_stream_id()) {
  if (flags & ~static_cast<uint32_t>(CUABI_STREAM_NON_BLOCKING))
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  enter();
  unsigned cu_flags = (flags & CUABI_STREAM_NON_BLOCKING) ? CU_STREAM_NON_BLOCKING : 0;
  check(driver().cuStreamCreateWithPriority(&stream, cu_flags, priority),
        "cuStreamCreateWithPriority");
  owned = true;
  try {
    device->launches.add(this);
  } catch (...) {
    driver().cuStreamDestroy(stream);
    throw;
  }
}

Stream::Stream(Ref<Device> dev, CUstream wrapped)
    : DeviceChild(kKind, std::move(dev)), stream(wrapped), owned(false), id(next_stream_id()) {
  device->launches.add(this);
}

Stream::~Stream() {
  device->launches.remove(this);
  if (!enter_quietly(*this)) return;
  // Frees deferred by a capture that never ended: nothing runs on the stream
  // any more, so the synchronous free is safe.
  for (CUdeviceptr p : deferred_frees_) driver().cuMemFree(p);
  if (owned) driver().cuStreamDestroy(stream);
}

void Stream::defer_free(CUdeviceptr ptr) {
  try {
    std::lock_guard<std::mutex> lock(host_mutex_);
    deferred_frees_.push_back(ptr);
  } catch (...) {
    // Out of host memory in a destructor: the allocation stays with its pool.
  }
}

void Stream::flush_deferred_frees() noexcept {
  std::vector<CUdeviceptr> frees;
  {
    std::lock_guard<std::mutex> lock(host_mutex_);
    frees.swap(deferred_frees_);
  }
  for (CUdeviceptr p : frees) driver().cuMemFreeAsync(p, stream);
}

Event::Event(Ref<Device> dev, uint32_t flags) : DeviceChild(kKind, std::move(dev)) {
  const uint32_t known =
      CUABI_EVENT_DISABLE_TIMING | CUABI_EVENT_BLOCKING_SYNC | CUABI_EVENT_INTERPROCESS;
  if (flags & ~known)
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  if ((flags & CUABI_EVENT_INTERPROCESS) && !(flags & CUABI_EVENT_DISABLE_TIMING))
    fail_invalid("CUABI_EVENT_INTERPROCESS needs CUABI_EVENT_DISABLE_TIMING: an event shared "
                 "between processes cannot time");
  enter();
  unsigned cu_flags = 0;
  if (flags & CUABI_EVENT_DISABLE_TIMING) cu_flags |= CU_EVENT_DISABLE_TIMING;
  if (flags & CUABI_EVENT_BLOCKING_SYNC) cu_flags |= CU_EVENT_BLOCKING_SYNC;
  if (flags & CUABI_EVENT_INTERPROCESS) cu_flags |= CU_EVENT_INTERPROCESS;
  check(driver().cuEventCreate(&event, cu_flags), "cuEventCreate");
  interprocess = (flags & CUABI_EVENT_INTERPROCESS) != 0;
  timing = (flags & CUABI_EVENT_DISABLE_TIMING) == 0;
}

Event::Event(Ref<Device> dev, CUevent opened, const CUipcEventHandle& handle)
    : DeviceChild(kKind, std::move(dev)),
      event(opened),
      interprocess(true),
      ipc_opened(true),
      ipc_handle_(handle) {}

Event::~Event() {
  for (auto& copy : reopened_) {
    try {
      if (driver_ready() && !copy.first->lost()) {
        copy.first->make_current();
        driver().cuEventDestroy(copy.second);
      }
    } catch (...) {
      // The driver is gone or the device lost: nothing left to destroy.
    }
  }
  if (enter_quietly(*this)) driver().cuEventDestroy(event);
}

CUevent Event::event_for(const Device& on) {
  if (!ipc_opened || &on == device.get()) return event;
  std::lock_guard<std::mutex> lock(reopened_mutex_);
  for (const auto& copy : reopened_)
    if (copy.first.get() == &on) return copy.second;
  // The caller made `on` current (its stream's context).
  CUevent copy = nullptr;
  check(driver().cuIpcOpenEventHandle(&copy, ipc_handle_),
        "cuIpcOpenEventHandle (opening the other process's event again on the waiting "
        "stream's device; the exporting process may have destroyed the event or ended)");
  reopened_.emplace_back(Ref<Device>::share(const_cast<Device*>(&on)), copy);
  return copy;
}

// ---------------------------------------------------------------------------
// Host functions
// ---------------------------------------------------------------------------

void Stream::record_host_failure(int32_t result, const char* message) noexcept {
  try {
    std::lock_guard<std::mutex> lock(host_mutex_);
    if (host_failures_++ == 0) {
      first_host_failure_ = message && message[0]
                                ? to_utf8(message)
                                : "it returned " + std::to_string(result) + " and gave no message";
    }
  } catch (...) {
    // Out of host memory on a driver thread: the failure is counted, if not
    // described.
  }
}

void Stream::take_host_failures() {
  size_t failed = 0;
  std::string first;
  {
    std::lock_guard<std::mutex> lock(host_mutex_);
    if (host_failures_ == 0) return;
    failed = host_failures_;
    first.swap(first_host_failure_);
    host_failures_ = 0;
  }
  if (failed == 1) fail(CUABI_ERROR_HOST_FUNCTION, "a host function failed: " + first);
  fail(CUABI_ERROR_HOST_FUNCTION, std::to_string(failed) +
                                      " host functions failed; the first: " + first);
}

namespace {

// What one cuLaunchHostFunc call hands the driver: freed by the trampoline.
struct HostCall {
  Stream* stream;  // one reference, owned
  cuabi_host_fn fn;
  void* user_data;
};

// Drops the trampoline's reference to `stream`. A driver callback may not call
// CUDA, so the last reference (whose destructor destroys the CUDA stream) is
// dropped on a thread of its own.
void drop_from_callback(Stream* stream) noexcept {
  if (stream->release_unless_last()) return;
  try {
    std::thread([stream] { stream->release(); }).detach();
  } catch (...) {
    // No thread to be had: leak the stream rather than call CUDA here.
  }
}

void CUDA_CB host_trampoline(void* data) noexcept {
  HostCall* call = static_cast<HostCall*>(data);
  char message[kHostMessageSize];
  message[0] = '\0';
  int32_t result = 0;
  try {
    result = call->fn(call->user_data, message, sizeof message);
  } catch (...) {
    // A C function pointer should not throw; if one does, it fails here
    // instead of unwinding into the driver.
    result = -1;
    std::strcpy(message, "the host function threw a C++ exception");
  }
  if (result != 0) {
    message[sizeof message - 1] = '\0';
    call->stream->record_host_failure(result, message);
  }
  drop_from_callback(call->stream);
  delete call;
}

}  // namespace

void launch_host_func(Ref<Stream> stream, cuabi_host_fn fn, void* user_data) {
  if (!fn) fail_invalid("fn is NULL");
  stream->enter();
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  check(driver().cuStreamIsCapturing(stream->stream, &capturing), "cuStreamIsCapturing");
  if (capturing != CU_STREAM_CAPTURE_STATUS_NONE)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "the stream is capturing a graph; a host function runs once per launch of it, and "
         "cuabi_stream_launch_host_func supports streams that run it once");
  HostCall* call = new HostCall{stream.get(), fn, user_data};
  CUresult r = driver().cuLaunchHostFunc(stream->stream, &host_trampoline, call);
  if (r != CUDA_SUCCESS) {
    delete call;
    check(r, "cuLaunchHostFunc");
  }
  stream.detach();  // the reference now belongs to the call
}

// ---------------------------------------------------------------------------
// Graphs
// ---------------------------------------------------------------------------

Graph::~Graph() {
  if (owned && enter_quietly(*this)) driver().cuGraphDestroy(graph);
}

const std::vector<CUgraphNode>& Graph::kernel_nodes() {
  std::lock_guard<std::mutex> lock(nodes_mutex_);
  if (nodes_known_) return kernel_nodes_;
  const DriverApi& d = driver();
  size_t n = 0;
  check(d.cuGraphGetNodes(graph, nullptr, &n), "cuGraphGetNodes");
  std::vector<CUgraphNode> nodes(n);
  if (n) check(d.cuGraphGetNodes(graph, nodes.data(), &n), "cuGraphGetNodes");
  nodes.resize(n);
  std::vector<CUgraphNode> kernels;
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    check(d.cuGraphNodeGetType(node, &type), "cuGraphNodeGetType");
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) kernels.push_back(node);
  }
  kernel_nodes_ = std::move(kernels);
  nodes_known_ = true;
  return kernel_nodes_;
}

GraphExec::GraphExec(Ref<Graph> graph, CUgraphExec exec)
    : DeviceChild(kKind, graph->device), exec(exec), origin_(graph), current_(graph) {}

GraphExec::~GraphExec() {
  if (enter_quietly(*this)) driver().cuGraphExecDestroy(exec);
}

namespace {

std::string function_name(CUfunction f) {
  const char* name = nullptr;
  if (f && driver().cuFuncGetName(&name, f) == CUDA_SUCCESS && name) return to_utf8(name);
  t_missing_entry_point = nullptr;
  return std::string();
}

const char* update_failure(CUgraphExecUpdateResult result) {
  switch (result) {
    case CU_GRAPH_EXEC_UPDATE_ERROR:
      return "the update is invalid (CU_GRAPH_EXEC_UPDATE_ERROR)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
      return "the graph's topology differs (CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED:
      return "a node's type differs (CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
      return "a kernel node's function changed in a way that cannot be updated "
             "(CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
      return "a node's parameters changed in a way that cannot be updated "
             "(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED:
      return "something about a node is not supported by an update "
             "(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "a kernel node's function changed in an unsupported way "
             "(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
      return "a node's attributes changed in a way that cannot be updated "
             "(CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED)";
    default:
      return "the driver refused the update";
  }
}

}  // namespace

void GraphExec::set_kernel_node_args(size_t index, const Function& f, const void* args,
                                     size_t args_size) {
  if (f.module->device.get() != device.get())
    fail_invalid("kernel '" + f.name + "' belongs to device " +
                 std::to_string(f.module->device->ordinal) + ", the graph to device " +
                 std::to_string(device->ordinal));
  if (!f.params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "kernel node arguments are set through the kernel's parameter layout, which the driver "
         "does not report (cuFuncGetParamInfo needs CUDA 12.4)");
  enter();
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<CUgraphNode>& nodes = current_->kernel_nodes();
  if (index >= nodes.size())
    fail(CUABI_ERROR_OUT_OF_RANGE,
         "kernel node " + std::to_string(index) + " is past the end: the graph has " +
         std::to_string(nodes.size()) +
         (nodes.size() == 1 ? " kernel node" : " kernel nodes"));
  const DriverApi& d = driver();
  CUDA_KERNEL_NODE_PARAMS params;
  std::memset(&params, 0, sizeof params);
  check(d.cuGraphKernelNodeGetParams(nodes[index], &params), "cuGraphKernelNodeGetParams");
  if (params.func != f.function) {
    const std::string other = function_name(params.func);
    fail_invalid("kernel node " + std::to_string(index) + " runs " +
                 (other.empty() ? std::string("another kernel") : "'" + other + "'") + ", not '" +
                 f.name + "'");
  }
  if (args_size != f.args_size)
    fail_invalid("kernel '" + f.name + "' takes a " + std::to_string(f.args_size) +
                 "-byte argument block (" + std::to_string(f.params.size()) +
                 " parameters), but " + std::to_string(args_size) + " bytes were given");
  if (args_size > 0 && !args) fail_invalid("args is NULL");
  // One pointer per parameter into the caller's block, at the kernel's
  // offsets: the driver copies the values during the call.
  std::vector<void*> pointers(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i)
    pointers[i] = const_cast<char*>(static_cast<const char*>(args) + f.params[i].offset);
  params.kernelParams = pointers.empty() ? nullptr : pointers.data();
  params.extra = nullptr;
  // The node of the graph instantiated from names the executable's node.
  CUgraphNode node = origin_.get() == current_.get() ? nodes[index] : origin_->kernel_nodes()[index];
  check(d.cuGraphExecKernelNodeSetParams(exec, node, &params), "cuGraphExecKernelNodeSetParams");
}

void GraphExec::update(Ref<Graph> graph) {
  if (graph->device.get() != device.get())
    fail_invalid("the graph belongs to device " + std::to_string(graph->device->ordinal) +
                 ", the executable graph to device " + std::to_string(device->ordinal));
  enter();
  graph->device->check_epoch(graph->epoch);
  std::lock_guard<std::mutex> lock(mutex_);
  CUgraphExecUpdateResultInfo info;
  std::memset(&info, 0, sizeof info);
  CUresult r = driver().cuGraphExecUpdate(exec, graph->graph, &info);
  if (r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    fail(CUABI_ERROR_INVALID_ARGUMENT,
         std::string("the graph cannot update this executable graph: ") +
             update_failure(info.result),
         r);
  check(r, "cuGraphExecUpdate");
  current_ = std::move(graph);
}

void upload(GraphExec& exec, const Pin<Stream>& stream) {
  exec.enter();
  check(driver().cuGraphUpload(exec.exec, stream_for(stream, *exec.device)), "cuGraphUpload");
}

}  // namespace cuabi
