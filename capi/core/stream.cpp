// Streams, events and graphs.
#include <string>

#include "objects.hpp"

namespace cuabi {

Stream::Stream(Ref<Device> dev, uint32_t flags, int priority) : DeviceChild(kKind, std::move(dev)) {
  if (flags & ~static_cast<uint32_t>(CUABI_STREAM_NON_BLOCKING))
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  enter();
  unsigned cu_flags = (flags & CUABI_STREAM_NON_BLOCKING) ? CU_STREAM_NON_BLOCKING : 0;
  check(driver().cuStreamCreateWithPriority(&stream, cu_flags, priority),
        "cuStreamCreateWithPriority");
  owned = true;
}

Stream::Stream(Ref<Device> dev, CUstream wrapped)
    : DeviceChild(kKind, std::move(dev)), stream(wrapped), owned(false) {}

Stream::~Stream() {
  if (owned && enter_quietly(*this)) driver().cuStreamDestroy(stream);
}

Event::Event(Ref<Device> dev, uint32_t flags) : DeviceChild(kKind, std::move(dev)) {
  const uint32_t known = CUABI_EVENT_DISABLE_TIMING | CUABI_EVENT_BLOCKING_SYNC;
  if (flags & ~known)
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  enter();
  unsigned cu_flags = 0;
  if (flags & CUABI_EVENT_DISABLE_TIMING) cu_flags |= CU_EVENT_DISABLE_TIMING;
  if (flags & CUABI_EVENT_BLOCKING_SYNC) cu_flags |= CU_EVENT_BLOCKING_SYNC;
  check(driver().cuEventCreate(&event, cu_flags), "cuEventCreate");
}

Event::~Event() {
  if (enter_quietly(*this)) driver().cuEventDestroy(event);
}

Graph::~Graph() {
  if (enter_quietly(*this)) driver().cuGraphDestroy(graph);
}

GraphExec::~GraphExec() {
  if (enter_quietly(*this)) driver().cuGraphExecDestroy(exec);
}

}  // namespace cuabi
