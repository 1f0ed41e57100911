// The process's health: usable, lost (since which call) or forked.
#include "health.hpp"

#include <atomic>
#include <mutex>

#include "fork_guard.hpp"

namespace cuabi {

namespace {

struct Health {
  std::mutex mutex;
  std::string message;  // the first call to find the context lost
  cuabi_context_lost_fn callback = nullptr;
  void* user_data = nullptr;
  bool told = false;  // the callback was called
};

Health& state() {
  static Health* h = new Health;  // never destroyed: failures may come at exit
  return *h;
}

std::atomic<bool> g_lost{false};

// Calls the callback once, outside the mutex.
void tell() noexcept {
  Health& h = state();
  cuabi_context_lost_fn callback = nullptr;
  void* user_data = nullptr;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    if (h.told || !h.callback) return;
    h.told = true;
    callback = h.callback;
    user_data = h.user_data;
    message = h.message;
  }
  callback(user_data, message.c_str());
}

}  // namespace

void note_context_lost(const std::string& message) noexcept {
  try {
    Health& h = state();
    {
      std::lock_guard<std::mutex> lock(h.mutex);
      if (!g_lost.load(std::memory_order_relaxed)) {
        h.message = message;
        g_lost.store(true, std::memory_order_release);
      }
    }
    tell();
  } catch (...) {
    // Out of host memory while reporting: the failure itself is still answered.
  }
}

cuabi_health health() noexcept {
  if (fork_guard_tripped()) return CUABI_HEALTH_FORKED;
  return g_lost.load(std::memory_order_acquire) ? CUABI_HEALTH_LOST : CUABI_HEALTH_USABLE;
}

std::string context_lost_message() {
  Health& h = state();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.message;
}

void set_context_lost_callback(cuabi_context_lost_fn callback, void* user_data) {
  Health& h = state();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    h.callback = callback;
    h.user_data = user_data;
    h.told = false;
    if (!g_lost.load(std::memory_order_acquire)) return;
  }
  tell();  // lost already: at once
}

}  // namespace cuabi
