// The compile cache's folder through the C API (cuabi_cache_get_dir,
// _get_state, _get_usage, cuabi_cache_clear): the folder rules, the states,
// counting and clearing entries, and the refusals. Each test points the
// environment at a folder of its own; no driver, NVRTC or GPU is used.
#include <cuabi/cuabi.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using cuabi_test::CheckTwoCall;
using cuabi_test::Contains;
using cuabi_test::LastError;
using cuabi_test::StatusName;

const char* const kVariables[] = {"CUABI_CACHE", "CUABI_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};

std::string Entry(char c) { return std::string(64, c) + ".cubin-cache"; }

void Write(const fs::path& path, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(nullptr, f) << path;
  std::string data(bytes, 'x');
  std::fwrite(data.data(), 1, data.size(), f);
  std::fclose(f);
}

class CacheApi : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVariables) {
      const char* value = getenv(v);
      saved_[v] = value ? std::optional<std::string>(value) : std::nullopt;
      unsetenv(v);
    }
    char templ[] = "/tmp/cuabi_cache_api_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(templ));
    root_ = templ;
    dir_ = root_ / "cache";
    setenv("CUABI_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

  std::string Dir() {
    size_t size = 0;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_cache_get_dir(nullptr, &size)) << LastError();
    std::vector<char> buf(size);
    EXPECT_EQ(CUABI_SUCCESS, cuabi_cache_get_dir(buf.data(), &size)) << LastError();
    return buf.data();
  }
  cuabi_cache_state State() {
    cuabi_cache_state state = CUABI_CACHE_STATE_FORCE32;
    EXPECT_EQ(CUABI_SUCCESS, cuabi_cache_get_state(&state)) << LastError();
    return state;
  }
  void MakeDir(mode_t mode = 0700) {
    ASSERT_TRUE(fs::create_directory(dir_));
    ASSERT_EQ(0, chmod(dir_.c_str(), mode));
  }

  fs::path root_, dir_;
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(CacheApi, FolderFollowsTheRules) {
  EXPECT_EQ(dir_.string(), Dir());
  CheckTwoCall(
      [](void* buf, size_t* size) { return cuabi_cache_get_dir(static_cast<char*>(buf), size); },
      true);
  unsetenv("CUABI_CACHE_DIR");
  setenv("XDG_CACHE_HOME", (root_ / "xdg").c_str(), 1);
  EXPECT_EQ((root_ / "xdg" / "cuabi").string(), Dir());
  setenv("XDG_CACHE_HOME", "relative/xdg", 1);  // not absolute: ignored
  setenv("HOME", (root_ / "home").c_str(), 1);
  EXPECT_EQ((root_ / "home" / ".cache" / "cuabi").string(), Dir());
  setenv("CUABI_CACHE_DIR", "", 1);  // empty: as if unset
  EXPECT_EQ((root_ / "home" / ".cache" / "cuabi").string(), Dir());
  EXPECT_FALSE(fs::exists(root_ / "home")) << "asking for the folder created it";
}

TEST_F(CacheApi, States) {
  EXPECT_EQ(CUABI_CACHE_STATE_NOT_CREATED, State());
  MakeDir();
  EXPECT_EQ(CUABI_CACHE_STATE_IN_USE, State());
  for (const char* off : {"0", "off", "false"}) {
    setenv("CUABI_CACHE", off, 1);
    EXPECT_EQ(CUABI_CACHE_STATE_OFF, State()) << off;
  }
  setenv("CUABI_CACHE", "1", 1);
  EXPECT_EQ(CUABI_CACHE_STATE_IN_USE, State());
  ASSERT_EQ(0, chmod(dir_.c_str(), 0770));
  EXPECT_EQ(CUABI_CACHE_STATE_WRITABLE_BY_OTHERS, State());
  ASSERT_EQ(0, chmod(dir_.c_str(), 0702));
  EXPECT_EQ(CUABI_CACHE_STATE_WRITABLE_BY_OTHERS, State());
  setenv("CUABI_CACHE_DIR", (root_ / "file").c_str(), 1);
  Write(root_ / "file", 1);
  EXPECT_EQ(CUABI_CACHE_STATE_NOT_A_FOLDER, State());
  setenv("CUABI_CACHE_DIR", "/", 1);
  if (geteuid() != 0) {
    EXPECT_EQ(CUABI_CACHE_STATE_OWNED_BY_OTHERS, State());
  }
}

TEST_F(CacheApi, NoFolderWithoutHome) {
  unsetenv("CUABI_CACHE_DIR");
  setenv("HOME", "", 1);
  // The user database may still give a home folder; only without one is
  // there no folder at all.
  size_t size = 0;
  cuabi_status st = cuabi_cache_get_dir(nullptr, &size);
  if (st == CUABI_SUCCESS) GTEST_SKIP() << "the user database names a home folder";
  EXPECT_EQ(StatusName(CUABI_ERROR_NOT_FOUND), StatusName(st));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "set CUABI_CACHE_DIR")) << LastError();
  EXPECT_EQ(CUABI_CACHE_STATE_NO_FOLDER, State());
  uint64_t entries = 7, bytes = 7;
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, cuabi_cache_get_usage(&entries, &bytes));
  EXPECT_EQ(CUABI_ERROR_NOT_FOUND, cuabi_cache_clear(&entries, &bytes));
  EXPECT_EQ(7u, entries);
  EXPECT_EQ(7u, bytes);
}

