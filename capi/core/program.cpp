// NVRTC programs.
#include <string>
#include <vector>

#include "objects.hpp"
#include "text.hpp"

namespace cuabi {

Program::Program(const char* source, const char* name, size_t num_headers,
                 const char* const* sources, const char* const* names)
    : Object(kKind) {
  if (!source) fail_invalid("source is NULL");
  if (name) check_name(name, "name");
  if (num_headers > (1u << 20))
    fail_invalid("num_headers is " + std::to_string(num_headers) + ", implausibly large");
  if (num_headers > 0 && (!sources || !names))
    fail_invalid("num_headers is " + std::to_string(num_headers) +
                 " but header_sources or header_names is NULL");
  for (size_t i = 0; i < num_headers; ++i) {
    if (!sources[i]) fail_invalid("header_sources[" + std::to_string(i) + "] is NULL");
    check_name(names[i], ("header_names[" + std::to_string(i) + "]").c_str());
  }
  const NvrtcApi& n = nvrtc();
  check_nvrtc(n.nvrtcCreateProgram(&program, source, name ? name : "cuabi_program.cu",
                                   static_cast<int>(num_headers), sources, names),
              "nvrtcCreateProgram");
}

Program::~Program() {
  if (program) nvrtc().nvrtcDestroyProgram(&program);
}

void Program::add_name_expression(const char* expression) {
  check_name(expression, "expression");
  std::lock_guard<std::mutex> lock(mutex);
  if (compiled) fail_invalid("name expressions must be added before the program is compiled");
  check_nvrtc(nvrtc().nvrtcAddNameExpression(program, expression), "nvrtcAddNameExpression");
  expressions.emplace_back(expression);
}

namespace {

// Fetches one of NVRTC's outputs; "" when the compile made none (NVRTC
// answers success with size 0 then). A failing call is a failure of the
// compile, named, never taken for "none".
template <class SizeFn, class GetFn>
std::string output(SizeFn size_fn, GetFn get_fn, nvrtcProgram program, const char* size_name,
                   const char* get_name) {
  size_t size = 0;
  check_nvrtc(size_fn(program, &size), size_name);
  if (size == 0) return "";
  std::string out(size, '\0');
  check_nvrtc(get_fn(program, &out[0]), get_name);
  // An empty PTX (a -dlto compile makes none) is its NUL alone.
  if (out.find_first_not_of('\0') == std::string::npos) return "";
  return out;
}

}  // namespace

void Program::compile(size_t num_options, const char* const* options) {
  if (num_options > (1u << 20))
    fail_invalid("num_options is " + std::to_string(num_options) + ", implausibly large");
  if (num_options > 0 && !options)
    fail_invalid("num_options is " + std::to_string(num_options) + " but options is NULL");
  for (size_t i = 0; i < num_options; ++i)
    check_name(options[i], ("options[" + std::to_string(i) + "]").c_str());
  const NvrtcApi& n = nvrtc();
  std::lock_guard<std::mutex> lock(mutex);
  if (compiled) fail_invalid("the program was already compiled; create a new one to compile again");
  compiled = true;
  nvrtcResult r = n.nvrtcCompileProgram(program, static_cast<int>(num_options), options);
  size_t log_size = 0;
  log.clear();
  if (n.nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string buf(log_size, '\0');
    if (n.nvrtcGetProgramLog(program, &buf[0]) == NVRTC_SUCCESS) log = to_utf8(buf.c_str());
  }
  if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
    std::string given;
    for (size_t i = 0; i < num_options; ++i) given += std::string(i ? " " : "") + options[i];
    std::string why = r == NVRTC_ERROR_INVALID_OPTION
                          ? "NVRTC rejected the options (" + given + ")"
                          : "NVRTC could not compile the source";
    Error e(CUABI_ERROR_COMPILE, why + (log.empty() ? std::string() : ":\n" + log), r);
    e.log = log;
    throw e;
  }
  check_nvrtc(r, "nvrtcCompileProgram");
  // The outputs: a call that fails fails the compile (succeeded stays false).
  ptx = output(n.nvrtcGetPTXSize, n.nvrtcGetPTX, program, "nvrtcGetPTXSize", "nvrtcGetPTX");
  cubin =
      output(n.nvrtcGetCUBINSize, n.nvrtcGetCUBIN, program, "nvrtcGetCUBINSize", "nvrtcGetCUBIN");
  if (n.nvrtcGetLTOIRSize && n.nvrtcGetLTOIR)
    lto_ir =
        output(n.nvrtcGetLTOIRSize, n.nvrtcGetLTOIR, program, "nvrtcGetLTOIRSize", "nvrtcGetLTOIR");
  for (const std::string& e : expressions) {
    const char* name = nullptr;
    check_nvrtc(n.nvrtcGetLoweredName(program, e.c_str(), &name), "nvrtcGetLoweredName");
    if (name) lowered[e] = name;
  }
  succeeded = true;
}

}  // namespace cuabi
