/* SPDX-License-Identifier: MIT */
/* The scenetest command's options, one table (docs/cli.md#options): each
 * row states the option's names, type (which says how it is parsed and
 * checked: args.c), the commands that take it, the field of struct cli it
 * sets, its --help section, value name and text, and whether the rerun
 * command of a failed case repeats it. --help (help.c), the
 * configuration file's keys, --show-config and the rerun command are
 * generated from it; tests/lint/options_check.py checks that every row is in
 * --help and in docs/cli.md. A new option is a row here and a field of
 * struct cli (or an ARG_CUSTOM function below). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "report/report.h"
#include "tools/timelog.h"

static int parse_log_level(cli *c, const optdef *o, const char *val);
static int parse_watch(cli *c, const optdef *o, const char *val);
static int parse_timeout(cli *c, const optdef *o, const char *val);
static int handled_first(cli *c, const optdef *o, const char *val);
static int parse_report(cli *c, const optdef *o, const char *val);
static int parse_format(cli *c, const optdef *o, const char *val);
static int parse_shard(cli *c, const optdef *o, const char *val);
static int parse_shard_by(cli *c, const optdef *o, const char *val);
static int parse_shuffle_seed(cli *c, const optdef *o, const char *val);
static int set_exitfirst(cli *c, const optdef *o, const char *val);

static const char *const manual_names[] = {"exclude", "include", "only", NULL};
static const char *const junit_families[] = {"xunit2", "xunit1", NULL};
static const char *const color_modes[] = {"auto", "always", "never", NULL};

#define F(field) .offset = offsetof(cli, field)
#define RUN(field)                                                             \
  .run = offsetof(st_run_options, field) + 1,                                  \
  .run_size = sizeof(((st_run_options *)0)->field)

/* In the order --show-config lists them and the rerun command repeats
 * them; --help groups them by section, in this order within each. --help
 * and --version are answered before parsing (they win anywhere). */
