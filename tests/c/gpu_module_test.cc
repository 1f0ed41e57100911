// Modules: compiling from source, name expressions, globals, loading PTX and
// CUBIN from memory and files, and object lifetimes.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

class ModuleTest : public GpuTest {
 protected:
  // Runs a small SAXPY with `saxpy` on the default stream and checks it.
  void RunSaxpy(cuabi_function saxpy, cuabi_device device = nullptr) {
    if (device == nullptr) device = device_;
    SaxpyProblem problem(8192, 7);
    Buffer x, y, out;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device, problem.bytes(), x.out()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device, problem.bytes(), y.out()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(device, problem.bytes(), out.out()));
    Upload(x, problem.x);
    Upload(y, problem.y);
    uint64_t px = Pointer(x), py = Pointer(y), pout = Pointer(out);
    size_t n = problem.n();
    void* params[] = {&problem.a, &px, &py, &pout, &n};
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    config.block_x = 256;
    config.grid_x = static_cast<uint32_t>(n / 256);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(saxpy, &config, nullptr, params, 5)) << LastError();
    EXPECT_EQ(0u, problem.Mismatches(Download<float>(out, n)));
  }

  // Compiles SAXPY with the program API for this device's architecture.
  std::vector<char> Image(bool cubin) {
    Program program;
    EXPECT_EQ(CUABI_SUCCESS,
              cuabi_program_create(kSaxpySource, "saxpy.cu", 0, nullptr, nullptr, program.out()));
    const std::string arch = "--gpu-architecture=" + Arch(cubin ? "sm_" : "compute_");
    const char* options[] = {arch.c_str()};
    EXPECT_EQ(CUABI_SUCCESS, cuabi_program_compile(program, 1, options)) << LastError();
    return FetchAll([&](void* buf, size_t* size) {
      return cubin ? cuabi_program_get_cubin(program, buf, size)
                   : cuabi_program_get_ptx(program, static_cast<char*>(buf), size);
    });
  }

  std::string TempPath(const std::string& suffix) {
    const char* base = std::getenv("TMPDIR");
    std::string path = std::string(base ? base : "/tmp") + "/cuabi_test_" +
                       std::to_string(getpid()) + "_" + suffix;
    temp_files_.push_back(path);
    return path;
  }

  void TearDown() override {
    for (const std::string& p : temp_files_) std::remove(p.c_str());
  }

  std::vector<std::string> temp_files_;
};

TEST_F(ModuleTest, NameExpressionsThroughModuleCompile) {
  Module m = Compile(kWriteScalarSource, CUABI_OUTPUT_CUBIN, CUABI_COMPILE_NO_CACHE,
                     {"write_scalar<float>", "write_scalar<int>"});
  ASSERT_NE(nullptr, m.get());
  Function wf = GetFunction(m, "write_scalar<float>");
  Function wi = GetFunction(m, "write_scalar<int>");
  ASSERT_NE(nullptr, wf.get());
  ASSERT_NE(nullptr, wi.get());
  Buffer out = Alloc(8);
  uint64_t p = Pointer(out);
  float fv = 3.5f;
  int iv = 42;
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  void* fparams[] = {&p, &fv};
  const size_t fsizes[] = {8, 4};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch_sized(wf, &config, nullptr, fparams, fsizes, 2))
      << LastError();
  EXPECT_EQ(3.5f, Download<float>(out, 1)[0]);
  void* iparams[] = {&p, &iv};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch_sized(wi, &config, nullptr, iparams, fsizes, 2))
      << LastError();
  EXPECT_EQ(42, Download<int>(out, 1)[0]);

  const std::vector<char> lowered = CheckTwoCall(
      [&](void* buf, size_t* size) {
        return cuabi_module_get_lowered_name(m, "write_scalar<float>", static_cast<char*>(buf),
                                             size);
      },
      true);
  ASSERT_FALSE(lowered.empty());
  EXPECT_EQ(0, std::strncmp(lowered.data(), "_Z", 2)) << lowered.data();
  // The lowered name is a kernel name of the module too.
  Function by_lowered = GetFunction(m, lowered.data());
  EXPECT_NE(nullptr, by_lowered.get());

  cuabi_function untouched = AsHandle<cuabi_function>(0x77);
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_FOUND),
            StatusName(cuabi_module_get_function(m, "write_scalar<double>", &untouched)));
  EXPECT_EQ(AsHandle<cuabi_function>(0x77), untouched);
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "write_scalar<double>"))
      << cuabi_last_error_message();
  size_t size = 5;
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_FOUND),
            StatusName(cuabi_module_get_lowered_name(m, "write_scalar<double>", nullptr, &size)));
  EXPECT_EQ(5u, size);
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_FOUND),
            StatusName(cuabi_module_get_function(m, "no_such_kernel", &untouched)));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "no_such_kernel"));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_module_get_function(m, nullptr, &untouched)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_module_get_function(m, "write_scalar<int>", nullptr)));
  EXPECT_EQ(AsHandle<cuabi_function>(0x77), untouched);
}

