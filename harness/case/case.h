/* SPDX-License-Identifier: MIT */
/* One case: the contexts a case runs in (what it borrows from its run,
 * what it builds up itself), the steps its executors share (args and
 * golden, record, reset before a round's run, compare), and running one
 * case from its first phase to its result. The scheduling of many cases is
 * run/'s; where a case's kernel runs is its executor's (case/exec.h). */
#ifndef SCENETEST_HARNESS_CASE_H
#define SCENETEST_HARNESS_CASE_H

#include <scenetest/record.h>
#include <scenetest/run.h>

#include "case/args.h"
#include "case/call.h"
#include "case/tbuf.h"
#include "scene/scene.h"

/* How many executors may keep per-run state (st__executor.slot). */
#define ST__EXEC_SLOTS 4

/* What a case borrows from its run. Set up by run/ (run_setup); a case
 * only reads it, but for exec_state. */
typedef struct st__runctx {
  const st_run_options *opts; /* borrowed from the caller */
  st_registry *reg;           /* borrowed: the caller's or the run's */
  st_watch *watch;            /* the parsed --watch list, the run's */
  size_t n_watch;
  unsigned golden_threads;
  /* One word per executor (its slot) for what it keeps as long as the run
   * (level 3: which worker pools are the run's); 0 until its first case.
   * Written by that executor's hooks only (case/exec.h says when). */
  unsigned long exec_state[ST__EXEC_SLOTS];
  /* --repeat (docs/cli.md#repeat-and-shuffle): the iteration of each entry of
   * the run's order (NULL: every entry is iteration 1) and the number of
   * iterations. */
  const unsigned *iters;
  unsigned repeat;
  /* Some selected case has an `env` (docs/scene-format.md): the record
   * then keeps one line per distinct environment (case/record.h). */
  int any_env;
} st__runctx;

/* The 1-based iteration of entry i of the run's order. */
unsigned st__iteration_of(const st__runctx *rc /* IN */, size_t i);

/* One case while it runs. Thread-safety: one thread per case. */
typedef struct st__casectx {
  st__runctx *run;
  st_case_info info;
  st_case_result *res;
  /* Told as phases happen (case_begin, phase_begin, phase_end), or NULL:
   * the case is only recorded, its events replayed later. Borrowed. */
  const st_observer *live;
  int oom;
  /* The kernel's call reported an error (not a skip, a crash or a write
   * out of bounds), with this message: what `expect: error` checks
   * (st__case_kernel_failed). */
  int kernel_failed;
  char kernel_message[ST_OP_MESSAGE_MAX];
  /* The case's environment (docs/scene-format.md, `env`), set for the
   * whole case by st__case_run: 2 * n_env borrowed strings, and the
   * same as one "NAME=VALUE\n..." key for the record (case/record.h);
   * NULL and 0 without one. */
  const char **env;
  size_t n_env;
  char *env_key;
  /* Appended to the TIMING line of each phase while set (the bench's
   * " warmup=1" and " check=1", docs/bench.md); NULL: nothing. */
  const char *log_tag;
  /* The flags (ST__EXEC_*, case/exec.h) of the executor that runs the
   * case, set by st__case_run before it starts. */
  unsigned exec_flags;
} st__casectx;

/* What a case holds between its phases. */
typedef struct st__casedata {
  st__plan plan;
  st__argset args; /* what the kernel runs on */
  st__argset init; /* the initial bytes: reset and inputs-unchanged */
  st__argset gold; /* golden's results (empty under skip_golden) */
  int skip_golden;
  unsigned rounds;
  /* Where the kernel runs in this process (level 2): the kernel resolved
   * and bound at the end of `args`
   * (docs/plugins.md#platform-hooks-prepare-and-release), and the platform's
   * device state from its prepare hook, released by st__case_release after the
   * last round. At level 3 the workers do this themselves. */
  st_op_fn kernel;
  const st_platform_hooks *hooks;
  void *platform_state;
  int prepared;
  /* The golden backend: --golden-platform > the case's golden_platform >
   * the scene's > "reference" (docs/scene-format.md#scene-keys). Borrowed. */
  const char *golden_backend;
  /* --determinism (case/trust.h): run 1's output bytes per tensor (NULL
   * for the others); owned. */
  void **det;
  size_t n_det;
} st__casedata;

