// The compile cache's own layer (capi/core/cache.hpp), without a GPU: entries
// truncated at every length, every bit flipped, bodies with a valid checksum
// but malformed fields, damaged and foreign files, several processes writing
// and reading one key at once (with a corrupter among them), folders that are
// missing, read-only, full, owned by someone else or writable by others, and
// CUABI_CACHE=0. A bad entry must never be served, and a cache that cannot be
// written must never fail anything.
#include "cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sha256.hpp"
#include "support.h"

namespace hardening {
namespace {

using cuabi::CacheEntry;
using cuabi::CacheKey;

CacheKey Key(const std::string& seed) { return cuabi::sha256(seed.data(), seed.size()); }

CacheEntry Entry(size_t image_bytes, uint32_t seed, uint32_t output = 0, int lowered = 2) {
  CacheEntry e;
  e.output = output;
  std::mt19937 rng(seed);
  e.image.resize(image_bytes);
  for (char& c : e.image) c = static_cast<char>(rng());
  for (int i = 0; i < lowered; ++i)
    e.lowered["store<T" + std::to_string(i) + ">"] = "_Z5storeIT" + std::to_string(i) + "_EvPS_";
  return e;
}

bool Same(const CacheEntry& a, const CacheEntry& b) {
  return a.output == b.output && a.image == b.image && a.lowered == b.lowered;
}

std::string ReadFile(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

bool WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) { return remove(path); }

// Counters in memory shared with forked children: a start line that every
// process waits at, and the number of writers that have finished.
struct Shared {
  std::atomic<int> started{0};
  std::atomic<int> writers_done{0};
};
class SharedCounters {
 public:
  SharedCounters() {
    void* p =
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shared_ = p == MAP_FAILED ? nullptr : new (p) Shared();
  }
  ~SharedCounters() {
    if (shared_) munmap(shared_, sizeof(Shared));
  }
  bool ok() const { return shared_ != nullptr; }
  void StartTogether(int total) {
    shared_->started.fetch_add(1);
    while (shared_->started.load() < total) sched_yield();
  }
  void WriterDone() { shared_->writers_done.fetch_add(1); }
  bool WritersDone(int writers) const { return shared_->writers_done.load() >= writers; }

 private:
  Shared* shared_ = nullptr;
};

// A private temporary folder, and the cache's environment saved and restored.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* var : {"CUABI_CACHE", "CUABI_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
      const char* v = std::getenv(var);
      saved_.push_back({var, v ? std::optional<std::string>(v) : std::nullopt});
    }
    unsetenv("CUABI_CACHE");
    char tmpl[] = "/tmp/cuabi-cache-test-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    root_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& m : mounts_) umount2(m.c_str(), MNT_DETACH);
    for (auto& [var, value] : saved_) {
      if (value)
        setenv(var.c_str(), value->c_str(), 1);
      else
        unsetenv(var.c_str());
    }
    if (!root_.empty()) {
      chmod(root_.c_str(), 0700);
      nftw(root_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
    }
  }
  std::string Sub(const std::string& name) {
    const std::string p = root_ + "/" + name;
    mkdir(p.c_str(), 0700);
    return p;
  }
  // Mounts a tmpfs of `size` on `dir`; "" or why it cannot.
  std::string MountTmpfs(const std::string& dir, const char* options) {
    if (mount("tmpfs", dir.c_str(), "tmpfs", 0, options) != 0)
      return std::string("mount -t tmpfs is not permitted here: ") + std::strerror(errno);
    mounts_.push_back(dir);
    return "";
  }

  std::string root_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
  std::vector<std::string> mounts_;
};

// ---------------------------------------------------------------------------
// The format
// ---------------------------------------------------------------------------

