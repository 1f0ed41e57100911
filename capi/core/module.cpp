// Modules (loaded device code), compiling into modules through the cache, and
// functions with the parameter layout the launch checks against.
#include "module.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "cache.hpp"
#include "compile_options.hpp"
#include "sha256.hpp"
#include "structs.hpp"
#include "text.hpp"

namespace cuabi {

namespace {

uint64_t read_le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool is_elf(const void* image, size_t size) {
  return size >= 4 && memcmp(image, "\x7f" "ELF", 4) == 0;
}

bool is_fatbin(const void* image, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(image);
  return size >= 4 && read_le(p, 4) == 0xBA55ED50u;
}

bool fits(uint64_t offset, uint64_t length, size_t size) {
  return offset <= size && length <= size - offset;
}

// cuModuleLoadData takes no length: before handing it an image, make sure
// everything its headers point at lies inside the caller's `size` bytes.
void check_elf_extents(const unsigned char* p, size_t size) {
  auto bad = [&](const std::string& why) {
    fail_invalid("the CUBIN image is truncated or malformed (" + why + "; " +
                 std::to_string(size) + " bytes given)");
  };
  if (size < 64) bad("shorter than an ELF header");
  if (p[4] != 2 || p[5] != 1) bad("not a 64-bit little-endian ELF file");
  uint64_t phoff = read_le(p + 0x20, 8), shoff = read_le(p + 0x28, 8);
  uint64_t phentsize = read_le(p + 0x36, 2), phnum = read_le(p + 0x38, 2);
  uint64_t shentsize = read_le(p + 0x3A, 2), shnum = read_le(p + 0x3C, 2);
  // Extended numbering keeps the real counts elsewhere: not in a CUBIN.
  if ((shnum == 0 && shoff != 0) || phnum == 0xFFFF) bad("extended section or segment numbering");
  if (phnum && (phentsize < 56 || !fits(phoff, phentsize * phnum, size)))
    bad("program headers past the end");
  if (shnum && (shentsize < 64 || !fits(shoff, shentsize * shnum, size)))
    bad("section headers past the end");
  for (uint64_t i = 0; i < shnum; ++i) {
    const unsigned char* sh = p + shoff + i * shentsize;
    uint64_t type = read_le(sh + 4, 4), offset = read_le(sh + 0x18, 8), length = read_le(sh + 0x20, 8);
    if (type != 8 /* SHT_NOBITS */ && !fits(offset, length, size))
      bad("section " + std::to_string(i) + " past the end");
  }
  for (uint64_t i = 0; i < phnum; ++i) {
    const unsigned char* ph = p + phoff + i * phentsize;
    uint64_t offset = read_le(ph + 8, 8), filesz = read_le(ph + 0x20, 8);
    if (!fits(offset, filesz, size)) bad("segment " + std::to_string(i) + " past the end");
  }
}

void check_fatbin_extents(const unsigned char* p, size_t size) {
  // magic (4), version (2), header size (2), size of what follows (8)
  if (size < 16 || !fits(read_le(p + 6, 2), read_le(p + 8, 8), size))
    fail_invalid("the fatbin image is truncated or malformed (" + std::to_string(size) +
                 " bytes given)");
}

}  // namespace

bool check_image(const void* image, size_t size) {
  const unsigned char* bytes = static_cast<const unsigned char*>(image);
  static const unsigned char kElf[4] = {0x7f, 'E', 'L', 'F'};
  static const unsigned char kFatbin[4] = {0x50, 0xED, 0x55, 0xBA};
  if (size < 4 && (memcmp(bytes, kElf, size) == 0 || memcmp(bytes, kFatbin, size) == 0))
    fail_invalid("the image is truncated: " + std::to_string(size) +
                 (size == 1 ? " byte" : " bytes") + " of a CUBIN or fatbin header");
  if (is_elf(image, size)) {
    check_elf_extents(bytes, size);
    return true;
  }
  if (is_fatbin(image, size)) {
    check_fatbin_extents(bytes, size);
    return true;
  }
  return false;
}

Module::Module(Ref<Device> dev, const void* image, size_t size) : DeviceChild(kKind, std::move(dev)) {
  if (!image) fail_invalid("image is NULL");
  if (size == 0) fail_invalid("size is 0: an image has at least one byte");
  std::string text;
  const void* data = image;
  if (!check_image(image, size)) {
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

Module::Module(Ref<Device> dev, CUmodule borrowed, Ref<Object> lib)
    : DeviceChild(kKind, std::move(dev)), module(borrowed), library(std::move(lib)) {}

Module::~Module() {
  if (!library && enter_quietly(*this)) driver().cuModuleUnload(module);
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

// The architecture option to add for `device`, or "" when the caller named one.
std::string target_option(const Device& device, const CompileOptions& options, uint32_t* output) {
  if (options.names_architecture) return "";
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

CacheKey key_of(const cuabi_compile_desc& d, const CompileOptions& options,
                const std::string& target, uint32_t output) {
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
  // Every option NVRTC receives, the typed ones spelled out: a change to any
  // option changes the key.
  h.field(std::to_string(options.nvrtc.size()));
  for (const std::string& o : options.nvrtc) h.field(o);
  h.field(std::to_string(d.num_name_expressions));
  for (size_t i = 0; i < d.num_name_expressions; ++i) h.field(std::string(d.name_expressions[i]));
  h.field(std::to_string(output));
  h.field(target);
  return h.digest();
}

void check_strings(const char* const* list, size_t count, const char* what, bool names) {
  if (count > (1u << 20))
    fail_invalid(std::string(what) + ": count " + std::to_string(count) + " is implausibly large");
  if (count > 0 && !list)
    fail_invalid(std::string(what) + " is NULL but its count is " + std::to_string(count));
  for (size_t i = 0; i < count; ++i) {
    std::string item = std::string(what) + "[" + std::to_string(i) + "]";
    if (names)
      check_name(list[i], item.c_str());
    else if (!list[i])
      fail_invalid(item + " is NULL");
  }
}

}  // namespace

Ref<Module> compile_module(Ref<Device> device, const cuabi_compile_desc* desc) {
  if (!desc) fail_invalid("desc is NULL");
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  read_struct(desc, &d, "desc");
  if (!d.source) fail_invalid("desc->source is NULL");
  if (d.name) check_name(d.name, "desc->name");
  check_strings(d.header_sources, d.num_headers, "desc->header_sources", false);
  check_strings(d.header_names, d.num_headers, "desc->header_names", true);
  check_strings(d.name_expressions, d.num_name_expressions, "desc->name_expressions", true);
  if (d.output != CUABI_OUTPUT_CUBIN && d.output != CUABI_OUTPUT_PTX)
    fail_invalid("desc->output is " + std::to_string(d.output) +
                 "; expected CUABI_OUTPUT_CUBIN or CUABI_OUTPUT_PTX");
  if (d.flags & ~static_cast<uint32_t>(CUABI_COMPILE_NO_CACHE))
    fail_invalid("desc->flags has bits this version does not define: " + std::to_string(d.flags));
  CompileOptions options = compile_options(d);
  if (d.lto)
    fail_invalid(
        "desc->lto is 1, but an LTO compile makes LTO-IR, which no module loads: "
        "compile a cuabi_program with it (cuabi_program_compile_with) and link it "
        "(cuabi_linker_add_program)");

  uint32_t output = static_cast<uint32_t>(d.output);
  std::string target = target_option(*device, options, &output);
  std::string dir = (d.flags & CUABI_COMPILE_NO_CACHE) ? std::string() : cache_dir_in_use();
  CacheKey key{};
  if (!dir.empty()) {
    key = key_of(d, options, target, output);
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
  std::vector<const char*> argv;
  for (const std::string& o : options.nvrtc) argv.push_back(o.c_str());
  if (!target.empty()) argv.push_back(target.c_str());
  program.compile(argv.size(), argv.data());

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
  m->compile_log = program.log;
  // Only an image that loaded is worth keeping.
  if (!dir.empty()) cache_store(dir, key, entry);
  return m;
}

Function::Function(Ref<Module> mod, std::string fname, CUfunction fn)
    : Object(kKind),
      module(std::move(mod)),
      name(std::move(fname)),
      interned_name(intern_kernel_name(name)),
      device_ordinal(module->device->ordinal),
      function(fn) {
  const DriverApi& d = driver();
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = d.cuFuncGetParamInfo(function, i, &offset, &size);
    if (r == CUDA_ERROR_NOT_SUPPORTED && t_missing_entry_point) {
      t_missing_entry_point = nullptr;  // older driver: launches run unchecked
      params.clear();
      break;
    }
    if (r == CUDA_ERROR_INVALID_VALUE) {  // the driver's answer past the last parameter
      params_known = true;
      break;
    }
    // Anything else (out of memory, a sticky fault) is a failure, not the
    // end of the list: a shortened list would refuse every right launch.
    check(r, "cuFuncGetParamInfo");
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
  // Cluster attributes came with CUDA 11.8; an older driver leaves them 0.
  const CUfunction_attribute cluster[3] = {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
                                           CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
                                           CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH};
  for (int i = 0; i < 3; ++i) {
    value = 0;
    if (d.cuFuncGetAttribute(&value, cluster[i], function) == CUDA_SUCCESS && value > 0)
      required_cluster[i] = static_cast<uint32_t>(value);
  }
  value = 0;
  if (d.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                           function) == CUDA_SUCCESS)
    non_portable_cluster = value != 0;
}

namespace {

// A kernel's symbol, as C++ reads it ("void ns::scale<float>(float*, int)"),
// or the symbol itself when it is no mangled C++ name.
std::string demangle(const std::string& symbol) {
  int status = 0;
  char* text = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !text) return symbol;
  std::string out = text;
  std::free(text);
  return out;
}

// From a demangled kernel, its name without the parameter list and return
// type ("ns::scale<float>"), and without template arguments and scopes
// ("scale").
void kernel_names(const std::string& demangled, std::string* qualified, std::string* plain) {
  std::string s = demangled;
  // The parameter list: the last '(' at depth 0 of <> and ().
  int depth = 0;
  size_t open = std::string::npos;
  for (size_t i = s.size(); i-- > 0;) {
    char c = s[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') --depth;
    if (c == '(' && depth == 0) {
      open = i;
      break;
    }
  }
  if (open != std::string::npos) s.resize(open);
  // A return type (templates have one): what comes before the last space
  // at depth 0.
  depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    char c = s[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (c == ' ' && depth == 0) {
      s.erase(0, i + 1);
      break;
    }
  }
  *qualified = s;
  // Template arguments of the last component.
  if (!s.empty() && s.back() == '>') {
    depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == '>') ++depth;
      if (s[i] == '<' && --depth == 0) {
        s.resize(i);
        break;
      }
    }
  }
  size_t scope = s.rfind("::");
  *plain = scope == std::string::npos ? s : s.substr(scope + 2);
}

}  // namespace

// Every kernel of the module as (symbol, demangled), or none where the
// driver cannot list them (before CUDA 12.4).
std::vector<std::pair<std::string, std::string>> module_kernels(const Module& module) {
  std::vector<std::pair<std::string, std::string>> out;
  const DriverApi& d = driver();
  unsigned int count = 0;
  if (d.cuModuleGetFunctionCount(&count, module.module) != CUDA_SUCCESS || count == 0) return out;
  std::vector<CUfunction> fns(count);
  if (d.cuModuleEnumerateFunctions(fns.data(), count, module.module) != CUDA_SUCCESS) return out;
  for (CUfunction f : fns) {
    const char* symbol = nullptr;
    if (d.cuFuncGetName(&symbol, f) != CUDA_SUCCESS || !symbol) continue;
    out.emplace_back(symbol, demangle(symbol));
  }
  return out;
}

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
  return out;
}

}  // namespace

