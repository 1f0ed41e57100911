// The CUDA driver, opened with dlopen on first use. Every entry point is listed
// once, in driver_entry_points.h, with the CUDA version its signature is
// requested at; a missing one is replaced by a trampoline that answers "not
// supported" and names itself, so only the call that needs it fails.
#pragma once

#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <string>

#include "driver_entry_points.h"
#include "error.hpp"

namespace cuabi {

// The entry points, with the CUDA version each is requested at:
// CUABI_DRIVER_ENTRY_POINTS in driver_entry_points.h.
struct DriverApi {
#define CUABI_DECLARE(name, version) PFN_##name##_v##version name = nullptr;
  CUABI_DRIVER_ENTRY_POINTS(CUABI_DECLARE)
#undef CUABI_DECLARE
};

namespace detail {
// Set once the driver is open and cuInit ran; read by driver()'s fast path.
extern std::atomic<const DriverApi*> g_driver;
// Set in a child forked after CUDA was initialised.
extern std::atomic<bool> g_forked;
const DriverApi& driver_slow();
}  // namespace detail

// The driver table, opening the driver and calling cuInit on first use.
// Throws DRIVER_NOT_FOUND / STUB_DRIVER / FORKED / a cuInit failure. Inline:
// every call into the driver goes through here.
inline const DriverApi& driver() {
  const DriverApi* api = detail::g_driver.load(std::memory_order_acquire);
  if (api && !detail::g_forked.load(std::memory_order_relaxed)) return *api;
  return detail::driver_slow();
}
// True once the driver was opened and cuInit ran (even with no device).
bool driver_ready();
// 0 devices is not an error: cuInit's CUDA_ERROR_NO_DEVICE is remembered here.
bool driver_has_no_device();
const std::string& driver_path();
int driver_version();

// Checks a CUresult; on failure throws with a message naming `what` (the
// driver call) and the driver's own name and explanation of the error.
// Inline: the successful answer, every call's, costs one comparison.
[[noreturn]] void check_failed(CUresult result, const char* what);
inline void check(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) check_failed(result, what);
}
// Maps a CUresult to cuabi's status (sticky faults become CONTEXT_LOST).
cuabi_status status_of(CUresult result);
std::string describe(CUresult result);

// Appended to the message of every CONTEXT_LOST failure.
extern const char* const kContextLostAdvice;

// Set by a missing entry point's trampoline, read by check().
extern thread_local const char* t_missing_entry_point;

}  // namespace cuabi