TEST_F(CacheTest, EncodeDecodeRoundTrips) {
  const CacheKey key = Key("round trip");
  const std::vector<CacheEntry> entries = {Entry(1, 1, 0, 0), Entry(1000, 2, 1, 0),
                                           Entry(100, 3, 0, 50), Entry(1 << 20, 4, 0, 2)};
  for (const CacheEntry& e : entries) {
    const std::string bytes = cuabi::cache_encode(key, e);
    std::optional<CacheEntry> back = cuabi::cache_decode(bytes, key);
    ASSERT_TRUE(back.has_value()) << e.image.size() << "-byte image";
    EXPECT_TRUE(Same(e, *back));
    EXPECT_FALSE(cuabi::cache_decode(bytes, Key("another key")).has_value())
        << "an entry for another key was accepted";
  }
}

TEST_F(CacheTest, EveryTruncationIsRejected) {
  const CacheKey key = Key("truncation");
  const std::string bytes = cuabi::cache_encode(key, Entry(200, 5));
  size_t accepted = 0;
  for (size_t len = 0; len < bytes.size(); ++len)
    if (cuabi::cache_decode(bytes.substr(0, len), key)) ++accepted;
  EXPECT_EQ(0u, accepted) << "of " << bytes.size() << " truncations";
  for (size_t extra : {1, 2, 31, 32, 33, 4096})
    EXPECT_FALSE(cuabi::cache_decode(bytes + std::string(extra, '\0'), key))
        << extra << " bytes appended";
  std::printf("truncations rejected: %zu of %zu\n", bytes.size() - accepted, bytes.size());
}

TEST_F(CacheTest, EveryBitFlipIsRejected) {
  const CacheKey key = Key("bit flips");
  const std::string bytes = cuabi::cache_encode(key, Entry(96, 6));
  size_t accepted = 0, flips = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string m = bytes;
      m[i] = static_cast<char>(m[i] ^ (1 << bit));
      ++flips;
      if (cuabi::cache_decode(m, key)) ++accepted;
    }
  EXPECT_EQ(0u, accepted) << "of " << flips << " single-bit flips";
  std::printf("single-bit flips rejected: %zu of %zu\n", flips - accepted, flips);
}

// Bodies whose checksum is right but whose fields are not: the parser, not
// the checksum, must refuse them.
TEST_F(CacheTest, MalformedBodiesWithAValidChecksumAreRejected) {
  const CacheKey key = Key("malformed");
  auto u32 = [](uint32_t v) {
    std::string s;
    for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
  };
  auto u64 = [](uint64_t v) {
    std::string s;
    for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
  };
  auto seal = [&](const std::string& fields) {
    std::string body = std::string("CUABICA1", 8);
    body.append(reinterpret_cast<const char*>(key.data()), key.size());
    body += fields;
    auto d = cuabi::sha256(body.data(), body.size());
    return body + std::string(reinterpret_cast<const char*>(d.data()), d.size());
  };
  // The well-formed body these variations start from decodes.
  ASSERT_TRUE(cuabi::cache_decode(seal(u32(0) + u32(0) + u64(3) + "abc"), key));
  struct Bad {
    const char* what;
    std::string fields;
  };
  const std::vector<Bad> bad = {
      {"output 2", u32(2) + u32(0) + u64(3) + "abc"},
      {"output 0xFFFFFFFF", u32(0xFFFFFFFF) + u32(0) + u64(3) + "abc"},
      {"an empty image", u32(0) + u32(0) + u64(0)},
      {"image size past the end", u32(0) + u32(0) + u64(4) + "abc"},
      {"image size short of the end", u32(0) + u32(0) + u64(2) + "abc"},
      {"image size 2^64-1", u32(0) + u32(0) + u64(~0ull) + "abc"},
      {"lowered count with no names", u32(0) + u32(1) + u64(3) + "abc"},
      {"lowered count 2^32-1", u32(0) + u32(0xFFFFFFFF) + u64(3) + "abc"},
      {"a name length past the end", u32(0) + u32(1) + u32(0xFFFFFFF0) + "x"},
      {"a name with no lowered name", u32(0) + u32(1) + u32(1) + "x" + u64(3) + "abc"},
      {"nothing after the key", ""},
      {"a missing image size", u32(0) + u32(0)},
  };
  for (const Bad& b : bad)
    EXPECT_FALSE(cuabi::cache_decode(seal(b.fields), key)) << b.what << " was accepted";
  std::string wrong_magic = seal(u32(0) + u32(0) + u64(3) + "abc");
  wrong_magic[7] = '2';
  auto d = cuabi::sha256(wrong_magic.data(), wrong_magic.size() - 32);
  std::memcpy(&wrong_magic[wrong_magic.size() - 32], d.data(), 32);
  EXPECT_FALSE(cuabi::cache_decode(wrong_magic, key)) << "another format version was accepted";
}

