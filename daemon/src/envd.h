/*
 * sandboxes-envd: the in-sandbox daemon of the Sandboxes local runtime.
 *
 * Shared declarations. The wire protocol is described in daemon/protocol.md; the
 * Java side (io.sandboxes.local.internal.daemon.Wire) must agree with every constant here.
 */
#ifndef SANDBOXES_ENVD_H
#define SANDBOXES_ENVD_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- protocol constants ---- */
#define PROTO_VERSION 3
#define HDR_LEN 12
#define MAX_PAYLOAD (1u << 20)
#define WINDOW (1u << 20)          /* credit of a stream from the host (FILE_DATA, TCP_SEND) */
#define INITIAL_CREDIT (8u * 1024u) /* credit a stream to the host starts with; the host grants more */
#define FRAME_COST 128u            /* credit every data frame to the host costs beyond its bytes */
#define MAX_NAME 4096u             /* longest name or path the host accepts in an answer */
#define CHUNK (256u * 1024u)       /* largest data chunk the daemon sends */

/* host -> daemon */
#define T_PING 0x01
#define T_CANCEL 0x02
#define T_CREDIT 0x03
#define T_PROC_START 0x10
#define T_PROC_ATTACH 0x11
#define T_PROC_INPUT 0x12
#define T_PROC_CLOSE_STDIN 0x13
#define T_PROC_SIGNAL 0x14
#define T_PROC_RESIZE 0x15
#define T_PROC_LIST 0x16
#define T_FILE_STAT 0x20
#define T_FILE_LIST 0x21
#define T_FILE_READ 0x22
#define T_FILE_WRITE 0x23
#define T_FILE_DATA 0x24
#define T_FILE_MKDIR 0x25
#define T_FILE_REMOVE 0x26
#define T_FILE_RENAME 0x27
#define T_XATTR_GET 0x28
#define T_XATTR_SET 0x29
#define T_WATCH 0x2A
#define T_TCP_CONNECT 0x2B
#define T_TCP_SEND 0x2C
#define T_FILE_STATFS 0x2D

/* daemon -> host */
#define T_HELLO 0x40
#define T_OK 0x41
#define T_ERROR 0x42
#define T_DCREDIT 0x43
#define T_PROC_STARTED 0x50
#define T_PROC_OUTPUT 0x51
#define T_PROC_EXIT 0x52
#define T_PROC_INFO 0x53
#define T_ENTRY 0x60
#define T_FILE_CHUNK 0x61
#define T_XATTRS 0x62
#define T_WATCH_EVENT 0x63
#define T_TCP_CONNECTED 0x64
#define T_TCP_DATA 0x65
#define T_FS_INFO 0x66

#define F_FIN 0x01 /* frame flag: last data frame of a stream (of a direction, on a TCP stream) */

/* error kinds */
#define E_NOT_FOUND 1
#define E_EXISTS 2
#define E_NOT_DIR 3
#define E_IS_DIR 4
#define E_PERMISSION 5
#define E_NO_SPACE 6
#define E_INVALID 7
#define E_BUSY 8
#define E_IO 9
#define E_UNSUPPORTED 10
#define E_NOT_EMPTY 11
#define E_CROSS_DEVICE 12
#define E_UNKNOWN_USER 13
#define E_PROTOCOL 14
#define E_REFUSED 15

/* entry types */
#define FT_FILE 1
#define FT_DIR 2
#define FT_SYMLINK 3
#define FT_OTHER 4

/* watch event kinds */
#define W_CREATE 1
#define W_WRITE 2
#define W_REMOVE 3
#define W_RENAME 4
#define W_CHMOD 5
#define W_OVERFLOW 6

/* ---- growable byte buffer ---- */
typedef struct {
  uint8_t *p;
  size_t len, cap;
} buf_t;

void buf_reserve(buf_t *b, size_t extra);
void buf_free(buf_t *b);
void put_u8(buf_t *b, uint8_t v);
void put_u16(buf_t *b, uint16_t v);
void put_u32(buf_t *b, uint32_t v);
void put_i32(buf_t *b, int32_t v);
void put_i64(buf_t *b, int64_t v);
void put_bytes(buf_t *b, const void *p, size_t n);
void put_str(buf_t *b, const char *s);

/* ---- payload reader ---- */
typedef struct {
  const uint8_t *p;
  size_t len, off;
  int bad;
} rd_t;

uint8_t get_u8(rd_t *r);
uint16_t get_u16(rd_t *r);
uint32_t get_u32(rd_t *r);
int32_t get_i32(rd_t *r);
int64_t get_i64(rd_t *r);
/* a length-prefixed byte string, pointing into the payload */
const uint8_t *get_bytes(rd_t *r, size_t *n);
/* a length-prefixed string with no NUL byte inside, as a fresh NUL-terminated copy (or NULL) */
char *get_str(rd_t *r);
/* a count-prefixed list of such strings, NULL-terminated */
char **get_strlist(rd_t *r);
void free_strlist(char **l);

/* ---- users ---- */
typedef struct {
  uid_t uid;
  gid_t gid;
  char home[4096];
  char name[256];
  int ngroups;
  gid_t groups[64];
} user_t;

/* Resolves a user name or number from /etc/passwd and /etc/group; "" means the daemon's own. */
int user_resolve(const char *spec, user_t *out);
/* The name of a uid or gid, or its number as text. */
void user_name(uid_t uid, char *out, size_t n);
void group_name(gid_t gid, char *out, size_t n);
/* Drops the daemon's file-system identity to a user's, and back (no-ops unless root). */
void fs_as(const user_t *u);
void fs_as_root(void);

/* ---- kernels that are not Linux's own (gVisor): compat.c ---- */
/* Whether setfsuid/setfsgid answer ENOSYS. */
int kernel_lacks_fsuid(void);
/* Whether a PTY master is never told that its slaves have all closed. */
int kernel_lacks_pty_hangup(void);
/* Opens a PTY master's peer (TIOCGPTPEER, else by its name), O_NOCTTY and close-on-exec; -1 on failure. */
int pty_peer(int master);

/* ---- utilities ---- */
void die(const char *what);
int64_t now_ms(void);
int err_kind(int e);
void dlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- modes ---- */
int worker_main(const char *socket_path, uint32_t generation);
int supervise_main(const char *socket_path);

#endif
