// DLPack 1.x in the core: export, import (versioned and unversioned) and the
// stream handshake. The layouts of the header's cuabi_dlpack_* structs are
// DLPack's; the static_asserts below hold them to it.
#include "dlpack.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "memory.hpp"

namespace cuabi {

static_assert(sizeof(cuabi_dlpack_version) == 8, "DLPackVersion is 8 bytes");
static_assert(sizeof(cuabi_dlpack_device) == 8, "DLDevice is 8 bytes");
static_assert(sizeof(cuabi_dlpack_dtype) == 4, "DLDataType is 4 bytes");
static_assert(offsetof(cuabi_dlpack_tensor, device) == 8, "DLTensor.device at 8");
static_assert(offsetof(cuabi_dlpack_tensor, ndim) == 16, "DLTensor.ndim at 16");
static_assert(offsetof(cuabi_dlpack_tensor, dtype) == 20, "DLTensor.dtype at 20");
static_assert(offsetof(cuabi_dlpack_tensor, shape) == 24, "DLTensor.shape at 24");
static_assert(offsetof(cuabi_dlpack_tensor, strides) == 32, "DLTensor.strides at 32");
static_assert(offsetof(cuabi_dlpack_tensor, byte_offset) == 40, "DLTensor.byte_offset at 40");
static_assert(sizeof(cuabi_dlpack_tensor) == 48, "DLTensor is 48 bytes");
static_assert(offsetof(cuabi_dlpack_managed_tensor, manager_ctx) == 48, "manager_ctx at 48");
static_assert(offsetof(cuabi_dlpack_managed_tensor, deleter) == 56, "deleter at 56");
static_assert(sizeof(cuabi_dlpack_managed_tensor) == 64, "DLManagedTensor is 64 bytes");
static_assert(offsetof(cuabi_dlpack_managed_tensor_versioned, manager_ctx) == 8, "manager_ctx");
static_assert(offsetof(cuabi_dlpack_managed_tensor_versioned, deleter) == 16, "deleter at 16");
static_assert(offsetof(cuabi_dlpack_managed_tensor_versioned, flags) == 24, "flags at 24");
static_assert(offsetof(cuabi_dlpack_managed_tensor_versioned, dl_tensor) == 32, "dl_tensor");
static_assert(sizeof(cuabi_dlpack_managed_tensor_versioned) == 80, "versioned is 80 bytes");

namespace {

constexpr int64_t kMaxDims = 64;

std::string str(int64_t v) { return std::to_string(v); }

// The element size in bytes of a dtype, checked. `who` names the fields.
uint64_t element_bytes(uint32_t code, uint32_t bits, uint32_t lanes, const std::string& who) {
  if (code > CUABI_DLPACK_BOOL && !(code >= 7 && code <= 15))
    fail_invalid(who + "code is " + std::to_string(code) +
                 ": no DLPack type code (0 to 15)");
  if (bits == 0) fail_invalid(who + "bits is 0: an element needs at least one bit");
  if (lanes == 0) fail_invalid(who + "lanes is 0: an element needs at least one lane");
  if (lanes > 0xFFFF) fail_invalid(who + "lanes is " + std::to_string(lanes) + "; at most 65535");
  if (bits > 0xFF) fail_invalid(who + "bits is " + std::to_string(bits) + "; at most 255");
  if (bits % 8 != 0)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         who + "bits is " + std::to_string(bits) +
             ": sub-byte element types are not supported (bits must be a multiple of 8)");
  return static_cast<uint64_t>(bits / 8) * lanes;
}

// The lowest and one-past-highest element index the shape and strides
// reach, relative to the first element; `count` the number of elements.
struct Reach {
  int64_t low = 0, high = 1;
  uint64_t count = 1;
};

Reach reach_of(const int64_t* shape, const int64_t* strides, int64_t ndim, bool allow_negative,
               const std::string& who) {
  if (ndim < 0) fail_invalid(who + "ndim is " + str(ndim) + "; a tensor has 0 or more dimensions");
  if (ndim > kMaxDims)
    fail_invalid(who + "ndim is " + str(ndim) + "; at most " + str(kMaxDims) + " dimensions");
  if (ndim > 0 && !shape) fail_invalid(who + "shape is NULL with ndim " + str(ndim));
  Reach r;
  for (int64_t i = 0; i < ndim; ++i)
    if (shape[i] < 0)
      fail_invalid(who + "shape[" + str(i) + "] is " + str(shape[i]) + "; an extent is >= 0");
  for (int64_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) {
      r.count = 0;
      r.high = 0;
      return r;
    }
    if (r.count > (uint64_t{1} << 62) / static_cast<uint64_t>(shape[i]))
      fail_invalid(who + "shape holds more than 2^62 elements");
    r.count *= static_cast<uint64_t>(shape[i]);
  }
  if (!strides) {  // compact row-major
    r.high = static_cast<int64_t>(r.count);
    return r;
  }
  __int128 low = 0, high = 0;  // offsets of the last element reached
  for (int64_t i = 0; i < ndim; ++i) {
    if (strides[i] < 0 && !allow_negative)
      fail(CUABI_ERROR_NOT_SUPPORTED,
           who + "strides[" + str(i) + "] is " + str(strides[i]) +
               ": negative strides are not supported (the buffer would start below data)");
    const __int128 span = static_cast<__int128>(shape[i] - 1) * strides[i];
    if (span < 0)
      low += span;
    else
      high += span;
  }
  const __int128 limit = __int128{1} << 62;
  if (low < -limit || high >= limit) fail_invalid(who + "strides reach past 2^62 elements");
  r.low = static_cast<int64_t>(low);
  r.high = static_cast<int64_t>(high) + 1;
  return r;
}

