// Graphs built node by node: nodes of every kind, conditional nodes, edges,
// clones, capture into an existing graph and instantiation with flags.
#pragma once

#include "objects.hpp"

namespace cuabi {

// A node of a graph; keeps the graph (and so what its nodes use) alive.
class GraphNode : public Object {
 public:
  static constexpr Kind kKind = Kind::GraphNode;
  GraphNode(Ref<Graph> graph, CUgraphNode node)
      : Object(kKind), graph(std::move(graph)), node(node) {}
  Ref<Graph> graph;
  CUgraphNode node;
};

Ref<Graph> create_graph(Ref<Device> device);
Ref<GraphNode> add_empty_node(Ref<Graph> g, const GraphNode* after);
Ref<GraphNode> add_kernel_node(Ref<Graph> g, const GraphNode* after, Ref<Function> f,
                               const cuabi_launch_config* config, const void* args,
                               size_t args_size);
Ref<GraphNode> add_copy_node(Ref<Graph> g, const GraphNode* after, Ref<Buffer> dst,
                             size_t dst_offset, Ref<Buffer> src, size_t src_offset, size_t bytes);
Ref<GraphNode> add_upload_node(Ref<Graph> g, const GraphNode* after, Ref<Buffer> dst,
                               size_t dst_offset, Ref<HostBuffer> src, size_t src_offset,
                               size_t bytes);
Ref<GraphNode> add_download_node(Ref<Graph> g, const GraphNode* after, Ref<HostBuffer> dst,
                                 size_t dst_offset, Ref<Buffer> src, size_t src_offset,
                                 size_t bytes);
// A node copying the box `desc` describes, checked as cuabi_copy_3d checks.
Ref<GraphNode> add_copy_3d_node(Ref<Graph> g, const GraphNode* after,
                                const cuabi_copy_3d_desc& desc);
Ref<GraphNode> add_fill_node(Ref<Graph> g, const GraphNode* after, Ref<Buffer> b, size_t offset,
                             uint32_t value, uint32_t element_size, size_t count);
Ref<GraphNode> add_host_node(Ref<Graph> g, const GraphNode* after, cuabi_host_fn fn,
                             void* user_data);
Ref<GraphNode> add_event_node(Ref<Graph> g, const GraphNode* after, Ref<Event> e, bool record);
Ref<GraphNode> add_child_graph_node(Ref<Graph> g, const GraphNode* after, Ref<Graph> child);
Ref<GraphNode> add_mem_alloc_node(Ref<Graph> g, const GraphNode* after, size_t bytes);
Ref<GraphNode> add_mem_free_node(Ref<Graph> g, const GraphNode* after, const GraphNode& alloc);
uint64_t create_conditional_handle(Graph& g, uint32_t default_value);
Ref<GraphNode> add_conditional_node(Ref<Graph> g, const GraphNode* after, uint64_t handle,
                                    cuabi_conditional_type type, uint32_t size);

void add_dependency(GraphNode& node, const GraphNode& dependency);
cuabi_graph_node_type node_type(const GraphNode& node);
// The node's dependencies (dependents = false) or dependents.
std::vector<CUgraphNode> node_edges(const GraphNode& node, bool dependents);
Ref<GraphNode> node_edge(const GraphNode& node, bool dependents, size_t index);
uint64_t node_address(const GraphNode& node);
Ref<Graph> node_body(Ref<GraphNode> node, size_t index);

Ref<Graph> clone_graph(Graph& g);
void write_dot(Graph& g, const char* path);
void begin_capture_to_graph(Stream& s, Ref<Graph> g, const GraphNode* after,
                            cuabi_capture_mode mode);
Ref<GraphExec> instantiate_with_flags(Ref<Graph> g, uint32_t flags, const Pin<Stream>& upload);
// cuGraphLaunch, and the failures of the graph's host nodes reported on the
// stream (launch_graph on the default stream: at the next launch).
void launch_graph(GraphExec& e, const Pin<Stream>& stream);

// Updates of an instantiated graph's node in place (node a node of the graph
// `e` was instantiated from, or of one of its bodies), each checked as adding
// the node checks, and refused for a node of another kind.
void exec_set_kernel_node(GraphExec& e, const GraphNode& node, Ref<Function> f,
                          const cuabi_launch_config* config, const void* args, size_t args_size);
void exec_set_copy_node(GraphExec& e, const GraphNode& node, Ref<Buffer> dst, size_t dst_offset,
                        Ref<Buffer> src, size_t src_offset, size_t bytes);
void exec_set_upload_node(GraphExec& e, const GraphNode& node, Ref<Buffer> dst,
                          size_t dst_offset, Ref<HostBuffer> src, size_t src_offset,
                          size_t bytes);
void exec_set_download_node(GraphExec& e, const GraphNode& node, Ref<HostBuffer> dst,
                            size_t dst_offset, Ref<Buffer> src, size_t src_offset, size_t bytes);
void exec_set_fill_node(GraphExec& e, const GraphNode& node, Ref<Buffer> b, size_t offset,
                        uint32_t value, uint32_t element_size, size_t count);
void exec_set_host_node(GraphExec& e, const GraphNode& node, cuabi_host_fn fn, void* user_data);
void exec_set_event_node(GraphExec& e, const GraphNode& node, Ref<Event> event);
void exec_set_node_enabled(GraphExec& e, const GraphNode& node, bool enabled);
bool exec_node_enabled(GraphExec& e, const GraphNode& node);

}  // namespace cuabi
