// Shims for the library itself: versions, status names, the last error,
// loading the driver and NVRTC, the compile cache folder, NVTX annotations.
#include <cstddef>
#include <cstring>

#include "cache.hpp"
#include "driver.hpp"
#include "driver_log.hpp"
#include "health.hpp"
#include "launch_log.hpp"
#include "nvrtc.hpp"
#include "nvtx.hpp"
#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

uint32_t cuabi_version(void) { return CUABI_VERSION_NUMBER; }
const char* cuabi_version_string(void) { return CUABI_VERSION_STRING; }
const char* cuabi_status_get_name(cuabi_status status) { return status_name(status); }
const char* cuabi_status_get_description(cuabi_status status) { return status_description(status); }

/* The last-error readers never touch the state they report. */
const char* cuabi_last_error_message(void) { return last_error().message.c_str(); }
cuabi_status cuabi_last_error_status(void) { return last_error().status; }
int32_t cuabi_last_error_code(void) { return last_error().code; }

cuabi_status cuabi_last_error_log(char* buf, size_t* size) {
  if (!size) return CUABI_ERROR_INVALID_ARGUMENT;
  const std::string& log = last_error().log;
  const size_t n = log.size() + 1;
  if (!buf) {
    *size = n;
    return CUABI_SUCCESS;
  }
  if (*size < n) {
    *size = n;
    return CUABI_ERROR_INSUFFICIENT_BUFFER;
  }
  std::memcpy(buf, log.c_str(), n);
  *size = n;
  return CUABI_SUCCESS;
}

cuabi_status cuabi_launch_record_init(cuabi_launch_record* record, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_launch_record defaults = CUABI_LAUNCH_RECORD_INIT;
    init_struct(record, struct_size, defaults, "record");
  });
}

size_t cuabi_last_error_get_launch_count(void) {
  const FaultReport* r = last_error().launches.get();
  return r ? r->launches.size() : 0;
}

namespace {

// The last error's launch `index`, or null (the readers never touch the
// state they report, so they answer a bare status).
const RecordedLaunch* last_error_launch(size_t index) {
  const FaultReport* r = last_error().launches.get();
  return r && index < r->launches.size() ? &r->launches[index] : nullptr;
}

}  // namespace

cuabi_status cuabi_last_error_get_launch(size_t index, cuabi_launch_record* record) {
  if (!record || record->struct_size < offsetof(cuabi_launch_record, sequence))
    return CUABI_ERROR_INVALID_ARGUMENT;
  const RecordedLaunch* l = last_error_launch(index);
  if (!l) return CUABI_ERROR_OUT_OF_RANGE;
  cuabi_launch_record out = CUABI_LAUNCH_RECORD_INIT;
  const LaunchInfo& i = l->info;
  out.sequence = l->sequence;
  out.stream_id = i.stream_id;
  out.device = i.device;
  out.grid_x = i.grid[0], out.grid_y = i.grid[1], out.grid_z = i.grid[2];
  out.block_x = i.block[0], out.block_y = i.block[1], out.block_z = i.block[2];
  out.shared_mem_bytes = i.shared;
  out.cluster_x = i.cluster[0], out.cluster_y = i.cluster[1], out.cluster_z = i.cluster[2];
  out.named_by_driver_log = l->named_by_log ? 1 : 0;
  // A caller's older, shorter struct gets the fields it has.
  const size_t n = record->struct_size < sizeof(out) ? record->struct_size : sizeof(out);
  const size_t given = record->struct_size;
  std::memcpy(record, &out, n);
  record->struct_size = given;
  return CUABI_SUCCESS;
}

cuabi_status cuabi_last_error_get_launch_kernel(size_t index, char* buf, size_t* size) {
  if (!size) return CUABI_ERROR_INVALID_ARGUMENT;
  const RecordedLaunch* l = last_error_launch(index);
  if (!l) return CUABI_ERROR_OUT_OF_RANGE;
  const size_t n = std::strlen(l->info.kernel) + 1;
  if (!buf) {
    *size = n;
    return CUABI_SUCCESS;
  }
  if (*size < n) {
    *size = n;
    return CUABI_ERROR_INSUFFICIENT_BUFFER;
  }
  std::memcpy(buf, l->info.kernel, n);
  *size = n;
  return CUABI_SUCCESS;
}

