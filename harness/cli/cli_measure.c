/* SPDX-License-Identifier: MIT */
/* The command lines of `scenetest timing` and `scenetest compare`
 * (docs/cli.md#the-scenetest-command-line, docs/measuring.md#the-statistics):
 * their options as a table, parsed here, the work done by tools/timing.c and
 * tools/compare.c. Kept out of cli.c, whose options are the run's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_measure.h"
#include "tools/timing.h"

enum { M_TIMING = 1, M_COMPARE = 2 };

typedef enum mopt_id {
  MO_HELP,
  MO_FORMAT,
  MO_KEEP_FIRST,
  MO_ALPHA,
  MO_MIN_SAMPLES,
  MO_FAIL_ABOVE,
  MO_IGNORE_AUTOLOAD,
  MO_IGNORE_ENV
} mopt_id;

static const struct mopt {
  const char *name;
  int has_arg;
  int cmds;
  mopt_id id;
} mopts[] = {
    {"help", 0, M_TIMING | M_COMPARE, MO_HELP},
    {"format", 1, M_TIMING | M_COMPARE, MO_FORMAT},
    {"keep-first", 0, M_TIMING | M_COMPARE, MO_KEEP_FIRST},
    {"alpha", 1, M_COMPARE, MO_ALPHA},
    {"min-samples", 1, M_COMPARE, MO_MIN_SAMPLES},
    {"fail-above", 1, M_COMPARE, MO_FAIL_ABOVE},
    {"ignore-autoload", 0, M_COMPARE, MO_IGNORE_AUTOLOAD},
    {"ignore-env", 1, M_COMPARE, MO_IGNORE_ENV},
};

static const char timing_usage[] =
    "usage: scenetest timing [OPTIONS] LOG...\n"
    "Summarises TIMING logs (files, or directories of log files): per\n"
    "scene::case and phase n, min, median, max, and for run the min of\n"
    "per-case sums of its rounds; the distinct autoload records and their\n"
    "pids.\n"
    "  --format F       text|json|csv|html (default text)\n"
    "  --keep-first     keep the cold first round of each process\n"
    "Exit status: 0 done; 2 usage error, unreadable or malformed log, or no\n"
    "TIMING line at all.\n";

static const char compare_usage[] =
    "usage: scenetest compare [OPTIONS] BASE NEW\n"
    "Compares two sides (each a log file or a directory of logs) per\n"
    "scene::case and phase: medians, delta %, Mann-Whitney U p-value.\n"
    "Refuses (exit 2) when the sides' autoload conditions differ.\n"
    "  --format F          text|json|html (default text)\n"
    "  --alpha A           significance level (default 0.05)\n"
    "  --min-samples N     fewer samples on a side: not significant "
    "(default 5)\n"
    "  --fail-above PCT    exit 1 when a significant slowdown exceeds PCT\n"
    "  --ignore-autoload   compare anyway; every line is marked '! '\n"
    "  --ignore-env FIELD  accept a differing fingerprint field "
    "(repeatable)\n"
    "  --keep-first        keep the cold first round of each process\n"
    "Exit status: 0 done; 1 --fail-above tripped; 2 usage error, unreadable\n"
    "file or refusal.\n";

static int merror(const char *fmt, const char *a, const char *b) {
  fputs("scenetest: error: ", stderr);
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  return ST__TOOL_REFUSED;
}

static int parse_double(const char *opt, const char *val, double lo, double hi,
                        double *out) {
  char *end;
  double v;
  errno = 0;
  v = strtod(val, &end);
  if (errno != 0 || end == val || *end != '\0' || !(v >= lo) || !(v <= hi))
    return merror("--%s: '%s' is not a number in range", opt, val);
  *out = v;
  return 0;
}

/* Applies option o (its value val) of command cmd: 0 to go on, 1 to stop
 * with *status (--help answered, or an error said). */
static int apply_mopt(int cmd, const struct mopt *o, const char *val,
                      st__compare_opts *co, const char **ignore_env,
                      st__tool_format *format, int *status) {
  switch (o->id) {
  case MO_HELP:
    fputs(cmd == M_TIMING ? timing_usage : compare_usage, stdout);
    *status = fflush(stdout) == 0 ? ST__TOOL_OK : ST__TOOL_REFUSED;
    return 1;
  case MO_FORMAT:
    if (strcmp(val, "text") == 0)
      *format = ST__TOOL_TEXT;
    else if (strcmp(val, "json") == 0)
      *format = ST__TOOL_JSON;
    else if (strcmp(val, "csv") == 0 && cmd == M_TIMING)
      *format = ST__TOOL_CSV;
    else if (strcmp(val, "html") == 0)
      *format = ST__TOOL_HTML;
    else {
      merror("unknown --format '%s'; formats: %s", val,
             cmd == M_TIMING ? "text, json, csv, html" : "text, json, html");
      return 1;
    }
    break;
  case MO_KEEP_FIRST:
    co->keep_first = 1;
    break;
  case MO_ALPHA:
    if (parse_double("alpha", val, 0, 1, &co->alpha) != 0)
      return 1;
    break;
  case MO_MIN_SAMPLES: {
    double v;
    if (parse_double("min-samples", val, 1, 1e9, &v) != 0)
      return 1;
    if (v != floor(v)) {
      merror("--min-samples: '%s' is not an integer%s", val, "");
      return 1;
    }
    co->min_samples = (size_t)v;
    break;
  }
  case MO_FAIL_ABOVE:
    if (parse_double("fail-above", val, 0, 1e9, &co->fail_above) != 0)
      return 1;
    co->has_fail_above = 1;
    break;
  case MO_IGNORE_AUTOLOAD:
    co->ignore_autoload = 1;
    break;
  case MO_IGNORE_ENV:
    ignore_env[co->n_ignore_env++] = val;
    break;
  }
  return 0;
}