Ref<Function> get_function(const Module& module, const char* name) {
  check_name(name, "name");
  std::string symbol = name;
  auto it = module.lowered.find(symbol);
  if (it != module.lowered.end()) symbol = it->second;
  module.enter();
  CUfunction fn = nullptr;
  CUresult r = driver().cuModuleGetFunction(&fn, module.module, symbol.c_str());
  if (r == CUDA_ERROR_NOT_FOUND && symbol == name) {
    // A C++ kernel by its plain or qualified name, when exactly one kernel
    // of the module has it.
    std::vector<std::pair<std::string, std::string>> kernels = module_kernels(module);
    std::vector<std::string> matches, demangled, all;
    for (const auto& k : kernels) {
      std::string qualified, plain;
      kernel_names(k.second, &qualified, &plain);
      all.push_back(k.second);
      // "ops::scale" names every instance of the template ops::scale<T>.
      const size_t targs = qualified.find('<');
      const std::string bare = targs == std::string::npos ? qualified : qualified.substr(0, targs);
      if (plain == name || qualified == name || bare == name) {
        matches.push_back(k.first);
        demangled.push_back(k.second);
      }
    }
    if (matches.size() > 1)
      fail_invalid(std::string("the name '") + name + "' matches " +
                   std::to_string(matches.size()) + " kernels of the module: " +
                   quoted_list(demangled) +
                   "; give one as a name expression at compile time (e.g. \"" + name +
                   "<float>\") and look it up by that");
    if (matches.size() == 1) {
      symbol = matches[0];
      r = driver().cuModuleGetFunction(&fn, module.module, symbol.c_str());
    } else if (!all.empty()) {
      std::sort(all.begin(), all.end());
      fail(CUABI_ERROR_NOT_FOUND,
           std::string("the module has no kernel named '") + name + "'; its kernels: " +
               quoted_list(all) +
               "; a C++ kernel is found by its plain or qualified name when no other kernel "
               "has it, or by a name expression given at compile time",
           r);
    }
  }
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

namespace cuabi {

size_t kernel_count(const Module& module) {
  module.enter();
  unsigned int count = 0;
  check(driver().cuModuleGetFunctionCount(&count, module.module), "cuModuleGetFunctionCount");
  return count;
}

std::string kernel_name(const Module& module, size_t index, cuabi_name_form form) {
  if (form != CUABI_NAME_DEMANGLED && form != CUABI_NAME_SYMBOL)
    fail_invalid("form " + std::to_string(form) + " is not a cuabi_name_form");
  const size_t count = kernel_count(module);
  if (index >= count)
    fail(CUABI_ERROR_OUT_OF_RANGE, "index " + std::to_string(index) + " is past the module's " +
                                       std::to_string(count) + " kernels");
  std::vector<CUfunction> fns(count);
  check(driver().cuModuleEnumerateFunctions(fns.data(), static_cast<unsigned>(count),
                                            module.module),
        "cuModuleEnumerateFunctions");
  const char* symbol = nullptr;
  check(driver().cuFuncGetName(&symbol, fns[index]), "cuFuncGetName");
  if (!symbol) fail(CUABI_ERROR_INTERNAL, "cuFuncGetName gave no name");
  return form == CUABI_NAME_SYMBOL ? std::string(symbol) : demangle(symbol);
}

}  // namespace cuabi
