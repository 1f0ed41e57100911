// Tensor maps. The driver answers every mistake in a tensor map's
// description with a bare CUDA_ERROR_INVALID_VALUE; each is checked here
// first, with the value and its bound in the message: the rank, the address's
// alignment, the tensor's extent within the buffer, sizes, stride multiples
// and order, box limits, the swizzle against the box's inner size, element
// steps, interleave and fill against the type, im2col corners and pixels.
#include "tensor_map.hpp"

#include <string>

namespace cuabi {

namespace {

constexpr uint64_t kMaxSize = 1ull << 32;
constexpr uint64_t kMaxStride = 1ull << 40;

const char* kTypeNames[] = {"CUABI_TENSOR_UINT8",    "CUABI_TENSOR_UINT16",
                            "CUABI_TENSOR_UINT32",   "CUABI_TENSOR_INT32",
                            "CUABI_TENSOR_UINT64",   "CUABI_TENSOR_INT64",
                            "CUABI_TENSOR_FLOAT16",  "CUABI_TENSOR_FLOAT32",
                            "CUABI_TENSOR_FLOAT64",  "CUABI_TENSOR_BFLOAT16",
                            "CUABI_TENSOR_FLOAT32_FTZ", "CUABI_TENSOR_TFLOAT32",
                            "CUABI_TENSOR_TFLOAT32_FTZ"};
const uint32_t kTypeBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};

std::string idx(const char* name, size_t i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}

template <class T>
void need_count(const char* name, Span<T> a, size_t count) {
  if (a.size != count)
    fail_invalid(std::string(name) + " has " + std::to_string(a.size) + " entries, not " +
                 std::to_string(count) + ", one per dimension");
  if (count && !a.data) fail_invalid(std::string(name) + " is NULL");
}

uint32_t element_bytes(int32_t type) {
  if (type < CUABI_TENSOR_UINT8 || type > CUABI_TENSOR_TFLOAT32_FTZ)
    fail_invalid("data_type is " + std::to_string(type) +
                 ", not one of CUABI_TENSOR_UINT8 (0) to CUABI_TENSOR_TFLOAT32_FTZ (12)");
  return kTypeBytes[type];
}

bool is_float(int32_t type) {
  return type >= CUABI_TENSOR_FLOAT16;  // FLOAT16 (6) to TFLOAT32_FTZ (12)
}

void check_enums(int32_t type, int32_t interleave, int32_t swizzle, int32_t l2, int32_t oob,
                 size_t rank) {
  if (interleave < CUABI_TENSOR_INTERLEAVE_NONE || interleave > CUABI_TENSOR_INTERLEAVE_B32)
    fail_invalid("interleave is " + std::to_string(interleave) +
                 ", not one of CUABI_TENSOR_INTERLEAVE_NONE (0), _B16 (1), _B32 (2)");
  if (swizzle < CUABI_TENSOR_SWIZZLE_NONE || swizzle > CUABI_TENSOR_SWIZZLE_B128)
    fail_invalid("swizzle is " + std::to_string(swizzle) +
                 ", not one of CUABI_TENSOR_SWIZZLE_NONE (0), _B32 (1), _B64 (2), _B128 (3)");
  if (l2 < CUABI_TENSOR_L2_PROMOTION_NONE || l2 > CUABI_TENSOR_L2_PROMOTION_B256)
    fail_invalid("l2_promotion is " + std::to_string(l2) +
                 ", not one of CUABI_TENSOR_L2_PROMOTION_NONE (0), _B64 (1), _B128 (2), _B256 (3)");
  if (oob != CUABI_TENSOR_OOB_FILL_ZERO && oob != CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    fail_invalid("oob_fill is " + std::to_string(oob) +
                 ", not one of CUABI_TENSOR_OOB_FILL_ZERO (0), _NAN_REQUEST_ZERO_FMA (1)");
  if (oob == CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA && !is_float(type))
    fail_invalid(std::string("oob_fill CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA needs a "
                             "floating-point data_type, not ") +
                 kTypeNames[type]);
  if (interleave != CUABI_TENSOR_INTERLEAVE_NONE && rank < 3)
    fail_invalid("rank " + std::to_string(rank) + " is below 3, the least an interleaved layout has");
  if (interleave == CUABI_TENSOR_INTERLEAVE_B32 && swizzle != CUABI_TENSOR_SWIZZLE_B32)
    fail_invalid("interleave CUABI_TENSOR_INTERLEAVE_B32 needs swizzle CUABI_TENSOR_SWIZZLE_B32");
}

// The sizes and strides; fills `layout`. Returns the bytes the tensor spans.
uint64_t check_layout(TensorLayout& layout, int32_t type, size_t rank, const size_t* sizes,
                      const size_t* strides, int32_t interleave) {
  const uint32_t eb = element_bytes(type);
  layout.data_type = type;
  layout.rank = rank;
  layout.interleave = interleave;
  const uint64_t multiple = interleave == CUABI_TENSOR_INTERLEAVE_B32 ? 32 : 16;
  for (size_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0 || sizes[i] > kMaxSize)
      fail_invalid(idx("sizes", i) + " is " + std::to_string(sizes[i]) + ", not within 1 to 2^32");
    layout.sizes[i] = sizes[i];
  }
  if (strides[0] != eb)
    fail_invalid("strides[0] is " + std::to_string(strides[0]) + ", not " + std::to_string(eb) +
                 ", the element size of " + kTypeNames[type] +
                 " (dimension 0 is the innermost and dense)");
  layout.strides[0] = eb;
  uint64_t span = sizes[0] * eb;  // bytes one step of the next dimension must cover
  for (size_t i = 1; i < rank; ++i) {
    const uint64_t s = strides[i];
    if (s % multiple != 0)
      fail_invalid(idx("strides", i) + " is " + std::to_string(s) + " bytes, not a multiple of " +
                   std::to_string(multiple));
    if (s >= kMaxStride)
      fail_invalid(idx("strides", i) + " is " + std::to_string(s) + " bytes, not below 2^40");
    if (s < span)
      fail_invalid(idx("strides", i) + " is " + std::to_string(s) + " bytes, less than the " +
                   std::to_string(span) + " bytes dimension " + std::to_string(i - 1) + " spans");
    layout.strides[i] = s;
    span = s * sizes[i];
  }
  return span;
}

void check_address(const Buffer& buffer, size_t offset, const TensorLayout& layout,
                   uint64_t span) {
  const uint64_t align = layout.interleave == CUABI_TENSOR_INTERLEAVE_B32 ? 32 : 16;
  const uint64_t address = buffer.ptr + offset;
  if (address % align != 0)
    fail_invalid("the tensor's address (buffer + offset " + std::to_string(offset) +
                 ") is not " + std::to_string(align) + "-byte aligned");
  if (offset > buffer.size || span > buffer.size - offset)
    fail_invalid("the tensor spans " + std::to_string(span) + " bytes from offset " +
                 std::to_string(offset) + ", past the buffer's " + std::to_string(buffer.size) +
                 " bytes");
}

void check_rank(size_t rank, size_t least) {
  if (rank < least || rank > 5)
    fail_invalid("rank (num_sizes) is " + std::to_string(rank) + ", not within " +
                 std::to_string(least) + " to 5");
}

void element_steps(Span<size_t> given, size_t rank, cuuint32_t* out) {
  if (given.size != 0) need_count("element_strides", given, rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t e = given.size ? given.data[i] : 1;
    if (e == 0 || e > 8)
      fail_invalid(idx("element_strides", i) + " is " + std::to_string(e) + ", not within 1 to 8");
    out[i] = e;
  }
}

void check_swizzle_inner(int32_t interleave, int32_t swizzle, uint64_t inner_bytes,
                         const char* what) {
  if (interleave != CUABI_TENSOR_INTERLEAVE_NONE || swizzle == CUABI_TENSOR_SWIZZLE_NONE) return;
  const uint64_t span = 16ull << swizzle;  // 32, 64, 128
  if (inner_bytes > span)
    fail_invalid(std::string(what) + " is " + std::to_string(inner_bytes) +
                 " bytes, more than the " + std::to_string(span) + "-byte span of swizzle " +
                 std::to_string(span) + "B");
}

const DriverApi& enter_buffer(const Buffer& b) {
  if (b.freed.load(std::memory_order_acquire))
    fail_invalid("buffer was freed (cuabi_buffer_free_async)");
  return b.enter();
}

}  // namespace

