/* SPDX-License-Identifier: MIT */
/* The failure report of the compare phase (docs/scene-format.md#compare): which
 * round, every failing tensor, and for each the data a user needs to see what
 * went wrong without rerunning: the mismatch count and percentage, the first
 * mismatch, the greatest absolute and relative differences with their
 * indexes, in the wording of torch.testing.assert_close
 * (torch/testing/_comparison.py, make_tensor_mismatch_msg: "Mismatched
 * elements: 1 / 4 (25.0%)", "Greatest absolute difference: 2 at index (0,
 * 3) (up to 1e-05 allowed)"), and a table of up to 8 mismatching
 * elements; for an input the kernel modified, the first changed element
 * before and after. The verdict per element is compare.c's. Cold code:
 * it runs only on a failure, so it reads elements one at a time. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/bound_compare.h"
#include "case/compare.h"
#include "case/mismatch.h"
#include "case/npy.h"
#include "case/poison.h"

#define TABLE_ROWS 8

/* A gold set's magnitude sums of tensor i under tolerance: bound. */
#define MAGSUM(g, i) ((g)->magsum != NULL ? (g)->magsum[i] : NULL)
#define NTERM(g, i) ((g)->nterm != NULL ? (g)->nterm[i] : NULL)

/* One row of the mismatch table as text: index, actual, expected, abs
 * diff, rel diff. */
typedef struct table_row {
  char cell[5][ST_MAX_DIMS * 24 + 4];
} table_row;

/* The table of up to TABLE_ROWS mismatching elements. Each column is at
 * least as wide as before (14, 16, 16, 12) and wider when a cell needs
 * it, so that columns stay aligned and are always apart by two spaces or
 * more, which is where the HTML report splits them into cells
 * (report/report_html.c): a float64 value takes up to 24 characters. */
static void table(FILE *out, const st_tensor *a, const st_tensor *e,
                  const size_t *rows, size_t n) {
  static const char *const head[5] = {"index", "actual", "expected", "abs diff",
                                      "rel diff"};
  table_row r[TABLE_ROWS];
  int width[4] = {14, 16, 16, 12};
  for (size_t k = 0; k < n; k++) {
    /* Exact for integers beyond 2^53 too (case/compare.h). */
    const double d = st__compare_abs_diff(a, e, rows[k]);
    const double y = st_tensor_get_f64(e, rows[k]);
    st__format_torch_index(a, rows[k], r[k].cell[0], sizeof r[k].cell[0]);
    st__compare_value_str(a, rows[k], r[k].cell[1], sizeof r[k].cell[1]);
    st__compare_value_str(e, rows[k], r[k].cell[2], sizeof r[k].cell[2]);
    snprintf(r[k].cell[3], sizeof r[k].cell[3], "%.6g", d);
    snprintf(r[k].cell[4], sizeof r[k].cell[4], "%.6g", d / fabs(y));
    for (int c = 0; c < 4; c++)
      if ((int)strlen(r[k].cell[c]) + 1 > width[c])
        width[c] = (int)strlen(r[k].cell[c]) + 1;
  }
  fprintf(out, "\n  %-*s %-*s %-*s %-*s %s", width[0], head[0], width[1],
          head[1], width[2], head[2], width[3], head[3], head[4]);
  for (size_t k = 0; k < n; k++)
    fprintf(out, "\n  %-*s %-*s %-*s %-*s %s", width[0], r[k].cell[0], width[1],
            r[k].cell[1], width[2], r[k].cell[2], width[3], r[k].cell[3],
            r[k].cell[4]);
}

