#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "objects.hpp"

namespace cuabi {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<Device*> devices;  // weak: an entry is cleared by ~Device
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: objects may outlive exit
  return *r;
}

int attribute(CUdevice device, CUdevice_attribute attr) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, attr, device), "cuDeviceGetAttribute");
  return value;
}

// An attribute an older driver may not know: 0 when it answers an error.
int attribute_or_zero(CUdevice device, CUdevice_attribute attr) {
  int value = 0;
  if (driver().cuDeviceGetAttribute(&value, attr, device) != CUDA_SUCCESS) return 0;
  return value;
}

}  // namespace

int Device::count() {
  const DriverApi& d = driver();
  if (driver_has_no_device()) return 0;
  int n = 0;
  check(d.cuDeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

Ref<Device> Device::get(int ordinal) {
  int n = count();
  if (ordinal < 0 || ordinal >= n)
    fail(CUABI_ERROR_NO_DEVICE, "there is no CUDA device " + std::to_string(ordinal) + " (" +
                                    std::to_string(n) + (n == 1 ? " device" : " devices") +
                                    " found)");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.devices.size() <= static_cast<size_t>(ordinal)) r.devices.resize(ordinal + 1, nullptr);
  Device* existing = r.devices[ordinal];
  if (existing && existing->try_retain()) return Ref<Device>::adopt(existing);
  Ref<Device> device = Ref<Device>::adopt(new Device(ordinal));
  r.devices[ordinal] = device.get();
  return device;
}

Device::Device(int ordinal) : Object(kKind), ordinal(ordinal) {
  const DriverApi& d = driver();
  check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  char buf[256] = {0};
  check(d.cuDeviceGetName(buf, sizeof(buf) - 1, device), "cuDeviceGetName");
  name = buf;
  cc_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  max_block[0] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  max_block[1] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  max_block[2] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  max_grid[0] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  max_grid[1] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  max_grid[2] = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  max_threads_per_block = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  max_shared_optin = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  multiprocessors = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  cooperative_launch = attribute_or_zero(device, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) != 0;
  cluster_launch = attribute_or_zero(device, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 0;
  CUcontext ctx = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
  context_.store(ctx, std::memory_order_release);
}

void Device::stream_priority_range(int* least, int* greatest) const {
  int64_t packed = priority_range_.load(std::memory_order_acquire);
  if (packed == kNoPriorityRange) {
    int l = 0, g = 0;
    check(driver().cuCtxGetStreamPriorityRange(&l, &g), "cuCtxGetStreamPriorityRange");
    packed = int64_t(uint64_t(uint32_t(l)) << 32 | uint32_t(g));
    priority_range_.store(packed, std::memory_order_release);
  }
  *least = int32_t(uint32_t(uint64_t(packed) >> 32));
  *greatest = int32_t(uint32_t(packed));
}

int Device::get_attribute(CUdevice_attribute attr) const { return attribute(device, attr); }

int Device::mem_sync_domain_count() const {
  int count = mem_sync_domains_.load(std::memory_order_acquire);
  if (count < 0) {
    count = get_attribute(CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT);
    mem_sync_domains_.store(count, std::memory_order_release);
  }
  return count;
}

void Device::set_peer_enabled(int peer, bool enabled) {
  std::lock_guard<std::mutex> lock(peer_mutex_);
  auto it = std::find(peers_.begin(), peers_.end(), peer);
  if (enabled && it == peers_.end()) peers_.push_back(peer);
  if (!enabled && it != peers_.end()) peers_.erase(it);
}

bool Device::peer_enabled(int peer) const {
  std::lock_guard<std::mutex> lock(peer_mutex_);
  return std::find(peers_.begin(), peers_.end(), peer) != peers_.end();
}

Device::~Device() {
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (static_cast<size_t>(ordinal) < r.devices.size() && r.devices[ordinal] == this)
      r.devices[ordinal] = nullptr;
  }
  if (!driver_ready()) return;
  try {
    const DriverApi& d = driver();
    d.cuDevicePrimaryCtxRelease(device);
  } catch (...) {
    // After fork or at teardown: leak rather than touch a dead driver.
  }
}

void for_each_device(const std::function<void(const Device&)>& f) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Device* d : r.devices)
    if (d) f(*d);
}

const DriverApi& Device::make_current() const {
  const DriverApi& d = driver();
  if (lost()) fail_lost();
  CUcontext want = context();
  CUcontext current = nullptr;
  d.cuCtxGetCurrent(&current);
  if (current != want) check(d.cuCtxSetCurrent(want), "cuCtxSetCurrent");
  return d;
}

void Device::fail_lost() const {
  fail(CUABI_ERROR_CONTEXT_LOST, "device " + std::to_string(ordinal) +
                                     " hit a sticky fault earlier" + fault_report_text() +
                                     kContextLostAdvice);
}

void Device::fail_stale() const {
  if (lost()) fail_lost();
  fail(CUABI_ERROR_CONTEXT_LOST, "this object belongs to device " + std::to_string(ordinal) +
                                     "'s context from before cuabi_device_reset; recreate it");
}

void Device::reset() {
  const DriverApi& d = driver();
  std::lock_guard<std::mutex> lock(reset_mutex_);
  // Everything made so far becomes stale first, so no destructor frees a
  // resource the reset already destroyed.
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard<std::mutex> peers(peer_mutex_);
    peers_.clear();  // the reset ends peer access from this context
  }
  d.cuCtxSetCurrent(nullptr);  // nothing of the old context stays current here
  check(d.cuDevicePrimaryCtxReset(device), "cuDevicePrimaryCtxReset");
  // A reset keeps our retain. A retain and release pair brings the context
  // back and tells its (possibly new) handle without changing the count.
  // After a sticky fault the retain fails: the driver then refuses the device
  // to this process for good, and check() says so.
  CUcontext ctx = nullptr;
  CUresult r = d.cuDevicePrimaryCtxRetain(&ctx, device);
  if (status_of(r) == CUABI_ERROR_CONTEXT_LOST) lost_.store(true, std::memory_order_release);
  check(r, "cuDevicePrimaryCtxRetain after the reset");
  d.cuDevicePrimaryCtxRelease(device);
  context_.store(ctx, std::memory_order_release);
  check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

bool enter_quietly(const DeviceChild& child) {
  try {
    if (!driver_ready() || !child.alive()) return false;
    child.device->make_current();
    return true;
  } catch (...) {
    return false;
  }
}

CUstream stream_for(const Pin<Stream>& stream, const Device& device) {
  if (!stream) return nullptr;
  if (stream->device.get() != &device)
    fail_invalid("the stream belongs to device " + std::to_string(stream->device->ordinal) +
                 ", the work to device " + std::to_string(device.ordinal));
  device.check_epoch(stream->epoch);
  return stream->stream;
}

}  // namespace cuabi
