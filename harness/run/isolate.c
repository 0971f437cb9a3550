/* SPDX-License-Identifier: MIT */
/* Isolation (--isolate, and --timeout for level-2 cases): each case runs in
 * a forked child, at most opts->jobs at a time, forked from the scheduling
 * thread. The child appends its events to a file (a memfd of its slot,
 * kept for the run) as phases end, then its whole result; the parent reads
 * the file once the child has exited. Its stdout and stderr go to a pipe,
 * where the parent passes harness log lines ("[TIMING] ...",
 * "[WARNING] ...") through to its own stderr as they are and keeps
 * everything else as the case's captured output. A child that crashes
 * fails its case with the signal's name (keeping the events it wrote); one
 * past its timeout gets SIGTERM, then SIGKILL after a grace, and fails as
 * timed out. Observers see every case in selection order.
 *
 * Cost: after a fork every page either process writes is a copy-on-write
 * fault (a few microseconds each under virtualisation), so the parent
 * keeps its per-slot buffers across cases, decodes only what it needs, and
 * the child's frames go to a file rather than a pipe (no wake-up of the
 * parent per write); see docs/benchmarks.md. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "case/level3/level3.h"
#include "case/result.h"
#include "case/runner_internal.h"
#include "case/wire.h"
#include "case/level3/workers.h"

enum { FRAME_EVENT = 1, FRAME_RESULT = 2 };

/* Captured output kept per case; the rest is counted. */
#define CAPTURE_MAX ((size_t)1 << 20)
/* A line longer than this is captured without waiting for its end. */
#define LINE_MAX_PENDING ((size_t)64 << 10)
/* SIGTERM to SIGKILL for a child past its timeout. */
#define KILL_GRACE_NS (500u * 1000000u)
/* A slot's buffer or result file larger than this is given back after its
 * case; smaller ones are kept for the next. */
#define SLOT_KEEP ((size_t)256 << 10)

static double case_timeout(const runctx *rc, const st_case_ref *ref) {
  const st__case *k = &ref->scene->cases[ref->index];
  /* The case's `timeout` overrides --timeout (docs/level3.md). */
  return k->timeout > 0 ? k->timeout : rc->opts->timeout;
}

/* A level-2 case with a timeout must run in a child: a kernel cannot be
 * stopped safely inside the harness's own process (SPEC §6). A level-3
 * case's kernel already runs in workers, which can be killed. */
static int must_isolate(const runctx *rc, const st_case_ref *ref) {
  return rc->opts->isolate ||
         (ref->scene->level != 3 && case_timeout(rc, ref) > 0);
}

int st__isolation_wanted(const runctx *rc, const st_case_ref *refs,
                         size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (must_isolate(rc, &refs[i]))
      return 1;
  return 0;
}

typedef struct bytes {
  char *p;
  size_t len, cap;
} bytes;

/* Makes room for n more bytes. */
static int bytes_reserve(bytes *b, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    char *q;
    while (cap < b->len + n)
      cap *= 2;
    q = realloc(b->p, cap);
    if (q == NULL)
      return -1;
    b->p = q;
    b->cap = cap;
  }
  return 0;
}

