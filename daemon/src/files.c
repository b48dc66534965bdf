/*
 * The file system side of the daemon: stat, list, read, atomic write, mkdir -p, remove, rename,
 * extended attributes and inotify watches. Every operation runs under the requesting user's
 * file-system identity (setfsuid/setfsgid and their groups), so the kernel checks permissions as
 * it would for that user, and what gets created (parents included) belongs to that user.
 */
#include "worker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#define META_PREFIX "user.e2b."
#define WATCH_PENDING_MAX (256u * 1024u)
#define MAX_DEPTH 64

char *resolve_path(const user_t *u, const char *path) {
  char *out = NULL;
  int n;
  if (path[0] == '/') {
    out = strdup(path);
  } else if (path[0] == '~' && (path[1] == 0 || path[1] == '/')) {
    n = asprintf(&out, "%s%s", u->home, path + 1);
    if (n < 0) out = NULL;
  } else {
    n = asprintf(&out, "%s/%s", strcmp(u->home, "/") == 0 ? "" : u->home, path);
    if (n < 0) out = NULL;
  }
  if (!out) die("out of memory");
  /* strip trailing slashes, keeping "/" */
  size_t len = strlen(out);
  while (len > 1 && out[len - 1] == '/') out[--len] = 0;
  return out;
}

static int ftype(mode_t m) {
  if (S_ISREG(m)) return FT_FILE;
  if (S_ISDIR(m)) return FT_DIR;
  if (S_ISLNK(m)) return FT_SYMLINK;
  return FT_OTHER;
}

/* the user.e2b.* attributes of a path, as (full name, value) pairs */
static void put_meta(buf_t *b, const char *path, const char *prefix) {
  size_t count_at = b->len;
  put_u32(b, 0);
  uint32_t count = 0;
  char names[65536];
  ssize_t n = listxattr(path, names, sizeof names);
  size_t plen = strlen(prefix);
  for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
    const char *name = names + i;
    if (strncmp(name, prefix, plen) != 0) continue;
    char value[65536];
    ssize_t v = getxattr(path, name, value, sizeof value);
    if (v < 0) continue;
    put_str(b, name);
    put_bytes(b, value, (size_t)v);
    count++;
  }
  for (int i = 0; i < 4; i++) b->p[count_at + (size_t)i] = (uint8_t)(count >> (8 * (3 - i)));
}

/* ENTRY: name, path, type, mode, size, uid, gid, owner, group, mtime s, mtime ns, symlink target,
 * target type, target mode, target size, metadata pairs */
static void put_entry(buf_t *b, const char *name, const char *shown, const char *real, const struct stat *st) {
  char owner[256], group[256];
  user_name(st->st_uid, owner, sizeof owner);
  group_name(st->st_gid, group, sizeof group);
  put_str(b, name);
  put_str(b, shown);
  put_u8(b, (uint8_t)ftype(st->st_mode));
  put_u32(b, (uint32_t)st->st_mode);
  put_i64(b, (int64_t)st->st_size);
  put_u32(b, st->st_uid);
  put_u32(b, st->st_gid);
  put_str(b, owner);
  put_str(b, group);
  put_i64(b, (int64_t)st->st_mtim.tv_sec);
  put_u32(b, (uint32_t)st->st_mtim.tv_nsec);
  if (S_ISLNK(st->st_mode)) {
    char *target = realpath(real, NULL);
    struct stat ts;
    if (target && stat(real, &ts) == 0) {
      put_str(b, target);
      put_u8(b, (uint8_t)ftype(ts.st_mode));
      put_u32(b, (uint32_t)ts.st_mode);
      put_i64(b, (int64_t)ts.st_size);
    } else {
      char link[4096];
      ssize_t n = readlink(real, link, sizeof link - 1);
      link[n < 0 ? 0 : n] = 0;
      put_str(b, link);
      put_u8(b, 0);
      put_u32(b, 0);
      put_i64(b, 0);
    }
    free(target);
  } else {
    put_str(b, "");
    put_u8(b, 0);
    put_u32(b, 0);
    put_i64(b, 0);
  }
  put_meta(b, real, META_PREFIX);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s && s[1] ? s + 1 : path;
}

