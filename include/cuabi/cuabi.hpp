/*
 * cuabi.hpp — C++17 owners and exceptions over cuabi's C API (cuabi.h).
 *
 * Header-only: everything here is inline over the C functions of
 * libcuabi.so, so a C++ program links exactly what a C program links.
 *
 * Owners.     Each handle type has a move-only owner (cuabi::device,
 *             cuabi::program, cuabi::module, cuabi::function, cuabi::buffer,
 *             cuabi::host_buffer, cuabi::stream, cuabi::event, cuabi::graph,
 *             cuabi::graph_exec, cuabi::launch_plan) that releases its handle
 *             when destroyed. An owner converts to its C handle, so it can be
 *             passed to any C function; get() says so explicitly, out() hands
 *             a C function's out-parameter to it, detach() gives the handle up.
 *             Objects are made by static functions named after the C calls
 *             (device::open, buffer::alloc, module::compile, ...); an owner
 *             can also adopt a handle from a C call: cuabi::buffer b(raw).
 *
 * Errors.     Every failed call throws cuabi::status_error<S>, where S is the
 *             status the call answered; it derives from cuabi::error, which
 *             derives from std::runtime_error and carries the status, the
 *             driver's or NVRTC's code, the library's message (unchanged) and,
 *             after a failed compile, NVRTC's log. A status newer than this
 *             header throws cuabi::error itself. Queries answer bool instead of
 *             throwing CUABI_ERROR_NOT_READY.
 *
 *               try { ... } catch (const cuabi::status_error<CUABI_ERROR_COMPILE>& e) {
 *                 std::cerr << e.log();
 *               } catch (const cuabi::error& e) {
 *                 std::cerr << e.what();   // "CUABI_ERROR_...: cuabi_...: ..."
 *               }
 *
 * Launches.   function::launch(config, stream, args...) passes each argument's
 *             size with it (cuabi_function_launch_sized), so the library
 *             refuses a 4-byte value for an 8-byte parameter instead of
 *             running. A cuabi::buffer argument passes its device address.
 *             launch_plan writes typed arguments into a plan's block, checking
 *             each argument's size once through the library.
 *
 * Threads.    As the C API: any object may be used from any thread; one owner
 *             object should not be moved or reset on one thread while another
 *             uses it.
 */
#ifndef CUABI_CUABI_HPP
#define CUABI_CUABI_HPP

#include <cuabi/cuabi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(__cplusplus) || __cplusplus < 201703L
#if !defined(_MSVC_LANG) || _MSVC_LANG < 201703L
#error "cuabi.hpp needs C++17 (use cuabi.h from C or older C++)"
#endif
#endif

namespace cuabi {

/* ------------------------------------------------------------------------- */
/* Errors                                                                     */
/* ------------------------------------------------------------------------- */

/* A failed cuabi call: its status, the CUresult or nvrtcResult behind it (0 if
 * none), the library's message as cuabi_last_error_message gave it, and the
 * NVRTC log of a failed compile ("" otherwise). what() is
 * "<status name>: <message>". Copying never throws. */
class error : public std::runtime_error {
 public:
  error(cuabi_status status, int32_t code, std::string message, std::string log)
      : std::runtime_error(std::string(cuabi_status_get_name(status)) + ": " + message),
        status_(status),
        code_(code),
        text_(std::make_shared<const text>(text{std::move(message), std::move(log)})) {}

  cuabi_status status() const noexcept { return status_; }
  /* The status's symbolic name, from the library (cuabi_status_get_name). */
  const char* status_name() const noexcept { return cuabi_status_get_name(status_); }
  /* The driver's CUresult or NVRTC's nvrtcResult, 0 if none. */
  int32_t code() const noexcept { return code_; }
  /* The library's message: names the failing call and what was wrong. */
  const std::string& message() const noexcept { return text_->message; }
  /* NVRTC's log after CUABI_ERROR_COMPILE, else "". */
  const std::string& log() const noexcept { return text_->log; }

 private:
  struct text {
    std::string message;
    std::string log;
  };
  cuabi_status status_;
  int32_t code_;
  std::shared_ptr<const text> text_;
};

/* The error of one status, so a caller can catch exactly that one:
 * catch (const cuabi::status_error<CUABI_ERROR_OUT_OF_MEMORY>&). */
template <cuabi_status S>
class status_error : public error {
 public:
  static constexpr cuabi_status value = S;
  explicit status_error(const error& e) : error(e) {}
};

namespace detail {

// Throws status_error<S> for the status S of `e` when this header knows S
// (one type per value below CUABI_STATUS_COUNT), else `e` itself.
template <int32_t... I>
[[noreturn]] void throw_as_status(const error& e, std::integer_sequence<int32_t, I...>) {
  ((e.status() == static_cast<cuabi_status>(I) ? throw status_error<static_cast<cuabi_status>(I)>(e)
                                               : void()),
   ...);
  throw e;
}

// The calling thread's last error, read right after a call answered `status`.
[[noreturn]] inline void throw_last_error(cuabi_status status) {
  std::string message = cuabi_last_error_message();
  const int32_t code = cuabi_last_error_code();
  std::string log;
  size_t size = 0;
  if (cuabi_last_error_log(nullptr, &size) == CUABI_SUCCESS && size > 1) {
    log.resize(size);
    if (cuabi_last_error_log(&log[0], &size) == CUABI_SUCCESS)
      log.resize(size - 1);
    else
      log.clear();
  }
  throw_as_status(error(status, code, std::move(message), std::move(log)),
                  std::make_integer_sequence<int32_t, CUABI_STATUS_COUNT>{});
}

}  // namespace detail

/* Throws the calling thread's last error unless `status` is CUABI_SUCCESS.
 * For C calls made directly: cuabi::check(cuabi_init()). */
inline void check(cuabi_status status) {
  if (status != CUABI_SUCCESS) detail::throw_last_error(status);
}

namespace detail {

// CUABI_SUCCESS: true; CUABI_ERROR_NOT_READY: false; anything else throws.
inline bool ready(cuabi_status status) {
  if (status == CUABI_ERROR_NOT_READY) return false;
  check(status);
  return true;
}

// A string through a two-call getter get(char* buf, size_t* size).
template <class Get>
std::string fetch_string(Get&& get) {
  size_t size = 0;
  check(get(nullptr, &size));
  std::string s(size, '\0');
  for (;;) {
    const cuabi_status st = get(s.empty() ? nullptr : &s[0], &size);
    if (st != CUABI_ERROR_INSUFFICIENT_BUFFER) {
      check(st);
      break;
    }
    s.resize(size);  // it grew between the two calls
  }
  s.resize(size > 0 ? size - 1 : 0);  // without the NUL
  return s;
}

// Bytes through a two-call getter get(void* buf, size_t* size).
template <class Get>
std::vector<char> fetch_bytes(Get&& get) {
  size_t size = 0;
  check(get(nullptr, &size));
  std::vector<char> bytes(size);
  for (;;) {
    const cuabi_status st = get(bytes.data(), &size);
    if (st != CUABI_ERROR_INSUFFICIENT_BUFFER) {
      check(st);
      break;
    }
    bytes.resize(size);
  }
  bytes.resize(size);
  return bytes;
}

// NULL for "", else the string (the C API's "use the default" convention).
inline const char* or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }

// Pointers to the strings' characters, for the C API's const char* arrays.
inline std::vector<const char*> c_strings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  out.reserve(v.size());
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}

