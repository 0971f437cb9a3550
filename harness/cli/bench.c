/* SPDX-License-Identifier: MIT */
/* `scenetest bench` (bench.h; docs/bench.md): the ceilings measured once,
 * the cases run on the bench executor (case/bench.c), supervised as
 * `run`'s are, then one table of figures from the results: text, CSV or
 * JSON (docs/bench.schema.json). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/fingerprint.h"
#include "base/util.h"
#include "cli/bench.h"
#include "cli/bench_html.h"
#include "cli/cli_internal.h"
#include "ops/ceiling.h"
#include "report/json.h"

/* 105%: above this a figure is a measurement error (docs/bench.md). */
#define SUSPICIOUS 1.05

typedef struct numopt {
  const char *name;
  size_t offset; /* in st__bench_config */
  uint64_t min, max, scale;
} numopt;

static const numopt numopts[] = {
    {"--warmup-ms", offsetof(st__bench_config, warmup_ns), 0, 3600000, 1000000},
    {"--min-time-ms", offsetof(st__bench_config, min_time_ns), 0, 3600000,
     1000000},
    {"--max-time-ms", offsetof(st__bench_config, max_time_ns), 1, 3600000,
     1000000},
    {"--min-rounds", offsetof(st__bench_config, min_rounds), 1, 100000000, 1},
    {"--max-rounds", offsetof(st__bench_config, max_rounds), 1, 100000000, 1},
};

/* The value of option `name` at argv[*i]: "--name=V" or "--name V". */
static const char *value_of(int argc, char **argv, int *i, const char *name,
                            int *usage) {
  size_t len = strlen(name);
  *usage = 0;
  if (strncmp(argv[*i], name, len) != 0)
    return NULL;
  if (argv[*i][len] == '=')
    return argv[*i] + len + 1;
  if (argv[*i][len] != '\0')
    return NULL;
  if (*i + 1 >= argc) {
    *usage = st__cli_usage("%s needs a value", name);
    return NULL;
  }
  return argv[++*i];
}

static int parse_num(const numopt *o, const char *v, uint64_t *out) {
  char *end;
  unsigned long long n;
  errno = 0;
  if (v[0] < '0' || v[0] > '9' || ((n = strtoull(v, &end, 10)), errno != 0) ||
      *end != '\0' || n < o->min || n > o->max)
    return st__cli_usage("%s: '%s' is not an integer in [%llu, %llu]", o->name,
                         v, (unsigned long long)o->min,
                         (unsigned long long)o->max);
  *out = (uint64_t)n * o->scale;
  return 0;
}

int st__cli_bench_args(int argc, char **argv, st__cli_bench *b, char **rest,
                       int *n_rest) {
  int i, n = 0, usage;
  size_t k;
  memset(b, 0, sizeof *b);
  b->cfg.warmup_ns = 25 * 1000000ull;
  b->cfg.min_time_ns = 100 * 1000000ull;
  b->cfg.max_time_ns = 10000 * 1000000ull;
  b->cfg.min_rounds = 10;
  b->cfg.max_rounds = 1000;
  for (i = 0; i < argc && i < 2; i++)
    rest[n++] = argv[i];
  for (i = 2; i < argc; i++) {
    const char *v;
    if (strcmp(argv[i], "--") == 0) {
      while (i < argc)
        rest[n++] = argv[i++];
      break;
    }
    if (strcmp(argv[i], "--no-check") == 0) {
      b->no_check = 1;
      continue;
    }
    if (strcmp(argv[i], "--cold-cache") == 0) {
      b->cfg.cold_cache = 1;
      continue;
    }
    if ((v = value_of(argc, argv, &i, "--report", &usage)) != NULL) {
      if (strncmp(v, "html:", 5) != 0 || v[5] == '\0')
        return st__cli_usage("bench: --report takes html:PATH (got '%s')", v);
      b->html = v + 5;
      continue;
    }
    if (usage != 0)
      return usage;
    if (strcmp(argv[i], "--allow-suspicious") == 0) {
      b->allow_suspicious = 1;
      continue;
    }
    if ((v = value_of(argc, argv, &i, "--format", &usage)) != NULL) {
      if (strcmp(v, "text") == 0)
        b->format = 0;
      else if (strcmp(v, "csv") == 0)
        b->format = 1;
      else if (strcmp(v, "json") == 0)
        b->format = 2;
      else
        return st__cli_usage("bench: --format: unknown format '%s'; formats: "
                             "text, csv, json",
                             v);
      continue;
    }
    if (usage != 0)
      return usage;
    for (k = 0; k < sizeof numopts / sizeof numopts[0]; k++) {
      if ((v = value_of(argc, argv, &i, numopts[k].name, &usage)) != NULL) {
        int st = parse_num(
            &numopts[k], v,
            (uint64_t *)(void *)((char *)&b->cfg + numopts[k].offset));
        if (st != 0)
          return st;
        break;
      }
      if (usage != 0)
        return usage;
    }
    if (k == sizeof numopts / sizeof numopts[0])
      rest[n++] = argv[i];
  }
  rest[n] = NULL;
  *n_rest = n;
  if (b->cfg.min_rounds > b->cfg.max_rounds)
    return st__cli_usage("--min-rounds (%llu) is more than --max-rounds "
                         "(%llu)",
                         (unsigned long long)b->cfg.min_rounds,
                         (unsigned long long)b->cfg.max_rounds);
  if (b->cfg.min_time_ns > b->cfg.max_time_ns)
    return st__cli_usage("--min-time-ms is more than --max-time-ms");
  return 0;
}

