#include "fork_guard.hpp"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace cuabi {

namespace detail {
std::atomic<bool> g_forked{false};
}  // namespace detail

namespace {
void on_child() { detail::g_forked.store(true, std::memory_order_relaxed); }
}  // namespace

void fork_guard_arm() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &on_child); });
}

bool fork_guard_tripped() { return detail::g_forked.load(std::memory_order_relaxed); }

}  // namespace cuabi
