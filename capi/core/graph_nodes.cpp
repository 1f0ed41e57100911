// Graphs built node by node. Every argument is checked here, with the bound
// in the message, before the driver sees it; a kernel node's configuration
// and arguments go through the checks of a launch (launch.cpp).
#include "graph_nodes.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "handles.hpp"
#include "launch.hpp"
#include "memory.hpp"
#include "stream.hpp"
#include "text.hpp"

namespace cuabi {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// What the host nodes of a graph reported, until a stream takes it.
struct HostFailures {
  std::mutex mutex;
  std::vector<std::pair<int32_t, std::string>> list;
};
constexpr size_t kMaxKeptFailures = 64;

// The block a host node's parameters point to; the graph keeps it.
struct HostNodeCall {
  cuabi_host_fn fn;
  void* user_data;
  std::shared_ptr<HostFailures> failures;
};

void CUDA_CB host_node_trampoline(void* data) noexcept {
  HostNodeCall* call = static_cast<HostNodeCall*>(data);
  char message[kHostMessageSize];
  message[0] = '\0';
  int32_t result = 0;
  try {
    result = call->fn(call->user_data, message, sizeof message);
  } catch (...) {
    result = -1;
    std::strcpy(message, "the host function threw a C++ exception");
  }
  if (result == 0) return;
  message[sizeof message - 1] = '\0';
  try {
    std::lock_guard<std::mutex> lock(call->failures->mutex);
    if (call->failures->list.size() < kMaxKeptFailures)
      call->failures->list.emplace_back(result, message);
  } catch (...) {
    // No memory for the message: the failure is lost rather than thrown into the driver.
  }
}

std::vector<std::pair<int32_t, std::string>> take_failures(const Graph& g) {
  std::vector<std::pair<int32_t, std::string>> all;
  for (const std::shared_ptr<void>& p : g.host_failures) {
    HostFailures* box = static_cast<HostFailures*>(p.get());
    std::lock_guard<std::mutex> lock(box->mutex);
    for (auto& f : box->list) all.push_back(std::move(f));
    box->list.clear();
  }
  return all;
}

// Moves the failures of a graph's host nodes to the stream the graph ran on,
// in stream order after the graph.
struct FailureMove {
  Stream* stream;  // one reference, owned
  std::vector<std::shared_ptr<void>> boxes;
};

void CUDA_CB move_failures(void* data) noexcept {
  FailureMove* move = static_cast<FailureMove*>(data);
  for (const std::shared_ptr<void>& p : move->boxes) {
    HostFailures* box = static_cast<HostFailures*>(p.get());
    std::lock_guard<std::mutex> lock(box->mutex);
    for (const auto& f : box->list) move->stream->record_host_failure(f.first, f.second.c_str());
    box->list.clear();
  }
  Stream* stream = move->stream;
  delete move;
  // A driver callback may not call CUDA: the last reference is dropped on a
  // thread of its own.
  if (stream->release_unless_last()) return;
  try {
    std::thread([stream] { stream->release(); }).detach();
  } catch (...) {
  }
}

void same_device(const Graph& g, const Device& d, const char* what) {
  if (&d != g.device.get())
    fail_invalid(std::string(what) + " belongs to device " + std::to_string(d.ordinal) +
                 ", the graph to device " + std::to_string(g.device->ordinal));
  g.device->check_epoch(g.epoch);
}

void check_after(const Graph& g, const GraphNode* after, const char* what) {
  if (after && after->graph->graph != g.graph)
    fail_invalid(std::string(what) + " is a node of another graph");
}

// Adds a node through `add(deps, count, &node)` and answers its handle.
template <class Add>
Ref<GraphNode> add_node(Ref<Graph> g, const GraphNode* after, Add&& add) {
  check_after(*g, after, "after");
  g->enter();
  CUgraphNode node = nullptr;
  CUgraphNode deps[1] = {after ? after->node : nullptr};
  add(after ? deps : nullptr, after ? size_t(1) : size_t(0), &node);
  g->nodes_changed();
  return make<GraphNode>(std::move(g), node);
}

template <class T>
void keep(Graph& g, const Ref<T>& used) {
  Graph& root = g.root();
  std::lock_guard<std::mutex> lock(root.build_mutex);
  root.uses.push_back(Ref<Object>::share(used.get()));
}

void check_host_range(const HostBuffer& b, size_t offset, size_t bytes, const char* which) {
  if (offset > b.size || bytes > b.size - offset)
    fail(CUABI_ERROR_OUT_OF_RANGE, std::string(which) + " range [" + str(offset) + ", " +
                                       str(offset) + " + " + str(bytes) +
                                       ") reaches past the end of the " + str(b.size) +
                                       "-byte host buffer");
}

void need_bytes(size_t bytes) {
  if (bytes == 0) fail_invalid("bytes is 0; a copy node copies at least 1 byte");
}

CUDA_MEMCPY3D linear_copy(size_t bytes) {
  CUDA_MEMCPY3D c;
  std::memset(&c, 0, sizeof c);
  c.WidthInBytes = bytes;
  c.Height = 1;
  c.Depth = 1;
  return c;
}

// The checked parameters of a copy, upload, download or fill node on `g`'s
// device: what adding the node and updating it in an executable graph share.
CUDA_MEMCPY3D copy_params(const Graph& g, const Buffer& dst, size_t dst_offset, const Buffer& src,
                          size_t src_offset, size_t bytes) {
  same_device(g, *dst.device, "dst");
  same_device(g, *src.device, "src");
  check_buffer_range(dst, dst_offset, bytes, "destination");
  check_buffer_range(src, src_offset, bytes, "source");
  need_bytes(bytes);
  const CUdeviceptr d = dst.ptr + dst_offset, s = src.ptr + src_offset;
  if (d < s + bytes && s < d + bytes)
    fail_invalid("the source and destination ranges overlap (" + str(bytes) +
                 " bytes at device addresses " + str(s) + " and " + str(d) +
                 "); copies between overlapping ranges are undefined");
  CUDA_MEMCPY3D c = linear_copy(bytes);
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = s;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  return c;
}

CUDA_MEMCPY3D upload_params(const Graph& g, const Buffer& dst, size_t dst_offset,
                            const HostBuffer& src, size_t src_offset, size_t bytes) {
  same_device(g, *dst.device, "dst");
  check_buffer_range(dst, dst_offset, bytes, "destination");
  check_host_range(src, src_offset, bytes, "source");
  need_bytes(bytes);
  CUDA_MEMCPY3D c = linear_copy(bytes);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = static_cast<const char*>(src.ptr) + src_offset;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = dst.ptr + dst_offset;
  return c;
}

CUDA_MEMCPY3D download_params(const Graph& g, const HostBuffer& dst, size_t dst_offset,
                              const Buffer& src, size_t src_offset, size_t bytes) {
  same_device(g, *src.device, "src");
  check_host_range(dst, dst_offset, bytes, "destination");
  check_buffer_range(src, src_offset, bytes, "source");
  need_bytes(bytes);
  CUDA_MEMCPY3D c = linear_copy(bytes);
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = src.ptr + src_offset;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = static_cast<char*>(dst.ptr) + dst_offset;
  return c;
}

CUDA_MEMSET_NODE_PARAMS fill_params(const Graph& g, const Buffer& b, size_t offset, uint32_t value,
                                    uint32_t element_size, size_t count) {
  same_device(g, *b.device, "buffer");
  if (element_size != 1 && element_size != 2 && element_size != 4)
    fail_invalid("element_size is " + std::to_string(element_size) + "; expected 1, 2 or 4");
  if (element_size < 4 && (value >> (8 * element_size)) != 0)
    fail_invalid("value " + std::to_string(value) + " does not fit in " +
                 std::to_string(element_size) + " byte(s)");
  if ((b.ptr + offset) % element_size != 0)
    fail_invalid("offset " + str(offset) + " does not put the fill on a " +
                 std::to_string(element_size) + "-byte boundary");
  if (count > SIZE_MAX / element_size)
    fail(CUABI_ERROR_OUT_OF_RANGE, "count " + str(count) + " x element_size overflows");
  check_buffer_range(b, offset, count * element_size, "fill");
  if (count == 0) fail_invalid("count is 0; a fill node fills at least 1 element");
  CUDA_MEMSET_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.dst = b.ptr + offset;
  p.pitch = 0;
  p.value = value;
  p.elementSize = element_size;
  p.width = count;
  p.height = 1;
  return p;
}

// Adds a memory copy node of `c` (checked already).
Ref<GraphNode> add_memcpy(const Ref<Graph>& g, const GraphNode* after, const CUDA_MEMCPY3D& c) {
  const CUgraph graph = g->graph;
  const CUcontext ctx = g->device->context();
  return add_node(g, after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
    check(driver().cuGraphAddMemcpyNode(out, graph, deps, n, &c, ctx), "cuGraphAddMemcpyNode");
  });
}

}  // namespace

