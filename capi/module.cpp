// Modules (loaded device code), compiling into modules through the cache, and
// functions with the parameter layout the launch checks against.
#include "module.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "cache.hpp"
#include "sha256.hpp"
#include "structs.hpp"
#include "text.hpp"

namespace cuabi {

namespace {

bool is_elf(const void* image, size_t size) {
  return size >= 4 && memcmp(image, "\x7f" "ELF", 4) == 0;
}

bool is_fatbin(const void* image, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(image);
  // A fatbin's little-endian magic 0xBA55ED50, or a fatbin wrapper 0x466243B1.
  return size >= 4 && ((p[0] == 0x50 && p[1] == 0xED && p[2] == 0x55 && p[3] == 0xBA) ||
                       (p[0] == 0xB1 && p[1] == 0x43 && p[2] == 0x62 && p[3] == 0x46));
}

}  // namespace

Module::Module(Ref<Device> dev, const void* image, size_t size) : DeviceChild(kKind, std::move(dev)) {
  if (!image) fail_invalid("image is NULL");
  if (size == 0) fail_invalid("size is 0: an image has at least one byte");
  std::string text;
  const void* data = image;
  if (!is_elf(image, size) && !is_fatbin(image, size)) {
    // PTX text: the driver wants it NUL-terminated; accept it either way.
    const char* p = static_cast<const char*>(image);
    if (memchr(p, '\0', size) == nullptr) {
      text.assign(p, size);
      data = text.c_str();
    }
  }
  enter();
  check(driver().cuModuleLoadData(&module, data), "cuModuleLoadData");
}

Module::~Module() {
  if (enter_quietly(*this)) driver().cuModuleUnload(module);
}

Ref<Module> load_module_file(Ref<Device> device, const char* path) {
  check_name(path, "path");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(CUABI_ERROR_IO, std::string("cannot open '") + path + "': " + strerror(errno), errno);
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      int err = errno;
      close(fd);
      fail(CUABI_ERROR_IO, std::string("cannot read '") + path + "': " + strerror(err), err);
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (bytes.empty()) fail_invalid(std::string("'") + path + "' is empty");
  return make<Module>(std::move(device), bytes.data(), bytes.size());
}

namespace {

bool names_architecture(const char* option) {
  for (const char* prefix : {"-arch", "--gpu-architecture", "--gpu-name"})
    if (strncmp(option, prefix, strlen(prefix)) == 0) return true;
  return false;
}

// The architecture option to add for `device`, or "" when the caller named one.
std::string target_option(const Device& device, const cuabi_compile_desc& d, uint32_t* output) {
  for (size_t i = 0; i < d.num_options; ++i)
    if (names_architecture(d.options[i])) return "";
  const NvrtcApi& n = nvrtc();
  int want = device.cc_major * 10 + device.cc_minor;
  std::string cc = std::to_string(want);
  if (!n.archs.empty() && want > n.archs.back()) {
    *output = CUABI_OUTPUT_PTX;  // let the driver JIT what NVRTC cannot target
    return "--gpu-architecture=compute_" + std::to_string(n.archs.back());
  }
  if (!n.archs.empty() && want < n.archs.front())
    fail(CUABI_ERROR_NOT_SUPPORTED, "NVRTC " + std::to_string(n.major) + "." +
                                        std::to_string(n.minor) + " cannot target sm_" + cc +
                                        " (its oldest target is sm_" +
                                        std::to_string(n.archs.front()) + ")");
  return std::string("--gpu-architecture=") + (*output == CUABI_OUTPUT_PTX ? "compute_" : "sm_") +
         cc;
}

CacheKey key_of(const cuabi_compile_desc& d, const std::string& target, uint32_t output) {
  const NvrtcApi& n = nvrtc();
  Sha256 h;
  h.field(std::string("cuabi compile cache 1"));
  h.field(std::string(CUABI_VERSION_STRING));
  h.field(std::to_string(n.major) + "." + std::to_string(n.minor));
  h.field(std::to_string(driver_version()));
  h.field(std::string(d.source));
  h.field(std::string(d.name ? d.name : ""));
  h.field(std::to_string(d.num_headers));
  for (size_t i = 0; i < d.num_headers; ++i) {
    h.field(std::string(d.header_names[i]));
    h.field(std::string(d.header_sources[i]));
  }
  h.field(std::to_string(d.num_options));
  for (size_t i = 0; i < d.num_options; ++i) h.field(std::string(d.options[i]));
  h.field(std::to_string(d.num_name_expressions));
  for (size_t i = 0; i < d.num_name_expressions; ++i) h.field(std::string(d.name_expressions[i]));
  h.field(std::to_string(output));
  h.field(target);
  return h.digest();
}

void check_strings(const char* const* list, size_t count, const char* what) {
  if (count > 0 && !list)
    fail_invalid(std::string(what) + " is NULL but its count is " + std::to_string(count));
  if (count > (1u << 20)) fail_invalid(std::string(what) + ": count is implausibly large");
  for (size_t i = 0; i < count; ++i)
    if (!list[i]) fail_invalid(std::string(what) + "[" + std::to_string(i) + "] is NULL");
}

}  // namespace

Ref<Module> compile_module(Ref<Device> device, const cuabi_compile_desc* desc) {
  if (!desc) fail_invalid("desc is NULL");
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  read_struct(desc, &d, "desc");
  if (!d.source) fail_invalid("desc->source is NULL");
  check_strings(d.options, d.num_options, "desc->options");
  check_strings(d.header_sources, d.num_headers, "desc->header_sources");
  check_strings(d.header_names, d.num_headers, "desc->header_names");
  check_strings(d.name_expressions, d.num_name_expressions, "desc->name_expressions");
  if (d.output != CUABI_OUTPUT_CUBIN && d.output != CUABI_OUTPUT_PTX)
    fail_invalid("desc->output is " + std::to_string(d.output) +
                 "; expected CUABI_OUTPUT_CUBIN or CUABI_OUTPUT_PTX");
  if (d.flags & ~static_cast<uint32_t>(CUABI_COMPILE_NO_CACHE))
    fail_invalid("desc->flags has bits this version does not define: " + std::to_string(d.flags));

  uint32_t output = static_cast<uint32_t>(d.output);
  std::string target = target_option(*device, d, &output);
  std::string dir = (d.flags & CUABI_COMPILE_NO_CACHE) ? std::string() : cache_dir();
  CacheKey key{};
  if (!dir.empty()) {
    key = key_of(d, target, output);
    if (std::optional<CacheEntry> hit = cache_load(dir, key)) {
      Ref<Module> m = make<Module>(device, hit->image.data(), hit->image.size());
      m->from_cache = true;
      m->lowered = std::move(hit->lowered);
      return m;
    }
  }

  Program program(d.source, d.name, d.num_headers, d.header_sources, d.header_names);
  for (size_t i = 0; i < d.num_name_expressions; ++i)
    program.add_name_expression(d.name_expressions[i]);
  std::vector<const char*> options(d.options, d.options + d.num_options);
  if (!target.empty()) options.push_back(target.c_str());
  program.compile(options.size(), options.data());

  CacheEntry entry;
  if (output == CUABI_OUTPUT_CUBIN && !program.cubin.empty()) {
    entry.output = CUABI_OUTPUT_CUBIN;
    entry.image = program.cubin;
  } else if (!program.ptx.empty()) {
    entry.output = CUABI_OUTPUT_PTX;
    entry.image = program.ptx;
  } else {
    fail(CUABI_ERROR_NVRTC, "NVRTC produced neither CUBIN nor PTX for these options");
  }
  entry.lowered = program.lowered;
  Ref<Module> m = make<Module>(device, entry.image.data(), entry.image.size());
  m->lowered = entry.lowered;
  // Only an image that loaded is worth keeping.
  if (!dir.empty()) cache_store(dir, key, entry);
  return m;
}

Function::Function(Ref<Module> mod, std::string fname, CUfunction fn)
    : Object(kKind), module(std::move(mod)), name(std::move(fname)), function(fn) {
  const DriverApi& d = driver();
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = d.cuFuncGetParamInfo(function, i, &offset, &size);
    if (r == CUDA_ERROR_NOT_SUPPORTED && t_missing_entry_point) {
      t_missing_entry_point = nullptr;  // older driver: launches run unchecked
      params.clear();
      break;
    }
    if (r != CUDA_SUCCESS) {
      params_known = true;
      break;
    }
    params.push_back({offset, size});
  }
  args_size = params.empty() ? 0 : params.back().offset + params.back().size;
  int value = 0;
  check(d.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
        "cuFuncGetAttribute");
  max_threads = static_cast<uint32_t>(value);
  check(d.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function),
        "cuFuncGetAttribute");
  max_dynamic_shared = static_cast<uint32_t>(value);
}

Ref<Function> get_function(const Module& module, const char* name) {
  check_name(name, "name");
  std::string symbol = name;
  auto it = module.lowered.find(symbol);
  if (it != module.lowered.end()) symbol = it->second;
  module.enter();
  CUfunction fn = nullptr;
  CUresult r = driver().cuModuleGetFunction(&fn, module.module, symbol.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    fail(CUABI_ERROR_NOT_FOUND,
         std::string("the module has no kernel named '") + name + "'" +
             (symbol != name ? " (lowered: '" + symbol + "')" : std::string()) +
             "; C++ kernels need extern \"C\" or a name expression given at compile time",
         r);
  check(r, "cuModuleGetFunction");
  return Ref<Function>::adopt(new Function(Ref<Module>::share(const_cast<Module*>(&module)),
                                           name, fn));
}

}  // namespace cuabi
