/* SPDX-License-Identifier: MIT */
/* The HTML pages of `timing` and `compare` (tools/measure_html.h): one
 * self-contained file each, inline CSS and SVG only. Per group a strip
 * plot of the kept samples over a box (quartiles, whiskers at min and
 * max) with the median marked; in a comparison the two sides share one
 * scale, and the delta is written beside them with its p-value and
 * whether it is significant. Names from the logs (scene, case, phase,
 * raw) are escaped with report/html_escape.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_escape.h"
#include "tools/measure_html.h"

/* The most samples a plot draws as dots; more are thinned to that many
 * evenly spaced order statistics (the box still uses them all). */
#define DOTS_MAX 200

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "margin:0;color:#1d232a;background:#f6f7f9}"
    "header,section{margin:0 auto;max-width:1280px;padding:8px 24px}"
    "h1{font-size:22px;margin:16px 0 8px}h2{font-size:17px;margin:18px 0 8px}"
    ".banner{border-radius:6px;padding:8px 12px;margin:10px 0;"
    "background:#fff4d6;border:1px solid #e0b030}"
    ".banner.refused{background:#fde5e5;border-color:#d23a3a}"
    "table{border-collapse:collapse;background:#fff;width:100%}"
    "th,td{border-bottom:1px solid #e3e6ea;padding:3px 8px;text-align:left;"
    "vertical-align:middle}th{background:#eef0f3}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}code,td.mono{font-family:ui-monospace,Menlo,Consolas,"
    "monospace;font-size:12px;word-break:break-all}"
    "tr.diff td{background:#fde5e5;font-weight:600}"
    ".slower{color:#c62828;font-weight:600}.faster{color:#2e7d32;"
    "font-weight:600}.same{color:#6b747d}"
    "svg.dist{display:block;width:420px;height:auto}"
    "svg text{font:10px system-ui,sans-serif;fill:#3b444d}"
    ".key{color:#5b6570}";

static void page_begin(FILE *out, const char *title) {
  fputs(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>",
      out);
  st__html_text(out, title);
  fprintf(out, "</title><style>%s</style></head><body><header><h1>", css);
  st__html_text(out, title);
  fputs("</h1>", out);
}

static void dur(FILE *out, double ns) { st__duration_print(out, ns); }

static void put_paths(FILE *out, const char *label, const char *const *paths,
                      size_t n) {
  size_t i;
  fprintf(out, "<p>%s: ", label);
  for (i = 0; i < n; i++) {
    fputs(i ? ", <code>" : "<code>", out);
    st__html_text(out, paths[i]);
    fputs("</code>", out);
  }
  fputs("</p>", out);
}

/* A side's distinct conditions: label, fields, pids. */
static void put_conditions(FILE *out, const char *side, const st__side *s) {
  size_t i, k, n = st__side_condition_count(s);
  if (n == 0) {
    fputs("<p>", out);
    if (side != NULL)
      fprintf(out, "%s: ", side);
    fputs("no autoload record in the logs (conditions unknown)</p>", out);
    return;
  }
  fputs("<table class=\"conds\"><tr><th>", out);
  if (side != NULL)
    fprintf(out, "%s ", side);
  fputs("condition</th><th>record</th><th>pids</th></tr>", out);
  for (i = 0; i < n; i++) {
    const st__condition *c = st__side_condition(s, i);
    char l[16], *rec = NULL;
    size_t rec_n = 0;
    FILE *m = open_memstream(&rec, &rec_n);
    st__condition_label(l, sizeof l, i);
    fprintf(out, "<tr><td>%s</td><td class=\"mono\">", l);
    if (m != NULL) {
      st__record_print(m, c->record);
      if (fclose(m) == 0)
        st__html_text(out, rec);
      free(rec);
    }
    fputs("</td><td class=\"mono\">", out);
    for (k = 0; k < c->n_pids; k++)
      fprintf(out, "%s%ld", k ? ", " : "", c->pids[k]);
    fputs("</td></tr>", out);
  }
  fputs("</table>", out);
}

/* Every record of both sides side by side, one row per field (the union
 * of the fields); rows whose values differ have class "diff". */
