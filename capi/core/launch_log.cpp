// The launch records and the report of the first sticky fault.
#include "launch_log.hpp"

#include <algorithm>
#include <unordered_set>

#include "launch.hpp"
#include "objects.hpp"

namespace cuabi {

const char* intern_kernel_name(const std::string& name) noexcept {
  static std::mutex* mutex = new std::mutex;  // never destroyed: names outlive exit
  static auto* names = new std::unordered_set<std::string>;
  try {
    std::lock_guard<std::mutex> lock(*mutex);
    return names->insert(name).first->c_str();  // node-based: the string never moves
  } catch (...) {
    return "";
  }
}

void LaunchRing::detach(const LaunchInfo* info) noexcept {
  for (LaunchSlot& s : slots) {
    if (s.info.load(std::memory_order_relaxed) != info) continue;
    s.own = *info;
    const LaunchInfo* expected = info;
    s.info.compare_exchange_strong(expected, &s.own, std::memory_order_relaxed);
  }
}

namespace {

// The launches of `ring` not seen complete (recorded at or after the tick
// `since`, numbered at or above the ring's seen_next), newest first.
void unseen_of(const LaunchRing& ring, uint64_t since, std::vector<RecordedLaunch>& out) {
  const uint64_t n = ring.next.load(std::memory_order_acquire);
  const uint64_t seen = ring.seen_next.load(std::memory_order_relaxed);
  const uint64_t kept = n < kLaunchRingSize ? n : kLaunchRingSize;
  for (uint64_t i = 0; i < kept; ++i) {
    const uint64_t k = n - 1 - i;
    if (k < seen) break;
    const LaunchSlot& s = ring.slots[k % kLaunchRingSize];
    const LaunchInfo* info = s.info.load(std::memory_order_relaxed);
    const uint64_t tick = s.tick.load(std::memory_order_relaxed);
    if (!info || tick < since) continue;
    RecordedLaunch r;
    r.info = *info;
    r.sequence = k + 1;
    r.tick = tick;
    out.push_back(r);
  }
}

}  // namespace

void LaunchLog::add(Stream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.push_back(stream);
}

void LaunchLog::remove(Stream* stream) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(streams_.begin(), streams_.end(), stream);
    if (it == streams_.end()) return;
    streams_.erase(it);
    const size_t before = retired_.size();
    unseen_of(stream->launches, seen_tick.load(std::memory_order_relaxed), retired_);
    if (retired_.size() == before) return;
    // The most recent kRetired stay.
    std::sort(retired_.begin(), retired_.end(),
              [](const RecordedLaunch& a, const RecordedLaunch& b) { return a.tick > b.tick; });
    if (retired_.size() > kRetired) retired_.resize(kRetired);
  } catch (...) {
    // Out of host memory while keeping a diagnostic: the stream goes anyway.
  }
}

void LaunchLog::mark_seen(uint64_t tick) noexcept {
  uint64_t have = seen_tick.load(std::memory_order_relaxed);
  while (have < tick && !seen_tick.compare_exchange_weak(have, tick, std::memory_order_relaxed)) {
  }
}

void LaunchLog::unseen(std::vector<RecordedLaunch>& out) const {
  const uint64_t since = seen_tick.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  unseen_of(default_ring, since, out);
  for (const Stream* s : streams_) unseen_of(s->launches, since, out);
  for (const RecordedLaunch& r : retired_)
    if (r.tick >= since) out.push_back(r);
}

namespace {

struct Reports {
  std::mutex mutex;
  std::shared_ptr<const FaultReport> report;
};

Reports& reports() {
  static Reports* r = new Reports;  // never destroyed: failures may come at exit
  return *r;
}

std::string describe(const RecordedLaunch& r) {
  const LaunchInfo& i = r.info;
  std::string s = "kernel '" + std::string(i.kernel) + "' grid " +
                  dims(i.grid[0], i.grid[1], i.grid[2]) + " block " +
                  dims(i.block[0], i.block[1], i.block[2]) + " shared " +
                  std::to_string(i.shared) + " bytes";
  if (i.cluster[0] || i.cluster[1] || i.cluster[2])
    s += " cluster " + dims(i.cluster[0], i.cluster[1], i.cluster[2]);
  s += ", launch " + std::to_string(r.sequence) + " on " +
       (i.stream_id ? "stream " + std::to_string(i.stream_id) : std::string("the default stream")) +
       " of device " + std::to_string(i.device);
  return s;
}

std::shared_ptr<const FaultReport> make_report(const std::string& log) {
  auto report = std::make_shared<FaultReport>();
  std::vector<RecordedLaunch>& all = report->launches;
  for_each_device([&](const Device& d) { d.launches.unseen(all); });
  std::sort(all.begin(), all.end(),
            [](const RecordedLaunch& a, const RecordedLaunch& b) { return a.tick > b.tick; });
  const size_t total = all.size();
  if (all.size() > kMaxReported) all.resize(kMaxReported);
  std::vector<std::string> named;
  for (RecordedLaunch& r : all) {
    r.named_by_log = r.info.kernel[0] && log.find(r.info.kernel) != std::string::npos;
    if (r.named_by_log &&
        std::find(named.begin(), named.end(), r.info.kernel) == named.end())
      named.push_back(r.info.kernel);
  }
  std::string& t = report->text;
  if (all.empty()) {
    t = "; every launch cuabi recorded had been seen complete";
    return report;
  }
  t = "; launches not seen complete, most recent first: ";
  for (size_t i = 0; i < all.size(); ++i) {
    if (i) t += "; ";
    t += "[" + std::to_string(i + 1) + "] " + describe(all[i]);
  }
  if (total > all.size())
    t += "; and " + std::to_string(total - all.size()) + " earlier";
  if (log.empty()) {
    t += "; the driver logged nothing during the failing call";
  } else if (named.empty()) {
    t += "; the driver's log names none of these kernels";
  } else {
    t += "; the driver's log names kernel";
    t += named.size() > 1 ? "s " : " ";
    for (size_t i = 0; i < named.size(); ++i) t += (i ? ", '" : "'") + named[i] + "'";
  }
  return report;
}

}  // namespace

std::shared_ptr<const FaultReport> fault_report(const std::string& driver_log_text) noexcept {
  Reports& r = reports();
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.report) r.report = make_report(driver_log_text);
    return r.report;
  } catch (...) {
    return nullptr;
  }
}

std::shared_ptr<const FaultReport> fault_report_if_made() noexcept {
  Reports& r = reports();
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.report;
  } catch (...) {
    return nullptr;
  }
}

std::string fault_report_text() noexcept {
  try {
    std::shared_ptr<const FaultReport> r = fault_report_if_made();
    return r ? r->text : std::string();
  } catch (...) {
    return std::string();
  }
}

}  // namespace cuabi
