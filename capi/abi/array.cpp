// Shims for arrays, texture and surface objects, and copies in three
// dimensions.
#include "memory.hpp"

#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

namespace {

// Pins (for the call) whatever handles one side of a 3D copy names.
struct PinnedSide {
  PinnedSide(const char* name, const void* host, cuabi_buffer buffer, cuabi_array array,
             size_t x, size_t y, size_t z, size_t pitch, size_t height)
      : buffer_pin(buffer, name == std::string("src") ? "desc->src_buffer" : "desc->dst_buffer",
                   true),
        array_pin(array, name == std::string("src") ? "desc->src_array" : "desc->dst_array",
                  true),
        side{name, host, buffer_pin.get(), array_pin.get(), x, y, z, pitch, height} {}
  Pin<Buffer> buffer_pin;
  Pin<Array> array_pin;
  CopySide side;
};

void copy_3d_call(const cuabi_copy_3d_desc* given, const Pin<Stream>* stream) {
  need(given, "desc");
  cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
  read_struct(given, &d, "desc");
  PinnedSide src("src", d.src_host, d.src_buffer, d.src_array, d.src_x_bytes, d.src_y, d.src_z,
                 d.src_pitch, d.src_height);
  PinnedSide dst("dst", d.dst_host, d.dst_buffer, d.dst_array, d.dst_x_bytes, d.dst_y, d.dst_z,
                 d.dst_pitch, d.dst_height);
  copy_3d(src.side, dst.side, d.width_bytes, d.height, d.depth, stream);
}

}  // namespace

extern "C" {

cuabi_status cuabi_copy_3d_desc_init(cuabi_copy_3d_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_copy_3d_desc defaults = CUABI_COPY_3D_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

cuabi_status cuabi_copy_3d(const cuabi_copy_3d_desc* desc) {
  return guard(__func__, [&] { copy_3d_call(desc, nullptr); });
}

cuabi_status cuabi_copy_3d_async(const cuabi_copy_3d_desc* desc, cuabi_stream stream) {
  return guard(__func__, [&] {
    Pin<Stream> s(stream, "stream", true);
    copy_3d_call(desc, &s);
  });
}

cuabi_status cuabi_array_desc_init(cuabi_array_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_array_desc defaults = CUABI_ARRAY_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

cuabi_status cuabi_array_create(cuabi_device device, const cuabi_array_desc* desc,
                                cuabi_array* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    need(desc, "desc");
    cuabi_array_desc read = CUABI_ARRAY_DESC_INIT;
    read_struct(desc, &read, "desc");
    return create_array(std::move(d), &read);
  });
}

void cuabi_array_release(cuabi_array array) { release_handle<Array>(array); }

cuabi_status cuabi_array_get_desc(cuabi_array array, cuabi_array_desc* desc) {
  return with(__func__, array, "array", [&](Array& a) {
    need(desc, "desc");
    check_struct_size<cuabi_array_desc>(desc->struct_size, "desc->struct_size");
    const size_t size = desc->struct_size;
    init_struct(desc, size, a.desc, "desc");
  });
}

cuabi_status cuabi_array_get_element_size(cuabi_array array, size_t* bytes) {
  return get(__func__, array, "array", bytes, "bytes",
             [](const Array& a) { return a.element_size(); });
}

cuabi_status cuabi_array_get_handle(cuabi_array array, uint64_t* cu_array) {
  return get(__func__, array, "array", cu_array, "cu_array",
             [](const Array& a) { return reinterpret_cast<uint64_t>(a.array); });
}

cuabi_status cuabi_texture_desc_init(cuabi_texture_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_texture_desc defaults = CUABI_TEXTURE_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

cuabi_status cuabi_texture_create(const cuabi_texture_desc* desc, cuabi_texture* out) {
  return create(__func__, out, [&] {
    need(desc, "desc");
    cuabi_texture_desc t = CUABI_TEXTURE_DESC_INIT;
    read_struct(desc, &t, "desc");
    Ref<Array> array = t.array ? acquire<Array>(t.array, "desc->array") : Ref<Array>();
    Ref<Buffer> buffer = t.buffer ? acquire<Buffer>(t.buffer, "desc->buffer") : Ref<Buffer>();
    return create_texture(t, std::move(array), std::move(buffer));
  });
}

void cuabi_texture_release(cuabi_texture texture) { release_handle<Texture>(texture); }

cuabi_status cuabi_texture_get_handle(cuabi_texture texture, uint64_t* tex_object) {
  return get(__func__, texture, "texture", tex_object, "tex_object",
             [](const Texture& t) { return static_cast<uint64_t>(t.texture); });
}

cuabi_status cuabi_surface_create(cuabi_array array, cuabi_surface* out) {
  return create(__func__, array, "array", out,
                [&](Ref<Array> a) { return create_surface(std::move(a)); });
}

void cuabi_surface_release(cuabi_surface surface) { release_handle<Surface>(surface); }

cuabi_status cuabi_surface_get_handle(cuabi_surface surface, uint64_t* surf_object) {
  return get(__func__, surface, "surface", surf_object, "surf_object",
             [](const Surface& s) { return static_cast<uint64_t>(s.surface); });
}

}  // extern "C"
