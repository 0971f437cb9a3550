/* SPDX-License-Identifier: MIT */
/* The HTML pages of `scenetest timing` and `scenetest compare` (--format
 * html): self-contained (inline CSS and SVG, no script), a distribution
 * plot per group and side, medians marked, the comparison's delta and
 * its significance, and the autoload records side by side with the
 * differing fields highlighted (the refusal page). CLI-private (tools
 * layer). */
#ifndef SCENETEST_HARNESS_MEASURE_HTML_H
#define SCENETEST_HARNESS_MEASURE_HTML_H

#include <stdio.h>

#include "tools/samples.h"
#include "tools/stats.h"
#include "tools/timing.h"

/* One row of a comparison: a group present on both sides. */
typedef struct st__cmp_row {
  const st__group *b, *n;
  double delta; /* percent; +inf from a base median of 0 (docs/measuring.md) */
  double p;     /* NAN when not computed */
  st__mwu_method method;
  int few;         /* a side has fewer than min_samples */
  int significant; /* p < alpha and not few */
} st__cmp_row;

/* The geometric mean of the new/base median ratios over rows[0..n) (only
 * the significant ones with significant_only) whose medians are both
 * above 0: *count such rows and *ratio (NAN when none). Thread-safety:
 * any thread. */
void st__cmp_geomean(const st__cmp_row *rows /* IN */, size_t n,
                     int significant_only, size_t *count /* OUT */,
                     double *ratio /* OUT */);

/* What a comparison page shows. Everything is borrowed. */
typedef struct st__compare_page {
  const st__compare_opts *o;
  const st__side *base, *nw;
  const st__cmp_row *rows;
  size_t n_rows;
  int same;            /* the conditions are the same on both sides */
  int tripped;         /* --fail-above tripped */
  const char *refusal; /* non-NULL: the page of a refusal, this reason */
} st__compare_page;

/* Thread-safety: one thread per out. */
void st__timing_html(FILE *out /* IN */, const st__timing_opts *o /* IN */,
                     const st__side *s /* IN */);
/* With pg->refusal set, only the header, the reason and the records. */
void st__compare_html(FILE *out /* IN */, const st__compare_page *pg /* IN */);

#endif
