/*
 * The worker: one connection to the host at a time (made again with backoff when it drops),
 * one poll loop, and the process table, which outlives connections.
 */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define OUT_HIGH (4u * 1024u * 1024u)
#define STDIN_QUEUE_MAX (8u * 1024u * 1024u)
#define RETAIN_MS 30000
#define MAX_POLL 4096

/* ---- the connection ---- */

static int conn = -1;
static buf_t out;
static size_t out_start;
static uint8_t *in;
static size_t in_len;

buf_t *out_buf(void) { return &out; }

int out_full(void) { return out.len - out_start > OUT_HIGH; }

size_t out_begin(uint8_t type, uint32_t stream, uint8_t flags) {
  size_t mark = out.len;
  put_u32(&out, 0);
  put_u32(&out, stream);
  put_u8(&out, type);
  put_u8(&out, flags);
  put_u16(&out, 0);
  return mark;
}

void out_end(size_t mark) {
  size_t len = out.len - mark - HDR_LEN;
  if (len > MAX_PAYLOAD) {
    uint32_t stream = ((uint32_t)out.p[mark + 4] << 24) | ((uint32_t)out.p[mark + 5] << 16)
        | ((uint32_t)out.p[mark + 6] << 8) | out.p[mark + 7];
    out.len = mark;
    send_error(stream, E_INVALID, 0, "the answer would be larger than a frame (%zu bytes)", len);
    return;
  }
  for (int i = 0; i < 4; i++) out.p[mark + (size_t)i] = (uint8_t)(len >> (8 * (3 - i)));
}

void send_ok(uint32_t stream) { out_end(out_begin(T_OK, stream, 0)); }

void send_error(uint32_t stream, int kind, int err, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t m = out_begin(T_ERROR, stream, 0);
  put_u16(&out, (uint16_t)kind);
  put_i32(&out, err);
  put_str(&out, msg);
  out_end(m);
}

/* ---- processes ---- */

typedef struct {
  uint32_t stream;
  uint64_t end;
} ack_t;

typedef struct proc {
  struct proc *next;
  pid_t pid;
  int out_fd, err_fd, in_fd; /* with a PTY: out_fd and in_fd are the master */
  int pty;
  int exited, status;
  int finished;
  int64_t done_at;
  uint32_t stream; /* attached stream, 0 for none */
  int64_t credit;
  char **argv, **env;
  char *cwd, *tag;
  buf_t inq; /* queued stdin bytes not yet written */
  size_t inq_off;
  uint64_t in_written, in_queued;
  ack_t *acks;
  size_t nacks;
  int close_after;
  uint32_t close_stream;
} proc_t;

static proc_t *procs;

static proc_t *proc_find(pid_t pid) {
  for (proc_t *p = procs; p; p = p->next)
    if (p->pid == pid) return p;
  return NULL;
}

static void proc_free(proc_t *p) {
  for (proc_t **pp = &procs; *pp; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  }
  if (p->out_fd >= 0) close(p->out_fd);
  if (p->err_fd >= 0) close(p->err_fd);
  if (p->in_fd >= 0 && p->in_fd != p->out_fd) close(p->in_fd);
  free_strlist(p->argv);
  free_strlist(p->env);
  free(p->cwd);
  free(p->tag);
  buf_free(&p->inq);
  free(p->acks);
  free(p);
}

static void stdin_fail(proc_t *p, int err) {
  for (size_t i = 0; i < p->nacks; i++)
    if (p->acks[i].stream) send_error(p->acks[i].stream, E_IO, err, "stdin of process %d: %s", p->pid, strerror(err));
  p->nacks = 0;
  p->inq.len = p->inq_off = 0;
  p->in_written = p->in_queued;
  if (p->close_after && p->close_stream) send_ok(p->close_stream);
  p->close_after = 0;
}

static void close_stdin_now(proc_t *p) {
  if (p->in_fd >= 0 && p->in_fd != p->out_fd) close(p->in_fd);
  p->in_fd = -1;
}

