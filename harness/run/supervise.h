/* SPDX-License-Identifier: MIT */
/* The supervised run's protocol (run/supervise.c,
 * docs/reliability.md#the-process-model): what a supervised child and its
 * supervisor share. Each slot has
 *
 *   a socket pair   supervisor -> child: case indices (u32 each; the end
 *                   of the stream: exit); child -> supervisor: frames
 *                   (wire/msg.h) ST__MSG_LOG (one log line),
 *                   ST__MSG_RESULT (u32 index, the case result) and
 *                   ST__MSG_BEGIN (live runs: u32 index, begun), each
 *                   write in an envelope (wire/envelope.h) that stray
 *                   bytes a kernel writes there cannot pass for
 *   a journal       a shared mapping (ST__SV_JOURNAL bytes) the child
 *                   rewrites between batches: the events and log lines
 *                   of the case it is in and the results it has not
 *                   sent yet (frames ST__MSG_EVENT, ST__MSG_LOG,
 *                   ST__MSG_RESULT), copied there before every phase that
 *                   runs foreign code and after each case, without a
 *                   system call; what does not fit goes on, in order, to
 *                   a memfd (written); read by the supervisor only when
 *                   the child died
 *   a capture       a pipe that is the child's fd 1 and 2, drained by a
 *                   thread of the child into memory shared with the
 *                   supervisor, bounded (run/capture.h): what a kernel
 *                   prints; the child attaches it to its case's result,
 *                   the supervisor when the child died
 *   a shared page   st__sv_state: the case and phase the child is in,
 *                   written without a system call, read after a death
 *
 * Thread-safety: the scheduling thread (the supervisor), the child's
 * scheduling thread (the child; log lines from any thread). */
#ifndef SCENETEST_HARNESS_SUPERVISE_H
#define SCENETEST_HARNESS_SUPERVISE_H

#include <stdint.h>
#include <sys/types.h>

#include <scenetest/run.h>

#include "base/proc.h"
#include "case/case.h"
#include "case/guard.h"
#include "run/capture.h"

/* A supervised child that ended itself to charge its running case
 * (st__sv_state.charge) exits with ST__EXIT_CHARGED (base/proc.h). */

/* Where a supervised child is: written by the child as it goes (plain
 * stores: the supervisor reads it only once the child is dead). */
typedef struct st__sv_state {
  uint32_t running; /* the case's index + 1; 0 between cases */
  int32_t round;    /* the phase's round, -1 outside rounds */
  char phase[32];   /* the phase that began last ("" before the first) */
  /* When the running case and that phase began (st__now_ns): a case whose
   * child died lasted until the death. */
  uint64_t case_ns;
  uint64_t phase_ns;
  /* 1: the child ended itself between cases, because the case before
   * left processes running (run/supervise.c); the cases sent to it are
   * not begun and go to the next child. */
  uint32_t retired;
  /* --guard-pages: what the child's fault handler said of a kernel's
   * access to a guard page just before the fault killed it (case/guard.h);
   * "" if nothing. */
  char fault[ST__GUARD_NOTE_MAX];
  /* Bytes of frames in the slot's journal mapping (stored after them). */
  uint32_t journal_len;
  /* The results this child has made: with what it was sent, how many
   * cases it has left (the supervisor's TICK_MS rule). */
  uint32_t finished;
  /* 1 while the child looks at what the running case's kernel left
   * (run/audit.h), after its last phase. */
  uint32_t auditing;
  /* Why the child ended itself in the running case, charging it (what its
   * kernel did to the child's descriptors or threads); "" if not. */
  char charge[256];
} st__sv_state;

/* Cases a child may hold at once (sent ahead, so that it never waits for
 * the supervisor between cases), and how many finished cases it sends
 * back in one write (until then their results are safe in its journal). */
#define ST__SV_DEPTH 1024
#define ST__SV_BATCH 64

/* What a supervised child is given by its supervisor (run/supervise.c,
 * slot_start): its case list, its ends of the socket and the capture, its
 * slot's journal (memfd and mapping), capture memory and shared page. */
typedef struct st__sv_child_args {
  st__runctx *rc;
  const st_case_ref *refs;
  size_t n;
  int sock, journal, cap_rd, cap_w;
  char *jmap;          /* ST__SV_JOURNAL bytes */
  st__capbuf *cap_buf; /* run/capture.h */
  st__sv_state *state;
  int live;    /* st_run_options.live: nothing waits for a batch */
  int oneshot; /* it runs one case (its executor forks), then exits */
} st__sv_child_args;

/* The child (run/supervise_child.c), after the fork: runs the cases it is
 * sent until the end of its socket's stream. Never returns. */
_Noreturn void st__sv_child_main(const st__sv_child_args *a /* IN */);
/* What a case printed, out[0..n) (freed here) and dropped bytes more, put
 * before the output r has (its workers', level 3): by the child after a
 * case, by the supervisor after the child died in one. */
void st__sv_put_output(st_case_result *r /* IN/OUT, may be NULL */,
                       char *out /* IN, owned */, size_t n, uint64_t dropped);
/* Empties a journal memfd both sides share the offset of (truncated when
 * larger than a few hundred KiB). */
void st__sv_rewind_file(int fd, off_t size);

/* The size of a slot's journal mapping: what a batch of cases usually
 * needs, a few KiB a case; the rest spills to the journal's memfd. */
#define ST__SV_JOURNAL ((size_t)128 << 10)

#endif