Ref<Graph> create_graph(Ref<Device> device) {
  device->make_current();
  CUgraph graph = nullptr;
  check(driver().cuGraphCreate(&graph, 0), "cuGraphCreate");
  return Ref<Graph>::adopt(new Graph(std::move(device), graph));
}

Ref<GraphNode> add_empty_node(Ref<Graph> g, const GraphNode* after) {
  CUgraph graph = g->graph;
  return add_node(std::move(g), after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* node) {
    check(driver().cuGraphAddEmptyNode(node, graph, deps, n), "cuGraphAddEmptyNode");
  });
}

Ref<GraphNode> add_kernel_node(Ref<Graph> g, const GraphNode* after, Ref<Function> f,
                               const cuabi_launch_config* config, const void* args,
                               size_t args_size) {
  same_device(*g, *f->module->device, "the kernel");
  if (!f->params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "kernel nodes need the kernel's parameter layout, which the driver does not report "
         "(cuFuncGetParamInfo needs CUDA 12.4)");
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(*f, c);
  check_packed_args(*f, args, args_size);
  if ((c.flags & (CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION |
                  CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START)) ||
      c.programmatic_event)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "launch configuration: a kernel node takes no programmatic fields "
         "(CUABI_LAUNCH_PROGRAMMATIC_*, programmatic_event); a graph orders its nodes by its "
         "edges");
  g->enter();
  CUlaunchAttribute attrs[kMaxLaunchAttributes];
  unsigned num_attrs = 0;
  if (!is_plain(c)) num_attrs = extended_config(*f, c, attrs, nullptr).numAttrs;
  // One pointer per parameter into the caller's block, at the kernel's
  // offsets: the driver copies the values during the call.
  std::vector<void*> pointers(f->params.size());
  for (size_t i = 0; i < f->params.size(); ++i)
    pointers[i] = const_cast<char*>(static_cast<const char*>(args) + f->params[i].offset);
  CUDA_KERNEL_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.func = f->function;
  p.gridDimX = c.grid_x;
  p.gridDimY = c.grid_y;
  p.gridDimZ = c.grid_z;
  p.blockDimX = c.block_x;
  p.blockDimY = c.block_y;
  p.blockDimZ = c.block_z;
  p.sharedMemBytes = c.shared_mem_bytes;
  p.kernelParams = pointers.empty() ? nullptr : pointers.data();
  CUgraph graph = g->graph;
  Ref<GraphNode> node =
      add_node(g, after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
        check(driver().cuGraphAddKernelNode(out, graph, deps, n, &p), "cuGraphAddKernelNode");
      });
  for (unsigned i = 0; i < num_attrs; ++i)
    check(driver().cuGraphKernelNodeSetAttribute(
              node->node, static_cast<CUkernelNodeAttrID>(attrs[i].id), &attrs[i].value),
          "cuGraphKernelNodeSetAttribute");
  keep(*g, std::move(f));
  return node;
}

