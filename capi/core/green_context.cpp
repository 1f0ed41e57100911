// Green contexts. What the driver would refuse with a bare
// CUDA_ERROR_INVALID_VALUE (or INVALID_RESOURCE_CONFIGURATION) is checked
// here first, with the bound in the message: a split the resource's SM
// count and alignment cannot make, a part of a split split again, a context
// from no SMs, a green context's stream without CUABI_STREAM_NON_BLOCKING.
#include "green_context.hpp"

#include <string>
#include <vector>

namespace cuabi {

namespace {

std::string sms(const SmResource& r) {
  return std::to_string(r.resource.sm.smCount) + " SMs (device " +
         std::to_string(r.device->ordinal) + ")";
}

uint32_t alignment_of(const SmResource& r) {
  const uint32_t a = r.resource.sm.smCoscheduledAlignment;
  return a ? a : 1;
}

// The minimum count the driver would use for `min_sm_count`: 0 means the
// smallest partition; anything else must be a multiple of the alignment.
uint32_t checked_min_count(const SmResource& r, uint32_t min_sm_count) {
  if (r.split_part)
    fail_invalid(
        "resource is a group of a split, which the driver does not split again; make a green "
        "context from it and split cuabi_green_context_get_sm_resource");
  const uint32_t count = r.resource.sm.smCount;
  const uint32_t align = alignment_of(r);
  const uint32_t min_part = r.resource.sm.minSmPartitionSize;
  if (min_sm_count > count)
    fail_invalid("min_sm_count " + std::to_string(min_sm_count) + " is more than the resource's " +
                 sms(r));
  if (min_sm_count % align != 0)
    fail_invalid("min_sm_count " + std::to_string(min_sm_count) + " is not a multiple of " +
                 std::to_string(align) + ", the resource's SM granularity (" + sms(r) + ")");
  uint32_t m = min_sm_count < min_part ? min_part : min_sm_count;
  if (m == 0) m = align;
  return m;
}

}  // namespace

SmResource::SmResource(Ref<Device> dev, const CUdevResource& res, bool part, Ref<Object> from)
    : DeviceChild(kKind, std::move(dev)), resource(res), split_part(part), parent(std::move(from)) {}

Ref<SmResource> device_sm_resource(Ref<Device> device) {
  const DriverApi& d = device->make_current();
  CUdevResource r{};
  check(d.cuDeviceGetDevResource(device->device, &r, CU_DEV_RESOURCE_TYPE_SM),
        "cuDeviceGetDevResource");
  return make<SmResource>(std::move(device), r, false, Ref<Object>());
}

uint32_t sm_group_count(const SmResource& resource, uint32_t min_sm_count) {
  const uint32_t m = checked_min_count(resource, min_sm_count);
  const DriverApi& d = resource.enter();
  unsigned groups = 0;
  check(d.cuDevSmResourceSplitByCount(nullptr, &groups, &resource.resource, nullptr, 0, m),
        "cuDevSmResourceSplitByCount");
  return groups;
}

Ref<SmResource> split_sm_resource(Ref<SmResource> resource, uint32_t group_count,
                                  uint32_t min_sm_count, uint32_t index) {
  const SmResource& r = *resource;
  if (group_count == 0) fail_invalid("group_count is 0; a split makes at least one group");
  const uint32_t m = checked_min_count(r, min_sm_count);
  const uint64_t needed = static_cast<uint64_t>(group_count) * m;
  if (needed > r.resource.sm.smCount)
    fail_invalid("group_count " + std::to_string(group_count) + " groups of at least " +
                 std::to_string(m) + " SMs need " + std::to_string(needed) +
                 " SMs; the resource has " + sms(r) + ", granularity " +
                 std::to_string(alignment_of(r)));
  if (index > group_count)
    fail_invalid("index " + std::to_string(index) + " is past group_count " +
                 std::to_string(group_count) + " (group_count itself is the remainder)");
  const DriverApi& d = r.enter();
  std::vector<CUdevResource> groups(group_count);
  CUdevResource remainder{};
  unsigned made = group_count;
  check(d.cuDevSmResourceSplitByCount(groups.data(), &made, &r.resource, &remainder, 0, m),
        "cuDevSmResourceSplitByCount");
  if (made < group_count)
    fail_invalid("the device makes only " + std::to_string(made) + " groups of at least " +
                 std::to_string(m) + " SMs from the resource's " + sms(r) + ", not group_count " +
                 std::to_string(group_count));
  const CUdevResource& part = index == group_count ? remainder : groups[index];
  Ref<Device> dev = r.device;
  return make<SmResource>(std::move(dev), part, true, Ref<Object>::adopt(resource.detach()));
}

GreenContext::GreenContext(Ref<SmResource> res)
    : DeviceChild(kKind, res->device), resource(std::move(res)) {
  if (resource->resource.sm.smCount == 0)
    fail_invalid("resource has no SMs (an empty remainder); a green context needs at least one");
  const DriverApi& d = resource->enter();
  CUdevResourceDesc desc = nullptr;
  CUdevResource r = resource->resource;
  check(d.cuDevResourceGenerateDesc(&desc, &r, 1), "cuDevResourceGenerateDesc");
  check(d.cuGreenCtxCreate(&context, desc, device->device, CU_GREEN_CTX_DEFAULT_STREAM),
        "cuGreenCtxCreate");
  CUdevResource mine{};
  if (d.cuGreenCtxGetDevResource(context, &mine, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS)
    sm_count = mine.sm.smCount;
  else
    sm_count = resource->resource.sm.smCount;
}

GreenContext::~GreenContext() {
  if (!context || !enter_quietly(*this)) return;
  driver().cuGreenCtxDestroy(context);
}

Ref<SmResource> green_context_sm_resource(Ref<GreenContext> context) {
  const DriverApi& d = context->enter();
  CUdevResource r{};
  check(d.cuGreenCtxGetDevResource(context->context, &r, CU_DEV_RESOURCE_TYPE_SM),
        "cuGreenCtxGetDevResource");
  Ref<Device> dev = context->device;
  return make<SmResource>(std::move(dev), r, false, Ref<Object>::adopt(context.detach()));
}

Ref<Stream> green_context_stream(Ref<GreenContext> context, uint32_t flags, int priority) {
  if (flags & ~static_cast<uint32_t>(CUABI_STREAM_NON_BLOCKING))
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  if (!(flags & CUABI_STREAM_NON_BLOCKING))
    fail_invalid(
        "flags must include CUABI_STREAM_NON_BLOCKING: the driver requires it of a green "
        "context's stream");
  const DriverApi& d = context->enter();
  CUstream s = nullptr;
  check(d.cuGreenCtxStreamCreate(&s, context->context, CU_STREAM_NON_BLOCKING, priority),
        "cuGreenCtxStreamCreate");
  Ref<Stream> stream;
  try {
    stream = make<Stream>(context->device, s);
  } catch (...) {
    d.cuStreamDestroy(s);
    throw;
  }
  stream->owned = true;
  stream->green_context = Ref<Object>::adopt(context.detach());
  return stream;
}

void check_green_stream(const GreenContext& context, const Stream& stream) {
  if (stream.green_context.get() == &context) return;
  if (!stream.green_context)
    fail_invalid("stream " + std::to_string(stream.id) +
                 " runs in device " + std::to_string(stream.device->ordinal) +
                 "'s primary context, not in the green context of " +
                 std::to_string(context.sm_count) + " SMs");
  const auto* other = static_cast<const GreenContext*>(stream.green_context.get());
  fail_invalid("stream " + std::to_string(stream.id) + " runs in another green context (" +
               std::to_string(other->sm_count) + " SMs), not in this one (" +
               std::to_string(context.sm_count) + " SMs)");
}

}  // namespace cuabi
