/*
 * cuabi.hpp — C++17 owners and exceptions over cuabi's C API (cuabi.h).
 *
 * Header-only: everything here is inline over the C functions of
 * libcuabi.so, so a C++ program links exactly what a C program links.
 *
 * Two layers, one class per handle:
 *
 *   cuabi_objects.hpp  generated from the API model (scripts/regen_api/cpp.py):
 *                      a class per handle kind and a C++ form of every C
 *                      function;
 *   this file          the error types, the one owner template, and the
 *                      idioms a generator cannot know (typed launches and
 *                      argument packing, launch plans, host functions,
 *                      typed copies), which extend the generated classes
 *                      through cuabi::extend<handle, class>, a base of each.
 *
 * Owners.     Each handle type has a move-only owner (cuabi::device,
 *             cuabi::program, cuabi::module, cuabi::function, cuabi::buffer,
 *             cuabi::host_buffer, cuabi::stream, cuabi::event, cuabi::graph,
 *             cuabi::graph_exec, cuabi::launch_plan, cuabi::memory_pool,
 *             cuabi::array, cuabi::texture, cuabi::surface, cuabi::linker,
 *             cuabi::library) that releases its handle when destroyed. An
 *             owner converts to its C handle, so it can be passed to any C
 *             function; get() says so explicitly, out() hands a C function's
 *             out-parameter to it, detach() gives the handle up. Objects are
 *             made by static functions named after the C calls
 *             (device::get, buffer::alloc, module::compile, ...); an owner
 *             can also adopt a handle from a C call: cuabi::buffer b(raw).
 *
 * Names.      A C function cuabi_<object>_<verb> is <object>::<verb>; a
 *             getter drops get_ (cuabi_device_get_name: device::name()); a
 *             library call is a free function (cuabi_driver_get_version:
 *             cuabi::driver_version()). Out-parameters are results (a struct
 *             where there are several), two-call strings std::string, blobs
 *             std::vector<unsigned char>, new handles their owners.
 *             cuabi_objects.hpp ends with the list of every C function and
 *             its C++ form.
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
#include <functional>
#include <memory>
#include <mutex>
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

/** A launch a sticky fault's error names (cuabi_last_error_get_launch): its
 * kernel and the rest of its record. */
struct faulted_launch {
  std::string kernel;          ///< the kernel's name
  cuabi_launch_record record;  ///< grid, block, shared memory, cluster, stream and sequence
};

/** A failed cuabi call: its status, the CUresult or nvrtcResult behind it (0 if
 * none), the library's message as cuabi_last_error_message gave it, the
 * NVRTC log of a failed compile ("" otherwise) and, after a sticky fault
 * (CUABI_ERROR_CONTEXT_LOST), the launches not seen complete, most recent
 * first. what() is "<status name>: <message>". Copying never throws. */
class error : public std::runtime_error {
 public:
  /** An error of `status`, with the driver's or NVRTC's `code`, the
   * library's `message`, NVRTC's `log` and the faulted `launches`. */
  error(cuabi_status status, int32_t code, std::string message, std::string log,
        std::vector<faulted_launch> launches = {})
      : std::runtime_error(std::string(cuabi_status_get_name(status)) + ": " + message),
        status_(status),
        code_(code),
        text_(std::make_shared<const text>(
            text{std::move(message), std::move(log), std::move(launches)})) {}

  /** The status the call answered. */
  cuabi_status status() const noexcept { return status_; }
  /** The status's symbolic name, from the library (cuabi_status_get_name). */
  const char* status_name() const noexcept { return cuabi_status_get_name(status_); }
  /** The driver's CUresult or NVRTC's nvrtcResult, 0 if none. */
  int32_t code() const noexcept { return code_; }
  /** The library's message: names the failing call and what was wrong. */
  const std::string& message() const noexcept { return text_->message; }
  /** NVRTC's log after CUABI_ERROR_COMPILE, else "". */
  const std::string& log() const noexcept { return text_->log; }
  /** After CUABI_ERROR_CONTEXT_LOST, the launches not seen complete, most
   * recent first; else empty. */
  const std::vector<faulted_launch>& launches() const noexcept { return text_->launches; }