/* The detail block of an output or inout that differs from golden. */
static void close_detail(FILE *out, const st_tensor *a, const st_tensor *e,
                         const st__rarg *ra) {
  size_t count = 0, first = 0, worst_abs = 0, worst_rel = 0;
  size_t rows[TABLE_ROWS];
  double max_abs = 0, max_rel = 0;
  int have = 0;
  for (size_t i = 0; i < a->numel; i++) {
    if (st__compare_at(a, e, i, ra->rtol, ra->atol, ra->equal_nan))
      continue;
    const double ad = st__compare_abs_diff(a, e, i);
    const double rd = ad / fabs(st_tensor_get_f64(e, i));
    if (count < TABLE_ROWS)
      rows[count] = i;
    if (count++ == 0)
      first = i;
    /* As torch.max: a NaN difference is the greatest, the first one. */
    if (!have || (!isnan(max_abs) && (isnan(ad) || ad > max_abs)))
      max_abs = ad, worst_abs = i;
    if (!have || (!isnan(max_rel) && (isnan(rd) || rd > max_rel)))
      max_rel = rd, worst_rel = i;
    have = 1;
  }
  char tol[96], ix[ST__INDEX_CHARS], va[ST__VALUE_CHARS], ve[ST__VALUE_CHARS];
  snprintf(tol, sizeof tol, "rtol %g, atol %g", ra->rtol, ra->atol);
  st__detail_head(out, ra->name, a, e, tol, ra->equal_nan, count, first);
  st__element_strs(a, e, worst_abs, 1, ix, va, ve);
  fprintf(out,
          "\n  Greatest absolute difference: %.9g at index %s (up to %g "
          "allowed): actual %s, expected %s",
          max_abs, ix, ra->atol, va, ve);
  st__format_torch_index(a, worst_rel, ix, sizeof ix);
  fprintf(out,
          "\n  Greatest relative difference: %.9g at index %s (up to %g "
          "allowed)",
          max_rel, ix, ra->rtol);
  table(out, a, e, rows, count < TABLE_ROWS ? count : TABLE_ROWS);
  if (count > TABLE_ROWS)
    fprintf(out, "\n  ... %zu more", count - TABLE_ROWS);
}

/* docs/reliability.md#guard-zones-guard-pages-and-poisoning: a poisoned output
 * whose bits still equal the poison was never written, whatever equal_nan says
 * (the poison of a float is a NaN, and a NaN golden would otherwise excuse it),
 * unless golden has the same bits there (poison.h says why); a bool byte other
 * than 0 or 1 is never a valid result. Fills line and returns 1 on such a
 * failure. */
static int poison_check(const st__rarg *ra, const st_tensor *a,
                        const st_tensor *e, char *line, size_t size) {
  char ix[ST_MAX_DIMS * 24 + 4];
  size_t count = 0, first = (size_t)-1;
  if (ra->poison)
    first = st__poison_find(a, e, &count);
  if (count > 0) {
    st__format_index(a, first, ix, sizeof ix);
    snprintf(line, size,
             "output '%s' (%s): %zu of %zu elements never written by the "
             "kernel (still the poison); first at index %s",
             ra->name, st_dtype_name(a->dtype), count, a->numel, ix);
    return 1;
  }
  first = st__poison_bad_bool(a, &count);
  if (count > 0) {
    st__format_index(a, first, ix, sizeof ix);
    snprintf(line, size,
             "output '%s' (bool): %zu of %zu elements are neither 0 nor 1; "
             "first at index %s: byte %u",
             ra->name, count, a->numel, ix,
             (unsigned)((const unsigned char *)a->data)[first]);
    return 1;
  }
  return 0;
}

/* The detail of an input the kernel changed: its first changed element. */
static void exact_detail(FILE *out, const st_tensor *after,
                         const st_tensor *before) {
  const size_t es =
      st_dtype_size(after->dtype) ? st_dtype_size(after->dtype) : 1;
  const unsigned char *p = after->data, *q = before->data;
  size_t count = 0, first = 0;
  for (size_t i = 0; i < after->numel; i++)
    if (memcmp(p + i * es, q + i * es, es) != 0 && count++ == 0)
      first = i;
  char ix[ST__INDEX_CHARS], va[ST__VALUE_CHARS], vb[ST__VALUE_CHARS];
  st__element_strs(after, before, first, 1, ix, va, vb);
  fprintf(out,
          "\ninput '%s' (%s): %zu of %zu elements changed; first at index "
          "%s: before %s, after %s",
          before->name ? before->name : "?", st_dtype_name(after->dtype), count,
          after->numel, ix, vb, va);
}

static void dump_one(FILE *out, const st__dump *dump, const char *name,
                     const char *what, const st_tensor *t, int *first) {
  char stem[512], path[4096];
  snprintf(stem, sizeof stem, "%s.%s", name, what);
  if (st__npy_write(dump->dir, dump->scene, dump->kase, stem, t, path,
                    sizeof path) != ST_OK) {
    fprintf(out, "%s%s (not written)", *first ? "\ndumped: " : ", ", stem);
  } else {
    fprintf(out, "%s%s", *first ? "\ndumped: " : ", ", path);
  }
  *first = 0;
}

