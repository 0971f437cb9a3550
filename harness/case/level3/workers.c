/* SPDX-License-Identifier: MIT */
/* The level-3 worker pool (workers.h), the harness's side: forking workers
 * (each then runs case/level3/worker_loop.c), the command protocol over
 * SOCK_SEQPACKET (one datagram per command or reply, so no framing; the
 * messages are wire/msg.h's ST__MSG_L3_*, MAP's in case/level3/map_msg.h),
 * and the waits that notice a dying worker or a deadline instead of
 * hanging.
 *
 * Messages (little-endian fields):
 *   MAP   op, backend, max_threads, reduce, n_blocks, scratch id, the
 *         segments (id, size; their fds ride along with SCM_RIGHTS), the
 *         tensor layout (name, dtype, role, shape, segment id) and scalars
 *         and the shard count, then the case's env (count, name, value...)
 *   RUN   round, shard index (each worker's own), shard count
 *   RELEASE  (the case is over: the platform's release hook)
 *   REPLY status, lookup flag, message, objects loaded since the last reply,
 *         the kernel's device_ns and copy_ns (ST_NS_NONE: not reported) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/op.h>

#include "base/util.h"
#include "base/buf.h"
#include "base/env.h"
#include "base/loadwatch.h"
#include "base/proc.h"
#include "ops/ops_impl.h"
#include "base/pool.h"
#include "case/call.h"
#include "wire/msg.h"
#include "case/level3/map_msg.h"
#include "case/level3/worker_loop.h"
#include "case/level3/workers.h"

/* Largest datagram either side sends (wire/msg.h). */
#define MSG_MAX ST__MSG_L3_MAX

typedef struct worker {
  pid_t pid;
  int sock;    /* harness end; -1 once closed */
  int out;     /* read end of the worker's stdout+stderr; -1 at EOF */
  st__buf buf; /* captured output since the last take, at most
                  ST__CAPTURE_MAX bytes (its cap) */
  size_t dropped;
  int reaped;
  int status;   /* wait status once reaped */
  int awaiting; /* a reply is due */
  st_status reply_status;
  int reply_lookup;
  char *reply_message;
  uint64_t reply_device_ns, reply_copy_ns;
} worker;

struct st__wpool {
  unsigned n;
  worker *w;
  int broken;
};

/* ---- small helpers ---------------------------------------------------- */

void st__wresult_free(st__wresult *r) {
  size_t i;
  if (r == NULL)
    return;
  for (i = 0; i < r->n_loaded; i++)
    free(r->loaded[i]);
  free(r->loaded);
  r->loaded = NULL;
  r->n_loaded = 0;
}

static void wresult_init(st__wresult *r) {
  memset(r, 0, sizeof *r);
  r->status = ST_OK;
  r->device_ns = r->copy_ns = ST_NS_NONE;
}

static void wresult_fail(st__wresult *r, st_status s, const char *fmt, ...)
    ST_PRINTF(3, 4);
static void wresult_fail(st__wresult *r, st_status s, const char *fmt, ...) {
  va_list ap;
  if (r->status != ST_OK)
    return;
  r->status = s;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
}

static void wresult_add_loaded(st__wresult *r, unsigned index,
                               const char *path) {
  char **p = st__array_resize(r->loaded, r->n_loaded + 1, sizeof *p);
  size_t n = strlen(path) + 32;
  if (p == NULL)
    return;
  r->loaded = p;
  p[r->n_loaded] = malloc(n);
  if (p[r->n_loaded] == NULL)
    return;
  snprintf(p[r->n_loaded], n, "worker %u: %s", index, path);
  r->n_loaded++;
}

/* ---- the pool, harness side ------------------------------------------ */

static void drain(worker *w) {
  char tmp[16384];
  while (w->out >= 0) {
    ssize_t n = read(w->out, tmp, sizeof tmp);
    if (n > 0) {
      /* Up to the capture cap (base/buf.c keeps the first bytes); what
       * does not fit, or finds no memory, is counted. */
      w->dropped += (size_t)n - st__buf_add_capped(&w->buf, tmp, (size_t)n);
      continue;
    }
    if (n == 0) {
      close(w->out);
      w->out = -1;
      break;
    }
    if (errno == EINTR)
      continue;
    break; /* EAGAIN: nothing more now */
  }
}

