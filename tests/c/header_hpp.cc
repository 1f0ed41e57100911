// cuabi.hpp compiled with every template instantiated, under the strictest
// warnings (see CMakeLists.txt: C++17 and C++20, -pedantic -Wconversion
// -Wshadow -Werror). Compiled, never run; internal, so the two standards'
// objects can be linked into one test binary.
#include <cstdint>
#include <stdexcept>
#include <cuabi/cuabi.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {

[[maybe_unused]] void InstantiateEverything() {
  cuabi::init();
  (void)cuabi::driver_version();
  (void)cuabi::driver_path();
  (void)cuabi::nvrtc_version();
  (void)cuabi::nvrtc_path();
  const cuabi::device d = cuabi::device::open(cuabi::device::count() - 1);
  (void)d.ordinal();
  (void)d.name();
  (void)d.compute_capability();
  (void)d.total_memory();
  (void)d.memory();
  (void)d.attribute(1);
  (void)d.cu_context();
  (void)d.stream_priority_range();
  d.synchronize();

  cuabi::compile_options opts;
  opts.name = "k.cu";
  opts.options = {"-w"};
  opts.headers = {{"h.cuh", "#define H 1"}};
  opts.name_expressions = {"k<int>"};
  opts.output = CUABI_OUTPUT_PTX;
  opts.arch = "sm_90";
  opts.defines = {"N=4"};
  opts.include_paths = {"/tmp"};
  opts.cxx_standard = CUABI_STD_CXX17;
  opts.fast_math = opts.line_info = opts.device_debug = opts.relocatable = true;
  const cuabi::module m = cuabi::module::compile(d, "src", opts);
  (void)m.from_cache();
  (void)m.lowered_name("k<int>");
  (void)m.global("g");
  cuabi::function f = m.get_function("k");
  (void)f.name();
  (void)f.param_count();
  (void)f.params();
  (void)f.args_size();
  f.set_attribute(CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, f.attribute(CUABI_FUNC_NUM_REGS));
  f.check_args<float, cuabi::buffer, size_t>();
  f.check_args<>();
  f.check_arg_size(0, 4);

  cuabi::buffer b = cuabi::buffer::alloc(d, 64);
  cuabi::buffer w = cuabi::buffer::wrap(d, b.pointer(), b.size());
  const cuabi::stream s = cuabi::stream::create(d, CUABI_STREAM_NON_BLOCKING, -1);
  const cuabi::stream wrapped = cuabi::stream::wrap(d, s.cu_stream());
  const cuabi_launch_config config = cuabi::launch_config({1, 2, 3}, 32, 16);
  const float a = 1.0f;
  const int32_t i = 3;
  f.launch(config, s, a, b, &i, size_t{4}, w);
  f.launch(config, nullptr);
  std::vector<unsigned char> block(f.args_size());
  f.launch_packed(config, wrapped, block.data(), block.size());

  cuabi::launch_plan p = cuabi::launch_plan::create(f, config, s);
  p.set(0, a);
  p.set(1, b);
  p.set_args(a, b, size_t{2});
  p.set_args();
  p.launch();
  cuabi::launch_plan q = std::move(p);
  p = std::move(q);
  (void)p.args();
  (void)p.args_size();

  const cuabi::event e = cuabi::event::create(d, CUABI_EVENT_DISABLE_TIMING);
  e.record(s);
  e.record();
  e.synchronize();
  (void)e.query();
  (void)cuabi::event::elapsed_ms(e, e);
  s.wait(e);
  (void)s.query();
  s.synchronize();
  s.begin_capture(CUABI_CAPTURE_RELAXED);
  const cuabi::graph g = s.end_capture();
  (void)g.node_count();
  g.instantiate().launch(s);
  (void)g.kernel_node_count();
  const cuabi::graph_exec ge = g.instantiate();
  ge.upload(s);
  ge.upload();
  ge.set_kernel_node_args(0, f, a, b, size_t{4});
  ge.set_kernel_node_args(1, f);
  ge.set_kernel_node_args_packed(0, f, block.data(), block.size());
  ge.update(g);

  const cuabi_event pe = e;
  const cuabi::config cooperative = cuabi::config(8, 128, 64).cooperative().priority(-1);
  f.launch(cooperative, s, a);
  f.launch(cuabi::config({4, 2}, 64)
               .cluster({2, 1, 1})
               .programmatic_serialization()
               .programmatic_event(pe, true)
               .shared_mem_bytes(0)
               .no_cluster()
               .cooperative(false),
           nullptr);
  (void)cuabi::launch_plan::create(f, cooperative.get());
  (void)f.active_blocks_per_sm(128);
  (void)f.active_blocks_per_sm(128, 1024);
  const cuabi::block_suggestion bs = f.suggest_block_size(0, 4, 256);
  (void)bs.block_size;
  (void)bs.min_grid_size;
  (void)f.suggest_block_size();
  const cuabi_launch_config suggested = f.suggest_config(uint64_t{1} << 20);
  (void)f.suggest_config(10, 16, 4);
  (void)f.available_dynamic_shared(2, 128);
  (void)f.max_cluster_size(suggested);
  (void)f.max_active_clusters(cuabi::config(2, 32).cluster(2));
  int calls = 0;
  s.launch_host_func([&calls] { ++calls; });
  s.launch_host_func([] { throw std::runtime_error("failed"); });
  struct counter {
    int* n;
    void operator()() const { ++*n; }
  };
  s.launch_host_func(counter{&calls});

  std::vector<float> host(16);
  b.upload(host);
  host = b.download<float>(16);
  b.copy_from_host(0, host.data(), 4);
  b.copy_to_host(0, host.data(), 4);
  b.copy_from_host_async(0, host.data(), 4, s);
  b.copy_to_host_async(0, host.data(), 4, s);
  b.copy_from(0, w, 8, 4);
  b.copy_from_async(0, w, 8, 4, s);
  b.memset(0, 1, 4);
  b.memset_async(0, 1, 4, s);
  (void)b.device_ordinal();
  cuabi::host_buffer h = cuabi::host_buffer::alloc(d, 64);
  cuabi::host_buffer r = cuabi::host_buffer::register_memory(d, host.data(), 64);
  (void)h.as<double>();
  (void)r.data();
  (void)r.size();

  cuabi::program prog = cuabi::program::create("src", "", {{"a.h", "int a;"}});
  prog.add_name_expression("k<int>");
  prog.compile({"-w"});
  (void)prog.log();
  (void)prog.ptx();
  const std::vector<unsigned char> cubin = prog.cubin();
  (void)prog.lowered_name("k<int>");
  (void)cuabi::module::load_data(d, cubin);
  (void)cuabi::module::load_data(d, std::string("ptx"));
  (void)cuabi::module::load_file(d, "k.cubin");
  d.synchronize();

  // The generated forms beside the idioms that overload their names.
  (void)cuabi::program::create("src", nullptr, {"int a;"}, {"a.h"});
  (void)cuabi::module::load_data(d, cubin.data(), cubin.size());
  (void)cuabi::module::load_data(d, std::vector<char>(4));
  (void)cuabi::module::compile(d, cuabi::compile_desc_init());
  std::vector<void*> raw_args;
  f.launch(config, s, raw_args);
  f.launch_sized(config, s, raw_args, {});
  s.launch_host_func([](void*, char*, size_t) noexcept -> int32_t { return 0; }, nullptr);
  s.wait_event(e);
  (void)e.elapsed_ms(e);
  (void)cuabi::device::get(0).memory_info();
  const cuabi::memory_pool pool = d.get_default_memory_pool();
  (void)cuabi::memory_pool::default_pool(d);
  (void)pool.usage().used_bytes;
  (void)cuabi::last_error_log();
  (void)p.get_args().size;

  cuabi::device reset_me = cuabi::device::open(0);
  reset_me.reset_primary_context();
  cuabi_device raw = reset_me.detach();
  cuabi::device adopted(raw);
  cuabi_device* slot = adopted.out();
  (void)slot;
  adopted.reset();
}

}  // namespace
