// Device core dumps: a child that faults with dumps on writes one at the
// path it set, a child with them off writes none, and bad settings are
// refused before the driver sees them.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gpu_support.h"

extern char** environ;

namespace cuabi_test {
namespace {

using CoredumpTest = GpuTest;

int RunChild(const char* mode, const std::string& path) {
  const char* argv[] = {CUABI_COREDUMP_CHILD, mode, path.c_str(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, CUABI_COREDUMP_CHILD, nullptr, nullptr, const_cast<char**>(argv),
                  environ) != 0)
    return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool Exists(const std::string& path, off_t* size) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  *size = st.st_size;
  return true;
}

TEST_F(CoredumpTest, AFaultingChildWritesADumpOnlyWhenEnabled) {
  char dir[] = "/tmp/cuabi-coredump-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  const std::string on = std::string(dir) + "/on.core", off = std::string(dir) + "/off.core";
  off_t size = 0;
  EXPECT_EQ(0, RunChild("off", off));
  EXPECT_FALSE(Exists(off, &size)) << "a dump was written with dumps off";
  const int rc = RunChild("on", on);
  if (rc == 77)
    GTEST_SKIP() << "this machine cannot write device core dumps: cuabi_coredump_set answered "
                    "CUABI_ERROR_NOT_SUPPORTED (the child printed why)";
  if (!Exists(on, &size)) {
    // The driver wrote no dump on this machine: said, and not counted as passed.
    GTEST_SKIP() << "the driver wrote no device core dump at " << on
                 << " (dumps enabled, lightweight, no abort; the child exited " << rc << ")";
  }
  EXPECT_EQ(0, rc) << "the child with dumps on failed";
  EXPECT_GT(size, 0);
  std::printf("device core dump: %s, %lld bytes\n", on.c_str(), static_cast<long long>(size));
  unlink(on.c_str());
  rmdir(dir);
}

TEST_F(CoredumpTest, BadSettingsAreRefusedByName) {
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_device_set_coredump(device_, 1, nullptr, 1u << 9));
  EXPECT_NE(std::string::npos, LastError().find("0x200 hold bits")) << LastError();
  const std::string long_path(1024, 'x');
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_device_set_coredump(device_, 1, long_path.c_str(), 0));
  EXPECT_NE(std::string::npos, LastError().find("1024 bytes long")) << LastError();
  // A valid per-context setting (where the driver can write dumps), then off.
  const cuabi_status st = cuabi_device_set_coredump(
      device_, 1, "/tmp/cuabi-%p.core", CUABI_COREDUMP_LIGHTWEIGHT | CUABI_COREDUMP_SKIP_ABORT);
  if (st == CUABI_ERROR_NOT_SUPPORTED)
    EXPECT_NE(std::string::npos, LastError().find("libcudadebugger.so.1")) << LastError();
  else
    EXPECT_EQ(CUABI_SUCCESS, st) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_device_set_coredump(device_, 0, nullptr, 0)) << LastError();
}

}  // namespace
}  // namespace cuabi_test
