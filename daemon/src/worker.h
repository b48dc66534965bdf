/* What worker.c (the connection and processes) and files.c (the file system) share. */
#ifndef SANDBOXES_WORKER_H
#define SANDBOXES_WORKER_H

#include "envd.h"

#include <poll.h>

/* ---- output to the host, implemented in worker.c ---- */
/* Starts a frame in the output buffer; returns its mark for out_end. */
size_t out_begin(uint8_t type, uint32_t stream, uint8_t flags);
buf_t *out_buf(void);
/* Finishes a frame: patches its length, or replaces an oversized one by an error. */
void out_end(size_t mark);
void send_ok(uint32_t stream);
void send_error(uint32_t stream, int kind, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* True while the output buffer is above its high-water mark: make no more output then. */
int out_full(void);

/* ---- the file system, implemented in files.c ---- */
void f_stat(uint32_t s, rd_t *r);
void f_statfs(uint32_t s, rd_t *r);
void f_mkdir(uint32_t s, rd_t *r);
void f_remove(uint32_t s, rd_t *r);
void f_rename(uint32_t s, rd_t *r);
void f_xattr_get(uint32_t s, rd_t *r);
void f_xattr_set(uint32_t s, rd_t *r);
void f_read(uint32_t s, rd_t *r);
void f_write(uint32_t s, rd_t *r);
/* a data frame of a write stream; returns -1 on a protocol violation */
int f_write_data(uint32_t s, uint8_t flags, const uint8_t *p, size_t n);
void f_list(uint32_t s, rd_t *r);
void f_watch(uint32_t s, rd_t *r);

/* stream bookkeeping: return 1 when the stream was a file stream */
int files_cancel(uint32_t s);
int files_credit(uint32_t s, uint32_t n);
/* the connection dropped: end every file stream, removing unfinished temporary files */
void files_reset(void);
/* adds poll entries for watches; returns how many */
int files_pollfds(struct pollfd *p, int max);
/* handles poll results for the entries files_pollfds added */
void files_events(struct pollfd *p, int n);
/* does a bounded amount of pending work (reads, listings, queued watch events); returns 1 if more is ready */
int files_work(void);

/* ---- port forwarding, implemented in ports.c ---- */
void t_connect(uint32_t s, rd_t *r);
/* a data frame from the host on a TCP stream; returns -1 on a protocol violation */
int t_send(uint32_t s, uint8_t flags, const uint8_t *p, size_t n);
/* stream bookkeeping: return 1 when the stream was a TCP stream */
int ports_cancel(uint32_t s);
int ports_credit(uint32_t s, uint32_t n);
/* the connection dropped: close every forwarded connection */
void ports_reset(void);
/* adds poll entries for forwarded connections (no reads while output_full); returns how many */
int ports_pollfds(struct pollfd *p, int max, int output_full);
void ports_events(struct pollfd *p, int n);

/* a user's path made absolute: relative paths and ~ against the home folder; caller frees */
char *resolve_path(const user_t *u, const char *path);

#endif
