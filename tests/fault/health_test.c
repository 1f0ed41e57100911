/* Health through the C API, against the stand-in driver: usable, then lost
 * once a sticky fault is injected (the message names the call that found
 * it, and the callback runs once, on that thread, with that message), and
 * forked in a child forked after CUDA was initialised. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "cuabi/cuabi.h"
#include "stand_in.h"

static int told;
static char told_message[1024];
static void* told_data;
static cuabi_device the_device;
static void CUABI_CALL on_lost(void* user_data, const char* message) {
  told++;
  told_data = user_data;
  snprintf(told_message, sizeof told_message, "%s", message);
  /* cuabi may be called from here. */
  cuabi_health h = CUABI_HEALTH_USABLE;
  cuabi_device_get_health(the_device, &h);
  if (h != CUABI_HEALTH_LOST) told = -100;
}

static cuabi_health health_of(cuabi_device dev) {
  cuabi_health h = (cuabi_health)-1;
  if (cuabi_device_get_health(dev, &h) != CUABI_SUCCESS) return (cuabi_health)-2;
  return h;
}

static void message(char* out, size_t n) {
  size_t size = n;
  if (cuabi_context_lost_get_message(out, &size) != CUABI_SUCCESS) snprintf(out, n, "(failed)");
}

int main(void) {
  fail_entry_fn fail_entry = stand_in_fail_entry();
  if (!fail_entry) return 1;
  cuabi_device dev = NULL;
  if (cuabi_device_get(0, &dev) != CUABI_SUCCESS) return 1;
  the_device = dev;
  int marker = 0;
  EXPECT(cuabi_set_context_lost_callback(on_lost, &marker) == CUABI_SUCCESS, "set callback");
  EXPECT(health_of(dev) == CUABI_HEALTH_USABLE, "health %d before any fault", health_of(dev));
  char text[1024];
  message(text, sizeof text);
  EXPECT(text[0] == 0, "a lost message before any fault: %s", text);
  EXPECT(cuabi_device_get_health(dev, NULL) == CUABI_ERROR_INVALID_ARGUMENT &&
             strstr(cuabi_last_error_message(), "health is NULL"),
         "NULL health: %s", cuabi_last_error_message());
  EXPECT(cuabi_device_get_health(NULL, NULL) == CUABI_ERROR_INVALID_HANDLE, "NULL device");

  /* A child forked now cannot use CUDA, and says so without touching it. */
  pid_t pid = fork();
  if (pid == 0) _exit(health_of(dev) == CUABI_HEALTH_FORKED ? 0 : 1);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  EXPECT(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the forked child's health is not FORKED");
  EXPECT(health_of(dev) == CUABI_HEALTH_USABLE, "the parent's health after a fork");

  fail_entry("cuCtxSynchronize", 1, CUDA_ERROR_LAUNCH_FAILED, 0);
  cuabi_status st = cuabi_device_synchronize(dev);
  EXPECT(st == CUABI_ERROR_CONTEXT_LOST, "synchronize answered %s", cuabi_status_get_name(st));
  EXPECT(health_of(dev) == CUABI_HEALTH_LOST, "health %d after the fault", health_of(dev));
  message(text, sizeof text);
  EXPECT(strncmp(text, "cuabi_device_synchronize: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED",
                 strlen("cuabi_device_synchronize: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED")) == 0,
         "lost message: %s", text);
  EXPECT(told == 1, "the callback ran %d times (-100: health was not LOST inside it)", told);
  EXPECT(told_data == &marker, "the callback's user_data");
  EXPECT(strcmp(told_message, text) == 0, "the callback saw '%s', not '%s'", told_message, text);

  /* Later failures of the lost context: no second call, the first message kept. */
  cuabi_buffer b = NULL;
  st = cuabi_buffer_alloc(dev, 64, &b);
  EXPECT(st == CUABI_ERROR_CONTEXT_LOST, "an allocation after the fault answered %s",
         cuabi_status_get_name(st));
  EXPECT(told == 1, "the callback ran again: %d", told);
  char again[1024];
  message(again, sizeof again);
  EXPECT(strcmp(again, text) == 0, "the lost message changed to %s", again);

  /* Registered after the loss: called at once. */
  told = 0;
  EXPECT(cuabi_set_context_lost_callback(on_lost, NULL) == CUABI_SUCCESS, "set again");
  EXPECT(told == 1 && told_data == NULL, "a callback registered after the loss ran %d times", told);
  EXPECT(cuabi_set_context_lost_callback(NULL, NULL) == CUABI_SUCCESS, "clear");

  cuabi_device_release(dev);
  if (failures) return 1;
  printf("health: usable, forked in a child, lost with its message and one callback\n");
  return 0;
}