// ---------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------

TEST_F(CacheTest, DamagedAndForeignFilesAreNeverServedAndAreRemoved) {
  const std::string dir = Sub("files");
  const CacheKey key = Key("files");
  const CacheEntry entry = Entry(300, 7);
  const std::string path = cuabi::cache_file(dir, key);
  EXPECT_EQ(dir + "/" + cuabi::hex(key) + ".cubin-cache", path);

  cuabi::cache_store(dir, key, entry);
  const std::string good = ReadFile(path);
  ASSERT_FALSE(good.empty()) << "cache_store wrote nothing";
  std::optional<CacheEntry> loaded = cuabi::cache_load(dir, key);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(Same(entry, *loaded));

  size_t served = 0, left = 0;
  for (size_t len = 0; len < good.size(); ++len) {  // truncated at every length
    ASSERT_TRUE(WriteFile(path, good.substr(0, len)));
    if (cuabi::cache_load(dir, key)) ++served;
    if (Exists(path)) ++left;
  }
  EXPECT_EQ(0u, served) << "truncated files served";
  EXPECT_EQ(0u, left) << "truncated files left in place";

  std::mt19937 rng(8);
  for (int i = 0; i < 50; ++i) {  // garbage, and good files with random damage
    std::string junk = good;
    if (i % 2) {
      for (char& c : junk) c = static_cast<char>(rng());
    } else {
      junk[rng() % junk.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    ASSERT_TRUE(WriteFile(path, junk));
    EXPECT_FALSE(cuabi::cache_load(dir, key)) << "damaged file " << i << " served";
    EXPECT_FALSE(Exists(path)) << "damaged file " << i << " left in place";
  }

  // Another key's intact entry under this key's name.
  const CacheKey other = Key("other");
  ASSERT_TRUE(WriteFile(path, cuabi::cache_encode(other, Entry(300, 9))));
  EXPECT_FALSE(cuabi::cache_load(dir, key)) << "a foreign entry was served";

  // A symlink to a valid entry: not followed.
  const std::string elsewhere = root_ + "/elsewhere.bin";
  ASSERT_TRUE(WriteFile(elsewhere, good));
  ASSERT_EQ(0, symlink(elsewhere.c_str(), path.c_str()));
  EXPECT_FALSE(cuabi::cache_load(dir, key)) << "an entry behind a symlink was served";
  EXPECT_EQ(good, ReadFile(elsewhere)) << "the symlink's target was touched";
  unlink(path.c_str());

  // A folder in the entry's place.
  ASSERT_EQ(0, mkdir(path.c_str(), 0700));
  EXPECT_FALSE(cuabi::cache_load(dir, key));
  rmdir(path.c_str());

  // A valid entry owned by another user.
  if (geteuid() == 0) {
    ASSERT_TRUE(WriteFile(path, good));
    ASSERT_EQ(0, chown(path.c_str(), 12345, 12345));
    EXPECT_FALSE(cuabi::cache_load(dir, key)) << "another user's entry was served";
  }

  // And a good entry is served again after all that.
  unlink(path.c_str());
  cuabi::cache_store(dir, key, entry);
  loaded = cuabi::cache_load(dir, key);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(Same(entry, *loaded));
}

TEST_F(CacheTest, StoresLeaveNoTemporaryFiles) {
  const std::string dir = Sub("tmpfiles");
  for (int i = 0; i < 20; ++i)
    cuabi::cache_store(dir, Key("k" + std::to_string(i % 5)), Entry(1000, i));
  std::vector<std::string> names = Names(dir);
  EXPECT_EQ(5u, names.size());
  for (const std::string& n : names) EXPECT_TRUE(Contains(n, ".cubin-cache")) << n;
}

TEST_F(CacheTest, MissingFolderFailsSilently) {
  const std::string dir = root_ + "/does/not/exist";
  EXPECT_FALSE(cuabi::cache_load(dir, Key("x")));
  cuabi::cache_store(dir, Key("x"), Entry(10, 1));  // no throw, no crash
  EXPECT_FALSE(Exists(root_ + "/does"));
}

// ---------------------------------------------------------------------------
// Several processes at once
// ---------------------------------------------------------------------------

// Writers store entries for one key while readers load it: every load is
// either nothing or exactly one of the entries written, never a mixture.
TEST_F(CacheTest, ConcurrentWritersAndReadersNeverSeeAPartialEntry) {
  const std::string dir = Sub("concurrent");
  const CacheKey key = Key("shared kernel");
  const CacheEntry a = Entry(256 * 1024, 10);
  const CacheEntry b = Entry(192 * 1024, 11, 1, 3);  // what another writer would produce
  constexpr int kWriters = 4, kReaders = 4;
  constexpr int kWrites = 60, kReads = 150;
  SharedCounters counters;
  ASSERT_TRUE(counters.ok());
  std::vector<ChildResult> results = RunInChildren(
      kWriters + kReaders,
      [&](int i) {
        counters.StartTogether(kWriters + kReaders);
        if (i < kWriters) {
          for (int k = 0; k < kWrites; ++k) cuabi::cache_store(dir, key, (i % 2) ? b : a);
          counters.WriterDone();
          return 0;
        }
        // Read while the writers write, and a few times after they are done.
        int hits = 0, wrong = 0, after = 0;
        for (int k = 0; k < kReads || after < 5; ++k) {
          if (counters.WritersDone(kWriters)) ++after;
          std::optional<CacheEntry> e = cuabi::cache_load(dir, key);
          if (!e) continue;
          if (Same(*e, a) || Same(*e, b))
            ++hits;
          else
            ++wrong;
        }
        ChildSay("hits=" + std::to_string(hits) + " wrong=" + std::to_string(wrong));
        return wrong ? 1 : 0;
      },
      120);
  int hits = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i].exited && results[i].code == 0)
        << "process " << i << ": " << results[i].Describe();
    const size_t at = results[i].output.find("hits=");
    if (at != std::string::npos) hits += std::atoi(results[i].output.c_str() + at + 5);
  }
  std::printf(
      "concurrent cache: %d writers x %d stores, %d readers x >= %d loads, %d hits, "
      "0 partial entries allowed\n",
      kWriters, kWrites, kReaders, kReads, hits);
  EXPECT_GT(hits, 0) << "no reader ever saw an entry: the test checked nothing";
  std::optional<CacheEntry> last = cuabi::cache_load(dir, key);
  ASSERT_TRUE(last.has_value());
  EXPECT_TRUE(Same(*last, a) || Same(*last, b));
  for (const std::string& n : Names(dir)) EXPECT_TRUE(Contains(n, ".cubin-cache")) << n;
}

