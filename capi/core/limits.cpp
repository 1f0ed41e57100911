// A device's primary-context limits (cuCtxGetLimit / cuCtxSetLimit). The
// persisting-L2 size is checked against the device's maximum here: the
// driver answers a bare CUDA_ERROR_INVALID_VALUE for it.
#include "limits.hpp"

#include <string>

namespace cuabi {

namespace {

struct LimitInfo {
  CUlimit cu;
  const char* name;
};

LimitInfo info_of(cuabi_limit limit) {
  switch (limit) {
    case CUABI_LIMIT_STACK_SIZE:
      return {CU_LIMIT_STACK_SIZE, "CUABI_LIMIT_STACK_SIZE"};
    case CUABI_LIMIT_PRINTF_FIFO_SIZE:
      return {CU_LIMIT_PRINTF_FIFO_SIZE, "CUABI_LIMIT_PRINTF_FIFO_SIZE"};
    case CUABI_LIMIT_MALLOC_HEAP_SIZE:
      return {CU_LIMIT_MALLOC_HEAP_SIZE, "CUABI_LIMIT_MALLOC_HEAP_SIZE"};
    case CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE:
      return {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, "CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE"};
    default:
      break;
  }
  fail_invalid("limit is " + std::to_string(static_cast<int32_t>(limit)) +
               ", not one of CUABI_LIMIT_STACK_SIZE (0), CUABI_LIMIT_PRINTF_FIFO_SIZE (1), "
               "CUABI_LIMIT_MALLOC_HEAP_SIZE (2), CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE (3)");
}

}  // namespace

size_t get_limit(const Device& device, cuabi_limit limit) {
  const LimitInfo li = info_of(limit);
  const DriverApi& d = device.make_current();
  size_t value = 0;
  check(d.cuCtxGetLimit(&value, li.cu), "cuCtxGetLimit");
  return value;
}

void set_limit(const Device& device, cuabi_limit limit, size_t value) {
  const LimitInfo li = info_of(limit);
  const DriverApi& d = device.make_current();
  if (limit == CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE) {
    const int max = device.get_attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    if (value > static_cast<size_t>(max < 0 ? 0 : max))
      fail_invalid(std::string(li.name) + " of " + std::to_string(value) +
                   " bytes is past device " + std::to_string(device.ordinal) + "'s maximum of " +
                   std::to_string(max) +
                   " bytes (CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)");
  }
  const CUresult r = d.cuCtxSetLimit(li.cu, value);
  if (r != CUDA_SUCCESS) {
    std::string what = std::string("cuCtxSetLimit (") + li.name + ", " +
                       std::to_string(value) + " bytes, device " +
                       std::to_string(device.ordinal);
    // The driver's bare refusal of a FIFO or heap size once the context has
    // run a kernel that uses printf or malloc, said in words.
    if (r == CUDA_ERROR_INVALID_VALUE && limit == CUABI_LIMIT_PRINTF_FIFO_SIZE)
      what += "; the driver takes a printf FIFO size only before the first kernel that uses "
              "printf runs on the context";
    else if (r == CUDA_ERROR_INVALID_VALUE && limit == CUABI_LIMIT_MALLOC_HEAP_SIZE)
      what += "; the driver takes a malloc heap size only before the first kernel that uses "
              "malloc runs on the context";
    what += ")";
    check_failed(r, what.c_str());
  }
}

void reset_persisting_l2(const Device& device) {
  const DriverApi& d = device.make_current();
  check(d.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache");
}

}  // namespace cuabi
