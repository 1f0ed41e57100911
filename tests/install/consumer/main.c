/* A program that uses an installed cuabi the way a user's project would. */
#include <cuabi/cuabi.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  if (cuabi_version() != CUABI_VERSION_NUMBER) {
    fprintf(stderr, "header %u, library %u\n", (unsigned)CUABI_VERSION_NUMBER, cuabi_version());
    return 1;
  }
  if (strcmp(cuabi_status_get_name(CUABI_ERROR_COMPILE), "CUABI_ERROR_COMPILE") != 0) return 1;
  printf("consumer linked cuabi %s\n", cuabi_version_string());
  return 0;
}
