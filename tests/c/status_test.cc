// Status names and descriptions, and the calling thread's last-error state.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <climits>
#include <set>
#include <string>
#include <thread>

#include "test_support.h"

namespace {

using cuabi_test::LastError;

const char* const kNames[CUABI_STATUS_COUNT] = {
    "CUABI_SUCCESS",
    "CUABI_ERROR_INVALID_ARGUMENT",
    "CUABI_ERROR_INVALID_HANDLE",
    "CUABI_ERROR_OUT_OF_MEMORY",
    "CUABI_ERROR_INSUFFICIENT_BUFFER",
    "CUABI_ERROR_OUT_OF_RANGE",
    "CUABI_ERROR_NOT_FOUND",
    "CUABI_ERROR_NOT_SUPPORTED",
    "CUABI_ERROR_NOT_READY",
    "CUABI_ERROR_DRIVER_NOT_FOUND",
    "CUABI_ERROR_STUB_DRIVER",
    "CUABI_ERROR_NO_DEVICE",
    "CUABI_ERROR_NVRTC_NOT_FOUND",
    "CUABI_ERROR_COMPILE",
    "CUABI_ERROR_CONTEXT_LOST",
    "CUABI_ERROR_FORKED",
    "CUABI_ERROR_CUDA",
    "CUABI_ERROR_NVRTC",
    "CUABI_ERROR_IO",
    "CUABI_ERROR_INTERNAL",
    "CUABI_ERROR_HOST_FUNCTION",
};

// Leaves a known error on this thread: a NULL program handle.
void MakeKnownError() {
  size_t size = 0;
  ASSERT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(nullptr, nullptr, &size));
  ASSERT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_last_error_status());
}

TEST(Status, EveryStatusHasItsNameAndADescription) {
  std::set<std::string> descriptions;
  for (int i = 0; i < CUABI_STATUS_COUNT; ++i) {
    const cuabi_status s = static_cast<cuabi_status>(i);
    const char* name = cuabi_status_get_name(s);
    ASSERT_NE(nullptr, name) << s;
    EXPECT_STREQ(kNames[s], name) << "status " << s;
    const char* description = cuabi_status_get_description(s);
    ASSERT_NE(nullptr, description) << s;
    EXPECT_GT(std::strlen(description), 8u) << "status " << s << ": \"" << description << "\"";
    EXPECT_TRUE(descriptions.insert(description).second)
        << "status " << s << " shares its description: " << description;
    // Static strings: the same pointer on every call.
    EXPECT_EQ(name, cuabi_status_get_name(s));
    EXPECT_EQ(description, cuabi_status_get_description(s));
  }
}

TEST(Status, UnknownValuesAreNamedUnknown) {
  const int32_t unknown[] = {-1,   CUABI_STATUS_COUNT, CUABI_STATUS_COUNT + 1,
                             1000, INT32_MIN,          INT32_MAX - 1};
  for (int32_t value : unknown) {
    const cuabi_status s = static_cast<cuabi_status>(value);
    ASSERT_NE(nullptr, cuabi_status_get_name(s)) << s;
    EXPECT_STREQ("CUABI_ERROR_UNKNOWN", cuabi_status_get_name(s)) << s;
    const char* description = cuabi_status_get_description(s);
    ASSERT_NE(nullptr, description) << s;
    EXPECT_STRNE("", description) << s;
    for (int i = 0; i < CUABI_STATUS_COUNT; ++i) {
      const cuabi_status known = static_cast<cuabi_status>(i);
      EXPECT_STRNE(cuabi_status_get_description(known), description)
          << "unknown status " << s << " described as status " << known;
    }
  }
}

TEST(Status, StaticStringsAreUsableFromAnyThread) {
  const char* name = nullptr;
  const char* description = nullptr;
  std::thread t([&] {
    name = cuabi_status_get_name(CUABI_ERROR_NOT_FOUND);
    description = cuabi_status_get_description(CUABI_ERROR_NOT_FOUND);
  });
  t.join();
  EXPECT_STREQ("CUABI_ERROR_NOT_FOUND", name);
  EXPECT_STREQ(cuabi_status_get_description(CUABI_ERROR_NOT_FOUND), description);
}

