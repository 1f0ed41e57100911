// Linking several device images into one (nvJitLink, or the driver's
// cuLink* where nvJitLink is absent), and libraries (cuLibrary*).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "objects.hpp"

namespace cuabi {

class Linker : public DeviceChild {
 public:
  static constexpr Kind kKind = Kind::Linker;
  Linker(Ref<Device> device, const cuabi_link_desc& desc);

  // Adds an input (copied); AUTO is resolved from the bytes or `path`.
  void add(cuabi_link_input kind, std::string bytes, const char* name, const char* path);
  void add_program(const Program& program);
  Ref<Module> link();

  cuabi_link_backend backend;  // resolved: NVJITLINK or DRIVER
  std::mutex mutex;
  std::string log;
  std::string image;  // the linked CUBIN once linked

 private:
  struct Input {
    cuabi_link_input kind;
    std::string name;
    std::string bytes;
  };
  uint32_t flags_;
  std::vector<std::string> options_;
  std::vector<Input> inputs_;
  bool linked_ = false;
};

class Library : public Object {
 public:
  static constexpr Kind kKind = Kind::Library;
  Library(const void* image, size_t size);
  ~Library() override;
  CUlibrary library = nullptr;
};

Ref<Module> library_module(Ref<Library> library, Ref<Device> device);

// Reads a whole file; IO with the path and errno's text when it cannot.
std::string read_file(const char* path);

}  // namespace cuabi
