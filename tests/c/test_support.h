// Helpers shared by the C API test binaries.
#ifndef CUABI_TESTS_C_TEST_SUPPORT_H
#define CUABI_TESTS_C_TEST_SUPPORT_H

#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <cuabi/cuabi.hpp>
#include <functional>
#include <string>
#include <vector>

#include "kinds.h"

namespace cuabi_test {

// The owners of cuabi.hpp under the names the tests use, one per kind of
// handle (capi/core/kinds.h): each releases its handle when destroyed; out()
// takes a C call's out-parameter, reset() releases early, detach() gives the
// handle up.
#define CUABI_TEST_OWNER(Name, name) using Name = cuabi::name;
CUABI_HANDLE_KINDS(CUABI_TEST_OWNER)
#undef CUABI_TEST_OWNER

// Why this process cannot run GPU tests, or "" when device 0 is usable.
inline std::string NoDeviceReason() {
  int32_t count = 0;
  const cuabi_status st = cuabi_device_get_count(&count);
  if (st != CUABI_SUCCESS) {
    return std::string("no CUDA device: cuabi_device_get_count answered ") +
           cuabi_status_get_name(st) + ": " + cuabi_last_error_message();
  }
  if (count == 0) return "no CUDA device: the driver reports 0 devices";
  return "";
}

// "CUABI_ERROR_X: <message>" for the calling thread's last error.
inline std::string LastError() {
  return std::string(cuabi_status_get_name(cuabi_last_error_status())) + ": " +
         cuabi_last_error_message();
}

inline std::string StatusName(cuabi_status s) { return cuabi_status_get_name(s); }

// Compares statuses by name so a failure prints "CUABI_ERROR_..." and the
// thread's last error message.
#define CUABI_EXPECT_STATUS(expected, call)                                                 \
  do {                                                                                      \
    cuabi_status cuabi_test_st_ = (call);                                                   \
    EXPECT_EQ(::cuabi_test::StatusName(expected), ::cuabi_test::StatusName(cuabi_test_st_)) \
        << #call << "\n  last error: " << ::cuabi_test::LastError();                        \
  } while (0)

#define CUABI_ASSERT_STATUS(expected, call)                                                 \
  do {                                                                                      \
    cuabi_status cuabi_test_st_ = (call);                                                   \
    ASSERT_EQ(::cuabi_test::StatusName(expected), ::cuabi_test::StatusName(cuabi_test_st_)) \
        << #call << "\n  last error: " << ::cuabi_test::LastError();                        \
  } while (0)

#define CUABI_EXPECT_OK(call) CUABI_EXPECT_STATUS(CUABI_SUCCESS, call)
#define CUABI_ASSERT_OK(call) CUABI_ASSERT_STATUS(CUABI_SUCCESS, call)

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A getter that follows the two-call pattern: (buf, size) -> status.
using TwoCallGetter = std::function<cuabi_status(void* buf, size_t* size)>;

// Fetches a whole string or blob through a two-call getter. Fails the test on
// any error. For strings the result keeps its terminating NUL.
inline std::vector<char> FetchAll(const TwoCallGetter& get) {
  size_t size = 0;
  cuabi_status st = get(nullptr, &size);
  EXPECT_EQ(StatusName(CUABI_SUCCESS), StatusName(st)) << LastError();
  if (st != CUABI_SUCCESS) return {};
  std::vector<char> out(size);
  size_t got = size;
  st = get(out.data(), &got);
  EXPECT_EQ(StatusName(CUABI_SUCCESS), StatusName(st)) << LastError();
  return out;
}

inline std::string FetchString(const TwoCallGetter& get) {
  std::vector<char> v = FetchAll(get);
  if (v.empty()) return std::string();
  EXPECT_EQ('\0', v.back()) << "string result is not NUL-terminated";
  return std::string(v.data());
}

// Checks the whole two-call contract of one getter:
// - buf == NULL answers the size through *size (whatever *size held before);
// - size 0, 1 and N-1 answer CUABI_ERROR_INSUFFICIENT_BUFFER, store N in
//   *size and leave every byte of the buffer untouched;
// - size N succeeds and yields the same bytes as a larger buffer would;
// - size == NULL answers CUABI_ERROR_INVALID_ARGUMENT.
// `is_string`: the result must be NUL-terminated with no NUL before its end.
// `records_errors`: its failures are recorded as the thread's last error
// (false for cuabi_last_error_log, a reader that never touches that state).
// Returns the bytes fetched with an exact-size buffer.
inline std::vector<char> CheckTwoCall(const TwoCallGetter& get, bool is_string,
                                      bool records_errors = true) {
  const unsigned char kSentinel = 0xA5;
  size_t n = 12345;
  cuabi_status st = get(nullptr, &n);
  EXPECT_EQ(StatusName(CUABI_SUCCESS), StatusName(st)) << "size query: " << LastError();
  if (st != CUABI_SUCCESS) return {};
  EXPECT_GT(n, 0u) << "a string's size includes its NUL, a blob is never empty";
  if (n == 0) return {};

  // Asking twice gives the same size.
  size_t n2 = 0;
  EXPECT_EQ(CUABI_SUCCESS, get(nullptr, &n2));
  EXPECT_EQ(n, n2);

  std::vector<size_t> too_small = {0, 1, n - 1};
  for (size_t cap : too_small) {
    if (cap >= n) continue;  // n == 1: "1" and "n-1" are not too small.
    std::vector<unsigned char> buf(n + 16, kSentinel);
    size_t size = cap;
    st = get(buf.data(), &size);
    EXPECT_EQ(StatusName(CUABI_ERROR_INSUFFICIENT_BUFFER), StatusName(st))
        << "capacity " << cap << " of " << n;
    EXPECT_EQ(n, size) << "capacity " << cap << ": *size must hold the size needed";
    size_t touched = 0;
    for (unsigned char b : buf) touched += (b != kSentinel);
    EXPECT_EQ(0u, touched) << "capacity " << cap << ": a too-small buffer must not be written";
    if (st == CUABI_ERROR_INSUFFICIENT_BUFFER && records_errors) {
      EXPECT_EQ(StatusName(CUABI_ERROR_INSUFFICIENT_BUFFER), StatusName(cuabi_last_error_status()));
      EXPECT_STRNE("", cuabi_last_error_message());
    }
  }

  // Exactly N bytes: success, and nothing written past N.
  std::vector<unsigned char> exact(n + 16, kSentinel);
  size_t size = n;
  st = get(exact.data(), &size);
  EXPECT_EQ(StatusName(CUABI_SUCCESS), StatusName(st)) << "exact size " << n << ": " << LastError();
  EXPECT_EQ(n, size);
  for (size_t i = n; i < exact.size(); ++i) {
    EXPECT_EQ(kSentinel, exact[i]) << "byte " << i << " past the " << n << " bytes was written";
  }

  // A larger buffer gives the same content.
  std::vector<unsigned char> large(n + 64, kSentinel);
  size = large.size();
  EXPECT_EQ(CUABI_SUCCESS, get(large.data(), &size));
  EXPECT_EQ(0, std::memcmp(large.data(), exact.data(), n));

  if (is_string) {
    EXPECT_EQ(0, exact[n - 1]) << "string must end with NUL";
    EXPECT_EQ(n - 1, std::strlen(reinterpret_cast<const char*>(exact.data())))
        << "size must be strlen + 1";
  }

  // NULL size pointer.
  std::vector<unsigned char> any(n, kSentinel);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT), StatusName(get(any.data(), nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT), StatusName(get(nullptr, nullptr)));

  return std::vector<char>(exact.begin(), exact.begin() + static_cast<std::ptrdiff_t>(n));
}

// Handle values that were never returned by the library. None may crash a
// call; every one must answer CUABI_ERROR_INVALID_HANDLE.
inline std::vector<uintptr_t> GarbageHandleValues() {
  static int on_stack_is_not_a_handle = 0;
  return {
      static_cast<uintptr_t>(0x12345678u),
      ~static_cast<uintptr_t>(0),  // (void*)-1
      static_cast<uintptr_t>(1),
      static_cast<uintptr_t>(0x1000),
      static_cast<uintptr_t>(0xdeadbeefu),
      static_cast<uintptr_t>(0x7fffffffffffull),
      static_cast<uintptr_t>(0x8000000000000000ull),
      reinterpret_cast<uintptr_t>(&on_stack_is_not_a_handle),
  };
}

template <typename Handle>
Handle AsHandle(uintptr_t v) {
  return reinterpret_cast<Handle>(v);
}

}  // namespace cuabi_test

#endif  // CUABI_TESTS_C_TEST_SUPPORT_H
