// Virtual memory: granularity, physical memory mapped into reserved ranges,
// access per device, a growable buffer that keeps its address and contents
// as it grows to 4 GiB, and physical memory exported to a second process by
// file descriptor (passed over a Unix socket), written there and read back
// here; across two GPUs through set-access where the machine has two.
// The refusals are corpus cases (tests/corpus/cases.json).
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fd_passing.h"
#include "gpu_support.h"

extern char** environ;

namespace cuabi_test {
namespace {

constexpr const char* kKernels = R"(
__device__ unsigned value_at(unsigned long long i, unsigned salt) {
  return (unsigned)(i * 2654435761ull) ^ salt;
}
extern "C" __global__ void pattern(unsigned* p, unsigned long long from, unsigned long long to,
                                   unsigned salt) {
  for (unsigned long long i = from + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       i < to; i += (unsigned long long)gridDim.x * blockDim.x)
    p[i] = value_at(i, salt);
}
extern "C" __global__ void verify(const unsigned* p, unsigned long long n, unsigned salt,
                                  unsigned long long* bad) {
  unsigned long long wrong = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    wrong += p[i] != value_at(i, salt);
  if (wrong) atomicAdd(bad, wrong);
}
)";

constexpr size_t kMiB = size_t{1} << 20;

class VmmTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_vm_granularity(device_, &granularity_, &recommended_))
        << LastError();
  }

  void ExpectStatus(cuabi_status expected, cuabi_status got, const char* needle) {
    EXPECT_EQ(StatusName(expected), StatusName(got)) << LastError();
    if (got != CUABI_SUCCESS) {
      EXPECT_TRUE(Contains(cuabi_last_error_message(), needle))
          << "message \"" << cuabi_last_error_message() << "\" lacks \"" << needle << "\"";
    }
  }

  void Launch(cuabi_function f, std::vector<void*> params) {
    cuabi_launch_config c = CUABI_LAUNCH_CONFIG_INIT;
    c.grid_x = 1024;
    c.block_x = 256;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_function_launch(f, &c, nullptr, params.data(), params.size()))
        << LastError();
  }

  // Writes the pattern into u32 elements [from, to) of `b`.
  void Pattern(cuabi_function f, cuabi_buffer b, uint64_t from, uint64_t to, uint32_t salt) {
    uint64_t p = Pointer(b);
    unsigned long long lo = from, hi = to;
    Launch(f, {&p, &lo, &hi, &salt});
  }

  // The u32 elements of the first n of `b` that differ from the pattern.
  uint64_t Wrong(cuabi_function f, cuabi_buffer b, uint64_t n, uint32_t salt) {
    Buffer bad = Alloc(8);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_buffer_memset(bad, 0, 0, 8)) << LastError();
    uint64_t p = Pointer(b), q = Pointer(bad);
    unsigned long long count = n;
    Launch(f, {&p, &count, &salt, &q});
    return Download<uint64_t>(bad, 1)[0];
  }

  size_t granularity_ = 0, recommended_ = 0;
};

TEST_F(VmmTest, Granularity) {
  EXPECT_GT(granularity_, 0u);
  EXPECT_GE(recommended_, granularity_);
  EXPECT_EQ(0u, recommended_ % granularity_);
}

