// Shims for stream capture and graphs.
#include "shim.hpp"
#include "stream.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_stream_begin_capture(cuabi_stream stream, cuabi_capture_mode mode) {
  return with(__func__, stream, "stream", [&](Stream& s) {
    if (mode != CUABI_CAPTURE_GLOBAL && mode != CUABI_CAPTURE_THREAD_LOCAL &&
        mode != CUABI_CAPTURE_RELAXED)
      fail_invalid("mode " + std::to_string(mode) + " is not a cuabi_capture_mode");
    s.enter();
    const uint64_t tick = launch_tick();
    check(driver().cuStreamBeginCapture(s.stream, static_cast<CUstreamCaptureMode>(mode)),
          "cuStreamBeginCapture");
    s.capture_tick.store(tick, std::memory_order_relaxed);
  });
}

cuabi_status cuabi_stream_end_capture(cuabi_stream stream, cuabi_graph* out) {
  return with(__func__, stream, "stream", [&](Stream& s) {
    need(out, "out");
    s.enter();
    CUgraph g = nullptr;
    const CUresult r = driver().cuStreamEndCapture(s.stream, &g);
    s.flush_deferred_frees();
    // The launches of the capture went into the graph: none of them ran.
    const uint64_t since = s.capture_tick.exchange(0, std::memory_order_relaxed);
    if (since) s.launches.forget_since(since);
    Ref<Graph> target = std::move(s.capture_target);
    check(r, "cuStreamEndCapture");
    if (target) {
      // Captured into an existing graph: the same graph, a new handle.
      target->nodes_changed();
      *out = publish<cuabi_graph>(std::move(target));
      return;
    }
    *out = publish<cuabi_graph>(Ref<Graph>::adopt(new Graph(s.device, g)));
  });
}

void cuabi_graph_release(cuabi_graph graph) { release_handle<Graph>(graph); }

cuabi_status cuabi_graph_get_node_count(cuabi_graph graph, size_t* count) {
  return get(__func__, graph, "graph", count, "count", [](const Graph& g) {
    g.enter();
    size_t n = 0;
    check(driver().cuGraphGetNodes(g.graph, nullptr, &n), "cuGraphGetNodes");
    return n;
  });
}

cuabi_status cuabi_graph_instantiate(cuabi_graph graph, cuabi_graph_exec* out) {
  return create(__func__, graph, "graph", out, [](Ref<Graph> g) {
    g->enter();
    CUgraphExec e = nullptr;
    check(driver().cuGraphInstantiateWithFlags(&e, g->graph, 0), "cuGraphInstantiateWithFlags");
    return Ref<GraphExec>::adopt(new GraphExec(g, e));
  });
}

void cuabi_graph_exec_release(cuabi_graph_exec exec) { release_handle<GraphExec>(exec); }

cuabi_status cuabi_graph_exec_launch(cuabi_graph_exec exec, cuabi_stream stream) {
  return on_stream(__func__, exec, "exec", stream, [](GraphExec& e, const Pin<Stream>& s) {
    launch_graph(e, s);
  });
}

cuabi_status cuabi_graph_exec_upload(cuabi_graph_exec exec, cuabi_stream stream) {
  return on_stream(__func__, exec, "exec", stream,
                   [](GraphExec& e, const Pin<Stream>& s) { upload(e, s); });
}

cuabi_status cuabi_graph_get_kernel_node_count(cuabi_graph graph, size_t* count) {
  return get(__func__, graph, "graph", count, "count", [](Graph& g) {
    g.enter();
    return g.kernel_nodes().size();
  });
}

cuabi_status cuabi_graph_exec_set_kernel_node_args(cuabi_graph_exec exec, size_t index,
                                                   cuabi_function function, const void* args,
                                                   size_t args_size) {
  return guard(__func__, [&] {
    Pin<GraphExec> e(exec, "exec");
    Pin<Function> f(function, "function");
    e->set_kernel_node_args(index, *f.get(), args, args_size);
  });
}

cuabi_status cuabi_graph_exec_update(cuabi_graph_exec exec, cuabi_graph graph) {
  return guard(__func__, [&] {
    Pin<GraphExec> e(exec, "exec");
    Ref<Graph> g = acquire<Graph>(graph, "graph");
    e->update(std::move(g));
  });
}

}  // extern "C"

// ---------------------------------------------------------------------------
// Graphs built node by node (graph_nodes.cpp)
// ---------------------------------------------------------------------------