Ref<GraphNode> add_copy_node(Ref<Graph> g, const GraphNode* after, Ref<Buffer> dst,
                             size_t dst_offset, Ref<Buffer> src, size_t src_offset, size_t bytes) {
  const CUDA_MEMCPY3D c = copy_params(*g, *dst, dst_offset, *src, src_offset, bytes);
  Ref<GraphNode> node = add_memcpy(g, after, c);
  keep(*g, std::move(dst));
  keep(*g, std::move(src));
  return node;
}

Ref<GraphNode> add_upload_node(Ref<Graph> g, const GraphNode* after, Ref<Buffer> dst,
                               size_t dst_offset, Ref<HostBuffer> src, size_t src_offset,
                               size_t bytes) {
  const CUDA_MEMCPY3D c = upload_params(*g, *dst, dst_offset, *src, src_offset, bytes);
  Ref<GraphNode> node = add_memcpy(g, after, c);
  keep(*g, std::move(dst));
  keep(*g, std::move(src));
  return node;
}

Ref<GraphNode> add_download_node(Ref<Graph> g, const GraphNode* after, Ref<HostBuffer> dst,
                                 size_t dst_offset, Ref<Buffer> src, size_t src_offset,
                                 size_t bytes) {
  const CUDA_MEMCPY3D c = download_params(*g, *dst, dst_offset, *src, src_offset, bytes);
  Ref<GraphNode> node = add_memcpy(g, after, c);
  keep(*g, std::move(dst));
  keep(*g, std::move(src));
  return node;
}

Ref<GraphNode> add_copy_3d_node(Ref<Graph> g, const GraphNode* after,
                                const cuabi_copy_3d_desc& d) {
  Ref<Buffer> src_buffer, dst_buffer;
  Ref<Array> src_array, dst_array;
  if (d.src_buffer) src_buffer = acquire<Buffer>(d.src_buffer, "desc->src_buffer");
  if (d.dst_buffer) dst_buffer = acquire<Buffer>(d.dst_buffer, "desc->dst_buffer");
  if (d.src_array) src_array = acquire<Array>(d.src_array, "desc->src_array");
  if (d.dst_array) dst_array = acquire<Array>(d.dst_array, "desc->dst_array");
  const CopySide src{"src", d.src_host, src_buffer.get(), src_array.get(),
                     d.src_x_bytes, d.src_y, d.src_z, d.src_pitch, d.src_height};
  const CopySide dst{"dst", d.dst_host, dst_buffer.get(), dst_array.get(),
                     d.dst_x_bytes, d.dst_y, d.dst_z, d.dst_pitch, d.dst_height};
  // Every check of cuabi_copy_3d.
  const Copy3dPlan plan = plan_copy_3d(src, dst, d.width_bytes, d.height, d.depth);
  for (const DeviceChild* side : {plan.src_side, plan.dst_side})
    if (side) same_device(*g, *side->device, side == plan.src_side ? "src" : "dst");
  if (plan.params.WidthInBytes == 0)
    fail_invalid("width_bytes is 0; a copy node copies at least 1 byte");
  Ref<GraphNode> node = add_memcpy(g, after, plan.params);
  if (src_buffer) keep(*g, std::move(src_buffer));
  if (dst_buffer) keep(*g, std::move(dst_buffer));
  if (src_array) keep(*g, std::move(src_array));
  if (dst_array) keep(*g, std::move(dst_array));
  return node;
}

Ref<GraphNode> add_fill_node(Ref<Graph> g, const GraphNode* after, Ref<Buffer> b, size_t offset,
                             uint32_t value, uint32_t element_size, size_t count) {
  const CUDA_MEMSET_NODE_PARAMS p = fill_params(*g, *b, offset, value, element_size, count);
  const CUgraph graph = g->graph;
  const CUcontext ctx = g->device->context();
  Ref<GraphNode> node =
      add_node(g, after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
        check(driver().cuGraphAddMemsetNode(out, graph, deps, n, &p, ctx), "cuGraphAddMemsetNode");
      });
  keep(*g, std::move(b));
  return node;
}

Ref<GraphNode> add_host_node(Ref<Graph> g, const GraphNode* after, cuabi_host_fn fn,
                             void* user_data) {
  if (!fn) fail_invalid("fn is NULL");
  check_after(*g, after, "after");
  Graph& root = g->root();
  std::shared_ptr<HostNodeCall> call;
  {
    std::lock_guard<std::mutex> lock(root.build_mutex);
    if (root.host_failures.empty()) root.host_failures.push_back(std::make_shared<HostFailures>());
    call = std::make_shared<HostNodeCall>(HostNodeCall{
        fn, user_data, std::static_pointer_cast<HostFailures>(root.host_failures.front())});
    root.blocks.push_back(call);
  }
  CUDA_HOST_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.fn = &host_node_trampoline;
  p.userData = call.get();
  const CUgraph graph = g->graph;
  return add_node(std::move(g), after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
    check(driver().cuGraphAddHostNode(out, graph, deps, n, &p), "cuGraphAddHostNode");
  });
}