// As above, with a process that keeps writing damaged bytes straight into
// the entry's file (as a crashed or hostile writer would): still nothing but
// whole, right entries is ever served.
TEST_F(CacheTest, ACorrupterAmongWritersIsNeverServed) {
  const std::string dir = Sub("corrupter");
  const CacheKey key = Key("contested");
  const CacheEntry good = Entry(64 * 1024, 12);
  const std::string encoded = cuabi::cache_encode(key, good);
  const std::string path = cuabi::cache_file(dir, key);
  SharedCounters counters;
  ASSERT_TRUE(counters.ok());
  std::vector<ChildResult> results = RunInChildren(
      6,
      [&](int i) {
        std::mt19937 rng(100 + i);
        counters.StartTogether(6);
        if (i == 0) {  // the corrupter: truncations, flips, garbage, in place
          for (int k = 0; k < 300; ++k) {
            std::string bad = encoded;
            switch (k % 3) {
              case 0:
                bad.resize(rng() % bad.size());
                break;
              case 1:
                bad[rng() % bad.size()] ^= 0x40;
                break;
              case 2:
                for (size_t j = 0; j < bad.size(); j += 97) bad[j] = static_cast<char>(rng());
                break;
            }
            int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0) continue;
            size_t half = bad.size() / 2;  // two writes: readers may see the middle
            if (write(fd, bad.data(), half) < 0 ||
                write(fd, bad.data() + half, bad.size() - half) < 0) {
            }
            close(fd);
          }
          counters.WriterDone();
          return 0;
        }
        if (i < 3) {  // honest writers
          for (int k = 0; k < 100; ++k) cuabi::cache_store(dir, key, good);
          counters.WriterDone();
          return 0;
        }
        int hits = 0, wrong = 0;
        for (int k = 0; k < 300 || !counters.WritersDone(3); ++k) {
          std::optional<CacheEntry> e = cuabi::cache_load(dir, key);
          if (!e) continue;
          if (Same(*e, good))
            ++hits;
          else
            ++wrong;
        }
        ChildSay("hits=" + std::to_string(hits) + " wrong=" + std::to_string(wrong));
        return wrong ? 1 : 0;
      },
      120);
  int hits = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i].exited && results[i].code == 0)
        << "process " << i << ": " << results[i].Describe();
    const size_t at = results[i].output.find("hits=");
    if (at != std::string::npos) hits += std::atoi(results[i].output.c_str() + at + 5);
  }
  std::printf(
      "cache with a corrupter: 1 corrupter x 300 damaged writes, 2 writers x 100 stores, "
      "3 readers, %d whole entries served, 0 damaged ones allowed\n",
      hits);
}