namespace {

// Adds a node: pins the graph and the optional `after`, checks `out`.
template <class Add>
cuabi_status add(const char* fn, cuabi_graph graph, cuabi_graph_node after, cuabi_graph_node* out,
                 Add&& body) noexcept {
  return guard(fn, [&] {
    Ref<Graph> g = acquire<Graph>(graph, "graph");
    Pin<GraphNode> a(after, "after", true);
    need(out, "out");
    *out = publish<cuabi_graph_node>(body(std::move(g), a.get()));
  });
}

}  // namespace

extern "C" {

cuabi_status cuabi_graph_create(cuabi_device device, cuabi_graph* out) {
  return create(__func__, device, "device", out,
                [](Ref<Device> d) { return create_graph(std::move(d)); });
}

cuabi_status cuabi_graph_add_empty_node(cuabi_graph graph, cuabi_graph_node after,
                                        cuabi_graph_node* out) {
  return add(__func__, graph, after, out,
             [&](Ref<Graph> g, const GraphNode* a) { return add_empty_node(std::move(g), a); });
}

cuabi_status cuabi_graph_add_kernel_node(cuabi_graph graph, cuabi_graph_node after,
                                         cuabi_function function, const cuabi_launch_config* config,
                                         const void* args, size_t args_size,
                                         cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    Ref<Function> f = acquire<Function>(function, "function");
    return add_kernel_node(std::move(g), a, std::move(f), config, args, args_size);
  });
}

cuabi_status cuabi_graph_add_copy_node(cuabi_graph graph, cuabi_graph_node after, cuabi_buffer dst,
                                       size_t dst_offset, cuabi_buffer src, size_t src_offset,
                                       size_t bytes, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    Ref<Buffer> d = acquire<Buffer>(dst, "dst");
    Ref<Buffer> s = acquire<Buffer>(src, "src");
    return add_copy_node(std::move(g), a, std::move(d), dst_offset, std::move(s), src_offset,
                         bytes);
  });
}

cuabi_status cuabi_graph_add_upload_node(cuabi_graph graph, cuabi_graph_node after,
                                         cuabi_buffer dst, size_t dst_offset,
                                         cuabi_host_buffer src, size_t src_offset, size_t bytes,
                                         cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    Ref<Buffer> d = acquire<Buffer>(dst, "dst");
    Ref<HostBuffer> s = acquire<HostBuffer>(src, "src");
    return add_upload_node(std::move(g), a, std::move(d), dst_offset, std::move(s), src_offset,
                           bytes);
  });
}

cuabi_status cuabi_graph_add_download_node(cuabi_graph graph, cuabi_graph_node after,
                                           cuabi_host_buffer dst, size_t dst_offset,
                                           cuabi_buffer src, size_t src_offset, size_t bytes,
                                           cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    Ref<HostBuffer> d = acquire<HostBuffer>(dst, "dst");
    Ref<Buffer> s = acquire<Buffer>(src, "src");
    return add_download_node(std::move(g), a, std::move(d), dst_offset, std::move(s), src_offset,
                             bytes);
  });
}

cuabi_status cuabi_graph_add_fill_node(cuabi_graph graph, cuabi_graph_node after,
                                       cuabi_buffer buffer, size_t offset, uint32_t value,
                                       uint32_t element_size, size_t count,
                                       cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    Ref<Buffer> b = acquire<Buffer>(buffer, "buffer");
    return add_fill_node(std::move(g), a, std::move(b), offset, value, element_size, count);
  });
}

cuabi_status cuabi_graph_add_host_node(cuabi_graph graph, cuabi_graph_node after,
                                       cuabi_host_fn fn, void* user_data, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    return add_host_node(std::move(g), a, fn, user_data);
  });
}

cuabi_status cuabi_graph_add_event_record_node(cuabi_graph graph, cuabi_graph_node after,
                                               cuabi_event event, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    return add_event_node(std::move(g), a, acquire<Event>(event, "event"), true);
  });
}

cuabi_status cuabi_graph_add_event_wait_node(cuabi_graph graph, cuabi_graph_node after,
                                             cuabi_event event, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    return add_event_node(std::move(g), a, acquire<Event>(event, "event"), false);
  });
}

cuabi_status cuabi_graph_add_child_graph_node(cuabi_graph graph, cuabi_graph_node after,
                                              cuabi_graph child, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    return add_child_graph_node(std::move(g), a, acquire<Graph>(child, "child"));
  });
}

