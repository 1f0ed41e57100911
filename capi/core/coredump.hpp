// Device core dumps on GPU exceptions (cuCoredumpSetAttribute[Global]).
#pragma once

#include <cstdint>

#include "objects.hpp"

namespace cuabi {

// For contexts created later (device == nullptr) or for `device`'s context.
void set_coredump(const Device* device, int32_t enable, const char* path,
                  cuabi_coredump_flags flags);

}  // namespace cuabi