static void drain_until_eof(worker *w, int ms) {
  uint64_t end = st__now_ns() + (uint64_t)ms * 1000000u;
  while (w->out >= 0) {
    struct pollfd pf;
    uint64_t t;
    drain(w);
    t = st__now_ns();
    if (w->out < 0 || t >= end)
      break;
    pf.fd = w->out;
    pf.events = POLLIN;
    poll(&pf, 1, (int)((end - t) / 1000000u) + 1);
  }
}

/* Waits until every worker in p has exited or ms passed; returns 1 when
 * all are reaped. */
static int reap_all(st__wpool *p, int ms) {
  uint64_t end = st__now_ns() + (uint64_t)ms * 1000000u;
  for (;;) {
    unsigned i, left = 0;
    for (i = 0; i < p->n; i++) {
      worker *w = &p->w[i];
      if (w->reaped || w->pid <= 0)
        continue;
      pid_t r = waitpid(w->pid, &w->status, WNOHANG);
      if (r == w->pid || (r < 0 && errno == ECHILD))
        w->reaped = 1;
      else
        left++;
    }
    if (left == 0)
      return 1;
    if (st__now_ns() >= end)
      return 0;
    /* Not a synchronisation sleep: a bounded grace for exits we cannot
     * wait on with a file descriptor. */
    poll(NULL, 0, 2);
  }
}

static void kill_all(st__wpool *p, int sig) {
  unsigned i;
  for (i = 0; i < p->n; i++)
    if (!p->w[i].reaped && p->w[i].pid > 0)
      kill(p->w[i].pid, sig);
}

/* Kills every worker (SIGTERM, then SIGKILL after the grace), reaps them
 * and drains what they printed. */
static void pool_kill(st__wpool *p) {
  unsigned i;
  kill_all(p, SIGTERM);
  if (!reap_all(p, ST__WORKERS_GRACE_MS)) {
    kill_all(p, SIGKILL);
    for (i = 0; i < p->n; i++) {
      worker *w = &p->w[i];
      if (!w->reaped && w->pid > 0) {
        while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
          ;
        w->reaped = 1;
      }
    }
  }
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    /* Reaped: the write end is closed, so this reaches EOF soon (unless
     * a process the kernel spawned still holds it: hence the bound). */
    drain_until_eof(w, 100);
    if (w->sock >= 0) {
      close(w->sock);
      w->sock = -1;
    }
  }
  p->broken = 1;
}

static void worker_close_fds(worker *w) {
  if (w->sock >= 0)
    close(w->sock);
  if (w->out >= 0)
    close(w->out);
  w->sock = w->out = -1;
}

static void pool_free(st__wpool *p) {
  unsigned i;
  for (i = 0; i < p->n; i++) {
    worker_close_fds(&p->w[i]);
    st__buf_free(&p->w[i].buf);
    free(p->w[i].reply_message);
  }
  free(p->w);
  free(p);
}

/* Ensures fds 0..2 are open so socketpair/pipe never hand out 1 or 2,
 * which the child's dup2 dance assumes. */
static void ensure_std_fds(void) {
  int fd;
  for (fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0) {
      int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
}

st_status st__wpool_start(unsigned n, st_registry *reg, st__wpool **out,
                          st_error *err) {
  st__wpool *p;
  unsigned i;
  pid_t self = getpid();

  *out = NULL;
  if (n == 0)
    return st_error_set(err, ST_EINVAL, "level 3 needs at least 1 worker");
  p = calloc(1, sizeof *p);
  if (p == NULL || (p->w = calloc(n, sizeof *p->w)) == NULL) {
    free(p);
    return st_error_set(err, ST_ENOMEM, "out of memory starting workers");
  }
  for (i = 0; i < n; i++) {
    p->w[i].sock = p->w[i].out = -1;
    st__buf_init(&p->w[i].buf, ST__CAPTURE_MAX);
  }
  ensure_std_fds();
  /* Buffered output would otherwise be written twice (or by a worker). */
  fflush(stdout);
  fflush(stderr);
  for (i = 0; i < n; i++) {
    int sv[2], pp[2];
    pid_t pid;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      st_error_set(err, ST_EINTERNAL, "cannot start worker %u: socketpair: %s",
                   i, strerror(errno));
      goto fail;
    }
    if (pipe2(pp, O_CLOEXEC) != 0) {
      st_error_set(err, ST_EINTERNAL, "cannot start worker %u: pipe: %s", i,
                   strerror(errno));
      close(sv[0]);
      close(sv[1]);
      goto fail;
    }
    pid = fork();
    if (pid < 0) {
      st_error_set(err, ST_EINTERNAL, "cannot start worker %u: fork: %s", i,
                   strerror(errno));
      close(sv[0]);
      close(sv[1]);
      close(pp[0]);
      close(pp[1]);
      goto fail;
    }
    if (pid == 0) {
      close(sv[0]);
      close(pp[0]);
      st__worker_child(i, sv[1], pp[1], reg, self);
    }
    close(sv[1]);
    close(pp[1]);
    p->w[i].pid = pid;
    p->w[i].sock = sv[0];
    p->w[i].out = pp[0];
    p->n = i + 1;
    fcntl(pp[0], F_SETFL, fcntl(pp[0], F_GETFL) | O_NONBLOCK);
  }
  *out = p;
  return ST_OK;
fail:
  if (p->n > 0)
    pool_kill(p);
  pool_free(p);
  return err ? err->code : ST_EINTERNAL;
}