static void send_entry(uint32_t s, const char *shown, const char *real, const struct stat *st) {
  size_t m = out_begin(T_ENTRY, s, 0);
  put_entry(out_buf(), base_name(shown), shown, real, st);
  out_end(m);
}

/* common start of a request: path and user; 0 when the caller may go on (as the user) */
static int begin(uint32_t s, rd_t *r, char **path, user_t *u) {
  char *p = get_str(r);
  char *us = get_str(r);
  int rc = -1;
  if (r->bad || !p || !us) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if (!*p) {
    send_error(s, E_INVALID, 0, "empty path");
  } else if (user_resolve(us, u) != 0) {
    send_error(s, E_UNKNOWN_USER, 0, "no such user: %s", us);
  } else {
    *path = resolve_path(u, p);
    if (strlen(*path) > MAX_NAME) {
      /* an answer could not name it: the host accepts no longer path */
      send_error(s, E_INVALID, ENAMETOOLONG, "the path is longer than %u bytes", MAX_NAME);
      free(*path);
      *path = NULL;
    } else {
      fs_as(u);
      rc = 0;
    }
  }
  free(p);
  free(us);
  return rc;
}

static void fail(uint32_t s, const char *what, const char *path) {
  int e = errno;
  send_error(s, err_kind(e), e, "%s %s: %s", what, path, strerror(e));
}

void f_stat(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  struct stat st;
  if (lstat(path, &st) != 0) {
    fail(s, "stat", path);
  } else {
    send_entry(s, path, path, &st);
    send_ok(s);
  }
  fs_as_root();
  free(path);
}

/* the file system holding a path, as df counts it: its size, what is used and what the user may
 * still fill, in bytes */
void f_statfs(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  struct statvfs v;
  if (statvfs(path, &v) != 0) {
    fail(s, "statfs", path);
  } else {
    int64_t unit = (int64_t)v.f_frsize;
    size_t m = out_begin(T_FS_INFO, s, 0);
    put_i64(out_buf(), (int64_t)v.f_blocks * unit);
    put_i64(out_buf(), (int64_t)(v.f_blocks - v.f_bfree) * unit);
    put_i64(out_buf(), (int64_t)v.f_bavail * unit);
    out_end(m);
    send_ok(s);
  }
  fs_as_root();
  free(path);
}

/* mkdir -p of every missing parent of path (not path itself), under the caller's identity; each
 * folder it creates is given to owner when owner is not NULL */
static int mkparents(const char *path, const user_t *owner) {
  char *p = strdup(path);
  if (!p) die("out of memory");
  int rc = 0;
  for (char *q = p + 1; *q; q++) {
    if (*q != '/') continue;
    *q = 0;
    if (mkdir(p, 0755) == 0) {
      if (owner && chown(p, owner->uid, owner->gid) != 0) rc = -1;
    } else if (errno != EEXIST) {
      rc = -1;
    } else {
      struct stat st;
      if (stat(p, &st) != 0) {
        rc = -1;
      } else if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        rc = -1;
      }
    }
    *q = '/';
    if (rc) break;
  }
  free(p);
  return rc;
}

void f_mkdir(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) send_error(s, E_EXISTS, EEXIST, "directory %s already exists", path);
    else send_error(s, E_NOT_DIR, ENOTDIR, "%s exists and is not a directory", path);
  } else if (mkparents(path, NULL) != 0) {
    fail(s, "mkdir", path);
  } else if (mkdir(path, 0755) != 0) {
    fail(s, "mkdir", path);
  } else if (lstat(path, &st) != 0) {
    fail(s, "stat", path);
  } else {
    send_entry(s, path, path, &st);
    send_ok(s);
  }
  fs_as_root();
  free(path);
}

/* removes a tree without following symlinks */
static int rm_tree(int dirfd, const char *name) {
  if (unlinkat(dirfd, name, 0) == 0) return 0;
  if (errno != EISDIR && errno != EPERM) return -1;
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return -1;
  }
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    rc = rm_tree(fd, e->d_name);
  }
  closedir(d);
  if (rc == 0) rc = unlinkat(dirfd, name, AT_REMOVEDIR);
  return rc;
}