/* writes queued stdin; acknowledges what has reached the pipe */
static void stdin_flush(proc_t *p) {
  while (p->in_fd >= 0 && p->inq_off < p->inq.len) {
    ssize_t w = write(p->in_fd, p->inq.p + p->inq_off, p->inq.len - p->inq_off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) break;
    if (w < 0) {
      int e = errno;
      stdin_fail(p, e);
      close_stdin_now(p);
      return;
    }
    p->inq_off += (size_t)w;
    p->in_written += (uint64_t)w;
  }
  size_t k = 0;
  for (size_t i = 0; i < p->nacks; i++) {
    if (p->acks[i].end <= p->in_written) {
      if (p->acks[i].stream) send_ok(p->acks[i].stream);
    } else {
      p->acks[k++] = p->acks[i];
    }
  }
  p->nacks = k;
  if (p->inq_off == p->inq.len) {
    p->inq.len = p->inq_off = 0;
    if (p->close_after) {
      if (p->pty) {
        /* nothing to close: the master is the output too */
      } else {
        close_stdin_now(p);
      }
      if (p->close_stream) send_ok(p->close_stream);
      p->close_after = 0;
    }
  }
}

static void send_exit(proc_t *p) {
  size_t m = out_begin(T_PROC_EXIT, p->stream, 0);
  int st = p->status;
  put_u8(&out, WIFEXITED(st) ? 1 : 0);
  put_i32(&out, WIFEXITED(st) ? WEXITSTATUS(st) : 0);
  put_i32(&out, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  put_u8(&out, WIFSIGNALED(st) && WCOREDUMP(st) ? 1 : 0);
  out_end(m);
  p->stream = 0;
}

/* a process is finished once it has exited and every holder of its output has closed it */
static void proc_check(proc_t *p) {
  if (p->finished || !p->exited || p->out_fd >= 0 || p->err_fd >= 0) return;
  p->finished = 1;
  p->done_at = now_ms();
  if (p->in_fd >= 0) close_stdin_now(p);
  stdin_fail(p, EPIPE);
  if (p->stream) send_exit(p);
}

static void proc_read(proc_t *p, int which);

static void reap(void) {
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    proc_t *p = proc_find(pid);
    if (!p) continue;
    p->exited = 1;
    p->status = st;
    proc_check(p);
  }
}

/*
 * Where the kernel never hangs a PTY master up (gVisor), no poll says when an exited process's
 * PTY has been read to its end: read what its master holds, as far as the stream's credit goes,
 * and end it when it is empty. Returns whether one is still left to read.
 */
static int pty_drain(void) {
  int left = 0;
  for (proc_t *p = procs; p; p = p->next) {
    if (!p->pty || !p->exited || p->out_fd < 0 || !kernel_lacks_pty_hangup()) continue;
    if (!p->stream || (p->credit > 0 && !out_full())) proc_read(p, 1);
    if (p->out_fd >= 0) left = 1;
  }
  return left;
}

static void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/* reads one chunk of a process's output: into a frame when attached, else discarded */
static void proc_read(proc_t *p, int which) {
  int *fd = which == 2 ? &p->err_fd : &p->out_fd;
  uint8_t label = p->pty ? 3 : (uint8_t)which;
  ssize_t n;
  if (p->stream) {
    if (p->credit <= (int64_t)FRAME_COST) return;
    size_t want = (size_t)(p->credit - FRAME_COST) < CHUNK ? (size_t)(p->credit - FRAME_COST) : CHUNK;
    size_t m = out_begin(T_PROC_OUTPUT, p->stream, 0);
    put_u8(&out, label);
    buf_reserve(&out, want);
    do n = read(*fd, out.p + out.len, want);
    while (n < 0 && errno == EINTR);
    if (n > 0) {
      out.len += (size_t)n;
      p->credit -= n + (int64_t)FRAME_COST;
      out_end(m);
      return;
    }
    out.len = m;
  } else {
    static uint8_t sink[CHUNK];
    do n = read(*fd, sink, sizeof sink);
    while (n < 0 && errno == EINTR);
    if (n > 0) return;
  }
  /* where the kernel never hangs a master up (gVisor), an exited process's PTY ends once it is empty */
  if (n < 0 && errno == EAGAIN && !(p->pty && p->exited && kernel_lacks_pty_hangup())) return;
  /* end of output (EIO is how a PTY master says every slave is closed) */
  if (p->pty) {
    p->in_fd = -1;
    stdin_fail(p, EPIPE);
  }
  close(*fd);
  *fd = -1;
  proc_check(p);
}

