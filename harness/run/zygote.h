/* SPDX-License-Identifier: MIT */
/* The isolate scheduler's fork server (issue 14): a process forked once per
 * run, before any case runs, that forks the case children ahead of need.
 *
 * Why: fork(2) copies the page tables of the forking process, so its cost
 * grows with what that process holds (measured on a 2-vCPU VM: 122 us for a
 * 2 MB process, 395 us at 16 MB, 1.3 ms at 64 MB; docs/benchmarks.md), and
 * the harness grows as results accumulate. The zygote keeps the state of
 * the run's start and writes nothing to it, so every fork costs the same at
 * case 200,000 as at case 1; and it forks the next case's child while the
 * current case runs, so a fork is off the critical path wherever a CPU is
 * free.
 *
 * A spare is made with clone(CLONE_PARENT): its parent is the harness, not
 * the zygote, so the scheduler waits for it, kills it and reads its pidfd
 * exactly as it does a child it forked itself (run/child.h). A spare makes
 * its own process group (as the scheduler does, whichever is first), then
 * waits for its case: the scheduler sends the
 * case's number and slot, with the slot's result file, over the spare's
 * socket. A spare never sent a case exits when its socket closes.
 *
 * Not thread-safe: the scheduling thread's own. */
#ifndef SCENETEST_HARNESS_ZYGOTE_H
#define SCENETEST_HARNESS_ZYGOTE_H

#include <sys/types.h>

#include "run/child.h"

/* A child waiting for its case: the harness's child, in its own process
 * group; both ends of its capture pipe and its end of the case socket. */
typedef struct st__spare {
  pid_t pid;
  int cap_r, cap_w, go;
} st__spare;

typedef struct st__zygote st__zygote;

/* Starts the zygote for a run of refs[0..n) whose isolated cases number
 * `cases` and run at most n_slots at a time in slots[] (each slot's fault
 * note, if --guard-pages, already made: the zygote's children inherit it).
 * Returns NULL when none can be had (out of memory, no fork): the caller
 * forks each child itself. */
st__zygote *st__zygote_start(st__runctx *rc /* IN, borrowed */,
                             const st_case_ref *refs /* IN, borrowed */,
                             size_t n, const st__child *slots /* IN */,
                             size_t n_slots, size_t cases);
/* A case is starting: the next spare if the zygote has made it (0), else
 * 1 (the caller forks the case's child itself; the zygote keeps making
 * spares ahead); the zygote asked for more while any of the `left`
 * isolated cases still to start after this one want them. Waits only for
 * the first spare (the zygote's huge pages are made before it). Returns -1
 * when the zygote is gone (then every later call does too). */
int st__zygote_take(st__zygote *z /* IN/OUT */, size_t left,
                    st__spare *out /* OUT */);
/* Sends the spare its case: case index of the run, in slot, writing into
 * res_fd. Closes sp->go. Returns -1 if the spare cannot be told (it died). */
int st__zygote_go(st__spare *sp /* IN/OUT */, size_t index, size_t slot,
                  int res_fd);
/* A spare no case will take: killed and waited for, its descriptors
 * closed. */
void st__zygote_discard(st__spare *sp /* IN/OUT */);
/* The zygote's process id (for tests). */
pid_t st__zygote_pid(const st__zygote *z /* IN */);
/* Ends the zygote: the spares it made and no case took are killed and
 * waited for, then the zygote. NULL is a no-op. */
void st__zygote_stop(st__zygote *z /* IN, owned */);

#endif
