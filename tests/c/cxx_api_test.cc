// The C++ header (cuabi.hpp) without a GPU: exceptions carry the library's
// status, words and log, each status has its own type, owners release what
// they hold, and NVRTC programs compile through it. The NoDriver test runs
// in the no-driver process (see CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <cuabi/cuabi.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels.h"
#include "test_support.h"

namespace {

using cuabi_test::Contains;

// Runs `call` and returns the cuabi::error it threw; fails the test if it
// threw nothing or something else.
template <class F>
cuabi::error ErrorOf(F&& call) {
  try {
    call();
  } catch (const cuabi::error& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-cuabi exception: " << e.what();
    return cuabi::error(CUABI_SUCCESS, 0, "", "");
  }
  ADD_FAILURE() << "threw nothing";
  return cuabi::error(CUABI_SUCCESS, 0, "", "");
}

TEST(CxxApi, AnErrorCarriesTheLibrarysStatusAndWords) {
  // The same failure through the C API, for the words to compare with.
  size_t size = 0;
  ASSERT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(nullptr, nullptr, &size));
  const std::string c_message = cuabi_last_error_message();

  const cuabi::program none;
  try {
    none.log();
    FAIL() << "a NULL program was not refused";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_HANDLE>& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, e.status());
    EXPECT_STREQ("CUABI_ERROR_INVALID_HANDLE", e.status_name());
    EXPECT_EQ(c_message, e.message()) << "the message must be the library's, unchanged";
    EXPECT_EQ("CUABI_ERROR_INVALID_HANDLE: " + c_message, std::string(e.what()));
    EXPECT_EQ(0, e.code());
    EXPECT_EQ("", e.log());
    // Copies share the text and never throw.
    static_assert(std::is_nothrow_copy_constructible<cuabi::error>::value, "");
    const cuabi::error copy = e;
    EXPECT_EQ(e.message(), copy.message());
  }
}

// check(S) throws status_error<S> for each status below CUABI_STATUS_COUNT.
template <int32_t... I>
void ExpectEachStatusItsOwnType(std::integer_sequence<int32_t, I...>) {
  auto one = [](auto status_constant) {
    constexpr cuabi_status s = static_cast<cuabi_status>(decltype(status_constant)::value);
    if (s == CUABI_SUCCESS) {
      EXPECT_NO_THROW(cuabi::check(s));
      return;
    }
    try {
      cuabi::check(s);
      ADD_FAILURE() << cuabi_status_get_name(s) << ": nothing thrown";
    } catch (const cuabi::status_error<s>& e) {
      EXPECT_EQ(s, e.status());
      EXPECT_EQ(s, cuabi::status_error<s>::value);
      EXPECT_STREQ(cuabi_status_get_name(s), e.status_name());
    } catch (const cuabi::error& e) {
      ADD_FAILURE() << cuabi_status_get_name(s) << ": thrown as " << e.status_name()
                    << " without its own type";
    }
  };
  (one(std::integral_constant<int32_t, I>{}), ...);
}

TEST(CxxApi, EachStatusThrowsItsOwnType) {
  ExpectEachStatusItsOwnType(std::make_integer_sequence<int32_t, CUABI_STATUS_COUNT>{});
}

template <int32_t... I>
bool IsAnyStatusError(const cuabi::error& e, std::integer_sequence<int32_t, I...>) {
  return (... ||
          (dynamic_cast<const cuabi::status_error<static_cast<cuabi_status>(I)>*>(&e) != nullptr));
}

TEST(CxxApi, AStatusNewerThanTheHeaderThrowsTheBase) {
  const auto newer = static_cast<cuabi_status>(CUABI_STATUS_COUNT + 7);
  const cuabi::error e = ErrorOf([&] { cuabi::check(newer); });
  EXPECT_EQ(newer, e.status());
  EXPECT_STREQ("CUABI_ERROR_UNKNOWN", e.status_name());
  try {
    cuabi::check(newer);
  } catch (const cuabi::error& thrown) {
    EXPECT_FALSE(
        IsAnyStatusError(thrown, std::make_integer_sequence<int32_t, CUABI_STATUS_COUNT>{}));
  }
}

TEST(CxxApi, ACompileErrorCarriesNvrtcsLog) {
  cuabi::program p = cuabi::program::create(
      "extern \"C\" __global__ void k(int* x) { *x = undefined_in_cxx_test; }", "cxx.cu");
  try {
    p.compile({"--gpu-architecture=compute_75"});
    FAIL() << "the compile did not fail";
  } catch (const cuabi::status_error<CUABI_ERROR_COMPILE>& e) {
    EXPECT_TRUE(Contains(e.message(), "cuabi_program_compile: ")) << e.message();
    EXPECT_TRUE(Contains(e.log(), "undefined_in_cxx_test")) << e.log();
    EXPECT_NE(0, e.code()) << "the nvrtcResult";
    EXPECT_EQ(e.log(), p.log()) << "the program keeps the same log";
  }
}

TEST(CxxApi, AProgramCompilesToPtxAndCubin) {
  cuabi::program p = cuabi::program::create(cuabi_test::kWriteScalarSource, "write_scalar.cu",
                                            {{"unused.h", "#define UNUSED 1\n"}});
  p.add_name_expression("write_scalar<int>");
  p.compile({"--gpu-architecture=sm_90", "-std=c++17"});
  const std::string ptx = p.ptx();
  EXPECT_TRUE(Contains(ptx, ".entry")) << ptx.substr(0, 200);
  EXPECT_EQ(ptx.size(), std::strlen(ptx.c_str())) << "no NUL inside, none at the end";
  const std::vector<unsigned char> cubin = p.cubin();
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(0, std::memcmp(cubin.data(),
                           "\x7f"
                           "ELF",
                           4));
  const std::string lowered = p.lowered_name("write_scalar<int>");
  EXPECT_EQ(0u, lowered.rfind("_Z", 0)) << lowered;
  EXPECT_TRUE(Contains(ptx, lowered));
  const cuabi::error missing = ErrorOf([&] { p.lowered_name("write_scalar<double>"); });
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, missing.status());
}