void f_remove(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  struct stat st;
  if (strcmp(path, "/") == 0) {
    send_error(s, E_INVALID, 0, "refusing to remove /");
  } else if (lstat(path, &st) != 0) {
    fail(s, "remove", path);
  } else if (rm_tree(AT_FDCWD, path) != 0) {
    fail(s, "remove", path);
  } else {
    send_ok(s);
  }
  fs_as_root();
  free(path);
}

void f_rename(uint32_t s, rd_t *r) {
  char *src = get_str(r);
  char *dst = get_str(r);
  char *us = get_str(r);
  user_t u;
  if (r->bad || !src || !dst || !us) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if (!*src || !*dst) {
    send_error(s, E_INVALID, 0, "empty path");
  } else if (user_resolve(us, &u) != 0) {
    send_error(s, E_UNKNOWN_USER, 0, "no such user: %s", us);
  } else {
    char *a = resolve_path(&u, src), *b = resolve_path(&u, dst);
    struct stat st;
    fs_as(&u);
    if (strlen(a) > MAX_NAME || strlen(b) > MAX_NAME) {
      send_error(s, E_INVALID, ENAMETOOLONG, "the path is longer than %u bytes", MAX_NAME);
    } else if (rename(a, b) != 0) {
      fail(s, "rename", a);
    } else if (lstat(b, &st) != 0) {
      fail(s, "stat", b);
    } else {
      send_entry(s, b, b, &st);
      send_ok(s);
    }
    fs_as_root();
    free(a);
    free(b);
  }
  free(src);
  free(dst);
  free(us);
}

void f_xattr_get(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  char *prefix = get_str(r);
  struct stat st;
  if (r->bad || !prefix) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if (stat(path, &st) != 0) {
    fail(s, "stat", path);
  } else {
    size_t m = out_begin(T_XATTRS, s, 0);
    put_meta(out_buf(), path, prefix);
    out_end(m);
    send_ok(s);
  }
  fs_as_root();
  free(prefix);
  free(path);
}

/* replaces every attribute under prefix by the given pairs; 0 or -1 with errno */
static int set_meta(int fd, const char *prefix, rd_t *r, uint32_t count) {
  size_t plen = strlen(prefix);
  if (plen < 5 || strncmp(prefix, "user.", 5) != 0) {
    errno = EINVAL;
    return -1;
  }
  char names[65536];
  ssize_t n = flistxattr(fd, names, sizeof names);
  for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
    if (strncmp(names + i, prefix, plen) == 0 && fremovexattr(fd, names + i) != 0) return -1;
  }
  for (uint32_t i = 0; i < count; i++) {
    char *name = get_str(r);
    size_t vn = 0;
    const uint8_t *v = get_bytes(r, &vn);
    int bad = r->bad || !name || !v || strncmp(name, prefix, plen) != 0;
    if (!bad && fsetxattr(fd, name, v, vn, 0) != 0) {
      free(name);
      return -1;
    }
    free(name);
    if (bad) {
      errno = EINVAL;
      return -1;
    }
  }
  return 0;
}

void f_xattr_set(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  char *prefix = get_str(r);
  uint32_t count = get_u32(r);
  int fd = -1;
  if (r->bad || !prefix) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0) {
    fail(s, "open", path);
  } else if (set_meta(fd, prefix, r, count) != 0) {
    fail(s, "set attributes of", path);
  } else {
    send_ok(s);
  }
  if (fd >= 0) close(fd);
  fs_as_root();
  free(prefix);
  free(path);
}

/* ---- streams: reads, writes, listings, watches ---- */

typedef struct {
  char *abs;   /* directory as the daemon opens it */
  char *shown; /* directory as reported */
  char **names;
  size_t n, i;
  unsigned depth; /* how many levels below this one may still be listed */
} level_t;

typedef struct {
  int wd;
  char *rel;
} wdir_t;

enum { J_READ = 1, J_WRITE, J_LIST, J_WATCH };

