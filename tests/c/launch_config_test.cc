// Versioned launch configurations and argument checks that need no device.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "test_support.h"

namespace cuabi_test {
namespace {

// The 0.1 layout: what a caller built against the older header passes.
struct OldConfig {
  size_t struct_size;
  uint32_t grid_x, grid_y, grid_z;
  uint32_t block_x, block_y, block_z;
  uint32_t shared_mem_bytes;
};
static_assert(sizeof(OldConfig) == 40, "the 0.1 cuabi_launch_config was 40 bytes");

TEST(LaunchConfig, InitAcceptsTheFirstVersionsSizeAndWritesOnlyIt) {
  unsigned char bytes[sizeof(cuabi_launch_config)];
  std::memset(bytes, 0xAB, sizeof bytes);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_launch_config_init(reinterpret_cast<cuabi_launch_config*>(bytes), 40))
      << LastError();
  OldConfig old;
  std::memcpy(&old, bytes, sizeof old);
  EXPECT_EQ(40u, old.struct_size);
  EXPECT_EQ(1u, old.grid_x);
  EXPECT_EQ(1u, old.grid_y);
  EXPECT_EQ(1u, old.grid_z);
  EXPECT_EQ(1u, old.block_x);
  EXPECT_EQ(1u, old.block_y);
  EXPECT_EQ(1u, old.block_z);
  EXPECT_EQ(0u, old.shared_mem_bytes);
  for (size_t i = 40; i < sizeof bytes; ++i) EXPECT_EQ(0xAB, bytes[i]) << "byte " << i;
}

TEST(LaunchConfig, InitFillsEveryNewField) {
  cuabi_launch_config c;
  std::memset(&c, 0xCD, sizeof c);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_config_init(&c, sizeof c)) << LastError();
  const cuabi_launch_config want = CUABI_LAUNCH_CONFIG_INIT;
  EXPECT_EQ(want.flags, c.flags);
  EXPECT_EQ(0u, c.cluster_x);
  EXPECT_EQ(0u, c.cluster_y);
  EXPECT_EQ(0u, c.cluster_z);
  EXPECT_EQ(0, c.priority);
  EXPECT_EQ(nullptr, c.programmatic_event);
  EXPECT_EQ(sizeof c, c.struct_size);
}

TEST(LaunchConfig, SizesOfNoVersionAreRefused) {
  cuabi_launch_config c;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_launch_config_init(&c, 39));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "is smaller than this library's 40-byte"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_launch_config_init(&c, 48));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "the size of no version"))
      << cuabi_last_error_message();
}

TEST(LaunchConfig, CxxConfigSetsTheExtendedFields) {
  const cuabi::config c = cuabi::config({4, 2}, 64, 128)
                              .cooperative()
                              .cluster({2, 1, 1})
                              .programmatic_serialization()
                              .priority(-2);
  const cuabi_launch_config& raw = c;
  EXPECT_EQ(4u, raw.grid_x);
  EXPECT_EQ(2u, raw.grid_y);
  EXPECT_EQ(64u, raw.block_x);
  EXPECT_EQ(128u, raw.shared_mem_bytes);
  EXPECT_EQ(uint32_t{CUABI_LAUNCH_COOPERATIVE | CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION},
            raw.flags);
  EXPECT_EQ(2u, raw.cluster_x);
  EXPECT_EQ(1u, raw.cluster_y);
  EXPECT_EQ(1u, raw.cluster_z);
  EXPECT_EQ(-2, raw.priority);
  const cuabi::config off = cuabi::config(c.get()).cooperative(false).no_cluster();
  EXPECT_EQ(uint32_t{CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION}, off.get().flags);
  EXPECT_EQ(0u, off.get().cluster_x);
}

