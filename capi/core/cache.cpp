#include "cache.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "error.hpp"
#include "sha256.hpp"

namespace cuabi {

namespace {

const char kMagic[8] = {'C', 'U', 'A', 'B', 'I', 'C', 'A', '1'};
constexpr size_t kDigest = 32;

void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_string(std::string& out, const std::string& s) {
  put32(out, static_cast<uint32_t>(s.size()));
  out += s;
}

struct Reader {
  const std::string& bytes;
  size_t pos;
  size_t end;
  bool take(size_t n, const char** p) {
    if (n > end - pos) return false;
    *p = bytes.data() + pos;
    pos += n;
    return true;
  }
  bool u32(uint32_t* v) {
    const char* p;
    if (!take(4, &p)) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t(uint8_t(p[i])) << (8 * i);
    return true;
  }
  bool u64(uint64_t* v) {
    const char* p;
    if (!take(8, &p)) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t(uint8_t(p[i])) << (8 * i);
    return true;
  }
  bool str(std::string* s) {
    uint32_t n;
    const char* p;
    if (!u32(&n) || !take(n, &p)) return false;
    s->assign(p, n);
    return true;
  }
};

// Creates `dir` and its parents with mode 0700 where missing.
bool make_dirs(const std::string& dir) {
  std::string path;
  size_t i = 0;
  while (i <= dir.size()) {
    size_t j = dir.find('/', i);
    if (j == std::string::npos) j = dir.size();
    path = dir.substr(0, j);
    if (!path.empty() && mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return false;
    i = j + 1;
  }
  return true;
}

}  // namespace

CacheLocation cache_location() {
  CacheLocation loc;
  const char* enabled = getenv("CUABI_CACHE");
  bool off = enabled && (strcmp(enabled, "0") == 0 || strcmp(enabled, "off") == 0 ||
                         strcmp(enabled, "false") == 0);
  if (const char* d = getenv("CUABI_CACHE_DIR"); d && d[0]) {
    loc.dir = d;
  } else if (const char* x = getenv("XDG_CACHE_HOME"); x && x[0] == '/') {
    loc.dir = std::string(x) + "/cuabi";
  } else {
    const char* home = getenv("HOME");
    if (!home || !home[0]) {
      struct passwd* pw = getpwuid(geteuid());
      home = pw ? pw->pw_dir : nullptr;
    }
    if (!home || !home[0]) return loc;  // CUABI_CACHE_STATE_NO_FOLDER
    loc.dir = std::string(home) + "/.cache/cuabi";
  }
  struct stat st;
  if (stat(loc.dir.c_str(), &st) != 0)
    loc.state = errno == ENOENT ? CUABI_CACHE_STATE_NOT_CREATED : CUABI_CACHE_STATE_UNREADABLE;
  else if (!S_ISDIR(st.st_mode))
    loc.state = CUABI_CACHE_STATE_NOT_A_FOLDER;
  // Anyone else who can write here could plant an image we would then load.
  else if (st.st_uid != geteuid())
    loc.state = CUABI_CACHE_STATE_OWNED_BY_OTHERS;
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    loc.state = CUABI_CACHE_STATE_WRITABLE_BY_OTHERS;
  else
    loc.state = CUABI_CACHE_STATE_IN_USE;
  loc.folder = loc.state;
  if (off) loc.state = CUABI_CACHE_STATE_OFF;
  return loc;
}

std::string cache_dir_in_use() {
  CacheLocation loc = cache_location();
  if (loc.state == CUABI_CACHE_STATE_NOT_CREATED) {
    if (!make_dirs(loc.dir)) return "";
    loc = cache_location();
  }
  return loc.state == CUABI_CACHE_STATE_IN_USE ? loc.dir : "";
}

namespace {

bool is_entry_name(const char* name) {
  static const char kSuffix[] = ".cubin-cache";
  if (strlen(name) != 64 + sizeof(kSuffix) - 1 || strcmp(name + 64, kSuffix) != 0) return false;
  for (size_t i = 0; i < 64; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return false;
  return true;
}

[[noreturn]] void fail_io(const std::string& message, int err) {
  fail(CUABI_ERROR_IO, message + ": " + strerror(err), err);
}

const char* unused_because(cuabi_cache_state state) {
  switch (state) {
    case CUABI_CACHE_STATE_NOT_A_FOLDER:
      return "not a folder";
    case CUABI_CACHE_STATE_OWNED_BY_OTHERS:
      return "owned by another user";
    case CUABI_CACHE_STATE_WRITABLE_BY_OTHERS:
      return "writable by others";
    default:
      return nullptr;
  }
}

}  // namespace

CacheUsage cache_scan(const std::string& dir, bool clear) {
  CacheUsage usage;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    int err = errno;
    if (err == ENOENT) return usage;
    fail_io("cannot read the cache folder " + dir, err);
  }
  struct Closer {
    DIR* d;
    ~Closer() { closedir(d); }
  } closer{d};
  while (struct dirent* e = readdir(d)) {
    bool entry = is_entry_name(e->d_name);
    if (!entry && strncmp(e->d_name, ".tmp-", 5) != 0) continue;
    std::string path = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (clear && unlink(path.c_str()) != 0) {
      if (errno == ENOENT) continue;  // removed meanwhile, by another process
      int err = errno;
      fail_io("removed " + std::to_string(usage.entries) +
                  (usage.entries == 1 ? " entry" : " entries") + " of " + dir +
                  ", then could not remove " + e->d_name,
              err);
    }
    if (entry) {
      usage.entries++;
      usage.bytes += static_cast<uint64_t>(st.st_size);
    }
  }
  return usage;
}

void need_cache_folder(const CacheLocation& loc) {
  if (loc.state == CUABI_CACHE_STATE_NO_FOLDER)
    fail(CUABI_ERROR_NOT_FOUND,
         "there is no cache folder: set CUABI_CACHE_DIR (no XDG_CACHE_HOME, no home folder)");
}

CacheUsage read_cache_usage() {
  CacheLocation loc = cache_location();
  need_cache_folder(loc);
  return cache_scan(loc.dir, false);
}

CacheUsage clear_cache_folder() {
  CacheLocation loc = cache_location();
  need_cache_folder(loc);
  if (const char* why = unused_because(loc.folder))
    fail(CUABI_ERROR_IO,
         "not clearing " + loc.dir + ": " + why + " (compiles do not use it; empty it yourself)");
  if (loc.folder == CUABI_CACHE_STATE_UNREADABLE)
    fail_io("cannot look at the cache folder " + loc.dir, EACCES);
  return cache_scan(loc.dir, true);
}

std::string cache_file(const std::string& dir, const CacheKey& key) {
  return dir + "/" + hex(key) + ".cubin-cache";
}

std::string cache_encode(const CacheKey& key, const CacheEntry& entry) {
  std::string out(kMagic, sizeof(kMagic));
  out.append(reinterpret_cast<const char*>(key.data()), key.size());
  put32(out, entry.output);
  put32(out, static_cast<uint32_t>(entry.lowered.size()));
  for (const auto& [expr, name] : entry.lowered) {
    put_string(out, expr);
    put_string(out, name);
  }
  put64(out, entry.image.size());
  out += entry.image;
  auto digest = sha256(out.data(), out.size());
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

std::optional<CacheEntry> cache_decode(const std::string& bytes, const CacheKey& key) {
  if (bytes.size() < sizeof(kMagic) + key.size() + 4 + 4 + 8 + kDigest) return std::nullopt;
  size_t body = bytes.size() - kDigest;
  auto digest = sha256(bytes.data(), body);
  if (memcmp(digest.data(), bytes.data() + body, kDigest) != 0) return std::nullopt;
  if (memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  if (memcmp(bytes.data() + sizeof(kMagic), key.data(), key.size()) != 0) return std::nullopt;
  Reader r{bytes, sizeof(kMagic) + key.size(), body};
  CacheEntry entry;
  uint32_t count;
  if (!r.u32(&entry.output) || entry.output > 1 || !r.u32(&count)) return std::nullopt;
  for (uint32_t i = 0; i < count; ++i) {
    std::string expr, name;
    if (!r.str(&expr) || !r.str(&name)) return std::nullopt;
    entry.lowered[expr] = name;
  }
  uint64_t size;
  const char* p;
  if (!r.u64(&size) || size != body - r.pos || size == 0 || !r.take(size, &p)) return std::nullopt;
  entry.image.assign(p, size);
  return entry;
}

std::optional<CacheEntry> cache_load(const std::string& dir, const CacheKey& key) {
  std::string path = cache_file(dir, key);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::string bytes;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            st.st_size > 0 && st.st_size < (1ll << 31);
  if (ok) {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      ssize_t n = read(fd, &bytes[got], bytes.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ok = got == bytes.size();
  }
  close(fd);
  std::optional<CacheEntry> entry;
  if (ok) entry = cache_decode(bytes, key);
  if (!entry) unlink(path.c_str());  // corrupt, truncated or foreign: rebuild
  return entry;
}

void cache_store(const std::string& dir, const CacheKey& key, const CacheEntry& entry) {
  std::string bytes = cache_encode(key, entry);
  std::string tmp = dir + "/.tmp-" + hex(key).substr(0, 16) + "-XXXXXX";
  int fd = mkstemp(&tmp[0]);
  if (fd < 0) return;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = done == bytes.size() && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), cache_file(dir, key).c_str()) != 0) unlink(tmp.c_str());
}

}  // namespace cuabi
