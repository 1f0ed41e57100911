// Host functions and graph uploads (the rest of streams, events and graphs is
// in objects.hpp).
#pragma once

#include "objects.hpp"

namespace cuabi {

// The message buffer a host function may write its failure into.
constexpr size_t kHostMessageSize = 1024;

// Runs fn(user_data, ...) in order on `stream` (cuLaunchHostFunc); the
// call's record holds a reference to the stream until it has run. A failure
// it reports is kept on the stream for its next synchronize.
void launch_host_func(Ref<Stream> stream, cuabi_host_fn fn, void* user_data);

// cuGraphUpload on an optional stream.
void upload(GraphExec& exec, const Pin<Stream>& stream);

}  // namespace cuabi
