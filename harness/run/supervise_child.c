/* SPDX-License-Identifier: MIT */
/* A supervised child (run/supervise.h says what it shares with its
 * supervisor, run/supervise.c): it runs the cases it is sent one after
 * another through the child side every forked child has
 * (run/childside.h), keeps each case's events and log lines in its
 * journal before any foreign code runs, and sends the finished cases'
 * log lines and results back in batches, each write in an envelope
 * (wire/envelope.h). A kernel that leaves what the child cannot go on
 * after (its descriptors closed, a thread running) is charged through
 * the shared page; one that leaves processes retires the child. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "case/exec.h"
#include "case/phase.h"
#include "case/result.h"
#include "case/wire.h"
#include "run/audit.h"
#include "run/capture.h"
#include "run/childside.h"
#include "run/supervise.h"
#include "wire/envelope.h"
#include "wire/frame.h"
#include "wire/msg.h"

/* A journal larger than this is truncated after its case. */
#define FILE_KEEP ((off_t)256 << 10)

void st__sv_rewind_file(int fd, off_t size) {
  if (size > FILE_KEEP && ftruncate(fd, 0) != 0) {
  }
  lseek(fd, 0, SEEK_SET);
}

typedef struct child child;
static void child_send(child *ch);

struct child {
  st__runctx *rc;
  const st_case_ref *refs;
  size_t n;
  int sock, journal, cap_w, cap_rd;
  st__capbuf *cap_buf; /* shared with the supervisor */
  st__capture cap;
  st__audit audit;
  st__childside side;
  uint32_t seq; /* envelopes sent */
  char *jmap;   /* the journal mapping; state->journal_len bytes used */
  int spilled;  /* frames went on to the journal's memfd: all later ones
                   do too, until it starts again */
  st__sv_state *state;
  unsigned char cmd[4 * ST__SV_DEPTH]; /* case indices read, not yet run */
  size_t cmd_len, cmd_at;
  size_t unsent;        /* finished cases whose results are not sent yet */
  int live;             /* st_run_options.live: nothing waits for a batch */
  int oneshot;          /* it runs one case (its executor forks), then exits */
  pthread_mutex_t lock; /* guards: pending, msg */
  st__wbuf pending;     /* journal frames not yet written */
  st__wbuf msg;         /* the frames of this case's reply */
};

/* The pending frames into the journal (the lock held): copied into its
 * mapping, no system call, while they fit; then written to its memfd. */
static void journal_put_locked(child *ch) {
  st__wbuf *b = &ch->pending;
  uint32_t at = ch->state->journal_len;
  if (b->oom || b->buf.len == 0) {
    b->buf.len = 0; /* out of memory: lost (st__wbuf_drain's rule) */
    return;
  }
  if (!ch->spilled && b->buf.len <= ST__SV_JOURNAL - at) {
    memcpy(ch->jmap + at, b->buf.data, b->buf.len);
    /* The length after the bytes: a death between the two loses only
     * these frames. */
    __atomic_store_n(&ch->state->journal_len, at + (uint32_t)b->buf.len,
                     __ATOMIC_RELEASE);
    b->buf.len = 0;
    return;
  }
  ch->spilled = 1;
  st__wbuf_drain(b, ch->journal);
}

static void journal_flush(child *ch) {
  pthread_mutex_lock(&ch->lock);
  journal_put_locked(ch);
  pthread_mutex_unlock(&ch->lock);
}

/* What msg has, sent now (the lock held). Between cases (rewind) the
 * journal holds only results, now sent: it starts again. */
static void send_locked(child *ch, int rewind) {
  if (ch->msg.oom)
    _exit(ST__EXIT_NOMEM);
  if (ch->msg.buf.len > 0 && st__env_send(ch->sock, ch->seq++, ch->msg.buf.data,
                                          ch->msg.buf.len) != ST_OK)
    _exit(0); /* the supervisor is gone */
  ch->msg.buf.len = 0;
  if (rewind) {
    ch->unsent = 0;
    __atomic_store_n(&ch->state->journal_len, 0, __ATOMIC_RELEASE);
    if (ch->spilled)
      st__sv_rewind_file(ch->journal, lseek(ch->journal, 0, SEEK_CUR));
    ch->spilled = 0;
  }
}

static void child_log(void *data, const char *line, size_t len) {
  child *ch = data;
  pthread_mutex_lock(&ch->lock);
  st__msg_put_line(&ch->pending, ST__MSG_LOG, line, len);
  st__msg_put_line(&ch->msg, ST__MSG_LOG, line, len);
  if (ch->live)
    send_locked(ch, 0); /* mid-case: the journal has its events */
  pthread_mutex_unlock(&ch->lock);
}

static void child_phase_begin(void *data, const char *phase, int round) {
  child *ch = data;
  size_t n = strnlen(phase, sizeof ch->state->phase - 1);
  ch->state->round = round;
  ch->state->phase_ns = st__now_ns();
  /* No snprintf: this runs six times a case. */
  memcpy(ch->state->phase, phase, n);
  ch->state->phase[n] = '\0';
}

