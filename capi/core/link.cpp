#include "link.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <nvJitLink.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cache.hpp"
#include "dl.hpp"
#include "driver_log.hpp"
#include "fork_guard.hpp"
#include "module.hpp"
#include "sha256.hpp"
#include "structs.hpp"
#include "text.hpp"

namespace cuabi {

namespace {

// ---------------------------------------------------------------------------
// nvJitLink, opened with dlopen on first use
// ---------------------------------------------------------------------------

struct JitLinkApi {
  nvJitLinkResult (*create)(nvJitLinkHandle*, uint32_t, const char**) = nullptr;
  nvJitLinkResult (*destroy)(nvJitLinkHandle*) = nullptr;
  nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void*, size_t,
                              const char*) = nullptr;
  nvJitLinkResult (*complete)(nvJitLinkHandle) = nullptr;
  nvJitLinkResult (*cubin_size)(nvJitLinkHandle, size_t*) = nullptr;
  nvJitLinkResult (*cubin)(nvJitLinkHandle, void*) = nullptr;
  nvJitLinkResult (*error_log_size)(nvJitLinkHandle, size_t*) = nullptr;
  nvJitLinkResult (*error_log)(nvJitLinkHandle, char*) = nullptr;
  nvJitLinkResult (*info_log_size)(nvJitLinkHandle, size_t*) = nullptr;
  nvJitLinkResult (*info_log)(nvJitLinkHandle, char*) = nullptr;
  nvJitLinkResult (*version)(unsigned*, unsigned*) = nullptr;
  std::string path;
  unsigned major = 0, minor = 0;
};

struct JitLinkState {
  std::once_flag once;
  JitLinkApi api;
  bool ok = false;
  std::string message;
};

JitLinkState& jit_state() {
  static JitLinkState* s = new JitLinkState();  // never destroyed: used until exit
  return *s;
}

const int kJitLinkVersions[] = {14, 13, 12};

void load_jitlink(JitLinkState& s) {
  std::string tried;
  void* lib = open_toolkit_library("libnvJitLink.so.", "CUABI_NVJITLINK_PATH", kJitLinkVersions,
                                   sizeof kJitLinkVersions / sizeof kJitLinkVersions[0],
                                   s.api.path, tried);
  if (!lib) {
    s.message = "nvJitLink could not be loaded (set CUABI_NVJITLINK_PATH to libnvJitLink.so's "
                "path). Tried:" + tried;
    return;
  }
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn && s.message.empty())
      s.message = s.api.path + " lacks " + name + ": it is not a usable nvJitLink library";
  };
  sym(s.api.create, "nvJitLinkCreate");
  sym(s.api.destroy, "nvJitLinkDestroy");
  sym(s.api.add_data, "nvJitLinkAddData");
  sym(s.api.complete, "nvJitLinkComplete");
  sym(s.api.cubin_size, "nvJitLinkGetLinkedCubinSize");
  sym(s.api.cubin, "nvJitLinkGetLinkedCubin");
  sym(s.api.error_log_size, "nvJitLinkGetErrorLogSize");
  sym(s.api.error_log, "nvJitLinkGetErrorLog");
  sym(s.api.info_log_size, "nvJitLinkGetInfoLogSize");
  sym(s.api.info_log, "nvJitLinkGetInfoLog");
  sym(s.api.version, "nvJitLinkVersion");
  if (!s.message.empty()) return;
  s.api.version(&s.api.major, &s.api.minor);
  s.ok = true;
}

// nvJitLink, or nullptr (with `why`) when it cannot be loaded.
const JitLinkApi* jitlink(std::string* why) {
  JitLinkState& s = jit_state();
  std::call_once(s.once, [&] { load_jitlink(s); });
  if (!s.ok) {
    if (why) *why = s.message;
    return nullptr;
  }
  return &s.api;
}

const char* jit_result_name(nvJitLinkResult r) {
  switch (r) {
    case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
    case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
    case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
    case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
    case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
    case NVJITLINK_ERROR_THREADPOOL: return "NVJITLINK_ERROR_THREADPOOL";
    case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
    case NVJITLINK_ERROR_FINALIZE: return "NVJITLINK_ERROR_FINALIZE";
    case NVJITLINK_ERROR_NULL_INPUT: return "NVJITLINK_ERROR_NULL_INPUT";
    case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
    case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
    case NVJITLINK_ERROR_ARCH_MISMATCH: return "NVJITLINK_ERROR_ARCH_MISMATCH";
    case NVJITLINK_ERROR_OUTDATED_LIBRARY: return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
    case NVJITLINK_ERROR_MISSING_FATBIN: return "NVJITLINK_ERROR_MISSING_FATBIN";
    case NVJITLINK_ERROR_UNRECOGNIZED_ARCH: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
    case NVJITLINK_ERROR_UNSUPPORTED_ARCH: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
    case NVJITLINK_ERROR_LTO_NOT_ENABLED: return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
  }
  return "an unknown nvJitLink error";
}