// ---------------------------------------------------------------------------
// The cache folder
// ---------------------------------------------------------------------------

TEST_F(CacheTest, CacheCanBeTurnedOff) {
  const std::string dir = Sub("off");
  setenv("CUABI_CACHE_DIR", dir.c_str(), 1);
  EXPECT_EQ(dir, cuabi::cache_dir_in_use());
  for (const char* off : {"0", "off", "false"}) {
    setenv("CUABI_CACHE", off, 1);
    EXPECT_EQ("", cuabi::cache_dir_in_use()) << "CUABI_CACHE=" << off;
  }
  setenv("CUABI_CACHE", "1", 1);
  EXPECT_EQ(dir, cuabi::cache_dir_in_use());
}

TEST_F(CacheTest, MissingFolderIsCreatedPrivate) {
  const std::string dir = root_ + "/new/nested/cache";
  setenv("CUABI_CACHE_DIR", dir.c_str(), 1);
  EXPECT_EQ(dir, cuabi::cache_dir_in_use());
  struct stat st;
  ASSERT_EQ(0, stat(dir.c_str(), &st));
  EXPECT_EQ(0700u, st.st_mode & 0777u);
  EXPECT_EQ(geteuid(), st.st_uid);
}

TEST_F(CacheTest, FoldersOthersMayWriteAreRefused) {
  const std::string dir = Sub("perm");
  setenv("CUABI_CACHE_DIR", dir.c_str(), 1);
  struct ModeCase {
    mode_t mode;
    bool usable;
  };
  for (const ModeCase& m :
       {ModeCase{0700, true}, ModeCase{0755, true}, ModeCase{0770, false}, ModeCase{0720, false},
        ModeCase{0702, false}, ModeCase{0777, false}, ModeCase{01777, false}}) {
    ASSERT_EQ(0, chmod(dir.c_str(), m.mode));
    EXPECT_EQ(m.usable ? dir : std::string(), cuabi::cache_dir_in_use())
        << std::oct << "mode " << m.mode;
  }
  ASSERT_EQ(0, chmod(dir.c_str(), 0700));
}

