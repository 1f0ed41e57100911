// The shared library exports the C API and nothing else, and has no
// link-time dependency on the driver or NVRTC.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "test_support.h"

namespace {

using cuabi_test::Contains;

// Runs a command and returns its standard output; *status gets its exit code.
std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  *status = pclose(pipe);
  return out;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::set<std::string> DeclaredFunctions() {
  std::ifstream in(CUABI_TEST_HEADER_PATH);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const std::regex decl("CUABI_CALL\\s+(cuabi_[a-z0-9_]+)\\s*\\(");
  std::set<std::string> names;
  for (std::sregex_iterator it(s.begin(), s.end(), decl), end; it != end; ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

TEST(Exports, OnlyTheCApiIsExported) {
  const std::string nm = CUABI_TEST_NM;
  if (nm.empty()) GTEST_SKIP() << "no nm found at configure time";
  int status = 0;
  const std::string out =
      RunCommand(Quote(nm) + " -D --defined-only " + Quote(CUABI_TEST_LIBRARY_PATH), &status);
  ASSERT_EQ(0, status) << "nm failed on " << CUABI_TEST_LIBRARY_PATH;

  // Symbols the static linker defines in every shared object.
  const std::set<std::string> linker = {"_init", "_fini", "_edata", "_end", "__bss_start"};
  std::set<std::string> exported;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string address, type, name;
    if (!(fields >> address >> type >> name)) continue;
    if (type == "A") continue;  // symbol-version nodes
    name = name.substr(0, name.find('@'));
    if (linker.count(name)) continue;
    EXPECT_EQ(0u, name.rfind("cuabi_", 0)) << "exported symbol outside the C API: " << line;
    exported.insert(name);
  }
  const std::set<std::string> declared = DeclaredFunctions();
  ASSERT_GT(declared.size(), 80u);
  for (const std::string& name : declared) {
    EXPECT_TRUE(exported.count(name)) << name << " is declared in cuabi.h but not exported";
  }
  for (const std::string& name : exported) {
    EXPECT_TRUE(declared.count(name)) << name << " is exported but not declared in cuabi.h";
  }
}

TEST(Exports, NoLinkTimeDependencyOnDriverOrNvrtc) {
  const std::string readelf = CUABI_TEST_READELF;
  if (readelf.empty()) GTEST_SKIP() << "no readelf found at configure time";
  int status = 0;
  const std::string out =
      RunCommand(Quote(readelf) + " -d " + Quote(CUABI_TEST_LIBRARY_PATH), &status);
  ASSERT_EQ(0, status);
  int needed = 0;
  std::string soname;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (Contains(line, "(NEEDED)")) {
      ++needed;
      EXPECT_FALSE(Contains(line, "libcuda")) << line;
      EXPECT_FALSE(Contains(line, "libnvrtc")) << line;
      EXPECT_FALSE(Contains(line, "libcudart")) << line;
    }
    if (Contains(line, "(SONAME)")) soname = line;
  }
  EXPECT_GT(needed, 0) << "readelf output had no NEEDED entries:\n" << out;
  EXPECT_TRUE(Contains(soname, "[libcuabi.so." + std::to_string(CUABI_VERSION_MAJOR) + "]"))
      << "SONAME: " << soname;
}

TEST(Exports, NoTransitiveDependencyOnDriverOrNvrtc) {
  const std::string ldd = CUABI_TEST_LDD;
  if (ldd.empty()) GTEST_SKIP() << "no ldd found at configure time";
  int status = 0;
  const std::string out = RunCommand(Quote(ldd) + " " + Quote(CUABI_TEST_LIBRARY_PATH), &status);
  ASSERT_EQ(0, status) << out;
  EXPECT_FALSE(Contains(out, "libcuda.so")) << out;
  EXPECT_FALSE(Contains(out, "libnvrtc")) << out;
}

}  // namespace