static int bytes_add(bytes *b, const void *p, size_t n) {
  if (n == 0)
    return 0;
  if (bytes_reserve(b, n) != 0)
    return -1;
  memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

/* Empties b for the slot's next case, keeping its memory unless large. */
static void bytes_reset(bytes *b) {
  if (b->cap > SLOT_KEEP) {
    free(b->p);
    b->p = NULL;
    b->cap = 0;
  }
  b->len = 0;
}

static void bytes_take(bytes *b, size_t n) {
  if (n == 0)
    return; /* b->p may still be NULL */
  memmove(b->p, b->p + n, b->len - n);
  b->len -= n;
}

/* A slot: at most one running child. The result file and the buffers are
 * kept across the slot's cases (allocating anew for each case would write
 * to the heap's free lists, page after page, while a child runs). */
typedef struct child {
  size_t index;
  pid_t pid;
  int res_fd;       /* the slot's result file (memfd), -1 until made */
  int cap_fd;       /* the capture pipe's read end */
  int cap_w;        /* our copy of its write end, held while pid_fd is */
  int pid_fd;       /* a pidfd of the child, or -1 (none to be had) */
  int exited;       /* pid_fd said the child has exited */
  bytes res;        /* the frames, once the child has exited */
  bytes line;       /* the capture's current line */
  bytes captured;   /* what the child printed, log lines excepted */
  size_t dropped;
  uint64_t start, deadline, kill_at;
  double timeout;
  int timed_out;
  int oom;
} child;

/* ---- the child -------------------------------------------------------- */

/* The child's event stream, appended to the slot's result file. Events
 * are batched and written before each phase that runs foreign code
 * (golden, rehost, run: a crash there keeps everything before it) and
 * with the result. */
typedef struct stream {
  int fd;
  st__wbuf pending;
} stream;

static void stream_flush(stream *st) {
  /* A failed write (no space) loses the frames: the parent then reports
   * a child that ended without its result. */
  if (!st->pending.oom && st->pending.len > 0 &&
      st__write_all(st->fd, st->pending.data, st->pending.len) != ST_OK) {
  }
  st->pending.len = 0;
}

/* A frame (wire.h: u32 length | u8 type | payload) encoded in place: the
 * header first, its length patched once the payload is there. */
static size_t frame_open(st__wbuf *b, uint8_t type) {
  size_t at = b->len;
  st__wbuf_u32(b, 0);
  st__wbuf_u8(b, type);
  return at;
}

static void frame_close(st__wbuf *b, size_t at) {
  size_t n = b->len - at - 5, i;
  if (b->oom)
    return;
  for (i = 0; i < 4; i++)
    b->data[at + i] = (char)(unsigned char)((uint32_t)n >> (8 * i));
}

static void stream_event(void *data, const st_case_info *info,
                         const st_event *ev) {
  stream *st = data;
  size_t at = frame_open(&st->pending, FRAME_EVENT);
  (void)info;
  st__wire_put_event(&st->pending, ev);
  frame_close(&st->pending, at);
}

/* fflush takes the stream's lock, a write to a page the child shares
 * copy-on-write with its parent: only when something is buffered. */
static void flush_stdio(void) {
  if (__fpending(stdout) > 0)
    fflush(stdout);
  if (__fpending(stderr) > 0)
    fflush(stderr);
}

static void stream_phase_begin(void *data, const st_case_info *info,
                               const char *phase, int round) {
  (void)info;
  (void)round;
  if (strcmp(phase, "golden") == 0 || strcmp(phase, "rehost") == 0 ||
      strcmp(phase, "run") == 0)
    stream_flush(data);
}

static void child_main(runctx *rc, const st_case_ref *ref, size_t i,
                       size_t n, int res_w, int cap_w) {
  st_observer so;
  st_case_result *r;
  stream st;
  size_t at;

  /* The parent's worker pools and segments are not ours. */
  st__level3_forget_after_fork();
  rc->l3_run = 0;
  /* While phases run fd 1 and 2 are the capture (SPEC §6). */
  if (dup2(cap_w, 1) < 0 || dup2(cap_w, 2) < 0)
    _exit(120);
  if (cap_w > 2)
    close(cap_w);
  st.fd = res_w;
  st__wbuf_init(&st.pending);
  memset(&so, 0, sizeof so);
  so.data = &st;
  so.phase_begin = stream_phase_begin;
  so.phase_end = stream_event;
  rc->obs = &so;
  rc->n_obs = 1;
  r = st__run_one(rc, ref, i, n, 1);
  if (r == NULL)
    _exit(121);
  st__level3_teardown(rc);
  at = frame_open(&st.pending, FRAME_RESULT);
  st__wire_put_result(&st.pending, r);
  frame_close(&st.pending, at);
  flush_stdio();
  if (st.pending.oom)
    _exit(122);
  stream_flush(&st);
  /* _exit: no atexit handlers or leak checks of the parent's program run
   * in its copy. */
  _exit(0);
}

/* ---- the parent ------------------------------------------------------- */

static const char *const log_prefixes[] = {
    "[DEBUG] ", "[INFO] ", "[TIMING] ", "[WARNING] ", "[ERROR] ",
};

static int is_log_line(const char *p, size_t n) {
  size_t i;
  for (i = 0; i < sizeof log_prefixes / sizeof log_prefixes[0]; i++) {
    size_t k = strlen(log_prefixes[i]);
    if (n >= k && memcmp(p, log_prefixes[i], k) == 0)
      return 1;
  }
  return 0;
}

static void keep_output(child *c, const char *p, size_t n) {
  size_t keep = n;
  if (c->captured.len + keep > CAPTURE_MAX)
    keep = c->captured.len < CAPTURE_MAX ? CAPTURE_MAX - c->captured.len : 0;
  if (keep > 0 && bytes_add(&c->captured, p, keep) != 0)
    keep = 0;
  c->dropped += n - keep;
}

/* Routes complete lines: harness log lines to our stderr as they are (one
 * write each, so they stay whole), everything else to the capture. */
static void route_lines(child *c, int at_eof) {
  size_t start = 0, i;
  for (i = 0; i < c->line.len; i++) {
    if (c->line.p[i] != '\n')
      continue;
    if (is_log_line(c->line.p + start, i + 1 - start)) {
      /* Our stderr gone is not the case's problem. */
      if (st__write_all(2, c->line.p + start, i + 1 - start) != ST_OK) {
      }
    } else
      keep_output(c, c->line.p + start, i + 1 - start);
    start = i + 1;
  }
  bytes_take(&c->line, start);
  if (c->line.len > 0 && (at_eof || c->line.len > LINE_MAX_PENDING)) {
    keep_output(c, c->line.p, c->line.len);
    c->line.len = 0;
  }
}

/* Reads what fd has now, straight into `into` (or, out of memory, into a
 * spill that is dropped, so the pipe still drains); closes it at EOF. */
static void read_fd(int *fd, bytes *into, int *oom) {
  char spill[256];
  for (;;) {
    char *dst = spill;
    size_t room = sizeof spill;
    ssize_t n;
    if (bytes_reserve(into, 4096) == 0) {
      dst = into->p + into->len;
      room = into->cap - into->len;
    } else {
      *oom = 1;
    }
    n = read(*fd, dst, room);
    if (n > 0) {
      if (dst != spill)
        into->len += (size_t)n;
      continue;
    }
    if (n == 0) {
      close(*fd);
      *fd = -1;
    } else if (errno == EINTR) {
      continue;
    }
    return;
  }
}

/* Reads the frames the exited child wrote into c->res and rewinds the
 * slot's file for its next case. */
static void read_frames(child *c) {
  off_t end = lseek(c->res_fd, 0, SEEK_CUR);
  size_t got = 0;
  c->res.len = 0;
  if (end > 0 && bytes_reserve(&c->res, (size_t)end) != 0)
    c->oom = 1;
  else
    while (end > 0 && got < (size_t)end) {
      ssize_t k = pread(c->res_fd, c->res.p + got, (size_t)end - got,
                        (off_t)got);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        break; /* what is there is judged as it is */
      got += (size_t)k;
    }
  c->res.len = got;
  if (lseek(c->res_fd, 0, SEEK_SET) != 0 ||
      (end > (off_t)SLOT_KEEP && ftruncate(c->res_fd, 0) != 0)) {
    /* A file that cannot be rewound is not reused: the next case makes
     * another. */
    close(c->res_fd);
    c->res_fd = -1;
  }
}

/* Ends the slot's case: closes its pipe and pidfd, keeps its buffers and
 * result file for the next one. */
static void child_end(child *c) {
  if (c->cap_fd >= 0)
    close(c->cap_fd);
  if (c->cap_w >= 0)
    close(c->cap_w);
  if (c->pid_fd >= 0)
    close(c->pid_fd);
  c->cap_fd = c->cap_w = c->pid_fd = -1;
  c->pid = -1;
  c->exited = 0;
  bytes_reset(&c->res);
  bytes_reset(&c->line);
  bytes_reset(&c->captured);
}

/* Frees the slot's buffers and file (at the end of the run). */
static void child_free(child *c) {
  child_end(c);
  if (c->res_fd >= 0)
    close(c->res_fd);
  c->res_fd = -1;
  free(c->res.p);
  free(c->line.p);
  free(c->captured.p);
  memset(&c->res, 0, sizeof c->res);
  memset(&c->line, 0, sizeof c->line);
  memset(&c->captured, 0, sizeof c->captured);
}

/* The result the child wrote (on a clean exit), else one built from the
 * events it wrote before it ended, identity from the case. Only one of the
 * two is decoded: the result frame repeats the events. */
static st_case_result *decode_frames(runctx *rc, const st_case_ref *refs,
                                     size_t n, child *c, int clean,
                                     int *own) {
  st_case_result *r = NULL;
  st_case_info info;
  const char *p = c->res.p, *payload;
  size_t left = c->res.len, plen, used;
  uint8_t type;
  st__rbuf rb;

  *own = 0;
  while (clean && st__wire_next_frame(p, left, &type, &payload, &plen,
                                      &used)) {
    if (type == FRAME_RESULT) {
      st__rbuf_init(&rb, payload, plen);
      r = st__wire_get_result(&rb);
      *own = r != NULL;
      if (r != NULL)
        return r;
      c->oom = 1;
      break;
    }
    p += used;
    left -= used;
  }
  st__fill_info(&info, rc, &refs[c->index], c->index, n);
  r = st__case_result_new(info.scene, info.name, info.file, info.line,
                          info.platform, info.seed);
  if (r == NULL)
    return NULL;
  p = c->res.p;
  left = c->res.len;
  while (st__wire_next_frame(p, left, &type, &payload, &plen, &used)) {
    if (type == FRAME_EVENT) {
      st__rbuf_init(&rb, payload, plen);
      if (st__wire_get_event(&rb, r) != ST_OK)
        c->oom = 1;
    }
    p += used;
    left -= used;
  }
  return r;
}

/* The finished child's case result, with its captured output attached. */
static st_case_result *child_result(runctx *rc, const st_case_ref *refs,
                                    size_t n, child *c, int status) {
  st_case_result *r;
  bytes out;
  const char *prior;
  int clean = !c->timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  int own;

  read_frames(c);
  r = decode_frames(rc, refs, n, c, clean, &own);
  if (r == NULL)
    return NULL;
  if (!own) {
    char how[160];
    st__case_result_set_pid(r, (long)c->pid);
    st__case_result_set_duration(r, st__now_ns() - c->start);
    if (c->timed_out) {
      st__case_result_override(r, ST_CASE_ERROR, NULL);
      st__case_result_set_status(r, ST_CASE_ERROR,
                                 "timed out after %g s (child pid %ld "
                                 "killed)",
                                 c->timeout, (long)c->pid);
    } else {
      st__describe_wait(status, how, sizeof how);
      st__case_result_override(r, ST_CASE_ERROR, NULL);
      st__case_result_set_status(
          r, ST_CASE_ERROR, "child process (pid %ld) %s%s", (long)c->pid,
          how,
          WIFEXITED(status) ? " before reporting its result" : "");
    }
  }
  /* Attach: what the child printed, then what its workers printed (the
   * result's own output, level 3). */
  memset(&out, 0, sizeof out);
  prior = st_case_result_output(r);
  if (bytes_add(&out, c->captured.p, c->captured.len) == 0 &&
      c->dropped > 0) {
    char note[64];
    snprintf(note, sizeof note, "[... %zu more bytes not kept]\n",
             c->dropped);
    (void)bytes_add(&out, note, strlen(note));
  }
  if (prior != NULL)
    (void)bytes_add(&out, prior, strlen(prior));
  if (out.len > 0)
    st__case_result_set_output(r, out.p, out.len);
  free(out.p);
  if (c->oom)
    st__case_result_set_status(r, ST_CASE_ERROR,
                               "out of memory reading the child's result");
  return r;
}

static int is_failure(const st_case_result *r) {
  return r == NULL || st_case_result_status(r) == ST_CASE_FAIL ||
         st_case_result_status(r) == ST_CASE_ERROR;
}

/* A pidfd of pid (close-on-exec), or -1 where the kernel has none. */
static int pidfd_open_cloexec(pid_t pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  return -1;
#endif
}

static st_case_result *error_result(runctx *rc, const st_case_ref *refs,
                                    size_t i, size_t n, const char *what,
                                    int e) {
  st_case_info info;
  st_case_result *r;
  st__fill_info(&info, rc, &refs[i], i, n);
  r = st__case_result_new(info.scene, info.name, info.file, info.line,
                          info.platform, info.seed);
  if (r != NULL) {
    st__case_result_set_pid(r, (long)getpid());
    st__case_result_set_status(r, ST_CASE_ERROR,
                               "cannot isolate the case: %s: %s", what,
                               strerror(e));
  }
  return r;
}

/* Forks the child of case i into c. Returns 0, or -1 with a result made
 * in *failed. */
static int start_child(runctx *rc, const st_case_ref *refs, size_t i,
                       size_t n, child *c, child *all, size_t n_all,
                       st_case_result **failed) {
  int cp[2];
  pid_t pid, parent = getpid();
  size_t j;

  /* The slot's result file, made by its first case (rewound after each). */
  if (c->res_fd < 0 &&
      (c->res_fd = memfd_create("scenetest-isolate", MFD_CLOEXEC)) < 0) {
    *failed = error_result(rc, refs, i, n, "memfd_create", errno);
    return -1;
  }
  if (pipe2(cp, O_CLOEXEC) != 0) {
    *failed = error_result(rc, refs, i, n, "pipe", errno);
    return -1;
  }
  c->index = i;
  c->cap_fd = cp[0];
  c->cap_w = -1;
  c->pid_fd = -1;
  c->exited = 0;
  c->dropped = 0;
  c->kill_at = 0;
  c->timed_out = 0;
  c->oom = 0;
  c->timeout = case_timeout(rc, &refs[i]);
  /* Buffered output would be written twice otherwise. */
  flush_stdio();
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(cp[1]);
    child_end(c);
    *failed = error_result(rc, refs, i, n, "fork", e);
    return -1;
  }
  if (pid == 0) {
    /* A harness killed by a signal (SIGINT from kill(1), not the
     * terminal's whole group) takes its children along, as it takes its
     * level-3 workers: none is left running a hung kernel. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
      _exit(123);
    /* Other children's pipes: holding them would only confuse. */
    for (j = 0; j < n_all; j++)
      if (&all[j] != c && all[j].pid > 0) {
        if (all[j].cap_fd >= 0)
          close(all[j].cap_fd);
        if (all[j].cap_w >= 0)
          close(all[j].cap_w);
      }
    close(cp[0]);
    child_main(rc, &refs[i], i, n, c->res_fd, cp[1]);
  }
  /* With a pidfd, the child's exit is what wakes us, once; we hold the
   * pipe's write end meanwhile, so that the pipe's end-of-file (which the
   * child's exit would cause a moment before, waking us early onto a cold
   * CPU to wait again) never comes first. Without one, the end-of-file
   * says the child is exiting. */
  c->pid_fd = pidfd_open_cloexec(pid);
  if (c->pid_fd >= 0)
    c->cap_w = cp[1];
  else
    close(cp[1]);
  /* Only O_NONBLOCK among the status flags a pipe's read end has. */
  fcntl(c->cap_fd, F_SETFL, O_NONBLOCK);
  c->pid = pid;
  c->start = st__now_ns();
  c->deadline = c->timeout > 0 ? c->start + (uint64_t)(c->timeout * 1e9) : 0;
  return 0;
}

