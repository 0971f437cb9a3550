/* SPDX-License-Identifier: MIT */
/* `scenetest compare BASE NEW` (docs/measuring.md#the-statistics). First the
 * conditions: the set of distinct autoload records (every field but pid, raw as
 * printed) must be the same on both sides, and neither side may lack a record;
 * else the comparison is refused (exit 2) with the records field by field,
 * unless
 * --ignore-autoload, which compares anyway and marks every output line.
 * Then per (scene, case, phase) present on both sides: n, medians, delta
 * % = 100 (median_new / median_base - 1) and the two-sided Mann-Whitney
 * p-value; `~` in place of the delta when p >= alpha or a side has fewer
 * than --min-samples samples; geometric means of the median ratios over
 * the significant rows and over all; groups on one side only listed.
 * --fail-above PCT: exit 1 when a significant slowdown exceeds PCT. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "tools/fpcheck.h"
#include "tools/measure_html.h"
#include "tools/samples.h"
#include "tools/stats.h"
#include "tools/timing.h"

/* Marks every line of a comparison made under --ignore-autoload with
 * differing or unknown conditions. */
#define MARK "! "

typedef st__cmp_row row;

static int cond_in(const st__side *s, const st__tl_record *r) {
  size_t i;
  for (i = 0; i < st__side_condition_count(s); i++)
    if (st__timelog_record_same(st__side_condition(s, i)->record, r))
      return 1;
  return 0;
}

static int same_conditions(const st__side *a, const st__side *b) {
  size_t i;
  for (i = 0; i < st__side_condition_count(a); i++)
    if (!cond_in(b, st__side_condition(a, i)->record))
      return 0;
  for (i = 0; i < st__side_condition_count(b); i++)
    if (!cond_in(a, st__side_condition(b, i)->record))
      return 0;
  return 1;
}

typedef struct column {
  const char *side;
  char id[16];
  const st__tl_record *r;
} column;

/* Every record of both sides side by side, one row per field (the union
 * of the fields), rows that differ marked '*'. */
static void print_fields(FILE *f, const char *prefix, const st__side *base,
                         const st__side *nw) {
  column cols[64];
  const char *fields[3 + 2 * 64 * ST__TL_MODULES_MAX];
  size_t n_cols = 0, n_fields = 0, i, j, k;
  int w = 16;

  for (k = 0; k < 2; k++) {
    const st__side *s = k == 0 ? base : nw;
    for (i = 0; i < st__side_condition_count(s) && n_cols < 64; i++) {
      cols[n_cols].side = k == 0 ? "base" : "new";
      st__condition_label(cols[n_cols].id, sizeof cols[n_cols].id, i);
      cols[n_cols].r = st__side_condition(s, i)->record;
      n_cols++;
    }
  }
  fields[n_fields++] = "setting";
  fields[n_fields++] = "raw";
  fields[n_fields++] = "effective";
  for (i = 0; i < n_cols; i++)
    for (j = 0; j < cols[i].r->n_modules; j++) {
      const char *fld = cols[i].r->modules[j].field;
      for (k = 0; k < n_fields; k++)
        if (strcmp(fields[k], fld) == 0)
          break;
      if (k == n_fields)
        fields[n_fields++] = fld;
    }
  for (i = 0; i < n_cols; i++)
    if ((int)strlen(cols[i].r->raw) + 2 > w)
      w = (int)strlen(cols[i].r->raw) + 2;
  fprintf(f, "%s  %-18s", prefix, "field");
  for (i = 0; i < n_cols; i++) {
    char head[32];
    snprintf(head, sizeof head, "%s %s", cols[i].side, cols[i].id);
    fprintf(f, " %-*s", i + 1 < n_cols ? w : 0, head);
  }
  fputc('\n', f);
  for (k = 0; k < n_fields; k++) {
    int differ = 0;
    for (i = 1; i < n_cols; i++) {
      const char *a = st__record_field_value(cols[0].r, fields[k]);
      const char *b = st__record_field_value(cols[i].r, fields[k]);
      if ((a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0))
        differ = 1;
    }
    fprintf(f, "%s%c %-18s", prefix, differ ? '*' : ' ', fields[k]);
    for (i = 0; i < n_cols; i++) {
      const char *v = st__record_field_value(cols[i].r, fields[k]);
      fprintf(f, " %-*s", i + 1 < n_cols ? w : 0,
              v != NULL ? v : "(not watched)");
    }
    fputc('\n', f);
  }
}