 private:
  struct text {
    std::string message;
    std::string log;
    std::vector<faulted_launch> launches;
  };
  cuabi_status status_;
  int32_t code_;
  std::shared_ptr<const text> text_;
};

/** The error of one status, so a caller can catch exactly that one:
 * catch (const cuabi::status_error<CUABI_ERROR_OUT_OF_MEMORY>&). */
template <cuabi_status S>
class status_error : public error {
 public:
  static constexpr cuabi_status value = S;  ///< the one status it stands for
  /** The error `e`, whose status is S. */
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
  std::vector<faulted_launch> launches;
  const size_t count = status == CUABI_ERROR_CONTEXT_LOST ? cuabi_last_error_get_launch_count() : 0;
  for (size_t i = 0; i < count; ++i) {
    faulted_launch l{std::string(), CUABI_LAUNCH_RECORD_INIT};
    size_t n = 0;
    if (cuabi_last_error_get_launch(i, &l.record) != CUABI_SUCCESS ||
        cuabi_last_error_get_launch_kernel(i, nullptr, &n) != CUABI_SUCCESS || n == 0)
      break;
    l.kernel.resize(n);
    if (cuabi_last_error_get_launch_kernel(i, &l.kernel[0], &n) != CUABI_SUCCESS) break;
    l.kernel.resize(n - 1);
    launches.push_back(std::move(l));
  }
  throw_as_status(error(status, code, std::move(message), std::move(log), std::move(launches)),
                  std::make_integer_sequence<int32_t, CUABI_STATUS_COUNT>{});
}

}  // namespace detail

/** Throws the calling thread's last error unless `status` is CUABI_SUCCESS.
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
std::vector<unsigned char> fetch_bytes(Get&& get) {
  size_t size = 0;
  check(get(nullptr, &size));
  std::vector<unsigned char> bytes(size);
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
  /** Adopts `handle` (from a C call): this owner releases it. */
  explicit owner(H handle) noexcept : h_(handle) {}
  owner(const owner&) = delete;
  owner& operator=(const owner&) = delete;
  owner(owner&& other) noexcept : h_(other.detach()) {}
  owner& operator=(owner&& other) noexcept {
    if (this != &other) reset(other.detach());
    return *this;
  }
  ~owner() { Release(h_); }

  /** The C handle, still owned here. */
  H get() const noexcept { return h_; }
  /** The C handle, for passing to a C function. */
  operator H() const noexcept { return h_; }  // NOLINT: an owner stands for its handle
  explicit operator bool() const noexcept { return h_ != nullptr; }
  /** Releases the current handle and returns where a C function may store a
   * new one: cuabi_buffer_alloc(device, n, buffer.out()). */
  H* out() noexcept {
    reset();
    return &h_;
  }
  /** Releases the current handle (if any) and owns `handle` instead. */
  void reset(H handle = nullptr) noexcept {
    H old = h_;
    h_ = handle;
    if (old != handle) Release(old);
  }
  /** Gives the handle up without releasing it; the caller now owns it. */
  H detach() noexcept {
    H h = h_;
    h_ = nullptr;
    return h;
  }

 private:
  H h_ = nullptr;
};

}  // namespace detail

/** What a generated class of handle kind H inherits beside its owner: empty,
 * unless this file specializes it for H with the idioms of that kind. Self
 * is the generated class. */
template <class H, class Self>
class extend {};

class buffer;
class function;
class tensor_map;

/** A tensor map's value as a kernel receives it (`const __grid_constant__
 * CUtensorMap`): CUABI_TENSOR_MAP_BYTES bytes, 64-byte aligned. A
 * cuabi::tensor_map given to launch() passes as this. */
struct alignas(64) tensor_map_value {
  unsigned char bytes[CUABI_TENSOR_MAP_BYTES];  ///< the map, opaque
};

/* ------------------------------------------------------------------------- */
/* Launch configurations                                                      */
/* ------------------------------------------------------------------------- */

