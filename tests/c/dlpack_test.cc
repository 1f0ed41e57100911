// DLPack without a GPU: the structs' layout is DLPack's, and, against the
// stand-in driver (ctest's cuabi_cpu_fake_driver, whose device memory is host
// memory), a producer library's tensor taken over and handed back, its
// deleter run exactly once, when the last reference goes.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "dlpack_producer.h"
#include "test_support.h"

namespace cuabi_test {
namespace {

TEST(Dlpack, StructsHaveDlpacksLayout) {
  // DLPack 1.x: DLTensor 48 bytes, DLManagedTensor 64, DLManagedTensorVersioned 80.
  EXPECT_EQ(8u, sizeof(cuabi_dlpack_version));
  EXPECT_EQ(8u, sizeof(cuabi_dlpack_device));
  EXPECT_EQ(4u, sizeof(cuabi_dlpack_dtype));
  EXPECT_EQ(48u, sizeof(cuabi_dlpack_tensor));
  EXPECT_EQ(20u, offsetof(cuabi_dlpack_tensor, dtype));
  EXPECT_EQ(40u, offsetof(cuabi_dlpack_tensor, byte_offset));
  EXPECT_EQ(64u, sizeof(cuabi_dlpack_managed_tensor));
  EXPECT_EQ(56u, offsetof(cuabi_dlpack_managed_tensor, deleter));
  EXPECT_EQ(80u, sizeof(cuabi_dlpack_managed_tensor_versioned));
  EXPECT_EQ(16u, offsetof(cuabi_dlpack_managed_tensor_versioned, deleter));
  EXPECT_EQ(24u, offsetof(cuabi_dlpack_managed_tensor_versioned, flags));
  EXPECT_EQ(32u, offsetof(cuabi_dlpack_managed_tensor_versioned, dl_tensor));
  EXPECT_EQ(1, CUABI_DLPACK_MAJOR_VERSION);
  EXPECT_EQ(2, CUABI_DLPACK_DEVICE_CUDA);
  EXPECT_EQ(3, CUABI_DLPACK_DEVICE_PINNED_HOST);
  EXPECT_EQ(13, CUABI_DLPACK_DEVICE_MANAGED);
  EXPECT_EQ(2, CUABI_DLPACK_FLOAT);
  EXPECT_EQ(6, CUABI_DLPACK_BOOL);
}

bool OnTheStandIn() {
  const char* on = std::getenv("CUABI_TEST_FAKE_DRIVER");
  return on != nullptr && std::string(on) == "1";
}

#define SKIP_UNLESS_ON_THE_STAND_IN() \
  if (!OnTheStandIn()) GTEST_SKIP() << "needs the stand-in driver (ctest's cuabi_cpu_fake_driver)"

TEST(FakeDriver, DlpackProducerTensorTakenOverAndReleasedDeleterOnce) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_init()) << LastError();
  dlpack_producer_reset();
  void* raw = nullptr;
  uint64_t p = 0;
  ASSERT_EQ(0, dlpack_producer_make(0, 256, 3.0f, 0, &raw, &p));
  auto* t = static_cast<cuabi_dlpack_managed_tensor_versioned*>(raw);
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(t, 0, b.out())) << LastError();
  uint64_t ptr = 0;
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pointer(b, &ptr));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(b, &size));
  EXPECT_EQ(p, ptr) << "zero-copy: the producer's memory";
  EXPECT_EQ(256u * sizeof(float), size);
  std::vector<float> host(256, -1.0f);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, host.data(), size)) << LastError();
  EXPECT_EQ(3.0f, host[0]);
  EXPECT_EQ(258.0f, host[255]);
  // Written through cuabi, read through the tensor's own view of the memory.
  const float nine = 9.0f;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_from_host(b, 4, &nine, sizeof nine)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, 0, host.data(), size)) << LastError();
  EXPECT_EQ(9.0f, host[1]);

  // Handed on as our own tensor, which holds the buffer.
  const int64_t shape[1] = {128};
  const int64_t strides[1] = {2};
  cuabi_dlpack_managed_tensor_versioned* mine = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_export_dlpack(b, 0, shape, strides, 1, CUABI_DLPACK_FLOAT,
                                                      32, 1, CUABI_DLPACK_FLAG_READ_ONLY, &mine))
      << LastError();
  EXPECT_EQ(CUABI_DLPACK_FLAG_READ_ONLY, mine->flags);
  EXPECT_EQ(p, reinterpret_cast<uintptr_t>(mine->dl_tensor.data));
  EXPECT_EQ(2, mine->dl_tensor.strides[0]);
  b.reset();
  EXPECT_EQ(0, dlpack_producer_deleted()) << "our tensor still holds the buffer";
  mine->deleter(mine);
  EXPECT_EQ(1, dlpack_producer_deleted()) << "the last reference went";
  EXPECT_EQ(1, dlpack_producer_freed());
}