// 64 MiB to 4 GiB in steps that double it, the new part patterned by a
// kernel each time and the whole checked by another: the address, the
// contents and the range checks follow the growth.
TEST_F(VmmTest, GrowableBufferGrowsTo4GiBKeepingItsContents) {
  const size_t reserve = 4096 * kMiB;
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_memory_info(device_, &free_bytes, &total));
  if (free_bytes < reserve + 512 * kMiB) GTEST_SKIP() << "the device has less than 4.5 GiB free";
  Module m = Compile(kKernels);
  Function pattern = GetFunction(m, "pattern");
  Function verify = GetFunction(m, "verify");
  const uint32_t salt = 0x5eed;

  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_growable(device_, 64 * kMiB, reserve, b.out()))
      << LastError();
  cuabi_buffer_kind kind = CUABI_BUFFER_DEVICE;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_kind(b, &kind));
  EXPECT_EQ(CUABI_BUFFER_GROWABLE, kind);
  size_t reserved = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_reserved_size(b, &reserved));
  EXPECT_EQ(reserve, reserved);
  const uint64_t address = Pointer(b);
  Pattern(pattern, b, 0, 64 * kMiB / 4, salt);

  for (size_t size = 64 * kMiB; size < reserve;) {
    const size_t next = size * 2;
    // Before the growth the new part is out of range, as for any buffer.
    uint32_t word = 0;
    ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_buffer_copy_to_host(b, size, &word, 4),
                 "reaches past the end");
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_grow(b, next)) << LastError();
    size_t now = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(b, &now));
    ASSERT_EQ(next, now);
    ASSERT_EQ(address, Pointer(b)) << "the address moved";
    // What was there is still there; then the new part is written and all
    // of it checked, and the words on both sides of the seam read back.
    ASSERT_EQ(0u, Wrong(verify, b, size / 4, salt)) << "after growing to " << next;
    Pattern(pattern, b, size / 4, next / 4, salt);
    ASSERT_EQ(0u, Wrong(verify, b, next / 4, salt)) << "at " << next;
    uint32_t seam[2] = {0, 0};
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(b, size - 4, seam, 8)) << LastError();
    EXPECT_EQ((uint32_t)((size / 4 - 1) * 2654435761ull) ^ salt, seam[0]);
    EXPECT_EQ((uint32_t)((size / 4) * 2654435761ull) ^ salt, seam[1]);
    size = next;
  }
  // Copies between buffers use the grown size; growth past the reservation,
  // a shrink and a size off the granularity are refused.
  Buffer small = Alloc(4 * kMiB);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy(small, 0, b, reserve - 4 * kMiB, 4 * kMiB));
  ExpectStatus(CUABI_ERROR_OUT_OF_RANGE, cuabi_buffer_grow(b, reserve + granularity_),
               "reservation");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_grow(b, 64 * kMiB), "does not shrink");
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_buffer_grow(b, reserve - 1), "granularity");
  unsigned char handle[CUABI_IPC_HANDLE_SIZE];
  EXPECT_NE(CUABI_SUCCESS, cuabi_buffer_get_ipc_handle(b, handle, sizeof handle));
}

// A growable buffer may start empty and be grown by one granule at a time.
TEST_F(VmmTest, GrowableBufferStartsEmpty) {
  Buffer b;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_alloc_growable(device_, 0, 8 * granularity_, b.out()))
      << LastError();
  size_t size = 1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_get_size(b, &size));
  EXPECT_EQ(0u, size);
  std::vector<uint32_t> host(granularity_ / 4);
  for (size_t step = 1; step <= 8; ++step) {
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_grow(b, step * granularity_)) << LastError();
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(step * 1000 + i);
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_copy_from_host(b, (step - 1) * granularity_, host.data(), granularity_));
  }
  for (size_t step = 1; step <= 8; ++step) {
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_buffer_copy_to_host(b, (step - 1) * granularity_, host.data(), granularity_));
    for (size_t i = 0; i < host.size(); i += 997)
      ASSERT_EQ(static_cast<uint32_t>(step * 1000 + i), host[i]) << step << " " << i;
  }
}

// Physical memory in two pieces mapped side by side into one range, used
// through a buffer over the range; then unmapped, remapped elsewhere, freed.
TEST_F(VmmTest, PhysicalMemoryMappedIntoARange) {
  const size_t g = granularity_;
  PhysicalMemory a, c;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_create(device_, g, 0, a.out())) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_create(device_, 2 * g, 0, c.out()));
  size_t size = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_get_size(c, &size));
  EXPECT_EQ(2 * g, size);
  int32_t ordinal = -1;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_get_device_ordinal(c, &ordinal));
  EXPECT_EQ(0, ordinal);
  AddressRange range;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_reserve(device_, 4 * g, range.out()));
  uint64_t base = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_get_pointer(range, &base));
  EXPECT_NE(0u, base);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_map(range, 0, a)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_map(range, g, c)) << LastError();
  {
    Buffer view;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_from_range(range, device_, 0, 3 * g, view.out()))
        << LastError();
    EXPECT_EQ(base, Pointer(view));
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(view, 0, 7, 4, 3 * g / 4));
    std::vector<uint32_t> host(3 * g / 4);
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(view, 0, host.data(), 3 * g));
    for (size_t i = 0; i < host.size(); i += 4099) ASSERT_EQ(7u, host[i]) << i;
    ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_address_range_unmap(range, 0, g),
                 "view the range");
  }
  // Read-only access for the device is tracked; read and write again.
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_address_range_set_access(range, 0, 3 * g, device_, CUABI_VM_ACCESS_READWRITE))
      << LastError();
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT, cuabi_physical_memory_free(c), "still mapped");
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_unmap(range, g, 2 * g)) << LastError();
  // Mapped again at the end: its contents went with it.
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_map(range, 2 * g, c)) << LastError();
  {
    Buffer view;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_from_range(range, device_, 2 * g, 2 * g, view.out()));
    uint32_t word = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(view, 4, &word, 4));
    EXPECT_EQ(7u, word);
  }
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_unmap(range, 2 * g, 2 * g));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_free(c)) << LastError();
  c.detach();  // the free released the handle
  // `a` stays mapped while its handle goes: the range holds it.
  a.reset();
  Buffer view;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_from_range(range, device_, 0, g, view.out()));
  uint32_t word = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(view, 0, &word, 4));
  EXPECT_EQ(7u, word);
}