static void cell(FILE *out, int width, double ns) {
  char buf[64];
  FILE *m = fmemopen(buf, sizeof buf, "w");
  if (m == NULL)
    return;
  st__duration_print(m, ns);
  fclose(m);
  fprintf(out, " %*s", width, buf);
}

static void num(FILE *f, double v) {
  if (isnan(v) || isinf(v))
    fputs("null", f);
  else if (v == floor(v) && fabs(v) < 9007199254740992.0)
    fprintf(f, "%.0f", v);
  else
    fprintf(f, "%.17g", v);
}

/* One line "MKonly in LABEL: S::C P, ..." of the groups of a that b
 * lacks; nothing when there are none. */
static void text_only(FILE *out, const char *mk, const char *label,
                      const st__side *a, const st__side *b) {
  const st__group *g;
  size_t i = 0, c = 0;
  while ((g = st__side_only(a, b, &i)) != NULL) {
    if (c++ == 0)
      fprintf(out, "%sonly in %s: ", mk, label);
    else
      fputs(", ", out);
    fprintf(out, "%s::%s %s", g->scene, g->kase, g->phase);
  }
  if (c)
    fputc('\n', out);
}

static void print_text(FILE *out, const char *mk, const st__compare_opts *o,
                       const st__side *base, const st__side *nw,
                       const row *rows, size_t n_rows) {
  size_t i, w = 4, c_sig, c_all;
  double g_sig, g_all;

  for (i = 0; i < n_rows; i++) {
    size_t l = strlen(rows[i].b->scene) + 2 + strlen(rows[i].b->kase);
    if (l > w)
      w = l;
  }
  fprintf(out, "%s%-*s  %-10s %6s %6s %12s %12s %9s %10s\n", mk, (int)w, "case",
          "phase", "n base", "n new", "base median", "new median", "delta",
          "p");
  for (i = 0; i < n_rows; i++) {
    const row *r = &rows[i];
    char delta[32];
    size_t l = strlen(r->b->scene) + 2 + strlen(r->b->kase);
    /* The name in parts: a case name is as long as its log holds it. */
    fprintf(out, "%s%s::%s%*s  %-10s %6zu %6zu", mk, r->b->scene, r->b->kase,
            (int)(w - l), "", r->b->phase, r->b->n, r->n->n);
    if (r->b->n == 0 || r->n->n == 0) {
      fprintf(out, " %12s %12s %9s %10s  (no samples: cold rounds only?)\n",
              "-", "-", "~", "-");
      continue;
    }
    cell(out, 12, r->b->median);
    cell(out, 12, r->n->median);
    if (!r->significant || isnan(r->delta))
      snprintf(delta, sizeof delta, "~");
    else
      snprintf(delta, sizeof delta, "%+.1f%%", r->delta);
    fprintf(out, " %9s", delta);
    if (isnan(r->p))
      fprintf(out, " %10s", "-");
    else
      fprintf(out, " %10.6f", r->p);
    if (r->few)
      fprintf(out, "  (n < %zu)", o->min_samples);
    fputc('\n', out);
  }
  st__cmp_geomean(rows, n_rows, 1, &c_sig, &g_sig);
  st__cmp_geomean(rows, n_rows, 0, &c_all, &g_all);
  fprintf(out, "%sgeomean of new/base medians: significant rows (%zu): ", mk,
          c_sig);
  if (c_sig)
    fprintf(out, "%+.1f%%", 100 * (g_sig - 1));
  else
    fputs("-", out);
  fprintf(out, "; all rows (%zu): ", c_all);
  if (c_all)
    fprintf(out, "%+.1f%%", 100 * (g_all - 1));
  else
    fputs("-", out);
  fputc('\n', out);
  text_only(out, mk, "base", base, nw);
  text_only(out, mk, "new", nw, base);
}

