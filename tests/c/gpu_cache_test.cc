// The on-disk compile cache of cuabi_module_compile: misses then hits, keys,
// corrupt entries, CUABI_COMPILE_NO_CACHE, CUABI_CACHE=0, unsafe folders and
// the XDG fallback. The cache settings come from the environment, so ctest
// runs each suite here in its own process (see CMakeLists.txt).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<fs::path> FilesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  return files;
}

// Makes `dir` an empty folder only this user can write.
void MakeEmptyPrivateDir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    fs::remove_all(it->path(), ec);
  }
  ::chmod(dir.c_str(), 0700);
}

class CacheTestBase : public GpuTest {
 protected:
  // Points the cache at `dir` before anything in this process touches cuabi.
  void SetUpCache(const std::string& env_name, const std::string& subdir) {
    std::string base = Env(env_name.c_str());
    if (base.empty()) {
      char templ[] = "/tmp/cuabi_cache_test_XXXXXX";
      const char* made = mkdtemp(templ);
      ASSERT_NE(nullptr, made);
      base = made;
      made_dir_ = base;
      setenv(env_name.c_str(), base.c_str(), 1);
    }
    // The folder exists, empty and private; a subfolder is left for the
    // library to create.
    MakeEmptyPrivateDir(base);
    dir_ = subdir.empty() ? fs::path(base) : fs::path(base) / subdir;
    GpuTest::SetUp();
  }

  void TearDown() override {
    std::error_code ec;
    if (!made_dir_.empty()) fs::remove_all(made_dir_, ec);
  }

  // Compiles and returns the module; *hit gets cuabi_module_get_from_cache.
  Module CompileCached(const char* source, int32_t* hit, uint32_t flags = 0,
                       cuabi_output output = CUABI_OUTPUT_CUBIN,
                       std::vector<const char*> name_expressions = {},
                       std::vector<const char*> options = {}) {
    Module m = Compile(source, output, flags, name_expressions, options);
    *hit = -1;
    if (m.get() != nullptr) {
      EXPECT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(m, hit)) << LastError();
    }
    return m;
  }

  // Runs the SAXPY kernel of `module` on a small problem and checks it.
  void ExpectSaxpyWorks(cuabi_module module) {
    Function f = GetFunction(module, "saxpy");
    ASSERT_NE(nullptr, f.get());
    SaxpyProblem problem(4096, 5);
    Buffer x = Alloc(problem.bytes()), y = Alloc(problem.bytes()), out = Alloc(problem.bytes());
    Upload(x, problem.x);
    Upload(y, problem.y);
    uint64_t px = Pointer(x), py = Pointer(y), pout = Pointer(out);
    size_t n = problem.n();
    void* params[] = {&problem.a, &px, &py, &pout, &n};
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    config.block_x = 256;
    config.grid_x = static_cast<uint32_t>(n / 256);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &config, nullptr, params, 5)) << LastError();
    EXPECT_EQ(0u, problem.Mismatches(Download<float>(out, n)));
  }

  fs::path dir_;
  std::string made_dir_;
};

class ModuleCache : public CacheTestBase {
 protected:
  void SetUp() override { SetUpCache("CUABI_CACHE_DIR", ""); }
};

TEST_F(ModuleCache, FirstCompileMissesSecondHits) {
  int32_t hit = -1;
  Module first = CompileCached(kSaxpySource, &hit);
  ASSERT_NE(nullptr, first.get());
  EXPECT_EQ(0, hit);
  EXPECT_FALSE(FilesUnder(dir_).empty()) << "nothing written to " << dir_;
  ExpectSaxpyWorks(first);

  Module second = CompileCached(kSaxpySource, &hit);
  ASSERT_NE(nullptr, second.get());
  EXPECT_EQ(1, hit);
  ExpectSaxpyWorks(second);
}

