// Launching kernels: SAXPY through the three launch calls, the checks on
// arguments and configurations, and function attributes.
#include <cstring>
#include <string>
#include <vector>

#include "gpu_support.h"

namespace cuabi_test {
namespace {

// CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN.
const int32_t kAttrMaxSharedOptin = 97;

class SaxpyTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    module_ = Compile(kSaxpySource);
    ASSERT_NE(nullptr, module_.get());
    saxpy_ = GetFunction(module_, "saxpy");
    ASSERT_NE(nullptr, saxpy_.get());
    x_ = Alloc(problem_.bytes());
    y_ = Alloc(problem_.bytes());
    out_ = Alloc(problem_.bytes());
    ASSERT_NE(nullptr, out_.get());
    Upload(x_, problem_.x);
    Upload(y_, problem_.y);
    ClearOut();
    px_ = Pointer(x_);
    py_ = Pointer(y_);
    pout_ = Pointer(out_);
    n_ = problem_.n();
    config_.grid_x = SaxpyProblem::kBlocks;
    config_.block_x = SaxpyProblem::kThreads;
  }

  void ClearOut() {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out_, 0, 0, problem_.bytes())) << LastError();
  }

  void ExpectCorrect() {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
    const std::vector<float> out = Download<float>(out_, problem_.n());
    size_t first = 0;
    const size_t bad = problem_.Mismatches(out, &first);
    EXPECT_EQ(0u, bad) << "first mismatch at " << first << ": " << out[first] << " vs "
                       << problem_.a * problem_.x[first] + problem_.y[first];
  }

  // The launch did not run: out is still all zero.
  void ExpectNotRun() {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
    const std::vector<float> out = Download<float>(out_, problem_.n());
    size_t nonzero = 0;
    for (float v : out) nonzero += (v != 0.0f);
    EXPECT_EQ(0u, nonzero) << "a refused launch ran anyway";
  }

  std::vector<void*> Params() { return {&problem_.a, &px_, &py_, &pout_, &n_}; }

  SaxpyProblem problem_;
  Module module_;
  Function saxpy_;
  Buffer x_, y_, out_;
  uint64_t px_ = 0, py_ = 0, pout_ = 0;
  size_t n_ = 0;
  cuabi_launch_config config_ = CUABI_LAUNCH_CONFIG_INIT;
};

TEST_F(SaxpyTest, LaunchWithPointerArrayAndTimeIt) {
  Event start, stop;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, 0, start.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_create(device_, CUABI_EVENT_BLOCKING_SYNC, stop.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(start, nullptr)) << LastError();
  std::vector<void*> params = Params();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(saxpy_, &config_, nullptr, params.data(), params.size()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_record(stop, nullptr)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_synchronize(stop)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_event_query(stop));
  float ms = -1.0f;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_event_get_elapsed_ms(start, stop, &ms)) << LastError();
  EXPECT_GT(ms, 0.0f);
  ExpectCorrect();
}

TEST_F(SaxpyTest, LaunchSized) {
  std::vector<void*> params = Params();
  const size_t sizes[] = {sizeof(float), sizeof(uint64_t), sizeof(uint64_t), sizeof(uint64_t),
                          sizeof(size_t)};
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_launch_sized(saxpy_, &config_, nullptr, params.data(), sizes, params.size()))
      << LastError();
  ExpectCorrect();
}

