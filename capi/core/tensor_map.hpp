// Tensor maps (TMA descriptors) over cuabi buffers (cuTensorMapEncodeTiled,
// cuTensorMapEncodeIm2col, cuTensorMapReplaceAddress).
#pragma once

#include "objects.hpp"

namespace cuabi {

struct TensorLayout {
  int32_t data_type = 0;
  size_t rank = 0;
  uint64_t sizes[5] = {};
  uint64_t strides[5] = {};  // in bytes; strides[0] the element size
  int32_t interleave = 0;
};

class TensorMap : public Object {
 public:
  static constexpr Kind kKind = Kind::TensorMap;
  TensorMap() : Object(kKind) {}
  CUtensorMap map{};  // 128-byte aligned by its own type
  TensorLayout layout;
  Ref<Buffer> buffer;
};

// Each array with its entry count, as the C API takes them.
template <class T>
struct Span {
  const T* data;
  size_t size;
};

struct TiledArgs {
  int32_t data_type;
  Span<size_t> sizes, strides, box, element_strides;  // element_strides: none = all 1
  int32_t interleave, swizzle, l2_promotion, oob_fill;
};

struct Im2colArgs {
  int32_t data_type;
  Span<size_t> sizes, strides, element_strides;
  Span<int32_t> lower_corner, upper_corner;
  uint32_t channels_per_pixel, pixels_per_column;
  int32_t interleave, swizzle, l2_promotion, oob_fill;
};

Ref<TensorMap> encode_tiled(Ref<Buffer> buffer, size_t offset, const TiledArgs& a);
Ref<TensorMap> encode_im2col(Ref<Buffer> buffer, size_t offset, const Im2colArgs& a);
void replace_address(TensorMap& map, Ref<Buffer> buffer, size_t offset);

}  // namespace cuabi