static char **env_build(const user_t *u, char **given) {
  size_t n = 0;
  for (char **g = given; g && *g; g++) n++;
  char **env = calloc(n + 5, sizeof *env);
  if (!env) die("out of memory");
  size_t k = 0;
  char *base[4];
  if (asprintf(&base[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") < 0
      || asprintf(&base[1], "HOME=%s", u->home) < 0 || asprintf(&base[2], "USER=%s", u->name) < 0
      || asprintf(&base[3], "LOGNAME=%s", u->name) < 0)
    die("out of memory");
  for (int i = 0; i < 4; i++) env[k++] = base[i];
  for (char **g = given; g && *g; g++) {
    char *eq = strchr(*g, '=');
    size_t klen = eq ? (size_t)(eq - *g) : strlen(*g);
    char *copy = strdup(*g);
    if (!copy) die("out of memory");
    size_t i;
    for (i = 0; i < k; i++) {
      if (strncmp(env[i], *g, klen) == 0 && env[i][klen] == '=') break;
    }
    if (i < k) {
      free(env[i]);
      env[i] = copy;
    } else {
      env[k++] = copy;
    }
  }
  env[k] = NULL;
  return env;
}

/* runs a file the kernel cannot run (no #!) under /bin/sh, as execvp does; returns only on failure,
 * with errno ENOEXEC. Safe in a vfork child: its argument list lives on its own stack */
static void exec_sh(const char *file, char *const argv[], size_t argc, char *const env[]) {
  char *sh[argc + 2];
  sh[0] = "/bin/sh";
  sh[1] = (char *)file;
  for (size_t i = 1; i <= argc; i++) sh[i + 1] = argv[i];
  execve("/bin/sh", sh, env);
  errno = ENOEXEC;
}

/*
 * execvp(3) with the child's own environment: a name without a slash is looked for in the PATH
 * that env gives (the default when it gives none), and a file the kernel cannot run (ENOEXEC)
 * is run by /bin/sh. Safe in a vfork child: it writes nothing but its own stack and errno.
 * Returns only on failure, with errno set as execvp would.
 */
static void exec_search(char *const argv[], char *const env[]) {
  const char *file = argv[0];
  size_t argc = 0;
  while (argv[argc]) argc++;
  if (argc > 65536) { /* the /bin/sh argument list below lives on the stack */
    errno = E2BIG;
    return;
  }
  if (strchr(file, '/')) {
    execve(file, argv, env);
    if (errno == ENOEXEC) exec_sh(file, argv, argc, env);
    return;
  }
  const char *path = "/bin:/usr/bin"; /* the C library's default when no PATH is set */
  for (char *const *e = env; *e; e++) {
    if (strncmp(*e, "PATH=", 5) == 0) {
      path = *e + 5;
      break;
    }
  }
  size_t flen = strlen(file);
  int denied = 0;
  char full[4096];
  for (const char *p = path;; p++) {
    const char *colon = strchr(p, ':');
    size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
    if (dlen + 1 + flen + 1 <= sizeof full) {
      size_t k = 0;
      if (dlen == 0) {
        full[k++] = '.'; /* an empty entry is the current folder, as execvp takes it */
      } else {
        memcpy(full, p, dlen);
        k = dlen;
      }
      full[k++] = '/';
      memcpy(full + k, file, flen + 1);
      execve(full, argv, env);
      if (errno == ENOEXEC) {
        exec_sh(full, argv, argc, env);
        return;
      }
      if (errno == EACCES) denied = 1;
      else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && errno != ENAMETOOLONG && errno != ESTALE
               && errno != ENODEV && errno != ETIMEDOUT)
        return;
    }
    if (!colon) break;
    p = colon;
  }
  errno = denied ? EACCES : ENOENT;
}

/* PROC_START: argv, env, cwd, user, tag, u8 flags (1 PTY, 2 stdin open), u16 cols, u16 rows */
static void proc_start(uint32_t s, rd_t *r) {
  char **argv = get_strlist(r), **given = get_strlist(r);
  char *cwd = get_str(r), *us = get_str(r), *tag = get_str(r);
  uint8_t flags = get_u8(r);
  uint16_t cols = get_u16(r), rows = get_u16(r);
  user_t u;
  int pty = flags & 1, want_stdin = (flags & 2) != 0;
  int fds[6] = {-1, -1, -1, -1, -1, -1}; /* in r/w, out r/w, err r/w */
  int master = -1, slave = -1, errp[2] = {-1, -1};
  char **env = NULL;
  char *dir = NULL;
  if (r->bad || !argv || !given || !cwd || !us || !tag) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
    goto out;
  }
  if (!argv[0] || !argv[0][0]) {
    send_error(s, E_INVALID, 0, "no command");
    goto out;
  }
  if (user_resolve(us, &u) != 0) {
    send_error(s, E_UNKNOWN_USER, 0, "no such user: %s", us);
    goto out;
  }
  env = env_build(&u, given);
  dir = *cwd ? resolve_path(&u, cwd) : strdup(u.home);
  if (!dir) die("out of memory");
  if (pty) {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || unlockpt(master) != 0) goto sysfail;
    slave = pty_peer(master);
    if (slave < 0) goto sysfail;
    struct winsize ws = {.ws_row = rows ? rows : 24, .ws_col = cols ? cols : 80};
    ioctl(master, TIOCSWINSZ, &ws);
  } else {
    if ((want_stdin && pipe2(fds, O_CLOEXEC) != 0) || pipe2(fds + 2, O_CLOEXEC) != 0 || pipe2(fds + 4, O_CLOEXEC) != 0)
      goto sysfail;
    fcntl(fds[3], F_SETPIPE_SZ, 1 << 20);
  }
  if (pipe2(errp, O_CLOEXEC) != 0) goto sysfail;
  /* vfork: the child borrows this process's memory until it execs, so nothing is copied for it
     and nothing torn down at its exec (with fork, the start took 0.6-0.7 ms of the daemon's time
     here; with vfork about 0.5 ms). Until then it may write nothing this process keeps (no
     malloc, no globals such as environ) and calls only system calls; every signal is blocked
     around it, so no handler runs in the child. */
  sigset_t all, was;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &was);
  pid_t pid = vfork();
  if (pid == 0) {
    int stage = 0;
    for (int sig = 1; sig < NSIG; sig++) {
      struct sigaction dfl = {.sa_handler = SIG_DFL};
      syscall(SYS_rt_sigaction, sig, &dfl, NULL, _NSIG / 8);
    }
    sigset_t none;
    sigemptyset(&none);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, _NSIG / 8);
    setsid();
    if (pty) {
      ioctl(slave, TIOCSCTTY, 0);
      dup2(slave, 0);
      dup2(slave, 1);
      dup2(slave, 2);
    } else {
      int nul = -1;
      if (!want_stdin) nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (want_stdin) dup2(fds[0], 0);
      else if (nul >= 0) dup2(nul, 0);
      else close(0);
      dup2(fds[3], 1);
      dup2(fds[5], 2);
    }
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    if (getuid() == 0) {
      stage = 1;
      /* the raw calls: the C library's would set the ids of every thread of the process it
         thinks it is in */
      if (syscall(SYS_setgroups, (size_t)u.ngroups, u.groups) != 0 || syscall(SYS_setgid, u.gid) != 0
          || syscall(SYS_setuid, u.uid) != 0)
        goto child_fail;
    }
    stage = 2;
    if (chdir(dir) != 0) goto child_fail;
    stage = 3;
    exec_search(argv, env);
  child_fail: {
    int msg[2] = {stage, errno};
    ssize_t w = write(errp[1], msg, sizeof msg);
    (void)w;
    _exit(127);
  }
  }
  sigprocmask(SIG_SETMASK, &was, NULL);
  if (pid < 0) goto sysfail;
  close(errp[1]);
  errp[1] = -1;
  int msg[2];
  ssize_t got;
  do got = read(errp[0], msg, sizeof msg);
  while (got < 0 && errno == EINTR);
  if (got == (ssize_t)sizeof msg) {
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    int e = msg[1];
    if (msg[0] == 2) send_error(s, E_INVALID, e, "cwd '%s' does not exist or cannot be entered: %s", dir, strerror(e));
    else if (msg[0] == 3) send_error(s, err_kind(e), e, "could not run %s: %s", argv[0], strerror(e));
    else send_error(s, E_PERMISSION, e, "could not become user %s: %s", us, strerror(e));
    goto out;
  }
  proc_t *p = calloc(1, sizeof *p);
  if (!p) die("out of memory");
  p->pid = pid;
  p->pty = pty;
  if (pty) {
    p->out_fd = p->in_fd = master;
    p->err_fd = -1;
    master = -1;
  } else {
    p->in_fd = want_stdin ? fds[1] : -1;
    p->out_fd = fds[2];
    p->err_fd = fds[4];
    fds[1] = fds[2] = fds[4] = -1;
  }
  if (p->in_fd >= 0) set_nonblock(p->in_fd);
  set_nonblock(p->out_fd);
  if (p->err_fd >= 0) set_nonblock(p->err_fd);
  p->stream = s;
  p->credit = INITIAL_CREDIT;
  p->argv = argv;
  p->env = given;
  p->cwd = dir;
  p->tag = tag;
  argv = given = NULL;
  dir = tag = NULL;
  p->next = procs;
  procs = p;
  size_t m = out_begin(T_PROC_STARTED, s, 0);
  put_u32(&out, (uint32_t)pid);
  out_end(m);
  goto out;