// Owns one handle of type H and gives it back with Release (which accepts
// NULL, never fails and never touches the last-error state).
template <class H, void(CUABI_CALL* Release)(H)>
class owner {
 public:
  using handle_type = H;

  owner() noexcept = default;
  /* Adopts `handle` (from a C call): this owner releases it. */
  explicit owner(H handle) noexcept : h_(handle) {}
  owner(const owner&) = delete;
  owner& operator=(const owner&) = delete;
  owner(owner&& other) noexcept : h_(other.detach()) {}
  owner& operator=(owner&& other) noexcept {
    if (this != &other) reset(other.detach());
    return *this;
  }
  ~owner() { Release(h_); }

  /* The C handle, still owned here. */
  H get() const noexcept { return h_; }
  /* The C handle, for passing to a C function. */
  operator H() const noexcept { return h_; }  // NOLINT: an owner stands for its handle
  explicit operator bool() const noexcept { return h_ != nullptr; }
  /* Releases the current handle and returns where a C function may store a
   * new one: cuabi_buffer_alloc(device, n, buffer.out()). */
  H* out() noexcept {
    reset();
    return &h_;
  }
  /* Releases the current handle (if any) and owns `handle` instead. */
  void reset(H handle = nullptr) noexcept {
    H old = h_;
    h_ = handle;
    if (old != handle) Release(old);
  }
  /* Gives the handle up without releasing it; the caller now owns it. */
  H detach() noexcept {
    H h = h_;
    h_ = nullptr;
    return h;
  }

 private:
  H h_ = nullptr;
};

}  // namespace detail

/* ------------------------------------------------------------------------- */
/* The library                                                                */
/* ------------------------------------------------------------------------- */

/* A major and minor version or compute capability. */
struct version_pair {
  int32_t major = 0;
  int32_t minor = 0;
};

/* The library's version number (CUABI_VERSION_NUMBER form) and text. */
inline uint32_t version() noexcept { return cuabi_version(); }
inline const char* version_string() noexcept { return cuabi_version_string(); }
/* A status's name ("CUABI_ERROR_INVALID_HANDLE") and description. */
inline const char* status_name(cuabi_status status) noexcept {
  return cuabi_status_get_name(status);
}
inline const char* status_description(cuabi_status status) noexcept {
  return cuabi_status_get_description(status);
}

/* Opens the driver and runs cuInit (optional: the first call that needs the
 * driver does it). */
inline void init() { check(cuabi_init()); }
/* The driver's CUDA version (13000 for 13.0) and where it was loaded from. */
inline int32_t driver_version() {
  int32_t v = 0;
  check(cuabi_driver_get_version(&v));
  return v;
}
inline std::string driver_path() {
  return detail::fetch_string([](char* b, size_t* s) { return cuabi_driver_get_path(b, s); });
}
/* NVRTC's version and where it was loaded from (opens NVRTC). */
inline version_pair nvrtc_version() {
  version_pair v;
  check(cuabi_nvrtc_get_version(&v.major, &v.minor));
  return v;
}
inline std::string nvrtc_path() {
  return detail::fetch_string([](char* b, size_t* s) { return cuabi_nvrtc_get_path(b, s); });
}

/* Grid or block dimensions; an integer converts to (x, 1, 1). */
struct dims {
  constexpr dims(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) noexcept  // NOLINT
      : x(x_), y(y_), z(z_) {}
  uint32_t x, y, z;
};

/* A launch configuration from the library's defaults
 * (cuabi_launch_config_init) with this grid, block and dynamic shared memory. */
inline cuabi_launch_config launch_config(dims grid, dims block, uint32_t shared_mem_bytes = 0) {
  cuabi_launch_config c;
  check(cuabi_launch_config_init(&c, sizeof(c)));
  c.grid_x = grid.x;
  c.grid_y = grid.y;
  c.grid_z = grid.z;
  c.block_x = block.x;
  c.block_y = block.y;
  c.block_z = block.z;
  c.shared_mem_bytes = shared_mem_bytes;
  return c;
}