const optdef st__cli_options[] = {
    {.name = "help",
     .short_name = 'h',
     .type = ARG_ACTION,
     .cmds = CMD_ALL,
     .custom = handled_first,
     .section = SEC_GENERAL,
     .help = "print this help and exit",
     .flags = OPT_CLI_ONLY},
    {.name = "version",
     .type = ARG_ACTION,
     .cmds = CMD_ALL,
     .custom = handled_first,
     .section = SEC_GENERAL,
     .help = "print the version and exit",
     .flags = OPT_CLI_ONLY},
    {.name = "platform",
     .type = ARG_STRING,
     .cmds = CMD_SELECT,
     F(platform),
     .what = "a platform name",
     .section = SEC_SELECT,
     .metavar = "P",
     .help = "platform to run on (default cpu)",
     RUN(platform)},
    {.name = "case",
     .type = ARG_LIST,
     .cmds = CMD_SELECT,
     F(selectors),
     .what = "a selector (scene, scene::case or ::case)",
     .section = SEC_SELECT,
     .metavar = "SEL",
     .help = "select cases: scene, scene::case, ::case; shell\n"
             "globs allowed; repeatable; a selector that\n"
             "selects nothing is an error",
     RUN(selectors)},
    {.name = "manual",
     .type = ARG_CHOICE,
     .cmds = CMD_SELECT,
     F(manual),
     .choices = manual_names,
     .section = SEC_SELECT,
     .metavar = "MODE",
     .help = "exclude|include|only manual cases (default exclude)",
     .flags = OPT_RERUN,
     RUN(manual)},
    {.name = "rounds",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(rounds),
     .min = 1,
     .max = 1000000000u,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "rounds per case, N >= 1 (default: the case's, else 1)",
     .flags = OPT_RERUN,
     RUN(rounds)},
    {.name = "skip-golden",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(skip_golden),
     .section = SEC_RUN,
     .help = "skip the golden computation and compare",
     .flags = OPT_RERUN,
     RUN(skip_golden)},
    {.name = "seed",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(seed),
     .min = 0,
     .max = UINT64_MAX,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "seed of the random inits (default 0)",
     RUN(seed)},
    {.name = "jobs",
     .short_name = 'j',
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(jobs),
     .min = 1,
     .max = 4096,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "cases in parallel (default 1)"},
    {.name = "golden-threads",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(golden_threads),
     .min = 1,
     .max = 4096,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "threads of the reference backend\n"
             "(default min(8, cores))",
     RUN(golden_threads)},
    {.name = "fail-fast",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(fail_fast),
     .section = SEC_RUN,
     .help = "--maxfail 1 (the older name of -x)",
     RUN(fail_fast)},
    {.name = "format",
     .type = ARG_CUSTOM,
     .cmds = CMD_SELECT,
     .custom = parse_format,
     .section = SEC_OUTPUT,
     .metavar = "F",
     .help = "{formats} (default: text on a terminal,\n"
             "else tap); list: {list formats}"},
    {.name = "junit-family",
     .type = ARG_CHOICE,
     .cmds = CMD_RUN,
     F(junit_family),
     .choices = junit_families,
     .section = SEC_OUTPUT,
     .metavar = "F",
     .help = "xunit2 (default) or xunit1 (testcase file, line)"},
    {.name = "report",
     .type = ARG_CUSTOM,
     .cmds = CMD_RUN,
     F(reports),
     .custom = parse_report,
     .section = SEC_OUTPUT,
     .metavar = "FMT:PATH",
     .help = "also write a {report formats} report to\n"
             "PATH (repeatable; GTEST_OUTPUT, XML_OUTPUT_FILE too)",
     .flags = OPT_REPEATABLE},
    {.name = "output",
     .type = ARG_STRING,
     .cmds = CMD_RUN,
     F(output),
     .what = "a file name",
     .section = SEC_OUTPUT,
     .metavar = "FILE",
     .help = "write the report to FILE instead of stdout"},
    {.name = "events",
     .type = ARG_STRING,
     .cmds = CMD_RUN,
     F(events),
     .what = "a file name",
     .section = SEC_OUTPUT,
     .metavar = "FILE",
     .help = "write every case's events to FILE as JSON Lines"},
    {.name = "log-file",
     .type = ARG_STRING,
     .cmds = CMD_RUN,
     F(log_file),
     .what = "a file name",
     .section = SEC_OUTPUT,
     .metavar = "FILE",
     .help = "the whole log to FILE; stderr keeps warnings and\n"
             "errors"},
    {.name = "log-level",
     .type = ARG_CUSTOM,
     .cmds = CMD_ALL,
     .custom = parse_log_level,
     .section = SEC_GENERAL,
     .metavar = "LEVEL",
     .help = "debug|info|timing|warning|error|null (default timing,\n"
             "or $SCENETEST_LOG_LEVEL)"},
    {.name = "max-arg-bytes",
     .type = ARG_BYTES,
     .cmds = CMD_ALL,
     F(max_arg_bytes),
     .min = 1,
     .max = UINT64_MAX,
     .section = SEC_LOAD,
     .metavar = "N",
     .help = "cap on one case's tensor bytes (default 2G);\n"
             "N may end in K, M, G or T (powers of 1024)",
     .flags = OPT_RERUN},
    {.name = "max-nodes",
     .type = ARG_UINT,
     .cmds = CMD_ALL,
     F(max_nodes),
     .min = 1,
     .max = SIZE_MAX,
     .section = SEC_LOAD,
     .metavar = "N",
     .help = "budget of alias-expanded YAML nodes per file\n"
             "(default 1000000; plain nodes do not count)",
     .flags = OPT_RERUN},
    {.name = "max-file-bytes",
     .type = ARG_BYTES,
     .cmds = CMD_ALL,
     F(max_file_bytes),
     .min = 1,
     .max = UINT64_MAX,
     .section = SEC_LOAD,
     .metavar = "N",
     .help = "cap on a scene file's size (default 1G); N may\n"
             "end in K, M, G or T",
     .flags = OPT_RERUN},
    {.name = "require-cases",
     .type = ARG_FLAG,
     .cmds = CMD_SELECT,
     F(require_cases),
     .section = SEC_SELECT,
     .help = "exit 2 when nothing is selected (default: exit 0)"},
    {.name = "strict-record",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(strict_record),
     .section = SEC_RUN,
     .help = "a stale autoload record is an error",
     .flags = OPT_RERUN,
     RUN(strict_record)},
    {.name = "strict-mistrust",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(strict_mistrust),
     .section = SEC_RUN,
     .help = "a mistrusted case that passes fails",
     .flags = OPT_RERUN,
     RUN(strict_mistrust)},
    {.name = "determinism",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(determinism),
     .min = 2,
     .max = 1000000,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "run each case N times; outputs must not change",
     .flags = OPT_RERUN,
     RUN(determinism)},
    {.name = "watch",
     .type = ARG_CUSTOM,
     .cmds = CMD_RUN,
     F(watch),
     .custom = parse_watch,
     .section = SEC_RUN,
     .metavar = "NAME=GLOB,...",
     .help = "watch more modules in the autoload record",
     .flags = OPT_RERUN | OPT_REPEATABLE,
     RUN(watch)},
    {.name = "plugin",
     .type = ARG_LIST,
     .cmds = CMD_ALL,
     F(plugins),
     .section = SEC_LOAD,
     .metavar = "[lazy:]PATH",
     .help = "load a backend plugin (lazy: on first use)",
     .flags = OPT_RERUN},
    {.name = "isolate",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(isolate),
     .section = SEC_RUN,
     .help = "run each case in a forked child",
     .flags = OPT_RERUN,
     RUN(isolate)},
    {.name = "no-supervise",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(no_supervise),
     .section = SEC_RUN,
     .help = "run the cases in this process (for debuggers;\n"
             "a crashing kernel ends the run)"},
    {.name = "guard-pages",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(guard_pages),
     .section = SEC_RUN,
     .help = "end every tensor at a PROT_NONE page: a kernel\n"
             "touching past the end is its case's error",
     .flags = OPT_RERUN,
     RUN(guard_pages)},
    {.name = "timeout",
     .type = ARG_CUSTOM,
     .cmds = CMD_RUN,
     .custom = parse_timeout,
     .section = SEC_RUN,
     .metavar = "SECONDS",
     .help = "kill a case after SECONDS (level 2: isolated)",
     .flags = OPT_RERUN},
    {.name = "strict-platforms",
     .type = ARG_FLAG,
     .cmds = CMD_ALL,
     F(strict_platforms),
     .section = SEC_LOAD,
     .help = "an unknown platform in a scene is an error (as\n"
             "in check), not a warning"},
    {.name = "ignore",
     .type = ARG_LIST,
     .cmds = CMD_ALL,
     F(ignore),
     .what = "a glob",
     .section = SEC_LOAD,
     .metavar = "GLOB",
     .help = "skip matching paths in directory scans\n"
             "(repeatable; also .scenetestignore)"},
    {.name = "dump-on-fail",
     .type = ARG_STRING,
     .cmds = CMD_RUN,
     F(dump_dir),
     .what = "a directory",
     .section = SEC_OUTPUT,
     .metavar = "DIR",
     .help = "write a failing compare's tensors as .npy files\n"
             "under DIR/SCENE/CASE/",
     RUN(dump_dir)},
    {.name = "golden-platform",
     .type = ARG_STRING,
     .cmds = CMD_RUN,
     F(golden_platform),
     .what = "a platform name",
     .section = SEC_RUN,
     .metavar = "P",
     .help = "the backend that computes golden (default: the\n"
             "case's or scene's golden_platform, else\n"
             "reference); e.g. torch",
     .flags = OPT_RERUN,
     RUN(golden_platform)},
    {.name = "no-default-plugins",
     .type = ARG_FLAG,
     .cmds = CMD_ALL,
     F(no_default_plugins),
     .section = SEC_LOAD,
     .help = "do not declare the installed plugins (those in\n"
             "$libdir/scenetest/plugins and\n"
             "SCENETEST_PLUGIN_PATH)",
     .flags = OPT_RERUN},
    {.name = "shard",
     .type = ARG_CUSTOM,
     .cmds = CMD_SELECT,
     .custom = parse_shard,
     .section = SEC_SELECT,
     .metavar = "K/N",
     .help = "only shard K of N (0-based; run also reads\n"
             "GTEST_*, TEST_*, CI_NODE_*, CIRCLE_NODE_* and\n"
             "BUILDKITE_PARALLEL_JOB* shard variables)"},
    {.name = "shard-by",
     .type = ARG_CUSTOM,
     .cmds = CMD_SELECT,
     .custom = parse_shard_by,
     .section = SEC_SELECT,
     .metavar = "durations:FILE",
     .help = "split the shards by the case durations of\n"
             "an earlier JSON or --events report (longest\n"
             "first) instead of the name hash"},
    {.name = "repeat",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(repeat),
     .min = 1,
     .max = 1000000,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "run the selection N times (cases named S::C@k)"},
    {.name = "shuffle",
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(shuffle),
     .section = SEC_RUN,
     .help = "shuffle each iteration (the seed is printed)",
     RUN(shuffle)},
    {.name = "shuffle-seed",
     .type = ARG_CUSTOM,
     .cmds = CMD_RUN,
     .custom = parse_shuffle_seed,
     .section = SEC_RUN,
     .metavar = "S",
     .help = "the shuffle seed (implies --shuffle)"},
    {.name = "rerun-failed",
     .type = ARG_STRING,
     .cmds = CMD_SELECT,
     F(rerun_failed),
     .what = "a report file",
     .section = SEC_SELECT,
     .metavar = "FILE",
     .help = "only the cases an --events, json, junit or tap\n"
             "report says failed"},
    {.name = "color",
     .type = ARG_CHOICE,
     .cmds = CMD_RUN,
     F(color_mode),
     .choices = color_modes,
     .section = SEC_OUTPUT,
     .metavar = "WHEN",
     .help = "auto (default: a terminal, no NO_COLOR, TERM not\n"
             "dumb), always or never"},
    {.name = "verbose",
     .short_name = 'v',
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(verbose),
     .section = SEC_OUTPUT,
     .help = "text: also each passing case's phase times and\n"
             "output"},
    {.name = "quiet",
     .short_name = 'q',
     .type = ARG_FLAG,
     .cmds = CMD_RUN,
     F(quiet),
     .section = SEC_OUTPUT,
     .help = "text: only failures and the summary"},
    {.name = "config",
     .type = ARG_STRING,
     .cmds = CMD_ALL,
     F(config_path),
     .what = "a file name",
     .section = SEC_GENERAL,
     .metavar = "FILE",
     .help = "the configuration file (default: the first\n"
             "scenetest.yaml upwards, stopping at .git)",
     .flags = OPT_CLI_ONLY},
    {.name = "no-config",
     .type = ARG_FLAG,
     .cmds = CMD_ALL,
     F(no_config),
     .section = SEC_GENERAL,
     .help = "read no configuration file",
     .flags = OPT_CLI_ONLY},
    {.name = "show-config",
     .type = ARG_FLAG,
     .cmds = CMD_ALL,
     F(show_config),
     .section = SEC_GENERAL,
     .help = "print the merged settings and their sources",
     .flags = OPT_CLI_ONLY},
    {.name = "tag",
     .type = ARG_STRING,
     .cmds = CMD_SELECT,
     F(tag_expr),
     .what = "an expression",
     .section = SEC_SELECT,
     .metavar = "EXPR",
     .help = "only cases whose tags satisfy EXPR (names, and,\n"
             "or, not, parentheses)"},
    {.name = "keyword",
     .short_name = 'k',
     .type = ARG_STRING,
     .cmds = CMD_SELECT,
     F(k_expr),
     .what = "an expression",
     .section = SEC_SELECT,
     .metavar = "EXPR",
     .help = "the same grammar over case ids, each name a\n"
             "case-insensitive substring"},
    {.name = "skip",
     .type = ARG_LIST,
     .cmds = CMD_SELECT,
     F(skips),
     .what = "a selector (scene, scene::case or ::case)",
     .section = SEC_SELECT,
     .metavar = "SEL",
     .help = "leave out the cases SEL selects (repeatable)"},
    {.name = "maxfail",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(maxfail),
     .min = 1,
     .max = UINT32_MAX,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "stop after N failed cases (the rest are\n"
             "reported as skipped)"},
    {.name = "exitfirst",
     .short_name = 'x',
     .type = ARG_ACTION,
     .cmds = CMD_RUN,
     .custom = set_exitfirst,
     .section = SEC_RUN,
     .help = "--maxfail 1"},
    {.name = "durations",
     .type = ARG_UINT,
     .cmds = CMD_RUN,
     F(slowest),
     .min = 0,
     .max = UINT32_MAX,
     .section = SEC_RUN,
     .metavar = "N",
     .help = "list the N slowest cases at the end"},
    {.name = "last-failed",
     .type = ARG_FLAG,
     .cmds = CMD_SELECT,
     F(last_failed),
     .section = SEC_SELECT,
     .alias = "lf",
     .help = "only the cases that failed in the last run"},
    {.name = "lf",
     .type = ARG_FLAG,
     .cmds = CMD_SELECT,
     F(last_failed),
     .section = SEC_SELECT,
     .flags = OPT_HIDDEN},
    {.name = "failed-first",
     .type = ARG_FLAG,
     .cmds = CMD_SELECT,
     F(failed_first),
     .section = SEC_SELECT,
     .alias = "ff",
     .help = "those cases first, then the rest"},
    {.name = "ff",
     .type = ARG_FLAG,
     .cmds = CMD_SELECT,
     F(failed_first),
     .section = SEC_SELECT,
     .flags = OPT_HIDDEN},
    {.name = "cache-dir",
     .type = ARG_STRING,
     .cmds = CMD_SELECT,
     F(cache_dir),
     .what = "a directory",
     .section = SEC_SELECT,
     .metavar = "DIR",
     .help = "the last-failed state's directory (default\n"
             ".scenetest-cache)"},
    {.name = "no-cache",
     .type = ARG_FLAG,
     .cmds = CMD_SELECT,
     F(no_cache),
     .section = SEC_SELECT,
     .help = "neither read nor write the last-failed state"},
};
const size_t st__cli_n_options =
    sizeof st__cli_options / sizeof st__cli_options[0];