Ref<GraphNode> add_event_node(Ref<Graph> g, const GraphNode* after, Ref<Event> e, bool record) {
  same_device(*g, *e->device, "the event");
  const CUgraph graph = g->graph;
  const CUevent event = e->event;
  Ref<GraphNode> node =
      add_node(g, after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
        if (record)
          check(driver().cuGraphAddEventRecordNode(out, graph, deps, n, event),
                "cuGraphAddEventRecordNode");
        else
          check(driver().cuGraphAddEventWaitNode(out, graph, deps, n, event),
                "cuGraphAddEventWaitNode");
      });
  keep(*g, std::move(e));
  return node;
}

Ref<GraphNode> add_child_graph_node(Ref<Graph> g, const GraphNode* after, Ref<Graph> child) {
  same_device(*g, *child->device, "the child graph");
  if (child->graph == g->graph) fail_invalid("child is the graph itself");
  const CUgraph graph = g->graph;
  const CUgraph child_graph = child->graph;
  Ref<GraphNode> node =
      add_node(g, after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
        check(driver().cuGraphAddChildGraphNode(out, graph, deps, n, child_graph),
              "cuGraphAddChildGraphNode");
      });
  // The copy's host nodes report where the child's do.
  std::vector<std::shared_ptr<void>> boxes;
  {
    Graph& croot = child->root();
    std::lock_guard<std::mutex> lock(croot.build_mutex);
    boxes = croot.host_failures;
  }
  Graph& root = g->root();
  {
    std::lock_guard<std::mutex> lock(root.build_mutex);
    if (root.host_failures.empty() && !boxes.empty())
      root.host_failures.push_back(std::make_shared<HostFailures>());
    for (auto& b : boxes)
      if (std::find(root.host_failures.begin(), root.host_failures.end(), b) ==
          root.host_failures.end())
        root.host_failures.push_back(b);
  }
  keep(*g, std::move(child));
  return node;
}

Ref<GraphNode> add_mem_alloc_node(Ref<Graph> g, const GraphNode* after, size_t bytes) {
  if (bytes == 0) fail_invalid("bytes is 0; an allocation node allocates at least 1 byte");
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = g->device->ordinal;
  p.bytesize = bytes;
  const CUgraph graph = g->graph;
  Graph* gp = g.get();
  Ref<GraphNode> node =
      add_node(std::move(g), after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
        check(driver().cuGraphAddMemAllocNode(out, graph, deps, n, &p), "cuGraphAddMemAllocNode");
      });
  std::lock_guard<std::mutex> lock(gp->root().build_mutex);
  gp->allocations[node->node] = p.dptr;
  return node;
}

uint64_t node_address(const GraphNode& node) {
  Graph& g = *node.graph;
  std::lock_guard<std::mutex> lock(g.root().build_mutex);
  auto it = g.allocations.find(node.node);
  if (it == g.allocations.end())
    fail_invalid("the node is not a memory allocation node (cuabi_graph_add_mem_alloc_node)");
  return it->second;
}

Ref<GraphNode> add_mem_free_node(Ref<Graph> g, const GraphNode* after, const GraphNode& alloc) {
  const CUdeviceptr address = node_address(alloc);
  if (alloc.graph->device.get() != g->device.get())
    fail_invalid("alloc is a node of device " + std::to_string(alloc.graph->device->ordinal) +
                 ", the graph of device " + std::to_string(g->device->ordinal));
  const CUgraph graph = g->graph;
  return add_node(std::move(g), after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
    check(driver().cuGraphAddMemFreeNode(out, graph, deps, n, address), "cuGraphAddMemFreeNode");
  });
}

uint64_t create_conditional_handle(Graph& g, uint32_t default_value) {
  g.enter();
  CUgraphConditionalHandle h = 0;
  check(driver().cuGraphConditionalHandleCreate(&h, g.graph, g.device->context(), default_value,
                                                CU_GRAPH_COND_ASSIGN_DEFAULT),
        "cuGraphConditionalHandleCreate");
  std::lock_guard<std::mutex> lock(g.root().build_mutex);
  g.conditional_handles.push_back(h);
  return h;
}

Ref<GraphNode> add_conditional_node(Ref<Graph> g, const GraphNode* after, uint64_t handle,
                                    cuabi_conditional_type type, uint32_t size) {
  switch (type) {
    case CUABI_CONDITIONAL_IF:
      if (size < 1 || size > 2)
        fail_invalid("size is " + std::to_string(size) +
                     "; an IF node has 1 body, or 2 with ELSE");
      break;
    case CUABI_CONDITIONAL_WHILE:
      if (size != 1) fail_invalid("size is " + std::to_string(size) + "; a WHILE node has 1 body");
      break;
    case CUABI_CONDITIONAL_SWITCH:
      if (size < 1)
        fail_invalid("size is 0; a SWITCH node has at least 1 case (one body per case)");
      break;
    default:
      fail_invalid("type " + std::to_string(type) + " is not a cuabi_conditional_type");
  }
  {
    std::lock_guard<std::mutex> lock(g->root().build_mutex);
    bool mine = false;
    for (const Graph* p = g.get(); p && !mine; p = p->parent.get())
      mine = std::find(p->conditional_handles.begin(), p->conditional_handles.end(), handle) !=
             p->conditional_handles.end();
    if (!mine)
      fail_invalid("conditional handle " + str(handle) +
                   " was not made for this graph or a graph it is a body of "
                   "(cuabi_graph_create_conditional_handle)");
  }
  CUgraphNodeParams np;
  std::memset(&np, 0, sizeof np);
  np.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  np.conditional.handle = handle;
  np.conditional.type = static_cast<CUgraphConditionalNodeType>(type);
  np.conditional.size = size;
  np.conditional.ctx = g->device->context();
  const CUgraph graph = g->graph;
  Graph* gp = g.get();
  Ref<GraphNode> node =
      add_node(std::move(g), after, [&](const CUgraphNode* deps, size_t n, CUgraphNode* out) {
        check(driver().cuGraphAddNode(out, graph, deps, n, &np), "cuGraphAddNode");
      });
  std::vector<CUgraph> bodies;
  if (np.conditional.phGraph_out)
    bodies.assign(np.conditional.phGraph_out, np.conditional.phGraph_out + size);
  std::lock_guard<std::mutex> lock(gp->root().build_mutex);
  gp->bodies[node->node] = std::move(bodies);
  return node;
}

