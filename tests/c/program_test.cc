// NVRTC programs through the C API: PTX and CUBIN output, name expressions,
// headers, compile errors and logs, and the two-call getters. No GPU needed.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kernels.h"
#include "test_support.h"

namespace {

using cuabi_test::CheckTwoCall;
using cuabi_test::Contains;
using cuabi_test::FetchAll;
using cuabi_test::FetchString;
using cuabi_test::LastError;

const char* const kPtxArch = "--gpu-architecture=compute_90";
const char* const kCubinArch = "--gpu-architecture=sm_90";

// NVRTC's own result codes (nvrtc.h), as cuabi_last_error_code reports them.
const int32_t kNvrtcErrorInvalidOption = 5;
const int32_t kNvrtcErrorCompilation = 6;

cuabi_program Create(const char* source, const char* name = nullptr,
                     std::vector<const char*> header_sources = {},
                     std::vector<const char*> header_names = {}) {
  cuabi_program program = nullptr;
  cuabi_status st = cuabi_program_create(source, name, header_sources.size(), header_sources.data(),
                                         header_names.data(), &program);
  EXPECT_EQ(CUABI_SUCCESS, st) << LastError();
  EXPECT_NE(nullptr, program);
  return program;
}

cuabi_status Compile(cuabi_program program, std::vector<const char*> options) {
  return cuabi_program_compile(program, options.size(), options.data());
}

std::string Ptx(cuabi_program program) {
  return FetchString([&](void* buf, size_t* size) {
    return cuabi_program_get_ptx(program, static_cast<char*>(buf), size);
  });
}

std::string Log(cuabi_program program) {
  return FetchString([&](void* buf, size_t* size) {
    return cuabi_program_get_log(program, static_cast<char*>(buf), size);
  });
}

std::string LastErrorLog() {
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_log(nullptr, &size));
  std::vector<char> buf(size + 1, '\0');
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_log(buf.data(), &size));
  return std::string(buf.data());
}

// A program with a syntax error on line 3 of "bad_kernel.cu".
const char* const kBadSource =
    "extern \"C\" __global__ void broken(float* x)\n"
    "{\n"
    "  float y = ;\n"
    "  x[0] = y;\n"
    "}\n";

bool IsCubinElf(const std::vector<char>& image) {
  if (image.size() < 20) return false;
  const unsigned char* b = reinterpret_cast<const unsigned char*>(image.data());
  const bool magic = b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
  const bool elf64 = b[4] == 2;                             // ELFCLASS64
  const unsigned machine = b[18] | (unsigned(b[19]) << 8);  // little-endian e_machine
  return magic && elf64 && machine == 190;                  // EM_CUDA
}

TEST(Program, SaxpyToPtx) {
  cuabi_program program = Create(cuabi_test::kSaxpySource, "saxpy.cu");
  ASSERT_EQ(CUABI_SUCCESS, Compile(program, {kPtxArch})) << LastError();
  const std::vector<char> ptx = CheckTwoCall(
      [&](void* buf, size_t* size) {
        return cuabi_program_get_ptx(program, static_cast<char*>(buf), size);
      },
      /*is_string=*/true);
  ASSERT_FALSE(ptx.empty());
  const std::string text(ptx.data());
  EXPECT_TRUE(Contains(text, ".visible .entry saxpy(")) << text.substr(0, 600);
  EXPECT_TRUE(Contains(text, ".entry saxpy"));
  EXPECT_TRUE(Contains(text, ".target sm_90")) << text.substr(0, 600);
  EXPECT_TRUE(Contains(text, ".address_size 64"));

  // A compute_XY target makes no CUBIN: NOT_FOUND, *size untouched.
  size_t size = 777;
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, cuabi_program_get_cubin(program, nullptr, &size));
  EXPECT_EQ(777u, size);
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, cuabi_last_error_status());
  EXPECT_STRNE("", cuabi_last_error_message());

  // The log of a clean compile follows the two-call pattern too.
  CheckTwoCall(
      [&](void* buf, size_t* size) {
        return cuabi_program_get_log(program, static_cast<char*>(buf), size);
      },
      true);
  cuabi_program_release(program);
}

