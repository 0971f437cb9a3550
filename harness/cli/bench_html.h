/* SPDX-License-Identifier: MIT */
/* `scenetest bench --report html:PATH` (docs/bench.md#the-html-report):
 * one self-contained page, the figures' table and a roofline chart. */
#ifndef SCENETEST_HARNESS_CLI_BENCH_HTML_H
#define SCENETEST_HARNESS_CLI_BENCH_HTML_H

#include <stdio.h>

#include "case/bench.h"
#include "case/fingerprint.h"
#include "ops/ceiling.h"

/* One case's derived figures (cli/bench.c). */
typedef struct st__bench_figures {
  double gflops, gbps;       /* NAN: no work model */
  double flops_fr, bytes_fr; /* NAN: no work model or no ceiling */
  const char *bound;         /* NULL: unknown */
  int suspicious;
} st__bench_figures;

/* Writes the page. Thread-safety: one thread per f. */
void st__bench_html(FILE *f /* IN */, const st__bench_case *cs /* IN */,
                    size_t n, const st__bench_figures *fs /* IN */,
                    const st__ceilings *ceil /* IN */,
                    const st__fingerprint *fp /* IN */);

#endif
