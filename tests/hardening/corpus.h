// The bad-input corpus: every wrong input the C ABI must refuse, each with
// the status it must answer and a piece of text its message must hold (the
// thing at fault).
//
// The expectations are data, in tests/corpus/cases.json: one case per entry,
// with its id, its group ("cpu": needs no GPU, "gpu": needs a device), the C
// function whose status is checked, that status by name, the needle, and a
// readable name. The C++ side only holds each case's call body, registered
// under the case's id (corpus_cpu_test.cc, corpus_gpu_test.cc). The runner
// pairs the two: a case without a body, or a body without a case, fails.
// The count printed is the data's.
#ifndef CUABI_TESTS_HARDENING_CORPUS_H
#define CUABI_TESTS_HARDENING_CORPUS_H

#include <cuabi/cuabi.h>

#include <cstdio>
#include <functional>
#include <map>
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

// One call body: makes the wrong call and answers the status it got.
using Body = std::function<cuabi_status(CaseContext&)>;

// The call bodies of one group, by case id.
class Bodies {
 public:
  // Registers `body` as the call of case `id`; a second body under the same
  // id is an error Match() reports.
  void def(const std::string& id, Body body);
  const Body* Find(const std::string& id) const;
  const std::vector<std::string>& ids() const { return ids_; }
  const std::vector<std::string>& duplicates() const { return duplicates_; }

 private:
  std::map<std::string, Body> bodies_;
  std::vector<std::string> ids_;  // in registration order
  std::vector<std::string> duplicates_;
};

// One case of cases.json.
struct Case {
  std::string id;         // "<function without cuabi_>.<what is wrong>"
  std::string group;      // "cpu" or "gpu"
  std::string call;       // the C function whose status is checked
  cuabi_status expected;  // the status it must answer
  std::string needle;     // text the message must hold ("" for CUABI_SUCCESS)
  std::string name;       // what is wrong with the input, in words
  // False for the calls the header says never touch the last-error state.
  bool records_error = true;
};

// The corpus file: CUABI_CORPUS_FILE in the environment, else the source
// tree's tests/corpus/cases.json (compiled in).
std::string CorpusPath();

// Reads and checks the corpus file: well-formed, every field present and of
// its type, ids unique, groups known, statuses named as
// cuabi_status_get_name names them. False with the reason in *error.
bool LoadCorpus(std::vector<Case>* cases, std::string* error);

// The cases of one group, in file order.
std::vector<Case> InGroup(const std::vector<Case>& cases, const std::string& group);

// Every way the data and the bodies of one group disagree: a case without a
// body, a body without a case, a body registered twice. Empty when they match.
std::vector<std::string> Match(const std::vector<Case>& cases, const Bodies& bodies);

struct CorpusResult {
  size_t cases = 0;
  size_t passed = 0;
  std::vector<std::string> failures;
};

// Runs every case with its body and checks, for each:
// - it has a body;
// - the status is the expected one;
// - on failure, the thread's last error has that status, its message is
//   valid UTF-8, starts with "<call>: " (it names the failing call) and holds
//   the needle (it names the thing at fault);
// - the case's own checks found no problem.
// A body without a case is a failure too.
CorpusResult RunCorpus(const std::vector<Case>& cases, const Bodies& bodies);

// Prints "bad-input corpus (<label>): N cases, P passed" and each failure.
void ReportCorpus(const std::string& label, const CorpusResult& result);

// Prints one line per case (group, id, call, status, needle) and the counts;
// `group` "" lists every group. For `cuabi_hardening_tests --list-corpus`.
int ListCorpus(std::FILE* out, const std::string& group);

}  // namespace hardening

#endif  // CUABI_TESTS_HARDENING_CORPUS_H
