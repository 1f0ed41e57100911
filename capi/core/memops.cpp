// Stream memory operations (cuStreamWriteValue32/64, cuStreamWaitValue32/64).
// Everything the driver would answer with a bare CUDA_ERROR_INVALID_VALUE is
// checked here first: the width, the word's alignment and place in the
// buffer, a value too wide for 4 bytes, flags of the other operation, and
// what the device cannot do (NOR waits, flushes).
#include "memops.hpp"

#include <string>

namespace cuabi {

namespace {

const char* condition_name(int32_t c) {
  switch (c) {
    case CUABI_WAIT_GEQ: return "CUABI_WAIT_GEQ";
    case CUABI_WAIT_EQ: return "CUABI_WAIT_EQ";
    case CUABI_WAIT_AND: return "CUABI_WAIT_AND";
    case CUABI_WAIT_NOR: return "CUABI_WAIT_NOR";
    default: return nullptr;
  }
}

void check_word(const Stream& stream, size_t size, const Device* device, size_t offset,
                uint64_t value, uint32_t width, uint32_t flags, uint32_t allowed_flags,
                const char* op) {
  if (width != 4 && width != 8)
    fail_invalid("width is " + std::to_string(width) + "; a word is 4 or 8 bytes");
  if (offset % width != 0)
    fail_invalid("offset " + std::to_string(offset) + " is not a multiple of the width (" +
                 std::to_string(width) + " bytes): the word must be aligned");
  if (offset > size || width > size - offset)
    fail(CUABI_ERROR_OUT_OF_RANGE, "the " + std::to_string(width) + "-byte word at offset " +
                                       std::to_string(offset) + " reaches past the end of the " +
                                       std::to_string(size) + "-byte buffer");
  if (width == 4 && value > 0xFFFFFFFFull)
    fail_invalid("value " + std::to_string(value) + " does not fit in a 4-byte word");
  const uint32_t known = CUABI_MEM_OP_FLUSH | CUABI_MEM_OP_NO_MEMORY_BARRIER;
  if (flags & ~known)
    fail_invalid("flags has bits this version does not define: " + std::to_string(flags));
  if (flags & ~allowed_flags)
    fail_invalid(std::string(flags & CUABI_MEM_OP_FLUSH ? "CUABI_MEM_OP_FLUSH"
                                                        : "CUABI_MEM_OP_NO_MEMORY_BARRIER") +
                 " is for a " + (flags & CUABI_MEM_OP_FLUSH ? "wait" : "write") + ", not a " + op);
  if (device && device != stream.device.get())
    fail_invalid("the buffer is on device " + std::to_string(device->ordinal) +
                 ", the stream on device " + std::to_string(stream.device->ordinal));
}

}  // namespace

void check_write_value(const Stream& stream, size_t size, const Device* device, size_t offset,
                       uint64_t value, uint32_t width, uint32_t flags) {
  check_word(stream, size, device, offset, value, width, flags, CUABI_MEM_OP_NO_MEMORY_BARRIER,
             "write");
  // The driver's memory operations since CUDA 11.7 (the entry points cuabi
  // asks for) answer CUDA_ERROR_INVALID_VALUE to a write without a barrier.
  if (flags & CUABI_MEM_OP_NO_MEMORY_BARRIER)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "CUABI_MEM_OP_NO_MEMORY_BARRIER: the driver's stream memory operations no longer take "
         "it (every write is fenced)");
}

void check_wait_value(const Stream& stream, size_t size, const Device* device, size_t offset,
                      uint64_t value, uint32_t width, int32_t condition, uint32_t flags) {
  check_word(stream, size, device, offset, value, width, flags, CUABI_MEM_OP_FLUSH, "wait");
  const char* name = condition_name(condition);
  if (!name)
    fail_invalid("condition is " + std::to_string(condition) +
                 ", not one of CUABI_WAIT_GEQ (0), CUABI_WAIT_EQ (1), CUABI_WAIT_AND (2), "
                 "CUABI_WAIT_NOR (3)");
  const Device& dev = *stream.device;
  if (condition == CUABI_WAIT_NOR &&
      !dev.get_attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR))
    fail(CUABI_ERROR_NOT_SUPPORTED, "device " + std::to_string(dev.ordinal) +
                                        " cannot wait with CUABI_WAIT_NOR "
                                        "(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR is 0)");
  if ((flags & CUABI_MEM_OP_FLUSH) &&
      !dev.get_attribute(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES))
    fail(CUABI_ERROR_NOT_SUPPORTED, "device " + std::to_string(dev.ordinal) +
                                        " cannot flush remote writes after a wait "
                                        "(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES is 0)");
}

void stream_write_value(Stream& stream, CUdeviceptr base, size_t size, const Device* device,
                        size_t offset, uint64_t value, uint32_t width, uint32_t flags) {
  check_write_value(stream, size, device, offset, value, width, flags);
  const DriverApi& d = stream.enter();
  const unsigned cu_flags = 0;
  if (width == 4)
    check(d.cuStreamWriteValue32(stream.stream, base + offset, static_cast<cuuint32_t>(value),
                                 cu_flags),
          "cuStreamWriteValue32");
  else
    check(d.cuStreamWriteValue64(stream.stream, base + offset, value, cu_flags),
          "cuStreamWriteValue64");
}

void stream_wait_value(Stream& stream, CUdeviceptr base, size_t size, const Device* device,
                       size_t offset, uint64_t value, uint32_t width, int32_t condition,
                       uint32_t flags) {
  check_wait_value(stream, size, device, offset, value, width, condition, flags);
  const DriverApi& d = stream.enter();
  unsigned cu_flags = static_cast<unsigned>(condition);
  if (flags & CUABI_MEM_OP_FLUSH) cu_flags |= CU_STREAM_WAIT_VALUE_FLUSH;
  if (width == 4)
    check(d.cuStreamWaitValue32(stream.stream, base + offset, static_cast<cuuint32_t>(value),
                                cu_flags),
          "cuStreamWaitValue32");
  else
    check(d.cuStreamWaitValue64(stream.stream, base + offset, value, cu_flags),
          "cuStreamWaitValue64");
}

CUdeviceptr host_device_pointer(const HostBuffer& buffer) {
  buffer.enter();
  CUdeviceptr p = 0;
  check(driver().cuMemHostGetDevicePointer(&p, buffer.ptr, 0), "cuMemHostGetDevicePointer");
  return p;
}

}  // namespace cuabi
