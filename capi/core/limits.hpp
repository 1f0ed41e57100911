// A device's primary-context limits.
#pragma once

#include "objects.hpp"

namespace cuabi {

size_t get_limit(const Device& device, cuabi_limit limit);
void set_limit(const Device& device, cuabi_limit limit, size_t value);
void reset_persisting_l2(const Device& device);

}  // namespace cuabi