void cuabi_last_error_clear(void) {
  try {
    set_last_error(CUABI_SUCCESS, 0, "", "");
  } catch (...) {
  }
}

cuabi_status cuabi_init(void) {
  return guard(__func__, [] { driver(); });
}

cuabi_status cuabi_driver_get_version(int32_t* version) {
  return guard(__func__, [&] {
    need(version, "version");
    driver();
    *version = driver_version();
  });
}

cuabi_status cuabi_driver_get_path(char* buf, size_t* size) {
  return guard(__func__, [&] {
    driver();
    copy_string(driver_path(), buf, size);
  });
}

cuabi_status cuabi_context_lost_get_message(char* buf, size_t* size) {
  return guard(__func__, [&] { copy_string(context_lost_message(), buf, size); });
}

cuabi_status cuabi_set_context_lost_callback(cuabi_context_lost_fn callback, void* user_data) {
  return guard(__func__, [&] { set_context_lost_callback(callback, user_data); });
}

cuabi_status cuabi_driver_log_read(size_t last, char* buf, size_t* size) {
  return guard(__func__, [&] { copy_string(driver_log_lines(last), buf, size); });
}

cuabi_status cuabi_driver_log_dump(const char* path) {
  return guard(__func__, [&] { driver_log_dump(path); });
}

cuabi_status cuabi_nvrtc_get_version(int32_t* major, int32_t* minor) {
  return guard(__func__, [&] {
    need(major, "major");
    need(minor, "minor");
    const NvrtcApi& n = nvrtc();
    *major = n.major;
    *minor = n.minor;
  });
}

cuabi_status cuabi_nvrtc_get_path(char* buf, size_t* size) {
  return guard(__func__, [&] { copy_string(nvrtc().path, buf, size); });
}

cuabi_status cuabi_cache_get_dir(char* buf, size_t* size) {
  return guard(__func__, [&] {
    need(size, "size");
    CacheLocation loc = cache_location();
    need_cache_folder(loc);
    copy_string(loc.dir, buf, size);
  });
}

cuabi_status cuabi_cache_get_state(cuabi_cache_state* state) {
  return guard(__func__, [&] {
    need(state, "state");
    *state = cache_location().state;
  });
}

cuabi_status cuabi_cache_get_usage(uint64_t* entries, uint64_t* bytes) {
  return guard(__func__, [&] {
    need(entries, "entries");
    need(bytes, "bytes");
    CacheUsage usage = read_cache_usage();
    *entries = usage.entries;
    *bytes = usage.bytes;
  });
}

cuabi_status cuabi_cache_clear(uint64_t* entries, uint64_t* bytes) {
  return guard(__func__, [&] {
    need(entries, "entries");
    need(bytes, "bytes");
    CacheUsage removed = clear_cache_folder();
    *entries = removed.entries;
    *bytes = removed.bytes;
  });
}

cuabi_status cuabi_nvtx_range_push(const char* domain, const char* message, uint32_t argb) {
  return guard(__func__, [&] { nvtx_range_push(domain, message, argb); });
}

cuabi_status cuabi_nvtx_range_pop(const char* domain) {
  return guard(__func__, [&] { nvtx_range_pop(domain); });
}

cuabi_status cuabi_nvtx_range_start(const char* domain, const char* message, uint32_t argb,
                                    uint64_t* id) {
  return guard(__func__, [&] {
    need(id, "id");
    *id = nvtx_range_start(domain, message, argb);
  });
}

cuabi_status cuabi_nvtx_range_end(uint64_t id) {
  return guard(__func__, [&] { nvtx_range_end(id); });
}

cuabi_status cuabi_nvtx_mark(const char* domain, const char* message, uint32_t argb) {
  return guard(__func__, [&] { nvtx_mark(domain, message, argb); });
}

}  // extern "C"
