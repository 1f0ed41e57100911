// Helpers shared by the hardening suite: owned handles, last-error text,
// UTF-8 checks, child processes with a hang guard, and the GPU fixture.
#ifndef CUABI_TESTS_HARDENING_SUPPORT_H
#define CUABI_TESTS_HARDENING_SUPPORT_H

#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/select.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../c/test_support.h"
#include "../common/utf8.h"
#include "kinds.h"

extern char** environ;

namespace hardening {

// What the C API tests have too (tests/c, tests/common): the owners of every
// kind of handle, and helpers.
#define HARDENING_OWNER(Name, name) using cuabi_test::Name;
CUABI_HANDLE_KINDS(HARDENING_OWNER)
#undef HARDENING_OWNER
using cuabi_test::Contains;
using cuabi_test::IsUtf8;
using cuabi_test::LastError;
using cuabi_test::NoDeviceReason;
using cuabi_test::StatusName;

// ---------------------------------------------------------------------------
// The kinds of handle, from the one list (capi/core/kinds.h)
// ---------------------------------------------------------------------------

// Kind k, its number in handle values (from 1), is kKindNames[k - 1].
inline constexpr const char* kKindNames[] = {
#define HARDENING_KIND_NAME(Name, name) #name,
    CUABI_HANDLE_KINDS(HARDENING_KIND_NAME)
#undef HARDENING_KIND_NAME
};
inline constexpr uint64_t kKindCount = sizeof(kKindNames) / sizeof(kKindNames[0]);

// `value` into the release of every kind but `except` (e.g. "program").
inline void ReleaseAsEveryKind(uint64_t value, const char* except = nullptr) {
#define HARDENING_RELEASE(Name, name)             \
  if (!except || std::strcmp(except, #name) != 0) \
    cuabi_##name##_release(cuabi_test::AsHandle<cuabi_##name>(value));
  CUABI_HANDLE_KINDS(HARDENING_RELEASE)
#undef HARDENING_RELEASE
}

// ---------------------------------------------------------------------------
// Status and message helpers
// ---------------------------------------------------------------------------

// Statuses compared by name, with the last error on failure (test_support.h).
#define HARDENING_EXPECT_STATUS(expected, call) CUABI_EXPECT_STATUS(expected, call)
#define HARDENING_ASSERT_STATUS(expected, call) CUABI_ASSERT_STATUS(expected, call)
#define HARDENING_EXPECT_OK(call) HARDENING_EXPECT_STATUS(CUABI_SUCCESS, call)
#define HARDENING_ASSERT_OK(call) HARDENING_ASSERT_STATUS(CUABI_SUCCESS, call)

// Fetches a string through a two-call getter; "" and a test failure on error.
inline std::string FetchString(const std::function<cuabi_status(char*, size_t*)>& get) {
  size_t size = 0;
  cuabi_status st = get(nullptr, &size);
  EXPECT_EQ(StatusName(CUABI_SUCCESS), StatusName(st)) << LastError();
  if (st != CUABI_SUCCESS || size == 0) return std::string();
  std::string out(size, '\0');
  st = get(&out[0], &size);
  EXPECT_EQ(StatusName(CUABI_SUCCESS), StatusName(st)) << LastError();
  if (st != CUABI_SUCCESS) return std::string();
  out.resize(size ? size - 1 : 0);
  return out;
}

inline std::string ProgramLog(cuabi_program p) {
  return FetchString([&](char* b, size_t* s) { return cuabi_program_get_log(p, b, s); });
}

inline std::string LastErrorLog() {
  return FetchString([&](char* b, size_t* s) { return cuabi_last_error_log(b, s); });
}

// ---------------------------------------------------------------------------
// Handle values
// ---------------------------------------------------------------------------

template <typename H>
H AsHandle(uint64_t v) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(v));
}
template <typename H>
uint64_t HandleValue(H h) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
}

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

inline constexpr const char* kSaxpySource = R"(
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
)";

// Small kernels for the GPU parts: a store to any address, a kernel using
// dynamic shared memory, a __device__ global and a template.
inline constexpr const char* kUtilSource = R"(
extern "C" __global__ void poke(unsigned long long address, int value)
{
  *reinterpret_cast<volatile int*>(address) = value;
}

extern "C" __global__ void fill_shared(int* out)
{
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__device__ int hardening_counter;

template <typename T>
__global__ void store(T* out, T value)
{
  *out = value;
}
)";

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

struct ChildResult {
  bool exited = false;     // exited normally (see code)
  int code = -1;           // exit status when exited
  int signal = 0;          // the signal that ended it, if any
  bool timed_out = false;  // still running at the deadline: killed
  std::string output;      // what the child wrote to its report pipe