/* Before foreign code runs, what came before it is made safe; and the
 * results of the cases before it are sent, so that whatever bytes it
 * writes to the socket come after them (a protocol error is then the
 * case's whose result is due: this one). */
static void child_before_foreign(void *data) {
  child *ch = data;
  if (ch->unsent > 0 && st__childside_foreign(ch->rc))
    child_send(ch);
  journal_flush(ch);
}

static void child_phase_end(void *data, const st_event *ev) {
  child *ch = data;
  pthread_mutex_lock(&ch->lock);
  st__wire_event_frame(&ch->pending, ev);
  pthread_mutex_unlock(&ch->lock);
}

/* What a case printed, out[0..n) (freed here) and dropped bytes more, put
 * before the output r has (its workers', level 3): by the child after a
 * case, by the supervisor after the child died in one. */
void st__sv_put_output(st_case_result *r, char *out, size_t n,
                       uint64_t dropped) {
  if (r != NULL && (n > 0 || dropped > 0)) {
    const char *prior = st_case_result_output(r);
    size_t lp = prior ? strlen(prior) : 0;
    char *all = malloc(n + lp + 64);
    if (all != NULL) {
      size_t k = n;
      if (n > 0)
        memcpy(all, out, n);
      if (dropped > 0)
        k += (size_t)snprintf(all + k, 64, "[... %llu more bytes not kept]\n",
                              (unsigned long long)dropped);
      if (lp)
        memcpy(all + k, prior, lp);
      st__case_result_set_output(r, all, k + lp);
      free(all);
    }
  }
  free(out);
}

/* The child, after a case: what it printed (one read of the pipe, which
 * says it is empty, when nothing). */
static void child_attach(child *ch, st_case_result *r) {
  size_t n;
  uint64_t dropped;
  char *out = st__capture_take(&ch->cap, &n, &dropped);
  st__sv_put_output(r, out, n, dropped);
}

/* Reads what the socket has now (wait: block until something comes).
 * Returns 0 at the end of the stream or on an error. */
static int child_fill(child *ch, int wait) {
  ssize_t k;
  if (ch->cmd_at > 0) {
    memmove(ch->cmd, ch->cmd + ch->cmd_at, ch->cmd_len - ch->cmd_at);
    ch->cmd_len -= ch->cmd_at;
    ch->cmd_at = 0;
  }
  do
    k = recv(ch->sock, ch->cmd + ch->cmd_len, sizeof ch->cmd - ch->cmd_len,
             wait ? 0 : MSG_DONTWAIT);
  while (k < 0 && errno == EINTR);
  if (k > 0)
    ch->cmd_len += (size_t)k;
  return k > 0 || (k < 0 && !wait && (errno == EAGAIN || errno == EWOULDBLOCK));
}

/* The next case index; 0 at the end of the stream. Before the child
 * would wait for one, it sends what it has finished. */
static int child_next(child *ch, uint32_t *index) {
  while (ch->cmd_len - ch->cmd_at < ST__MSG_CASE_SIZE) {
    if (!child_fill(ch, 0))
      return 0;
    if (ch->cmd_len - ch->cmd_at >= ST__MSG_CASE_SIZE)
      break;
    child_send(ch);
    if (!child_fill(ch, 1))
      return 0;
  }
  *index = st__msg_get_case(ch->cmd + ch->cmd_at);
  ch->cmd_at += ST__MSG_CASE_SIZE;
  return 1;
}

/* Sends the finished cases' log lines and results in one write; their
 * copies in the journal are then not needed. */
static void child_send(child *ch) {
  pthread_mutex_lock(&ch->lock);
  send_locked(ch, 1);
  pthread_mutex_unlock(&ch->lock);
}

/* The running case's kernel did what the child cannot go on after (its
 * descriptors closed, a thread of its left running): the case is charged
 * with why, through the shared page (the socket may be gone), its events
 * kept in the journal, and the child ends, the case still marked running;
 * what the kernel left dies with it. */
_Noreturn static void child_charge(child *ch, const char *why) {
  size_t n = strnlen(why, sizeof ch->state->charge - 1);
  memcpy(ch->state->charge, why, n);
  ch->state->charge[n] = '\0';
  journal_flush(ch);
  _exit(ST__EXIT_CHARGED);
}

