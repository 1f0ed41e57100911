// Shims for stream capture and graphs.
#include "shim.hpp"
#include "stream.hpp"

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
    check(r, "cuStreamEndCapture");
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
    e.enter();
    check(driver().cuGraphLaunch(e.exec, stream_for(s, *e.device)), "cuGraphLaunch");
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