sysfail: {
  int e = errno;
  send_error(s, err_kind(e), e, "could not start %s: %s", argv[0], strerror(e));
}
out:
  for (int i = 0; i < 6; i++)
    if (fds[i] >= 0) close(fds[i]);
  if (master >= 0) close(master);
  if (slave >= 0) close(slave);
  if (errp[0] >= 0) close(errp[0]);
  if (errp[1] >= 0) close(errp[1]);
  free_strlist(argv);
  free_strlist(given);
  free_strlist(env);
  free(cwd);
  free(us);
  free(tag);
  free(dir);
}

static proc_t *proc_arg(uint32_t s, rd_t *r) {
  uint32_t pid = get_u32(r);
  if (r->bad) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
    return NULL;
  }
  proc_t *p = proc_find((pid_t)pid);
  if (!p) send_error(s, E_NOT_FOUND, 0, "process with pid %u not found", pid);
  return p;
}

static void proc_attach(uint32_t s, rd_t *r) {
  proc_t *p = proc_arg(s, r);
  if (!p) return;
  if (p->stream) {
    send_error(s, E_BUSY, 0, "process %d is already attached", p->pid);
    return;
  }
  p->stream = s;
  p->credit = INITIAL_CREDIT;
  size_t m = out_begin(T_PROC_STARTED, s, 0);
  put_u32(&out, (uint32_t)p->pid);
  out_end(m);
  if (p->finished) send_exit(p);
}

