/*
 * cuabi: what cuabi finds on this machine.
 *
 *   cuabi                 the report: the library, the CUDA driver, NVRTC,
 *                         every device, the compile cache
 *   cuabi --clear-cache   removes every entry of the compile cache
 *   cuabi --help          this text
 *
 * Exit status of the report: 0 when the driver and NVRTC load and at least
 * one device is listed; 1 when any of them is missing (the report says why,
 * with every path tried); 2 for a usage error. --clear-cache: 0 when every
 * entry is gone, 1 otherwise.
 *
 * Only the public C API (include/cuabi/cuabi.h) is used. The compile cache's
 * folder follows the rules the header documents for cuabi_module_compile;
 * its entries are the files named <64 hex digits>.cubin-cache in it, and
 * ".tmp-*" files are writes that never finished.
 *
 * `python -m cuabi` prints the same report.
 */
#define _GNU_SOURCE
#include <cuabi/cuabi.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTRY_SUFFIX ".cubin-cache"
#define TEMP_PREFIX ".tmp-"

static const char usage[] =
    "usage: cuabi [--clear-cache]\n"
    "\n"
    "Reports what cuabi finds: the library, the CUDA driver, NVRTC, every device\n"
    "(name, compute capability, memory) and the compile cache (folder, size,\n"
    "entries). Exit status 0 when the driver and NVRTC load and a device is\n"
    "found, 1 when one of them is missing (with the reason and every path\n"
    "tried), 2 for a usage error.\n"
    "\n"
    "  --clear-cache   remove every entry of the compile cache\n"
    "  --help          this text\n";

/* "512 bytes", "1.5 KiB", "79.2 GiB". */
static const char* human_size(unsigned long long bytes, char* buf, size_t size) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) {
    snprintf(buf, size, "%llu bytes", bytes);
    return buf;
  }
  double value = (double)bytes / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024.0;
    ++unit;
  }
  snprintf(buf, size, "%.1f %s", value, units[unit]);
  return buf;
}

/* Each line of `text`, indented by `indent` spaces. */
static void print_indented(const char* text, int indent) {
  const char* line = text;
  while (*line) {
    const char* end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    printf("%*s%.*s\n", indent, "", (int)n, line);
    line += n;
    if (*line == '\n') ++line;
  }
}

/* The status's name and the library's message for a call that failed. */
static void print_failure(const char* what, cuabi_status status) {
  printf("%s: not available (%s)\n", what, cuabi_status_get_name(status));
  print_indented(cuabi_last_error_message(), 2);
}