/* Fills the info of case i of n. */
void st__case_info_fill(st_case_info *info /* OUT */,
                        const st__runctx *rc /* IN */,
                        const st_case_ref *ref /* IN */, size_t i, size_t n);

/* The steps every executor's `run` is made of, in this order:
 * st__case_prepare (args, golden), st__case_record, then per round
 * st__case_run_begin (reset, begin `run`), the executor's kernel call and
 * st__phase_end of `run`, st__case_compare. */

/* Runs the `args` and (unless skipped) `golden` phases into *d. Unless
 * the case's executor resolves its kernel itself (ST__EXEC_OWN_KERNEL),
 * `args` ends by resolving and binding the kernel and running the
 * platform's prepare hook (d->kernel, d->platform_state); a failure there
 * is an args error, a prepare's ST_ESKIP a skip. Returns 1 if the case may
 * go on; else the case's status is set. Either way free d
 * with st__casedata_free. */
int st__case_prepare(st__casectx *cc /* IN/OUT */,
                     const st_scene *scene /* IN */, size_t ci,
                     st__casedata *d /* OUT */);
/* Accepts a zeroed d. */
void st__casedata_free(st__casedata *d /* IN/OUT */);
/* The platform's release hook, once, after the last round (whatever the
 * rounds did) when its prepare succeeded in st__case_prepare. No phase of
 * its own. */
void st__case_release(st__casectx *cc /* IN */, st__casedata *d /* IN/OUT */);
/* The `record` phase. */
void st__case_record(st__casectx *cc /* IN/OUT */);
/* Begins round's `run` phase; from round 1 on, after a `reset` phase that
 * puts the outputs back to their initial bytes. Returns the run phase's
 * start time, for st__phase_end. */
uint64_t st__case_run_begin(st__casectx *cc /* IN/OUT */,
                            st__casedata *d /* IN/OUT */, unsigned round);
/* The `compare` phase of round (nothing under skip_golden). Returns 1 if
 * the case may go on. */
int st__case_compare(st__casectx *cc /* IN/OUT */, st__casedata *d /* IN */,
                     unsigned round);

/* Records that the kernel's own call reported an error with message
 * (the case's message when it is empty), for `expect: error`; the first
 * one wins. Executors call it where the kernel's status comes back. */
void st__case_kernel_failed(st__casectx *cc /* IN/OUT */,
                            const char *message /* IN */);

/* Validates (st_op_check) and calls fn; maps the outcome to a phase status
 * and, on failure, sets the case's status and message (prefixed with
 * what). Only the process that made the call returns (case/call.h). */
st_phase_status st__dispatch(st__casectx *cc /* IN/OUT */, st_op_fn fn,
                             st__call *call /* IN/OUT */,
                             const char *what /* IN */);
/* Checks the guard zones of every tensor of args (case/tbuf.h) after a
 * kernel ran on them, whatever it returned: a write before the start or
 * past the end of a tensor is a case error naming the tensor, the side and
 * how many bytes it reached (the zones are re-armed; a decline becomes
 * that error). Returns ST_PHASE_ERROR then, else ps unchanged. Only for buffers
 * from the tensor allocator (level 2; the level-3 segments have zones of their
 * own: case/level3/rehost.h). */
st_phase_status st__case_guard_check(st__casectx *cc /* IN/OUT */,
                                     st__argset *args /* IN/OUT */,
                                     st_phase_status ps);
/* The case error for one tensor's damaged guard zones (the message both
 * levels give; where is added inside its parentheses, "" or "; ..."). */
void st__case_guard_error(st__casectx *cc /* IN/OUT */,
                          const char *name /* IN */, size_t nbytes,
                          const st__tbuf_damage *dmg /* IN */,
                          const char *where /* IN */);
/* Compares outputs with golden (allclose, per-tensor tolerances) and inputs
 * with their initial bytes; on mismatch sets the case to fail with the
 * report of harness/case/mismatch.c (round is 0-based, of rounds). */
st_phase_status st__compare_all(st__casectx *cc /* IN/OUT */,
                                const st__plan *plan /* IN */,
                                const st__argset *args /* IN */,
                                const st__argset *gold /* IN */,
                                const st__argset *init /* IN */, unsigned round,
                                unsigned rounds);

#endif
