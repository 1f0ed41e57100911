// A stream's attributes: synchronization policy, priority, memory-sync
// domain and the L2 access-policy window, each set and read back, and the
// core's refusals with the bound in the message.
#include <string>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using StreamAttributesTest = GpuTest;

// CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE (cuda.h).
const int32_t kAttrMaxWindow = 109;

class StreamOf {
 public:
  explicit StreamOf(cuabi_device d) {
    EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_create(d, CUABI_STREAM_NON_BLOCKING, 0, s_.out()))
        << LastError();
  }
  operator cuabi_stream() const { return s_; }

 private:
  Stream s_;
};

TEST_F(StreamAttributesTest, SyncPolicyRoundTrips) {
  StreamOf s(device_);
  for (cuabi_sync_policy p : {CUABI_SYNC_POLICY_SPIN, CUABI_SYNC_POLICY_YIELD,
                              CUABI_SYNC_POLICY_BLOCKING_SYNC, CUABI_SYNC_POLICY_AUTO}) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_set_sync_policy(s, p)) << LastError();
    cuabi_sync_policy got = CUABI_SYNC_POLICY_FORCE32;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_sync_policy(s, &got)) << LastError();
    EXPECT_EQ(p, got);
  }
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_stream_set_sync_policy(s, static_cast<cuabi_sync_policy>(0)));
  EXPECT_NE(std::string::npos, std::string(cuabi_last_error_message()).find("policy is 0"));
}

TEST_F(StreamAttributesTest, PriorityWithinTheDeviceRange) {
  StreamOf s(device_);
  int32_t least = 0, greatest = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_stream_priority_range(device_, &least, &greatest));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_set_priority(s, greatest)) << LastError();
  int32_t got = 99;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_priority(s, &got)) << LastError();
  EXPECT_EQ(greatest, got);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_set_priority(s, greatest - 1));
  EXPECT_NE(std::string::npos, std::string(cuabi_last_error_message())
                                   .find(std::to_string(greatest) + " (highest) to " +
                                         std::to_string(least) + " (lowest)"))
      << LastError();
}

TEST_F(StreamAttributesTest, MemorySyncDomainRoundTrips) {
  StreamOf s(device_);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_set_memory_sync_domain(s, CUABI_MEM_SYNC_DOMAIN_REMOTE))
      << LastError();
  cuabi_mem_sync_domain got = CUABI_MEM_SYNC_DOMAIN_DEFAULT;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_memory_sync_domain(s, &got)) << LastError();
  EXPECT_EQ(CUABI_MEM_SYNC_DOMAIN_REMOTE, got);
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_stream_set_memory_sync_domain(s, static_cast<cuabi_mem_sync_domain>(7)));
}

TEST_F(StreamAttributesTest, AccessPolicyWindowRoundTripsAndIsBounded) {
  int32_t most = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kAttrMaxWindow, &most));
  if (most <= 0) GTEST_SKIP() << "this device has no access-policy window";
  StreamOf s(device_);
  Buffer hot = Alloc(1 << 20);
  cuabi_access_policy_window w;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_access_policy_window_init(&w, sizeof w));
  EXPECT_EQ(1.0f, w.hit_ratio);
  w.base = Pointer(hot);
  w.bytes = 1 << 20;
  w.hit_ratio = 0.5f;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_set_access_policy_window(s, &w)) << LastError();
  cuabi_access_policy_window got = CUABI_ACCESS_POLICY_WINDOW_INIT;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_access_policy_window(s, &got)) << LastError();
  EXPECT_EQ(w.base, got.base);
  EXPECT_EQ(w.bytes, got.bytes);
  EXPECT_FLOAT_EQ(0.5f, got.hit_ratio);
  EXPECT_EQ(CUABI_ACCESS_PROPERTY_PERSISTING, got.hit_property);
  EXPECT_EQ(CUABI_ACCESS_PROPERTY_STREAMING, got.miss_property);

  w.bytes = static_cast<size_t>(most) + 1;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_set_access_policy_window(s, &w));
  EXPECT_NE(std::string::npos, std::string(cuabi_last_error_message())
                                   .find("maximum window of " + std::to_string(most) + " bytes"));
  w.bytes = 1 << 20;
  w.hit_ratio = 1.5f;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_set_access_policy_window(s, &w));
  EXPECT_NE(std::string::npos, std::string(cuabi_last_error_message()).find("hit_ratio"));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_get_access_policy_window(s, &got));
  EXPECT_FLOAT_EQ(0.5f, got.hit_ratio) << "a refused window changed the stream";
}

}  // namespace
}  // namespace cuabi_test