/** Grid or block dimensions; an integer converts to (x, 1, 1). */
struct dims {
  /** (x_, y_, z_); an integer alone converts to (x, 1, 1). */
  constexpr dims(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) noexcept  // NOLINT
      : x(x_), y(y_), z(z_) {}
  uint32_t x;  ///< the first dimension
  uint32_t y;  ///< the second dimension
  uint32_t z;  ///< the third dimension
};

/** A launch configuration from the library's defaults
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

/** A launch configuration with fluent setters for the extended fields; it
 * converts to const cuabi_launch_config&, so it goes wherever one does:
 *   f.launch(cuabi::config(grid, block).cooperative(), s, args...);
 *   cuabi::config(8, 128).cluster(2).programmatic_serialization();
 * Any extended field makes the launch go through cuLaunchKernelEx; the
 * library checks each against the kernel and the device first. */
class config {
 public:
  /** `grid` blocks of `block` threads with `shared_mem_bytes` of dynamic
   * shared memory, every other field at its default. */
  config(dims grid, dims block, uint32_t shared_mem_bytes = 0)
      : c_(launch_config(grid, block, shared_mem_bytes)) {}
  /** A copy of the C struct `c`. */
  explicit config(const cuabi_launch_config& c) : c_(c) {}

  /** Every block resident at once; the kernel may synchronise the grid. */
  config& cooperative(bool on = true) { return flag(CUABI_LAUNCH_COOPERATIVE, on); }
  /** Thread-block clusters of `d` blocks ((0, 0, 0): none). */
  config& cluster(dims d) {
    c_.cluster_x = d.x;
    c_.cluster_y = d.y;
    c_.cluster_z = d.z;
    return *this;
  }
  /** No thread-block clusters (the kernel's own cluster dimensions, if any). */
  config& no_cluster() {
    c_.cluster_x = c_.cluster_y = c_.cluster_z = 0;
    return *this;
  }
  /** Programmatic dependent launch: may start before the previous kernel on
   * the stream has finished (it waits with griddepcontrol.wait /
   * cudaGridDependencySynchronize before reading its results). */
  config& programmatic_serialization(bool on = true) {
    return flag(CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION, on);
  }
  /** An event (made with CUABI_EVENT_DISABLE_TIMING) recorded when every block
   * has triggered, or started with `at_block_start`; nullptr: none. */
  config& programmatic_event(cuabi_event e, bool at_block_start = false) {
    c_.programmatic_event = e;
    return flag(CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START, e != nullptr && at_block_start);
  }
  /** The launch's priority (0: the stream's). */
  config& priority(int32_t p) {
    c_.priority = p;
    return *this;
  }
  /** The dynamic shared memory per block, in bytes. */
  config& shared_mem_bytes(uint32_t bytes) {
    c_.shared_mem_bytes = bytes;
    return *this;
  }

