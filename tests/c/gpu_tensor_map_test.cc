// Tensor maps: a Hopper (sm_90) kernel copies 32 x 8 tiles of a 2D float
// tensor into shared memory with cp.async.bulk.tensor through a map made by
// cuabi, and dumps each tile as it landed; the dump is checked against the
// host's copy of the tensor, without swizzle and with the 128-byte swizzle.
// The map passes by value through the plain, sized and packed launches. Then
// its address is replaced and the copy checked again.
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"
#include "green_tensor_kernels.h"

namespace cuabi_test {
namespace {

using TensorMapTest = GpuTest;

constexpr uint32_t kCols = 128, kRows = 64, kBoxX = 32, kBoxY = 8;
constexpr uint32_t kTilesX = kCols / kBoxX, kTiles = kTilesX * (kRows / kBoxY);
constexpr size_t kTensorBytes = size_t{kCols} * kRows * sizeof(float);

struct alignas(64) MapBytes {
  unsigned char bytes[CUABI_TENSOR_MAP_BYTES];
};

bool Has(const std::string& text) {
  return std::string(cuabi_last_error_message()).find(text) != std::string::npos;
}

// The tiles as the kernel dumps them: tile b's element (r, c) at its byte
// offset in the box, swizzled as the map's swizzle moves 16-byte chunks
// (XOR of the chunk index with the 128-byte row, `mask` its bits).
std::vector<float> Expected(const std::vector<float>& in, uint32_t mask) {
  std::vector<float> out(size_t{kTiles} * kBoxX * kBoxY);
  for (uint32_t b = 0; b < kTiles; ++b) {
    const uint32_t x0 = (b % kTilesX) * kBoxX, y0 = (b / kTilesX) * kBoxY;
    for (uint32_t r = 0; r < kBoxY; ++r)
      for (uint32_t c = 0; c < kBoxX; ++c) {
        const uint32_t o = (r * kBoxX + c) * 4;
        const uint32_t s = o ^ (((o >> 7) & mask) << 4);
        out[size_t{b} * kBoxX * kBoxY + s / 4] = in[size_t{y0 + r} * kCols + x0 + c];
      }
  }
  return out;
}

class TileCopy : public TensorMapTest {
 protected:
  void SetUp() override {
    TensorMapTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (cc_major_ < 9) GTEST_SKIP() << "tensor maps need compute capability 9.0, not " << Arch("sm_");
    module_ = Compile(kTileSource);
    f_ = GetFunction(module_, "copy_tiles");
    in_ = Alloc(kTensorBytes);
    in2_ = Alloc(kTensorBytes);
    out_ = Alloc(kTensorBytes);
    host_.resize(size_t{kCols} * kRows);
    host2_.resize(host_.size());
    for (size_t i = 0; i < host_.size(); ++i) {
      host_[i] = static_cast<float>(i);
      host2_[i] = -0.5f * static_cast<float>(i) - 3.0f;
    }
    Upload(in_, host_);
    Upload(in2_, host2_);
  }

  TensorMap Encode(cuabi_buffer buffer, cuabi_tensor_swizzle swizzle) {
    const size_t sizes[2] = {kCols, kRows};
    const size_t strides[2] = {sizeof(float), kCols * sizeof(float)};
    const size_t box[2] = {kBoxX, kBoxY};
    TensorMap map;
    EXPECT_EQ(CUABI_SUCCESS,
              cuabi_tensor_map_encode_tiled(buffer, 0, CUABI_TENSOR_FLOAT32, sizes, 2, strides, 2,
                                            box, 2, nullptr, 0, CUABI_TENSOR_INTERLEAVE_NONE, swizzle,
                                            CUABI_TENSOR_L2_PROMOTION_B128,
                                            CUABI_TENSOR_OOB_FILL_ZERO, map.out()))
        << LastError();
    return map;
  }

  static MapBytes Bytes(cuabi_tensor_map map) {
    MapBytes m{};
    size_t size = sizeof m.bytes;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_tensor_map_get_bytes(map, m.bytes, &size)) << LastError();
    EXPECT_EQ(size_t{CUABI_TENSOR_MAP_BYTES}, size);
    return m;
  }

  enum class Path { kPlain, kSized, kPacked };

