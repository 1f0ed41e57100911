// Streams, events, graphs and launches from several threads.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// Work that cannot finish before the test says so: a kernel that waits for a
// flag in pinned host memory (or gives up after about ten seconds).
class BlockedWorkTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    module_ = Compile(kUtilSource);
    wait_flag_ = GetFunction(module_, "wait_flag");
    ASSERT_NE(nullptr, wait_flag_.get());
    ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_alloc(device_, sizeof(int), flag_buffer_.out()))
        << LastError();
    void* p = nullptr;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_host_buffer_get_pointer(flag_buffer_, &p));
    flag_ = static_cast<volatile int*>(p);
    *flag_ = 0;
    result_ = Alloc(sizeof(int));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(result_, 0, 0, sizeof(int)));
  }

  void TearDown() override {
    Release();  // never leave a kernel spinning
    if (flag_ != nullptr) cuabi_device_synchronize(device_);
  }

  // Launches the waiting kernel on `stream`.
  void LaunchBlocked(cuabi_stream stream) {
    uint64_t flag_ptr = reinterpret_cast<uintptr_t>(flag_);
    uint64_t out = Pointer(result_);
    void* params[] = {&flag_ptr, &out};
    cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(wait_flag_, &config, stream, params, 2)) << LastError();
  }

  void Release() {
    if (flag_ != nullptr) {
      __atomic_store_n(const_cast<int*>(flag_), 1, __ATOMIC_SEQ_CST);
    }
  }

  // 1: the kernel saw the flag; 2: it gave up waiting.
  int Result() { return Download<int>(result_, 1)[0]; }

  Module module_;
  Function wait_flag_;
  HostBuffer flag_buffer_;
  volatile int* flag_ = nullptr;
  Buffer result_;
};

TEST_F(BlockedWorkTest, StreamQueryIsNotReadyUntilTheWorkIsDone) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_query(s)) << "an idle stream is done";
  LaunchBlocked(s);
  cuabi_last_error_clear();
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_READY), StatusName(cuabi_stream_query(s)));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_last_error_status()) << "NOT_READY is no failure";
  EXPECT_STREQ("", cuabi_last_error_message());
  Release();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_query(s));
  EXPECT_EQ(1, Result());
}

TEST_F(BlockedWorkTest, EventQueryIsNotReadyUntilReached) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  Event e;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, e.out()));
  LaunchBlocked(s);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(e, s)) << LastError();
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_READY), StatusName(cuabi_event_query(e)));
  Release();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_synchronize(e)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_query(e));
  EXPECT_EQ(1, Result());
}

TEST_F(BlockedWorkTest, StreamWaitEventOrdersTwoStreams) {
  Function times_ten_plus = GetFunction(module_, "times_ten_plus");
  Stream a, b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, a.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, b.out()));
  Event done_on_a;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, done_on_a.out()));
  LaunchBlocked(a);  // result = 1 once released
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(done_on_a, a));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_wait_event(b, done_on_a)) << LastError();
  uint64_t p = Pointer(result_);
  int v = 2;
  void* params[] = {&p, &v};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(times_ten_plus, &config, b, params, 2));  // result*10+2
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_READY), StatusName(cuabi_stream_query(b)))
      << "b waits for a, which waits for the flag";
  Release();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(b)) << LastError();
  EXPECT_EQ(12, Result()) << "b ran before a finished";
}

using StreamTest = GpuTest;

TEST_F(StreamTest, CreateWithPriorityAndWrap) {
  int32_t least = 0, greatest = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_stream_priority_range(device_, &least, &greatest));
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, greatest, s.out()))
      << LastError();
  uint64_t raw = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_handle(s, &raw));
  EXPECT_NE(0u, raw);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_stream_get_handle(s, nullptr)));

  // A wrapped stream works and its release does not destroy the stream.
  Module m = Compile(kUtilSource);
  Function add = GetFunction(m, "add_scalar");
  Buffer buf = Alloc(256 * sizeof(int));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(buf, 0, 0, 256 * sizeof(int)));
  uint64_t p = Pointer(buf);
  int v = 3;
  unsigned n = 256;
  void* params[] = {&p, &v, &n};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  {
    Stream wrapped;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_wrap(device_, raw, wrapped.out())) << LastError();
    uint64_t raw2 = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_handle(wrapped, &raw2));
    EXPECT_EQ(raw, raw2);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(add, &config, wrapped, params, 3)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(wrapped)) << LastError();
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(add, &config, s, params, 3)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  for (int x : Download<int>(buf, 256)) ASSERT_EQ(6, x);
}

TEST_F(StreamTest, ElapsedTimeNeedsTimingEvents) {
  Event a, b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, a.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_DISABLE_TIMING, b.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(a, nullptr));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(b, nullptr));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_synchronize(b));
  float ms = 1234.5f;
  EXPECT_NE(CUABI_SUCCESS, cuabi_event_get_elapsed_ms(a, b, &ms));
  EXPECT_EQ(1234.5f, ms);
  EXPECT_STRNE("", cuabi_last_error_message());
  Event c;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, c.out()));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_event_get_elapsed_ms(c, c, nullptr)));
}