/* The figures of one case, from its stats, work and the ceilings. */
typedef st__bench_figures figures;

static void figures_of(const st__bench_case *bc, const st__ceilings *ceil,
                       figures *f) {
  double sec = bc->m.stats.median * 1e-9, cf;
  f->gflops = f->gbps = f->flops_fr = f->bytes_fr = NAN;
  f->bound = NULL;
  f->suspicious = 0;
  if (bc->m.stats.rounds == 0 || sec <= 0)
    return;
  cf = ceil->flops_per_s[bc->m.dclass];
  if (bc->m.has_flops) {
    f->gflops = bc->m.flops / sec * 1e-9;
    if (cf > 0)
      f->flops_fr = bc->m.flops / sec / cf;
  }
  if (bc->m.has_bytes) {
    f->gbps = bc->m.bytes / sec * 1e-9;
    if (ceil->bytes_per_s > 0)
      f->bytes_fr = bc->m.bytes / sec / ceil->bytes_per_s;
  }
  /* Arithmetic intensity against the ridge point of the ceilings. */
  if (bc->m.has_flops && bc->m.has_bytes && cf > 0 && ceil->bytes_per_s > 0)
    f->bound = (bc->m.bytes > 0 ? bc->m.flops / bc->m.bytes : INFINITY) <
                       cf / ceil->bytes_per_s
                   ? "memory"
                   : "compute";
  f->suspicious = (!isnan(f->flops_fr) && f->flops_fr > SUSPICIOUS) ||
                  (!isnan(f->bytes_fr) && f->bytes_fr > SUSPICIOUS);
}

static void num_or(FILE *f, double v, const char *fmt, const char *none) {
  if (isnan(v))
    fputs(none, f);
  else
    fprintf(f, fmt, v);
}

static void print_text(const st__bench_case *cs, size_t n, const figures *fs,
                       const st__ceilings *ceil, const st__fingerprint *fp) {
  char line[ST__FP_MAX * 1100];
  size_t i;
  int k;
  st__fingerprint_format(fp, line, sizeof line);
  printf("%s\nceilings: ", line);
  num_or(stdout, ceil->bytes_per_s > 0 ? ceil->bytes_per_s * 1e-9 : NAN,
         "%.3f GB/s", "- GB/s");
  for (k = 0; k < ST__DCLASS_COUNT; k++) {
    printf(", %s ", st__dclass_name((st__dclass)k));
    num_or(stdout, ceil->flops_per_s[k] > 0 ? ceil->flops_per_s[k] * 1e-9 : NAN,
           "%.3f GFLOP/s", "- GFLOP/s");
  }
  putchar('\n');
  printf("%-40s %7s %12s %10s %10s %7s %7s %-7s %s\n", "case", "rounds",
         "median_ns", "GFLOP/s", "GB/s", "%flops", "%bytes", "bound", "flags");
  for (i = 0; i < n; i++) {
    const st__bench_case *c = &cs[i];
    const figures *f = &fs[i];
    char name[512];
    snprintf(name, sizeof name, "%s::%s", c->scene, c->kase);
    printf("%-40s %7llu ", name, (unsigned long long)c->m.stats.rounds);
    num_or(stdout, c->m.stats.rounds ? c->m.stats.median : NAN, "%12.0f",
           "           -");
    num_or(stdout, f->gflops, " %10.3f", "          -");
    num_or(stdout, f->gbps, " %10.3f", "          -");
    num_or(stdout, f->flops_fr * 100, " %6.1f%%", "       -");
    num_or(stdout, f->bytes_fr * 100, " %6.1f%%", "       -");
    printf(" %-7s %s%s%s\n", f->bound ? f->bound : "-",
           st_case_status_name(c->status), f->suspicious ? ",suspicious" : "",
           c->m.device_time ? ",device" : "");
  }
  /* Why a case failed: a kernel that crashed, exited or hung
   * (docs/bench.md#supervision), a mismatch in the checked round. */
  for (i = 0; i < n; i++)
    if (cs[i].message != NULL && cs[i].status != ST_CASE_PASS)
      printf("%s::%s: %s: %s\n", cs[i].scene, cs[i].kase,
             st_case_status_name(cs[i].status), cs[i].message);
}