TEST_F(ModuleCache, KeyCoversOptionsOutputAndNameExpressions) {
  int32_t hit = -1;
  CompileCached(kSaxpySource, &hit);
  ASSERT_EQ(0, hit);
  Module ptx = CompileCached(kSaxpySource, &hit, 0, CUABI_OUTPUT_PTX);
  EXPECT_EQ(0, hit) << "PTX and CUBIN are different entries";
  ExpectSaxpyWorks(ptx);
  Module defined = CompileCached(kSaxpySource, &hit, 0, CUABI_OUTPUT_CUBIN, {}, {"-DVARIANT=1"});
  EXPECT_EQ(0, hit) << "other options are another entry";
  CompileCached(kSaxpySource, &hit, 0, CUABI_OUTPUT_PTX);
  EXPECT_EQ(1, hit);
  CompileCached(kSaxpySource, &hit, 0, CUABI_OUTPUT_CUBIN, {}, {"-DVARIANT=1"});
  EXPECT_EQ(1, hit);
  const std::string other_source = std::string(kSaxpySource) + "\n// another source\n";
  CompileCached(other_source.c_str(), &hit);
  EXPECT_EQ(0, hit) << "another source is another entry";

  Module ws =
      CompileCached(kWriteScalarSource, &hit, 0, CUABI_OUTPUT_CUBIN, {"write_scalar<float>"});
  EXPECT_EQ(0, hit);
  CompileCached(kWriteScalarSource, &hit, 0, CUABI_OUTPUT_CUBIN,
                {"write_scalar<float>", "write_scalar<int>"});
  EXPECT_EQ(0, hit) << "other name expressions are another entry";
}

// Every typed option of cuabi_compile_desc is part of the key: each change
// is an entry of its own, the same options again are a hit, and the cache
// API counts what was written. (relocatable is keyed the same way but makes
// code for a link, not a module to load; lto is refused for modules.)
TEST_F(ModuleCache, KeyCoversEveryTypedOption) {
  const std::string arch = "compute_" + std::to_string(cc_major_ * 10 + cc_minor_);
  const std::string include = (fs::path(dir_) / "include").string();
  fs::create_directories(include);
  static const char* const kDefineOne[] = {"VARIANT=1"};
  static const char* const kDefineTwo[] = {"VARIANT=2"};
  static const char* const kDefineBare[] = {"VARIANT"};
  static const char* const kFunctionLike[] = {"VARIANT(x)=(x)"};
  const char* const include_paths[] = {include.c_str()};
  const std::vector<std::pair<const char*, std::function<void(cuabi_compile_desc&)>>> variants = {
      {"no typed option", [](cuabi_compile_desc&) {}},
      {"a define", [](cuabi_compile_desc& d) { d.defines = kDefineOne, d.num_defines = 1; }},
      {"another value", [](cuabi_compile_desc& d) { d.defines = kDefineTwo, d.num_defines = 1; }},
      {"no value", [](cuabi_compile_desc& d) { d.defines = kDefineBare, d.num_defines = 1; }},
      {"function-like",
       [](cuabi_compile_desc& d) { d.defines = kFunctionLike, d.num_defines = 1; }},
      {"C++14", [](cuabi_compile_desc& d) { d.cxx_standard = CUABI_STD_CXX14; }},
      {"C++20", [](cuabi_compile_desc& d) { d.cxx_standard = CUABI_STD_CXX20; }},
      {"an include path",
       [&](cuabi_compile_desc& d) { d.include_paths = include_paths, d.num_include_paths = 1; }},
      {"fast math", [](cuabi_compile_desc& d) { d.fast_math = 1; }},
      {"line info", [](cuabi_compile_desc& d) { d.line_info = 1; }},
      {"device debug", [](cuabi_compile_desc& d) { d.device_debug = 1; }},
      {"an architecture", [&](cuabi_compile_desc& d) { d.arch = arch.c_str(); }},
  };
  auto compile = [&](const std::function<void(cuabi_compile_desc&)>& set) {
    cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
    d.source = kSaxpySource;
    set(d);
    Module m;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_module_compile(device_, &d, m.out())) << LastError();
    int32_t hit = -1;
    if (m.get()) {
      EXPECT_EQ(CUABI_SUCCESS, cuabi_module_get_from_cache(m, &hit)) << LastError();
      ExpectSaxpyWorks(m);
    }
    return hit;
  };
  uint64_t entries = 0, bytes = 0;
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_EQ(0, compile(variants[i].second)) << variants[i].first << " hit another's entry";
    ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_get_usage(&entries, &bytes)) << LastError();
    EXPECT_EQ(i + 1, entries) << "after " << variants[i].first;
  }
  for (const auto& [name, set] : variants) EXPECT_EQ(1, compile(set)) << name << " missed";
  uint64_t removed = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_clear(&removed, &bytes)) << LastError();
  EXPECT_EQ(variants.size(), removed);
  EXPECT_EQ(0, compile(variants[1].second)) << "an entry survived cuabi_cache_clear";
}

