// Handle values: arbitrary 64-bit values, and near misses of live handles
// (other kind bits, other generations, other slots, released values), into
// every C API call that takes a handle and every *_release, of every kind of
// handle. A value that is not a live handle of the call's kind must answer
// CUABI_ERROR_INVALID_HANDLE, write no out-parameter, and a release of it must
// change nothing; nothing may crash.
//
// The calls are the C tests' table (tests/c/handle_calls.cc), which
// tests/c/handles_test.cc keeps complete against the header, and the kinds
// come from the one list (capi/core/kinds.h), so a new kind or a new call is
// fuzzed with no edit here. Without a GPU only programs can be live; the
// oracle knows which values are.
//
// Each operation reads: a selector byte (high bit: a release, else a call;
// the rest picks the kind, modulo the number of kinds), a byte picking one of
// that kind's calls (modulo their number), then the value (Pick).
#include <cuabi/cuabi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "handle_calls.h"

namespace {

using cuabi_test::HandleCall;
using cuabi_test::Kind;
using cuabi_test::ReleaseCall;

template <typename H>
H As(uint64_t v) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(v));
}

// The handle calls and the release of each kind, by kind.
struct Table {
  std::vector<std::vector<const HandleCall*>> calls;
  std::vector<const ReleaseCall*> releases;
  Table() {
    const std::vector<Kind> kinds = cuabi_test::AllKinds();
    calls.resize(kinds.size());
    releases.resize(kinds.size(), nullptr);
    for (const HandleCall& c : cuabi_test::HandleCalls())
      calls[static_cast<size_t>(c.kind)].push_back(&c);
    for (const ReleaseCall& r : cuabi_test::ReleaseCalls())
      releases[static_cast<size_t>(r.kind)] = &r;
    for (Kind k : kinds) {
      FUZZ_CHECK(!calls[static_cast<size_t>(k)].empty(),
                 std::string("no call takes a ") + cuabi_test::KindName(k));
      FUZZ_CHECK(releases[static_cast<size_t>(k)] != nullptr,
                 std::string("no release of ") + cuabi_test::KindName(k));
    }
  }
};

const Table& table() {
  static const Table* t = new Table();
  return *t;
}

// The live programs, and values that were live once.
struct State {
  std::vector<uint64_t> live;
  std::vector<uint64_t> dead;
  unsigned calls_on_live = 0;

  uint64_t Create() {
    cuabi_program p = nullptr;
    cuabi_status st =
        cuabi_program_create("__device__ int fuzz_target;", "h.cu", 0, nullptr, nullptr, &p);
    FUZZ_CHECK(st == CUABI_SUCCESS,
               std::string("cuabi_program_create: ") + cuabi_last_error_message());
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  }
  State() {
    for (int i = 0; i < 4; ++i) live.push_back(Create());
  }
  bool IsLive(uint64_t v) const { return std::find(live.begin(), live.end(), v) != live.end(); }
  void Died(uint64_t v) {
    live.erase(std::find(live.begin(), live.end(), v));
    if (dead.size() < 64) dead.push_back(v);
    live.push_back(Create());
  }
  // Every live program still answers, with its own (uncompiled or compiled) state.
  void CheckAlive(const std::string& after) {
    for (uint64_t v : live) {
      size_t n = 0;
      cuabi_status st = cuabi_program_get_log(As<cuabi_program>(v), nullptr, &n);
      FUZZ_CHECK(st == CUABI_SUCCESS,
                 "a live program died after " + after + ": " + cuabi_last_error_message());
    }
  }
};

State& state() {
  static State* s = new State();
  return *s;
}

uint64_t Pick(cuabi_fuzz::Input& in, State& s) {
  const uint8_t mode = in.u8();
  const uint64_t raw = in.u64();
  const uint64_t base = s.live[raw % s.live.size()];
  switch (mode % 8) {
    case 0:
      return raw;
    case 1:
      return base ^ (raw & 0xFF);  // nearby slots
    case 2:
      return (base & ~(0xFFull << 24)) | ((raw & 0xFF) << 24);  // other kind bits
    case 3:
      return base + ((raw & 0xF) << 32) - (8ull << 32);  // other generations
    case 4:
      return base & 0xFFFFFFFFull;  // generation 0
    case 5:
      return s.dead.empty() ? raw : s.dead[raw % s.dead.size()];  // released values
    case 6:
      return base;  // the live value itself
    default:
      return raw & 0xFFFFFFFFFFull;  // small values
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuabi_fuzz::Input in(data, size);
  State& s = state();
  const Table& t = table();
  for (int op = 0; op < 64 && in.left() > 0; ++op) {
    const uint8_t selector = in.u8();
    const uint8_t which = in.u8();
    const size_t kind = (selector & 0x7F) % t.calls.size();
    const uint64_t v = Pick(in, s);
    if (selector & 0x80) {  // a release
      const ReleaseCall& r = *t.releases[kind];
      const bool kills = r.kind == Kind::kProgram && s.IsLive(v);
      cuabi_last_error_clear();
      r.release(static_cast<uintptr_t>(v));
      FUZZ_CHECK(cuabi_last_error_status() == CUABI_SUCCESS,
                 r.name + " touched the last-error state");
      if (kills) {
        size_t n = 0;
        FUZZ_CHECK(
            cuabi_program_get_log(As<cuabi_program>(v), nullptr, &n) == CUABI_ERROR_INVALID_HANDLE,
            "a released program still answers");
        s.Died(v);
      }
      s.CheckAlive(r.name);
      continue;
    }
    const HandleCall& c = *t.calls[kind][which % t.calls[kind].size()];
    const bool live = c.kind == Kind::kProgram && s.IsLive(v);
    if (live && ++s.calls_on_live % 512 == 0) {
      // Programs accumulate name expressions; recycle one now and then.
      cuabi_program_release(As<cuabi_program>(v));
      s.Died(v);
      continue;
    }
    bool touched = false;
    const cuabi_status st = c.call(static_cast<uintptr_t>(v), &touched);
    if (!live) {
      FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
                 c.name + " answered " + cuabi_status_get_name(st) + " for the value " +
                     std::to_string(v) + ": " + cuabi_last_error_message());
      FUZZ_CHECK(!touched, c.name + " wrote an out-parameter for the value " + std::to_string(v));
      FUZZ_CHECK(cuabi_last_error_status() == CUABI_ERROR_INVALID_HANDLE, "last error status");
      FUZZ_CHECK(cuabi_fuzz::IsUtf8(cuabi_last_error_message()), "message is not UTF-8");
    } else {
      FUZZ_CHECK(st != CUABI_ERROR_INVALID_HANDLE,
                 c.name + " refused a live program: " + cuabi_last_error_message());
    }
  }
  return 0;
}