void st__wpool_stop(st__wpool *p) {
  unsigned i;
  if (p == NULL)
    return;
  /* EOF on the socket is the workers' signal to exit. */
  for (i = 0; i < p->n; i++)
    if (p->w[i].sock >= 0) {
      close(p->w[i].sock);
      p->w[i].sock = -1;
    }
  if (!reap_all(p, ST__WORKERS_GRACE_MS))
    pool_kill(p);
  pool_free(p);
}

void st__wpool_forget(st__wpool *p) {
  if (p != NULL)
    pool_free(p);
}

unsigned st__wpool_size(const st__wpool *p) { return p->n; }

long st__wpool_pid(const st__wpool *p, unsigned i) {
  return i < p->n ? (long)p->w[i].pid : -1;
}

int st__wpool_broken(st__wpool *p) {
  unsigned i;
  if (p->broken)
    return 1;
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    pid_t r = waitpid(w->pid, &w->status, WNOHANG);
    if (r == w->pid) {
      w->reaped = 1;
      p->broken = 1;
    }
  }
  return p->broken;
}

/* A worker's socket reported EOF or an error: it is dying. Reaps it (it
 * has closed everything, so it exits promptly; SIGKILL after the grace
 * otherwise), kills the others, and describes the death. */
static void worker_died(st__wpool *p, unsigned i, st__wresult *out) {
  worker *w = &p->w[i];
  char how[160];
  uint64_t end = st__now_ns() + (uint64_t)ST__WORKERS_GRACE_MS * 1000000u * 5;
  while (!w->reaped) {
    pid_t r = waitpid(w->pid, &w->status, WNOHANG);
    if (r == w->pid || (r < 0 && errno != EINTR)) {
      w->reaped = 1;
      break;
    }
    if (st__now_ns() >= end) {
      kill(w->pid, SIGKILL);
      while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
        ;
      w->reaped = 1;
      break;
    }
    poll(NULL, 0, 1);
  }
  st__proc_describe_wait(w->status, how, sizeof how);
  pool_kill(p);
  out->broken = 1;
  wresult_fail(out, ST_EKERNEL, "worker %u (pid %ld) died: %s", i, (long)w->pid,
               how);
}

static void timed_out(st__wpool *p, double timeout_s, st__wresult *out) {
  pool_kill(p);
  out->broken = 1;
  out->timed_out = 1;
  wresult_fail(out, ST_EKERNEL,
               "timed out after %g s (level-3 workers killed and replaced)",
               timeout_s);
}

/* Reads worker i's reply (its socket is readable) into its slot. Returns
 * 0, or -1 when the worker died or sent nonsense (out says so; the pool
 * is broken). */
