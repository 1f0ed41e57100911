// Threads: many threads creating, using and releasing shared handles, with
// releases racing uses and coming from threads other than the creators.
// Every call must answer SUCCESS or INVALID_HANDLE (as the race allows) and
// give exactly the right data when it succeeds; nothing may crash. The CPU
// part uses program handles; the GPU part launches, copies, creates and
// releases and checks every result.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support.h"

namespace hardening {
namespace {

constexpr int kThreads = 8;

// Counts contract violations and keeps the first few descriptions.
class Violations {
 public:
  void Add(const std::string& what) {
    count_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.size() < 10) first_.push_back(what);
  }
  size_t count() const { return count_.load(); }
  std::string Describe() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    for (const std::string& s : first_) out += "\n  " + s;
    return out;
  }

 private:
  std::atomic<size_t> count_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> first_;
};

std::string KernelSource(int i) {
  return "extern \"C\" __global__ void kernel_" + std::to_string(i) +
         "(int* x) { *x = " + std::to_string(1000 + i) + "; }\n";
}

// Compiles source for sm_90 and returns its PTX; "" on failure.
std::string CompiledPtx(cuabi_program p) {
  size_t n = 0;
  if (cuabi_program_get_ptx(p, nullptr, &n) != CUABI_SUCCESS) return "";
  std::string out(n, '\0');
  if (cuabi_program_get_ptx(p, &out[0], &n) != CUABI_SUCCESS) return "";
  return out;
}

cuabi_status MakeCompiled(const std::string& src, cuabi_program* out) {
  cuabi_status st = cuabi_program_create(src.c_str(), "stress.cu", 0, nullptr, nullptr, out);
  if (st) return st;
  const char* opts[] = {"--gpu-architecture=sm_90"};
  return cuabi_program_compile(*out, 1, opts);
}

// Pool entries keep a program handle with its kind bits replaced by the
// creating thread's number + 1 (every entry is a program, kind 2).
constexpr uint64_t kKindMask = 0xFFull << 24;
uint64_t Pack(cuabi_program p, int tid) {
  return (HandleValue(p) & ~kKindMask) | (static_cast<uint64_t>(tid + 1) << 24);
}
cuabi_program Unpack(uint64_t v) {
  return AsHandle<cuabi_program>((v & ~kKindMask) | (2ull << 24));
}
int CreatorOf(uint64_t v) { return static_cast<int>((v >> 24) & 0xFF) - 1; }