// Launch attributes (0.3): the init leaves each unset (-1, 0, NULL, the
// window's own defaults with 0 bytes), a 0.2 struct (64 bytes) keeps its
// size and gets only its fields, and a size between 0.2 and 0.3 is refused
// listing every version's size.
TEST(LaunchConfig, InitLeavesEveryLaunchAttributeUnset) {
  cuabi_launch_config c;
  std::memset(&c, 0xCD, sizeof c);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_config_init(&c, sizeof c)) << LastError();
  EXPECT_EQ(sizeof(cuabi_access_policy_window), c.access_policy_window.struct_size);
  EXPECT_EQ(0u, c.access_policy_window.bytes);
  EXPECT_EQ(1.0f, c.access_policy_window.hit_ratio);
  EXPECT_EQ(0, static_cast<int>(c.sync_policy));
  EXPECT_EQ(CUABI_CLUSTER_SCHEDULING_DEFAULT, c.cluster_scheduling_policy);
  EXPECT_EQ(-1, c.mem_sync_domain);
  EXPECT_EQ(-1, c.mem_sync_domain_map_default);
  EXPECT_EQ(-1, c.mem_sync_domain_map_remote);
  EXPECT_EQ(-1, c.shared_carveout);
  EXPECT_EQ(nullptr, c.completion_event);
}

TEST(LaunchConfig, TheSecondVersionsSizeIsAcceptedAndWrittenAlone) {
  unsigned char bytes[sizeof(cuabi_launch_config)];
  std::memset(bytes, 0xAB, sizeof bytes);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_launch_config_init(reinterpret_cast<cuabi_launch_config*>(bytes), 64))
      << LastError();
  for (size_t i = 64; i < sizeof bytes; ++i)
    ASSERT_EQ(0xAB, bytes[i]) << "byte " << i << " past a 64-byte struct was written";
  cuabi_launch_config c;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_launch_config_init(&c, 100));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "(expected 40, 64, or 136)"))
      << cuabi_last_error_message();
}

TEST(LaunchConfig, CxxConfigSetsTheLaunchAttributes) {
  const cuabi_event ev = reinterpret_cast<cuabi_event>(uintptr_t{0x1000});
  const cuabi::config c = cuabi::config(8, 32)
                              .access_policy_window(0x2000, 4096, 0.5f)
                              .sync_policy(CUABI_SYNC_POLICY_SPIN)
                              .cluster_scheduling(CUABI_CLUSTER_SCHEDULING_SPREAD)
                              .mem_sync_domain(CUABI_MEM_SYNC_DOMAIN_REMOTE)
                              .mem_sync_domain_map(0, 1)
                              .shared_carveout(25)
                              .completion_event(ev)
                              .device_updatable();
  const cuabi_launch_config& raw = c;
  EXPECT_EQ(0x2000u, raw.access_policy_window.base);
  EXPECT_EQ(4096u, raw.access_policy_window.bytes);
  EXPECT_EQ(0.5f, raw.access_policy_window.hit_ratio);
  EXPECT_EQ(CUABI_ACCESS_PROPERTY_PERSISTING, raw.access_policy_window.hit_property);
  EXPECT_EQ(CUABI_SYNC_POLICY_SPIN, raw.sync_policy);
  EXPECT_EQ(CUABI_CLUSTER_SCHEDULING_SPREAD, raw.cluster_scheduling_policy);
  EXPECT_EQ(CUABI_MEM_SYNC_DOMAIN_REMOTE, raw.mem_sync_domain);
  EXPECT_EQ(0, raw.mem_sync_domain_map_default);
  EXPECT_EQ(1, raw.mem_sync_domain_map_remote);
  EXPECT_EQ(25, raw.shared_carveout);
  EXPECT_EQ(ev, raw.completion_event);
  EXPECT_EQ(uint32_t{CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE}, raw.flags);
}

TEST(HostFunction, NullStreamIsAnInvalidHandle) {
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE,
            cuabi_stream_launch_host_func(
                nullptr, [](void*, char*, size_t) -> int32_t { return 0; }, nullptr));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "cuabi_stream_launch_host_func: stream is NULL"))
      << cuabi_last_error_message();
}

TEST(Status, HostFunctionHasItsName) {
  EXPECT_STREQ("CUABI_ERROR_HOST_FUNCTION", cuabi_status_get_name(CUABI_ERROR_HOST_FUNCTION));
  EXPECT_EQ(20, CUABI_ERROR_HOST_FUNCTION);
}

}  // namespace
}  // namespace cuabi_test
