// The C++ face of the same program (cuabi.hpp): a missing driver is the
// exception of its status, carrying the library's message.
// Exit status: 0 with a driver, 3 when the driver is missing, 1 otherwise.
#include <cstdio>
#include <cuabi/cuabi.hpp>

int main() {
  std::printf("cuabi %s (C++)\n", cuabi::version_string());
  try {
    std::printf("devices: %d\n", static_cast<int>(cuabi::device::count()));
    return 0;
  } catch (const cuabi::status_error<CUABI_ERROR_DRIVER_NOT_FOUND>& e) {
    std::printf("devices: %s: %s\n", e.status_name(), e.message().c_str());
    return 3;
  } catch (const cuabi::error& e) {
    std::printf("devices: %s\n", e.what());
    return 1;
  }
}