/* Case i is finished: marks it ready for its turn in the report and tells
 * the observers now (case_finish, in finish order: SPEC §6 --events). */
static void finish(runctx *rc, const st_case_ref *refs, size_t n, size_t i,
                   st_case_result *const *done, char *ready) {
  ready[i] = 1;
  if (done[i] != NULL) {
    st_case_info info;
    st__fill_info(&info, rc, &refs[i], i, n);
    st__notify_finish(rc, &info, done[i]);
  }
}

static void report(runctx *rc, const st_case_ref *refs, size_t n, size_t i,
                   st_case_result *r, st_run_result *run) {
  st_case_info info;
  size_t j;
  st__fill_info(&info, rc, &refs[i], i, n);
  if (r != NULL)
    st__replay(rc, &info, r);
  else
    for (j = 0; j < rc->n_obs; j++)
      if (rc->obs[j].case_begin)
        rc->obs[j].case_begin(rc->obs[j].data, &info);
  st__run_result_set(run, i, r);
  for (j = 0; r != NULL && j < rc->n_obs; j++)
    if (rc->obs[j].case_end)
      rc->obs[j].case_end(rc->obs[j].data, &info, r);
}

st_status st__isolate_run_all(runctx *rc, const st_case_ref *refs, size_t n,
                              st_run_result *run, st_error *err) {
  unsigned jobs = rc->opts->jobs ? rc->opts->jobs : 1;
  child *kids = NULL;
  st_case_result **done = NULL;
  char *ready = NULL;
  struct pollfd *pf = NULL;
  size_t *who = NULL;
  void *block;
  size_t next_start = 0, next_report = 0, running = 0, i;
  int stop = 0;
  st_status s = ST_OK;

  /* The bookkeeping in one block, in as few pages as it fits: the parent
   * writes to it while children run. Ordered by alignment. */
  if (n > SIZE_MAX / 16 - 1) {
    s = st_error_set(err, ST_ENOMEM, "out of memory");
    return s;
  }
  block = calloc(1, jobs * sizeof *kids + 2 * (size_t)jobs * sizeof *who +
                        (n + 1) * sizeof *done +
                        2 * (size_t)jobs * sizeof *pf + n + 1);
  if (block == NULL) {
    s = st_error_set(err, ST_ENOMEM, "out of memory");
    return s;
  }
  kids = block;
  who = (size_t *)(void *)(kids + jobs);
  done = (st_case_result **)(void *)(who + 2 * (size_t)jobs);
  pf = (struct pollfd *)(void *)(done + n + 1);
  ready = (char *)(pf + 2 * (size_t)jobs);
  for (i = 0; i < jobs; i++) {
    kids[i].pid = -1;
    kids[i].res_fd = kids[i].cap_fd = kids[i].cap_w = kids[i].pid_fd = -1;
  }

  while (next_report < n) {
    nfds_t nf = 0;
    int timeout_ms = -1;
    uint64_t now;

    /* Report what is ready, in selection order. */
    while (next_report < n && ready[next_report]) {
      report(rc, refs, n, next_report, done[next_report], run);
      done[next_report] = NULL;
      next_report++;
    }
    if (next_report >= n)
      break;

    /* Start cases while there is room. */
    while (running < jobs && next_start < n) {
      size_t slot;
      if (stop) {
        st_case_info info;
        st__fill_info(&info, rc, &refs[next_start], next_start, n);
        done[next_start] = st__not_run(rc, &info);
        finish(rc, refs, n, next_start, done, ready);
        next_start++;
        continue;
      }
      if (!must_isolate(rc, &refs[next_start])) {
        /* A level-3 case under --timeout alone: in this process (its
         * workers are what can be killed), once no child runs, so every
         * child's deadline stays watched. */
        if (running > 0)
          break;
        done[next_start] = st__run_one(rc, &refs[next_start], next_start, n,
                                       0);
        if (rc->opts->fail_fast && is_failure(done[next_start]))
          stop = 1;
        finish(rc, refs, n, next_start, done, ready);
        next_start++;
        continue;
      }
      for (slot = 0; slot < jobs && kids[slot].pid > 0; slot++)
        ;
      if (start_child(rc, refs, next_start, n, &kids[slot], kids, jobs,
                      &done[next_start]) != 0) {
        if (rc->opts->fail_fast)
          stop = 1;
        finish(rc, refs, n, next_start, done, ready);
        next_start++;
        continue;
      }
      running++;
      next_start++;
    }
    if (running == 0)
      continue;

    /* Wait for output, results, exits or a deadline. */
    now = st__now_ns();
    for (i = 0; i < jobs; i++) {
      child *c = &kids[i];
      uint64_t due;
      int ms;
      if (c->pid <= 0)
        continue;
      if (c->cap_fd >= 0) {
        pf[nf].fd = c->cap_fd;
        pf[nf].events = POLLIN;
        who[nf++] = i;
      }
      if (c->pid_fd >= 0 && !c->exited) {
        pf[nf].fd = c->pid_fd;
        pf[nf].events = POLLIN;
        who[nf++] = i;
      }
      due = c->kill_at ? c->kill_at : c->deadline;
      ms = -1;
      if (c->pid_fd < 0 && c->cap_fd < 0)
        ms = 1; /* the pipe at EOF: the child is exiting */
      else if (c->pid_fd < 0 && c->timed_out && c->kill_at == 0)
        ms = 20; /* killed; a grandchild may hold the pipe: look again */
      else if (due != 0)
        ms = due <= now ? 0 : (int)((due - now + 999999u) / 1000000u);
      if (ms >= 0 && (timeout_ms < 0 || ms < timeout_ms))
        timeout_ms = ms;
    }
    if (poll(pf, nf, timeout_ms) < 0 && errno != EINTR) {
      s = st_error_set(err, ST_EINTERNAL, "poll: %s", strerror(errno));
      goto out;
    }
    for (i = 0; i < nf; i++) {
      child *c = &kids[who[i]];
      if (pf[i].revents == 0)
        continue;
      if (pf[i].fd == c->pid_fd) {
        c->exited = 1;
      } else if (pf[i].fd == c->cap_fd) {
        read_fd(&c->cap_fd, &c->line, &c->oom);
        route_lines(c, c->cap_fd < 0);
      }
    }

    now = st__now_ns();
    for (i = 0; i < jobs; i++) {
      child *c = &kids[i];
      int status = 0;
      pid_t w;
      if (c->pid <= 0)
        continue;
      if (c->deadline != 0 && now >= c->deadline && !c->timed_out) {
        c->timed_out = 1;
        kill(c->pid, SIGTERM);
        c->kill_at = now + KILL_GRACE_NS;
      } else if (c->kill_at != 0 && now >= c->kill_at) {
        kill(c->pid, SIGKILL);
        c->kill_at = 0;
        c->deadline = 0;
      }
      /* A child is done when it has exited; its pipe may still hold what
       * it wrote last (drained before judging), its file holds its
       * frames. With a pidfd, exit is what the pidfd says, and whatever
       * the child's own children still hold does not keep the case. */
      if (c->pid_fd >= 0) {
        if (!c->exited)
          continue;
        w = waitpid(c->pid, &status, WNOHANG);
        if (w == 0) {
          c->exited = 0; /* not yet waitable: poll the pidfd again */
          continue;
        }
      } else if (c->cap_fd >= 0) {
        /* No pidfd: the pipe's end-of-file says the child is exiting. */
        if (!c->timed_out)
          continue;
        /* Killed: do not wait for a grandchild that holds the pipe. */
        w = waitpid(c->pid, &status, WNOHANG);
        if (w != c->pid)
          continue;
      } else if (c->deadline != 0) {
        /* The pipe at EOF: the child is exiting. Not a blocking wait, so
         * a child that closed it and hangs still meets its deadline. */
        w = waitpid(c->pid, &status, WNOHANG);
        if (w == 0)
          continue;
      } else {
        /* No deadline: a child that closed its pipe without exiting
         * would hang its case as any hanging kernel does without
         * --timeout; the usual child is already exiting. */
        while ((w = waitpid(c->pid, &status, 0)) < 0 && errno == EINTR)
          ;
      }
      if (c->cap_w >= 0) {
        close(c->cap_w);
        c->cap_w = -1;
      }
      if (c->cap_fd >= 0)
        read_fd(&c->cap_fd, &c->line, &c->oom);
      route_lines(c, 1);
      done[c->index] = child_result(rc, refs, n, c, status);
      if (rc->opts->fail_fast && is_failure(done[c->index]))
        stop = 1;
      finish(rc, refs, n, c->index, done, ready);
      child_end(c);
      running--;
    }
  }
out:
  for (i = 0; i < jobs; i++) {
    if (kids[i].pid > 0) {
      /* Only on an internal error: no child may outlive the run. */
      int status;
      kill(kids[i].pid, SIGKILL);
      while (waitpid(kids[i].pid, &status, 0) < 0 && errno == EINTR)
        ;
    }
    child_free(&kids[i]);
  }
  for (i = 0; i < n; i++)
    st_case_result_free(done[i]);
  free(block);
  return s;
}
