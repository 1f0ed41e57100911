// Compilation beyond one string: kernel listings, the compile log after a
// successful compile, linking programs (relocatable code and LTO-IR) through
// nvJitLink and the driver's linker, the link cache, and libraries.
#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_support.h"

extern char** environ;

namespace cuabi_test {
namespace {

constexpr const char* kCaller = R"(
extern "C" __device__ float twice(float x);
extern "C" __global__ void apply(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]) + 1.0f;
}
)";
constexpr const char* kCallee = R"(
extern "C" __device__ float twice(float x) { return 2.0f * x; }
)";
constexpr const char* kCxx = R"(
namespace ops {
template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }
template __global__ void scale<float>(float*, float);
template __global__ void scale<int>(int*, int);
}
__global__ void doublify(float* a) { a[threadIdx.x] *= 2.0f; }
)";

class LinkTest : public GpuTest {
 protected:
  // A program compiled for this device with `extra` options.
  Program Compiled(const char* source, std::vector<std::string> extra) {
    Program p;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_program_create(source, nullptr, 0, nullptr, nullptr, p.out()));
    extra.push_back("--gpu-architecture=" + Arch("sm_"));
    std::vector<const char*> opts;
    for (auto& o : extra) opts.push_back(o.c_str());
    EXPECT_EQ(CUABI_SUCCESS, cuabi_program_compile(p, opts.size(), opts.data())) << LastError();
    return p;
  }

  // Runs `apply` from `module` over 256 floats and checks x -> 2x + 1.
  void CheckApply(cuabi_module module) {
    Function f = GetFunction(module, "apply");
    std::vector<float> x(256);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
    Buffer b = Alloc(x.size() * 4);
    Upload(b, x);
    uint64_t p = Pointer(b);
    unsigned n = 256;
    void* params[] = {&p, &n};
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.block_x = 256;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &c, nullptr, params, 2)) << LastError();
    std::vector<float> y = Download<float>(b, x.size());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(2.0f * x[i] + 1.0f, y[i]) << i;
  }

  cuabi_status Link(cuabi_link_backend backend, uint32_t flags, const std::vector<cuabi_program>& in,
                    Module* out, cuabi_linker* keep = nullptr) {
    cuabi_link_desc d = CUABI_LINK_DESC_INIT;
    d.backend = backend;
    d.flags = flags;
    cuabi_linker l = nullptr;
    cuabi_status st = cuabi_linker_create(device_, &d, &l);
    if (st) return st;
    for (cuabi_program p : in) {
      st = cuabi_linker_add_program(l, p);
      if (st) break;
    }
    if (!st) st = cuabi_linker_link(l, out->out());
    if (keep)
      *keep = l;
    else
      cuabi_linker_release(l);
    return st;
  }
};

TEST_F(LinkTest, KernelsAreListedWithDemangledNamesAndSymbols) {
  Module m = Compile(kCxx);
  size_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_kernel_count(m, &count)) << LastError();
  ASSERT_EQ(3u, count);
  std::vector<std::string> demangled, symbols;
  for (size_t i = 0; i < count; ++i) {
    demangled.push_back(FetchString([&](void* buf, size_t* size) {
      return cuabi_module_get_kernel_name(m, i, CUABI_NAME_DEMANGLED, static_cast<char*>(buf),
                                          size);
    }));
    symbols.push_back(FetchString([&](void* buf, size_t* size) {
      return cuabi_module_get_kernel_name(m, i, CUABI_NAME_SYMBOL, static_cast<char*>(buf), size);
    }));
    EXPECT_EQ("_Z", symbols.back().substr(0, 2)) << symbols.back();
  }
  std::string all;
  for (auto& d : demangled) all += d + "; ";
  EXPECT_TRUE(Contains(all, "ops::scale<float>(float*, float)")) << all;
  EXPECT_TRUE(Contains(all, "ops::scale<int>(int*, int)")) << all;
  EXPECT_TRUE(Contains(all, "doublify(float*)")) << all;
  size_t n = 0;
  EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE,
            cuabi_module_get_kernel_name(m, 3, CUABI_NAME_SYMBOL, nullptr, &n));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "past the module's 3 kernels"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_module_get_kernel_name(m, 0, static_cast<cuabi_name_form>(7), nullptr, &n));
}

TEST_F(LinkTest, TheCompileLogKeepsWarningsOfASuccessfulCompile) {
  Module m = Compile("#warning \"a warning worth keeping\"\nextern \"C\" __global__ void k() {}\n");
  std::string log = FetchString([&](void* buf, size_t* size) {
    return cuabi_module_get_compile_log(m, static_cast<char*>(buf), size);
  });
  EXPECT_TRUE(Contains(log, "a warning worth keeping")) << log;
}

