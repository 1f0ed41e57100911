// A stream's attributes. What the driver would refuse with a bare
// CUDA_ERROR_INVALID_VALUE is checked here first, with the bound in the
// message: unknown policies, domains and properties, a priority outside the
// device's range, a window past the device's maximum or a hit ratio outside
// [0, 1].
#include "stream_attributes.hpp"

#include <cmath>
#include <string>

#include "structs.hpp"

namespace cuabi {

namespace {

CUstreamAttrValue get(const Stream& s, CUstreamAttrID id, const char* what) {
  const DriverApi& d = s.enter();
  CUstreamAttrValue v{};
  const std::string call = std::string("cuStreamGetAttribute (") + what + ")";
  const CUresult r = d.cuStreamGetAttribute(s.stream, id, &v);
  if (r != CUDA_SUCCESS) check_failed(r, call.c_str());
  return v;
}

void set(const Stream& s, CUstreamAttrID id, const CUstreamAttrValue& v, const char* what) {
  const DriverApi& d = s.enter();
  const std::string call = std::string("cuStreamSetAttribute (") + what + ")";
  const CUresult r = d.cuStreamSetAttribute(s.stream, id, &v);
  if (r != CUDA_SUCCESS) check_failed(r, call.c_str());
}

void check_property(int32_t p, const char* field) {
  if (p < CUABI_ACCESS_PROPERTY_NORMAL || p > CUABI_ACCESS_PROPERTY_PERSISTING)
    fail_invalid(std::string(field) + " is " + std::to_string(p) +
                 ", not one of CUABI_ACCESS_PROPERTY_NORMAL (0), _STREAMING (1), _PERSISTING (2)");
}

}  // namespace

cuabi_sync_policy get_sync_policy(const Stream& stream) {
  return static_cast<cuabi_sync_policy>(
      get(stream, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, "synchronization policy").syncPolicy);
}

void set_sync_policy(const Stream& stream, int32_t policy) {
  if (policy < CUABI_SYNC_POLICY_AUTO || policy > CUABI_SYNC_POLICY_BLOCKING_SYNC)
    fail_invalid("policy is " + std::to_string(policy) +
                 ", not one of CUABI_SYNC_POLICY_AUTO (1), _SPIN (2), _YIELD (3), "
                 "_BLOCKING_SYNC (4)");
  CUstreamAttrValue v{};
  v.syncPolicy = static_cast<CUsynchronizationPolicy>(policy);
  set(stream, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, v, "synchronization policy");
}

int32_t get_priority(const Stream& stream) {
  return get(stream, CU_STREAM_ATTRIBUTE_PRIORITY, "priority").priority;
}

void set_priority(const Stream& stream, int32_t priority) {
  int least = 0, greatest = 0;
  stream.device->make_current();
  stream.device->stream_priority_range(&least, &greatest);
  if (priority > least || priority < greatest)
    fail_invalid("priority " + std::to_string(priority) + " is outside device " +
                 std::to_string(stream.device->ordinal) + "'s range, " +
                 std::to_string(greatest) + " (highest) to " + std::to_string(least) +
                 " (lowest)");
  CUstreamAttrValue v{};
  v.priority = priority;
  set(stream, CU_STREAM_ATTRIBUTE_PRIORITY, v, "priority");
}

cuabi_mem_sync_domain get_memory_sync_domain(const Stream& stream) {
  return static_cast<cuabi_mem_sync_domain>(
      get(stream, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, "memory sync domain").memSyncDomain);
}

void set_memory_sync_domain(const Stream& stream, int32_t domain) {
  if (domain != CUABI_MEM_SYNC_DOMAIN_DEFAULT && domain != CUABI_MEM_SYNC_DOMAIN_REMOTE)
    fail_invalid("domain is " + std::to_string(domain) +
                 ", not one of CUABI_MEM_SYNC_DOMAIN_DEFAULT (0), _REMOTE (1)");
  CUstreamAttrValue v{};
  v.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(domain);
  set(stream, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, v, "memory sync domain");
}

cuabi_access_policy_window get_access_policy_window(const Stream& stream) {
  const CUaccessPolicyWindow w =
      get(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, "access policy window")
          .accessPolicyWindow;
  cuabi_access_policy_window out = CUABI_ACCESS_POLICY_WINDOW_INIT;
  out.base = reinterpret_cast<uint64_t>(w.base_ptr);
  out.bytes = w.num_bytes;
  out.hit_ratio = w.hitRatio;
  out.hit_property = static_cast<cuabi_access_property>(w.hitProp);
  out.miss_property = static_cast<cuabi_access_property>(w.missProp);
  return out;
}

CUaccessPolicyWindow checked_access_policy_window(const Device& device,
                                                  const cuabi_access_policy_window& w,
                                                  const std::string& what) {
  if (!(w.hit_ratio >= 0.0f && w.hit_ratio <= 1.0f))
    fail_invalid(what + "hit_ratio is " + std::to_string(w.hit_ratio) + "; it is from 0 to 1");
  check_property(w.hit_property, (what + "hit_property").c_str());
  check_property(w.miss_property, (what + "miss_property").c_str());
  if (w.bytes && !w.base) fail_invalid(what + "base is 0 for a window of " +
                                       std::to_string(w.bytes) + " bytes");
  const int max = device.get_attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
  if (w.bytes > static_cast<size_t>(max < 0 ? 0 : max))
    fail_invalid(what + "bytes is " + std::to_string(w.bytes) + ", past device " +
                 std::to_string(device.ordinal) + "'s maximum window of " +
                 std::to_string(max) +
                 " bytes (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)");
  CUaccessPolicyWindow v{};
  v.base_ptr = reinterpret_cast<void*>(w.base);
  v.num_bytes = w.bytes;
  v.hitRatio = w.hit_ratio;
  v.hitProp = static_cast<CUaccessProperty>(w.hit_property);
  v.missProp = static_cast<CUaccessProperty>(w.miss_property);
  return v;
}

void set_access_policy_window(const Stream& stream, const cuabi_access_policy_window* given) {
  if (!given) fail_invalid("window is NULL");
  cuabi_access_policy_window w = CUABI_ACCESS_POLICY_WINDOW_INIT;
  read_struct(given, &w, "window");
  CUstreamAttrValue v{};
  v.accessPolicyWindow = checked_access_policy_window(*stream.device, w, "window->");
  set(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, v, "access policy window");
}

}  // namespace cuabi
