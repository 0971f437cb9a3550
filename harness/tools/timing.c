/* SPDX-License-Identifier: MIT */
/* `scenetest timing LOG...` (docs/measuring.md#timing-what-one-log-says): per
 * (scene, case, phase) group, n, min, median and max of the kept samples, and
 * for `run` the minimum over the per-case sums of its rounds; the distinct
 * autoload conditions found, with their pids, and which conditions each group
 * came from. Text (a table), JSON (one document) or CSV (one row per group). */
#include <math.h>
#include <string.h>

#include "report/json.h"
#include "tools/measure_html.h"
#include "tools/samples.h"
#include "tools/timing.h"

/* The conditions column: "A", "A+B", "?" for samples of a process that
 * logged no record. */
static void cond_column(char *buf, size_t size, const st__group *g) {
  size_t i, used = 0;
  buf[0] = '\0';
  for (i = 0; i < 32; i++) {
    char l[16];
    if (!(g->conditions & (1u << i)))
      continue;
    st__condition_label(l, sizeof l, i);
    used +=
        (size_t)snprintf(buf + used, size - used, "%s%s", used ? "+" : "", l);
    if (used >= size)
      return;
  }
  if (g->unknown && used < size)
    snprintf(buf + used, size - used, "%s?", used ? "+" : "");
}

static void num(FILE *f, double v) {
  if (v == floor(v) && fabs(v) < 9007199254740992.0)
    fprintf(f, "%.0f", v);
  else
    fprintf(f, "%.3f", v);
}

static void print_conditions_text(const st__side *s, FILE *out) {
  size_t i, k, n = st__side_condition_count(s);
  if (n == 0) {
    fputs("autoload: no record in the logs (conditions unknown)\n", out);
    return;
  }
  fprintf(out, "autoload: %zu distinct condition%s\n", n, n == 1 ? "" : "s");
  for (i = 0; i < n; i++) {
    const st__condition *c = st__side_condition(s, i);
    char l[16];
    st__condition_label(l, sizeof l, i);
    fprintf(out, "  %s: ", l);
    st__record_print(out, c->record);
    fprintf(out, " (pid%s", c->n_pids == 1 ? "" : "s");
    for (k = 0; k < c->n_pids; k++)
      fprintf(out, "%s%ld", k ? ", " : " ", c->pids[k]);
    fputs(")\n", out);
  }
  if (n > 1)
    fputs("warning: the logs were taken under different autoload "
          "conditions; the cond column says which groups came from which\n",
          out);
}

static void print_text(const st__side *s, FILE *out) {
  size_t i, w = 4, n = st__side_group_count(s);
  int hint = 0;

  print_conditions_text(s, out);
  for (i = 0; i < n; i++) {
    const st__group *g = st__side_group(s, i);
    size_t l = strlen(g->scene) + 2 + strlen(g->kase);
    if (l > w)
      w = l;
  }
  fprintf(out, "%-*s  %-10s %6s %11s %11s %11s %11s  %s\n", (int)w, "case",
          "phase", "n", "min", "median", "max", "min sum", "cond");
  for (i = 0; i < n; i++) {
    const st__group *g = st__side_group(s, i);
    char cond[128], cell[64];
    size_t l = strlen(g->scene) + 2 + strlen(g->kase);
    FILE *m;
    cond_column(cond, sizeof cond, g);
    /* The name in parts: a case name is as long as its log holds it. */
    fprintf(out, "%s::%s%*s  %-10s %6zu", g->scene, g->kase, (int)(w - l), "",
            g->phase, g->n);
    if (g->n == 0) {
      fprintf(out, " %11s %11s %11s %11s  %s  (cold rounds only)\n", "-", "-",
              "-", "-", cond);
      hint = 1;
      continue;
    }
    {
      double vals[3];
      size_t k;
      vals[0] = g->min;
      vals[1] = g->median;
      vals[2] = g->max;
      for (k = 0; k < 3; k++) {
        m = fmemopen(cell, sizeof cell, "w");
        if (m == NULL)
          continue;
        st__duration_print(m, vals[k]);
        fclose(m);
        fprintf(out, " %11s", cell);
      }
    }
    if (g->has_sum) {
      m = fmemopen(cell, sizeof cell, "w");
      if (m != NULL) {
        st__duration_print(m, g->min_sum);
        fclose(m);
        fprintf(out, " %11s", cell);
      }
    } else {
      fprintf(out, " %11s", "");
    }
    fprintf(out, "  %s\n", cond);
  }
  if (hint)
    fputs("hint: a group with n = 0 had only cold first rounds "
          "(docs/measuring.md#timing-what-one-log-says); "
          "run with --rounds 2 or --repeat 2 or more, or pass "
          "--keep-first\n",
          out);
}