  // Launch attributes: each reaches a plain launch, a plan and the kernel
  // node a captured launch makes.
  /** The L2 access-policy window of this kernel's accesses (bytes 0: none). */
  config& access_policy_window(const cuabi_access_policy_window& w) {
    c_.access_policy_window = w;
    return *this;
  }
  /** The window [base, base + bytes) with `hit_ratio` of its accesses
   * `hit` and the rest `miss`. */
  config& access_policy_window(uint64_t base, size_t bytes, float hit_ratio = 1.0f,
                               cuabi_access_property hit = CUABI_ACCESS_PROPERTY_PERSISTING,
                               cuabi_access_property miss = CUABI_ACCESS_PROPERTY_STREAMING) {
    c_.access_policy_window.base = base;
    c_.access_policy_window.bytes = bytes;
    c_.access_policy_window.hit_ratio = hit_ratio;
    c_.access_policy_window.hit_property = hit;
    c_.access_policy_window.miss_property = miss;
    return *this;
  }
  /** How a host thread waits for this kernel ((cuabi_sync_policy)0: the stream's). */
  config& sync_policy(cuabi_sync_policy p) {
    c_.sync_policy = p;
    return *this;
  }
  /** How a cluster's blocks are placed on the multiprocessors. */
  config& cluster_scheduling(cuabi_cluster_scheduling_policy p) {
    c_.cluster_scheduling_policy = p;
    return *this;
  }
  /** The kernel's memory-synchronisation domain. */
  config& mem_sync_domain(cuabi_mem_sync_domain d) {
    c_.mem_sync_domain = d;
    return *this;
  }
  /** The domain ids the default and the remote domain stand for. */
  config& mem_sync_domain_map(int32_t default_id, int32_t remote_id) {
    c_.mem_sync_domain_map_default = default_id;
    c_.mem_sync_domain_map_remote = remote_id;
    return *this;
  }
  /** The preferred shared-memory carve-out, 0 to 100 percent (-1: the kernel's). */
  config& shared_carveout(int32_t percent) {
    c_.shared_carveout = percent;
    return *this;
  }
  /** An event (made with CUABI_EVENT_DISABLE_TIMING) recorded once every
   * block has started; nullptr: none. */
  config& completion_event(cuabi_event e) {
    c_.completion_event = e;
    return *this;
  }
  /** The kernel node a captured launch makes is device-updatable. */
  config& device_updatable(bool on = true) {
    return flag(CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE, on);
  }

  /** The C struct, for the cuabi_launch_* functions. */
  const cuabi_launch_config& get() const noexcept { return c_; }
  /** The C struct, wherever one is taken. */
  operator const cuabi_launch_config&() const noexcept { return c_; }  // NOLINT

 private:
  config& flag(cuabi_launch_flags bit, bool on) {
    c_.flags = on ? (c_.flags | bit) : (c_.flags & ~bit);
    return *this;
  }
  cuabi_launch_config c_;
};

/* ------------------------------------------------------------------------- */
/* Kernel arguments                                                           */
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
inline uint64_t kernel_value(const buffer& b);
inline tensor_map_value kernel_value(const tensor_map& m);

template <class T>
using kernel_type = decltype(kernel_value(std::declval<const T&>()));

// One address per argument signature, telling signatures apart.
template <class... T>
const void* signature_tag() noexcept {
  static const char tag = 0;
  return &tag;
}

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

// The application's context-lost handler: one per program.
struct lost_slot {
  std::mutex mutex;
  std::function<void(const std::string&)> fn;
  static lost_slot& get() {
    static lost_slot* s = new lost_slot;  // never destroyed: called until exit
    return *s;
  }
  static void CUABI_CALL run(void*, const char* message) noexcept {
    std::function<void(const std::string&)> fn;
    try {
      lost_slot& s = get();
      std::lock_guard<std::mutex> lock(s.mutex);
      fn = s.fn;
    } catch (...) {
      return;
    }
    try {
      if (fn) fn(message ? message : "");
    } catch (...) {
      // An exception cannot cross the C library: the handler's failure is dropped.
    }
  }
};

}  // namespace detail

/** Calls `fn` once, with the failing call's message, when a call first finds
 * the context lost (cuabi_set_context_lost_callback), on that call's thread;
 * at once when the context is lost already. An exception `fn` throws is
 * dropped: it cannot cross the C library. An empty `fn` removes it. */
inline void on_context_lost(std::function<void(const std::string&)> fn) {
  detail::lost_slot& s = detail::lost_slot::get();
  const bool set = static_cast<bool>(fn);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.fn = std::move(fn);
  }
  check(cuabi_set_context_lost_callback(set ? &detail::lost_slot::run : nullptr, nullptr));
}

/* ------------------------------------------------------------------------- */
/* Idioms of each handle kind                                                 */
/* ------------------------------------------------------------------------- */

/** A GPU and its primary context. */
template <class Self>
class extend<cuabi_device, Self> {
 public:
  /** Device `ordinal` (cuabi_device_get); each call is a new handle. */
  static Self open(int32_t ordinal) { return Self::get(ordinal); }
  /** Names this header used before: memory_info(), context(). */
  auto memory() const { return self().memory_info(); }
  /** The device's CUcontext, as an integer (context()). */
  uint64_t cu_context() const { return self().context(); }