typedef struct job {
  struct job *next;
  uint32_t stream;
  int kind;
  int64_t credit;
  user_t user;
  /* read */
  int fd;
  int polled, ready; /* a pipe or a device: read only once poll says so */
  /* write */
  char *target, *temp;
  /* list */
  level_t stack[MAX_DEPTH];
  int top;
  /* watch */
  char *root;
  int recursive, overflowed;
  wdir_t *wds;
  size_t nwds;
  buf_t pending;
} job_t;

static job_t *jobs;

static job_t *job_new(uint32_t s, int kind) {
  job_t *j = calloc(1, sizeof *j);
  if (!j) die("out of memory");
  j->stream = s;
  j->kind = kind;
  j->credit = INITIAL_CREDIT;
  j->fd = -1;
  j->top = -1;
  j->next = jobs;
  jobs = j;
  return j;
}

static job_t *job_find(uint32_t s) {
  for (job_t *j = jobs; j; j = j->next)
    if (j->stream == s) return j;
  return NULL;
}

static void job_free(job_t *j) {
  for (job_t **pp = &jobs; *pp; pp = &(*pp)->next) {
    if (*pp == j) {
      *pp = j->next;
      break;
    }
  }
  if (j->fd >= 0) close(j->fd);
  if (j->temp) unlink(j->temp); /* an unfinished write leaves the target as it was */
  free(j->temp);
  free(j->target);
  for (int i = 0; i <= j->top; i++) {
    free(j->stack[i].abs);
    free(j->stack[i].shown);
    free_strlist(j->stack[i].names);
  }
  for (size_t i = 0; i < j->nwds; i++) free(j->wds[i].rel);
  free(j->wds);
  free(j->root);
  buf_free(&j->pending);
  free(j);
}

int files_cancel(uint32_t s) {
  job_t *j = job_find(s);
  if (!j) return 0;
  job_free(j);
  return 1;
}

int files_credit(uint32_t s, uint32_t n) {
  job_t *j = job_find(s);
  if (!j) return 0;
  if (j->kind != J_WRITE) j->credit += n;
  return 1;
}

void files_reset(void) {
  while (jobs) job_free(jobs);
}

/* -- read -- */

void f_read(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    fail(s, "open", path);
  } else if (fstat(fd, &st) != 0) {
    fail(s, "stat", path);
    close(fd);
  } else if (S_ISDIR(st.st_mode)) {
    send_error(s, E_IS_DIR, EISDIR, "%s is a directory", path);
    close(fd);
  } else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
    send_error(s, E_INVALID, 0, "%s is not a regular file", path);
    close(fd);
  } else {
    send_entry(s, path, path, &st);
    job_t *j = job_new(s, J_READ);
    j->fd = fd;
    /* a named pipe is read as cat reads it, as its writers write; before the first writer came,
       a non-blocking read says end of file, so it is read only once poll reports data or a hang-up */
    j->polled = !S_ISREG(st.st_mode);
  }
  fs_as_root();
  free(path);
}

/* one chunk of a read; returns 1 while the job goes on */
static int read_step(job_t *j) {
  if (j->credit <= (int64_t)FRAME_COST) return 0;
  if (j->polled && !j->ready) return 0;
  size_t want = (size_t)(j->credit - FRAME_COST) < CHUNK ? (size_t)(j->credit - FRAME_COST) : CHUNK;
  size_t m = out_begin(T_FILE_CHUNK, j->stream, 0);
  buf_t *b = out_buf();
  buf_reserve(b, want);
  ssize_t n;
  do n = read(j->fd, b->p + b->len, want);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    b->len += (size_t)n;
    j->credit -= n + (int64_t)FRAME_COST;
    out_end(m);
    return 1;
  }
  b->len = m; /* drop the empty frame */
  if (n < 0 && errno == EAGAIN && j->polled) {
    j->ready = 0;
    return 0;
  }
  if (n == 0) send_ok(j->stream);
  else fail(j->stream, "read", "file");
  job_free(j);
  return 0;
}

/* -- write -- */

static const char *dangling = "dangling symlink";