static void proc_input(uint32_t s, rd_t *r) {
  proc_t *p = proc_arg(s, r);
  if (!p) return;
  size_t n = 0;
  const uint8_t *data = get_bytes(r, &n);
  if (!data) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if (p->in_fd < 0 || p->close_after) {
    send_error(s, E_INVALID, 0, "stdin of process %d is closed", p->pid);
  } else if (p->inq.len - p->inq_off + n > STDIN_QUEUE_MAX) {
    send_error(s, E_BUSY, 0, "process %d is not reading its stdin", p->pid);
  } else {
    buf_reserve(&p->inq, n);
    memcpy(p->inq.p + p->inq.len, data, n);
    p->inq.len += n;
    p->in_queued += n;
    p->acks = realloc(p->acks, (p->nacks + 1) * sizeof *p->acks);
    if (!p->acks) die("out of memory");
    p->acks[p->nacks++] = (ack_t){s, p->in_queued};
    stdin_flush(p);
  }
}

static void proc_close_stdin(uint32_t s, rd_t *r) {
  proc_t *p = proc_arg(s, r);
  if (!p) return;
  if (p->pty) {
    send_error(s, E_INVALID, 0, "a PTY has no stdin of its own to close (send 0x04)");
  } else if (p->in_fd < 0 || p->close_after) {
    send_ok(s);
  } else {
    p->close_after = 1;
    p->close_stream = s;
    stdin_flush(p);
  }
}

