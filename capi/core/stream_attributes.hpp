// A stream's attributes (cuStreamGetAttribute / cuStreamSetAttribute).
#pragma once

#include <string>

#include "objects.hpp"

namespace cuabi {

cuabi_sync_policy get_sync_policy(const Stream& stream);
void set_sync_policy(const Stream& stream, int32_t policy);
int32_t get_priority(const Stream& stream);
void set_priority(const Stream& stream, int32_t priority);
cuabi_mem_sync_domain get_memory_sync_domain(const Stream& stream);
void set_memory_sync_domain(const Stream& stream, int32_t domain);
cuabi_access_policy_window get_access_policy_window(const Stream& stream);
void set_access_policy_window(const Stream& stream, const cuabi_access_policy_window* window);
// Checks `w` against `device` (the messages name the fields after `what`,
// e.g. "window->") and
// answers it as the driver takes it.
CUaccessPolicyWindow checked_access_policy_window(const Device& device,
                                                  const cuabi_access_policy_window& w,
                                                  const std::string& what);

}  // namespace cuabi
