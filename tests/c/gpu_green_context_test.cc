// Green contexts: the device's SM resource, a split into groups and a
// remainder, a green context of one group and its streams. A kernel that
// records %smid from every block reaches at most the group's SMs on a green
// context's stream and more on the primary context's; the refusals carry
// their bounds.
#include <set>
#include <string>
#include <vector>

#include "gpu_support.h"
#include "green_tensor_kernels.h"

namespace cuabi_test {
namespace {

using GreenContextTest = GpuTest;

constexpr uint32_t kBlocks = 1024;

bool Has(const std::string& text) {
  return std::string(cuabi_last_error_message()).find(text) != std::string::npos;
}

class SmidKernel {
 public:
  SmidKernel(cuabi_function f, cuabi_buffer out) : f_(f), out_(out) {}
  // The distinct SMs the kernel's blocks ran on, launched on `stream`.
  std::set<uint32_t> Run(cuabi_stream stream) {
    EXPECT_EQ(CUABI_SUCCESS,
              cuabi_buffer_memset_async(out_, 0, 0xFF, kBlocks * sizeof(uint32_t), stream));
    uint64_t ptr = 0;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pointer(out_, &ptr));
    long long spin = 200000;
    void* params[] = {&ptr, &spin};
    cuabi_launch_config cfg = CUABI_LAUNCH_CONFIG_INIT;
    cfg.grid_x = kBlocks;
    cfg.block_x = 64;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch(f_, &cfg, stream, params, 2)) << LastError();
    EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
    std::vector<uint32_t> ids(kBlocks);
    EXPECT_EQ(CUABI_SUCCESS,
              cuabi_buffer_copy_to_host(out_, 0, ids.data(), ids.size() * sizeof(uint32_t)));
    std::set<uint32_t> seen;
    for (uint32_t id : ids) {
      EXPECT_NE(0xFFFFFFFFu, id) << "a block recorded nothing";
      seen.insert(id);
    }
    return seen;
  }

 private:
  cuabi_function f_;
  cuabi_buffer out_;
};

TEST_F(GreenContextTest, DeviceResourceDescribesItsSms) {
  SmResource all;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_sm_resource(device_, all.out())) << LastError();
  uint32_t count = 0, min_part = 0, align = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(all, &count));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_min_partition_size(all, &min_part));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_alignment(all, &align));
  int32_t sms = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, 16, &sms));  // MULTIPROCESSOR_COUNT
  EXPECT_EQ(static_cast<uint32_t>(sms), count);
  EXPECT_GT(min_part, 0u);
  EXPECT_GT(align, 0u);
  uint32_t groups = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_group_count(all, 0, &groups)) << LastError();
  EXPECT_GE(groups, 1u);
  EXPECT_LE(groups * min_part, count);
}

TEST_F(GreenContextTest, KernelOnAGreenContextStaysOnItsSms) {
  SmResource all;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_sm_resource(device_, all.out())) << LastError();
  uint32_t total = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(all, &total));
  // Two groups of the smallest size the device allows, and the remainder.
  SmResource group, second, remainder;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 2, 0, 0, group.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 2, 0, 1, second.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 2, 0, 2, remainder.out()))
      << LastError();
  uint32_t n = 0, n2 = 0, rest = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(group, &n));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(second, &n2));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(remainder, &rest));
  EXPECT_EQ(n, n2);
  EXPECT_EQ(total, n + n2 + rest);
  ASSERT_LT(n, total);

  GreenContext green;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_create(group, green.out())) << LastError();
  uint32_t green_sms = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_get_sm_count(green, &green_sms));
  EXPECT_EQ(n, green_sms);
  Stream gs;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_green_context_create_stream(green, CUABI_STREAM_NON_BLOCKING, 0, gs.out()))
      << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_green_context_check_stream(green, gs)) << LastError();

  Module m = Compile(kSmidSource);
  Function f = GetFunction(m, "record_smid");
  Buffer out = Alloc(kBlocks * sizeof(uint32_t));
  SmidKernel k(f, out);

  // What it was made from stays alive: only the stream is kept from here.
  green.reset();
  group.reset();
  all.reset();
  const std::set<uint32_t> on_green = k.Run(gs);
  EXPECT_LE(on_green.size(), n) << "the green context's kernel ran on " << on_green.size()
                                << " SMs, more than its " << n;
  Stream primary;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0,
                                               primary.out()));
  const std::set<uint32_t> on_primary = k.Run(primary);
  EXPECT_GT(on_primary.size(), n) << "the primary context's kernel reached only "
                                  << on_primary.size() << " SMs";
  // The stream is an ordinary stream: a copy ordered on it works too.
  std::vector<uint32_t> host(kBlocks, 7), back(kBlocks, 0);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host_async(out, 0, host.data(),
                                                             kBlocks * sizeof(uint32_t), gs))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host_async(out, 0, back.data(),
                                                           kBlocks * sizeof(uint32_t), gs))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(gs)) << LastError();
  EXPECT_EQ(host, back);
}

