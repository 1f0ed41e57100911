// Whether CUDA still works in this process, kept where failures are
// reported: the first call to find the context lost is remembered, and the
// application's callback is called once for it.
#pragma once

#include <string>

#include "cuabi/cuabi.h"

namespace cuabi {

// A call answered CUABI_ERROR_CONTEXT_LOST with `message` ("<call>: ...").
// The first one is kept and reported to the callback, on this thread; the
// caller holds no lock of the core. Never throws.
void note_context_lost(const std::string& message) noexcept;

cuabi_health health() noexcept;
std::string context_lost_message();
void set_context_lost_callback(cuabi_context_lost_fn callback, void* user_data);

}  // namespace cuabi