TEST(Program, SaxpyToCubin) {
  cuabi_program program = Create(cuabi_test::kSaxpySource, "saxpy.cu");
  ASSERT_EQ(CUABI_SUCCESS, Compile(program, {kCubinArch, "-std=c++17"})) << LastError();
  const std::vector<char> cubin = CheckTwoCall(
      [&](void* buf, size_t* size) { return cuabi_program_get_cubin(program, buf, size); },
      /*is_string=*/false);
  ASSERT_GT(cubin.size(), 64u);
  EXPECT_TRUE(IsCubinElf(cubin)) << "CUBIN must be a 64-bit ELF for EM_CUDA";
  // The kernel's symbol is in the image.
  const std::string bytes(cubin.begin(), cubin.end());
  EXPECT_TRUE(Contains(bytes, std::string("saxpy")));

  // An sm_XY target: NVRTC 13 also keeps the PTX it lowered to that CUBIN;
  // when it is there it is PTX for the same target, and when it is not the
  // header answers NOT_FOUND and leaves the size alone.
  size_t size = 777;
  cuabi_status ptx_status = cuabi_program_get_ptx(program, nullptr, &size);
  if (ptx_status == CUABI_SUCCESS) {
    std::vector<char> ptx(size);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_program_get_ptx(program, ptx.data(), &size));
    EXPECT_TRUE(Contains(std::string(ptx.data()), std::string(".target sm_90")));
  } else {
    EXPECT_EQ(CUABI_ERROR_NOT_FOUND, ptx_status);
    EXPECT_EQ(777u, size);
  }
  cuabi_program_release(program);
}

TEST(Program, TemplatedKernelWithNameExpressions) {
  cuabi_program program = Create(cuabi_test::kWriteScalarSource, "write_scalar.cu");
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_add_name_expression(program, "write_scalar<float>"))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_add_name_expression(program, "write_scalar<int>"))
      << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_add_name_expression(program, nullptr));
  ASSERT_EQ(CUABI_SUCCESS, Compile(program, {kPtxArch})) << LastError();

  auto lowered = [&](const char* expression) {
    std::vector<char> v = CheckTwoCall(
        [&](void* buf, size_t* size) {
          return cuabi_program_get_lowered_name(program, expression, static_cast<char*>(buf), size);
        },
        true);
    return v.empty() ? std::string() : std::string(v.data());
  };
  const std::string f = lowered("write_scalar<float>");
  const std::string i = lowered("write_scalar<int>");
  EXPECT_EQ(0u, f.rfind("_Z", 0)) << f;
  EXPECT_TRUE(Contains(f, "write_scalar")) << f;
  EXPECT_EQ(0u, i.rfind("_Z", 0)) << i;
  EXPECT_NE(f, i);

  const std::string ptx = Ptx(program);
  EXPECT_TRUE(Contains(ptx, ".entry " + f)) << "PTX lacks the lowered name " << f;
  EXPECT_TRUE(Contains(ptx, ".entry " + i)) << "PTX lacks the lowered name " << i;

  // An expression that was never registered.
  size_t size = 55;
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND,
            cuabi_program_get_lowered_name(program, "write_scalar<double>", nullptr, &size));
  EXPECT_EQ(55u, size);
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "write_scalar<double>"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_get_lowered_name(program, nullptr, nullptr, &size));
  cuabi_program_release(program);
}

TEST(Program, KernelIncludingANamedHeader) {
  const char* header =
      "#pragma once\n__device__ inline float twice(float v) { return 2.0f * v; }\n";
  const char* other = "#pragma once\n#define SCALE_OFFSET 1.0f\n";
  cuabi_program program = Create(cuabi_test::kHeaderUserSource, "scale.cu", {header, other},
                                 {"my_math.cuh", "config/offset.h"});
  ASSERT_EQ(CUABI_SUCCESS, Compile(program, {kPtxArch})) << LastError() << "\n" << Log(program);
  EXPECT_TRUE(Contains(Ptx(program), ".visible .entry scale("));
  cuabi_program_release(program);

  // Without the headers, NVRTC cannot find them: a compile error whose log
  // names the missing include.
  program = Create(cuabi_test::kHeaderUserSource, "scale.cu");
  EXPECT_EQ(CUABI_ERROR_COMPILE, Compile(program, {kPtxArch}));
  EXPECT_TRUE(Contains(Log(program), "my_math.cuh")) << Log(program);
  cuabi_program_release(program);
}

