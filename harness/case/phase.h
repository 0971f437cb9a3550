/* SPDX-License-Identifier: MIT */
/* The phase primitives: a phase begins (live observers told) and ends (one
 * event recorded with what became loaded during it, the TIMING line
 * logged, live observers told). Every phase of every executor goes
 * through these two, so a phase's event looks the same wherever its code
 * ran. */
#ifndef SCENETEST_HARNESS_PHASE_H
#define SCENETEST_HARNESS_PHASE_H

#include <stdint.h>

#include "base/util.h"
#include "case/case.h"

/* What is known of a phase by its name: whether code that is not the
 * harness's runs in it (a golden, a kernel, a platform's hooks:
 * "golden", "rehost", "run"), so that a child running cases makes what
 * came before it safe first (run/childside.h). */
typedef struct st__phase_desc {
  const char *name;
  unsigned runs_foreign : 1;
  unsigned calls_kernel : 1; /* "run": the kernel under test is called */
} st__phase_desc;
/* The description of phase name; one with runs_foreign 0 for a name no
 * phase has. Thread-safety: any thread. */
const st__phase_desc *st__phase_describe(const char *name /* IN */);
/* Tells the live observer that a phase begins (round -1: not a round's). */
void st__phase_begin(st__casectx *cc /* IN */, const char *name /* IN */,
                     int round);
/* Ends a phase begun at t0: polls the loader for objects that became
 * loaded, records the phase event (and one `load` event per object), logs
 * the TIMING phase line, tells the live observer. emitted is for
 * `record`. Out of memory sets cc->oom (the case then errors). */
void st__phase_end(st__casectx *cc /* IN/OUT */, const char *name /* IN */,
                   int round, uint64_t t0, st_phase_status status, int emitted);
/* st__phase_end whose event's `loaded` also lists extra (n_extra strings,
 * borrowed), such as what level-3 workers loaded ("worker N: PATH"):
 * those get no `load` event. */
void st__phase_end_ex(st__casectx *cc /* IN/OUT */, const char *name /* IN */,
                      int round, uint64_t t0, st_phase_status status,
                      int emitted, char *const *extra /* IN */, size_t n_extra);
/* st__phase_end_ex for a `run` phase whose platform reported the kernel's
 * device time and copy time (ST_NS_NONE: not reported): the event carries
 * them and the TIMING line ends with " device_ns=N copy_ns=N"
 * (docs/plugins.md#device-time-device_ns-and-copy_ns). */
void st__phase_end_dev(st__casectx *cc /* IN/OUT */, const char *name /* IN */,
                       int round, uint64_t t0, st_phase_status status,
                       int emitted, char *const *extra /* IN */, size_t n_extra,
                       uint64_t device_ns, uint64_t copy_ns);

#endif
