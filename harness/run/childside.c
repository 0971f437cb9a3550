/* SPDX-License-Identifier: MIT */
/* The child side of run/childside.h, one copy for isolate and supervise. */
#include <stddef.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <unistd.h>

#include "base/loadwatch.h"
#include "base/proc.h"
#include "case/exec.h"
#include "case/phase.h"
#include "ops/registry_internal.h"
#include "run/childside.h"

void st__childside_flush_stdio(void) {
  if (__fpending(stdout) > 0)
    fflush(stdout);
  if (__fpending(stderr) > 0)
    fflush(stderr);
}

void st__childside_capture(int cap_w) {
  if (dup2(cap_w, 1) < 0 || dup2(cap_w, 2) < 0)
    _exit(ST__EXIT_CAPTURE);
}

void st__childside_begin(st__runctx *rc, int cap_w) {
  /* What the executors kept in the parent (level 3: its worker pools and
   * segments) is not ours. */
  st__executors_after_fork(rc);
  /* While phases run fd 1 and 2 are the capture (docs/reliability.md). */
  st__childside_capture(cap_w);
}

void st__childside_load_deferred(st__runctx *rc) {
  if (st__registry_load_deferred(rc->reg) > 0)
    st__loadwatch_prime();
}

int st__childside_foreign(const st__runctx *rc) {
  return st__registry_foreign(rc->reg) > 0;
}

static void on_phase_begin(void *data, const st_case_info *info,
                           const char *phase, int round) {
  st__childside *cs = data;
  const st__phase_desc *d = st__phase_describe(phase);
  (void)info;
  if (cs->phase_begin != NULL)
    cs->phase_begin(cs->data, phase, round);
  if (!d->runs_foreign)
    return;
  cs->before_foreign(cs->data);
  /* The kernel's threads are counted from its first call on. */
  if (d->calls_kernel && round <= 0 && st__childside_foreign(cs->rc))
    st__audit_kernel_begin(cs->audit);
}

static void on_phase_end(void *data, const st_case_info *info,
                         const st_event *ev) {
  st__childside *cs = data;
  (void)info;
  cs->phase_end(cs->data, ev);
}

st_case_result *st__childside_run(st__childside *cs, const st_case_ref *ref,
                                  size_t index, size_t total) {
  st_observer so;
  st_case_result *r;
  st_observer_init(&so);
  so.data = cs;
  so.phase_begin = on_phase_begin;
  so.phase_end = on_phase_end;
  r = st__case_run(cs->rc, ref, index, total, &so);
  if (r == NULL)
    _exit(ST__EXIT_NO_RESULT); /* the parent reports it */
  return r;
}
