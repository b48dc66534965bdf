/*
 * Port forwarding: a TCP connection to a port on the sandbox's own loopback, relayed over the
 * host connection. Nonblocking throughout: the connect completes in the poll loop, bytes from
 * the port go out as TCP_DATA within the host's credit (CREDIT), and bytes from the host
 * (TCP_SEND, within the daemon's credit, DCREDIT back once written to the socket) wait in a
 * queue that credit bounds to one window. Each direction half-closes on its own (FIN); the
 * stream ends with OK once both have, or with ERROR when the connection fails.
 */
#include "worker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { T_CONNECTING = 1, T_OPEN };

typedef struct tcp {
  struct tcp *next;
  uint32_t stream;
  uint16_t port;
  int fd;
  int state;
  int family;        /* 4 or 6: what is being (or was) connected to */
  int v4_errno;      /* why IPv4 failed, when ::1 is being tried */
  int64_t credit;    /* bytes the daemon may still send the host */
  int64_t in_credit; /* bytes the host may still send the daemon */
  buf_t q;           /* host bytes not yet written to the socket */
  size_t q_off;
  int host_fin;  /* the host half-closed: shut the socket's write side once q is written */
  int wr_done;   /* the write side is shut (or failed: later host bytes are dropped) */
  int rd_done;   /* the port's end of stream was sent to the host */
} tcp_t;

static tcp_t *tcps;

static tcp_t *tcp_find(uint32_t s) {
  for (tcp_t *t = tcps; t; t = t->next)
    if (t->stream == s) return t;
  return NULL;
}

static void tcp_free(tcp_t *t) {
  for (tcp_t **pp = &tcps; *pp; pp = &(*pp)->next) {
    if (*pp == t) {
      *pp = t->next;
      break;
    }
  }
  if (t->fd >= 0) close(t->fd);
  buf_free(&t->q);
  free(t);
}

/* starts a nonblocking connect to 127.0.0.1 (family 4) or ::1 (family 6); 0, or -1 with errno */
static int tcp_dial(tcp_t *t, int family) {
  if (t->fd >= 0) close(t->fd);
  t->family = family;
  t->fd = socket(family == 4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (t->fd < 0) return -1;
  int rc;
  if (family == 4) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(t->port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    rc = connect(t->fd, (struct sockaddr *)&a, sizeof a);
  } else {
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(t->port), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    rc = connect(t->fd, (struct sockaddr *)&a, sizeof a);
  }
  if (rc == 0 || errno == EINPROGRESS) {
    t->state = T_CONNECTING; /* completion (or failure) is read from SO_ERROR once writable */
    return 0;
  }
  int e = errno;
  close(t->fd);
  t->fd = -1;
  errno = e;
  return -1;
}

static void tcp_refused(tcp_t *t, int e) {
  send_error(t->stream, err_kind(e), e, "connect to port %u on the sandbox's loopback: %s", t->port, strerror(e));
  tcp_free(t);
}

/* IPv4 failed with e: ::1 next, when it was refused rather than broken; else the error */
static void tcp_v4_failed(tcp_t *t, int e) {
  t->v4_errno = e;
  if ((e == ECONNREFUSED || e == EADDRNOTAVAIL || e == ENETUNREACH) && tcp_dial(t, 6) == 0) return;
  tcp_refused(t, e); /* the IPv4 error is the one worth reporting */
}

/* TCP_CONNECT: u16 port */
void t_connect(uint32_t s, rd_t *r) {
  uint16_t port = get_u16(r);
  if (r->bad || r->off != r->len) {
    send_error(s, E_PROTOCOL, 0, "malformed request");
    return;
  }
  if (port == 0) {
    send_error(s, E_INVALID, 0, "port must be between 1 and 65535, got 0");
    return;
  }
  tcp_t *t = calloc(1, sizeof *t);
  if (!t) die("out of memory");
  t->stream = s;
  t->port = port;
  t->fd = -1;
  t->credit = INITIAL_CREDIT;
  t->in_credit = WINDOW;
  t->next = tcps;
  tcps = t;
  if (tcp_dial(t, 4) != 0) tcp_v4_failed(t, errno);
}

/* the stream is over when both directions are: OK, and forget it */
static void tcp_maybe_done(tcp_t *t) {
  if (t->state == T_OPEN && t->rd_done && t->wr_done) {
    send_ok(t->stream);
    tcp_free(t);
  }
}

static void dcredit(uint32_t s, size_t n) {
  if (n == 0) return;
  size_t m = out_begin(T_DCREDIT, s, 0);
  put_u32(out_buf(), (uint32_t)n);
  out_end(m);
}

/* writes what the host sent, as far as the socket takes it; gives the credit back */
static void tcp_flush(tcp_t *t) {
  if (t->state != T_OPEN) return;
  size_t written = 0;
  while (!t->wr_done && t->q_off < t->q.len) {
    ssize_t w = send(t->fd, t->q.p + t->q_off, t->q.len - t->q_off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) break;
    if (w < 0) {
      /* the port stopped reading (closed, reset): its answer may still be coming, so only this
       * direction ends; what the host sends from now on is dropped */
      written += t->q.len - t->q_off;
      t->q_off = t->q.len;
      t->wr_done = 1;
      break;
    }
    t->q_off += (size_t)w;
    written += (size_t)w;
  }
  if (t->q_off == t->q.len) {
    t->q.len = t->q_off = 0;
    if (t->host_fin && !t->wr_done) {
      shutdown(t->fd, SHUT_WR);
      t->wr_done = 1;
    }
  }
  t->in_credit += (int64_t)written;
  if (!t->host_fin) dcredit(t->stream, written);
  tcp_maybe_done(t);
}

/* TCP_SEND: the bytes; FIN half-closes. Returns -1 on a protocol violation */
int t_send(uint32_t s, uint8_t flags, const uint8_t *p, size_t n) {
  tcp_t *t = tcp_find(s);
  if (!t) return 0; /* ended (failed, cancelled): late data is dropped */
  if (t->host_fin) return -1; /* nothing may follow a FIN */
  if ((int64_t)n > t->in_credit) return -1;
  t->in_credit -= (int64_t)n;
  if (t->wr_done) {
    t->in_credit += (int64_t)n; /* dropped, as if written */
    if (!(flags & F_FIN)) dcredit(s, n);
  } else if (n) {
    if (t->q_off > 0) { /* keep the queue at the front: it never holds more than a window */
      memmove(t->q.p, t->q.p + t->q_off, t->q.len - t->q_off);
      t->q.len -= t->q_off;
      t->q_off = 0;
    }
    buf_reserve(&t->q, n);
    memcpy(t->q.p + t->q.len, p, n);
    t->q.len += n;
  }
  if (flags & F_FIN) t->host_fin = 1;
  tcp_flush(t);
  return 0;
}

int ports_cancel(uint32_t s) {
  tcp_t *t = tcp_find(s);
  if (!t) return 0;
  tcp_free(t);
  return 1;
}

int ports_credit(uint32_t s, uint32_t n) {
  tcp_t *t = tcp_find(s);
  if (!t) return 0;
  t->credit += n;
  return 1;
}

void ports_reset(void) {
  while (tcps) tcp_free(tcps);
}

int ports_pollfds(struct pollfd *p, int max, int output_full) {
  int n = 0;
  for (tcp_t *t = tcps; t && n < max; t = t->next) {
    short ev = 0;
    if (t->state == T_CONNECTING) {
      ev = POLLOUT;
    } else {
      if (!t->rd_done && t->credit > (int64_t)FRAME_COST && !output_full) ev |= POLLIN;
      if (!t->wr_done && t->q_off < t->q.len) ev |= POLLOUT;
    }
    if (!ev) continue;
    p[n] = (struct pollfd){.fd = t->fd, .events = ev};
    n++;
  }
  return n;
}

static void tcp_connected(tcp_t *t) {
  int e = 0;
  socklen_t el = sizeof e;
  if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0) e = errno;
  if (e == EINPROGRESS || e == EALREADY) return;
  if (e) {
    if (t->family == 4) tcp_v4_failed(t, e);
    else tcp_refused(t, t->v4_errno ? t->v4_errno : e);
    return;
  }
  int one = 1;
  setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  t->state = T_OPEN;
  size_t m = out_begin(T_TCP_CONNECTED, t->stream, 0);
  put_u8(out_buf(), (uint8_t)t->family);
  out_end(m);
  tcp_flush(t); /* what the host sent meanwhile */
}

