// Handles that are NULL, released, stale, of the wrong kind or made up: every
// call answers CUABI_ERROR_INVALID_HANDLE and never crashes; release ignores
// them and never touches the last error. Needs no GPU: the only handle kind
// made here is a program (NVRTC).
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "handle_calls.h"
#include "kernels.h"
#include "test_support.h"

namespace {

using cuabi_test::AllKinds;
using cuabi_test::AsHandle;
using cuabi_test::Contains;
using cuabi_test::GarbageHandleValues;
using cuabi_test::HandleCall;
using cuabi_test::HandleCalls;
using cuabi_test::Kind;
using cuabi_test::KindName;
using cuabi_test::LastError;
using cuabi_test::ReleaseCalls;

cuabi_program NewProgram() {
  cuabi_program program = nullptr;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_create(cuabi_test::kSaxpySource, "saxpy.cu", 0, nullptr,
                                                nullptr, &program))
      << LastError();
  return program;
}

// Calls `call` with `handle` and expects INVALID_HANDLE, out-parameters
// untouched and the last error set accordingly.
void ExpectInvalidHandle(const HandleCall& call, uintptr_t handle, const std::string& what) {
  cuabi_last_error_clear();
  bool touched = false;
  const cuabi_status st = call.call(handle, &touched);
  EXPECT_EQ("CUABI_ERROR_INVALID_HANDLE", cuabi_test::StatusName(st))
      << call.name << " with " << what << "\n  last error: " << LastError();
  EXPECT_FALSE(touched) << call.name << " with " << what << " wrote an out-parameter";
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_last_error_status()) << call.name << ", " << what;
  EXPECT_STRNE("", cuabi_last_error_message()) << call.name << ", " << what;
  EXPECT_EQ(0, cuabi_last_error_code()) << call.name << ": no CUDA error behind a bad handle";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "cuabi_<name>" of every kind in the list (capi/core/kinds.h).
std::set<std::string> ListedHandleTypes() {
  std::set<std::string> listed;
  for (Kind kind : AllKinds()) listed.insert(std::string("cuabi_") + KindName(kind));
  return listed;
}

TEST(Handles, EveryHandleTypeOfTheHeaderIsAKind) {
  const std::string header = ReadFile(CUABI_TEST_HEADER_PATH);
  const std::regex handle_type(
      "typedef\\s+struct\\s+(cuabi_[a-z0-9_]+)_s\\s*\\*\\s*(cuabi_[a-z0-9_]+)\\s*;");
  std::set<std::string> in_header;
  for (std::sregex_iterator it(header.begin(), header.end(), handle_type), end; it != end; ++it) {
    EXPECT_EQ((*it)[1].str(), (*it)[2].str()) << "a handle type named unlike its struct";
    in_header.insert((*it)[2].str());
  }
  ASSERT_GT(in_header.size(), 10u) << "no handle types found in " << CUABI_TEST_HEADER_PATH;
  EXPECT_EQ(in_header, ListedHandleTypes())
      << "the handle types of cuabi.h and the kinds of capi/core/kinds.h differ";

  // The model's list (cuabi.json, generated from the header) agrees too.
  std::string json_path = CUABI_TEST_HEADER_PATH;
  json_path.replace(json_path.size() - 2, 2, ".json");
  const std::string json = ReadFile(json_path);
  const size_t begin = json.find("\"handles\": [");
  ASSERT_NE(std::string::npos, begin) << json_path << " has no \"handles\" list";
  const std::string handles = json.substr(begin, json.find(']', begin) - begin);
  const std::regex entry("\"name\":\\s*\"(cuabi_[a-z0-9_]+)\"");
  std::set<std::string> in_model;
  for (std::sregex_iterator it(handles.begin(), handles.end(), entry), end; it != end; ++it) {
    in_model.insert((*it)[1].str());
  }
  EXPECT_EQ(in_model, ListedHandleTypes())
      << "the handles of cuabi.json and the kinds of capi/core/kinds.h differ";
}