TEST_F(GreenContextTest, ContextResourceSplitsAgain) {
  SmResource all, half;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_sm_resource(device_, all.out()));
  uint32_t min_part = 0, total = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_min_partition_size(all, &min_part));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(all, &total));
  if (total < 4 * min_part) GTEST_SKIP() << "too few SMs to split twice";
  uint32_t align = 1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_alignment(all, &align));
  const uint32_t want = (2 * min_part + align - 1) / align * align;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 1, want, 0, half.out())) << LastError();
  GreenContext green;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_create(half, green.out())) << LastError();
  SmResource mine, piece;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_get_sm_resource(green, mine.out())) << LastError();
  uint32_t mine_count = 0, piece_count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(mine, &mine_count));
  EXPECT_GE(mine_count, want);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(mine, 1, 0, 0, piece.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(piece, &piece_count));
  EXPECT_LT(piece_count, mine_count + 1);
  EXPECT_GE(piece_count, min_part);
}

TEST_F(GreenContextTest, RefusalsNameTheBound) {
  SmResource all;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_sm_resource(device_, all.out()));
  uint32_t total = 0, align = 1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(all, &total));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_alignment(all, &align));
  SmResource out;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_sm_resource_split(all, 0, 0, 0, out.out()));
  EXPECT_TRUE(Has("group_count is 0")) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_sm_resource_split(all, 1, total + align, 0, out.out()));
  EXPECT_TRUE(Has(std::to_string(total) + " SMs")) << LastError();
  if (align > 1) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_sm_resource_split(all, 1, align + 1, 0, out.out()));
    EXPECT_TRUE(Has("not a multiple of " + std::to_string(align))) << LastError();
  }
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_sm_resource_split(all, total + 1, 0, 0, out.out()));
  EXPECT_TRUE(Has("the resource has " + std::to_string(total) + " SMs")) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_sm_resource_split(all, 1, 0, 2, out.out()));
  EXPECT_TRUE(Has("index 2 is past group_count 1")) << LastError();

  SmResource a, b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 1, 0, 0, a.out())) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_sm_resource_split(a, 1, 0, 0, out.out()));
  EXPECT_TRUE(Has("does not split again")) << LastError();
  // The remainder of a split into as many groups as fit may have no SMs.
  uint32_t groups = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_group_count(all, 0, &groups));
  SmResource rest;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, groups, 0, groups, rest.out()))
      << LastError();
  uint32_t rest_count = 1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_get_sm_count(rest, &rest_count));
  if (rest_count == 0) {
    GreenContext none;
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_green_context_create(rest, none.out()));
    EXPECT_TRUE(Has("no SMs")) << LastError();
  }

  GreenContext g1, g2;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 2, 0, 1, b.out())) << LastError();
  SmResource first;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_sm_resource_split(all, 2, 0, 0, first.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_create(first, g1.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_green_context_create(b, g2.out())) << LastError();
  Stream blocking;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_green_context_create_stream(g1, 0, 0, blocking.out()));
  EXPECT_TRUE(Has("CUABI_STREAM_NON_BLOCKING")) << LastError();
  Stream s1, s2, plain;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_green_context_create_stream(g1, CUABI_STREAM_NON_BLOCKING, 0, s1.out()));
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_green_context_create_stream(g2, CUABI_STREAM_NON_BLOCKING, 0, s2.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, plain.out()));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_green_context_check_stream(g1, s2));
  EXPECT_TRUE(Has("another green context")) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_green_context_check_stream(g1, plain));
  EXPECT_TRUE(Has("primary context")) << LastError();
  // A released context's handle is refused; its stream keeps working.
  const cuabi_green_context released = g1.get();
  g1.reset();
  uint32_t n = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, cuabi_green_context_get_sm_count(released, &n));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s1)) << LastError();
}

}  // namespace
}  // namespace cuabi_test