TEST(CxxApi, OwnersReleaseWhatTheyHold) {
  cuabi_program raw = nullptr;
  size_t n = 0;
  {
    cuabi::program p = cuabi::program::create("__device__ int x;");
    raw = p.get();
    ASSERT_NE(nullptr, raw);
    EXPECT_EQ(raw, static_cast<cuabi_program>(p)) << "an owner converts to its handle";
    EXPECT_TRUE(static_cast<bool>(p));
    EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_log(p, nullptr, &n));
  }
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(raw, nullptr, &n))
      << "the owner's destructor released the handle";

  // Moving hands the handle over; the moved-from owner is empty.
  cuabi::program a = cuabi::program::create("__device__ int y;");
  raw = a.get();
  cuabi::program b = std::move(a);
  EXPECT_EQ(nullptr, a.get());  // NOLINT: checking the moved-from state
  EXPECT_EQ(raw, b.get());
  cuabi::program c;
  c = std::move(b);
  EXPECT_EQ(raw, c.get());
  cuabi::program& same = c;
  c = std::move(same);  // a self-move keeps it
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_log(raw, nullptr, &n));

  // detach() gives it up alive; adopting takes it back.
  cuabi_program kept = c.detach();
  EXPECT_EQ(nullptr, c.get());
  EXPECT_EQ(CUABI_SUCCESS, cuabi_program_get_log(kept, nullptr, &n));
  cuabi::program adopted(kept);

  // out() releases the current handle before a C call fills it.
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_program_create("__device__ int z;", nullptr, 0, nullptr, nullptr, adopted.out()));
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(kept, nullptr, &n));
  const cuabi_program current = adopted.get();
  adopted.reset();
  EXPECT_EQ(nullptr, adopted.get());
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_program_get_log(current, nullptr, &n));

  static_assert(!std::is_copy_constructible<cuabi::buffer>::value, "owners are move-only");
  static_assert(std::is_nothrow_move_constructible<cuabi::launch_plan>::value, "");
  static_assert(std::is_nothrow_move_assignable<cuabi::stream>::value, "");
}

TEST(CxxApi, LaunchConfigsStartFromTheLibrarysDefaults) {
  const cuabi_launch_config c = cuabi::launch_config({2, 3}, 64, 128);
  EXPECT_EQ(sizeof(cuabi_launch_config), c.struct_size);
  EXPECT_EQ(2u, c.grid_x);
  EXPECT_EQ(3u, c.grid_y);
  EXPECT_EQ(1u, c.grid_z);
  EXPECT_EQ(64u, c.block_x);
  EXPECT_EQ(1u, c.block_y);
  EXPECT_EQ(1u, c.block_z);
  EXPECT_EQ(128u, c.shared_mem_bytes);
  // A buffer is passed to a kernel as its device address.
  static_assert(std::is_same<cuabi::detail::kernel_type<cuabi::buffer>, uint64_t>::value, "");
  static_assert(std::is_same<cuabi::detail::kernel_type<float>, float>::value, "");
}

TEST(CxxApi, LibraryInformation) {
  EXPECT_EQ(cuabi_version(), cuabi::version());
  EXPECT_STREQ(CUABI_VERSION_STRING, cuabi::version_string());
  EXPECT_STREQ("CUABI_ERROR_COMPILE", cuabi::status_name(CUABI_ERROR_COMPILE));
  EXPECT_STREQ(cuabi_status_get_description(CUABI_ERROR_IO),
               cuabi::status_description(CUABI_ERROR_IO));
  const cuabi::version_pair v = cuabi::nvrtc_version();
  int32_t major = 0, minor = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_nvrtc_get_version(&major, &minor));
  EXPECT_EQ(major, v.major);
  EXPECT_EQ(minor, v.minor);
  EXPECT_TRUE(Contains(cuabi::nvrtc_path(), "nvrtc"));
}

// Run with CUABI_DRIVER_PATH pointing nowhere (ctest's cuabi_cpu_no_driver).
TEST(NoDriver, CxxCallsThrowDriverNotFound) {
  const char* path = std::getenv("CUABI_DRIVER_PATH");
  if (!path || std::string(path) != "/nonexistent/libcuda.so.1")
    GTEST_SKIP() << "needs CUABI_DRIVER_PATH=/nonexistent/libcuda.so.1 (ctest sets it)";
  try {
    cuabi::device::count();
    FAIL() << "no driver, yet device::count answered";
  } catch (const cuabi::status_error<CUABI_ERROR_DRIVER_NOT_FOUND>& e) {
    EXPECT_TRUE(Contains(e.message(), "cuabi_device_get_count: ")) << e.message();
    EXPECT_TRUE(Contains(e.message(), "/nonexistent/libcuda.so.1")) << e.message();
  }
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, ErrorOf([] { cuabi::device::open(0); }).status());
  EXPECT_EQ(CUABI_ERROR_DRIVER_NOT_FOUND, ErrorOf([] { cuabi::init(); }).status());
}

}  // namespace