static int take_reply(st__wpool *p, unsigned i, char *buf, st__wresult *out) {
  worker *w = &p->w[i];
  ssize_t got = recv(w->sock, buf, MSG_MAX, MSG_DONTWAIT);
  st__msg_l3_reply m;
  size_t k;
  if (got < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (got <= 0) {
    worker_died(p, i, out);
    return -1;
  }
  if (st__msg_l3_reply_get(buf, (size_t)got, &m) != 0) {
    wresult_fail(out, ST_EINTERNAL, "worker %u sent a malformed reply", i);
    pool_kill(p);
    out->broken = 1;
    return -1;
  }
  w->reply_status = (st_status)m.status;
  w->reply_lookup = m.lookup;
  free(w->reply_message);
  w->reply_message = m.message;
  m.message = NULL;
  for (k = 0; k < m.n_loaded; k++)
    wresult_add_loaded(out, i, m.loaded[k]);
  w->reply_device_ns = m.device_ns;
  w->reply_copy_ns = m.copy_ns;
  st__msg_l3_reply_free(&m);
  w->awaiting = 0;
  return 0;
}

/* Waits for the replies of every worker with awaiting set, draining their
 * output meanwhile. Stops at the first death or at the deadline. */
static void wait_replies(st__wpool *p, uint64_t deadline, double timeout_s,
                         st__wresult *out) {
  struct pollfd *pf = calloc(2 * (size_t)p->n, sizeof *pf);
  unsigned *who = calloc(2 * (size_t)p->n, sizeof *who);
  char *buf = malloc(MSG_MAX);
  unsigned i;

  if (pf == NULL || who == NULL || buf == NULL) {
    wresult_fail(out, ST_ENOMEM, "out of memory waiting for workers");
    /* The replies are lost to us: the pool cannot be trusted any more. */
    pool_kill(p);
    out->broken = 1;
    goto done;
  }
  for (;;) {
    nfds_t n = 0;
    unsigned left = 0;
    int timeout_ms = -1, r;
    for (i = 0; i < p->n; i++) {
      worker *w = &p->w[i];
      if (w->awaiting) {
        left++;
        pf[n].fd = w->sock;
        pf[n].events = POLLIN;
        who[n++] = i;
      }
      if (w->out >= 0) {
        pf[n].fd = w->out;
        pf[n].events = POLLIN;
        who[n++] = i | 0x80000000u;
      }
    }
    if (left == 0)
      break;
    if (deadline != 0) {
      uint64_t t = st__now_ns();
      if (t >= deadline) {
        timed_out(p, timeout_s, out);
        goto done;
      }
      timeout_ms = (int)((deadline - t + 999999u) / 1000000u);
    }
    r = poll(pf, n, timeout_ms);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      wresult_fail(out, ST_EINTERNAL, "poll: %s", strerror(errno));
      pool_kill(p);
      out->broken = 1;
      goto done;
    }
    for (i = 0; i < n; i++) {
      worker *w;
      if (pf[i].revents == 0)
        continue;
      w = &p->w[who[i] & 0x7fffffffu];
      if (who[i] & 0x80000000u) {
        drain(w);
        continue;
      }
      if (take_reply(p, who[i], buf, out) != 0)
        goto done;
    }
  }
  /* Every worker answered: the first failure by worker index speaks. The
   * workers ran at once, so the round's device and copy times are the
   * longest a worker reported. */
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    if (w->reply_device_ns != ST_NS_NONE &&
        (out->device_ns == ST_NS_NONE || w->reply_device_ns > out->device_ns))
      out->device_ns = w->reply_device_ns;
    if (w->reply_copy_ns != ST_NS_NONE &&
        (out->copy_ns == ST_NS_NONE || w->reply_copy_ns > out->copy_ns))
      out->copy_ns = w->reply_copy_ns;
    if (w->reply_status != ST_OK && out->status == ST_OK) {
      out->is_lookup = w->reply_lookup;
      wresult_fail(out, w->reply_status, "%s",
                   w->reply_message && w->reply_message[0]
                       ? w->reply_message
                       : st_status_str(w->reply_status));
    }
  }
done:
  for (i = 0; i < p->n; i++)
    p->w[i].awaiting = 0;
  free(pf);
  free(who);
  free(buf);
}

/* Sends b to every worker, or (run not NULL) a RUN of its own to each,
 * its shard index the worker's; then waits for their replies. */
static void send_all(st__wpool *p, st__wbuf *b, const int *fds, size_t nfds,
                     uint64_t deadline, double timeout_s, st__wresult *out,
                     const st__msg_l3_run *run) {
  unsigned i;
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    int rc;
    w->reply_status = ST_OK;
    w->reply_lookup = 0;
    w->reply_device_ns = w->reply_copy_ns = ST_NS_NONE;
    if (run != NULL) {
      /* The same size as the one send_built checked: no allocation. */
      st__msg_l3_run mine = *run;
      mine.shard_index = i;
      b->buf.len = 0;
      st__msg_l3_run_put(b, &mine);
    }
    rc = st__proc_send_fds(w->sock, b->buf.data, b->buf.len, fds, nfds);
    if (rc != 0) {
      /* A worker that cannot take a command is dead or dying. */
      worker_died(p, i, out);
      return;
    }
    w->awaiting = 1;
  }
  wait_replies(p, deadline, timeout_s, out);
}