Ref<TensorMap> encode_tiled(Ref<Buffer> buffer, size_t offset, const TiledArgs& a) {
  const size_t rank = a.sizes.size;
  check_rank(rank, 1);
  const uint32_t eb = element_bytes(a.data_type);
  check_enums(a.data_type, a.interleave, a.swizzle, a.l2_promotion, a.oob_fill, rank);
  need_count("sizes", a.sizes, rank);
  need_count("strides", a.strides, rank);
  need_count("box", a.box, rank);
  Ref<TensorMap> m = make<TensorMap>();
  const uint64_t span =
      check_layout(m->layout, a.data_type, rank, a.sizes.data, a.strides.data, a.interleave);
  cuuint32_t box[5], steps[5];
  for (size_t i = 0; i < rank; ++i) {
    const size_t v = a.box.data[i];
    if (v == 0 || v > 256)
      fail_invalid(idx("box", i) + " is " + std::to_string(v) + ", not within 1 to 256");
    box[i] = static_cast<cuuint32_t>(v);
  }
  const uint64_t inner = uint64_t{box[0]} * eb;
  if (a.interleave == CUABI_TENSOR_INTERLEAVE_NONE && inner % 16 != 0)
    fail_invalid("box[0] x the element size is " + std::to_string(inner) +
                 " bytes, not a multiple of 16");
  check_swizzle_inner(a.interleave, a.swizzle, inner, "box[0] x the element size");
  element_steps(a.element_strides, rank, steps);
  check_address(*buffer, offset, m->layout, span);
  const DriverApi& d = enter_buffer(*buffer);
  cuuint64_t dims[5], strides[4];
  for (size_t i = 0; i < rank; ++i) dims[i] = a.sizes.data[i];
  for (size_t i = 1; i < rank; ++i) strides[i - 1] = a.strides.data[i];
  check(d.cuTensorMapEncodeTiled(
            &m->map, static_cast<CUtensorMapDataType>(a.data_type),
            static_cast<cuuint32_t>(rank), reinterpret_cast<void*>(buffer->ptr + offset), dims,
            strides, box, steps, static_cast<CUtensorMapInterleave>(a.interleave),
            static_cast<CUtensorMapSwizzle>(a.swizzle),
            static_cast<CUtensorMapL2promotion>(a.l2_promotion),
            static_cast<CUtensorMapFloatOOBfill>(a.oob_fill)),
        "cuTensorMapEncodeTiled");
  m->buffer = std::move(buffer);
  return m;
}

