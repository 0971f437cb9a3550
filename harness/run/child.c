/* SPDX-License-Identifier: MIT */
/* One forked child running one case (child.h). The child appends its
 * events to the slot's result file as phases end, then its whole result;
 * the parent reads the file once the child has exited. Its harness log
 * lines go into the same file as frames, which the parent writes to its
 * own log as they are; its stdout and stderr go to a pipe, all of which
 * is the case's captured output (a kernel printing "[TIMING] ..." cannot
 * forge a log line). A child that
 * crashes fails its case with the signal's name (keeping the events it
 * wrote); one past its timeout gets SIGTERM, then SIGKILL after a grace,
 * and fails as timed out.
 *
 * Cost: after a fork every page either process writes is a copy-on-write
 * fault (a few microseconds each under virtualisation), so the parent
 * keeps its per-slot buffers across cases, decodes only what it needs, and
 * the child's frames go to a file rather than a pipe (no wake-up of the
 * parent per write); see docs/benchmarks.md. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log_sink.h"
#include "base/proc.h"
#include "case/exec.h"
#include "case/guard.h"
#include "case/phase.h"
#include "case/result.h"
#include "case/wire.h"
#include "wire/msg.h"
#include "run/audit.h"
#include "run/child.h"
#include "run/childside.h"
#include "run/interrupt.h"

/* A line longer than this is captured without waiting for its end. */
#define LINE_MAX_PENDING ((size_t)64 << 10)
/* SIGTERM to SIGKILL for a child past its timeout. */
#define KILL_GRACE_NS (500u * 1000000u)
/* A slot's buffer or result file larger than this is given back after its
 * case; smaller ones are kept for the next. */
#define SLOT_KEEP ((size_t)256 << 10)

/* ---- the child -------------------------------------------------------- */

/* The child's event stream, appended to the slot's result file. Events
 * are batched and written before each phase that runs foreign code
 * (golden, rehost, run: a crash there keeps everything before it) and
 * with the result. */
typedef struct stream {
  int fd;
  pthread_mutex_t lock; /* guards: pending (log lines come from any thread) */
  st__wbuf pending;
} stream;

static void stream_flush(void *data) {
  stream *st = data;
  pthread_mutex_lock(&st->lock);
  st__wbuf_drain(&st->pending, st->fd);
  pthread_mutex_unlock(&st->lock);
}

/* The child's log lines travel in its result file
 * (docs/reliability.md#the-process-model: never by a prefix convention on fd 2,
 * which a kernel could forge). */
static void stream_log(void *data, const char *line, size_t len) {
  stream *st = data;
  pthread_mutex_lock(&st->lock);
  st__msg_put_line(&st->pending, ST__MSG_LOG, line, len);
  pthread_mutex_unlock(&st->lock);
}

static void stream_event(void *data, const st_event *ev) {
  stream *st = data;
  pthread_mutex_lock(&st->lock);
  st__wire_event_frame(&st->pending, ev);
  pthread_mutex_unlock(&st->lock);
}

_Noreturn static void child_main(st__runctx *rc, const st_case_ref *ref,
                                 size_t i, size_t n, int res_w, int cap_w) {
  st__childside cs;
  st_case_result *r;
  stream st;
  st__audit audit;
  char why[200];

  st__childside_begin(rc, cap_w);
  if (cap_w > 2)
    close(cap_w);
  st.fd = res_w;
  st__wbuf_init(&st.pending);
  pthread_mutex_init(&st.lock, NULL);
  st__log_set_sink(stream_log, &st);
  /* The eager plugins the parent did not load, before the case begins;
   * not by a case that forks a worker pool (its workers load them on
   * their first lookup, so the pool's parent has loaded none). */
  if (!(st__executor_for(ref->scene)->flags & ST__EXEC_FORKS))
    st__childside_load_deferred(rc);
  /* Its threads only: its processes die with its group when the case
   * ends, and its descriptors are its own case's alone. */
  memset(&audit, 0, sizeof audit);
  st__audit_init(&audit, 0);
  memset(&cs, 0, sizeof cs);
  cs.rc = rc;
  cs.audit = &audit;
  cs.data = &st;
  cs.before_foreign = stream_flush;
  cs.phase_end = stream_event;
  r = st__childside_run(&cs, ref, i, n);
  /* A thread its kernel left would end with this process, unseen, before
   * it acted: the case is charged with it (docs/reliability.md). */
  if (st__childside_foreign(rc) && st__audit_threads(&audit, why, sizeof why))
    st__case_result_override(r, ST_CASE_ERROR, why);
  st__executors_run_end(rc);
  pthread_mutex_lock(&st.lock);
  st__wire_result_frame(&st.pending, (uint32_t)i, r);
  pthread_mutex_unlock(&st.lock);
  st__childside_flush_stdio();
  if (st.pending.oom)
    _exit(ST__EXIT_NOMEM);
  stream_flush(&st);
  /* _exit: no atexit handlers or leak checks of the parent's program run
   * in its copy. */
  _exit(0);
}

