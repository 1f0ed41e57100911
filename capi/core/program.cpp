// NVRTC programs, and the options of a compile description as NVRTC takes them.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "compile_options.hpp"
#include "objects.hpp"
#include "structs.hpp"
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

namespace {

bool ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// `c` as a message shows it: 'x', or its name for a blank or a control byte.
std::string shown(char c) {
  switch (c) {
    case ' ':
      return "a space";
    case '\t':
      return "a tab";
    case '\n':
      return "a line break";
    case '\r':
      return "a carriage return";
    default:
      break;
  }
  unsigned char u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7F) return "the control byte " + std::to_string(u);
  if (u >= 0x80) return "a non-ASCII character";
  return std::string("'") + c + "'";
}

// Reads an identifier at `p`; returns where it ends (`p` when there is none).
const char* identifier(const char* p, const char* end) {
  if (p == end || !ident_start(*p)) return p;
  while (p != end && ident_char(*p)) ++p;
  return p;
}

// "sm_XY", "sm_XYa", "sm_XYf" or "compute_XY(a|f)", two or three digits.
bool is_architecture(const char* s) {
  const char* p;
  if (strncmp(s, "sm_", 3) == 0)
    p = s + 3;
  else if (strncmp(s, "compute_", 8) == 0)
    p = s + 8;
  else
    return false;
  size_t digits = 0;
  while (p[digits] >= '0' && p[digits] <= '9') ++digits;
  if (digits < 2 || digits > 3) return false;
  p += digits;
  if (*p == 'a' || *p == 'f') ++p;
  return *p == '\0';
}

void check_flag(int32_t value, const char* field) {
  if (value != 0 && value != 1)
    fail_invalid(std::string("desc->") + field + " is " + std::to_string(value) +
                 "; expected 0 or 1");
}

// Checks an array field and its count; each entry with `each`.
template <class Each>
void check_list(const char* const* list, size_t count, const char* field, Each each) {
  std::string name = std::string("desc->") + field;
  if (count > (1u << 20))
    fail_invalid(name + ": count " + std::to_string(count) + " is implausibly large");
  if (count > 0 && !list) fail_invalid(name + " is NULL but its count is " + std::to_string(count));
  for (size_t i = 0; i < count; ++i) each(list[i], name + "[" + std::to_string(i) + "]");
}

const char* standard_name(int32_t value) {
  switch (value) {
    case CUABI_STD_CXX03:
      return "c++03";
    case CUABI_STD_CXX11:
      return "c++11";
    case CUABI_STD_CXX14:
      return "c++14";
    case CUABI_STD_CXX17:
      return "c++17";
    case CUABI_STD_CXX20:
      return "c++20";
    default:
      return nullptr;
  }
}

}  // namespace

bool names_architecture(const char* option) {
  for (const char* prefix : {"-arch", "--gpu-architecture", "--gpu-name"})
    if (strncmp(option, prefix, strlen(prefix)) == 0) return true;
  return false;
}

void check_define(const char* define, const std::string& what) {
  check_name(define, what.c_str());
  const char* end = define + strlen(define);
  const char* eq = strchr(define, '=');
  const char* name_end = eq ? eq : end;
  auto refuse = [&](const std::string& why) {
    fail_invalid(what + " \"" + to_utf8(define) + "\" is no macro definition: " + why +
                 " (expected NAME, NAME=VALUE or F(a,b)=VALUE)");
  };
  if (name_end == define) refuse("the macro name before '=' is empty");
  if (!ident_start(*define)) {
    if (*define >= '0' && *define <= '9') refuse("a macro name cannot start with a digit");
    refuse("a macro name starts with a letter or '_', not " + shown(*define));
  }
  const char* p = identifier(define, name_end);
  if (p != name_end && *p == '(') {
    // A function-like macro's parameters: identifiers, the last may be "...".
    std::set<std::string> seen;
    ++p;
    bool first = true;
    for (;;) {
      if (p == name_end) refuse("the parameter list has no ')'");
      if (first && *p == ')') break;
      if (name_end - p >= 3 && strncmp(p, "...", 3) == 0) {
        p += 3;
        if (p == name_end || *p != ')') refuse("\"...\" must be the last parameter");
        break;
      }
      const char* q = identifier(p, name_end);
      if (q == p)
        refuse("a parameter is an identifier or \"...\", and " +
               (p == name_end ? std::string("the list ends") : shown(*p)) + " starts none");
      std::string param(p, q);
      if (!seen.insert(param).second) refuse("the parameter " + param + " appears twice");
      p = q;
      if (p == name_end) refuse("the parameter list has no ')'");
      if (*p == ')') break;
      if (*p != ',') refuse("parameters are separated by ',', not " + shown(*p));
      ++p;
      first = false;
    }
    ++p;  // past ')'
    if (p != name_end) refuse(shown(*p) + " follows the parameter list");
  } else if (p != name_end) {
    if (space(*p)) refuse("a macro name holds no whitespace, and this one has " + shown(*p));
    refuse("a macro name holds letters, digits and '_' only, not " + shown(*p));
  }
  for (const char* v = eq ? eq + 1 : end; v != end; ++v)
    if (*v == '\n' || *v == '\r')
      fail_invalid(what + " \"" + to_utf8(std::string(define, name_end)) +
                   "=...\": a macro's value is one line, and this one has " + shown(*v));
}

