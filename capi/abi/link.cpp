// Shims for linkers and libraries.
#include "link.hpp"

#include "shim.hpp"
#include "structs.hpp"

using namespace cuabi;
using namespace cuabi::abi;

extern "C" {

cuabi_status cuabi_link_desc_init(cuabi_link_desc* desc, size_t struct_size) {
  return guard(__func__, [&] {
    const cuabi_link_desc defaults = CUABI_LINK_DESC_INIT;
    init_struct(desc, struct_size, defaults, "desc");
  });
}

cuabi_status cuabi_linker_create(cuabi_device device, const cuabi_link_desc* desc,
                                 cuabi_linker* out) {
  return create(__func__, device, "device", out, [&](Ref<Device> d) {
    cuabi_link_desc read = CUABI_LINK_DESC_INIT;
    if (desc) read_struct(desc, &read, "desc");
    return make<Linker>(std::move(d), read);
  });
}

void cuabi_linker_release(cuabi_linker linker) { release_handle<Linker>(linker); }

cuabi_status cuabi_linker_get_backend(cuabi_linker linker, cuabi_link_backend* backend) {
  return get(__func__, linker, "linker", backend, "backend", &Linker::backend);
}

cuabi_status cuabi_linker_add_data(cuabi_linker linker, cuabi_link_input kind, const void* data,
                                   size_t size, const char* name) {
  return with(__func__, linker, "linker", [&](Linker& l) {
    if (!data) fail_invalid("data is NULL");
    if (size == 0) fail_invalid("size is 0");
    l.add(kind, std::string(static_cast<const char*>(data), size), name, nullptr);
  });
}

cuabi_status cuabi_linker_add_file(cuabi_linker linker, cuabi_link_input kind, const char* path) {
  return with(__func__, linker, "linker",
              [&](Linker& l) { l.add(kind, read_file(path), nullptr, path); });
}

cuabi_status cuabi_linker_add_program(cuabi_linker linker, cuabi_program program) {
  return guard(__func__, [&] {
    Pin<Linker> l(linker, "linker");
    Pin<Program> p(program, "program");
    l->add_program(*p.get());
  });
}

cuabi_status cuabi_linker_link(cuabi_linker linker, cuabi_module* out) {
  return guard(__func__, [&] {
    Ref<Linker> l = acquire<Linker>(linker, "linker");
    need(out, "out");
    *out = publish<cuabi_module>(l->link());
  });
}

cuabi_status cuabi_linker_get_log(cuabi_linker linker, char* buf, size_t* size) {
  return with(__func__, linker, "linker", [&](Linker& l) {
    std::lock_guard<std::mutex> lock(l.mutex);
    copy_string(l.log, buf, size);
  });
}

cuabi_status cuabi_linker_get_image(cuabi_linker linker, void* buf, size_t* size) {
  return with(__func__, linker, "linker", [&](Linker& l) {
    std::lock_guard<std::mutex> lock(l.mutex);
    need(size, "size");
    if (l.image.empty()) fail(CUABI_ERROR_NOT_FOUND, "the linker has not linked successfully");
    copy_out(l.image.data(), l.image.size(), buf, size);
  });
}

cuabi_status cuabi_library_load_data(const void* image, size_t size, cuabi_library* out) {
  return create(__func__, out, [&] { return make<Library>(image, size); });
}

cuabi_status cuabi_library_load_file(const char* path, cuabi_library* out) {
  return create(__func__, out, [&] {
    const std::string bytes = read_file(path);
    return make<Library>(bytes.data(), bytes.size());
  });
}

void cuabi_library_release(cuabi_library library) { release_handle<Library>(library); }

cuabi_status cuabi_library_get_module(cuabi_library library, cuabi_device device,
                                      cuabi_module* out) {
  return guard(__func__, [&] {
    Ref<Library> l = acquire<Library>(library, "library");
    Ref<Device> d = acquire<Device>(device, "device");
    need(out, "out");
    *out = publish<cuabi_module>(library_module(std::move(l), std::move(d)));
  });
}

}  // extern "C"