void st__child_detach(pid_t parent) {
  /* Its own process group, killed when the case ends, so that nothing
   * a kernel started outlives the case (D10). A harness killed by a
   * signal (SIGINT from kill(1), not the terminal's whole group) takes
   * its children along, as it takes its level-3 workers: none is left
   * running a hung kernel. */
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
    _exit(ST__EXIT_ORPHANED);
  st__intr_child();
}

_Noreturn void st__child_enter(st__runctx *rc, const st_case_ref *ref,
                               size_t index, size_t total, int res_fd,
                               int cap_w, char *fault) {
  if (fault != NULL)
    st__guard_note_to(fault, ST__GUARD_NOTE_MAX);
  child_main(rc, ref, index, total, res_fd, cap_w);
}

/* ---- the parent ------------------------------------------------------- */

/* The first ST__CAPTURE_MAX bytes kept (the buffer's cap), the rest
 * counted. */
static void keep_output(st__child *c, const char *p, size_t n) {
  c->dropped += n - st__buf_add_capped(&c->captured, p, n);
}

/* Everything the child printed is the case's output, in complete lines
 * (its harness log lines come as frames in its result file). */
static void route_lines(st__child *c, int at_eof) {
  size_t start = 0, i;
  for (i = 0; i < c->line.len; i++) {
    if (c->line.data[i] != '\n')
      continue;
    keep_output(c, c->line.data + start, i + 1 - start);
    start = i + 1;
  }
  st__buf_drop_front(&c->line, start);
  if (c->line.len > 0 && (at_eof || c->line.len > LINE_MAX_PENDING)) {
    keep_output(c, c->line.data, c->line.len);
    c->line.len = 0;
  }
}

/* Reads what fd has now, straight into `into` (or, out of memory, into a
 * spill that is dropped, so the pipe still drains); closes it at EOF. */