Ref<TensorMap> encode_im2col(Ref<Buffer> buffer, size_t offset, const Im2colArgs& a) {
  const size_t rank = a.sizes.size;
  check_rank(rank, 3);
  const uint32_t eb = element_bytes(a.data_type);
  check_enums(a.data_type, a.interleave, a.swizzle, a.l2_promotion, a.oob_fill, rank);
  need_count("sizes", a.sizes, rank);
  need_count("strides", a.strides, rank);
  Ref<TensorMap> m = make<TensorMap>();
  const uint64_t span =
      check_layout(m->layout, a.data_type, rank, a.sizes.data, a.strides.data, a.interleave);
  const size_t spatial = rank - 2;
  if (a.lower_corner.size != spatial)
    fail_invalid("lower_corner has " + std::to_string(a.lower_corner.size) +
                 " entries, not rank - 2 = " + std::to_string(spatial));
  if (a.upper_corner.size != spatial)
    fail_invalid("upper_corner has " + std::to_string(a.upper_corner.size) +
                 " entries, not rank - 2 = " + std::to_string(spatial));
  if (!a.lower_corner.data) fail_invalid("lower_corner is NULL");
  if (!a.upper_corner.data) fail_invalid("upper_corner is NULL");
  const int bits = rank == 3 ? 16 : rank == 4 ? 8 : 5;
  const int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  int lower[3], upper[3];
  for (size_t i = 0; i < spatial; ++i) {
    lower[i] = a.lower_corner.data[i];
    upper[i] = a.upper_corner.data[i];
    for (const auto& [name, v] : {std::pair<const char*, int32_t>{"lower_corner", lower[i]},
                                  {"upper_corner", upper[i]}}) {
      if (v < lo || v > hi)
        fail_invalid(idx(name, i) + " is " + std::to_string(v) + ", not within " +
                     std::to_string(lo) + " to " + std::to_string(hi) + " for rank " +
                     std::to_string(rank));
    }
  }
  if (a.channels_per_pixel == 0 || a.channels_per_pixel > 256)
    fail_invalid("channels_per_pixel is " + std::to_string(a.channels_per_pixel) +
                 ", not within 1 to 256");
  if (a.pixels_per_column == 0 || a.pixels_per_column > 1024)
    fail_invalid("pixels_per_column is " + std::to_string(a.pixels_per_column) +
                 ", not within 1 to 1024");
  const uint64_t inner = uint64_t{a.channels_per_pixel} * eb;
  if (a.interleave == CUABI_TENSOR_INTERLEAVE_NONE && inner % 16 != 0)
    fail_invalid("channels_per_pixel x the element size is " + std::to_string(inner) +
                 " bytes, not a multiple of 16");
  check_swizzle_inner(a.interleave, a.swizzle, inner, "channels_per_pixel x the element size");
  cuuint32_t steps[5];
  element_steps(a.element_strides, rank, steps);
  check_address(*buffer, offset, m->layout, span);
  const DriverApi& d = enter_buffer(*buffer);
  cuuint64_t dims[5], strides[4];
  for (size_t i = 0; i < rank; ++i) dims[i] = a.sizes.data[i];
  for (size_t i = 1; i < rank; ++i) strides[i - 1] = a.strides.data[i];
  check(d.cuTensorMapEncodeIm2col(
            &m->map, static_cast<CUtensorMapDataType>(a.data_type),
            static_cast<cuuint32_t>(rank), reinterpret_cast<void*>(buffer->ptr + offset), dims,
            strides, lower, upper, a.channels_per_pixel, a.pixels_per_column, steps,
            static_cast<CUtensorMapInterleave>(a.interleave),
            static_cast<CUtensorMapSwizzle>(a.swizzle),
            static_cast<CUtensorMapL2promotion>(a.l2_promotion),
            static_cast<CUtensorMapFloatOOBfill>(a.oob_fill)),
        "cuTensorMapEncodeIm2col");
  m->buffer = std::move(buffer);
  return m;
}

void replace_address(TensorMap& map, Ref<Buffer> buffer, size_t offset) {
  const TensorLayout& l = map.layout;
  const uint64_t span = l.strides[l.rank - 1] * l.sizes[l.rank - 1];
  check_address(*buffer, offset, l, span);
  if (map.buffer && buffer->device.get() != map.buffer->device.get())
    fail_invalid("buffer is on device " + std::to_string(buffer->device->ordinal) +
                 "; the map was made for device " + std::to_string(map.buffer->device->ordinal));
  const DriverApi& d = enter_buffer(*buffer);
  CUtensorMap updated = map.map;
  check(d.cuTensorMapReplaceAddress(&updated, reinterpret_cast<void*>(buffer->ptr + offset)),
        "cuTensorMapReplaceAddress");
  map.map = updated;
  map.buffer = std::move(buffer);
}

}  // namespace cuabi
