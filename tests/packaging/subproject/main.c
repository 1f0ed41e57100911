/* A C program built with cuabi as a dependency from source: the library's
 * version, then a call that needs the CUDA driver.
 * Exit status: 0 with a driver, 3 when the driver is missing (the library's
 * CUABI_ERROR_DRIVER_NOT_FOUND and its message printed), 1 otherwise. */
#include <cuabi/cuabi.h>
#include <stdint.h>
#include <stdio.h>

int main(void) {
  int32_t count = -1;
  cuabi_status status;
  printf("cuabi %s (C)\n", cuabi_version_string());
  status = cuabi_device_get_count(&count);
  if (status == CUABI_SUCCESS) {
    printf("devices: %d\n", (int)count);
    return 0;
  }
  printf("devices: %s: %s\n", cuabi_status_get_name(status), cuabi_last_error_message());
  return status == CUABI_ERROR_DRIVER_NOT_FOUND ? 3 : 1;
}