static void read_fd(int *fd, st__buf *into, int *oom) {
  char spill[256];
  for (;;) {
    char *dst = spill;
    size_t room = sizeof spill;
    ssize_t n;
    if (st__buf_reserve(into, 4096) == ST_OK) {
      dst = into->data + into->len;
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

/* The child's log lines, passed through as they are, one by one (each
 * is placed as our own would be: above a progress line, to the terminal
 * or not under --log-file). */
static void pass_logs(st__child *c) {
  const char *p = c->res.data, *payload;
  size_t left = c->res.len, plen, used;
  uint8_t type;
  while (st__wire_next_frame(p, left, &type, &payload, &plen, &used)) {
    size_t len;
    const char *line;
    if (type == ST__MSG_LOG &&
        st__msg_get_line(payload, plen, &line, &len) == 0)
      st__log_passthrough(line, len);
    p += used;
    left -= used;
  }
}

/* Reads the frames the exited child wrote into c->res and rewinds the
 * slot's file for its next case. */
static void read_frames(st__child *c) {
  off_t end = lseek(c->res_fd, 0, SEEK_CUR);
  size_t got = 0;
  c->res.len = 0;
  if (end > 0 && st__buf_reserve(&c->res, (size_t)end) != ST_OK)
    c->oom = 1;
  else
    while (end > 0 && got < (size_t)end) {
      ssize_t k =
          pread(c->res_fd, c->res.data + got, (size_t)end - got, (off_t)got);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        break; /* what is there is judged as it is */
      got += (size_t)k;
    }
  c->res.len = got;
  pass_logs(c);
  if (lseek(c->res_fd, 0, SEEK_SET) != 0 ||
      (end > (off_t)SLOT_KEEP && ftruncate(c->res_fd, 0) != 0)) {
    /* A file that cannot be rewound is not reused: the next case makes
     * another. */
    close(c->res_fd);
    c->res_fd = -1;
  }
}

/* Closes each of the four that is open (-1: none). */
static void close_fds(int a, int b, int c, int d) {
  const int fd[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++)
    if (fd[i] >= 0)
      close(fd[i]);
}

/* Ends the slot's case: closes its pipe and pidfd, keeps its buffers and
 * result file for the next one. */
static void child_end(st__child *c) {
  /* The case's process group: what its kernel started and left (the
   * child itself is waited for; its group lives on while they do, so the
   * id names nothing else). */
  if (c->pid > 0)
    st__proc_kill_group(c->pid);
  close_fds(c->cap_fd, c->cap_w, c->pid_fd, -1);
  c->cap_fd = c->cap_w = c->pid_fd = -1;
  c->pid = -1;
  c->exited = 0;
  st__buf_reset(&c->res, SLOT_KEEP);
  st__buf_reset(&c->line, SLOT_KEEP);
  st__buf_reset(&c->captured, SLOT_KEEP);
}

/* Frees the slot's buffers and file (at the end of the run). */
static void child_free(st__child *c) {
  child_end(c);
  if (c->res_fd >= 0)
    close(c->res_fd);
  c->res_fd = -1;
  st__buf_free(&c->res);
  st__buf_free(&c->line);
  st__buf_free(&c->captured);
  st__guard_note_free(c->fault);
  c->fault = NULL;
}

/* The result the child wrote (on a clean exit), else one built from the
 * events it wrote before it ended, identity from the case. Only one of the
 * two is decoded: the result frame repeats the events. */
static st_case_result *decode_frames(st__child *c, const st_case_info *info,
                                     int clean, int *own) {
  st_case_result *r = NULL;
  const char *p = c->res.data, *payload;
  size_t left = c->res.len, plen, used;
  uint8_t type;
  st__rbuf rb;
  uint32_t index;

  *own = 0;
  while (clean && st__wire_next_frame(p, left, &type, &payload, &plen, &used)) {
    if (type == ST__MSG_RESULT) {
      r = st__wire_get_result_frame(payload, plen, &index);
      *own = r != NULL;
      if (r != NULL)
        return r;
      c->oom = 1;
      break;
    }
    p += used;
    left -= used;
  }
  r = st__case_result_new(info->scene, info->name, info->file, info->line,
                          info->platform, info->seed);
  if (r == NULL)
    return NULL;
  p = c->res.data;
  left = c->res.len;
  while (st__wire_next_frame(p, left, &type, &payload, &plen, &used)) {
    if (type == ST__MSG_EVENT) {
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
static st_case_result *child_result(st__child *c, const st_case_info *info,
                                    int status) {
  st_case_result *r;
  st__buf out;
  const char *prior;
  int clean = !c->timed_out && !c->interrupted && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0;
  int own;

  read_frames(c);
  r = decode_frames(c, info, clean, &own);
  if (r == NULL)
    return NULL;
  if (!own) {
    char how[160], msg[640];
    st__case_result_set_pid(r, (long)c->pid);
    st__case_result_set_duration(r, st__now_ns() - c->start);
    /* An override: whatever the child reported before it died is not its
     * verdict (the first cause wins everywhere else). */
    if (c->interrupted) {
      snprintf(msg, sizeof msg, "interrupted (%s, child pid %ld killed)",
               st__intr_name(c->interrupted), (long)c->pid);
    } else if (c->timed_out) {
      snprintf(msg, sizeof msg, "timed out after %g s (child pid %ld killed)",
               c->timeout, (long)c->pid);
    } else {
      st__proc_describe_wait(status, how, sizeof how);
      /* A guard-page fault: the note the child's handler wrote names the
       * tensor (case/guard.h). */
      snprintf(msg, sizeof msg, "%.*s%schild process (pid %ld) %s%s",
               c->fault != NULL ? (int)ST__GUARD_NOTE_MAX : 0,
               c->fault != NULL ? c->fault : "",
               c->fault != NULL && c->fault[0] != '\0' ? "; " : "",
               (long)c->pid, how,
               WIFEXITED(status) ? " before reporting its result" : "");
    }
    st__case_result_override(r, ST_CASE_ERROR, msg);
  }
  /* Attach: what the child printed, then what its workers printed (the
   * result's own output, level 3). */
  st__buf_init(&out, SIZE_MAX);
  prior = st_case_result_output(r);
  if (st__buf_add(&out, c->captured.data, c->captured.len) == ST_OK &&
      c->dropped > 0) {
    char note[64];
    snprintf(note, sizeof note, "[... %zu more bytes not kept]\n", c->dropped);
    if (st__buf_add(&out, note, strlen(note)) != ST_OK) {
    } /* out of memory: the note is lost, not the rest */
  }
  if (prior != NULL && st__buf_add(&out, prior, strlen(prior)) != ST_OK) {
  }
  if (out.len > 0)
    st__case_result_set_output(r, out.data, out.len);
  st__buf_free(&out);
  if (c->oom)
    st__case_result_set_status(r, ST_CASE_ERROR,
                               "out of memory reading the child's result");
  return r;
}

static st_case_result *error_result(const st_case_info *info, const char *what,
                                    int e) {
  st_case_result *r =
      st__case_result_new(info->scene, info->name, info->file, info->line,
                          info->platform, info->seed);
  if (r != NULL) {
    st__case_result_set_pid(r, (long)getpid());
    st__case_result_set_status(
        r, ST_CASE_ERROR, "cannot isolate the case: %s: %s", what, strerror(e));
  }
  return r;
}

/* The parent's side of a started child (forked here, or a spare given
 * its case): its group, its pidfd, its pipe, its clock. */
void st__child_started(st__child *c, pid_t pid, int cap_r, int cap_w) {
  c->cap_fd = cap_r;
  /* With a pidfd, the child's exit is what wakes us, once; we hold the
   * pipe's write end meanwhile, so that the pipe's end-of-file (which the
   * child's exit would cause a moment before, waking us early onto a cold
   * CPU to wait again) never comes first. Without one, the end-of-file
   * says the child is exiting. */
  setpgid(pid, pid); /* both sides: whichever runs first */
  c->pid_fd = st__proc_pidfd_open(pid);
  if (c->pid_fd >= 0)
    c->cap_w = cap_w;
  else
    close(cap_w);
  /* Only O_NONBLOCK among the status flags a pipe's read end has. */
  fcntl(c->cap_fd, F_SETFL, O_NONBLOCK);
  c->pid = pid;
  c->start = st__now_ns();
  c->deadline = c->timeout > 0 ? c->start + (uint64_t)(c->timeout * 1e9) : 0;
}

void st__child_close_copies(const st__child *c) {
  close_fds(c->cap_fd, c->cap_w, c->res_fd, c->pid_fd);
}

void st__child_prepare(st__child *c, const st__runctx *rc) {
  /* --guard-pages: a page for the child's fault note, made once per slot
   * (without one a fault is reported as the plain signal). */
  if (rc->opts->guard_pages && c->fault == NULL)
    c->fault = st__guard_note_new();
}

int st__child_begin(st__child *c, const st__runctx *rc,
                    const st_case_info *info, double timeout,
                    st_case_result **failed) {
  /* The slot's result file, made by its first case (rewound after each). */
  if (c->res_fd < 0 &&
      (c->res_fd = memfd_create("scenetest-isolate", MFD_CLOEXEC)) < 0) {
    *failed = error_result(info, "memfd_create", errno);
    return -1;
  }
  c->index = info->index;
  c->cap_fd = -1;
  c->cap_w = -1;
  c->pid_fd = -1;
  c->exited = 0;
  c->dropped = 0;
  c->kill_at = 0;
  c->timed_out = 0;
  c->interrupted = 0;
  c->oom = 0;
  c->timeout = timeout;
  st__child_prepare(c, rc);
  if (c->fault != NULL)
    c->fault[0] = '\0';
  return 0;
}

int st__child_start(st__child *c, st__runctx *rc, const st_case_ref *ref,
                    const st_case_info *info, double timeout,
                    const st__child *all, size_t n_all,
                    st_case_result **failed) {
  int cp[2];
  pid_t pid, parent = getpid();
  size_t j;

  if (st__child_begin(c, rc, info, timeout, failed) != 0)
    return -1;
  if (pipe2(cp, O_CLOEXEC) != 0) {
    *failed = error_result(info, "pipe", errno);
    return -1;
  }
  c->cap_fd = cp[0];
  /* Buffered output would be written twice otherwise: every stream, the
   * report's included (a kernel that calls exit() flushes the child's
   * copies). */
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(cp[1]);
    child_end(c);
    *failed = error_result(info, "fork", e);
    return -1;
  }
  if (pid == 0) {
    st__child_detach(parent);
    st__proc_close_parent_only(); /* the reports, --events, fd 1 saved */
    /* A child holds only its own descriptors (D14): not its siblings'
     * pipes, result files or pidfds. */
    for (j = 0; j < n_all; j++)
      if (&all[j] != c)
        st__child_close_copies(&all[j]);
    close(cp[0]);
    st__child_enter(rc, ref, info->index, info->total, c->res_fd, cp[1],
                    c->fault);
  }
  st__child_started(c, pid, cp[0], cp[1]);
  return 0;
}

int st__child_wait_ms(const st__child *c, uint64_t now) {
  uint64_t due = c->kill_at ? c->kill_at : c->deadline;
  int ms = -1;
  if (c->pid_fd < 0 && c->cap_fd < 0)
    return 1; /* the pipe at EOF: the child is exiting */
  /* No pidfd: the pipe's end-of-file is not the child's exit (a process
   * it started holds the pipe too, D6): look for its exit now and then. */
  if (c->pid_fd < 0)
    ms = 20;
  if (due != 0) {
    int d = due <= now ? 0 : (int)((due - now + 999999u) / 1000000u);
    if (ms < 0 || d < ms)
      ms = d;
  }
  return ms;
}

void st__child_deadline(st__child *c, uint64_t now) {
  if (c->deadline != 0 && now >= c->deadline && !c->timed_out) {
    c->timed_out = 1;
    kill(-c->pid, SIGTERM);
    kill(c->pid, SIGTERM); /* if it has not made its group yet */
    c->kill_at = now + KILL_GRACE_NS;
  } else if (c->kill_at != 0 && now >= c->kill_at) {
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
    c->kill_at = 0;
    c->deadline = 0;
  }
}

/* A child is done when it has exited; its pipe may still hold what it wrote
 * last (drained before judging), its file holds its frames. With a pidfd,
 * exit is what the pidfd says, and whatever the child's own children
 * still hold does not keep the case. */
int st__child_reaped(st__child *c, int *status) {
  pid_t w;
  if (c->pid_fd >= 0) {
    if (!c->exited)
      return 0;
    w = waitpid(c->pid, status, WNOHANG);
    if (w == 0) {
      c->exited = 0; /* not yet waitable: poll the pidfd again */
      return 0;
    }
  } else if (c->cap_fd >= 0) {
    /* No pidfd and the pipe still open: the child may have exited while
     * a process it started holds the pipe (D6); never wait for that. */
    w = waitpid(c->pid, status, WNOHANG);
    if (w != c->pid)
      return 0;
  } else if (c->deadline != 0) {
    /* The pipe at EOF: the child is exiting. Not a blocking wait, so a
     * child that closed it and hangs still meets its deadline. */
    w = waitpid(c->pid, status, WNOHANG);
    if (w == 0)
      return 0;
  } else {
    /* No deadline: a child that closed its pipe without exiting would
     * hang its case as any hanging kernel does without --timeout; the
     * usual child is already exiting. */
    while ((w = waitpid(c->pid, status, 0)) < 0 && errno == EINTR)
      ;
  }
  return 1;
}

void st__child_init(st__child *c) {
  memset(c, 0, sizeof *c);
  st__buf_init(&c->res, SIZE_MAX);
  st__buf_init(&c->line, SIZE_MAX);
  st__buf_init(&c->captured, ST__CAPTURE_MAX);
  c->pid = -1;
  c->res_fd = c->cap_fd = c->cap_w = c->pid_fd = -1;
}

size_t st__child_pollfds(const st__child *c, struct pollfd *pf) {
  size_t n = 0;
  if (c->cap_fd >= 0) {
    pf[n].fd = c->cap_fd;
    pf[n].events = POLLIN;
    n++;
  }
  if (c->pid_fd >= 0 && !c->exited) {
    pf[n].fd = c->pid_fd;
    pf[n].events = POLLIN;
    n++;
  }
  return n;
}

void st__child_polled(st__child *c, const struct pollfd *pf) {
  if (pf->revents == 0)
    return;
  if (pf->fd == c->pid_fd) {
    c->exited = 1;
  } else if (pf->fd == c->cap_fd) {
    read_fd(&c->cap_fd, &c->line, &c->oom);
    route_lines(c, c->cap_fd < 0);
  }
}

st_case_result *st__child_collect(st__child *c, const st_case_info *info,
                                  int status) {
  st_case_result *r;
  if (c->cap_w >= 0) {
    close(c->cap_w);
    c->cap_w = -1;
  }
  if (c->cap_fd >= 0)
    read_fd(&c->cap_fd, &c->line, &c->oom);
  route_lines(c, 1);
  r = child_result(c, info, status);
  child_end(c);
  return r;
}

void st__child_interrupt(st__child *c, int sig, int *status) {
  c->interrupted = sig;
  kill(-c->pid, SIGKILL);
  kill(c->pid, SIGKILL);
  while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
    ;
}

void st__child_free(st__child *c) {
  if (c->pid > 0) {
    int status;
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
      ;
  }
  child_free(c);
}