const char* input_name(cuabi_link_input kind) {
  switch (kind) {
    case CUABI_LINK_INPUT_CUBIN: return "CUBIN";
    case CUABI_LINK_INPUT_PTX: return "PTX";
    case CUABI_LINK_INPUT_LTO_IR: return "LTO-IR";
    case CUABI_LINK_INPUT_FATBIN: return "fatbin";
    case CUABI_LINK_INPUT_OBJECT: return "object";
    case CUABI_LINK_INPUT_LIBRARY: return "library";
    default: return "auto";
  }
}

// The kind of `bytes` by their first bytes; AUTO when they tell nothing.
cuabi_link_input sniff(const std::string& b) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(b.data());
  if (b.size() >= 20 && std::memcmp(p, "\x7f" "ELF", 4) == 0) {
    const unsigned machine = p[18] | (p[19] << 8);
    return machine == 190 ? CUABI_LINK_INPUT_CUBIN : CUABI_LINK_INPUT_OBJECT;  // EM_CUDA
  }
  if (b.size() >= 4 && p[0] == 0x50 && p[1] == 0xED && p[2] == 0x55 && p[3] == 0xBA)
    return CUABI_LINK_INPUT_FATBIN;
  if (b.size() >= 8 && std::memcmp(p, "!<arch>\n", 8) == 0) return CUABI_LINK_INPUT_LIBRARY;
  if (b.size() >= 4 && ((p[0] == 'B' && p[1] == 'C' && p[2] == 0xC0 && p[3] == 0xDE) ||
                        (p[0] == 0xDE && p[1] == 0xC0 && p[2] == 0x17 && p[3] == 0x0B) ||
                        (p[0] == 0x7F && p[1] == 'N' && p[2] == 'V' && p[3] == 'V') ||
                        (p[0] == 0xED && p[1] == 0x43 && p[2] == 0x4E && p[3] == 0x7F)))
    return CUABI_LINK_INPUT_LTO_IR;
  if (b.find(".version") != std::string::npos && b.find(".target") != std::string::npos)
    return CUABI_LINK_INPUT_PTX;
  return CUABI_LINK_INPUT_AUTO;
}

cuabi_link_input by_extension(const char* path) {
  const char* dot = std::strrchr(path, '.');
  if (!dot) return CUABI_LINK_INPUT_AUTO;
  std::string ext = dot + 1;
  if (ext == "cubin") return CUABI_LINK_INPUT_CUBIN;
  if (ext == "ptx") return CUABI_LINK_INPUT_PTX;
  if (ext == "fatbin") return CUABI_LINK_INPUT_FATBIN;
  if (ext == "ltoir") return CUABI_LINK_INPUT_LTO_IR;
  if (ext == "o") return CUABI_LINK_INPUT_OBJECT;
  if (ext == "a") return CUABI_LINK_INPUT_LIBRARY;
  return CUABI_LINK_INPUT_AUTO;
}

CUjitInputType driver_input(cuabi_link_input kind) {
  switch (kind) {
    case CUABI_LINK_INPUT_CUBIN: return CU_JIT_INPUT_CUBIN;
    case CUABI_LINK_INPUT_PTX: return CU_JIT_INPUT_PTX;
    case CUABI_LINK_INPUT_FATBIN: return CU_JIT_INPUT_FATBINARY;
    case CUABI_LINK_INPUT_OBJECT: return CU_JIT_INPUT_OBJECT;
    default: return CU_JIT_INPUT_LIBRARY;
  }
}

}  // namespace