// C++ kernels without extern "C" or name expressions, found by their plain
// or qualified names when one kernel has the name, refused with the
// candidates when several do.
TEST_F(ModuleTest, PlainCxxKernelNames) {
  static const char* kSource =
      "__global__ void doublify(float* a) { a[threadIdx.x] *= 2.0f; }\n"
      "namespace ns {\n"
      "__global__ void scale(float* a, float s) { a[threadIdx.x] *= s; }\n"
      "}\n"
      "template <typename T> __global__ void fill(T* a, T v) { a[threadIdx.x] = v; }\n"
      "template __global__ void fill<float>(float*, float);\n"
      "template __global__ void fill<int>(int*, int);\n";
  Module m = Compile(kSource, CUABI_OUTPUT_CUBIN, CUABI_COMPILE_NO_CACHE, {});
  ASSERT_NE(nullptr, m.get());
  Function doublify = GetFunction(m, "doublify");
  ASSERT_NE(nullptr, doublify.get()) << LastError();
  Function scale = GetFunction(m, "scale");
  ASSERT_NE(nullptr, scale.get()) << LastError();
  Function qualified = GetFunction(m, "ns::scale");
  ASSERT_NE(nullptr, qualified.get()) << LastError();

  std::vector<float> host(32);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) + 0.5f;
  Buffer data = Alloc(host.size() * sizeof(float));
  Upload(data, host);
  uint64_t p = Pointer(data);
  float factor = 3.0f;
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 32;
  void* dparams[] = {&p};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(doublify, &config, nullptr, dparams, 1))
      << LastError();
  void* sparams[] = {&p, &factor};
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(qualified, &config, nullptr, sparams, 2))
      << LastError();
  const std::vector<float> got = Download<float>(data, host.size());
  for (size_t i = 0; i < host.size(); ++i) EXPECT_EQ(host[i] * 6.0f, got[i]) << i;

  cuabi_function untouched = AsHandle<cuabi_function>(0x77);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_module_get_function(m, "fill", &untouched)));
  const std::string ambiguous = cuabi_last_error_message();
  EXPECT_TRUE(Contains(ambiguous, "matches 2 kernels")) << ambiguous;
  EXPECT_TRUE(Contains(ambiguous, "fill<float>(float*, float)")) << ambiguous;
  EXPECT_TRUE(Contains(ambiguous, "fill<int>(int*, int)")) << ambiguous;
  EXPECT_TRUE(Contains(ambiguous, "name expression")) << ambiguous;
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_FOUND),
            StatusName(cuabi_module_get_function(m, "doublify2", &untouched)));
  const std::string missing = cuabi_last_error_message();
  EXPECT_TRUE(Contains(missing, "no kernel named 'doublify2'")) << missing;
  EXPECT_TRUE(Contains(missing, "doublify(float*)")) << missing;
  EXPECT_EQ(AsHandle<cuabi_function>(0x77), untouched);
}

TEST_F(ModuleTest, Globals) {
  Module m = Compile(kUtilSource);
  uint64_t counter = 0, coeff = 0;
  size_t counter_bytes = 0, coeff_bytes = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_global(m, "counter", &counter, &counter_bytes))
      << LastError();
  EXPECT_NE(0u, counter);
  EXPECT_EQ(4 * sizeof(int), counter_bytes);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_global(m, "coeff", &coeff, &coeff_bytes))
      << LastError();
  EXPECT_EQ(sizeof(float), coeff_bytes);

  Buffer counter_view, coeff_view;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_wrap(device_, counter, counter_bytes, counter_view.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_wrap(device_, coeff, coeff_bytes, coeff_view.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(counter_view, 0, 0, counter_bytes));
  Upload(coeff_view, std::vector<float>{2.5f});

  Function bump = GetFunction(m, "bump_counter");
  Buffer out = Alloc(sizeof(float));
  uint64_t p = Pointer(out);
  void* params[] = {&p};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 64;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(bump, &config, nullptr, params, 1)) << LastError();
  EXPECT_EQ(2.5f, Download<float>(out, 1)[0]);
  EXPECT_EQ((std::vector<int>{16, 16, 16, 16}), Download<int>(counter_view, 4));

  uint64_t ptr = 77;
  size_t bytes = 77;
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_FOUND),
            StatusName(cuabi_module_get_global(m, "no_such_global", &ptr, &bytes)));
  EXPECT_EQ(77u, ptr);
  EXPECT_EQ(77u, bytes);
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "no_such_global"));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_module_get_global(m, nullptr, &ptr, &bytes)));
}