TEST_F(LinkTest, RelocatableProgramsLinkThroughEitherBackend) {
  Program caller = Compiled(kCaller, {"-rdc=true"});
  Program callee = Compiled(kCallee, {"-rdc=true"});
  for (cuabi_link_backend backend : {CUABI_LINK_BACKEND_NVJITLINK, CUABI_LINK_BACKEND_DRIVER}) {
    SCOPED_TRACE(backend == CUABI_LINK_BACKEND_DRIVER ? "driver" : "nvJitLink");
    Module m;
    cuabi_linker l = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              Link(backend, CUABI_LINK_NO_CACHE, {caller, callee}, &m, &l)) << LastError();
    cuabi_link_backend used = CUABI_LINK_BACKEND_AUTO;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_get_backend(l, &used));
    EXPECT_EQ(backend, used);
    std::vector<char> image = FetchAll([&](void* buf, size_t* size) {
      return cuabi_linker_get_image(l, buf, size);
    });
    EXPECT_GT(image.size(), 64u);
    Module again;
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_linker_link(l, again.out()));
    EXPECT_TRUE(Contains(cuabi_last_error_message(), "already linked"));
    cuabi_linker_release(l);
    CheckApply(m);
  }
  // The caller alone: the link fails naming the missing function.
  Module broken;
  EXPECT_EQ(CUABI_ERROR_COMPILE,
            Link(CUABI_LINK_BACKEND_AUTO, CUABI_LINK_NO_CACHE, {caller}, &broken));
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_last_error_log(nullptr, &size));
  std::vector<char> log(size);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_last_error_log(log.data(), &size));
  EXPECT_TRUE(Contains(log.data(), "twice")) << log.data();
}

TEST_F(LinkTest, LtoIrLinksWithLinkTimeOptimisationAndTheDriverRefusesIt) {
  Program caller = Compiled(kCaller, {"-dlto", "-rdc=true"});
  Program callee = Compiled(kCallee, {"-dlto", "-rdc=true"});
  std::vector<char> ir = FetchAll([&](void* buf, size_t* size) {
    return cuabi_program_get_lto_ir(caller, buf, size);
  });
  EXPECT_GT(ir.size(), 16u);
  Module m;
  ASSERT_EQ(CUABI_SUCCESS, Link(CUABI_LINK_BACKEND_NVJITLINK, CUABI_LINK_LTO | CUABI_LINK_NO_CACHE,
                                {caller, callee}, &m)) << LastError();
  CheckApply(m);
  Module refused;
  EXPECT_EQ(CUABI_ERROR_NOT_SUPPORTED,
            Link(CUABI_LINK_BACKEND_DRIVER, CUABI_LINK_NO_CACHE, {caller, callee}, &refused));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "LTO-IR needs the nvJitLink backend"));
  // A program compiled without -dlto has no LTO-IR.
  Program plain = Compiled(kCallee, {"-rdc=true"});
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, cuabi_program_get_lto_ir(plain, nullptr, &size));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "-dlto"));
}

TEST_F(LinkTest, LinkedImagesComeFromTheCacheTheSecondTimeAndFilesAreRead) {
  const char* dir = std::getenv("CUABI_CACHE_DIR");
  if (!dir) GTEST_SKIP() << "CUABI_CACHE_DIR is not set for this run";
  // A PTX file of the callee, told apart by its extension.
  Program callee_ptx;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_program_create(kCallee, nullptr, 0, nullptr, nullptr, callee_ptx.out()));
  const std::string arch = "--gpu-architecture=" + Arch("compute_");
  const char* opts[] = {arch.c_str(), "-rdc=true"};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_program_compile(callee_ptx, 2, opts)) << LastError();
  std::string ptx = FetchString([&](void* buf, size_t* size) {
    return cuabi_program_get_ptx(callee_ptx, static_cast<char*>(buf), size);
  });
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/cuabi-callee-" +
                           std::to_string(getpid()) + ".ptx";
  {
    std::ofstream file(path);
    file << ptx;
    ASSERT_TRUE(file.good()) << "cannot write " << path;
  }
  Program caller = Compiled(kCaller, {"-rdc=true"});
  for (int round = 0; round < 2; ++round) {
    Linker l;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_create(device_, nullptr, l.out())) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_add_program(l, caller)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_add_file(l, CUABI_LINK_INPUT_AUTO, path.c_str()))
        << LastError();
    Module m;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_link(l, m.out())) << LastError();
    int32_t hit = -1;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(m, &hit));
    EXPECT_EQ(round, hit) << "round " << round;
    CheckApply(m);
  }
  std::remove(path.c_str());
}

