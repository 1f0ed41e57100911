// Thread safety without a GPU: per-thread last errors, concurrent handle
// creation and release, and calls racing a release of the same handle.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "kernels.h"
#include "test_support.h"

namespace {

using cuabi_test::Contains;
using cuabi_test::LastError;

cuabi_program CompiledWriteScalar() {
  cuabi_program program = nullptr;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_create(cuabi_test::kWriteScalarSource, "ws.cu", 0, nullptr,
                                                nullptr, &program));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_add_name_expression(program, "write_scalar<float>"));
  const char* options[] = {"--gpu-architecture=compute_90"};
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_compile(program, 1, options)) << LastError();
  return program;
}

struct ThreadResult {
  int failures = 0;
  std::string first_problem;
  void Fail(const std::string& why) {
    if (failures++ == 0) first_problem = why;
  }
};

// Several threads each produce their own kind of error in a loop, all at the
// same time, and each must only ever see its own status, message and log.
TEST(Threads, EachThreadSeesOnlyItsOwnLastError) {
  cuabi_program shared = CompiledWriteScalar();
  const int kIterations = 300;
  const int kThreads = 5;
  std::vector<ThreadResult> results(kThreads);
  std::vector<std::string> messages(kThreads);
  std::atomic<int> ready{0};

  auto body = [&](int t) {
    ThreadResult& r = results[t];
    ready.fetch_add(1);
    while (ready.load() < kThreads) std::this_thread::yield();
    const std::string expression = "not_registered_" + std::to_string(t);
    const std::string bad_name = "thread" + std::to_string(t) + ".cu";
    for (int i = 0; i < kIterations; ++i) {
      cuabi_status expected = CUABI_SUCCESS;
      std::string marker;
      size_t size = 0;
      switch (t) {
        case 0:
        case 1:  // NOT_FOUND naming a thread-specific expression, on a shared handle
          expected = CUABI_ERROR_NOT_FOUND;
          marker = expression;
          if (cuabi_program_get_lowered_name(shared, expression.c_str(), nullptr, &size) !=
              expected) {
            r.Fail("get_lowered_name did not answer NOT_FOUND");
          }
          break;
        case 2:  // INVALID_HANDLE
          expected = CUABI_ERROR_INVALID_HANDLE;
          marker = "cuabi_program_get_log";
          if (cuabi_program_get_log(nullptr, nullptr, &size) != expected) {
            r.Fail("get_log(NULL) did not answer INVALID_HANDLE");
          }
          break;
        case 3: {  // INVALID_ARGUMENT
          expected = CUABI_ERROR_INVALID_ARGUMENT;
          marker = "source";
          cuabi_program p = nullptr;
          if (cuabi_program_create(nullptr, nullptr, 0, nullptr, nullptr, &p) != expected) {
            r.Fail("create(NULL) did not answer INVALID_ARGUMENT");
          }
          break;
        }
        default: {  // COMPILE, with a log naming this thread's file; compiles are slow
          expected = CUABI_ERROR_COMPILE;
          marker = "cuabi_program_compile";
          if (i % 60 != 0) break;  // keep the last compile error in place meanwhile
          cuabi_program p = nullptr;
          cuabi_program_create("__global__ void k( {", bad_name.c_str(), 0, nullptr, nullptr, &p);
          const char* options[] = {"--gpu-architecture=compute_90"};
          if (cuabi_program_compile(p, 1, options) != expected) r.Fail("compile did not fail");
          cuabi_program_release(p);
          break;
        }
      }
      std::this_thread::yield();
      const std::string message = cuabi_last_error_message();
      if (cuabi_last_error_status() != expected) {
        r.Fail("iteration " + std::to_string(i) + ": status " +
               cuabi_status_get_name(cuabi_last_error_status()) + ", message: " + message);
      }
      if (!Contains(message, marker)) {
        r.Fail("iteration " + std::to_string(i) + ": message lacks \"" + marker + "\": " + message);
      }
      if (i == 0) messages[t] = message;
      if (message != messages[t]) {
        r.Fail("message changed from \"" + messages[t] + "\" to \"" + message + "\"");
      }
      size_t log_size = 0;
      cuabi_last_error_log(nullptr, &log_size);
      std::vector<char> log(log_size + 1, '\0');
      cuabi_last_error_log(log.data(), &log_size);
      const std::string log_text(log.data());
      if (t == 4 && !Contains(log_text, bad_name + "(1)")) {
        r.Fail("compile log lacks " + bad_name + "(1): " + log_text);
      }
      if (t != 4 && !log_text.empty()) r.Fail("a thread without compile errors sees a log");
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (auto& th : threads) th.join();

  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(0, results[t].failures) << "thread " << t << ": " << results[t].first_problem;
  }
  for (int a = 0; a < kThreads; ++a) {
    for (int b = a + 1; b < kThreads; ++b) {
      EXPECT_NE(messages[a], messages[b]) << "threads " << a << " and " << b;
    }
  }
  cuabi_program_release(shared);
}

TEST(Threads, ConcurrentCreateAndRelease) {
  const int kThreads = 4;
  const int kRounds = 150;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::vector<cuabi_program> mine;
      for (int i = 0; i < kRounds; ++i) {
        cuabi_program p = nullptr;
        if (cuabi_program_create("__global__ void k() {}", nullptr, 0, nullptr, nullptr, &p) !=
            CUABI_SUCCESS) {
          bad.fetch_add(1);
          continue;
        }
        mine.push_back(p);
        if (mine.size() > 4) {
          cuabi_program_release(mine.front());
          mine.erase(mine.begin());
        }
        // Every handle this thread still holds is valid; released ones are not.
        for (cuabi_program q : mine) {
          size_t size = 0;
          if (cuabi_program_get_log(q, nullptr, &size) != CUABI_SUCCESS) bad.fetch_add(1);
        }
      }
      for (cuabi_program q : mine) {
        cuabi_program_release(q);
        size_t size = 0;
        if (cuabi_program_get_log(q, nullptr, &size) != CUABI_ERROR_INVALID_HANDLE) {
          bad.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, bad.load());
}

TEST(Threads, SimultaneousReleaseOfOneHandle) {
  const int kThreads = 6;
  for (int round = 0; round < 40; ++round) {
    cuabi_program p = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_program_create("__global__ void k() {}", nullptr, 0, nullptr, nullptr, &p));
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        cuabi_program_release(p);
      });
    }
    for (auto& th : threads) th.join();
    size_t size = 0;
    ASSERT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(p, nullptr, &size));
  }
}

// A call racing the release of its handle either completes or answers
// INVALID_HANDLE: never a crash, never another status.
TEST(Threads, CallsRacingARelease) {
  for (int round = 0; round < 20; ++round) {
    cuabi_program p = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_program_create("__global__ void k() {}", nullptr, 0, nullptr, nullptr, &p));
    std::atomic<int> other{0};
    std::thread user([&] {
      for (int i = 0; i < 5000; ++i) {
        size_t size = 0;
        const cuabi_status st = cuabi_program_get_log(p, nullptr, &size);
        if (st != CUABI_SUCCESS && st != CUABI_ERROR_INVALID_HANDLE) other.fetch_add(1);
        if (st == CUABI_SUCCESS && size != 1) other.fetch_add(1);
        if (st == CUABI_ERROR_INVALID_HANDLE) break;
      }
    });
    std::this_thread::yield();
    cuabi_program_release(p);
    user.join();
    EXPECT_EQ(0, other.load());
    size_t size = 0;
    EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(p, nullptr, &size));
  }
}

}  // namespace
