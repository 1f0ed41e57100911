#include "error.hpp"

#include "text.hpp"

namespace cuabi {

void fail(cuabi_status status, std::string message, int32_t code) {
  throw Error(status, std::move(message), code);
}

void fail_invalid(std::string message) { fail(CUABI_ERROR_INVALID_ARGUMENT, std::move(message)); }

LastError& last_error() {
  thread_local LastError state;
  return state;
}

void set_last_error(cuabi_status status, int32_t code, std::string message, std::string log) {
  LastError& e = last_error();
  e.status = status;
  e.code = code;
  e.message = to_utf8(message);
  e.log = to_utf8(log);
  e.launches.reset();
}

namespace {
struct StatusText {
  const char* name;
  const char* description;
};

// The names and descriptions come from the header's comments: scripts/regen
// writes them to capi/status_text.inc.
const StatusText kStatusText[CUABI_STATUS_COUNT] = {
#include "../status_text.inc"
};
}  // namespace

const char* status_name(cuabi_status status) {
  if (status < 0 || status >= CUABI_STATUS_COUNT) return "CUABI_ERROR_UNKNOWN";
  return kStatusText[status].name;
}

const char* status_description(cuabi_status status) {
  if (status < 0 || status >= CUABI_STATUS_COUNT) return "A status this version of cuabi does not define.";
  return kStatusText[status].description;
}

}  // namespace cuabi