std::string strides_text(const int64_t* strides, size_t ndim) {
  if (!strides) return "compact";
  std::string s = "(";
  for (size_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + str(strides[i]);
  return s + ")";
}

// What an exported tensor owns: the tensor, its shape and strides, and the
// buffer's reference.
struct Exported {
  cuabi_dlpack_managed_tensor_versioned tensor{};
  std::vector<int64_t> shape, strides;
  Ref<Buffer> buffer;
};

void CUABI_CALL delete_exported(cuabi_dlpack_managed_tensor_versioned* self) {
  if (!self) return;
  delete static_cast<Exported*>(self->manager_ctx);
}

// The driver's stream for a raw DLPack stream value (1 and 2 are
// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD, which the driver takes as they
// are); nullptr for -1.
CUstream raw_stream(int64_t value, const char* name) {
  if (value == -1) return nullptr;
  if (value <= 0)
    fail_invalid(std::string(name) + " is " + str(value) +
                 ": expected -1 (no synchronisation), 1 (legacy default stream), 2 (per-thread "
                 "default stream) or a CUstream; 0 is ambiguous in DLPack");
  return reinterpret_cast<CUstream>(static_cast<uintptr_t>(value));
}

// `waiter` waits for the work queued on `source` so far.
void order(const Stream& stream, CUstream source, CUstream waiter) {
  const DriverApi& d = stream.enter();
  CUevent event = nullptr;
  check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult r = d.cuEventRecord(event, source);
  if (r == CUDA_SUCCESS) {
    r = d.cuStreamWaitEvent(waiter, event, 0);
    d.cuEventDestroy(event);  // the wait holds what it needs
    check(r, "cuStreamWaitEvent");
  } else {
    d.cuEventDestroy(event);
    check(r, "cuEventRecord");
  }
}

// The checks both tensor forms share; answers the buffer over the tensor.
Ref<Buffer> import_tensor(const cuabi_dlpack_tensor& t, std::shared_ptr<void> keeper) {
  const char* who = "tensor.";
  const std::string w(who);
  if (t.device.device_type != CUABI_DLPACK_DEVICE_CUDA &&
      t.device.device_type != CUABI_DLPACK_DEVICE_PINNED_HOST &&
      t.device.device_type != CUABI_DLPACK_DEVICE_MANAGED)
    fail_invalid(w + "device.device_type is " + std::to_string(t.device.device_type) +
                 ": expected CUDA (2), CUDA host (3) or CUDA managed (13) memory");
  const uint64_t element =
      element_bytes(t.dtype.code, t.dtype.bits, t.dtype.lanes, w + "dtype.");
  const Reach r = reach_of(t.shape, t.strides, t.ndim, false, w);
  if (r.count == 0)
    fail_invalid(w + "shape has no elements: a buffer needs at least one byte");
  if (!t.data) fail_invalid(w + "data is NULL");
  const uint64_t base = reinterpret_cast<uintptr_t>(t.data);
  const unsigned __int128 bytes = static_cast<unsigned __int128>(r.high) * element;
  if (bytes >> 63) fail_invalid(w + "strides and shape reach past 2^63 bytes");
  if (base + t.byte_offset < base) fail_invalid(w + "data + byte_offset overflows the address space");
  // Last: the device count needs the driver.
  const int32_t id = t.device.device_id;
  if (id < 0) fail_invalid(w + "device.device_id is " + std::to_string(id) + ": an ordinal is >= 0");
  const int count = Device::count();
  if (id >= count)
    fail_invalid(w + "device.device_id is " + std::to_string(id) +
                 ": no device's ordinal (this machine has " + std::to_string(count) +
                 " devices)");
  Ref<Buffer> b = wrap_device(Device::get(id), base + t.byte_offset, static_cast<size_t>(bytes));
  b->dlpack_owner = std::move(keeper);
  return b;
}

}  // namespace