// cuabi_module_compile refuses LTO-IR (no module loads it) before NVRTC runs.
TEST_F(ModuleCache, LtoIsRefusedForAModule) {
  cuabi_compile_desc d = CUABI_COMPILE_DESC_INIT;
  d.source = kSaxpySource;
  d.lto = 1;
  Module m;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_module_compile(device_, &d, m.out()));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "desc->lto is 1")) << LastError();
  EXPECT_EQ(nullptr, m.get());
}

TEST_F(ModuleCache, NameExpressionsSurviveTheCache) {
  int32_t hit = -1;
  {
    Module m = CompileCached(kWriteScalarSource, &hit, 0, CUABI_OUTPUT_CUBIN,
                             {"write_scalar<float>", "write_scalar<int>"});
    ASSERT_EQ(0, hit);
  }
  Module m = CompileCached(kWriteScalarSource, &hit, 0, CUABI_OUTPUT_CUBIN,
                           {"write_scalar<float>", "write_scalar<int>"});
  ASSERT_NE(nullptr, m.get());
  ASSERT_EQ(1, hit);
  Function f = GetFunction(m, "write_scalar<int>");
  ASSERT_NE(nullptr, f.get());
  Buffer out = Alloc(4);
  uint64_t p = Pointer(out);
  int v = 99;
  void* params[] = {&p, &v};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &config, nullptr, params, 2)) << LastError();
  EXPECT_EQ(99, Download<int>(out, 1)[0]);
  size_t size = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_module_get_lowered_name(m, "write_scalar<float>", nullptr, &size))
      << LastError();
  EXPECT_GT(size, 3u);
}

// Each way of damaging every cache file: the entry is discarded and rebuilt,
// never loaded, and the kernel still computes the right thing.
TEST_F(ModuleCache, CorruptEntriesAreDetectedAndRebuilt) {
  struct Damage {
    const char* what;
    void (*apply)(const fs::path&);
  };
  const Damage damages[] = {
      {"overwritten with garbage",
       [](const fs::path& p) {
         const auto size = fs::file_size(p);
         std::ofstream f(p, std::ios::binary | std::ios::trunc);
         for (uintmax_t i = 0; i < size; ++i) f.put(static_cast<char>((i * 131 + 17) & 0xff));
       }},
      {"truncated to half", [](const fs::path& p) { fs::resize_file(p, fs::file_size(p) / 2); }},
      {"truncated to zero", [](const fs::path& p) { fs::resize_file(p, 0); }},
      {"one byte flipped in the middle",
       [](const fs::path& p) {
         std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
         const std::streamoff mid = static_cast<std::streamoff>(fs::file_size(p) / 2);
         f.seekg(mid);
         const int c = f.get();
         f.seekp(mid);
         f.put(static_cast<char>(c ^ 0x5a));
       }},
  };
  int32_t hit = -1;
  CompileCached(kSaxpySource, &hit);
  ASSERT_EQ(0, hit);
  CompileCached(kSaxpySource, &hit);
  ASSERT_EQ(1, hit);
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    const std::vector<fs::path> files = FilesUnder(dir_);
    ASSERT_FALSE(files.empty());
    for (const fs::path& p : files) d.apply(p);
    Module rebuilt = CompileCached(kSaxpySource, &hit);
    ASSERT_NE(nullptr, rebuilt.get());
    EXPECT_EQ(0, hit) << "a damaged entry was loaded";
    ExpectSaxpyWorks(rebuilt);
    Module again = CompileCached(kSaxpySource, &hit);
    EXPECT_EQ(1, hit) << "the rebuilt entry was not written back";
    ExpectSaxpyWorks(again);
  }
}

