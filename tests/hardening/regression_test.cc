// Regressions: failures the hardening suite once found in the core, each as a
// small deterministic test. (Inputs the fuzzers find go to
// fuzz/corpus/<target>/regression-*.bin, which the hardening.fuzz_replay.*
// tests replay, and get a test here.)
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <string>

#include "support.h"

namespace hardening {
namespace {

constexpr const char* kTiny = "extern \"C\" __global__ void tiny(int* x) { *x = 1; }\n";

// A release through another kind's function, of a value forged from a live
// handle (its kind bits changed), once cleared the slot's live bit for a
// moment: a concurrent use answered INVALID_HANDLE and a concurrent real
// release was lost. ThreadStress.ForgedKindReleaseDoesNotDisturbALiveHandle
// races it; this is the sequential part.
TEST(Regression, ForgedKindReleaseLeavesTheHandleAlone) {
  Program p;
  HARDENING_ASSERT_OK(cuabi_program_create(kTiny, nullptr, 0, nullptr, nullptr, p.out()));
  const uint64_t v = HandleValue(p.get());
  for (uint64_t kind = 1; kind <= kKindCount; ++kind) {
    const uint64_t forged = (v & ~(0xFFull << 24)) | (kind << 24);
    cuabi_module_release(AsHandle<cuabi_module>(forged));
    cuabi_buffer_release(AsHandle<cuabi_buffer>(forged));
    size_t n = 0;
    HARDENING_EXPECT_OK(cuabi_program_get_log(p, nullptr, &n));
  }
  const cuabi_program raw = p.detach();
  cuabi_program_release(raw);
  size_t n = 0;
  HARDENING_EXPECT_STATUS(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(raw, nullptr, &n));
}

// A count of (size_t)-1 was checked only after a loop over that many array
// entries: with a one-entry array the loop read past it (AddressSanitizer
// reports it in the sanitizer build) before the count was refused.
TEST(Regression, ImplausibleCountsAreRefusedBeforeTheArraysAreRead) {
  const char* one_source[] = {"int a;"};
  const char* one_name[] = {"a.h"};
  cuabi_program p = nullptr;
  HARDENING_EXPECT_STATUS(
      CUABI_ERROR_INVALID_ARGUMENT,
      cuabi_program_create(kTiny, nullptr, static_cast<size_t>(-1), one_source, one_name, &p));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "implausibly large")) << LastError();
  EXPECT_EQ(nullptr, p);

  Program q;
  HARDENING_ASSERT_OK(cuabi_program_create(kTiny, nullptr, 0, nullptr, nullptr, q.out()));
  const char* one_option[] = {"-w"};
  HARDENING_EXPECT_STATUS(CUABI_ERROR_INVALID_ARGUMENT,
                          cuabi_program_compile(q, static_cast<size_t>(-1), one_option));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "implausibly large")) << LastError();
}

// NVRTC echoes source text into its log byte for byte; a surrogate or an
// overlong form in an #error line made the message and the log invalid UTF-8.
TEST(Regression, CompileLogsAndMessagesStayUtf8) {
  Program p;
  HARDENING_ASSERT_OK(cuabi_program_create("#error bad \xed\xa0\x80 and \xc0\x80 here\n", nullptr,
                                           0, nullptr, nullptr, p.out()));
  HARDENING_EXPECT_STATUS(CUABI_ERROR_COMPILE, cuabi_program_compile(p, 0, nullptr));
  EXPECT_TRUE(IsUtf8(cuabi_last_error_message()));
  const std::string log = ProgramLog(p);
  EXPECT_TRUE(IsUtf8(log));
  EXPECT_TRUE(Contains(log, "bad")) << log;
  EXPECT_TRUE(Contains(log, "\xEF\xBF\xBD")) << "the bytes that are not UTF-8 became U+FFFD";
  EXPECT_TRUE(IsUtf8(LastErrorLog()));
}

// A program name, header name or option that is not UTF-8 reached NVRTC and,
// through its log, the message.
TEST(Regression, NamesAndOptionsThatAreNotUtf8AreRefused) {
  cuabi_program p = nullptr;
  HARDENING_EXPECT_STATUS(CUABI_ERROR_INVALID_ARGUMENT,
                          cuabi_program_create("int x", "n\xff.cu", 0, nullptr, nullptr, &p));
  const char* src[] = {"int y;"};
  const char* names[] = {"h\xc0\xaf.h"};
  HARDENING_EXPECT_STATUS(CUABI_ERROR_INVALID_ARGUMENT,
                          cuabi_program_create("int x", nullptr, 1, src, names, &p));
  EXPECT_EQ(nullptr, p);
  Program q;
  HARDENING_ASSERT_OK(cuabi_program_create(kTiny, nullptr, 0, nullptr, nullptr, q.out()));
  const char* opts[] = {"-DX=\xff"};
  HARDENING_EXPECT_STATUS(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_compile(q, 1, opts));
  // The refused compile did not use the program up: it still compiles.
  const char* good[] = {"--gpu-architecture=compute_90"};
  HARDENING_EXPECT_OK(cuabi_program_compile(q, 1, good));
}

}  // namespace
}  // namespace hardening
