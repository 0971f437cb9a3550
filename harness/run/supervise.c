/* SPDX-License-Identifier: MIT */
/* The supervise scheduler (run/sched.h; docs/reliability.md#the-process-model,
 * the CLI's default): the cases run in -j N supervised children, forked from
 * this process, which dispatches nothing itself. Each child
 * (run/supervise_child.c) runs the cases it is sent one after another and sends
 * back each one's log lines and result (run/supervise.h says over what). A
 * child that dies (a signal, exit() or _exit() from a kernel, abort, heap
 * corruption) fails only its running case, as an error naming how it ended and
 * the phase it was in; a fresh child goes on at the next case. --timeout kills
 * and replaces the child. A case whose executor forks (level 3) runs in a
 * child of its own, forked for it from this clean process, so its worker
 * pool never comes from a
 * process that dispatched a case or loaded a plugin. SIGINT and SIGTERM
 * stop the run: the children's process groups are killed, the running
 * cases are errors ("interrupted"), the unrun ones skips, and every
 * report is finished. Out of memory here, a reserve is given back so that
 * the report is still complete (the run then fails: exit 3).
 *
 * Cost: a child is sent up to two cases ahead (one running, one waiting
 * in its socket), so it never waits for the supervisor between cases; one
 * write per case comes back. Cases with a timeout are sent only to an idle
 * child (their deadline starts when they are sent), and so are all cases
 * under --fail-fast (a case sent is a case run). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "base/log_sink.h"
#include "base/buf.h"
#include "base/proc.h"
#include "case/phase.h"
#include "case/result.h"
#include "case/wire.h"
#include "wire/envelope.h"
#include "wire/msg.h"
#include "run/capture.h"
#include "run/interrupt.h"
#include "run/sched.h"
#include "run/supervise.h"

/* Cases a child may hold at once (sent ahead, so that it never waits
 * for the supervisor between cases), and how many finished cases it sends
 * back in one write (until then their results are safe in its journal). */
#define DEPTH ST__SV_DEPTH
#define BATCH ST__SV_BATCH
/* While a child has more than BATCH cases queued and more are to come,
 * the supervisor does not wait on its socket: it reads it every TICK_MS
 * instead. A child's write to a socket nobody waits on wakes nobody, and
 * on a virtual machine a wake-up of a process on another CPU (an
 * inter-processor interrupt) costs the writer about 13 us, once a batch;
 * the supervisor's own tick costs the child nothing. DEPTH cases queued
 * are far more than a tick's worth of small ones. */
#define TICK_MS 1
/* A case this long (ns) takes far longer than a result's round trip to
 * the supervisor and the next index back (tens of microseconds). */
#define LONG_CASE_NS 1000000u
/* What is kept of a case's captured output; the rest is counted. */
#define CAPTURE_MAX ST__CAPTURE_MAX
/* What a frame from a child may be (wire/envelope.h): a log line is
 * shorter than this, a result at most this large. */
#define LOG_MAX ((uint32_t)64 << 10)
#define RESULT_MAX ((uint32_t)256 << 20)
static const st__env_rule sv_rules[] = {
    {ST__MSG_LOG, 4, 4 + LOG_MAX},
    {ST__MSG_RESULT, 4, RESULT_MAX},
    {ST__MSG_BEGIN, 4, 4},
};
/* A case sent again because its child died between cases, after this many
 * times, is charged with that death (so that a child that dies between
 * cases for ever cannot make the run go round for ever). */
#define REDO_MAX 2

static int supervise_fits(const st__schedctx *sc) {
  return sc->rc->opts->supervise && !sc->rc->opts->isolate;
}

/* ---- small helpers ---------------------------------------------------- */

/* Reads the bytes of a memfd the other side wrote, [0, size), at most
 * max; *total is the size. NULL and *n 0 when empty or unreadable. */