TEST(Handles, EveryKindHasItsCallsAndItsRelease) {
  std::set<Kind> with_release;
  for (const auto& r : ReleaseCalls()) {
    EXPECT_EQ(std::string("cuabi_") + KindName(r.kind) + "_release", r.name);
    with_release.insert(r.kind);
  }
  std::set<Kind> with_calls;
  for (const auto& c : HandleCalls()) with_calls.insert(c.kind);
  for (Kind kind : AllKinds()) {
    EXPECT_TRUE(with_release.count(kind)) << KindName(kind) << " has no release call";
    EXPECT_TRUE(with_calls.count(kind)) << "no call in handle_calls.cc takes a " << KindName(kind);
  }
}

TEST(Handles, TableCoversEveryFunctionTakingAHandle) {
  const std::string s = ReadFile(CUABI_TEST_HEADER_PATH);
  std::string kinds;
  for (Kind kind : AllKinds()) kinds += (kinds.empty() ? "" : "|") + std::string(KindName(kind));
  const std::regex decl("CUABI_CALL\\s+(cuabi_[a-z0-9_]+)\\s*\\(\\s*(cuabi_(" + kinds +
                        "))\\s+[a-z_]+\\s*[,)]");
  std::set<std::string> taking_handle;
  for (std::sregex_iterator it(s.begin(), s.end(), decl), end; it != end; ++it) {
    taking_handle.insert((*it)[1].str());
  }
  ASSERT_GT(taking_handle.size(), 60u);
  std::set<std::string> covered;
  for (const auto& c : HandleCalls()) covered.insert(c.name);
  for (const auto& r : ReleaseCalls()) covered.insert(r.name);
  for (const std::string& name : taking_handle) {
    EXPECT_TRUE(covered.count(name)) << name << " takes a handle but handle_calls.cc lacks it";
  }
}

TEST(Handles, NullHandleIntoEveryFunction) {
  for (const HandleCall& call : HandleCalls()) {
    ExpectInvalidHandle(call, 0, "a NULL handle");
  }
}

TEST(Handles, MessageNamesTheFailingCall) {
  for (const HandleCall& call : HandleCalls()) {
    bool touched = false;
    ASSERT_EQ(CUABI_ERROR_INVALID_HANDLE, call.call(0, &touched)) << call.name;
    EXPECT_TRUE(Contains(cuabi_last_error_message(), call.name))
        << call.name << ": message \"" << cuabi_last_error_message() << "\"";
  }
}

TEST(Handles, MadeUpValuesIntoEveryFunction) {
  for (uintptr_t value : GarbageHandleValues()) {
    std::ostringstream what;
    what << "made-up handle 0x" << std::hex << value;
    for (const HandleCall& call : HandleCalls()) ExpectInvalidHandle(call, value, what.str());
  }
}

TEST(Handles, ProgramHandleOfTheWrongKind) {
  cuabi_program program = NewProgram();
  const uintptr_t h = reinterpret_cast<uintptr_t>(program);
  for (const HandleCall& call : HandleCalls()) {
    if (call.kind == Kind::kProgram) continue;
    ExpectInvalidHandle(call, h, std::string("a program handle used as a ") + KindName(call.kind));
  }
  // Wrong-kind releases are ignored: the program is still alive.
  for (const auto& r : ReleaseCalls()) {
    if (r.kind != Kind::kProgram) r.release(h);
  }
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_log(program, nullptr, &size)) << LastError();
  const char* options[] = {"--gpu-architecture=compute_90"};
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_compile(program, 1, options)) << LastError();
  cuabi_program_release(program);
}

TEST(Handles, ReleasedProgramIntoEveryFunction) {
  cuabi_program program = NewProgram();
  const uintptr_t h = reinterpret_cast<uintptr_t>(program);
  cuabi_program_release(program);
  for (const HandleCall& call : HandleCalls()) {
    ExpectInvalidHandle(call, h,
                        std::string("a released program handle used as a ") + KindName(call.kind));
  }
}

