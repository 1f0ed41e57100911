// The driver's log, kept twice: each thread's lines since its last failing
// driver call (for that failure's message), and the process's last 256
// lines (cuabi_driver_log_read). The real driver ends the lines of a failing
// call with "Returning <code> (<name>) from <function>", so the lines of the
// last failing call are those after the previous such line.
#include "driver_log.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>

#include "error.hpp"

namespace cuabi {

namespace {

constexpr size_t kKept = 256;        // lines of the process, for reading
constexpr size_t kPerThread = 64;    // lines of a thread awaiting a failure

struct Line {
  std::string text;  // as the driver wrote it
  std::string stamp;  // "[hh:mm:ss.mmm][thread][E|W]"
};

struct Kept {
  std::mutex mutex;
  std::deque<Line> lines;
};

Kept& kept() {
  static Kept* k = new Kept;  // never destroyed: the driver may log until exit
  return *k;
}

std::atomic<bool> g_available{false};

thread_local std::deque<std::string> t_pending;

std::string stamp_now(CUlogLevel level) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const long ms = static_cast<long>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%02d:%02d:%02d.%03ld][%ld][%c]", tm.tm_hour, tm.tm_min,
                tm.tm_sec, ms, static_cast<long>(syscall(SYS_gettid)),
                level == CU_LOG_LEVEL_WARNING ? 'W' : 'E');
  return buf;
}

void CUDA_CB on_log(void*, CUlogLevel level, char* message, size_t length) noexcept {
  try {
    std::string text(message ? message : "", message ? length : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
    if (t_pending.size() == kPerThread) t_pending.pop_front();
    t_pending.push_back(text);
    Kept& k = kept();
    std::lock_guard<std::mutex> lock(k.mutex);
    if (k.lines.size() == kKept) k.lines.pop_front();
    k.lines.push_back(Line{std::move(text), stamp_now(level)});
  } catch (...) {
    // Out of memory in a log callback: the line is lost, the call goes on.
  }
}

bool is_return_line(const std::string& s) { return s.rfind("Returning ", 0) == 0; }

void need_available() {
  driver();
  if (!g_available.load(std::memory_order_acquire))
    fail(CUABI_ERROR_NOT_SUPPORTED, "the driver (" + driver_path() + ", CUDA " +
                                        std::to_string(driver_version()) +
                                        ") keeps no log; CUDA 12.9 drivers and later do");
}

}  // namespace

void driver_log_start(const DriverApi& api) {
  CUlogsCallbackHandle handle = nullptr;
  const CUresult r = api.cuLogsRegisterCallback(&on_log, nullptr, &handle);
  t_missing_entry_point = nullptr;  // an older driver: no log, and no failure
  g_available.store(r == CUDA_SUCCESS, std::memory_order_release);
}

std::string driver_log_of_failure() {
  if (t_pending.empty()) return "";
  // The last failing call's lines: after the previous "Returning" line.
  size_t first = t_pending.size();
  while (first > 0) {
    if (is_return_line(t_pending[first - 1]) && first != t_pending.size()) break;
    --first;
  }
  std::string out = "; the driver logged: ";
  for (size_t i = first; i < t_pending.size(); ++i) {
    if (i != first) out += " | ";
    out += t_pending[i];
  }
  t_pending.clear();
  return out;
}

std::string driver_log_lines(size_t last) {
  need_available();
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  const size_t n = k.lines.size();
  const size_t from = last == 0 || last >= n ? 0 : n - last;
  std::string out;
  for (size_t i = from; i < n; ++i) out += k.lines[i].stamp + " " + k.lines[i].text + "\n";
  return out;
}

void driver_log_dump(const char* path) {
  if (!path) fail_invalid("path is NULL");
  const std::string text = driver_log_lines(0);
  FILE* f = std::fopen(path, "w");
  if (!f) fail(CUABI_ERROR_IO, std::string("cannot open ") + path + " to write: " +
                                  std::strerror(errno), errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed)
    fail(CUABI_ERROR_IO, std::string("writing the driver's log to ") + path + " failed", errno);
}

}  // namespace cuabi
