// Detects use of CUDA in a child forked after CUDA was initialised: the child
// inherits none of the driver's state, and using it hangs or crashes.
#pragma once

namespace cuabi {

// Called once CUDA is initialised in this process.
void fork_guard_arm();
// True in a child forked after fork_guard_arm().
bool fork_guard_tripped();

}  // namespace cuabi
