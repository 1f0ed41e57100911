/*
 * Helpers shared by the multi-GPU examples (multi_saxpy.c, ipc_peer.c,
 * nccl_allreduce.c): status checks that print cuabi's own message, the
 * device count with the "no device" report, a compile that prints NVRTC's
 * log, hex for IPC handles on a command line, and starting this very
 * program again as a child process (posix_spawn of /proc/self/exe, never
 * fork: a forked child could not use CUDA) with a deadline on its end.
 *
 * Each example defines MG_PROG (its name, for messages) and
 * _POSIX_C_SOURCE 200809L before including this header.
 *
 * Exit statuses used by every example in this folder:
 *   0  verified; or only one device, reported as "needs two devices, found 1"
 *   1  a failure (the message says which call and why)
 *   2  NCCL could not be loaded (nccl_allreduce only)
 *   3  no CUDA device at all (no driver, or the driver sees none)
 *   4  a rank (or the child) failed; the others were stopped cleanly
 *   5  a deadline passed; what was still running was killed
 *   6  the rank that --fault-rank made fail (nccl_allreduce ranks only)
 */
#ifndef CUABI_EXAMPLES_MG_UTIL_H
#define CUABI_EXAMPLES_MG_UTIL_H

#include <cuabi/cuabi.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MG_PROG
#error "define MG_PROG (the example's name) before including mg_util.h"
#endif

extern char** environ;

#define MG_EXIT_OK 0
#define MG_EXIT_FAILED 1
#define MG_EXIT_NO_NCCL 2
#define MG_EXIT_NO_DEVICE 3
#define MG_EXIT_PEER_FAILED 4
#define MG_EXIT_TIMEOUT 5
#define MG_EXIT_PLANTED_FAULT 6

/* Reports a failed cuabi call with its status name and cuabi's message, and
 * leaves with status 1. */
#define MG_CHECK(call)                                                                            \
  do {                                                                                            \
    cuabi_status mg_st_ = (call);                                                                 \
    if (mg_st_ != CUABI_SUCCESS) {                                                                \
      fprintf(stderr, "%s: %s failed: %s\n  %s\n", MG_PROG, #call, cuabi_status_get_name(mg_st_), \
              cuabi_last_error_message());                                                        \
      exit(MG_EXIT_FAILED);                                                                       \
    }                                                                                             \
  } while (0)

/* Seconds on a monotonic clock. */
static inline double mg_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void mg_sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* The number of CUDA devices. Where there is none (no driver, the stub
 * driver, or 0 devices) it says so, naming why, and returns 0. */
static inline int32_t mg_device_count(void) {
  int32_t count = 0;
  const cuabi_status st = cuabi_device_get_count(&count);
  if (st != CUABI_SUCCESS) {
    fprintf(stderr, "%s: no CUDA device: %s: %s\n", MG_PROG, cuabi_status_get_name(st),
            cuabi_last_error_message());
    return 0;
  }
  if (count == 0) fprintf(stderr, "%s: no CUDA device: the driver reports 0 devices\n", MG_PROG);
  return count;
}

/* A device's name, for reports ("?" if it cannot be read). */
static inline void mg_device_name(cuabi_device device, char* buf, size_t size) {
  size_t n = size;
  if (cuabi_device_get_name(device, buf, &n) != CUABI_SUCCESS) snprintf(buf, size, "?");
}

/* Compiles `source` for `device` and loads it; on failure prints cuabi's
 * message and, for a compile error, NVRTC's log, and leaves with status 1. */
static inline cuabi_module mg_compile(cuabi_device device, const char* source, const char* name) {
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  const char* options[] = {"--fmad=false", "-std=c++17"};
  desc.source = source;
  desc.name = name;
  desc.options = options;
  desc.num_options = sizeof options / sizeof options[0];
  cuabi_module module = NULL;
  const cuabi_status st = cuabi_module_compile(device, &desc, &module);
  if (st != CUABI_SUCCESS) {
    fprintf(stderr, "%s: cuabi_module_compile(%s) failed: %s\n  %s\n", MG_PROG, name,
            cuabi_status_get_name(st), cuabi_last_error_message());
    if (st == CUABI_ERROR_COMPILE) {
      size_t size = 0;
      if (cuabi_last_error_log(NULL, &size) == CUABI_SUCCESS && size > 0) {
        char* log = (char*)malloc(size);
        if (log && cuabi_last_error_log(log, &size) == CUABI_SUCCESS)
          fprintf(stderr, "NVRTC log:\n%s\n", log);
        free(log);
      }
    }
    exit(MG_EXIT_FAILED);
  }
  return module;
}

static inline cuabi_function mg_function(cuabi_module module, const char* name) {
  cuabi_function f = NULL;
  MG_CHECK(cuabi_module_get_function(module, name, &f));
  return f;
}

