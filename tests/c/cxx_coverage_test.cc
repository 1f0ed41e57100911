// The C++ face covers the whole C API: every function the model lists
// (header_abi.h's CUABI_TEST_FUNCTIONS, written from cuabi.json by
// scripts/regen) is named in the code of cuabi_objects.hpp or cuabi.hpp, with
// comments and string literals left out, so a function cannot go missing from
// the C++ face without this failing.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "header_abi.h"

namespace {

#define CUABI_TEST_NAME(f) #f,
const char* const kFunctions[] = {CUABI_TEST_FUNCTIONS(CUABI_TEST_NAME)};
#undef CUABI_TEST_NAME

std::string IncludeDir() {
  const std::string header = CUABI_TEST_HEADER_PATH;
  return header.substr(0, header.rfind('/'));
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// C++ text with its comments and the contents of its string and character
// literals blanked out.
std::string Code(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;
      out += ' ';
    } else if (text[i] == '"' || text[i] == '\'') {
      const char quote = text[i++];
      while (i < text.size() && text[i] != quote) i += text[i] == '\\' ? 2 : 1;
      ++i;
      out += "\"\"";
    } else {
      out += text[i++];
    }
  }
  return out;
}

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether `name` occurs in `code` as a whole identifier.
bool Names(const std::string& code, const std::string& name) {
  for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    const bool starts = at == 0 || !IsIdentifierChar(code[at - 1]);
    const size_t end = at + name.size();
    const bool ends = end == code.size() || !IsIdentifierChar(code[end]);
    if (starts && ends) return true;
  }
  return false;
}

TEST(CxxFace, CoversEveryFunctionOfTheModel) {
  const std::string generated = Code(Read(IncludeDir() + "/cuabi_objects.hpp"));
  const std::string written = Code(Read(IncludeDir() + "/cuabi.hpp"));
  ASSERT_NE(std::string::npos, written.find("#include <cuabi/cuabi_objects.hpp>"))
      << "cuabi.hpp must include the generated layer";
  size_t count = 0;
  for (const char* name : kFunctions) {
    ++count;
    EXPECT_TRUE(Names(generated, name) || Names(written, name))
        << name << " has no C++ form: neither cuabi_objects.hpp nor cuabi.hpp calls it";
  }
  EXPECT_GT(count, 170u) << "the model's function list looks truncated";
}

TEST(CxxFace, TheGeneratedLayerCallsAllButTheListedFunctions) {
  // Hand-written forms are the exception: the generated layer calls every
  // function except those its closing list sends to cuabi.hpp.
  const std::string text = Read(IncludeDir() + "/cuabi_objects.hpp");
  const std::string generated = Code(text);
  for (const char* name : kFunctions) {
    if (Names(generated, name)) continue;
    EXPECT_NE(std::string::npos, text.find(std::string("//   ") + name + ": cuabi.hpp\n"))
        << name << " is neither generated nor listed as written in cuabi.hpp";
  }
}

TEST(CxxFace, SeesThroughCommentsAndLiterals) {
  EXPECT_EQ("a   b", Code("a /* cuabi_init() */ b"));
  EXPECT_EQ("x\ny", Code("x// cuabi_init()\ny"));
  EXPECT_FALSE(Names(Code("f(\"cuabi_init\");"), "cuabi_init"));
  EXPECT_TRUE(Names("check(cuabi_init());", "cuabi_init"));
  EXPECT_FALSE(Names("cuabi_init_more();", "cuabi_init"));
  EXPECT_FALSE(Names("my_cuabi_init();", "cuabi_init"));
}

}  // namespace
