/*
 * cuabi: what cuabi finds on this machine.
 *
 *   cuabi                 the report: the library, the CUDA driver, NVRTC,
 *                         every device, the compile cache
 *   cuabi --clear-cache   removes every entry of the compile cache
 *   cuabi --version       the library's version (and the header's, if they differ)
 *   cuabi --help          this text
 *
 * Exit status of the report: 0 when the driver and NVRTC load and at least
 * one device is listed; 1 when any of them is missing (the report says why,
 * with every path tried); 2 for a usage error. --clear-cache: 0 when every
 * entry is gone, 1 otherwise.
 *
 * Only the public C API (include/cuabi/cuabi.h) is used; the compile cache's
 * folder, its state, its entries and clearing them come from the library
 * (cuabi_cache_get_dir, _get_state, _get_usage, cuabi_cache_clear), which
 * applies the rules cuabi_module_compile follows.
 *
 * `python -m cuabi` prints the same report.
 */
#define _GNU_SOURCE
#include <cuabi/cuabi.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: cuabi [--clear-cache | --version | --help]\n"
    "\n"
    "Reports what cuabi finds: the library, the CUDA driver, NVRTC, every device\n"
    "(name, compute capability, memory) and the compile cache (folder, size,\n"
    "entries). Exit status 0 when the driver and NVRTC load and a device is\n"
    "found, 1 when one of them is missing (with the reason and every path\n"
    "tried), 2 for a usage error.\n"
    "\n"
    "  --clear-cache   remove every entry of the compile cache\n"
    "  --version       print the version and exit\n"
    "  --help, -h      print this text and exit\n";

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

/* Why compiles do not use the folder, as the report words it; NULL when they
 * would. */
static const char* not_used_because(cuabi_cache_state state) {
  switch (state) {
    case CUABI_CACHE_STATE_NOT_A_FOLDER:
      return "not a folder";
    case CUABI_CACHE_STATE_OWNED_BY_OTHERS:
      return "owned by another user";
    case CUABI_CACHE_STATE_WRITABLE_BY_OTHERS:
      return "writable by others";
    case CUABI_CACHE_STATE_UNREADABLE:
      return "cannot be read";
    default:
      return NULL;
  }
}

static void report_cache(void) {
  cuabi_status status;
  char* dir = two_call(cuabi_cache_get_dir, &status);
  if (status == CUABI_ERROR_NOT_FOUND) {
    printf("cache: none (no home folder; set CUABI_CACHE_DIR)\n");
    return;
  }
  cuabi_cache_state state = CUABI_CACHE_STATE_IN_USE;
  if (status == CUABI_SUCCESS) status = cuabi_cache_get_state(&state);
  if (status != CUABI_SUCCESS) {
    print_failure("cache", status);
    free(dir);
    return;
  }
  if (state == CUABI_CACHE_STATE_OFF)
    printf("cache: %s (off: CUABI_CACHE=%s)\n", dir, getenv("CUABI_CACHE"));
  else if (not_used_because(state))
    printf("cache: %s (not used: %s)\n", dir, not_used_because(state));
  else if (state == CUABI_CACHE_STATE_NOT_CREATED)
    printf("cache: %s (not created yet)\n", dir);
  else
    printf("cache: %s\n", dir);
  free(dir);
  uint64_t entries = 0, bytes = 0;
  char a[32];
  status = cuabi_cache_get_usage(&entries, &bytes);
  if (status != CUABI_SUCCESS) {
    printf("  entries: unknown (%s)\n", cuabi_last_error_message());
    return;
  }
  printf("  entries: %llu, %s\n", (unsigned long long)entries,
         human_size((unsigned long long)bytes, a, sizeof(a)));
}

static int clear_cache(void) {
  cuabi_status status;
  char* dir = two_call(cuabi_cache_get_dir, &status);
  if (status == CUABI_ERROR_NOT_FOUND) {
    printf("cuabi: no cache folder (no home folder; set CUABI_CACHE_DIR)\n");
    return 1;
  }
  uint64_t entries = 0, bytes = 0;
  if (status == CUABI_SUCCESS) status = cuabi_cache_clear(&entries, &bytes);
  if (status != CUABI_SUCCESS) {
    printf("cuabi: %s\n", cuabi_last_error_message());
    free(dir);
    return 1;
  }
  char a[32];
  printf("cleared %s: removed %llu %s, %s\n", dir, (unsigned long long)entries,
         entries == 1 ? "entry" : "entries", human_size((unsigned long long)bytes, a, sizeof(a)));
  free(dir);
  return 0;
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
    } else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
      /* The library this command loaded; the header it was built with, where
       * they differ. */
      printf("cuabi %s\n", cuabi_version_string());
      if (cuabi_version() != CUABI_VERSION_NUMBER)
        printf("(built against the header of cuabi %s)\n", CUABI_VERSION_STRING);
      return 0;
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
