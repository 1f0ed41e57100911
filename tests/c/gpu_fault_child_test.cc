// The launch that faulted, through cuabi.hpp, in a child process (a fault
// poisons the process that takes it): the child launches three kernels on
// two streams after one seen complete, the second writing far out of bounds,
// and prints what the C++ error carried. Its message and launches() name the
// out-of-bounds kernel with its grid, block and stream, and not the launch
// seen complete; the child's device reports itself lost, this process's
// stays usable.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gpu_support.h"

extern char** environ;

namespace cuabi_test {
namespace {

using FaultChildTest = GpuTest;

// Runs the child; its exit status (or 128 + signal) and its output.
int RunChild(std::string* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const char* argv[] = {CUABI_FAULT_CHILD, nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, CUABI_FAULT_CHILD, &actions, nullptr,
                                  const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return -1;
  }
  char buf[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The text after "<key> " on the last line that starts with it, or "".
std::string Line(const std::string& out, const std::string& key) {
  const std::string text = "\n" + out;
  const size_t at = text.rfind("\n" + key + " ");
  if (at == std::string::npos) return "";
  const size_t start = at + key.size() + 2;
  return text.substr(start, text.find('\n', start) - start);
}

TEST_F(FaultChildTest, TheErrorNamesTheLaunchesNotSeenComplete) {
  std::string out;
  const int rc = RunChild(&out);
  std::printf("the child's report:\n%s", out.c_str());
  ASSERT_EQ(0, rc) << out;
  const std::string a = Line(out, "stream a"), b = Line(out, "stream b");
  ASSERT_FALSE(a.empty() || b.empty()) << out;
  EXPECT_EQ("CUABI_ERROR_CONTEXT_LOST from", Line(out, "caught").substr(0, 29)) << out;
  const std::string message = Line(out, "message");
  EXPECT_NE(std::string::npos,
            message.find("kernel 'write_far' grid (3, 1, 1) block (64, 1, 1) shared 0 bytes, "
                         "launch 1 on stream " + b + " of device 0"))
      << message;
  EXPECT_NE(std::string::npos,
            message.find("kernel 'fill' grid (8, 1, 1) block (256, 1, 1) shared 0 bytes, launch 2 "
                         "on stream " + a))
      << message;
  EXPECT_EQ(std::string::npos, message.find("grid (4, 1, 1)")) << "the launch seen complete: " << message;
  const bool logged = message.find("; the driver logged: ") != std::string::npos;
  EXPECT_TRUE(logged ||
              message.find("the driver logged nothing during the failing call") != std::string::npos)
      << message;
  std::printf("the driver's log during the failing call: %s\n",
              logged ? "lines carried in the message" : "none");
  // launches(): write_far as data, after the third launch where it ran.
  EXPECT_NE(std::string::npos, out.find(" write_far grid 3 block 64 stream " + b + " sequence 1\n"))
      << out;
  EXPECT_NE(std::string::npos, out.find(" fill grid 8 block 256 stream " + a + " sequence 2\n"))
      << out;
  EXPECT_EQ(std::to_string(CUABI_HEALTH_LOST), Line(out, "health")) << out;
  cuabi_health here = CUABI_HEALTH_LOST;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_health(device_, &here));
  EXPECT_EQ(CUABI_HEALTH_USABLE, here) << "this process's device";
}

}  // namespace
}  // namespace cuabi_test