static void print_json(const st__side *s, FILE *out) {
  size_t i, n = st__side_group_count(s);
  fputs("{\"format_version\": 1, \"conditions\": ", out);
  st__conditions_json(out, s);
  fputs(", \"groups\": [", out);
  for (i = 0; i < n; i++) {
    const st__group *g = st__side_group(s, i);
    char cond[128];
    fputs(i ? ",\n  " : "\n  ", out);
    st__group_json_open(out, g);
    fprintf(out, ", \"n\": %zu, \"dropped\": %zu", g->n, g->dropped);
    if (g->n > 0) {
      fputs(", \"min_ns\": ", out);
      num(out, g->min);
      fputs(", \"median_ns\": ", out);
      num(out, g->median);
      fputs(", \"max_ns\": ", out);
      num(out, g->max);
    } else {
      fputs(", \"min_ns\": null, \"median_ns\": null, \"max_ns\": null", out);
    }
    if (g->has_sum) {
      fputs(", \"min_sum_ns\": ", out);
      num(out, g->min_sum);
      fprintf(out, ", \"sum_rounds\": %zu", g->sum_rounds);
    }
    cond_column(cond, sizeof cond, g);
    fputs(", \"conditions\": ", out);
    st__json_string(out, cond);
    fputs("}", out);
  }
  fputs("\n]}\n", out);
}

/* RFC 4180: a field with a comma, quote or line break is quoted, its
 * quotes doubled. */
static void csv_field(FILE *out, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void print_csv(const st__side *s, FILE *out) {
  size_t i, n = st__side_group_count(s);
  fputs("scene,case,phase,n,dropped,min_ns,median_ns,max_ns,min_sum_ns,"
        "sum_rounds,conditions\r\n",
        out);
  for (i = 0; i < n; i++) {
    const st__group *g = st__side_group(s, i);
    char cond[128];
    csv_field(out, g->scene);
    fputc(',', out);
    csv_field(out, g->kase);
    fputc(',', out);
    csv_field(out, g->phase);
    fprintf(out, ",%zu,%zu,", g->n, g->dropped);
    if (g->n > 0) {
      num(out, g->min);
      fputc(',', out);
      num(out, g->median);
      fputc(',', out);
      num(out, g->max);
    } else {
      fputs(",,", out);
    }
    fputc(',', out);
    if (g->has_sum) {
      num(out, g->min_sum);
      fprintf(out, ",%zu", g->sum_rounds);
    } else {
      fputc(',', out);
    }
    cond_column(cond, sizeof cond, g);
    fputc(',', out);
    csv_field(out, cond);
    fputs("\r\n", out);
  }
}

int st__timing_main(const st__timing_opts *o, FILE *out, FILE *err) {
  st__side *s = NULL;
  if (st__side_load(o->paths, o->n_paths, o->keep_first, err, &s) != ST_OK)
    return ST__TOOL_REFUSED;
  if (st__side_lines(s) == 0 && st__side_records(s) == 0) {
    fputs("scenetest: error: no TIMING line in the input (was the run's "
          "--log-level above timing?)\n",
          err);
    st__side_free(s);
    return ST__TOOL_REFUSED;
  }
  if (o->format == ST__TOOL_JSON)
    print_json(s, out);
  else if (o->format == ST__TOOL_CSV)
    print_csv(s, out);
  else if (o->format == ST__TOOL_HTML)
    st__timing_html(out, o, s);
  else
    print_text(s, out);
  st__side_free(s);
  return ST__TOOL_OK;
}
