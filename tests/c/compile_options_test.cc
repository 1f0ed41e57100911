// The typed options of cuabi_compile_desc through cuabi_program_compile_with:
// each reaches NVRTC (checked by what the compiled code shows), the macro
// names the core accepts and refuses, every refusal naming its field and
// index, and a caller of the 0.1 struct size. NVRTC runs for real; no GPU.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

using cuabi_test::Contains;
using cuabi_test::FetchAll;
using cuabi_test::FetchString;
using cuabi_test::LastError;
using cuabi_test::StatusName;

// A program of `source`, released at the end of the test.
struct Program {
  explicit Program(const char* source) {
    EXPECT_EQ(CUABI_SUCCESS, cuabi_program_create(source, "opts.cu", 0, nullptr, nullptr, &p))
        << LastError();
  }
  ~Program() { cuabi_program_release(p); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  operator cuabi_program() const { return p; }
  std::string Ptx() const {
    return FetchString([&](void* buf, size_t* size) {
      return cuabi_program_get_ptx(p, static_cast<char*>(buf), size);
    });
  }
  std::string Log() const {
    return FetchString([&](void* buf, size_t* size) {
      return cuabi_program_get_log(p, static_cast<char*>(buf), size);
    });
  }
  cuabi_program p = nullptr;
};

cuabi_compile_desc Desc() {
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  d.arch = "compute_90";  // PTX, readable below
  return d;
}

cuabi_status CompileWith(const char* source, const cuabi_compile_desc& d,
                         std::string* ptx = nullptr) {
  Program p(source);
  cuabi_status st = cuabi_program_compile_with(p, &d);
  if (st == CUABI_SUCCESS && ptx) *ptx = p.Ptx();
  return st;
}

// The status and message of a compile refused before NVRTC runs.
void ExpectRefused(const cuabi_compile_desc& d, const std::vector<std::string>& needles) {
  Program p("__global__ void k() {}");
  cuabi_status st = cuabi_program_compile_with(p, &d);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT), StatusName(st)) << LastError();
  std::string message = cuabi_last_error_message();
  EXPECT_TRUE(Contains(message, "cuabi_program_compile_with: ")) << message;
  for (const std::string& needle : needles) EXPECT_TRUE(Contains(message, needle)) << message;
  EXPECT_EQ("", p.Log()) << "NVRTC ran for a refused option";
}

TEST(CompileOptions, DefinesReachNvrtc) {
  const char* source =
      "#if N != 4 || !defined(FLAG)\n#error defines missing\n#endif\n"
      "static_assert(SQUARE(3) == 9, \"function-like\");\n"
      "static_assert(SUM(1, 2, 3) == 6, \"variadic\");\n"
      "static_assert(EMPTY() + 1 == 1, \"no parameters\");\n"
      "__global__ void k(int* p) { *p = N; }\n";
  const char* defines[] = {"N=4", "FLAG", "SQUARE(x)=((x)*(x))", "SUM(a,...)=(a+add(__VA_ARGS__))",
                           "EMPTY()=0"};
  std::string prelude = std::string("__host__ __device__ constexpr int add(int a, int b) ") +
                        "{ return a + b; }\n" + source;
  cuabi_compile_desc d = Desc();
  d.defines = defines;
  d.num_defines = 5;
  EXPECT_EQ(CUABI_SUCCESS, CompileWith(prelude.c_str(), d)) << LastError();
  d.num_defines = 1;  // FLAG and the macros missing
  EXPECT_EQ(CUABI_ERROR_COMPILE, CompileWith(prelude.c_str(), d));
}

TEST(CompileOptions, StandardReachesNvrtc) {
  const char* source =
      "#if __cplusplus != 201402L\n#error not C++14\n#endif\n__global__ void k() {}\n";
  cuabi_compile_desc d = Desc();
  d.cxx_standard = CUABI_STD_CXX14;
  EXPECT_EQ(CUABI_SUCCESS, CompileWith(source, d)) << LastError();
  d.cxx_standard = CUABI_STD_CXX17;
  EXPECT_EQ(CUABI_ERROR_COMPILE, CompileWith(source, d));
  const char* cxx20 = "#if __cplusplus < 202002L\n#error\n#endif\n__global__ void k() {}\n";
  d.cxx_standard = CUABI_STD_CXX20;
  EXPECT_EQ(CUABI_SUCCESS, CompileWith(cxx20, d)) << LastError();
}

