// The driver's own log (cuLogsRegisterCallback, CUDA 12.9+): why a driver
// call failed, in the driver's words. The callback runs on the thread whose
// call failed, during that call; nothing runs on a call that succeeds.
#pragma once

#include <cstddef>
#include <string>

#include "driver.hpp"

namespace cuabi {

// Registers for the log, once the driver is open (from its loading).
void driver_log_start(const DriverApi& api);

// "; the driver logged: <line> | <line>" for the lines the driver logged on
// this thread during its last failing call, or "" when it logged none. The
// lines are taken: a later failure does not repeat them.
std::string driver_log_of_failure();

// The last `last` lines kept (0: all of them, up to 256), oldest first, one
// per line as "[hh:mm:ss.mmm][thread][E|W] message". NOT_SUPPORTED when the
// driver keeps no log.
std::string driver_log_lines(size_t last);

// Writes driver_log_lines(0) to `path`.
void driver_log_dump(const char* path);

}  // namespace cuabi
