/* Passing a file descriptor to another process over a Unix socket
 * (SCM_RIGHTS), for the virtual memory tests: cuabi_physical_memory_export_fd
 * gives a descriptor of the driver whose open file carries the export, so the
 * descriptor itself must travel (a new open of a path would not carry it).
 * The parent makes a socketpair, lets the child inherit one end (its number
 * on the child's command line) and sends the descriptor over the other.
 * Plain C, for the C++ tests and the C child alike. */
#ifndef CUABI_TESTS_C_FD_PASSING_H
#define CUABI_TESTS_C_FD_PASSING_H

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Sends `fd` over the connected socket `sock` with one data byte; 0 on
 * success, -1 on failure (errno set). */
static inline int cuabi_test_send_fd(int sock, int fd) {
  char data = 1;
  struct iovec iov;
  iov.iov_base = &data;
  iov.iov_len = 1;
  union {
    struct cmsghdr header;
    char bytes[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.bytes;
  msg.msg_controllen = sizeof control.bytes;
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* Receives a descriptor sent by cuabi_test_send_fd: a new descriptor of this
 * process, or -1. */
static inline int cuabi_test_receive_fd(int sock) {
  char data = 0;
  struct iovec iov;
  iov.iov_base = &data;
  iov.iov_len = 1;
  union {
    struct cmsghdr header;
    char bytes[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.bytes;
  msg.msg_controllen = sizeof control.bytes;
  if (recvmsg(sock, &msg, 0) != 1) return -1;
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

#endif /* CUABI_TESTS_C_FD_PASSING_H */
