// NVTX ranges and marks. A named domain is created once per process and kept
// (NVTX tools expect domains to live as long as their annotations). The core
// tracks what NVTX does not check when no tool is attached: which ranges each
// thread has open (a pop with none open is refused), and which started
// ranges are open (an end of an unknown id is refused); so a program's
// annotations are checked the same with a profiler and without one.
#include "nvtx.hpp"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "driver.hpp"

namespace cuabi {

namespace {

struct Domains {
  std::mutex mutex;
  std::unordered_map<std::string, nvtxDomainHandle_t> by_name;
};

Domains& domains() {
  static Domains* d = new Domains;  // never destroyed: annotations may come at exit
  return *d;
}

std::string domain_label(const char* domain) {
  return domain ? "domain '" + std::string(domain) + "'" : std::string("NVTX's default domain");
}

// The handle of `name` (nullptr: the default domain), made on first use.
nvtxDomainHandle_t domain_of(const char* name) {
  if (!name) return nullptr;
  if (!*name) fail_invalid("domain is an empty name; NULL names NVTX's default domain");
  // The thread's domains so far: a short list, searched without allocating.
  thread_local std::vector<std::pair<std::string, nvtxDomainHandle_t>> seen;
  for (const auto& [known, handle] : seen)
    if (known == name) return handle;
  Domains& all = domains();
  nvtxDomainHandle_t handle;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    auto g = all.by_name.find(name);
    if (g == all.by_name.end()) g = all.by_name.emplace(name, nvtxDomainCreateA(name)).first;
    handle = g->second;
  }
  seen.emplace_back(name, handle);
  return handle;
}

nvtxEventAttributes_t attributes(const char* message, uint32_t argb) {
  if (!message) fail_invalid("message is NULL");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  if (argb) {
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
  }
  return a;
}

// The domains of the calling thread's open ranges, innermost last. The
// pointer is only compared; the default domain is nullptr.
thread_local std::vector<nvtxDomainHandle_t> t_open;

struct Started {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::pair<nvtxDomainHandle_t, nvtxRangeId_t>> open;
  std::atomic<uint64_t> next{1};
};

Started& started() {
  static Started* s = new Started;
  return *s;
}

}  // namespace

void nvtx_range_push(const char* domain, const char* message, uint32_t argb) {
  const nvtxEventAttributes_t a = attributes(message, argb);
  nvtxDomainHandle_t d = domain_of(domain);
  t_open.push_back(d);
  nvtxDomainRangePushEx(d, &a);
}

void nvtx_range_pop(const char* domain) {
  nvtxDomainHandle_t d = domain_of(domain);
  for (auto it = t_open.rbegin(); it != t_open.rend(); ++it) {
    if (*it == d) {
      t_open.erase(std::next(it).base());
      nvtxDomainRangePop(d);
      return;
    }
  }
  fail_invalid("no range of " + domain_label(domain) +
               " is open on this thread (cuabi_nvtx_range_push opens one)");
}

uint64_t nvtx_range_start(const char* domain, const char* message, uint32_t argb) {
  const nvtxEventAttributes_t a = attributes(message, argb);
  nvtxDomainHandle_t d = domain_of(domain);
  Started& s = started();
  const uint64_t id = s.next.fetch_add(1, std::memory_order_relaxed);
  const nvtxRangeId_t nvtx_id = nvtxDomainRangeStartEx(d, &a);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.open.emplace(id, std::make_pair(d, nvtx_id));
  return id;
}

void nvtx_range_end(uint64_t id) {
  Started& s = started();
  std::pair<nvtxDomainHandle_t, nvtxRangeId_t> range;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.open.find(id);
    if (it == s.open.end())
      fail_invalid("range " + std::to_string(id) +
                   " is not open (not started by cuabi_nvtx_range_start, or ended already)");
    range = it->second;
    s.open.erase(it);
  }
  nvtxDomainRangeEnd(range.first, range.second);
}

void nvtx_mark(const char* domain, const char* message, uint32_t argb) {
  const nvtxEventAttributes_t a = attributes(message, argb);
  nvtxDomainMarkEx(domain_of(domain), &a);
}

void profiler_start(const Device& device) {
  const DriverApi& d = device.make_current();
  check(d.cuProfilerStart(), "cuProfilerStart");
}

void profiler_stop(const Device& device) {
  const DriverApi& d = device.make_current();
  check(d.cuProfilerStop(), "cuProfilerStop");
}

}  // namespace cuabi