TEST_F(CacheApi, UsageCountsEntriesOnly) {
  uint64_t entries = 9, bytes = 9;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_get_usage(&entries, &bytes)) << LastError();
  EXPECT_EQ(0u, entries) << "a folder not created yet is empty";
  EXPECT_EQ(0u, bytes);
  MakeDir();
  Write(dir_ / Entry('a'), 100);
  Write(dir_ / Entry('0'), 28);
  Write(dir_ / ".tmp-0123-abcdef", 1000);                       // a write in progress
  Write(dir_ / (std::string(64, 'A') + ".cubin-cache"), 1000);  // not lower-case hex
  Write(dir_ / (std::string(63, 'a') + ".cubin-cache"), 1000);  // too short
  Write(dir_ / "notes.txt", 1000);
  fs::create_directory(dir_ / Entry('b'));                    // a folder, not an entry
  fs::create_symlink(dir_ / "notes.txt", dir_ / Entry('c'));  // a link, not an entry
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_get_usage(&entries, &bytes)) << LastError();
  EXPECT_EQ(2u, entries);
  EXPECT_EQ(128u, bytes);
  // Counted whatever the state.
  setenv("CUABI_CACHE", "0", 1);
  entries = bytes = 0;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_get_usage(&entries, &bytes)) << LastError();
  EXPECT_EQ(2u, entries);
}

TEST_F(CacheApi, ClearRemovesEntriesAndUnfinishedWrites) {
  uint64_t entries = 9, bytes = 9;
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_clear(&entries, &bytes)) << LastError();
  EXPECT_EQ(0u, entries);
  EXPECT_EQ(0u, bytes);
  EXPECT_FALSE(fs::exists(dir_)) << "clearing created the folder";
  MakeDir();
  Write(dir_ / Entry('a'), 100);
  Write(dir_ / Entry('f'), 50);
  Write(dir_ / ".tmp-0123-abcdef", 1000);
  Write(dir_ / "notes.txt", 10);
  setenv("CUABI_CACHE", "off", 1);  // clearing works while the cache is off
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_clear(&entries, &bytes)) << LastError();
  EXPECT_EQ(2u, entries);
  EXPECT_EQ(150u, bytes);
  EXPECT_FALSE(fs::exists(dir_ / Entry('a')));
  EXPECT_FALSE(fs::exists(dir_ / ".tmp-0123-abcdef"));
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt")) << "a file that is no entry was removed";
  ASSERT_EQ(CUABI_SUCCESS, cuabi_cache_get_usage(&entries, &bytes)) << LastError();
  EXPECT_EQ(0u, entries);
}

TEST_F(CacheApi, ClearRefusesAFolderCompilesDoNotUse) {
  MakeDir(0777);
  ASSERT_EQ(0, chmod(dir_.c_str(), 0777));
  Write(dir_ / Entry('a'), 100);
  uint64_t entries = 9, bytes = 9;
  EXPECT_EQ(StatusName(CUABI_ERROR_IO), StatusName(cuabi_cache_clear(&entries, &bytes)));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "writable by others")) << LastError();
  EXPECT_TRUE(Contains(cuabi_last_error_message(), dir_.string())) << LastError();
  EXPECT_TRUE(fs::exists(dir_ / Entry('a')));
  EXPECT_EQ(9u, entries) << "an out-parameter was written on failure";
  EXPECT_EQ(9u, bytes);
  setenv("CUABI_CACHE_DIR", (root_ / "file").c_str(), 1);
  Write(root_ / "file", 1);
  EXPECT_EQ(CUABI_ERROR_IO, cuabi_cache_clear(&entries, &bytes));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "not a folder")) << LastError();
}

TEST_F(CacheApi, UnreadableFolderIsAnIoError) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every folder";
  MakeDir(0700);
  Write(dir_ / Entry('a'), 100);
  ASSERT_EQ(0, chmod(dir_.c_str(), 0300));  // no read permission
  uint64_t entries = 9, bytes = 9;
  EXPECT_EQ(StatusName(CUABI_ERROR_IO), StatusName(cuabi_cache_get_usage(&entries, &bytes)));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "cannot read the cache folder")) << LastError();
  EXPECT_NE(0, cuabi_last_error_code()) << "the errno is kept";
  EXPECT_EQ(CUABI_ERROR_IO, cuabi_cache_clear(&entries, &bytes));
  EXPECT_EQ(9u, entries);
  // A folder whose entries cannot be removed (no write permission).
  ASSERT_EQ(0, chmod(dir_.c_str(), 0500));
  EXPECT_EQ(CUABI_ERROR_IO, cuabi_cache_clear(&entries, &bytes));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "could not remove " + Entry('a')))
      << LastError();
  EXPECT_EQ(9u, entries);
}

TEST_F(CacheApi, NullOutParametersRefused) {
  uint64_t n = 0;
  cuabi_cache_state state;
  size_t size = 0;
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_cache_get_dir(nullptr, nullptr));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "size")) << LastError();
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_cache_get_state(nullptr));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_cache_get_usage(nullptr, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_cache_get_usage(&n, nullptr));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_cache_clear(nullptr, &n));
  EXPECT_EQ(CUABI_ERROR_INVALID_ARGUMENT, cuabi_cache_clear(&n, nullptr));
  EXPECT_TRUE(Contains(cuabi_last_error_message(), "bytes")) << LastError();
  (void)state;
  (void)size;
}

}  // namespace