  std::string Describe() const {
    std::string d;
    if (timed_out)
      d = "hung (killed at the deadline)";
    else if (exited)
      d = "exited with " + std::to_string(code);
    else
      d = "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
    if (!output.empty()) d += "; it reported:\n" + output;
    return d;
  }
};

// The write end of the report pipe, valid in a child made by RunInChild.
inline int& ChildReportFd() {
  static int fd = -1;
  return fd;
}

// Appends a line to the child's report (async-signal-unsafe calls are fine:
// the child runs ordinary code, as a forked application would).
inline void ChildSay(const std::string& line) {
  std::string l = line + "\n";
  if (ChildReportFd() >= 0) {
    ssize_t ignored = write(ChildReportFd(), l.data(), l.size());
    (void)ignored;
  }
}

// A forked child still running, with the read end of its report pipe.
struct RunningChild {
  pid_t pid = -1;
  int fd = -1;
  std::string error;  // why it could not be started
};

// Starts `body` in a forked child that exits with body's return value. An
// alarm of `timeout_s` seconds in the child ends it if it hangs.
inline RunningChild StartChild(const std::function<int()>& body, int timeout_s) {
  RunningChild c;
  int fds[2];
  if (pipe(fds) != 0) {
    c.error = std::string("pipe: ") + strerror(errno);
    return c;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    c.error = std::string("fork: ") + strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return c;
  }
  if (pid == 0) {
    close(fds[0]);
    ChildReportFd() = fds[1];
    alarm(static_cast<unsigned>(timeout_s));
    int code = 99;
    try {
      code = body();
    } catch (...) {
      ChildSay("the child threw a C++ exception");
      code = 98;
    }
    _exit(code);
  }
  close(fds[1]);
  c.pid = pid;
  c.fd = fds[0];
  return c;
}

// Waits for every child, reading their reports meanwhile (so a chatty child
// cannot block on a full pipe); a child still running `timeout_s` + 5 seconds
// after the call is killed and reported as hung.
inline std::vector<ChildResult> WaitChildren(std::vector<RunningChild>& children, int timeout_s) {
  std::vector<ChildResult> results(children.size());
  std::vector<bool> done(children.size(), false);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  char buf[4096];
  size_t left = 0;
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].pid < 0) {
      results[i].output = children[i].error;
      done[i] = true;
    } else {
      ++left;
    }
  }
  auto drain = [&](size_t i) {
    for (;;) {
      ssize_t n = read(children[i].fd, buf, sizeof(buf));
      if (n <= 0) break;
      results[i].output.append(buf, static_cast<size_t>(n));
    }
  };
  while (left > 0) {
    fd_set set;
    FD_ZERO(&set);
    int maxfd = -1;
    for (size_t i = 0; i < children.size(); ++i)
      if (!done[i] && children[i].fd >= 0) {
        FD_SET(children[i].fd, &set);
        if (children[i].fd > maxfd) maxfd = children[i].fd;
      }
    struct timeval tv = {0, 20000};
    if (maxfd >= 0 && select(maxfd + 1, &set, nullptr, nullptr, &tv) > 0) {
      for (size_t i = 0; i < children.size(); ++i)
        if (!done[i] && FD_ISSET(children[i].fd, &set)) {
          ssize_t n = read(children[i].fd, buf, sizeof(buf));
          if (n > 0) results[i].output.append(buf, static_cast<size_t>(n));
        }
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const bool late = now.tv_sec - start.tv_sec > timeout_s + 5;
    for (size_t i = 0; i < children.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      pid_t w = waitpid(children[i].pid, &status, WNOHANG);
      if (w != children[i].pid && late) {
        kill(children[i].pid, SIGKILL);
        waitpid(children[i].pid, &status, 0);
        results[i].timed_out = true;
        w = children[i].pid;
      }
      if (w != children[i].pid) continue;
      if (!results[i].timed_out) {
        if (WIFEXITED(status)) {
          results[i].exited = true;
          results[i].code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          results[i].signal = WTERMSIG(status);
        }
      }
      drain(i);
      close(children[i].fd);
      done[i] = true;
      --left;
    }
  }
  return results;
}

// Runs `body` in a forked child and returns how it ended (see StartChild).
inline ChildResult RunInChild(const std::function<int()>& body, int timeout_s = 60) {
  std::vector<RunningChild> one = {StartChild(body, timeout_s)};
  return WaitChildren(one, timeout_s)[0];
}