_Static_assert(sizeof st__cli_options / sizeof st__cli_options[0] <=
                   CLI_OPTIONS_CAP,
               "CLI_OPTIONS_CAP too small");

static int parse_log_level(cli *c, const optdef *o, const char *val) {
  (void)o;
  if (st_log_level_parse(val, &c->log_level) != ST_OK)
    return st__cli_usage("--log-level: unknown level '%s'; levels: debug, "
                         "info, timing, warning, error, null",
                         val);
  st_log_set_level(c->log_level);
  return 0;
}

static int parse_watch(cli *c, const optdef *o, const char *val) {
  st_watch *list = NULL;
  size_t n = 0;
  st_error err;
  st_status st;

  (void)o;
  st_error_clear(&err);
  /* The record carries torch_imported, torch_npu_loaded and one field a
   * watch: no more than `timing` reads back (docs/measuring.md). */
  if (c->watch.n + 2 >= ST__TL_MODULES_MAX)
    return st__cli_usage("--watch '%s': at most %d --watch modules (the "
                         "autoload record holds %d module fields)",
                         val, ST__TL_MODULES_MAX - 2, ST__TL_MODULES_MAX);
  /* Validated here so that a bad spec is a usage error before anything
   * loads; the run takes the spec strings themselves. */
  st = st_watch_parse(val, &list, &n, &err);
  st_watch_list_free(list, n);
  /* The library's message already names the option and its value. */
  if (st != ST_OK)
    return err.message[0]
               ? st__cli_usage("%s", err.message)
               : st__cli_usage("--watch '%s': %s", val, st_status_str(st));
  c->watch.items[c->watch.n++] = val;
  return 0;
}