  std::vector<float> Run(cuabi_tensor_map map, Path path) {
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out_, 0, 0, kTensorBytes));
    MapBytes m = Bytes(map);
    uint64_t out = Pointer(out_);
    int32_t tiles_x = kTilesX;
    cuabi_launch_config cfg = CUABI_LAUNCH_CONFIG_INIT;
    cfg.grid_x = kTiles;
    cfg.block_x = kBoxX * kBoxY;
    void* params[] = {m.bytes, &out, &tiles_x};
    if (path == Path::kPlain) {
      EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch(f_, &cfg, nullptr, params, 3)) << LastError();
    } else if (path == Path::kSized) {
      const size_t sizes[] = {CUABI_TENSOR_MAP_BYTES, sizeof out, sizeof tiles_x};
      EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch_sized(f_, &cfg, nullptr, params, sizes, 3))
          << LastError();
    } else {
      cuabi_param_info info[3];
      size_t count = 3, args_size = 0;
      EXPECT_EQ(CUABI_SUCCESS, cuabi_function_get_params(f_, info, &count, &args_size))
          << LastError();
      EXPECT_EQ(size_t{CUABI_TENSOR_MAP_BYTES}, info[0].size);
      alignas(64) unsigned char block[256] = {};
      EXPECT_LE(args_size, sizeof block);
      std::memcpy(block + info[0].offset, m.bytes, CUABI_TENSOR_MAP_BYTES);
      std::memcpy(block + info[1].offset, &out, sizeof out);
      std::memcpy(block + info[2].offset, &tiles_x, sizeof tiles_x);
      EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch_packed(f_, &cfg, nullptr, block, args_size))
          << LastError();
    }
    EXPECT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
    return Download<float>(out_, size_t{kCols} * kRows);
  }

  Module module_;
  Function f_;
  Buffer in_, in2_, out_;
  std::vector<float> host_, host2_;
};

TEST_F(TileCopy, TilesWithoutSwizzleMatchTheHost) {
  TensorMap map = Encode(in_, CUABI_TENSOR_SWIZZLE_NONE);
  EXPECT_EQ(Expected(host_, 0), Run(map, Path::kPlain));
  EXPECT_EQ(Expected(host_, 0), Run(map, Path::kSized));
  EXPECT_EQ(Expected(host_, 0), Run(map, Path::kPacked));
}

TEST_F(TileCopy, TilesWith128ByteSwizzleMatchTheHost) {
  TensorMap map = Encode(in_, CUABI_TENSOR_SWIZZLE_B128);
  const std::vector<float> want = Expected(host_, 7);
  ASSERT_NE(Expected(host_, 0), want);  // the swizzle moves something
  EXPECT_EQ(want, Run(map, Path::kPlain));
  EXPECT_EQ(want, Run(map, Path::kPacked));
}

TEST_F(TileCopy, ReplacedAddressReadsTheOtherBuffer) {
  for (cuabi_tensor_swizzle sw : {CUABI_TENSOR_SWIZZLE_NONE, CUABI_TENSOR_SWIZZLE_B128}) {
    const uint32_t mask = sw == CUABI_TENSOR_SWIZZLE_NONE ? 0 : 7;
    TensorMap map = Encode(in_, sw);
    ASSERT_EQ(Expected(host_, mask), Run(map, Path::kPlain));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_tensor_map_replace_address(map, in2_, 0)) << LastError();
    // The map keeps its new buffer alive.
    in2_.reset();
    EXPECT_EQ(Expected(host2_, mask), Run(map, Path::kPlain));
    EXPECT_EQ(Expected(host2_, mask), Run(map, Path::kSized));
    in2_ = Alloc(kTensorBytes);
    Upload(in2_, host2_);
  }
}

TEST_F(TileCopy, SizedLaunchRefusesAShortMapArgument) {
  TensorMap map = Encode(in_, CUABI_TENSOR_SWIZZLE_NONE);
  MapBytes m = Bytes(map);
  uint64_t out = Pointer(out_);
  int32_t tiles_x = kTilesX;
  void* params[] = {m.bytes, &out, &tiles_x};
  const size_t sizes[] = {64, sizeof out, sizeof tiles_x};
  cuabi_launch_config cfg = CUABI_LAUNCH_CONFIG_INIT;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_function_launch_sized(f_, &cfg, nullptr, params, sizes, 3));
  EXPECT_TRUE(Has("128 bytes")) << LastError();
}