TEST_F(ModuleCache, NoCacheFlagNeitherReadsNorWrites) {
  int32_t hit = -1;
  Module m = CompileCached(kSaxpySource, &hit, CUABI_COMPILE_NO_CACHE);
  ASSERT_NE(nullptr, m.get());
  EXPECT_EQ(0, hit);
  EXPECT_TRUE(FilesUnder(dir_).empty()) << "CUABI_COMPILE_NO_CACHE wrote to " << dir_;
  ExpectSaxpyWorks(m);

  CompileCached(kSaxpySource, &hit);
  ASSERT_EQ(0, hit);
  const size_t files = FilesUnder(dir_).size();
  Module uncached = CompileCached(kSaxpySource, &hit, CUABI_COMPILE_NO_CACHE);
  EXPECT_EQ(0, hit) << "CUABI_COMPILE_NO_CACHE read the cache";
  EXPECT_EQ(files, FilesUnder(dir_).size());
  ExpectSaxpyWorks(uncached);
}

TEST_F(ModuleCache, ConcurrentCompilesOfOneSource) {
  const int kThreads = 3;
  std::vector<cuabi_status> status(kThreads, CUABI_ERROR_INTERNAL);
  std::vector<cuabi_module> modules(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
      desc.source = kSaxpySource;
      status[t] = cuabi_module_compile(device_, &desc, &modules[t]);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(CUABI_SUCCESS, status[t]) << "thread " << t;
    Module owned(modules[t]);
    ExpectSaxpyWorks(owned);
  }
  int32_t hit = -1;
  Module after = CompileCached(kSaxpySource, &hit);
  EXPECT_EQ(1, hit);
  ExpectSaxpyWorks(after);
}

class ModuleCacheDisabled : public CacheTestBase {
 protected:
  void SetUp() override {
    if (Env("CUABI_CACHE") != "0") GTEST_SKIP() << "needs CUABI_CACHE=0 (ctest sets it)";
    SetUpCache("CUABI_CACHE_DIR", "");
  }
};

TEST_F(ModuleCacheDisabled, CacheEnvZeroTurnsItOff) {
  int32_t hit = -1;
  Module a = CompileCached(kSaxpySource, &hit);
  EXPECT_EQ(0, hit);
  Module b = CompileCached(kSaxpySource, &hit);
  EXPECT_EQ(0, hit);
  EXPECT_TRUE(FilesUnder(dir_).empty()) << "CUABI_CACHE=0 still wrote to " << dir_;
  ExpectSaxpyWorks(b);
}

class ModuleCacheUnsafeDir : public CacheTestBase {
 protected:
  void SetUp() override {
    SetUpCache("CUABI_CACHE_DIR", "");
    ::chmod(dir_.c_str(), 0777);  // writable by others: must not be used
  }
};

TEST_F(ModuleCacheUnsafeDir, WorldWritableFolderIsNotUsed) {
  int32_t hit = -1;
  Module a = CompileCached(kSaxpySource, &hit);
  ASSERT_NE(nullptr, a.get()) << "an unusable cache never fails a compile";
  EXPECT_EQ(0, hit);
  Module b = CompileCached(kSaxpySource, &hit);
  EXPECT_EQ(0, hit);
  EXPECT_TRUE(FilesUnder(dir_).empty()) << "wrote to a world-writable " << dir_;
  ExpectSaxpyWorks(b);
}

class ModuleCacheXdg : public CacheTestBase {
 protected:
  void SetUp() override {
    if (!Env("CUABI_CACHE_DIR").empty()) {
      GTEST_SKIP() << "needs CUABI_CACHE_DIR unset and XDG_CACHE_HOME set (ctest does that)";
    }
    SetUpCache("XDG_CACHE_HOME", "cuabi");
  }
};

TEST_F(ModuleCacheXdg, FallsBackToXdgCacheHome) {
  int32_t hit = -1;
  CompileCached(kSaxpySource, &hit);
  EXPECT_EQ(0, hit);
  EXPECT_FALSE(FilesUnder(dir_).empty()) << "nothing written to " << dir_;
  Module b = CompileCached(kSaxpySource, &hit);
  EXPECT_EQ(1, hit);
  ExpectSaxpyWorks(b);
}

}  // namespace
}  // namespace cuabi_test