CompileOptions compile_options(const cuabi_compile_desc& d) {
  CompileOptions out;
  check_list(d.options, d.num_options, "options", [&](const char* o, const std::string& what) {
    check_name(o, what.c_str());
    if (names_architecture(o)) {
      if (d.arch)
        fail_invalid("desc->arch (\"" + to_utf8(d.arch) + "\") and " + what + " (\"" + to_utf8(o) +
                     "\") both name an architecture; give one");
      out.names_architecture = true;
    }
  });
  if (d.arch) {
    check_name(d.arch, "desc->arch");
    if (!is_architecture(d.arch))
      fail_invalid("desc->arch \"" + to_utf8(d.arch) +
                   "\" is no GPU architecture: expected sm_XY (CUBIN) or compute_XY (PTX), "
                   "two or three digits, optionally followed by a or f (sm_90, sm_90a, "
                   "compute_90), or NULL for the default");
    out.nvrtc.push_back(std::string("--gpu-architecture=") + d.arch);
    out.names_architecture = true;
  }
  if (d.cxx_standard != CUABI_STD_DEFAULT) {
    const char* name = standard_name(d.cxx_standard);
    if (!name)
      fail_invalid("desc->cxx_standard is " + std::to_string(d.cxx_standard) +
                   ", no C++ standard this library knows: expected CUABI_STD_DEFAULT (0), "
                   "CUABI_STD_CXX03 (3), CUABI_STD_CXX11 (11), CUABI_STD_CXX14 (14), "
                   "CUABI_STD_CXX17 (17) or CUABI_STD_CXX20 (20)");
    out.nvrtc.push_back(std::string("--std=") + name);
  }
  check_list(d.defines, d.num_defines, "defines", [&](const char* def, const std::string& what) {
    check_define(def, what);
    out.nvrtc.push_back(std::string("--define-macro=") + def);
  });
  check_list(d.include_paths, d.num_include_paths, "include_paths",
             [&](const char* path, const std::string& what) {
               check_name(path, what.c_str());
               out.nvrtc.push_back(std::string("--include-path=") + path);
             });
  const struct {
    int32_t value;
    const char* field;
    const char* option;
  } flags[] = {{d.fast_math, "fast_math", "--use_fast_math"},
               {d.line_info, "line_info", "--generate-line-info"},
               {d.device_debug, "device_debug", "--device-debug"},
               {d.lto, "lto", "--dlink-time-opt"},
               {d.relocatable, "relocatable", "--relocatable-device-code=true"}};
  for (const auto& f : flags) {
    check_flag(f.value, f.field);
    if (f.value) out.nvrtc.push_back(f.option);
  }
  for (size_t i = 0; i < d.num_options; ++i) out.nvrtc.push_back(d.options[i]);
  return out;
}

void compile_program_with(Program& program, const cuabi_compile_desc* desc) {
  if (!desc) fail_invalid("desc is NULL");
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  read_struct(desc, &d, "desc");
  // The program has these already; a compile description's are for
  // cuabi_module_compile.
  const char* given = d.source                         ? "source"
                      : d.name                         ? "name"
                      : d.num_headers                  ? "num_headers"
                      : d.header_sources               ? "header_sources"
                      : d.header_names                 ? "header_names"
                      : d.num_name_expressions         ? "num_name_expressions"
                      : d.name_expressions             ? "name_expressions"
                      : d.output != CUABI_OUTPUT_CUBIN ? "output"
                      : d.flags                        ? "flags"
                                                       : nullptr;
  if (given)
    fail_invalid(std::string("desc->") + given +
                 " is set, but a program compile takes only options from desc (the program "
                 "has its source, name, headers and name expressions, and never uses the "
                 "cache); leave it at its default");
  CompileOptions options = compile_options(d);
  std::vector<const char*> argv;
  for (const std::string& o : options.nvrtc) argv.push_back(o.c_str());
  program.compile(argv.size(), argv.data());
}

}  // namespace cuabi