TEST_F(ModuleTest, PtxOutputIsJittedForTheDevice) {
  Module m = Compile(kSaxpySource, CUABI_OUTPUT_PTX);
  ASSERT_NE(nullptr, m.get());
  Function f = GetFunction(m, "saxpy");
  int32_t binary = 0, ptx = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(f, CUABI_FUNC_BINARY_VERSION, &binary));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(f, CUABI_FUNC_PTX_VERSION, &ptx));
  EXPECT_EQ(cc_major_ * 10 + cc_minor_, binary);
  EXPECT_GT(ptx, 0);
  EXPECT_LE(ptx, cc_major_ * 10 + cc_minor_);
  RunSaxpy(f);
}

TEST_F(ModuleTest, ExplicitArchitectureOptionIsUsed) {
  const std::string sm = "--gpu-architecture=" + Arch("sm_");
  const std::string compute = "--gpu-architecture=" + Arch("compute_");
  Module cubin = Compile(kSaxpySource, CUABI_OUTPUT_CUBIN, CUABI_COMPILE_NO_CACHE, {},
                         {sm.c_str(), "-std=c++17"});
  ASSERT_NE(nullptr, cubin.get());
  Function f = GetFunction(cubin, "saxpy");
  RunSaxpy(f);
  Module ptx =
      Compile(kSaxpySource, CUABI_OUTPUT_PTX, CUABI_COMPILE_NO_CACHE, {}, {compute.c_str()});
  ASSERT_NE(nullptr, ptx.get());
  Function g = GetFunction(ptx, "saxpy");
  RunSaxpy(g);
}

TEST_F(ModuleTest, HeadersThroughTheCompileDesc) {
  const char* header_sources[] = {
      "#pragma once\n__device__ inline float twice(float v) { return 2.0f * v; }\n",
      "#pragma once\n#define SCALE_OFFSET 1.0f\n"};
  const char* header_names[] = {"my_math.cuh", "config/offset.h"};
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = kHeaderUserSource;
  desc.name = "scale.cu";
  desc.header_sources = header_sources;
  desc.header_names = header_names;
  desc.num_headers = 2;
  desc.flags = CUABI_COMPILE_NO_CACHE;
  Module m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_compile(device_, &desc, m.out())) << LastError();
  Function scale = GetFunction(m, "scale");
  Buffer buf = Alloc(256 * sizeof(float));
  std::vector<float> host(256);
  for (int i = 0; i < 256; ++i) host[i] = static_cast<float>(i);
  Upload(buf, host);
  uint64_t p = Pointer(buf);
  unsigned n = 256;
  void* params[] = {&p, &n};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(scale, &config, nullptr, params, 2)) << LastError();
  const std::vector<float> got = Download<float>(buf, 256);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(2.0f * i + 1.0f, got[i]);
}

TEST_F(ModuleTest, CompileErrorGivesTheLog) {
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = "extern \"C\" __global__ void k(int* x)\n{\n  x[0] = ;\n}\n";
  desc.name = "broken_module.cu";
  cuabi_module untouched = AsHandle<cuabi_module>(0x77);
  ASSERT_EQ(StatusName(CUABI_ERROR_COMPILE),
            StatusName(cuabi_module_compile(device_, &desc, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_module>(0x77), untouched);
  const std::vector<char> log = CheckTwoCall(
      [](void* buf, size_t* size) { return cuabi_last_error_log(static_cast<char*>(buf), size); },
      true, false);
  ASSERT_FALSE(log.empty());
  EXPECT_TRUE(Contains(log.data(), "broken_module.cu(3)")) << log.data();
  // A failed build never occupies the cache: the second try fails the same way.
  ASSERT_EQ(StatusName(CUABI_ERROR_COMPILE),
            StatusName(cuabi_module_compile(device_, &desc, &untouched)));
}

TEST_F(ModuleTest, CompileDescIsChecked) {
  cuabi_module untouched = AsHandle<cuabi_module>(0x77);
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  const cuabi_status want = CUABI_ERROR_INVALID_ARGUMENT;
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, nullptr, &untouched));
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, &desc, &untouched));  // no source
  desc.source = kSaxpySource;
  desc.flags = CUABI_COMPILE_NO_CACHE;
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, &desc, nullptr));
  cuabi_compile_desc bad = desc;
  bad.output = static_cast<cuabi_output>(7);
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, &bad, &untouched));
  bad = desc;
  bad.num_options = 1;
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, &bad, &untouched));
  bad = desc;
  bad.num_headers = 1;
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, &bad, &untouched));
  bad = desc;
  bad.num_name_expressions = 1;
  CUABI_EXPECT_STATUS(want, cuabi_module_compile(device_, &bad, &untouched));
  EXPECT_EQ(AsHandle<cuabi_module>(0x77), untouched);

  // A descriptor from a newer header: zero tail accepted, non-zero refused.
  struct Newer {
    cuabi_compile_desc base;
    uint64_t extra;
  } newer;
  std::memset(&newer, 0, sizeof newer);
  newer.base = desc;
  newer.base.struct_size = sizeof newer;
  newer.extra = 1;
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_SUPPORTED),
            StatusName(cuabi_module_compile(device_, &newer.base, &untouched)));
  EXPECT_EQ(AsHandle<cuabi_module>(0x77), untouched);
  newer.extra = 0;
  Module m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_compile(device_, &newer.base, m.out())) << LastError();
  Function f = GetFunction(m, "saxpy");
  RunSaxpy(f);
}

