// The compile cache under stress on a GPU, through cuabi_module_compile:
// several processes compiling the same kernel at once into one cache folder,
// then cache files truncated or replaced by garbage. Every process must get
// a kernel that computes SAXPY correctly; a bad entry is never served.
//
// The processes are fresh executables (this one, with --compile-worker: see
// workers.cc), not forks: a child forked after CUDA initialised cannot use
// CUDA.
#include <cuabi/cuabi.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support.h"

namespace hardening {

namespace {

// Starts `count` workers at once with CUABI_CACHE_DIR=dir and waits for all.
std::vector<ChildResult> RunWorkers(int count, const std::string& dir) {
  std::vector<RunningChild> children;
  for (int i = 0; i < count; ++i)
    children.push_back(
        SpawnProcess(SelfExe(), {"--compile-worker"}, {"CUABI_CACHE_DIR=" + dir}, {"CUABI_CACHE"}));
  return WaitChildren(children, 300);
}

std::vector<std::string> CacheFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 12 && name.compare(name.size() - 12, 12, ".cubin-cache") == 0)
        out.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return out;
}

class GpuCacheProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    HARDENING_REQUIRE_GPU();
    if (const char* d = std::getenv("CUABI_CACHE_DIR")) saved_dir_ = d;
    char tmpl[] = "/tmp/cuabi-gpu-cache-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir_ = tmpl;
  }
  void TearDown() override {
    if (saved_dir_.empty())
      unsetenv("CUABI_CACHE_DIR");
    else
      setenv("CUABI_CACHE_DIR", saved_dir_.c_str(), 1);
    if (dir_.empty()) return;
    for (const std::string& f : CacheFiles(dir_)) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  // Runs `count` workers; all must verify SAXPY. Returns how many were cache hits.
  int ExpectAllCorrect(int count, const char* stage) {
    std::vector<ChildResult> results = RunWorkers(count, dir_);
    int hits = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_TRUE(results[i].exited && results[i].code == 0)
          << stage << ", worker " << i << ": " << results[i].Describe();
      if (Contains(results[i].output, "from_cache=1")) ++hits;
    }
    std::printf("%s: %d workers correct, %d served from the cache\n", stage, count, hits);
    return hits;
  }
  std::string dir_;
  std::string saved_dir_;
};

TEST_F(GpuCacheProcesses, SameKernelAtOnceThenDamagedEntries) {
  ExpectAllCorrect(6, "cold cache, 6 processes at once");
  std::vector<std::string> files = CacheFiles(dir_);
  ASSERT_EQ(1u, files.size()) << "one kernel, one entry";
  EXPECT_EQ(6, ExpectAllCorrect(6, "warm cache, 6 processes at once"));

  // Truncated to half: not served, rebuilt.
  struct stat st;
  ASSERT_EQ(0, stat(files[0].c_str(), &st));
  ASSERT_EQ(0, truncate(files[0].c_str(), st.st_size / 2));
  EXPECT_EQ(0, ExpectAllCorrect(1, "truncated entry"));
  EXPECT_EQ(1, ExpectAllCorrect(1, "rebuilt entry"));

  // Garbage of the same length: not served, rebuilt. Then garbage again with
  // three processes at once (a late one may find the rebuilt entry: fine).
  auto garble = [&](uint32_t seed) {
    struct stat now;
    ASSERT_EQ(0, stat(files[0].c_str(), &now));
    std::mt19937 rng(seed);
    std::string junk(static_cast<size_t>(now.st_size), '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    int fd = open(files[0].c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(static_cast<ssize_t>(junk.size()), write(fd, junk.data(), junk.size()));
    close(fd);
  };
  garble(5);
  EXPECT_EQ(0, ExpectAllCorrect(1, "garbage entry"));
  garble(6);
  ExpectAllCorrect(3, "garbage entry, 3 processes at once");

  // One flipped bit in the image part: not served.
  ASSERT_EQ(0, stat(files[0].c_str(), &st));
  {
    int fd = open(files[0].c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char c = 0;
    const off_t at = st.st_size / 2;
    ASSERT_EQ(1, pread(fd, &c, 1, at));
    c ^= 0x10;
    ASSERT_EQ(1, pwrite(fd, &c, 1, at));
    close(fd);
  }
  EXPECT_EQ(0, ExpectAllCorrect(1, "one bit flipped"));
  EXPECT_EQ(4, ExpectAllCorrect(4, "repaired entry, 4 processes at once"));
}

TEST_F(GpuCacheProcesses, MissingAndUnusableCacheFolders) {
  // A folder that does not exist yet is created.
  const std::string nested = dir_ + "/a/b";
  setenv("CUABI_CACHE_DIR", nested.c_str(), 1);
  Device dev;
  HARDENING_ASSERT_OK(cuabi_device_get(0, dev.out()));
  auto compile_and_run = [&](const char* stage, int expect_hit) {
    Module m;
    Function fn;
    HARDENING_ASSERT_OK(CompileModule(dev, kSaxpySource, m.out(), 0));
    HARDENING_ASSERT_OK(cuabi_module_get_function(m, "saxpy", fn.out()));
    int32_t hit = -1;
    HARDENING_EXPECT_OK(cuabi_module_get_from_cache(m, &hit));
    EXPECT_EQ(expect_hit, hit) << stage;
    EXPECT_EQ("", RunSaxpy(dev, fn, nullptr, 1 << 16, 9)) << stage;
  };
  compile_and_run("missing folder", 0);
  compile_and_run("the folder it created", 1);
  // A folder others may write to is not used: a compile still works, uncached.
  ASSERT_EQ(0, chmod(nested.c_str(), 0777));
  compile_and_run("world-writable folder", 0);
  ASSERT_EQ(0, chmod(nested.c_str(), 0700));
  // A file where the folder should be.
  const std::string file = dir_ + "/file";
  int fd = open(file.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  setenv("CUABI_CACHE_DIR", file.c_str(), 1);
  compile_and_run("a file as the folder", 0);
  unlink(file.c_str());
  for (const std::string& f : CacheFiles(nested)) unlink(f.c_str());
  rmdir(nested.c_str());
  rmdir((dir_ + "/a").c_str());
}

}  // namespace
}  // namespace hardening