static char *read_file(int fd, off_t size, size_t max, size_t *n) {
  size_t want = (size_t)size < max ? (size_t)size : max, got = 0;
  char *p;
  *n = 0;
  if (size <= 0 || (p = malloc(want + 1)) == NULL)
    return NULL;
  while (got < want) {
    ssize_t k = pread(fd, p + got, want - got, (off_t)got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  p[got] = '\0';
  *n = got;
  return p;
}

/* ---- the state -------------------------------------------------------- */

typedef struct slot {
  pid_t pid;       /* > 0 while a child lives */
  int sock;        /* our end of its socket pair, nonblocking */
  int pid_fd;      /* a pidfd of it, or -1 */
  int journal;     /* the slot's memfds, kept across its children */
  char *jmap;      /* the slot's journal mapping (ST__SV_JOURNAL bytes) */
  st__capbuf *cap; /* the slot's capture memory (run/capture.h) */
  int cap_rd;      /* its child's capture pipe, read only after its death */
  int oneshot;     /* it runs one case (its executor forks), then exits */
  int exited;      /* its pidfd said so */
  size_t q[DEPTH];
  size_t nq;   /* cases sent, oldest (running, or next) first */
  size_t sent; /* to this child, in all */
  unsigned char out[4 * DEPTH]; /* indices queued, sent once a dispatch */
  size_t n_out;
  int shut;          /* after out is sent, the end of the stream (a oneshot) */
  int closed;        /* the stream has ended: the child takes no more cases and
                        exits after the ones it has */
  int watched;       /* its socket is in this wait's poll set (watch_sock) */
  uint64_t deadline; /* of q[0], 0: none */
  double timeout;
  int timed_out;
  st__buf in;   /* frames read from sock, not yet taken */
  uint32_t seq; /* the envelope due next from the child */
  int broken;   /* it wrote what is no envelope of ours: killed */
  int killed;   /* for that, by reap() */
  char why[200];
} slot;

typedef struct sv {
  st__schedctx *sc;
  unsigned jobs;
  slot *slots;
  st__sv_state *state; /* jobs of them, shared with the children */
  st_case_result **done;
  char *ready;
  char *told;   /* by case: case_begin went to the observers live */
  size_t *redo; /* cases sent to a child that died before it began them */
  size_t n_redo;
  unsigned char *redos; /* by case: how often it was sent again */
  size_t next_send, next_report;
  struct pollfd *pf;
  size_t *who;
  int stop; /* --fail-fast */
  int oom;
  uint64_t dur_sum; /* of the results so far (their duration_ns) */
  size_t dur_n;
} sv;

/* ---- starting and ending children -------------------------------------- */

static st_case_result *error_result(sv *s, size_t i, const char *fmt,
                                    const char *what, int e) {
  st_case_info info;
  st_case_result *r;
  st__sched_info(s->sc, i, &info);
  r = st__case_result_new(info.scene, info.name, info.file, info.line,
                          info.platform, info.seed);
  if (r != NULL) {
    st__case_result_set_pid(r, (long)getpid());
    st__case_result_set_status(r, ST_CASE_ERROR, fmt, what, strerror(e));
  }
  return r;
}

/* The child's side after fork: its own group (so that a kill of the
 * group takes what it started along), death with the supervisor, default
 * signals, and none of its siblings' descriptors (D14). */
static void child_begin(sv *s, size_t k, int sock, const int cap[2],
                        pid_t parent, int oneshot) {
  st__sv_child_args ch;
  size_t j;
  setpgid(0, 0);
  /* What a kernel starts and orphans (`sleep 100 &` from a shell) is
   * reparented to this child, which so sees it after the case (D10). */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent ||
      prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    _exit(ST__EXIT_ORPHANED);
  st__intr_child();
  /* Nor the supervisor's own: the reports, --events, the saved fd 1. */
  st__proc_close_parent_only();
  for (j = 0; j < s->jobs; j++) {
    slot *o = &s->slots[j];
    if (o->sock >= 0)
      close(o->sock);
    if (o->pid_fd >= 0)
      close(o->pid_fd);
    if (j != k) {
      if (o->jmap != NULL)
        munmap(o->jmap, ST__SV_JOURNAL);
      if (o->journal >= 0)
        close(o->journal);
      if (o->cap_rd >= 0)
        close(o->cap_rd);
      st__capture_unmap(o->cap, CAPTURE_MAX);
    }
  }
  ch.rc = s->sc->rc;
  ch.refs = s->sc->refs;
  ch.n = s->sc->n;
  ch.sock = sock;
  ch.journal = s->slots[k].journal;
  ch.jmap = s->slots[k].jmap;
  ch.cap_buf = s->slots[k].cap;
  ch.cap_rd = cap[0];
  ch.cap_w = cap[1];
  ch.state = &s->state[k];
  ch.live = s->sc->rc->opts->live;
  ch.oneshot = oneshot;
  st__sv_child_main(&ch);
}

/* Forks slot k's child. Returns 0, or errno with *what the call that
 * failed (most often a descriptor, not the fork). */
static int slot_start(sv *s, size_t k, int oneshot, const char **what) {
  slot *c = &s->slots[k];
  int sp[2], cap[2];
  pid_t pid, parent = getpid();

  *what = "memfd_create (journal)";
  if (c->journal < 0 &&
      (c->journal = memfd_create("scenetest-journal", MFD_CLOEXEC)) < 0)
    return errno;
  if (c->jmap == NULL) {
    void *m = mmap(NULL, ST__SV_JOURNAL, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    *what = "mmap (journal)";
    if (m == MAP_FAILED)
      return errno;
    c->jmap = m;
  }
  *what = "mmap (capture)";
  if (c->cap == NULL && (c->cap = st__capture_map(CAPTURE_MAX)) == NULL)
    return errno;
  /* A pipe per child (what a dead child's kernel started may hold its
   * write end); its read end nonblocking for the readers, the child's
   * drain thread and, once it is dead, this process (the write end
   * blocks: a kernel printing faster than the drain waits for it). */
  *what = "pipe (capture)";
  if (pipe2(cap, O_CLOEXEC) != 0)
    return errno;
  fcntl(cap[0], F_SETFL, O_NONBLOCK);
  *what = "socketpair";
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
    int e = errno;
    close(cap[0]);
    close(cap[1]);
    return e;
  }
  *what = "fork";
  /* Every stream, the report's included: a kernel that calls exit()
   * flushes the child's copies of what is buffered. */
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(sp[0]);
    close(sp[1]);
    close(cap[0]);
    close(cap[1]);
    return e;
  }
  if (pid == 0) {
    close(sp[0]);
    child_begin(s, k, sp[1], cap, parent, oneshot);
  }
  __atomic_store_n(&s->state[k].finished, 0, __ATOMIC_RELAXED);
  setpgid(pid, pid); /* both sides: whichever runs first */
  close(sp[1]);
  close(cap[1]);
  fcntl(sp[0], F_SETFL, O_NONBLOCK);
  c->cap_rd = cap[0];
  c->seq = 0;
  c->broken = 0;
  c->killed = 0;
  c->why[0] = '\0';
  c->pid = pid;
  c->sock = sp[0];
  c->pid_fd = st__proc_pidfd_open(pid);
  c->oneshot = oneshot;
  c->exited = 0;
  c->nq = 0;
  c->sent = 0;
  c->deadline = 0;
  c->timed_out = 0;
  c->in.len = 0;
  c->n_out = 0;
  c->shut = 0;
  c->closed = 0;
  return 0;
}

/* The slot's child is gone (waited for): its descriptors closed and its
 * group killed (whatever a kernel started must not outlive it). */
static void slot_end(slot *c) {
  st__proc_kill_group(c->pid);
  if (c->sock >= 0)
    close(c->sock);
  if (c->pid_fd >= 0)
    close(c->pid_fd);
  if (c->cap_rd >= 0)
    close(c->cap_rd);
  c->sock = c->pid_fd = c->cap_rd = -1;
  c->pid = -1;
  c->exited = 0;
  c->oneshot = 0;
}

static void slot_kill_wait(slot *c, int *status) {
  kill(-c->pid, SIGKILL);
  kill(c->pid, SIGKILL);
  while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
    ;
}

/* ---- results ---------------------------------------------------------- */

/* Case i is finished with r (NULL: out of memory; the reserve is given
 * back and a smaller result tried, so the report still has the case). */
static void finish(sv *s, size_t i, st_case_result *r) {
  if (r == NULL) {
    st_case_info info;
    free(s->sc->reserve);
    s->sc->reserve = NULL;
    s->oom = 1;
    st__sched_info(s->sc, i, &info);
    r = st__case_result_new(info.scene, info.name, info.file, info.line,
                            info.platform, info.seed);
    if (r != NULL)
      st__case_result_set_status(r, ST_CASE_ERROR,
                                 "out of memory in the supervisor");
  }
  if (s->done[i] != NULL || s->ready[i]) {
    /* A case has exactly one result: a second is a harness bug. */
    st_case_result_free(r);
    s->oom = 1;
    return;
  }
  s->done[i] = r;
  s->ready[i] = 1;
  s->dur_sum += st_case_result_duration_ns(r);
  s->dur_n++;
  if (st__sched_stops(s->sc, r))
    s->stop = 1;
  st__sched_finished(s->sc, i, r);
}

static void report_ready(sv *s) {
  while (s->next_report < s->sc->n && s->ready[s->next_report]) {
    st__sched_report(s->sc, s->next_report, s->done[s->next_report],
                     s->told[s->next_report] ? ST__REPORT_EVENTS
                                             : ST__REPORT_REPLAY);
    s->done[s->next_report] = NULL;
    s->next_report++;
  }
}

/* A child's log line, placed as our own would be. */
/* A result frame's payload: the result of the slot's oldest case, which
 * leaves its queue; a frame for any other case is ignored (a child
 * answers in order, so it is one it was not asked for). */
static void take_result(sv *s, slot *c, const char *payload, size_t plen) {
  st__rbuf rb;
  uint32_t i;
  st__rbuf_init(&rb, payload, plen);
  if (st__rbuf_u32(&rb) != c->q[0] || rb.bad)
    return;
  finish(s, c->q[0], st__wire_get_result_frame(payload, plen, &i));
  memmove(c->q, c->q + 1, (c->nq - 1) * sizeof *c->q);
  c->nq--;
  c->deadline = 0;
}

static void keep_log(sv *s, const char *line, size_t len) {
  (void)s;
  st__log_passthrough(line, len);
}

/* One frame of slot c's child, checked by its envelope. */
static void take_frame(sv *s, slot *c, uint8_t type, const char *payload,
                       size_t plen) {
  uint32_t i;
  if (type == ST__MSG_LOG) {
    size_t len;
    const char *line;
    if (st__msg_get_line(payload, plen, &line, &len) == 0)
      keep_log(s, line, len);
  } else if (type == ST__MSG_BEGIN && c->nq > 0 &&
             st__msg_get_index(payload, plen, &i) == 0) {
    /* Live: a case that is next in the report is told as it begins,
     * after what finished before it. */
    report_ready(s);
    if (i == c->q[0] && i == s->next_report && !s->told[i]) {
      st_case_info info;
      st__sched_info(s->sc, i, &info);
      st__fanout_case_begin(s->sc->fo, &info);
      s->told[i] = 1;
    }
  } else if (type == ST__MSG_RESULT && c->nq > 0) {
    take_result(s, c, payload, plen);
  }
}

/* Takes the complete envelopes slot k's child sent (wire/envelope.h).
 * What is no envelope of its is a protocol error: nothing after it is
 * believed, and the child is killed; child_died charges the case whose
 * result was due (run/supervise.h: a child sends the results before a
 * case's foreign code runs, so that is the case that wrote it). */
static void take_frames(sv *s, size_t k) {
  slot *c = &s->slots[k];
  const char *p = c->in.data, *body, *payload;
  size_t left = c->in.len, blen, used, plen, fused;
  uint8_t type;
  int got;
  while (!c->broken && left > 0 &&
         (got = st__env_next(p, left, c->seq, sv_rules,
                             sizeof sv_rules / sizeof sv_rules[0], &body, &blen,
                             &used, c->why, sizeof c->why)) != 0) {
    if (got < 0) {
      c->broken = 1; /* reap() kills it, unless it is already dead */
      break;
    }
    c->seq++;
    while (st__wire_next_frame(body, blen, &type, &payload, &plen, &fused)) {
      take_frame(s, c, type, payload, plen);
      body += fused;
      blen -= fused;
    }
    p += used;
    left -= used;
  }
  if (c->broken)
    left = 0;
  if (left > 0 && p != c->in.data)
    memmove(c->in.data, p, left);
  c->in.len = left;
}

/* Reads what slot k's socket has. 1 at its end. */
static int read_sock(sv *s, size_t k) {
  slot *c = &s->slots[k];
  for (;;) {
    ssize_t n;
    /* Grown only when nearly full: growing by realloc copies (and so
     * faults in) the whole buffer, which a small reply never needs. */
    if (c->in.cap - c->in.len < 16384 &&
        st__buf_reserve(&c->in, 65536) != ST_OK) {
      /* Out of memory: the reserve, then what can be taken. */
      free(s->sc->reserve);
      s->sc->reserve = NULL;
      s->oom = 1;
      if (st__buf_reserve(&c->in, 65536) != ST_OK)
        return 1;
    }
    n = read(c->sock, c->in.data + c->in.len, c->in.cap - c->in.len);
    if (n > 0) {
      c->in.len += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    take_frames(s, k);
    return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }
}

/* A new result for case i, identity only. */
static st_case_result *from_info(sv *s, size_t i) {
  st_case_info info;
  st__sched_info(s->sc, i, &info);
  return st__case_result_new(info.scene, info.name, info.file, info.line,
                             info.platform, info.seed);
}

/* What the case printed, after its child died in it: the slot's capture
 * memory and what the pipe still holds. */
static void dead_attach(slot *c, st_case_result *r) {
  size_t n = 0;
  uint64_t dropped = 0;
  char *out = c->cap == NULL ? NULL
                             : st__capture_take_dead(c->cap, CAPTURE_MAX,
                                                     c->cap_rd, &n, &dropped);
  st__sv_put_output(r, out, n, dropped);
}

/* Takes what the dead child of slot k journalled: the results of cases
 * it finished but had not sent (finished now), their log lines, and the
 * events of the case it was in, which *partial gets (a new result of
 * case q[0], or NULL when no case is left or out of memory). */
static void take_journal(sv *s, size_t k, st_case_result **partial) {
  slot *c = &s->slots[k];
  off_t end = lseek(c->journal, 0, SEEK_CUR);
  size_t n = 0, left, plen, used;
  size_t jl = __atomic_load_n(&s->state[k].journal_len, __ATOMIC_ACQUIRE);
  char *spill = read_file(c->journal, end, (size_t)(end > 0 ? end : 0), &n);
  char *j;
  const char *p, *payload;
  uint8_t type;
  st_case_result *r = NULL;

  /* The mapping's frames, then what spilled to the memfd after them. */
  if (jl > ST__SV_JOURNAL)
    jl = 0; /* a child that scribbled on it: nothing there is trusted */
  j = malloc(jl + n + 1);
  if (j != NULL) {
    memcpy(j, c->jmap, jl);
    if (n > 0)
      memcpy(j + jl, spill, n);
    n += jl;
  } else {
    s->oom = 1;
  }
  free(spill);
  s->state[k].journal_len = 0;
  p = j;
  left = n;
  while (p != NULL &&
         st__wire_next_frame(p, left, &type, &payload, &plen, &used)) {
    st__rbuf rb;
    st__rbuf_init(&rb, payload, plen);
    /* A child that broke the protocol: only its log lines (its results
     * and events are not believed; its case is charged, the rest redone). */
    if (type == ST__MSG_EVENT && c->nq > 0 && !c->broken) {
      if (r == NULL)
        r = from_info(s, c->q[0]);
      if (r != NULL && st__wire_get_event(&rb, r) != ST_OK)
        s->oom = 1;
    } else if (type == ST__MSG_LOG) {
      size_t len;
      const char *line;
      if (st__msg_get_line(payload, plen, &line, &len) == 0)
        keep_log(s, line, len);
    } else if (type == ST__MSG_RESULT && c->nq > 0 && !c->broken) {
      /* The events so far were this case's: its own result has them. */
      st_case_result_free(r);
      r = NULL;
      take_result(s, c, payload, plen);
    }
    p += used;
    left -= used;
  }
  free(j);
  st__sv_rewind_file(c->journal, end);
  if (r == NULL && c->nq > 0)
    r = from_info(s, c->q[0]);
  *partial = r;
}

/* The begun case r of a child that died (state st) lasted from its start
 * until now, and so did the phase it was in: that phase gets an error
 * event (unless its own is there), for the reports' timelines. Returns 0,
 * or -1 out of memory. */
static int time_the_death(st_case_result *r, const st__sv_state *st) {
  uint64_t now = st__now_ns();
  size_t i, n;
  st_event ev;
  char name[sizeof st->phase];
  if (st->case_ns == 0 || now < st->case_ns)
    return 0;
  st__case_result_set_duration(r, now - st->case_ns);
  n = strnlen(st->phase, sizeof st->phase - 1);
  if (n == 0 || st->phase_ns < st->case_ns || now < st->phase_ns)
    return 0;
  memcpy(name, st->phase, n);
  name[n] = '\0';
  for (i = 0; i < st_case_result_event_count(r); i++) {
    const st_event *e = st_case_result_event(r, i);
    if (strcmp(e->name, name) == 0 && e->round == st->round)
      return 0;
  }
  memset(&ev, 0, sizeof ev);
  ev.name = name;
  ev.round = st->round;
  ev.start_ns = st->phase_ns;
  ev.dur_ns = now - st->phase_ns;
  ev.status = ST_PHASE_ERROR;
  ev.device_ns = ev.copy_ns = ST_NS_NONE;
  return st__case_result_add_event(r, &ev) == ST_OK ? 0 : -1;
}

/* Whether slot c's child died between cases, after finishing some, not
 * killed by us (what a case before left behind, past the checks of
 * run/audit.h): the cases it was sent have not begun. Not after a case
 * was sent again REDO_MAX times so: then it is charged. */
static int died_between_cases(const sv *s, const slot *c,
                              const st__sv_state *st, int sig) {
  return c->nq > 0 && sig == 0 && !c->timed_out && !c->broken && !st->retired &&
         st->running != (uint32_t)c->q[0] + 1 &&
         __atomic_load_n(&st->finished, __ATOMIC_RELAXED) > 0 &&
         s->redos[c->q[0]] < REDO_MAX;
}

/* The cases slot c's child was sent, none begun, sent again, never
 * blamed. */
static void send_again(sv *s, slot *c) {
  size_t q;
  st_log(ST_LOG_WARNING,
         "supervised child (pid %ld) ended between cases; the %zu case%s "
         "sent to it run in a fresh child",
         (long)c->pid, c->nq, c->nq == 1 ? "" : "s");
  for (q = 0; q < c->nq; q++) {
    if (s->redos[c->q[q]] < REDO_MAX)
      s->redos[c->q[q]]++;
    s->redo[s->n_redo++] = c->q[q];
  }
  c->nq = 0;
}

/* Case i's result when slot c's child wrote bytes on its socket that are
 * no envelope of its: written while i, whose result was due, ran
 * (take_frames). */
static st_case_result *protocol_error(sv *s, slot *c, size_t i, int begun) {
  char msg[400];
  st_case_result *r = from_info(s, i);
  if (begun)
    dead_attach(c, r);
  if (r != NULL) {
    st__case_result_set_pid(r, (long)c->pid);
    snprintf(msg, sizeof msg,
             "protocol error on the supervised child's socket: %s; written "
             "while this case ran (its kernel wrote to a descriptor it does "
             "not own); child pid %ld killed",
             c->why, (long)c->pid);
    st__case_result_override(r, ST_CASE_ERROR, msg);
  }
  return r;
}

/* Where in its case slot c's child died (state st; begun: in its running
 * case), for the message: "during phase 'run' (round 0)" and the like. */
static void death_where(const st__sv_state *st, int begun, char *where,
                        size_t n) {
  if (!begun)
    snprintf(where, n, "before the case began");
  else if (st->auditing)
    snprintf(where, n, "after its last phase");
  else if (st->phase[0] == '\0')
    snprintf(where, n, "before its first phase");
  else if (st->round >= 0)
    snprintf(where, n, "during phase '%.31s' (round %d)", st->phase,
             (int)st->round);
  else
    snprintf(where, n, "during phase '%.31s'", st->phase);
}

/* How slot c's child ended (status; sig: the signal we sent), where: one
 * line into msg[0..n). */
static void death_message(const slot *c, const st__sv_state *st, int status,
                          int sig, int begun, const char *where, char *msg,
                          size_t n) {
  char how[160];
  if (sig != 0) {
    snprintf(msg, n, "interrupted (%s, %s)", st__intr_name(sig), where);
  } else if (c->timed_out) {
    snprintf(msg, n, "timed out after %g s (child pid %ld killed %s)",
             c->timeout, (long)c->pid, where);
  } else if (begun && st->charge[0] != '\0' && WIFEXITED(status) &&
             WEXITSTATUS(status) == ST__EXIT_CHARGED) {
    snprintf(msg, n, "%.*s; supervised child (pid %ld) ended itself %s",
             (int)sizeof st->charge - 1, st->charge, (long)c->pid, where);
  } else {
    st__proc_describe_wait(status, how, sizeof how);
    /* A guard-page fault: the handler named the tensor (the note ends
     * with a NUL it wrote; the bound is the field's). */
    if (st->fault[0] != '\0')
      snprintf(msg, n, "%.*s; supervised child (pid %ld) %s %s",
               (int)sizeof st->fault, st->fault, (long)c->pid, how, where);
    else
      snprintf(msg, n, "supervised child (pid %ld) %s %s", (long)c->pid, how,
               where);
  }
}

/* The result of case i, in which (begun) or before which slot c's child
 * died: r (the journal's events of it, or NULL) made an error naming how
 * and where. */
static st_case_result *died_in(sv *s, slot *c, const st__sv_state *st, size_t i,
                               st_case_result *r, int status, int sig) {
  int begun = st->running == (uint32_t)i + 1;
  char where[96], msg[640];
  if (sig != 0 && !begun) {
    st_case_result_free(r);
    return st__sched_unrun(s->sc, i, "not run: interrupted");
  }
  if (c->broken) {
    st_case_result_free(r);
    return protocol_error(s, c, i, begun);
  }
  if (!begun) {
    /* The journal's events, if any, were an earlier case's. */
    st_case_result_free(r);
    r = from_info(s, i);
  }
  dead_attach(c, r);
  if (r == NULL)
    return NULL;
  if (begun && time_the_death(r, st) != 0)
    s->oom = 1;
  st__case_result_set_pid(r, (long)c->pid);
  death_where(st, begun, where, sizeof where);
  death_message(c, st, status, sig, begun, where, msg, sizeof msg);
  /* An override: what the child recorded before it died (a phase that
   * failed first, say) is not its verdict. */
  st__case_result_override(r, ST_CASE_ERROR, msg);
  return r;
}

/* Slot k's child ended with status (interrupted: by the signal sig, which
 * we sent). Its running case, if any, is an error naming how and where;
 * the cases queued behind it go to the next child. */
static void child_died(sv *s, size_t k, int status, int sig) {
  slot *c = &s->slots[k];
  st__sv_state *st = &s->state[k];
  size_t q;
  st_case_result *r;
  read_sock(s, k);        /* results it sent before it ended are good */
  take_journal(s, k, &r); /* and so are those it had not sent yet */
  if (died_between_cases(s, c, st, sig)) {
    send_again(s, c);
    st_case_result_free(r);
  } else if (c->nq > 0 && st->retired && sig == 0 && !c->timed_out &&
             !c->broken) {
    /* It ended itself between cases (a case left processes behind):
     * nothing it was sent has begun. */
    for (q = 0; q < c->nq; q++)
      s->redo[s->n_redo++] = c->q[q];
    c->nq = 0;
    st_case_result_free(r);
  } else if (c->nq > 0) {
    finish(s, c->q[0], died_in(s, c, st, c->q[0], r, status, sig));
    for (q = 1; q < c->nq; q++) {
      if (sig != 0)
        finish(s, c->q[q],
               st__sched_unrun(s->sc, c->q[q], "not run: interrupted"));
      else
        s->redo[s->n_redo++] = c->q[q];
    }
    c->nq = 0;
  } else {
    st_case_result_free(r);
  }
  c->deadline = 0;
  c->timed_out = 0;
  slot_end(c);
}

/* ---- dispatch --------------------------------------------------------- */

/* The next case to send (redone ones first, lowest first), not taken. */
static int peek_next(const sv *s, size_t *i) {
  size_t r, best = SIZE_MAX;
  for (r = 0; r < s->n_redo; r++)
    if (s->redo[r] < best)
      best = s->redo[r];
  if (best != SIZE_MAX) {
    *i = best;
    return 1;
  }
  if (s->next_send < s->sc->n) {
    *i = s->next_send;
    return 1;
  }
  return 0;
}

static void take_next(sv *s, size_t i) {
  size_t r;
  for (r = 0; r < s->n_redo; r++)
    if (s->redo[r] == i) {
      s->redo[r] = s->redo[--s->n_redo];
      return;
    }
  s->next_send++;
}

/* Queues case i for slot c's child: a dispatch sends each slot's in one
 * write (send_queued). */
static void send_case(slot *c, size_t i) {
  st__msg_put_case(c->out + c->n_out, (uint32_t)i);
  c->n_out += ST__MSG_CASE_SIZE;
}

static void send_queued(sv *s) {
  size_t k;
  for (k = 0; k < s->jobs; k++) {
    slot *c = &s->slots[k];
    /* The socket holds far more than DEPTH indices: a short write does
     * not happen; a dead child's is found by its pidfd. */
    if (c->n_out > 0 && c->sock >= 0 &&
        send(c->sock, c->out, c->n_out, MSG_NOSIGNAL) < 0) {
    }
    c->n_out = 0;
    /* A oneshot's one case; and once every case is sent, each child's
     * last: it then exits as soon as its cases are done, beside the
     * supervisor's reading of their results, rather than after being
     * told at the end. */
    if (c->sock >= 0 && c->pid > 0 && !c->closed &&
        (c->shut || (s->next_send >= s->sc->n && s->n_redo == 0))) {
      shutdown(c->sock, SHUT_WR);
      c->closed = 1;
    }
    c->shut = 0;
  }
}

/* The mean duration of the results so far (ns), 0 before the first. */
static uint64_t mean_case_ns(const sv *s) {
  return s->dur_n > 0 ? s->dur_sum / s->dur_n : 0;
}

/* The slot the next case goes to, or SIZE_MAX to wait. *fresh: start a child
 * there first. */
static size_t pick_slot(sv *s, int forks, int alone, int *fresh) {
  size_t k, best = SIZE_MAX;
  /* Sent ahead: at most DEPTH, and at most a share of what is left, so
   * that no child holds cases another could run meanwhile (a case sent
   * stays with its child). One child: there is no other, so the share
   * is all of it (a shrinking share would end the run in round trips of
   * two cases each). */
  size_t ahead =
      s->jobs == 1 ? DEPTH : (s->sc->n - s->next_send) / (2 * (size_t)s->jobs);
  /* At least two, so that a child has its next case while its result
   * travels; one where cases are long (LONG_CASE_NS on average so far),
   * where that round trip is nothing and a second case held at the end
   * of the run would keep the other children idle (issue 14's -j 2). */
  size_t least = mean_case_ns(s) >= LONG_CASE_NS ? 1 : 2;
  ahead = ahead < least ? least : ahead > DEPTH ? DEPTH : ahead;
  *fresh = 0;
  if (forks) {
    /* Its own child, in a slot with nothing to do. */
    for (k = 0; k < s->jobs; k++)
      if (s->slots[k].pid <= 0) {
        *fresh = 1;
        return k;
      }
    for (k = 0; k < s->jobs; k++)
      if (s->slots[k].nq == 0 && !s->slots[k].oneshot) {
        int status;
        slot_kill_wait(&s->slots[k], &status); /* idle: nothing lost */
        slot_end(&s->slots[k]);
        *fresh = 1;
        return k;
      }
    return SIZE_MAX;
  }
  for (k = 0; k < s->jobs; k++) {
    const slot *c = &s->slots[k];
    /* Nothing waits behind a case with a deadline: the child sends that
     * case's result when it finds nothing more to run, so its deadline
     * ends with it. */
    if (c->pid <= 0 || c->oneshot || c->closed || c->deadline != 0 ||
        c->nq >= (alone ? 1u : ahead))
      continue;
    if (best == SIZE_MAX || c->nq < s->slots[best].nq)
      best = k;
  }
  if (best != SIZE_MAX && s->slots[best].nq == 0)
    return best;
  for (k = 0; k < s->jobs; k++)
    if (s->slots[k].pid <= 0) {
      *fresh = 1;
      return k;
    }
  return best;
}

static void dispatch_queue(sv *s) {
  st__schedctx *sc = s->sc;
  size_t i;
  while (!st__intr_signal() && peek_next(s, &i)) {
    int forks = st__sched_forks(sc, i), fresh, e;
    const char *what = "fork";
    double tmo = st__sched_owns_timeout(sc, i) ? 0 : st__sched_timeout(sc, i);
    int alone = tmo > 0 || st__sched_maxfail(sc) > 0;
    size_t k;
    slot *c;
    if (s->stop) {
      take_next(s, i);
      finish(s, i, st__sched_not_run(sc, i));
      continue;
    }
    k = pick_slot(s, forks, alone, &fresh);
    if (k == SIZE_MAX)
      return;
    c = &s->slots[k];
    if (fresh && (e = slot_start(s, k, forks, &what)) != 0) {
      take_next(s, i);
      if (e == ENOMEM)
        s->oom = 1;
      finish(s, i,
             error_result(s, i,
                          "cannot start a supervised child: "
                          "%s: %s",
                          what, e));
      continue;
    }
    take_next(s, i);
    if (c->nq == 0 && tmo > 0) {
      c->timeout = tmo;
      c->deadline = st__now_ns() + (uint64_t)(tmo * 1e9);
    }
    c->q[c->nq++] = i;
    c->sent++;
    send_case(c, i);
    if (forks)
      c->shut = 1;
  }
}

/* Sends what the children can take now: each one's in one write. */
static void dispatch(sv *s) {
  dispatch_queue(s);
  send_queued(s);
}

/* ---- waiting ---------------------------------------------------------- */

/* The cases slot c's child has yet to finish, by the count of results
 * it keeps in the shared page. */
static size_t child_left(const sv *s, const slot *c) {
  size_t done =
      __atomic_load_n(&s->state[c - s->slots].finished, __ATOMIC_RELAXED);
  return done < c->sent ? c->sent - done : 0;
}

/* Whether the supervisor waits on slot c's socket (see TICK_MS): when it
 * must hear from the child soon (BATCH cases or fewer left to it, cases
 * to redo, someone watching live, a case alone or with a deadline) or
 * when the socket's end is how it learns of the child's exit (no
 * pidfd). */
static int watch_sock(const sv *s, const slot *c) {
  return c->pid_fd < 0 || child_left(s, c) <= BATCH || c->oneshot ||
         c->deadline != 0 || s->n_redo > 0 || s->stop ||
         s->sc->rc->opts->live || st__sched_maxfail(s->sc) > 0;
}

/* How long slot c's child, with more than BATCH cases left, takes to get
 * down to BATCH (from the results' mean duration), at most TICK_MS. */
static uint64_t tick_ns(const sv *s, const slot *c) {
  size_t left = child_left(s, c);
  uint64_t tick = (uint64_t)TICK_MS * 1000000u, mean = mean_case_ns(s);
  if (mean == 0 || left <= BATCH || (uint64_t)(left - BATCH) >= tick / mean)
    return tick;
  return (uint64_t)(left - BATCH) * mean;
}

static st_status wait_children(sv *s, st_error *err) {
  nfds_t nf = 0;
  int ms = -1;
  uint64_t now = st__now_ns(), tick = UINT64_MAX;
  struct timespec ts;
  size_t k;
  if (st__intr_fd() >= 0) {
    s->pf[nf].fd = st__intr_fd();
    s->pf[nf].events = POLLIN;
    s->who[nf++] = SIZE_MAX;
  }
  for (k = 0; k < s->jobs; k++) {
    slot *c = &s->slots[k];
    if (c->pid <= 0)
      continue;
    c->watched = c->sock >= 0 && watch_sock(s, c);
    if (c->watched) {
      s->pf[nf].fd = c->sock;
      s->pf[nf].events = POLLIN;
      s->who[nf++] = k;
    } else if (c->sock >= 0) {
      uint64_t t = tick_ns(s, c);
      if (t < tick)
        tick = t;
    }
    if (c->pid_fd >= 0 && !c->exited) {
      s->pf[nf].fd = c->pid_fd;
      s->pf[nf].events = POLLIN;
      s->who[nf++] = k;
    } else if (c->pid_fd < 0 && (ms < 0 || ms > 20)) {
      ms = 20; /* no pidfd: look for its exit now and then */
    }
    if (c->deadline != 0) {
      int d = c->deadline <= now
                  ? 0
                  : (int)((c->deadline - now + 999999u) / 1000000u);
      if (ms < 0 || d < ms)
        ms = d;
    }
  }
  if (ms >= 0 && (uint64_t)ms * 1000000u < tick)
    tick = (uint64_t)ms * 1000000u;
  ts.tv_sec = (time_t)(tick / 1000000000u);
  ts.tv_nsec = (long)(tick % 1000000000u);
  if (ppoll(s->pf, nf, tick == UINT64_MAX ? NULL : &ts, NULL) < 0 &&
      errno != EINTR)
    return st_error_set(err, ST_EINTERNAL, "poll: %s", strerror(errno));
  for (k = 0; k < nf; k++) {
    slot *c;
    if (s->pf[k].revents == 0 || s->who[k] == SIZE_MAX)
      continue;
    c = &s->slots[s->who[k]];
    if (s->pf[k].fd == c->pid_fd)
      c->exited = 1;
    else if (read_sock(s, s->who[k]) && c->pid_fd < 0)
      c->exited = 1; /* its end of the socket is closed: it is exiting */
  }
  /* The sockets not waited on, read on each wake-up (their tick). */
  for (k = 0; k < s->jobs; k++) {
    slot *c = &s->slots[k];
    if (c->pid > 0 && c->sock >= 0 && !c->watched)
      (void)read_sock(s, k);
  }
  return ST_OK;
}

/* Deadlines, and the children that ended. */
static void reap(sv *s) {
  uint64_t now = st__now_ns();
  size_t k;
  for (k = 0; k < s->jobs; k++) {
    slot *c = &s->slots[k];
    int status = 0;
    pid_t w;
    if (c->pid <= 0)
      continue;
    if (c->broken && !c->killed) {
      /* Not yet waited for: its pid is still its own. */
      c->killed = 1;
      kill(-c->pid, SIGKILL);
      kill(c->pid, SIGKILL);
    }
    if (c->deadline != 0 && now >= c->deadline && !c->timed_out) {
      c->timed_out = 1;
      kill(-c->pid, SIGKILL);
      kill(c->pid, SIGKILL);
    }
    if (!c->exited && c->pid_fd >= 0)
      continue;
    w = waitpid(c->pid, &status, WNOHANG);
    if (w == 0) {
      c->exited = 0;
      continue;
    }
    child_died(s, k, status, 0);
  }
}

/* SIGINT or SIGTERM: every child's group killed, its running case an
 * error, everything unrun a skip. */
static void interrupt(sv *s, int sig) {
  size_t k, i;
  for (k = 0; k < s->jobs; k++) {
    int status;
    if (s->slots[k].pid <= 0)
      continue;
    slot_kill_wait(&s->slots[k], &status);
    child_died(s, k, status, sig);
  }
  while (peek_next(s, &i)) {
    take_next(s, i);
    finish(s, i, st__sched_unrun(s->sc, i, "not run: interrupted"));
  }
  st__run_result_set_interrupted(s->sc->run, sig);
}

/* The end: each child told so (the end of its socket), its last log lines
 * taken, and waited for. */
static void end_children(sv *s) {
  size_t k;
  for (k = 0; k < s->jobs; k++) {
    slot *c = &s->slots[k];
    int status;
    if (c->pid <= 0)
      continue;
    shutdown(c->sock, SHUT_WR);
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
      ;
    read_sock(s, k);
    slot_end(c);
  }
}

/* ---- the scheduler ---------------------------------------------------- */

static st_status sv_init(sv *s, st__schedctx *sc, st_error *err) {
  unsigned jobs = sc->rc->opts->jobs ? sc->rc->opts->jobs : 1;
  size_t n = sc->n, k;
  if ((size_t)jobs > n && n > 0)
    jobs = (unsigned)n; /* no idle children */
  memset(s, 0, sizeof *s);
  s->sc = sc;
  s->jobs = jobs;
  s->slots = calloc(jobs, sizeof *s->slots);
  s->done = calloc(n + 1, sizeof *s->done);
  s->ready = calloc(n + 1, 1);
  s->told = calloc(n + 1, 1);
  s->redo = calloc((size_t)jobs * DEPTH + 1, sizeof *s->redo);
  s->redos = calloc(n + 1, 1);
  s->pf = calloc(2 * (size_t)jobs + 1, sizeof *s->pf);
  s->who = calloc(2 * (size_t)jobs + 1, sizeof *s->who);
  s->state = mmap(NULL, jobs * sizeof *s->state, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s->state == MAP_FAILED)
    s->state = NULL;
  if (s->slots == NULL || s->done == NULL || s->ready == NULL ||
      s->told == NULL || s->redo == NULL || s->redos == NULL || s->pf == NULL ||
      s->who == NULL || s->state == NULL)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  for (k = 0; k < jobs; k++) {
    slot *c = &s->slots[k];
    st__buf_init(&c->in, SIZE_MAX);
    c->pid = -1;
    c->sock = c->pid_fd = c->journal = c->cap_rd = -1;
  }
  return ST_OK;
}

static void sv_free(sv *s) {
  size_t k;
  for (k = 0; s->slots != NULL && k < s->jobs; k++) {
    slot *c = &s->slots[k];
    if (c->pid > 0) {
      int status;
      slot_kill_wait(c, &status);
      slot_end(c);
    }
    if (c->journal >= 0)
      close(c->journal);
    if (c->jmap != NULL)
      munmap(c->jmap, ST__SV_JOURNAL);
    st__capture_unmap(c->cap, CAPTURE_MAX);
    st__buf_free(&c->in);
  }
  for (k = 0; s->done != NULL && k < s->sc->n; k++)
    st_case_result_free(s->done[k]);
  if (s->state != NULL)
    munmap(s->state, s->jobs * sizeof *s->state);
  free(s->slots);
  free(s->done);
  free(s->ready);
  free(s->told);
  free(s->redo);
  free(s->redos);
  free(s->pf);
  free(s->who);
}

static st_status supervise_run_all(st__schedctx *sc, st_error *err) {
  sv s;
  st__intr ss;
  st_status rc = sv_init(&s, sc, err);
  if (rc != ST_OK) {
    sv_free(&s);
    return rc;
  }
  st__intr_install(&ss, 0);
  for (;;) {
    report_ready(&s);
    if (s.next_report >= sc->n)
      break;
    if (st__intr_signal()) {
      interrupt(&s, st__intr_signal());
      continue;
    }
    dispatch(&s);
    report_ready(&s);
    if (s.next_report >= sc->n)
      break;
    if ((rc = wait_children(&s, err)) != ST_OK)
      break;
    reap(&s);
  }
  if (rc == ST_OK)
    end_children(&s);
  st__intr_restore(&ss);
  if (rc == ST_OK && s.oom)
    sc->oom = 1;
  sv_free(&s);
  return rc;
}

const st__scheduler st__sched_supervise = {
    .name = "supervise",
    .fits = supervise_fits,
    .run_all = supervise_run_all,
};
