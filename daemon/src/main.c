/*
 * sandboxes-envd entry point.
 *
 *   envd supervise [SOCKET]   the container's command and init (PID 1): (re)starts the worker
 *                             whenever it dies and reaps every orphan; nothing inside the
 *                             sandbox can end it (the kernel ignores SIGKILL from inside)
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
static int is_init;

/* SIGTERM or SIGINT. As the container's init (PID 1) only a signal from outside the sandbox's
 * PID namespace (si_pid 0: docker stop) ends it; one from inside, where root could send it, is
 * ignored, as SIGKILL from inside is by the kernel. Otherwise the worker is stopped with it. */
static void on_stop(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  if (is_init && si && si->si_pid != 0) return;
  stopping = 1;
  if (worker_pid > 0) kill(worker_pid, sig);
}

/* Waits for the worker to end, reaping every other child meanwhile: as PID 1, every orphan of
 * the sandbox is ours to reap. */
static int wait_worker(pid_t pid) {
  int st = 0;
  for (;;) {
    pid_t got = waitpid(-1, &st, 0);
    if (got == pid) return st;
    if (got < 0 && errno == ECHILD) return 0; /* cannot happen while the worker lives */
    if (got < 0 && errno != EINTR) die("waitpid");
  }
}

int supervise_main(const char *socket_path) {
  is_init = getpid() == 1;
  prctl(PR_SET_NAME, "envd-supervise", 0, 0, 0);
  struct sigaction sa = {.sa_sigaction = on_stop, .sa_flags = SA_SIGINFO};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  uint32_t generation = 0;
  int64_t delay = 0;
  while (!stopping) {
    int64_t started = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
      /* out of pids or memory for a moment: try again rather than end the sandbox */
      dlog("fork: %s; trying again", strerror(errno));
      struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000000};
      nanosleep(&ts, NULL);
      while (waitpid(-1, NULL, WNOHANG) > 0) {
      }
      continue;
    }
    if (pid == 0) {
      struct sigaction dfl = {.sa_handler = SIG_DFL};
      sigemptyset(&dfl.sa_mask);
      sigaction(SIGTERM, &dfl, NULL);
      sigaction(SIGINT, &dfl, NULL);
      prctl(PR_SET_NAME, "envd-worker", 0, 0, 0);
      _exit(worker_main(socket_path, generation));
    }
    worker_pid = pid;
    int st = wait_worker(pid);
    worker_pid = 0;
    if (stopping) break;
    if (WIFSIGNALED(st)) dlog("worker %d killed by signal %d; starting another", pid, WTERMSIG(st));
    else dlog("worker %d exited with %d; starting another", pid, WEXITSTATUS(st));
    generation++;
    /* a worker that dies at once is restarted ever more slowly, up to 2 s apart */
    delay = now_ms() - started > 10000 ? 0 : (delay == 0 ? 50 : (delay * 2 > 2000 ? 2000 : delay * 2));
    int64_t until = now_ms() + delay;
    while (!stopping && now_ms() < until) {
      /* orphans keep dying meanwhile: reap them while waiting */
      while (waitpid(-1, NULL, WNOHANG) > 0) {
      }
      struct timespec ts = {.tv_sec = 0, .tv_nsec = 10000000};
      nanosleep(&ts, NULL);
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