static void child_run_one(child *ch, size_t i) {
  st_case_result *r;
  size_t at;
  int foreign;
  char why[256];

  ch->state->phase[0] = '\0';
  ch->state->round = -1;
  ch->state->case_ns = st__now_ns();
  ch->state->running = (uint32_t)i + 1;
  if (st__childside_foreign(ch->rc))
    st__audit_case_begin(&ch->audit);
  if (ch->live) {
    /* Someone watches: the case's begin now (its progress line). */
    pthread_mutex_lock(&ch->lock);
    st__msg_put_index(&ch->msg, ST__MSG_BEGIN, (uint32_t)i);
    send_locked(ch, 1);
    pthread_mutex_unlock(&ch->lock);
  }
  r = st__childside_run(&ch->side, &ch->refs[i], i, ch->n);
  st__childside_flush_stdio();
  /* Only code that is not the harness's own (a plugin's kernel or golden,
   * an API user's module) prints on fd 1 or 2, closes them or starts
   * processes, so the checks for those (three system calls a case, a
   * third of what supervision costs a small case, docs/benchmarks.md)
   * are made after such cases only. */
  foreign = st__childside_foreign(ch->rc);
  if (foreign) {
    /* What the kernel left, while the case is still the running one: a
     * death now (a thread it left calling exit()) is charged to it. */
    ch->state->auditing = 1;
    if (st__audit_fds(&ch->audit, why, sizeof why) ||
        st__audit_threads(&ch->audit, why, sizeof why))
      child_charge(ch, why);
    child_attach(ch, r);
  }
  /* The result, in the journal now (safe if the child dies later) and in
   * the next batch for the socket. */
  pthread_mutex_lock(&ch->lock);
  at = ch->pending.buf.len;
  st__wire_result_frame(&ch->pending, (uint32_t)i, r);
  if (!ch->pending.oom)
    st__wbuf_bytes(&ch->msg, ch->pending.buf.data + at,
                   ch->pending.buf.len - at);
  pthread_mutex_unlock(&ch->lock);
  __atomic_store_n(&ch->state->finished, ch->state->finished + 1,
                   __ATOMIC_RELAXED);
  st_case_result_free(r);
  journal_flush(ch);
  ch->state->running = 0;
  ch->state->auditing = 0;
  if (foreign && !ch->oneshot && st__audit_processes(&ch->audit)) {
    /* The case started processes that still run (D10): they are killed
     * with this child's process group, now, not at the end of the run.
     * Its result is sent; the cases sent after it go to a fresh child. */
    st_log(ST_LOG_WARNING,
           "%s left processes running; they are killed "
           "with its supervised child (pid %ld)",
           ch->refs[i].scene->cases[ch->refs[i].index].name, (long)getpid());
    ch->state->retired = 1;
    child_send(ch);
    st__childside_flush_stdio();
    _exit(0);
  }
  if (foreign)
    st__childside_capture(ch->cap_w);
  if (++ch->unsent >= ST__SV_BATCH || ch->live ||
      ch->msg.buf.len >= ST__ENV_SEND_AT)
    child_send(ch);
}

static void child_main(child *ch) {
  uint32_t i;
  /* What the executors kept in the supervisor is not ours (it keeps
   * none: it dispatches nothing); fd 1 and 2 are the capture. */
  st__childside_begin(ch->rc, ch->cap_w);
  st__wbuf_init(&ch->pending);
  st__wbuf_init(&ch->msg);
  pthread_mutex_init(&ch->lock, NULL);
  st__log_set_sink(child_log, ch);
  ch->side.rc = ch->rc;
  ch->side.audit = &ch->audit;
  ch->side.data = ch;
  ch->side.phase_begin = child_phase_begin;
  ch->side.before_foreign = child_before_foreign;
  ch->side.phase_end = child_phase_end;
  if (st__capture_start(&ch->cap, ch->cap_buf, ST__CAPTURE_MAX, ch->cap_rd) !=
      0)
    _exit(ST__EXIT_NOMEM);
  /* What a kernel must leave alone; the subreaper is kept by a child that
   * runs cases one after another (a oneshot's workers are its children). */
  st__audit_keep(&ch->audit, ch->sock, "the socket to the supervisor");
  st__audit_keep(&ch->audit, ch->journal, "the journal");
  st__audit_keep(&ch->audit, ch->cap_w, "the capture");
  st__audit_keep(&ch->audit, ch->cap_rd, "the capture's read end");
  st__audit_init(&ch->audit, !ch->oneshot);
  /* The eager plugins the supervisor did not load
   * (docs/reliability.md#the-process-model), before the first case: as the
   * in-process run has them, loaded before any phase. Not by a child whose case
   * forks a worker pool: its workers load them (a lookup that misses), so the
   * pool's parent has loaded none. */
  if (!ch->oneshot)
    st__childside_load_deferred(ch->rc);
  while (child_next(ch, &i)) {
    if (i >= ch->n)
      _exit(ST__EXIT_BAD_INDEX);
    child_run_one(ch, i);
  }
  st__executors_run_end(ch->rc);
  child_send(ch); /* what run_end logged */
  st__childside_flush_stdio();
  /* _exit: none of the supervisor's atexit handlers run in its copy. */
  _exit(0);
}

_Noreturn void st__sv_child_main(const st__sv_child_args *a) {
  child ch;
  memset(&ch, 0, sizeof ch);
  ch.rc = a->rc;
  ch.refs = a->refs;
  ch.n = a->n;
  ch.sock = a->sock;
  ch.journal = a->journal;
  ch.jmap = a->jmap;
  ch.cap_buf = a->cap_buf;
  ch.cap_rd = a->cap_rd;
  ch.cap_w = a->cap_w;
  ch.state = a->state;
  ch.live = a->live;
  ch.oneshot = a->oneshot;
  memset(ch.state, 0, sizeof *ch.state);
  st__guard_note_to(ch.state->fault, sizeof ch.state->fault);
  child_main(&ch);
  _exit(0); /* child_main does not return */
}