TEST_F(SaxpyTest, LaunchPackedAtTheKernelsOffsets) {
  size_t count = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_param_count(saxpy_, &count)) << LastError();
  ASSERT_EQ(5u, count);
  const size_t want_sizes[] = {4, 8, 8, 8, 8};
  const size_t want_offsets[] = {0, 8, 16, 24, 32};
  std::vector<cuabi_param_info> layout(count);
  size_t got = count, layout_size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_params(saxpy_, layout.data(), &got, &layout_size));
  ASSERT_EQ(count, got);
  std::vector<size_t> offsets(count), sizes(count);
  for (size_t i = 0; i < count; ++i) {
    offsets[i] = layout[i].offset;
    sizes[i] = layout[i].size;
    EXPECT_EQ(want_sizes[i], sizes[i]) << "parameter " << i;
    EXPECT_EQ(want_offsets[i], offsets[i]) << "parameter " << i;
  }
  size_t args_size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_args_size(saxpy_, &args_size));
  EXPECT_EQ(offsets[4] + sizes[4], args_size);
  EXPECT_EQ(args_size, layout_size);
  // The signature check a binding makes once: right sizes pass, a 4-byte
  // size_t is refused in the launch's own words, and so is a wrong count.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_check_arg_sizes(saxpy_, sizes.data(), count))
      << LastError();
  std::vector<size_t> wrong = sizes;
  wrong[4] = 4;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_check_arg_sizes(saxpy_, wrong.data(), count)));
  EXPECT_NE(std::string::npos,
            std::string(cuabi_last_error_message())
                .find("cuabi_function_check_arg_sizes: kernel 'saxpy' parameter 4 is 8 bytes, "
                      "but the argument given is 4 bytes"))
      << cuabi_last_error_message();
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_check_arg_sizes(saxpy_, sizes.data(), 4)));
  EXPECT_NE(std::string::npos, std::string(cuabi_last_error_message())
                                   .find("kernel 'saxpy' takes 5 parameters, but 4 were given"))
      << cuabi_last_error_message();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_function_check_arg_size(saxpy_, 0, 4));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_check_arg_size(saxpy_, 5, 8)));
  EXPECT_NE(std::string::npos,
            std::string(cuabi_last_error_message()).find("there is no parameter 5"))
      << cuabi_last_error_message();

  std::vector<unsigned char> block(args_size, 0xEE);
  std::vector<void*> params = Params();
  for (size_t i = 0; i < count; ++i) std::memcpy(&block[offsets[i]], params[i], sizes[i]);
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_launch_packed(saxpy_, &config_, nullptr, block.data(), block.size()))
      << LastError();
  ExpectCorrect();
}

// A plan: the block it owns is written in place, then launched (twice, with
// the output cleared in between, to show the block is read at each launch).
TEST_F(SaxpyTest, LaunchPlanWritesArgumentsInPlace) {
  Stream stream;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_create(device_, 0, 0, stream.out()));
  cuabi_launch_plan plan = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_create(saxpy_, &config_, stream, &plan))
      << LastError();
  void* block = nullptr;
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_get_args(plan, &block, &size)) << LastError();
  size_t args_size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_args_size(saxpy_, &args_size));
  ASSERT_EQ(args_size, size);
  ASSERT_EQ(0u, reinterpret_cast<uintptr_t>(block) % 64);
  std::vector<void*> params = Params();
  std::vector<cuabi_param_info> layout(params.size());
  size_t count = layout.size();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_params(saxpy_, layout.data(), &count, nullptr));
  for (size_t i = 0; i < params.size(); ++i)
    std::memcpy(static_cast<unsigned char*>(block) + layout[i].offset, params[i], layout[i].size);
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out_, 0, 0, problem_.bytes()));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_launch(plan)) << LastError();
    ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
    ExpectCorrect();
  }
  // The plan keeps its function and stream alive after their handles go.
  stream.reset();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_launch_plan_launch(plan)) << LastError();
  cuabi_launch_plan_release(plan);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_HANDLE), StatusName(cuabi_launch_plan_launch(plan)));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_));
}

TEST_F(SaxpyTest, LaunchPlanChecksItsConfigurationOnce) {
  cuabi_launch_config bad = config_;
  bad.block_x = 4096;
  cuabi_launch_plan plan = nullptr;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_launch_plan_create(saxpy_, &bad, nullptr, &plan)));
  EXPECT_EQ(nullptr, plan);
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "4096")) << cuabi_last_error_message();
}

TEST_F(SaxpyTest, LaunchOnAStream) {
  Stream stream;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_stream_create(device_, CUABI_STREAM_NON_BLOCKING, 0, stream.out()));
  std::vector<void*> params = Params();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(saxpy_, &config_, stream, params.data(), params.size()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_stream_synchronize(stream)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_stream_query(stream));
  ExpectCorrect();
}