static void proc_signal(uint32_t s, rd_t *r) {
  proc_t *p = proc_arg(s, r);
  if (!p) return;
  int32_t sig = get_i32(r);
  uint8_t group = get_u8(r);
  if (r->bad || sig < 0 || sig >= NSIG) {
    send_error(s, E_INVALID, 0, "bad signal %d", sig);
  } else if (!group && p->exited) {
    send_error(s, E_NOT_FOUND, ESRCH, "process with pid %d has exited", p->pid);
  } else if (kill(group ? -p->pid : p->pid, sig) != 0) {
    int e = errno;
    send_error(s, e == ESRCH ? E_NOT_FOUND : err_kind(e), e, "signal to %d: %s", p->pid, strerror(e));
  } else {
    send_ok(s);
  }
}

static void proc_resize(uint32_t s, rd_t *r) {
  proc_t *p = proc_arg(s, r);
  if (!p) return;
  uint16_t cols = get_u16(r), rows = get_u16(r);
  struct winsize ws = {.ws_row = rows, .ws_col = cols};
  if (r->bad) send_error(s, E_PROTOCOL, 0, "malformed request");
  else if (!p->pty || p->out_fd < 0) send_error(s, E_INVALID, 0, "process %d has no PTY", p->pid);
  else if (ioctl(p->out_fd, TIOCSWINSZ, &ws) != 0) send_error(s, E_IO, errno, "resize: %s", strerror(errno));
  else send_ok(s);
}

/* PROC_INFO: pid, tag, u8 flags (1 PTY, 2 stdin open), argv, env, cwd */
static void proc_list(uint32_t s) {
  for (proc_t *p = procs; p; p = p->next) {
    if (p->finished) continue;
    size_t m = out_begin(T_PROC_INFO, s, 0);
    put_u32(&out, (uint32_t)p->pid);
    put_str(&out, p->tag);
    put_u8(&out, (uint8_t)((p->pty ? 1 : 0) | (p->in_fd >= 0 ? 2 : 0)));
    size_t n = 0;
    for (char **a = p->argv; *a; a++) n++;
    put_u32(&out, (uint32_t)n);
    for (char **a = p->argv; *a; a++) put_str(&out, *a);
    n = 0;
    for (char **a = p->env; *a; a++) n++;
    put_u32(&out, (uint32_t)n);
    for (char **a = p->env; *a; a++) put_str(&out, *a);
    put_str(&out, p->cwd);
    out_end(m);
  }
  send_ok(s);
}

/* ---- connection life ---- */

static void disconnect(const char *why) {
  if (conn < 0) return;
  dlog("connection to the host closed: %s", why);
  close(conn);
  conn = -1;
  out.len = out_start = 0;
  in_len = 0;
  files_reset();
  ports_reset();
  for (proc_t *p = procs; p; p = p->next) {
    p->stream = 0;
    for (size_t i = 0; i < p->nacks; i++) p->acks[i].stream = 0;
    p->close_stream = 0;
  }
}

static int try_connect(const char *path, uint32_t generation) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  set_nonblock(fd);
  conn = fd;
  out.len = out_start = 0;
  in_len = 0;
  size_t m = out_begin(T_HELLO, 0, 0);
  put_u16(&out, PROTO_VERSION);
  put_u32(&out, (uint32_t)getpid());
  put_u32(&out, generation);
  put_u32(&out, MAX_PAYLOAD);
  put_u32(&out, WINDOW);
  put_u32(&out, INITIAL_CREDIT);
  put_u32(&out, FRAME_COST);
  out_end(m);
  dlog("connected to the host at %s (worker %d, generation %u)", path, getpid(), generation);
  return 0;
}

static void flush_out(void) {
  while (conn >= 0 && out_start < out.len) {
    ssize_t w = send(conn, out.p + out_start, out.len - out_start, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) break;
    if (w < 0) {
      disconnect(strerror(errno));
      return;
    }
    out_start += (size_t)w;
  }
  if (out_start == out.len) {
    out.len = out_start = 0;
  } else if (out_start > (1u << 20) && out_start > out.len / 2) {
    memmove(out.p, out.p + out_start, out.len - out_start);
    out.len -= out_start;
    out_start = 0;
  }
}

static proc_t *proc_by_stream(uint32_t s) {
  for (proc_t *p = procs; p; p = p->next)
    if (p->stream == s) return p;
  return NULL;
}

