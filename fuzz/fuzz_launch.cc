// Launch parameters without a GPU: random launch configurations (any
// struct_size, any fields, newer-header tails), parameter arrays, size arrays
// and packed blocks of any length, through cuabi_function_launch, cuabi_function_launch_sized
// and cuabi_function_launch_packed on function handles that are not live (NULL, made
// up, another kind's), cuabi_launch_plan_create with the same, and
// cuabi_module_compile on random descriptions.
// Every call must answer CUABI_ERROR_INVALID_HANDLE without reading what it
// was not given. The core's reader of size-prefixed structs (read_struct)
// is fuzzed directly with the same bytes: it must accept exactly the structs
// the header's rules allow, and read no byte past struct_size.
#include <cuabi/cuabi.h>

#include <cstring>
#include <string>
#include <vector>

#include "error.hpp"
#include "fuzz_common.h"
#include "structs.hpp"

namespace {

template <typename H>
H As(uint64_t v) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(v));
}

// A struct of type T as a caller would pass it: struct_size from the input,
// exactly that many bytes behind the pointer (at least sizeof(T)).
template <typename T>
struct Given {
  std::vector<unsigned char> bytes;
  size_t declared = 0;
  const T* get() const { return reinterpret_cast<const T*>(bytes.data()); }
};

template <typename T>
Given<T> MakeGiven(cuabi_fuzz::Input& in) {
  Given<T> g;
  const uint8_t mode = in.u8();
  switch (mode % 6) {
    case 0:
      g.declared = sizeof(T);
      break;
    case 1:
      g.declared = in.u8() % sizeof(T);
      break;  // too small
    case 2:
      g.declared = sizeof(T) + in.u8() % 64;
      break;  // newer header
    case 3:
      g.declared = sizeof(T) + 4096 + (in.u32() % 4096);
      break;  // implausible
    case 4:
      g.declared = in.u64();
      break;  // anything
    default:
      g.declared = sizeof(T) + 4096;
      break;  // the largest accepted
  }
  // Memory behind the pointer: the declared size where it is plausible.
  size_t have = sizeof(T);
  if (g.declared > sizeof(T) && g.declared <= sizeof(T) + 4096) have = g.declared;
  g.bytes.assign(have, 0);
  const std::string fill = in.bytes(have);
  std::memcpy(g.bytes.data(), fill.data(), fill.size());
  if (in.u8() & 1)  // often a zero tail, as a newer header with unset fields gives
    std::memset(g.bytes.data() + sizeof(T), 0, have - sizeof(T));
  std::memcpy(g.bytes.data(), &g.declared, sizeof(size_t));
  return g;
}

// The header's rules for a size-prefixed struct.
template <typename T>
void CheckReadStruct(const Given<T>& g, const char* what) {
  T out;
  std::memset(&out, 0xEE, sizeof(out));
  cuabi_status st = CUABI_SUCCESS;
  std::string message;
  try {
    cuabi::read_struct(g.get(), &out, what);
  } catch (const cuabi::Error& e) {
    st = e.status();
    message = e.message();
  }
  const size_t n = g.declared;
  if (n == sizeof(T)) {
    FUZZ_CHECK(st == CUABI_SUCCESS, "an exact-size struct was refused: " + message);
    FUZZ_CHECK(std::memcmp(&out, g.get(), sizeof(T)) == 0, "fields not copied");
  } else if (n == cuabi::StructHistory<T>::first_size) {
    // A struct of the first version: the fields it has are read, the later
    // ones keep what `out` held (the caller's defaults).
    constexpr size_t fields = cuabi::StructHistory<T>::first_fields;
    FUZZ_CHECK(st == CUABI_SUCCESS, "a first-version struct was refused: " + message);
    FUZZ_CHECK(out.struct_size == sizeof(T), "struct_size not normalised");
    FUZZ_CHECK(std::memcmp(reinterpret_cast<const unsigned char*>(&out) + sizeof(size_t),
                           g.bytes.data() + sizeof(size_t), fields - sizeof(size_t)) == 0,
               "the first version's fields not copied");
  } else if (cuabi::middle_version_fields<T>(n) != 0) {
    // A struct of a later, still older version: its fields are read.
    const size_t fields = cuabi::middle_version_fields<T>(n);
    FUZZ_CHECK(st == CUABI_SUCCESS, "a middle-version struct was refused: " + message);
    FUZZ_CHECK(out.struct_size == sizeof(T), "struct_size not normalised");
    FUZZ_CHECK(std::memcmp(reinterpret_cast<const unsigned char*>(&out) + sizeof(size_t),
                           g.bytes.data() + sizeof(size_t), fields - sizeof(size_t)) == 0,
               "the middle version's fields not copied");
  } else if (n < sizeof(T) || n > sizeof(T) + 4096) {
    FUZZ_CHECK(st == CUABI_ERROR_INVALID_ARGUMENT,
               "struct_size " + std::to_string(n) + " was not refused as invalid: " + message);
    FUZZ_CHECK(message.find("struct_size") != std::string::npos, "message lacks struct_size");
  } else {
    bool zero_tail = true;
    for (size_t i = sizeof(T); i < n; ++i) zero_tail = zero_tail && g.bytes[i] == 0;
    if (zero_tail) {
      FUZZ_CHECK(st == CUABI_SUCCESS, "a newer struct with a zero tail was refused: " + message);
      FUZZ_CHECK(out.struct_size == sizeof(T), "struct_size not normalised");
      FUZZ_CHECK(std::memcmp(reinterpret_cast<const unsigned char*>(&out) + sizeof(size_t),
                             g.bytes.data() + sizeof(size_t), sizeof(T) - sizeof(size_t)) == 0,
                 "known fields not copied from a newer struct");
    } else {
      FUZZ_CHECK(st == CUABI_ERROR_NOT_SUPPORTED,
                 "a newer struct with fields set was not refused as NOT_SUPPORTED: " + message);
    }
  }
  if (st != CUABI_SUCCESS) FUZZ_CHECK(cuabi_fuzz::IsUtf8(message), "message is not UTF-8");
}