Ref<Graph> node_body(Ref<GraphNode> node, size_t index) {
  Graph& g = *node->graph;
  CUgraph body = nullptr;
  {
    std::lock_guard<std::mutex> lock(g.root().build_mutex);
    auto it = g.bodies.find(node->node);
    if (it == g.bodies.end())
      fail_invalid("the node is not a conditional node (cuabi_graph_add_conditional_node)");
    if (index >= it->second.size())
      fail(CUABI_ERROR_OUT_OF_RANGE, "body " + str(index) + " is past the end: the node has " +
                                         str(it->second.size()) +
                                         (it->second.size() == 1 ? " body" : " bodies"));
    body = it->second[index];
  }
  Ref<Graph> b = Ref<Graph>::adopt(new Graph(g.device, body));
  b->owned = false;
  b->parent = node->graph;
  b->owner = Ref<Object>::share(node.get());
  return b;
}

namespace {

bool reaches(CUgraphNode from, CUgraphNode target, std::vector<CUgraphNode>& seen) {
  if (from == target) return true;
  if (std::find(seen.begin(), seen.end(), from) != seen.end()) return false;
  seen.push_back(from);
  size_t n = 0;
  check(driver().cuGraphNodeGetDependencies(from, nullptr, &n), "cuGraphNodeGetDependencies");
  std::vector<CUgraphNode> deps(n);
  if (n) check(driver().cuGraphNodeGetDependencies(from, deps.data(), &n),
               "cuGraphNodeGetDependencies");
  deps.resize(n);
  for (CUgraphNode d : deps)
    if (reaches(d, target, seen)) return true;
  return false;
}

}  // namespace

void add_dependency(GraphNode& node, const GraphNode& dependency) {
  if (node.graph->graph != dependency.graph->graph)
    fail_invalid("dependency is a node of another graph than node");
  if (node.node == dependency.node) fail_invalid("a node cannot depend on itself");
  node.graph->enter();
  // The edge dependency -> node closes a cycle when node already comes
  // before dependency.
  std::vector<CUgraphNode> seen;
  if (reaches(dependency.node, node.node, seen))
    fail_invalid("the dependency would make a cycle: dependency already depends on node");
  check(driver().cuGraphAddDependencies(node.graph->graph, &dependency.node, &node.node, 1),
        "cuGraphAddDependencies");
}

cuabi_graph_node_type node_type(const GraphNode& node) {
  node.graph->enter();
  CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
  check(driver().cuGraphNodeGetType(node.node, &t), "cuGraphNodeGetType");
  return static_cast<cuabi_graph_node_type>(t);
}

std::vector<CUgraphNode> node_edges(const GraphNode& node, bool dependents) {
  node.graph->enter();
  const DriverApi& d = driver();
  size_t n = 0;
  const char* call = dependents ? "cuGraphNodeGetDependentNodes" : "cuGraphNodeGetDependencies";
  auto get = [&](CUgraphNode* out, size_t* count) {
    return dependents ? d.cuGraphNodeGetDependentNodes(node.node, out, count)
                      : d.cuGraphNodeGetDependencies(node.node, out, count);
  };
  check(get(nullptr, &n), call);
  std::vector<CUgraphNode> nodes(n);
  if (n) check(get(nodes.data(), &n), call);
  nodes.resize(n);
  return nodes;
}

Ref<GraphNode> node_edge(const GraphNode& node, bool dependents, size_t index) {
  std::vector<CUgraphNode> nodes = node_edges(node, dependents);
  if (index >= nodes.size())
    fail(CUABI_ERROR_OUT_OF_RANGE,
         std::string(dependents ? "dependent " : "dependency ") + str(index) +
             " is past the end: the node has " + str(nodes.size()) +
             (dependents ? (nodes.size() == 1 ? " dependent" : " dependents")
                         : (nodes.size() == 1 ? " dependency" : " dependencies")));
  return make<GraphNode>(node.graph, nodes[index]);
}

Ref<Graph> clone_graph(Graph& g) {
  {
    // The driver clones no graph that holds a conditional node or is the
    // body of one; said here in cuabi's words, before the driver is asked.
    std::lock_guard<std::mutex> lock(g.root().build_mutex);
    if (g.parent)
      fail(CUABI_ERROR_NOT_SUPPORTED,
           "the graph is the body of a conditional node, and the driver clones no such graph: "
           "clone the graph at the top instead, if it holds no conditional node");
    if (!g.bodies.empty())
      fail(CUABI_ERROR_NOT_SUPPORTED,
           "the graph holds " + str(g.bodies.size()) +
               (g.bodies.size() == 1 ? " conditional node" : " conditional nodes") +
               ", and the driver clones no graph that holds one: build the graph again instead");
  }
  g.enter();
  CUgraph c = nullptr;
  check(driver().cuGraphClone(&c, g.graph), "cuGraphClone");
  Ref<Graph> out = Ref<Graph>::adopt(new Graph(g.device, c));
  Graph& root = g.root();
  std::lock_guard<std::mutex> lock(root.build_mutex);
  out->uses = root.uses;
  out->blocks = root.blocks;
  out->host_failures = root.host_failures;
  // The clone keeps the original (its bodies and their handles).
  out->uses.push_back(Ref<Object>::share(&g));
  return out;
}

