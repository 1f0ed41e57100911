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
}

namespace {
struct StatusText {
  const char* name;
  const char* description;
};

const StatusText kStatusText[CUABI_STATUS_COUNT] = {
    {"CUABI_SUCCESS", "The call succeeded."},
    {"CUABI_ERROR_INVALID_ARGUMENT", "An argument is out of its domain."},
    {"CUABI_ERROR_INVALID_HANDLE", "A handle is NULL, released, stale or of the wrong kind."},
    {"CUABI_ERROR_OUT_OF_MEMORY", "Host or device memory could not be allocated."},
    {"CUABI_ERROR_INSUFFICIENT_BUFFER",
     "The caller's buffer is too small; the size needed was stored."},
    {"CUABI_ERROR_OUT_OF_RANGE", "An offset, length or index reaches past the end."},
    {"CUABI_ERROR_NOT_FOUND", "The named kernel, global or expression does not exist."},
    {"CUABI_ERROR_NOT_SUPPORTED", "The installed driver or NVRTC lacks what this call needs."},
    {"CUABI_ERROR_NOT_READY", "Work is still in flight."},
    {"CUABI_ERROR_DRIVER_NOT_FOUND", "The CUDA driver library (libcuda.so.1) could not be loaded."},
    {"CUABI_ERROR_STUB_DRIVER",
     "The loaded libcuda is the CUDA toolkit's stub library, which cannot run anything."},
    {"CUABI_ERROR_NO_DEVICE", "There is no CUDA device with that ordinal."},
    {"CUABI_ERROR_NVRTC_NOT_FOUND", "The NVRTC library (libnvrtc.so) could not be loaded."},
    {"CUABI_ERROR_COMPILE", "NVRTC rejected the source or the options; see the compile log."},
    {"CUABI_ERROR_CONTEXT_LOST",
     "The device context hit a sticky fault; reset the device and recreate its objects."},
    {"CUABI_ERROR_FORKED", "The process forked after CUDA was initialised; CUDA cannot be used."},
    {"CUABI_ERROR_CUDA", "The CUDA driver reported an error."},
    {"CUABI_ERROR_NVRTC", "NVRTC reported an error."},
    {"CUABI_ERROR_IO", "A file could not be read or written."},
    {"CUABI_ERROR_INTERNAL", "An internal error in cuabi."},
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