static void put_records_side_by_side(FILE *out, const st__side *base,
                                     const st__side *nw) {
  const st__tl_record *cols[64];
  char heads[64][24];
  const char *fields[3 + 64 * ST__TL_MODULES_MAX];
  size_t n_cols = 0, n_fields = 0, i, j, k;

  for (k = 0; k < 2; k++) {
    const st__side *s = k == 0 ? base : nw;
    for (i = 0; i < st__side_condition_count(s) && n_cols < 64; i++) {
      char l[16];
      st__condition_label(l, sizeof l, i);
      snprintf(heads[n_cols], sizeof heads[n_cols], "%s %s",
               k == 0 ? "base" : "new", l);
      cols[n_cols++] = st__side_condition(s, i)->record;
    }
  }
  if (n_cols == 0)
    return;
  fields[n_fields++] = "setting";
  fields[n_fields++] = "raw";
  fields[n_fields++] = "effective";
  for (i = 0; i < n_cols; i++)
    for (j = 0; j < cols[i]->n_modules; j++) {
      const char *fld = cols[i]->modules[j].field;
      for (k = 0; k < n_fields; k++)
        if (strcmp(fields[k], fld) == 0)
          break;
      if (k == n_fields)
        fields[n_fields++] = fld;
    }
  fputs("<table id=\"records\"><tr><th>field</th>", out);
  for (i = 0; i < n_cols; i++)
    fprintf(out, "<th>%s</th>", heads[i]);
  fputs("</tr>", out);
  for (k = 0; k < n_fields; k++) {
    int differ = 0;
    const char *a = st__record_field_value(cols[0], fields[k]);
    for (i = 1; i < n_cols; i++) {
      const char *b = st__record_field_value(cols[i], fields[k]);
      if ((a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0))
        differ = 1;
    }
    fputs(differ ? "<tr class=\"diff\"><td>" : "<tr><td>", out);
    st__html_text(out, fields[k]);
    fputs("</td>", out);
    for (i = 0; i < n_cols; i++) {
      const char *v = st__record_field_value(cols[i], fields[k]);
      fputs("<td class=\"mono\">", out);
      st__html_text(out, v != NULL ? v : "(not watched)");
      fputs("</td>", out);
    }
    fputs("</tr>", out);
  }
  fputs("</table><p class=\"key\">Highlighted rows differ between the "
        "records.</p>",
        out);
}

/* The q-quantile of a sorted sample by linear interpolation. */
static double quantile(const double *v, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  if (i + 1 >= n)
    return v[n - 1];
  return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/* A lane of a distribution plot: a box from the quartiles, whiskers to
 * min and max, the samples as dots, the median as a bar with a title. */
static void put_lane(FILE *out, const st__group *g, double y, double x0,
                     double w, double lo, double hi, const char *colour,
                     const char *label) {
  double sx = w / (hi - lo), q1, q3, step;
  size_t i, shown;
#define X(v) (x0 + ((v)-lo) * sx)

  fprintf(out, "<text x=\"2\" y=\"%.1f\">%s</text>", y + 4, label);
  if (g->n == 0) {
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\">no samples (cold rounds "
            "only)</text>",
            x0, y + 4);
    return;
  }
  q1 = quantile(g->values, g->n, 0.25);
  q3 = quantile(g->values, g->n, 0.75);
  fprintf(out,
          "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
          "stroke=\"%s\" stroke-width=\"1\"/>",
          X(g->min), X(g->max), y, y, colour);
  fprintf(out,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
          "fill=\"%s\" fill-opacity=\"0.18\" stroke=\"%s\"><title>",
          X(q1), y - 6, X(q3) - X(q1) < 1 ? 1 : X(q3) - X(q1), colour, colour);
  fputs("quartiles ", out);
  dur(out, q1);
  fputs(" \xe2\x80\x93 ", out);
  dur(out, q3);
  fputs("</title></rect>", out);
  shown = g->n < DOTS_MAX ? g->n : DOTS_MAX;
  step = shown > 1 ? (double)(g->n - 1) / (double)(shown - 1) : 0;
  for (i = 0; i < shown; i++) {
    double v = g->values[(size_t)((double)i * step + 0.5)];
    fprintf(out,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\" "
            "fill-opacity=\"0.6\"/>",
            X(v), y - 4 + (double)((i * 7919) % 9), colour);
  }
  fprintf(out,
          "<line class=\"median\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
          "y2=\"%.1f\" stroke=\"#111\" stroke-width=\"2.5\"><title>median ",
          X(g->median), X(g->median), y - 8, y + 8);
  dur(out, g->median);
  fprintf(out, " (n = %zu)</title></line>", g->n);
#undef X
}

static void scale(const st__group *const *g, size_t n, double *lo, double *hi) {
  size_t i;
  *lo = INFINITY;
  *hi = -INFINITY;
  for (i = 0; i < n; i++) {
    if (g[i]->n == 0)
      continue;
    if (g[i]->min < *lo)
      *lo = g[i]->min;
    if (g[i]->max > *hi)
      *hi = g[i]->max;
  }
  if (!(*lo <= *hi)) {
    *lo = 0;
    *hi = 1;
  }
  if (*hi - *lo < 1e-9 * (*hi > 1 ? *hi : 1)) {
    *lo = *lo * 0.95;
    *hi = *hi * 1.05 + 1;
  }
}