/* FILE_WRITE: path, user, u8 flags (1: metadata given), u32 count, pairs. As E2B's envd does, the
 * write itself runs as root (inside the sandbox, where root is no boundary: the user has sudo), and
 * the file and every folder it creates are then given to the user: a write may go where the user
 * could not, and what it leaves is the user's. */
void f_write(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  fs_as_root();
  uint8_t flags = get_u8(r);
  uint32_t count = get_u32(r);
  struct stat st;
  int exists = 0, fd = -1;
  char *target = NULL, *temp = NULL;
  if (r->bad) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
    goto out;
  }
  if (lstat(path, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      target = realpath(path, NULL);
      if (!target) {
        send_error(s, E_INVALID, 0, "%s is a %s", path, dangling);
        goto out;
      }
      if (stat(target, &st) != 0) {
        fail(s, "stat", target);
        goto out;
      }
    } else {
      target = strdup(path);
    }
    exists = 1;
    if (S_ISDIR(st.st_mode)) {
      send_error(s, E_IS_DIR, EISDIR, "%s is a directory", path);
      goto out;
    }
  } else if (errno != ENOENT) {
    fail(s, "stat", path);
    goto out;
  } else {
    target = strdup(path);
  }
  if (!target) die("out of memory");
  if (mkparents(target, &u) != 0) {
    fail(s, "create the parents of", target);
    goto out;
  }
  {
    const char *slash = strrchr(target, '/');
    int dlen = (int)(slash - target);
    if (asprintf(&temp, "%.*s/.%s.envd-XXXXXX", dlen, target, slash + 1) < 0) die("out of memory");
  }
  fd = mkostemp(temp, O_CLOEXEC);
  if (fd < 0) {
    fail(s, "create a temporary file beside", target);
    free(temp);
    temp = NULL;
    goto out;
  }
  {
    /* a file written over keeps its mode (less set-id bits given to another user), a new one is 0644 */
    mode_t mode = exists ? st.st_mode & 07777 : 0644;
    if (exists && u.uid != st.st_uid) mode &= ~(mode_t)(S_ISUID | S_ISGID);
    if (fchown(fd, u.uid, u.gid) != 0) {
      fail(s, "give the user", temp);
      goto out;
    }
    if (fchmod(fd, mode) != 0) {
      fail(s, "set the mode of", temp);
      goto out;
    }
  }
  if (flags & 1) {
    if (set_meta(fd, META_PREFIX, r, count) != 0) {
      fail(s, "set the metadata of", target);
      goto out;
    }
  } else if (exists) {
    /* the old file's metadata lives on, as it would with an in-place write */
    char names[65536];
    ssize_t n = listxattr(target, names, sizeof names);
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
      char value[65536];
      if (strncmp(names + i, "user.", 5) != 0) continue;
      ssize_t v = getxattr(target, names + i, value, sizeof value);
      if (v >= 0 && fsetxattr(fd, names + i, value, (size_t)v, 0) != 0) {
        fail(s, "copy the metadata of", target);
        goto out;
      }
    }
  }
  {
    job_t *j = job_new(s, J_WRITE);
    j->fd = fd;
    j->target = target;
    j->temp = temp;
    j->user = u;
    j->credit = WINDOW; /* what the host may still send */
    fd = -1;
    target = temp = NULL;
    /* no answer yet: the host sends data at once, within its window, and gets an ENTRY and OK
     * after FIN, or an ERROR whenever something fails (its later data is then dropped) */
  }
out:
  if (fd >= 0) close(fd);
  if (temp) unlink(temp);
  free(temp);
  free(target);
  fs_as_root();
  free(path);
}

static void write_fail(job_t *j, const char *what) {
  int e = errno;
  send_error(j->stream, err_kind(e), e, "%s %s: %s", what, j->target, strerror(e));
  job_free(j);
}