TEST_F(ModuleTest, LoadPtxAndCubinFromMemory) {
  const std::vector<char> ptx = Image(false);
  const std::vector<char> cubin = Image(true);
  ASSERT_FALSE(ptx.empty());
  ASSERT_FALSE(cubin.empty());

  // PTX with its length and no NUL, followed by bytes that are not PTX.
  const size_t ptx_len = std::strlen(ptx.data());
  std::vector<char> unterminated(ptx.data(), ptx.data() + ptx_len);
  const std::string junk = "\n}}} this is not PTX {{{";
  unterminated.insert(unterminated.end(), junk.begin(), junk.end());
  Module from_ptx;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_module_load_data(device_, unterminated.data(), ptx_len, from_ptx.out()))
      << LastError();
  Function f = GetFunction(from_ptx, "saxpy");
  RunSaxpy(f);
  int32_t hit = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(from_ptx, &hit));
  EXPECT_EQ(0, hit) << "a loaded image never came from the compile cache";

  Module from_cubin;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_module_load_data(device_, cubin.data(), cubin.size(), from_cubin.out()))
      << LastError();
  Function g = GetFunction(from_cubin, "saxpy");
  int32_t binary = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(g, CUABI_FUNC_BINARY_VERSION, &binary));
  EXPECT_EQ(cc_major_ * 10 + cc_minor_, binary);
  RunSaxpy(g);
}

// `bytes` copied to the very end of a readable page that is followed by an
// inaccessible one: any read past them faults, so a test that reads too far
// crashes instead of passing by luck.
class GuardedBytes {
 public:
  explicit GuardedBytes(const void* bytes, size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t pages = (n + page - 1) / page + 1;
    length_ = pages * page;
    void* p = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    base_ = static_cast<unsigned char*>(p);
    mprotect(base_ + length_ - page, page, PROT_NONE);
    data_ = base_ + length_ - page - n;
    std::memcpy(data_, bytes, n);
  }
  ~GuardedBytes() {
    if (base_) munmap(base_, length_);
  }
  const void* data() const { return data_; }

 private:
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
  size_t length_ = 0;
};