TEST(Handles, StaleHandlesStayInvalidWhenSlotsAreReused) {
  std::vector<uintptr_t> released;
  for (int i = 0; i < 64; ++i) {
    cuabi_program p = NewProgram();
    ASSERT_NE(nullptr, p);
    released.push_back(reinterpret_cast<uintptr_t>(p));
    cuabi_program_release(p);
  }
  // Live programs now occupy whatever slots the released ones had.
  std::vector<cuabi_program> live;
  for (int i = 0; i < 8; ++i) live.push_back(NewProgram());
  for (cuabi_program p : live) {
    EXPECT_EQ(0u, std::count(released.begin(), released.end(), reinterpret_cast<uintptr_t>(p)))
        << "a new handle must not equal a released one (it would make the stale one valid)";
  }
  for (uintptr_t stale : released) {
    size_t size = 0;
    EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE,
              cuabi_program_get_log(AsHandle<cuabi_program>(stale), nullptr, &size));
    // Releasing a stale handle must not free the live program in its slot.
    cuabi_program_release(AsHandle<cuabi_program>(stale));
  }
  for (cuabi_program p : live) {
    size_t size = 0;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_log(p, nullptr, &size)) << LastError();
    cuabi_program_release(p);
  }
}

TEST(Release, NullIsANoOpForEveryKind) {
  for (const auto& r : ReleaseCalls()) r.release(0);
  SUCCEED();
}

TEST(Release, MadeUpValuesAreIgnoredForEveryKind) {
  for (uintptr_t value : GarbageHandleValues()) {
    for (const auto& r : ReleaseCalls()) r.release(value);
  }
  SUCCEED();
}

TEST(Release, DoubleReleaseIsHarmless) {
  cuabi_program program = NewProgram();
  cuabi_program_release(program);
  cuabi_program_release(program);
  cuabi_program_release(program);
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(program, nullptr, &size));
  // The library still works afterwards.
  cuabi_program other = NewProgram();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_log(other, nullptr, &size)) << LastError();
  cuabi_program_release(other);
}

TEST(Release, LeavesTheLastErrorUntouched) {
  // A compile failure leaves a status, a code, a message and a log.
  cuabi_program bad = nullptr;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_program_create("__global__ void k( {", "broken.cu", 0, nullptr, nullptr, &bad));
  const char* options[] = {"--gpu-architecture=compute_90"};
  ASSERT_EQ(CUABI_ERROR_COMPILE, cuabi_program_compile(bad, 1, options));
  const std::string message = cuabi_last_error_message();
  const int32_t code = cuabi_last_error_code();
  size_t log_size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_last_error_log(nullptr, &log_size));
  ASSERT_GT(log_size, 1u);

  cuabi_program live = NewProgram();
  cuabi_program dead = NewProgram();
  cuabi_program_release(dead);
  cuabi_program_release(bad);   // a real release
  cuabi_program_release(dead);  // a double release
  for (const auto& r : ReleaseCalls()) {
    r.release(0);
    r.release(0x12345678);
    if (r.kind != Kind::kProgram) r.release(reinterpret_cast<uintptr_t>(live));
  }
  EXPECT_EQ(CUABI_ERROR_COMPILE, cuabi_last_error_status());
  EXPECT_EQ(message, cuabi_last_error_message());
  EXPECT_EQ(code, cuabi_last_error_code());
  size_t after = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_last_error_log(nullptr, &after));
  EXPECT_EQ(log_size, after);

  // Same from a clean state: release sets nothing.
  cuabi_last_error_clear();
  cuabi_program_release(live);
  cuabi_program_release(live);
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_status());
  EXPECT_STREQ("", cuabi_last_error_message());
}

}  // namespace
