// NVRTC, opened with dlopen on the first compile.
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

#include "error.hpp"

namespace cuabi {

#define CUABI_NVRTC_ENTRY_POINTS(X) \
  X(nvrtcGetErrorString)            \
  X(nvrtcVersion)                   \
  X(nvrtcGetNumSupportedArchs)      \
  X(nvrtcGetSupportedArchs)         \
  X(nvrtcCreateProgram)             \
  X(nvrtcDestroyProgram)            \
  X(nvrtcCompileProgram)            \
  X(nvrtcGetPTXSize)                \
  X(nvrtcGetPTX)                    \
  X(nvrtcGetCUBINSize)              \
  X(nvrtcGetCUBIN)                  \
  X(nvrtcGetProgramLogSize)         \
  X(nvrtcGetProgramLog)             \
  X(nvrtcAddNameExpression)         \
  X(nvrtcGetLoweredName)

struct NvrtcApi {
#define CUABI_DECLARE(name) decltype(&::name) name = nullptr;
  CUABI_NVRTC_ENTRY_POINTS(CUABI_DECLARE)
#undef CUABI_DECLARE
  // Optional (NVRTC 12.0+): null where this NVRTC has no LTO-IR.
  decltype(&::nvrtcGetLTOIRSize) nvrtcGetLTOIRSize = nullptr;
  decltype(&::nvrtcGetLTOIR) nvrtcGetLTOIR = nullptr;
  int major = 0;
  int minor = 0;
  std::string path;
  std::vector<int> archs;  // the architectures NVRTC can target, ascending
};

// Opens NVRTC on first use; throws NVRTC_NOT_FOUND listing every path tried.
const NvrtcApi& nvrtc();

// Throws CUABI_ERROR_NVRTC (or OUT_OF_MEMORY) for a failed NVRTC call.
void check_nvrtc(nvrtcResult result, const char* what);

}  // namespace cuabi