cuabi_dlpack_managed_tensor_versioned* export_dlpack(Ref<Buffer> buffer, uint64_t byte_offset,
                                                     const int64_t* shape,
                                                     const int64_t* strides, size_t ndim,
                                                     uint32_t code, uint32_t bits,
                                                     uint32_t lanes, uint64_t flags) {
  if (flags & ~static_cast<uint64_t>(CUABI_DLPACK_FLAG_READ_ONLY))
    fail_invalid("flags is " + std::to_string(flags) +
                 ": only CUABI_DLPACK_FLAG_READ_ONLY (1) may be given");
  if (ndim > static_cast<size_t>(kMaxDims))
    fail_invalid("ndim is " + std::to_string(ndim) + "; at most " + str(kMaxDims) + " dimensions");
  const uint64_t element = element_bytes(code, bits, lanes, "dtype_");
  const Reach r = reach_of(shape, strides, static_cast<int64_t>(ndim), true, "");
  if (r.count > 0) {
    // Bytes from the buffer's start to the lowest and past the highest element.
    const __int128 low = static_cast<__int128>(byte_offset) + static_cast<__int128>(r.low) * element;
    const __int128 high =
        static_cast<__int128>(byte_offset) + static_cast<__int128>(r.high) * element;
    if (low < 0 || high > static_cast<__int128>(buffer->size))
      fail(CUABI_ERROR_OUT_OF_RANGE,
           "the tensor reaches bytes [" + str(static_cast<int64_t>(low)) + ", " +
               str(static_cast<int64_t>(high)) + ") of the " + std::to_string(buffer->size) +
               "-byte buffer (byte_offset " + std::to_string(byte_offset) + ", strides " +
               strides_text(strides, ndim) + ")");
  } else if (byte_offset > buffer->size) {
    fail(CUABI_ERROR_OUT_OF_RANGE, "byte_offset " + std::to_string(byte_offset) +
                                       " is past the end of the " +
                                       std::to_string(buffer->size) + "-byte buffer");
  }
  auto e = std::make_unique<Exported>();
  e->shape.assign(shape, shape + ndim);
  if (strides) e->strides.assign(strides, strides + ndim);
  cuabi_dlpack_managed_tensor_versioned& t = e->tensor;
  t.version.major = CUABI_DLPACK_MAJOR_VERSION;
  t.version.minor = CUABI_DLPACK_MINOR_VERSION;
  t.manager_ctx = e.get();
  t.deleter = &delete_exported;
  t.flags = flags;
  t.dl_tensor.data = reinterpret_cast<void*>(static_cast<uintptr_t>(buffer->ptr));
  t.dl_tensor.device.device_type = buffer->kind == CUABI_BUFFER_MANAGED
                                       ? CUABI_DLPACK_DEVICE_MANAGED
                                       : CUABI_DLPACK_DEVICE_CUDA;
  t.dl_tensor.device.device_id = buffer->device->ordinal;
  t.dl_tensor.ndim = static_cast<int32_t>(ndim);
  t.dl_tensor.dtype.code = static_cast<uint8_t>(code);
  t.dl_tensor.dtype.bits = static_cast<uint8_t>(bits);
  t.dl_tensor.dtype.lanes = static_cast<uint16_t>(lanes);
  t.dl_tensor.shape = ndim ? e->shape.data() : nullptr;
  t.dl_tensor.strides = strides && ndim ? e->strides.data() : nullptr;
  t.dl_tensor.byte_offset = byte_offset;
  e->buffer = std::move(buffer);
  return &e.release()->tensor;
}

