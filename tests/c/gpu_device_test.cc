// Devices and the driver: enumeration, names, compute capability, memory,
// attributes, contexts and argument checks.
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// CUdevice_attribute values (cuda.h).
const int32_t kAttrMaxThreadsPerBlock = 1;
const int32_t kAttrMultiprocessorCount = 16;
const int32_t kAttrComputeCapabilityMajor = 75;
const int32_t kAttrComputeCapabilityMinor = 76;

using DeviceTest = GpuTest;

TEST_F(DeviceTest, EnumeratesEveryDevice) {
  int32_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_count(&count)) << LastError();
  ASSERT_GE(count, 1);
  for (int32_t ordinal = 0; ordinal < count; ++ordinal) {
    SCOPED_TRACE("device " + std::to_string(ordinal));
    Device d;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(ordinal, d.out())) << LastError();
    int32_t got = -1;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_ordinal(d, &got));
    EXPECT_EQ(ordinal, got);

    const std::vector<char> name = CheckTwoCall(
        [&](void* buf, size_t* size) {
          return cuabi_device_get_name(d, static_cast<char*>(buf), size);
        },
        true);
    ASSERT_GT(name.size(), 1u) << "empty device name";

    int32_t major = -1, minor = -1;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_compute_capability(d, &major, &minor));
    EXPECT_GE(major, 5);
    EXPECT_GE(minor, 0);
    EXPECT_LT(minor, 10);
    int32_t attr = -1;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(d, kAttrComputeCapabilityMajor, &attr));
    EXPECT_EQ(major, attr);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(d, kAttrComputeCapabilityMinor, &attr));
    EXPECT_EQ(minor, attr);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(d, kAttrMaxThreadsPerBlock, &attr));
    EXPECT_EQ(1024, attr);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(d, kAttrMultiprocessorCount, &attr));
    EXPECT_GT(attr, 0);

    size_t total = 0, free_bytes = 0, total2 = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_total_memory(d, &total));
    EXPECT_GT(total, size_t{256} << 20);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_memory_info(d, &free_bytes, &total2)) << LastError();
    EXPECT_EQ(total, total2);
    EXPECT_GT(free_bytes, 0u);
    EXPECT_LE(free_bytes, total2);

    uint64_t context = 0;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_context(d, &context));
    EXPECT_NE(0u, context);

    int32_t least = 99, greatest = 99;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_stream_priority_range(d, &least, &greatest));
    EXPECT_GE(least, greatest) << "numerically lower is higher priority";

    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(d)) << LastError();
  }
}

TEST_F(DeviceTest, OrdinalOutOfRange) {
  int32_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_count(&count));
  const int32_t bad[] = {count, count + 1, 1000, -1, INT32_MIN};
  for (int32_t ordinal : bad) {
    cuabi_device d = AsHandle<cuabi_device>(0x77);
    EXPECT_EQ(StatusName(CUABI_ERROR_NO_DEVICE), StatusName(cuabi_device_get(ordinal, &d)))
        << "ordinal " << ordinal;
    EXPECT_EQ(AsHandle<cuabi_device>(0x77), d);
    EXPECT_TRUE(Contains(cuabi_last_error_message(), std::to_string(ordinal)))
        << cuabi_last_error_message();
  }
}

TEST_F(DeviceTest, EachGetIsANewHandleOnThePrimaryContext) {
  Device other;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(0, other.out()));
  EXPECT_NE(device_.get(), other.get());
  uint64_t a = 0, b = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_context(device_, &a));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_context(other, &b));
  EXPECT_EQ(a, b) << "both handles use the device's primary context";
  other.reset();
  uint64_t c = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_device_get_context(device_, &c)) << LastError();
  EXPECT_EQ(a, c);
  Buffer buf = Alloc(64);
  EXPECT_NE(nullptr, buf.get());
}

TEST_F(DeviceTest, UnknownAttributeFailsCleanly) {
  int32_t value = 4321;
  const cuabi_status st = cuabi_device_get_attribute(device_, 100000, &value);
  EXPECT_NE(CUABI_SUCCESS, st);
  EXPECT_TRUE(st == CUABI_ERROR_INVALID_ARGUMENT || st == CUABI_ERROR_CUDA)
      << StatusName(st) << ": " << cuabi_last_error_message();
  EXPECT_EQ(4321, value);
  EXPECT_STRNE("", cuabi_last_error_message());
}

TEST_F(DeviceTest, NullOutParametersAreInvalidArguments) {
  int32_t i = 0;
  size_t s = 0;
  uint64_t u = 0;
  const cuabi_status want = CUABI_ERROR_INVALID_ARGUMENT;
  CUABI_EXPECT_STATUS(want, cuabi_device_get_count(nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get(0, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_ordinal(device_, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_name(device_, nullptr, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_compute_capability(device_, nullptr, &i));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_compute_capability(device_, &i, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_total_memory(device_, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_memory_info(device_, nullptr, &s));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_memory_info(device_, &s, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_attribute(device_, kAttrMaxThreadsPerBlock, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_context(device_, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_stream_priority_range(device_, nullptr, &i));
  CUABI_EXPECT_STATUS(want, cuabi_device_get_stream_priority_range(device_, &i, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_driver_get_version(nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_driver_get_path(nullptr, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_buffer_alloc(device_, 16, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_host_buffer_alloc(device_, 16, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_stream_create(device_, 0, 0, nullptr));
  CUABI_EXPECT_STATUS(want, cuabi_event_create(device_, 0, nullptr));
  (void)u;
}

TEST_F(DeviceTest, DriverVersionAndPath) {
  EXPECT_EQ(CUABI_SUCCESS, cuabi_init()) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_init()) << "idempotent";
  int32_t version = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_driver_get_version(&version)) << LastError();
  EXPECT_GE(version, 12000);
  const std::vector<char> path = CheckTwoCall(
      [](void* buf, size_t* size) { return cuabi_driver_get_path(static_cast<char*>(buf), size); },
      true);
  ASSERT_FALSE(path.empty());
  const std::string p(path.data());
  EXPECT_TRUE(Contains(p, "libcuda")) << p;
  EXPECT_EQ('/', p[0]) << p;
  EXPECT_EQ(0, access(p.c_str(), R_OK)) << p;
}

}  // namespace
}  // namespace cuabi_test
