/* SPDX-License-Identifier: MIT */
/* The side of a forked child that runs cases, shared by the isolate
 * scheduler's children (run/child.c: one case, its frames into a result
 * file) and the supervise scheduler's (run/supervise_child.c: cases one
 * after another, frames into a journal and a socket): what a child does
 * after the fork, the observer that runs before each phase of foreign
 * code (case/phase.h's runs_foreign) and makes what came before it safe,
 * the kernel's thread audit begun with its first call, and the run of one
 * case. What each child does with its frames is its own: it says so
 * through the hooks. Thread-safety: the child's scheduling thread. */
#ifndef SCENETEST_HARNESS_CHILDSIDE_H
#define SCENETEST_HARNESS_CHILDSIDE_H

#include <scenetest/run.h>

#include "case/case.h"
#include "run/audit.h"

typedef struct st__childside {
  st__runctx *rc;
  st__audit *audit; /* the kernel's threads counted from its first call */
  void *data;       /* the hooks' */
  /* As a phase begins, before anything else (may be NULL). */
  void (*phase_begin)(void *data, const char *phase, int round);
  /* Before a phase that runs foreign code: what came before it is made
   * safe (written where a death does not lose it). */
  void (*before_foreign)(void *data);
  /* A phase's event. */
  void (*phase_end)(void *data, const st_event *ev);
} st__childside;

/* Right after the fork: what the executors kept in the parent is dropped,
 * and fd 1 and 2 become cap_w (exits ST__EXIT_CAPTURE if they cannot). */
void st__childside_begin(st__runctx *rc /* IN */, int cap_w);
/* fd 1 and 2 made cap_w again (a kernel that closed them does not take
 * the next case's output along); exits ST__EXIT_CAPTURE if they cannot. */
void st__childside_capture(int cap_w);
/* The eager plugins the parent did not load
 * (docs/reliability.md#the-process-model), before a case begins: as the
 * in-process run has them. */
void st__childside_load_deferred(st__runctx *rc /* IN */);
/* Whether the cases so far may have run code that is not the harness's
 * own (a plugin's, an API user's module): only then are the audits
 * worth their system calls. Asked after a case: one may load a plugin
 * lazily. */
int st__childside_foreign(const st__runctx *rc /* IN */);
/* Runs case index of total (ref) with cs's hooks told of its phases: its
 * result, never NULL (a case that could make none exits the child with
 * ST__EXIT_NO_RESULT). */
st_case_result *st__childside_run(st__childside *cs /* IN */,
                                  const st_case_ref *ref /* IN */, size_t index,
                                  size_t total);
/* Flushes stdout and stderr when they hold something (fflush takes the
 * stream's lock, a write to a page the child shares copy-on-write with
 * its parent). */
void st__childside_flush_stdio(void);

#endif
