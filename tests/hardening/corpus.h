// The bad-input corpus: a table of cases, each one wrong input through the
// C ABI with the status it must answer and a piece of text its message must
// hold (the thing at fault). The runner checks every case the same way and
// prints how many ran and passed, so the count in the output is the table's.
#ifndef CUABI_TESTS_HARDENING_CORPUS_H
#define CUABI_TESTS_HARDENING_CORPUS_H

#include <cuabi/cuabi.h>

#include <functional>
#include <string>
#include <vector>

namespace hardening {

// What a case may report beyond its status: a problem found by its own
// extra checks (an out-parameter written on failure, a wrong result).
struct CaseContext {
  std::string problem;
  void Problem(const std::string& what) {
    if (!problem.empty()) problem += "; ";
    problem += what;
  }
};

struct Case {
  std::string name;       // what is wrong with the input
  std::string call;       // the C function whose status is checked
  cuabi_status expected;  // the status it must answer
  std::string needle;     // text the message must hold ("" for CUABI_SUCCESS)
  std::function<cuabi_status(CaseContext&)> run;
  // False for the calls the header says never touch the last-error state.
  bool records_error = true;
};

struct CorpusResult {
  size_t cases = 0;
  size_t passed = 0;
  std::vector<std::string> failures;
};

// Runs every case and checks, for each:
// - the status is the expected one;
// - on failure, the thread's last error has that status, its message is
//   valid UTF-8, starts with "<call>: " (it names the failing call) and holds
//   the needle (it names the thing at fault);
// - the case's own checks found no problem.
CorpusResult RunCorpus(const std::vector<Case>& cases);

// Prints "bad-input corpus (<label>): N cases, P passed" and each failure.
void ReportCorpus(const std::string& label, const CorpusResult& result);

}  // namespace hardening

#endif  // CUABI_TESTS_HARDENING_CORPUS_H