TEST_F(CacheTest, FolderOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const std::string dir = Sub("theirs");
  setenv("CUABI_CACHE_DIR", dir.c_str(), 1);
  ASSERT_EQ(0, chown(dir.c_str(), 12345, 12345));
  EXPECT_EQ("", cuabi::cache_dir_in_use());
  ASSERT_EQ(0, chown(dir.c_str(), 0, 12345));  // ours, another group, not group-writable
  EXPECT_EQ(dir, cuabi::cache_dir_in_use());
}

TEST_F(CacheTest, FilesWhereFoldersShouldBeAreRefused) {
  const std::string file = root_ + "/a-file";
  ASSERT_TRUE(WriteFile(file, "x"));
  setenv("CUABI_CACHE_DIR", file.c_str(), 1);
  EXPECT_EQ("", cuabi::cache_dir_in_use());
  const std::string below = file + "/cache";
  setenv("CUABI_CACHE_DIR", below.c_str(), 1);
  EXPECT_EQ("", cuabi::cache_dir_in_use());
}

TEST_F(CacheTest, FolderFromXdgOrHome) {
  unsetenv("CUABI_CACHE_DIR");
  const std::string xdg = Sub("xdg");
  setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  EXPECT_EQ(xdg + "/cuabi", cuabi::cache_dir_in_use());
  const std::string home = Sub("home");
  setenv("HOME", home.c_str(), 1);
  setenv("XDG_CACHE_HOME", "relative/path", 1);  // not absolute: ignored
  EXPECT_EQ(home + "/.cache/cuabi", cuabi::cache_dir_in_use());
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(home + "/.cache/cuabi", cuabi::cache_dir_in_use());
}

// Read-only: stores fail silently, loads work. Root ignores permission bits,
// so as root this runs in a child that gives up root (and, where mounting is
// allowed, also on a read-only tmpfs).
TEST_F(CacheTest, ReadOnlyFolderStoresNothingAndStillServes) {
  const CacheKey have = Key("stored before"), want = Key("stored after");
  const CacheEntry entry = Entry(500, 13);
  auto scenario = [&](const std::string& dir, const std::function<bool()>& make_read_only) {
    cuabi::cache_store(dir, have, entry);
    if (!cuabi::cache_load(dir, have)) return std::string("the first store did not work");
    if (!make_read_only()) return std::string("could not make the folder read-only");
    cuabi::cache_store(dir, want, entry);  // must not throw or crash
    if (Exists(cuabi::cache_file(dir, want)))
      return std::string("a store wrote a read-only folder");
    if (Names(dir).size() != 1) return std::string("a store left something in a read-only folder");
    std::optional<CacheEntry> e = cuabi::cache_load(dir, have);
    if (!e || !Same(*e, entry)) return std::string("a read-only folder no longer serves");
    if (cuabi::cache_load(dir, want)) return std::string("an entry never stored was served");
    return std::string();
  };

  const std::string dir = Sub("ro");
  if (geteuid() != 0) {
    EXPECT_EQ("", scenario(dir, [&] { return chmod(dir.c_str(), 0500) == 0; }));
    chmod(dir.c_str(), 0700);
    return;
  }
  // As root: a child that becomes nobody, in a folder nobody owns.
  ASSERT_EQ(0, chmod(root_.c_str(), 0711));
  ASSERT_EQ(0, chown(dir.c_str(), 65534, 65534));
  ChildResult r = RunInChild([&] {
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      ChildSay("could not become nobody");
      return 2;
    }
    setenv("CUABI_CACHE_DIR", dir.c_str(), 1);
    if (cuabi::cache_dir_in_use() != dir) {
      ChildSay("cache_dir refused nobody's own folder");
      return 3;
    }
    std::string why = scenario(dir, [&] { return chmod(dir.c_str(), 0500) == 0; });
    if (!why.empty()) ChildSay(why);
    return why.empty() ? 0 : 1;
  });
  EXPECT_TRUE(r.exited && r.code == 0) << r.Describe();

  // And a read-only file system, where it can be mounted.
  const std::string mnt = Sub("ro-mount");
  const std::string why = MountTmpfs(mnt, "size=1m,mode=0700");
  if (!why.empty()) {
    std::printf("read-only tmpfs case skipped: %s\n", why.c_str());
    return;
  }
  EXPECT_EQ("", scenario(mnt, [&] {
              return mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
            }));
}