TEST(Program, SyntaxErrorGivesCompileStatusAndLogNamingTheLine) {
  cuabi_program program = Create(kBadSource, "bad_kernel.cu");
  cuabi_last_error_clear();
  ASSERT_EQ(CUABI_ERROR_COMPILE, Compile(program, {kPtxArch}));
  EXPECT_EQ(CUABI_ERROR_COMPILE, cuabi_last_error_status());
  EXPECT_EQ(kNvrtcErrorCompilation, cuabi_last_error_code()) << "NVRTC_ERROR_COMPILATION";
  EXPECT_STRNE("", cuabi_last_error_message());

  const std::vector<char> log = CheckTwoCall(
      [](void* buf, size_t* size) { return cuabi_last_error_log(static_cast<char*>(buf), size); },
      true, /*records_errors=*/false);
  ASSERT_FALSE(log.empty());
  const std::string last_log(log.data());
  EXPECT_TRUE(Contains(last_log, "bad_kernel.cu(3)")) << last_log;
  EXPECT_TRUE(Contains(last_log, "error")) << last_log;

  // The program keeps the same log.
  const std::vector<char> program_log = CheckTwoCall(
      [&](void* buf, size_t* size) {
        return cuabi_program_get_log(program, static_cast<char*>(buf), size);
      },
      true);
  ASSERT_FALSE(program_log.empty());
  EXPECT_EQ(last_log, std::string(program_log.data()));
  cuabi_program_release(program);
}

TEST(Program, DefaultNameInDiagnostics) {
  cuabi_program program = Create(kBadSource, nullptr);
  ASSERT_EQ(CUABI_ERROR_COMPILE, Compile(program, {kPtxArch}));
  EXPECT_TRUE(Contains(Log(program), "cuabi_program.cu(3)")) << Log(program);
  cuabi_program_release(program);
}

TEST(Program, BadOptionIsACompileError) {
  cuabi_program program = Create(cuabi_test::kSaxpySource, "saxpy.cu");
  // The header: CUABI_ERROR_COMPILE when NVRTC rejects the code or the options.
  ASSERT_EQ(CUABI_ERROR_COMPILE, Compile(program, {"--no-such-option"}));
  EXPECT_EQ(CUABI_ERROR_COMPILE, cuabi_last_error_status());
  EXPECT_EQ(kNvrtcErrorInvalidOption, cuabi_last_error_code()) << "NVRTC_ERROR_INVALID_OPTION";
  const std::string where = std::string(cuabi_last_error_message()) + "\n" + LastErrorLog();
  EXPECT_TRUE(Contains(where, "no-such-option")) << where;
  cuabi_program_release(program);

  program = Create(cuabi_test::kSaxpySource, "saxpy.cu");
  EXPECT_EQ(CUABI_ERROR_COMPILE, Compile(program, {"--gpu-architecture=sm_1"}));
  cuabi_program_release(program);
}

TEST(Program, CompilesOnlyOnce) {
  cuabi_program program = Create(cuabi_test::kSaxpySource);
  ASSERT_EQ(CUABI_SUCCESS, Compile(program, {kPtxArch})) << LastError();
  const std::string ptx = Ptx(program);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, Compile(program, {kPtxArch}));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_last_error_status());
  EXPECT_EQ(ptx, Ptx(program)) << "a refused second compile must keep the first result";
  cuabi_program_release(program);
}

TEST(Program, LogIsEmptyBeforeCompiling) {
  cuabi_program program = Create(cuabi_test::kSaxpySource);
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_get_log(program, nullptr, &size)) << LastError();
  EXPECT_EQ(1u, size);
  char buf[2] = {'x', 'x'};
  size = sizeof buf;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_get_log(program, buf, &size));
  EXPECT_EQ('\0', buf[0]);
  cuabi_program_release(program);
}

TEST(Program, CompileArgumentsAreChecked) {
  cuabi_program program = Create(cuabi_test::kSaxpySource);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_compile(program, 1, nullptr));
  const char* with_null[] = {kPtxArch, nullptr};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_compile(program, 2, with_null));
  // Refused arguments do not use up the single compile.
  EXPECT_EQ(CUABI_SUCCESS, Compile(program, {kPtxArch})) << LastError();
  cuabi_program_release(program);
}

TEST(Program, NoOptionsCompiles) {
  cuabi_program program = Create(cuabi_test::kSaxpySource);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile(program, 0, nullptr)) << LastError();
  EXPECT_TRUE(Contains(Ptx(program), ".entry saxpy"));
  cuabi_program_release(program);
}