TEST(CompileOptions, IncludePathsReachNvrtc) {
  char dir[] = "/tmp/cuabi_include_XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  std::string header = std::string(dir) + "/opts_test_header.h";
  FILE* f = std::fopen(header.c_str(), "w");
  ASSERT_NE(nullptr, f);
  std::fputs("#define FROM_HEADER 7\n", f);
  std::fclose(f);
  const char* source =
      "#include \"opts_test_header.h\"\n__global__ void k(int* p) { *p = FROM_HEADER; }\n";
  const char* paths[] = {"/nonexistent/first", dir};
  cuabi_compile_desc d = Desc();
  EXPECT_EQ(CUABI_ERROR_COMPILE, CompileWith(source, d));
  d.include_paths = paths;
  d.num_include_paths = 2;
  EXPECT_EQ(CUABI_SUCCESS, CompileWith(source, d)) << LastError();
  unlink(header.c_str());
  rmdir(dir);
}

TEST(CompileOptions, SwitchesReachNvrtc) {
  const char* divide = "__global__ void k(float* p) { p[0] = p[1] / p[2]; }\n";
  cuabi_compile_desc d = Desc();
  std::string plain, fast, lines, debug;
  ASSERT_EQ(CUABI_SUCCESS, CompileWith(divide, d, &plain)) << LastError();
  EXPECT_TRUE(Contains(plain, "div.rn.f32")) << plain;
  d.fast_math = 1;
  ASSERT_EQ(CUABI_SUCCESS, CompileWith(divide, d, &fast)) << LastError();
  EXPECT_TRUE(Contains(fast, "div.approx.ftz.f32") || Contains(fast, "div.full.ftz.f32")) << fast;
  EXPECT_FALSE(Contains(fast, "div.rn.f32")) << fast;
  d.fast_math = 0;
  EXPECT_FALSE(Contains(plain, ".loc")) << plain;
  d.line_info = 1;
  ASSERT_EQ(CUABI_SUCCESS, CompileWith(divide, d, &lines)) << LastError();
  EXPECT_TRUE(Contains(lines, ".loc")) << lines;
  d.line_info = 0;
  d.device_debug = 1;
  ASSERT_EQ(CUABI_SUCCESS, CompileWith(divide, d, &debug)) << LastError();
  EXPECT_TRUE(Contains(debug, ", debug")) << "no debug target in the PTX";
}

TEST(CompileOptions, RelocatableAndLto) {
  const char* external =
      "extern __device__ int twice(int);\n__global__ void k(int* p) { *p = twice(*p); }\n";
  cuabi_compile_desc d = Desc();
  d.arch = "sm_90";  // machine code: the call must be resolved, or the code relocatable
  EXPECT_EQ(CUABI_ERROR_COMPILE, CompileWith(external, d))
      << "an external device call needs relocatable code";
  d.relocatable = 1;
  EXPECT_EQ(CUABI_SUCCESS, CompileWith(external, d)) << LastError();

  d.lto = 1;
  Program p(external);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile_with(p, &d)) << LastError();
  std::vector<char> ir =
      FetchAll([&](void* buf, size_t* size) { return cuabi_program_get_lto_ir(p, buf, size); });
  EXPECT_FALSE(ir.empty());
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, cuabi_program_get_cubin(p, nullptr, &size));
}

TEST(CompileOptions, ArchitectureReachesNvrtc) {
  const char* source = "__global__ void k() {}";
  cuabi_compile_desc d = Desc();
  d.arch = "compute_80";
  std::string ptx;
  ASSERT_EQ(CUABI_SUCCESS, CompileWith(source, d, &ptx)) << LastError();
  EXPECT_TRUE(Contains(ptx, ".target sm_80")) << ptx;
  d.arch = "sm_90";
  Program p(source);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile_with(p, &d)) << LastError();
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_cubin(p, nullptr, &size)) << LastError();
  // An architecture NVRTC does not know is NVRTC's to refuse.
  d.arch = "sm_19";
  EXPECT_EQ(CUABI_ERROR_COMPILE, CompileWith(source, d));
}

TEST(CompileOptions, RawOptionsFollowTheTypedOnes) {
  // The raw option comes last, so its definition of N is the one in force
  // (NVRTC keeps the last -D of a name, with a warning).
  const char* source = "static_assert(N == 2, \"raw last\");\n__global__ void k() {}\n";
  const char* defines[] = {"N=1"};
  const char* raw[] = {"-UN", "-DN=2"};
  cuabi_compile_desc d = Desc();
  d.defines = defines;
  d.num_defines = 1;
  d.options = raw;
  d.num_options = 2;
  EXPECT_EQ(CUABI_SUCCESS, CompileWith(source, d)) << LastError();
}

TEST(CompileOptions, MacroNamesAccepted) {
  for (const char* define :
       {"N", "_N", "n_2", "N=", "N=a b c", "N==", "F()", "F()=1", "F(a)", "F(a,b)=a+b",
        "F(...)=__VA_ARGS__", "F(a,...)=a", "F(_a1,b_)=(_a1)", "X=\"quoted string\""}) {
    const char* defines[] = {define};
    cuabi_compile_desc d = Desc();
    d.defines = defines;
    d.num_defines = 1;
    EXPECT_EQ(CUABI_SUCCESS, CompileWith("__global__ void k() {}", d))
        << "'" << define << "': " << LastError();
  }
}