/* A launch configuration with fluent setters for the extended fields; it
 * converts to const cuabi_launch_config&, so it goes wherever one does:
 *   f.launch(cuabi::config(grid, block).cooperative(), s, args...);
 *   cuabi::config(8, 128).cluster(2).programmatic_serialization();
 * Any extended field makes the launch go through cuLaunchKernelEx; the
 * library checks each against the kernel and the device first. */
class config {
 public:
  config(dims grid, dims block, uint32_t shared_mem_bytes = 0)
      : c_(launch_config(grid, block, shared_mem_bytes)) {}
  explicit config(const cuabi_launch_config& c) : c_(c) {}

  /* Every block resident at once; the kernel may synchronise the grid. */
  config& cooperative(bool on = true) { return flag(CUABI_LAUNCH_COOPERATIVE, on); }
  /* Thread-block clusters of `d` blocks ((0, 0, 0): none). */
  config& cluster(dims d) {
    c_.cluster_x = d.x;
    c_.cluster_y = d.y;
    c_.cluster_z = d.z;
    return *this;
  }
  config& no_cluster() {
    c_.cluster_x = c_.cluster_y = c_.cluster_z = 0;
    return *this;
  }
  /* Programmatic dependent launch: may start before the previous kernel on
   * the stream has finished (it waits with griddepcontrol.wait /
   * cudaGridDependencySynchronize before reading its results). */
  config& programmatic_serialization(bool on = true) {
    return flag(CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION, on);
  }
  /* An event (made with CUABI_EVENT_DISABLE_TIMING) recorded when every block
   * has triggered, or started with `at_block_start`; nullptr: none. */
  config& programmatic_event(cuabi_event e, bool at_block_start = false) {
    c_.programmatic_event = e;
    return flag(CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START, e != nullptr && at_block_start);
  }
  /* The launch's priority (0: the stream's). */
  config& priority(int32_t p) {
    c_.priority = p;
    return *this;
  }
  config& shared_mem_bytes(uint32_t bytes) {
    c_.shared_mem_bytes = bytes;
    return *this;
  }

  const cuabi_launch_config& get() const noexcept { return c_; }
  operator const cuabi_launch_config&() const noexcept { return c_; }  // NOLINT

 private:
  config& flag(cuabi_launch_flags bit, bool on) {
    c_.flags = on ? (c_.flags | bit) : (c_.flags & ~bit);
    return *this;
  }
  cuabi_launch_config c_;
};

/* ------------------------------------------------------------------------- */
/* Devices                                                                    */
/* ------------------------------------------------------------------------- */

/* Free and total device memory, in bytes. */
struct memory_info {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

/* Stream priorities: numerically lower is higher priority. */
struct priority_range {
  int32_t least = 0;
  int32_t greatest = 0;
};

/* A GPU and its primary context (cuabi_device). */
class device : public detail::owner<cuabi_device, cuabi_device_release> {
 public:
  using owner::owner;

  /* How many devices the driver sees (0 where it sees none). */
  static int32_t count() {
    int32_t n = 0;
    check(cuabi_device_get_count(&n));
    return n;
  }
  /* Device `ordinal` (cuabi_device_get); each call is a new handle. */
  static device open(int32_t ordinal) {
    device d;
    check(cuabi_device_get(ordinal, d.out()));
    return d;
  }

  int32_t ordinal() const {
    int32_t o = 0;
    check(cuabi_device_get_ordinal(get(), &o));
    return o;
  }
  std::string name() const {
    return detail::fetch_string(
        [this](char* b, size_t* s) { return cuabi_device_get_name(get(), b, s); });
  }
  version_pair compute_capability() const {
    version_pair v;
    check(cuabi_device_get_compute_capability(get(), &v.major, &v.minor));
    return v;
  }
  size_t total_memory() const {
    size_t n = 0;
    check(cuabi_device_get_total_memory(get(), &n));
    return n;
  }
  memory_info memory() const {
    memory_info m;
    check(cuabi_device_get_memory_info(get(), &m.free_bytes, &m.total_bytes));
    return m;
  }
  /* Any CUdevice_attribute, by its numeric value. */
  int32_t attribute(int32_t cu_attribute) const {
    int32_t v = 0;
    check(cuabi_device_get_attribute(get(), cu_attribute, &v));
    return v;
  }
  /* The primary context as a raw CUcontext value, for interop. */
  uint64_t cu_context() const {
    uint64_t c = 0;
    check(cuabi_device_get_context(get(), &c));
    return c;
  }
  /* Waits for all work on the device. */
  void synchronize() const { check(cuabi_device_synchronize(get())); }
  priority_range stream_priority_range() const {
    priority_range r;
    check(cuabi_device_get_stream_priority_range(get(), &r.least, &r.greatest));
    return r;
  }
  /* cuabi_device_reset: frees everything on the device's primary context, in
   * this process and every library sharing it; objects made before become
   * unusable. Not a recovery from a sticky fault (that needs a new process). */
  void reset_primary_context() { check(cuabi_device_reset(get())); }
};

/* ------------------------------------------------------------------------- */
/* Streams, events and graphs                                                 */
/* ------------------------------------------------------------------------- */

class event;
class graph;
class function;

namespace detail {

// A host function's record: the callable, freed after its one call. Anything
// it throws becomes the failure message; nothing unwinds into the driver.
template <class F>
struct host_call {
  F fn;
  static int32_t CUABI_CALL run(void* data, char* message, size_t size) noexcept {
    host_call* self = static_cast<host_call*>(data);
    const char* failure = nullptr;
    std::string what;
    try {
      self->fn();
    } catch (const std::exception& e) {
      try {
        what = e.what();
        failure = what.c_str();
      } catch (...) {
        failure = "a host function threw (its message could not be copied)";
      }
    } catch (...) {
      failure = "a host function threw an exception that is not a std::exception";
    }
    delete self;
    if (!failure) return 0;
    if (size > 0) {
      const size_t n = std::min(std::strlen(failure), size - 1);
      std::memcpy(message, failure, n);
      message[n] = '\0';
    }
    return 1;
  }
};

}  // namespace detail

/* A CUDA stream (cuabi_stream). Where a call takes a cuabi_stream, pass a
 * stream or nullptr for the device's default stream. */
class stream : public detail::owner<cuabi_stream, cuabi_stream_release> {
 public:
  using owner::owner;