TEST_F(ModuleTest, LoadBadImages) {
  cuabi_module untouched = AsHandle<cuabi_module>(0x77);
  std::vector<unsigned char> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<unsigned char>(i * 31 + 7);
  const cuabi_status st =
      cuabi_module_load_data(device_, garbage.data(), garbage.size(), &untouched);
  EXPECT_NE(CUABI_SUCCESS, st);
  EXPECT_NE(CUABI_ERROR_INTERNAL, st) << cuabi_last_error_message();
  EXPECT_STRNE("", cuabi_last_error_message());

  // Truncated images whose last byte is the last readable byte: `size` is
  // the image's length, so nothing past it may be read.
  const std::vector<char> cubin = Image(true);
  ASSERT_GT(cubin.size(), 256u);
  for (size_t keep : {size_t{64}, cubin.size() / 2}) {
    GuardedBytes truncated(cubin.data(), keep);
    ASSERT_NE(nullptr, truncated.data());
    EXPECT_NE(CUABI_SUCCESS, cuabi_module_load_data(device_, truncated.data(), keep, &untouched))
        << "a CUBIN cut to " << keep << " of " << cubin.size() << " bytes loaded";
  }
  const std::vector<char> ptx = Image(false);
  const size_t half = std::strlen(ptx.data()) / 2;
  GuardedBytes half_ptx(ptx.data(), half);
  EXPECT_NE(CUABI_SUCCESS, cuabi_module_load_data(device_, half_ptx.data(), half, &untouched));
  EXPECT_EQ(AsHandle<cuabi_module>(0x77), untouched);

  const cuabi_status want = CUABI_ERROR_INVALID_ARGUMENT;
  CUABI_EXPECT_STATUS(want, cuabi_module_load_data(device_, nullptr, 100, &untouched));
  CUABI_EXPECT_STATUS(want, cuabi_module_load_data(device_, cubin.data(), 0, &untouched));
  CUABI_EXPECT_STATUS(want, cuabi_module_load_data(device_, cubin.data(), cubin.size(), nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_module_load_file(device_, nullptr, &untouched));
  EXPECT_EQ(AsHandle<cuabi_module>(0x77), untouched);
}

TEST_F(ModuleTest, LoadFromFiles) {
  const std::string cubin_path = TempPath("saxpy.cubin");
  const std::string ptx_path = TempPath("saxpy.ptx");
  {
    const std::vector<char> cubin = Image(true);
    std::ofstream(cubin_path, std::ios::binary).write(cubin.data(), cubin.size());
    const std::vector<char> ptx = Image(false);
    std::ofstream(ptx_path, std::ios::binary).write(ptx.data(), std::strlen(ptx.data()));
  }
  for (const std::string& path : {cubin_path, ptx_path}) {
    SCOPED_TRACE(path);
    Module m;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_module_load_file(device_, path.c_str(), m.out())) << LastError();
    Function f = GetFunction(m, "saxpy");
    RunSaxpy(f);
  }
  cuabi_module untouched = AsHandle<cuabi_module>(0x77);
  const std::string missing = TempPath("missing.cubin");
  EXPECT_EQ(StatusName(CUABI_ERROR_IO),
            StatusName(cuabi_module_load_file(device_, missing.c_str(), &untouched)));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), missing)) << cuabi_last_error_message();
  EXPECT_EQ(AsHandle<cuabi_module>(0x77), untouched);
}

TEST_F(ModuleTest, FunctionOutlivesItsModule) {
  Module m = Compile(kSaxpySource);
  Function f = GetFunction(m, "saxpy");
  const cuabi_module released = m.get();
  m.reset();
  cuabi_function none = nullptr;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_HANDLE),
            StatusName(cuabi_module_get_function(released, "saxpy", &none)));
  size_t count = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_function_get_param_count(f, &count)) << LastError();
  EXPECT_EQ(5u, count);
  RunSaxpy(f);
}

TEST_F(ModuleTest, ObjectsOutliveTheirDeviceHandle) {
  Device d;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(0, d.out()));
  SaxpyProblem problem(4096, 11);
  Buffer x, y, out;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(d, problem.bytes(), x.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(d, problem.bytes(), y.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc(d, problem.bytes(), out.out()));
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(d, 0, 0, s.out()));
  Event e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(d, 0, e.out()));
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = kSaxpySource;
  desc.flags = CUABI_COMPILE_NO_CACHE;
  Module m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_compile(d, &desc, m.out())) << LastError();
  Function f = GetFunction(m, "saxpy");
  m.reset();

  // Release every device handle, this test's and the fixture's: the objects
  // keep the primary context alive themselves.
  d.reset();
  device_.reset();

  Upload(x, problem.x);
  Upload(y, problem.y);
  uint64_t px = Pointer(x), py = Pointer(y), pout = Pointer(out);
  size_t n = problem.n();
  void* params[] = {&problem.a, &px, &py, &pout, &n};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  config.grid_x = static_cast<uint32_t>(n / 256);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &config, s, params, 5)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(e, s)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_synchronize(e)) << LastError();
  std::vector<float> got(n);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host_async(out, 0, got.data(), problem.bytes(), s));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  EXPECT_EQ(0u, problem.Mismatches(got));
  int32_t ordinal = -1;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_get_device_ordinal(out, &ordinal));
  EXPECT_EQ(0, ordinal);
}

TEST_F(ModuleTest, FromCacheArgumentCheck) {
  Module m = Compile(kSaxpySource);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_module_get_from_cache(m, nullptr)));
  int32_t hit = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(m, &hit));
  EXPECT_EQ(0, hit) << "compiled with CUABI_COMPILE_NO_CACHE";
}

}  // namespace
}  // namespace cuabi_test
