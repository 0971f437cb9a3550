/* SPDX-License-Identifier: MIT */
/* --durations N (docs/cli.md#durations): the N slowest cases of a run and
 * each one's slowest phase, for the text report, TAP (as # lines) and
 * JSON (`slowest`). Cases that did not run (skipped) are not ranked. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/report.h"

typedef struct ranked {
  const st_case_result *r;
  size_t index;
} ranked;

/* Slowest first; equal durations in run order, so the list is stable. */
static int by_duration(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  uint64_t dx = st_case_result_duration_ns(x->r);
  uint64_t dy = st_case_result_duration_ns(y->r);
  if (dx != dy)
    return dx > dy ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The ranked cases (malloc'd, *n of them, at most limit) and the run's
 * highest iteration (for the ids). NULL when none or out of memory. */
static ranked *rank(const st_run_result *run, unsigned limit, size_t *n,
                    unsigned *repeat) {
  size_t count = st_run_result_count(run), i, k = 0;
  ranked *v = malloc((count ? count : 1) * sizeof *v);
  *n = 0;
  *repeat = 1;
  if (v == NULL)
    return NULL;
  for (i = 0; i < count; i++) {
    const st_case_result *r = st_run_result_get(run, i);
    if (r == NULL)
      continue;
    if (st_case_result_iteration(r) > *repeat)
      *repeat = st_case_result_iteration(r);
    if (st_case_result_status(r) == ST_CASE_SKIP)
      continue;
    v[k].r = r;
    v[k].index = i;
    k++;
  }
  qsort(v, k, sizeof *v, by_duration);
  *n = k < limit ? k : limit;
  return v;
}

/* The phase event of r that took longest (load events are not phases);
 * NULL when it has none. */
static const st_event *slowest_phase(const st_case_result *r) {
  const st_event *best = NULL;
  size_t i, n = st_case_result_event_count(r);
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (strcmp(ev->name, "load") == 0)
      continue;
    if (best == NULL || ev->dur_ns > best->dur_ns)
      best = ev;
  }
  return best;
}

static void put_seconds(FILE *out, uint64_t ns) {
  fprintf(out, "%" PRIu64 ".%06" PRIu64 "s", ns / 1000000000u,
          (ns % 1000000000u) / 1000u);
}

void st__durations_text(FILE *out, const st_run_result *run, unsigned limit,
                        const char *prefix) {
  size_t n, i;
  unsigned repeat;
  ranked *v;
  if (limit == 0 || run == NULL)
    return;
  v = rank(run, limit, &n, &repeat);
  fprintf(out, "%sslowest %u case%s:\n", prefix, limit, limit == 1 ? "" : "s");
  for (i = 0; v != NULL && i < n; i++) {
    const st_event *ev = slowest_phase(v[i].r);
    char *id = st__report_case_id(st_case_result_scene(v[i].r),
                                  st_case_result_case(v[i].r),
                                  st_case_result_iteration(v[i].r), repeat, 0);
    fprintf(out, "%s  ", prefix);
    put_seconds(out, st_case_result_duration_ns(v[i].r));
    fprintf(out, "  %s", id != NULL ? id : st_case_result_case(v[i].r));
    if (ev != NULL) {
      fprintf(out, "  (slowest phase: %s ", ev->name);
      put_seconds(out, ev->dur_ns);
      fputc(')', out);
    }
    fputc('\n', out);
    free(id);
  }
  free(v);
}

void st__durations_json(FILE *out, const st_run_result *run, unsigned limit) {
  size_t n, i;
  unsigned repeat;
  ranked *v = rank(run, limit, &n, &repeat);
  fputs("\"slowest\": [", out);
  for (i = 0; v != NULL && i < n; i++) {
    const st_event *ev = slowest_phase(v[i].r);
    char *id = st__report_case_id(st_case_result_scene(v[i].r),
                                  st_case_result_case(v[i].r),
                                  st_case_result_iteration(v[i].r), repeat, 0);
    fputs(i > 0 ? ", {\"id\": " : "{\"id\": ", out);
    st__json_string(out, id != NULL ? id : st_case_result_case(v[i].r));
    fprintf(out, ", \"duration_ns\": %" PRIu64 ", \"phase\": ",
            st_case_result_duration_ns(v[i].r));
    if (ev != NULL) {
      st__json_string(out, ev->name);
      fprintf(out, ", \"phase_ns\": %" PRIu64 "}", ev->dur_ns);
    } else {
      fputs("null, \"phase_ns\": null}", out);
    }
    free(id);
  }
  fputs("]", out);
  free(v);
}