  static stream create(const device& dev, cuabi_stream_flags flags = 0, int32_t priority = 0) {
    stream s;
    check(cuabi_stream_create(dev, flags, priority, s.out()));
    return s;
  }
  /* Wraps a CUstream owned elsewhere; releasing does not destroy it. */
  static stream wrap(const device& dev, uint64_t cu_stream) {
    stream s;
    check(cuabi_stream_wrap(dev, cu_stream, s.out()));
    return s;
  }

  /* The raw CUstream value, for interop. */
  uint64_t cu_stream() const {
    uint64_t h = 0;
    check(cuabi_stream_get_handle(get(), &h));
    return h;
  }
  void synchronize() const { check(cuabi_stream_synchronize(get())); }
  /* True when all work submitted so far is done. */
  bool query() const { return detail::ready(cuabi_stream_query(get())); }
  /* Later work on this stream waits for `e`. */
  inline void wait(const event& e) const;
  /* Captures the work submitted from now on into a graph (end_capture). */
  void begin_capture(cuabi_capture_mode mode = CUABI_CAPTURE_GLOBAL) const {
    check(cuabi_stream_begin_capture(get(), mode));
  }
  inline graph end_capture() const;

  /* Runs `fn()` (any callable) on a driver thread when the stream reaches
   * this point. It must not wait on the GPU. If it throws, the exception's
   * what() is the failure the stream's next synchronize() throws, as
   * status_error<CUABI_ERROR_HOST_FUNCTION>. */
  template <class F>
  void launch_host_func(F&& fn) const {
    using call = detail::host_call<std::decay_t<F>>;
    auto* record = new call{std::forward<F>(fn)};
    const cuabi_status st = cuabi_stream_launch_host_func(get(), &call::run, record);
    if (st != CUABI_SUCCESS) {
      delete record;
      check(st);
    }
  }
};

/* A CUDA event (cuabi_event). */
class event : public detail::owner<cuabi_event, cuabi_event_release> {
 public:
  using owner::owner;

  static event create(const device& dev, cuabi_event_flags flags = 0) {
    event e;
    check(cuabi_event_create(dev, flags, e.out()));
    return e;
  }

  /* Records the event on `s` (nullptr: the default stream). */
  void record(cuabi_stream s = nullptr) const { check(cuabi_event_record(get(), s)); }
  void synchronize() const { check(cuabi_event_synchronize(get())); }
  /* True once the event was reached. */
  bool query() const { return detail::ready(cuabi_event_query(get())); }
  /* Milliseconds between two recorded, completed events. */
  static float elapsed_ms(const event& start, const event& end) {
    float ms = 0;
    check(cuabi_event_get_elapsed_ms(start, end, &ms));
    return ms;
  }
};

inline void stream::wait(const event& e) const { check(cuabi_stream_wait_event(get(), e)); }

/* A stream-ordered memory pool (cuabi_memory_pool). */
class memory_pool : public detail::owner<cuabi_memory_pool, cuabi_memory_pool_release> {
 public:
  using owner::owner;

  static memory_pool create(const device& dev, const cuabi_memory_pool_desc* desc = nullptr) {
    memory_pool p;
    check(cuabi_memory_pool_create(dev, desc, p.out()));
    return p;
  }
  static memory_pool default_pool(const device& dev) {
    memory_pool p;
    check(cuabi_device_get_default_memory_pool(dev, p.out()));
    return p;
  }
  void trim(size_t keep_bytes) const { check(cuabi_memory_pool_trim(get(), keep_bytes)); }
};

/* A CUDA array (cuabi_array). */
class array : public detail::owner<cuabi_array, cuabi_array_release> {
 public:
  using owner::owner;

  static array create(const device& dev, const cuabi_array_desc& desc) {
    array a;
    check(cuabi_array_create(dev, &desc, a.out()));
    return a;
  }
};

/* A texture object (cuabi_texture); value() is the 8-byte kernel argument. */
class texture : public detail::owner<cuabi_texture, cuabi_texture_release> {
 public:
  using owner::owner;

  static texture create(const cuabi_texture_desc& desc) {
    texture t;
    check(cuabi_texture_create(&desc, t.out()));
    return t;
  }
  uint64_t value() const {
    uint64_t v = 0;
    check(cuabi_texture_get_handle(get(), &v));
    return v;
  }
};

/* A surface object (cuabi_surface); value() is the 8-byte kernel argument. */
class surface : public detail::owner<cuabi_surface, cuabi_surface_release> {
 public:
  using owner::owner;