cuabi_status cuabi_graph_add_mem_alloc_node(cuabi_graph graph, cuabi_graph_node after,
                                            size_t bytes, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    return add_mem_alloc_node(std::move(g), a, bytes);
  });
}

cuabi_status cuabi_graph_add_mem_free_node(cuabi_graph graph, cuabi_graph_node after,
                                           cuabi_graph_node alloc, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    Pin<GraphNode> al(alloc, "alloc");
    return add_mem_free_node(std::move(g), a, *al.get());
  });
}

cuabi_status cuabi_graph_create_conditional_handle(cuabi_graph graph, uint32_t default_value,
                                                   uint64_t* handle) {
  return get(__func__, graph, "graph", handle, "handle",
             [&](Graph& g) { return create_conditional_handle(g, default_value); });
}

cuabi_status cuabi_graph_add_conditional_node(cuabi_graph graph, cuabi_graph_node after,
                                              uint64_t handle, cuabi_conditional_type type,
                                              uint32_t size, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    return add_conditional_node(std::move(g), a, handle, type, size);
  });
}

cuabi_status cuabi_graph_node_add_dependency(cuabi_graph_node node, cuabi_graph_node dependency) {
  return guard(__func__, [&] {
    Pin<GraphNode> n(node, "node");
    Pin<GraphNode> d(dependency, "dependency");
    add_dependency(*n.get(), *d.get());
  });
}

void cuabi_graph_node_release(cuabi_graph_node node) { release_handle<GraphNode>(node); }

cuabi_status cuabi_graph_node_get_type(cuabi_graph_node node, cuabi_graph_node_type* type) {
  return get(__func__, node, "node", type, "type", [](GraphNode& n) { return node_type(n); });
}

cuabi_status cuabi_graph_node_get_dependency_count(cuabi_graph_node node, size_t* count) {
  return get(__func__, node, "node", count, "count",
             [](GraphNode& n) { return node_edges(n, false).size(); });
}

cuabi_status cuabi_graph_node_get_dependency(cuabi_graph_node node, size_t index,
                                             cuabi_graph_node* out) {
  return guard(__func__, [&] {
    Pin<GraphNode> n(node, "node");
    need(out, "out");
    *out = publish<cuabi_graph_node>(node_edge(*n.get(), false, index));
  });
}

cuabi_status cuabi_graph_node_get_dependent_count(cuabi_graph_node node, size_t* count) {
  return get(__func__, node, "node", count, "count",
             [](GraphNode& n) { return node_edges(n, true).size(); });
}

cuabi_status cuabi_graph_node_get_dependent(cuabi_graph_node node, size_t index,
                                            cuabi_graph_node* out) {
  return guard(__func__, [&] {
    Pin<GraphNode> n(node, "node");
    need(out, "out");
    *out = publish<cuabi_graph_node>(node_edge(*n.get(), true, index));
  });
}

cuabi_status cuabi_graph_node_get_address(cuabi_graph_node node, uint64_t* address) {
  return get(__func__, node, "node", address, "address",
             [](GraphNode& n) { return static_cast<uint64_t>(node_address(n)); });
}

cuabi_status cuabi_graph_node_get_body(cuabi_graph_node node, size_t index, cuabi_graph* out) {
  return create(__func__, node, "node", out,
                [&](Ref<GraphNode> n) { return node_body(std::move(n), index); });
}

cuabi_status cuabi_graph_clone(cuabi_graph graph, cuabi_graph* out) {
  return guard(__func__, [&] {
    Pin<Graph> g(graph, "graph");
    need(out, "out");
    *out = publish<cuabi_graph>(clone_graph(*g.get()));
  });
}

cuabi_status cuabi_graph_write_dot(cuabi_graph graph, const char* path) {
  return with(__func__, graph, "graph", [&](Graph& g) {
    need(path, "path");
    write_dot(g, path);
  });
}

cuabi_status cuabi_stream_begin_capture_to_graph(cuabi_stream stream, cuabi_graph graph,
                                                 cuabi_graph_node after, cuabi_capture_mode mode) {
  return with(__func__, stream, "stream", [&](Stream& s) {
    Ref<Graph> g = acquire<Graph>(graph, "graph");
    Pin<GraphNode> a(after, "after", true);
    begin_capture_to_graph(s, std::move(g), a.get(), mode);
  });
}