/* one frame from the host; returns -1 when the connection must be dropped */
static int dispatch(uint8_t type, uint8_t flags, uint32_t s, const uint8_t *payload, uint32_t len) {
  rd_t r = {payload, len, 0, 0};
  if (s == 0) return -1; /* stream 0 is the connection's own */
  switch (type) {
    case T_PING: send_ok(s); break;
    case T_CANCEL: {
      if (!files_cancel(s) && !ports_cancel(s)) {
        proc_t *p = proc_by_stream(s);
        if (p) p->stream = 0;
      }
      break;
    }
    case T_CREDIT: {
      uint32_t n = get_u32(&r);
      if (r.bad) return -1;
      if (!files_credit(s, n) && !ports_credit(s, n)) {
        proc_t *p = proc_by_stream(s);
        if (p) p->credit += n;
      }
      break;
    }
    case T_PROC_START: proc_start(s, &r); break;
    case T_PROC_ATTACH: proc_attach(s, &r); break;
    case T_PROC_INPUT: proc_input(s, &r); break;
    case T_PROC_CLOSE_STDIN: proc_close_stdin(s, &r); break;
    case T_PROC_SIGNAL: proc_signal(s, &r); break;
    case T_PROC_RESIZE: proc_resize(s, &r); break;
    case T_PROC_LIST: proc_list(s); break;
    case T_FILE_STAT: f_stat(s, &r); break;
    case T_FILE_STATFS: f_statfs(s, &r); break;
    case T_FILE_LIST: f_list(s, &r); break;
    case T_FILE_READ: f_read(s, &r); break;
    case T_FILE_WRITE: f_write(s, &r); break;
    case T_FILE_DATA: return f_write_data(s, flags, payload, len);
    case T_FILE_MKDIR: f_mkdir(s, &r); break;
    case T_FILE_REMOVE: f_remove(s, &r); break;
    case T_FILE_RENAME: f_rename(s, &r); break;
    case T_XATTR_GET: f_xattr_get(s, &r); break;
    case T_XATTR_SET: f_xattr_set(s, &r); break;
    case T_WATCH: f_watch(s, &r); break;
    case T_TCP_CONNECT: t_connect(s, &r); break;
    case T_TCP_SEND: return t_send(s, flags, payload, len);
    default: return -1;
  }
  return 0;
}

/* handles the complete frames in the input buffer, as far as the output buffer has room */
static void parse_in(void) {
  size_t off = 0;
  while (conn >= 0 && !out_full() && in_len - off >= HDR_LEN) {
    const uint8_t *h = in + off;
    uint32_t len = ((uint32_t)h[0] << 24) | ((uint32_t)h[1] << 16) | ((uint32_t)h[2] << 8) | h[3];
    uint32_t s = ((uint32_t)h[4] << 24) | ((uint32_t)h[5] << 16) | ((uint32_t)h[6] << 8) | h[7];
    if (len > MAX_PAYLOAD || h[10] || h[11]) {
      disconnect("malformed frame from the host");
      return;
    }
    if (in_len - off < HDR_LEN + len) break;
    if (dispatch(h[8], h[9], s, h + HDR_LEN, len) != 0) {
      disconnect("protocol violation by the host");
      return;
    }
    off += HDR_LEN + len;
  }
  if (conn >= 0 && off > 0) {
    memmove(in, in + off, in_len - off);
    in_len -= off;
  }
}

/* a whole frame is waiting in the input buffer */
static int in_ready(void) {
  if (conn < 0 || in_len < HDR_LEN) return 0;
  uint32_t len = ((uint32_t)in[0] << 24) | ((uint32_t)in[1] << 16) | ((uint32_t)in[2] << 8) | in[3];
  return len > MAX_PAYLOAD || in_len >= HDR_LEN + len;
}

static void read_conn(void) {
  while (conn >= 0 && !out_full() && in_len < HDR_LEN + MAX_PAYLOAD) {
    ssize_t n = read(conn, in + in_len, HDR_LEN + MAX_PAYLOAD - in_len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      disconnect(n == 0 ? "end of stream" : strerror(errno));
      return;
    }
    in_len += (size_t)n;
    parse_in();
  }
}