TEST_F(TensorMapTest, RefusalsNameTheBound) {
  Buffer b = Alloc(1 << 16);
  const size_t sizes[2] = {64, 64};
  const size_t strides[2] = {4, 256};
  const size_t box[2] = {32, 8};
  TensorMap map;
  auto tiled = [&](size_t offset, cuabi_tensor_data_type t, size_t rank, const size_t* sz,
                   const size_t* st, const size_t* bx, cuabi_tensor_swizzle sw,
                   cuabi_tensor_oob_fill oob) {
    return cuabi_tensor_map_encode_tiled(b, offset, t, sz, rank, st, rank, bx, rank, nullptr, 0,
                                         CUABI_TENSOR_INTERLEAVE_NONE, sw,
                                         CUABI_TENSOR_L2_PROMOTION_NONE, oob, map.out());
  };
  const auto F = CUABI_TENSOR_FLOAT32;
  const auto NOSW = CUABI_TENSOR_SWIZZLE_NONE;
  const auto ZERO = CUABI_TENSOR_OOB_FILL_ZERO;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, tiled(8, F, 2, sizes, strides, box, NOSW, ZERO));
  EXPECT_TRUE(Has("16-byte aligned")) << LastError();
  const size_t six[6] = {1, 1, 1, 1, 1, 1};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, tiled(0, F, 6, six, six, six, NOSW, ZERO));
  EXPECT_TRUE(Has("rank (num_sizes) is 6, not within 1 to 5")) << LastError();
  const size_t odd[2] = {4, 260};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, tiled(0, F, 2, sizes, odd, box, NOSW, ZERO));
  EXPECT_TRUE(Has("strides[1] is 260 bytes, not a multiple of 16")) << LastError();
  const size_t big[2] = {32, 257};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, tiled(0, F, 2, sizes, strides, big, NOSW, ZERO));
  EXPECT_TRUE(Has("box[1] is 257, not within 1 to 256")) << LastError();
  const size_t wide[2] = {64, 8};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            tiled(0, F, 2, sizes, strides, wide, CUABI_TENSOR_SWIZZLE_B64, ZERO));
  EXPECT_TRUE(Has("256 bytes, more than the 64-byte span")) << LastError();
  const size_t huge[2] = {64, 1 << 20};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, tiled(0, F, 2, huge, strides, box, NOSW, ZERO));
  EXPECT_TRUE(Has("past the buffer's 65536 bytes")) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            tiled(0, CUABI_TENSOR_INT32, 2, sizes, strides, box, NOSW,
                  CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA));
  EXPECT_TRUE(Has("floating-point data_type")) << LastError();
  // A right map, then a misaligned replacement.
  ASSERT_EQ(CUABI_SUCCESS, tiled(0, F, 2, sizes, strides, box, NOSW, ZERO)) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_tensor_map_replace_address(map, b, 4));
  EXPECT_TRUE(Has("16-byte aligned")) << LastError();
}

TEST_F(TensorMapTest, Im2colMapEncodes) {
  if (cc_major_ < 9) GTEST_SKIP() << "tensor maps need compute capability 9.0";
  // NHWC: 16 channels of float, 8 x 8 pixels, 2 images (dimension 0 innermost).
  Buffer b = Alloc(16 * 8 * 8 * 2 * sizeof(float));
  const size_t sizes[4] = {16, 8, 8, 2};
  const size_t strides[4] = {4, 64, 512, 4096};
  const int32_t lower[2] = {-1, -1}, upper[2] = {-1, -1};
  TensorMap map;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_tensor_map_encode_im2col(b, 0, CUABI_TENSOR_FLOAT32, sizes, 4, strides, 4, nullptr,
                                           0, lower, 2, upper, 2, 16, 64, CUABI_TENSOR_INTERLEAVE_NONE,
                                           CUABI_TENSOR_SWIZZLE_B64, CUABI_TENSOR_L2_PROMOTION_NONE,
                                           CUABI_TENSOR_OOB_FILL_ZERO, map.out()))
      << LastError();
  const int32_t far[2] = {-200, 0};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT,
            cuabi_tensor_map_encode_im2col(b, 0, CUABI_TENSOR_FLOAT32, sizes, 4, strides, 4, nullptr,
                                           0, far, 2, upper, 2, 16, 64, CUABI_TENSOR_INTERLEAVE_NONE,
                                           CUABI_TENSOR_SWIZZLE_NONE, CUABI_TENSOR_L2_PROMOTION_NONE,
                                           CUABI_TENSOR_OOB_FILL_ZERO, map.out()));
  EXPECT_TRUE(Has("lower_corner[0] is -200, not within -128 to 127 for rank 4")) << LastError();
}

}  // namespace
}  // namespace cuabi_test