/* Starts a request's result: clear, or failed with out->broken set when
 * the pool is broken (a worker died or timed out). 1 if the request may
 * go ahead. */
static int wpool_begin(const st__wpool *p, st__wresult *out) {
  wresult_init(out);
  if (p->broken) {
    wresult_fail(out, ST_EINTERNAL, "the worker pool is broken");
    out->broken = 1;
    return 0;
  }
  return 1;
}

/* Sends a message without descriptors (b, built by the caller) to every
 * worker, or fails out when building it ran out of memory; frees b. */
static void send_built(st__wpool *p, st__wbuf *b, uint64_t deadline,
                       double timeout_s, st__wresult *out,
                       const st__msg_l3_run *run) {
  if (b->oom)
    wresult_fail(out, ST_ENOMEM, "out of memory");
  else
    send_all(p, b, NULL, 0, deadline, timeout_s, out, run);
  st__wbuf_free(b);
}

void st__wpool_map(st__wpool *p, const st__wcase *wc, uint64_t deadline,
                   double timeout_s, st__wresult *out) {
  st__wbuf b;
  int fds[ST__WORKERS_MAX_SEGMENTS + 1];
  size_t nfds = 0;

  if (!wpool_begin(p, out))
    return;
  if (wc->rh->n + (wc->scratch ? 1 : 0) > ST__WORKERS_MAX_SEGMENTS) {
    wresult_fail(out, ST_ELIMIT,
                 "level 3 passes at most %u tensors to the workers; this "
                 "case has %zu",
                 ST__WORKERS_MAX_SEGMENTS, wc->rh->n);
    return;
  }
  st__wbuf_init(&b);
  st__l3_map_put(&b, wc, p->n, fds, &nfds);
  if (b.oom || b.buf.len > MSG_MAX) {
    wresult_fail(out, b.oom ? ST_ENOMEM : ST_ELIMIT,
                 "the case's argument layout is too large for the workers "
                 "(%zu bytes)",
                 b.buf.len);
  } else {
    send_all(p, &b, fds, nfds, deadline, timeout_s, out, NULL);
  }
  st__wbuf_free(&b);
}

void st__wpool_run(st__wpool *p, unsigned round, uint64_t deadline,
                   double timeout_s, st__wresult *out) {
  st__wbuf b;
  st__msg_l3_run run;
  if (!wpool_begin(p, out))
    return;
  run.round = round;
  run.shard_index = 0; /* each worker's own, as it is sent */
  run.shard_count = p->n;
  st__wbuf_init(&b);
  st__msg_l3_run_put(&b, &run);
  send_built(p, &b, deadline, timeout_s, out, &run);
}

void st__wpool_release(st__wpool *p, uint64_t deadline, double timeout_s,
                       st__wresult *out) {
  st__wbuf b;
  if (!wpool_begin(p, out))
    return;
  st__wbuf_init(&b);
  st__msg_l3_release_put(&b);
  send_built(p, &b, deadline, timeout_s, out, NULL);
}

void st__wpool_take_output(st__wpool *p, char **text, size_t *len) {
  st__wbuf b;
  unsigned i;
  *text = NULL;
  *len = 0;
  st__wbuf_init(&b);
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    char head[96];
    drain(w);
    if (w->buf.len == 0 && w->dropped == 0)
      continue;
    snprintf(head, sizeof head, "--- worker %u (pid %ld) ---\n", i,
             (long)w->pid);
    st__wbuf_bytes(&b, head, strlen(head));
    st__wbuf_bytes(&b, w->buf.data, w->buf.len);
    if (w->buf.len > 0 && w->buf.data[w->buf.len - 1] != '\n')
      st__wbuf_u8(&b, '\n');
    if (w->dropped > 0) {
      snprintf(head, sizeof head, "[... %zu more bytes not kept]\n",
               w->dropped);
      st__wbuf_bytes(&b, head, strlen(head));
    }
    w->buf.len = 0;
    w->dropped = 0;
  }
  if (b.buf.len == 0 || b.oom) {
    st__wbuf_free(&b);
    return;
  }
  st__wbuf_u8(&b, '\0');
  if (b.oom) {
    st__wbuf_free(&b);
    return;
  }
  *text = b.buf.data;
  *len = b.buf.len - 1;
}
