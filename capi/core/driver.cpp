#include "driver.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include <mutex>
#include <string>

#include "dl.hpp"
#include "driver_log.hpp"
#include "fork_guard.hpp"
#include "launch_log.hpp"

namespace cuabi {

thread_local const char* t_missing_entry_point = nullptr;

const char* const kContextLostAdvice =
    "; the driver now fails every later CUDA call of this process, on every device, and the "
    "only recovery it documents is to end the process and start a new one";

namespace {

enum EntryIndex {
#define CUABI_INDEX(name, version) kIndex_##name,
  CUABI_DRIVER_ENTRY_POINTS(CUABI_INDEX)
#undef CUABI_INDEX
      kEntryCount
};

const char* const kEntryNames[kEntryCount] = {
#define CUABI_NAME(name, version) #name,
    CUABI_DRIVER_ENTRY_POINTS(CUABI_NAME)
#undef CUABI_NAME
};

// A stand-in for an entry point the driver lacks: it names itself and answers
// CUDA_ERROR_NOT_SUPPORTED, which check() turns into CUABI_ERROR_NOT_SUPPORTED.
template <int Index, typename F>
struct Missing;
template <int Index, typename... A>
struct Missing<Index, CUresult(CUDAAPI*)(A...)> {
  static CUresult CUDAAPI call(A...) {
    t_missing_entry_point = kEntryNames[Index];
    return CUDA_ERROR_NOT_SUPPORTED;
  }
};

typedef CUresult(CUDAAPI* GetProcAddressV2)(const char*, void**, int, cuuint64_t,
                                            CUdriverProcAddressQueryResult*);
typedef CUresult(CUDAAPI* GetProcAddressV1)(const char*, void**, int, cuuint64_t);

struct DriverState {
  std::once_flag once;
  DriverApi api;
  cuabi_status status = CUABI_SUCCESS;
  int32_t code = 0;
  std::string message;
  std::string path;
  int version = 0;
  bool no_device = false;
  std::atomic<bool> ready{false};
};

DriverState& state() {
  static DriverState* s = new DriverState();  // never destroyed: used until exit
  return *s;
}

void* open_driver(std::string& path, std::string& tried) {
  auto attempt = [&](const std::string& candidate) -> void* {
    dlerror();
    void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      path = loaded_path(h, candidate);
      return h;
    }
    tried += "\n  " + candidate + ": " + load_failure(candidate);
    return nullptr;
  };
  const char* env = getenv("CUABI_DRIVER_PATH");
  if (env && env[0]) return attempt(env);  // an explicit choice is the only one tried
  const char* candidates[] = {
      "libcuda.so.1",
      "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
      "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
      "/usr/lib64/libcuda.so.1",
      "/usr/local/nvidia/lib64/libcuda.so.1",
      "/usr/lib/wsl/lib/libcuda.so.1",
  };
  for (const char* c : candidates)
    if (void* h = attempt(c)) return h;
  return nullptr;
}

void load_driver(DriverState& s) {
  std::string tried;
  void* lib = open_driver(s.path, tried);
  if (!lib) {
    s.status = CUABI_ERROR_DRIVER_NOT_FOUND;
    s.message = "the CUDA driver library could not be loaded (set CUABI_DRIVER_PATH to its path). "
                "Tried:" + tried;
    return;
  }
  auto v2 = reinterpret_cast<GetProcAddressV2>(dlsym(lib, "cuGetProcAddress_v2"));
  auto v1 = reinterpret_cast<GetProcAddressV1>(dlsym(lib, "cuGetProcAddress"));
  if (!v2 && !v1) {
    s.status = CUABI_ERROR_NOT_SUPPORTED;
    s.message = s.path + " has no cuGetProcAddress: the driver is older than CUDA 11.3";
    return;
  }
  auto lookup = [&](const char* name, int version, void** out) -> CUresult {
    *out = nullptr;
    if (v2) {
      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
      CUresult r = v2(name, out, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
      if (r == CUDA_SUCCESS && found != CU_GET_PROC_ADDRESS_SUCCESS) *out = nullptr;
      return r;
    }
    return v1(name, out, version, CU_GET_PROC_ADDRESS_DEFAULT);
  };
  CUresult first = CUDA_SUCCESS;
#define CUABI_LOAD(name, version)                                                   \
  {                                                                                 \
    void* p = nullptr;                                                              \
    CUresult r = lookup(#name, version, &p);                                        \
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_FOUND && first == CUDA_SUCCESS)    \
      first = r;                                                                    \
    s.api.name = p ? reinterpret_cast<PFN_##name##_v##version>(p)                   \
                   : &Missing<kIndex_##name, PFN_##name##_v##version>::call;        \
  }
  CUABI_DRIVER_ENTRY_POINTS(CUABI_LOAD)
#undef CUABI_LOAD
  if (first == CUDA_ERROR_STUB_LIBRARY) {
    s.status = CUABI_ERROR_STUB_DRIVER;
    s.code = first;
    s.message = s.path +
                " is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY): it lets programs "
                "link but cannot run anything. Install the NVIDIA driver, or make its libcuda.so.1 "
                "visible to the dynamic loader instead of the stub";
    return;
  }
  CUresult init = s.api.cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    s.status = CUABI_ERROR_STUB_DRIVER;
    s.code = init;
    s.message = s.path + " is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY): "
                         "install the NVIDIA driver or put its libcuda.so.1 first on the path";
    return;
  }
  if (init == CUDA_ERROR_NO_DEVICE) {
    s.no_device = true;
  } else if (init != CUDA_SUCCESS) {
    s.status = status_of(init);
    s.code = init;
    s.message = "cuInit failed: " + describe(init) + " (driver " + s.path + ")";
    return;
  }
  int version = 0;
  if (s.api.cuDriverGetVersion(&version) == CUDA_SUCCESS) s.version = version;
  driver_log_start(s.api);
  fork_guard_arm();
  s.ready.store(true, std::memory_order_release);
  detail::g_driver.store(&s.api, std::memory_order_release);
}

}  // namespace