TEST(CompileOptions, MacroNamesRefusedNamingDefineAndWhy) {
  struct Case {
    const char* define;
    const char* why;
  } cases[] = {
      {"", "is empty"},
      {"=1", "the macro name before '=' is empty"},
      {"2X", "cannot start with a digit"},
      {"9=1", "cannot start with a digit"},
      {" N", "not a space"},
      {"N M", "no whitespace"},
      {"N\t=1", "no whitespace"},
      {"N-M", "not '-'"},
      {"F (a)", "no whitespace"},
      {"F(a", "no ')'"},
      {"F(a,)", "starts none"},
      {"F(,a)", "starts none"},
      {"F(a b)", "separated by ','"},
      {"F(a, b)", "a space starts none"},
      {"F(1)", "'1' starts none"},
      {"F(a,a)", "the parameter a appears twice"},
      {"F(...,a)", "\"...\" must be the last"},
      {"F(a)b", "'b' follows the parameter list"},
      {"N=1\n#define M 2", "one line"},
      {"N\xC3\xA9", "non-ASCII"},
  };
  for (const Case& c : cases) {
    const char* defines[] = {"OK", c.define};
    cuabi_compile_desc d = Desc();
    d.defines = defines;
    d.num_defines = 2;
    SCOPED_TRACE(std::string("define '") + c.define + "'");
    ExpectRefused(d, {"desc->defines[1]", c.why});
  }
}

TEST(CompileOptions, ListsRefusedNamingFieldAndIndex) {
  const char* with_null[] = {"A", nullptr};
  cuabi_compile_desc d = Desc();
  d.defines = with_null;
  d.num_defines = 2;
  ExpectRefused(d, {"desc->defines[1] is NULL"});
  d = Desc();
  d.num_defines = 1;
  ExpectRefused(d, {"desc->defines is NULL but its count is 1"});
  d = Desc();
  d.defines = with_null;
  d.num_defines = size_t(1) << 40;
  ExpectRefused(d, {"desc->defines: count", "implausibly large"});

  const char* paths[] = {"/usr/include", ""};
  d = Desc();
  d.include_paths = paths;
  d.num_include_paths = 2;
  ExpectRefused(d, {"desc->include_paths[1] is empty"});
  d = Desc();
  d.include_paths = with_null;
  d.num_include_paths = 2;
  ExpectRefused(d, {"desc->include_paths[1] is NULL"});
  d = Desc();
  d.num_include_paths = 3;
  ExpectRefused(d, {"desc->include_paths is NULL but its count is 3"});

  const char* options[] = {"-O3", ""};
  d = Desc();
  d.options = options;
  d.num_options = 2;
  ExpectRefused(d, {"desc->options[1] is empty"});
}

TEST(CompileOptions, StandardRefusedNamingTheValue) {
  for (int32_t value : {1, 2, 16, 18, 23, -17, 2017}) {
    cuabi_compile_desc d = Desc();
    d.cxx_standard = static_cast<cuabi_cxx_standard>(value);
    SCOPED_TRACE(value);
    ExpectRefused(d, {"desc->cxx_standard is " + std::to_string(value), "CUABI_STD_CXX17"});
  }
}

TEST(CompileOptions, ArchitectureRefused) {
  for (const char* arch : {"", "90", "sm90", "sm_9", "sm_1000", "sm_90x", "SM_90", "compute_",
                           "lto_90", " sm_90", "sm_90 ", "--gpu-architecture=sm_90"}) {
    cuabi_compile_desc d = Desc();
    d.arch = arch;
    SCOPED_TRACE(std::string("arch '") + arch + "'");
    ExpectRefused(d, {"desc->arch"});
  }
  for (const char* arch : {"sm_90a", "sm_100f", "compute_90a", "sm_120"}) {
    cuabi_compile_desc d = Desc();
    d.arch = arch;
    Program p("__global__ void k() {}");
    cuabi_status st = cuabi_program_compile_with(p, &d);
    EXPECT_NE(StatusName(CUABI_ERROR_INVALID_ARGUMENT), StatusName(st))
        << arch << " is well formed: NVRTC decides whether it knows it";
  }
  const char* raw[] = {"-O3", "-arch=sm_80"};
  cuabi_compile_desc d = Desc();
  d.options = raw;
  d.num_options = 2;
  ExpectRefused(d, {"desc->arch (\"compute_90\") and desc->options[1] (\"-arch=sm_80\")",
                    "both name an architecture"});
}