/* The numeric columns of the CSV and JSON outputs, one row each, in
 * their order: the name (CSV header and JSON key) and the value, NaN for
 * none (an empty CSV field, a JSON null). */
typedef double (*column_fn)(const st__bench_case *c, const figures *f);
#define STAT_COL(field)                                                        \
  static double col_##field(const st__bench_case *c, const figures *f) {       \
    (void)f;                                                                   \
    return c->m.stats.rounds > 0 ? c->m.stats.field : NAN;                     \
  }
STAT_COL(median)
STAT_COL(min)
STAT_COL(p10)
STAT_COL(p90)
static double col_flops(const st__bench_case *c, const figures *f) {
  (void)f;
  return c->m.has_flops ? c->m.flops : NAN;
}
static double col_bytes(const st__bench_case *c, const figures *f) {
  (void)f;
  return c->m.has_bytes ? c->m.bytes : NAN;
}
#define FIG_COL(field)                                                         \
  static double col_##field(const st__bench_case *c, const figures *f) {       \
    (void)c;                                                                   \
    return f->field;                                                           \
  }
FIG_COL(gflops)
FIG_COL(gbps)
FIG_COL(flops_fr)
FIG_COL(bytes_fr)
static const struct {
  const char *name;
  column_fn value;
} num_cols[] = {
    {"median_ns", col_median},
    {"min_ns", col_min},
    {"p10_ns", col_p10},
    {"p90_ns", col_p90},
    {"flops", col_flops},
    {"bytes", col_bytes},
    {"gflops", col_gflops},
    {"gbps", col_gbps},
    {"flops_fraction", col_flops_fr},
    {"bytes_fraction", col_bytes_fr},
};

static void csv_num(double v) {
  if (!isnan(v))
    printf("%.17g", v);
}

/* A CSV field: quoted, with quotes doubled (RFC 4180). */
static void csv_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"')
      putchar('"');
    putchar(*s);
  }
  putchar('"');
}

static void print_csv(const st__bench_case *cs, size_t n, const figures *fs) {
  size_t i;
  fputs("scene,case,platform,status,rounds", stdout);
  for (size_t k = 0; k < ST__ARRAY_SIZE(num_cols); k++)
    printf(",%s", num_cols[k].name);
  puts(",bound,suspicious,message");
  for (i = 0; i < n; i++) {
    const st__bench_case *c = &cs[i];
    const figures *f = &fs[i];
    csv_str(c->scene);
    putchar(',');
    csv_str(c->kase);
    putchar(',');
    csv_str(c->platform);
    printf(",%s,%llu", st_case_status_name(c->status),
           (unsigned long long)c->m.stats.rounds);
    for (size_t k = 0; k < ST__ARRAY_SIZE(num_cols); k++) {
      putchar(',');
      csv_num(num_cols[k].value(c, f));
    }
    printf(",%s,%s,", f->bound ? f->bound : "",
           f->suspicious ? "true" : "false");
    if (c->message != NULL)
      csv_str(c->message);
    putchar('\n');
  }
}

static void json_num(double v) {
  if (isnan(v) || isinf(v))
    fputs("null", stdout);
  else
    printf("%.17g", v);
}