std::string read_file(const char* path) {
  check_name(path, "path");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(CUABI_ERROR_IO, std::string("cannot open '") + path + "': " + strerror(errno), errno);
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      const int err = errno;
      close(fd);
      fail(CUABI_ERROR_IO, std::string("cannot read '") + path + "': " + strerror(err), err);
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

// ---------------------------------------------------------------------------
// Linker
// ---------------------------------------------------------------------------

Linker::Linker(Ref<Device> dev, const cuabi_link_desc& d)
    : DeviceChild(kKind, std::move(dev)), flags_(d.flags) {
  if (d.backend < CUABI_LINK_BACKEND_AUTO || d.backend > CUABI_LINK_BACKEND_DRIVER)
    fail_invalid("desc->backend " + std::to_string(d.backend) + " is not a cuabi_link_backend");
  if (d.flags & ~static_cast<uint32_t>(CUABI_LINK_LTO | CUABI_LINK_NO_CACHE))
    fail_invalid("desc->flags has bits this version does not define: " + std::to_string(d.flags));
  if (d.num_options > (1u << 16))
    fail_invalid("desc->num_options " + std::to_string(d.num_options) + " is implausibly large");
  if (d.num_options > 0 && !d.options)
    fail_invalid("desc->options is NULL but desc->num_options is " +
                 std::to_string(d.num_options));
  for (size_t i = 0; i < d.num_options; ++i) {
    const std::string what = "desc->options[" + std::to_string(i) + "]";
    check_name(d.options[i], what.c_str());
    options_.push_back(d.options[i]);
  }
  std::string why;
  if (d.backend == CUABI_LINK_BACKEND_DRIVER) {
    backend = CUABI_LINK_BACKEND_DRIVER;
  } else if (jitlink(&why)) {
    backend = CUABI_LINK_BACKEND_NVJITLINK;
  } else if (d.backend == CUABI_LINK_BACKEND_NVJITLINK) {
    fail(CUABI_ERROR_NOT_FOUND, why);
  } else {
    backend = CUABI_LINK_BACKEND_DRIVER;
  }
  if (backend == CUABI_LINK_BACKEND_DRIVER) {
    if (!options_.empty())
      fail_invalid("the driver's linker takes no options (they are nvJitLink's); " +
                   std::to_string(options_.size()) + " given" +
                   (why.empty() ? std::string() : " and nvJitLink is missing: " + why));
    if (flags_ & CUABI_LINK_LTO)
      fail(CUABI_ERROR_NOT_SUPPORTED, "link-time optimisation needs nvJitLink" +
                                          (why.empty() ? std::string(" (the driver backend "
                                                                     "was asked for)")
                                                       : ": " + why));
  }
}

void Linker::add(cuabi_link_input kind, std::string bytes, const char* name, const char* path) {
  if (kind < CUABI_LINK_INPUT_AUTO || kind > CUABI_LINK_INPUT_LIBRARY)
    fail_invalid("kind " + std::to_string(kind) + " is not a cuabi_link_input");
  if (name) check_name(name, "name");
  if (bytes.empty()) fail_invalid(std::string(path ? "the file is empty" : "size is 0"));
  if (kind == CUABI_LINK_INPUT_AUTO && path) kind = by_extension(path);
  if (kind == CUABI_LINK_INPUT_AUTO) kind = sniff(bytes);
  if (kind == CUABI_LINK_INPUT_AUTO)
    fail_invalid(std::string("cannot tell what the input ") + (path ? path : "") +
                 " is (not CUBIN, fatbin, LTO-IR, an object, a library or PTX): give its kind");
  if (kind == CUABI_LINK_INPUT_LTO_IR && backend == CUABI_LINK_BACKEND_DRIVER)
    fail(CUABI_ERROR_NOT_SUPPORTED, "LTO-IR needs the nvJitLink backend; this linker uses the "
                                    "driver's");
  std::lock_guard<std::mutex> lock(mutex);
  if (linked_) fail_invalid("the linker already linked; create a new one to link again");
  std::string label = name ? name : path ? path : "input" + std::to_string(inputs_.size());
  inputs_.push_back({kind, std::move(label), std::move(bytes)});
}

void Linker::add_program(const Program& p) {
  std::string bytes;
  cuabi_link_input kind;
  {
    std::lock_guard<std::mutex> lock(const_cast<Program&>(p).mutex);
    if (!p.succeeded) fail_invalid("the program has not compiled successfully");
    if (!p.lto_ir.empty()) {
      kind = CUABI_LINK_INPUT_LTO_IR;
      bytes = p.lto_ir;
    } else if (!p.cubin.empty()) {
      kind = CUABI_LINK_INPUT_CUBIN;
      bytes = p.cubin;
    } else {
      kind = CUABI_LINK_INPUT_PTX;
      bytes = p.ptx;
      if (!bytes.empty() && bytes.back() == '\0') bytes.pop_back();
    }
  }
  add(kind, std::move(bytes), nullptr, nullptr);
}

Ref<Module> Linker::link() {
  std::lock_guard<std::mutex> lock(mutex);
  if (linked_) fail_invalid("the linker already linked; create a new one to link again");
  if (inputs_.empty()) fail_invalid("nothing to link: add inputs first");
  linked_ = true;
  const std::string arch = "-arch=sm_" + std::to_string(device->cc_major * 10 + device->cc_minor);
  std::vector<std::string> options = options_;
  bool has_arch = false;
  for (const std::string& o : options) has_arch |= o.rfind("-arch", 0) == 0;
  if (!has_arch) options.push_back(arch);
  if (flags_ & CUABI_LINK_LTO) options.push_back("-lto");

  std::string dir = (flags_ & CUABI_LINK_NO_CACHE) ? std::string() : cache_dir_in_use();
  CacheKey key{};
  if (!dir.empty()) {
    Sha256 h;
    h.field(std::string("cuabi link cache 1"));
    h.field(std::string(CUABI_VERSION_STRING));
    h.field(std::to_string(driver_version()));
    h.field(std::to_string(backend));
    if (backend == CUABI_LINK_BACKEND_NVJITLINK) {
      const JitLinkApi* j = jitlink(nullptr);
      h.field(std::to_string(j->major) + "." + std::to_string(j->minor));
    }
    h.field(arch);
    h.field(std::to_string(options.size()));
    for (const std::string& o : options) h.field(o);
    h.field(std::to_string(inputs_.size()));
    for (const Input& in : inputs_) {
      h.field(std::to_string(in.kind));
      h.field(in.name);
      h.field(in.bytes);
    }
    key = h.digest();
    if (std::optional<CacheEntry> hit = cache_load(dir, key)) {
      Ref<Module> m = make<Module>(device, hit->image.data(), hit->image.size());
      m->from_cache = true;
      image = std::move(hit->image);
      return m;
    }
  }

  device->make_current();
  if (backend == CUABI_LINK_BACKEND_NVJITLINK) {
    const JitLinkApi& j = *jitlink(nullptr);
    std::vector<const char*> opts;
    for (const std::string& o : options) opts.push_back(o.c_str());
    nvJitLinkHandle handle = nullptr;
    nvJitLinkResult r = j.create(&handle, static_cast<uint32_t>(opts.size()), opts.data());
    if (r != NVJITLINK_SUCCESS) {
      std::string all;
      for (const std::string& o : options) all += " " + o;
      if (handle) j.destroy(&handle);
      fail(r == NVJITLINK_ERROR_UNRECOGNIZED_OPTION || r == NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS ||
                   r == NVJITLINK_ERROR_UNRECOGNIZED_ARCH || r == NVJITLINK_ERROR_UNSUPPORTED_ARCH
               ? CUABI_ERROR_INVALID_ARGUMENT
               : CUABI_ERROR_COMPILE,
           std::string("nvJitLinkCreate failed: ") + jit_result_name(r) + " (options:" + all + ")",
           r);
    }
    auto logs = [&] {
      std::string out;
      size_t n = 0;
      if (j.info_log_size(handle, &n) == NVJITLINK_SUCCESS && n > 1) {
        std::string b(n, '\0');
        if (j.info_log(handle, &b[0]) == NVJITLINK_SUCCESS) out += to_utf8(b.c_str());
      }
      if (j.error_log_size(handle, &n) == NVJITLINK_SUCCESS && n > 1) {
        std::string b(n, '\0');
        if (j.error_log(handle, &b[0]) == NVJITLINK_SUCCESS) out += to_utf8(b.c_str());
      }
      return out;
    };
    auto failed = [&](nvJitLinkResult res, const std::string& what) {
      log = logs();
      j.destroy(&handle);
      Error e(CUABI_ERROR_COMPILE,
              what + " failed: " + jit_result_name(res) + (log.empty() ? "" : ":\n" + log), res);
      e.log = log;
      throw e;
    };
    for (const Input& in : inputs_) {
      r = j.add_data(handle, static_cast<nvJitLinkInputType>(in.kind), in.bytes.data(),
                     in.bytes.size(), in.name.c_str());
      if (r != NVJITLINK_SUCCESS)
        failed(r, "nvJitLinkAddData of " + std::string(input_name(in.kind)) + " '" + in.name + "'");
    }
    r = j.complete(handle);
    if (r != NVJITLINK_SUCCESS) failed(r, "nvJitLinkComplete");
    size_t n = 0;
    if ((r = j.cubin_size(handle, &n)) != NVJITLINK_SUCCESS || n == 0)
      failed(r, "nvJitLinkGetLinkedCubinSize");
    image.assign(n, '\0');
    if ((r = j.cubin(handle, &image[0])) != NVJITLINK_SUCCESS) failed(r, "nvJitLinkGetLinkedCubin");
    log = logs();
    j.destroy(&handle);
  } else {
    const DriverApi& d = driver();
    std::string info(1 << 14, '\0'), errors(1 << 14, '\0');
    CUjit_option keys[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {&info[0], reinterpret_cast<void*>(info.size()), &errors[0],
                      reinterpret_cast<void*>(errors.size())};
    CUlinkState state = nullptr;
    check(d.cuLinkCreate(4, keys, values, &state), "cuLinkCreate");
    auto collect = [&] {
      log = to_utf8(info.c_str());
      std::string e = to_utf8(errors.c_str());
      if (!e.empty()) log += (log.empty() ? "" : "\n") + e;
    };
    auto failed = [&](CUresult res, const std::string& what) {
      collect();
      d.cuLinkDestroy(state);
      Error e(res == CUDA_ERROR_OUT_OF_MEMORY ? CUABI_ERROR_OUT_OF_MEMORY : CUABI_ERROR_COMPILE,
              what + " failed: " + describe(res) + driver_log_of_failure() +
                  (log.empty() ? "" : ":\n" + log),
              res);
      e.log = log;
      throw e;
    };
    for (const Input& in : inputs_) {
      CUresult r = d.cuLinkAddData(state, driver_input(in.kind),
                                   const_cast<char*>(in.bytes.data()), in.bytes.size(),
                                   in.name.c_str(), 0, nullptr, nullptr);
      if (r != CUDA_SUCCESS)
        failed(r, "cuLinkAddData of " + std::string(input_name(in.kind)) + " '" + in.name + "'");
    }
    void* cubin = nullptr;
    size_t n = 0;
    CUresult r = d.cuLinkComplete(state, &cubin, &n);
    if (r != CUDA_SUCCESS) failed(r, "cuLinkComplete");
    image.assign(static_cast<const char*>(cubin), n);
    collect();
    d.cuLinkDestroy(state);
  }
  Ref<Module> m = make<Module>(device, image.data(), image.size());
  if (!dir.empty()) {
    CacheEntry entry;
    entry.output = CUABI_OUTPUT_CUBIN;
    entry.image = image;
    cache_store(dir, key, entry);
  }
  return m;
}

// ---------------------------------------------------------------------------
// Libraries
// ---------------------------------------------------------------------------

Library::Library(const void* image, size_t size) : Object(kKind) {
  if (!image) fail_invalid("image is NULL");
  if (size == 0) fail_invalid("size is 0: an image has at least one byte");
  std::string text;
  const void* data = image;
  if (!check_image(image, size)) {
    // The driver loads libraries lazily: bytes it cannot use would only
    // fail at their first use, so they are refused here.
    const std::string bytes(static_cast<const char*>(image), size);
    if (bytes.find(".version") == std::string::npos || bytes.find(".target") == std::string::npos)
      fail_invalid("the image is neither CUBIN, a fatbin nor PTX text (no ELF or fatbin header, "
                   "no .version and .target directives)");
    const char* p = static_cast<const char*>(image);
    if (memchr(p, '\0', size) == nullptr) {
      text.assign(p, size);
      data = text.c_str();
    }
  }
  check(driver().cuLibraryLoadData(&library, data, nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cuLibraryLoadData");
}

Library::~Library() {
  // Not in a forked child, whose driver state belongs to the parent.
  if (driver_ready() && !fork_guard_tripped()) driver().cuLibraryUnload(library);
}

Ref<Module> library_module(Ref<Library> library, Ref<Device> device) {
  device->make_current();
  CUmodule mod = nullptr;
  check(driver().cuLibraryGetModule(&mod, library->library), "cuLibraryGetModule");
  Ref<Object> owner = Ref<Object>::share(library.get());
  return make<Module>(std::move(device), mod, std::move(owner));
}

}  // namespace cuabi