// A full disk: a tiny tmpfs, where mounting is allowed. Stores fail silently
// and leave nothing behind; loads never serve a partial entry.
TEST_F(CacheTest, FullDiskStoresNothingAndLeavesNothing) {
  const std::string dir = Sub("full");
  const std::string why = MountTmpfs(dir, "size=64k,mode=0700");
  if (!why.empty()) GTEST_SKIP() << "simulating a full disk needs a tiny tmpfs; " << why;
  const CacheKey big = Key("too big"), small = Key("small");
  cuabi::cache_store(dir, big, Entry(1 << 20, 14));
  EXPECT_FALSE(Exists(cuabi::cache_file(dir, big)));
  EXPECT_TRUE(Names(dir).empty()) << "a failed store left a file";
  EXPECT_FALSE(cuabi::cache_load(dir, big));
  const CacheEntry s = Entry(1000, 15);
  cuabi::cache_store(dir, small, s);
  std::optional<CacheEntry> e = cuabi::cache_load(dir, small);
  ASSERT_TRUE(e.has_value()) << "a small store after a failed one did not work";
  EXPECT_TRUE(Same(*e, s));
  // Fill what is left, then store again.
  {
    std::string filler(4096, 'f');
    FILE* f = std::fopen((dir + "/filler").c_str(), "wb");
    ASSERT_NE(nullptr, f);
    while (std::fwrite(filler.data(), 1, filler.size(), f) == filler.size()) {
    }
    std::fclose(f);
  }
  const CacheKey late = Key("late");
  cuabi::cache_store(dir, late, Entry(8000, 16));
  EXPECT_FALSE(Exists(cuabi::cache_file(dir, late)));
  EXPECT_EQ(2u, Names(dir).size()) << "a failed store left a temporary file";
  e = cuabi::cache_load(dir, small);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(Same(*e, s));
}

// The same through a file size limit (EFBIG instead of ENOSPC), which needs
// no mount: it always runs.
TEST_F(CacheTest, FileSizeLimitStoresNothingAndLeavesNothing) {
  const std::string dir = Sub("fsize");
  const CacheKey key = Key("limited");
  ChildResult r = RunInChild([&] {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {8192, 8192};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) return 2;
    cuabi::cache_store(dir, key, Entry(100000, 17));
    if (!Names(dir).empty()) {
      ChildSay("a store cut short by the size limit left a file");
      return 1;
    }
    if (cuabi::cache_load(dir, key)) return 3;
    cuabi::cache_store(dir, key, Entry(1000, 18));
    return cuabi::cache_load(dir, key) ? 0 : 4;
  });
  EXPECT_TRUE(r.exited && r.code == 0) << r.Describe();
}

}  // namespace
}  // namespace hardening