TEST_F(StreamTest, GraphCaptureInstantiateLaunch) {
  const unsigned n = 4096;
  Module m = Compile(kUtilSource);
  Function add = GetFunction(m, "add_scalar");
  Buffer buf = Alloc(n * sizeof(int));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(buf, 0, 0x01, n * sizeof(int)));
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));

  uint64_t p = Pointer(buf);
  unsigned count = n;
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  config.grid_x = n / 256;
  int values[3] = {1, 10, 100};

  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_begin_capture(s, CUABI_CAPTURE_GLOBAL)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_memset_async(buf, 0, 0, n * sizeof(int), s)) << LastError();
  for (int i = 0; i < 3; ++i) {
    void* params[] = {&p, &values[i], &count};
    EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch(add, &config, s, params, 3)) << LastError();
  }
  Graph graph;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_end_capture(s, graph.out())) << LastError();

  // Captured, not run.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  for (int x : Download<int>(buf, n)) ASSERT_EQ(0x01010101, x);

  size_t nodes = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_get_node_count(graph, &nodes)) << LastError();
  EXPECT_EQ(4u, nodes);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_graph_get_node_count(graph, nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_graph_instantiate(graph, nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_stream_end_capture(s, nullptr)));
  // Ending a capture that never began fails and returns no graph.
  cuabi_graph none = AsHandle<cuabi_graph>(0x77);
  EXPECT_NE(CUABI_SUCCESS, cuabi_stream_end_capture(s, &none));
  EXPECT_EQ(AsHandle<cuabi_graph>(0x77), none);
  GraphExec exec;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_instantiate(graph, exec.out())) << LastError();
  graph.reset();  // the executable graph does not need it
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, s)) << LastError();
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();
  for (int x : Download<int>(buf, n)) ASSERT_EQ(111, x);

  // And on the default stream.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_graph_exec_launch(exec, nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_));
  for (int x : Download<int>(buf, n)) ASSERT_EQ(111, x);
}

// Two threads share one function and one stream (and each also has its own
// stream); every result is right.
TEST_F(StreamTest, TwoThreadsLaunchOnOneContext) {
  Module m = Compile(kSaxpySource);
  Function saxpy = GetFunction(m, "saxpy");
  ASSERT_NE(nullptr, saxpy.get());
  Stream shared;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, shared.out()));
  const size_t n = 1 << 16;
  std::atomic<int> failures{0};
  std::vector<std::string> problems(2);

  auto work = [&](int t) {
    auto fail = [&](const std::string& why) {
      if (failures.fetch_add(1) == 0 || problems[t].empty()) problems[t] = why;
    };
    SaxpyProblem problem(n, 100 + t);
    cuabi_buffer x = nullptr, y = nullptr, out = nullptr;
    cuabi_stream own = nullptr;
    if (cuabi_buffer_alloc(device_, problem.bytes(), &x) ||
        cuabi_buffer_alloc(device_, problem.bytes(), &y) ||
        cuabi_buffer_alloc(device_, problem.bytes(), &out) ||
        cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, &own)) {
      fail("setup: " + LastError());
    } else {
      cuabi_buffer_copy_from_host(x, 0, problem.x.data(), problem.bytes());
      cuabi_buffer_copy_from_host(y, 0, problem.y.data(), problem.bytes());
      uint64_t px = 0, py = 0, pout = 0;
      cuabi_buffer_get_pointer(x, &px);
      cuabi_buffer_get_pointer(y, &py);
      cuabi_buffer_get_pointer(out, &pout);
      size_t count = problem.n();
      cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
      config.block_x = 256;
      config.grid_x = static_cast<uint32_t>(n / 256);
      for (int i = 0; i < 20; ++i) {
        problem.a = static_cast<float>(2 << ((t + i) % 3));  // 2, 4 or 8: exact products
        void* params[] = {&problem.a, &px, &py, &pout, &count};
        cuabi_stream stream = (i % 2 == 0) ? shared.get() : own;
        if (cuabi_buffer_memset_async(out, 0, 0, problem.bytes(), stream) ||
            cuabi_function_launch(saxpy, &config, stream, params, 5) || cuabi_stream_synchronize(stream)) {
          fail("iteration " + std::to_string(i) + ": " + LastError());
          break;
        }
        std::vector<float> got(problem.n());
        if (cuabi_buffer_copy_to_host(out, 0, got.data(), problem.bytes())) {
          fail("copy back: " + LastError());
          break;
        }
        size_t first = 0;
        if (problem.Mismatches(got, &first) != 0) {
          fail("iteration " + std::to_string(i) + ": wrong value at " + std::to_string(first));
          break;
        }
      }
    }
    cuabi_stream_release(own);
    cuabi_buffer_release(out);
    cuabi_buffer_release(y);
    cuabi_buffer_release(x);
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(0, failures.load()) << problems[0] << " | " << problems[1];
}

}  // namespace
}  // namespace cuabi_test
