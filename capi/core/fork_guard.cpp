#include "fork_guard.hpp"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace cuabi {

namespace {
std::atomic<bool> g_tripped{false};
void on_child() { g_tripped.store(true, std::memory_order_relaxed); }
}  // namespace

void fork_guard_arm() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &on_child); });
}

bool fork_guard_tripped() { return g_tripped.load(std::memory_order_relaxed); }

}  // namespace cuabi