/* When every row has fewer than --min-samples samples on a side, no row
 * can be significant and "significant rows (0)" would read as "no
 * change": say that nothing could be tested, and how to get enough. */
static void warn_if_all_few(FILE *err, const st__compare_opts *o,
                            const row *rows, size_t n_rows) {
  for (size_t i = 0; i < n_rows; i++)
    if (!rows[i].few)
      return;
  if (n_rows == 0)
    return;
  fprintf(err,
          "scenetest: warning: every row has fewer than %zu samples on a "
          "side (--min-samples %zu): no row could be tested for "
          "significance; run more rounds (--rounds, --repeat) or lower "
          "--min-samples\n",
          o->min_samples, o->min_samples);
}

/* The groups of a that b lacks, as ", "-separated JSON objects. */
static void json_only(FILE *out, const st__side *a, const st__side *b) {
  const st__group *g;
  size_t i = 0, c = 0;
  while ((g = st__side_only(a, b, &i)) != NULL) {
    fputs(c++ ? ", " : "", out);
    st__group_json_open(out, g);
    fputs("}", out);
  }
}

static void print_json(FILE *out, int same, const st__compare_opts *o,
                       const st__side *base, const st__side *nw,
                       const row *rows, size_t n_rows, int tripped) {
  size_t i, c, k;
  double g;

  fprintf(out,
          "{\"format_version\": 1, \"autoload\": {\"same\": %s, "
          "\"ignored\": %s, \"base\": ",
          same ? "true" : "false", o->ignore_autoload ? "true" : "false");
  st__conditions_json(out, base);
  fputs(", \"new\": ", out);
  st__conditions_json(out, nw);
  fputs("}, \"alpha\": ", out);
  num(out, o->alpha);
  fprintf(out, ", \"min_samples\": %zu, \"rows\": [", o->min_samples);
  for (i = 0; i < n_rows; i++) {
    const row *r = &rows[i];
    fputs(i ? ",\n  " : "\n  ", out);
    st__group_json_open(out, r->b);
    fprintf(out,
            ", \"n_base\": %zu, \"n_new\": %zu, \"median_base_ns\": ", r->b->n,
            r->n->n);
    num(out, r->b->n ? r->b->median : NAN);
    fputs(", \"median_new_ns\": ", out);
    num(out, r->n->n ? r->n->median : NAN);
    fputs(", \"delta_pct\": ", out);
    num(out, r->delta);
    fputs(", \"p\": ", out);
    num(out, r->p);
    fprintf(out, ", \"method\": %s, \"significant\": %s}",
            isnan(r->p)                  ? "null"
            : r->method == ST__MWU_EXACT ? "\"exact\""
                                         : "\"asymptotic\"",
            r->significant ? "true" : "false");
  }
  fputs("\n], \"geomean\": {", out);
  for (k = 0; k < 2; k++) {
    st__cmp_geomean(rows, n_rows, k == 0, &c, &g);
    fprintf(out, "%s\"%s\": {\"rows\": %zu, \"ratio\": ", k ? ", " : "",
            k == 0 ? "significant" : "all", c);
    num(out, g);
    fputs("}", out);
  }
  fputs("}, \"only_base\": [", out);
  json_only(out, base, nw);
  fputs("], \"only_new\": [", out);
  json_only(out, nw, base);
  fputs("], \"fail_above\": ", out);
  num(out, o->has_fail_above ? o->fail_above : NAN);
  fprintf(out, ", \"tripped\": %s}\n", tripped ? "true" : "false");
}

/* --format html: the refusal's output is a page with the two sides'
 * records side by side (the error lines still go to err). */