TEST(FakeDriver, DlpackRefusedTensorStaysTheCallers) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_init()) << LastError();
  dlpack_producer_reset();
  void* raw = nullptr;
  uint64_t p = 0;
  ASSERT_EQ(0, dlpack_producer_make(0, 8, 0.0f, CUABI_DLPACK_FLAG_READ_ONLY, &raw, &p));
  auto* t = static_cast<cuabi_dlpack_managed_tensor_versioned*>(raw);
  Buffer b;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_import_dlpack(t, 0, b.out())));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "read-only")) << cuabi_last_error_message();
  t->dl_tensor.device.device_id = 99;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_buffer_import_dlpack(t, CUABI_DLPACK_IMPORT_READ_ONLY, b.out())));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "device_id is 99"))
      << cuabi_last_error_message();
  EXPECT_EQ(0, dlpack_producer_deleted());
  t->dl_tensor.device.device_id = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack(t, CUABI_DLPACK_IMPORT_READ_ONLY, b.out()))
      << LastError();
  b.reset();
  EXPECT_EQ(1, dlpack_producer_deleted());
}

TEST(FakeDriver, DlpackUnversionedTensorTakenOver) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_init()) << LastError();
  dlpack_producer_reset();
  void* raw = nullptr;
  uint64_t p = 0;
  ASSERT_EQ(0, dlpack_producer_make_unversioned(0, 4, 1.0f, &raw, &p));
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_import_dlpack_unversioned(
                               static_cast<cuabi_dlpack_managed_tensor*>(raw), 0, b.out()))
      << LastError();
  uint64_t ptr = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_pointer(b, &ptr));
  EXPECT_EQ(p, ptr);
  b.reset();
  EXPECT_EQ(1, dlpack_producer_deleted());
  EXPECT_EQ(1, dlpack_producer_freed());
}

}  // namespace
}  // namespace cuabi_test

namespace cuabi_test {
namespace {

// The C++ face: an owned tensor out of a buffer, taken back, and a
// producer's tensor taken over, each deleter run once.
TEST(FakeDriver, DlpackThroughCuabiHpp) {
  SKIP_UNLESS_ON_THE_STAND_IN();
  cuabi::init();
  const cuabi::device d = cuabi::device::get(0);
  cuabi::buffer b = cuabi::buffer::alloc(d, 64 * sizeof(float));
  cuabi::dlpack_tensor t = cuabi::to_dlpack<float>(b, {4, 16});
  ASSERT_TRUE(t);
  EXPECT_EQ(CUABI_DLPACK_FLOAT, t->dl_tensor.dtype.code);
  EXPECT_EQ(32, t->dl_tensor.dtype.bits);
  EXPECT_EQ(16, t->dl_tensor.strides[0]);
  EXPECT_EQ(b.pointer(), reinterpret_cast<uintptr_t>(t->dl_tensor.data));
  EXPECT_THROW(cuabi::to_dlpack<float>(b, {4, 17}), cuabi::error) << "past the 256 bytes";
  cuabi::buffer back = cuabi::from_dlpack(t);
  EXPECT_FALSE(t) << "the buffer owns the tensor now";
  EXPECT_EQ(b.pointer(), back.pointer());

  dlpack_producer_reset();
  void* raw = nullptr;
  uint64_t p = 0;
  ASSERT_EQ(0, dlpack_producer_make(0, 8, 0.0f, CUABI_DLPACK_FLAG_READ_ONLY, &raw, &p));
  cuabi::dlpack_tensor theirs(static_cast<cuabi_dlpack_managed_tensor_versioned*>(raw));
  EXPECT_THROW(cuabi::from_dlpack(theirs), cuabi::error) << "read-only, taken as writable";
  EXPECT_TRUE(theirs) << "a refused tensor stays the caller's";
  {
    cuabi::buffer taken = cuabi::from_dlpack(theirs, CUABI_DLPACK_IMPORT_READ_ONLY);
    EXPECT_EQ(p, taken.pointer());
    EXPECT_EQ(0, dlpack_producer_deleted());
  }
  EXPECT_EQ(1, dlpack_producer_deleted());
}

}  // namespace
}  // namespace cuabi_test