static int parse_timeout(cli *c, const optdef *o, const char *val) {
  char *end;
  double t;

  (void)o;
  errno = 0;
  t = strtod(val, &end);
  if (errno != 0 || end == val || *end != '\0' || !(t > 0) || t > 1e9)
    return st__cli_usage("--timeout must be a positive number of seconds "
                         "(got '%s')",
                         val);
  c->timeout = t;
  c->timeout_text = val;
  return 0;
}

static int handled_first(cli *c, const optdef *o, const char *val) {
  (void)c;
  (void)o;
  (void)val;
  return 0; /* main() answers --help and --version before parsing */
}

/* --report FORMAT:PATH: the form is checked here, the file when the run
 * plans its outputs. */
static int parse_report(cli *c, const optdef *o, const char *val) {
  const char *colon = strchr(val, ':');
  char name[16], names[128];
  int fmt;
  (void)o;
  if (colon == NULL || colon[1] == '\0' || (size_t)(colon - val) >= sizeof name)
    return st__cli_usage("--report must be FORMAT:PATH with FORMAT %s (got "
                         "'%s')",
                         st__report_format_names(names, sizeof names,
                                                 ST__FMT_REPORT, ", ", " or "),
                         val);
  snprintf(name, sizeof name, "%.*s", (int)(colon - val), val);
  fmt = st__report_format_find(name);
  if (fmt < 0 || !st__report_formats[fmt].report)
    return st__cli_usage("--report: unknown format '%s'; formats: %s", name,
                         st__report_format_names(names, sizeof names,
                                                 ST__FMT_REPORT, ", ", ", "));
  c->reports.items[c->reports.n++] = val;
  return 0;
}

