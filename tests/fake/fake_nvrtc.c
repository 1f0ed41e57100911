/*
 * The stand-in for NVRTC (libnvrtc.so) beside the stand-in driver
 * (fake_cuda.c): the fault-injection tests build both into one library that
 * cuabi opens as its driver and its NVRTC, so the two share one count of
 * calls and of live resources. The benchmarks' stand-ins leave it out (they
 * compile with the real NVRTC, and a libcuda.so.1 exporting nvrtc* would take
 * a program's NVRTC calls).
 *
 * NVRTC "compiles" any source that defines saxpy into a small ELF image that
 * cuModuleLoadData accepts (and PTX text); other sources fail with
 * NVRTC_ERROR_COMPILATION.
 */
#define _POSIX_C_SOURCE 200809L
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

/* ---- NVRTC ------------------------------------------------------------------ */

struct _nvrtcProgram {
  char* source;
  int compiled; /* 1: compiled, -1: failed */
  char log[128];
};

/* A CUBIN as far as cuabi looks at one: a 64-bit little-endian ELF header
 * with no sections or segments, then a tag. */
static const unsigned char* fake_cubin(size_t* size) {
  static unsigned char image[80];
  memset(image, 0, sizeof(image));
  memcpy(image,
         "\x7f"
         "ELF",
         4);
  image[4] = 2; /* ELFCLASS64 */
  image[5] = 1; /* little-endian */
  image[6] = 1;
  image[0x34] = 64; /* e_ehsize */
  memcpy(image + 64, "fake cubin saxpy", 16);
  *size = sizeof(image);
  return image;
}
static const char kFakePtx[] = "// fake PTX\n.version 8.0\n.target sm_90\n.entry saxpy\n";

EXPORT const char* nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
    case NVRTC_SUCCESS:
      return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_COMPILATION:
      return "NVRTC_ERROR_COMPILATION";
    case NVRTC_ERROR_INVALID_INPUT:
      return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM:
      return "NVRTC_ERROR_INVALID_PROGRAM";
    default:
      return "NVRTC_ERROR_FAKE";
  }
}
EXPORT nvrtcResult nvrtcVersion(int* major, int* minor) {
  FAULT(nvrtcVersion, (major, minor));
  *major = 12;
  *minor = 8;
  return NVRTC_SUCCESS;
}
static const int kArchs[] = {75, 80, 86, 89, 90};
EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int* n) {
  FAULT(nvrtcGetNumSupportedArchs, (n));
  *n = (int)(sizeof(kArchs) / sizeof(kArchs[0]));
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetSupportedArchs(int* archs) {
  FAULT(nvrtcGetSupportedArchs, (archs));
  memcpy(archs, kArchs, sizeof(kArchs));
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name,
                                      int num_headers, const char* const* headers,
                                      const char* const* include_names) {
  FAULT(nvrtcCreateProgram, (prog, src, name, num_headers, headers, include_names));
  (void)name, (void)num_headers, (void)headers, (void)include_names;
  if (!prog || !src) return NVRTC_ERROR_INVALID_INPUT;
  struct _nvrtcProgram* p = calloc(1, sizeof(*p));
  if (!p || !(p->source = strdup(src))) {
    free(p);
    return NVRTC_ERROR_OUT_OF_MEMORY;
  }
  ++fake_live;
  *prog = p;
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  int f_ = FAKE_GATE(__func__);
  if (!prog || !*prog) return f_ ? (nvrtcResult)f_ : NVRTC_ERROR_INVALID_PROGRAM;
  --fake_live;
  free((*prog)->source);
  free(*prog);
  *prog = NULL;
  return (nvrtcResult)f_;
}
EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char* const* options) {
  FAULT(nvrtcCompileProgram, (p, n, options));
  (void)n, (void)options;
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (strstr(p->source, "saxpy")) {
    p->compiled = 1;
    p->log[0] = 0;
    return NVRTC_SUCCESS;
  }
  p->compiled = -1;
  snprintf(p->log, sizeof(p->log), "fake.cu(1): error: the fake NVRTC compiles saxpy only\n");
  return NVRTC_ERROR_COMPILATION;
}
#define NEED_COMPILED(p) \
  if (!(p) || (p)->compiled != 1) return NVRTC_ERROR_INVALID_PROGRAM
EXPORT nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t* size) {
  FAULT(nvrtcGetPTXSize, (p, size));
  NEED_COMPILED(p);
  *size = sizeof(kFakePtx);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram p, char* out) {
  FAULT(nvrtcGetPTX, (p, out));
  NEED_COMPILED(p);
  memcpy(out, kFakePtx, sizeof(kFakePtx));
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t* size) {
  FAULT(nvrtcGetCUBINSize, (p, size));
  NEED_COMPILED(p);
  fake_cubin(size);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char* out) {
  FAULT(nvrtcGetCUBIN, (p, out));
  NEED_COMPILED(p);
  size_t size = 0;
  const unsigned char* image = fake_cubin(&size);
  memcpy(out, image, size);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t* size) {
  FAULT(nvrtcGetProgramLogSize, (p, size));
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  *size = strlen(p->log) + 1;
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char* out) {
  FAULT(nvrtcGetProgramLog, (p, out));
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  memcpy(out, p->log, strlen(p->log) + 1);
  return NVRTC_SUCCESS;
}
EXPORT nvrtcResult nvrtcAddNameExpression(nvrtcProgram p, const char* expr) {
  FAULT(nvrtcAddNameExpression, (p, expr));
  (void)expr;
  return p ? NVRTC_SUCCESS : NVRTC_ERROR_INVALID_PROGRAM;
}
EXPORT nvrtcResult nvrtcGetLoweredName(nvrtcProgram p, const char* expr, const char** lowered) {
  FAULT(nvrtcGetLoweredName, (p, expr, lowered));
  NEED_COMPILED(p);
  *lowered = expr;
  return NVRTC_SUCCESS;
}