static void refusal_page(const st__compare_opts *o, const st__side *base,
                         const st__side *nw, FILE *out) {
  size_t cb = st__side_condition_count(base);
  size_t cn = st__side_condition_count(nw);
  char reason[2 * 4096 + 256];
  st__compare_page pg;

  if (cb == 0 || cn == 0)
    snprintf(reason, sizeof reason,
             "%s has no torch_backend_autoload record%s: its conditions are "
             "unknown, so its timings cannot be compared (--ignore-autoload "
             "compares anyway)",
             cb == 0 ? o->base : o->new_,
             cb == 0 && cn == 0 ? " (nor has the other side)" : "");
  else
    snprintf(reason, sizeof reason,
             "the autoload conditions differ: %s has %zu distinct, %s has "
             "%zu, and they are not the same (every field but pid); the "
             "timings measure different things (--ignore-autoload compares "
             "anyway)",
             o->base, cb, o->new_, cn);
  memset(&pg, 0, sizeof pg);
  pg.o = o;
  pg.base = base;
  pg.nw = nw;
  pg.refusal = reason;
  st__compare_html(out, &pg);
}

/* Returns -1 to go on, else the exit status of a refusal. */
static int check_conditions(const st__compare_opts *o, const st__side *base,
                            const st__side *nw, int *same, FILE *out,
                            FILE *err) {
  size_t cb = st__side_condition_count(base);
  size_t cn = st__side_condition_count(nw);
  FILE *f = o->ignore_autoload ? out : err;
  const char *mk = o->ignore_autoload ? MARK : "";
  int text = o->format == ST__TOOL_TEXT;

  *same = cb > 0 && cn > 0 && same_conditions(base, nw);
  if (*same)
    return -1;
  if (o->ignore_autoload && !text) {
    fputs("scenetest: warning: autoload conditions differ or are unknown; "
          "compared anyway (--ignore-autoload)\n",
          err);
    return -1;
  }
  if (cb == 0 || cn == 0) {
    fprintf(f,
            "%s%s: %s has no torch_backend_autoload record: its conditions "
            "are unknown, so its timings cannot be compared",
            o->ignore_autoload ? MARK : "scenetest: error",
            o->ignore_autoload ? "warning" : "", cb == 0 ? o->base : o->new_);
    if (cb == 0 && cn == 0)
      fprintf(f, " (nor has %s)", o->new_);
    fputs(o->ignore_autoload ? "; compared anyway (--ignore-autoload)\n"
                             : " (--ignore-autoload compares anyway)\n",
          f);
  } else {
    fprintf(f,
            "%s%s: the autoload conditions differ: %s has %zu distinct, %s "
            "has %zu, and they are not the same (every field but pid)%s\n",
            o->ignore_autoload ? MARK : "scenetest: error",
            o->ignore_autoload ? "warning" : "", o->base, cb, o->new_, cn,
            o->ignore_autoload ? "; compared anyway (--ignore-autoload)"
                               : "; the timings measure different things "
                                 "(--ignore-autoload compares anyway)");
  }
  if (cb + cn > 0)
    print_fields(f, mk, base, nw);
  if (!o->ignore_autoload && o->format == ST__TOOL_HTML)
    refusal_page(o, base, nw, out);
  return o->ignore_autoload ? -1 : ST__TOOL_REFUSED;
}

/* One row: base group b against new group n, their delta, U test and
 * significance. ST_ENOMEM when the U test runs out of memory. */
