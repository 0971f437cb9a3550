/* SPDX-License-Identifier: MIT */
/* The serial scheduler: the cases one after another on the scheduling
 * thread, each told to the observers live as its phases happen (-j 1,
 * and any run of a single case). */
#include "run/sched.h"

static int serial_fits(const st__schedctx *sc) {
  (void)sc;
  return 1;
}

static st_status serial_run_all(st__schedctx *sc, st_error *err) {
  size_t i;
  int stop = 0;
  (void)err;
  for (i = 0; i < sc->n; i++) {
    st_case_result *r;
    if (stop) {
      r = st__sched_not_run(sc, i);
      st__sched_report(sc, i, r, ST__REPORT_REPLAY | ST__REPORT_FINISH);
      continue;
    }
    r = st__case_run(sc->rc, &sc->refs[i], i, sc->n, &sc->fo->live);
    if (st__sched_stops(sc, r))
      stop = 1;
    st__sched_report(sc, i, r, ST__REPORT_LIVE | ST__REPORT_FINISH);
  }
  return ST_OK;
}

const st__scheduler st__sched_serial = {
    .name = "serial",
    .fits = serial_fits,
    .run_all = serial_run_all,
};
