#include "corpus.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "../common/json.h"
#include "support.h"

#ifndef CUABI_CORPUS_FILE
#error "CUABI_CORPUS_FILE (the path of tests/corpus/cases.json) must be defined"
#endif

namespace hardening {

namespace {

// Sets a recognisable last error, so a case that answers an error without
// recording one is caught (the state would still hold this).
void PlantLastError() {
  cuabi_program p = nullptr;
  cuabi_program_get_log(p, nullptr, nullptr);  // INVALID_HANDLE: "program is NULL"
}

// The status the library names `name`; false when no status has that name.
bool StatusNamed(const std::string& name, cuabi_status* out) {
  for (int32_t s = 0; s < CUABI_STATUS_COUNT; ++s) {
    if (name == cuabi_status_get_name(static_cast<cuabi_status>(s))) {
      *out = static_cast<cuabi_status>(s);
      return true;
    }
  }
  return false;
}

bool StringField(const cuabi_test::json::Value& entry, const char* key, std::string* out,
                 std::string* error) {
  const cuabi_test::json::Value* v = entry.Get(key);
  if (!v || v->type != cuabi_test::json::Value::Type::kString) {
    *error = std::string("\"") + key + "\" is missing or not a string";
    return false;
  }
  *out = v->string;
  return true;
}

}  // namespace

void Bodies::def(const std::string& id, Body body) {
  if (!bodies_.emplace(id, std::move(body)).second) {
    duplicates_.push_back(id);
    return;
  }
  ids_.push_back(id);
}

const Body* Bodies::Find(const std::string& id) const {
  auto it = bodies_.find(id);
  return it == bodies_.end() ? nullptr : &it->second;
}

std::string CorpusPath() {
  const char* env = std::getenv("CUABI_CORPUS_FILE");
  return env && *env ? env : CUABI_CORPUS_FILE;
}

bool LoadCorpus(std::vector<Case>* cases, std::string* error) {
  const std::string path = CorpusPath();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot be read";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  cuabi_test::json::Value doc;
  std::string why;
  if (!cuabi_test::json::Parse(text.str(), &doc, &why)) {
    *error = path + ": " + why;
    return false;
  }
  const cuabi_test::json::Value* list = doc.Get("cases");
  if (!list || list->type != cuabi_test::json::Value::Type::kArray) {
    *error = path + ": no \"cases\" array";
    return false;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < list->array.size(); ++i) {
    const cuabi_test::json::Value& entry = list->array[i];
    const std::string where = path + ": cases[" + std::to_string(i) + "]";
    Case c;
    std::string status;
    if (entry.type != cuabi_test::json::Value::Type::kObject ||
        !StringField(entry, "id", &c.id, &why) || !StringField(entry, "group", &c.group, &why) ||
        !StringField(entry, "call", &c.call, &why) ||
        !StringField(entry, "status", &status, &why) ||
        !StringField(entry, "needle", &c.needle, &why) ||
        !StringField(entry, "name", &c.name, &why)) {
      *error =
          where + ": " +
          (entry.type == cuabi_test::json::Value::Type::kObject ? why
                                                                : std::string("not an object"));
      return false;
    }
    if (const cuabi_test::json::Value* r = entry.Get("records_error")) {
      if (r->type != cuabi_test::json::Value::Type::kBool) {
        *error = where + " (" + c.id + "): \"records_error\" is not true or false";
        return false;
      }
      c.records_error = r->boolean;
    }
    if (!seen.insert(c.id).second) {
      *error = where + ": the id " + c.id + " is used twice";
      return false;
    }
    if (c.group != "cpu" && c.group != "gpu") {
      *error = where + " (" + c.id + "): group \"" + c.group + "\" is neither cpu nor gpu";
      return false;
    }
    if (!StatusNamed(status, &c.expected)) {
      *error = where + " (" + c.id + "): \"" + status + "\" names no cuabi_status";
      return false;
    }
    if (c.call.compare(0, 6, "cuabi_") != 0) {
      *error = where + " (" + c.id + "): call \"" + c.call + "\" is not a cuabi function";
      return false;
    }
    cases->push_back(std::move(c));
  }
  return true;
}

std::vector<Case> InGroup(const std::vector<Case>& cases, const std::string& group) {
  std::vector<Case> out;
  for (const Case& c : cases)
    if (c.group == group) out.push_back(c);
  return out;
}

std::vector<std::string> Match(const std::vector<Case>& cases, const Bodies& bodies) {
  std::vector<std::string> problems;
  std::set<std::string> listed;
  for (const Case& c : cases) {
    listed.insert(c.id);
    if (!bodies.Find(c.id)) problems.push_back("case " + c.id + " has no call body");
  }
  for (const std::string& id : bodies.ids())
    if (!listed.count(id)) problems.push_back("the call body " + id + " has no case in the data");
  for (const std::string& id : bodies.duplicates())
    problems.push_back("two call bodies are registered as " + id);
  return problems;
}

CorpusResult RunCorpus(const std::vector<Case>& cases, const Bodies& bodies) {
  CorpusResult result;
  for (const Case& c : cases) {
    ++result.cases;
    const Body* body = bodies.Find(c.id);
    if (!body) {
      result.failures.push_back(c.call + " [" + c.id + "]: no call body is registered for it");
      continue;
    }
    PlantLastError();
    const cuabi_status planted = cuabi_last_error_status();
    CaseContext ctx;
    cuabi_status st;
    try {
      st = (*body)(ctx);
    } catch (...) {
      ctx.Problem("the case threw a C++ exception");
      st = CUABI_ERROR_INTERNAL;
    }
    std::string why;
    auto add = [&why](const std::string& what) { why += (why.empty() ? "" : "; ") + what; };
    if (st != c.expected)
      add("answered " + StatusName(st) + ", expected " + StatusName(c.expected));
    const std::string message = cuabi_last_error_message();
    if (c.expected != CUABI_SUCCESS && st == c.expected) {
      if (!c.records_error) {
        if (cuabi_last_error_status() != planted)
          add("it changed the last-error state, which this call must leave alone");
      } else {
        if (cuabi_last_error_status() != st)
          add("the last error is " + StatusName(cuabi_last_error_status()) +
              ", not the status returned");
        if (!IsUtf8(message)) add("message is not UTF-8");
        if (message.compare(0, c.call.size() + 2, c.call + ": ") != 0)
          add("message does not start with '" + c.call + ": '");
        if (!Contains(message, c.needle)) add("message lacks '" + c.needle + "'");
      }
    }
    if (!ctx.problem.empty()) add(ctx.problem);
    if (why.empty()) {
      ++result.passed;
    } else {
      std::string shown = message.size() > 600 ? message.substr(0, 600) + "..." : message;
      result.failures.push_back(c.call + " [" + c.id + "]: " + why + "\n      message: " + shown);
    }
  }
  std::set<std::string> listed;
  for (const Case& c : cases) listed.insert(c.id);
  for (const std::string& id : bodies.ids())
    if (!listed.count(id)) result.failures.push_back("the call body " + id + " has no case");
  return result;
}

void ReportCorpus(const std::string& label, const CorpusResult& result) {
  std::printf("bad-input corpus (%s): %zu cases, %zu passed\n", label.c_str(), result.cases,
              result.passed);
  for (const std::string& f : result.failures) std::printf("  FAILED %s\n", f.c_str());
  std::fflush(stdout);
}

int ListCorpus(std::FILE* out, const std::string& group) {
  std::vector<Case> cases;
  std::string error;
  if (!LoadCorpus(&cases, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::map<std::string, size_t> per_group;
  size_t shown = 0;
  for (const Case& c : cases) {
    if (!group.empty() && c.group != group) continue;
    ++per_group[c.group];
    ++shown;
    std::fprintf(out, "%s\t%s\t%s\t%s\t%s\n", c.group.c_str(), c.id.c_str(), c.call.c_str(),
                 cuabi_status_get_name(c.expected), c.needle.c_str());
  }
  std::fprintf(out, "%zu cases", shown);
  const char* sep = " (";
  for (const auto& g : per_group) {
    std::fprintf(out, "%s%s: %zu", sep, g.first.c_str(), g.second);
    sep = ", ";
  }
  std::fprintf(out, "%s from %s\n", per_group.empty() ? "" : ")", CorpusPath().c_str());
  return 0;
}

}  // namespace hardening
