// The C++ face's NVTX scope (cuabi::nvtx_range, RAII) and free functions,
// recorded by record_nvtx.c: ranges close in reverse order when their scopes
// end, also when an exception leaves them; close() ends one early and
// reports a failure; bad input throws
// cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT> naming it.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuabi/cuabi.hpp"

static int failures;

#define EXPECT(cond, what)                                            \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, \
                   std::string(what).c_str());                        \
      failures++;                                                     \
    }                                                                 \
  } while (0)

template <class F>
static void expect_refused(F&& f, const std::string& needle) {
  try {
    f();
    EXPECT(false, "no exception; wanted one naming '" + needle + "'");
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT(e.status() == CUABI_ERROR_INVALID_ARGUMENT,
           std::string("status ") + cuabi_status_get_name(e.status()));
    EXPECT(std::string(e.what()).find(needle) != std::string::npos,
           std::string("'") + e.what() + "' lacks '" + needle + "'");
  }
}

int main() {
  const char* record = std::getenv("CUABI_NVTX_RECORD");
  if (!record) {
    std::fprintf(stderr, "CUABI_NVTX_RECORD is not set\n");
    return 1;
  }
  std::remove(record);
  {
    cuabi::nvtx_range outer(nullptr, "outer", 0);
    try {
      cuabi::nvtx_range inner("cuabi.cxx", "inner", 0xFF0000FFu);
      cuabi::nvtx_mark("cuabi.cxx", "inside", 0);
      throw std::runtime_error("leaves the scope");
    } catch (const std::runtime_error&) {
    }
    cuabi::nvtx_range early("cuabi.cxx", "early", 0);
    early.close();
    early.close();  // closed already: nothing
    const uint64_t id = cuabi::nvtx_range_start(nullptr, "started", 0);
    cuabi::nvtx_range_end(id);
    expect_refused([&] { cuabi::nvtx_range_end(id); }, "is not open");
  }
  expect_refused([] { cuabi::nvtx_range scope("", "x", 0); }, "domain is an empty name");
  expect_refused([] { cuabi::nvtx_range_pop("cuabi.cxx"); },
                 "no range of domain 'cuabi.cxx' is open on this thread");
  {
    // A range popped behind the scope's back: close() reports it.
    cuabi::nvtx_range scope("cuabi.cxx", "popped", 0);
    cuabi::nvtx_range_pop("cuabi.cxx");
    expect_refused([&] { scope.close(); }, "no range of domain 'cuabi.cxx'");
  }

  const std::vector<std::string> want = {
      "push - - outer",
      "create cuabi.cxx",
      "push cuabi.cxx ff0000ff inner",
      "mark cuabi.cxx - inside",
      "pop cuabi.cxx",
      "push cuabi.cxx - early",
      "pop cuabi.cxx",
      "start - - started",
      "end -",
      "pop -",
      "push cuabi.cxx - popped",
      "pop cuabi.cxx",
  };
  std::ifstream in(record);
  EXPECT(in.good(), std::string("the tool wrote no ") + record);
  std::vector<std::string> got;
  for (std::string line; std::getline(in, line);) got.push_back(line);
  EXPECT(got.size() == want.size(),
         "recorded " + std::to_string(got.size()) + " lines, want " + std::to_string(want.size()));
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    EXPECT(got[i] == want[i], "line " + std::to_string(i + 1) + ": '" + got[i] + "', want '" +
                                  want[i] + "'");
  if (failures) return 1;
  std::printf("nvtx (C++): scopes, marks and refusals recorded as expected\n");
  return 0;
}