namespace detail {
std::atomic<const DriverApi*> g_driver{nullptr};
}  // namespace detail

const DriverApi& detail::driver_slow() {
  DriverState& s = state();
  if (s.ready.load(std::memory_order_acquire)) {
    if (fork_guard_tripped())
      fail(CUABI_ERROR_FORKED,
           "this process was forked after CUDA was initialised; CUDA cannot be used in the child "
           "(initialise cuabi in the child instead, or use a spawn start method)");
    return s.api;
  }
  std::call_once(s.once, [&] { load_driver(s); });
  if (!s.ready.load(std::memory_order_acquire)) fail(s.status, s.message, s.code);
  return s.api;
}

bool driver_ready() { return state().ready.load(std::memory_order_acquire); }
bool driver_has_no_device() { return state().no_device; }
const std::string& driver_path() { return state().path; }
int driver_version() { return state().version; }

std::string describe(CUresult result) {
  const DriverState& s = state();
  const char* name = nullptr;
  const char* text = nullptr;
  if (s.api.cuGetErrorName) s.api.cuGetErrorName(result, &name);
  if (s.api.cuGetErrorString) s.api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

cuabi_status status_of(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS:
      return CUABI_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      return CUABI_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return CUABI_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_NOT_READY:
      return CUABI_ERROR_NOT_READY;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
      return CUABI_ERROR_NO_DEVICE;
    case CUDA_ERROR_NOT_FOUND:
      return CUABI_ERROR_NOT_FOUND;
    case CUDA_ERROR_NOT_SUPPORTED:
      return CUABI_ERROR_NOT_SUPPORTED;
    case CUDA_ERROR_STUB_LIBRARY:
      return CUABI_ERROR_STUB_DRIVER;
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return CUABI_ERROR_CONTEXT_LOST;
    default:
      return CUABI_ERROR_CUDA;
  }
}

void check_failed(CUresult result, const char* what) {
  if (result == CUDA_ERROR_NOT_SUPPORTED && t_missing_entry_point) {
    const char* missing = t_missing_entry_point;
    t_missing_entry_point = nullptr;
    fail(CUABI_ERROR_NOT_SUPPORTED, std::string("the installed driver (") + state().path +
                                        ", CUDA " + std::to_string(state().version) +
                                        ") does not provide " + missing);
  }
  cuabi_status status = status_of(result);
  std::string message = std::string(what) + " failed: " + describe(result);
  const std::string logged = driver_log_of_failure();
  message += logged;
  if (status == CUABI_ERROR_CONTEXT_LOST) {
    // The first sticky fault fixes the report; every later one repeats it.
    std::shared_ptr<const FaultReport> report = fault_report(logged);
    if (report) message += report->text;
    message += kContextLostAdvice;
  }
  fail(status, std::move(message), static_cast<int32_t>(result));
}

}  // namespace cuabi