/* A plot of one or two sides on one scale, with the scale's ends. */
static void put_plot(FILE *out, const st__group *const *g,
                     const char *const *labels, const char *const *colours,
                     size_t n) {
  const double x0 = 34, w = 330, lane = 22;
  double lo, hi, h = lane * (double)n + 14;
  size_t i;

  scale(g, n, &lo, &hi);
  fprintf(out, "<svg class=\"dist\" viewBox=\"0 0 420 %.0f\" role=\"img\">", h);
  for (i = 0; i < n; i++)
    put_lane(out, g[i], lane * (double)i + 12, x0, w, lo, hi, colours[i],
             labels[i]);
  fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">", x0, h - 1);
  dur(out, lo);
  fprintf(out, "</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">",
          x0 + w, h - 1);
  dur(out, hi);
  fputs("</text></svg>", out);
}

/* SCENE::CASE, sep, PHASE: how the pages name a group. */
static void put_group(FILE *out, const st__group *g, const char *sep) {
  st__html_text(out, g->scene);
  fputs("::", out);
  st__html_text(out, g->kase);
  fputs(sep, out);
  st__html_text(out, g->phase);
}

static void put_group_name(FILE *out, const st__group *g) {
  fputs("<td class=\"mono\">", out);
  put_group(out, g, "</td><td>");
  fputs("</td>", out);
}

void st__timing_html(FILE *out, const st__timing_opts *o, const st__side *s) {
  size_t i, n = st__side_group_count(s);
  static const char *const labels[] = {""};
  static const char *const colours[] = {"#1f6fb2"};

  page_begin(out, "scenetest timing");
  put_paths(out, "logs", o->paths, o->n_paths);
  fputs("<h2>Autoload conditions</h2>", out);
  if (st__side_condition_count(s) > 1)
    fputs("<div class=\"banner\" id=\"conditions-warning\">The logs were "
          "taken under different autoload conditions; the cond column says "
          "which groups came from which.</div>",
          out);
  put_conditions(out, NULL, s);
  fputs("</header><section><h2>Phases</h2><p class=\"key\">Each plot: the "
        "kept samples as dots over a box from the first to the third "
        "quartile, whiskers to min and max, the median as a black "
        "bar.</p><table id=\"groups\"><tr><th>case</th><th>phase</th>"
        "<th>n</th><th>min</th><th>median</th><th>max</th><th>min sum</th>"
        "<th>cond</th><th>distribution</th></tr>",
        out);
  for (i = 0; i < n; i++) {
    const st__group *g = st__side_group(s, i);
    size_t k;
    int any = 0;
    fputs("<tr>", out);
    put_group_name(out, g);
    fprintf(out, "<td class=\"num\">%zu", g->n);
    if (g->dropped)
      fprintf(out, " <span class=\"key\">(+%zu cold)</span>", g->dropped);
    fputs("</td>", out);
    if (g->n > 0) {
      double v[3];
      v[0] = g->min;
      v[1] = g->median;
      v[2] = g->max;
      for (k = 0; k < 3; k++) {
        fputs("<td class=\"num\">", out);
        dur(out, v[k]);
        fputs("</td>", out);
      }
    } else {
      fputs("<td class=\"num\">-</td><td class=\"num\">-</td>"
            "<td class=\"num\">-</td>",
            out);
    }
    fputs("<td class=\"num\">", out);
    if (g->has_sum)
      dur(out, g->min_sum);
    fputs("</td><td>", out);
    for (k = 0; k < 32; k++) {
      char l[16];
      if (!(g->conditions & (1u << k)))
        continue;
      st__condition_label(l, sizeof l, k);
      fprintf(out, "%s%s", any ? "+" : "", l);
      any = 1;
    }
    if (g->unknown)
      fputs(any ? "+?" : "?", out);
    fputs("</td><td>", out);
    put_plot(out, &g, labels, colours, 1);
    fputs("</td></tr>\n", out);
  }
  fputs("</table></section></body></html>\n", out);
}

void st__cmp_geomean(const st__cmp_row *rows, size_t n, int significant_only,
                     size_t *count, double *ratio) {
  double logsum = 0;
  size_t i, c = 0;
  for (i = 0; i < n; i++) {
    if (significant_only && !rows[i].significant)
      continue;
    if (!(rows[i].b->median > 0) || !(rows[i].n->median > 0))
      continue;
    logsum += log(rows[i].n->median / rows[i].b->median);
    c++;
  }
  *count = c;
  *ratio = c ? exp(logsum / (double)c) : NAN;
}

static void put_geomean(FILE *out, const st__cmp_row *rows, size_t n,
                        int significant_only) {
  size_t c;
  double ratio;
  st__cmp_geomean(rows, n, significant_only, &c, &ratio);
  fprintf(out, "%s rows (%zu): ", significant_only ? "significant" : "all", c);
  if (c)
    fprintf(out, "%+.1f%%", 100 * (ratio - 1));
  else
    fputs("-", out);
}