TEST(ThreadStress, ProgramHandlesUnderChurn) {
  constexpr int kPrecious = 4;
  constexpr int kIterations = 2500;
  constexpr size_t kPool = 64;

  // Programs every thread reads and nobody releases, with known PTX.
  std::vector<Program> precious(kPrecious);
  std::vector<std::string> precious_ptx(kPrecious);
  for (int i = 0; i < kPrecious; ++i) {
    ASSERT_EQ(CUABI_SUCCESS, MakeCompiled(KernelSource(i), precious[i].out())) << LastError();
    precious_ptx[i] = CompiledPtx(precious[i]);
    ASSERT_NE("", precious_ptx[i]);
  }
  // A compiled program one thread releases half-way while the others read it.
  cuabi_program victim = nullptr;
  ASSERT_EQ(CUABI_SUCCESS, MakeCompiled(KernelSource(99), &victim)) << LastError();
  const std::string victim_ptx = CompiledPtx(victim);
  std::atomic<bool> victim_released{false};

  std::array<std::atomic<uint64_t>, kPool> pool;
  for (auto& slot : pool) slot.store(0);

  std::atomic<uint64_t> creates{0}, releases{0}, foreign_releases{0}, lookups{0}, raced{0};
  Violations violations;

  std::atomic<int> ready{0};
  auto worker = [&](int tid) {
    std::mt19937_64 rng(0x5eed + tid);
    std::vector<cuabi_program> dead;  // values this thread saw released
    ready.fetch_add(1);
    while (ready.load() < kThreads) std::this_thread::yield();  // start together
    auto note_dead = [&](cuabi_program p) {
      if (dead.size() < 256)
        dead.push_back(p);
      else
        dead[rng() % dead.size()] = p;
    };
    auto allowed = [&](cuabi_status st, cuabi_status also, const char* what) {
      if (st == CUABI_SUCCESS || st == also) return;
      violations.Add(std::string(what) + " answered " + cuabi_status_get_name(st));
    };
    for (int it = 0; it < kIterations; ++it) {
      if (it % 32 == 0) std::this_thread::yield();  // interleave threads on few cores
      if (tid == 0 && it == kIterations / 2) {
        cuabi_program_release(victim);
        victim_released.store(true);
      }
      const size_t slot = rng() % kPool;
      switch (rng() % 8) {
        case 0: {  // create and publish
          cuabi_program p = nullptr;
          if (cuabi_program_create("__device__ int churn;", nullptr, 0, nullptr, nullptr, &p)) {
            violations.Add("create: " + LastError());
            break;
          }
          creates.fetch_add(1);
          uint64_t expected = 0;
          if (!pool[slot].compare_exchange_strong(expected, Pack(p, tid))) {
            cuabi_program_release(p);
            releases.fetch_add(1);
          }
          break;
        }
        case 1: {  // take and release, usually another thread's
          const uint64_t v = pool[slot].exchange(0);
          if (!v) break;
          cuabi_program_release(Unpack(v));
          releases.fetch_add(1);
          if (CreatorOf(v) != tid) foreign_releases.fetch_add(1);
          note_dead(Unpack(v));
          break;
        }
        case 2: {  // use a handle another thread may release meanwhile
          const uint64_t v = pool[slot].load();
          if (!v) break;
          cuabi_program p = Unpack(v);
          size_t n = 0;
          lookups.fetch_add(3);
          cuabi_status st = cuabi_program_get_log(p, nullptr, &n);
          allowed(st, CUABI_ERROR_INVALID_HANDLE, "get_log on a shared program");
          if (st == CUABI_SUCCESS && n != 1)
            violations.Add("an uncompiled program's log is not empty");
          st = cuabi_program_get_ptx(p, nullptr, &n);
          if (st != CUABI_ERROR_NOT_FOUND && st != CUABI_ERROR_INVALID_HANDLE)
            violations.Add(std::string("get_ptx on an uncompiled program answered ") +
                           cuabi_status_get_name(st));
          st = cuabi_program_add_name_expression(p, "churn");
          allowed(st, CUABI_ERROR_INVALID_HANDLE, "add_name_expression on a shared program");
          if (st != CUABI_SUCCESS &&
              (cuabi_last_error_status() != st || !Contains(cuabi_last_error_message(), "program")))
            violations.Add("the last error does not describe this thread's failure: " +
                           LastError());
          break;
        }
        case 3: {  // release a value still in the pool: races other releases and uses
          const uint64_t v = pool[slot].load();
          if (!v) break;
          cuabi_program_release(Unpack(v));
          raced.fetch_add(1);
          uint64_t expected = v;
          pool[slot].compare_exchange_strong(expected, 0);
          note_dead(Unpack(v));
          break;
        }
        case 4: {  // a released value must stay dead, even after its slot is reused
          if (dead.empty()) break;
          cuabi_program p = dead[rng() % dead.size()];
          size_t n = 0;
          lookups.fetch_add(1);
          cuabi_status st = cuabi_program_get_log(p, nullptr, &n);
          if (st != CUABI_ERROR_INVALID_HANDLE)
            violations.Add(std::string("a released handle answered ") + cuabi_status_get_name(st));
          cuabi_program_release(p);  // released again: ignored
          break;
        }
        case 5: {  // shared programs nobody releases give exactly their data
          const int i = static_cast<int>(rng() % kPrecious);
          lookups.fetch_add(1);
          const std::string ptx = CompiledPtx(precious[i]);
          if (ptx != precious_ptx[i])
            violations.Add("program " + std::to_string(i) + " answered other PTX: " + LastError());
          break;
        }
        case 6: {  // the victim: exact data, or INVALID_HANDLE once released
          const bool was_released = victim_released.load();
          size_t n = 0;
          lookups.fetch_add(1);
          cuabi_status st = cuabi_program_get_ptx(victim, nullptr, &n);
          if (was_released && st != CUABI_ERROR_INVALID_HANDLE)
            violations.Add(std::string("the released victim answered ") + cuabi_status_get_name(st));
          else if (st == CUABI_SUCCESS && n != victim_ptx.size())
            violations.Add("the victim answered a wrong PTX size");
          else if (st != CUABI_SUCCESS && st != CUABI_ERROR_INVALID_HANDLE)
            violations.Add(std::string("the victim answered ") + cuabi_status_get_name(st));
          break;
        }
        case 7: {  // this thread's last error is its own
          const std::string expr = "missing_" + std::to_string(tid) + "_" + std::to_string(it);
          size_t n = 0;
          cuabi_status st = cuabi_program_get_lowered_name(precious[0], expr.c_str(), nullptr, &n);
          if (st != CUABI_ERROR_NOT_FOUND || !Contains(cuabi_last_error_message(), expr))
            violations.Add("the last error is not this thread's: " + LastError());
          break;
        }
      }
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  for (auto& slot : pool)
    if (uint64_t v = slot.exchange(0)) cuabi_program_release(Unpack(v));

  for (int i = 0; i < kPrecious; ++i) EXPECT_EQ(precious_ptx[i], CompiledPtx(precious[i]));
  size_t n = 0;
  EXPECT_EQ(StatusName(CUABI_ERROR_INVALID_HANDLE),
            StatusName(cuabi_program_get_ptx(victim, nullptr, &n)));

  std::printf(
      "thread stress (CPU): %d threads, %llu creates, %llu releases (%llu by another "
      "thread, %llu racing), %llu lookups, %zu violations\n",
      kThreads, static_cast<unsigned long long>(creates.load()),
      static_cast<unsigned long long>(releases.load()),
      static_cast<unsigned long long>(foreign_releases.load()),
      static_cast<unsigned long long>(raced.load()),
      static_cast<unsigned long long>(lookups.load()), violations.count());
  EXPECT_GT(creates.load(), 1000u);
  EXPECT_GT(foreign_releases.load(), 0u) << "no release came from another thread than the creator";
  EXPECT_EQ(0u, violations.count()) << violations.Describe();
}

// A handle value forged from a live program's (its kind bits changed) given
// to another kind's release must change nothing, even while other threads use
// the program or release it for real.
TEST(ThreadStress, ForgedKindReleaseDoesNotDisturbALiveHandle) {
  constexpr int kRounds = 200;
  Violations violations;
  size_t uses = 0, lost = 0;
  for (int round = 0; round < kRounds; ++round) {
    cuabi_program p = nullptr;
    ASSERT_EQ(CUABI_SUCCESS,
              cuabi_program_create("__device__ int f;", nullptr, 0, nullptr, nullptr, &p));
    const uint64_t forged = (HandleValue(p) & ~kKindMask) | (3ull << 24);  // a module
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> forged_releases{0};
    std::thread forger([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        cuabi_module_release(AsHandle<cuabi_module>(forged));
        forged_releases.fetch_add(1, std::memory_order_relaxed);
      }
    });
    while (forged_releases.load() < 100) std::this_thread::yield();  // the forger is running
    // Uses of the live program while the forged releases run.
    for (int i = 0; i < 2000; ++i) {
      size_t n = 0;
      cuabi_status st = cuabi_program_get_log(p, nullptr, &n);
      ++uses;
      if (st != CUABI_SUCCESS)
        violations.Add(std::string("a live program answered ") + cuabi_status_get_name(st) +
                       " while a forged handle was released: " + LastError());
    }
    // The real release, racing the forged ones, must take effect.
    cuabi_program_release(p);
    stop.store(true);
    forger.join();
    size_t n = 0;
    if (cuabi_program_get_log(p, nullptr, &n) != CUABI_ERROR_INVALID_HANDLE) {
      ++lost;
      violations.Add("the program's real release was lost (it is still live)");
      cuabi_program_release(p);
    }
  }
  std::printf(
      "forged-kind release race: %d rounds, %zu uses, %zu violations (%zu real releases "
      "lost)\n",
      kRounds, uses, violations.count(), lost);
  EXPECT_EQ(0u, violations.count()) << violations.Describe();
}

TEST(ThreadStress, ConcurrentCompilesGiveTheirOwnResults) {
  constexpr int kPerThread = 3;
  Violations violations;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const int id = t * 100 + k;
        Program p;
        if (MakeCompiled(KernelSource(id), p.out()) != CUABI_SUCCESS) {
          violations.Add("compile " + std::to_string(id) + ": " + LastError());
          continue;
        }
        const std::string ptx = CompiledPtx(p);
        if (!Contains(ptx, "kernel_" + std::to_string(id)) ||
            !Contains(ptx, std::to_string(1000 + id)))
          violations.Add("program " + std::to_string(id) + " has PTX of another program");
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(0u, violations.count()) << violations.Describe();
}

// ---------------------------------------------------------------------------
// GPU
// ---------------------------------------------------------------------------

TEST(GpuThreadStress, LaunchesCopiesCreatesAndReleases) {
  HARDENING_REQUIRE_GPU();
  constexpr int kIterations = 150;
  constexpr size_t kPool = 32;
  Device dev;
  HARDENING_ASSERT_OK(cuabi_device_get(0, dev.out()));
  Module mod;
  Function saxpy;
  HARDENING_ASSERT_OK(CompileModule(dev, kSaxpySource, mod.out()));
  HARDENING_ASSERT_OK(cuabi_module_get_function(mod, "saxpy", saxpy.out()));
  // The image each thread loads modules from.
  int32_t major = 0, minor = 0;
  HARDENING_ASSERT_OK(cuabi_device_get_compute_capability(dev, &major, &minor));
  Program prog;
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
  const char* opts[] = {arch.c_str()};
  HARDENING_ASSERT_OK(cuabi_program_create(kSaxpySource, nullptr, 0, nullptr, nullptr, prog.out()));
  HARDENING_ASSERT_OK(cuabi_program_compile(prog, 1, opts));
  size_t cubin_size = 0;
  HARDENING_ASSERT_OK(cuabi_program_get_cubin(prog, nullptr, &cubin_size));
  std::vector<char> cubin(cubin_size);
  HARDENING_ASSERT_OK(cuabi_program_get_cubin(prog, cubin.data(), &cubin_size));

  std::array<std::atomic<uint64_t>, kPool> pool;  // buffers of known sizes
  for (auto& s : pool) s.store(0);
  std::atomic<uint64_t> launches{0}, creates{0}, foreign_releases{0};
  Violations violations;
  const cuabi_device d = dev.get();
  const cuabi_function shared_fn = saxpy.get();

  auto worker = [&](int tid) {
    std::mt19937_64 rng(1234 + tid);
    Stream stream;
    for (int it = 0; it < kIterations; ++it) {
      if (it % 10 == 0) {
        if (cuabi_stream_create(d, CUABI_STREAM_NON_BLOCKING, 0, stream.out()))
          violations.Add("stream_create: " + LastError());
        creates.fetch_add(1);
      }
      // SAXPY through the shared function, or through a module of our own
      // released before its function is used.
      cuabi_function fn = shared_fn;
      Function own;
      if (it % 5 == 0) {
        Module m;
        if (cuabi_module_load_data(d, cubin.data(), cubin.size(), m.out()) ||
            cuabi_module_get_function(m, "saxpy", own.out())) {
          violations.Add("module load: " + LastError());
          continue;
        }
        creates.fetch_add(2);
        fn = own.get();
      }
      const size_t n = 1024 + (rng() % 4096);
      std::string r =
          RunSaxpy(d, fn, (it & 1) ? stream.get() : nullptr, n, static_cast<uint32_t>(rng()));
      launches.fetch_add(1);
      creates.fetch_add(3);
      if (!r.empty()) violations.Add("SAXPY in thread " + std::to_string(tid) + ": " + r);

      // Buffers shared through the pool: sized 64 * (slot + 1) bytes.
      const size_t slot = rng() % kPool;
      switch (rng() % 3) {
        case 0: {
          cuabi_buffer b = nullptr;
          if (cuabi_buffer_alloc(d, 64 * (slot + 1), &b)) {
            violations.Add("alloc: " + LastError());
            break;
          }
          creates.fetch_add(1);
          uint64_t expected = 0;
          if (!pool[slot].compare_exchange_strong(expected, HandleValue(b)))
            cuabi_buffer_release(b);
          break;
        }
        case 1: {
          if (uint64_t v = pool[slot].exchange(0)) {
            cuabi_buffer_release(AsHandle<cuabi_buffer>(v));
            foreign_releases.fetch_add(1);
          }
          break;
        }
        case 2: {
          const uint64_t v = pool[slot].load();
          if (!v) break;
          cuabi_buffer b = AsHandle<cuabi_buffer>(v);
          size_t size = 0;
          cuabi_status st = cuabi_buffer_get_size(b, &size);
          if (st == CUABI_SUCCESS && size != 64 * (slot + 1))
            violations.Add("a pooled buffer reports " + std::to_string(size) + " bytes");
          else if (st != CUABI_SUCCESS && st != CUABI_ERROR_INVALID_HANDLE)
            violations.Add(std::string("get_size answered ") + cuabi_status_get_name(st));
          st = cuabi_buffer_memset(b, 0, static_cast<uint8_t>(tid), 64);
          if (st != CUABI_SUCCESS && st != CUABI_ERROR_INVALID_HANDLE)
            violations.Add(std::string("memset answered ") + cuabi_status_get_name(st) + ": " +
                           LastError());
          break;
        }
      }
      if (it % 7 == 0) {
        Event e;
        if (cuabi_event_create(d, 0, e.out()) || cuabi_event_record(e, stream) ||
            cuabi_event_synchronize(e))
          violations.Add("event: " + LastError());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  for (auto& s : pool)
    if (uint64_t v = s.exchange(0)) cuabi_buffer_release(AsHandle<cuabi_buffer>(v));
  HARDENING_EXPECT_OK(cuabi_device_synchronize(dev));
  EXPECT_EQ("", RunSaxpy(dev, saxpy, nullptr, 1 << 20, 77));
  std::printf(
      "thread stress (GPU): %d threads, %llu verified launches, %llu creates, %llu "
      "pooled releases, %zu violations\n",
      kThreads, static_cast<unsigned long long>(launches.load()),
      static_cast<unsigned long long>(creates.load()),
      static_cast<unsigned long long>(foreign_releases.load()), violations.count());
  EXPECT_EQ(0u, violations.count()) << violations.Describe();
}

}  // namespace
}  // namespace hardening
