// Shims for NVRTC programs.
#include <mutex>

#include "compile_options.hpp"
#include "shim.hpp"
#include "text.hpp"

using namespace cuabi;
using namespace cuabi::abi;

namespace {

// A program's output under its lock, through the two-call pattern; NOT_FOUND
// before a successful compile or when the compile made none (`none` says so).
void copy_output(Program& p, std::string Program::*output, const char* none, void* buf,
                 size_t* size) {
  std::lock_guard<std::mutex> lock(p.mutex);
  need(size, "size");
  if (!p.succeeded) fail(CUABI_ERROR_NOT_FOUND, "the program has not been compiled successfully");
  const std::string& bytes = p.*output;
  if (bytes.empty()) fail(CUABI_ERROR_NOT_FOUND, none);
  copy_out(bytes.data(), bytes.size(), buf, size);
}

}  // namespace

extern "C" {

cuabi_status cuabi_program_create(const char* source, const char* name, size_t num_headers,
                                  const char* const* header_sources,
                                  const char* const* header_names, cuabi_program* out) {
  return create(__func__, out, [&] {
    return make<Program>(source, name, num_headers, header_sources, header_names);
  });
}

void cuabi_program_release(cuabi_program program) { release_handle<Program>(program); }

cuabi_status cuabi_program_add_name_expression(cuabi_program program, const char* expression) {
  return with(__func__, program, "program", [&](Program& p) { p.add_name_expression(expression); });
}

cuabi_status cuabi_program_compile(cuabi_program program, size_t num_options,
                                   const char* const* options) {
  return guard(__func__,
               [&] { acquire<Program>(program, "program")->compile(num_options, options); });
}

cuabi_status cuabi_program_compile_with(cuabi_program program, const cuabi_compile_desc* desc) {
  return guard(__func__,
               [&] { compile_program_with(*acquire<Program>(program, "program"), desc); });
}

cuabi_status cuabi_program_get_log(cuabi_program program, char* buf, size_t* size) {
  return with(__func__, program, "program", [&](Program& p) {
    std::lock_guard<std::mutex> lock(p.mutex);
    copy_string(p.log, buf, size);
  });
}

cuabi_status cuabi_program_get_ptx(cuabi_program program, char* buf, size_t* size) {
  return with(__func__, program, "program", [&](Program& p) {
    copy_output(p, &Program::ptx, "NVRTC made no PTX for this program", buf, size);
  });
}

cuabi_status cuabi_program_get_cubin(cuabi_program program, void* buf, size_t* size) {
  return with(__func__, program, "program", [&](Program& p) {
    copy_output(p, &Program::cubin,
                "the compile made no CUBIN (a compute_XY target makes PTX, use sm_XY; -dlto makes "
                "LTO-IR, see cuabi_program_get_lto_ir)", buf, size);
  });
}

cuabi_status cuabi_program_get_lto_ir(cuabi_program program, void* buf, size_t* size) {
  return with(__func__, program, "program", [&](Program& p) {
    copy_output(p, &Program::lto_ir, "the program was compiled without \"-dlto\": it has no LTO-IR",
                buf, size);
  });
}

cuabi_status cuabi_program_get_lowered_name(cuabi_program program, const char* expression,
                                            char* buf, size_t* size) {
  return with(__func__, program, "program", [&](Program& p) {
    check_name(expression, "expression");
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.lowered.find(expression);
    if (it == p.lowered.end())
      fail(CUABI_ERROR_NOT_FOUND, std::string("no lowered name for '") + expression +
                                      "': add it with cuabi_program_add_name_expression before "
                                      "compiling");
    copy_string(it->second, buf, size);
  });
}

}  // extern "C"