  static surface create(const array& a) {
    surface s;
    check(cuabi_surface_create(a, s.out()));
    return s;
  }
  uint64_t value() const {
    uint64_t v = 0;
    check(cuabi_surface_get_handle(get(), &v));
    return v;
  }
};

/* A linker (cuabi_linker). */
class linker : public detail::owner<cuabi_linker, cuabi_linker_release> {
 public:
  using owner::owner;
};

/* A library (cuabi_library). */
class library : public detail::owner<cuabi_library, cuabi_library_release> {
 public:
  using owner::owner;
};

/* An instantiated graph (cuabi_graph_exec). */
class graph_exec : public detail::owner<cuabi_graph_exec, cuabi_graph_exec_release> {
 public:
  using owner::owner;
  /* Runs the graph on `s` (nullptr: the default stream). */
  void launch(cuabi_stream s = nullptr) const { check(cuabi_graph_exec_launch(get(), s)); }
  /* Uploads the graph ahead of its first launch on `s`. */
  void upload(cuabi_stream s = nullptr) const { check(cuabi_graph_exec_upload(get(), s)); }
  /* Replaces the arguments of kernel node `index` (numbered in capture
   * order) with `args`, laid out at `f`'s parameter offsets after the library
   * checked their sizes; `f` must be the node's kernel. */
  template <class... Args>
  void set_kernel_node_args(size_t index, const function& f, const Args&... args) const;
  /* The same with a block already laid out at the kernel's offsets. */
  inline void set_kernel_node_args_packed(size_t index, const function& f, const void* args,
                                          size_t args_size) const;
  /* Updates the instantiated graph in place from `g` (same topology). */
  inline void update(const graph& g) const;
};

/* A captured graph (cuabi_graph). */
class graph : public detail::owner<cuabi_graph, cuabi_graph_release> {
 public:
  using owner::owner;
  size_t node_count() const {
    size_t n = 0;
    check(cuabi_graph_get_node_count(get(), &n));
    return n;
  }
  graph_exec instantiate() const {
    graph_exec e;
    check(cuabi_graph_instantiate(get(), e.out()));
    return e;
  }
  /* The kernel nodes, numbered in the order they were captured. */
  size_t kernel_node_count() const {
    size_t n = 0;
    check(cuabi_graph_get_kernel_node_count(get(), &n));
    return n;
  }
};

inline void graph_exec::update(const graph& g) const { check(cuabi_graph_exec_update(get(), g)); }

inline graph stream::end_capture() const {
  graph g;
  check(cuabi_stream_end_capture(get(), g.out()));
  return g;
}

/* ------------------------------------------------------------------------- */
/* Memory                                                                     */
/* ------------------------------------------------------------------------- */

/* Device memory (cuabi_buffer). Offsets and byte counts are checked by the
 * library against the buffer's size. */
class buffer : public detail::owner<cuabi_buffer, cuabi_buffer_release> {
 public:
  using owner::owner;

  /* Allocates `bytes` (> 0) of device memory. */
  static buffer alloc(const device& dev, size_t bytes) {
    buffer b;
    check(cuabi_buffer_alloc(dev, bytes, b.out()));
    return b;
  }
  /* Wraps device memory owned elsewhere; releasing frees nothing. */
  static buffer wrap(const device& dev, uint64_t device_ptr, size_t bytes) {
    buffer b;
    check(cuabi_buffer_wrap(dev, device_ptr, bytes, b.out()));
    return b;
  }

  /* The CUdeviceptr (what a kernel's pointer parameter takes). */
  uint64_t pointer() const {
    uint64_t p = 0;
    check(cuabi_buffer_get_pointer(get(), &p));
    return p;
  }
  size_t size() const {
    size_t n = 0;
    check(cuabi_buffer_get_size(get(), &n));
    return n;
  }
  int32_t device_ordinal() const {
    int32_t o = 0;
    check(cuabi_buffer_get_device_ordinal(get(), &o));
    return o;
  }

  /* Copies, in the C API's argument order; the _async forms are ordered on
   * `s` (nullptr: the default stream) and need their host memory to stay
   * valid until the stream gets there. */
  void copy_from_host(size_t offset, const void* src, size_t bytes) {
    check(cuabi_buffer_copy_from_host(get(), offset, src, bytes));
  }
  void copy_to_host(size_t offset, void* dst, size_t bytes) const {
    check(cuabi_buffer_copy_to_host(get(), offset, dst, bytes));
  }
  void copy_from_host_async(size_t offset, const void* src, size_t bytes, cuabi_stream s) {
    check(cuabi_buffer_copy_from_host_async(get(), offset, src, bytes, s));
  }
  void copy_to_host_async(size_t offset, void* dst, size_t bytes, cuabi_stream s) const {
    check(cuabi_buffer_copy_to_host_async(get(), offset, dst, bytes, s));
  }
  /* Device to device: `bytes` from `src` at `src_offset` to here at `offset`. */
  void copy_from(size_t offset, const buffer& src, size_t src_offset, size_t bytes) {
    check(cuabi_buffer_copy(get(), offset, src, src_offset, bytes));
  }
  void copy_from_async(size_t offset, const buffer& src, size_t src_offset, size_t bytes,
                       cuabi_stream s) {
    check(cuabi_buffer_copy_async(get(), offset, src, src_offset, bytes, s));
  }
  void memset(size_t offset, uint8_t value, size_t bytes) {
    check(cuabi_buffer_memset(get(), offset, value, bytes));
  }
  void memset_async(size_t offset, uint8_t value, size_t bytes, cuabi_stream s) {
    check(cuabi_buffer_memset_async(get(), offset, value, bytes, s));
  }

