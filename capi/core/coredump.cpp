// Device core dumps: enable on exception, the file, the generation flags.
// Each value is handed over at the size the driver asks for (it answers the
// size of an attribute when given no value): a bool, an int, a string.
#include "coredump.hpp"

#include <cstdio>
#include <sys/stat.h>

#include <cstring>
#include <string>
#include <vector>

namespace cuabi {

namespace {

constexpr uint32_t kKnownFlags = CUABI_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES |
                                 CUABI_COREDUMP_SKIP_GLOBAL_MEMORY |
                                 CUABI_COREDUMP_SKIP_SHARED_MEMORY |
                                 CUABI_COREDUMP_SKIP_LOCAL_MEMORY | CUABI_COREDUMP_SKIP_ABORT |
                                 CUABI_COREDUMP_SKIP_CONSTBANK_MEMORY;

const char* name_of(CUcoredumpSettings a) {
  switch (a) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION:
      return "CU_COREDUMP_ENABLE_ON_EXCEPTION";
    case CU_COREDUMP_FILE:
      return "CU_COREDUMP_FILE";
    case CU_COREDUMP_GENERATION_FLAGS:
      return "CU_COREDUMP_GENERATION_FLAGS";
    default:
      return "a coredump attribute";
  }
}

// Sets `a` to the `n` bytes at `value`, padded with zeros to the size the
// driver expects (a string: its bytes and the NUL).
void set(const DriverApi& d, bool global, CUcoredumpSettings a, const void* value, size_t n,
         bool is_string) {
  auto call = global ? d.cuCoredumpSetAttributeGlobal : d.cuCoredumpSetAttribute;
  const char* fn = global ? "cuCoredumpSetAttributeGlobal" : "cuCoredumpSetAttribute";
  size_t size = 0;
  if (!is_string) {
    check(call(a, nullptr, &size), fn);
    if (size < n && size != 0) n = size;  // a smaller bool or int: the low bytes
  }
  std::vector<unsigned char> buf(is_string ? n : (size ? size : n), 0);
  std::memcpy(buf.data(), value, n);
  size = buf.size();
  const CUresult r = call(a, buf.data(), &size);
  if (r != CUDA_SUCCESS) check_failed(r, (std::string(fn) + " (" + name_of(a) + ")").c_str());
}

// The driver writes device core dumps through its debugger library,
// installed beside libcuda.so.1. Without it, a driver asked for dumps was
// seen (CUDA 13.0, driver 580) to report no fault at all and crash the
// process at exit: refused here instead.
std::string debugger_library() {
  const std::string& driver_file = driver_path();
  std::vector<std::string> dirs;
  const size_t slash = driver_file.rfind('/');
  if (slash != std::string::npos) dirs.push_back(driver_file.substr(0, slash));
  for (const char* d : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                        "/usr/lib", "/usr/local/nvidia/lib64"})
    dirs.push_back(d);
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/libcudadebugger.so.1";
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0) return candidate;
  }
  return "";
}

}  // namespace

void set_coredump(const Device* device, int32_t enable, const char* path,
                  cuabi_coredump_flags flags) {
  if (flags & ~kKnownFlags) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", static_cast<unsigned>(flags));
    fail_invalid(std::string("flags 0x") + hex + " hold bits that are no cuabi_coredump_flag_bits");
  }
  if (path && std::strlen(path) >= 1024)
    fail_invalid("path is " + std::to_string(std::strlen(path)) +
                 " bytes long; the driver takes at most 1023");
  const DriverApi& d = device ? device->make_current() : driver();
  const bool global = device == nullptr;
  const bool on = enable != 0;
  if (on && debugger_library().empty())
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "device core dumps need the driver's debugger library, libcudadebugger.so.1, which is "
         "not installed beside " + driver_path() + " (it comes with the NVIDIA driver package)");
  if (path) set(d, global, CU_COREDUMP_FILE, path, std::strlen(path) + 1, true);
  const int generation = static_cast<int>(flags);
  set(d, global, CU_COREDUMP_GENERATION_FLAGS, &generation, sizeof generation, false);
  set(d, global, CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, sizeof on, false);
}

}  // namespace cuabi
