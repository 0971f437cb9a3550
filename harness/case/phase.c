/* SPDX-License-Identifier: MIT */
/* The phase primitives (phase.h): the begin and end of every phase of a
 * case, whichever executor runs it: the event with its duration and the
 * objects loaded during it, the `load` events, the TIMING log line, and
 * the live observer's callbacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "base/loadwatch.h"
#include "case/phase.h"
#include "case/record.h"
#include "case/result.h"

/* Every phase of every executor (case.c, level3/level3.c). */
static const st__phase_desc phases[] = {
    {"args", 0, 0},  {"golden", 1, 0}, {"record", 0, 0},
    {"reset", 0, 0}, {"run", 1, 1},    {"compare", 0, 0},
    {"load", 0, 0},  {"rehost", 1, 0}, {"release", 0, 0},
};

const st__phase_desc *st__phase_describe(const char *name) {
  static const st__phase_desc unknown = {"", 0, 0};
  size_t i;
  /* Six times a case in a child: the first byte rules out most names
   * before a strcmp. */
  for (i = 0; i < sizeof phases / sizeof phases[0]; i++)
    if (name[0] == phases[i].name[0] && strcmp(phases[i].name, name) == 0)
      return &phases[i];
  return &unknown;
}

void st__phase_begin(st__casectx *cc, const char *name, int round) {
  if (cc->live != NULL && cc->live->phase_begin != NULL)
    cc->live->phase_begin(cc->live->data, &cc->info, name, round);
}

static void notify_phase_end(st__casectx *cc, const st_event *ev) {
  if (cc->live != NULL && cc->live->phase_end != NULL)
    cc->live->phase_end(cc->live->data, &cc->info, ev);
}

static void add_event(st__casectx *cc, const st_event *ev) {
  if (st__case_result_add_event(cc->res, ev) != ST_OK)
    cc->oom = 1;
}

static void log_phase(const st__casectx *cc, const st_event *ev) {
  char round[24], dev[64] = "", iter[32] = "";
  size_t len = 0;
  if (!st_log_enabled(ST_LOG_TIMING))
    return;
  if (ev->round < 0)
    snprintf(round, sizeof round, "-");
  else
    snprintf(round, sizeof round, "%d", ev->round);
  /* docs/plugins.md#device-time-device_ns-and-copy_ns: a platform's own timing,
   * only when it reported one. */
  if (ev->device_ns != ST_NS_NONE)
    len += (size_t)snprintf(dev, sizeof dev, " device_ns=%llu",
                            (unsigned long long)ev->device_ns);
  if (ev->copy_ns != ST_NS_NONE)
    snprintf(dev + len, sizeof dev - len, " copy_ns=%llu",
             (unsigned long long)ev->copy_ns);
  /* docs/measuring.md#timing-what-one-log-says: with --repeat, `timing` tells
   * iterations apart. */
  if (cc->run->repeat > 1)
    snprintf(iter, sizeof iter, " iter=%u", cc->info.iteration);
  /* A matrix case's name may hold spaces (`rows[M=2 * TILE]`): quoted
   * then, so that the line still splits into KEY=VALUE words. */
  char *sq, *cq;
  const char *scene = st__timing_name(cc->info.scene, &sq);
  const char *kase = st__timing_name(cc->info.name, &cq);
  st__log_timing("phase pid=%ld scene=%s case=%s name=%s round=%s dur_ns=%llu "
                 "status=%s%s%s%s",
                 (long)st__proc_pid(), scene ? scene : "?", kase ? kase : "?",
                 ev->name, round, (unsigned long long)ev->dur_ns,
                 st_phase_status_name(ev->status), dev, iter,
                 cc->log_tag != NULL ? cc->log_tag : "");
  free(sq);
  free(cq);
  /* The kernel runs next: what the case logged so far reaches the
   * --log-file before it, should it crash the process. */
  if (strcmp(ev->name, "record") == 0)
    st__log_flush();
}

void st__phase_end_ex(st__casectx *cc, const char *name, int round, uint64_t t0,
                      st_phase_status status, int emitted, char *const *extra,
                      size_t n_extra) {
  st__phase_end_dev(cc, name, round, t0, status, emitted, extra, n_extra,
                    ST_NS_NONE, ST_NS_NONE);
}

void st__phase_end_dev(st__casectx *cc, const char *name, int round,
                       uint64_t t0, st_phase_status status, int emitted,
                       char *const *extra, size_t n_extra, uint64_t device_ns,
                       uint64_t copy_ns) {
  uint64_t t1 = st__now_ns();
  char **own = NULL;
  const char **all = NULL;
  size_t n_own = 0, i;
  st_event ev;

  if (st__loadwatch_poll(&own, &n_own) != ST_OK)
    cc->oom = 1;
  if (n_own + n_extra > 0) {
    all = calloc(n_own + n_extra, sizeof *all);
    if (all == NULL) {
      cc->oom = 1;
      n_own = n_extra = 0;
    } else {
      for (i = 0; i < n_own; i++)
        all[i] = own[i];
      for (i = 0; i < n_extra; i++)
        all[n_own + i] = extra[i];
    }
  }
  memset(&ev, 0, sizeof ev);
  ev.name = name;
  ev.round = round;
  ev.start_ns = t0;
  ev.dur_ns = t1 - t0;
  ev.status = status;
  ev.loaded = all;
  ev.n_loaded = n_own + n_extra;
  ev.emitted = emitted;
  ev.device_ns = device_ns;
  ev.copy_ns = copy_ns;
  add_event(cc, &ev);
  log_phase(cc, &ev);
  notify_phase_end(cc, &ev);
  /* A `load` event only for what this process loaded: what workers loaded
   * is not in its address space and cannot make its record stale. */
  for (i = 0; i < n_own; i++) {
    st_event lev;
    memset(&lev, 0, sizeof lev);
    lev.name = "load";
    lev.round = round;
    lev.start_ns = t1;
    lev.status = ST_PHASE_OK;
    lev.object = own[i];
    lev.phase = name;
    lev.device_ns = lev.copy_ns = ST_NS_NONE;
    add_event(cc, &lev);
    notify_phase_end(cc, &lev);
  }
  free(all);
  st__loadwatch_free(own, n_own);
}

void st__phase_end(st__casectx *cc, const char *name, int round, uint64_t t0,
                   st_phase_status status, int emitted) {
  st__phase_end_ex(cc, name, round, t0, status, emitted, NULL, 0);
}
