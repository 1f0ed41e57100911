// Reference-counted objects and the handle table that maps the C API's opaque
// handles to them.
//
// A handle is never a pointer. It encodes a slot index, the object's kind and
// the slot's generation: (generation << 32) | (kind << 24) | index. Releasing a
// handle bumps the slot's generation, so a released or stale handle, a handle
// of another kind, NULL, or a made-up value is recognised and refused instead
// of being dereferenced.
//
// Lock discipline: looking a handle up takes no lock. Each slot has one atomic
// word holding its generation, a live bit and a pin count. A lookup pins the
// slot (CAS on that word, only while live and of the right generation), reads
// the object and either keeps the pin for a short call (Pin) or takes a
// reference and unpins (Ref). A release clears the live bit, waits for the pins
// to drain (a pin lasts one short call), bumps the generation and drops the
// table's reference. Only the free list takes a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "error.hpp"
#include "kinds.h"

namespace cuabi {

// The kind of object behind a handle, numbered from 1 in the order of
// kinds.h (0 is no kind: a live handle's kind bits are never 0).
enum class Kind : uint8_t {
  None = 0,
#define CUABI_KIND_ENUMERATOR(Name, name) Name,
  CUABI_HANDLE_KINDS(CUABI_KIND_ENUMERATOR)
#undef CUABI_KIND_ENUMERATOR
};
#define CUABI_KIND_PLUS_ONE(Name, name) +1
constexpr uint8_t kKindCount = 0 CUABI_HANDLE_KINDS(CUABI_KIND_PLUS_ONE);
#undef CUABI_KIND_PLUS_ONE

// "cuabi_<name>", the C type of the kind's handles ("handle" for None).
const char* kind_name(Kind kind);

class Object {
 public:
  explicit Object(Kind kind) : kind_(kind) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  Kind kind() const { return kind_; }
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Deleters never throw: a destructor that fails to free a CUDA resource
  // leaks it rather than crash.
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Drops a reference unless it is the last one; false (and nothing done)
  // when it is, so that a caller that may not run the destructor (a driver
  // callback) can hand the last reference elsewhere.
  bool release_unless_last() {
    int32_t n = refs_.load(std::memory_order_relaxed);
    while (n > 1)
      if (refs_.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) return true;
    return false;
  }
  // Takes a reference only if the object is still alive (for weak registries).
  bool try_retain() {
    int32_t n = refs_.load(std::memory_order_relaxed);
    while (n > 0)
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    return false;
  }

 private:
  std::atomic<int32_t> refs_{1};
  Kind kind_;
};

// An owning reference (intrusive).
template <class T>
class Ref {
 public:
  Ref() = default;
  static Ref adopt(T* p) {
    Ref r;
    r.p_ = p;
    return r;
  }
  static Ref share(T* p) {
    if (p) p->retain();
    return adopt(p);
  }
  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->retain();
  }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) p_->release();
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  T* detach() { return std::exchange(p_, nullptr); }

 private:
  T* p_ = nullptr;
};

template <class T, class... A>
Ref<T> make(A&&... a) {
  return Ref<T>::adopt(new T(std::forward<A>(a)...));
}

namespace handles {

struct Slot;

// Registers `object` (taking over one reference) and returns its handle value.
uint64_t insert(Object* object);
// Pins the slot of `handle` if it is a live handle of `kind`; nullptr if not.
Object* pin(uint64_t handle, Kind kind, Slot** slot);
void unpin(Slot* slot);
// The number of live handles (of every kind), for leak checks.
size_t live_count();
// Releases the handle; returns false for a handle that is not live.
bool remove(uint64_t handle, Kind kind);

}  // namespace handles

[[noreturn]] void fail_handle(Kind kind, const char* what, uint64_t handle);

// A borrowed object for the duration of one short call (keeps the slot pinned).
template <class T>
class Pin {
 public:
  Pin(const void* handle, const char* what) {
    auto h = reinterpret_cast<uint64_t>(handle);
    obj_ = static_cast<T*>(handles::pin(h, T::kKind, &slot_));
    if (!obj_) fail_handle(T::kKind, what, h);
  }
  // An optional handle: NULL gives an empty Pin.
  Pin(const void* handle, const char* what, bool optional) {
    if (!handle && optional) return;
    auto h = reinterpret_cast<uint64_t>(handle);
    obj_ = static_cast<T*>(handles::pin(h, T::kKind, &slot_));
    if (!obj_) fail_handle(T::kKind, what, h);
  }
  ~Pin() {
    if (slot_) handles::unpin(slot_);
  }
  Pin(const Pin&) = delete;
  Pin& operator=(const Pin&) = delete;
  T* get() const { return obj_; }
  T* operator->() const { return obj_; }
  explicit operator bool() const { return obj_ != nullptr; }

 private:
  T* obj_ = nullptr;
  handles::Slot* slot_ = nullptr;
};

// An owned reference to the object behind a handle, for long calls (waits).
template <class T>
Ref<T> acquire(const void* handle, const char* what) {
  Pin<T> pin(handle, what);
  return Ref<T>::share(pin.get());
}

// Hands an object out through the C API as a new handle.
template <class Handle, class T>
Handle publish(Ref<T> object) {
  return reinterpret_cast<Handle>(handles::insert(object.detach()));
}

template <class T>
void release_handle(const void* handle) {
  if (handle) handles::remove(reinterpret_cast<uint64_t>(handle), T::kKind);
}

}  // namespace cuabi
