// The failure paths of the shims' guard (shim.hpp), kept out of line so
// that a successful call carries none of their code.
#include "health.hpp"
#include "launch_log.hpp"
#include "shim.hpp"

namespace cuabi::abi {

namespace {

cuabi_status record(const char* fn, cuabi_status status, int32_t code, const std::string& message,
                    const std::string& log) noexcept {
  try {
    set_last_error(status, code, std::string(fn) + ": " + message, log);
  } catch (...) {
  }
  return status;
}

}  // namespace

cuabi_status failed(const char* fn, const Error& e) noexcept {
  const cuabi_status status = record(fn, e.status(), e.code(), e.message(), e.log);
  if (status == CUABI_ERROR_CONTEXT_LOST) {
    last_error().launches = fault_report_if_made();
    try {
      note_context_lost(std::string(fn) + ": " + e.message());
    } catch (...) {
    }
  }
  return status;
}

cuabi_status failed(const char* fn, cuabi_status status, const char* message) noexcept {
  return record(fn, status, 0, message ? message : "", "");
}

}  // namespace cuabi::abi
