// Owned handles and the device check shared by the C++ test binaries (the
// C API tests and the hardening suite).
#ifndef CUABI_TESTS_COMMON_HANDLES_H
#define CUABI_TESTS_COMMON_HANDLES_H

#include <cuabi/cuabi.h>

#include <cstdint>
#include <string>

namespace cuabi_test {

// Owns one handle; releases it on destruction. A test may release a handle
// early with reset(), or give it up with take().
template <typename T, void (*Release)(T)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(T h) : h_(h) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& o) noexcept : h_(o.take()) {}
  Owned& operator=(Owned&& o) noexcept {
    reset(o.take());
    return *this;
  }
  ~Owned() { Release(h_); }
  T get() const { return h_; }
  operator T() const { return h_; }  // NOLINT: used as the C handle it is
  // For out-parameters: releases the current handle first.
  T* out() {
    reset();
    return &h_;
  }
  void reset(T h = nullptr) {
    Release(h_);
    h_ = h;
  }
  T take() {
    T h = h_;
    h_ = nullptr;
    return h;
  }

 private:
  T h_ = nullptr;
};

using Device = Owned<cuabi_device, cuabi_device_release>;
using Program = Owned<cuabi_program, cuabi_program_release>;
using Module = Owned<cuabi_module, cuabi_module_release>;
using Function = Owned<cuabi_function, cuabi_function_release>;
using Buffer = Owned<cuabi_buffer, cuabi_buffer_release>;
using HostBuffer = Owned<cuabi_host_buffer, cuabi_host_buffer_release>;
using Stream = Owned<cuabi_stream, cuabi_stream_release>;
using Event = Owned<cuabi_event, cuabi_event_release>;
using Graph = Owned<cuabi_graph, cuabi_graph_release>;
using GraphExec = Owned<cuabi_graph_exec, cuabi_graph_exec_release>;

// Why this process cannot run GPU tests, or "" when device 0 is usable.
inline std::string NoDeviceReason() {
  int32_t count = 0;
  const cuabi_status st = cuabi_device_get_count(&count);
  if (st != CUABI_SUCCESS) {
    return std::string("no CUDA device: cuabi_device_get_count answered ") + cuabi_status_get_name(st) +
           ": " + cuabi_last_error_message();
  }
  if (count == 0) return "no CUDA device: the driver reports 0 devices";
  return "";
}

}  // namespace cuabi_test

#endif  // CUABI_TESTS_COMMON_HANDLES_H