 private:
  const Self& self() const noexcept { return static_cast<const Self&>(*this); }
};

/** A CUDA stream. Where a call takes a cuabi_stream, pass a stream or nullptr
 * for the device's default stream. */
template <class Self>
class extend<cuabi_stream, Self> {
 public:
  /** The raw CUstream value, for interop (handle()). */
  uint64_t cu_stream() const { return self().handle(); }
  /** Later work on this stream waits for `e` (wait_event()). */
  void wait(cuabi_event e) const { self().wait_event(e); }

  /** Runs `fn()` (any callable) on a driver thread when the stream reaches
   * this point. It must not wait on the GPU. If it throws, the exception's
   * what() is the failure the stream's next synchronize() throws, as
   * status_error<CUABI_ERROR_HOST_FUNCTION>. */
  template <class F>
  void launch_host_func(F&& fn) const {
    using call = detail::host_call<std::decay_t<F>>;
    auto* record = new call{std::forward<F>(fn)};
    const cuabi_status st = cuabi_stream_launch_host_func(self().get(), &call::run, record);
    if (st != CUABI_SUCCESS) {
      delete record;
      check(st);
    }
  }

 private:
  const Self& self() const noexcept { return static_cast<const Self&>(*this); }
};

/** A CUDA event. */
template <class Self>
class extend<cuabi_event, Self> {
 public:
  /** Milliseconds between two recorded, completed events. */
  static float elapsed_ms(cuabi_event start, cuabi_event end) {
    float ms = 0;
    check(cuabi_event_get_elapsed_ms(start, end, &ms));
    return ms;
  }
};

/** A stream-ordered memory pool. */
template <class Self>
class extend<cuabi_memory_pool, Self> {
 public:
  /** The device's default pool (device::get_default_memory_pool()). */
  static Self default_pool(cuabi_device dev) {
    Self p;
    check(cuabi_device_get_default_memory_pool(dev, p.out()));
    return p;
  }
};

/** A texture object; value() is the 8-byte kernel argument (handle()). */
template <class Self>
class extend<cuabi_texture, Self> {
 public:
  /** The 8-byte kernel argument: the CUtexObject (handle()). */
  uint64_t value() const { return static_cast<const Self&>(*this).handle(); }
};

/** A surface object; value() is the 8-byte kernel argument (handle()). */
template <class Self>
class extend<cuabi_surface, Self> {
 public:
  /** The 8-byte kernel argument: the CUsurfObject (handle()). */
  uint64_t value() const { return static_cast<const Self&>(*this).handle(); }
};

/** Device memory. Offsets and byte counts are checked by the library against
 * the buffer's size. */
template <class Self>
class extend<cuabi_buffer, Self> {
 public:
  /** Device to device: `bytes` from `src` at `src_offset` to here at `offset`
   * (copy(), copy_async()). */
  void copy_from(size_t offset, cuabi_buffer src, size_t src_offset, size_t bytes) const {
    self().copy(offset, src, src_offset, bytes);
  }
  /** As copy_from, ordered on stream `s`. */
  void copy_from_async(size_t offset, cuabi_buffer src, size_t src_offset, size_t bytes,
                       cuabi_stream s) const {
    self().copy_async(offset, src, src_offset, bytes, s);
  }

  /** A whole vector in at `offset` bytes, and `count` elements back out. */
  template <class T>
  void upload(const std::vector<T>& values, size_t offset = 0) const {
    static_assert(std::is_trivially_copyable<T>::value, "upload copies bytes");
    self().copy_from_host(offset, values.data(), values.size() * sizeof(T));
  }
  /** `count` elements of T from `offset` bytes, as a vector. */
  template <class T>
  std::vector<T> download(size_t count, size_t offset = 0) const {
    static_assert(std::is_trivially_copyable<T>::value, "download copies bytes");
    std::vector<T> values(count);
    self().copy_to_host(offset, values.data(), count * sizeof(T));
    return values;
  }

 private:
  const Self& self() const noexcept { return static_cast<const Self&>(*this); }
};