  /* A whole vector in at `offset` bytes, and `count` elements back out. */
  template <class T>
  void upload(const std::vector<T>& values, size_t offset = 0) {
    static_assert(std::is_trivially_copyable<T>::value, "upload copies bytes");
    copy_from_host(offset, values.data(), values.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> download(size_t count, size_t offset = 0) const {
    static_assert(std::is_trivially_copyable<T>::value, "download copies bytes");
    std::vector<T> values(count);
    copy_to_host(offset, values.data(), count * sizeof(T));
    return values;
  }
};

/* Page-locked host memory (cuabi_host_buffer). */
class host_buffer : public detail::owner<cuabi_host_buffer, cuabi_host_buffer_release> {
 public:
  using owner::owner;

  /* Allocates `bytes` (> 0) of pinned host memory. */
  static host_buffer alloc(const device& dev, size_t bytes) {
    host_buffer b;
    check(cuabi_host_buffer_alloc(dev, bytes, b.out()));
    return b;
  }
  /* Pins existing memory in place until released; it must outlive this. */
  static host_buffer register_memory(const device& dev, void* ptr, size_t bytes) {
    host_buffer b;
    check(cuabi_host_buffer_register(dev, ptr, bytes, b.out()));
    return b;
  }

  void* data() const {
    void* p = nullptr;
    check(cuabi_host_buffer_get_pointer(get(), &p));
    return p;
  }
  /* The memory as an array of T. */
  template <class T>
  T* as() const {
    return static_cast<T*>(data());
  }
  size_t size() const {
    size_t n = 0;
    check(cuabi_host_buffer_get_size(get(), &n));
    return n;
  }
};

/* ------------------------------------------------------------------------- */
/* Programs (NVRTC)                                                           */
/* ------------------------------------------------------------------------- */

/* A header given to a compile: its include name and its contents. */
struct header {
  std::string name;
  std::string source;
};

/* An NVRTC program (cuabi_program), for when the compiled code itself is
 * wanted (PTX, CUBIN); module::compile goes from source to a module. */
class program : public detail::owner<cuabi_program, cuabi_program_release> {
 public:
  using owner::owner;

  /* `name` is the file name in diagnostics ("": "cuabi_program.cu"). */
  static program create(const std::string& source, const std::string& name = std::string(),
                        const std::vector<header>& headers = {}) {
    std::vector<const char*> sources, names;
    for (const header& h : headers) {
      sources.push_back(h.source.c_str());
      names.push_back(h.name.c_str());
    }
    program p;
    check(cuabi_program_create(source.c_str(), detail::or_null(name), headers.size(),
                               sources.data(), names.data(), p.out()));
    return p;
  }

  /* Registers a name expression ("store<float>") before compiling. */
  void add_name_expression(const std::string& expression) {
    check(cuabi_program_add_name_expression(get(), expression.c_str()));
  }
  /* Compiles once; throws status_error<CUABI_ERROR_COMPILE> (log() holds
   * NVRTC's log) when NVRTC rejects the code or the options. */
  void compile(const std::vector<std::string>& options = {}) {
    const std::vector<const char*> o = detail::c_strings(options);
    check(cuabi_program_compile(get(), o.size(), o.data()));
  }
  /* The compile log ("" before compiling). */
  std::string log() const {
    return detail::fetch_string(
        [this](char* b, size_t* s) { return cuabi_program_get_log(get(), b, s); });
  }
  /* The PTX (without its NUL) and the CUBIN of a successful compile. */
  std::string ptx() const {
    return detail::fetch_string(
        [this](char* b, size_t* s) { return cuabi_program_get_ptx(get(), b, s); });
  }
  std::vector<char> cubin() const {
    return detail::fetch_bytes(
        [this](void* b, size_t* s) { return cuabi_program_get_cubin(get(), b, s); });
  }
  /* The lowered (mangled) name of a registered name expression. */
  std::string lowered_name(const std::string& expression) const {
    return detail::fetch_string([&](char* b, size_t* s) {
      return cuabi_program_get_lowered_name(get(), expression.c_str(), b, s);
    });
  }
};

/* ------------------------------------------------------------------------- */
/* Functions and launches                                                     */
/* ------------------------------------------------------------------------- */

namespace detail {

// What a kernel receives for an argument: the value itself, or a buffer's
// device address.
template <class T>
T kernel_value(const T& value) {
  static_assert(std::is_trivially_copyable<T>::value,
                "a kernel argument is copied byte for byte: pass a trivially copyable value "
                "(or a cuabi::buffer, which passes its device address)");
  return value;
}
inline uint64_t kernel_value(const buffer& b) { return b.pointer(); }

template <class T>
using kernel_type = decltype(kernel_value(std::declval<const T&>()));

// One address per argument signature, telling signatures apart.
template <class... T>
const void* signature_tag() noexcept {
  static const char tag = 0;
  return &tag;
}

}  // namespace detail

/* A kernel in a module (cuabi_function). */
class function : public detail::owner<cuabi_function, cuabi_function_release> {
 public:
  using owner::owner;

  /* The name it was looked up by. */
  std::string name() const {
    return detail::fetch_string(
        [this](char* b, size_t* s) { return cuabi_function_get_name(get(), b, s); });
  }
  size_t param_count() const {
    size_t n = 0;
    check(cuabi_function_get_param_count(get(), &n));
    return n;
  }
  /* Each parameter's offset and size in the packed argument block. */
  std::vector<cuabi_param_info> params() const {
    size_t count = 0;
    check(cuabi_function_get_params(get(), nullptr, &count, nullptr));
    std::vector<cuabi_param_info> out(count);
    check(cuabi_function_get_params(get(), out.data(), &count, nullptr));
    out.resize(count);
    return out;
  }
  /* The packed argument block's length. */
  size_t args_size() const {
    size_t n = 0;
    check(cuabi_function_get_args_size(get(), &n));
    return n;
  }
  int32_t attribute(cuabi_function_attribute attr) const {
    int32_t v = 0;
    check(cuabi_function_get_attribute(get(), attr, &v));
    return v;
  }
  void set_attribute(cuabi_function_attribute attr, int32_t value) {
    check(cuabi_function_set_attribute(get(), attr, value));
  }

  /* Checks arguments of these sizes against the kernel's parameters (count
   * and each size) without launching; the library words any mismatch. */
  void check_arg_sizes(const size_t* sizes, size_t count) const {
    check(cuabi_function_check_arg_sizes(get(), sizes, count));
  }
  void check_arg_size(size_t index, size_t size) const {
    check(cuabi_function_check_arg_size(get(), index, size));
  }
  /* check_arg_sizes for the types Args as launch() would pass them. */
  template <class... Args>
  void check_args() const {
    const size_t sizes[] = {sizeof(detail::kernel_type<Args>)..., 0};
    check_arg_sizes(sizes, sizeof...(Args));
  }

  /* Launches on `s` (nullptr: the default stream) with `args` in the
   * kernel's parameter order. Each argument goes with its size, so a value of
   * the wrong size is refused by the library (CUABI_ERROR_INVALID_ARGUMENT
   * naming the parameter) instead of running. */
  template <class... Args>
  void launch(const cuabi_launch_config& config, cuabi_stream s, const Args&... args) const {
    std::tuple<detail::kernel_type<Args>...> values(detail::kernel_value(args)...);
    std::apply(
        [&](auto&... v) {
          void* params[] = {static_cast<void*>(&v)..., nullptr};
          const size_t sizes[] = {sizeof(v)..., 0};
          check(cuabi_function_launch_sized(get(), &config, s, params, sizes, sizeof...(Args)));
        },
        values);
  }
  /* Launches with a block already laid out at the kernel's offsets. */
  void launch_packed(const cuabi_launch_config& config, cuabi_stream s, const void* args,
                     size_t args_size) const {
    check(cuabi_function_launch_packed(get(), &config, s, args, args_size));
  }

  /* Occupancy. Blocks of `block_size` threads one multiprocessor keeps
   * resident with this much dynamic shared memory each. */
  uint32_t active_blocks_per_sm(uint32_t block_size, size_t dynamic_shared_bytes = 0) const {
    uint32_t n = 0;
    check(cuabi_function_get_active_blocks_per_sm(get(), block_size, dynamic_shared_bytes, &n));
    return n;
  }
  struct block_suggestion {
    uint32_t block_size;
    uint32_t min_grid_size;
  };
  /* The block size of the highest occupancy (ties: the larger block) with
   * shared_per_block + shared_per_thread * block size of dynamic shared
   * memory, and the grid that fills the device at that size. */
  block_suggestion suggest_block_size(size_t shared_per_block = 0, size_t shared_per_thread = 0,
                                      uint32_t block_size_limit = 0) const {
    block_suggestion b{0, 0};
    check(cuabi_function_suggest_block_size(get(), shared_per_block, shared_per_thread,
                                            block_size_limit, &b.block_size, &b.min_grid_size));
    return b;
  }
  /* A 1-D configuration covering `elements` items, one per thread. */
  cuabi_launch_config suggest_config(uint64_t elements, size_t shared_per_block = 0,
                                     size_t shared_per_thread = 0) const {
    cuabi_launch_config c;
    c.struct_size = sizeof(c);
    check(cuabi_function_suggest_config(get(), elements, shared_per_block, shared_per_thread, &c));
    return c;
  }
  size_t available_dynamic_shared(uint32_t blocks_per_sm, uint32_t block_size) const {
    size_t n = 0;
    check(cuabi_function_get_available_dynamic_shared(get(), blocks_per_sm, block_size, &n));
    return n;
  }
  uint32_t max_cluster_size(const cuabi_launch_config& config) const {
    uint32_t n = 0;
    check(cuabi_function_get_max_cluster_size(get(), &config, &n));
    return n;
  }
  uint32_t max_active_clusters(const cuabi_launch_config& config) const {
    uint32_t n = 0;
    check(cuabi_function_get_max_active_clusters(get(), &config, &n));
    return n;
  }
};

template <class... Args>
void graph_exec::set_kernel_node_args(size_t index, const function& f,
                                      const Args&... args) const {
  const size_t sizes[] = {sizeof(detail::kernel_type<Args>)..., 0};
  f.check_arg_sizes(sizes, sizeof...(Args));
  const std::vector<cuabi_param_info> params = f.params();
  std::vector<unsigned char> block(f.args_size());
  size_t i = 0;
  auto put = [&](const auto& v) {
    std::memcpy(block.data() + params[i++].offset, &v, sizeof(v));
  };
  (put(detail::kernel_value(args)), ...);
  (void)put;
  set_kernel_node_args_packed(index, f, block.data(), block.size());
}

inline void graph_exec::set_kernel_node_args_packed(size_t index, const function& f,
                                                    const void* args, size_t args_size) const {
  check(cuabi_graph_exec_set_kernel_node_args(get(), index, f, args, args_size));
}

/* A prepared launch (cuabi_launch_plan): configuration and stream checked
 * once, the arguments written in place into the plan's block, then launched
 * with one call. The typed setters check each argument's size once through
 * the library (cuabi_function_check_arg_size, or _sizes for set_args) and
 * then only copy; they use the function the plan was made from, so keep that
 * function alive until every argument has been set once (a released one
 * answers CUABI_ERROR_INVALID_HANDLE). The plan itself keeps the kernel and
 * the stream alive for its launches. Made by create() only: the setters need
 * the kernel's layout, which a bare handle does not bring. */
class launch_plan : public detail::owner<cuabi_launch_plan, cuabi_launch_plan_release> {
 public:
  launch_plan() noexcept = default;
  launch_plan(launch_plan&& other) noexcept
      : owner(std::move(other)), layout_(std::exchange(other.layout_, layout())) {}
  launch_plan& operator=(launch_plan&& other) noexcept {
    if (this != &other) {
      owner::operator=(std::move(other));
      layout_ = std::exchange(other.layout_, layout());
    }
    return *this;
  }

  static launch_plan create(const function& f, const cuabi_launch_config& config,
                            cuabi_stream s = nullptr) {
    launch_plan p;
    check(cuabi_launch_plan_create(f, &config, s, p.out()));
    check(cuabi_launch_plan_get_args(p, &p.layout_.block, &p.layout_.size));
    p.layout_.function = f;
    p.layout_.params = f.params();
    p.layout_.checked.assign(p.layout_.params.size(), 0);
    return p;
  }

  /* The argument block: its address and size (the kernel's args_size). */
  void* args() const noexcept { return layout_.block; }
  size_t args_size() const noexcept { return layout_.size; }

  /* Writes argument `index`; its size is checked the first time (and again
   * only when a value of another size is written there). */
  template <class T>
  void set(size_t index, const T& value) {
    const auto v = detail::kernel_value(value);
    if (index >= layout_.checked.size() || layout_.checked[index] != sizeof(v)) {
      check(cuabi_function_check_arg_size(layout_.function, index, sizeof(v)));
      layout_.checked[index] = sizeof(v);
    }
    std::memcpy(static_cast<unsigned char*>(layout_.block) + layout_.params[index].offset, &v,
                sizeof(v));
  }
  /* Writes every argument; the signature is checked once through
   * cuabi_function_check_arg_sizes (again only when another one is used). */
  template <class... Args>
  void set_args(const Args&... args) {
    const void* tag = detail::signature_tag<detail::kernel_type<Args>...>();
    if (layout_.signature != tag) {
      const size_t sizes[] = {sizeof(detail::kernel_type<Args>)..., 0};
      check(cuabi_function_check_arg_sizes(layout_.function, sizes, sizeof...(Args)));
      for (size_t i = 0; i < sizeof...(Args); ++i) layout_.checked[i] = sizes[i];
      layout_.signature = tag;
    }
    size_t index = 0;
    (write(index++, detail::kernel_value(args)), ...);
  }
  /* Launches with the block as it is now. */
  void launch() const { check(cuabi_launch_plan_launch(get())); }

 private:
  struct layout {
    cuabi_function function = nullptr;  // borrowed: for the checks only
    void* block = nullptr;
    size_t size = 0;
    std::vector<cuabi_param_info> params;
    std::vector<size_t> checked;  // the size checked for each argument, 0: none yet
    const void* signature = nullptr;
  };

  template <class V>
  void write(size_t index, const V& v) {
    std::memcpy(static_cast<unsigned char*>(layout_.block) + layout_.params[index].offset, &v,
                sizeof(V));
  }

  layout layout_;
};

/* ------------------------------------------------------------------------- */
/* Modules                                                                    */
/* ------------------------------------------------------------------------- */

/* What module::compile compiles with, beside the source. */
struct compile_options {
  std::string name;                           // for diagnostics; "": "cuabi_program.cu"
  std::vector<std::string> options;           // NVRTC options
  std::vector<header> headers;                // headers the source may include
  std::vector<std::string> name_expressions;  // e.g. "store<float>"
  cuabi_output output = CUABI_OUTPUT_CUBIN;   // or CUABI_OUTPUT_PTX
  cuabi_compile_flags flags = 0;              // CUABI_COMPILE_*
};

/* A __device__ global: its address and size. */
struct global_symbol {
  uint64_t device_ptr = 0;
  size_t bytes = 0;
};

/* Loaded device code (cuabi_module). */
class module : public detail::owner<cuabi_module, cuabi_module_release> {
 public:
  using owner::owner;

  /* Compiles `source` for `dev` and loads it (cuabi_module_compile, through
   * the on-disk cache); throws status_error<CUABI_ERROR_COMPILE> with NVRTC's
   * log when the code does not compile. */
  static module compile(const device& dev, const std::string& source,
                        const compile_options& opts = {}) {
    cuabi_compile_desc desc;
    check(cuabi_compile_desc_init(&desc, sizeof(desc)));
    const std::vector<const char*> options = detail::c_strings(opts.options);
    const std::vector<const char*> expressions = detail::c_strings(opts.name_expressions);
    std::vector<const char*> sources, names;
    for (const header& h : opts.headers) {
      sources.push_back(h.source.c_str());
      names.push_back(h.name.c_str());
    }
    desc.source = source.c_str();
    desc.name = detail::or_null(opts.name);
    desc.options = options.data();
    desc.num_options = options.size();
    desc.header_sources = sources.data();
    desc.header_names = names.data();
    desc.num_headers = names.size();
    desc.name_expressions = expressions.data();
    desc.num_name_expressions = expressions.size();
    desc.output = opts.output;
    desc.flags = opts.flags;
    cuabi::module m;
    check(cuabi_module_compile(dev, &desc, m.out()));
    return m;
  }
  /* Loads CUBIN, PTX or fatbin bytes. */
  static module load_data(const device& dev, const void* image, size_t size) {
    cuabi::module m;
    check(cuabi_module_load_data(dev, image, size, m.out()));
    return m;
  }
  static module load_data(const device& dev, const std::vector<char>& image) {
    return load_data(dev, image.data(), image.size());
  }
  static module load_data(const device& dev, const std::string& image) {
    return load_data(dev, image.data(), image.size());
  }
  /* Loads a CUBIN, PTX or fatbin file. */
  static module load_file(const device& dev, const std::string& path) {
    cuabi::module m;
    check(cuabi_module_load_file(dev, path.c_str(), m.out()));
    return m;
  }

  /* True when compile served it from the on-disk cache. */
  bool from_cache() const {
    int32_t hit = 0;
    check(cuabi_module_get_from_cache(get(), &hit));
    return hit != 0;
  }
  /* A kernel by name or by a name expression given when compiling. */
  function get_function(const std::string& name) const {
    function f;
    check(cuabi_module_get_function(get(), name.c_str(), f.out()));
    return f;
  }
  std::string lowered_name(const std::string& expression) const {
    return detail::fetch_string([&](char* b, size_t* s) {
      return cuabi_module_get_lowered_name(get(), expression.c_str(), b, s);
    });
  }
  global_symbol global(const std::string& name) const {
    global_symbol g;
    check(cuabi_module_get_global(get(), name.c_str(), &g.device_ptr, &g.bytes));
    return g;
  }
};

}  // namespace cuabi

#endif /* CUABI_CUABI_HPP */
