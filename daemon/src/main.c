/*
 * sandboxes-envd entry point.
 *
 *   envd supervise [SOCKET]   the container's command: (re)starts the worker whenever it dies
 *   envd worker [SOCKET]      serves the host over the unix socket at SOCKET
 *   envd probe [--exit N] [ARG...]   prints who and where it runs as, then exits with N
 *   envd version
 *
 * SOCKET defaults to /run/sandboxes/envd.sock, the host folder the runtime mounts read-only.
 */
#include "envd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/sandboxes/envd.sock"

static volatile sig_atomic_t stopping;
static volatile pid_t worker_pid;

static void on_stop(int sig) {
  stopping = 1;
  if (worker_pid > 0) kill(worker_pid, sig);
}

int supervise_main(const char *socket_path) {
  prctl(PR_SET_NAME, "envd-supervise", 0, 0, 0);
  struct sigaction sa = {.sa_handler = on_stop};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  uint32_t generation = 0;
  int64_t delay = 0;
  while (!stopping) {
    int64_t started = now_ms();
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      signal(SIGTERM, SIG_DFL);
      signal(SIGINT, SIG_DFL);
      prctl(PR_SET_NAME, "envd-worker", 0, 0, 0);
      _exit(worker_main(socket_path, generation));
    }
    worker_pid = pid;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
      if (errno != EINTR) die("waitpid");
    }
    worker_pid = 0;
    if (stopping) break;
    if (WIFSIGNALED(st)) dlog("worker %d killed by signal %d; starting another", pid, WTERMSIG(st));
    else dlog("worker %d exited with %d; starting another", pid, WEXITSTATUS(st));
    generation++;
    /* a worker that dies at once is restarted ever more slowly, up to 2 s apart */
    delay = now_ms() - started > 10000 ? 0 : (delay == 0 ? 50 : (delay * 2 > 2000 ? 2000 : delay * 2));
    struct timespec ts = {.tv_sec = delay / 1000, .tv_nsec = (delay % 1000) * 1000000};
    while (!stopping && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
  }
  return 0;
}

static int probe(int argc, char **argv) {
  int code = 0;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "?");
  const char *home = getenv("HOME");
  printf("uid=%u gid=%u cwd=%s home=%s", getuid(), getgid(), cwd, home ? home : "");
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc) code = atoi(argv[++i]);
    else printf(" %s", argv[i]);
  }
  printf("\n");
  return code;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  const char *sock = argc > 2 ? argv[2] : DEFAULT_SOCKET;
  if (strcmp(mode, "supervise") == 0) return supervise_main(sock);
  if (strcmp(mode, "worker") == 0) return worker_main(sock, 0);
  if (strcmp(mode, "probe") == 0) return probe(argc - 2, argv + 2);
  if (strcmp(mode, "version") == 0) {
    printf("sandboxes-envd protocol %d\n", PROTO_VERSION);
    return 0;
  }
  fprintf(stderr, "usage: %s supervise|worker [SOCKET] | probe [--exit N] [ARG...] | version\n", argv[0]);
  return 2;
}