/** Page-locked host memory. */
template <class Self>
class extend<cuabi_host_buffer, Self> {
 public:
  /** The memory's address (pointer()), and the memory as an array of T. */
  void* data() const { return static_cast<const Self&>(*this).pointer(); }
  /** The memory as an array of T. */
  template <class T>
  T* as() const {
    return static_cast<T*>(data());
  }
};

/** A header given to a compile: its include name and its contents. */
struct header {
  std::string name;    ///< the name the source's `#include` uses
  std::string source;  ///< the header's contents
};

/** An NVRTC program, for when the compiled code itself is wanted (PTX,
 * CUBIN); module::compile goes from source to a module. */
template <class Self>
class extend<cuabi_program, Self> {
 public:
  /** `name` is the file name in diagnostics ("": "cuabi_program.cu"). */
  static Self create(const std::string& source, const std::string& name = std::string(),
                     const std::vector<header>& headers = {}) {
    std::vector<std::string> sources, names;
    for (const header& h : headers) {
      sources.push_back(h.source);
      names.push_back(h.name);
    }
    return Self::create(source, detail::or_null(name), sources, names);
  }
};

/** What module::compile compiles with, beside the source. The typed options
 * are handed to the library as they are: it turns them into NVRTC options
 * and checks them (cuabi_compile_desc says how). */
struct compile_options {
  std::string name;                           ///< for diagnostics; "": "cuabi_program.cu"
  std::vector<std::string> options;           ///< raw NVRTC options, after the typed ones
  std::vector<header> headers;                ///< headers the source may include
  std::vector<std::string> name_expressions;  ///< e.g. "store<float>"
  cuabi_output output = CUABI_OUTPUT_CUBIN;   ///< or CUABI_OUTPUT_PTX
  cuabi_compile_flags flags = 0;              ///< CUABI_COMPILE_*
  std::string arch;                           ///< "sm_90", "compute_90"; "": the device's own
  std::vector<std::string> defines;           ///< "N", "N=4", "SQUARE(x)=((x)*(x))"
  std::vector<std::string> include_paths;     ///< folders searched by `#include`, in order
  cuabi_cxx_standard cxx_standard =
      CUABI_STD_DEFAULT;      ///< the C++ standard (-std=); CUABI_STD_DEFAULT: NVRTC's own
  bool fast_math = false;     ///< fast, less precise math (--use_fast_math)
  bool line_info = false;     ///< line information for profilers (-lineinfo)
  bool device_debug = false;  ///< device debug information (-G)
  bool relocatable = false;   ///< relocatable device code, for linking (-rdc=true)
};

/** Loaded device code. */
template <class Self>
class extend<cuabi_module, Self> {
 public:
  /** Compiles `source` for `dev` and loads it (cuabi_module_compile, through
   * the on-disk cache); throws status_error<CUABI_ERROR_COMPILE> with NVRTC's
   * log when the code does not compile. */
  static Self compile(cuabi_device dev, const std::string& source,
                      const compile_options& opts = {}) {
    cuabi_compile_desc desc;
    check(cuabi_compile_desc_init(&desc, sizeof(desc)));
    const std::vector<const char*> options = detail::c_strings(opts.options);
    const std::vector<const char*> expressions = detail::c_strings(opts.name_expressions);
    const std::vector<const char*> defines = detail::c_strings(opts.defines);
    const std::vector<const char*> include_paths = detail::c_strings(opts.include_paths);
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
    desc.arch = detail::or_null(opts.arch);
    desc.defines = defines.data();
    desc.num_defines = defines.size();
    desc.include_paths = include_paths.data();
    desc.num_include_paths = include_paths.size();
    desc.cxx_standard = opts.cxx_standard;
    desc.fast_math = opts.fast_math ? 1 : 0;
    desc.line_info = opts.line_info ? 1 : 0;
    desc.device_debug = opts.device_debug ? 1 : 0;
    desc.relocatable = opts.relocatable ? 1 : 0;
    return Self::compile(dev, desc);
  }
  /** Loads CUBIN, PTX or fatbin bytes. */
  static Self load_data(cuabi_device dev, const std::vector<unsigned char>& image) {
    return Self::load_data(dev, image.data(), image.size());
  }
  /** Loads CUBIN, PTX or fatbin bytes held as chars. */
  static Self load_data(cuabi_device dev, const std::vector<char>& image) {
    return Self::load_data(dev, image.data(), image.size());
  }
  /** Loads CUBIN, PTX or fatbin bytes held in a string. */
  static Self load_data(cuabi_device dev, const std::string& image) {
    return Self::load_data(dev, image.data(), image.size());
  }
};

