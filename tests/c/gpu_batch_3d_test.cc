// 3D batch copies (cuabi_stream_copy_3d_batch): boxes between host memory,
// plain and pitched device buffers and arrays, several in one call, each
// result checked against the box computed on the host; and the refusals,
// each naming the copy at fault, after which nothing of the batch ran.
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

class Batch3dTest : public GpuTest {
 protected:
  void ExpectRefused(cuabi_status expected, cuabi_status got, const char* needle) {
    EXPECT_EQ(StatusName(expected), StatusName(got)) << LastError();
    EXPECT_NE(std::string::npos, LastError().find(needle))
        << "message \"" << LastError() << "\" lacks \"" << needle << "\"";
  }
};

constexpr size_t W = 8, H = 6, D = 5;  // the volume, in floats

// Element (x, y, z) of the volume.
float Value(size_t x, size_t y, size_t z) { return float((z * H + y) * W + x) + 0.5f; }

std::vector<float> Volume() {
  std::vector<float> v(W * H * D);
  for (size_t z = 0; z < D; ++z)
    for (size_t y = 0; y < H; ++y)
      for (size_t x = 0; x < W; ++x) v[(z * H + y) * W + x] = Value(x, y, z);
  return v;
}

Array MakeArray(cuabi_device device, cuabi_array_format format, uint32_t channels) {
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = W;
  ad.height = H;
  ad.depth = D;
  ad.format = format;
  ad.channels = channels;
  Array a;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_array_create(device, &ad, a.out())) << LastError();
  return a;
}