int f_write_data(uint32_t s, uint8_t flags, const uint8_t *p, size_t n) {
  job_t *j = job_find(s);
  if (!j) return 0; /* a stream already ended (failed or cancelled): its late data is dropped */
  if (j->kind != J_WRITE) return -1;
  if ((int64_t)n > j->credit) return -1;
  j->credit -= (int64_t)n;
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(j->fd, p + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      write_fail(j, "write");
      return 0;
    }
    off += (size_t)w;
  }
  j->credit += (int64_t)n;
  if (n > 0 && !(flags & F_FIN)) {
    size_t m = out_begin(T_DCREDIT, s, 0);
    put_u32(out_buf(), (uint32_t)n);
    out_end(m);
  }
  if (flags & F_FIN) {
    if (fsync(j->fd) != 0) {
      write_fail(j, "sync");
      return 0;
    }
    if (close(j->fd) != 0) {
      j->fd = -1;
      write_fail(j, "close");
      return 0;
    }
    j->fd = -1;
    int rc = rename(j->temp, j->target);
    if (rc != 0) {
      write_fail(j, "rename into");
      return 0;
    }
    free(j->temp);
    j->temp = NULL;
    char *dir = strdup(j->target);
    if (!dir) die("out of memory");
    *strrchr(dir, '/') = 0;
    int dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd); /* the rename itself on disk; a failure here leaves the new file in place */
      close(dfd);
    }
    free(dir);
    struct stat st;
    if (lstat(j->target, &st) != 0) {
      write_fail(j, "stat");
      return 0;
    }
    send_entry(s, j->target, j->target, &st);
    send_ok(s);
    job_free(j);
  }
  return 0;
}

/* -- list -- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the sorted names of a directory, or NULL with errno */
static char **sorted_names(const char *dir, size_t *count) {
  DIR *d = opendir(dir);
  if (!d) return NULL;
  size_t n = 0, cap = 16;
  char **names = malloc(cap * sizeof *names);
  if (!names) die("out of memory");
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n + 1 >= cap) {
      cap *= 2;
      names = realloc(names, cap * sizeof *names);
      if (!names) die("out of memory");
    }
    names[n] = strdup(e->d_name);
    if (!names[n++]) die("out of memory");
  }
  closedir(d);
  names[n] = NULL;
  qsort(names, n, sizeof *names, cmp_str);
  *count = n;
  return names;
}

static char *join(const char *a, const char *b) {
  char *out;
  if (asprintf(&out, "%s/%s", strcmp(a, "/") == 0 ? "" : a, b) < 0) die("out of memory");
  return out;
}

static int push_level(job_t *j, char *abs, char *shown, unsigned depth) {
  size_t n = 0;
  char **names = sorted_names(abs, &n);
  if (!names) {
    free(abs);
    free(shown);
    return -1;
  }
  level_t *l = &j->stack[++j->top];
  l->abs = abs;
  l->shown = shown;
  l->names = names;
  l->n = n;
  l->i = 0;
  l->depth = depth;
  return 0;
}

/* LIST: path, user, u32 depth. Entries depth first, each directory's names in byte order */
void f_list(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  uint32_t depth = get_u32(r);
  struct stat st;
  if (r->bad) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if (depth < 1) {
    send_error(s, E_INVALID, 0, "depth must be at least 1");
  } else if (stat(path, &st) != 0) {
    fail(s, "list", path);
  } else if (!S_ISDIR(st.st_mode)) {
    send_error(s, E_NOT_DIR, ENOTDIR, "%s is not a directory", path);
  } else {
    job_t *j = job_new(s, J_LIST);
    j->user = u;
    if (push_level(j, strdup(path), strdup(path), depth > MAX_DEPTH ? MAX_DEPTH : depth - 1) != 0) {
      fail(s, "list", path);
      job_free(j);
    }
  }
  fs_as_root();
  free(path);
}

static int list_step(job_t *j) {
  fs_as(&j->user);
  for (int budget = 256; budget > 0 && !out_full(); budget--) {
    if (j->top < 0) {
      send_ok(j->stream);
      fs_as_root();
      job_free(j);
      return 0;
    }
    level_t *l = &j->stack[j->top];
    if (l->i >= l->n) {
      free(l->abs);
      free(l->shown);
      free_strlist(l->names);
      j->top--;
      continue;
    }
    const char *name = l->names[l->i++];
    char *abs = join(l->abs, name), *shown = join(l->shown, name);
    struct stat st;
    /* an entry whose path is longer than an answer may name is left out (and not entered), as
     * is one gone meanwhile */
    if (strlen(shown) > MAX_NAME || lstat(abs, &st) != 0) {
      free(abs);
      free(shown);
      continue;
    }
    send_entry(j->stream, shown, abs, &st);
    if (S_ISDIR(st.st_mode) && l->depth > 0 && j->top + 1 < MAX_DEPTH) {
      push_level(j, abs, shown, l->depth - 1); /* an unreadable directory is listed, not entered */
    } else {
      free(abs);
      free(shown);
    }
  }
  fs_as_root();
  return 1;
}

