/* SPDX-License-Identifier: MIT */
/* Isolation (--isolate, and --timeout for level-2 cases): each case runs in
 * a forked child, at most opts->jobs at a time, forked from the scheduling
 * thread. The child streams its events over a pipe as phases end, then
 * its whole result; its stdout and stderr go to a second pipe, where the
 * parent passes harness log lines ("[TIMING] ...", "[WARNING] ...") through
 * to its own stderr as they are and keeps everything else as the case's
 * captured output. A child that crashes fails its case with the signal's
 * name (keeping the events it sent); one past its timeout gets SIGTERM,
 * then SIGKILL after a grace, and fails as timed out. Observers see every
 * case in selection order. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "level3.h"
#include "result.h"
#include "runner_internal.h"
#include "wire.h"
#include "workers.h"

enum { FRAME_EVENT = 1, FRAME_RESULT = 2 };

/* Captured output kept per case; the rest is counted. */
#define CAPTURE_MAX ((size_t)1 << 20)
/* A line longer than this is captured without waiting for its end. */
#define LINE_MAX_PENDING ((size_t)64 << 10)
/* SIGTERM to SIGKILL for a child past its timeout. */
#define KILL_GRACE_NS (500u * 1000000u)

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

static int bytes_add(bytes *b, const void *p, size_t n) {
  if (n == 0)
    return 0;
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
  memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

static void bytes_take(bytes *b, size_t n) {
  if (n == 0)
    return; /* b->p may still be NULL */
  memmove(b->p, b->p + n, b->len - n);
  b->len -= n;
}

typedef struct child {
  size_t index;
  pid_t pid;
  int res_fd, cap_fd;
  bytes res;        /* frames not parsed yet */
  bytes line;       /* the capture's current line */
  bytes captured;   /* what the child printed, log lines excepted */
  size_t dropped;
  uint64_t start, deadline, kill_at;
  double timeout;
  int timed_out;
  int oom;
  st_case_result *partial; /* built from streamed events */
  st_case_result *final;   /* the child's own result */
} child;

/* ---- the child -------------------------------------------------------- */

/* The child's event stream. Events are batched and flushed before each
 * phase that runs foreign code (golden, rehost, run: a crash there keeps
 * everything before it) and with the result: each write wakes the parent,
 * and a parent that wakes touches pages it shares copy-on-write with the
 * child, which is the dearest part of an isolated case. */
typedef struct stream {
  int fd;
  st__wbuf pending;
} stream;

static void stream_flush(stream *st) {
  /* A parent that stopped reading has killed us or will: nothing to do. */
  if (!st->pending.oom && st->pending.len > 0 &&
      st__write_all(st->fd, st->pending.data, st->pending.len) != ST_OK) {
  }
  st->pending.len = 0;
}

static void stream_event(void *data, const st_case_info *info,
                         const st_event *ev) {
  stream *st = data;
  st__wbuf p;
  (void)info;
  st__wbuf_init(&p);
  st__wire_put_event(&p, ev);
  st__wire_frame(&st->pending, FRAME_EVENT, &p);
  st__wbuf_free(&p);
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
  st__wbuf p;
  stream st;

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
  st__wbuf_init(&p);
  st__wire_put_result(&p, r);
  st__wire_frame(&st.pending, FRAME_RESULT, &p);
  fflush(stdout);
  fflush(stderr);
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

static void parse_frames(child *c) {
  uint8_t type;
  const char *payload;
  size_t plen, used;
  while (st__wire_next_frame(c->res.p, c->res.len, &type, &payload, &plen,
                             &used)) {
    st__rbuf r;
    st__rbuf_init(&r, payload, plen);
    if (type == FRAME_EVENT && c->partial != NULL) {
      if (st__wire_get_event(&r, c->partial) != ST_OK)
        c->oom = 1;
    } else if (type == FRAME_RESULT && c->final == NULL) {
      c->final = st__wire_get_result(&r);
      if (c->final == NULL)
        c->oom = 1;
    }
    bytes_take(&c->res, used);
  }
}

/* Reads what fd has now; closes it at EOF. Returns the bytes read. */
static void read_fd(int *fd, bytes *into, int *oom) {
  char tmp[65536];
  for (;;) {
    ssize_t n = read(*fd, tmp, sizeof tmp);
    if (n > 0) {
      if (bytes_add(into, tmp, (size_t)n) != 0)
        *oom = 1;
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

static void child_free(child *c) {
  if (c->res_fd >= 0)
    close(c->res_fd);
  if (c->cap_fd >= 0)
    close(c->cap_fd);
  free(c->res.p);
  free(c->line.p);
  free(c->captured.p);
  st_case_result_free(c->partial);
  st_case_result_free(c->final);
  memset(c, 0, sizeof *c);
  c->res_fd = c->cap_fd = -1;
  c->pid = -1;
}

/* The finished child's case result, with its captured output attached. */
static st_case_result *child_result(runctx *rc, const st_case_ref *refs,
                                    size_t n, child *c, int status) {
  st_case_result *r;
  st_case_info info;
  bytes out;
  const char *prior;

  st__fill_info(&info, rc, &refs[c->index], c->index, n);
  if (c->final != NULL && !c->timed_out && WIFEXITED(status) &&
      WEXITSTATUS(status) == 0) {
    r = c->final;
    c->final = NULL;
  } else {
    char how[160];
    r = c->partial;
    c->partial = NULL;
    if (r == NULL)
      return NULL;
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
  (void)info;
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
  int rp[2], cp[2];
  pid_t pid;
  size_t j;

  if (pipe2(rp, O_CLOEXEC) != 0) {
    *failed = error_result(rc, refs, i, n, "pipe", errno);
    return -1;
  }
  if (pipe2(cp, O_CLOEXEC) != 0) {
    *failed = error_result(rc, refs, i, n, "pipe", errno);
    close(rp[0]);
    close(rp[1]);
    return -1;
  }
  memset(c, 0, sizeof *c);
  c->index = i;
  c->res_fd = rp[0];
  c->cap_fd = cp[0];
  c->timeout = case_timeout(rc, &refs[i]);
  {
    st_case_info info;
    st__fill_info(&info, rc, &refs[i], i, n);
    c->partial = st__case_result_new(info.scene, info.name, info.file,
                                     info.line, info.platform, info.seed);
  }
  /* Buffered output would be written twice otherwise. */
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(rp[1]);
    close(cp[1]);
    child_free(c);
    *failed = error_result(rc, refs, i, n, "fork", e);
    return -1;
  }
  if (pid == 0) {
    /* Other children's pipes: holding them would only confuse. */
    for (j = 0; j < n_all; j++)
      if (&all[j] != c && all[j].pid > 0) {
        if (all[j].res_fd >= 0)
          close(all[j].res_fd);
        if (all[j].cap_fd >= 0)
          close(all[j].cap_fd);
      }
    close(rp[0]);
    close(cp[0]);
    child_main(rc, &refs[i], i, n, rp[1], cp[1]);
  }
  close(rp[1]);
  close(cp[1]);
  fcntl(c->res_fd, F_SETFL, fcntl(c->res_fd, F_GETFL) | O_NONBLOCK);
  fcntl(c->cap_fd, F_SETFL, fcntl(c->cap_fd, F_GETFL) | O_NONBLOCK);
  c->pid = pid;
  c->start = st__now_ns();
  c->deadline = c->timeout > 0 ? c->start + (uint64_t)(c->timeout * 1e9) : 0;
  return 0;
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
  size_t next_start = 0, next_report = 0, running = 0, i;
  int stop = 0;
  st_status s = ST_OK;

  kids = calloc(jobs, sizeof *kids);
  done = calloc(n ? n : 1, sizeof *done);
  ready = calloc(n ? n : 1, 1);
  pf = calloc(2 * (size_t)jobs, sizeof *pf);
  who = calloc(2 * (size_t)jobs, sizeof *who);
  if (!kids || !done || !ready || !pf || !who) {
    s = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  for (i = 0; i < jobs; i++) {
    kids[i].pid = -1;
    kids[i].res_fd = kids[i].cap_fd = -1;
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
        ready[next_start++] = 1;
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
        ready[next_start++] = 1;
        continue;
      }
      for (slot = 0; slot < jobs && kids[slot].pid > 0; slot++)
        ;
      if (start_child(rc, refs, next_start, n, &kids[slot], kids, jobs,
                      &done[next_start]) != 0) {
        if (rc->opts->fail_fast)
          stop = 1;
        ready[next_start++] = 1;
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
      if (c->res_fd >= 0) {
        pf[nf].fd = c->res_fd;
        pf[nf].events = POLLIN;
        who[nf++] = i;
      }
      if (c->cap_fd >= 0) {
        pf[nf].fd = c->cap_fd;
        pf[nf].events = POLLIN;
        who[nf++] = i;
      }
      due = c->kill_at ? c->kill_at : c->deadline;
      ms = -1;
      if (c->res_fd < 0 && c->cap_fd < 0)
        ms = 1; /* both pipes at EOF: the child is exiting */
      else if (c->timed_out && c->kill_at == 0)
        ms = 20; /* killed; a grandchild may hold the pipes: look again */
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
      if (pf[i].fd == c->res_fd) {
        read_fd(&c->res_fd, &c->res, &c->oom);
        parse_frames(c);
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
      /* A child is done when it has exited; its pipes may still hold
       * what it wrote last, so drain them before judging. */
      if (c->res_fd >= 0 || c->cap_fd >= 0) {
        if (!c->timed_out)
          continue;
        /* Killed: do not wait for a grandchild that holds the pipes. */
        w = waitpid(c->pid, &status, WNOHANG);
        if (w != c->pid)
          continue;
      } else if (c->deadline != 0) {
        /* Both pipes at EOF: the child is exiting. Not a blocking wait, so
         * a child that closed them and hangs still meets its deadline. */
        w = waitpid(c->pid, &status, WNOHANG);
        if (w == 0)
          continue;
      } else {
        /* No deadline: a child that closed its pipes without exiting
         * would hang its case as any hanging kernel does without
         * --timeout; the usual child is already exiting. */
        while ((w = waitpid(c->pid, &status, 0)) < 0 && errno == EINTR)
          ;
      }
      if (c->res_fd >= 0) {
        read_fd(&c->res_fd, &c->res, &c->oom);
        parse_frames(c);
      }
      if (c->cap_fd >= 0)
        read_fd(&c->cap_fd, &c->line, &c->oom);
      route_lines(c, 1);
      done[c->index] = child_result(rc, refs, n, c, status);
      if (rc->opts->fail_fast && is_failure(done[c->index]))
        stop = 1;
      ready[c->index] = 1;
      child_free(c);
      running--;
    }
  }
out:
  if (kids != NULL) {
    for (i = 0; i < jobs; i++)
      if (kids[i].pid > 0) {
        /* Only on an internal error: no child may outlive the run. */
        int status;
        kill(kids[i].pid, SIGKILL);
        while (waitpid(kids[i].pid, &status, 0) < 0 && errno == EINTR)
          ;
        child_free(&kids[i]);
      }
  }
  if (done != NULL)
    for (i = 0; i < n; i++)
      st_case_result_free(done[i]);
  free(kids);
  free(done);
  free(ready);
  free(pf);
  free(who);
  return s;
}
