// Errors inside the core: thrown as cuabi::Error, caught at the C boundary and
// turned into a status plus the calling thread's last-error state.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "cuabi/cuabi.h"

namespace cuabi {

class Error {
 public:
  Error(cuabi_status status, std::string message, int32_t code = 0)
      : status_(status), code_(code), message_(std::move(message)) {}
  cuabi_status status() const { return status_; }
  int32_t code() const { return code_; }
  const std::string& message() const { return message_; }
  // The NVRTC log of a failed compile, if that is what failed.
  std::string log;

 private:
  cuabi_status status_;
  int32_t code_;
  std::string message_;
};

[[noreturn]] void fail(cuabi_status status, std::string message, int32_t code = 0);
[[noreturn]] void fail_invalid(std::string message);

// The calling thread's last-error state.
struct FaultReport;  // launch_log.hpp
struct LastError {
  cuabi_status status = CUABI_SUCCESS;
  int32_t code = 0;
  std::string message;
  std::string log;
  // A CONTEXT_LOST failure's launches not seen complete (else null).
  std::shared_ptr<const FaultReport> launches;
};
LastError& last_error();
void set_last_error(cuabi_status status, int32_t code, std::string message, std::string log);

const char* status_name(cuabi_status status);
const char* status_description(cuabi_status status);

}  // namespace cuabi
