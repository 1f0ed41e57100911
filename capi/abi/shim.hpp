// What every extern "C" shim shares, written once: the guard that turns the
// core's exceptions into a status and the calling thread's last error, the
// out-parameter check, the two-call copy, and templates for the shapes that
// recur (a getter, create-and-publish, work ordered on a stream, a blocking
// wait, a NOT_READY query).
//
// The shims are the only code that sees a C handle: they pin or reference
// the object behind it (handles.hpp), check the caller's pointers in the
// order the messages promise, and call the core. Nothing here may throw out
// of a shim.
#pragma once

#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "cuabi/cuabi.h"
#include "graph_nodes.hpp"
#include "green_context.hpp"
#include "link.hpp"
#include "objects.hpp"
#include "tensor_map.hpp"
#include "vmm.hpp"

namespace cuabi::abi {

// The failure paths of guard, out of line (capi/abi/guard.cpp): each records
// "<fn>: <message>" as the thread's last error and answers its status; a
// context found lost is noted (health.hpp). A successful call pays for none
// of them. Never throw.
[[gnu::cold, gnu::noinline]] cuabi_status failed(const char* fn, const Error& e) noexcept;
[[gnu::cold, gnu::noinline]] cuabi_status failed(const char* fn, cuabi_status status,
                                                 const char* message) noexcept;

// Runs `body`; on an exception records "<fn>: <message>" as the thread's
// last error and answers its status. Never throws.
template <class F>
cuabi_status guard(const char* fn, F&& body) noexcept {
  try {
    body();
    return CUABI_SUCCESS;
  } catch (const Error& e) {
    return failed(fn, e);
  } catch (const std::bad_alloc&) {
    return failed(fn, CUABI_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return failed(fn, CUABI_ERROR_INTERNAL, e.what());
  } catch (...) {
    return failed(fn, CUABI_ERROR_INTERNAL, "unknown internal error");
  }
}

// INVALID_ARGUMENT "<name> is NULL" for a missing out-parameter or input.
template <class T>
void need(T* p, const char* name) {
  if (!p) fail_invalid(std::string(name) + " is NULL");
}

// The two-call pattern: `n` bytes of `data` into `buf` of *size bytes.
inline void copy_out(const void* data, size_t n, void* buf, size_t* size) {
  need(size, "size");
  if (!buf) {
    *size = n;
    return;
  }
  if (*size < n) {
    const size_t have = *size;
    *size = n;
    fail(CUABI_ERROR_INSUFFICIENT_BUFFER, "the buffer holds " + std::to_string(have) + " bytes; " +
                                              std::to_string(n) + " are needed");
  }
  if (n) std::memcpy(buf, data, n);
  *size = n;
}

// A string with its NUL through the two-call pattern.
inline void copy_string(const std::string& s, char* buf, size_t* size) {
  copy_out(s.c_str(), s.size() + 1, buf, size);
}

// The core object behind each C handle type (declared for decltype only),
// one per kind of kinds.h: cuabi_<name> is the core's <Name>, whose kKind
// must be Kind::<Name>.
#define CUABI_OBJECT_OF(Name, name)                                            \
  Name* object_of(cuabi_##name);                                               \
  static_assert(Name::kKind == Kind::Name, "cuabi_" #name " is not a " #Name); \
  static_assert(std::is_base_of_v<Object, Name>, #Name " is not an Object");
CUABI_HANDLE_KINDS(CUABI_OBJECT_OF)
#undef CUABI_OBJECT_OF

template <class H>
using ObjectFor = std::remove_pointer_t<decltype(object_of(H()))>;

// Makes an object's context current: a device its own, anything else its
// device's (after checking it survived every reset).
inline void enter(const Device& d) { d.make_current(); }
inline void enter(const DeviceChild& c) { c.enter(); }

// A getter: pins `handle` (named `what` in messages), checks `out` and
// writes read(object) to it. `read` is a member pointer or a callable; a
// callable may call the driver, and *out is written only once it returned.
template <class H, class Out, class Read>
cuabi_status get(const char* fn, H handle, const char* what, Out* out, const char* out_name,
                 Read&& read) noexcept {
  return guard(fn, [&] {
    Pin<ObjectFor<H>> object(handle, what);
    need(out, out_name);
    *out = std::invoke(read, *object.get());
  });
}

// A getter of two values: both out-parameters are checked before either is
// written; `read` answers a pair.
template <class H, class A, class B, class Read>
cuabi_status get(const char* fn, H handle, const char* what, A* a, const char* a_name, B* b,
                 const char* b_name, Read&& read) noexcept {
  return guard(fn, [&] {
    Pin<ObjectFor<H>> object(handle, what);
    need(a, a_name);
    need(b, b_name);
    auto values = std::invoke(read, *object.get());
    *a = values.first;
    *b = values.second;
  });
}

// A string getter through the two-call pattern; `read` answers the string.
template <class H, class Read>
cuabi_status get_string(const char* fn, H handle, const char* what, char* buf, size_t* size,
                        Read&& read) noexcept {
  return guard(fn, [&] {
    Pin<ObjectFor<H>> object(handle, what);
    copy_string(std::invoke(read, *object.get()), buf, size);
  });
}

// Create-and-publish: takes a reference to the parent object behind
// `parent` (named `what`), checks `out`, and hands make(parent) out as a new
// handle of out's type.
template <class H, class Out, class Make>
cuabi_status create(const char* fn, H parent, const char* what, Out* out, Make&& make) noexcept {
  return guard(fn, [&] {
    Ref<ObjectFor<H>> p = acquire<ObjectFor<H>>(parent, what);
    need(out, "out");
    *out = publish<Out>(make(std::move(p)));
  });
}

// Create-and-publish without a parent object.
template <class Out, class Make>
cuabi_status create(const char* fn, Out* out, Make&& make) noexcept {
  return guard(fn, [&] {
    need(out, "out");
    *out = publish<Out>(make());
  });
}

// A call on one object, pinned for its length (a short call).
template <class H, class Body>
cuabi_status with(const char* fn, H handle, const char* what, Body&& body) noexcept {
  return guard(fn, [&] {
    Pin<ObjectFor<H>> object(handle, what);
    body(*object.get());
  });
}

// A call on one object (pinned) ordered on an optional stream: NULL is the
// device's default stream, anything else must be a live stream.
template <class H, class Body>
cuabi_status on_stream(const char* fn, H handle, const char* what, cuabi_stream stream,
                       Body&& body) noexcept {
  return guard(fn, [&] {
    Pin<ObjectFor<H>> object(handle, what);
    Pin<Stream> s(stream, "stream", true);
    body(*object.get(), s);
  });
}

// A call that may block (a synchronize): holds a reference, not a pin, so a
// release on another thread does not wait for it; enters the object's
// context, then runs `body`.
template <class H, class Body>
cuabi_status wait(const char* fn, H handle, const char* what, Body&& body) noexcept {
  return guard(fn, [&] {
    Ref<ObjectFor<H>> object = acquire<ObjectFor<H>>(handle, what);
    enter(*object);
    body(*object);
  });
}

// A query: SUCCESS when the work is done, NOT_READY when not, which is no
// failure and leaves the last-error state alone; any other driver answer is
// an error of `fn` naming `driver_call`.
template <class H, class Query>
cuabi_status query(const char* fn, H handle, const char* what, const char* driver_call,
                   Query&& ask) noexcept {
  CUresult r = CUDA_SUCCESS;
  const cuabi_status st = guard(fn, [&] {
    Pin<ObjectFor<H>> object(handle, what);
    enter(*object.get());
    r = ask(*object.get());
  });
  if (st != CUABI_SUCCESS) return st;
  if (r == CUDA_ERROR_NOT_READY) return CUABI_ERROR_NOT_READY;
  return guard(fn, [&] { check(r, driver_call); });
}

}  // namespace cuabi::abi