// Spawns the child with one end of a socketpair, sends it `fd` over the
// other and answers its exit status (or -1).
int RunChildWithFd(int fd, size_t bytes, uint32_t expect, uint32_t write, int device) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
  fcntl(pair[1], F_SETFD, 0);  // the child's end is inherited
  std::vector<std::string> args = {CUABI_VMM_CHILD,       std::to_string(pair[1]),
                                   std::to_string(bytes), std::to_string(expect),
                                   std::to_string(write), std::to_string(device)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, CUABI_VMM_CHILD, nullptr, nullptr, argv.data(), environ);
  close(pair[1]);
  if (spawned != 0) {
    close(pair[0]);
    return -1;
  }
  const int sent = cuabi_test_send_fd(pair[0], fd);
  close(pair[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || sent != 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Exports 16 MiB of physical memory to a child and reads what it wrote
// through a buffer of `device` (0: the memory's own GPU; 1: the other,
// through set-access).
void ExportToChild(cuabi_device home, cuabi_device user, int device, size_t g) {
  const size_t bytes = 8 * g;
  PhysicalMemory memory;
  const cuabi_status made =
      cuabi_physical_memory_create(home, bytes, CUABI_PHYSICAL_MEMORY_EXPORTABLE, memory.out());
  if (made == CUABI_ERROR_NOT_SUPPORTED) GTEST_SKIP() << LastError();
  ASSERT_EQ(CUABI_SUCCESS, made) << LastError();
  AddressRange range;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_reserve(home, bytes, range.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_map(range, 0, memory)) << LastError();
  if (device != 0) {
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_address_range_set_access(range, 0, bytes, user, CUABI_VM_ACCESS_READWRITE))
        << LastError();
  }
  Buffer view;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_from_range(range, user, 0, bytes, view.out()))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_fill(view, 0, 5, 4, bytes / 4)) << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(user));
  int32_t fd = -1;
  const cuabi_status exported = cuabi_physical_memory_export_fd(memory, &fd);
  if (exported == CUABI_ERROR_NOT_SUPPORTED) GTEST_SKIP() << LastError();
  ASSERT_EQ(CUABI_SUCCESS, exported) << LastError();
  ASSERT_GE(fd, 0);
  EXPECT_EQ(0, RunChildWithFd(fd, bytes, 5, 9, device));
  close(fd);
  std::vector<uint32_t> host(bytes / 4);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(view, 0, host.data(), bytes));
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(9u, host[i]) << "the child's write at " << i;
}

TEST_F(VmmTest, ExportedToAChildProcessByFd) { ExportToChild(device_, device_, 0, granularity_); }

// Descriptors that are no exported memory are refused before the driver.
TEST_F(VmmTest, ImportRefusesWhatIsNoMemory) {
  PhysicalMemory m;
  int pipe_fds[2];
  ASSERT_EQ(0, pipe(pipe_fds));
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_physical_memory_import_fd(device_, pipe_fds[0], granularity_, m.out()),
               "is a pipe");
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_physical_memory_import_fd(device_, -1, granularity_, m.out()),
               "no file descriptor");
  char path[] = "/tmp/cuabi-vmm-XXXXXX";
  const int file = mkstemp(path);
  ASSERT_GE(file, 0);
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_physical_memory_import_fd(device_, file, granularity_, m.out()), "a file");
  close(file);
  unlink(path);
}

// Two GPUs (label multi_gpu; skipped on one): memory of device 0 reached by
// device 1 through set-access, in this process and in a child.
class VmmMultiGpuTest : public VmmTest {
 protected:
  void SetUp() override {
    VmmTest::SetUp();
    if (IsSkipped()) return;
    int32_t count = 0;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get_count(&count));
    if (count < 2) GTEST_SKIP() << "needs two devices; this machine has " << count;
    ASSERT_EQ(CUABI_SUCCESS, cuabi_device_get(1, other_.out()));
  }
  Device other_;
};