int worker_main(const char *socket_path, uint32_t generation) {
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) die("signalfd");
  in = malloc(HDR_LEN + MAX_PAYLOAD);
  if (!in) die("out of memory");
  int64_t next_try = 0, backoff = 20;
  int drain_left = 0;
  static struct pollfd pfd[MAX_POLL];
  static proc_t *owner[MAX_POLL];
  static int which[MAX_POLL];
  for (;;) {
    int64_t now = now_ms();
    if (conn < 0 && now >= next_try) {
      if (try_connect(socket_path, generation) == 0) {
        backoff = 20;
      } else {
        next_try = now + backoff;
        backoff = backoff * 2 > 500 ? 500 : backoff * 2;
      }
    }
    int n = 0;
    pfd[n] = (struct pollfd){.fd = sfd, .events = POLLIN};
    owner[n++] = NULL;
    int conn_at = -1;
    if (conn >= 0) {
      conn_at = n;
      int room = !out_full() && in_len < HDR_LEN + MAX_PAYLOAD;
      pfd[n] = (struct pollfd){.fd = conn, .events = (short)((room ? POLLIN : 0) | (out_start < out.len ? POLLOUT : 0))};
      owner[n++] = NULL;
    }
    for (proc_t *p = procs; p && n < MAX_POLL - 3; p = p->next) {
      int can_out = !p->stream || (p->credit > (int64_t)FRAME_COST && !out_full());
      if (p->out_fd >= 0) {
        short ev = (short)(can_out ? POLLIN : 0);
        if (p->pty && p->inq_off < p->inq.len) ev |= POLLOUT;
        if (ev) {
          pfd[n] = (struct pollfd){.fd = p->out_fd, .events = ev};
          owner[n] = p;
          which[n++] = 1;
        }
      }
      if (p->err_fd >= 0 && can_out) {
        pfd[n] = (struct pollfd){.fd = p->err_fd, .events = POLLIN};
        owner[n] = p;
        which[n++] = 2;
      }
      if (!p->pty && p->in_fd >= 0 && p->inq_off < p->inq.len) {
        pfd[n] = (struct pollfd){.fd = p->in_fd, .events = POLLOUT};
        owner[n] = p;
        which[n++] = 0;
      }
    }
    int files_at = n;
    int nf = out_full() ? 0 : files_pollfds(pfd + n, MAX_POLL - n);
    n += nf;
    if (!out_full()) parse_in();
    /* after parse_in, which may end (and close) forwarded connections */
    int ports_at = n;
    int np = ports_pollfds(pfd + n, MAX_POLL - n, out_full());
    n += np;
    int timeout = files_work() || (in_ready() && !out_full()) ? 0 : 1000;
    /* parse_in and files_work queue frames after the connection's events were chosen (a read's
       OK after its last chunk, a listing's last entries): the wait ends when the socket takes
       them, not after the timeout */
    if (conn_at >= 0 && out_start < out.len) pfd[conn_at].events |= POLLOUT;
    if (drain_left && timeout > 50) timeout = 50; /* a PTY read to its end without a hang-up (gVisor) */
    if (conn < 0) {
      int64_t wait = next_try - now_ms();
      if (wait < timeout) timeout = wait < 0 ? 0 : (int)wait;
    }
    int rc = poll(pfd, (nfds_t)n, timeout);
    if (rc < 0 && errno != EINTR) die("poll");
    if (rc > 0) {
      if (pfd[0].revents) {
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) > 0) {
        }
      }
      for (int i = 0; i < files_at; i++) {
        proc_t *p = owner[i];
        if (!p || !pfd[i].revents) continue;
        if (which[i] == 0 || (pfd[i].revents & POLLOUT)) stdin_flush(p);
        if (which[i] != 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
          int *fd = which[i] == 2 ? &p->err_fd : &p->out_fd;
          if (*fd >= 0) proc_read(p, which[i]);
        }
      }
      files_events(pfd + files_at, nf);
      ports_events(pfd + ports_at, np);
      if (conn_at >= 0 && conn >= 0 && (pfd[conn_at].revents & (POLLIN | POLLHUP | POLLERR))) read_conn();
    }
    reap();
    drain_left = pty_drain();
    int64_t t = now_ms();
    proc_t *next;
    for (proc_t *p = procs; p; p = next) {
      next = p->next;
      if (p->finished && !p->stream && t - p->done_at > RETAIN_MS) proc_free(p);
    }
    flush_out();
  }
}
