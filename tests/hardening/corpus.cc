#include "corpus.h"

#include <cstdio>

#include "support.h"

namespace hardening {

namespace {

// Sets a recognisable last error, so a case that answers an error without
// recording one is caught (the state would still hold this).
void PlantLastError() {
  cuabi_program p = nullptr;
  cuabi_program_get_log(p, nullptr, nullptr);  // INVALID_HANDLE: "program is NULL"
}

}  // namespace

CorpusResult RunCorpus(const std::vector<Case>& cases) {
  CorpusResult result;
  for (const Case& c : cases) {
    ++result.cases;
    PlantLastError();
    const cuabi_status planted = cuabi_last_error_status();
    CaseContext ctx;
    cuabi_status st;
    try {
      st = c.run(ctx);
    } catch (...) {
      ctx.Problem("the case threw a C++ exception");
      st = CUABI_ERROR_INTERNAL;
    }
    std::string why;
    if (st != c.expected)
      why += "answered " + StatusName(st) + ", expected " + StatusName(c.expected);
    const std::string message = cuabi_last_error_message();
    if (c.expected != CUABI_SUCCESS && st == c.expected) {
      if (!c.records_error) {
        if (cuabi_last_error_status() != planted)
          why += "it changed the last-error state, which this call must leave alone";
      } else {
        if (cuabi_last_error_status() != st)
          why += "the last error is " + StatusName(cuabi_last_error_status()) +
                 ", not the status returned";
        if (!IsUtf8(message))
          why += (why.empty() ? "" : "; ") + std::string("message is not UTF-8");
        if (message.compare(0, c.call.size() + 2, c.call + ": ") != 0)
          why += (why.empty() ? "" : "; ") + std::string("message does not start with '") + c.call +
                 ": '";
        if (!Contains(message, c.needle))
          why += (why.empty() ? "" : "; ") + std::string("message lacks '") + c.needle + "'";
      }
    }
    if (!ctx.problem.empty()) why += (why.empty() ? "" : "; ") + ctx.problem;
    if (why.empty()) {
      ++result.passed;
    } else {
      std::string shown = message.size() > 600 ? message.substr(0, 600) + "..." : message;
      result.failures.push_back(c.call + " [" + c.name + "]: " + why + "\n      message: " + shown);
    }
  }
  return result;
}

void ReportCorpus(const std::string& label, const CorpusResult& result) {
  std::printf("bad-input corpus (%s): %zu cases, %zu passed\n", label.c_str(), result.cases,
              result.passed);
  for (const std::string& f : result.failures) std::printf("  FAILED %s\n", f.c_str());
  std::fflush(stdout);
}

}  // namespace hardening
