// Green contexts: a device's SMs as a resource, split into groups, and
// contexts confined to one group (cuDeviceGetDevResource,
// cuDevSmResourceSplitByCount, cuDevResourceGenerateDesc, cuGreenCtxCreate).
#pragma once

#include "objects.hpp"

namespace cuabi {

class GreenContext;

// A set of SMs of one device: the whole device's, a green context's, or one
// part of a split of either (which the driver does not split again).
class SmResource : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::SmResource;
  SmResource(Ref<Device> device, const CUdevResource& resource, bool split_part,
             Ref<Object> parent);
  CUdevResource resource{};
  bool split_part = false;  // a group or remainder of cuabi_sm_resource_split
  Ref<Object> parent;       // the resource split, or the green context asked
  uint32_t sm_count() const { return resource.sm.smCount; }
};

class GreenContext : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::GreenContext;
  GreenContext(Ref<SmResource> resource);
  ~GreenContext() override;
  CUgreenCtx context = nullptr;
  Ref<SmResource> resource;
  uint32_t sm_count = 0;  // as the driver reports the context's resource
};

Ref<SmResource> device_sm_resource(Ref<Device> device);
uint32_t sm_group_count(const SmResource& resource, uint32_t min_sm_count);
Ref<SmResource> split_sm_resource(Ref<SmResource> resource, uint32_t group_count,
                                  uint32_t min_sm_count, uint32_t index);
Ref<SmResource> green_context_sm_resource(Ref<GreenContext> context);
Ref<Stream> green_context_stream(Ref<GreenContext> context, uint32_t flags, int priority);
void check_green_stream(const GreenContext& context, const Stream& stream);

}  // namespace cuabi
