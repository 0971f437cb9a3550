/* SPDX-License-Identifier: MIT */
/* A forked child that runs one case (what the isolate scheduler runs each
 * case in, and what a supervising scheduler can build on): a slot, kept
 * across the cases it runs, holds the child's pid and pidfd, its capture
 * pipe (harness log lines passed through to our stderr, the rest kept as
 * the case's output, capped), its result file (a memfd the child appends
 * its events and then its result to) and its deadline. The scheduler
 * polls the slots' descriptors, enforces deadlines and collects a child's
 * result once it can be waited for; how many slots there are and which
 * case goes where is the scheduler's. Thread-safety: the scheduling
 * thread. */
#ifndef SCENETEST_HARNESS_CHILD_H
#define SCENETEST_HARNESS_CHILD_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include <scenetest/run.h>

#include "base/buf.h"
#include "case/case.h"

/* A slot: at most one running child. The result file and the buffers are
 * kept across the slot's cases (allocating anew for each case would write
 * to the heap's free lists, page after page, while a child runs). */
typedef struct st__child {
  size_t index;     /* the case it runs (the scheduler's number) */
  pid_t pid;        /* > 0 while a child runs */
  int res_fd;       /* the slot's result file (memfd), -1 until made */
  int cap_fd;       /* the capture pipe's read end */
  int cap_w;        /* our copy of its write end, held while pid_fd is */
  int pid_fd;       /* a pidfd of the child, or -1 (none to be had) */
  int exited;       /* pid_fd said the child has exited */
  st__buf res;      /* the frames, once the child has exited */
  st__buf line;     /* the capture's current line */
  st__buf captured; /* what the child printed, log lines excepted, at most
                       ST__CAPTURE_MAX bytes (its cap) */
  size_t dropped;
  uint64_t start, deadline, kill_at;
  double timeout;
  int timed_out;
  int interrupted; /* the signal that ended the run, which killed it */
  int oom;
  char *fault; /* --guard-pages: the child's fault note (case/guard.h),
                  shared memory made by the slot's first case; or NULL */
} st__child;

/* An empty slot (no child, no file). */
void st__child_init(st__child *c /* OUT */);
/* Forks the child of case index (info describes it) into the empty slot
 * c, with timeout seconds (0: none). all[0..n_all) are every slot, whose
 * descriptors the child closes. Returns 0, or -1 with an error result made
 * in *failed (NULL when out of memory). */
int st__child_start(st__child *c /* IN/OUT */, st__runctx *rc /* IN */,
                    const st_case_ref *ref /* IN */,
                    const st_case_info *info /* IN */, double timeout,
                    const st__child *all /* IN */, size_t n_all,
                    st_case_result **failed /* OUT */);
/* In a process forked from the slot's parent (a sibling child, the
 * zygote): closes its copies of the slot's descriptors (D14). The slot is
 * not changed: it is the parent's, copied. */
void st__child_close_copies(const st__child *c /* IN */);
/* The slot's one-time setup that a child must inherit (--guard-pages: its
 * fault note); st__child_start does it too. For a fork server made before
 * the slot's first case (run/zygote.h). */
void st__child_prepare(st__child *c /* IN/OUT */,
                       const st__runctx *rc /* IN */);
/* Readies the empty slot for case info (its result file made if it has
 * none): the first half of st__child_start, for a child made elsewhere.
 * Returns -1 with *failed the case's error result (NULL out of memory). */
int st__child_begin(st__child *c /* IN/OUT */, const st__runctx *rc /* IN */,
                    const st_case_info *info /* IN */, double timeout,
                    st_case_result **failed /* OUT */);
/* The second half: the child pid, already running the slot's case, its
 * capture pipe's ends taken (the write end kept while its pidfd is, else
 * closed). */
void st__child_started(st__child *c /* IN/OUT */, pid_t pid, int cap_r,
                       int cap_w);
/* In a new child of the harness: its own process group, killed with the
 * harness (PR_SET_PDEATHSIG; exits 123 if parent is already gone), the
 * harness's signal handling undone. */
void st__child_detach(pid_t parent);
/* In such a child: runs case index of total (ref) with its events into
 * res_fd, fd 1 and 2 onto cap_w, a fault note into fault (or NULL); never
 * returns. */
_Noreturn void st__child_enter(st__runctx *rc /* IN */,
                               const st_case_ref *ref /* IN */, size_t index,
                               size_t total, int res_fd, int cap_w,
                               char *fault /* IN, borrowed */);
/* The descriptors to poll for the running child c into pf[0..2); returns
 * how many. */
size_t st__child_pollfds(const st__child *c /* IN */,
                         struct pollfd *pf /* OUT: room for 2 */);
/* How long poll may sleep for c (ms, -1 for ever), now being now. */
int st__child_wait_ms(const st__child *c /* IN */, uint64_t now);
/* Takes in what poll said of one of c's descriptors. */
void st__child_polled(st__child *c /* IN/OUT */,
                      const struct pollfd *pf /* IN */);
/* Past its deadline: SIGTERM, then SIGKILL after a grace. */
void st__child_deadline(st__child *c /* IN/OUT */, uint64_t now);
/* The run was interrupted by sig: the child's process group killed, the
 * child waited for (its wait status in *status); collect it next. */
void st__child_interrupt(st__child *c /* IN/OUT */, int sig,
                         int *status /* OUT */);
/* 1 when c's child has been waited for (its wait status in *status). */
int st__child_reaped(st__child *c /* IN/OUT */, int *status /* OUT */);
/* The waited-for child's case result (its own, or one made from the events
 * it wrote and how it ended), its captured output attached; the slot is
 * empty again after, its file and buffers kept. NULL when out of memory.
 * info describes the case. */
st_case_result *st__child_collect(st__child *c /* IN/OUT */,
                                  const st_case_info *info /* IN */,
                                  int status);
/* Kills and waits for a child still running (only on an internal error:
 * no child may outlive the run), then frees the slot's file and buffers. */
void st__child_free(st__child *c /* IN/OUT */);

#endif