TEST_F(VmmMultiGpuTest, SetAccessAcrossDevices) {
  const size_t g = granularity_;
  PhysicalMemory memory;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_physical_memory_create(device_, 4 * g, 0, memory.out()));
  AddressRange range;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_reserve(device_, 4 * g, range.out()));
  ASSERT_EQ(CUABI_SUCCESS, cuabi_address_range_map(range, 0, memory)) << LastError();
  Buffer there;
  ExpectStatus(CUABI_ERROR_INVALID_ARGUMENT,
               cuabi_buffer_from_range(range, other_, 0, 4 * g, there.out()), "no access");
  ASSERT_EQ(CUABI_SUCCESS,
            cuabi_address_range_set_access(range, 0, 4 * g, other_, CUABI_VM_ACCESS_READWRITE))
      << LastError();
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_from_range(range, other_, 0, 4 * g, there.out()))
      << LastError();
  // Device 1 writes with a kernel of its own; device 0 reads it back.
  cuabi_compile_desc desc = CUABI_COMPILE_DESC_INIT;
  desc.source = kKernels;
  desc.flags = CUABI_COMPILE_NO_CACHE;
  Module m;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_module_compile(other_, &desc, m.out())) << LastError();
  Function pattern = GetFunction(m, "pattern");
  Pattern(pattern, there, 0, 4 * g / 4, 77);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_device_synchronize(other_));
  Buffer here;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_from_range(range, device_, 0, 4 * g, here.out()));
  std::vector<uint32_t> host(4 * g / 4);
  ASSERT_EQ(CUABI_SUCCESS, cuabi_buffer_copy_to_host(here, 0, host.data(), 4 * g));
  for (size_t i = 0; i < host.size(); i += 31)
    ASSERT_EQ((uint32_t)(i * 2654435761ull) ^ 77u, host[i]) << i;
}

TEST_F(VmmMultiGpuTest, ExportedToAChildUsingTheOtherDevice) {
  ExportToChild(device_, other_, 1, granularity_);
}

// The same through cuabi.hpp: owners, typed copies and exceptions.
TEST_F(VmmTest, CxxGrowableBufferAndExportedMemory) {
  const size_t g = device_.vm_granularity().minimum;
  ASSERT_EQ(granularity_, g);
  cuabi::buffer grown = cuabi::buffer::alloc_growable(device_, g, 16 * g);
  EXPECT_EQ(16 * g, grown.reserved_size());
  const uint64_t address = grown.pointer();
  std::vector<uint32_t> part(g / 4);
  for (size_t size = g; size < 16 * g; size *= 2) {
    grown.grow(2 * size);
    EXPECT_EQ(2 * size, grown.size());
    EXPECT_EQ(address, grown.pointer());
    for (size_t i = 0; i < part.size(); ++i) part[i] = static_cast<uint32_t>(size + i);
    grown.upload(part, size);  // the new half's first granule
  }
  for (size_t size = g; size < 16 * g; size *= 2) {
    const std::vector<uint32_t> back = grown.download<uint32_t>(g / 4, size);
    for (size_t i = 0; i < back.size(); i += 1021)
      ASSERT_EQ(static_cast<uint32_t>(size + i), back[i]) << size << " " << i;
  }
  try {
    grown.grow(32 * g);
    FAIL() << "grew past its reservation";
  } catch (const cuabi::status_error<CUABI_ERROR_OUT_OF_RANGE>& e) {
    EXPECT_TRUE(Contains(e.message(), "reservation")) << e.message();
  }

  cuabi::physical_memory memory;
  try {
    memory = cuabi::physical_memory::create(device_, 8 * g, CUABI_PHYSICAL_MEMORY_EXPORTABLE);
  } catch (const cuabi::status_error<CUABI_ERROR_NOT_SUPPORTED>& e) {
    GTEST_SKIP() << e.message();
  }
  cuabi::address_range range = cuabi::address_range::reserve(device_, 8 * g);
  range.map(0, memory);
  try {
    memory.free();
    FAIL() << "freed mapped memory";
  } catch (const cuabi::status_error<CUABI_ERROR_INVALID_ARGUMENT>& e) {
    EXPECT_TRUE(Contains(e.message(), "still mapped")) << e.message();
  }
  cuabi::buffer view = cuabi::buffer::from_range(range, device_, 0, 8 * g);
  view.upload(std::vector<uint32_t>(2 * g, 5));
  int fd = -1;
  try {
    fd = memory.export_fd();
  } catch (const cuabi::status_error<CUABI_ERROR_NOT_SUPPORTED>& e) {
    GTEST_SKIP() << e.message();
  }
  EXPECT_EQ(0, RunChildWithFd(fd, 8 * g, 5, 9, 0));
  close(fd);
  const std::vector<uint32_t> back = view.download<uint32_t>(2 * g);
  for (size_t i = 0; i < back.size(); ++i) ASSERT_EQ(9u, back[i]) << "the child's write at " << i;
}

}  // namespace
}  // namespace cuabi_test
