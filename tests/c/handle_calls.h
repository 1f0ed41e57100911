// Every C API call that takes a handle, callable with an arbitrary handle
// value in the handle's position and valid values everywhere else. The
// handle tests feed them NULL, released, wrong-kind and made-up values.
#ifndef CUABI_TESTS_C_HANDLE_CALLS_H
#define CUABI_TESTS_C_HANDLE_CALLS_H

#include <cuabi/cuabi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kinds.h"

namespace cuabi_test {

// The kinds of handle, from the one list (capi/core/kinds.h): kDevice, ...
enum class Kind {
#define CUABI_TEST_KIND(Name, name) k##Name,
  CUABI_HANDLE_KINDS(CUABI_TEST_KIND)
#undef CUABI_TEST_KIND
};

// The handle type's name without "cuabi_", e.g. "host_buffer".
const char* KindName(Kind kind);
std::vector<Kind> AllKinds();

struct HandleCall {
  std::string name;  // the C function, e.g. "cuabi_buffer_get_size"
  Kind kind;         // the kind of handle in the position under test
  // Calls the function with `handle` in that position. Returns its status;
  // sets *out_touched when an out-parameter changed despite a failure.
  std::function<cuabi_status(uintptr_t handle, bool* out_touched)> call;
};

struct ReleaseCall {
  std::string name;
  Kind kind;
  std::function<void(uintptr_t handle)> release;
};

// Calls whose first handle parameter has the given role.
const std::vector<HandleCall>& HandleCalls();
const std::vector<ReleaseCall>& ReleaseCalls();
void ReleaseAny(Kind kind, uintptr_t handle);

}  // namespace cuabi_test

#endif  // CUABI_TESTS_C_HANDLE_CALLS_H
