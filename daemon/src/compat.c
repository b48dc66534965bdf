/*
 * Where the kernel under the sandbox is not Linux's own: gVisor (runsc) serves the sandbox's
 * system calls itself, and the release Debian ships (2022-12-19) lacks three things the daemon
 * relies on. Each is probed once, by asking the kernel, never by guessing the runtime:
 *
 *   setfsuid/setfsgid  answer ENOSYS (a silently ignored call would leave file operations asked
 *                      for a user running as root); the daemon takes the user's effective ids
 *                      instead (util.c, fs_as).
 *   TIOCGPTPEER        answers ENOTTY; the PTY's peer is opened by its name instead.
 *   PTY hang-up        a master is never told that every slave has closed (no EIO, no POLLHUP);
 *                      once its process has exited, a PTY's output ends when nothing is left to
 *                      read (worker.c, proc_read).
 */
#include "envd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int kernel_lacks_fsuid(void) {
  static int lacks = -1;
  if (lacks < 0) {
    errno = 0;
    /* -1 changes nothing and answers the current fsuid where the call exists */
    lacks = syscall(SYS_setfsuid, -1) == -1 && errno == ENOSYS;
  }
  return lacks;
}

int pty_peer(int master) {
  int peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (peer >= 0 || (errno != ENOTTY && errno != EINVAL)) return peer;
  char name[64];
  if (ptsname_r(master, name, sizeof name) != 0) return -1;
  return open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

int kernel_lacks_pty_hangup(void) {
  static int lacks = -1;
  if (lacks >= 0) return lacks;
  lacks = 0;
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (master < 0) return lacks;
  int peer = unlockpt(master) == 0 ? pty_peer(master) : -1;
  if (peer >= 0) {
    close(peer);
    char c;
    ssize_t n;
    do n = read(master, &c, 1);
    while (n < 0 && errno == EINTR);
    /* Linux: EIO at once; gVisor: EAGAIN, as if a slave were still open */
    lacks = n < 0 && errno == EAGAIN;
  }
  close(master);
  return lacks;
}