void write_dot(Graph& g, const char* path) {
  g.enter();
  check(driver().cuGraphDebugDotPrint(g.graph, path, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE),
        "cuGraphDebugDotPrint");
}

void begin_capture_to_graph(Stream& s, Ref<Graph> g, const GraphNode* after,
                            cuabi_capture_mode mode) {
  if (mode != CUABI_CAPTURE_GLOBAL && mode != CUABI_CAPTURE_THREAD_LOCAL &&
      mode != CUABI_CAPTURE_RELAXED)
    fail_invalid("mode " + std::to_string(mode) + " is not a cuabi_capture_mode");
  same_device(*g, *s.device, "the stream");
  check_after(*g, after, "after");
  s.enter();
  const uint64_t tick = launch_tick();
  CUgraphNode deps[1] = {after ? after->node : nullptr};
  check(driver().cuStreamBeginCaptureToGraph(s.stream, g->graph, after ? deps : nullptr, nullptr,
                                             after ? 1 : 0,
                                             static_cast<CUstreamCaptureMode>(mode)),
        "cuStreamBeginCaptureToGraph");
  s.capture_tick.store(tick, std::memory_order_relaxed);
  s.capture_target = std::move(g);
}

Ref<GraphExec> instantiate_with_flags(Ref<Graph> g, uint32_t flags, const Pin<Stream>& upload) {
  const uint32_t known = CUABI_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH |
                         CUABI_GRAPH_INSTANTIATE_UPLOAD | CUABI_GRAPH_INSTANTIATE_DEVICE_LAUNCH |
                         CUABI_GRAPH_INSTANTIATE_USE_NODE_PRIORITY;
  if (flags & ~known)
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags & ~known));
  if (!g->owned)
    fail_invalid("the graph is a conditional node's body; instantiate the graph holding it");
  g->enter();
  CUDA_GRAPH_INSTANTIATE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.flags = flags;
  p.hUploadStream = (flags & CUABI_GRAPH_INSTANTIATE_UPLOAD) ? stream_for(upload, *g->device)
                                                             : nullptr;
  CUgraphExec e = nullptr;
  const CUresult r = driver().cuGraphInstantiateWithParams(&e, g->graph, &p);
  if (r != CUDA_SUCCESS && p.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS) {
    const char* why = "";
    switch (p.result_out) {
      case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE:
        why = ": the graph's structure is invalid, e.g. a cycle or an allocation freed twice "
              "(CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE)";
        break;
      case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
        why = ": a node's operation is not supported with these flags, e.g. for device launch "
              "(CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED)";
        break;
      case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
        why = ": device launch of a graph spanning several contexts "
              "(CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED)";
        break;
      case CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED:
        why = ": a conditional handle is used by no conditional node "
              "(CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED)";
        break;
      default:
        break;
    }
    fail(CUABI_ERROR_INVALID_ARGUMENT, std::string("the graph cannot be instantiated") + why, r);
  }
  check(r, "cuGraphInstantiateWithParams");
  return Ref<GraphExec>::adopt(new GraphExec(g, e));
}

void launch_graph(GraphExec& e, const Pin<Stream>& stream) {
  e.enter();
  Graph& root = e.origin()->root();
  std::vector<std::shared_ptr<void>> boxes;
  {
    std::lock_guard<std::mutex> lock(root.build_mutex);
    boxes = root.host_failures;
  }
  if (!boxes.empty() && !stream) {
    // Launched on the default stream: what the last launch's host nodes
    // reported is answered now, and nothing is launched.
    std::vector<std::pair<int32_t, std::string>> failed = take_failures(root);
    if (failed.size() == 1)
      fail(CUABI_ERROR_HOST_FUNCTION, "a host node failed: " + failed[0].second);
    if (failed.size() > 1)
      fail(CUABI_ERROR_HOST_FUNCTION, std::to_string(failed.size()) +
                                          " host nodes failed; the first: " + failed[0].second);
  }
  check(driver().cuGraphLaunch(e.exec, stream_for(stream, *e.device)), "cuGraphLaunch");
  if (boxes.empty() || !stream) return;
  Stream* s = stream.get();
  Ref<Stream> ref = Ref<Stream>::share(s);
  FailureMove* move = new FailureMove{s, std::move(boxes)};
  const CUresult r = driver().cuLaunchHostFunc(s->stream, &move_failures, move);
  if (r != CUDA_SUCCESS) {
    delete move;
    check(r, "cuLaunchHostFunc");
  }
  ref.detach();  // the reference now belongs to the call
}

// ---------------------------------------------------------------------------
// Updates of an instantiated graph's nodes in place
// ---------------------------------------------------------------------------

namespace {

const char* kind_name(CUgraphNodeType t) {
  switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "a kernel node";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "a copy node";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "a fill node";
    case CU_GRAPH_NODE_TYPE_HOST: return "a host node";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "a child graph node";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "an empty node";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "an event wait node";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "an event record node";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "a memory allocation node";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "a memory free node";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "a conditional node";
    default: return "a node of another kind";
  }
}

// Checks that `node` names a node of `e` (a node of the graph `e` was
// instantiated from, or of one of its bodies) and answers its driver type.
CUgraphNodeType node_of(GraphExec& e, const GraphNode& node) {
  if (&node.graph->root() != e.origin().get())
    fail_invalid("the node is not a node of the graph this executable graph was instantiated "
                 "from");
  e.enter();
  CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
  check(driver().cuGraphNodeGetType(node.node, &t), "cuGraphNodeGetType");
  return t;
}

void need_kind(CUgraphNodeType have, CUgraphNodeType want) {
  if (have != want)
    fail_invalid(std::string("the node is ") + kind_name(have) + ", not " + kind_name(want) +
                 "; an update keeps a node's kind");
}

