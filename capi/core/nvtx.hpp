// Profiler annotations through NVTX3 (header-only: a call returns at once
// when no tool is attached), and the driver's profiler start and stop.
#pragma once

#include <cstdint>

#include "objects.hpp"

namespace cuabi {

// `domain` NULL: NVTX's default domain. Messages and names are checked here.
void nvtx_range_push(const char* domain, const char* message, uint32_t argb);
void nvtx_range_pop(const char* domain);
uint64_t nvtx_range_start(const char* domain, const char* message, uint32_t argb);
void nvtx_range_end(uint64_t id);
void nvtx_mark(const char* domain, const char* message, uint32_t argb);

void profiler_start(const Device& device);
void profiler_stop(const Device& device);

}  // namespace cuabi