Ref<Buffer> import_dlpack(cuabi_dlpack_managed_tensor_versioned* tensor, uint32_t flags) {
  if (!tensor) fail_invalid("tensor is NULL");
  if (flags & ~static_cast<uint32_t>(CUABI_DLPACK_IMPORT_READ_ONLY))
    fail_invalid("flags is " + std::to_string(flags) +
                 ": only CUABI_DLPACK_IMPORT_READ_ONLY (1) may be given");
  if (tensor->version.major != CUABI_DLPACK_MAJOR_VERSION)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "tensor.version is " + std::to_string(tensor->version.major) + "." +
             std::to_string(tensor->version.minor) + ": this library reads DLPack " +
             std::to_string(CUABI_DLPACK_MAJOR_VERSION) + ".x tensors");
  if ((tensor->flags & CUABI_DLPACK_FLAG_READ_ONLY) && !(flags & CUABI_DLPACK_IMPORT_READ_ONLY))
    fail_invalid(
        "tensor.flags has CUABI_DLPACK_FLAG_READ_ONLY: the tensor is read-only; pass "
        "CUABI_DLPACK_IMPORT_READ_ONLY to take it for reading");
  if (tensor->flags & CUABI_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED)
    fail(CUABI_ERROR_NOT_SUPPORTED,
         "tensor.flags has CUABI_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED: padded sub-byte types "
         "are not supported");
  // The keeper is made only once every check passed: a refusal leaves the
  // tensor the caller's.
  const cuabi_dlpack_tensor view = tensor->dl_tensor;
  struct Holder {
    cuabi_dlpack_managed_tensor_versioned* t;
    bool armed = false;
    ~Holder() {
      if (armed && t->deleter) t->deleter(t);
    }
  };
  auto holder = std::make_shared<Holder>(Holder{tensor});
  Ref<Buffer> b = import_tensor(view, holder);
  holder->armed = true;
  return b;
}

Ref<Buffer> import_dlpack_unversioned(cuabi_dlpack_managed_tensor* tensor, uint32_t flags) {
  if (!tensor) fail_invalid("tensor is NULL");
  if (flags & ~static_cast<uint32_t>(CUABI_DLPACK_IMPORT_READ_ONLY))
    fail_invalid("flags is " + std::to_string(flags) +
                 ": only CUABI_DLPACK_IMPORT_READ_ONLY (1) may be given");
  const cuabi_dlpack_tensor view = tensor->dl_tensor;
  struct Holder {
    cuabi_dlpack_managed_tensor* t;
    bool armed = false;
    ~Holder() {
      if (armed && t->deleter) t->deleter(t);
    }
  };
  auto holder = std::make_shared<Holder>(Holder{tensor});
  Ref<Buffer> b = import_tensor(view, holder);
  holder->armed = true;
  return b;
}

void dlpack_handoff(const Stream& stream, int64_t consumer_stream) {
  CUstream consumer = raw_stream(consumer_stream, "consumer_stream");
  if (!consumer) return;
  if (consumer == stream.stream) return;  // the same stream is ordered already
  order(stream, stream.stream, consumer);
}

void dlpack_wait(const Stream& stream, int64_t producer_stream) {
  CUstream producer = raw_stream(producer_stream, "producer_stream");
  if (!producer) return;
  if (producer == stream.stream) return;
  order(stream, producer, stream.stream);
}

}  // namespace cuabi
