// The launches the core remembers, so that a sticky fault can be tied to the
// launches that may have caused it.
//
// Every stream, and every device's default stream, keeps a ring of its last
// kLaunchRingSize launches. Recording one is a handful of stores on the
// launching thread: no lock, no atomic read-modify-write, no allocation (a
// launch plan points its slot at the description it prepared once; the other
// launch paths copy theirs into the slot). Two threads launching on one
// stream at once may overwrite each other's slot: the ring is a diagnostic,
// best effort by design. Launches are ordered across streams by a tick of
// the processor's time-stamp counter (the steady clock where there is none).
//
// A successful synchronize or query of a stream marks the launches recorded
// on it before the call as seen complete (by their number on the stream); a
// successful synchronize of a device marks every launch of the device made
// before it began (by tick). When a driver call first answers
// a sticky fault, the launches not seen complete are gathered once, most
// recent first, and every CONTEXT_LOST failure from then on names them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuabi/cuabi.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace cuabi {

class Device;
class Stream;

// What a launch was: trivially copyable, no owned memory (the kernel name
// is interned for the life of the process).
struct LaunchInfo {
  const char* kernel = "";
  uint64_t stream_id = 0;
  // From grid to cluster, the fields of cuabi_launch_config in its order,
  // so that one copy takes them (describe_launch).
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t shared = 0;
  uint32_t flags = 0;
  uint32_t cluster[3] = {0, 0, 0};
  int32_t device = -1;
};

// The same name for every equal string, never freed: kernel names outlive
// their functions in the launch records. Never throws (answers "" when out
// of memory).
const char* intern_kernel_name(const std::string& name) noexcept;

inline uint64_t launch_tick() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

constexpr uint32_t kLaunchRingSize = 8;

struct LaunchSlot {
  std::atomic<const LaunchInfo*> info{nullptr};
  std::atomic<uint64_t> tick{0};
  LaunchInfo own;  // what `info` points at for a launch that kept no description
};

struct LaunchRing {
  std::atomic<uint64_t> next{0};       // launches recorded: the k-th (from 0) is in slot k % size
  std::atomic<uint64_t> seen_next{0};  // launches numbered below this were seen complete
  LaunchSlot slots[kLaunchRingSize];

  // A launch described by `info`, which outlives the slot or is detached
  // from it first (detach). Lock-free and throw-free.
  void record(const LaunchInfo* info) noexcept {
    const uint64_t k = next.load(std::memory_order_relaxed);
    LaunchSlot& s = slots[k % kLaunchRingSize];
    s.tick.store(launch_tick(), std::memory_order_relaxed);
    s.info.store(info, std::memory_order_relaxed);
    next.store(k + 1, std::memory_order_release);
  }
  // A launch whose description lives nowhere else: `fill(LaunchInfo&)`
  // writes it into the slot.
  template <class Fill>
  void record_in_place(Fill&& fill) noexcept {
    const uint64_t k = next.load(std::memory_order_relaxed);
    LaunchSlot& s = slots[k % kLaunchRingSize];
    fill(s.own);
    s.tick.store(launch_tick(), std::memory_order_relaxed);
    s.info.store(&s.own, std::memory_order_relaxed);
    next.store(k + 1, std::memory_order_release);
  }
  // `info` is about to go: every slot pointing at it gets a copy.
  void detach(const LaunchInfo* info) noexcept;
  // Launches recorded since `tick` were captured into a graph, not run:
  // they are forgotten.
  void forget_since(uint64_t tick) noexcept {
    for (LaunchSlot& s : slots)
      if (s.tick.load(std::memory_order_relaxed) >= tick)
        s.info.store(nullptr, std::memory_order_relaxed);
  }
  // How many launches were recorded: taken before a synchronize or query,
  // handed to mark_seen once it succeeded.
  uint64_t count() const noexcept { return next.load(std::memory_order_acquire); }
  // The first `n` launches are complete.
  void mark_seen(uint64_t n) noexcept {
    uint64_t have = seen_next.load(std::memory_order_relaxed);
    while (have < n && !seen_next.compare_exchange_weak(have, n, std::memory_order_relaxed)) {
    }
  }
};

// One launch as a report lists it.
struct RecordedLaunch {
  LaunchInfo info;
  uint64_t sequence = 0;  // 1-based, on its stream
  uint64_t tick = 0;
  bool named_by_log = false;
};

// A device's launch records: the default stream's ring, the rings of the
// device's live streams, and what streams released before being seen
// complete left behind.
class LaunchLog {
 public:
  LaunchRing default_ring;
  // Launches recorded before this tick were seen complete (a synchronize
  // of the device succeeded that began after it).
  std::atomic<uint64_t> seen_tick{0};

  void add(Stream* stream);
  void remove(Stream* stream) noexcept;  // keeps its launches not seen complete
  // A synchronize of the device that began at `tick` succeeded.
  void mark_seen(uint64_t tick) noexcept;
  // The launches not seen complete, in no particular order.
  void unseen(std::vector<RecordedLaunch>& out) const;

 private:
  mutable std::mutex mutex_;
  std::vector<Stream*> streams_;
  std::vector<RecordedLaunch> retired_;  // at most kRetired, the most recent kept
  static constexpr size_t kRetired = 32;
};

// The report of the first sticky fault: the launches not seen complete, most
// recent first (at most kMaxReported), and the text every CONTEXT_LOST
// message ends with. Computed once, from the driver's log text of the call
// that found the fault.
struct FaultReport {
  std::vector<RecordedLaunch> launches;
  std::string text;  // "; launches not seen complete ..." or ""
};
constexpr size_t kMaxReported = 16;

// The report, made on the first call and the same ever after. Never throws
// (answers an empty report when out of memory).
std::shared_ptr<const FaultReport> fault_report(const std::string& driver_log_text) noexcept;
// The report once made, else null.
std::shared_ptr<const FaultReport> fault_report_if_made() noexcept;
// Its text once made, else "".
std::string fault_report_text() noexcept;

}  // namespace cuabi