/* one chunk from the port to the host; its end of stream as an empty FIN frame */
static void tcp_read(tcp_t *t) {
  if (t->credit <= (int64_t)FRAME_COST || t->rd_done) return;
  size_t want = (size_t)(t->credit - FRAME_COST) < CHUNK ? (size_t)(t->credit - FRAME_COST) : CHUNK;
  size_t m = out_begin(T_TCP_DATA, t->stream, 0);
  buf_t *b = out_buf();
  buf_reserve(b, want);
  ssize_t n;
  do n = recv(t->fd, b->p + b->len, want, 0);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    b->len += (size_t)n;
    t->credit -= n + (int64_t)FRAME_COST;
    out_end(m);
    return;
  }
  if (n < 0 && errno == EAGAIN) {
    b->len = m;
    return;
  }
  if (n == 0) {
    b->p[m + 9] = F_FIN; /* the frame stays, empty, with FIN */
    out_end(m);
    t->rd_done = 1;
    tcp_maybe_done(t);
    return;
  }
  int e = errno;
  b->len = m;
  send_error(t->stream, err_kind(e), e, "port %u: %s", t->port, strerror(e));
  tcp_free(t);
}

void ports_events(struct pollfd *p, int n) {
  for (int i = 0; i < n; i++) {
    if (!p[i].revents) continue;
    tcp_t *t = NULL;
    for (tcp_t *c = tcps; c; c = c->next)
      if (c->fd == p[i].fd) t = c;
    if (!t) continue; /* ended by an earlier entry */
    if (p[i].revents & POLLNVAL) continue;
    if (t->state == T_CONNECTING) {
      if (p[i].revents & (POLLOUT | POLLERR | POLLHUP)) tcp_connected(t);
      continue;
    }
    uint32_t s = t->stream;
    if (p[i].revents & POLLOUT) tcp_flush(t);
    if (!(t = tcp_find(s))) continue;
    if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      if ((p[i].events & POLLIN) && !out_full()) tcp_read(t);
      else if (!(p[i].events & POLLIN) && (p[i].revents & POLLERR)) tcp_flush(t);
    }
  }
}