/* A 1-D launch configuration of `blocks` x `threads`. */
static inline cuabi_launch_config mg_config(uint32_t blocks, uint32_t threads) {
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.grid_x = blocks;
  config.block_x = threads;
  return config;
}

/* Bytes as lowercase hex (2 * n characters and a NUL into `out`). */
static inline void mg_to_hex(const unsigned char* bytes, size_t n, char* out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}

/* Hex back to exactly `n` bytes; 0 on success, -1 on a malformed string. */
static inline int mg_from_hex(const char* hex, unsigned char* out, size_t n) {
  if (strlen(hex) != 2 * n) return -1;
  for (size_t i = 0; i < 2 * n; ++i) {
    const char c = hex[i];
    int v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v = c - 'A' + 10;
    else
      return -1;
    if (i % 2 == 0)
      out[i / 2] = (unsigned char)(v << 4);
    else
      out[i / 2] = (unsigned char)(out[i / 2] | v);
  }
  return 0;
}

/* This program's own path (for starting it again), or NULL. */
static inline const char* mg_self_path(void) {
  static char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) {
    fprintf(stderr, "%s: readlink(/proc/self/exe) failed: %s\n", MG_PROG, strerror(errno));
    return NULL;
  }
  path[n] = '\0';
  return path;
}

/* Moves `fd` to a descriptor >= 10 that is closed on exec, so that a child
 * gets only what mg_spawn_self hands it. Returns the new descriptor or -1. */
static inline int mg_private_fd(int fd) {
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  if (moved < 0) {
    fprintf(stderr, "%s: fcntl(F_DUPFD_CLOEXEC) failed: %s\n", MG_PROG, strerror(errno));
    return -1;
  }
  close(fd);
  return moved;
}

/* A pipe whose two ends are private descriptors (see mg_private_fd). */
static inline int mg_pipe(int fds[2]) {
  int raw[2];
  if (pipe(raw) != 0) {
    fprintf(stderr, "%s: pipe failed: %s\n", MG_PROG, strerror(errno));
    return -1;
  }
  fds[0] = mg_private_fd(raw[0]);
  fds[1] = mg_private_fd(raw[1]);
  return fds[0] < 0 || fds[1] < 0 ? -1 : 0;
}

/* Starts this program again (posix_spawn of /proc/self/exe's target, with
 * this environment) with `argv` (argv[0] included, NULL-terminated). When
 * `stdin_fd` >= 0 it becomes the child's standard input; when `extra_fd`
 * >= 0 it becomes the child's descriptor 3. No other descriptor of ours
 * reaches the child (mg_pipe's are closed on exec). 0 on success. */
static inline int mg_spawn_self(char* const* argv, int stdin_fd, int extra_fd, pid_t* pid) {
  const char* self = mg_self_path();
  if (!self) return -1;
  posix_spawn_file_actions_t actions;
  int rc = posix_spawn_file_actions_init(&actions);
  if (rc == 0 && stdin_fd >= 0) rc = posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  if (rc == 0 && extra_fd >= 0) rc = posix_spawn_file_actions_adddup2(&actions, extra_fd, 3);
  fflush(NULL); /* nothing buffered twice */
  if (rc == 0) rc = posix_spawn(pid, self, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    fprintf(stderr, "%s: posix_spawn(%s) failed: %s\n", MG_PROG, self, strerror(rc));
    return -1;
  }
  return 0;
}

/* "exit status N" or "killed by signal N (SIGNAME text)". */
static inline void mg_describe_status(int status, char* buf, size_t size) {
  if (WIFEXITED(status))
    snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(buf, size, "wait status 0x%x", (unsigned)status);
}

/* Waits for `pid` until `deadline` (mg_now() seconds). Returns 0 with
 * *status set when it ended, 1 when the deadline passed (the child is then
 * killed with SIGKILL and reaped), -1 on a waitpid failure. */
static inline int mg_wait_deadline(pid_t pid, double deadline, int* status) {
  for (;;) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return 0;
    if (r < 0 && errno != EINTR) {
      fprintf(stderr, "%s: waitpid failed: %s\n", MG_PROG, strerror(errno));
      return -1;
    }
    if (mg_now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      return 1;
    }
    mg_sleep_ms(10);
  }
}

/* Reads exactly `n` bytes from `fd`, waiting at most until `deadline`.
 * 0 on success; -1 on end of file, an error, or the deadline. */
static inline int mg_read_full(int fd, void* buf, size_t n, double deadline) {
  size_t got = 0;
  while (got < n) {
    const double left = deadline - mg_now();
    if (left <= 0) return -1;
    struct pollfd p;
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    const int ready = poll(&p, 1, (int)(left * 1000.0) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return -1;
    const ssize_t r = read(fd, (char*)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

/* Writes all `n` bytes to `fd`; 0 on success. */
static inline int mg_write_full(int fd, const void* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = write(fd, (const char*)buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    done += (size_t)w;
  }
  return 0;
}

#endif /* CUABI_EXAMPLES_MG_UTIL_H */
