// Program sources and options through cuabi_program_create and
// cuabi_program_compile, then the options again as typed defines through
// cuabi_program_compile_with (NVRTC is slow: runs of this target are kept few).
// The input is split at NUL bytes into: the source, the file name, a header's
// content and include name, a name expression, and up to six options.
// Every call must give a clean status: create answers SUCCESS or
// INVALID_ARGUMENT; compile answers SUCCESS, COMPILE or INVALID_ARGUMENT;
// failures carry a message naming the call; the log and the outputs obey the
// two-call pattern; with UTF-8 names and options, every message and log is
// UTF-8. Nothing may crash.
#include <cuabi/cuabi.h>

#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

// Fetches through a two-call getter and checks its contract.
std::string TwoCall(cuabi_status (*get)(cuabi_program, char*, size_t*), cuabi_program p,
                    cuabi_status* status, const char* what) {
  size_t n = 0;
  *status = get(p, nullptr, &n);
  if (*status != CUABI_SUCCESS) return "";
  FUZZ_CHECK(n > 0, std::string(what) + ": size 0");
  std::string out(n, '\x7f');
  size_t small = n - 1;
  FUZZ_CHECK(get(p, &out[0], &small) == CUABI_ERROR_INSUFFICIENT_BUFFER && small == n,
             std::string(what) + ": a buffer one byte short was not refused");
  FUZZ_CHECK(out == std::string(n, '\x7f'), std::string(what) + ": a too-small buffer was written");
  size_t exact = n;
  FUZZ_CHECK(get(p, &out[0], &exact) == CUABI_SUCCESS && exact == n,
             std::string(what) + ": an exact buffer was refused");
  FUZZ_CHECK(out[n - 1] == '\0', std::string(what) + ": not NUL-terminated");
  out.resize(n - 1);
  return out;
}

cuabi_status GetCubin(cuabi_program p, char* buf, size_t* size) {
  return cuabi_program_get_cubin(p, buf, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  cuabi_fuzz::Input in(data, size);
  const std::string source = in.cstr(4096);
  const std::string name = in.cstr(64);
  const std::string header = in.cstr(1024);
  const std::string header_name = in.cstr(64);
  const std::string expression = in.cstr(64);
  std::vector<std::string> options;
  while (in.left() > 0 && options.size() < 6) options.push_back(in.cstr(128));

  // With UTF-8 input throughout, every message and log must be UTF-8. (Input
  // that is not UTF-8 must give a clean status; the hardening corpus holds the
  // cases for what the messages then say.)
  bool all_utf8 = cuabi_fuzz::IsUtf8(source) && cuabi_fuzz::IsUtf8(name) &&
                  cuabi_fuzz::IsUtf8(header) && cuabi_fuzz::IsUtf8(header_name) &&
                  cuabi_fuzz::IsUtf8(expression);
  for (const std::string& o : options) all_utf8 = all_utf8 && cuabi_fuzz::IsUtf8(o);

  auto check_message = [&](const char* call, cuabi_status st) {
    const std::string message = cuabi_last_error_message();
    FUZZ_CHECK(cuabi_last_error_status() == st, std::string(call) + ": last error status differs");
    FUZZ_CHECK(message.compare(0, std::strlen(call) + 2, std::string(call) + ": ") == 0,
               std::string("the message does not name ") + call + ": " + message);
    if (all_utf8)
      FUZZ_CHECK(cuabi_fuzz::IsUtf8(message), std::string(call) + ": message is not UTF-8");
  };

  const bool with_header = !header_name.empty();
  const char* hs[] = {header.c_str()};
  const char* hn[] = {header_name.c_str()};
  cuabi_program p = nullptr;
  cuabi_status st = cuabi_program_create(source.c_str(), name.empty() ? nullptr : name.c_str(),
                                         with_header ? 1 : 0, with_header ? hs : nullptr,
                                         with_header ? hn : nullptr, &p);
  if (st != CUABI_SUCCESS) {
    FUZZ_CHECK(st == CUABI_ERROR_INVALID_ARGUMENT,
               std::string("cuabi_program_create answered ") + cuabi_status_get_name(st));
    FUZZ_CHECK(p == nullptr, "out written on failure");
    check_message("cuabi_program_create", st);
    return 0;
  }
  if (!expression.empty()) {
    st = cuabi_program_add_name_expression(p, expression.c_str());
    if (st != CUABI_SUCCESS) {
      FUZZ_CHECK(st == CUABI_ERROR_INVALID_ARGUMENT || st == CUABI_ERROR_NVRTC,
                 std::string("add_name_expression answered ") + cuabi_status_get_name(st));
      check_message("cuabi_program_add_name_expression", st);
    }
  }
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  st = cuabi_program_compile(p, opts.size(), opts.data());
  FUZZ_CHECK(st == CUABI_SUCCESS || st == CUABI_ERROR_COMPILE || st == CUABI_ERROR_INVALID_ARGUMENT,
             std::string("cuabi_program_compile answered ") + cuabi_status_get_name(st) + ": " +
                 cuabi_last_error_message());
  if (st != CUABI_SUCCESS) check_message("cuabi_program_compile", st);

  cuabi_status log_status;
  const std::string log = TwoCall(cuabi_program_get_log, p, &log_status, "log");
  FUZZ_CHECK(log_status == CUABI_SUCCESS, "the log cannot be read");
  if (all_utf8) FUZZ_CHECK(cuabi_fuzz::IsUtf8(log), "the log is not UTF-8");

  cuabi_status ptx_status;
  const std::string ptx = TwoCall(cuabi_program_get_ptx, p, &ptx_status, "ptx");
  if (st == CUABI_SUCCESS) {
    size_t n = 0;
    cuabi_status cubin_status = GetCubin(p, nullptr, &n);
    FUZZ_CHECK(ptx_status == CUABI_SUCCESS || cubin_status == CUABI_SUCCESS,
               "a successful compile has neither PTX nor CUBIN");
  } else {
    FUZZ_CHECK(ptx_status == CUABI_ERROR_NOT_FOUND, "PTX after a failed compile");
  }
  cuabi_program_release(p);
  cuabi_program_release(p);

  // The same strings as typed defines (cuabi_program_compile_with): the core
  // checks each as a macro definition. A refusal is INVALID_ARGUMENT naming
  // the define by its index; whatever it lets through NVRTC answers.
  if (options.empty()) return 0;
  cuabi_program q = nullptr;
  if (cuabi_program_create("", nullptr, 0, nullptr, nullptr, &q) != CUABI_SUCCESS) return 0;
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.arch = "compute_90";
  desc.defines = opts.data();
  desc.num_defines = opts.size();
  st = cuabi_program_compile_with(q, &desc);
  FUZZ_CHECK(st == CUABI_SUCCESS || st == CUABI_ERROR_COMPILE || st == CUABI_ERROR_INVALID_ARGUMENT,
             std::string("cuabi_program_compile_with answered ") + cuabi_status_get_name(st) +
                 ": " + cuabi_last_error_message());
  if (st != CUABI_SUCCESS) check_message("cuabi_program_compile_with", st);
  if (st == CUABI_ERROR_INVALID_ARGUMENT) {
    const std::string message = cuabi_last_error_message();
    FUZZ_CHECK(message.find("desc->defines[") != std::string::npos,
               "a refused define is not named by its index: " + message);
    size_t n = 0;
    FUZZ_CHECK(cuabi_program_get_log(q, nullptr, &n) == CUABI_SUCCESS && n == 1,
               "NVRTC ran although a define was refused");
  }
  cuabi_program_release(q);
  return 0;
}