// What a copy node copies, told from its parameters: "copy" (buffer to
// buffer), "upload", "download", or "3D copy" for any other (a box, an array).
const char* copy_kind(const CUDA_MEMCPY3D& c) {
  const bool linear = c.Height <= 1 && c.Depth <= 1 && !c.srcArray && !c.dstArray &&
                      c.srcXInBytes == 0 && c.dstXInBytes == 0 && c.srcY == 0 && c.dstY == 0 &&
                      c.srcZ == 0 && c.dstZ == 0;
  if (!linear) return "a 3D copy node";
  if (c.srcMemoryType == CU_MEMORYTYPE_DEVICE && c.dstMemoryType == CU_MEMORYTYPE_DEVICE)
    return "a copy node";
  if (c.srcMemoryType == CU_MEMORYTYPE_HOST && c.dstMemoryType == CU_MEMORYTYPE_DEVICE)
    return "an upload node";
  if (c.srcMemoryType == CU_MEMORYTYPE_DEVICE && c.dstMemoryType == CU_MEMORYTYPE_HOST)
    return "a download node";
  return "a 3D copy node";
}

void set_memcpy(GraphExec& e, const GraphNode& node, const CUDA_MEMCPY3D& c, const char* want) {
  need_kind(node_of(e, node), CU_GRAPH_NODE_TYPE_MEMCPY);
  CUDA_MEMCPY3D now;
  std::memset(&now, 0, sizeof now);
  check(driver().cuGraphMemcpyNodeGetParams(node.node, &now), "cuGraphMemcpyNodeGetParams");
  const char* have = copy_kind(now);
  if (std::strcmp(have, want) != 0) {
    if (std::strcmp(have, "a 3D copy node") == 0)
      fail(CUABI_ERROR_NOT_SUPPORTED,
           "the node is a 3D copy node, and the driver updates only copies of one dimension in "
           "an executable graph: change the graph and call cuabi_graph_exec_update");
    fail_invalid(std::string("the node is ") + have + ", not " + want +
                 "; an update keeps a node's kind");
  }
  check(driver().cuGraphExecMemcpyNodeSetParams(e.exec, node.node, &c, e.device->context()),
        "cuGraphExecMemcpyNodeSetParams");
}

// What `node` uses after an update, in place of what its last update used
// (the graph keeps what the node was built with).
void keep_used(GraphExec& e, const GraphNode& node, std::vector<Ref<Object>> used) {
  std::lock_guard<std::mutex> lock(e.updates_mutex);
  e.node_uses[node.node] = std::move(used);
}

// The parameter layout of a kernel the driver names, as Function reads it.
std::vector<ParamInfo> layout_of(CUfunction f) {
  std::vector<ParamInfo> params;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    const CUresult r = driver().cuFuncGetParamInfo(f, i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;
    check(r, "cuFuncGetParamInfo");
    params.push_back({offset, size});
  }
  return params;
}

std::string signature(const std::vector<ParamInfo>& params) {
  std::string s = std::to_string(params.size()) +
                  (params.size() == 1 ? " parameter (" : " parameters (");
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", " : "") + str(params[i].size) + " bytes at " + str(params[i].offset);
  return s + ")";
}

}  // namespace

void exec_set_kernel_node(GraphExec& e, const GraphNode& node, Ref<Function> f,
                          const cuabi_launch_config* config, const void* args, size_t args_size) {
  if (!config) fail_invalid("config is NULL");
  const Graph& g = *e.origin();
  same_device(g, *f->module->device, "the kernel");
  if (!f->params_known)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "kernel nodes need the kernel's parameter layout, which the driver does not report "
         "(cuFuncGetParamInfo needs CUDA 12.4)");
  cuabi_launch_config copy;
  const cuabi_launch_config& c = config_of(config, &copy);
  check_config(*f, c);
  check_packed_args(*f, args, args_size);
  if (!is_plain(c))
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "launch configuration: an executable graph's kernel node takes a new grid, block, "
         "shared memory and arguments; its clusters, cooperative launch, priority and other "
         "launch attributes stay as instantiated (the driver changes none in place): give only "
         "grid, block and shared memory, or change the graph and call cuabi_graph_exec_update");
  need_kind(node_of(e, node), CU_GRAPH_NODE_TYPE_KERNEL);
  const DriverApi& d = driver();
  CUDA_KERNEL_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  check(d.cuGraphKernelNodeGetParams(node.node, &p), "cuGraphKernelNodeGetParams");
  if (p.func != f->function) {
    const std::vector<ParamInfo> was = layout_of(p.func);
    bool same = was.size() == f->params.size();
    for (size_t i = 0; same && i < was.size(); ++i)
      same = was[i].offset == f->params[i].offset && was[i].size == f->params[i].size;
    if (!same) {
      const char* name = nullptr;
      std::string other = d.cuFuncGetName(&name, p.func) == CUDA_SUCCESS && name
                              ? "'" + to_utf8(name) + "'"
                              : std::string("the node's kernel");
      t_missing_entry_point = nullptr;
      fail_invalid("kernel '" + f->name + "' takes " + signature(f->params) + " and the node's " +
                   "kernel " + other + " " + signature(was) +
                   "; an update keeps the kernel's signature");
    }
  }
  std::vector<void*> pointers(f->params.size());
  for (size_t i = 0; i < f->params.size(); ++i)
    pointers[i] = const_cast<char*>(static_cast<const char*>(args) + f->params[i].offset);
  p.func = f->function;
  p.gridDimX = c.grid_x;
  p.gridDimY = c.grid_y;
  p.gridDimZ = c.grid_z;
  p.blockDimX = c.block_x;
  p.blockDimY = c.block_y;
  p.blockDimZ = c.block_z;
  p.sharedMemBytes = c.shared_mem_bytes;
  p.kernelParams = pointers.empty() ? nullptr : pointers.data();
  p.extra = nullptr;
  p.kern = nullptr;
  p.ctx = nullptr;
  check(d.cuGraphExecKernelNodeSetParams(e.exec, node.node, &p), "cuGraphExecKernelNodeSetParams");
  keep_used(e, node, {Ref<Object>::share(f.get())});
}