/* --format F: one of the report formats (a row of st__report_formats);
 * `list` takes fewer (checked once the command is known). */
static int parse_format(cli *c, const optdef *o, const char *val) {
  char names[128];
  if ((c->format = st__report_format_find(val)) >= 0)
    return 0;
  return st__cli_usage(
      "--%s must be %s (got '%s')", o->name,
      st__report_format_names(names, sizeof names, ST__FMT_ALL, ", ", " or "),
      val);
}

static int parse_shard(cli *c, const optdef *o, const char *val) {
  (void)o;
  return st__shard_parse(val, &c->shard);
}

static int parse_shard_by(cli *c, const optdef *o, const char *val) {
  (void)o;
  return st__shard_by_parse(val, &c->shard_by);
}

/* -x, --exitfirst: --maxfail 1 (pytest's name). */
static int set_exitfirst(cli *c, const optdef *o, const char *val) {
  (void)o;
  (void)val;
  c->maxfail = 1;
  return 0;
}

/* --shuffle-seed S implies --shuffle: it exists to replay an order. */
static int parse_shuffle_seed(cli *c, const optdef *o, const char *val) {
  (void)o;
  c->shuffle = 1;
  return st__cli_parse_uint("shuffle-seed", val, 0, UINT64_MAX,
                            &c->shuffle_seed);
}

const optdef *st__cli_find_long(const char *name, size_t len) {
  size_t i;
  for (i = 0; i < st__cli_n_options; i++)
    if (strlen(st__cli_options[i].name) == len &&
        strncmp(st__cli_options[i].name, name, len) == 0)
      return &st__cli_options[i];
  return NULL;
}

const optdef *st__cli_find_short(char ch) {
  size_t i;
  for (i = 0; i < st__cli_n_options; i++)
    if (st__cli_options[i].short_name == ch)
      return &st__cli_options[i];
  return NULL;
}

int st__cli_given(const cli *c, const char *name) {
  size_t i;
  for (i = 0; i < st__cli_n_options; i++)
    if (strcmp(st__cli_options[i].name, name) == 0)
      return c->given[i];
  return 0;
}

int st__cli_option_index(const char *name) {
  const optdef *o = st__cli_find_long(name, strlen(name));
  return o != NULL ? (int)(o - st__cli_options) : -1;
}