/* -- watch -- */

static void queue_event(job_t *j, uint8_t kind, const char *rel, const char *name);

/* Watches abs (and, recursively, its folders). announce: abs was just created, so whatever is
 * already in it was made before its watch was set and inotify will never report it: report each
 * entry as created (and a non-empty file as written) here, late rather than never. */
static void watch_add(job_t *j, const char *abs, const char *rel, int announce) {
  uint32_t mask = IN_CREATE | IN_MODIFY | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_CLOSE_WRITE
      | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;
  int wd = inotify_add_watch(j->fd, abs, mask);
  if (wd < 0) return;
  j->wds = realloc(j->wds, (j->nwds + 1) * sizeof *j->wds);
  if (!j->wds) die("out of memory");
  j->wds[j->nwds].wd = wd;
  j->wds[j->nwds].rel = strdup(rel);
  if (!j->wds[j->nwds++].rel) die("out of memory");
  if (!j->recursive) return;
  size_t n = 0;
  char **names = sorted_names(abs, &n);
  for (size_t i = 0; names && i < n; i++) {
    char *a = join(abs, names[i]);
    struct stat st;
    int found = lstat(a, &st) == 0;
    if (found && announce) {
      queue_event(j, W_CREATE, rel, names[i]);
      if (S_ISREG(st.st_mode) && st.st_size > 0) queue_event(j, W_WRITE, rel, names[i]);
    }
    if (found && S_ISDIR(st.st_mode)) {
      char *r;
      if (asprintf(&r, "%s%s%s", rel, *rel ? "/" : "", names[i]) < 0) die("out of memory");
      watch_add(j, a, r, announce);
      free(r);
    }
    free(a);
  }
  free_strlist(names);
}

/* WATCH: path, user, u8 recursive. OK first (the watch is set), then WATCH_EVENTs until cancelled */
void f_watch(uint32_t s, rd_t *r) {
  char *path;
  user_t u;
  if (begin(s, r, &path, &u)) return;
  uint8_t recursive = get_u8(r);
  struct stat st;
  if (r->bad) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
  } else if (stat(path, &st) != 0) {
    fail(s, "watch", path);
  } else if (!S_ISDIR(st.st_mode)) {
    send_error(s, E_NOT_DIR, ENOTDIR, "%s is not a directory", path);
  } else {
    job_t *j = job_new(s, J_WATCH);
    j->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    j->recursive = recursive;
    j->root = strdup(path);
    j->user = u;
    if (j->fd < 0) {
      fail(s, "watch", path);
      job_free(j);
    } else {
      watch_add(j, path, "", 0);
      if (j->nwds == 0) {
        fail(s, "watch", path);
        job_free(j);
      } else {
        size_t m = out_begin(T_WATCH_EVENT, s, 0);
        put_u8(out_buf(), 0); /* kind 0: the watch is set */
        put_str(out_buf(), "");
        out_end(m);
      }
    }
  }
  fs_as_root();
  free(path);
}

static void queue_event(job_t *j, uint8_t kind, const char *rel, const char *name) {
  buf_t *b = &j->pending;
  char full[8192];
  int n = snprintf(full, sizeof full, "%s%s%s", rel, *rel && *name ? "/" : "", name);
  if (n < 0 || (size_t)n > MAX_NAME) return; /* deeper than an answer may name: not reported */
  put_u8(b, kind);
  put_str(b, full);
}

