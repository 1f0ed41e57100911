// Shims for devices.
#include <utility>

#include "coredump.hpp"
#include "health.hpp"
#include "limits.hpp"
#include "nvtx.hpp"
#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_device_get_count(int32_t* count) {
  return guard(__func__, [&] {
    need(count, "count");
    *count = Device::count();
  });
}

cuabi_status cuabi_device_get(int32_t ordinal, cuabi_device* out) {
  return create(__func__, out, [&] { return Device::get(ordinal); });
}

void cuabi_device_release(cuabi_device device) { release_handle<Device>(device); }

cuabi_status cuabi_device_get_ordinal(cuabi_device device, int32_t* ordinal) {
  return get(__func__, device, "device", ordinal, "ordinal", &Device::ordinal);
}

cuabi_status cuabi_device_get_name(cuabi_device device, char* buf, size_t* size) {
  return get_string(__func__, device, "device", buf, size, &Device::name);
}

cuabi_status cuabi_device_get_compute_capability(cuabi_device device, int32_t* major,
                                                 int32_t* minor) {
  return get(__func__, device, "device", major, "major", minor, "minor",
             [](const Device& d) { return std::make_pair(d.cc_major, d.cc_minor); });
}

cuabi_status cuabi_device_get_total_memory(cuabi_device device, size_t* bytes) {
  return get(__func__, device, "device", bytes, "bytes", [](const Device& d) {
    size_t total = 0;
    check(driver().cuDeviceTotalMem(&total, d.device), "cuDeviceTotalMem");
    return total;
  });
}

cuabi_status cuabi_device_get_memory_info(cuabi_device device, size_t* free_bytes,
                                          size_t* total_bytes) {
  return get(__func__, device, "device", free_bytes, "free_bytes", total_bytes, "total_bytes",
             [](const Device& d) {
               d.make_current();
               size_t f = 0, t = 0;
               check(driver().cuMemGetInfo(&f, &t), "cuMemGetInfo");
               return std::make_pair(f, t);
             });
}

cuabi_status cuabi_device_get_limit(cuabi_device device, cuabi_limit limit, size_t* value) {
  return get(__func__, device, "device", value, "value",
             [&](const Device& d) { return get_limit(d, limit); });
}

cuabi_status cuabi_device_set_limit(cuabi_device device, cuabi_limit limit, size_t value) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    set_limit(*d.get(), limit, value);
  });
}

cuabi_status cuabi_device_reset_persisting_l2(cuabi_device device) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    reset_persisting_l2(*d.get());
  });
}

cuabi_status cuabi_device_set_coredump(cuabi_device device, int32_t enable, const char* path,
                                       cuabi_coredump_flags flags) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    set_coredump(d.get(), enable, path, flags);
  });
}

cuabi_status cuabi_coredump_set(int32_t enable, const char* path, cuabi_coredump_flags flags) {
  return guard(__func__, [&] { set_coredump(nullptr, enable, path, flags); });
}

cuabi_status cuabi_device_get_health(cuabi_device device, cuabi_health* health) {
  return get(__func__, device, "device", health, "health",
             [](const Device&) { return cuabi::health(); });
}

cuabi_status cuabi_device_profiler_start(cuabi_device device) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    profiler_start(*d.get());
  });
}

cuabi_status cuabi_device_profiler_stop(cuabi_device device) {
  return guard(__func__, [&] {
    Pin<Device> d(device, "device");
    profiler_stop(*d.get());
  });
}

cuabi_status cuabi_device_get_attribute(cuabi_device device, int32_t cu_attribute, int32_t* value) {
  return get(__func__, device, "device", value, "value", [&](const Device& d) {
    int v = 0;
    CUresult r =
        driver().cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(cu_attribute), d.device);
    if (r == CUDA_ERROR_INVALID_VALUE)
      fail_invalid("cu_attribute " + std::to_string(cu_attribute) +
                   " is not a CUdevice_attribute this driver knows");
    check(r, "cuDeviceGetAttribute");
    return v;
  });
}

cuabi_status cuabi_device_get_context(cuabi_device device, uint64_t* cu_context) {
  return get(__func__, device, "device", cu_context, "cu_context",
             [](const Device& d) { return reinterpret_cast<uint64_t>(d.context()); });
}

cuabi_status cuabi_device_synchronize(cuabi_device device) {
  return wait(__func__, device, "device",
              [](Device& d) {
                const uint64_t tick = launch_tick();
                check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
                d.launches.mark_seen(tick);
              });
}

cuabi_status cuabi_device_get_stream_priority_range(cuabi_device device, int32_t* least,
                                                    int32_t* greatest) {
  return get(__func__, device, "device", least, "least", greatest, "greatest", [](const Device& d) {
    d.make_current();
    int l = 0, g = 0;
    d.stream_priority_range(&l, &g);
    return std::make_pair(l, g);
  });
}

cuabi_status cuabi_device_reset(cuabi_device device) {
  return guard(__func__, [&] { acquire<Device>(device, "device")->reset(); });
}

}  // extern "C"