static st_status make_row(row *rw, const st__group *b, const st__group *n,
                          const st__compare_opts *o) {
  rw->b = b;
  rw->n = n;
  rw->p = NAN;
  /* docs/measuring.md: from a base median of 0 ns, any new median above
   * 0 is an increase larger than every threshold (+inf, which
   * --fail-above trips on when significant); 0 to 0 is no change. */
  if (b->n == 0 || n->n == 0)
    rw->delta = NAN;
  else if (b->median > 0)
    rw->delta = 100.0 * (n->median / b->median - 1.0);
  else
    rw->delta = n->median > 0 ? INFINITY : 0.0;
  rw->few = b->n < o->min_samples || n->n < o->min_samples;
  if (b->n > 0 && n->n > 0 &&
      st__stats_mwu(b->values, b->n, n->values, n->n, &rw->p, NULL,
                    &rw->method) != ST_OK)
    return ST_ENOMEM;
  rw->significant =
      !rw->few && !isnan(rw->p) && rw->p < o->alpha && !isnan(rw->delta);
  return ST_OK;
}

int st__compare_main(const st__compare_opts *o, FILE *out, FILE *err) {
  st__side *base = NULL, *nw = NULL;
  row *rows = NULL;
  size_t n_rows = 0, i, nb;
  int status = ST__TOOL_REFUSED, same = 0, tripped = 0, r;
  const char *mk;

  if (st__side_load(&o->base, 1, o->keep_first, err, &base) != ST_OK ||
      st__side_load(&o->new_, 1, o->keep_first, err, &nw) != ST_OK)
    goto out;
  if (st__side_lines(base) == 0 || st__side_lines(nw) == 0) {
    fprintf(err, "scenetest: error: no TIMING phase line in '%s'\n",
            st__side_lines(base) == 0 ? o->base : o->new_);
    goto out;
  }
  if ((r = check_conditions(o, base, nw, &same, out, err)) >= 0) {
    status = r;
    goto out;
  }
  /* The machines too (docs/bench.md#the-environment-fingerprint). */
  if ((r = st__fp_check(base, nw, o->base, o->new_, o->ignore_env,
                        o->n_ignore_env, err)) >= 0) {
    status = r;
    goto out;
  }
  mk = same ? "" : MARK;
  if (same && o->format == ST__TOOL_TEXT) {
    size_t k, n = st__side_condition_count(base);
    for (k = 0; k < n; k++) {
      fprintf(out, "autoload (the same on both sides): ");
      st__record_print(out, st__side_condition(base, k)->record);
      fputc('\n', out);
    }
  }
  nb = st__side_group_count(base);
  rows = calloc(nb ? nb : 1, sizeof *rows);
  if (rows == NULL) {
    fputs("scenetest: error: out of memory\n", err);
    goto out;
  }
  for (i = 0; i < nb; i++) {
    const st__group *b = st__side_group(base, i);
    const st__group *n = st__side_find(nw, b->scene, b->kase, b->phase);
    row *rw;
    if (n == NULL)
      continue;
    rw = &rows[n_rows++];
    if (make_row(rw, b, n, o) != ST_OK) {
      fputs("scenetest: error: out of memory in the U test\n", err);
      goto out;
    }
    if (o->has_fail_above && rw->significant && rw->delta > o->fail_above)
      tripped = 1;
  }
  warn_if_all_few(err, o, rows, n_rows);
  if (o->format == ST__TOOL_JSON) {
    print_json(out, same, o, base, nw, rows, n_rows, tripped);
  } else if (o->format == ST__TOOL_HTML) {
    st__compare_page pg = {.o = o,
                           .base = base,
                           .nw = nw,
                           .rows = rows,
                           .n_rows = n_rows,
                           .same = same,
                           .tripped = tripped};
    st__compare_html(out, &pg);
  } else
    print_text(out, mk, o, base, nw, rows, n_rows);
  if (tripped) {
    for (i = 0; i < n_rows; i++)
      if (rows[i].significant && rows[i].delta > o->fail_above)
        fprintf(err,
                "scenetest: %s::%s %s is %+.1f%% slower (p = %.6f), above "
                "--fail-above %g%%\n",
                rows[i].b->scene, rows[i].b->kase, rows[i].b->phase,
                rows[i].delta, rows[i].p, o->fail_above);
  }
  status = tripped ? ST__TOOL_TRIPPED : ST__TOOL_OK;
out:
  free(rows);
  st__side_free(base);
  st__side_free(nw);
  return status;
}
