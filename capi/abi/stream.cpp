// Shims for streams and events.
#include "memops.hpp"
#include "stream_attributes.hpp"
#include "structs.hpp"
#include "shim.hpp"
#include "stream.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_stream_create(cuabi_device device, cuabi_stream_flags flags, int32_t priority,
                                 cuabi_stream* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return make<Stream>(std::move(d), flags, priority); });
}

cuabi_status cuabi_stream_wrap(cuabi_device device, uint64_t cu_stream, cuabi_stream* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    return make<Stream>(std::move(d), reinterpret_cast<CUstream>(cu_stream));
  });
}

void cuabi_stream_release(cuabi_stream stream) { release_handle<Stream>(stream); }

cuabi_status cuabi_stream_get_handle(cuabi_stream stream, uint64_t* cu_stream) {
  return get(__func__, stream, "stream", cu_stream, "cu_stream",
             [](const Stream& s) { return reinterpret_cast<uint64_t>(s.stream); });
}

cuabi_status cuabi_stream_get_id(cuabi_stream stream, uint64_t* id) {
  return get(__func__, stream, "stream", id, "id", &Stream::id);
}

cuabi_status cuabi_stream_synchronize(cuabi_stream stream) {
  return wait(__func__, stream, "stream", [](Stream& s) {
    const uint64_t launched = s.launches.count();
    check(driver().cuStreamSynchronize(s.stream), "cuStreamSynchronize");
    s.launches.mark_seen(launched);
    s.take_host_failures();
  });
}

cuabi_status cuabi_stream_launch_host_func(cuabi_stream stream, cuabi_host_fn fn,
                                           void* user_data) {
  return guard(__func__, [&] {
    Ref<Stream> s = acquire<Stream>(stream, "stream");
    launch_host_func(std::move(s), fn, user_data);
  });
}

cuabi_status cuabi_stream_query(cuabi_stream stream) {
  return query(__func__, stream, "stream", "cuStreamQuery", [](Stream& s) {
    const uint64_t launched = s.launches.count();
    const CUresult r = driver().cuStreamQuery(s.stream);
    if (r == CUDA_SUCCESS) s.launches.mark_seen(launched);
    return r;
  });
}

cuabi_status cuabi_access_policy_window_init(cuabi_access_policy_window* window,
                                             size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_access_policy_window defaults = CUABI_ACCESS_POLICY_WINDOW_INIT;
    init_struct(window, struct_size, defaults, "window");
  });
}

cuabi_status cuabi_stream_get_sync_policy(cuabi_stream stream, cuabi_sync_policy* policy) {
  return get(__func__, stream, "stream", policy, "policy",
             [](const Stream& s) { return get_sync_policy(s); });
}

cuabi_status cuabi_stream_set_sync_policy(cuabi_stream stream, cuabi_sync_policy policy) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    set_sync_policy(*s.get(), static_cast<int32_t>(policy));
  });
}

cuabi_status cuabi_stream_get_priority(cuabi_stream stream, int32_t* priority) {
  return get(__func__, stream, "stream", priority, "priority",
             [](const Stream& s) { return get_priority(s); });
}

cuabi_status cuabi_stream_set_priority(cuabi_stream stream, int32_t priority) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    set_priority(*s.get(), priority);
  });
}

cuabi_status cuabi_stream_get_memory_sync_domain(cuabi_stream stream,
                                                 cuabi_mem_sync_domain* domain) {
  return get(__func__, stream, "stream", domain, "domain",
             [](const Stream& s) { return get_memory_sync_domain(s); });
}

cuabi_status cuabi_stream_set_memory_sync_domain(cuabi_stream stream,
                                                 cuabi_mem_sync_domain domain) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    set_memory_sync_domain(*s.get(), static_cast<int32_t>(domain));
  });
}

cuabi_status cuabi_stream_get_access_policy_window(cuabi_stream stream,
                                                   cuabi_access_policy_window* window) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    need(window, "window");
    check_struct_size<cuabi_access_policy_window>(window->struct_size, "window->struct_size");
    const cuabi_access_policy_window got = get_access_policy_window(*s.get());
    init_struct(window, window->struct_size, got, "window");
  });
}