/** A kernel in a module. */
template <class Self>
class extend<cuabi_function, Self> {
 public:
  /** check_arg_sizes for the types Args as launch() would pass them. */
  template <class... Args>
  void check_args() const {
    const size_t sizes[] = {sizeof(detail::kernel_type<Args>)..., 0};
    check(cuabi_function_check_arg_sizes(self().get(), sizes, sizeof...(Args)));
  }

  /** Launches on `s` (nullptr: the default stream) with `args` in the
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
          check(cuabi_function_launch_sized(self().get(), &config, s, params, sizes,
                                            sizeof...(Args)));
        },
        values);
  }

 private:
  const Self& self() const noexcept { return static_cast<const Self&>(*this); }
};

/** An instantiated graph. */
template <class Self>
class extend<cuabi_graph_exec, Self> {
 public:
  /** Replaces the arguments of kernel node `index` (numbered in capture
   * order) with `args`, laid out at `f`'s parameter offsets after the library
   * checked their sizes; `f` must be the node's kernel.
   * set_kernel_node_args_packed() takes a block already laid out. */
  template <class... Args>
  void set_kernel_node_args(size_t index, const function& f, const Args&... args) const;
};

/** A prepared launch (cuabi_launch_plan): configuration and stream checked
 * once, the arguments written in place into the plan's block, then launched
 * with one call. The typed setters check each argument's size once through
 * the library (cuabi_function_check_arg_size, or _sizes for set_args) and
 * then only copy; they use the function the plan was made from, so keep that
 * function alive until every argument has been set once (a released one
 * answers CUABI_ERROR_INVALID_HANDLE). The plan itself keeps the kernel and
 * the stream alive for its launches. Made by create() only: the setters need
 * the kernel's layout, which a bare handle does not bring. */
template <class Self>
class extend<cuabi_launch_plan, Self> {
 public:
  extend() noexcept = default;
  /** Takes `other`'s argument block; `other` is left without one. */
  extend(extend&& other) noexcept : layout_(std::exchange(other.layout_, layout())) {}
  /** Takes `other`'s argument block; `other` is left without one. */
  extend& operator=(extend&& other) noexcept {
    if (this != &other) layout_ = std::exchange(other.layout_, layout());
    return *this;
  }
  ~extend() = default;

  /** A plan launching `f` with `config` on stream `s` (nullptr: the
   * device's default stream); its arguments are written with set(). */
  static Self create(const function& f, const cuabi_launch_config& config,
                     cuabi_stream s = nullptr);

  /** The argument block: its address and size (the kernel's args_size). */
  void* args() const noexcept { return layout_.block; }
  /** The argument block's size in bytes. */
  size_t args_size() const noexcept { return layout_.size; }