// Runs `count` children at once, child i running body(i).
inline std::vector<ChildResult> RunInChildren(int count, const std::function<int(int)>& body,
                                              int timeout_s = 60) {
  std::vector<RunningChild> children;
  for (int i = 0; i < count; ++i)
    children.push_back(StartChild([&, i] { return body(i); }, timeout_s));
  return WaitChildren(children, timeout_s);
}

// This executable's path.
inline std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

// Starts `exe` with `args` (argv[1]...) in a fresh process (posix_spawn, not
// a fork: the child may use CUDA), its stdout and stderr as its report. The
// environment is this process's, with `set` ("NAME=value") replacing or
// adding variables and the names in `unset` removed.
inline RunningChild SpawnProcess(const std::string& exe, const std::vector<std::string>& args,
                                 const std::vector<std::string>& set = {},
                                 const std::vector<std::string>& unset = {}) {
  RunningChild c;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool drop = false;
    for (const std::string& u : unset) drop = drop || name == u;
    for (const std::string& s : set) drop = drop || name == s.substr(0, s.find('='));
    if (!drop) env_strings.push_back(entry);
  }
  for (const std::string& s : set) env_strings.push_back(s);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(&s[0]);
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = {exe};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(&s[0]);
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) {
    c.error = std::string("pipe: ") + strerror(errno);
    return c;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    c.error = "posix_spawn " + exe + ": " + strerror(rc);
    close(fds[0]);
    return c;
  }
  c.pid = pid;
  c.fd = fds[0];
  return c;
}

// ---------------------------------------------------------------------------
// GPU fixture
// ---------------------------------------------------------------------------

#define HARDENING_REQUIRE_GPU()                                          \
  do {                                                                   \
    const std::string hardening_reason_ = ::hardening::NoDeviceReason(); \
    if (!hardening_reason_.empty()) GTEST_SKIP() << hardening_reason_;   \
  } while (0)

// Compiles `source` for `device` (no cache unless `flags` says otherwise).
inline cuabi_status CompileModule(cuabi_device device, const char* source, cuabi_module* out,
                                  uint32_t flags = CUABI_COMPILE_NO_CACHE,
                                  std::vector<const char*> name_expressions = {}) {
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = source;
  desc.flags = flags;
  desc.name_expressions = name_expressions.data();
  desc.num_name_expressions = name_expressions.size();
  return cuabi_module_compile(device, &desc, out);
}

// Runs SAXPY (n elements, a = 2) with `fn` on `stream` (may be NULL) and
// compares with the host. Returns "" when correct, else what went wrong.
inline std::string RunSaxpy(cuabi_device device, cuabi_function fn, cuabi_stream stream, size_t n,
                            uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n), y(n), out(n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  const size_t bytes = n * sizeof(float);
  Buffer dx, dy, dout;
  auto fail = [](const char* what, cuabi_status st) {
    return std::string(what) + ": " + cuabi_status_get_name(st) + ": " + cuabi_last_error_message();
  };
  cuabi_status st;
  if ((st = cuabi_buffer_alloc(device, bytes, dx.out()))) return fail("alloc x", st);
  if ((st = cuabi_buffer_alloc(device, bytes, dy.out()))) return fail("alloc y", st);
  if ((st = cuabi_buffer_alloc(device, bytes, dout.out()))) return fail("alloc out", st);
  if ((st = cuabi_buffer_copy_from_host(dx, 0, x.data(), bytes))) return fail("copy x", st);
  if ((st = cuabi_buffer_copy_from_host(dy, 0, y.data(), bytes))) return fail("copy y", st);
  uint64_t px = 0, py = 0, pout = 0;
  cuabi_buffer_get_pointer(dx, &px);
  cuabi_buffer_get_pointer(dy, &py);
  cuabi_buffer_get_pointer(dout, &pout);
  float a = 2.0f;
  size_t count = n;
  void* params[] = {&a, &px, &py, &pout, &count};
  const size_t sizes[] = {sizeof(a), sizeof(px), sizeof(py), sizeof(pout), sizeof(count)};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  config.grid_x = static_cast<uint32_t>((n + 255) / 256);
  if ((st = cuabi_function_launch_sized(fn, &config, stream, params, sizes, 5))) return fail("launch", st);
  if (stream && (st = cuabi_stream_synchronize(stream))) return fail("stream sync", st);
  if ((st = cuabi_buffer_copy_to_host(dout, 0, out.data(), bytes))) return fail("copy out", st);
  for (size_t i = 0; i < n; ++i) {
    const float want = a * x[i] + y[i];
    if (out[i] != want)
      return "element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " +
             std::to_string(want);
  }
  return "";
}

}  // namespace hardening

#endif  // CUABI_TESTS_HARDENING_SUPPORT_H
