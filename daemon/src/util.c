/* Buffers, the payload reader, users from /etc/passwd and /etc/group, small helpers. */
#include "envd.h"

#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <time.h>
#include <unistd.h>

void die(const char *what) {
  dlog("fatal: %s: %s", what, strerror(errno));
  _exit(111);
}

void dlog(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)(sizeof line - 2);
  line[n++] = '\n';
  /* stderr is the container's log; a failed write there is nothing to act on */
  ssize_t w = write(2, "sandboxes-envd: ", 16);
  w = write(2, line, (size_t)n);
  (void)w;
}

int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int err_kind(int e) {
  switch (e) {
    case ENOENT: return E_NOT_FOUND;
    case EEXIST: return E_EXISTS;
    case ENOTDIR: return E_NOT_DIR;
    case EISDIR: return E_IS_DIR;
    case EACCES: case EPERM: case EROFS: return E_PERMISSION;
    case ENOSPC: case EDQUOT: return E_NO_SPACE;
    case EINVAL: case ENAMETOOLONG: case ELOOP: return E_INVALID;
    case EBUSY: case ETXTBSY: return E_BUSY;
    case ENOTEMPTY: return E_NOT_EMPTY;
    case EXDEV: return E_CROSS_DEVICE;
    case ENOTSUP: return E_UNSUPPORTED;
    case ECONNREFUSED: return E_REFUSED;
    default: return E_IO;
  }
}

/* ---- buffers ---- */

void buf_reserve(buf_t *b, size_t extra) {
  if (b->len + extra <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) die("out of memory");
  b->p = p;
  b->cap = cap;
}