cuabi_status cuabi_stream_set_access_policy_window(cuabi_stream stream,
                                                   const cuabi_access_policy_window* window) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    set_access_policy_window(*s.get(), window);
  });
}

cuabi_status cuabi_stream_write_value(cuabi_stream stream, cuabi_buffer buffer, size_t offset,
                                      uint64_t value, uint32_t width, cuabi_mem_op_flags flags) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    Pin<Buffer> b(buffer, "buffer");
    b->device->check_epoch(b->epoch);
    stream_write_value(*s.get(), b->ptr, b->size, b->device.get(), offset, value, width, flags);
  });
}

cuabi_status cuabi_stream_wait_value(cuabi_stream stream, cuabi_buffer buffer, size_t offset,
                                     uint64_t value, uint32_t width,
                                     cuabi_wait_condition condition, cuabi_mem_op_flags flags) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    Pin<Buffer> b(buffer, "buffer");
    b->device->check_epoch(b->epoch);
    stream_wait_value(*s.get(), b->ptr, b->size, b->device.get(), offset, value, width,
                      static_cast<int32_t>(condition), flags);
  });
}

cuabi_status cuabi_stream_write_value_host(cuabi_stream stream, cuabi_host_buffer buffer,
                                           size_t offset, uint64_t value, uint32_t width,
                                           cuabi_mem_op_flags flags) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    Pin<HostBuffer> b(buffer, "buffer");
    stream_write_value(*s.get(), host_device_pointer(*b.get()), b->size, nullptr, offset, value,
                       width, flags);
  });
}

cuabi_status cuabi_stream_wait_value_host(cuabi_stream stream, cuabi_host_buffer buffer,
                                          size_t offset, uint64_t value, uint32_t width,
                                          cuabi_wait_condition condition,
                                          cuabi_mem_op_flags flags) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    Pin<HostBuffer> b(buffer, "buffer");
    stream_wait_value(*s.get(), host_device_pointer(*b.get()), b->size, nullptr, offset, value,
                      width, static_cast<int32_t>(condition), flags);
  });
}

cuabi_status cuabi_stream_wait_event(cuabi_stream stream, cuabi_event event) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream");
    Pin<Event> e(event, "event");
    s->enter();
    e->device->check_epoch(e->epoch);
    check(driver().cuStreamWaitEvent(s->stream, e->event_for(*s->device), 0),
          "cuStreamWaitEvent");
  });
}

cuabi_status cuabi_event_create(cuabi_device device, cuabi_event_flags flags, cuabi_event* out) {
  return create(__func__, device, "device", out,
                [&](Ref<Device> d) { return make<Event>(std::move(d), flags); });
}

void cuabi_event_release(cuabi_event event) { release_handle<Event>(event); }

cuabi_status cuabi_event_record(cuabi_event event, cuabi_stream stream) {
  return on_stream(__func__, event, "event", stream, [](Event& e, const Pin<Stream>& s) {
    e.enter();
    check(driver().cuEventRecord(e.event, stream_for(s, *e.device)), "cuEventRecord");
  });
}

cuabi_status cuabi_event_synchronize(cuabi_event event) {
  return wait(__func__, event, "event",
              [](Event& e) { check(driver().cuEventSynchronize(e.event), "cuEventSynchronize"); });
}

cuabi_status cuabi_event_query(cuabi_event event) {
  return query(__func__, event, "event", "cuEventQuery",
               [](Event& e) { return driver().cuEventQuery(e.event); });
}

cuabi_status cuabi_event_get_elapsed_ms(cuabi_event start, cuabi_event end, float* milliseconds) {
  return guard(__func__, [&] {
    Pin<Event> a(start, "start");
    Pin<Event> b(end, "end");
    need(milliseconds, "milliseconds");
    a->enter();
    b->device->check_epoch(b->epoch);
    float ms = 0;
    CUresult r = driver().cuEventElapsedTime(&ms, a->event, b->event);
    if (r == CUDA_ERROR_INVALID_HANDLE)
      fail_invalid("an event was created with CUABI_EVENT_DISABLE_TIMING or was never recorded");
    if (r == CUDA_ERROR_NOT_READY) fail(CUABI_ERROR_NOT_READY, "an event has not completed yet", r);
    check(r, "cuEventElapsedTime");
    *milliseconds = ms;
  });
}

}  // extern "C"