TEST_F(LinkTest, BadInputsAreRefusedBeforeLinking) {
  Linker l;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_linker_create(device_, nullptr, l.out()));
  const char garbage[] = "\x01\x02\x03 not an image";
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_linker_add_data(l, CUABI_LINK_INPUT_AUTO, garbage, sizeof garbage, "g"));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "cannot tell"));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_linker_add_data(l, static_cast<cuabi_link_input>(42), garbage, 4, nullptr));
  EXPECT_EQ(CUABI_ERROR_IO, cuabi_linker_add_file(l, CUABI_LINK_INPUT_AUTO, "/nonexistent.ptx"));
  Module m;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_linker_link(l, m.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "nothing to link"));
  cuabi_link_desc d = CUABI_LINK_DESC_INIT;
  d.backend = CUABI_LINK_BACKEND_DRIVER;
  const char* opts[] = {"-O3"};
  d.options = opts;
  d.num_options = 1;
  Linker driver_with_options;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_linker_create(device_, &d, driver_with_options.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "takes no options"));
}

TEST_F(LinkTest, ALibraryServesItsKernelsAsAModuleOfTheDevice) {
  Program p = Compiled(kCxx, {});
  std::vector<char> cubin = FetchAll([&](void* buf, size_t* size) {
    return cuabi_program_get_cubin(p, buf, size);
  });
  Library lib;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_library_load_data(cubin.data(), cubin.size(), lib.out()))
      << LastError();
  Module m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_library_get_module(lib, device_, m.out())) << LastError();
  lib.reset();  // the module keeps the library loaded
  Function f = GetFunction(m, "doublify");  // a plain C++ name
  Buffer b = Alloc(64 * 4);
  std::vector<float> x(64, 1.5f);
  Upload(b, x);
  uint64_t ptr = Pointer(b);
  void* params[] = {&ptr};
  cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
  c.block_x = 64;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &c, nullptr, params, 1)) << LastError();
  EXPECT_EQ(3.0f, Download<float>(b, 64)[63]);
  size_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_kernel_count(m, &count));
  EXPECT_EQ(3u, count);
  Library bad;
  EXPECT_EQ(CUABI_ERROR_IO, cuabi_library_load_file("/nonexistent.cubin", bad.out()));
}


std::set<std::string> CacheEntries(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 12 && name.compare(name.size() - 12, 12, ".cubin-cache") == 0)
        out.insert(dir + "/" + name);
    }
    closedir(d);
  }
  return out;
}

TEST_F(LinkTest, ACorruptedLinkedImageInTheCacheIsRebuiltNotLoaded) {
  const char* dir = std::getenv("CUABI_CACHE_DIR");
  if (!dir) GTEST_SKIP() << "CUABI_CACHE_DIR is not set for this run";
  // A source of its own, so the entry is new to the cache.
  const std::string callee = std::string(kCallee) + "// " + std::to_string(getpid()) + "\n";
  Program caller = Compiled(kCaller, {"-rdc=true"});
  Program other = Compiled(callee.c_str(), {"-rdc=true"});
  const std::set<std::string> before = CacheEntries(dir);
  Module first;
  ASSERT_EQ(CUABI_SUCCESS, Link(CUABI_LINK_BACKEND_AUTO, 0, {caller, other}, &first)) << LastError();
  std::string entry;
  for (const std::string& e : CacheEntries(dir))
    if (!before.count(e)) entry = e;
  ASSERT_FALSE(entry.empty()) << "the link stored no cache entry";
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
    f.put('\xa5');
  }
  Module second;
  ASSERT_EQ(CUABI_SUCCESS, Link(CUABI_LINK_BACKEND_AUTO, 0, {caller, other}, &second)) << LastError();
  int32_t hit = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(second, &hit));
  EXPECT_EQ(0, hit) << "the damaged entry was served";
  CheckApply(second);
  Module third;
  ASSERT_EQ(CUABI_SUCCESS, Link(CUABI_LINK_BACKEND_AUTO, 0, {caller, other}, &third)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(third, &hit));
  EXPECT_EQ(1, hit) << "the rebuilt entry is served";
  CheckApply(third);
}

TEST_F(LinkTest, AMissingNvJitLinkIsReportedWithThePathTriedAndAutoFallsBack) {
  // Another process: nvJitLink is looked for once per process.
  char arg0[] = CUABI_IPC_CHILD, arg1[] = "nojitlink";
  char* argv[] = {arg0, arg1, nullptr};
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  char nowhere[] = "CUABI_NVJITLINK_PATH=/nowhere/libnvJitLink.so.13";
  env.push_back(nowhere);
  env.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(0, posix_spawn(&pid, CUABI_IPC_CHILD, nullptr, nullptr, argv, env.data()));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the child's checks failed (its output says which)";
}

}  // namespace
}  // namespace cuabi_test