static void put_only(FILE *out, const char *label, const st__side *a,
                     const st__side *b) {
  const st__group *g;
  size_t i = 0, c = 0;
  while ((g = st__side_only(a, b, &i)) != NULL) {
    fputs(c++ ? ", <code>" : "<p>", out);
    if (c == 1)
      fprintf(out, "only in %s: <code>", label);
    put_group(out, g, " ");
    fputs("</code>", out);
  }
  if (c)
    fputs("</p>", out);
}

void st__compare_html(FILE *out, const st__compare_page *pg) {
  static const char *const labels[] = {"base", "new"};
  static const char *const colours[] = {"#6b747d", "#1f6fb2"};
  const st__compare_opts *o = pg->o;
  size_t i;

  page_begin(out, "scenetest compare");
  fputs("<p>base: <code>", out);
  st__html_text(out, o->base);
  fputs("</code>, new: <code>", out);
  st__html_text(out, o->new_);
  fputs("</code></p>", out);
  if (pg->refusal != NULL) {
    fputs("<div class=\"banner refused\" id=\"refusal\"><b>Refused (exit "
          "2):</b> ",
          out);
    st__html_text(out, pg->refusal);
    fputs("</div><h2>Autoload records</h2>", out);
    put_records_side_by_side(out, pg->base, pg->nw);
    put_conditions(out, "base", pg->base);
    put_conditions(out, "new", pg->nw);
    fputs("</header></body></html>\n", out);
    return;
  }
  if (!pg->same) {
    fputs("<div class=\"banner\" id=\"ignored\"><b>Compared under "
          "--ignore-autoload:</b> the autoload conditions differ or are "
          "unknown, so these timings may measure different things.</div>",
          out);
    fputs("<h2>Autoload records</h2>", out);
    put_records_side_by_side(out, pg->base, pg->nw);
  } else {
    fputs("<h2>Autoload conditions (the same on both sides)</h2>", out);
    put_conditions(out, NULL, pg->base);
  }
  fprintf(out, "<p>alpha %g, at least %zu samples a side", o->alpha,
          o->min_samples);
  if (o->has_fail_above)
    fprintf(out, ", --fail-above %g%%%s", o->fail_above,
            pg->tripped ? " <b class=\"slower\">tripped</b>" : "");
  fputs(". Geomean of new/base medians: ", out);
  put_geomean(out, pg->rows, pg->n_rows, 1);
  fputs("; ", out);
  put_geomean(out, pg->rows, pg->n_rows, 0);
  fputs(".</p></header><section><h2>Phases</h2><p class=\"key\">Each plot: "
        "both sides on one scale, the samples as dots over a box from the "
        "first to the third quartile, whiskers to min and max, the median "
        "as a black bar. A delta is shown when it is significant (p &lt; "
        "alpha and enough samples); ~ otherwise.</p><table id=\"rows\"><tr>"
        "<th>case</th><th>phase</th><th>n base</th><th>n new</th>"
        "<th>base median</th><th>new median</th><th>delta</th><th>p</th>"
        "<th>distribution</th></tr>",
        out);
  for (i = 0; i < pg->n_rows; i++) {
    const st__cmp_row *r = &pg->rows[i];
    const st__group *g[2];
    const char *cls;
    g[0] = r->b;
    g[1] = r->n;
    cls = !r->significant || isnan(r->delta) ? "same"
          : r->delta > 0                     ? "slower"
                                             : "faster";
    fputs("<tr>", out);
    put_group_name(out, r->b);
    fprintf(out, "<td class=\"num\">%zu</td><td class=\"num\">%zu</td>",
            r->b->n, r->n->n);
    fputs("<td class=\"num\">", out);
    if (r->b->n)
      dur(out, r->b->median);
    fputs("</td><td class=\"num\">", out);
    if (r->n->n)
      dur(out, r->n->median);
    fprintf(out, "</td><td class=\"num %s\">", cls);
    if (strcmp(cls, "same") == 0)
      fputs("~", out);
    else
      fprintf(out, "%+.1f%% \xe2\x98\x85", r->delta);
    if (!isnan(r->delta) && !r->significant)
      fprintf(out, " <span class=\"key\">(%+.1f%%)</span>", r->delta);
    fputs("</td><td class=\"num\">", out);
    if (isnan(r->p))
      fputs("-", out);
    else
      fprintf(out, "%.6f", r->p);
    if (r->few)
      fprintf(out, " <span class=\"key\">(n &lt; %zu)</span>", o->min_samples);
    fputs("</td><td>", out);
    put_plot(out, g, labels, colours, 2);
    fputs("</td></tr>\n", out);
  }
  fputs("</table>", out);
  put_only(out, "base", pg->base, pg->nw);
  put_only(out, "new", pg->nw, pg->base);
  fputs("</section></body></html>\n", out);
}