TEST_F(Batch3dTest, BoxesBetweenHostBuffersPitchedMemoryAndArraysInOneCall) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  const std::vector<float> vol = Volume();
  Array arr = MakeArray(device_, CUABI_FORMAT_F32, 1);
  Array arr2 = MakeArray(device_, CUABI_FORMAT_F32, 1);
  // A pitched buffer holding the volume as D slices of H rows.
  Buffer pitched;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_pitched(device_, W * 4, H * D, 4, pitched.out()))
      << LastError();
  size_t pitch = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pitch(pitched, &pitch));
  ASSERT_GE(pitch, W * 4);
  // A plain buffer of rows of 64 bytes, slices of 10 rows; a sub-box of the
  // volume lands at byte 8 of row 1 of slice 1.
  const size_t row = 64, rows = 10;
  Buffer plain = Alloc(row * rows * D);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(plain, 0, 0, row * rows * D));
  Buffer tight = Alloc(W * H * D * 4);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(tight, 0, 0, W * H * D * 4));

  // Uploads: host -> array, host -> pitched, host sub-box -> plain.
  std::vector<cuabi_copy_3d_desc> up(3, cuabi_copy_3d_desc(CUABI_COPY_3D_DESC_INIT));
  up[0].src_host = vol.data();
  up[0].dst_array = arr;
  up[0].width_bytes = W * 4;
  up[0].height = H;
  up[0].depth = D;
  up[1].src_host = vol.data();
  up[1].dst_buffer = pitched;
  up[1].dst_height = H;
  up[1].width_bytes = W * 4;
  up[1].height = H;
  up[1].depth = D;
  // Elements x 1..4, rows 2..4, slices 1..3 of the volume.
  up[2].src_host = vol.data();
  up[2].src_x_bytes = 1 * 4;
  up[2].src_y = 2;
  up[2].src_z = 1;
  up[2].src_pitch = W * 4;
  up[2].src_height = H;
  up[2].dst_buffer = plain;
  up[2].dst_x_bytes = 8;
  up[2].dst_y = 1;
  up[2].dst_z = 1;
  up[2].dst_pitch = row;
  up[2].dst_height = rows;
  up[2].width_bytes = 4 * 4;
  up[2].height = 3;
  up[2].depth = 3;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_copy_3d_batch(s, up.data(), up.size(), 0)) << LastError();

  // On the device: array -> array, pitched -> tight buffer, and an array
  // sub-box and the plain buffer's sub-box back to host memory.
  std::vector<float> sub(3 * 2 * 2, -1.0f);
  std::vector<float> plain_box(4 * 3 * 3, -1.0f);
  std::vector<cuabi_copy_3d_desc> mid(4, cuabi_copy_3d_desc(CUABI_COPY_3D_DESC_INIT));
  mid[0].src_array = arr;
  mid[0].dst_array = arr2;
  mid[0].width_bytes = W * 4;
  mid[0].height = H;
  mid[0].depth = D;
  mid[1].src_buffer = pitched;
  mid[1].src_height = H;
  mid[1].dst_buffer = tight;
  mid[1].width_bytes = W * 4;
  mid[1].height = H;
  mid[1].depth = D;
  // Elements x 2..4, rows 1..2, slices 1..2 of the array.
  mid[2].src_array = arr;
  mid[2].src_x_bytes = 2 * 4;
  mid[2].src_y = 1;
  mid[2].src_z = 1;
  mid[2].dst_host = sub.data();
  mid[2].width_bytes = 3 * 4;
  mid[2].height = 2;
  mid[2].depth = 2;
  mid[3].src_buffer = plain;
  mid[3].src_x_bytes = 8;
  mid[3].src_y = 1;
  mid[3].src_z = 1;
  mid[3].src_pitch = row;
  mid[3].src_height = rows;
  mid[3].dst_host = plain_box.data();
  mid[3].width_bytes = 4 * 4;
  mid[3].height = 3;
  mid[3].depth = 3;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_copy_3d_batch(s, mid.data(), mid.size(), CUABI_COPY_BATCH_PREFER_OVERLAP))
      << LastError();

  // Back: the second array and the pitched buffer's middle slice, rows 1..4
  // of it, to host memory with a row pitch of its own (W + 2 floats).
  std::vector<float> from_arr2(W * H * D, -1.0f);
  const size_t host_row = (W + 2) * 4;
  std::vector<float> slice((W + 2) * 4, -1.0f);
  std::vector<cuabi_copy_3d_desc> down(2, cuabi_copy_3d_desc(CUABI_COPY_3D_DESC_INIT));
  down[0].src_array = arr2;
  down[0].dst_host = from_arr2.data();
  down[0].width_bytes = W * 4;
  down[0].height = H;
  down[0].depth = D;
  down[1].src_buffer = pitched;
  down[1].src_y = 1;
  down[1].src_z = 2;
  down[1].src_height = H;
  down[1].dst_host = slice.data();
  down[1].dst_pitch = host_row;
  down[1].width_bytes = W * 4;
  down[1].height = 4;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_copy_3d_batch(s, down.data(), down.size(), 0))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s)) << LastError();

  EXPECT_EQ(vol, from_arr2);
  EXPECT_EQ(vol, Download<float>(tight, W * H * D));
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 2; ++y)
      for (size_t x = 0; x < 3; ++x)
        ASSERT_EQ(Value(2 + x, 1 + y, 1 + z), sub[(z * 2 + y) * 3 + x])
            << x << "," << y << "," << z;
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 4; ++x)
        ASSERT_EQ(Value(1 + x, 2 + y, 1 + z), plain_box[(z * 3 + y) * 4 + x])
            << x << "," << y << "," << z;
  for (size_t y = 0; y < 4; ++y) {
    for (size_t x = 0; x < W; ++x)
      ASSERT_EQ(Value(x, 1 + y, 2), slice[y * (W + 2) + x]) << x << "," << y;
    for (size_t x = W; x < W + 2; ++x) ASSERT_EQ(-1.0f, slice[y * (W + 2) + x]) << "padding";
  }
  // The plain buffer: the box where it was put, zeros around it.
  const std::vector<uint8_t> bytes = Download<uint8_t>(plain, row * rows * D);
  for (size_t z = 0; z < D; ++z)
    for (size_t y = 0; y < rows; ++y)
      for (size_t xb = 0; xb < row; xb += 4) {
        float got;
        std::memcpy(&got, &bytes[(z * rows + y) * row + xb], 4);
        const bool inside = z >= 1 && z < 4 && y >= 1 && y < 4 && xb >= 8 && xb < 8 + 16;
        const float want = inside ? Value(1 + (xb - 8) / 4, 2 + (y - 1), 1 + (z - 1)) : 0.0f;
        ASSERT_EQ(want, got) << "byte " << xb << " of row " << y << " of slice " << z;
      }
}