uint64_t FunctionValue(cuabi_fuzz::Input& in) {
  const uint64_t raw = in.u64();
  switch (in.u8() % 4) {
    case 0:
      return 0;
    case 1:
      return raw;
    case 2:
      return (raw & ~(0xFFull << 24)) | (4ull << 24);  // function kind bits
    default:
      return (raw & 0xFFFFFFFFull) | (4ull << 24);  // generation 0
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuabi_fuzz::Input in(data, size);
  Given<cuabi_launch_config> config = MakeGiven<cuabi_launch_config>(in);
  CheckReadStruct(config, "config");
  Given<cuabi_compile_desc> desc = MakeGiven<cuabi_compile_desc>(in);
  {
    // Pointer fields of a random desc are never dereferenced by read_struct;
    // keep them NULL so nothing else could.
    cuabi_compile_desc* d = reinterpret_cast<cuabi_compile_desc*>(desc.bytes.data());
    d->source = nullptr;
    d->name = nullptr;
    d->options = d->header_sources = d->header_names = d->name_expressions = nullptr;
  }
  CheckReadStruct(desc, "desc");

  // Parameter arrays of any count, with pointers to real storage.
  const size_t count = in.u8() % 40;
  std::vector<uint64_t> storage(count + 1, 0);
  std::vector<void*> params(count + 1, nullptr);
  std::vector<size_t> sizes(count + 1, 0);
  for (size_t i = 0; i < count; ++i) {
    storage[i] = in.u64();
    params[i] = (in.u8() % 8) ? &storage[i] : nullptr;
    sizes[i] = in.u8() % 17;
  }
  const size_t claimed = (in.u8() & 1) ? count : in.u64();  // a count the arrays may not have
  const std::string packed = in.bytes(in.u8());
  const size_t packed_size = (in.u8() & 1) ? packed.size() : in.u64();
  const cuabi_function fn = As<cuabi_function>(FunctionValue(in));
  const cuabi_stream stream = As<cuabi_stream>((in.u8() & 1) ? 0 : in.u64());

  const cuabi_launch_config* cfg = (in.u8() % 8) ? config.get() : nullptr;
  cuabi_status st = cuabi_function_launch(fn, cfg, stream, params.data(), claimed);
  FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
             std::string("cuabi_function_launch: ") + cuabi_status_get_name(st));
  st = cuabi_function_launch_sized(fn, cfg, stream, params.data(), sizes.data(), claimed);
  FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
             std::string("cuabi_function_launch_sized: ") + cuabi_status_get_name(st));
  st = cuabi_function_launch_packed(fn, cfg, stream, packed.empty() ? nullptr : packed.data(), packed_size);
  FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
             std::string("cuabi_function_launch_packed: ") + cuabi_status_get_name(st));
  cuabi_launch_plan plan = nullptr;
  st = cuabi_launch_plan_create(fn, cfg, stream, (in.u8() & 1) ? &plan : nullptr);
  FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
             std::string("cuabi_launch_plan_create: ") + cuabi_status_get_name(st));
  FUZZ_CHECK(plan == nullptr, "out written on failure");
  FUZZ_CHECK(std::string(cuabi_last_error_message()).find("function") != std::string::npos,
             std::string("the message does not name the function: ") + cuabi_last_error_message());

  cuabi_module m = nullptr;
  st = cuabi_module_compile(As<cuabi_device>(FunctionValue(in)), desc.get(), &m);
  FUZZ_CHECK(st == CUABI_ERROR_INVALID_HANDLE,
             std::string("cuabi_module_compile: ") + cuabi_status_get_name(st));
  FUZZ_CHECK(m == nullptr, "out written on failure");
  return 0;
}