/* Every tensor of the round: outputs and inouts actual and expected,
 * inputs as they were before the run. */
static void dump_all(FILE *out, const st__dump *dump, const st__plan *plan,
                     const st__argset *args, const st__argset *gold,
                     const st__argset *init) {
  int first = 1;
  for (size_t i = 0; i < args->n_tensors; i++) {
    const st__rarg *ra = &plan->args[i];
    if (args->tensors[i].role == ST_ROLE_SCRATCH)
      continue;
    if (args->tensors[i].role == ST_ROLE_INPUT) {
      dump_one(out, dump, ra->name, "input", &init->tensors[i], &first);
      continue;
    }
    dump_one(out, dump, ra->name, "actual", &args->tensors[i], &first);
    if (ra->compare)
      dump_one(out, dump, ra->name, "expected", &gold->tensors[i], &first);
    st_tensor b;
    if (ra->compare && ra->bound && MAGSUM(gold, i) != NULL &&
        st__bound_tensor(ra, &args->tensors[i], &gold->tensors[i],
                         MAGSUM(gold, i), NTERM(gold, i), &b) == ST_OK) {
      dump_one(out, dump, ra->name, "bound", &b, &first);
      free(b.data);
    }
  }
}

size_t st__mismatch_report(const st__plan *plan, const st__argset *args,
                           const st__argset *gold, const st__argset *init,
                           unsigned round, unsigned rounds,
                           const st__dump *dump, char **text) {
  /* Not zero-filled: first_line is written before it is read, and the
   * stream is opened at the first failure (a passing compare, the common
   * case, allocates nothing). */
  char line[1024], first_line[1024];
  size_t failing = 0, checked = 0;
  char *body = NULL;
  size_t body_len = 0;
  FILE *out = NULL;
  *text = NULL;
  first_line[0] = '\0';
  for (size_t i = 0; i < args->n_tensors; i++) {
    const st__rarg *ra = &plan->args[i];
    const st_tensor *a = &args->tensors[i];
    st_status rc;
    int unwritten = 0;
    if (a->role == ST_ROLE_SCRATCH)
      continue; /* a workspace: nobody checks it */
    if (a->role == ST_ROLE_INPUT)
      rc = st__compare_exact(a, &init->tensors[i], line, sizeof line);
    else if (!ra->compare)
      continue;
    else if ((unwritten = poison_check(ra, a, &gold->tensors[i], line,
                                       sizeof line)) != 0)
      rc = ST_EMISMATCH;
    else if (ra->bound) /* docs/scene-format.md#the-error-bound */
      rc = st__bound_compare(ra, a, &gold->tensors[i], MAGSUM(gold, i),
                             NTERM(gold, i), line, sizeof line);
    else
      rc = st__compare_close_nan(a, &gold->tensors[i], ra->rtol, ra->atol,
                                 ra->equal_nan, line, sizeof line);
    checked++;
    if (rc == ST_OK)
      continue;
    if (out == NULL && (out = open_memstream(&body, &body_len)) == NULL)
      return (size_t)-1;
    if (failing++ == 0)
      snprintf(first_line, sizeof first_line, "%s", line);
    if (rc != ST_EMISMATCH || unwritten)
      fprintf(out, "\n%s", line);
    else if (a->role == ST_ROLE_INPUT)
      exact_detail(out, a, &init->tensors[i]);
    else if (ra->bound)
      st__bound_detail(out, ra, a, &gold->tensors[i], MAGSUM(gold, i),
                       NTERM(gold, i));
    else
      close_detail(out, a, &gold->tensors[i], ra);
  }
  if (failing == 0)
    return 0;
  if (failing > 0 && dump != NULL && dump->dir != NULL)
    dump_all(out, dump, plan, args, gold, init);
  if (fclose(out) != 0) {
    free(body);
    return (size_t)-1;
  }
  if (failing == 0) {
    free(body);
    return 0;
  }
  if (asprintf(text,
               "%s\nround %u of %u: %zu of %zu checked tensor%s "
               "differ%s%s",
               first_line, round + 1, rounds, failing, checked,
               checked == 1 ? "" : "s", failing == 1 ? "s" : "",
               body ? body : "") < 0) {
    *text = NULL;
    failing = (size_t)-1;
  }
  free(body);
  return failing;
}