TEST_F(SaxpyTest, WrongParameterCountIsRefused) {
  std::vector<void*> params = Params();
  const size_t sizes[] = {4, 8, 8, 8, 8, 8};
  for (size_t wrong : {size_t{4}, size_t{6}, size_t{0}}) {
    std::vector<void*> p = params;
    p.resize(6, &n_);
    EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
              StatusName(cuabi_function_launch(saxpy_, &config_, nullptr, p.data(), wrong)))
        << wrong << " parameters";
    EXPECT_TRUE(Contains(cuabi_last_error_message(), std::to_string(wrong)))
        << cuabi_last_error_message();
    EXPECT_TRUE(Contains(cuabi_last_error_message(), "5")) << cuabi_last_error_message();
    EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
              StatusName(cuabi_function_launch_sized(saxpy_, &config_, nullptr, p.data(), sizes, wrong)))
        << wrong << " parameters";
  }
  ExpectNotRun();
}

// The overview's own bug: a 4-byte n passed to the size_t parameter.
TEST_F(SaxpyTest, FourByteValueForSizeTParameterIsRefused) {
  uint32_t n32 = static_cast<uint32_t>(problem_.n());
  void* params[] = {&problem_.a, &px_, &py_, &pout_, &n32};
  const size_t sizes[] = {4, 8, 8, 8, sizeof n32};
  cuabi_last_error_clear();
  ASSERT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_launch_sized(saxpy_, &config_, nullptr, params, sizes, 5)));
  const std::string message = cuabi_last_error_message();
  // Names the parameter (index 4, the fifth) and both sizes.
  EXPECT_TRUE(Contains(message, "param")) << message;
  EXPECT_TRUE(Contains(message, "4")) << message;
  EXPECT_TRUE(Contains(message, "8")) << message;

  // A float where a pointer goes is refused the same way.
  const size_t float_for_pointer[] = {4, 4, 8, 8, 8};
  EXPECT_EQ(
      StatusName(CUABI_ERROR_INVALID_ARGUMENT),
      StatusName(cuabi_function_launch_sized(saxpy_, &config_, nullptr, params, float_for_pointer, 5)));
  ExpectNotRun();
}

TEST_F(SaxpyTest, PackedBlockOfTheWrongSizeIsRefused) {
  size_t args_size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_args_size(saxpy_, &args_size));
  std::vector<unsigned char> block(args_size + 16, 0);
  for (size_t wrong : {args_size - 4, args_size + 4, size_t{1}, size_t{0}}) {
    EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
              StatusName(cuabi_function_launch_packed(saxpy_, &config_, nullptr, block.data(), wrong)))
        << "args_size " << wrong << " instead of " << args_size;
  }
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_launch_packed(saxpy_, &config_, nullptr, nullptr, args_size)));
  ExpectNotRun();
}

TEST_F(SaxpyTest, NullArgumentsAreRefused) {
  std::vector<void*> params = Params();
  const size_t sizes[] = {4, 8, 8, 8, 8};
  const cuabi_status want = CUABI_ERROR_INVALID_ARGUMENT;
  CUABI_EXPECT_STATUS(want, cuabi_function_launch(saxpy_, nullptr, nullptr, params.data(), 5));
  CUABI_EXPECT_STATUS(want, cuabi_function_launch(saxpy_, &config_, nullptr, nullptr, 5));
  CUABI_EXPECT_STATUS(want,
                      cuabi_function_launch_sized(saxpy_, &config_, nullptr, params.data(), nullptr, 5));
  std::vector<void*> with_null = params;
  with_null[2] = nullptr;
  CUABI_EXPECT_STATUS(want, cuabi_function_launch(saxpy_, &config_, nullptr, with_null.data(), 5));
  CUABI_EXPECT_STATUS(want,
                      cuabi_function_launch_sized(saxpy_, &config_, nullptr, with_null.data(), sizes, 5));
  ExpectNotRun();
}

