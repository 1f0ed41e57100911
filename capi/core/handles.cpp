#include "handles.hpp"

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuabi {

const char* kind_name(Kind kind) {
  // Indexed by the kind's number; 0 is no kind.
  static const char* const kNames[] = {
#define CUABI_KIND_NAME(Name, name) "cuabi_" #name,
      "handle", CUABI_HANDLE_KINDS(CUABI_KIND_NAME)
#undef CUABI_KIND_NAME
  };
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kKindCount + 1u, "a name for every kind");
  const auto i = static_cast<size_t>(kind);
  return i <= kKindCount ? kNames[i] : "handle";
}

namespace handles {

namespace {

constexpr uint32_t kChunkBits = 12;
constexpr uint32_t kChunkSize = 1u << kChunkBits;
constexpr uint32_t kMaxChunks = 1u << (24 - kChunkBits);  // 24-bit slot index
constexpr uint64_t kLive = 1ull << 31;
constexpr uint64_t kPinMask = kLive - 1;

}  // namespace

struct Slot {
  // generation (high 32 bits) | live bit | pin count (low 31 bits)
  std::atomic<uint64_t> word{1ull << 32};
  Object* object = nullptr;
};

namespace {

// The chunks of slots, outside the table below: zero before any code runs
// (constant initialisation), so pinning a handle, the hot path of every
// call, reads them with no initialisation guard.
std::atomic<Slot*> g_chunks[kMaxChunks];

struct Table {
  std::atomic<Slot*>* chunks = g_chunks;
  std::mutex mutex;  // guards free_list and next
  std::vector<uint32_t> free_list;
  uint32_t next = 0;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: finalizers may run at exit
  return *t;
}

Slot* slot_of(uint32_t index) {
  Slot* chunk = g_chunks[index >> kChunkBits].load(std::memory_order_acquire);
  return chunk ? &chunk[index & (kChunkSize - 1)] : nullptr;
}

bool decode(uint64_t handle, Kind kind, uint32_t* index, uint32_t* generation) {
  *generation = static_cast<uint32_t>(handle >> 32);
  *index = static_cast<uint32_t>(handle & 0xFFFFFFu);
  return *generation != 0 && ((handle >> 24) & 0xFFu) == static_cast<uint64_t>(kind);
}

}  // namespace

size_t live_count() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.next - t.free_list.size();
}

uint64_t insert(Object* object) {
  Table& t = table();
  uint32_t index;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.free_list.empty()) {
      index = t.free_list.back();
      t.free_list.pop_back();
    } else {
      if (t.next >= kChunkSize * kMaxChunks) {
        object->release();
        fail(CUABI_ERROR_OUT_OF_MEMORY, "too many live cuabi handles (16777216)");
      }
      index = t.next++;
      uint32_t c = index >> kChunkBits;
      if (!t.chunks[c].load(std::memory_order_relaxed))
        t.chunks[c].store(new Slot[kChunkSize], std::memory_order_release);
    }
  }
  Slot* slot = slot_of(index);
  uint64_t generation = slot->word.load(std::memory_order_relaxed) >> 32;
  slot->object = object;
  slot->word.store((generation << 32) | kLive, std::memory_order_release);
  return (generation << 32) | (static_cast<uint64_t>(object->kind()) << 24) | index;
}

Object* pin(uint64_t handle, Kind kind, Slot** out) {
  uint32_t index, generation;
  if (!decode(handle, kind, &index, &generation)) return nullptr;
  Slot* slot = slot_of(index);
  if (!slot) return nullptr;
  uint64_t w = slot->word.load(std::memory_order_acquire);
  for (;;) {
    if ((w >> 32) != generation || !(w & kLive)) return nullptr;
    if ((w & kPinMask) == kPinMask) {  // pin count saturated: wait for one to drain
      std::this_thread::yield();
      w = slot->word.load(std::memory_order_acquire);
      continue;
    }
    if (slot->word.compare_exchange_weak(w, w + 1, std::memory_order_acquire)) break;
  }
  Object* object = slot->object;
  if (object->kind() != kind) {
    unpin(slot);
    return nullptr;
  }
  *out = slot;
  return object;
}

void unpin(Slot* slot) { slot->word.fetch_sub(1, std::memory_order_release); }

bool remove(uint64_t handle, Kind kind) {
  // Pinning first checks the generation, the live bit and the object's kind,
  // so a forged handle never disturbs the slot it points at.
  Slot* slot = nullptr;
  if (!pin(handle, kind, &slot)) return false;
  uint64_t generation = handle >> 32;
  uint32_t index = static_cast<uint32_t>(handle & 0xFFFFFFu);
  uint64_t w = slot->word.load(std::memory_order_acquire);
  for (;;) {
    if ((w >> 32) != generation || !(w & kLive)) {  // another thread released it first
      unpin(slot);
      return false;
    }
    if (slot->word.compare_exchange_weak(w, w & ~kLive, std::memory_order_acq_rel)) break;
  }
  unpin(slot);
  while (slot->word.load(std::memory_order_acquire) & kPinMask) std::this_thread::yield();
  Object* object = slot->object;
  slot->object = nullptr;
  uint64_t next = generation + 1;
  if (next > 0xFFFFFFFFull) next = 1;  // generation 0 never names a live handle
  slot->word.store(next << 32, std::memory_order_release);
  {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.free_list.push_back(index);
  }
  object->release();
  return true;
}

}  // namespace handles

void fail_handle(Kind kind, const char* what, uint64_t handle) {
  if (handle == 0)
    fail(CUABI_ERROR_INVALID_HANDLE, std::string(what) + " is NULL (expected a live " +
                                         kind_name(kind) + ")");
  uint32_t k = static_cast<uint32_t>((handle >> 24) & 0xFFu);
  std::string message = std::string(what) + " is not a live " + kind_name(kind) + ": ";
  if (k != 0 && k <= kKindCount && k != static_cast<uint32_t>(kind) && (handle >> 32) != 0)
    message += std::string("it is a ") + kind_name(static_cast<Kind>(k));
  else
    message += "it was released, or is not a cuabi handle";
  fail(CUABI_ERROR_INVALID_HANDLE, message);
}

}  // namespace cuabi