/* A string through the two-call pattern; NULL on failure (status in *status). */
static char* two_call(cuabi_status (*get)(char*, size_t*), cuabi_status* status) {
  size_t size = 0;
  *status = get(NULL, &size);
  if (*status != CUABI_SUCCESS) return NULL;
  char* buf = malloc(size ? size : 1);
  if (!buf) {
    *status = CUABI_ERROR_OUT_OF_MEMORY;
    return NULL;
  }
  *status = get(buf, &size);
  if (*status != CUABI_SUCCESS) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* ------------------------------------------------------------------------- */
/* The compile cache                                                          */
/* ------------------------------------------------------------------------- */

typedef struct {
  char dir[PATH_MAX];  /* "" when there is none */
  const char* off;     /* why the cache is off, or NULL */
} cache_place;

static int env_is(const char* name, const char* const* values) {
  const char* v = getenv(name);
  if (!v) return 0;
  for (; *values; ++values)
    if (strcmp(v, *values) == 0) return 1;
  return 0;
}

/* The folder cuabi_module_compile uses: $CUABI_CACHE_DIR, else
 * $XDG_CACHE_HOME/cuabi (an absolute XDG_CACHE_HOME), else ~/.cache/cuabi. */
static cache_place cache_folder(void) {
  static const char* const off_values[] = {"0", "off", "false", NULL};
  cache_place place;
  place.dir[0] = '\0';
  place.off = env_is("CUABI_CACHE", off_values) ? "CUABI_CACHE" : NULL;
  const char* dir = getenv("CUABI_CACHE_DIR");
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (dir && dir[0]) {
    snprintf(place.dir, sizeof(place.dir), "%s", dir);
  } else if (xdg && xdg[0] == '/') {
    snprintf(place.dir, sizeof(place.dir), "%s/cuabi", xdg);
  } else {
    const char* home = getenv("HOME");
    if (!home || !home[0]) {
      struct passwd* pw = getpwuid(geteuid());
      home = pw ? pw->pw_dir : NULL;
    }
    if (home && home[0]) snprintf(place.dir, sizeof(place.dir), "%s/.cache/cuabi", home);
  }
  return place;
}

static int is_entry_name(const char* name) {
  size_t n = strlen(name);
  if (n != 64 + strlen(ENTRY_SUFFIX) || strcmp(name + 64, ENTRY_SUFFIX) != 0) return 0;
  for (size_t i = 0; i < 64; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return 0;
  return 1;
}

typedef struct {
  unsigned long long entries, bytes, temporaries;
  unsigned long long removed, removed_bytes, failed;
} cache_count;

/* Counts (and with `clear`, removes) the entries and unfinished writes.
 * Returns 0, or an errno value when the folder cannot be read. */
static int scan_cache(const char* dir, int clear, cache_count* count) {
  memset(count, 0, sizeof(*count));
  DIR* d = opendir(dir);
  if (!d) return errno;
  struct dirent* e;
  char path[PATH_MAX + 256];
  while ((e = readdir(d)) != NULL) {
    int entry = is_entry_name(e->d_name);
    int temporary = strncmp(e->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0;
    if (!entry && !temporary) continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (entry) {
      count->entries++;
      count->bytes += (unsigned long long)st.st_size;
    } else {
      count->temporaries++;
    }
    if (clear) {
      if (unlink(path) == 0) {
        if (entry) {
          count->removed++;
          count->removed_bytes += (unsigned long long)st.st_size;
        }
      } else if (errno != ENOENT) {
        fprintf(stderr, "cuabi: cannot remove %s: %s\n", path, strerror(errno));
        count->failed++;
      }
    }
  }
  closedir(d);
  return 0;
}

/* Why cuabi would not use `dir`, or NULL when it would (or it does not exist yet). */
static const char* unusable(const char* dir, int* exists) {
  struct stat st;
  *exists = 0;
  if (stat(dir, &st) != 0) return errno == ENOENT ? NULL : "cannot be read";
  *exists = 1;
  if (!S_ISDIR(st.st_mode)) return "not a folder";
  if (st.st_uid != geteuid()) return "owned by another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by others";
  return NULL;
}

static void report_cache(void) {
  cache_place place = cache_folder();
  char a[32];
  if (!place.dir[0]) {
    printf("cache: none (no home folder; set CUABI_CACHE_DIR)\n");
    return;
  }
  int exists;
  const char* why = unusable(place.dir, &exists);
  if (place.off)
    printf("cache: %s (off: %s=%s)\n", place.dir, place.off, getenv(place.off));
  else if (why)
    printf("cache: %s (not used: %s)\n", place.dir, why);
  else if (!exists)
    printf("cache: %s (not created yet)\n", place.dir);
  else
    printf("cache: %s\n", place.dir);
  if (!exists) {
    printf("  entries: 0, %s\n", human_size(0, a, sizeof(a)));
    return;
  }
  cache_count count;
  int err = scan_cache(place.dir, 0, &count);
  if (err) {
    printf("  entries: unknown (%s)\n", strerror(err));
    return;
  }
  printf("  entries: %llu, %s\n", count.entries, human_size(count.bytes, a, sizeof(a)));
}

static int clear_cache(void) {
  cache_place place = cache_folder();
  char a[32];
  if (!place.dir[0]) {
    printf("cuabi: no cache folder (no home folder; set CUABI_CACHE_DIR)\n");
    return 1;
  }
  int exists;
  const char* why = unusable(place.dir, &exists);
  if (!exists) {
    printf("cleared %s: nothing to remove (it does not exist)\n", place.dir);
    return 0;
  }
  if (why) {
    printf("cuabi: not clearing %s: %s\n", place.dir, why);
    return 1;
  }
  cache_count count;
  int err = scan_cache(place.dir, 1, &count);
  if (err) {
    printf("cuabi: cannot read %s: %s\n", place.dir, strerror(err));
    return 1;
  }
  printf("cleared %s: removed %llu %s, %s\n", place.dir, count.removed,
         count.removed == 1 ? "entry" : "entries", human_size(count.removed_bytes, a, sizeof(a)));
  return count.failed ? 1 : 0;
}

/* ------------------------------------------------------------------------- */
/* The report                                                                 */
/* ------------------------------------------------------------------------- */

static void report_library(int* ok) {
  printf("cuabi %s\n", cuabi_version_string());
  Dl_info info;
  char real[PATH_MAX];
  if (dladdr((void*)(size_t)&cuabi_version, &info) && info.dli_fname && info.dli_fname[0])
    printf("  library: %s\n", realpath(info.dli_fname, real) ? real : info.dli_fname);
  else
    printf("  library: unknown\n");
  if (cuabi_version() / 10000 != CUABI_VERSION_MAJOR) {
    printf("  this program was built for cuabi %s: major versions differ\n", CUABI_VERSION_STRING);
    *ok = 0;
  }
}

static int report_driver(int* ok) {
  cuabi_status status = cuabi_init();
  if (status != CUABI_SUCCESS) {
    print_failure("driver", status);
    *ok = 0;
    return 0;
  }
  int32_t version = 0;
  status = cuabi_driver_get_version(&version);
  if (status != CUABI_SUCCESS) {
    print_failure("driver", status);
    *ok = 0;
    return 0;
  }
  printf("driver: CUDA %d.%d (%d)\n", version / 1000, (version % 1000) / 10, version);
  char* path = two_call(cuabi_driver_get_path, &status);
  printf("  path: %s\n", path ? path : "unknown");
  free(path);
  return 1;
}

static void report_nvrtc(int* ok) {
  int32_t major = 0, minor = 0;
  cuabi_status status = cuabi_nvrtc_get_version(&major, &minor);
  if (status != CUABI_SUCCESS) {
    print_failure("nvrtc", status);
    *ok = 0;
    return;
  }
  printf("nvrtc: %d.%d\n", major, minor);
  char* path = two_call(cuabi_nvrtc_get_path, &status);
  printf("  path: %s\n", path ? path : "unknown");
  free(path);
}

/* One line per device: "  0: NAME, compute capability 9.0, memory 79.2 GiB
 * total, 78.6 GiB free". */
static int report_device(int32_t ordinal) {
  cuabi_device device = NULL;
  cuabi_status status = cuabi_device_get(ordinal, &device);
  char name[256];
  size_t name_size = sizeof(name);
  int32_t major = 0, minor = 0;
  size_t free_bytes = 0, total_bytes = 0;
  if (status == CUABI_SUCCESS) status = cuabi_device_get_name(device, name, &name_size);
  if (status == CUABI_SUCCESS) status = cuabi_device_get_compute_capability(device, &major, &minor);
  if (status == CUABI_SUCCESS)
    status = cuabi_device_get_memory_info(device, &free_bytes, &total_bytes);
  if (status != CUABI_SUCCESS) {
    printf("  %d: not available (%s)\n", ordinal, cuabi_status_get_name(status));
    print_indented(cuabi_last_error_message(), 4);
    cuabi_device_release(device);
    return 0;
  }
  char total[32], free_text[32];
  printf("  %d: %s, compute capability %d.%d, memory %s total, %s free\n", ordinal, name, major,
         minor, human_size(total_bytes, total, sizeof(total)),
         human_size(free_bytes, free_text, sizeof(free_text)));
  cuabi_device_release(device);
  return 1;
}

static void report_devices(int driver, int* ok) {
  if (!driver) {
    printf("devices: unknown (no driver)\n");
    return;
  }
  int32_t count = 0;
  cuabi_status status = cuabi_device_get_count(&count);
  if (status != CUABI_SUCCESS) {
    print_failure("devices", status);
    *ok = 0;
    return;
  }
  printf("devices: %d\n", count);
  if (count < 1) *ok = 0;
  for (int32_t i = 0; i < count; ++i)
    if (!report_device(i)) *ok = 0;
}

int main(int argc, char** argv) {
  int clear = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--clear-cache") == 0) {
      clear = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else {
      fprintf(stderr, "cuabi: unknown argument '%s'\n%s", argv[i], usage);
      return 2;
    }
  }
  if (clear) return clear_cache();

  int ok = 1;
  report_library(&ok);
  int driver = report_driver(&ok);
  report_nvrtc(&ok);
  report_devices(driver, &ok);
  report_cache();
  fflush(stdout);
  return ok ? 0 : 1;
}