TEST(CompileOptions, SwitchesRefusedUnlessZeroOrOne) {
  int32_t cuabi_compile_desc::*fields[] = {
      &cuabi_compile_desc::fast_math, &cuabi_compile_desc::line_info,
      &cuabi_compile_desc::device_debug, &cuabi_compile_desc::lto,
      &cuabi_compile_desc::relocatable};
  const char* names[] = {"fast_math", "line_info", "device_debug", "lto", "relocatable"};
  for (int i = 0; i < 5; ++i) {
    for (int32_t value : {2, -1}) {
      cuabi_compile_desc d = Desc();
      d.*fields[i] = value;
      ExpectRefused(d, {std::string("desc->") + names[i] + " is " + std::to_string(value),
                        "expected 0 or 1"});
    }
  }
}

TEST(CompileOptions, ProgramFieldsRefused) {
  const char* list[] = {"x"};
  struct Case {
    const char* field;
    void (*set)(cuabi_compile_desc&, const char* const*);
  } cases[] = {
      {"desc->source", [](cuabi_compile_desc& d, const char* const*) { d.source = "x"; }},
      {"desc->name", [](cuabi_compile_desc& d, const char* const*) { d.name = "x.cu"; }},
      {"desc->num_headers", [](cuabi_compile_desc& d, const char* const*) { d.num_headers = 1; }},
      {"desc->header_sources",
       [](cuabi_compile_desc& d, const char* const* l) { d.header_sources = l; }},
      {"desc->name_expressions",
       [](cuabi_compile_desc& d, const char* const* l) { d.name_expressions = l; }},
      {"desc->output",
       [](cuabi_compile_desc& d, const char* const*) { d.output = CUABI_OUTPUT_PTX; }},
      {"desc->flags",
       [](cuabi_compile_desc& d, const char* const*) { d.flags = CUABI_COMPILE_NO_CACHE; }},
  };
  for (const Case& c : cases) {
    cuabi_compile_desc d = Desc();
    c.set(d, list);
    SCOPED_TRACE(c.field);
    ExpectRefused(d, {std::string(c.field) + " is set", "a program compile takes only options"});
  }
}

TEST(CompileOptions, DescriptionItselfChecked) {
  Program p("__global__ void k() {}");
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_compile_with(p, nullptr));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "desc is NULL"));
  cuabi_compile_desc d = Desc();
  d.struct_size = 100;  // between the two versions
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_compile_with(p, &d));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "desc->struct_size is 100")) << LastError();
  d.struct_size = 40;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_program_compile_with(p, &d));
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_compile_with(nullptr, &d));
}

// A caller built against the 0.1 header (88 bytes, no typed fields) keeps
// working: the bytes past its struct are never read.
TEST(CompileOptions, FirstVersionStructStillCompiles) {
  struct {
    cuabi_compile_desc d;
    char poison[64];
  } block;
  std::memset(&block, 0x5A, sizeof(block));
  const char* raw[] = {"--gpu-architecture=compute_90", "-DN=3"};
  cuabi_compile_desc& d = block.d;
  d.struct_size = 88;
  d.source = nullptr;
  d.name = nullptr;
  d.options = raw;
  d.num_options = 2;
  d.header_sources = nullptr;
  d.header_names = nullptr;
  d.num_headers = 0;
  d.name_expressions = nullptr;
  d.num_name_expressions = 0;
  d.output = CUABI_OUTPUT_CUBIN;
  d.flags = 0;
  Program p("static_assert(N == 3, \"\");\n__global__ void k() {}\n");
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_compile_with(p, &d)) << LastError();
  EXPECT_TRUE(Contains(p.Ptx(), ".target sm_90"));
}

TEST(CompileOptions, DescInitGivesEveryTypedOptionUnset) {
  cuabi_compile_desc d;
  std::memset(&d, 0x77, sizeof(d));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_compile_desc_init(&d, sizeof(d))) << LastError();
  EXPECT_EQ(nullptr, d.arch);
  EXPECT_EQ(CUABI_STD_DEFAULT, d.cxx_standard);
  EXPECT_EQ(nullptr, d.defines);
  EXPECT_EQ(0u, d.num_defines);
  EXPECT_EQ(nullptr, d.include_paths);
  EXPECT_EQ(0u, d.num_include_paths);
  EXPECT_EQ(0, d.fast_math + d.line_info + d.device_debug + d.lto + d.relocatable);
  // An old caller's size fills only its fields.
  std::memset(&d, 0x77, sizeof(d));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_compile_desc_init(&d, 88)) << LastError();
  EXPECT_EQ(88u, d.struct_size);
  EXPECT_EQ(0x7777777777777777u, reinterpret_cast<uintptr_t>(d.arch));
}

}  // namespace
