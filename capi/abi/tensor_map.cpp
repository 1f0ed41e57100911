// Shims for tensor maps.
#include "tensor_map.hpp"

#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_tensor_map_encode_tiled(
    cuabi_buffer buffer, size_t offset, cuabi_tensor_data_type data_type, const size_t* sizes,
    size_t num_sizes, const size_t* strides, size_t num_strides, const size_t* box,
    size_t num_box, const size_t* element_strides, size_t num_element_strides,
    cuabi_tensor_interleave interleave, cuabi_tensor_swizzle swizzle,
    cuabi_tensor_l2_promotion l2_promotion, cuabi_tensor_oob_fill oob_fill,
    cuabi_tensor_map* out) {
  return create(__func__, buffer, "buffer", out, [&](Ref<Buffer> b) {
    const TiledArgs a{static_cast<int32_t>(data_type),
                      {sizes, num_sizes},
                      {strides, num_strides},
                      {box, num_box},
                      {element_strides, num_element_strides},
                      static_cast<int32_t>(interleave),
                      static_cast<int32_t>(swizzle),
                      static_cast<int32_t>(l2_promotion),
                      static_cast<int32_t>(oob_fill)};
    return encode_tiled(std::move(b), offset, a);
  });
}

cuabi_status cuabi_tensor_map_encode_im2col(
    cuabi_buffer buffer, size_t offset, cuabi_tensor_data_type data_type, const size_t* sizes,
    size_t num_sizes, const size_t* strides, size_t num_strides, const size_t* element_strides,
    size_t num_element_strides, const int32_t* lower_corner, size_t num_lower_corner,
    const int32_t* upper_corner, size_t num_upper_corner, uint32_t channels_per_pixel,
    uint32_t pixels_per_column, cuabi_tensor_interleave interleave, cuabi_tensor_swizzle swizzle,
    cuabi_tensor_l2_promotion l2_promotion, cuabi_tensor_oob_fill oob_fill,
    cuabi_tensor_map* out) {
  return create(__func__, buffer, "buffer", out, [&](Ref<Buffer> b) {
    const Im2colArgs a{static_cast<int32_t>(data_type),
                       {sizes, num_sizes},
                       {strides, num_strides},
                       {element_strides, num_element_strides},
                       {lower_corner, num_lower_corner},
                       {upper_corner, num_upper_corner},
                       channels_per_pixel,
                       pixels_per_column,
                       static_cast<int32_t>(interleave),
                       static_cast<int32_t>(swizzle),
                       static_cast<int32_t>(l2_promotion),
                       static_cast<int32_t>(oob_fill)};
    return encode_im2col(std::move(b), offset, a);
  });
}

void cuabi_tensor_map_release(cuabi_tensor_map map) { release_handle<TensorMap>(map); }

cuabi_status cuabi_tensor_map_replace_address(cuabi_tensor_map map, cuabi_buffer buffer,
                                              size_t offset) {
  return guard(__func__, [&] {
    Pin<TensorMap> m(map, "map");
    Ref<Buffer> b = acquire<Buffer>(buffer, "buffer");
    replace_address(*m.get(), std::move(b), offset);
  });
}

cuabi_status cuabi_tensor_map_get_bytes(cuabi_tensor_map map, void* buf, size_t* size) {
  return guard(__func__, [&] {
    Pin<TensorMap> m(map, "map");
    copy_out(&m->map, sizeof(CUtensorMap), buf, size);
  });
}

}  // extern "C"
