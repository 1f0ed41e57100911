// The header as C99 and as C++: both languages see the same functions,
// constants and struct layouts, and the version macros match the library.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "header_abi.h"
#include "header_c99.h"
#include "header_cxx.h"
#include "test_support.h"

namespace {

std::set<std::string> FunctionsDeclaredInHeader() {
  std::ifstream in(CUABI_TEST_HEADER_PATH);
  EXPECT_TRUE(in.good()) << "cannot read " << CUABI_TEST_HEADER_PATH;
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::set<std::string> names;
  const std::regex decl("CUABI_API[^;(]*CUABI_CALL\\s+(cuabi_[a-z0-9_]+)\\s*\\(");
  for (std::sregex_iterator it(s.begin(), s.end(), decl), end; it != end; ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

TEST(Header, C99TranslationUnitSeesEveryFunction) {
  const std::set<std::string> declared = FunctionsDeclaredInHeader();
  ASSERT_GT(declared.size(), 80u) << "header parse found too few declarations";
  std::set<std::string> in_c;
  for (size_t i = 0; i < cuabi_c99_function_count(); ++i) {
    ASSERT_NE(nullptr, cuabi_c99_function_name(i));
    EXPECT_TRUE(cuabi_c99_function_present(i)) << cuabi_c99_function_name(i);
    EXPECT_TRUE(in_c.insert(cuabi_c99_function_name(i)).second)
        << "listed twice: " << cuabi_c99_function_name(i);
  }
  for (const std::string& name : declared) {
    EXPECT_TRUE(in_c.count(name)) << name << " is declared in cuabi.h but not exercised by "
                                  << "header_c99.c; add it there";
  }
  for (const std::string& name : in_c) {
    EXPECT_TRUE(declared.count(name)) << name << " is not declared in cuabi.h";
  }
}

TEST(Header, ConstantsAgreeBetweenCAndCxx) {
  const int64_t cxx[] = {
      CUABI_TEST_CONSTANTS(CUABI_TEST_ELEMENT)
  };
  const size_t n = sizeof(cxx) / sizeof(cxx[0]);
  std::vector<int64_t> c(n + 8, -12345);
  ASSERT_EQ(n, cuabi_c99_constants(c.data(), c.size()));
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(cxx[i], c[i]) << "constant #" << i;

  // Statuses are dense 0..COUNT-1; the ABI values are fixed by the header.
  for (int64_t i = 0; i < CUABI_STATUS_COUNT; ++i) EXPECT_EQ(i, cxx[i]);
  EXPECT_EQ(21, CUABI_STATUS_COUNT);
}

TEST(Header, StructLayoutAgreesBetweenCAndCxx) {
  std::vector<size_t> c(512, 0), cxx(512, 1);
  const size_t nc = cuabi_c99_layout(c.data(), c.size());
  const size_t ncxx = cuabi_cxx_layout(cxx.data(), cxx.size());
  ASSERT_EQ(nc, ncxx);
  for (size_t i = 0; i < nc; ++i) EXPECT_EQ(c[i], cxx[i]) << "layout value #" << i;
  // Enums are 32-bit on the boundary.
  EXPECT_EQ(4u, sizeof(cuabi_status));
  EXPECT_EQ(4u, sizeof(cuabi_output));
}

TEST(Header, InitMacrosHoldTheDefaultsInCAndCxx) {
  EXPECT_EQ(0, cuabi_c99_init_macros());
  EXPECT_EQ(0, cuabi_cxx_init_macros());
}

TEST(Header, CallsFromC) { EXPECT_EQ(0, cuabi_c99_calls()) << "failing step in header_c99.c"; }

TEST(Version, MacrosMatchTheLibrary) {
  EXPECT_EQ(static_cast<uint32_t>(CUABI_VERSION_NUMBER), cuabi_version());
  EXPECT_EQ(cuabi_version(), cuabi_c99_version_number());
  EXPECT_EQ(static_cast<uint32_t>(CUABI_VERSION_MAJOR * 10000 + CUABI_VERSION_MINOR * 100 +
                                  CUABI_VERSION_PATCH),
            cuabi_version());
  ASSERT_NE(nullptr, cuabi_version_string());
  EXPECT_STREQ(CUABI_VERSION_STRING, cuabi_version_string());
  EXPECT_STREQ(cuabi_c99_version_string(), cuabi_version_string());
  char built[64];
  std::snprintf(built, sizeof built, "%d.%d.%d", cuabi_c99_version_part(0),
                cuabi_c99_version_part(1), cuabi_c99_version_part(2));
  EXPECT_STREQ(built, cuabi_version_string());
  // Static: the same pointer every time.
  EXPECT_EQ(cuabi_version_string(), cuabi_version_string());
}

}  // namespace
