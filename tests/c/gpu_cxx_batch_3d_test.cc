// The 3D batch copy through the C++ face (cuabi_objects.hpp:
// stream::copy_3d_batch takes a std::vector of cuabi_copy_3d_desc): a
// volume uploaded into an array and a pitched buffer in one call, read back
// through both in another and checked against the host's, and a refusal as
// cuabi::error naming the copy at fault.
#include <gtest/gtest.h>

#include <cuabi/cuabi.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

using CxxBatch3dTest = GpuTest;

TEST_F(CxxBatch3dTest, AVolumeThroughAnArrayAndPitchedMemoryInTwoCalls) {
  const size_t W = 16, H = 8, D = 4;
  const cuabi::stream s = cuabi::stream::create(device_, CUABI_STREAM_NON_BLOCKING);
  cuabi_array_desc ad = CUABI_ARRAY_DESC_INIT;
  ad.width = W;
  ad.height = H;
  ad.depth = D;
  ad.format = CUABI_FORMAT_U32;
  const cuabi::array arr = cuabi::array::create(device_, ad);
  EXPECT_EQ(4u, arr.element_size());  // one 32-bit channel
  {
    cuabi::array gone = cuabi::array::create(device_, ad);
    const cuabi::array kept = std::move(gone);
    EXPECT_EQ(4u, kept.element_size());
    try {
      (void)gone.element_size();  // NOLINT(bugprone-use-after-move): a moved-from owner holds NULL
      ADD_FAILURE() << "a moved-from array answered an element size";
    } catch (const cuabi::error& e) {
      EXPECT_EQ(CUABI_ERROR_INVALID_HANDLE, e.status()) << e.what();
      EXPECT_NE(std::string(e.what()).find("array is NULL"), std::string::npos) << e.what();
    }
  }
  const cuabi::buffer pitched = cuabi::buffer::alloc_pitched(device_, W * 4, H * D, 4);
  std::vector<uint32_t> vol(W * H * D);
  for (size_t i = 0; i < vol.size(); ++i) vol[i] = static_cast<uint32_t>(i * 2654435761u);
  std::vector<cuabi_copy_3d_desc> up(2, cuabi_copy_3d_desc(CUABI_COPY_3D_DESC_INIT));
  for (auto& d : up) {
    d.src_host = vol.data();
    d.width_bytes = W * 4;
    d.height = H;
    d.depth = D;
  }
  up[0].dst_array = arr.get();
  up[1].dst_buffer = pitched.get();
  up[1].dst_height = H;
  s.copy_3d_batch(up, 0);
  std::vector<uint32_t> from_array(vol.size()), from_pitched(vol.size());
  std::vector<cuabi_copy_3d_desc> down(2, cuabi_copy_3d_desc(CUABI_COPY_3D_DESC_INIT));
  for (auto& d : down) {
    d.width_bytes = W * 4;
    d.height = H;
    d.depth = D;
  }
  down[0].src_array = arr.get();
  down[0].dst_host = from_array.data();
  down[1].src_buffer = pitched.get();
  down[1].src_height = H;
  down[1].dst_host = from_pitched.data();
  s.copy_3d_batch(down, CUABI_COPY_BATCH_PREFER_OVERLAP);
  s.synchronize();
  EXPECT_EQ(vol, from_array);
  EXPECT_EQ(vol, from_pitched);
  // The second copy one slice past the array's depth.
  down[1].src_buffer = nullptr;
  down[1].src_height = 0;
  down[1].src_array = arr.get();
  down[1].src_z = 1;
  try {
    s.copy_3d_batch(down, 0);
    FAIL() << "a box past the array's depth was accepted";
  } catch (const cuabi::error& e) {
    EXPECT_EQ(CUABI_ERROR_OUT_OF_RANGE, e.status());
    EXPECT_NE(std::string::npos,
              std::string(e.what()).find("copies[1]: src box's slices [1, 5) exceed the array's "
                                         "depth of 4"))
        << e.what();
  }
}

}  // namespace
}  // namespace cuabi_test