void buf_free(buf_t *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

void put_u8(buf_t *b, uint8_t v) {
  buf_reserve(b, 1);
  b->p[b->len++] = v;
}

void put_u16(buf_t *b, uint16_t v) {
  buf_reserve(b, 2);
  b->p[b->len++] = (uint8_t)(v >> 8);
  b->p[b->len++] = (uint8_t)v;
}

void put_u32(buf_t *b, uint32_t v) {
  buf_reserve(b, 4);
  for (int i = 3; i >= 0; i--) b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

void put_i32(buf_t *b, int32_t v) { put_u32(b, (uint32_t)v); }

void put_i64(buf_t *b, int64_t v) {
  put_u32(b, (uint32_t)((uint64_t)v >> 32));
  put_u32(b, (uint32_t)(uint64_t)v);
}

void put_bytes(buf_t *b, const void *p, size_t n) {
  put_u32(b, (uint32_t)n);
  buf_reserve(b, n);
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
}

void put_str(buf_t *b, const char *s) { put_bytes(b, s ? s : "", s ? strlen(s) : 0); }

/* ---- reader ---- */

static int need(rd_t *r, size_t n) {
  if (r->bad || r->len - r->off < n) {
    r->bad = 1;
    return 0;
  }
  return 1;
}

uint8_t get_u8(rd_t *r) { return need(r, 1) ? r->p[r->off++] : 0; }

uint16_t get_u16(rd_t *r) {
  if (!need(r, 2)) return 0;
  uint16_t v = (uint16_t)((r->p[r->off] << 8) | r->p[r->off + 1]);
  r->off += 2;
  return v;
}

uint32_t get_u32(rd_t *r) {
  if (!need(r, 4)) return 0;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = (v << 8) | r->p[r->off++];
  return v;
}

int32_t get_i32(rd_t *r) { return (int32_t)get_u32(r); }

int64_t get_i64(rd_t *r) {
  uint64_t hi = get_u32(r), lo = get_u32(r);
  return (int64_t)((hi << 32) | lo);
}

const uint8_t *get_bytes(rd_t *r, size_t *n) {
  uint32_t len = get_u32(r);
  if (!need(r, len)) return NULL;
  const uint8_t *p = r->p + r->off;
  r->off += len;
  *n = len;
  return p;
}

char *get_str(rd_t *r) {
  size_t n = 0;
  const uint8_t *p = get_bytes(r, &n);
  if (!p) return NULL;
  if (memchr(p, 0, n)) {
    r->bad = 1;
    return NULL;
  }
  char *s = malloc(n + 1);
  if (!s) die("out of memory");
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

char **get_strlist(rd_t *r) {
  uint32_t n = get_u32(r);
  if (r->bad || n > r->len - r->off) { /* every string takes at least 4 bytes */
    r->bad = 1;
    return NULL;
  }
  char **l = calloc((size_t)n + 1, sizeof *l);
  if (!l) die("out of memory");
  for (uint32_t i = 0; i < n; i++) {
    l[i] = get_str(r);
    if (!l[i]) {
      free_strlist(l);
      return NULL;
    }
  }
  return l;
}

void free_strlist(char **l) {
  if (!l) return;
  for (char **p = l; *p; p++) free(*p);
  free(l);
}

/* ---- users ----
 * Our own reading of /etc/passwd and /etc/group: a static binary cannot use NSS, and a template
 * may have neither file (then numbers stand for themselves). */

static int split(char *line, char **f, int max) {
  int n = 0;
  f[n++] = line;
  for (char *p = line; *p && n < max; p++) {
    if (*p == ':') {
      *p = 0;
      f[n++] = p + 1;
    }
  }
  return n;
}

static int parse_num(const char *s, unsigned long *out) {
  if (!*s) return 0;
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (*end || errno || v > 0xfffffffful) return 0;
  *out = v;
  return 1;
}

/* finds a passwd entry by name (name != NULL) or by uid */
static int passwd_find(const char *name, uid_t uid, user_t *u) {
  FILE *f = fopen("/etc/passwd", "re");
  if (!f) return 0;
  char line[2048];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *fl[7];
    if (split(line, fl, 7) < 7) continue;
    unsigned long pu, pg;
    if (!parse_num(fl[2], &pu) || !parse_num(fl[3], &pg)) continue;
    if (name ? strcmp(fl[0], name) == 0 : pu == uid) {
      u->uid = (uid_t)pu;
      u->gid = (gid_t)pg;
      snprintf(u->name, sizeof u->name, "%s", fl[0]);
      snprintf(u->home, sizeof u->home, "%s", fl[5][0] ? fl[5] : "/");
      found = 1;
    }
  }
  fclose(f);
  return found;
}

static void groups_of(user_t *u) {
  u->ngroups = 0;
  u->groups[u->ngroups++] = u->gid;
  if (!u->name[0]) return;
  FILE *f = fopen("/etc/group", "re");
  if (!f) return;
  char line[8192];
  while (fgets(line, sizeof line, f) && u->ngroups < 64) {
    line[strcspn(line, "\n")] = 0;
    char *fl[4];
    if (split(line, fl, 4) < 4) continue;
    unsigned long g;
    if (!parse_num(fl[2], &g) || (gid_t)g == u->gid) continue;
    for (char *m = strtok(fl[3], ","); m; m = strtok(NULL, ",")) {
      if (strcmp(m, u->name) == 0) {
        u->groups[u->ngroups++] = (gid_t)g;
        break;
      }
    }
  }
  fclose(f);
}

int user_resolve(const char *spec, user_t *out) {
  memset(out, 0, sizeof *out);
  unsigned long num;
  if (!spec || !*spec) {
    uid_t me = geteuid();
    if (!passwd_find(NULL, me, out)) {
      out->uid = me;
      out->gid = getegid();
      snprintf(out->home, sizeof out->home, "/");
    }
  } else if (parse_num(spec, &num)) {
    if (!passwd_find(NULL, (uid_t)num, out)) {
      out->uid = (uid_t)num;
      out->gid = (gid_t)num;
      snprintf(out->home, sizeof out->home, "/");
    }
  } else if (!passwd_find(spec, 0, out)) {
    return -1;
  }
  groups_of(out);
  return 0;
}

static void name_of(const char *file, unsigned long id, char *out, size_t n) {
  FILE *f = fopen(file, "re");
  if (f) {
    char line[8192];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = 0;
      char *fl[4];
      unsigned long v;
      if (split(line, fl, 4) < 3 || !parse_num(fl[2], &v)) continue;
      if (v == id) {
        snprintf(out, n, "%s", fl[0]);
        fclose(f);
        return;
      }
    }
    fclose(f);
  }
  snprintf(out, n, "%lu", id);
}

void user_name(uid_t uid, char *out, size_t n) { name_of("/etc/passwd", uid, out, n); }
void group_name(gid_t gid, char *out, size_t n) { name_of("/etc/group", gid, out, n); }

void fs_as(const user_t *u) {
  if (getuid() != 0) return;
  if (setgroups((size_t)u->ngroups, u->groups) != 0) die("setgroups");
  if (kernel_lacks_fsuid()) {
    /* The daemon has one thread: it takes the user's effective ids and keeps root as its real and
     * saved ones to come back to. That user's processes still cannot signal or trace it (those
     * checks look at real and saved ids, and the change makes it non-dumpable). The group goes
     * first: once the effective uid is not 0, it can no longer change. */
    if (setresgid((gid_t)-1, u->gid, (gid_t)-1) != 0 || setresuid((uid_t)-1, u->uid, (uid_t)-1) != 0) die("setresuid");
    return;
  }
  setfsgid(u->gid);
  setfsuid(u->uid);
}

void fs_as_root(void) {
  if (getuid() != 0) return;
  if (kernel_lacks_fsuid()) {
    /* the uid first: back at an effective 0, the group may change again */
    if (setresuid((uid_t)-1, 0, (uid_t)-1) != 0 || setresgid((gid_t)-1, 0, (gid_t)-1) != 0) die("setresuid");
  } else {
    setfsuid(0);
    setfsgid(0);
  }
  if (setgroups(0, NULL) != 0) die("setgroups");
}