void exec_set_copy_node(GraphExec& e, const GraphNode& node, Ref<Buffer> dst, size_t dst_offset,
                        Ref<Buffer> src, size_t src_offset, size_t bytes) {
  const CUDA_MEMCPY3D c = copy_params(*e.origin(), *dst, dst_offset, *src, src_offset, bytes);
  set_memcpy(e, node, c, "a copy node");
  keep_used(e, node, {Ref<Object>::share(dst.get()), Ref<Object>::share(src.get())});
}

void exec_set_upload_node(GraphExec& e, const GraphNode& node, Ref<Buffer> dst,
                          size_t dst_offset, Ref<HostBuffer> src, size_t src_offset,
                          size_t bytes) {
  const CUDA_MEMCPY3D c = upload_params(*e.origin(), *dst, dst_offset, *src, src_offset, bytes);
  set_memcpy(e, node, c, "an upload node");
  keep_used(e, node, {Ref<Object>::share(dst.get()), Ref<Object>::share(src.get())});
}

void exec_set_download_node(GraphExec& e, const GraphNode& node, Ref<HostBuffer> dst,
                            size_t dst_offset, Ref<Buffer> src, size_t src_offset, size_t bytes) {
  const CUDA_MEMCPY3D c = download_params(*e.origin(), *dst, dst_offset, *src, src_offset, bytes);
  set_memcpy(e, node, c, "a download node");
  keep_used(e, node, {Ref<Object>::share(dst.get()), Ref<Object>::share(src.get())});
}

void exec_set_fill_node(GraphExec& e, const GraphNode& node, Ref<Buffer> b, size_t offset,
                        uint32_t value, uint32_t element_size, size_t count) {
  const CUDA_MEMSET_NODE_PARAMS p =
      fill_params(*e.origin(), *b, offset, value, element_size, count);
  need_kind(node_of(e, node), CU_GRAPH_NODE_TYPE_MEMSET);
  check(driver().cuGraphExecMemsetNodeSetParams(e.exec, node.node, &p, e.device->context()),
        "cuGraphExecMemsetNodeSetParams");
  keep_used(e, node, {Ref<Object>::share(b.get())});
}

void exec_set_host_node(GraphExec& e, const GraphNode& node, cuabi_host_fn fn, void* user_data) {
  if (!fn) fail_invalid("fn is NULL");
  need_kind(node_of(e, node), CU_GRAPH_NODE_TYPE_HOST);
  // The failures go where the graph's host nodes report theirs (a host node
  // exists, so the box does).
  Graph& root = *e.origin();
  std::shared_ptr<void> box;
  {
    std::lock_guard<std::mutex> lock(root.build_mutex);
    if (root.host_failures.empty()) root.host_failures.push_back(std::make_shared<HostFailures>());
    box = root.host_failures.front();
  }
  auto call = std::make_shared<HostNodeCall>(
      HostNodeCall{fn, user_data, std::static_pointer_cast<HostFailures>(box)});
  CUDA_HOST_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.fn = &host_node_trampoline;
  p.userData = call.get();
  std::lock_guard<std::mutex> lock(e.updates_mutex);
  check(driver().cuGraphExecHostNodeSetParams(e.exec, node.node, &p),
        "cuGraphExecHostNodeSetParams");
  // The block the node points to now lives as long as the executable graph
  // (the previous one too: a launch under way may still call it).
  e.blocks.push_back(std::move(call));
}

void exec_set_event_node(GraphExec& e, const GraphNode& node, Ref<Event> event) {
  same_device(*e.origin(), *event->device, "the event");
  const CUgraphNodeType t = node_of(e, node);
  if (t == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
    check(driver().cuGraphExecEventRecordNodeSetEvent(e.exec, node.node, event->event),
          "cuGraphExecEventRecordNodeSetEvent");
  else if (t == CU_GRAPH_NODE_TYPE_WAIT_EVENT)
    check(driver().cuGraphExecEventWaitNodeSetEvent(e.exec, node.node, event->event),
          "cuGraphExecEventWaitNodeSetEvent");
  else
    fail_invalid(std::string("the node is ") + kind_name(t) +
                 ", not an event record or event wait node; an update keeps a node's kind");
  keep_used(e, node, {Ref<Object>::share(event.get())});
}

namespace {

void need_switchable(CUgraphNodeType t) {
  if (t != CU_GRAPH_NODE_TYPE_KERNEL && t != CU_GRAPH_NODE_TYPE_MEMCPY &&
      t != CU_GRAPH_NODE_TYPE_MEMSET)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         std::string("the node is ") + kind_name(t) +
             "; the driver enables and disables only kernel, copy and fill nodes");
}

}  // namespace

void exec_set_node_enabled(GraphExec& e, const GraphNode& node, bool enabled) {
  need_switchable(node_of(e, node));
  check(driver().cuGraphNodeSetEnabled(e.exec, node.node, enabled ? 1 : 0),
        "cuGraphNodeSetEnabled");
}

bool exec_node_enabled(GraphExec& e, const GraphNode& node) {
  need_switchable(node_of(e, node));
  unsigned on = 0;
  check(driver().cuGraphNodeGetEnabled(e.exec, node.node, &on), "cuGraphNodeGetEnabled");
  return on != 0;
}

}  // namespace cuabi