TEST_F(Batch3dTest, ARefusalNamesTheCopyAndQueuesNothing) {
  Stream s;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, s.out()));
  Buffer dev = Alloc(4096);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(dev, 0, 0xEE, 4096));
  std::vector<uint8_t> host(4096, 0x11);
  // Three boxes of 16 bytes x 16 rows into rows of 64 bytes.
  auto box = [&](size_t dst_x, size_t dst_y) {
    cuabi_copy_3d_desc d = CUABI_COPY_3D_DESC_INIT;
    d.src_host = host.data();
    d.src_pitch = 16;
    d.dst_buffer = dev;
    d.dst_x_bytes = dst_x;
    d.dst_y = dst_y;
    d.dst_pitch = 64;
    d.width_bytes = 16;
    d.height = 16;
    return d;
  };
  std::vector<cuabi_copy_3d_desc> c = {box(0, 0), box(16, 0), box(0, 60)};
  ExpectRefused(CUABI_ERROR_OUT_OF_RANGE, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 0),
                "copies[2]: dst box reaches byte 4816 of the 4096-byte buffer");
  c[2] = box(32, 0);
  c[1].dst_pitch = 8;
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 0),
                "copies[1]: dst pitch 8 is smaller than the row");
  c[1] = box(16, 0);
  c[1].src_host = nullptr;
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 0),
                "copies[1]: src: none of src_host, src_buffer, src_array is set");
  c[1] = box(16, 0);
  c[2].struct_size = 16;
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 0),
                "copies[2].struct_size is 16");
  c[2] = box(32, 0);
  {
    Buffer gone = Alloc(4096);
    c[0].dst_buffer = gone;
  }
  ExpectRefused(CUABI_ERROR_INVALID_HANDLE, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 0),
                "copies[0]: dst_buffer");
  c[0] = box(0, 0);
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 4),
                "flags has bits this version does not define: 4");
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_3d_batch(s, c.data(), 0, 0),
                "count is 0");
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT, cuabi_stream_copy_3d_batch(s, nullptr, 1, 0),
                "copies is NULL");
  // Array rules of the batch: equal element sizes, pitches of whole elements.
  Array f32 = MakeArray(device_, CUABI_FORMAT_F32, 1);
  Array f32x4 = MakeArray(device_, CUABI_FORMAT_F32, 4);
  cuabi_copy_3d_desc a = CUABI_COPY_3D_DESC_INIT;
  a.src_array = f32;
  a.dst_array = f32x4;
  a.width_bytes = 16;
  std::vector<cuabi_copy_3d_desc> arrays = {c[0], a};
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT,
                cuabi_stream_copy_3d_batch(s, arrays.data(), arrays.size(), 0),
                "copies[1]: the src array's elements are 4 bytes and the dst array's 16");
  a = cuabi_copy_3d_desc(CUABI_COPY_3D_DESC_INIT);
  a.src_host = host.data();
  a.src_pitch = 10;
  a.dst_array = f32;
  a.width_bytes = 8;
  a.height = 2;
  arrays[1] = a;
  ExpectRefused(CUABI_ERROR_INVALID_ARGUMENT,
                cuabi_stream_copy_3d_batch(s, arrays.data(), arrays.size(), 0),
                "copies[1]: src pitch 10 is not whole elements of the array's 4 bytes");
  // An array past its extent, as cuabi_copy_3d says it.
  a.src_pitch = 8;
  a.dst_z = D;
  arrays[1] = a;
  ExpectRefused(CUABI_ERROR_OUT_OF_RANGE,
                cuabi_stream_copy_3d_batch(s, arrays.data(), arrays.size(), 0),
                "copies[1]: dst box's slices [5, 6) exceed the array's depth of 5");
  // Nothing of any refused batch ran.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  std::vector<uint8_t> got = Download<uint8_t>(dev, 4096);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(0xEE, got[i]) << "a copy ran: byte " << i;
  // The same boxes, sound, all run; a box of width 0 copies nothing.
  c.push_back(box(48, 20));
  c.back().width_bytes = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_copy_3d_batch(s, c.data(), c.size(), 0)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(s));
  got = Download<uint8_t>(dev, 4096);
  for (size_t y = 0; y < 64; ++y)
    for (size_t x = 0; x < 64; ++x)
      ASSERT_EQ(y < 16 && x < 48 ? 0x11 : 0xEE, got[y * 64 + x]) << x << "," << y;
}

}  // namespace
}  // namespace cuabi_test