static void watch_read(job_t *j) {
  char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  while (j->pending.len < WATCH_PENDING_MAX) {
    ssize_t n = read(j->fd, buf, sizeof buf);
    if (n <= 0) return;
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *e = (struct inotify_event *)p;
      p += sizeof *e + e->len;
      if (e->mask & IN_Q_OVERFLOW) {
        queue_event(j, W_OVERFLOW, "", "");
        continue;
      }
      const char *rel = NULL;
      for (size_t i = 0; i < j->nwds; i++)
        if (j->wds[i].wd == e->wd) rel = j->wds[i].rel;
      if (!rel) continue;
      const char *name = e->len ? e->name : "";
      if (e->mask & (IN_CREATE | IN_MOVED_TO)) queue_event(j, W_CREATE, rel, name);
      if (e->mask & IN_MODIFY) queue_event(j, W_WRITE, rel, name);
      if (e->mask & IN_DELETE) queue_event(j, W_REMOVE, rel, name);
      if (e->mask & IN_MOVED_FROM) queue_event(j, W_RENAME, rel, name);
      if (e->mask & IN_ATTRIB) queue_event(j, W_CHMOD, rel, name);
      /* the watched folder itself went away: reported as E2B's envd does, a removal named "." (a
       * folder below it is reported by its parent's watch); the stream goes on, as envd's does,
       * until the caller ends it */
      if ((e->mask & IN_DELETE_SELF) && !*rel) queue_event(j, W_REMOVE, "", ".");
      if (j->recursive && (e->mask & (IN_CREATE | IN_MOVED_TO)) && (e->mask & IN_ISDIR)) {
        char *r, *a;
        if (asprintf(&r, "%s%s%s", rel, *rel ? "/" : "", name) < 0) die("out of memory");
        a = join(j->root, r);
        fs_as(&j->user);
        watch_add(j, a, r, 1);
        fs_as_root();
        free(a);
        free(r);
      }
    }
  }
}

/* sends queued events as far as credit allows, one frame each; returns 1 if more are ready */
static int watch_flush(job_t *j) {
  size_t off = 0;
  while (off < j->pending.len && !out_full()) {
    rd_t r = {j->pending.p, j->pending.len, off + 1, 0};
    size_t n = 0;
    get_bytes(&r, &n);
    size_t len = r.off - off;
    if ((int64_t)(len + FRAME_COST) > j->credit) break;
    size_t m = out_begin(T_WATCH_EVENT, j->stream, 0);
    buf_reserve(out_buf(), len);
    memcpy(out_buf()->p + out_buf()->len, j->pending.p + off, len);
    out_buf()->len += len;
    out_end(m);
    j->credit -= (int64_t)(len + FRAME_COST);
    off += len;
  }
  memmove(j->pending.p, j->pending.p + off, j->pending.len - off);
  j->pending.len -= off;
  return 0;
}

int files_pollfds(struct pollfd *p, int max) {
  int n = 0;
  for (job_t *j = jobs; j && n < max; j = j->next) {
    if (j->kind == J_READ && j->polled && !j->ready && j->credit > (int64_t)FRAME_COST) {
      p[n].fd = j->fd;
      p[n].events = POLLIN;
      p[n].revents = 0;
      n++;
      continue;
    }
    if (j->kind != J_WATCH || j->pending.len >= WATCH_PENDING_MAX) continue;
    p[n].fd = j->fd;
    p[n].events = POLLIN;
    p[n].revents = 0;
    n++;
  }
  return n;
}

void files_events(struct pollfd *p, int n) {
  for (int i = 0; i < n; i++) {
    if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    for (job_t *j = jobs; j; j = j->next) {
      if (j->kind == J_READ && j->polled && j->fd == p[i].fd) j->ready = 1;
      else if (j->kind == J_WATCH && j->fd == p[i].fd && (p[i].revents & POLLIN)) watch_read(j);
    }
  }
}

int files_work(void) {
  int more = 0;
  job_t *next;
  for (job_t *j = jobs; j && !out_full(); j = next) {
    next = j->next;
    if (j->kind == J_READ) more |= read_step(j);
    else if (j->kind == J_LIST) more |= list_step(j);
    else if (j->kind == J_WATCH && j->pending.len) more |= watch_flush(j);
  }
  return more;
}