/* The tool's call once the command line is read: `timing` over paths,
 * `compare` of paths[0] and paths[1]; the tool's exit status. */
static int run_tool(int cmd, const char **paths, size_t n_paths,
                    st__compare_opts *co, st__tool_format format) {
  st__timing_opts to;
  if (cmd == M_TIMING) {
    if (n_paths == 0) {
      merror("'timing' needs at least one LOG (a file or a directory)%s%s", "",
             "");
      return ST__TOOL_REFUSED;
    }
    to.paths = paths;
    to.n_paths = n_paths;
    to.keep_first = co->keep_first;
    to.format = format;
    return st__timing_main(&to, stdout, stderr);
  }
  if (n_paths != 2) {
    merror("'compare' needs exactly two paths, BASE and NEW (got %s)%s",
           n_paths < 2 ? "fewer" : "more", "");
    return ST__TOOL_REFUSED;
  }
  co->base = paths[0];
  co->new_ = paths[1];
  co->format = format;
  return st__compare_main(co, stdout, stderr);
}

/* The option loop of `timing` and `compare` over their option table,
 * then the tool's call. */
int st__cli_measure_main(int argc, char **argv) {
  int cmd = strcmp(argv[1], "timing") == 0 ? M_TIMING : M_COMPARE;
  const char **paths = calloc((size_t)argc, sizeof *paths);
  const char **ignore_env = calloc((size_t)argc, sizeof *ignore_env);
  size_t n_paths = 0, i;
  int only_paths = 0, status = ST__TOOL_REFUSED, a;
  st__tool_format format = ST__TOOL_TEXT;
  st__compare_opts co;

  memset(&co, 0, sizeof co);
  co.alpha = 0.05;
  co.min_samples = 5;
  co.ignore_env = ignore_env;
  if (paths == NULL || ignore_env == NULL) {
    fputs("scenetest: error: out of memory\n", stderr);
    free(paths);
    free(ignore_env);
    return ST__TOOL_REFUSED;
  }
  for (a = 2; a < argc; a++) {
    const char *arg = argv[a], *val = NULL, *name, *eq;
    const struct mopt *o = NULL;
    size_t len;

    if (only_paths || arg[0] != '-' || arg[1] == '\0') {
      paths[n_paths++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_paths = 1;
      continue;
    }
    if (strcmp(arg, "-h") == 0)
      arg = "--help";
    if (arg[1] != '-') {
      merror("unknown option '%s'%s", arg, "");
      goto out;
    }
    name = arg + 2;
    eq = strchr(name, '=');
    len = eq ? (size_t)(eq - name) : strlen(name);
    for (i = 0; i < sizeof mopts / sizeof mopts[0]; i++)
      if (strlen(mopts[i].name) == len &&
          strncmp(mopts[i].name, name, len) == 0)
        o = &mopts[i];
    if (o == NULL || !(o->cmds & cmd)) {
      fprintf(stderr,
              "scenetest: error: %s option '%.*s' for '%s'; see "
              "'scenetest %s --help'\n",
              o == NULL ? "unknown" : "no", (int)len + 2, arg, argv[1],
              argv[1]);
      goto out;
    }
    if (eq != NULL) {
      if (!o->has_arg) {
        merror("option '--%s' takes no value%s", o->name, "");
        goto out;
      }
      val = eq + 1;
    } else if (o->has_arg) {
      if (a + 1 >= argc) {
        merror("option '--%s' needs a value%s", o->name, "");
        goto out;
      }
      val = argv[++a];
    }
    if (apply_mopt(cmd, o, val, &co, ignore_env, &format, &status) != 0)
      goto out;
  }
  status = run_tool(cmd, paths, n_paths, &co, format);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fputs("scenetest: error: writing to standard output failed\n", stderr);
    status = ST__TOOL_REFUSED;
  }
out:
  free(paths);
  free(ignore_env);
  return status;
}