TEST(LastError, FreshThreadHasNoError) {
  std::string message = "unset";
  cuabi_status status = CUABI_ERROR_INTERNAL;
  int32_t code = -1;
  size_t log_size = 0;
  cuabi_status log_status = CUABI_ERROR_INTERNAL;
  std::thread t([&] {
    message = cuabi_last_error_message();
    status = cuabi_last_error_status();
    code = cuabi_last_error_code();
    log_status = cuabi_last_error_log(nullptr, &log_size);
  });
  t.join();
  EXPECT_EQ("", message);
  EXPECT_EQ(CUABI_SUCCESS, status);
  EXPECT_EQ(0, code);
  EXPECT_EQ(CUABI_SUCCESS, log_status);
  EXPECT_EQ(1u, log_size) << "the empty log is \"\" (one NUL byte)";
}

TEST(LastError, MessageNamesTheCallAndTheArgument) {
  cuabi_program program = nullptr;
  ASSERT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(nullptr, "x.cu", 0, nullptr, nullptr, &program));
  EXPECT_EQ(nullptr, program) << "out-parameter must stay untouched on failure";
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_last_error_status());
  EXPECT_EQ(0, cuabi_last_error_code()) << "no CUDA/NVRTC failure behind this error";
  const std::string message = cuabi_last_error_message();
  EXPECT_NE(std::string::npos, message.find("cuabi_program_create")) << message;
  EXPECT_NE(std::string::npos, message.find("source")) << message;
}

TEST(LastError, SuccessDoesNotClearIt) {
  MakeKnownError();
  const std::string before = cuabi_last_error_message();
  ASSERT_NE("", before);
  cuabi_program program = nullptr;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_program_create("__global__ void k() {}", nullptr, 0, nullptr, nullptr, &program))
      << LastError();
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_get_log(program, nullptr, &size));
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_last_error_status());
  EXPECT_EQ(before, cuabi_last_error_message());
  cuabi_program_release(program);
}

TEST(LastError, ReadersAndStatusFunctionsLeaveItUntouched) {
  MakeKnownError();
  const std::string before = cuabi_last_error_message();
  for (int i = 0; i < 3; ++i) {
    (void)cuabi_last_error_message();
    (void)cuabi_last_error_status();
    (void)cuabi_last_error_code();
    size_t size = 0;
    (void)cuabi_last_error_log(nullptr, &size);
    (void)cuabi_status_get_name(CUABI_ERROR_CUDA);
    (void)cuabi_status_get_description(CUABI_ERROR_CUDA);
    (void)cuabi_status_get_name(static_cast<cuabi_status>(9999));
    (void)cuabi_version();
    (void)cuabi_version_string();
  }
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_last_error_status());
  EXPECT_EQ(before, cuabi_last_error_message());
}

TEST(LastError, ClearResetsEverything) {
  MakeKnownError();
  cuabi_last_error_clear();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_status());
  EXPECT_STREQ("", cuabi_last_error_message());
  EXPECT_EQ(0, cuabi_last_error_code());
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_log(nullptr, &size));
  EXPECT_EQ(1u, size);
}

TEST(LastError, LogReaderFollowsTheTwoCallPattern) {
  cuabi_last_error_clear();
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_last_error_log(nullptr, nullptr));
  char buf[4] = {'x', 'x', 'x', 'x'};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_last_error_log(buf, nullptr));
  cuabi_last_error_clear();
  size = 0;
  EXPECT_EQ(CUABI_ERROR_INSUFFICIENT_BUFFER, cuabi_last_error_log(buf, &size));
  EXPECT_EQ(1u, size);
  EXPECT_EQ('x', buf[0]);
  size = sizeof buf;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_log(buf, &size));
  EXPECT_EQ('\0', buf[0]);
  // A reader never records its own failures.
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_status());
  EXPECT_STREQ("", cuabi_last_error_message());
}

}  // namespace