  /** Writes argument `index`; its size is checked the first time (and again
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
  /** Writes every argument; the signature is checked once through
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

}  // namespace cuabi

/** The classes, with a C++ form of every C function. */
#include <cuabi/cuabi_objects.hpp>

namespace cuabi {

/* ------------------------------------------------------------------------- */
/* Idioms that need the classes complete                                      */
/* ------------------------------------------------------------------------- */

inline uint64_t detail::kernel_value(const buffer& b) { return b.pointer(); }
inline tensor_map_value detail::kernel_value(const tensor_map& m) {
  tensor_map_value v{};
  size_t size = sizeof v.bytes;
  check(cuabi_tensor_map_get_bytes(m.get(), v.bytes, &size));
  return v;
}

template <class Self>
template <class... Args>
void extend<cuabi_graph_exec, Self>::set_kernel_node_args(size_t index, const function& f,
                                                          const Args&... args) const {
  const size_t sizes[] = {sizeof(detail::kernel_type<Args>)..., 0};
  check(cuabi_function_check_arg_sizes(f, sizes, sizeof...(Args)));
  const std::vector<cuabi_param_info> params = f.params();
  std::vector<unsigned char> block(f.args_size());
  size_t i = 0;
  auto put = [&](const auto& v) { std::memcpy(block.data() + params[i++].offset, &v, sizeof(v)); };
  (put(detail::kernel_value(args)), ...);
  (void)put;
  static_cast<const Self&>(*this).set_kernel_node_args_packed(index, f, block.data(), block.size());
}

template <class Self>
Self extend<cuabi_launch_plan, Self>::create(const function& f, const cuabi_launch_config& config,
                                             cuabi_stream s) {
  Self p;
  check(cuabi_launch_plan_create(f, &config, s, p.out()));
  layout& l = static_cast<extend&>(p).layout_;
  check(cuabi_launch_plan_get_args(p, &l.block, &l.size));
  l.function = f;
  l.params = f.params();
  l.checked.assign(l.params.size(), 0);
  return p;
}

// ---------------------------------------------------------------------------
// DLPack: buffers handed to frameworks, and their tensors taken over
// ---------------------------------------------------------------------------

/// Calls a managed tensor's deleter, once (a NULL tensor or deleter: nothing).
struct dlpack_deleter {
  /** Runs the tensor's own deleter, once, if it has one. */
  void operator()(cuabi_dlpack_managed_tensor_versioned* t) const noexcept {
    if (t && t->deleter) t->deleter(t);
  }
};

/// An owned DLPack 1.x tensor: its deleter runs when this goes, unless
/// release() handed it to a consumer (which then calls it).
using dlpack_tensor = std::unique_ptr<cuabi_dlpack_managed_tensor_versioned, dlpack_deleter>;

/// DLPack's element type of T: {code, bits, lanes}.
template <class T>
constexpr cuabi_dlpack_dtype dlpack_dtype_of() {
  static_assert(std::is_arithmetic<T>::value, "a DLPack element is a number or a bool");
  return cuabi_dlpack_dtype{
      static_cast<uint8_t>(std::is_same<T, bool>::value ? CUABI_DLPACK_BOOL
                           : std::is_floating_point<T>::value ? CUABI_DLPACK_FLOAT
                           : std::is_signed<T>::value        ? CUABI_DLPACK_INT
                                                             : CUABI_DLPACK_UINT),
      static_cast<uint8_t>(sizeof(T) * 8), 1};
}

/// `b` as a compact row-major tensor of `shape` elements of T from byte
/// `byte_offset` (cuabi_buffer_export_dlpack, which checks it against the
/// buffer's size). The tensor holds the buffer until its deleter runs.
template <class T>
dlpack_tensor to_dlpack(const buffer& b, const std::vector<int64_t>& shape,
                        uint64_t byte_offset = 0, bool read_only = false) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i] > 1 ? shape[i] : 1;
  }
  constexpr cuabi_dlpack_dtype dt = dlpack_dtype_of<T>();
  return dlpack_tensor(b.export_dlpack(byte_offset, shape, strides, dt.code, dt.bits, dt.lanes,
                                       read_only ? CUABI_DLPACK_FLAG_READ_ONLY : 0u));
}

/// Takes `tensor` over as a borrowed buffer (cuabi_buffer_import_dlpack): on
/// success the buffer owns it (its deleter runs when the buffer's last
/// reference goes) and `tensor` is left empty; on a refusal (thrown) it
/// stays the caller's.
inline buffer from_dlpack(dlpack_tensor& tensor, cuabi_dlpack_import_flags flags = 0) {
  buffer b = buffer::import_dlpack(tensor.get(), flags);
  (void)tensor.release();
  return b;
}

}  // namespace cuabi

#endif /* CUABI_CUABI_HPP */