TEST_F(SaxpyTest, BadConfigurationsAreRefused) {
  int32_t optin = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_attribute(device_, kAttrMaxSharedOptin, &optin));
  struct Case {
    const char* what;
    cuabi_launch_config config;
  };
  std::vector<Case> cases;
  auto add = [&](const char* what, auto edit) {
    cuabi_launch_config c = config_;
    edit(c);
    cases.push_back({what, c});
  };
  add("grid_x 0", [](cuabi_launch_config& c) { c.grid_x = 0; });
  add("grid_y 0", [](cuabi_launch_config& c) { c.grid_y = 0; });
  add("grid_z 0", [](cuabi_launch_config& c) { c.grid_z = 0; });
  add("block_x 0", [](cuabi_launch_config& c) { c.block_x = 0; });
  add("block_y 0", [](cuabi_launch_config& c) { c.block_y = 0; });
  add("block_z 0", [](cuabi_launch_config& c) { c.block_z = 0; });
  add("block_x 1025", [](cuabi_launch_config& c) { c.block_x = 1025; });
  add("block 32x32x2", [](cuabi_launch_config& c) {
    c.block_x = 32;
    c.block_y = 32;
    c.block_z = 2;
  });
  add("block_z 65", [](cuabi_launch_config& c) {
    c.block_x = 1;
    c.block_z = 65;
  });
  add("shared memory past the device limit",
      [&](cuabi_launch_config& c) { c.shared_mem_bytes = static_cast<uint32_t>(optin) + 1; });
  add("shared memory 2 GiB", [](cuabi_launch_config& c) { c.shared_mem_bytes = 1u << 31; });
  std::vector<void*> params = Params();
  for (const Case& c : cases) {
    EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
              StatusName(cuabi_function_launch(saxpy_, &c.config, nullptr, params.data(), 5)))
        << c.what << ": " << cuabi_last_error_message();
    EXPECT_STRNE("", cuabi_last_error_message());
  }
  ExpectNotRun();
}

// A struct from a newer header: larger, with zero bytes past the known
// fields, is accepted; with non-zero bytes there, refused.
TEST_F(SaxpyTest, LargerLaunchConfigFromANewerHeader) {
  struct Newer {
    cuabi_launch_config base;
    uint32_t cluster_x;
    uint32_t reserved;
  } newer;
  std::memset(&newer, 0, sizeof newer);
  newer.base = config_;
  newer.base.struct_size = sizeof newer;
  std::vector<void*> params = Params();
  newer.cluster_x = 2;
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_SUPPORTED),
            StatusName(cuabi_function_launch(saxpy_, &newer.base, nullptr, params.data(), 5)));
  ExpectNotRun();
  newer.cluster_x = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(saxpy_, &newer.base, nullptr, params.data(), 5))
      << LastError();
  ExpectCorrect();
}

TEST_F(SaxpyTest, FunctionNameAndAttributes) {
  const std::vector<char> name = CheckTwoCall(
      [&](void* buf, size_t* size) {
        return cuabi_function_get_name(saxpy_, static_cast<char*>(buf), size);
      },
      true);
  ASSERT_FALSE(name.empty());
  EXPECT_STREQ("saxpy", name.data());

  int32_t v = -1;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_get_attribute(saxpy_, CUABI_FUNC_MAX_THREADS_PER_BLOCK, &v));
  EXPECT_GT(v, 0);
  EXPECT_LE(v, 1024);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(saxpy_, CUABI_FUNC_NUM_REGS, &v));
  EXPECT_GT(v, 0);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(saxpy_, CUABI_FUNC_BINARY_VERSION, &v));
  EXPECT_EQ(cc_major_ * 10 + cc_minor_, v) << "CUBIN made for the device's own architecture";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(saxpy_, CUABI_FUNC_PTX_VERSION, &v));
  EXPECT_GT(v, 0);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(saxpy_, CUABI_FUNC_SHARED_SIZE_BYTES, &v));
  EXPECT_EQ(0, v);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_attribute(saxpy_, CUABI_FUNC_LOCAL_SIZE_BYTES, &v));
  EXPECT_GE(v, 0);

  int32_t untouched = 4321;
  EXPECT_NE(CUABI_SUCCESS, cuabi_function_get_attribute(saxpy_, static_cast<cuabi_function_attribute>(100000), &untouched));
  EXPECT_EQ(4321, untouched);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_get_attribute(saxpy_, CUABI_FUNC_NUM_REGS, nullptr)));

  // Parameter layout argument checks: a short array writes nothing and
  // says how many are needed; the count pointer is required.
  cuabi_param_info few[2] = {{77, 77}, {77, 77}};
  size_t have = 2, size = 77;
  EXPECT_EQ(StatusName(CUABI_ERROR_INSUFFICIENT_BUFFER),
            StatusName(cuabi_function_get_params(saxpy_, few, &have, &size)));
  EXPECT_EQ(5u, have);
  EXPECT_EQ(77u, few[0].offset);
  EXPECT_EQ(77u, size);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_get_params(saxpy_, few, nullptr, &size)));
  have = 0;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_function_get_params(saxpy_, nullptr, &have, &size));
  EXPECT_EQ(5u, have);
  EXPECT_EQ(40u, size);
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_get_param_count(saxpy_, nullptr)));
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_get_args_size(saxpy_, nullptr)));
}

class UtilKernelTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    module_ = Compile(kUtilSource);
    ASSERT_NE(nullptr, module_.get());
  }
  Module module_;
};

TEST_F(UtilKernelTest, LaunchBoundsLimitTheBlock) {
  Function bounded = GetFunction(module_, "bounded");
  int32_t max_threads = 0;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_get_attribute(bounded, CUABI_FUNC_MAX_THREADS_PER_BLOCK, &max_threads));
  EXPECT_EQ(128, max_threads);
  Buffer out = Alloc(256 * sizeof(int));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(out, 0, 0xFF, 256 * sizeof(int)));
  uint64_t p = Pointer(out);
  void* params[] = {&p};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = 256;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_ARGUMENT),
            StatusName(cuabi_function_launch(bounded, &config, nullptr, params, 1)))
      << "a block past the kernel's own limit";
  config.block_x = 128;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(bounded, &config, nullptr, params, 1)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_));
  const std::vector<int> got = Download<int>(out, 256);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(i, got[i]);
  for (int i = 128; i < 256; ++i) ASSERT_EQ(-1, got[i]) << "the 256-thread launch ran";
}

TEST_F(UtilKernelTest, DynamicSharedMemory) {
  Function reverse = GetFunction(module_, "reverse_in_shared");
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_set_attribute(reverse, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8192))
      << LastError();
  int32_t v = 0;
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_function_get_attribute(reverse, CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, &v));
  EXPECT_EQ(8192, v);

  const uint32_t threads = 256;
  Buffer out = Alloc(threads * sizeof(int));
  uint64_t p = Pointer(out);
  void* params[] = {&p};
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  config.block_x = threads;
  config.shared_mem_bytes = threads * sizeof(int);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(reverse, &config, nullptr, params, 1)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_));
  const std::vector<int> got = Download<int>(out, threads);
  for (uint32_t i = 0; i < threads; ++i) ASSERT_EQ(static_cast<int>(threads - 1 - i), got[i]);
}

TEST_F(UtilKernelTest, KernelWithoutParameters) {
  Function f = GetFunction(module_, "no_params");
  size_t count = 99, args_size = 99;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_param_count(f, &count));
  EXPECT_EQ(0u, count);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_function_get_args_size(f, &args_size));
  EXPECT_EQ(0u, args_size);
  cuabi_launch_config config = CUABI_LAUNCH_CONFIG_INIT;
  EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &config, nullptr, nullptr, 0)) << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch_sized(f, &config, nullptr, nullptr, nullptr, 0))
      << LastError();
  EXPECT_EQ(CUABI_SUCCESS, cuabi_function_launch_packed(f, &config, nullptr, nullptr, 0)) << LastError();
  void* one[] = {&count};
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_function_launch(f, &config, nullptr, one, 1));
  EXPECT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(device_)) << LastError();
}

}  // namespace
}  // namespace cuabi_test