cuabi_status cuabi_graph_instantiate_with_flags(cuabi_graph graph,
                                                cuabi_graph_instantiate_flags flags,
                                                cuabi_stream upload_stream, cuabi_graph_exec* out) {
  return guard(__func__, [&] {
    Ref<Graph> g = acquire<Graph>(graph, "graph");
    Pin<Stream> s(upload_stream, "upload_stream", true);
    need(out, "out");
    *out = publish<cuabi_graph_exec>(instantiate_with_flags(std::move(g), flags, s));
  });
}

cuabi_status cuabi_graph_add_copy_3d_node(cuabi_graph graph, cuabi_graph_node after,
                                          const cuabi_copy_3d_desc* desc, cuabi_graph_node* out) {
  return add(__func__, graph, after, out, [&](Ref<Graph> g, const GraphNode* a) {
    need(desc, "desc");
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
    read_struct(desc, &d, "desc");
    return add_copy_3d_node(std::move(g), a, d);
  });
}

}  // extern "C"

// ---------------------------------------------------------------------------
// Updates of an executable graph's nodes in place (graph_nodes.cpp)
// ---------------------------------------------------------------------------

namespace {

// Pins the executable graph and the node, then runs `body`.
template <class Body>
cuabi_status update(const char* fn, cuabi_graph_exec exec, cuabi_graph_node node,
                    Body&& body) noexcept {
  return guard(fn, [&] {
    Pin<GraphExec> e(exec, "exec");
    Pin<GraphNode> n(node, "node");
    body(*e.get(), *n.get());
  });
}

}  // namespace

extern "C" {

cuabi_status cuabi_graph_exec_set_kernel_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                              cuabi_function function,
                                              const cuabi_launch_config* config, const void* args,
                                              size_t args_size) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_kernel_node(e, n, acquire<Function>(function, "function"), config, args, args_size);
  });
}

cuabi_status cuabi_graph_exec_set_copy_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                            cuabi_buffer dst, size_t dst_offset, cuabi_buffer src,
                                            size_t src_offset, size_t bytes) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_copy_node(e, n, acquire<Buffer>(dst, "dst"), dst_offset, acquire<Buffer>(src, "src"),
                       src_offset, bytes);
  });
}

cuabi_status cuabi_graph_exec_set_upload_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                              cuabi_buffer dst, size_t dst_offset,
                                              cuabi_host_buffer src, size_t src_offset,
                                              size_t bytes) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_upload_node(e, n, acquire<Buffer>(dst, "dst"), dst_offset,
                         acquire<HostBuffer>(src, "src"), src_offset, bytes);
  });
}

cuabi_status cuabi_graph_exec_set_download_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                                cuabi_host_buffer dst, size_t dst_offset,
                                                cuabi_buffer src, size_t src_offset,
                                                size_t bytes) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_download_node(e, n, acquire<HostBuffer>(dst, "dst"), dst_offset,
                           acquire<Buffer>(src, "src"), src_offset, bytes);
  });
}

cuabi_status cuabi_graph_exec_set_fill_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                            cuabi_buffer buffer, size_t offset, uint32_t value,
                                            uint32_t element_size, size_t count) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_fill_node(e, n, acquire<Buffer>(buffer, "buffer"), offset, value, element_size,
                       count);
  });
}

cuabi_status cuabi_graph_exec_set_host_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                            cuabi_host_fn fn, void* user_data) {
  return update(__func__, exec, node,
                [&](GraphExec& e, const GraphNode& n) { exec_set_host_node(e, n, fn, user_data); });
}

cuabi_status cuabi_graph_exec_set_event_node(cuabi_graph_exec exec, cuabi_graph_node node,
                                             cuabi_event event) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_event_node(e, n, acquire<Event>(event, "event"));
  });
}

cuabi_status cuabi_graph_exec_set_node_enabled(cuabi_graph_exec exec, cuabi_graph_node node,
                                               int32_t enabled) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    exec_set_node_enabled(e, n, enabled != 0);
  });
}

cuabi_status cuabi_graph_exec_get_node_enabled(cuabi_graph_exec exec, cuabi_graph_node node,
                                               int32_t* enabled) {
  return update(__func__, exec, node, [&](GraphExec& e, const GraphNode& n) {
    need(enabled, "enabled");
    *enabled = exec_node_enabled(e, n) ? 1 : 0;
  });
}

cuabi_status cuabi_graph_exec_get_launch_handle(cuabi_graph_exec exec, uint64_t* cu_graph_exec) {
  return get(__func__, exec, "exec", cu_graph_exec, "cu_graph_exec",
             [](const GraphExec& e) { return reinterpret_cast<uint64_t>(e.exec); });
}

}  // extern "C"