static void print_json(const st__bench_case *cs, size_t n, const figures *fs,
                       const st__ceilings *ceil, const st__fingerprint *fp) {
  size_t i;
  int k;
  printf("{\"format_version\": 1,\n \"fingerprint\": {");
  for (i = 0; i < fp->n; i++) {
    printf("%s", i ? ", " : "");
    st__json_string(stdout, fp->key[i]);
    printf(": ");
    st__json_string(stdout, fp->value[i]);
  }
  printf("},\n \"ceilings\": {\"bytes_per_s\": ");
  json_num(ceil->bytes_per_s > 0 ? ceil->bytes_per_s : NAN);
  printf(", \"flops_per_s\": {");
  for (k = 0; k < ST__DCLASS_COUNT; k++) {
    printf("%s\"%s\": ", k ? ", " : "", st__dclass_name((st__dclass)k));
    json_num(ceil->flops_per_s[k] > 0 ? ceil->flops_per_s[k] : NAN);
  }
  printf("}},\n \"cases\": [");
  for (i = 0; i < n; i++) {
    const st__bench_case *c = &cs[i];
    const figures *f = &fs[i];
    printf("%s\n  {\"scene\": ", i ? "," : "");
    st__json_string(stdout, c->scene);
    printf(", \"case\": ");
    st__json_string(stdout, c->kase);
    printf(", \"platform\": ");
    st__json_string(stdout, c->platform);
    printf(", \"status\": \"%s\", \"rounds\": %llu",
           st_case_status_name(c->status),
           (unsigned long long)c->m.stats.rounds);
    for (size_t col = 0; col < ST__ARRAY_SIZE(num_cols); col++) {
      printf(", \"%s\": ", num_cols[col].name);
      json_num(num_cols[col].value(c, f));
    }
    printf(", \"bound\": ");
    if (f->bound != NULL)
      printf("\"%s\"", f->bound);
    else
      fputs("null", stdout);
    printf(", \"suspicious\": %s, \"message\": ",
           f->suspicious ? "true" : "false");
    if (c->message != NULL)
      st__json_string(stdout, c->message);
    else
      fputs("null", stdout);
    putchar('}');
  }
  printf("\n ]}\n");
}

int st__cli_bench_run(const st__cli_bench *b, const st_scene_set *set,
                      st_run_options *opts, st_registry *reg) {
  st__ceilings ceil;
  st__fingerprint fp;
  FILE *html = NULL;
  st_run_result *result = NULL;
  st__bench_case *cs = NULL;
  figures *fs = NULL;
  st_error err;
  st_status rc;
  size_t n, i;
  int status = 0, suspicious = 0, oom;

  if (b->html != NULL && (html = fopen(b->html, "we")) == NULL)
    return st__cli_usage("cannot open --report html:'%s': %s", b->html,
                         strerror(errno));
  /* Before the first case, once, in this process: the children that run
   * the cases are forked after it (docs/bench.md#ceilings; a platform
   * that needs a device context measures in a child of its own, so that
   * none is inherited). */
  st__ceilings_measure(reg, opts->platform, &ceil);
  /* The cases run in children, which describe the platform at their
   * first record; this process describes it here too, so that the
   * table's fingerprint, taken at the end, is a later call (the cuda
   * plugin's clocks at the end, docs/bench.md#platform-hooks). */
  if (opts->supervise || opts->isolate)
    st__fingerprint_collect(reg, opts->platform, &fp);
  if (st__bench_begin(&b->cfg) != ST_OK) {
    fprintf(stderr, "scenetest: error: internal error: out of memory\n");
    if (html != NULL)
      fclose(html);
    return 3;
  }
  st_error_clear(&err);
  rc = st_run(set, opts, NULL, 0, &result, &err);
  if (rc != ST_OK) {
    fprintf(stderr, "scenetest: error: %s\n",
            err.message[0] ? err.message : st_status_str(rc));
    st__bench_end();
    if (html != NULL)
      fclose(html);
    return rc == ST_EUSAGE ? 2 : 3;
  }
  /* From the results: a case benched in a child brought its figures
   * with it; one whose process died has a row with nothing measured. */
  cs = st__bench_rows(result, &n, &oom);
  if (oom || (n > 0 && (fs = calloc(n, sizeof *fs)) == NULL)) {
    fprintf(stderr, "scenetest: error: internal error: out of memory\n");
    status = 3;
    goto out;
  }
  for (i = 0; i < n; i++) {
    figures_of(&cs[i], &ceil, &fs[i]);
    suspicious |= fs[i].suspicious;
  }
  st__fingerprint_collect(reg, opts->platform, &fp);
  if (b->format == 1)
    print_csv(cs, n, fs);
  else if (b->format == 2)
    print_json(cs, n, fs, &ceil, &fp);
  else
    print_text(cs, n, fs, &ceil, &fp);
  if (html != NULL) {
    int bad;
    st__bench_html(html, cs, n, fs, &ceil, &fp);
    bad = ferror(html) != 0;
    if (fclose(html) != 0 || bad) {
      fprintf(stderr,
              "scenetest: error: writing --report html:'%s' "
              "failed\n",
              b->html);
      status = 3;
    }
    html = NULL;
  }
  if (st_run_result_exit_code(result) != 0)
    status = 1;
  if (suspicious && !b->allow_suspicious) {
    fprintf(stderr, "scenetest: error: a figure is above 105%% of its "
                    "ceiling (suspicious: cache-resident data or a wrong "
                    "work model; docs/bench.md); --allow-suspicious "
                    "accepts it\n");
    status = 1;
  }
out:
  if (html != NULL)
    fclose(html);
  free(fs);
  free(cs);
  st_run_result_free(result);
  st__bench_end();
  return status;
}
