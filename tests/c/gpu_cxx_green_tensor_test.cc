// Green contexts and tensor maps through the C++ face (cuabi_objects.hpp and
// cuabi.hpp): a kernel on a green context's stream stays on its SMs while the
// primary context's reaches more; a cuabi::tensor_map passes to launch() by
// value and its tiles match the host, before and after the address is
// replaced; refusals are cuabi::error with the core's words.
#include <cuabi/cuabi.hpp>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "gpu_support.h"
#include "green_tensor_kernels.h"

namespace cuabi_test {
namespace {

using CxxGreenTensorTest = GpuTest;

TEST_F(CxxGreenTensorTest, GreenContextKeepsItsKernelOnItsSms) {
  const cuabi::device dev = cuabi::device::get(0);
  cuabi::sm_resource all = dev.get_sm_resource();
  const uint32_t total = all.sm_count();
  cuabi::sm_resource group = all.split(2, 0, 0);
  const uint32_t n = group.sm_count();
  ASSERT_LT(n, total);
  cuabi::green_context green = cuabi::green_context::create(group.get());
  EXPECT_EQ(n, green.sm_count());
  cuabi::stream gs = green.create_stream(CUABI_STREAM_NON_BLOCKING, 0);
  green.check_stream(gs.get());
  cuabi::module m = Compile(kSmidSource);
  cuabi::function f = m.get_function("record_smid");
  const uint32_t blocks = 1024;
  cuabi::buffer out = cuabi::buffer::alloc(dev.get(), blocks * sizeof(uint32_t));
  auto seen = [&](cuabi_stream s) {
    out.memset_async(0, 0xFF, blocks * sizeof(uint32_t), s);
    f.launch(cuabi::config(blocks, 64), s, out, static_cast<long long>(200000));
    cuabi_stream_synchronize(s);
    std::vector<uint32_t> ids(blocks);
    out.copy_to_host(0, ids.data(), ids.size() * sizeof(uint32_t));
    return std::set<uint32_t>(ids.begin(), ids.end());
  };
  green.reset();
  group.reset();
  all.reset();
  const std::set<uint32_t> on_green = seen(gs.get());
  EXPECT_LE(on_green.size(), n);
  EXPECT_EQ(0u, on_green.count(0xFFFFFFFFu)) << "a block recorded nothing";
  cuabi::stream primary = cuabi::stream::create(dev.get(), CUABI_STREAM_NON_BLOCKING, 0);
  EXPECT_GT(seen(primary.get()).size(), n);
}

TEST_F(CxxGreenTensorTest, TensorMapPassesByValueAndItsAddressIsReplaced) {
  if (cc_major_ < 9) GTEST_SKIP() << "tensor maps need compute capability 9.0";
  const cuabi::device dev = cuabi::device::get(0);
  const size_t cols = 128, rows = 64, bytes = cols * rows * sizeof(float);
  std::vector<float> h1(cols * rows), h2(cols * rows);
  for (size_t i = 0; i < h1.size(); ++i) {
    h1[i] = static_cast<float>(i);
    h2[i] = 7.0f - static_cast<float>(i);
  }
  cuabi::buffer a = cuabi::buffer::alloc(dev.get(), bytes);
  cuabi::buffer b = cuabi::buffer::alloc(dev.get(), bytes);
  cuabi::buffer out = cuabi::buffer::alloc(dev.get(), bytes);
  a.copy_from_host(0, h1.data(), bytes);
  b.copy_from_host(0, h2.data(), bytes);
  cuabi::tensor_map map = cuabi::tensor_map::encode_tiled(
      a.get(), 0, CUABI_TENSOR_FLOAT32, {cols, rows}, {sizeof(float), cols * sizeof(float)},
      {32, 8}, {}, CUABI_TENSOR_INTERLEAVE_NONE, CUABI_TENSOR_SWIZZLE_NONE,
      CUABI_TENSOR_L2_PROMOTION_NONE, CUABI_TENSOR_OOB_FILL_ZERO);
  cuabi::module m = Compile(kTileSource);
  cuabi::function f = m.get_function("copy_tiles");
  const int32_t tiles_x = static_cast<int32_t>(cols / 32);
  auto run = [&](const std::vector<float>& host) {
    f.launch(cuabi::config(static_cast<uint32_t>(tiles_x * (rows / 8)), 256), nullptr, map, out,
             tiles_x);
    dev.synchronize();
    std::vector<float> got(cols * rows);
    out.copy_to_host(0, got.data(), bytes);
    size_t bad = 0;
    for (uint32_t t = 0; t < tiles_x * (rows / 8); ++t)
      for (uint32_t i = 0; i < 256; ++i) {
        const size_t x = (t % tiles_x) * 32 + i % 32, y = (t / tiles_x) * 8 + i / 32;
        if (got[t * 256 + i] != host[y * cols + x]) ++bad;
      }
    return bad;
  };
  EXPECT_EQ(0u, run(h1));
  map.replace_address(b.get(), 0);
  b.reset();  // the map keeps it
  EXPECT_EQ(0u, run(h2));
  try {
    map.replace_address(a.get(), 4);
    FAIL() << "a misaligned address was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, e.status());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("16-byte aligned")) << e.what();
  }
}

}  // namespace
}  // namespace cuabi_test
