// Shims for green contexts and their SM resources.
#include "green_context.hpp"

#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_device_get_sm_resource(cuabi_device device, cuabi_sm_resource* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return device_sm_resource(std::move(d)); });
}

void cuabi_sm_resource_release(cuabi_sm_resource resource) {
  release_handle<SmResource>(resource);
}

cuabi_status cuabi_sm_resource_get_sm_count(cuabi_sm_resource resource, uint32_t* count) {
  return get(__func__, resource, "resource", count, "count",
             [](const SmResource& r) { return r.resource.sm.smCount; });
}

cuabi_status cuabi_sm_resource_get_min_partition_size(cuabi_sm_resource resource,
                                                      uint32_t* count) {
  return get(__func__, resource, "resource", count, "count",
             [](const SmResource& r) { return r.resource.sm.minSmPartitionSize; });
}

cuabi_status cuabi_sm_resource_get_alignment(cuabi_sm_resource resource, uint32_t* count) {
  return get(__func__, resource, "resource", count, "count",
             [](const SmResource& r) { return r.resource.sm.smCoscheduledAlignment; });
}

cuabi_status cuabi_sm_resource_get_group_count(cuabi_sm_resource resource, uint32_t min_sm_count,
                                               uint32_t* count) {
  return get(__func__, resource, "resource", count, "count",
             [&](const SmResource& r) { return sm_group_count(r, min_sm_count); });
}

cuabi_status cuabi_sm_resource_split(cuabi_sm_resource resource, uint32_t group_count,
                                     uint32_t min_sm_count, uint32_t index,
                                     cuabi_sm_resource* out) {
  return create(__func__, resource, "resource", out, [&](Ref<SmResource> r) {
    return split_sm_resource(std::move(r), group_count, min_sm_count, index);
  });
}

cuabi_status cuabi_green_context_create(cuabi_sm_resource resource, cuabi_green_context* out) {
  return create(__func__, resource, "resource", out,
                [&](Ref<SmResource> r) { return make<GreenContext>(std::move(r)); });
}

void cuabi_green_context_release(cuabi_green_context context) {
  release_handle<GreenContext>(context);
}

cuabi_status cuabi_green_context_get_sm_count(cuabi_green_context context, uint32_t* count) {
  return get(__func__, context, "context", count, "count", &GreenContext::sm_count);
}

cuabi_status cuabi_green_context_get_sm_resource(cuabi_green_context context,
                                                 cuabi_sm_resource* out) {
  return create(__func__, context, "context", out,
                [&](Ref<GreenContext> c) { return green_context_sm_resource(std::move(c)); });
}

cuabi_status cuabi_green_context_create_stream(cuabi_green_context context,
                                               cuabi_stream_flags flags, int32_t priority,
                                               cuabi_stream* out) {
  return create(__func__, context, "context", out, [&](Ref<GreenContext> c) {
    return green_context_stream(std::move(c), flags, priority);
  });
}

cuabi_status cuabi_green_context_check_stream(cuabi_green_context context, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<GreenContext> c(context, "context");
    Pin<Stream> s(stream, "stream");
    check_green_stream(*c.get(), *s.get());
  });
}

}  // extern "C"