TEST(Program, CreateArgumentsAreChecked) {
  const cuabi_program kUntouched = cuabi_test::AsHandle<cuabi_program>(0x5a5a);
  cuabi_program out = kUntouched;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(nullptr, nullptr, 0, nullptr, nullptr, &out));
  EXPECT_EQ(kUntouched, out);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 0, nullptr, nullptr, nullptr));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "out")) << cuabi_last_error_message();

  const char* sources[] = {"#pragma once\n"};
  const char* names[] = {"a.h"};
  const char* null_entry[] = {nullptr};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 1, nullptr, names, &out));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 1, sources, nullptr, &out));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 1, null_entry, names, &out));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_program_create(cuabi_test::kSaxpySource, nullptr, 1, sources, null_entry, &out));
  EXPECT_EQ(kUntouched, out);
}

TEST(Program, LastErrorLogTracksTheLastFailure) {
  cuabi_program bad = Create(kBadSource, "bad_kernel.cu");
  ASSERT_EQ(CUABI_ERROR_COMPILE, Compile(bad, {kPtxArch}));
  const std::string log = LastErrorLog();
  EXPECT_TRUE(Contains(log, "bad_kernel.cu(3)")) << log;

  // Successful calls (even a successful compile) leave it in place.
  cuabi_program good = Create(cuabi_test::kSaxpySource);
  ASSERT_EQ(CUABI_SUCCESS, Compile(good, {kPtxArch}));
  EXPECT_EQ(CUABI_ERROR_COMPILE, cuabi_last_error_status());
  EXPECT_EQ(log, LastErrorLog());

  // A later failure that is no compile failure: the log reads "".
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(nullptr, nullptr, &size));
  EXPECT_EQ("", LastErrorLog());
  cuabi_program_release(good);
  cuabi_program_release(bad);
}

TEST(Program, UsableFromAnotherThread) {
  cuabi_program program = Create(cuabi_test::kSaxpySource);
  cuabi_status compiled = CUABI_ERROR_INTERNAL;
  std::thread t([&] { compiled = Compile(program, {kPtxArch}); });
  t.join();
  ASSERT_EQ(CUABI_SUCCESS, compiled);
  EXPECT_TRUE(Contains(Ptx(program), ".entry saxpy"));
  std::thread r([&] { cuabi_program_release(program); });
  r.join();
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_ptx(program, nullptr, &size));
}

TEST(Program, ConcurrentCompilesOfDifferentPrograms) {
  const int kThreads = 3;
  std::vector<std::string> ptx(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ptx] {
      const std::string source = "extern \"C\" __global__ void k" + std::to_string(t) +
                                 "(int* x) { x[0] = " + std::to_string(t * 7) + "; }\n";
      cuabi_program program = nullptr;
      if (cuabi_program_create(source.c_str(), nullptr, 0, nullptr, nullptr, &program) != 0) {
        return;
      }
      const char* options[] = {kPtxArch};
      if (cuabi_program_compile(program, 1, options) == CUABI_SUCCESS) {
        size_t size = 0;
        cuabi_program_get_ptx(program, nullptr, &size);
        std::vector<char> buf(size);
        if (cuabi_program_get_ptx(program, buf.data(), &size) == CUABI_SUCCESS) {
          ptx[t] = buf.data();
        }
      }
      cuabi_program_release(program);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(Contains(ptx[t], ".visible .entry k" + std::to_string(t) + "(")) << "thread " << t;
  }
}

TEST(Nvrtc, VersionAndPath) {
  int32_t major = -1, minor = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_nvrtc_get_version(&major, &minor)) << LastError();
  EXPECT_GE(major, 11);
  EXPECT_GE(minor, 0);
  int32_t untouched = -5;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_nvrtc_get_version(nullptr, &untouched));
  EXPECT_EQ(-5, untouched);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_nvrtc_get_version(&untouched, nullptr));
  EXPECT_EQ(-5, untouched);

  const std::vector<char> path = CheckTwoCall(
      [](void* buf, size_t* size) { return cuabi_nvrtc_get_path(static_cast<char*>(buf), size); },
      true);
  ASSERT_FALSE(path.empty());
  const std::string p(path.data());
  EXPECT_TRUE(Contains(p, "libnvrtc")) << p;
  // A location: an absolute path of a file that exists.
  EXPECT_EQ('/', p[0]) << p;
  EXPECT_EQ(0, access(p.c_str(), R_OK)) << p;
}

}  // namespace
